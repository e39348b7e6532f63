"""The state store: the one seam the cache, single-flight, provider health, pacing and the
server's rate limits sit on, so they work the same in one process (memory), across the
processes of one machine (SQLite) and across machines (Redis).

Keys are plain strings (the engine namespaces them: `cache:`, `flight:`, `health:`, `pace:`,
`stats:`); values are bytes; every entry has a TTL in seconds. A backend raises only
`StoreUnavailable` (unreachable, locked, full, corrupt, read-only: whatever its cause), so the
engine can fall back to in-process state and say so, never failing a search. No secret is ever
written here: the engine stores rendered responses and fingerprints, never keys.

A search bounds its store calls (`DEADLINE`, a `StoreWait` the engine sets for the search): a shared
store that is busy rather than down (a burst queued on SQLite's writer thread or on Redis's pooled
connections) held searches given 1 s for up to 1.2-1.4 s (SQLite) and 2.4-3.2 s (Redis) in a burst
of 500 in one process, and one that hung (a Redis that accepts connections and never answers, a
file another process holds locked) took a search given 4 s 5-9 s, each call waiting its share of
what was left. A call may wait half of what is left of the deadline and no more than what is left
of the search's total wait on the store (`state.max_wait`, 250 ms); past that it raises
`StoreDeadline`: that call and the rest of the search use in-process state (the engine says so
once), the store is not taken for down, and the providers have the time. Work that is to outlive
the search (writing its answer to the cache, the hit counts) runs in `unbounded()` context.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Final, Protocol

from ..errors import StoreUnavailable

if TYPE_CHECKING:
    from .._core._budget import Budget

__all__ = [
    "DEADLINE",
    "MAX_WAIT",
    "READ_SHARE",
    "WRITE_SHARE",
    "Store",
    "StoreDeadline",
    "StoreUnavailable",
    "StoreWait",
    "allowed_wait",
    "unbounded",
]

#: Of what is left of a search's deadline, the most one store call may wait: half, a read's as a
#: write's (a lease, a health record, a pacing slot), so the providers have the rest.
READ_SHARE: Final = 0.5
WRITE_SHARE: Final = 0.5
#: Seconds a search waits for a shared store in all (setting `state.max_wait`): a store that hung
#: costs a search this once, not a share of its deadline per call.
MAX_WAIT: Final = 0.25


class StoreWait:
    """One search's bound on its store calls: its `budget` (the search's own deadline) and what
    is left of its total wait on the store. `cut`: a call came too late, and the rest of the search
    goes without the store. Mutable, one per search, shared by the tasks it starts (a lease's
    renewals)."""

    __slots__ = ("budget", "cut", "left")

    def __init__(self, budget: Budget, left: float = MAX_WAIT) -> None:
        self.budget = budget
        self.left = left
        self.cut = False

    def allowed(self, share: float) -> float:
        """Seconds the next call may wait: `share` of what is left of the deadline, and no more
        than what is left of the total wait."""
        remaining = self.budget.remaining()
        return max(0.0, self.left if remaining is None else min(remaining * share, self.left))

    def spend(self, seconds: float) -> None:
        self.left = max(0.0, self.left - seconds)


#: The budget of the search whose store calls run in this context, if any.
DEADLINE: Final[contextvars.ContextVar[StoreWait | None]] = contextvars.ContextVar(
    "websearch_store_deadline", default=None
)


def allowed_wait(share: float) -> float | None:
    """Seconds a store call may wait for its search (None: it is no search's): its `share` of what
    is left of the deadline (READ_SHARE, WRITE_SHARE), within what is left of its total wait."""
    budget = DEADLINE.get()
    return None if budget is None else budget.allowed(share)


def unbounded() -> contextvars.Context:
    """A copy of this context without a search's deadline, for a task that is to outlive it."""
    context = contextvars.copy_context()
    context.run(DEADLINE.set, None)
    return context


class StoreDeadline(StoreUnavailable):
    """The call would have waited past its search's deadline: the store is busy, perhaps, not
    down. The call falls back to in-process state; the store stays in use for the next."""

    def __init__(self) -> None:
        super().__init__("the search's deadline came first")


class Store(Protocol):
    """Small and atomic: get/set with a TTL, counters, token buckets, short leases.

    `kind` is "memory", "sqlite" or "redis". Every method may raise `StoreUnavailable`. A key
    belongs to one family (values, counters, buckets, leases): mixing them on one key is
    undefined. `get` reads a counter as its decimal digits and a lease as its owner, never a
    bucket. A TTL, rate or burst that is not positive is a caller's bug: ValueError.
    """

    kind: str

    async def get(self, key: str) -> bytes | None:
        """The value, or None when absent or expired."""
        ...

    async def set(self, key: str, value: bytes, ttl: float, *, tag: str | None = None) -> None:
        """Store `value` for `ttl` seconds (ttl > 0). `tag` groups entries for `clear` (the
        cache tags an entry with the provider that served it)."""
        ...

    async def delete(self, key: str) -> None:
        """Remove one key (absent is fine)."""
        ...

    async def clear(self, prefix: str, *, tag: str | None = None) -> int:
        """Remove every key starting with `prefix` (and carrying `tag`, when given); the count."""
        ...

    async def incr(self, key: str, ttl: float, amount: int = 1) -> int:
        """Add `amount` to a counter (created at 0, living `ttl` seconds from its creation) and
        return the new value, atomically across processes."""
        ...

    async def take(self, key: str, rate: float, burst: float) -> float:
        """A token bucket of `rate` tokens per second holding at most `burst`: take one token.
        Returns 0 when one was available, else the seconds until the reserved one is: the token
        is taken either way (the bucket goes into debt), so callers that wait that long queue in
        order, across processes. A caller that decides not to wait calls `untake`."""
        ...

    async def untake(self, key: str, rate: float, burst: float) -> None:
        """Give back a token taken by `take` (a caller that did not wait for its slot)."""
        ...

    async def try_lease(self, key: str, owner: str, ttl: float) -> bool:
        """Take the lease `key` for `owner` for `ttl` seconds unless someone else holds it (its
        holder may take it again: that renews it for `ttl`)."""
        ...

    async def release(self, key: str, owner: str) -> None:
        """Drop the lease if `owner` still holds it."""
        ...

    async def set_and_release(
        self, key: str, value: bytes, ttl: float, *, tag: str | None, lease: str, owner: str
    ) -> None:
        """`set`, then `release(lease, owner)`: a flight's last step (its answer cached before
        its lease goes), in one write where the backend can make it one."""
        ...

    async def usage(self, prefix: str) -> tuple[int, int]:
        """(entries, bytes of their values) of the live keys starting with `prefix` (a counter's
        value is its digits, a lease's its owner, a bucket's nothing)."""
        ...

    async def ping(self) -> None:
        """Return when the store answers; raise StoreUnavailable otherwise."""
        ...

    async def aclose(self) -> None:
        """Release connections and files (the store may be used again afterwards)."""
        ...
