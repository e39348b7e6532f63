"""The in-process store: one client's state in a dict, for `[state] backend = "memory"` and as
the fallback when the shared store is down.

Every method runs to completion without awaiting, so each is atomic on the event loop; a lock
makes them safe across threads too (the blocking API runs a loop in its own thread). TTLs are
read on the injected clock's wall time, so tests move expiry with a fake clock. Expired entries
are dropped when read, and on each write the ones whose time has come (a heap of expiry times,
so a write never scans the whole store); with `max_bytes`, values beyond it are evicted oldest
first, expired first. The token-bucket arithmetic here is shared with SQLite.
"""

from __future__ import annotations

import heapq
import math
import threading
import weakref
from dataclasses import dataclass
from typing import Final

from .._core._clock import Clock, wall_seconds
from .._core._fork import in_child

__all__ = ["MemoryStore", "bucket_step", "check_bucket", "check_ttl"]

_LOW_WATER: Final = 0.9  # eviction frees down to this share of max_bytes, so it runs rarely

VALUE, COUNTER, BUCKET, LEASE = 0, 1, 2, 3  # what a key holds; `get` sees all but buckets


def check_ttl(ttl: float) -> None:
    """The contract says ttl > 0; a zero, negative or NaN TTL is a caller's bug, said at once."""
    if not ttl > 0:
        raise ValueError(f"ttl must be a positive number of seconds; got {ttl!r}")


def check_bucket(rate: float, burst: float) -> None:
    if not (0 < rate < math.inf and 0 < burst < math.inf):
        raise ValueError(f"a token bucket needs a positive rate and burst; got rate={rate!r}, burst={burst!r}")


def bucket_step(
    state: tuple[float, float] | None, now: float, rate: float, burst: float, delta: float
) -> tuple[float, float, float]:
    """One take (`delta` -1) or untake (+1) on a bucket last at `state` (tokens, at time).

    Returns (tokens, wait, ttl): the new level (negative is debt), the seconds until the taken
    token is due (0 when it was there) and how long the bucket must live: until it is full again,
    when an absent bucket means the same. A clock that stepped back refills nothing.
    """
    tokens = burst if state is None else min(burst, state[0] + max(0.0, now - state[1]) * rate)
    tokens = min(burst, tokens + delta)
    wait = 0.0 if tokens >= 0 else -tokens / rate
    return tokens, wait, (burst - tokens) / rate + 1.0


@dataclass(slots=True)
class _Entry:
    kind: int
    value: bytes
    expires: float
    tag: str | None = None
    stamp: float = 0.0  # a bucket's last update; its level is `tokens`
    tokens: float = 0.0


class MemoryStore:
    """Per-client state in memory (lost at exit, never shared). A child made by `fork` keeps a
    copy of the values, and a lock of its own (`_forked`)."""

    kind: str = "memory"

    def __init__(self, clock: Clock, *, max_bytes: int | None = None) -> None:
        self._clock = clock
        self._max_bytes = max_bytes
        self._entries: dict[str, _Entry] = {}  # insertion order is write order: oldest first
        self._bytes = 0
        self._expiries: list[tuple[float, str]] = []  # (expires, key) for every write; stale ones are skipped
        self._lock = threading.Lock()
        _STORES.add(self)

    def __repr__(self) -> str:
        return f"MemoryStore({len(self._entries)} entries)"

    # -- the Store methods -----------------------------------------------------------------------

    async def get(self, key: str) -> bytes | None:
        return self.read(key)

    def read(self, key: str) -> bytes | None:
        """`get`, for a caller outside a coroutine (the engine's cache lookup, which would
        otherwise pay for two coroutines to read a dict)."""
        with self._lock:
            entry = self._live(key, self._now())
            return None if entry is None or entry.kind == BUCKET else entry.value

    async def set(self, key: str, value: bytes, ttl: float, *, tag: str | None = None) -> None:
        self.put(key, value, ttl, tag=tag)

    def put(self, key: str, value: bytes, ttl: float, *, tag: str | None = None) -> None:
        """`set`, for a caller outside a coroutine (the engine's write behind an answer)."""
        check_ttl(ttl)
        with self._lock:
            now = self._now()
            if self._max_bytes is not None and len(value) > self._max_bytes:
                self._pop(key)  # larger than the whole store: not kept (nor is an older value)
                return
            self._put(key, _Entry(VALUE, bytes(value), now + ttl, tag))
            self._wrote(now)

    async def delete(self, key: str) -> None:
        with self._lock:
            self._pop(key)

    async def clear(self, prefix: str, *, tag: str | None = None) -> int:
        with self._lock:
            now = self._now()
            count = 0
            for key in [k for k in self._entries if k.startswith(prefix)]:
                entry = self._entries[key]
                if entry.expires <= now:
                    self._pop(key)
                elif tag is None or entry.tag == tag:
                    self._pop(key)
                    count += 1
            return count

    async def incr(self, key: str, ttl: float, amount: int = 1) -> int:
        check_ttl(ttl)
        with self._lock:
            now = self._now()
            entry = self._live(key, now)
            if entry is not None and entry.kind == COUNTER:
                value = int(entry.value) + amount
                self._replace(entry, str(value).encode())
                return value
            self._put(key, _Entry(COUNTER, str(amount).encode(), now + ttl))
            self._wrote(now)
            return amount

    async def take(self, key: str, rate: float, burst: float) -> float:
        return self._bucket(key, rate, burst, -1.0)

    async def untake(self, key: str, rate: float, burst: float) -> None:
        self._bucket(key, rate, burst, 1.0)

    async def try_lease(self, key: str, owner: str, ttl: float) -> bool:
        check_ttl(ttl)
        with self._lock:
            now = self._now()
            entry = self._live(key, now)
            held = owner.encode()
            if entry is not None and entry.value != held:
                return False
            self._put(key, _Entry(LEASE, held, now + ttl))
            self._wrote(now)
            return True

    async def release(self, key: str, owner: str) -> None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.kind == LEASE and entry.value == owner.encode():
                self._pop(key)

    async def set_and_release(
        self, key: str, value: bytes, ttl: float, *, tag: str | None, lease: str, owner: str
    ) -> None:
        self.put(key, value, ttl, tag=tag)
        await self.release(lease, owner)

    async def usage(self, prefix: str) -> tuple[int, int]:
        with self._lock:
            now = self._now()
            live = [e for k, e in self._entries.items() if k.startswith(prefix) and e.expires > now]
            return len(live), sum(len(e.value) for e in live)

    async def ping(self) -> None:
        return None

    async def aclose(self) -> None:
        return None  # nothing to release; the entries stay for the next use

    # -- plumbing --------------------------------------------------------------------------------

    def _now(self) -> float:
        return wall_seconds(self._clock)

    def _bucket(self, key: str, rate: float, burst: float, delta: float) -> float:
        check_bucket(rate, burst)
        with self._lock:
            now = self._now()
            entry = self._live(key, now)
            state = (entry.tokens, entry.stamp) if entry is not None and entry.kind == BUCKET else None
            if state is None and delta > 0:
                return 0.0  # nothing taken (or it refilled and expired): already full
            tokens, wait, ttl = bucket_step(state, now, rate, burst, delta)
            if tokens >= burst:
                self._pop(key)  # full: the same as absent
            elif entry is not None and state is not None:
                entry.tokens, entry.stamp, entry.expires = tokens, now, now + ttl
                heapq.heappush(self._expiries, (entry.expires, key))
                self._wrote(now)
            else:
                self._put(key, _Entry(BUCKET, b"", now + ttl, stamp=now, tokens=tokens))
                self._wrote(now)
            return wait

    def _live(self, key: str, now: float) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is not None and entry.expires <= now:
            self._pop(key)
            return None
        return entry

    def _put(self, key: str, entry: _Entry) -> None:
        self._pop(key)  # re-inserted at the end: the dict stays in write order
        self._entries[key] = entry
        self._bytes += len(entry.value)
        heapq.heappush(self._expiries, (entry.expires, key))

    def _replace(self, entry: _Entry, value: bytes) -> None:
        self._bytes += len(value) - len(entry.value)
        entry.value = value

    def _pop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= len(entry.value)

    def _wrote(self, now: float) -> None:
        """After a new entry: drop the entries whose time has come, and keep under max_bytes."""
        expiries, entries = self._expiries, self._entries
        while expiries and expiries[0][0] <= now:
            _, key = heapq.heappop(expiries)
            entry = entries.get(key)
            if entry is not None and entry.expires <= now:  # else rewritten since, or a bucket moved on
                self._pop(key)
        if len(expiries) > 2 * len(entries) + 64:  # mostly rewrites: rebuild from the live entries
            self._expiries = [(e.expires, k) for k, e in entries.items()]
            heapq.heapify(self._expiries)
        if self._max_bytes is not None and self._bytes > self._max_bytes:
            newest = next(reversed(self._entries))
            target = self._max_bytes * _LOW_WATER
            for key in [k for k, e in self._entries.items() if e.kind == VALUE and k != newest]:
                if self._bytes <= target:
                    break
                self._pop(key)


#: Every store of this process, for a child made by `fork`: a store given to a client is the
#: child's too, and its lock may have been held by another of the parent's threads (the sync
#: `search`'s loop) at the fork, which would never release it there.
_STORES: Final[weakref.WeakSet[MemoryStore]] = weakref.WeakSet()


def _forked() -> None:
    for store in list(_STORES):
        store._lock = threading.Lock()


in_child(_forked)
