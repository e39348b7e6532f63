"""The cache's hit and miss counts, kept on the store: counted in memory, written in one
`incr` a name at most once a second, off every search's path (a hit should cost one store
read, not a read and a write)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final

from .._core._budget import Budget
from ._store import DEADLINE, Store, StoreWait, unbounded

if TYPE_CHECKING:
    from .._core._clock import Clock

__all__ = ["Tally"]

TTL: Final = 30 * 86400.0
EVERY: Final = 1.0  # seconds between two writes of the counts


class Tally:
    """Counts not yet in `store`, and the timer of their next write.

    A timer, not a task waiting out the interval: a loop closed without `aclose` (after
    `run_until_complete`) drops a timer silently, where a pending task is reported as
    destroyed. The counts stay here and go with the next write, on whatever loop."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock
        self._counts: dict[str, int] = {}
        self._writing: asyncio.Task[None] | None = None
        self._due: tuple[asyncio.AbstractEventLoop, asyncio.TimerHandle] | None = None

    def count(self, name: str) -> None:
        """One more of `name` (`stats:hits`, `stats:misses`), written within `EVERY` seconds."""
        self._counts[name] = self._counts.get(name, 0) + 1
        loop = asyncio.get_running_loop()
        if self._due is None or self._due[0] is not loop:
            self._due = (loop, loop.call_later(EVERY, self._write_soon, loop))

    def _write_soon(self, loop: asyncio.AbstractEventLoop) -> None:
        self._due = None
        # Not under the deadline of the search whose context the timer captured.
        self._writing = loop.create_task(self._write(), context=unbounded())

    async def _write(self) -> None:
        while self._counts:
            name, amount = self._counts.popitem()
            try:
                await self._store.incr(name, TTL, amount)
            except BaseException:
                self._counts[name] = self._counts.get(name, 0) + amount  # cancelled: counted next time
                raise

    async def flush(self, within: float | None = None) -> None:
        """Every count so far, written to the store now; `within`: waiting no longer than that
        for the store (the counts it did not take are lost: they are statistics, and a hung
        store must not hold a closing process up)."""
        loop = asyncio.get_running_loop()
        due, self._due = self._due, None
        if due is not None and due[0] is loop:
            due[1].cancel()
        writing = self._writing
        if writing is not None and not writing.done() and writing.get_loop() is loop:
            await asyncio.wait([writing], timeout=within)
        if within is None:
            return await self._write()
        bound = DEADLINE.set(StoreWait(Budget.start(self._clock, 2 * within), within))
        try:
            await self._write()
        finally:
            DEADLINE.reset(bound)
