"""The shared store across machines: Redis, through redis-py's asyncio client.

Every key lives under `prefix`; every TTL is Redis's own (PX), so expiry needs no clock here.
Atomicity comes from Redis running each command and each Lua script alone: `incr` sets the
counter's expiry when it creates it, `take`/`untake` are a token bucket on Redis's TIME (one
clock for every machine), `try_lease` is set-if-absent-or-mine and `release` compare-and-delete.
Values written by `set` are hashes (`v` the value, `t` the tag), so `clear` can match a tag
exactly while it SCANs the prefix; counters and leases are plain strings, buckets hashes
without `v`.

Timeouts are short (2 s to connect and for an answer; a burst queues for the pooled connections
as long as they keep coming free, and fails only when none has for POOL_WAIT; none of them past
its search's budget) and a refused connection is retried
once at once (a pooled connection from before a restart is stale), so a Redis that is down
costs a search next to nothing before StoreUnavailable says why, and a mute one two seconds.
Each timeout is a timer on this process's event loop, and a loop held up (a collection of a
large heap took 0.54 s, thousands of tasks woken at once) fires it with the answer already in
the socket: at 0.5 s a burst of 4000 commands in a long-running process called a healthy Redis
unavailable.
A client is made per event loop: redis-py's connections belong to the loop that opened them.

Cache entries (keys under `cache:`) are also copied in process while Redis's invalidations keep
the copy true (`redis_front`): a hit is then a dict lookup instead of a round trip.
`local_copy=False` (setting `state.redis_local_copy = false`) turns that off.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any, Final, TypeVar

import redis.asyncio as aioredis
from redis import exceptions as rx
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript

from ._store import READ_SHARE, WRITE_SHARE, StoreDeadline, StoreUnavailable, allowed_wait
from .memory import check_bucket, check_ttl
from .redis_front import Front, seconds

__all__ = ["RedisStore"]

T = TypeVar("T")

TIMEOUT: Final = 2.0  # seconds to connect, and for an answer (see the module docstring)
#: Seconds a command waits for a pooled connection while none comes free. Longer than TIMEOUT: a
#: burst of searches queues for connections (the store is busy, not down: 500 searches at once on
#: 64 connections waited past 0.5 s and put the store in its degraded mode), while a Redis that
#: stops answering fails the commands holding the connections within TIMEOUT, which frees them. A
#: queue that moves is waited in however long it is: 4000 commands on one connection on a loaded
#: machine took longer than 5 s in all, and the last of them were called "too many connections".
POOL_WAIT: Final = 5.0
_LONGEST: Final = POOL_WAIT + 2 * TIMEOUT  # about a command's longest: a pool wait, an answer, one retry
FRONT_PREFIX: Final = "cache:"  # the keys copied in process (the search cache's entries)
_SCAN_COUNT: Final = 500

_GET: Final = """
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'hash' then return redis.call('HGET', KEYS[1], 'v') end
if t == 'string' then return redis.call('GET', KEYS[1]) end
return false
"""
_GET_WITH_TTL: Final = """
local t = redis.call('TYPE', KEYS[1])['ok']
local v = false
if t == 'hash' then v = redis.call('HGET', KEYS[1], 'v') elseif t == 'string' then v = redis.call('GET', KEYS[1]) end
if not v then return false end
return {v, redis.call('PTTL', KEYS[1])}
"""
_INCR: Final = """
redis.call('SET', KEYS[1], '0', 'NX', 'PX', ARGV[2])
return redis.call('INCRBY', KEYS[1], ARGV[1])
"""
# ARGV: rate, burst, delta (-1 take, +1 untake). Returns the wait in seconds, as a string.
_BUCKET: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local rate, burst, delta = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local s = redis.call('HMGET', KEYS[1], 'tok', 'ts')
local tok = tonumber(s[1])
if tok == nil then
  if delta > 0 then return '0' end
  tok = burst
else
  tok = math.min(burst, tok + math.max(0, now - tonumber(s[2])) * rate)
end
tok = math.min(burst, tok + delta)
if tok >= burst then
  redis.call('DEL', KEYS[1])
  return '0'
end
redis.call('HSET', KEYS[1], 'tok', string.format('%.17g', tok), 'ts', string.format('%.6f', now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tok) / rate * 1000) + 1000)
if tok >= 0 then return '0' end
return string.format('%.17g', -tok / rate)
"""
_LEASE: Final = """
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if cur then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""
_RELEASE: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_CLEAR_TAGGED: Final = """
local n = 0
for _, k in ipairs(KEYS) do
  if redis.call('TYPE', k)['ok'] == 'hash' and redis.call('HGET', k, 't') == ARGV[1] then
    n = n + redis.call('DEL', k)
  end
end
return n
"""
_USAGE: Final = """
local n, b = 0, 0
for _, k in ipairs(KEYS) do
  local t = redis.call('TYPE', k)['ok']
  if t == 'hash' then
    n = n + 1
    b = b + redis.call('HSTRLEN', k, 'v')
  elseif t == 'string' then
    n = n + 1
    b = b + redis.call('STRLEN', k)
  end
end
return {n, b}
"""


class _Turns:
    """The pool's connections as turns, taken in order: a command waits for one as long as turns
    keep being given back (the pool is busy), and fails only when none was for POOL_WAIT (the
    connections are stuck)."""

    def __init__(self, n: int) -> None:
        self._free = asyncio.Semaphore(n)
        self._moved = time.monotonic()  # when a turn was last given back

    async def take(self) -> None:
        while True:
            try:
                async with asyncio.timeout(POOL_WAIT):
                    await self._free.acquire()
                    return
            except TimeoutError:
                if time.monotonic() - self._moved >= POOL_WAIT:
                    raise StoreUnavailable("too many connections") from None

    def give(self) -> None:
        self._moved = time.monotonic()
        self._free.release()


class _Client:
    """One event loop's connection pool, its registered scripts, and (with `front_prefix`) the
    copy of the entries under that prefix kept in this process."""

    def __init__(self, url: str, max_connections: int, front_prefix: str | None) -> None:
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=max_connections,
            timeout=POOL_WAIT,
            socket_connect_timeout=TIMEOUT,
            socket_timeout=TIMEOUT,
            retry=Retry(NoBackoff(), 1, supported_errors=(rx.ConnectionError,)),
        )
        self.redis: aioredis.Redis = aioredis.Redis.from_pool(pool)
        self.turns = _Turns(max_connections)
        self.loop = asyncio.get_running_loop()
        script = self.redis.register_script
        self.get, self.incr, self.bucket = script(_GET), script(_INCR), script(_BUCKET)
        self.get_with_ttl = script(_GET_WITH_TTL)
        self.front: Front | None = None
        if front_prefix is not None:
            resp3 = {**pool.connection_kwargs, "protocol": 3}
            self.front = Front(lambda: pool.connection_class(**resp3), front_prefix, self._value)
        self.lease, self.release, self.clear, self.usage = (
            script(_LEASE),
            script(_RELEASE),
            script(_CLEAR_TAGGED),
            script(_USAGE),
        )

    async def _value(self, key: str) -> bytes | None:
        value = await _run(self.get, [key], [])
        return None if value is None else bytes(value)

    async def aclose(self) -> None:
        if self.front is not None:
            await self.front.aclose()
        with suppress(rx.RedisError, OSError):
            await self.redis.aclose()


class RedisStore:
    """State in the Redis at `url` (`redis://`, `rediss://` or `unix://`), keys under `prefix`."""

    kind: str = "redis"

    def __init__(
        self, url: str, prefix: str = "websearch:", *, max_connections: int = 64, local_copy: bool = True
    ) -> None:
        aioredis.connection.parse_url(url)  # a malformed URL is a ValueError now, not at the first search
        self._url = url
        self._prefix = prefix
        self._max_connections = max_connections
        self._local_copy = local_copy  # cache entries copied in process (`redis_front`)
        self._client: _Client | None = None  # the loop used last's, looked up first
        #: Every loop's client: one dropped while its loop lives would leave the tasks of its
        #: in-process copy unreferenced, and Python destroys them pending.
        self._clients: dict[asyncio.AbstractEventLoop, _Client] = {}
        self._closing: set[asyncio.Task[None]] = set()

    def __repr__(self) -> str:
        return f"RedisStore(prefix={self._prefix!r})"  # never the URL: it may carry a password

    # -- the Store methods -----------------------------------------------------------------------

    async def get(self, key: str) -> bytes | None:
        full = self._key(key)
        front = self._front(key)
        if front is None:
            value = await self._call(lambda c: _run(c.get, [full], []), READ_SHARE)
            return None if value is None else bytes(value)
        copied = front.get(full)
        if copied is not None:
            return copied
        token = front.begin(full)
        found: Any = None
        try:
            found = await self._call(lambda c: _run(c.get_with_ttl, [full], []), READ_SHARE)
        finally:
            value = None if not found else bytes(found[0])
            front.end(full, token, value, seconds(found[1]) if found else None)
        return value

    async def set(self, key: str, value: bytes, ttl: float, *, tag: str | None = None) -> None:
        check_ttl(ttl)
        fields: dict[str, bytes | str] = {"v": value} if tag is None else {"v": value, "t": tag}
        full = self._key(key)

        async def write(c: _Client) -> None:
            async with c.redis.pipeline(transaction=True) as pipe:
                pipe.delete(full)
                pipe.hset(full, mapping=fields)  # type: ignore[arg-type]  # redis-py's mapping type is invariant
                pipe.pexpire(full, _ms(ttl))
                await pipe.execute()

        front = self._front(key)
        if front is None:
            return await self._call(write)
        token, written = front.begin(full), False
        try:
            await self._call(write)
            written = True
        finally:
            front.end(full, token, bytes(value) if written else None, ttl)

    async def delete(self, key: str) -> None:
        front = self._front(key)
        if front is not None:
            front.forget(self._key(key))
        await self._call(lambda c: c.redis.unlink(self._key(key)))

    async def clear(self, prefix: str, *, tag: str | None = None) -> int:
        front = (
            self._front(FRONT_PREFIX) if FRONT_PREFIX.startswith(prefix) or prefix.startswith(FRONT_PREFIX) else None
        )
        if front is not None:
            front.forget_all()

        async def clear(c: _Client) -> int:
            count = 0
            for batch in _batches(await self._scan(c, prefix)):
                if tag is None:
                    count += int(await c.redis.unlink(*batch))
                else:
                    count += int(await _run(c.clear, batch, [tag]))
            return count

        return await self._call(clear)

    async def incr(self, key: str, ttl: float, amount: int = 1) -> int:
        check_ttl(ttl)
        return int(await self._call(lambda c: _run(c.incr, [self._key(key)], [amount, _ms(ttl)])))

    async def take(self, key: str, rate: float, burst: float) -> float:
        check_bucket(rate, burst)
        wait = await self._call(lambda c: _run(c.bucket, [self._key(key)], [repr(rate), repr(burst), -1]))
        return max(0.0, float(wait))

    async def untake(self, key: str, rate: float, burst: float) -> None:
        check_bucket(rate, burst)
        await self._call(lambda c: _run(c.bucket, [self._key(key)], [repr(rate), repr(burst), 1]))

    async def try_lease(self, key: str, owner: str, ttl: float) -> bool:
        check_ttl(ttl)
        return bool(await self._call(lambda c: _run(c.lease, [self._key(key)], [owner, _ms(ttl)])))

    async def release(self, key: str, owner: str) -> None:
        await self._call(lambda c: _run(c.release, [self._key(key)], [owner]))

    async def set_and_release(
        self, key: str, value: bytes, ttl: float, *, tag: str | None, lease: str, owner: str
    ) -> None:
        await self.set(key, value, ttl, tag=tag)
        await self.release(lease, owner)

    async def usage(self, prefix: str) -> tuple[int, int]:
        async def usage(c: _Client) -> tuple[int, int]:
            entries = size = 0
            for batch in _batches(await self._scan(c, prefix)):
                n, b = await _run(c.usage, batch, [])
                entries, size = entries + int(n), size + int(b)
            return entries, size

        return await self._call(usage)

    async def ping(self) -> None:
        await self._call(lambda c: c.redis.ping())

    async def aclose(self) -> None:
        """Close this loop's client; those of other loops still open are closed on their own
        loop, at its next turn (a loop blocked in a sync `close()` goes on once that returns);
        those of closed loops are let go (their loop's end cancelled their tasks)."""
        loop = asyncio.get_running_loop()
        clients, self._clients, self._client = self._clients, {}, None
        for owner, client in clients.items():
            if owner is not loop and not owner.is_closed():
                with suppress(RuntimeError):  # closed meanwhile
                    owner.call_soon_threadsafe(self._close_on_its_loop, client)
        mine = clients.get(loop)
        if mine is not None:
            await mine.aclose()

    def _close_on_its_loop(self, client: _Client) -> None:
        task = client.loop.create_task(client.aclose())
        self._closing.add(task)  # referenced until done, and `client` with it
        task.add_done_callback(self._closing.discard)

    # -- plumbing --------------------------------------------------------------------------------

    def _key(self, key: str) -> str:
        return self._prefix + key

    async def _scan(self, c: _Client, prefix: str) -> list[bytes]:
        """The keys starting with `prefix`, each once (SCAN may repeat a key)."""
        pattern = _glob_escape(self._prefix + prefix) + "*"
        return list(dict.fromkeys([k async for k in c.redis.scan_iter(match=pattern, count=_SCAN_COUNT)]))

    def _loop_client(self) -> _Client:
        """This event loop's client (made on first use in each loop)."""
        client, loop = self._client, asyncio.get_running_loop()
        if client is None or client.loop is not loop:
            client = self._clients.get(loop)
            if client is None:
                for gone in [owner for owner in list(self._clients) if owner.is_closed()]:
                    del self._clients[gone]
                front = self._prefix + FRONT_PREFIX if self._local_copy else None
                client = self._clients[loop] = _Client(self._url, self._max_connections, front)
            self._client = client
        return client

    def _front(self, key: str) -> Front | None:
        """The in-process copy, for a key under `FRONT_PREFIX` while it is in use."""
        if not key.startswith(FRONT_PREFIX):
            return None
        front = self._loop_client().front
        return front if front is not None and front.up else None

    async def _call(self, op: Callable[[_Client], Awaitable[T]], share: float = WRITE_SHARE) -> T:
        """Run `op` on this loop's client, waiting no longer than its search's deadline allows
        (`allowed_wait`) when that is shorter than a command can take (a burst queues for the
        pooled connections up to POOL_WAIT): StoreDeadline then."""
        left = allowed_wait(share)
        if left is None or left > _LONGEST:
            return await self._call_now(op)
        try:
            async with asyncio.timeout(left):
                return await self._call_now(op)
        except TimeoutError:  # the bound's own: `_call_now` turns every other failure into StoreUnavailable
            raise StoreDeadline from None

    async def _call_now(self, op: Callable[[_Client], Awaitable[T]]) -> T:
        """Run `op` on this loop's client; any failure of Redis or of the way to it is
        StoreUnavailable with a few words of reason."""
        client = self._loop_client()
        await client.turns.take()
        try:
            return await op(client)
        except rx.RedisError as exc:
            raise StoreUnavailable(_reason(exc)) from None
        except OSError as exc:
            raise StoreUnavailable(f"connection failed ({exc.strerror or type(exc).__name__})") from None
        finally:
            client.turns.give()


async def _run(script: AsyncScript, keys: list[Any], args: list[Any]) -> Any:
    return await script(keys=keys, args=args)


def _reason(exc: rx.RedisError) -> str:
    text = str(exc)
    if isinstance(exc, rx.TimeoutError):
        return "timeout"
    if isinstance(exc, rx.AuthenticationError | rx.AuthorizationError):
        return "authentication failed"
    if isinstance(exc, rx.BusyLoadingError):
        return "Redis is loading its data"
    if isinstance(exc, rx.ConnectionError):
        lowered = text.lower()
        if "refused" in lowered or "connect call failed" in lowered:
            return "connection refused"
        if "no connection available" in lowered or "too many connections" in lowered:
            return "too many connections"
        if "name or service not known" in lowered or "nodename nor servname" in lowered:
            return "unknown host"
        return "connection lost" if "closed" in lowered else "connection failed"
    if isinstance(exc, rx.ReadOnlyError):
        return "Redis is a read-only replica"
    if isinstance(exc, rx.ResponseError) and text.startswith("OOM"):
        return "Redis is out of memory"
    return f"Redis error: {text[:80]}"


def _ms(ttl: float) -> int:
    return max(1, math.ceil(ttl * 1000))


def _glob_escape(text: str) -> str:
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in text)


def _batches(keys: list[bytes], size: int = _SCAN_COUNT) -> list[list[bytes]]:
    return [keys[i : i + size] for i in range(0, len(keys), size)]
