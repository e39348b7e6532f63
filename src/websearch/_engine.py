"""The engine for many agents: cache, single-flight, provider health, pacing and one deadline
around the provider chain, all on one state store.

A search goes: cache (a fresh answer to the same search is served as is, marked cached) →
single-flight (identical searches in flight share one upstream walk: on one event loop
through a future, across the process's loops and across processes by waiting for the leader's
answer to land in the cache, behind a short lease between processes; each waits within its own
deadline, and searches again if the leader's caller is cancelled) → the chain, each attempt
guarded by the provider's health (cooldowns, the circuit) and pacing (its request rate), all
under the search's deadline → the answer cached when it is a success (before the lease goes,
in a shared store; in an in-process one, just after the answer is handed back). The store is
never a single point of failure: when it is down, or slower than the search's store budget
(`state.max_wait`, 250 ms in all), the search runs on in-process state and says so once.

`WEBSEARCH_ENGINE=off` (or the client's `engine=False`) turns all of it off but the deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import itertools
import json
import os
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeVar

from ._cache import PREFIX, cache_key, copy_of, decode, encode, encode_copy, entry_ttl
from ._chain import Walk, fallback_tier_ids, run_search
from ._clock import wall_seconds
from ._context import ClosedUnder
from ._fanout import Fanout, run_fanout
from ._health import PATIENCE, Health, Skip
from ._notices import CutShort, local_state
from ._pacing import Pacer, learners, rates_from
from ._state._store import DEADLINE, MAX_WAIT, Budget, unbounded

if TYPE_CHECKING:
    from ._clock import Clock
    from ._context import ProviderContext
    from ._lineup import Lineup
    from ._registry import ProviderInfo
    from ._settings import Settings
    from ._state import MemoryStore, ResilientStore
    from ._state._store import Store
    from ._types import SearchParams, SearchResponse

__all__ = ["CacheMode", "Engine", "Observer", "credential_fingerprint"]

T = TypeVar("T")
CacheMode = Literal["use", "refresh", "off"]
DEFAULT_TTL: Final = 900.0
DEFAULT_DEADLINE: Final = 30.0
DEEP_DEADLINE: Final = 120.0
_DEEP: Final = frozenset({"deep-lite", "deep", "deep-reasoning"})
_PROCESS: Final = uuid.uuid4().hex  # with the pid (a fork's child has the same) and a count: a search's name
_SEARCHES: Final = itertools.count()
_POLL: Final = 0.05  # seconds between looks at the cache while another process leads a flight
_LEASE: Final = 2.0  # seconds a flight's lease lives unless its leader renews it (every quarter of it)
_STATS_TTL: Final = 30 * 86400.0
_COUNT_EVERY: Final = 1.0  # seconds between two writes of the hit and miss counts


class Observer(Protocol):
    """What the engine tells an observer (the server's metrics), synchronously and cheaply: each
    search's response (its attempts say which providers ran, skipped or failed, and how long
    they took), each cache lookup, each search that joined another's flight. Never a key."""

    def searched(self, response: SearchResponse, *, joined: bool) -> None:
        """`joined`: the search shared another's flight in this process (its attempts are the
        leader's, heard already)."""
        ...

    def looked_up(self, hit: bool) -> None: ...

    def joined(self) -> None: ...


@dataclass
class Engine:
    """One client's engine. `store` is opened on first use (SQLite by default, Redis when
    configured), unless one is given; `enabled=False` leaves only the deadline."""

    settings: Settings
    env: Any = field(repr=False)  # holds every key of the environment
    clock: Clock
    store: Store | None = None
    enabled: bool = True
    _resilient: ResilientStore | None = field(default=None, repr=False)
    _flights: dict[str, asyncio.Future[SearchResponse]] = field(default_factory=dict, repr=False)
    #: Each flight's deadline (monotonic): a follower given longer does not take its leader's
    #: failure for its own.
    _flight_ends: dict[asyncio.Future[SearchResponse], float] = field(default_factory=dict, repr=False)
    _owner: str = field(default_factory=lambda: uuid.uuid4().hex, repr=False)
    _rates: dict[str, float] | None = field(default=None, repr=False)
    observer: Observer | None = field(default=None, repr=False)
    _joined: set[int] = field(default_factory=set, repr=False)  # ids of followers' responses, for the observer
    _followed: set[asyncio.Future[SearchResponse]] = field(default_factory=set, repr=False)  # flights with followers
    _tally: dict[str, int] = field(default_factory=dict, repr=False)  # hit and miss counts not yet in the store
    _counting: asyncio.Task[None] | None = field(default=None, repr=False)
    #: The timer of the next write of the counts, with its loop.
    _count_due: tuple[asyncio.AbstractEventLoop, asyncio.TimerHandle] | None = field(default=None, repr=False)
    _health: Health | None = field(default=None, repr=False)
    _pacer: Pacer | None = field(default=None, repr=False)
    _fallback: tuple[str, ...] | None = field(default=None, repr=False)
    #: Answers to write to an in-process store once the search has handed them back, by key.
    _behind: dict[str, tuple[MemoryStore, SearchResponse, float, SearchParams]] = field(
        default_factory=dict, repr=False
    )
    _slow: bool = field(default=False, repr=False)  # the shared store was too slow for the last search
    #: Flights' cache writes and lease releases still under way after their searches returned.
    _tails: set[asyncio.Task[None]] = field(default_factory=set, repr=False)

    @functools.cached_property
    def ttl(self) -> float:
        """`cache.ttl` seconds (0: no cache). Read once: settings do not change under a client."""
        return _seconds(self.settings.get("cache.ttl", DEFAULT_TTL), DEFAULT_TTL)

    @functools.cached_property
    def _answer_print(self) -> str:
        """What of the configuration can change an answer, hashed (read once, as the settings)."""
        return self.settings.answer_print()

    @functools.cached_property
    def max_wait(self) -> float:
        """`state.max_wait`: seconds a search waits for a shared store in all (then it goes on
        with in-process state, and says so)."""
        return _seconds(self.settings.get("state.max_wait", MAX_WAIT), MAX_WAIT)

    @functools.cached_property
    def _hedge(self) -> float | None:
        return _seconds(self.settings.get("search.hedge"), None)

    @functools.cached_property
    def _deadlines(self) -> tuple[float, float]:
        """The deadline of a plain search (`search.deadline`, else 30 s) and of a deep one
        (`search.deep_deadline`, else 120 s or `search.deadline` if longer): a `deadline = 30`
        written for plain searches cut Exa's deep modes, which take longer, to 30 s too."""
        plain = _seconds(self.settings.get("search.deadline", DEFAULT_DEADLINE), DEFAULT_DEADLINE)
        deep = _seconds(self.settings.get("search.deep_deadline"), None)
        return plain, deep if deep is not None else max(plain, DEEP_DEADLINE)

    def _fallback_ids(self, ctx: ProviderContext) -> tuple[str, ...]:
        """The fallback tier's ids, part of every cache key: read from the settings once (the
        context's settings are this engine's)."""
        if self._fallback is None or ctx.settings is not self.settings:
            self._fallback = tuple(fallback_tier_ids(ctx))
        return self._fallback

    @property
    def opened(self) -> bool:
        """Whether the state store has been opened (and is to be closed)."""
        return self._resilient is not None

    def state(self) -> ResilientStore:
        """The state store, opened on first use and wrapped so that it never fails a search."""
        if self._resilient is None:
            from ._state import ResilientStore, open_store

            primary = self.store if self.store is not None else open_store(self.settings, self.env, self.clock)
            self._resilient = ResilientStore(primary, self.clock)
        return self._resilient

    def health(self) -> Health:
        """The health book on this engine's store (one per engine: its probe leases are its own)."""
        store = self.state()
        if self._health is None or self._health.store is not store:
            self._health = Health(store, self.clock, direct=store.direct)
        return self._health

    def rates(self) -> dict[str, float]:
        """Every provider's pacing rate (read from the settings once)."""
        if self._rates is None:
            self._rates = rates_from(self.settings)
        return self._rates

    def pacer(self) -> Pacer:
        """The pacer on this engine's store (one per engine, like the health book)."""
        store = self.state()
        if self._pacer is None or self._pacer.store is not store:
            self._pacer = Pacer(store, self.clock, self.rates(), learners(self.settings))
        return self._pacer

    def deadline_for(self, params: SearchParams, deadline: float | None) -> float:
        """Seconds the search may take: the caller's, else `search.deadline` (deep modes: 120)."""
        if deadline is not None:
            return deadline
        return self._deadlines[1] if params.mode in _DEEP else self._deadlines[0]

    async def search(
        self,
        params: SearchParams,
        ctx: ProviderContext,
        lineup: Lineup,
        *,
        provider: str | None,
        preferred: str,
        excluded: frozenset[str],
        cache: CacheMode = "use",
        deadline: float | None = None,
        hedge: float | None = None,
        fanout: Fanout | None = None,
    ) -> SearchResponse:
        """One search through the cache, single-flight, guards and deadline; a `fanout` asks
        its providers at once instead of walking the chain. The observer, if any, hears of it."""
        route = _Route(provider, preferred, excluded, fanout)
        ends = self.clock.monotonic() + self.deadline_for(params, deadline)
        if hedge is None:
            hedge = self._hedge
        if not self.enabled:
            response = await _run(params, ctx, lineup, Walk(None, ends, hedge), route)
        elif self._resilient is not None and self._resilient.direct is not None:
            response = await self._search(params, ctx, lineup, route, cache, ends, hedge)  # in process: no waits
        else:
            # A shared store's calls for this search wait no longer, and no longer than `max_wait` in all.
            bound = DEADLINE.set(Budget(self.clock, ends, self.max_wait))
            try:
                response = await self._search(params, ctx, lineup, route, cache, ends, hedge)
            finally:
                DEADLINE.reset(bound)
        if self.observer is not None:
            self.observer.searched(response, joined=id(response) in self._joined)
            self._joined.discard(id(response))
        return response

    async def _search(
        self,
        params: SearchParams,
        ctx: ProviderContext,
        lineup: Lineup,
        route: _Route,
        cache: CacheMode,
        ends: float,
        hedge: float | None,
    ) -> SearchResponse:
        caching = cache != "off" and self.ttl > 0
        key = cache_key(
            params,
            provider=route.fanout.key if route.fanout is not None else route.provider,
            preferred=route.preferred,
            excluded=route.excluded,
            fallback=self._fallback_ids(ctx),
            lineup=lineup.ids,
            config=self._answer_print,
        )
        if caching and cache == "use":
            # `_cached` does the same; read here, an in-process store costs no coroutine at all.
            direct = self._resilient.direct if self._resilient is not None else None
            hit = self._read(direct, key) if direct is not None else await self._cached(key)
            if self.observer is not None:
                self.observer.looked_up(hit is not None)
            self._count("stats:hits" if hit is not None else "stats:misses")
            if hit is not None:
                return self._noted(hit)
        loop = asyncio.get_running_loop()
        leader = self._flights.get(key) if cache != "refresh" else None
        while leader is not None:  # the same search is in flight in this process: share its answer
            if leader.get_loop() is not loop:
                # On another event loop (another thread's, or the sync `search`'s beside
                # `asearch`): its future cannot be awaited here, but its answer lands in the cache.
                landed = await self._landed(leader, key, ends) if caching and cache == "use" else None
                if landed is not None:
                    return self._noted(landed)
                if self.clock.monotonic() >= ends:
                    return await self._too_late(params, ctx, lineup, route, ends, hedge)
                break
            self._followed.add(leader)
            leader_ends = self._flight_ends.get(leader, ends)  # read now: it goes with the flight
            try:
                answer = await asyncio.wait_for(asyncio.shield(leader), max(0.0, ends - self.clock.monotonic()))
            except _LeaderCancelled:  # its caller's cancellation is not this search's: look again, or lead
                leader = self._flights.get(key)
                continue
            except _LeaderClosedUnder:  # the client was closed: not to be searched again on a new session
                raise ClosedUnder("the client was closed under the search this one shared") from None
            except TimeoutError:  # this search's own deadline came first
                return await self._too_late(params, ctx, lineup, route, ends, hedge)
            if leader_ends < ends and _out_of_time(answer) and self.clock.monotonic() < ends:
                # The leader ran out of its own, shorter deadline: this search has time to ask.
                leader = self._flights.get(key)
                continue
            follower = copy_of(answer)
            if self.observer is not None:
                self.observer.joined()
                self._joined.add(id(follower))  # alive until `search` hands it back, so the id is its own
            return self._noted(follower)
        walk = Walk(_Guards(self, lineup), ends, hedge)
        flight: asyncio.Future[SearchResponse] = loop.create_future()
        self._flights[key], self._flight_ends[flight] = flight, ends
        try:
            # Other processes see the lease only in a shared store; a memory store is one client's
            # own, and this process's searches already share `_flights`.
            store = self.state()
            shared = caching and cache == "use" and store.kind != "memory"
            direct = store.direct if caching else None
            response = await self._lead(key, caching and direct is None, shared, ends, params, ctx, lineup, walk, route)
            if direct is not None and _cacheable(route, response):
                self._write_behind(direct, key, response, params)
            # Followers copy the answer when they wake, after this caller had it: from a copy
            # of their own, or what this caller changes meanwhile would reach them.
            flight.set_result(copy_of(response) if flight in self._followed else response)
            return self._noted(response)
        except BaseException as exc:
            # A cancelled caller (an agent given up on, a timeout of its own) fails nobody else:
            # its followers search again, one of them leading.
            if isinstance(exc, ClosedUnder):
                flight.set_exception(_LeaderClosedUnder())
            else:
                flight.set_exception(_LeaderCancelled() if isinstance(exc, asyncio.CancelledError) else exc)
            flight.exception()  # retrieved: no "never retrieved" warning when nobody followed
            raise
        finally:
            self._followed.discard(flight)
            self._flight_ends.pop(flight, None)
            if self._flights.get(key) is flight:
                del self._flights[key]

    async def _too_late(
        self,
        params: SearchParams,
        ctx: ProviderContext,
        lineup: Lineup,
        route: _Route,
        ends: float,
        hedge: float | None,
    ) -> SearchResponse:
        """A search whose deadline passed while it waited for another's flight (one given a longer
        deadline): the chain's answer past the deadline, every provider not asked. It leads no
        flight: the other still runs, for those who wait on it."""
        return self._noted(await _run(params, ctx, lineup, Walk(_Guards(self, lineup), ends, hedge), route))

    async def _landed(self, leader: asyncio.Future[SearchResponse], key: str, ends: float) -> SearchResponse | None:
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
            await asyncio.wait_for(done, max(0.0, ends - self.clock.monotonic()))
        except (RuntimeError, TimeoutError):  # the leader's loop is closed, or the deadline came
            return None
        if self.observer is not None:
            self.observer.joined()
        return await self._cached(key)

    async def _lead(
        self,
        key: str,
        caching: bool,
        shared: bool,
        ends: float,
        params: SearchParams,
        ctx: ProviderContext,
        lineup: Lineup,
        walk: Walk,
        route: _Route,
    ) -> SearchResponse:
        """Walk the chain, unless another process already is for the same search: then wait
        (until the deadline) for its answer to land in the cache. A success is cached before
        the lease goes, so a process that finds the lease free finds the answer too.

        The lease is short and renewed while the walk runs: a leader killed mid-flight holds
        the others up for `_LEASE` seconds at most, then one of them leads."""
        store = self.state()
        lease = "flight:" + key.removeprefix(PREFIX)
        taken = shared and await store.try_lease(lease, self._owner, _LEASE)
        if shared and not taken:
            if self.observer is not None:
                self.observer.joined()
            budget = DEADLINE.get()
            while self.clock.monotonic() < ends:
                await asyncio.sleep(_POLL)
                # The looks while another leads are this search's waiting for its answer, not a
                # store holding it up: they spend none of its store budget (a call slower than
                # what is left of it is still cut). Forty looks a second on a loaded machine
                # spent it, and the follower led the same search again.
                left = budget.left if budget is not None else 0.0
                hit = await self._cached(key)
                if hit is not None:
                    return hit
                # Looked at before it is taken: a read takes no write lock from the leader renewing it.
                free = await store.get(lease) is None
                if budget is not None and not budget.cut:
                    budget.left = left
                if free and await store.try_lease(lease, self._owner, _LEASE):
                    taken = True
                    break
            else:
                shared = False  # the deadline came with the lease still another's
        if taken:
            # Free: nobody leads this search, or its leader wrote the answer and let go since this
            # search last looked in the cache (a leader writes before it lets go): one more look
            # tells which. Without it, a search held up between its look and the lease asked again.
            hit = await self._cached(key)
            if hit is not None:
                await store.release(lease, self._owner)
                return hit
        keeper: tuple[asyncio.Task[None], asyncio.Event] | None = None
        if shared:
            over = asyncio.Event()
            # In the background, on no search's budget: renewals every half second of a long
            # walk spent it at a loaded machine's round trips, and the answer came with the notice.
            renewing = asyncio.get_running_loop().create_task(self._keep(store, lease, over), context=unbounded())
            keeper = (renewing, over)
        response: SearchResponse | None = None
        try:
            response = await _run(params, ctx, lineup, walk, route)
            return response
        finally:
            entry: tuple[bytes, float, str | None] | None = None
            if response is not None and caching and _cacheable(route, response):
                value = encode(key, response, wall_seconds(self.clock))
                entry = (value, entry_ttl(params, self.ttl), response.provider)
            if entry is not None or keeper is not None:
                await self._settle(self._cache_and_release(store, key, entry, lease, keeper), ends)

    async def _settle(self, work: Coroutine[Any, Any, None], ends: float) -> None:
        """Run a flight's `work` (`_cache_and_release`), not bounded by the search's store
        budget, which the answer is already within: the search waits for it as long as its budget
        allows (not at all once the store was too slow for it), and what is not done by then
        carries on after the search returns (a burst queues it behind other writes); `aclose`
        waits for it (briefly, when the store was too slow for the last search)."""
        tail = asyncio.get_running_loop().create_task(work, context=unbounded())
        self._tails.add(tail)  # held until done, whatever becomes of this search
        tail.add_done_callback(self._tails.discard)
        budget = DEADLINE.get()
        wait = max(0.0, ends - self.clock.monotonic()) if budget is None else budget.allowed(1.0)
        done, _ = await asyncio.wait([tail], timeout=wait)
        if done:
            tail.result()

    async def _cache_and_release(
        self,
        store: ResilientStore,
        key: str,
        entry: tuple[bytes, float, str | None] | None,
        lease: str,
        keeper: tuple[asyncio.Task[None], asyncio.Event] | None,
    ) -> None:
        """Cache a flight's answer, then let its lease go (in that order: a process that finds
        the lease free finds the answer too), in one write when there are both."""
        if keeper is not None:
            renewing, over = keeper
            over.set()
            renewing.cancel()
            await asyncio.wait([renewing], timeout=_LEASE)  # a renewal under way lands before the release
        if entry is None:
            if keeper is not None:
                await store.release(lease, self._owner)
            return
        value, ttl, tag = entry
        if keeper is None:
            await store.set(key, value, ttl, tag=tag)
        else:
            await store.set_and_release(key, value, ttl, tag=tag, lease=lease, owner=self._owner)

    async def _keep(self, store: ResilientStore, lease: str, over: asyncio.Event) -> None:
        """Renew a flight's lease until the flight is `over`. It is cancelled then too, but a
        cancellation can be lost in a store call (Python 3.11's `wait_for`, under which redis-py
        sends its commands, can drop one that comes as its inner call ends): the flag ends it."""
        while not over.is_set():
            await asyncio.sleep(_LEASE / 4)
            if not over.is_set():
                await store.try_lease(lease, self._owner, _LEASE)

    def _write_behind(self, store: MemoryStore, key: str, response: SearchResponse, params: SearchParams) -> None:
        """Cache an answer in an in-process store just after the search hands it back: encoding
        it (15 us) then runs while the caller's next request is on the wire. A copy
        is kept now, so what the caller does to its response is not cached; a lookup of the
        key, `stats`, `clear` or `aclose` before the write has run makes it at once."""
        self._behind[key] = (store, copy_of(response), wall_seconds(self.clock), params)
        # A timer due at once runs after what the loop already has queued (the caller's next
        # request going out among it); `call_soon` would run before it.
        asyncio.get_running_loop().call_later(0, self._written, key)

    def _written(self, key: str) -> None:
        """The write behind `key`'s answer, if it is still to be made."""
        behind = self._behind.pop(key, None)
        if behind is not None:
            store, template, at, params = behind
            ttl = entry_ttl(params, self.ttl) - max(0.0, wall_seconds(self.clock) - at)  # it lives from `at`
            if ttl > 0:
                store.put(key, encode_copy(key, template, at), ttl, tag=template.provider)

    def _all_written(self) -> None:
        for key in list(self._behind):
            self._written(key)

    def _count(self, name: str) -> None:
        """Count a hit or a miss in the store, off the search's path and at most once every
        `_COUNT_EVERY` seconds: a hit should cost one store read, not a read and a write.

        A timer, not a task waiting out the interval: a loop closed without `aclose` (after
        `run_until_complete`) drops a timer silently, where a pending task is reported as
        destroyed. The counts stay here and go with the next write, on whatever loop."""
        self._tally[name] = self._tally.get(name, 0) + 1
        loop = asyncio.get_running_loop()
        if self._count_due is None or self._count_due[0] is not loop:
            self._count_due = (loop, loop.call_later(_COUNT_EVERY, self._count_now, loop))

    def _count_now(self, loop: asyncio.AbstractEventLoop) -> None:
        self._count_due = None
        # Not under the deadline of the search whose context the timer captured.
        self._counting = loop.create_task(self._write_counts(), context=unbounded())

    async def _write_counts(self) -> None:
        while self._tally:
            name, amount = self._tally.popitem()
            try:
                await self.state().incr(name, _STATS_TTL, amount)
            except BaseException:
                self._tally[name] = self._tally.get(name, 0) + amount  # cancelled: counted next time
                raise

    async def _counted(self, within: float | None = None) -> None:
        """Every hit and miss counted so far, written to the store now; `within`: waiting no
        longer than that for the store (the counts it did not take are lost: they are statistics,
        and a hung store must not hold a closing process up)."""
        loop = asyncio.get_running_loop()
        due, self._count_due = self._count_due, None
        if due is not None and due[0] is loop:
            due[1].cancel()
        counting = self._counting
        if counting is not None and not counting.done() and counting.get_loop() is loop:
            await asyncio.wait([counting], timeout=within)
        if within is None:
            return await self._write_counts()
        bound = DEADLINE.set(Budget(self.clock, self.clock.monotonic() + 2 * within, within))
        try:
            await self._write_counts()
        finally:
            DEADLINE.reset(bound)

    async def _cached(self, key: str) -> SearchResponse | None:
        store = self.state()
        direct = store.direct
        if direct is not None:
            return self._read(direct, key)
        raw = await store.get(key)
        return None if raw is None else decode(key, raw, wall_seconds(self.clock))

    def _read(self, store: MemoryStore, key: str) -> SearchResponse | None:
        """The cached answer of `key` in an in-process store (read without awaiting)."""
        if key in self._behind:
            self._written(key)
        raw = store.read(key)
        return None if raw is None else decode(key, raw, wall_seconds(self.clock))

    def _noted(self, response: SearchResponse) -> SearchResponse:
        """The store's one notice, when it could not be used for this search: it is down, or it
        did not answer within the search's store budget."""
        degraded = self._resilient.degraded if self._resilient is not None else None
        if degraded:
            response.notices = (*response.notices, local_state(f"is unavailable ({degraded})"))
        else:
            budget = DEADLINE.get()
            if budget is not None:
                self._slow = budget.cut
                if budget.cut:
                    response.notices = (*response.notices, local_state("did not answer in time"))
        return response

    async def _tails_done(self, within: float | None = None) -> None:
        """Every flight's cache write and lease release still under way on this loop, done (or
        `within` seconds waited for them)."""
        loop = asyncio.get_running_loop()
        tails = [tail for tail in self._tails if tail.get_loop() is loop]
        if tails:
            await asyncio.wait(tails, timeout=within)

    async def aclose(self) -> None:
        """Close the state store, if this engine opened it."""
        if self._resilient is not None:
            # A store too slow for the last search (hung, perhaps) holds the close up no longer
            # than it held that search.
            await self._tails_done(self.max_wait if self._slow else None)
            self._all_written()
            await self._counted(self.max_wait)
            await self._resilient.aclose()
            self._resilient = None

    async def stats(self) -> dict[str, Any]:
        """Entries, bytes, hits, misses and the hit rate of the cache (`websearch cache stats`)."""
        store = self.state()
        await self._tails_done()
        self._all_written()
        await self._counted()
        entries, size = await store.usage(PREFIX)
        hits = int(await store.get("stats:hits") or 0)
        misses = int(await store.get("stats:misses") or 0)
        rate = hits / (hits + misses) if hits + misses else None
        return {
            "entries": entries,
            "bytes": size,
            "hits": hits,
            "misses": misses,
            "hit_rate": rate,
            "store": store.kind,
        }

    async def clear(self, provider: str | None = None) -> int:
        """Drop cached answers (only those served by `provider`, when given); the count."""
        await self._tails_done()
        self._all_written()
        removed: int = await self.state().clear(PREFIX, tag=provider)
        return removed


@dataclass
class _Guards:
    """One search's health and pacing checks (it remembers which providers had a record)."""

    engine: Engine
    lineup: Lineup
    recorded: set[str] = field(default_factory=set)

    @functools.cached_property
    def token(self) -> str:
        """This search's name for the leases it takes (a half-open circuit's probe); made when
        first needed, as most searches take none."""
        return f"{_PROCESS}:{os.getpid()}:{next(_SEARCHES)}"

    async def before(self, info: ProviderInfo, ctx: ProviderContext) -> Skip | None:
        health = self.engine.health()
        if not health.unrecorded(info.id):
            skip, recorded = await health.check(
                info.id, info.label, lambda: credential_fingerprint(info, ctx), owner=self.token
            )
            if recorded:
                self.recorded.add(info.id)
            if skip is not None:
                return skip
        pacer = self.engine.pacer()
        if not pacer.paces(info.id):
            return None
        if ctx.transport is not None:  # the built-in one of a cold process loads before a slot
            await ctx.transport.ready(None if ctx.deadline is None else ctx.deadline - ctx.clock.monotonic())
        remaining = None if ctx.deadline is None else ctx.deadline - ctx.clock.monotonic()
        return await pacer.wait(info.id, info.label, remaining)

    async def after(
        self, info: ProviderInfo, ctx: ProviderContext, error: BaseException | None, plan_rate: float | None
    ) -> None:
        """Record the attempt's outcome, and the plan rate its answer reported (the pace from now on)."""
        if plan_rate is not None:
            await self.engine.pacer().learn(info.id, plan_rate)
        health = self.engine.health()
        if error is None:
            if info.id in self.recorded:
                await health.succeeded(info.id, owner=self.token)
        else:
            fingerprint = functools.partial(credential_fingerprint, info, ctx)
            await health.failed(info.id, error, fingerprint, patience=PATIENCE[info.tier], owner=self.token)


@dataclass(slots=True)
class _Route:
    """Which providers a search goes to: the chain's selection, or a fan-out. (Not frozen:
    one is built per search, cache hits too, and a frozen one costs four times as much.)"""

    provider: str | None
    preferred: str
    excluded: frozenset[str]
    fanout: Fanout | None


async def _run(params: SearchParams, ctx: ProviderContext, lineup: Lineup, walk: Walk, route: _Route) -> SearchResponse:
    """The chain, or the fan-out."""
    if route.fanout is not None:
        return await run_fanout(params, ctx, lineup, route.fanout, walk)
    return await run_search(
        params, ctx, lineup, provider=route.provider, preferred=route.preferred, excluded=route.excluded, walk=walk
    )


class _LeaderCancelled(Exception):
    """What a flight's followers get when the caller leading it was cancelled."""


class _LeaderClosedUnder(Exception):
    """What a flight's followers get when the client was closed under its leader's request."""


def _settle(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


def _out_of_time(response: SearchResponse) -> bool:
    """A failure in which time ran out: an attempt timed out, or was not asked for the deadline."""
    return not response.ok and any(a.error_kind == "timeout" or a.skipped == "deadline" for a in response.attempts)


def _cacheable(route: _Route, response: SearchResponse) -> bool:
    """A success (a fan-out's: one that met its quorum) that nothing cut short (a later page
    out of time, a turn paused at the deadline: a search with more time may be whole)."""
    if any(isinstance(notice, CutShort) for notice in response.notices):
        return False
    fanout = route.fanout
    return fanout.cacheable(response) if fanout is not None else response.ok


def _seconds(value: Any, default: T) -> float | T:
    """A number setting as float seconds, else `default`."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def credential_fingerprint(info: ProviderInfo, ctx: ProviderContext) -> str:
    """What identifies the provider's credential without holding it: a hash of the key sources."""
    try:
        stored = ctx.credentials.stamp() if info.credential_ids else None
    except Exception:  # a damaged store: its stamp is unknown, the rest still identifies
        stored = None
    parts = [ctx.api_keys.get(info.id), *(ctx.env.get(name) for name in info.env_keys), stored]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16]
