"""The state store: which backend a client gets, and the wrapper that never lets it fail a search.

`open_store` reads `[state]`: an explicit `backend` ("memory", "sqlite", "redis") wins; else a
Redis URL (`state.url`, env `WEBSEARCH_REDIS_URL`) means Redis; else the SQLite file at
`state.path` or in the user cache directory, its values bounded by `cache.max_mb`. Redis's
client loads only when configured (it costs an import), and a missing `redis` package makes a
store that is unavailable (the engine degrades, with its notice) rather than a failed search.

`ResilientStore` serves from process memory while the primary is unavailable, remembers why for
the engine's one notice, and tries the primary again every few seconds (monotonic time), so
shared state resumes when Redis or the file comes back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import suppress
from pathlib import Path
from typing import Final, TypeVar

from .._core._clock import Clock
from .._core._settings import Settings
from ..errors import ConfigError
from ._store import DEADLINE, Store, StoreDeadline, StoreUnavailable
from ._tally import Tally
from .memory import MemoryStore
from .sqlite import SqliteStore, default_path

__all__ = [
    "BACKENDS",
    "MemoryStore",
    "ResilientStore",
    "SqliteStore",
    "Store",
    "StoreUnavailable",
    "default_path",
    "open_store",
]

T = TypeVar("T")

BACKENDS: Final = ("memory", "sqlite", "redis")
DEFAULT_MAX_MB: Final = 64.0
RETRY_AFTER: Final = 5.0  # seconds of monotonic time between two tries of an unavailable primary


def open_store(settings: Settings, env: Mapping[str, str], clock: Clock) -> Store:
    """The configured store (not wrapped: the engine wraps it in `ResilientStore`)."""
    backend = settings.get_str("state.backend")
    url = settings.get_str("state.url") or None
    if backend is not None and backend not in BACKENDS:
        raise ConfigError(f"setting state.backend is {backend!r}; use one of: {', '.join(BACKENDS)}")
    max_bytes = int(settings.get_number("cache.max_mb", DEFAULT_MAX_MB) * 1024 * 1024)
    if backend == "memory":
        return MemoryStore(clock, max_bytes=max_bytes)
    if backend == "redis" or (backend is None and url):
        if not url:
            raise ConfigError("setting state.backend is redis, but no state.url (or WEBSEARCH_REDIS_URL) is set")
        return _redis(url, settings.get_bool("state.redis_local_copy", True), settings.source("state.url"))
    path = settings.get_str("state.path")
    return SqliteStore(Path(path).expanduser() if path else default_path(env), clock, max_bytes)


def _redis(url: str, local_copy: bool, source: str) -> Store:
    try:
        from .redis import RedisStore
    except ImportError:
        return Unavailable("redis", "the redis package is not installed (pip install 'websearch-hub[redis]')")
    try:
        return RedisStore(url, local_copy=local_copy)
    except ValueError:
        # Not redis-py's words: they can quote part of the URL, a password with a `/` or `#` in
        # it read as the port ("Port could not be cast to integer value as 'Tr0ub4dor'").
        raise ConfigError(
            f"{source} is not a Redis URL: it must read redis://[[user]:password@]host[:port][/db] (or rediss://,"
            " unix://), with any / # ? @ in the password %-encoded"
        ) from None


class Unavailable:
    """A store that cannot work at all (its client library is missing): every call says why."""

    def __init__(self, kind: str, reason: str) -> None:
        self.kind = kind
        self.reason = reason

    async def get(self, key: str) -> bytes | None:
        raise StoreUnavailable(self.reason)

    async def set(self, key: str, value: bytes, ttl: float, *, tag: str | None = None) -> None:
        raise StoreUnavailable(self.reason)

    async def delete(self, key: str) -> None:
        raise StoreUnavailable(self.reason)

    async def clear(self, prefix: str, *, tag: str | None = None) -> int:
        raise StoreUnavailable(self.reason)

    async def incr(self, key: str, ttl: float, amount: int = 1) -> int:
        raise StoreUnavailable(self.reason)

    async def take(self, key: str, rate: float, burst: float) -> float:
        raise StoreUnavailable(self.reason)

    async def untake(self, key: str, rate: float, burst: float) -> None:
        raise StoreUnavailable(self.reason)

    async def try_lease(self, key: str, owner: str, ttl: float) -> bool:
        raise StoreUnavailable(self.reason)

    async def release(self, key: str, owner: str) -> None:
        raise StoreUnavailable(self.reason)

    async def set_and_release(
        self, key: str, value: bytes, ttl: float, *, tag: str | None, lease: str, owner: str
    ) -> None:
        raise StoreUnavailable(self.reason)

    async def usage(self, prefix: str) -> tuple[int, int]:
        raise StoreUnavailable(self.reason)

    async def ping(self) -> None:
        raise StoreUnavailable(self.reason)

    async def aclose(self) -> None:
        return None


class ResilientStore:
    """`primary`, or process memory while it is unavailable; never raises StoreUnavailable.

    State written during an outage stays in memory and is not copied back: a cache entry or a
    counter lost at the switch costs one extra request, never a wrong answer. Each search's calls
    spend its store budget (`StoreWait`: the time they waited, in all); a call cut by it
    (`StoreDeadline`: the store busy, or hung) uses memory, and so does every later call of the
    same search (`StoreWait.cut`, which the engine's notice reads): a hung store cost each of them
    its share of what was left, until no time remained to ask a provider.
    """

    def __init__(self, primary: Store, clock: Clock, *, retry_after: float = RETRY_AFTER) -> None:
        self.primary = primary
        self.kind = primary.kind
        self.fallback = MemoryStore(clock, max_bytes=int(DEFAULT_MAX_MB * 1024 * 1024))
        self._clock = clock
        self._retry_after = retry_after
        self._degraded: str | None = None
        self._retry_at = 0.0
        #: Closed: what still runs (a flight's cache write left to finish) uses memory, rather
        #: than open the primary's connections again with nobody left to close them.
        self._closed = False
        # An in-process primary never fails: its reads and writes go straight to it.
        self._direct = primary if isinstance(primary, MemoryStore) else None
        #: The cache's hit and miss counts, written to this store off the searches' paths.
        self.tally = Tally(self, clock)

    def __repr__(self) -> str:
        return f"ResilientStore({self.primary!r}, degraded={self._degraded!r})"

    @property
    def direct(self) -> MemoryStore | None:
        """The primary when it is in process (it never fails, and its writes need no await)."""
        return self._direct

    @property
    def degraded(self) -> str | None:
        """Why the primary is not in use now (its StoreUnavailable reason), or None."""
        return self._degraded

    async def get(self, key: str) -> bytes | None:
        if self._direct is not None:
            return await self._direct.get(key)
        budget = DEADLINE.get()
        if self._degraded is None and not self._closed and (budget is None or not budget.cut):  # the common case
            started = self._clock.monotonic()
            try:
                return await self.primary.get(key)
            except StoreDeadline:
                if budget is not None:
                    budget.cut = True
                return await self.fallback.get(key)
            except StoreUnavailable as exc:
                self._fail(exc)
            finally:
                if budget is not None:
                    budget.spend(self._clock.monotonic() - started)
        return await self._do(lambda s: s.get(key))

    async def set(self, key: str, value: bytes, ttl: float, *, tag: str | None = None) -> None:
        if self._direct is not None:
            return await self._direct.set(key, value, ttl, tag=tag)
        await self._do(lambda s: s.set(key, value, ttl, tag=tag))

    async def delete(self, key: str) -> None:
        await self._do(lambda s: s.delete(key), both=True)

    async def clear(self, prefix: str, *, tag: str | None = None) -> int:
        return await self._do(lambda s: s.clear(prefix, tag=tag), both=True)

    async def incr(self, key: str, ttl: float, amount: int = 1) -> int:
        return await self._do(lambda s: s.incr(key, ttl, amount))

    async def take(self, key: str, rate: float, burst: float) -> float:
        return await self._do(lambda s: s.take(key, rate, burst))

    async def untake(self, key: str, rate: float, burst: float) -> None:
        await self._do(lambda s: s.untake(key, rate, burst))

    async def try_lease(self, key: str, owner: str, ttl: float) -> bool:
        return await self._do(lambda s: s.try_lease(key, owner, ttl))

    async def release(self, key: str, owner: str) -> None:
        await self._do(lambda s: s.release(key, owner), both=True)

    async def set_and_release(
        self, key: str, value: bytes, ttl: float, *, tag: str | None, lease: str, owner: str
    ) -> None:
        """One write on the primary; the release is made in memory too, as `release`'s."""
        if self._direct is not None:
            return await self._direct.set_and_release(key, value, ttl, tag=tag, lease=lease, owner=owner)
        await self.fallback.release(lease, owner)
        await self._do(lambda s: s.set_and_release(key, value, ttl, tag=tag, lease=lease, owner=owner))

    async def usage(self, prefix: str) -> tuple[int, int]:
        return await self._do(lambda s: s.usage(prefix))

    async def ping(self) -> None:
        await self._do(lambda s: s.ping())

    async def aclose(self) -> None:
        self._closed = True
        with suppress(StoreUnavailable):
            await self.primary.aclose()
        await self.fallback.aclose()

    async def _do(self, op: Callable[[Store], Awaitable[T]], *, both: bool = False) -> T:
        """`op` on the primary, or on memory while the primary is out (until the next try).
        `both`: on memory too, for removals, so nothing written during an outage outlives a
        delete, a clear or a release made after it (the primary's answer is the one returned)."""
        if self._closed or (self._degraded is not None and self._clock.monotonic() < self._retry_at):
            return await op(self.fallback)
        budget = DEADLINE.get()
        if budget is not None and budget.cut:  # this search found it too slow already
            return await op(self.fallback)
        local = [await op(self.fallback)] if both else []
        started = self._clock.monotonic()
        try:
            result = await op(self.primary)
        except StoreDeadline:  # busy, not down: this search goes without it
            if budget is not None:
                budget.cut = True
            return local[0] if local else await op(self.fallback)
        except StoreUnavailable as exc:
            self._fail(exc)
            return local[0] if local else await op(self.fallback)
        finally:
            if budget is not None:
                budget.spend(self._clock.monotonic() - started)
        self._degraded = None
        return result

    def _fail(self, exc: StoreUnavailable) -> None:
        """The primary is out: memory until `retry_after` has passed."""
        self._degraded = exc.reason
        self._retry_at = self._clock.monotonic() + self._retry_after
