"""Slow clients cannot lock everyone out: a deadline for each request to arrive (408), a cap on
open connections that closes the longest-waiting idle one for a newcomer or answers 503, and
repeated log lines thinned. Over real sockets, against uvicorn with the server's protocol."""

from __future__ import annotations

import logging
import re
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from conftest import make_client
from serve_helper import TOKEN, InProcess, ServeProcess, http, serve_env
from websearch._core._clock import SystemClock
from websearch._faces._serve import ServeConfig
from websearch._faces._serve._config import ConnectionLimits, accept_burst
from websearch._faces._serve._connections import GuardedH11Protocol
from websearch._faces._serve._logging import RepeatFilter
from websearch._state import MemoryStore
from websearch.testing import DdgResult, FakeDuckDuckGo, Reply
from websearch.testing.duckduckgo import results_page

PARTIAL = b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # a request head that never ends


def guarded(env: dict[str, str], limits: ConnectionLimits) -> InProcess:
    """The app in this process, served through the server's own protocol and accept burst."""
    config = ServeConfig(connections=limits).with_tokens(TOKEN)
    client = make_client(env=env, store=MemoryStore(SystemClock()))
    return InProcess(client, config, http=GuardedH11Protocol, backlog=accept_burst())


@contextmanager
def sockets(port: int, count: int, first: bytes = PARTIAL) -> Iterator[list[socket.socket]]:
    """`count` connections to the server, each having sent `first` (and nothing more)."""
    with ExitStack() as stack:
        opened = []
        for _ in range(count):
            sock = stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=30))
            if first:
                sock.sendall(first)
            opened.append(sock)
        yield opened


def answer(sock: socket.socket) -> bytes:
    """What the server sent before closing the connection."""
    sock.settimeout(30)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_a_request_head_or_body_that_does_not_arrive_in_time_is_408(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    with guarded(env, ConnectionLimits(request_timeout=0.5, max_connections=50)) as server:
        head = PARTIAL + f"Authorization: Bearer {TOKEN}\r\n".encode()
        body = head + b"Content-Type: application/json\r\nContent-Length: 40\r\n\r\n" + b'{"query": '
        with sockets(server.port, 1, head) as (slow_head,), sockets(server.port, 1, body) as (slow_body,):
            heads, bodies = answer(slow_head), answer(slow_body)
        with http(server.url) as client:  # a whole request is served as before
            whole = client.post("/v1/search", json={"query": "q"})
        counted = server.app.state.metrics.exposition().decode()
    for got in (heads, bodies):
        assert got.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
        assert got.endswith(b'{"error":"the request did not arrive in time"}')
    assert whole.status_code == 200
    # the cut body is a client's fault: counted as 499 (not a 500 of the server's)
    assert 'websearch_http_requests_total{method="POST",route="/v1/search",status="499"} 1.0' in counted
    assert 'status="500"' not in counted
    assert len(ddg.requests) == 1  # the cut body searched nothing


def test_a_new_connection_closes_the_longest_waiting_one_beyond_the_cap(
    ddg: FakeDuckDuckGo, env: dict[str, str]
) -> None:
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    limits = ConnectionLimits(request_timeout=60, max_connections=3)
    with guarded(env, limits) as server, sockets(server.port, 3) as slow, http(server.url) as client:
        first = client.post("/v1/search", json={"query": "q"})  # makes room: the oldest slow one goes
        second = client.get("/readyz")  # the same connection, kept alive
        closed = [answer(slow[0])]  # closed without a word
        with sockets(server.port, 1, b"") as (newcomer,):  # the next oldest goes for it
            closed.append(answer(slow[1]))
            newcomer.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            health = answer(newcomer)
    assert [r.status_code for r in (first, second)] == [200, 200]
    assert closed == [b"", b""]
    assert health.startswith(b"HTTP/1.1 200 ")


def test_with_every_connection_busy_a_new_one_is_503(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    ddg.enqueue(*(Reply(200, results_page(q, ddg.results), delay=3, content_type="text/html") for q in "ab"))
    with guarded(env, ConnectionLimits(request_timeout=60, max_connections=2)) as server:
        search = "GET /search?q={} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN + "\r\n\r\n"
        with sockets(server.port, 1, search.format("a").encode()), sockets(server.port, 1, search.format("b").encode()):
            deadline = time.monotonic() + 30
            while len(ddg.requests) < 2:  # both are being served: neither may be closed
                assert time.monotonic() < deadline
                time.sleep(0.02)
            with sockets(server.port, 1, b"") as (refused,):
                shed = answer(refused)
    assert shed.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
    assert b"retry-after: 1\r\n" in shed
    assert shed.endswith(b'{"error":"the server has too many connections; retry"}')


def test_slow_clients_beyond_the_descriptor_limit_lock_nobody_out(ddg: FakeDuckDuckGo, config_dir: Any) -> None:
    """The issue's case: `ulimit -n 1024`, 1,100 connections each sending half a request, then a
    caller with a token. It was never answered, and the log grew by a million lines."""
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    with ServeProcess(serve_env(config_dir, ddg), max_files=(1024, 1024)) as server:
        with sockets(server.port, 1100), http(server.url) as client:
            client.timeout = httpx2.Timeout(5)  # generous: it is answered in milliseconds
            reply = client.post("/v1/search", json={"query": "q"})
        status, log = server.stop()
    assert reply.status_code == 200 and reply.json()["error"] is None
    assert status == 0
    assert len(log.splitlines()) < 50, log[:2000]


def test_the_soft_descriptor_limit_is_raised_to_the_hard_one(ddg: FakeDuckDuckGo, config_dir: Any) -> None:
    with ServeProcess(serve_env(config_dir, ddg), max_files=(1024, 4096)) as server:
        limits = Path(f"/proc/{server.process.pid}/limits").read_text(encoding="utf-8")
    (line,) = [line for line in limits.splitlines() if line.startswith("Max open files")]
    assert line.split()[3:5] == ["4096", "4096"]  # soft, hard


def test_repeated_log_lines_are_thinned_and_counted() -> None:
    now = [0.0]
    thinned = RepeatFilter(burst=3, window=60, clock=lambda: now[0])
    logger = logging.getLogger("websearch.test.repeats")
    kept: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            kept.append(record.getMessage())

    handler = Keep()
    logger.addHandler(handler)
    logger.addFilter(thinned)
    logger.propagate = False
    try:
        for i in range(1000):
            logger.warning("accept failed: fd %d", 6)
            logger.warning("other %d", i % 2)
        now[0] = 61.0  # a new window
        logger.warning("accept failed: fd %d", 6)
    finally:
        logger.removeHandler(handler)
        logger.removeFilter(thinned)
    assert kept.count("accept failed: fd 6") == 3
    assert kept.count("other 0") + kept.count("other 1") == 3  # one kind: the message, not its values
    assert kept[-1] == "accept failed: fd 6 (997 more like it left out in 60 s)"
    assert len(kept) == 7


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[serve]\nrequest_timeout = 0\n", "setting serve.request_timeout must be a positive number; got 0"),
        ("[serve]\nmax_connections = 0.5\n", "setting serve.max_connections must be a whole number of at least 1"),
    ],
)
def test_connection_settings_are_checked(config_dir: Any, text: str, error: str) -> None:
    from websearch.errors import ConfigError

    (config_dir / "settings.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(error)):
        ServeConfig.load(make_client(env={"WEBSEARCH_CONFIG_DIR": str(config_dir)}).settings, {})
