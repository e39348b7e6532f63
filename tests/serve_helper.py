"""Servers for the `websearch serve` tests, on free loopback ports: the app in this process (uvicorn
on a thread, real HTTP), or `websearch serve` as a subprocess under the network guard
(`guarded_cli.py`), reaching only the loopback fakes named in its environment."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx2
import uvicorn

from conftest import TESTS, cli_env
from websearch import WebSearch
from websearch._faces._serve import ServeConfig, create_app

TOKEN = "tok-alpha-7f3a9c2e5b1d4f60"
OTHER_TOKEN = "tok-beta-0c8e2a4f6b1d3e57"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def http(url: str, token: str | None = TOKEN, headers: Mapping[str, str] | None = None) -> httpx2.Client:
    """A client of the server at `url` sending `token` (none when None), no proxy from the host."""
    sent = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.Client(base_url=url, headers={**sent, **(headers or {})}, trust_env=False, timeout=60)


def async_http(url: str, token: str | None = TOKEN, **kwargs: Any) -> httpx2.AsyncClient:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    limits = httpx2.Limits(max_connections=200, max_keepalive_connections=200)
    return httpx2.AsyncClient(base_url=url, headers=headers, trust_env=False, timeout=60, limits=limits, **kwargs)


class InProcess:
    """`create_app(client, config)` served by uvicorn on a thread of this process (the client is
    closed when the server stops); `options` go to uvicorn's `Config`."""

    def __init__(self, client: WebSearch, config: ServeConfig | None = None, **options: Any) -> None:
        self.config = config if config is not None else ServeConfig().with_tokens(TOKEN, OTHER_TOKEN)
        self.client = client
        self.app = create_app(client, self.config, close_client=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        options = {"log_level": "warning", "lifespan": "on", "access_log": False, **options}
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, **options))
        self.thread = threading.Thread(target=self.server.run, name="serve-test", daemon=True)

    def __enter__(self) -> InProcess:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(20)

    @property
    def lifecycle(self) -> Any:
        return self.app.state.lifecycle


class ServeProcess:
    """`websearch serve --port P ARGS` under the network guard; `env` is passed through `cli_env`
    (so its providers are the running fakes unless it names them); `max_files` is its descriptor
    limit (soft, hard)."""

    def __init__(
        self,
        env: Mapping[str, str],
        *args: str,
        port: int | None = None,
        max_files: tuple[int, int] | None = None,
    ) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, str(TESTS / "guarded_cli.py"), "serve", "--port", str(self.port), *args]

        def limit_files() -> None:  # `ulimit -Sn soft -Hn hard` in the child
            import resource

            assert max_files is not None
            resource.setrlimit(resource.RLIMIT_NOFILE, max_files)

        self.process = subprocess.Popen(
            command,
            env=cli_env(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=limit_files if max_files is not None else None,
        )

    def wait_ready(self, timeout: float = 30) -> ServeProcess:
        """Return once /healthz answers (the process is serving)."""
        deadline = time.monotonic() + timeout
        with http(self.url, None) as client:
            while True:
                try:
                    if client.get("/healthz").status_code == 200:
                        return self
                except httpx2.TransportError:
                    pass
                if self.process.poll() is not None:
                    raise AssertionError(f"websearch serve exited with {self.process.returncode}: {self.stderr()}")
                assert time.monotonic() < deadline, "websearch serve did not start"
                time.sleep(0.05)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> tuple[int, str]:
        """Signal the server and wait for it: (exit status, stderr)."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        _, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, err

    def stderr(self) -> str:
        if self.process.poll() is None:
            return ""
        return self.process.communicate(timeout=5)[1]

    def __enter__(self) -> ServeProcess:
        return self.wait_ready()

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate(timeout=10)


def start_all(*servers: ServeProcess) -> None:
    """Wait for servers started together (their imports overlap)."""
    for server in servers:
        server.wait_ready()


def serve_env(config_dir: Path, *fakes: Any, **extra: str) -> dict[str, str]:
    """The environment of a `websearch serve` process: `config_dir`, these fakes only, a token."""
    env = {
        "WEBSEARCH_CONFIG_DIR": str(config_dir),
        "WEBSEARCH_PROVIDERS": ",".join(fake.provider_id for fake in fakes) or "none",
        "WEBSEARCH_SERVE_TOKENS": TOKEN,
        **extra,
    }
    for fake in fakes:
        env.update(fake.env)
    env.update(extra)  # a state store the test names wins over the fakes' own
    return env
