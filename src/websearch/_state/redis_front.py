"""A copy of Redis's cache entries in this process, kept true by Redis's own invalidations.

A cache hit on Redis costs a round trip (a few hundred microseconds); a hit on this copy, a
dict lookup. What keeps the copy true is Redis's client-side caching protocol: one RESP3
connection of its own turns on `CLIENT TRACKING ON BCAST PREFIX <prefix>cache:`, and from then
on Redis pushes to it the name of every cache key anyone changes, removes or lets expire (a
flush says "all"). The copy is used only while that connection is up; when it fails (or a ping
goes unanswered, sent after a second without news) the copy is emptied and left unused until
the connection is made again (Redis 6 or later; on an older one the copy is never used).

Invalidations are named by key, not by who wrote: this process's own writes are named too.
A named key is dropped at once and read again in the background; when Redis still holds the
bytes the copy held, the entry comes back (that was our own write), else it stays out. A read
or a write puts an entry in only if no invalidation of its key arrived while it was on its
way, so an answer overtaken by a change is never kept. Entries also end at their Redis TTL.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any, Final

from redis import exceptions as rx

from .._core._lru import BoundedLRU

__all__ = ["Front"]

PING_EVERY: Final = 1.0  # seconds without news after which the tracking connection is pinged
#: Seconds the ping's answer may take. Shorter than the store's answer timeout: a copy that
#: misses invalidations must go out of use soon, and one taken out of use by a slow answer
#: costs only round trips until the connection is made again.
PING_ANSWER: Final = 0.5
RETRY_EVERY: Final = 5.0  # seconds before the connections are made again after a failure
NAME: Final = "websearch-local-copy"  # the tracking connection, as `CLIENT LIST` shows it
MAX_ENTRIES: Final = 4096
MAX_BYTES: Final = 32 * 1024 * 1024
_CANCELS: Final = 40  # tries at ending the background tasks on close...
_CANCEL_WAIT: Final = 0.05  # ...seconds apart: two seconds at most, then they are left to the loop


class Front:
    """The copy of one event loop's Redis client. `make_connection` makes a RESP3 connection
    like the pool's; `read` reads a key's value back (for the background re-check)."""

    def __init__(
        self,
        make_connection: Callable[[], Any],
        prefix: str,
        read: Callable[[str], Awaitable[bytes | None]],
    ) -> None:
        self._make = make_connection
        self._prefix = prefix  # the tracked prefix, `<store prefix>cache:`
        self._read = read
        # key -> (value, when it expires on the monotonic clock)
        self._items: BoundedLRU[str, tuple[bytes, float]] = BoundedLRU(MAX_ENTRIES, MAX_BYTES, _value_size)
        self._up = False
        self._changes: dict[str, int] = {}  # invalidations per key with an operation on its way
        self._busy: dict[str, int] = {}  # keys with an operation on their way, and how many
        self._checks: set[asyncio.Task[None]] = set()
        self._closing = False
        self._task: asyncio.Task[None] | None = asyncio.get_running_loop().create_task(self._keep())

    @property
    def up(self) -> bool:
        """Whether the copy is in use (both connections up)."""
        return self._up

    def get(self, key: str) -> bytes | None:
        """The copy's value of `key`, when it has a live one."""
        if not self._up:
            return None
        item = self._items.get(key)
        if item is None:
            return None
        if item[1] <= time.monotonic():
            self._items.pop(key)
            return None
        return item[0]

    def begin(self, key: str) -> int:
        """Mark an operation on `key` as on its way; the token to give `end`."""
        self._busy[key] = self._busy.get(key, 0) + 1
        return self._changes.get(key, 0)

    def end(self, key: str, token: int, value: bytes | None, ttl: float | None, *, recheck: bool = True) -> None:
        """The operation is back with `value` (None: absent) and its TTL in seconds: kept when
        no invalidation of `key` arrived meanwhile; when one did (our own write's, often), Redis
        is asked again in the background, once."""
        changed = self._changes.get(key, 0) != token
        left = self._busy[key] - 1
        if left:
            self._busy[key] = left
        else:
            del self._busy[key]
            self._changes.pop(key, None)
        if not self._up or value is None or ttl is None or ttl <= 0:
            return
        if not changed:
            self._items.put(key, (value, time.monotonic() + ttl))
        elif recheck:
            self._recheck_soon(key, value, time.monotonic() + ttl)

    def forget(self, key: str) -> None:
        """Drop `key` (this process removed it)."""
        self._items.pop(key)

    def forget_all(self) -> None:
        """Drop every entry (this process is clearing the cache)."""
        self._clear()

    async def aclose(self) -> None:
        """Stop the tracking connection and the re-checks. A cancellation can be lost in a
        redis-py write (`_ending`), so each task is cancelled again until it ends; the flag
        ends the tracking loop at its next turn anyway."""
        self._closing = True
        task, self._task = self._task, None
        running = [t for t in (task, *self._checks) if t is not None]
        for _ in range(_CANCELS):
            if not running:
                break
            for t in running:
                t.cancel()
            _, pending = await asyncio.wait(running, timeout=_CANCEL_WAIT)
            running = list(pending)
        self._clear()

    # -- the connections ---------------------------------------------------------------------

    async def _keep(self) -> None:
        while True:
            if self._ending():  # before each connection and each wait for the next one
                raise asyncio.CancelledError
            connection = None
            try:
                connection = self._make()
                await connection.connect()
                # RESP3: the invalidations come on this connection, as pushes, to this handler.
                connection._parser.set_invalidation_push_handler(self._pushed)
                for command in (
                    ("CLIENT", "SETNAME", NAME),
                    ("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", self._prefix),
                ):
                    await connection.send_command(*command)
                    if await connection.read_response() not in (b"OK", "OK"):
                        raise rx.ResponseError(f"{command[1]} refused")
                self._up = True
                await self._listen(connection)
            except asyncio.CancelledError:
                raise
            except (rx.ResponseError, AttributeError, TypeError):
                return  # a Redis before 6 (no RESP3, no tracking) or an older redis-py: never a copy
            except (rx.RedisError, OSError, ValueError):
                pass  # unavailable: the store's own calls say so; the copy waits and tries again
            finally:
                self._up = False
                self._clear()
                if connection is not None:
                    with suppress(Exception):
                        await connection.disconnect(nowait=True)
            if not self._ending():
                await asyncio.sleep(RETRY_EVERY)

    async def _listen(self, connection: Any) -> None:
        """Take invalidations as they come; ping when none came for a second (a connection
        that died quietly must not leave the copy in use: the ping's answer, not coming within
        the store's timeout, fails the connection). redis-py answers a read that timed out
        with None, where a push comes back as `_pushed`'s True."""
        while True:
            if self._ending():
                raise asyncio.CancelledError
            try:
                news = await connection.read_response(push_request=True, timeout=PING_EVERY, disconnect_on_error=False)
            except rx.TimeoutError:  # how a redis-py that raises on its read timeout says the same
                news = None
            if news is None:
                await connection.send_command("PING")
                if await connection.read_response(timeout=PING_ANSWER) is None:  # its timeout passed
                    raise rx.TimeoutError("no answer to a ping")

    def _ending(self) -> bool:
        """Closing, or cancelled. redis-py writes a command under `asyncio.wait_for`, which on
        Python 3.11 drops a cancellation that comes as the write ends (seen: `asyncio.run`'s
        cancel at its end, lost in the `CLIENT TRACKING` handshake, left this task listening
        and `asyncio.run` waiting for it forever); the request still counts in `cancelling()`."""
        task = asyncio.current_task()
        return self._closing or (task is not None and task.cancelling() > 0)

    async def _pushed(self, message: Any) -> bool:
        if isinstance(message, list) and len(message) == 2:
            self._invalidated(message[1])
        return True  # news, for `_listen`

    def _invalidated(self, keys: Any) -> None:
        if keys is None:  # a flush: everything
            self._clear()
            return
        for raw in keys:
            key = raw.decode() if isinstance(raw, bytes) else str(raw)
            if key in self._busy:
                self._changes[key] = self._changes.get(key, 0) + 1
            item = self._items.pop(key)
            if item is not None:
                self._recheck_soon(key, *item)

    def _recheck_soon(self, key: str, value: bytes, expires: float) -> None:
        check = asyncio.get_running_loop().create_task(self._recheck(key, value, expires))
        self._checks.add(check)
        check.add_done_callback(self._checks.discard)

    async def _recheck(self, key: str, value: bytes, expires: float) -> None:
        """Put `key` back when Redis still holds the bytes the copy held (our own write)."""
        token = self.begin(key)
        current: bytes | None = None
        try:
            current = await self._read(key)
        except Exception:  # Redis unavailable: the entry stays out
            current = None
        self.end(key, token, value if current == value else None, expires - time.monotonic(), recheck=False)

    # -- the entries -------------------------------------------------------------------------

    def _clear(self) -> None:
        """Empty the copy; an operation on its way now brings back nothing to keep."""
        self._items.clear()
        for key in self._busy:
            self._changes[key] = self._changes.get(key, 0) + 1


def _value_size(key: str, item: tuple[bytes, float]) -> int:
    return len(item[0])


def seconds(pttl: Any) -> float | None:
    """A PTTL answer as seconds (None: no expiry or no key)."""
    try:
        ms = int(pttl)
    except (TypeError, ValueError):
        return None
    return ms / 1000 if ms > 0 else None
