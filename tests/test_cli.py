"""The command-line tool, run as a subprocess against loopback fakes."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import TESTS, cli_env, run_cli
from websearch._core._registry import PROVIDERS
from websearch.providers import SEARCH_PROVIDER_ORDER
from websearch.testing import DdgResult, FakeDuckDuckGo, FakeTavily, Reply
from websearch.testing.duckduckgo import challenge_page


def test_json_lists_results_with_redirects_unwrapped(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.results = [
        DdgResult("First &amp; one", "https://example.com/a?b=1&c=2", "Snip <b>pet</b>"),
        DdgResult("Second", "https://example.org/", ""),
    ]
    proc = run_cli(["search", "x", "--format", "json"], env)
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["error"] is None
    assert payload["response"]["provider"] == "duckduckgo"
    assert [(s["title"], s["url"], s["snippet"]) for s in payload["response"]["sources"]] == [
        ("First & one", "https://example.com/a?b=1&c=2", "Snip pet"),
        ("Second", "https://example.org/", None),
    ]
    assert payload["text"].startswith("[1] First & one\n    https://example.com/a?b=1&c=2\n    Snip pet")


def test_a_base_url_override_that_is_no_url_fails_its_provider_naming_the_variable(
    ddg: FakeDuckDuckGo, env: dict[str, str]
) -> None:
    """The attempt is a config failure in words that name the variable (it was aiohttp's
    `InvalidUrlClientError: notaurl/res/v1/web/search`), and the chain goes on."""
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    bad = {
        **env,
        "BRAVE_API_KEY": "k" * 20,
        "WEBSEARCH_BRAVE_BASE_URL": "notaurl",
        "WEBSEARCH_PROVIDERS": "brave,duckduckgo",
    }
    proc = run_cli(["search", "q", "--format", "json"], bad)
    assert proc.returncode == 0, proc.stderr
    brave, served = json.loads(proc.stdout)["response"]["attempts"]
    assert (brave["error_kind"], served["provider"]) == ("config", "duckduckgo")
    assert brave["error"] == "WEBSEARCH_BRAVE_BASE_URL must be an http:// or https:// URL with a host; got 'notaurl'"


def test_summary_output_and_notices_on_stderr(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    proc = run_cli(["search", "two", "words", "--provider", "duckduckgo", "--max-tokens", "9"], env)
    assert proc.returncode == 0
    assert proc.stdout == "[1] T\n    https://t.example/\n    s\n"
    assert proc.stderr == "note: max_tokens=9 not applied: DuckDuckGo does not support it\n"
    assert ddg.last.form()[0] == ("q", "two words")


def test_blocks_output(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    proc = run_cli(["search", "q", "--format", "blocks"], env)
    assert (
        proc.stdout
        == "# Web search: q\n[served by: duckduckgo]\n\n## 1. T\nURL: https://t.example/\ns\n\nSources:\n[1] https://t.example/\n"
    )


def test_challenge_exits_1_naming_duckduckgo(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.enqueue(Reply(202, challenge_page(), content_type="text/html"))
    proc = run_cli(["search", "x"], env)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.startswith("Error: DuckDuckGo blocked the request with a bot-detection challenge.")


def test_json_failure_goes_to_stdout(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.enqueue(Reply(503, "down"))
    proc = run_cli(["search", "x", "--format", "json"], env)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error"] == "DuckDuckGo HTML error (503)"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "   "], "the query is empty"),
        (["search", "q", "--provider", "altavista"], "invalid choice: 'altavista'"),
        (["search", "q", "--exclude", "altavista"], "invalid choice: 'altavista'"),
        (["search", "q", "--limit", "0"], "--limit/--num-results: must be a whole number of at least 1; got 0"),
        (["search", "q", "--limit", "many"], "must be a whole number of at least 1; got 'many'"),
        # Past JSON's exact integers, a number failed the search in the cache key's encoder.
        (
            ["search", "q", "--limit", "1" + "0" * 30],
            "must be a whole number from 1 to 9007199254740991; got 1" + "0" * 30,
        ),
        (["search", "q", "--recency-days", "1" + "0" * 23], "--recency-days: must be a number from -9007199254740991"),
        (["search", "q", "--recency", "decade"], "invalid choice: 'decade'"),
        (["search", "q", "--temperature", "5"], "--temperature: must be a number from 0 to 2; got 5"),
        (["search", "q", "--recency-days", "soon"], "--recency-days: must be a number; got 'soon'"),
        (["search", "q", "--providers", "altavista"], "--providers: must be provider ids separated by commas"),
        (
            ["search", "q", "--fanout", "brave,nope"],
            "--fanout: must be provider ids separated by commas, and 'nope' is",
        ),
        (["search", "q", "--timeout", "0"], "--timeout: must be a number of seconds greater than 0; got 0"),
        (["search", "q", "--timeout", "nan"], "--timeout: must be a number of seconds greater than 0; got nan"),
        (["search"], "the following arguments are required: query"),
        ([], "the following arguments are required: COMMAND"),
        # An option no command takes is told with that command's usage and the option meant.
        (
            ["search", "q", "--json"],
            "websearch search: error: unrecognized arguments: --json (--json is --format json)",
        ),
        (
            ["search", "q", "--limt=3"],
            "websearch search: error: unrecognized arguments: --limt=3 (did you mean --limit?)",
        ),
        (["cache", "clear", "--provder", "brave"], "usage: websearch cache clear [-h] [--provider ID]"),
        (["providers", "--rest", "brave"], "unrecognized arguments: --rest brave (did you mean --reset?)"),
        (["search", "q", "--frobnicate"], "websearch search: error: unrecognized arguments: --frobnicate\n"),
    ],
)
def test_usage_errors_exit_2_without_traceback(env: dict[str, str], args: list[str], message: str) -> None:
    proc = run_cli(args, env)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_settings_file_is_a_clear_error(env: dict[str, str], config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text("providers.webSearch = [\n")
    proc = run_cli(["search", "q"], env)
    assert proc.returncode == 2
    assert "settings.toml is not valid TOML" in proc.stderr
    (config_dir / "settings.toml").write_text('providers.webSearch = "altavista"\n')
    proc = run_cli(["providers"], env)
    assert proc.returncode == 2
    assert "setting providers.webSearch is 'altavista'" in proc.stderr


def test_readme_command_line_block_is_the_generated_one() -> None:
    from websearch._faces._cli import usage_block

    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    assert "```\n" + usage_block() + "\n```" in readme, "README's CLI block is out of date: paste usage_block()"


def test_numeric_flags_reach_notices_as_numbers(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    proc = run_cli(["search", "q", "--recency-days", "3", "--max-tokens", "9", "--format", "json"], env)
    notices = json.loads(proc.stdout)["response"]["notices"]
    assert {k: notices[0][k] for k in ("param", "value", "kind")} == {
        "param": "recency_days",
        "value": 3,
        "kind": "widened",
    }
    assert notices[1] == {
        "param": "max_tokens",
        "value": 9,
        "kind": "not_applied",
        "message": "max_tokens=9 not applied: DuckDuckGo does not support it",
    }


def test_providers_lists_every_provider_in_order(env: dict[str, str], config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text('[providers]\nwebSearchExclude = ["searxng"]\n')
    env = {**env, "WEBSEARCH_PROVIDERS": ",".join(SEARCH_PROVIDER_ORDER)}  # listing only: nothing is sent
    proc = run_cli(["providers", "--format", "json"], {**env, "SEARXNG_ENDPOINT": "http://127.0.0.1:9"})
    rows = json.loads(proc.stdout)
    assert [r["id"] for r in rows] == [*SEARCH_PROVIDER_ORDER, "public"]  # then the keyless fan-out
    by_id = {r["id"]: r for r in rows}
    assert by_id["duckduckgo"]["available"] is True
    assert by_id["duckduckgo"]["reason"] is None  # it read "not configured"
    assert by_id["brave"]["reason"] == "set BRAVE_API_KEY or run `websearch auth set brave`"
    keyless = [provider for provider in SEARCH_PROVIDER_ORDER if PROVIDERS[provider].keyless]
    assert by_id["public"]["reason"].startswith(f"all keyless engines at once: {keyless[0]}, ")
    assert by_id["searxng"]["available"] is True
    assert by_id["searxng"]["excluded"] is True
    text = run_cli(["providers"], env).stdout.splitlines()
    assert len(text) == len(SEARCH_PROVIDER_ORDER) + 1
    assert text[-1].split()[:3] == ["public", "Public", "available"]
    width = max(map(len, SEARCH_PROVIDER_ORDER))
    n = SEARCH_PROVIDER_ORDER.index("searxng") + 1
    assert text[n - 1] == (
        f"{n:2}. {'searxng':<{width}}  SearXNG     unavailable [excluded]  "
        "(set searxng.endpoint in settings.toml or SEARXNG_ENDPOINT)"
    )
    n = SEARCH_PROVIDER_ORDER.index("duckduckgo") + 1
    assert text[n - 1] == f"{n:2}. {'duckduckgo':<{width}}  DuckDuckGo  available"


def test_auth_set_list_remove(env: dict[str, str], config_dir: Path) -> None:
    secret = "sk-brave-SECRET-0123456789abcd"
    proc = run_cli(["auth", "set", "brave"], env, stdin=secret + "\n")
    assert proc.returncode == 0
    assert secret not in proc.stdout + proc.stderr
    db = config_dir / "agent.db"
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    listed = run_cli(["auth", "list"], env).stdout
    assert listed == "brave        api_key  …abcd\n"
    rows = json.loads(run_cli(["providers", "--format", "json"], {**env, "WEBSEARCH_PROVIDERS": "brave"}).stdout)
    assert {r["id"]: r["available"] for r in rows}["brave"] is True
    assert run_cli(["auth", "remove", "brave"], env).returncode == 0
    again = run_cli(["auth", "remove", "brave"], env)
    assert (again.returncode, again.stderr) == (1, "websearch: no stored credential for brave\n")
    assert run_cli(["auth", "list"], env).stdout.startswith("no stored credentials")


@pytest.mark.parametrize("provider", ["duckduckgo", "searxng"])
def test_auth_set_refuses_a_provider_that_takes_no_key(env: dict[str, str], config_dir: Path, provider: str) -> None:
    """A keyless engine (or SearXNG, which takes an endpoint) reads no stored key: storing one
    would look like it did something. The library says the same."""
    proc = run_cli(["auth", "set", provider], env, stdin="some-key-0123456\n")
    assert proc.returncode == 2 and f"invalid choice: '{provider}'" in proc.stderr
    assert "'brave'" in proc.stderr  # the ids that do take one are listed
    assert not (config_dir / "agent.db").exists()
    from websearch import ConfigError, WebSearch

    with pytest.raises(ConfigError, match="takes no key: nothing would read one stored for it"):
        WebSearch(config_dir=config_dir, env={}).store_credential(provider, "some-key-0123456")
    assert not (config_dir / "agent.db").exists()


def test_python_dash_m_and_version(env: dict[str, str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "websearch", "--version"], capture_output=True, text=True)
    assert proc.stdout.startswith("websearch ")


def test_ctrl_c_exits_130_quickly_without_traceback(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.enqueue(Reply(hang=True))
    full_env = cli_env(env)
    proc = subprocess.Popen(
        [sys.executable, str(TESTS / "guarded_cli.py"), "search", "q"],
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 20
    while not ddg.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ddg.requests, "the CLI never reached the fake"
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert time.monotonic() - sent < 1.0
    assert proc.returncode == 130
    assert "Traceback" not in err
    assert err == "websearch: interrupted\n"


@pytest.mark.parametrize("args", [["search", "q", "--format", "blocks"], ["providers"]])
def test_a_reader_gone_ends_quietly_with_141(ddg: FakeDuckDuckGo, env: dict[str, str], args: list[str]) -> None:
    """`websearch search q | head -1`: the pipe's reader is gone before the answer is written."""
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to the other end now fails with EPIPE
    try:
        proc = subprocess.run(
            [sys.executable, str(TESTS / "guarded_cli.py"), *args],
            env=cli_env(env),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=30,
        )
    finally:
        os.close(write_end)
    assert proc.stderr == ""
    assert proc.returncode == 141


def test_help_lists_every_exit_status(config_dir: Path) -> None:
    """`websearch --help` and docs/cli.md name every status the command exits with, 141 included."""
    from websearch._faces import _cli

    codes = sorted({value for name, value in vars(_cli).items() if name.startswith("EXIT_") and isinstance(value, int)})
    proc = run_cli(["--help"], {"WEBSEARCH_CONFIG_DIR": str(config_dir)})
    assert proc.returncode == 0, proc.stderr
    listed = " ".join(proc.stdout.split("Exit status:")[1].split())
    page = (TESTS.parent / "docs" / "cli.md").read_text(encoding="utf-8")
    documented = " ".join(page.split("\nExit status:")[1].split("\n\n")[0].split())
    for code in codes:
        assert re.search(rf"(^|, ){code} \w", listed), f"--help does not say what exit status {code} means: {listed}"
        assert re.search(rf"(^|, ){code} ", documented), f"docs/cli.md does not list exit status {code}"
    assert [code for code, _ in _cli.EXIT_STATUSES] == codes


def test_a_closed_stdout_is_no_error(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    """`websearch search q >&-`: Python starts with no stdout; the search runs, prints nothing."""
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    proc = subprocess.run(
        [sys.executable, str(TESTS / "guarded_cli.py"), "search", "q"],
        env=cli_env(env),
        stderr=subprocess.PIPE,
        text=True,
        timeout=30,
        preexec_fn=lambda: os.close(1),
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert len(ddg.requests) == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_store_commands_say_when_the_shared_store_is_out(env: dict[str, str]) -> None:
    """`cache stats`, `cache clear` and `providers --reset` act on the shared store: with it out,
    each says so and exits 1, rather than reporting in-process zeros or a reset that did not
    happen; `providers` still lists, and warns that the cooldowns are not known."""
    down = {**env, "WEBSEARCH_ENGINE": "on", "WEBSEARCH_REDIS_URL": f"redis://127.0.0.1:{_free_port()}/0"}
    unavailable = "websearch: error: the shared state store is unavailable (connection refused); "
    for args, outcome in [
        (["cache", "stats"], "no cache statistics"),
        (["cache", "clear"], "nothing was cleared in it"),
        (["providers", "--reset", "duckduckgo"], "its health record was not reset"),
    ]:
        proc = run_cli(args, down)
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", unavailable + outcome + "\n"), args
    listed = run_cli(["providers"], down)
    assert listed.returncode == 0 and "duckduckgo" in listed.stdout
    assert listed.stderr == (
        "websearch: warning: the shared state store is unavailable (connection refused); cooldowns are not known\n"
    )


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (None, "DuckDuckGo request failed: could not connect to 127.0.0.1:"),
        (Reply(hang=True), "DuckDuckGo did not answer within 2 s"),
        (
            Reply(200, b"<html>" + b"x" * 200_000, truncate=True),
            "DuckDuckGo request failed: the connection broke before the response body was complete",
        ),
        (Reply(200, b"\x00\xff garbage \x89PNG"), "DuckDuckGo returned no renderable search content."),
        (Reply(200, b""), "DuckDuckGo returned no renderable search content."),
        (Reply(200, b"<html>" + b"a" * (10 * 1024 * 1024)), "DuckDuckGo sent a response larger than 8 MB; refused"),
        (
            Reply(429, "Too Many Requests", headers={"Retry-After": "120"}),
            "DuckDuckGo HTML error (429); retry after 120 s",
        ),
    ],
)
def test_faults_exit_1_naming_the_provider_within_the_timeout(
    ddg: FakeDuckDuckGo, env: dict[str, str], reply: Reply | None, message: str
) -> None:
    if reply is None:
        env = {**env, "WEBSEARCH_DUCKDUCKGO_BASE_URL": f"http://127.0.0.1:{_free_port()}"}
    else:
        ddg.enqueue(reply)
    started = time.monotonic()
    proc = run_cli(["search", "q", "--timeout", "2"], env)
    elapsed = time.monotonic() - started
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith(f"Error: {message}"), proc.stderr
    assert "Traceback" not in proc.stderr
    assert elapsed < 2 + 8  # the timeout plus interpreter start-up, generously


def test_setting_http_timeout_is_used(ddg: FakeDuckDuckGo, env: dict[str, str], config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text("[http]\ntimeout = 1.5\n")
    ddg.enqueue(Reply(hang=True))
    proc = run_cli(["search", "q"], env)
    assert proc.stderr == "Error: DuckDuckGo did not answer within 1.5 s\n"


def test_ctrl_c_mid_stream_exits_130_quickly(env: dict[str, str]) -> None:
    from websearch.testing import FakePerplexity

    chunk = b'data: {"id":"r1","model":"sonar-pro","choices":[{"index":0,"delta":{"content":"word "}}]}\n\n'
    with FakePerplexity() as fake:
        fake.enqueue(Reply(200, chunks=[chunk] * 600, chunk_delay=0.05, content_type="text/event-stream"))
        full_env = cli_env({**env, **fake.env, "PERPLEXITY_API_KEY": "pplx-test-0001"})
        proc = subprocess.Popen(
            [sys.executable, str(TESTS / "guarded_cli.py"), "search", "q", "--provider", "perplexity"],
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 20
        while not fake.requests and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.5)  # a few events have streamed
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
        assert time.monotonic() - sent < 1.0
        deadline = time.monotonic() + 5
        while not fake.disconnects and time.monotonic() < deadline:
            time.sleep(0.02)
    assert proc.returncode == 130
    assert err == "websearch: interrupted\n"
    assert fake.disconnects == 1  # the stream was closed, not left running


def test_providers_flag_fixes_the_chain_for_one_search(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    from websearch.testing import FakeBrave

    with FakeBrave() as brave:
        keyed = {**env, **brave.env, "BRAVE_API_KEY": "brave-key-0123456"}
        first = json.loads(run_cli(["search", "q", "--format", "json"], keyed).stdout)["response"]
        only = json.loads(run_cli(["search", "q", "--providers", "duckduckgo", "--format", "json"], keyed).stdout)
        reordered = run_cli(["search", "q", "--providers", "duckduckgo,brave", "--format", "json"], keyed)
    assert first["provider"] == "brave"
    assert [a["provider"] for a in only["response"]["attempts"]] == ["duckduckgo"]
    assert json.loads(reordered.stdout)["response"]["provider"] == "duckduckgo"
    assert len(brave.requests) == 1


@pytest.mark.parametrize("slow", [True, False], ids=["slow-tavily", "fast-tavily"])
def test_hedge_counts_from_the_first_request_in_a_fresh_process(
    tenv: dict[str, str], tavily: FakeTavily, slow: bool
) -> None:
    """A fresh process loads its HTTP stack (about 0.2 s) before the hedged walk starts its
    clock. Counted in the first provider's attempt, it made `--hedge 0.3` start Brave 0.1 s
    after a slow Tavily's request, and beside a Tavily that answered 0.2 s after its request."""
    # Margins wide enough for a loaded machine: the hedge is 1 s, a fast Tavily answers 0.8 s
    # before it, a slow one 2 s after it; Brave is asked no sooner than the hedge after Tavily
    # (sooner by the stack's load time was the bug) and before the slow Tavily would answer.
    from websearch.testing import FakeBrave
    from websearch.testing.tavily import tavily_results_body

    with FakeBrave() as brave:
        keyed = {**tenv, **brave.env, "BRAVE_API_KEY": "brave-key-0123456", "WEBSEARCH_PROVIDERS": "tavily,brave"}
        tavily.enqueue(Reply(200, tavily_results_body("q"), delay=3.0 if slow else 0.2))
        keyed["WEBSEARCH_ENGINE"] = "on"  # as a user runs it: its store opened in the walk too
        proc = run_cli(["search", "q", "--hedge", "1.0", "--format", "json", "--no-cache"], keyed)
    assert proc.returncode == 0, proc.stderr
    served = json.loads(proc.stdout)["response"]["provider"]
    assert len(tavily.requests) == 1
    if slow:
        assert (served, len(brave.requests)) == ("brave", 1)
        # Each request's own setup (its provider's module, its connection) differs by a few ms.
        after = brave.requests[0].at - tavily.requests[0].at
        assert 1.0 - 0.05 <= after < 3.0, f"Brave asked {after:.3f} s after Tavily; attempts: {proc.stdout}"
    else:
        assert (served, brave.requests) == ("tavily", [])
