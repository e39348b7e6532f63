"""A fake provider server on 127.0.0.1: real HTTP, scripted replies, every request recorded.

Fakes run on one background event loop thread shared by all of them, so they serve sync code,
async tests and CLI subprocesses alike. Point the library at one with `fake.env`
(`WEBSEARCH_<ID>_BASE_URL=http://127.0.0.1:<port>`). It also names a state directory of the
fake's own (`WEBSEARCH_CACHE_DIR`, removed when the fake stops): a test's cached answers,
cooldowns and pacing never reach the machine's real store, and a test run again never finds
the last run's answer in the cache. Set `WEBSEARCH_CACHE_DIR` after it to share one on purpose.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import shutil
import tempfile
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Self
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from aiohttp import web

from .._core._registry import PROVIDERS

__all__ = ["FakeServer", "RecordedRequest", "Reply", "honour_domains", "running_providers", "site_domains"]


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer.

    `body` may be bytes, str, or any JSON-serialisable value (sent as application/json).
    `delay` waits before answering; `hang` never answers; `truncate` promises the whole body
    (Content-Length) but closes after half of it; `chunks` streams the given pieces with
    `chunk_delay` between them (SSE), `cut` aborting the connection after the last one.
    """

    status: int = 200
    body: Any = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str | None = None
    delay: float = 0.0
    hang: bool = False
    truncate: bool = False
    chunks: Sequence[bytes] | None = None
    chunk_delay: float = 0.0
    cut: bool = False

    def encoded(self) -> tuple[bytes, str]:
        if isinstance(self.body, bytes):
            return self.body, self.content_type or "application/octet-stream"
        if isinstance(self.body, str):
            return self.body.encode(), self.content_type or "text/plain; charset=utf-8"
        return json.dumps(self.body).encode(), self.content_type or "application/json"


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """A request as the fake saw it. Header names are lower-case; `at` is when it arrived
    (`time.monotonic()` of the fakes' process, for tests of when a request was sent)."""

    method: str
    path: str
    query: tuple[tuple[str, str], ...]
    headers: Mapping[str, str]
    body: bytes
    at: float = field(default_factory=time.monotonic)

    @property
    def args(self) -> dict[str, str]:
        return dict(self.query)

    def form(self) -> list[tuple[str, str]]:
        return parse_qsl(self.body.decode(), keep_blank_values=True)

    def __repr__(self) -> str:
        # names only: the headers, query and body carry the keys the client sent
        names = [name for name, _ in self.query]
        return (
            f"RecordedRequest(method={self.method!r}, path={self.path!r}, query={names!r}, "
            f"headers={list(self.headers)!r}, body={len(self.body)} bytes)"
        )

    def json(self) -> Any:
        return json.loads(self.body)


class _LoopThread:
    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="websearch-fakes", daemon=True).start()
                cls._loop = loop
            return cls._loop


_RUNNING: dict[int, FakeServer] = {}
_SITE_RE: Final = re.compile(r"(?<![\w-])(-?)site:([^\s()]+)")
_URL_KEYS: Final = ("url", "link")


def site_domains(query: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The hosts a query's `site:` and `-site:` operators name: (included, excluded)."""
    found = _SITE_RE.findall(query)
    return tuple(d for neg, d in found if not neg), tuple(d for neg, d in found if neg)


def honour_domains(body: Any, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> Any:
    """`body` as an engine that honours a domain filter answers it: every result URL (a `url` or
    `link` of an object, or an `http` string in a list) moved onto the included hosts in turn,
    the same URL always onto the same host, and results on an excluded host left out. The fakes
    call it so that tests of domain filters get answers that keep the filter's promise (websearch
    drops the results that do not)."""
    if not include and not exclude:
        return body
    moved: dict[str, str] = {}
    hosts = [d for d in include if not _host_in(f"https://{d}/", exclude)]  # included and not excluded

    def place(url: str) -> str:
        if hosts and url not in moved:
            moved[url] = _rehost(url, hosts[len(moved) % len(hosts)])
        return moved.get(url, url)

    def excluded(value: Any) -> bool:
        urls = [value.get(k) for k in _URL_KEYS] if isinstance(value, dict) else [value]
        return any(isinstance(u, str) and u.startswith("http") and _host_in(u, exclude) for u in urls)

    def walk(value: Any) -> Any:
        if isinstance(value, list):
            return [w for w in map(walk, value) if not excluded(w)]
        if isinstance(value, dict):
            out = {k: walk(v) for k, v in value.items()}
            for key in _URL_KEYS:
                if isinstance(out.get(key), str):
                    out[key] = place(out[key])
            return out
        return place(value) if isinstance(value, str) and value.startswith(("http://", "https://")) else value

    return walk(body)


def _host_in(url: str, domains: Sequence[str]) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return any(host == d.lower() or host.endswith("." + d.lower()) for d in domains)


def _rehost(url: str, domain: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme or "https", domain, parts.path, parts.query, parts.fragment))


def running_providers() -> list[str]:
    """The built-in providers whose fakes are serving now, in chain order (give them to
    `WebSearch(providers=...)`: a client that can reach nothing but the fakes)."""
    running = {fake.provider_id for fake in list(_RUNNING.values())}
    return [provider_id for provider_id in PROVIDERS if provider_id in running]


class FakeServer:
    """Base of every fake. Subclasses set `provider_id` and override `default_reply`."""

    provider_id = ""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.disconnects = 0  # requests whose client went away before the answer was complete
        self._queue: deque[Reply] = deque()
        self._runner: web.AppRunner | None = None
        self._released: asyncio.Event | None = None
        self._state_dir: str | None = None
        self.port = 0

    # -- scripting -----------------------------------------------------------------------------

    def enqueue(self, *replies: Reply) -> Self:
        """Answer the next requests with these replies, in order, then fall back to the default."""
        self._queue.extend(replies)
        return self

    def default_reply(self, request: RecordedRequest) -> Reply:
        """The realistic answer when nothing is queued."""
        return Reply(404, {"error": "not found"})

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        """What points websearch at this fake, and its state at a directory of the fake's own."""
        if self._state_dir is None:
            raise RuntimeError(f"{type(self).__name__} is not started: its env names its port and state directory")
        return {f"WEBSEARCH_{self.provider_id.upper()}_BASE_URL": self.base_url, "WEBSEARCH_CACHE_DIR": self._state_dir}

    @property
    def last(self) -> RecordedRequest:
        return self.requests[-1]

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> Self:
        """Bind to 127.0.0.1 on a free port and serve (once; starting again is a no-op)."""
        if self._runner is None:
            asyncio.run_coroutine_threadsafe(self._start(), _LoopThread.get()).result(10)
            self._state_dir = tempfile.mkdtemp(prefix=f"websearch-fake-{self.provider_id}-")
            _RUNNING[id(self)] = self
        return self

    def stop(self) -> None:
        _RUNNING.pop(id(self), None)
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._stop(), _LoopThread.get()).result(10)
        state, self._state_dir = self._state_dir, None
        if state is not None:
            shutil.rmtree(state, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _start(self) -> None:
        self._released = asyncio.Event()
        # aiohttp logs every connection a test cuts on purpose; the fakes' own server stays quiet
        logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def _stop(self) -> None:
        assert self._runner is not None and self._released is not None
        self._released.set()
        await self._runner.cleanup()
        self._runner = None

    # -- serving -------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        try:
            return await self._serve(request)
        except (asyncio.CancelledError, ConnectionResetError):
            self.disconnects += 1
            raise

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        recorded = RecordedRequest(
            request.method,
            request.path,
            tuple(request.query.items()),
            {k.lower(): v for k, v in request.headers.items()},
            await request.read(),
        )
        self.requests.append(recorded)
        reply = self._queue.popleft() if self._queue else self.default_reply(recorded)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.hang:
            assert self._released is not None
            await self._released.wait()
        if reply.chunks is not None:
            return await self._stream(request, reply)
        body, content_type = reply.encoded()
        headers = {"Content-Type": content_type, **reply.headers}
        if not reply.truncate:
            return web.Response(status=reply.status, body=body, headers=headers)
        resp = web.StreamResponse(status=reply.status, headers=headers)
        resp.content_length = len(body)
        await resp.prepare(request)
        await resp.write(body[: len(body) // 2])
        if request.transport is not None:
            request.transport.abort()
        return resp

    async def _stream(self, request: web.Request, reply: Reply) -> web.StreamResponse:
        headers = {"Content-Type": reply.content_type or "text/event-stream", **reply.headers}
        resp = web.StreamResponse(status=reply.status, headers=headers)
        await resp.prepare(request)
        for chunk in reply.chunks or ():
            await resp.write(chunk)
            if reply.chunk_delay:
                await asyncio.sleep(reply.chunk_delay)
        if reply.cut and request.transport is not None:
            request.transport.abort()
            return resp
        await resp.write_eof()
        return resp
