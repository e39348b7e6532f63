"""`WebSearch`: the client that owns settings, credentials, the provider list, one HTTP session
and the clock.

Async first (`asearch`); `search` runs the same coroutine on a private event loop in a
background thread, so it also works where a loop is already running (notebooks, servers). One
client may serve several loops at once (that private loop beside the caller's, or threads of
their own): the transport keeps a session per loop and the engine shares flights across them. The
command line and the MCP server do everything through this class: searches, the provider
listing and the stored credentials.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import inspect
import json
import os
import sys
import threading
import weakref
from collections.abc import Coroutine, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self

from .._core._clock import Clock, SystemClock, wall_seconds
from .._core._context import ProviderContext, Sends, SendsRequests, complete
from .._core._credentials import CredentialStore
from .._core._fork import INHERITED, in_child
from .._core._locale import apply_locale_settings, locale_defaults, record_locale
from .._core._notices import clamped
from .._core._params import LOCALE_PARAMS, CacheMode, check_engine_args, provider_with_fanout
from .._core._registry import PROVIDERS
from .._core._settings import DEFAULT_ATTEMPT_TIMEOUT, Settings
from .._core._settings import config_dir as default_config_dir
from .._core._types import LocaleSource, SearchParams, SearchResponse
from .._engine._chain import resolve_chain
from .._engine._engine import Engine, credential_fingerprint, search_key
from .._engine._fanout import DEFAULT_SOFT_DEADLINE, FUSED, PUBLIC, Fanout
from .._engine._health import describe
from .._engine._lineup import Lineup
from .._http._deferred import DeferredTransport, loaded
from .._http._proxies import Proxies
from ..errors import InvalidSearchParams
from ._arguments import as_list, left_out, unknown_params
from ._keys import Keys
from ._reading import Reads
from ._recording import INSIDE as _INSIDE
from ._recording import known_secrets, recording_for, search_request

if TYPE_CHECKING:
    from .._core._pages import FetchResponse, ResearchResponse
    from .._http._transport import Transport
    from .._providers._base import Provider
    from .._reading._policy import Resolver
    from .._state._store import Store

__all__ = [
    "DEFAULT_MAX_PROVIDERS",
    "ProviderStatus",
    "WebSearch",
    "afetch",
    "aresearch",
    "asearch",
    "fetch",
    "research",
    "search",
]

#: `fanout.max_providers` when unset: the most providers one fan-out asks.
DEFAULT_MAX_PROVIDERS = 6


@dataclass(frozen=True, slots=True)
class ProviderStatus:
    """One row of `websearch providers`."""

    id: str
    label: str
    available: bool
    reason: str  # what would make it available (meaningful when it is not)
    preferred: bool
    excluded: bool
    #: Left out of the automatic chain by `providers.webSearchOrderOnly` (it may still be chosen).
    left_out: bool = False
    #: Seconds one attempt at it may take (`[timeout]`, `providers.webSearchTimeoutSeconds`; None for public).
    timeout: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The row as a JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class _Planned:
    """What `asearch` makes of its arguments before it searches: the parameters, the providers
    asked for, the lineup, the excluded ids, the context, the fan-out and where each locale
    value came from."""

    params: SearchParams
    asked: list[str] | None
    lineup: Lineup
    excluded: frozenset[str]
    ctx: ProviderContext
    fanout: Fanout | None
    locale_sources: dict[str, LocaleSource] | None


class WebSearch(Reads, Keys):
    """A reusable search client. Use one per application; close it when done.

    `env` defaults to `os.environ`; `config_dir` to `$WEBSEARCH_CONFIG_DIR` or the user config
    directory; `timeout` (seconds per HTTP request) to the setting `http.timeout`, else 60.
    `api_keys` maps provider ids to keys that win over the environment and agent.db.
    `providers` fixes the chain: exactly these, in this order (built-in ids, or provider objects
    of your own), each still gated by availability and `providers.webSearchExclude`; the default
    is the setting `providers.list` (env `WEBSEARCH_PROVIDERS`), else every built-in provider,
    with the automatic chain in the order of `providers.webSearchOrder` (then the others, unless
    `providers.webSearchOrderOnly`).
    `store` is the state store of the cache, single-flight, provider health and pacing (default:
    `[state]` settings: SQLite in the user cache directory, or Redis); `engine=False` (or
    `WEBSEARCH_ENGINE=off`) turns those off, leaving every search to go upstream as asked.
    `transport` replaces the built-in HTTP transport (see `SendsRequests` and `BaseTransport`);
    `resolver` the system's name lookups of `fetch` and `research` (an object with
    `async resolve(host, port) -> list[str]`: a test's imitation DNS; every address it gives is
    still checked). `record` appends every search, fetch and research to that JSON Lines file;
    `replay` answers them from it alone (a call it does not hold raises `ReplayMiss`); both, with
    one path, replay what it holds and record the rest. Unset, `WEBSEARCH_REPLAY` (a path to
    replay), else the settings `[replay] path` and `mode` decide (see docs/replay.md).
    """

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        config_dir: Path | str | None = None,
        settings: Settings | None = None,
        credentials: CredentialStore | None = None,
        api_keys: Mapping[str, str] | None = None,
        timeout: float | None = None,
        clock: Clock | None = None,
        transport: Sends | None = None,
        providers: Iterable[str | Provider] | None = None,
        store: Store | None = None,
        engine: bool | None = None,
        resolver: Resolver | None = None,
        record: str | os.PathLike[str] | None = None,
        replay: str | os.PathLike[str] | None = None,
    ) -> None:

        from .._core._environ import Environ

        # os.environ itself raises and catches a KeyError for each unset name a search asks for
        self.env: Mapping[str, str] = Environ() if env is None or env is os.environ else env
        directory = Path(config_dir) if config_dir is not None else default_config_dir(self.env)
        self.settings = settings if settings is not None else Settings.load(directory, self.env)
        self.credentials = credentials if credentials is not None else CredentialStore(directory / "agent.db")
        self.clock: Clock = clock or SystemClock()
        self.timeout = timeout if timeout is not None else self.settings.http_timeout
        if not 0 < self.timeout < float("inf"):
            raise ValueError(f"timeout must be a positive number of seconds, got {self.timeout}")
        #: Each request's proxy (`[proxy] <id>`, `[http] proxy`, the environment): checked here,
        #: so a malformed proxy, or a SOCKS one without the socks extra, fails now.
        self._proxies = Proxies.from_settings(self.settings, self.env)
        if providers is not None:  # a list given in code keeps its order
            self.lineup = Lineup(providers)
        else:
            settings = self.settings
            self.lineup = Lineup(settings.provider_list, order=settings.search_order, only=settings.search_order_only)
        self._locale_defaults = locale_defaults(self.settings)  # read once: settings do not change under a client
        self._api_keys = dict(api_keys or {})
        enabled = engine if engine is not None else self.env.get("WEBSEARCH_ENGINE", "on").strip().lower() != "off"
        # Checked once, here: downstream, every transport has all of `SendsRequests`.
        seam: SendsRequests | None = None if transport is None else complete(transport)
        if store is None and seam is not None and seam.in_process:
            from .._state import MemoryStore

            store = MemoryStore(self.clock)  # a transport that reaches nothing real shares no real state
        self.engine = Engine(self.settings, self.env, self.clock, store, enabled)
        self._transport = seam
        self._owns_transport = seam is None
        self._built_in: DeferredTransport | Transport | None = None  # the transport made here, once made
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._loop_lock = threading.Lock()
        self._armed = False  # in `_UNCLOSED`, to be closed at exit unless closed before
        self._resolver = resolver
        self._recording = recording_for(record, replay, self.settings, self.env, self.clock, self._secrets)

    def __repr__(self) -> str:
        return f"WebSearch(config={self.settings.path}, timeout={self.timeout:g})"

    # -- async ---------------------------------------------------------------------------------

    def _context(self, *, with_transport: bool = True) -> ProviderContext:
        transport = self._transport
        if transport is None and with_transport:
            transport = self._transport = self._built_in = self._new_transport()
        elif type(transport) is DeferredTransport and transport.real is not None:
            transport = self._transport = self._built_in = transport.real  # loaded: straight to it from now on
        if with_transport and not self._armed:
            _close_at_exit(self)
        return ProviderContext(
            self.env, self.settings, self.credentials, transport, self.clock, self._api_keys, timeout=self.timeout
        )

    def _secrets(self) -> list[str]:
        """Every credential this client knows, which a recording keeps out of its lines."""
        infos = [*PROVIDERS.values(), *self.lineup.infos()]
        return known_secrets(self.env, self.settings, self._api_keys.values(), self.credentials, infos)

    def _new_transport(self) -> DeferredTransport | Transport:
        """The built-in transport; until aiohttp is imported, one that imports it in a thread
        on the first request (the import takes about 200 ms, which would stall the loop)."""
        labels = {info.id: info.label for info in self.lineup.infos()}
        stream, event = self.settings.stream_limits
        options = {
            "timeout": self.timeout,
            "env": self.env,
            "labels": labels,
            "max_stream_bytes": stream,
            "max_event_bytes": event,
            "proxies": self._proxies,
        }
        module = loaded()
        return DeferredTransport(**options) if module is None else module.Transport(**options)

    def provider_status(self) -> list[ProviderStatus]:
        """Every provider of this client in chain order: available or not, and what would make it
        so; then `public`, the fan-out over every available keyless engine (explicit only)."""
        ctx = self._context(with_transport=False)
        available = self.lineup.scan(ctx).available
        preferred, excluded = self.settings.preferred_provider, self.settings.excluded_providers
        keyless = [i for i in self.lineup.ids if self.lineup.info(i).tier == "keyless" and i not in excluded]
        engines = [i for i in keyless if i in available]
        public = ProviderStatus(
            PUBLIC,
            "Public",
            bool(engines),
            f"all keyless engines at once: {', '.join(engines)}" if engines else "no keyless engine is available",
            preferred == PUBLIC,
            False,
        )
        return [*self._rows(ctx, available, preferred, excluded), public]

    def _rows(
        self, ctx: ProviderContext, available: frozenset[str], preferred: str, excluded: frozenset[str]
    ) -> list[ProviderStatus]:
        """The providers in the automatic chain's order, then those it leaves out."""
        lineup, settings = self.lineup, self.settings
        ids = (*lineup.auto_ids, *(i for i in lineup.ids if lineup.left_out(i)))
        return [
            ProviderStatus(
                info.id,
                info.label,
                info.id in available,
                lineup.reason(info.id, ctx),
                info.id == preferred,
                info.id in excluded,
                lineup.left_out(info.id),
                (settings.attempt_timeout(info.id) or (DEFAULT_ATTEMPT_TIMEOUT, ""))[0],
            )
            for info in map(lineup.info, ids)
        ]

    async def asearch(
        self,
        query: str,
        *,
        provider: str | None = None,
        exclude: Iterable[str] = (),
        providers: Iterable[str] | None = None,
        cache: CacheMode = "use",
        deadline: float | None = None,
        hedge: float | None = None,
        fanout: Iterable[str] | None = None,
        **params: Any,
    ) -> SearchResponse:
        """Search once. Provider failures come back as a response with `error` set; invalid
        parameters raise `InvalidSearchParams`; cancellation raises `asyncio.CancelledError`.

        `provider` forces one provider ("auto" walks the automatic chain, ignoring the
        `providers.webSearch` preference; a forced provider that fails is followed by the
        `providers.webSearchFallback` tier); `exclude` adds ids the automatic chain must skip;
        `providers` narrows the chain to exactly these ids, in this order, for this search.
        `cache` is "use" (serve a fresh cached answer), "refresh" (search anew, then cache) or
        "off"; `deadline` bounds the whole search in seconds (default `search.deadline`, else 30;
        for the deep modes `search.deep_deadline`, else 120); `hedge` starts the next provider
        beside one that has not answered within that many seconds. `fanout` asks these providers at once and fuses their
        results (`provider="public"`: every available keyless engine); the setting
        `providers.webSearchFanout` makes it the default. `params` are the fields of
        `SearchParams`; `num_results` is accepted for `limit`. `country`, `language` and
        `safesearch` left out come from the `[search]` settings; `response.locale` says which
        were set, from where, and whether the serving provider applied them."""
        if cache != "use" or deadline is not None or hedge is not None:  # else nothing to check
            check_engine_args(cache, deadline, hedge)
        planned = self._planned(query, provider, exclude, providers, fanout, params)
        preferred = self.settings.preferred_provider
        recording = self._recording
        if recording is not None and _INSIDE.get():
            recording = None  # a research's own search: the research is the call recorded
        if recording is not None:
            key = self._key(planned, provider)
            found = recording.lookup(SearchResponse, key, query)
            if found is not None:
                return found
        response = await self.engine.search(
            planned.params,
            planned.ctx,
            planned.lineup,
            provider=provider,
            preferred=preferred,
            excluded=planned.excluded,
            cache=cache,
            deadline=deadline,
            hedge=hedge,
            fanout=planned.fanout,
        )
        if planned.asked is not None or planned.locale_sources is not None:
            self._after(response, planned, provider, preferred)
        if recording is not None:
            excluded = planned.excluded - self.settings.excluded_providers
            request = search_request(planned.params, provider, planned.asked, excluded, planned.fanout)
            recording.add(key, request, response)
        return response

    def _after(self, response: SearchResponse, planned: _Planned, provider: str | None, preferred: str) -> None:
        """What a response says beyond the engine's answer (never cached, so said on every search):
        the providers asked for that could not serve, and the locale's record."""
        asked, ctx, lineup, excluded = planned.asked, planned.ctx, planned.lineup, planned.excluded
        if asked is not None and planned.fanout is None and provider in (None, "auto"):
            chain = resolve_chain(ctx, lineup, "auto" if provider == "auto" else preferred, excluded)
            _, left = left_out("providers", asked, excluded, chain.__contains__, lineup, ctx)
            if left:
                response.notices = (*left, *response.notices)
        if planned.locale_sources is not None:
            locale = {name: getattr(planned.params, name) for name in LOCALE_PARAMS}
            record_locale(response, locale, planned.locale_sources)

    def _key(self, planned: _Planned, provider: str | None) -> str:
        """The engine's cache key of a planned search (what a recording keys it by)."""
        return search_key(
            self.engine,
            planned.params,
            planned.ctx,
            planned.lineup,
            provider=provider,
            preferred=self.settings.preferred_provider,
            excluded=planned.excluded,
            fanout=planned.fanout,
        )

    def _planned(
        self,
        query: str,
        provider: str | None,
        exclude: Iterable[str],
        providers: Iterable[str] | None,
        fanout: Iterable[str] | None,
        params: dict[str, Any],
    ) -> _Planned:
        """What `asearch` makes of its arguments before it searches."""
        if "num_results" in params:  # the MCP tool's name for limit
            alias = params.pop("num_results")
            if params.get("limit") is not None and alias is not None and params["limit"] != alias:
                raise InvalidSearchParams(
                    "num_results",
                    f"num_results is another name for limit; give one of them; got {alias} and {params['limit']}",
                )
            params["limit"] = params.get("limit") if params.get("limit") is not None else alias
        locale_sources = apply_locale_settings(params, self._locale_defaults)
        try:
            search_params = SearchParams(query, **params)
        except TypeError as exc:  # an unknown keyword
            raise unknown_params(params, exc, inspect.signature(WebSearch.asearch).parameters) from None
        asked = None if providers is None else as_list(providers)  # once: it may be an iterator
        lineup = self.lineup if asked is None else self.lineup.narrowed(asked)
        excluded = self.settings.excluded_providers
        if exclude:
            excluded = excluded | frozenset(self._known(name, param="exclude") for name in as_list(exclude))
        if provider is not None and provider not in ("auto", PUBLIC):
            self._known(provider, lineup, said=("auto", PUBLIC))
        ctx = self._context()
        plan = self._fanout(provider, fanout, lineup, excluded, ctx)
        return _Planned(search_params, asked, lineup, excluded, ctx, plan, locale_sources)

    def _search_key(self, query: str, options: Mapping[str, Any]) -> str:
        """The key `asearch(query, **options)` searches under (a research's search)."""
        params = dict(options)
        provider = params.pop("provider", None)
        exclude, providers = params.pop("exclude", ()), params.pop("providers", None)
        fanout = params.pop("fanout", None)
        for name in ("cache", "deadline", "hedge"):
            params.pop(name, None)
        return self._key(self._planned(query, provider, exclude, providers, fanout, params), provider)

    def _fanout(
        self,
        provider: str | None,
        fanout: Iterable[str] | None,
        lineup: Lineup,
        excluded: frozenset[str],
        ctx: ProviderContext,
    ) -> Fanout | None:
        """The fan-out this search makes, if any: `public`, the `fanout` argument, or the
        setting; providers not available here are left out with a notice, and the list is cut
        to `fanout.max_providers` with one."""
        if fanout is None and provider is not None and provider != PUBLIC:
            return None  # a chosen provider: the common case, decided before any setting is read
        setting: list[str] = self.settings.get("providers.webSearchFanout") or []
        preferred = self.settings.preferred_provider
        public = provider == PUBLIC or (provider is None and fanout is None and preferred == PUBLIC)
        if fanout is not None and provider not in (None, "auto"):  # auto beside a fanout: the fanout
            raise provider_with_fanout(provider, list(fanout))
        if not public and fanout is None and not setting:
            return None
        soft = self.settings.get_number("fanout.soft_deadline", DEFAULT_SOFT_DEADLINE)
        available = lineup.scan(ctx).available
        if public:
            keyless = [i for i in lineup.ids if lineup.info(i).tier == "keyless" and i not in excluded]
            return Fanout(tuple(i for i in keyless if i in available), PUBLIC, soft)
        names = [
            self._known(name, lineup, param="fanout") for name in (as_list(fanout) if fanout is not None else setting)
        ]
        # The excluded are left out as `providers=` and public leave them out: they were asked.
        ids, notices = left_out("fanout", names, excluded, lambda i: lineup.may_run(i, ctx), lineup, ctx)
        cap = int(self.settings.get_number("fanout.max_providers", DEFAULT_MAX_PROVIDERS))
        if len(ids) > cap:
            notices.append(clamped("fanout", list(ids), f"the first {cap}", "the setting fanout.max_providers"))
            ids = ids[:cap]
        return Fanout(ids, "fanout", soft, tuple(notices))

    async def aclose(self) -> None:
        """Close the HTTP session (only one this client created; the sync `search`'s too, when
        it ran on this client's private loop) and the state store. A search still in flight on
        a closed session ends cancelled (`asyncio.CancelledError`; no provider is blamed)."""
        if self._owns_transport and self._transport is not None:
            await self._transport.aclose()
            private = self._loop
            if private is not None and private is not asyncio.get_running_loop() and private.is_running():
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._transport.aclose(), private))
        await self._close_reader()
        await self.engine.aclose()
        _UNCLOSED.discard(self)
        self._armed = False

    # -- the engine's state ----------------------------------------------------------------------

    async def cache_stats(self) -> dict[str, Any]:
        """The cache's entries, bytes, hits, misses and hit rate (`websearch cache stats`);
        StoreUnavailable when the shared store could not serve them."""
        stats = await self.engine.stats()
        self._reached()
        return stats

    async def clear_cache(self, provider: str | None = None) -> int:
        """Drop cached answers (those `provider` served, when given: a provider id, or `public`
        or `fanout` for the fused answers); how many. StoreUnavailable when the shared store
        could not be cleared."""
        tag = None if not provider else provider if provider in FUSED else self._known(provider, said=FUSED)
        removed = await self.engine.clear(tag)
        self._reached()
        return removed

    async def provider_health(self) -> dict[str, str]:
        """Each provider that is cooling down, whose circuit is open or whose key (this client's)
        was refused, with what and until when."""
        health = self.engine.health()
        ctx = self._context(with_transport=False)
        states: dict[str, str] = {}
        for info in self.lineup.infos():
            record = await health.record(info.id)
            state = describe(record, credential_fingerprint(info, ctx), wall_seconds(self.clock)) if record else None
            if state is not None:
                states[info.id] = state
        return states

    async def reset_health(self, provider: str) -> None:
        """Forget a provider's cooldown or open circuit (`websearch providers --reset ID`);
        StoreUnavailable when the shared store, which holds it, could not be reached."""
        await self.engine.health().reset(self._known(provider))
        self._reached()

    def _reached(self) -> None:
        """StoreUnavailable when the last call on the state store ran on in-process state."""
        degraded = self.engine.state().degraded
        if degraded:
            from .._state import StoreUnavailable

            raise StoreUnavailable(degraded)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- sync ----------------------------------------------------------------------------------

    def search(self, query: str, **params: Any) -> SearchResponse:
        """Blocking `asearch`, run on this client's private event loop."""
        future: Future[SearchResponse] = asyncio.run_coroutine_threadsafe(
            self.asearch(query, **params), self._private_loop()
        )
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            raise

    def close(self) -> None:
        """Close the sessions and the state store, and stop the private loop. A client used
        only from loops now closed (`asyncio.run` after `asyncio.run`) still holds the last one's
        session, its store and its unwritten counts: they are closed on a loop of the calling
        thread's own (on the private loop, started for it, when a loop runs in this thread; the
        running loop's own session is then closed on that loop, without waiting)."""
        self._close(None)

    def _close(self, within: float | None) -> None:
        """`close`, given up after `within` seconds (TimeoutError): at exit, a store or a peer
        that does not answer must not hold the process up."""
        opened = (self._owns_transport and self._transport is not None) or self.engine.opened
        if self._loop is None and not opened:
            return
        if self._loop is None and not _loop_running():
            # No private loop: close on a loop of this thread's own, starting no thread (which
            # Python 3.12 refuses at exit, where the clients left open are closed).
            asyncio.run(asyncio.wait_for(self.aclose(), within))
            return
        loop = self._private_loop()
        thread = self._thread
        assert thread is not None
        closing = self.aclose()
        try:
            asyncio.run_coroutine_threadsafe(closing, loop).result(within)
        finally:  # the loop stops next: a search left pending on it leaves its caller waiting for ever
            asyncio.run_coroutine_threadsafe(_cancel_all_but(closing), loop).result(_CLOSE_WITHIN + 1)
        if self._built_in is not None and _loop_running():  # the session of the loop running this
            self._built_in.close_soon()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
        self._loop = self._thread = None

    def __del__(self) -> None:
        """A client dropped without `close` (`WebSearch().search(q)` on one line) releases what
        it opened, as `close` does, within `_CLOSE_WITHIN` seconds: its private loop's thread and
        its store's worker outlived it (two threads a client, for the life of the process), and
        aiohttp said its sessions unclosed at exit. Dropped on its own loop's thread (in a cycle
        the collector found there), it is closed on that loop without waiting for itself."""
        if not getattr(self, "_armed", False) or sys.is_finalizing():
            return  # nothing opened, or closed already; at exit, `_close_unclosed` closed it
        with contextlib.suppress(Exception):  # a collection must not fail the code it interrupted
            if self._thread is not None and self._thread is threading.current_thread():
                loop = self._loop
                assert loop is not None
                loop.create_task(self.aclose()).add_done_callback(lambda _: loop.stop())
            else:
                self._close(_CLOSE_WITHIN)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _after_fork(self) -> None:
        """In a child made by `fork`: what the parent's threads ran is not here (the private
        loop's thread, the store's worker), and the sessions' sockets and the loops' selectors
        are shared with the parent, so closing them would act on the parent's. They are left
        as they are, kept from being collected, and made afresh on first use."""
        transport = self._built_in
        if transport is not None:
            transport.abandon()
        INHERITED.append((self._loop, self._thread, transport, self.engine))
        if self._recording is not None:
            self._recording.after_fork()
        self._loop = self._thread = None
        self._loop_lock = threading.Lock()
        if self._owns_transport:
            self._transport = self._built_in = None
        old = self.engine
        self.engine = Engine(self.settings, self.env, self.clock, old.store, old.enabled, observer=old.observer)

    def _private_loop(self) -> asyncio.AbstractEventLoop:
        with self._loop_lock:  # several threads may make their first search at once
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="websearch-loop", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def _known(
        self, name: str, lineup: Lineup | None = None, *, param: str = "provider", said: tuple[str, ...] = ()
    ) -> str:
        """`name` if `lineup` (this client's) has it; else InvalidSearchParams naming `param`, the
        argument it came in, and what it may be: the lineup's ids after `said`, the other names
        the caller checked for already."""
        lineup = lineup or self.lineup
        if name not in lineup:
            names = ", ".join((*said, *lineup.ids))
            raise InvalidSearchParams(param, f"{param} must be one of: {names}; got {json.dumps(name)}")
        return name


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def asearch(query: str, **params: Any) -> SearchResponse:
    """Search with a short-lived client. For many searches, reuse a `WebSearch`."""
    async with WebSearch() as client:
        return await client.asearch(query, **params)


async def afetch(url: str, **options: Any) -> FetchResponse:
    """Read a page with a short-lived client (`WebSearch.afetch`)."""
    async with WebSearch() as client:
        return await client.afetch(url, **options)


async def aresearch(query: str, **options: Any) -> ResearchResponse:
    """Research a question with a short-lived client (`WebSearch.aresearch`)."""
    async with WebSearch() as client:
        return await client.aresearch(query, **options)


#: Clients that have searched and are not closed yet: closed at exit, so a script that never
#: calls `close` (`ws = WebSearch(); ws.search(...)`) ends without aiohttp's "Unclosed client
#: session" lines and with its hit and miss counts written. Weak: a client dropped before exit
#: is not kept, and closes itself (`WebSearch.__del__`).
_UNCLOSED: Final[weakref.WeakSet[WebSearch]] = weakref.WeakSet()


def _close_at_exit(client: WebSearch) -> None:
    _UNCLOSED.add(client)
    client._armed = True  # a flag, not a look in the set: a search checks it (the set makes a weakref)


def _close_unclosed() -> None:
    for client in list(_UNCLOSED):
        with contextlib.suppress(Exception):  # at exit: one client's failure must not keep the rest open
            client._close(_CLOSE_WITHIN)


async def _cancel_all_but(closing: Coroutine[Any, Any, None]) -> None:
    """Cancel every task on the running loop but this one and `closing` (a client's `aclose`,
    which, when it could not finish, is left to be reported pending), and wait for them: the
    searches a close did not end (a request it cut whose end has not run yet, a wait on a
    transport of the caller's) end cancelled, and their blocking callers with them."""
    current = asyncio.current_task()
    pending = [task for task in asyncio.all_tasks() if task is not current and task.get_coro() is not closing]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=_CLOSE_WITHIN)


#: Seconds a client closed for its user (left open at exit, or dropped without `close`) may take.
_CLOSE_WITHIN: Final = 5.0
atexit.register(_close_unclosed)


def _forked() -> None:
    global _default_lock
    _default_lock = threading.Lock()  # another thread may have held it at the fork
    for client in list(_UNCLOSED):
        client._after_fork()


in_child(_forked)


_default: WebSearch | None = None
_default_lock = threading.Lock()


def search(query: str, **params: Any) -> SearchResponse:
    """Blocking search through a process-wide client (closed at exit)."""
    return _default_client().search(query, **params)


def _default_client() -> WebSearch:
    global _default
    with _default_lock:
        if _default is None:
            _default = WebSearch()  # closed at exit, as every client left open is
    return _default


def fetch(url: str, **options: Any) -> FetchResponse:
    """Blocking fetch through the process-wide client (`WebSearch.fetch`)."""
    return _default_client().fetch(url, **options)


def research(query: str, **options: Any) -> ResearchResponse:
    """Blocking research through the process-wide client (`WebSearch.research`)."""
    return _default_client().research(query, **options)
