"""Settings (settings.toml + env twins) and the agent.db credential store."""

from __future__ import annotations

import multiprocessing
import sqlite3
import stat
import threading
import time
from pathlib import Path

import pytest

from conftest import make_client
from websearch import ConfigError, SearchResponse
from websearch._core._credentials import _BUSY_FOR, Credential, CredentialStore, _patiently
from websearch._core._settings import Settings, config_dir
from websearch.providers import ProviderContext


def test_config_dir_from_env_and_default(tmp_path: Path) -> None:
    assert config_dir({"WEBSEARCH_CONFIG_DIR": str(tmp_path)}) == tmp_path
    assert config_dir({}).name == "websearch"


def test_tables_and_dotted_keys_flatten(tmp_path: Path) -> None:
    (tmp_path / "settings.toml").write_text(
        'exa.searchDelayMs = 0\n[providers]\nwebSearch = "searxng"\nwebSearchExclude = ["brave"]\n'
        '[searxng]\nendpoint = "https://s.example"\ncategories = "it"\n'
    )
    settings = Settings.load(tmp_path, {})
    assert settings.preferred_provider == "searxng"
    assert settings.excluded_providers == frozenset({"brave"})
    assert settings.get_str("searxng.endpoint") == "https://s.example"
    assert settings.get("exa.searchDelayMs") == 0
    assert settings.get_bool("exa.enableSearch", True) is True
    assert settings.http_timeout == 60.0


def test_env_twins_win_over_the_file(tmp_path: Path) -> None:
    (tmp_path / "settings.toml").write_text(
        'searxng.endpoint = "https://file"\nproviders.webSearchGeminiModel = "m-file"\n'
    )
    env = {"SEARXNG_ENDPOINT": "https://env", "GEMINI_SEARCH_MODEL": "m-env"}
    settings = Settings.load(tmp_path, env)
    assert settings.get_str("searxng.endpoint") == "https://env"
    assert settings.get_str("providers.webSearchGeminiModel") == "m-env"
    assert Settings.load(tmp_path, {}).get_str("searxng.endpoint") == "https://file"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x = [", "is not valid TOML"),
        ('providers.webSearch = "altavista"', "providers.webSearch is 'altavista'"),
        ('providers.webSearchExclude = "brave"', "must be a list of provider ids"),
        ('providers.webSearchExclude = ["altavista"]', "names unknown providers: altavista"),
        ("http.timeout = -1", "http.timeout must be a positive number"),
    ],
)
def test_bad_settings_raise_config_error(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "settings.toml").write_text(text)
    with pytest.raises(ConfigError, match=message):
        Settings.load(tmp_path, {})


def test_store_is_created_0600_only_on_write(tmp_path: Path) -> None:
    store = CredentialStore(tmp_path / "cfg" / "agent.db")
    assert store.get("brave") is None
    assert store.ids() == frozenset()
    assert not store.path.exists()
    store.set("brave", "api_key", {"api_key": "brave-secret-1234567890"})
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    for extra in ("-wal", "-shm"):
        side = Path(f"{store.path}{extra}")
        if side.exists():
            assert stat.S_IMODE(side.stat().st_mode) == 0o600
    assert store.ids() == frozenset({"brave"})
    cred = store.get("brave")
    assert cred is not None
    assert cred.api_key == "brave-secret-1234567890"
    assert "brave-secret" not in repr(cred)
    assert cred.masked() == "…7890"
    store.set("brave", "api_key", {"api_key": "replaced-secret-abcdef"})
    assert [c.api_key for c in store.list()] == ["replaced-secret-abcdef"]
    assert store.remove("brave") is True
    assert store.remove("brave") is False


def test_short_secrets_are_fully_masked() -> None:
    assert Credential("x", "api_key", {"api_key": "short"}).masked() == "…"


def _writer(path: str, worker: int) -> None:
    store = CredentialStore(Path(path))
    for i in range(25):
        store.set(f"p{worker}-{i}", "api_key", {"api_key": f"key-{worker}-{i}-xxxxxxxx"})


def test_two_processes_write_at_once(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), w)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert len(CredentialStore(path).ids()) == 50


def _locked_at_once(path: Path) -> tuple[sqlite3.Connection, sqlite3.Connection]:
    """A connection holding a write lock on `path`, and one that SQLite answers "locked" at once
    (no busy timeout), as it answers a process opening a new file another is switching to WAL."""
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN IMMEDIATE")
    waiter = sqlite3.connect(path, isolation_level=None, timeout=0)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        waiter.execute("BEGIN IMMEDIATE")
    return holder, waiter


def test_a_store_answered_locked_at_once_is_tried_again_until_the_lock_goes(tmp_path: Path) -> None:
    holder, waiter = _locked_at_once(tmp_path / "agent.db")
    release = threading.Timer(0.2, holder.execute, ("COMMIT",))
    release.start()
    started = time.monotonic()
    _patiently(waiter, "BEGIN IMMEDIATE")  # the lock went after 0.2 s: taken then, no error
    assert 0.15 <= time.monotonic() - started < _BUSY_FOR
    waiter.execute("COMMIT")
    release.join()
    holder.close()
    waiter.close()


def test_a_lock_held_past_the_busy_time_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("websearch._core._credentials._BUSY_FOR", 0.2)
    holder, waiter = _locked_at_once(tmp_path / "agent.db")
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        _patiently(waiter, "BEGIN IMMEDIATE")
    assert 0.2 <= time.monotonic() - started < 2.0
    holder.execute("COMMIT")
    holder.close()
    waiter.close()


def test_secret_resolution_order(tmp_path: Path) -> None:
    store = CredentialStore(tmp_path / "agent.db")
    store.set("brave", "api_key", {"api_key": "from-db-123456"})
    ws = make_client(
        env={"WEBSEARCH_CONFIG_DIR": str(tmp_path), "BRAVE_API_KEY": "from-env-123456"},
        api_keys={"tavily": "explicit-123456"},
    )
    ctx: ProviderContext = ws._context(with_transport=False)
    assert ctx.secret("brave", ("BRAVE_API_KEY",)) == "from-env-123456"
    assert ctx.secret("tavily", ("TAVILY_API_KEY",)) == "explicit-123456"
    ws2 = make_client(env={"WEBSEARCH_CONFIG_DIR": str(tmp_path)})
    assert ws2._context(with_transport=False).secret("brave", ("BRAVE_API_KEY",)) == "from-db-123456"
    assert ws2._context(with_transport=False).secret("kagi", ("KAGI_API_KEY",)) is None


def test_reads_are_cached_until_the_file_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "agent.db"
    store = CredentialStore(path)
    store.set("brave", "api_key", {"api_key": "first-key-123456"})
    assert store.get("brave").api_key == "first-key-123456"  # type: ignore[union-attr]
    opened: list[int] = []
    real_connect = store._connect
    monkeypatch.setattr(store, "_connect", lambda: opened.append(1) or real_connect())
    for _ in range(5):
        assert store.get("brave").api_key == "first-key-123456"  # type: ignore[union-attr]
        assert store.get("tavily") is None
    assert opened == []  # answered from memory: no SQLite on the event loop
    CredentialStore(path).set("brave", "api_key", {"api_key": "second-key-abcdef"})  # another writer
    assert store.get("brave").api_key == "second-key-abcdef"  # type: ignore[union-attr]
    assert store.get("brave", fresh=True).api_key == "second-key-abcdef"  # type: ignore[union-attr]


def test_the_stamp_looks_at_the_file_at_most_once_a_second_but_sees_its_own_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from websearch._core import _credentials

    path = tmp_path / "agent.db"
    store = CredentialStore(path)
    assert store.stamp() is None
    store.set("brave", "api_key", {"api_key": "first-key-123456"})
    own = store.stamp()
    assert own is not None  # its own write: seen at once
    looked: list[int] = []
    real_stamp = store._stamp
    monkeypatch.setattr(store, "_stamp", lambda: looked.append(1) or real_stamp())
    CredentialStore(path).set("tavily", "api_key", {"api_key": "tvly-other-key-1234"})  # another writer
    assert [store.stamp() for _ in range(5)] == [own] * 5 and looked == []  # within STAMP_EVERY: trusted
    monkeypatch.setattr(_credentials, "STAMP_EVERY", 0.05)
    time.sleep(0.06)
    assert store.stamp() != own and looked == [1]  # then looked at again: the other write shows


def test_errors_pickle_with_their_fields() -> None:
    import pickle

    from websearch import InvalidSearchParams, SearchFailedError
    from websearch.errors import MissingCredentialError, RateLimited, SearchProviderError

    err = pickle.loads(
        pickle.dumps(RateLimited("brave", "Brave API error (429)", 429, retry_after=3, retry_variant=True))
    )
    assert (type(err), err.provider, err.message, err.status, err.retry_after, err.retry_variant, err.kind) == (
        RateLimited,
        "brave",
        "Brave API error (429)",
        429,
        3,
        True,
        "rate_limited",
    )
    assert isinstance(err, SearchProviderError)
    assert type(pickle.loads(pickle.dumps(MissingCredentialError("exa", "m")))) is MissingCredentialError
    assert pickle.loads(pickle.dumps(InvalidSearchParams("limit", "bad"))).param == "limit"
    assert pickle.loads(pickle.dumps(SearchFailedError("all failed", "none"))).provider == "none"


def test_a_damaged_store_fails_no_search(tmp_path: Path) -> None:
    from websearch.testing import FakeDuckDuckGo

    (tmp_path / "agent.db").write_bytes(b"this is not a database" * 100)
    with (
        FakeDuckDuckGo() as ddg,
        make_client(env={"WEBSEARCH_CONFIG_DIR": str(tmp_path), **ddg.env}, providers=["brave", "duckduckgo"]) as ws,
    ):
        response = ws.search("q")
        assert response.ok, response.error
        assert not {s.id: s for s in ws.provider_status()}["brave"].available


def test_bad_boolean_settings_fail_when_read(tmp_path: Path) -> None:
    (tmp_path / "settings.toml").write_text('exa.enabled = "maybe"\n')
    with pytest.raises(ConfigError, match=r"exa\.enabled must be true or false"):
        Settings.load(tmp_path, {})


def test_context_repr_shows_no_environment(tmp_path: Path) -> None:
    ws = make_client(env={"WEBSEARCH_CONFIG_DIR": str(tmp_path), "BRAVE_API_KEY": "brave-secret-in-env-123"})
    assert "brave-secret-in-env-123" not in repr(ws._context(with_transport=False))


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("http.timeout = nan", "setting http.timeout must be a positive number; got nan"),
        ("http.timeout = inf", "setting http.timeout must be a positive number; got inf"),
        ("http.timeout = 0", "setting http.timeout must be a positive number; got 0"),
        ("http.timeout = -3", "setting http.timeout must be a positive number; got -3"),
        ("providers.webSearchGeminiModel = 5", "setting providers.webSearchGeminiModel must be a string; got 5"),
        ("searxng.endpoint = 5", "setting searxng.endpoint must be a string; got 5"),
        ("exa.searchDelayMs = -5", "setting exa.searchDelayMs must be a number of milliseconds from 0 to 3600000"),
        ("exa.searchDelayMs = 1e12", "setting exa.searchDelayMs must be a number of milliseconds from 0 to 3600000"),
        ("mcp.format = 'json'", "setting mcp.format is 'json'; use one of: blocks, summary"),
        ("http.max_event_kb = 'big'", "setting http.max_event_kb must be a positive number; got 'big'"),
        ("providers.list = ['brave', 'altavista']", "setting providers.list names unknown providers: altavista"),
        ("searxng.endpoint = 'localhost:8888'", "setting searxng.endpoint must be an http:// or https:// URL"),
        ("searxng.endpoint = 'http://host:port'", "setting searxng.endpoint must be an http:// or https:// URL"),
        ("searxng.endpoint = 'ftp://searx.example'", "setting searxng.endpoint must be an http:// or https:// URL"),
    ],
)
def test_every_setting_is_checked_when_the_file_is_read(tmp_path: Path, toml: str, message: str) -> None:
    (tmp_path / "settings.toml").write_text(toml + "\n")
    with pytest.raises(ConfigError) as caught:
        Settings.load(tmp_path, {})
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://alice:s3cretPW99@[bad", "'http://***@[bad'"),
        ("https://s3cretPW99@host:99999/x", "'https://***@host:99999/x'"),
        ("  http://gw:s3cretPW99@@host:port", "'  http://***@host:port'"),
    ],
)
def test_a_url_refused_is_quoted_without_its_credentials(tmp_path: Path, url: str, shown: str) -> None:
    """A gateway's URL may carry a password: the error names the URL without it."""
    from websearch import WebSearch, render

    (tmp_path / "settings.toml").write_text(f"searxng.endpoint = {url.strip()!r}\n")
    with pytest.raises(ConfigError) as caught:
        Settings.load(tmp_path, {})
    assert "s3cretPW99" not in str(caught.value)
    assert str(caught.value).endswith("got " + shown.replace("  ", "", 1))
    with pytest.raises(ConfigError) as caught:
        Settings.load(tmp_path / "none", {"SEARXNG_ENDPOINT": url})
    assert "s3cretPW99" not in str(caught.value)
    env = {"WEBSEARCH_CONFIG_DIR": str(tmp_path / "none"), "WEBSEARCH_CACHE_DIR": str(tmp_path / "cache")}
    env |= {"BRAVE_API_KEY": "k", "WEBSEARCH_BRAVE_BASE_URL": url}
    with WebSearch(env=env, providers=["brave"]) as ws:
        response = ws.search("q", cache="off")
    assert response.error is not None and "***@" in response.error
    assert "s3cretPW99" not in repr(response) + render(response, "json")


def test_a_bad_setting_exits_2_with_one_line(tmp_path: Path) -> None:
    from conftest import run_cli

    (tmp_path / "settings.toml").write_text("http.timeout = nan\n")
    proc = run_cli(["search", "q"], {"WEBSEARCH_CONFIG_DIR": str(tmp_path)})
    assert (proc.returncode, proc.stderr) == (
        2,
        "websearch: error: setting http.timeout must be a positive number; got nan\n",
    )


def test_a_key_no_setting_has_gets_one_warning_naming_the_closest(tmp_path: Path) -> None:
    from websearch.errors import ConfigWarning

    (tmp_path / "settings.toml").write_text('[cache]\ntll = 60\n[telemetry]\nendpoint = "x"\n[pacing]\nwiki = "2/s"\n')
    with pytest.warns(ConfigWarning) as caught:
        settings = Settings.load(tmp_path, {})
    assert [str(w.message) for w in caught] == [
        f"{tmp_path / 'settings.toml'}: cache.tll (did you mean cache.ttl?), telemetry.endpoint are not"
        " settings websearch knows; ignored"
    ]
    assert settings.get("cache.tll") == 60  # left alone otherwise; a provider of one's own may be paced


def test_the_settings_the_original_tool_keeps_for_other_tools_are_known_and_quiet(tmp_path: Path) -> None:
    import warnings

    text = "[exa]\nenableResearcher = true\nenableWebsets = false\n[providers]\nantigravityEndpoint = 'sandbox'\n"
    (tmp_path / "settings.toml").write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Settings.load(tmp_path, {})
    (tmp_path / "settings.toml").write_text("[exa]\nenableWebsets = 'yes'\n")
    with pytest.raises(ConfigError, match=r"setting exa\.enableWebsets must be true or false"):
        Settings.load(tmp_path, {})


def test_the_cli_says_an_unknown_setting_in_one_line_and_goes_on(tmp_path: Path) -> None:
    from conftest import run_cli

    (tmp_path / "settings.toml").write_text("[search]\ndeadlin = 5\n")
    proc = run_cli(["providers"], {"WEBSEARCH_CONFIG_DIR": str(tmp_path), "WEBSEARCH_CACHE_DIR": str(tmp_path)})
    assert proc.returncode == 0
    assert proc.stderr == (
        f"websearch: warning: {tmp_path / 'settings.toml'}: search.deadlin (did you mean search.deadline?)"
        " is not a setting websearch knows; ignored\n"
    )


def test_the_env_twins_are_checked_too_and_named_in_the_error(tmp_path: Path) -> None:
    """The variable is what the user set, so the error names it, not the setting it stands for."""
    with pytest.raises(ConfigError, match=r"^WEBSEARCH_PROVIDERS names unknown providers: altavista$"):
        Settings.load(tmp_path, {"WEBSEARCH_PROVIDERS": "brave,altavista"})
    with pytest.raises(ConfigError, match=r"^SEARXNG_ENDPOINT must be an http:// or https:// URL with a host"):
        Settings.load(tmp_path, {"SEARXNG_ENDPOINT": "searx.local"})
    Settings.load(tmp_path, {"SEARXNG_ENDPOINT": "https://searx.example/base/"})  # a path is fine


def test_web_search_provider_names_the_preferred_provider_as_the_mcp_tool_spec_has_it(tmp_path: Path) -> None:
    (tmp_path / "settings.toml").write_text('providers.webSearch = "brave"\n')
    assert Settings.load(tmp_path, {}).preferred_provider == "brave"
    assert Settings.load(tmp_path, {"WEB_SEARCH_PROVIDER": "tavily"}).preferred_provider == "tavily"  # it wins
    assert Settings.load(tmp_path, {"WEB_SEARCH_PROVIDER": " "}).preferred_provider == "brave"  # blank: unset
    with pytest.raises(ConfigError, match=r"^WEB_SEARCH_PROVIDER is 'altavista'; use auto, public or one of: "):
        Settings.load(tmp_path, {"WEB_SEARCH_PROVIDER": "altavista"})


def test_a_redis_url_that_is_not_one_names_where_it_came_from(tmp_path: Path) -> None:
    from websearch._core._clock import SystemClock
    from websearch._state import open_store

    env = {"WEBSEARCH_REDIS_URL": "http://127.0.0.1:6379"}
    with pytest.raises(ConfigError, match=r"^WEBSEARCH_REDIS_URL is not a Redis URL: .*redis://"):
        open_store(Settings.load(tmp_path, env), env, SystemClock())
    (tmp_path / "settings.toml").write_text('state.url = "http://127.0.0.1:6379"\n')
    with pytest.raises(ConfigError, match=r"^setting state\.url is not a Redis URL"):
        open_store(Settings.load(tmp_path, {}), {}, SystemClock())
    # A password with a `/` in it was read as the port, and redis-py's error quoted it.
    env = {"WEBSEARCH_REDIS_URL": "redis://:Tr0ub4dor/3xyz@127.0.0.1/0"}
    with pytest.raises(ConfigError) as caught:
        open_store(Settings.load(tmp_path / "none", env), env, SystemClock())
    assert "Tr0ub4dor" not in str(caught.value) and "%-encoded" in str(caught.value)


def test_stream_limits_are_settings(tmp_path: Path) -> None:
    (tmp_path / "settings.toml").write_text("[http]\nmax_stream_mb = 2\nmax_event_kb = 512\n")
    assert Settings.load(tmp_path, {}).stream_limits == (2 * 1024 * 1024, 512 * 1024)
    assert Settings.load(tmp_path / "none", {}).stream_limits == (32 * 1024 * 1024, 4096 * 1024)


def _damage(path: Path, kind: str) -> None:
    """Damage agent.db at `path` the way the fault matrix did."""
    import sqlite3

    if kind == "directory":
        path.mkdir()
        return
    if kind == "garbage":
        path.write_bytes(b"this is not a database" * 100)
        return
    db = sqlite3.connect(path)
    if kind == "wrong schema":
        db.execute("CREATE TABLE credentials (name TEXT, secret TEXT)")
        db.execute("INSERT INTO credentials VALUES ('brave', 'k')")
    else:
        db.execute("CREATE TABLE credentials (provider TEXT PRIMARY KEY, kind TEXT, data TEXT, updated_at REAL)")
        data = {"bad json": "{not json", "not an object": "[1, 2]", "unknown kind": '{"api_key": "k"}'}[kind]
        db.execute(
            "INSERT INTO credentials VALUES ('brave', ?, ?, 0)",
            ("weird" if kind == "unknown kind" else "api_key", data),
        )
    db.commit()
    db.close()
    if kind == "truncated":
        path.write_bytes(path.read_bytes()[:100])


DAMAGE = ["garbage", "directory", "wrong schema", "bad json", "not an object", "unknown kind"]


@pytest.mark.parametrize("kind", DAMAGE)
def test_a_damaged_store_gives_one_clear_line_to_the_auth_commands(tmp_path: Path, kind: str) -> None:
    from conftest import run_cli

    _damage(tmp_path / "agent.db", kind)
    env = {"WEBSEARCH_CONFIG_DIR": str(tmp_path)}
    record_only = kind in ("bad json", "not an object", "unknown kind")  # the file itself is sound
    commands = [["auth", "list"]] + ([] if record_only else [["auth", "set", "brave"], ["auth", "remove", "brave"]])
    for args in commands:
        proc = run_cli(args, env, stdin="brave-key-0123456\n")
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("websearch: error: "), proc.stderr
    if record_only:  # storing the key again replaces the damaged record
        assert run_cli(["auth", "set", "brave"], env, stdin="brave-key-0123456\n").returncode == 0
        assert run_cli(["auth", "list"], env).stdout == "brave        api_key  …3456\n"


@pytest.mark.parametrize("kind", DAMAGE)
async def test_a_damaged_store_fails_no_search_and_says_so_once(tmp_path: Path, kind: str) -> None:
    from conftest import make_client
    from websearch.testing import FakeDuckDuckGo

    _damage(tmp_path / "agent.db", kind)
    with FakeDuckDuckGo() as ddg:
        env = {"WEBSEARCH_CONFIG_DIR": str(tmp_path), **ddg.env}
        async with make_client(env=env, providers=["brave", "codex", "duckduckgo"]) as ws:
            response = await ws.asearch("q")
            codex = await ws.asearch("q", provider="codex")
    assert response.ok and response.provider == "duckduckgo", response.error
    stored = [n for n in response.notices if n.message.startswith("stored credentials could not be read")]
    if kind in ("bad json", "not an object", "unknown kind"):  # the ids still read: nothing is lost up front
        assert stored == []
    else:
        (notice,) = stored
        assert notice.kind == "partial"
        assert "providers configured only there are left out (brave, codex)" in notice.message
        assert "move it aside and store the keys again with `websearch auth set`" in notice.message
    assert codex.provider == "duckduckgo"  # codex had no usable login: the automatic chain served


async def test_a_store_damaged_after_it_was_read_well_is_said_on_the_next_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search does not scan the lineup while agent.db is the one found readable; a change to
    the file (damaged, then moved aside) is seen on the next look at its stamp."""
    from websearch._core import _credentials
    from websearch.testing import FakeDuckDuckGo

    monkeypatch.setattr(_credentials, "STAMP_EVERY", 0.0)  # look at the file on every search
    path = tmp_path / "agent.db"
    CredentialStore(path).set("exa", "api_key", {"api_key": "exa-key-0123456"})

    def stored(response: SearchResponse) -> list[str]:
        assert response.ok and response.provider == "duckduckgo", response.error
        return [n.message for n in response.notices if n.message.startswith("stored credentials could not be read")]

    with FakeDuckDuckGo() as ddg:
        env = {"WEBSEARCH_CONFIG_DIR": str(tmp_path), **ddg.env}
        async with make_client(env=env, providers=["brave", "duckduckgo"]) as ws:
            assert stored(await ws.asearch("q")) == []
            assert stored(await ws.asearch("q again")) == []  # found readable: no scan made
            _damage(path, "garbage")
            (message,) = stored(await ws.asearch("q"))
            assert "providers configured only there are left out (brave)" in message
            assert len(stored(await ws.asearch("q again"))) == 1  # said on every search while it lasts
            path.unlink()
            assert stored(await ws.asearch("q")) == []


async def test_an_explicit_provider_reading_a_damaged_record_says_why(tmp_path: Path) -> None:
    from websearch import WebSearch

    _damage(tmp_path / "agent.db", "bad json")
    async with WebSearch(engine=False, env={"WEBSEARCH_CONFIG_DIR": str(tmp_path)}, providers=["brave"]) as ws:
        response = await ws.asearch("q", provider="brave")
    (attempt,) = response.attempts
    assert attempt.error_kind == "config"
    assert attempt.error is not None and attempt.error.startswith(
        f"the credential store {tmp_path / 'agent.db'} cannot be read"
    )


def test_a_config_directory_open_to_others_gets_a_warning(tmp_path: Path) -> None:
    from websearch.errors import InsecureConfigWarning

    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    with pytest.warns(InsecureConfigWarning, match=r"can be read by other users \(mode 755\).*chmod 700"):
        CredentialStore(shared / "agent.db").set("brave", "api_key", {"api_key": "k" * 12})
    created = tmp_path / "new" / "config"
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CredentialStore(created / "agent.db").set("brave", "api_key", {"api_key": "k" * 12})
    assert stat.S_IMODE(created.stat().st_mode) == 0o700


def test_the_cli_says_the_warning_in_one_line(tmp_path: Path) -> None:
    from conftest import run_cli

    tmp_path.chmod(0o755)
    proc = run_cli(["auth", "set", "brave"], {"WEBSEARCH_CONFIG_DIR": str(tmp_path)}, stdin="brave-key-0123456\n")
    assert proc.returncode == 0
    assert proc.stderr.startswith("websearch: warning: the config directory") and proc.stderr.count("\n") == 1
