"""`fetch`: one URL to clean text, under the engine's rules.

The order of a read: arguments checked → the URL's policy (scheme, names, allow-list) → the
cache → a flight (identical fetches in flight, in this process or another sharing the store,
make one request) → the host's cooldown (a `Retry-After` it gave) → robots.txt → the host's
pace (`[fetch] host_rate`, 1/s by default, waited for within the deadline) → the safe fetch
(every address vetted and pinned, redirects re-checked, the body capped) → a markdown
alternate the page links to → the extractor → notices (text addressed to the model, a proxy
that defeats address pinning) → the cache (successes only) → the caller's window of the text.

Every failure comes back as a `FetchResponse` with `error` and `error_kind`, never raised; a
caller's wrong argument raises `InvalidSearchParams`, as a search's does.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import sys
from typing import TYPE_CHECKING, Final

from .._core._budget import Budget
from .._core._clock import wall_seconds
from .._core._notices import Notice, hidden_text, not_applied, suspicious
from .._core._pages import FORMATS, FetchFormat, FetchResponse
from .._core._params import CacheMode, check_engine_args
from .._core._types import Attempt
from .._engine._flights import Flights
from .._state._store import DEADLINE, StoreWait
from ..errors import FetchError, FetchHttpError, FetchTimeout, InvalidSearchParams
from ._page_cache import decode, encode, page_key

if TYPE_CHECKING:
    from .._engine._engine import Engine
    from .._http._proxies import Proxies
    from ._extract import Extracted
    from ._fetcher import Fetcher, RawPage
    from ._policy import FetchPolicy, Resolver
    from ._robots import Robots

__all__ = ["Reader", "check_fetch_args"]

COOLDOWN: Final = "fetch-cooldown:"  # a host's Retry-After, kept in the store until it passes
PACE: Final = "pace:host:"
_FETCHER: Final = "websearch._reading._fetcher"
_HTML_TYPES: Final = ("text/html", "application/xhtml+xml")
_MB: Final = 2**20


def check_fetch_args(url: object, max_chars: object, start: object, fmt: object, cache: object) -> None:
    """InvalidSearchParams naming the first argument a fetch cannot take."""
    if not isinstance(url, str) or not url.strip():
        raise InvalidSearchParams("url", f"url must be a non-empty string; got {url!r}")
    for name, value, least in (("max_chars", max_chars, 1), ("start", start, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise InvalidSearchParams(name, f"{name} must be a whole number of at least {least}; got {value!r}")
    if fmt not in FORMATS:
        raise InvalidSearchParams("format", f"format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    check_engine_args(cache, None)


class Reader:
    """Reads pages for one client, on its engine's store, clock and settings. `resolver`
    replaces the system's name lookups (a test's imitation DNS)."""

    def __init__(self, engine: Engine, *, resolver: Resolver | None = None, proxies: Proxies | None = None) -> None:
        from .._http._proxies import Proxies
        from ._policy import FetchPolicy

        settings = engine.settings
        self.engine = engine
        self.clock = engine.clock
        self.policy: FetchPolicy = FetchPolicy(
            allow_hosts=frozenset(str(h).lower() for h in settings.get("fetch.allow_hosts") or ()),
            allow_private=bool(settings.get("fetch.allow_private", False)),
            max_bytes=int(float(settings.get("fetch.max_mb", 10.0)) * _MB),
            robots=bool(settings.get("fetch.robots", True)),
        )
        self.deadline = float(settings.get("fetch.deadline", 30.0))
        #: The proxy of each fetch: `[proxy] fetch` (or `[fetch] proxy`), `[http] proxy`, the environment.
        self.proxies: Proxies = proxies if proxies is not None else Proxies.from_settings(settings, engine.env)
        from .._core._checks import parse_rate

        self.host_rate = parse_rate(str(settings.get("fetch.host_rate", "1/s")))
        ttl = settings.get("fetch.ttl")
        self.ttl = float(ttl) if isinstance(ttl, (int, float)) and not isinstance(ttl, bool) else engine.ttl
        self._resolver = resolver
        #: One fetcher (an HTTP session) and its robots.txt book per event loop that fetched.
        self._fetchers: dict[asyncio.AbstractEventLoop, tuple[Fetcher, Robots]] = {}
        self._flights: Flights[FetchResponse] = Flights(
            self.clock, engine.state, self._cached, _nobody, copy=dataclasses.replace, out_of_time=_out_of_time
        )

    # -- the call ----------------------------------------------------------------------------

    async def fetch(
        self,
        url: str,
        *,
        max_chars: int = 20000,
        start: int = 0,
        fmt: FetchFormat = "markdown",
        cache: CacheMode = "use",
        deadline: float | None = None,
    ) -> FetchResponse:
        """The window `[start, start + max_chars)` of `url`'s text, cut at a boundary."""
        check_fetch_args(url, max_chars, start, fmt, cache)
        url = url.strip()
        budget = Budget.start(self.clock, self.deadline if deadline is None else deadline)
        page = await self.page(url, fmt, cache, budget)
        return _windowed(page, start, max_chars)

    async def page(self, url: str, fmt: FetchFormat, cache: CacheMode, budget: Budget) -> FetchResponse:
        """The whole text of `url` as `fmt` (from the cache, a flight, or read now)."""
        from ._policy import check_url

        try:
            check_url(url, self.policy)
        except FetchError as exc:
            return _failed(url, fmt, exc, 0.0)
        if not self.engine.enabled:
            return await self._read(url, fmt, budget)
        bound = DEADLINE.set(StoreWait(budget, self.engine.max_wait))
        try:
            key = page_key(url, fmt)
            caching = cache != "off" and self.ttl > 0
            if caching and cache == "use":
                hit = await self._cached(key)
                if hit is not None:
                    return hit
            page, _ = await self._flights.lead_or_follow(
                key,
                lambda: self._read(url, fmt, budget),
                budget=budget,
                cache="off" if cache == "use" and not caching else cache,
                entry=self._entry if caching else _uncached,
            )
            if caching and page.ok and not page.cached and page.final_url and page.final_url != url:
                # also under the address the redirects ended at: a fetch of it is a hit too
                entry = self._entry(page)
                if entry is not None:
                    await self.engine.state().set(page_key(page.final_url, fmt), entry[0], entry[1], tag=entry[2])
            return page
        finally:
            DEADLINE.reset(bound)

    async def aclose(self) -> None:
        """Close this loop's fetcher (its connections); those of closed loops are let go."""
        pair = self._fetchers.pop(asyncio.get_running_loop(), None)
        for loop in [loop for loop in self._fetchers if loop.is_closed()]:
            del self._fetchers[loop]
        if pair is not None:
            await pair[0].aclose()

    # -- reading -----------------------------------------------------------------------------

    async def _read(self, url: str, fmt: FetchFormat, budget: Budget) -> FetchResponse:
        """Read `url` now (the flight's leader): cooldown, robots, pace, fetch, extract."""
        started = self.clock.monotonic()
        try:
            raw = await self._raw(url, budget)
            page = await self._extracted(url, raw, fmt, budget)
        except FetchError as exc:
            await self._cool_down(exc)
            return _failed(url, fmt, exc, _ms(self.clock.monotonic() - started))
        except TimeoutError:
            late = FetchTimeout(url, f"{url} was not read before the deadline")
            return _failed(url, fmt, late, _ms(self.clock.monotonic() - started))
        attempt = Attempt("fetch", raw.status, None, _ms(self.clock.monotonic() - started))
        return dataclasses.replace(page, attempts=(attempt,))

    async def _raw(self, url: str, budget: Budget) -> RawPage:
        """The page's bytes, after the host's cooldown, robots.txt and pace allow it."""
        from urllib.parse import urlsplit

        host = (urlsplit(url).hostname or "").lower()
        await self._cooling(url, host)
        fetcher, robots = await self._open()
        if self.policy.robots:
            from ..errors import RobotsDisallowed

            if not await robots.allowed(url, budget):
                raise RobotsDisallowed(url, f"{url} is disallowed by its site's robots.txt for websearch")
        await self._paced(url, host, budget)
        return await fetcher.fetch(url, budget)

    async def _extracted(self, url: str, raw: RawPage, fmt: FetchFormat, budget: Budget) -> FetchResponse:
        """The read page of `raw`: its markdown alternate when it links one, else its extract."""
        from ._extract import markdown_alternate

        notices: list[Notice] = []
        if raw.proxied:
            notices.append(_proxied(raw.proxy_source or "proxy.fetch"))
        source = raw
        if raw.content_type in _HTML_TYPES and fmt == "markdown":
            alternate = markdown_alternate(raw.body, raw.url)
            if alternate is not None and alternate != raw.url:
                source = await self._alternate(alternate, budget) or raw
        # In a thread: extraction is CPU work (tens of ms a page, its first import half a second),
        # which on the loop held up every other search and fetch of the process.
        done, spans, hidden = await asyncio.to_thread(_read_text, source, raw, fmt)
        if spans:
            notices.append(suspicious(spans, "text"))
        if hidden:
            notices.append(hidden_text(hidden))
        return FetchResponse(
            url=url,
            final_url=raw.url,
            status=raw.status,
            content_type=source.content_type,
            format=fmt,
            kind=done.kind,
            title=done.title,
            byline=done.byline,
            published=done.published,
            language=done.language,
            text=done.text,
            total_chars=len(done.text),
            whole_page=done.whole_page,
            pages=done.pages,
            notices=tuple(notices),
        )

    async def _alternate(self, url: str, budget: Budget) -> RawPage | None:
        """The markdown a page links as its alternate, when it can be read and is markdown."""
        try:
            raw = await self._raw(url, budget)
        except FetchError:
            return None
        return raw if raw.content_type in ("text/markdown", "text/x-markdown") else None

    async def _open(self) -> tuple[Fetcher, Robots]:
        """This loop's fetcher and robots.txt book, made on first use. The fetcher's module
        (aiohttp's, some 200 ms) is imported in a thread: on the loop, it stalled every task."""
        loop = asyncio.get_running_loop()
        if _FETCHER not in sys.modules:
            await asyncio.to_thread(importlib.import_module, _FETCHER)
        pair = self._fetchers.get(loop)  # looked up after the wait: the pages of a research open at once
        if pair is None:
            from ._fetcher import Fetcher
            from ._robots import Robots

            fetcher = Fetcher(self.policy, resolver=self._resolver, proxies=self.proxies)
            pair = self._fetchers[loop] = (fetcher, Robots(fetcher, self.clock))
        return pair

    # -- politeness --------------------------------------------------------------------------

    async def _cooling(self, url: str, host: str) -> None:
        """FetchHttpError (429) while the host's `Retry-After` has not passed."""
        if not self.engine.enabled:
            return
        until = await self.engine.state().get(COOLDOWN + host)
        if until is not None:
            left = float(until) - wall_seconds(self.clock)
            if left > 0:
                message = f"{host} asked websearch to wait (Retry-After); {url} is not asked for {left:.0f} s more"
                raise FetchHttpError(url, message, 429, retry_after=left)

    async def _cool_down(self, exc: FetchError) -> None:
        """Keep a host's `Retry-After` so that no process asks it again before then."""
        if exc.retry_after is None or not self.engine.enabled or exc.retry_after <= 0:
            return
        from urllib.parse import urlsplit

        host = (urlsplit(exc.url).hostname or "").lower()
        until = wall_seconds(self.clock) + exc.retry_after
        await self.engine.state().set(COOLDOWN + host, repr(until).encode(), exc.retry_after)

    async def _paced(self, url: str, host: str, budget: Budget) -> None:
        """Wait for the host's next request slot; FetchTimeout when it comes after the deadline."""
        if not self.engine.enabled:
            return
        store = self.engine.state()
        wait = await store.take(PACE + host, self.host_rate, 1.0)
        if wait <= 0:
            return
        left = budget.remaining()
        if left is not None and wait > left:
            await store.untake(PACE + host, self.host_rate, 1.0)
            message = f"{url} was not asked: {host}'s next request slot ({self.host_rate:g}/s) comes after the deadline"
            raise FetchTimeout(url, message)
        try:
            await self.clock.sleep(wait)
        except asyncio.CancelledError:
            await asyncio.shield(store.untake(PACE + host, self.host_rate, 1.0))
            raise

    # -- the cache ---------------------------------------------------------------------------

    async def _cached(self, key: str) -> FetchResponse | None:
        data = await self.engine.state().get(key)
        return None if data is None else decode(data, wall_seconds(self.clock))

    def _entry(self, page: FetchResponse) -> tuple[bytes, float, str | None] | None:
        """A read page as the cache holds it; None for a failure (asked again next time)."""
        if not page.ok:
            return None
        return encode(page, wall_seconds(self.clock)), self.ttl, "fetch"


def _proxied(source: str) -> Notice:
    """The notice of a page read through a proxy, named by the setting or variable that chose it."""
    return not_applied(
        source,
        "(set)",
        "for address pinning: through a proxy, the proxy connects, so websearch checked the name's own "
        "addresses but cannot hold the connection to them",
    )


def _read_text(
    source: RawPage, raw: RawPage, fmt: FetchFormat
) -> tuple[Extracted, list[tuple[int, int, str]], list[str]]:
    """The extract of `source` (the page, or its markdown alternate), the spans of its text that
    address the model, and the hidden text of `raw`'s HTML that does."""
    from ._extract import extract
    from ._suspicious import find_suspicious, hidden_html_text

    done = extract(source.body, url=source.url, content_type=source.content_type, charset=source.charset, fmt=fmt)
    spans = [(s.start, s.end, s.reason) for s in find_suspicious(done.text)]
    hidden = hidden_html_text(raw.body) if raw.content_type in _HTML_TYPES else []
    return done, spans, hidden


def _windowed(page: FetchResponse, start: int, max_chars: int) -> FetchResponse:
    """The caller's window of a whole page."""
    if not page.ok:
        return page
    from ._window import window

    cut = window(page.text, start, max_chars)
    if cut.text is page.text:
        return page  # the window is the whole page: nothing to cut (a copy was a cached page's 10 us)
    return dataclasses.replace(page, text=cut.text, start=cut.start, next_start=cut.next_start, truncated=cut.truncated)


def _failed(url: str, fmt: str, exc: FetchError, duration_ms: float) -> FetchResponse:
    attempt = Attempt("fetch", exc.status, exc.message, duration_ms, exc.kind, exc.retry_after)
    return FetchResponse(
        url=url,
        status=exc.status,
        content_type=exc.content_type,
        format=fmt,
        attempts=(attempt,),
        error=exc.message,
        error_kind=exc.kind,
        retry_after_s=exc.retry_after,
    )


def _out_of_time(page: FetchResponse) -> bool:
    return page.error_kind == "timeout"


def _uncached(page: FetchResponse) -> None:
    return None


def _nobody() -> None:
    """No observer counts a fetch's joins (yet)."""


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)
