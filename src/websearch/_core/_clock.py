"""The clock seam: wall time, monotonic time and sleeping, injected so tests control time."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Protocol

__all__ = ["Clock", "SystemClock", "wall_seconds"]


class Clock(Protocol):
    """What the library asks of time. Recency dates, ages, retries and durations read it."""

    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back, for durations."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait; cancellable."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def wall_seconds(clock: Clock) -> float:
    """`clock.now()` as POSIX seconds; for the system clock, `time.time()` (a fifth of the cost
    of building a datetime, and the stores and the cache read it on every search)."""
    if type(clock) is SystemClock:
        return time.time()
    return clock.now().timestamp()
