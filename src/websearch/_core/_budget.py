"""A search's time as one value: `Budget`.

The engine makes one per search (or fetch) from its deadline and passes it down as an argument:
to the single-flight, the guards, pacing and each attempt. A provider reads the budget of its
attempt from its context (`ctx.budget`), which the walk builds per attempt and never changes:
nothing writes a deadline onto a context a search shares. An attempt's own timeout
(`providers.webSearchTimeoutSeconds`, `[timeout]`) is no second deadline: its budget is the
search's, `capped` to end no later than the timeout allows. A fan-out's attempts carry a budget
with a soft end too (`soft_ends`: an engine that pages serves the pages it has when it comes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from ._clock import Clock

__all__ = ["NO_DEADLINE", "Budget"]


class Budget:
    """When a search must be over (`ends`, on `clock.monotonic()`; None: never) and, in a
    fan-out, when its pages stop (`soft_ends`). Immutable: a narrower one is a new value."""

    __slots__ = ("clock", "ends", "soft_ends")

    def __init__(self, clock: Clock | None, ends: float | None, soft_ends: float | None = None) -> None:
        self.clock = clock
        self.ends = ends
        self.soft_ends = soft_ends

    @classmethod
    def start(cls, clock: Clock, seconds: float | None) -> Budget:
        """A budget of `seconds` from now (None: no deadline)."""
        return cls(clock, None if seconds is None else clock.monotonic() + seconds, None)

    def remaining(self) -> float | None:
        """Seconds left until `ends` (negative once passed), or None without a deadline."""
        if self.ends is None or self.clock is None:
            return None
        return self.ends - self.clock.monotonic()

    def passed(self) -> bool:
        """Whether the deadline has come."""
        left = self.remaining()
        return left is not None and left <= 0

    def capped(self, clock: Clock, seconds: float) -> Budget:
        """This budget ending `seconds` from now at the latest (one attempt's own timeout): itself
        when it ends first, else a new one ending then (its soft end kept)."""
        ends = clock.monotonic() + seconds
        if self.ends is not None and self.ends <= ends:
            return self
        return Budget(clock, ends, self.soft_ends)

    def with_soft_end(self, soft_ends: float) -> Budget:
        """The same budget with a soft end at `soft_ends` (a fan-out's attempts)."""
        return Budget(self.clock, self.ends, soft_ends)

    def __repr__(self) -> str:
        return f"Budget(ends={self.ends!r}, soft_ends={self.soft_ends!r})"


#: The budget of a context no search runs under (an availability check, a test's context).
NO_DEADLINE: Final = Budget(None, None)
