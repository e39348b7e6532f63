"""Connections: slow clients cannot lock everyone out.

uvicorn puts no time limit on a request that is still arriving (its keep-alive timeout runs only
between requests) and no cap on open connections; asyncio's accept loop, once the process is out
of descriptors, logs every failed accept of a burst (Python 3.11 goes on accepting after EMFILE).
1,100 connections sending half a request each, against the common limit of 1,024 descriptors,
locked every caller out and wrote a million log lines in fifteen seconds.

`GuardedH11Protocol` is uvicorn's h11 protocol with two defences, set per server by the app's
lifespan (`ConnectionLimits` in the lifespan state, so `--workers` processes get theirs too):

- a request deadline: a request's head and body must arrive within `[serve] request_timeout`
  seconds of its first byte (of the connection's opening, for the first request); otherwise the
  caller gets 408 and the connection is closed (an answer already begun is cut);
- a connection cap, `[serve] max_connections`: a new connection beyond it closes the open one
  that has waited longest without a request being served (an idle keep-alive, or a request
  still arriving), so a caller who sends a whole request is served however many are slow; with
  none such, the new connection is answered 503 (`Retry-After: 1`) and closed.

The runner (`_run`) adds the third: asyncio accepts at most `_config.accept_burst()` connections
at once before any protocol runs, and the default cap leaves room for two such bursts and the
provider connections' pool below the descriptor limit: descriptors never run out.

Shed and cut connections are logged as warnings, which `_logging`'s repeat filter thins.
"""

from __future__ import annotations

import asyncio
import logging
import math
import sys
import time
from typing import TYPE_CHECKING, Any, Final

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from ._config import STATE_KEY, ConnectionLimits

if TYPE_CHECKING:
    from uvicorn.config import Config
    from uvicorn.server import ServerState

__all__ = ["GuardedH11Protocol"]

_log = logging.getLogger("websearch.serve.connections")
_WAITING: Final = (h11.IDLE, h11.SEND_BODY)


def _response(status: int, reason: str, message: str, retry: bool = False) -> bytes:
    body = b'{"error":"' + message.encode() + b'"}'
    head = f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
    return (head + ("retry-after: 1\r\n" if retry else "") + "connection: close\r\n\r\n").encode() + body


_BUSY: Final = _response(503, "Service Unavailable", "the server has too many connections; retry", retry=True)
_TOO_SLOW: Final = _response(408, "Request Timeout", "the request did not arrive in time")


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request deadline and a connection cap (see the module)."""

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        limits = app_state.get(STATE_KEY)
        if not isinstance(limits, ConnectionLimits):  # an app without our lifespan: no guard
            limits = ConnectionLimits(request_timeout=math.inf, max_connections=sys.maxsize)
        #: Seconds a request may take to arrive; connections open at once (decided by the lifespan).
        self.request_timeout = limits.request_timeout
        self.max_connections = limits.max_connections if limits.max_connections is not None else sys.maxsize
        self._deadline: asyncio.TimerHandle | None = None
        self._since = time.monotonic()  # when it began to wait (opened, or last answered)
        self._shed = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.max_connections and not self._make_room():
            self._shed = True
            self.transport = transport
            transport.write(_BUSY)
            transport.close()
            _log.warning("connection refused with 503: %d connections open", len(self.connections))
            return
        super().connection_made(transport)
        self._arm()

    def _make_room(self) -> bool:
        """Close the connection that has waited longest without a request being served."""
        oldest: GuardedH11Protocol | None = None
        for other in self.connections:
            if (
                isinstance(other, GuardedH11Protocol)
                and other.waiting()
                and (oldest is None or other._since < oldest._since)
            ):
                oldest = other
        if oldest is None:
            return False
        oldest.close("closed to make room for a new connection")
        return True

    def waiting(self) -> bool:
        """Whether no request is being served: idle, or a request still arriving."""
        return not self.transport.is_closing() and self.conn.our_state is h11.IDLE and self.conn.their_state in _WAITING

    def close(self, why: str, answer: bytes | None = None) -> None:
        """Close the connection (after `answer`, if given), ending a request still arriving."""
        self._disarm()
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True  # the app reads a disconnect; what it sends is dropped
            cycle.message_event.set()
        if answer is not None:
            self.transport.write(answer)
        self.transport.close()
        _log.warning("connection %s", why)

    def data_received(self, data: bytes) -> None:
        if self._shed:
            return
        if self._deadline is None and self.conn.their_state is h11.IDLE:
            self._arm()  # a new request begins on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state not in _WAITING:
            self._disarm()  # all of it arrived (or was refused)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if not self._shed:
            super().connection_lost(exc)

    def on_response_complete(self) -> None:
        self._since = time.monotonic()
        super().on_response_complete()

    def _arm(self) -> None:
        self._since = time.monotonic()
        if self.request_timeout < math.inf:
            self._deadline = self.loop.call_later(self.request_timeout, self._timed_out)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _timed_out(self) -> None:
        self._deadline = None
        if self.transport.is_closing() or self.conn.their_state not in _WAITING:
            return
        answered = self.cycle is not None and self.cycle.response_started
        self.close("closed: the request did not arrive in time", None if answered else _TOO_SLOW)
