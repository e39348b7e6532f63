"""The engine for many agents: cache, single-flight, provider health, pacing and one deadline
around the provider chain, all on one state store.

A search goes: key → cache (a fresh answer to the same search is served as is, marked cached)
→ single-flight (`_flights`: identical searches in flight share one upstream walk, in this
process and across processes) → the chain, each attempt guarded by the provider's health
(cooldowns, the circuit) and pacing (its request rate), all under the search's deadline → the
answer cached when it is a success (before the flight's lease goes, in a shared store; in an
in-process one, just after the answer is handed back: a miss costs ~60 us less than with the
write awaited on the search's path). The hit and miss counts are the store's (`_state._tally`).
The store is never a single point of failure: when it is down, or slower than the search's store
budget (`state.max_wait`, 250 ms in all), the search runs on in-process state and says so once.

`WEBSEARCH_ENGINE=off` (or the client's `engine=False`) turns all of it off but the deadline.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import itertools
import json
import os
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

from .._core._budget import Budget
from .._core._clock import wall_seconds
from .._core._notices import CutShort, local_state
from .._core._params import DEEP_MODES, CacheMode
from .._state._store import DEADLINE, MAX_WAIT, StoreWait
from ._cache import PREFIX, cache_key, copy_of, decode, encode, encode_copy, entry_ttl
from ._chain import Walk, fallback_tier_ids, run_search, transport_ready
from ._fanout import Fanout, run_fanout
from ._flights import Entry, Flights
from ._health import PATIENCE, Health, Skip
from ._pacing import Pacer, learners, rates_from

if TYPE_CHECKING:
    from .._core._clock import Clock
    from .._core._context import ProviderContext
    from .._core._registry import ProviderInfo
    from .._core._settings import Settings
    from .._core._types import SearchParams, SearchResponse
    from .._state import MemoryStore, ResilientStore
    from .._state._store import Store
    from ._chain import Guards
    from ._lineup import Lineup

__all__ = ["CacheMode", "Engine", "Observer", "credential_fingerprint", "search_key"]

T = TypeVar("T")
DEFAULT_TTL: Final = 900.0
DEFAULT_DEADLINE: Final = 30.0
DEEP_DEADLINE: Final = 120.0
_DEEP: Final = DEEP_MODES
_PROCESS: Final = uuid.uuid4().hex  # with the pid (a fork's child has the same) and a count: a search's name
_SEARCHES: Final = itertools.count()


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
    _rates: dict[str, float] | None = field(default=None, repr=False)
    observer: Observer | None = field(default=None, repr=False)
    _health: Health | None = field(default=None, repr=False)
    _pacer: Pacer | None = field(default=None, repr=False)
    _fallback: tuple[str, ...] | None = field(default=None, repr=False)
    _slow: bool = field(default=False, repr=False)  # the shared store was too slow for the last search

    @functools.cached_property
    def _flights(self) -> Flights[SearchResponse]:
        """Single-flight for this engine's searches, on its store."""
        return Flights(self.clock, self.state, self._cached, self._joined, copy=copy_of, out_of_time=out_of_time)

    @functools.cached_property
    def _behind(self) -> _Behind:
        """The answers still to write to an in-process store."""
        return _Behind(self.clock, self.ttl)

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
            from .._state import ResilientStore, open_store

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
        budget = Budget.start(self.clock, self.deadline_for(params, deadline))
        hedge = self._hedge if hedge is None else hedge
        search = _Search(params, ctx, lineup, provider, preferred, excluded, fanout, cache, budget, hedge)
        if not self.enabled:
            response, joined = await search.run(None), False
        elif self._resilient is not None and self._resilient.direct is not None:
            response, joined = await self._search(search)  # in process: no waits
        else:
            # A shared store's calls for this search wait no longer, and no longer than `max_wait` in all.
            bound = DEADLINE.set(StoreWait(budget, self.max_wait))
            try:
                response, joined = await self._search(search)
            finally:
                DEADLINE.reset(bound)
        if self.observer is not None:
            self.observer.searched(response, joined=joined)
        return response

    async def _search(self, search: _Search) -> tuple[SearchResponse, bool]:
        """Key → cache → flight (the guarded walk) → cache write; and whether the answer was
        another flight's in this process."""
        caching = search.cache != "off" and self.ttl > 0
        key = search_key(
            self,
            search.params,
            search.ctx,
            search.lineup,
            provider=search.provider,
            preferred=search.preferred,
            excluded=search.excluded,
            fanout=search.fanout,
        )
        store = self.state()
        direct = store.direct
        if caching and search.cache == "use":
            # `_cached` does the same; read here, an in-process store costs no coroutine at all.
            hit = self._behind.read(direct, key) if direct is not None else await self._cached(key)
            if self.observer is not None:
                self.observer.looked_up(hit is not None)
            store.tally.count("stats:hits" if hit is not None else "stats:misses")
            if hit is not None:
                return self._noted(hit), False
        response, joined = await self._flights.lead_or_follow(
            key,
            functools.partial(search.run, _Guards(self, search.lineup)),
            budget=search.budget,
            cache="off" if search.cache == "use" and not caching else search.cache,
            entry=functools.partial(self._entry, search, key, direct) if caching else _uncached,
        )
        return self._noted(response), joined

    def _entry(self, search: _Search, key: str, direct: MemoryStore | None, response: SearchResponse) -> Entry | None:
        """A leader's `response` as the cache is to hold it; None when it is not to be cached,
        or is written behind the search into `direct`, the store when it is in process."""
        if not search.cacheable(response):
            return None
        if direct is not None:
            self._behind.write(direct, key, response, search.params)
            return None
        return encode(key, response, wall_seconds(self.clock)), entry_ttl(search.params, self.ttl), response.provider

    def _joined(self) -> None:
        if self.observer is not None:
            self.observer.joined()

    async def _cached(self, key: str) -> SearchResponse | None:
        store = self.state()
        direct = store.direct
        if direct is not None:
            return self._behind.read(direct, key)
        raw = await store.get(key)
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

    async def aclose(self) -> None:
        """Close the state store, if this engine opened it."""
        if self._resilient is not None:
            # A store too slow for the last search (hung, perhaps) holds the close up no longer
            # than it held that search.
            await self._flights.done(self.max_wait if self._slow else None)
            self._behind.all_written()
            await self._resilient.tally.flush(self.max_wait)
            await self._resilient.aclose()
            self._resilient = None

    async def stats(self) -> dict[str, Any]:
        """Entries, bytes, hits, misses and the hit rate of the cache (`websearch cache stats`)."""
        store = self.state()
        await self._flights.done()
        self._behind.all_written()
        await store.tally.flush()
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
        await self._flights.done()
        self._behind.all_written()
        removed: int = await self.state().clear(PREFIX, tag=provider)
        return removed


def search_key(
    engine: Engine,
    params: SearchParams,
    ctx: ProviderContext,
    lineup: Lineup,
    *,
    provider: str | None,
    preferred: str,
    excluded: frozenset[str],
    fanout: Fanout | None = None,
) -> str:
    """The cache key `engine` gives this search: what makes two searches the same (a
    recording's key too: `websearch._client._recording`)."""
    return cache_key(
        params,
        provider=fanout.key if fanout is not None else provider,
        preferred=preferred,
        excluded=excluded,
        fallback=engine._fallback_ids(ctx),
        lineup=lineup.ids,
        config=engine._answer_print,
    )


class _Behind:
    """Answers to write to an in-process store once their searches have handed them back, by
    key: encoding one (15 us) then runs while the caller's next request is on the wire."""

    def __init__(self, clock: Clock, ttl: float) -> None:
        self.clock = clock
        self.ttl = ttl
        self.due: dict[str, tuple[MemoryStore, SearchResponse, float, SearchParams]] = {}

    def write(self, store: MemoryStore, key: str, response: SearchResponse, params: SearchParams) -> None:
        """Cache an answer in an in-process store just after the search hands it back. A copy
        is kept now, so what the caller does to its response is not cached; a lookup of the
        key, `stats`, `clear` or `aclose` before the write has run makes it at once."""
        self.due[key] = (store, copy_of(response), wall_seconds(self.clock), params)
        # A timer due at once runs after what the loop already has queued (the caller's next
        # request going out among it); `call_soon` would run before it.
        asyncio.get_running_loop().call_later(0, self.written, key)

    def written(self, key: str) -> None:
        """The write behind `key`'s answer, if it is still to be made."""
        behind = self.due.pop(key, None)
        if behind is not None:
            store, template, at, params = behind
            ttl = entry_ttl(params, self.ttl) - max(0.0, wall_seconds(self.clock) - at)  # it lives from `at`
            if ttl > 0:
                store.put(key, encode_copy(key, template, at), ttl, tag=template.provider)

    def all_written(self) -> None:
        for key in list(self.due):
            self.written(key)

    def read(self, store: MemoryStore, key: str) -> SearchResponse | None:
        """The cached answer of `key` in an in-process store (read without awaiting)."""
        if key in self.due:
            self.written(key)
        raw = store.read(key)
        return None if raw is None else decode(key, raw, wall_seconds(self.clock))


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

    async def before(self, info: ProviderInfo, ctx: ProviderContext, budget: Budget) -> Skip | None:
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
        await transport_ready(ctx, budget)  # a cold process's HTTP stack loads before a slot is taken
        return await pacer.wait(info.id, info.label, budget)

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
class _Search:
    """One search: what it asks, of which providers (the chain's selection, or a fan-out), how
    it uses the cache, until when. (Not frozen: one is built per search, cache hits too, and a
    frozen one costs four times as much.)"""

    params: SearchParams
    ctx: ProviderContext
    lineup: Lineup
    provider: str | None
    preferred: str
    excluded: frozenset[str]
    fanout: Fanout | None
    cache: CacheMode
    budget: Budget
    hedge: float | None

    async def run(self, guards: Guards | None) -> SearchResponse:
        """The chain, or the fan-out, each attempt behind `guards`."""
        walk = Walk(guards, self.budget, self.hedge)
        if self.fanout is not None:
            return await run_fanout(self.params, self.ctx, self.lineup, self.fanout, walk)
        return await run_search(
            self.params,
            self.ctx,
            self.lineup,
            provider=self.provider,
            preferred=self.preferred,
            excluded=self.excluded,
            walk=walk,
        )

    def cacheable(self, response: SearchResponse) -> bool:
        """A success (a fan-out's: one that met its quorum) that nothing cut short (a later page
        out of time, a turn paused at the deadline: a search with more time may be whole)."""
        if any(isinstance(notice, CutShort) for notice in response.notices):
            return False
        return self.fanout.cacheable(response) if self.fanout is not None else response.ok


def out_of_time(response: SearchResponse) -> bool:
    """A failure in which time ran out: an attempt timed out, or was not asked for the deadline."""
    return not response.ok and any(a.error_kind == "timeout" or a.skipped == "deadline" for a in response.attempts)


def _uncached(response: SearchResponse) -> None:
    """Not to be cached (the search does not use the cache)."""
    return None


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
