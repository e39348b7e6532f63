"""Structured access logs, and the front door every request passes first.

One JSON object per request on stderr (`websearch.serve.access`): time, method, route, status,
milliseconds, bytes, the caller's address, which token (its id: the first 16 hex digits of its
SHA-256, never the token), and for searches the provider that served, the outcome and whether
it was cached. The query text is left out unless `[serve] log_queries = true`; the query string
and headers never are logged (they carry the query, and Authorization the token), and a path the
server does not serve is logged as `other`. uvicorn's own access log is off for the same reason.

Repeated lines of the server's other logs (asyncio's, uvicorn's, the connection guard's) are
thinned by `RepeatFilter`: a few of each kind a minute, then a count of those left out.

The front door also keeps the count of requests in flight (the drain on SIGTERM waits for it to
reach zero) and answers 503 to new requests once the drain has begun.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable, MutableMapping
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any, Final

import orjson

from ._metrics import route_label

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from ._lifecycle import Lifecycle
    from ._metrics import Metrics

__all__ = ["ACCESS_LOGGER", "FrontDoor", "JsonFormatter", "RepeatFilter", "client_gone", "configure", "request_info"]

ACCESS_LOGGER: Final = "websearch.serve.access"
_log = logging.getLogger(ACCESS_LOGGER)
#: Where a request's handler leaves what the access log should say about it.
_INFO: Final = "websearch.info"
_PROBES: Final = frozenset({"/healthz", "/readyz"})
#: Set in a request's info when its connection ended before the request had all arrived.
_GONE: Final = "gone"
_SHUTTING_DOWN: Final = "the server is shutting down; retry on another"


class JsonFormatter(logging.Formatter):
    """A record as one JSON line: its `fields` (see `FrontDoor`), or its level and message."""

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "fields", None)
        if not isinstance(fields, dict):
            fields = {"event": "log", "level": record.levelname.lower(), "message": record.getMessage()}
        return orjson.dumps(fields, default=str).decode()


class RepeatFilter(logging.Filter):
    """At most `burst` records of one kind (logger, level, message) per `window` seconds; the
    first let through after a window says how many were left out. A flood of one line (asyncio's
    failed accepts, a connection refused a thousand times) cannot fill a disk or drown the rest."""

    def __init__(self, burst: int = 5, window: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.burst = burst
        self.window = window
        self.clock = clock
        #: kind -> (start of its window, records let through in it, records left out of it)
        self._kinds: dict[tuple[str, int, str], tuple[float, int, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.levelno, str(record.msg)[:200])
        now = self.clock()
        start, passed, dropped = self._kinds.get(key, (now, 0, 0))
        left_out = 0
        if now - start >= self.window:
            start, passed, left_out, dropped = now, 0, dropped, 0
        if passed >= self.burst:
            self._kinds[key] = (start, passed, dropped + 1)
            return False
        if len(self._kinds) >= 1000 and key not in self._kinds:
            self._kinds.clear()  # many kinds, each rare: start again rather than grow
        self._kinds[key] = (start, passed + 1, dropped)
        if left_out:
            record.msg = f"{record.getMessage()} ({left_out} more like it left out in {self.window:g} s)"
            record.args = ()
        return True


_REPEATS: Final = RepeatFilter()
#: The loggers a flood of one line can come from: asyncio's (failed accepts), uvicorn's errors
#: (bad requests), the connection guard's (refused and cut connections).
_THINNED: Final = ("asyncio", "uvicorn.error", "websearch.serve.connections")


def configure(stream: IO[str] | None = None) -> logging.Handler:
    """Send access logs to `stream` (stderr) as JSON lines, and thin repeated lines of the
    server's other loggers; returns the handler (to remove it)."""
    for name in _THINNED:
        logger = logging.getLogger(name)
        if _REPEATS not in logger.filters:
            logger.addFilter(_REPEATS)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    _log.addHandler(handler)
    _log.setLevel(logging.INFO)
    _log.propagate = False
    return handler


def request_info(scope: MutableMapping[str, Any]) -> dict[str, Any]:
    """The dict a handler fills for the access log (provider, outcome, ...); empty outside one."""
    info: dict[str, Any] = scope.setdefault(_INFO, {})
    return info


def client_gone(scope: MutableMapping[str, Any]) -> None:
    """Note that the request's connection ended before all of it arrived (the client left, or
    the connection guard cut it): logged and counted as 499, not as the server's 500."""
    request_info(scope)[_GONE] = True


async def reply(send: Send, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
    """A JSON answer straight from a middleware."""
    payload = orjson.dumps(body)
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})


class FrontDoor:
    """Outermost middleware: in-flight count, the drain's 503, the request metrics, the log line."""

    def __init__(self, app: ASGIApp, lifecycle: Lifecycle, metrics: Metrics, log_queries: bool) -> None:
        self.app = app
        self.lifecycle = lifecycle
        self.metrics = metrics
        self.log_queries = log_queries

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status, size, answering = 500, 0, False

        async def sending(message: Message) -> None:
            nonlocal status, size, answering
            if message["type"] == "http.response.start":
                status, answering = message["status"], True
            elif message["type"] == "http.response.body":
                size += len(message.get("body", b""))
            await send(message)

        path = scope["path"]
        lifecycle = self.lifecycle
        task = asyncio.current_task()
        lifecycle.entered(task)
        self.metrics.in_flight.inc()
        headers = {"retry-after": "1", "connection": "close"}
        try:
            if lifecycle.draining and path != "/healthz":
                if path == "/readyz":
                    await reply(sending, 503, {"status": "draining"}, headers)
                else:
                    await reply(sending, 503, {"error": _SHUTTING_DOWN}, headers)
            else:
                await self.app(scope, receive, sending)
        except asyncio.CancelledError:
            if not lifecycle.was_cut(task) or task is None:
                raise
            task.uncancel()  # the grace period's end, not the server's: answered, not re-raised
            if not answering:  # else the client sees its answer cut short
                await reply(sending, 503, {"error": _SHUTTING_DOWN}, headers)
        finally:
            lifecycle.left(task)
            self.metrics.in_flight.dec()
            if not answering and request_info(scope).pop(_GONE, False):
                status = 499  # nginx's "client closed request": no answer was owed, none is a 500
            seconds = time.perf_counter() - started
            self.metrics.request(path, scope["method"], status, seconds)
            if path not in _PROBES and _log.isEnabledFor(logging.INFO):
                self._log(scope, path, status, size, seconds)

    def _log(self, scope: Scope, path: str, status: int, size: int, seconds: float) -> None:
        client = scope.get("client")
        fields: dict[str, Any] = {
            "ts": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "event": "request",
            "method": scope["method"],
            "path": route_label(path),
            "status": status,
            "ms": round(seconds * 1000, 1),
            "bytes": size,
            "client": client[0] if client else None,
        }
        info = scope.get(_INFO) or {}
        query = info.pop("query", None)
        fields.update(info)
        if self.log_queries and query is not None:
            fields["query"] = query
        _log.info("request", extra={"fields": fields})
