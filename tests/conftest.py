"""Shared fixtures: the network guard, fakes on loopback, a hermetic environment, a fake clock."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import netguard
from websearch import SearchResponse, WebSearch
from websearch.testing import FakeDuckDuckGo, FakeExa, FakeFirecrawl, FakeSearXNG, FakeTavily, running_providers

netguard.install()

TESTS = Path(__file__).parent
#: `WEBSEARCH_PROVIDERS` for a subprocess when no fake runs: no provider at all.
NO_PROVIDERS = "none"
NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
TAVILY_KEY = "tvly-dev-secret-4b7c2e9d"
FIRECRAWL_KEY = "fc-3f9a1c7e5b2d4a6c8e0f"


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The user cache directory (the engine's default SQLite store) of this test process is a
    temporary one: no test reads or writes the real ~/.cache/websearch."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture(autouse=True)
def _no_network_escape() -> Iterator[None]:
    before = len(netguard.blocked)
    yield
    escaped = netguard.blocked[before:]
    assert not escaped, f"test tried to reach non-loopback hosts: {escaped}"


class FakeClock:
    """Wall time frozen at NOW (movable), monotonic time advanced by sleep()."""

    def __init__(self, now: datetime = NOW) -> None:
        self._now = now
        self._mono = 1000.0
        self.sleeps: list[float] = []

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self._mono += seconds
        self._now += timedelta(seconds=seconds)


class StillClock(FakeClock):
    """A clock whose sleeps take no time but let the loop run: searches that wait, wait together
    (a pacing queue forms, as it does in real time)."""

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await asyncio.sleep(0)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    path = tmp_path / "config"
    path.mkdir(mode=0o700)  # as websearch creates it (a directory others can read gets a warning)
    return path


@pytest.fixture
def ddg() -> Iterator[FakeDuckDuckGo]:
    with FakeDuckDuckGo() as fake:
        yield fake


@pytest.fixture
def searx() -> Iterator[FakeSearXNG]:
    with FakeSearXNG() as fake:
        yield fake


@pytest.fixture
def exa() -> Iterator[FakeExa]:
    with FakeExa() as fake:
        yield fake


@pytest.fixture
def tavily() -> Iterator[FakeTavily]:
    with FakeTavily(valid_keys={TAVILY_KEY}) as fake:
        yield fake


@pytest.fixture
def tenv(env: dict[str, str], tavily: FakeTavily) -> dict[str, str]:
    return {**env, **tavily.env, "TAVILY_API_KEY": TAVILY_KEY}


@pytest.fixture
def fc() -> Iterator[FakeFirecrawl]:
    with FakeFirecrawl() as fake:
        yield fake


@pytest.fixture
def fc_env(env: dict[str, str], fc: FakeFirecrawl) -> dict[str, str]:
    return {**env, **fc.env, "FIRECRAWL_API_KEY": FIRECRAWL_KEY}


async def eventually(condition: Callable[[], object], within: float = 2.0) -> None:
    """Poll every 10 ms until `condition()` holds (a request reached a fake, a connection closed);
    the test fails with TimeoutError if it does not within `within` seconds."""
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110 - the fakes run on another thread: nothing to await
            await asyncio.sleep(0.01)


def make_client(**kw: Any) -> WebSearch:
    """A client given exactly the providers whose fakes are running now (unless the test names
    its own `providers`): however many providers the registry holds, a test reaches only fakes."""
    kw.setdefault("providers", running_providers())
    kw.setdefault("engine", False)  # no cache, cooldowns or pacing between a test's searches (engine tests opt in)
    return WebSearch(**kw)


async def search_once(
    provider: str, env: Mapping[str, str], query: str, clock: FakeClock | None = None, **params: Any
) -> SearchResponse:
    """One search through a fresh client (closed afterwards), with `provider` chosen explicitly."""
    async with make_client(env=env, clock=clock or FakeClock()) as ws:
        return await ws.asearch(query, provider=provider, **params)


@pytest.fixture
def env(config_dir: Path, ddg: FakeDuckDuckGo) -> dict[str, str]:
    """A hermetic environment: our config dir and the DuckDuckGo fake, nothing from the host."""
    return {"WEBSEARCH_CONFIG_DIR": str(config_dir), **ddg.env}


def provider_context(
    config_dir: Path, env: Mapping[str, str], clock: FakeClock | None = None, transport: Any = None
) -> Any:
    """A ProviderContext over `env` and `config_dir` (settings.toml, agent.db), for calling a
    provider's pure functions directly; no transport unless one is given."""
    from websearch._core._context import ProviderContext
    from websearch._core._credentials import CredentialStore
    from websearch._core._settings import Settings

    return ProviderContext(
        env, Settings.load(config_dir, env), CredentialStore(config_dir / "agent.db"), transport, clock or FakeClock()
    )


#: The ChatGPT account of the Codex fake's logins.
CODEX_ACCOUNT = "acct-7d1f2c3b"


def key_env(provider: str, config_dir: Path, key: str) -> dict[str, str]:
    """An environment that configures `provider` with `key`, decided by its registry row: its
    first `*_API_KEY` variable (else its first variable), else a stored OAuth login (for a
    provider whose only credential is one), and any setting it needs (SearXNG's endpoint)."""
    from websearch._core._registry import PROVIDERS
    from websearch._core._settings import ENV_TWINS

    info = PROVIDERS[provider]
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir)}
    names = [n for n in info.env_keys if n.endswith("_API_KEY")] or list(info.env_keys)
    if names:
        env[names[0]] = key
    elif info.credential_ids:
        from websearch._core._credentials import CredentialStore

        login = {"access_token": key, "refresh_token": key + "-r", "account_id": CODEX_ACCOUNT, "expires_at": 4e9}
        CredentialStore(config_dir / "agent.db").set(info.credential_ids[0], "oauth", login)
    for setting in info.settings_keys:
        env[ENV_TWINS[setting]] = f"https://{provider}.example.org"  # the fake's base URL redirects it
    return env


def cli_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment of a `websearch` subprocess: exactly `env`, the network guard on its path,
    and its providers limited to the fakes running now (`WEBSEARCH_PROVIDERS`) unless `env` sets them."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": env.get("WEBSEARCH_CONFIG_DIR", "/nonexistent"),
        "PYTHONPATH": str(TESTS),
        "WEBSEARCH_PROVIDERS": ",".join(running_providers()) or NO_PROVIDERS,
        "WEBSEARCH_ENGINE": "off",
        **env,
    }


def run_cli(
    args: list[str], env: Mapping[str, str], *, timeout: float = 30, stdin: str | None = None, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """Run `websearch ARGS` as a subprocess under the network guard (see `cli_env`)."""
    return subprocess.run(
        [sys.executable, str(TESTS / "guarded_cli.py"), *args],
        env=cli_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        input=stdin,
        **kwargs,
    )


def held_at_fork(lock: str) -> str:
    """Lines of a script that hold `lock` (an expression) in another thread, as the parent's
    threads may when a process forks, then fork: `pid` is 0 in the child, and `done.set()` lets
    the holder go in the parent. For tests of what a child inherits locked."""
    return (
        "import os, threading\n"
        "held, done = threading.Event(), threading.Event()\n"
        "def hold():\n"
        f"    with {lock}:\n"
        "        held.set()\n"
        "        done.wait()\n"
        "threading.Thread(target=hold, daemon=True).start()\n"
        "held.wait()\n"
        "pid = os.fork()\n"
    )


def messages(response: SearchResponse) -> tuple[str, ...]:
    """The response's notices as the sentences the blocks header and `note:` lines show."""
    return tuple(notice.message for notice in response.notices)


class RedisServer:
    """A real `redis-server` on a free loopback port, without persistence, for the state store's
    tests: started by `start()` (which waits until it answers), stopped by `stop()`; `start()`
    again reuses the port, as a restarted Redis would."""

    def __init__(self) -> None:
        import socket

        binary = shutil.which("redis-server")
        if binary is None:
            if os.environ.get("CI") == "true":
                pytest.fail("redis-server is not installed; CI must have it (.ci/run installs Debian's redis-server)")
            pytest.skip("redis-server is not installed (apt-get install redis-server)")
        self.binary = binary
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        import socket
        import tempfile
        import time

        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        args += ["--dir", tempfile.gettempdir(), "--loglevel", "warning"]
        self._process = subprocess.Popen(
            [self.binary, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                pytest.fail(f"redis-server exited at once (code {self._process.returncode})")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.02)
        self.stop()
        pytest.fail(f"redis-server did not answer on port {self.port} within 10 s")

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[str]:
    """The URL of a real Redis shared by the session's tests (each uses its own key prefix)."""
    server = RedisServer()
    server.start()
    try:
        yield server.url
    finally:
        server.stop()
