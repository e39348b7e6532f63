"""`Lifecycle`: the requests in flight and the drain, shared by the front door (`_logging`), the
signal handlers and the app (`_app`). A leaf, so the front door need not import the app that
mounts it.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Lifecycle"]


@dataclass
class Lifecycle:
    """Requests in flight and whether the server is draining (shared by the front door and
    the signal handlers)."""

    grace_period: float = 30.0
    inflight: int = 0
    draining: bool = False
    _idle: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set, repr=False)
    #: The tasks of the requests in flight, and those the end of the grace period cut.
    _running: set[asyncio.Task[Any]] = field(default_factory=set, repr=False)
    _cut: set[asyncio.Task[Any]] = field(default_factory=set, repr=False)

    def entered(self, task: asyncio.Task[Any] | None = None) -> None:
        """A request came in (on `task`, which the end of the grace period may cut)."""
        self.inflight += 1
        self._idle.clear()
        if task is not None:
            self._running.add(task)

    def left(self, task: asyncio.Task[Any] | None = None) -> None:
        """A request is done."""
        self.inflight -= 1
        self._running.discard(task)
        if self.inflight <= 0:
            self._idle.set()

    def was_cut(self, task: asyncio.Task[Any] | None) -> bool:
        """Whether `task`'s request was cancelled by `cut` (not by its client or the server)."""
        return task in self._cut

    async def cut(self, within: float = 2.0) -> None:
        """Cancel the requests still in flight when the grace period is over: each answers 503
        (the front door's drain answer), not the 500 and traceback of uvicorn cancelling them."""
        self._cut = set(self._running)
        for task in self._cut:
            task.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), within)

    def drain(self) -> None:
        """Stop taking new requests (they get 503); the ones in flight go on."""
        self.draining = True

    async def drained(self) -> bool:
        """Wait until nothing is in flight (True) or the grace period is over (False)."""
        if self.inflight <= 0:
            return True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), self.grace_period)
        return self.inflight <= 0
