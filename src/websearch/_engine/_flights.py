"""Single-flight: identical searches (or page fetches) in flight share one upstream walk, behind
one call, `Flights.lead_or_follow(key, run)`. Generic in what it shares: the engine's flights
carry `T`s, the reader's `FetchResponse`s; each says how to copy one and when one
failed for want of time.

Three kinds, by where the other search runs: on this event loop, a follower awaits the
leader's future; on another loop of this process (another thread's, or the sync `search`'s
beside `asearch`), it waits for the leader to finish and reads its answer from the cache; in
another process, it polls the cache behind the leader's lease, a short one the leader renews
while it walks (a leader killed mid-flight holds the others up for `LEASE` seconds at most).
Each waits within its own deadline, and searches again if the leader's caller is cancelled. A
leader's answer is cached before its lease goes, so a process that finds the lease free finds
the answer too.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from .._core._context import ClosedUnder
from .._state._store import DEADLINE, unbounded
from ._cache import PREFIX

if TYPE_CHECKING:
    from .._core._budget import Budget
    from .._core._clock import Clock
    from .._core._params import CacheMode
    from .._state import ResilientStore

__all__ = ["Entry", "Flights"]

#: A leader's answer as the cache holds it: the encoded value, its ttl, its provider's tag.
Entry = tuple[bytes, float, str | None]
POLL: Final = 0.05  # seconds between looks at the cache while another process leads a flight
LEASE: Final = 2.0  # seconds a flight's lease lives unless its leader renews it (every quarter of it)
T = TypeVar("T")


class Flights(Generic[T]):
    """One engine's flights. `state` opens its store; `read` looks an answer up in the cache;
    `joined` is told of each search that waited on another's flight (the observer's); `copy`
    gives a follower its own copy of an answer; `out_of_time` tells an answer that failed because
    its leader's deadline came (a follower with more time asks again)."""

    def __init__(
        self,
        clock: Clock,
        state: Callable[[], ResilientStore],
        read: Callable[[str], Awaitable[T | None]],
        joined: Callable[[], None],
        *,
        copy: Callable[[T], T],
        out_of_time: Callable[[T], bool],
    ) -> None:
        self._clock = clock
        self._state = state
        self._read = read
        self._joined = joined
        self._copy = copy
        self._out_of_time = out_of_time
        self._owner = uuid.uuid4().hex
        self._flights: dict[str, asyncio.Future[T]] = {}
        #: Each flight's deadline (monotonic): a follower given longer does not take its leader's
        #: failure for its own.
        self._ends: dict[asyncio.Future[T], float] = {}
        self._followed: set[asyncio.Future[T]] = set()  # flights with followers
        #: Flights' cache writes and lease releases still under way after their searches returned.
        self._tails: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        """Flights in flight in this process."""
        return len(self._flights)

    async def lead_or_follow(
        self,
        key: str,
        run: Callable[[], Awaitable[T]],
        *,
        budget: Budget,
        cache: CacheMode,
        entry: Callable[[T], Entry | None],
    ) -> tuple[T, bool]:
        """The answer of the search named `key`: another's flight's, or `run()`'s, leading a
        flight; and whether it was an in-process flight's. `cache`: "use" joins any flight,
        reading answers from the cache; "refresh" leads; "off" joins flights in this process
        only. `entry` gives a leader's answer as the cache is to hold it (None: not cached).
        Nothing waits past the search's `budget`."""
        ends = math.inf if budget.ends is None else budget.ends
        leader = self._flights.get(key) if cache != "refresh" else None
        if leader is not None:
            followed = await self._follow(leader, key, run, ends, cache)
            if followed is not None:
                return followed
        flight: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._flights[key], self._ends[flight] = flight, ends
        try:
            store = self._state()
            if cache == "use" and store.kind != "memory":  # other processes see the store
                response = await self._lead(key, run, ends, entry)
            else:
                response = await run()
                cached = entry(response)
                if cached is not None:
                    value, ttl, tag = cached
                    await self._settle(store.set(key, value, ttl, tag=tag), ends)
            # Followers copy the answer when they wake, after this caller had it: from a copy
            # of their own, or what this caller changes meanwhile would reach them.
            flight.set_result(self._copy(response) if flight in self._followed else response)
            return response, False
        except BaseException as exc:
            _failed(flight, exc)
            raise
        finally:
            self._followed.discard(flight)
            self._ends.pop(flight, None)
            if self._flights.get(key) is flight:
                del self._flights[key]

    async def _follow(
        self,
        leader: asyncio.Future[T] | None,
        key: str,
        run: Callable[[], Awaitable[T]],
        ends: float,
        cache: str,
    ) -> tuple[T, bool] | None:
        """The answer of the flight `leader` (another of this process's), or None: this search
        is to lead. A search whose deadline passed while it waited (one given a longer deadline
        leads) gets `run()`'s answer past the deadline, every provider not asked, leading nothing."""
        loop = asyncio.get_running_loop()
        while leader is not None:
            if leader.get_loop() is not loop:
                # Its future cannot be awaited here, but its answer lands in the cache.
                landed = await self._landed(leader, key, ends) if cache == "use" else None
                if landed is not None:
                    return landed, False
                return (await run(), False) if self._clock.monotonic() >= ends else None
            self._followed.add(leader)
            leader_ends = self._ends.get(leader, ends)  # read now: it goes with the flight
            try:
                answer = await asyncio.wait_for(asyncio.shield(leader), max(0.0, ends - self._clock.monotonic()))
            except _LeaderCancelled:  # its caller's cancellation is not this search's: look again, or lead
                leader = self._flights.get(key)
                continue
            except _LeaderClosedUnder:  # the client was closed: not to be searched again on a new session
                raise ClosedUnder("the client was closed under the search this one shared") from None
            except TimeoutError:  # this search's own deadline came first
                return await run(), False
            if leader_ends < ends and self._out_of_time(answer) and self._clock.monotonic() < ends:
                # The leader ran out of its own, shorter deadline: this search has time to ask.
                leader = self._flights.get(key)
                continue
            self._joined()
            return self._copy(answer), True
        return None

    async def _landed(self, leader: asyncio.Future[T], key: str, ends: float) -> T | None:
        """The answer of a flight on another loop, read from the cache once the flight is done
        (waiting until the deadline at most); None when it left none (it failed, or its loop
        is gone): then this search leads its own."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def wake(_: object) -> None:  # on the leader's loop
            with contextlib.suppress(RuntimeError):  # this loop closed meanwhile: nobody waits
                loop.call_soon_threadsafe(_settle, done)

        try:
            leader.get_loop().call_soon_threadsafe(leader.add_done_callback, wake)
            await asyncio.wait_for(done, max(0.0, ends - self._clock.monotonic()))
        except (RuntimeError, TimeoutError):  # the leader's loop is closed, or the deadline came
            return None
        self._joined()
        return await self._read(key)

    async def _lead(
        self,
        key: str,
        run: Callable[[], Awaitable[T]],
        ends: float,
        entry: Callable[[T], Entry | None],
    ) -> T:
        """`run()` behind the flight's lease in a store other processes see, unless another
        process already leads it: then its answer from the cache, waiting for it until the deadline."""
        store = self._state()
        lease = "flight:" + key.removeprefix(PREFIX)
        taken = shared = await store.try_lease(lease, self._owner, LEASE)
        if not taken:
            self._joined()
            waited = await self._wait(store, key, lease, ends)
            if not isinstance(waited, bool):
                return waited
            taken = shared = waited  # False: the deadline came with the lease still another's
        if taken:
            # Free: nobody leads this search, or its leader wrote the answer and let go since this
            # search last looked in the cache (a leader writes before it lets go): one more look
            # tells which. Without it, a search held up between its look and the lease asked again.
            hit = await self._read(key)
            if hit is not None:
                await store.release(lease, self._owner)
                return hit
        keeper = _Renewal(store, lease, self._owner) if shared else None
        response: T | None = None
        try:
            response = await run()
            return response
        finally:
            cached = entry(response) if response is not None else None
            if cached is not None or keeper is not None:
                await self._settle(self._cache_and_release(store, key, cached, lease, keeper), ends)

    async def _wait(self, store: ResilientStore, key: str, lease: str, ends: float) -> T | bool:
        """While another process leads the flight: its answer, once in the cache; or True, the
        lease let go and taken; or False, the deadline came first."""
        budget = DEADLINE.get()
        while self._clock.monotonic() < ends:
            await asyncio.sleep(POLL)
            # The looks while another leads are this search's waiting for its answer, not a
            # store holding it up: they spend none of its store budget (a call slower than
            # what is left of it is still cut). Forty looks a second on a loaded machine
            # spent it, and the follower led the same search again.
            left = budget.left if budget is not None else 0.0
            hit = await self._read(key)
            if hit is not None:
                return hit
            # Looked at before it is taken: a read takes no write lock from the leader renewing it.
            free = await store.get(lease) is None
            if budget is not None and not budget.cut:
                budget.left = left
            if free and await store.try_lease(lease, self._owner, LEASE):
                return True
        return False

    async def _settle(self, work: Coroutine[Any, Any, None], ends: float) -> None:
        """Run a flight's `work` (its cache write, its lease's release), not bounded by the search's store
        budget, which the answer is already within: the search waits for it as long as its budget
        allows (not at all once the store was too slow for it), and what is not done by then
        carries on after the search returns (a burst queues it behind other writes); `done`
        waits for it."""
        tail = asyncio.get_running_loop().create_task(work, context=unbounded())
        self._tails.add(tail)  # held until done, whatever becomes of this search
        tail.add_done_callback(self._tails.discard)
        budget = DEADLINE.get()
        wait = max(0.0, ends - self._clock.monotonic()) if budget is None else budget.allowed(1.0)
        done, _ = await asyncio.wait([tail], timeout=wait)
        if done:
            tail.result()

    async def _cache_and_release(
        self,
        store: ResilientStore,
        key: str,
        entry: Entry | None,
        lease: str,
        keeper: _Renewal | None,
    ) -> None:
        """Cache a flight's answer, then let its lease go (in that order: a process that finds
        the lease free finds the answer too), in one write when there are both."""
        if keeper is not None:
            await keeper.stop()
        if entry is None:
            if keeper is not None:
                await store.release(lease, self._owner)
            return
        value, ttl, tag = entry
        if keeper is None:
            await store.set(key, value, ttl, tag=tag)
        else:
            await store.set_and_release(key, value, ttl, tag=tag, lease=lease, owner=self._owner)

    async def done(self, within: float | None = None) -> None:
        """Every flight's cache write and lease release still under way on this loop, done (or
        `within` seconds waited for them)."""
        loop = asyncio.get_running_loop()
        tails = [tail for tail in self._tails if tail.get_loop() is loop]
        if tails:
            await asyncio.wait(tails, timeout=within)


class _Renewal:
    """A flight's lease, renewed every quarter of it until the flight ends. A timer first: the
    renewing task starts only when the flight outlives a quarter of its lease, which most do not.
    On no search's budget: renewals every half second of a long walk spent it at a loaded
    machine's round trips, and the answer came with the notice."""

    def __init__(self, store: ResilientStore, lease: str, owner: str) -> None:
        self._store, self._lease, self._owner = store, lease, owner
        self._loop = asyncio.get_running_loop()
        self._over = False
        self._task: asyncio.Task[None] | None = None
        self._timer = self._loop.call_later(LEASE / 4, self._start, context=unbounded())

    def _start(self) -> None:
        if not self._over:
            self._task = self._loop.create_task(self._keep(), context=unbounded())

    async def _keep(self) -> None:
        """Renew until the flight is over. It is cancelled then too, but a cancellation can be
        lost in a store call (Python 3.11's `wait_for`, under which redis-py sends its commands,
        can drop one that comes as its inner call ends): the flag ends it."""
        while not self._over:
            await self._store.try_lease(self._lease, self._owner, LEASE)
            await asyncio.sleep(LEASE / 4)

    async def stop(self) -> None:
        """End the renewals; a renewal under way lands first (before the lease is released)."""
        self._over = True
        self._timer.cancel()
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait([self._task], timeout=LEASE)


class _LeaderCancelled(Exception):
    """What a flight's followers get when the caller leading it was cancelled."""


class _LeaderClosedUnder(Exception):
    """What a flight's followers get when the client was closed under its leader's request."""


def _failed(flight: asyncio.Future[T], exc: BaseException) -> None:
    """Tell a flight's followers its leader failed. A cancelled caller (an agent given up on, a
    timeout of its own) fails nobody else: its followers search again, one of them leading."""
    if isinstance(exc, ClosedUnder):
        flight.set_exception(_LeaderClosedUnder())
    else:
        flight.set_exception(_LeaderCancelled() if isinstance(exc, asyncio.CancelledError) else exc)
    flight.exception()  # retrieved: no "never retrieved" warning when nobody followed


def _settle(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)
