"""robots.txt, read as RFC 9309 says, so `fetch` reads only what a site lets websearch read.

Each origin's robots.txt is fetched once through the same fetcher (its checks, redirects and
proxy), at most `ROBOTS_BYTES` of it, and kept in memory for a TTL on the injected clock. The
rules matched are those of the agent token `websearch` (else the `*` group). The file's absence
means everything is allowed; a server that fails (5xx, 429) means nothing is, until the TTL
passes (a site whose robots.txt fails may be down or may be refusing crawlers). A site that
cannot be reached at all is not a refusal: `allowed` raises its FetchConnectionError, which is
what reading the page would have met.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final
from urllib.parse import urlunsplit

from protego import Protego

from ..errors import (
    FetchConnectionError,
    FetchError,
    FetchHttpError,
    FetchTimeout,
    PageBlocked,
    TooManyRedirects,
    UrlNotAllowed,
)
from ._page_cache import origin as origin_of
from ._policy import check_url

if TYPE_CHECKING:
    from .._core._budget import Budget
    from .._core._clock import Clock
    from ._fetcher import Fetcher

__all__ = ["AGENT", "MAX_ORIGINS", "ROBOTS_BYTES", "Robots"]

#: The product token robots.txt groups are matched against.
AGENT: Final = "websearch"
#: How much of a robots.txt is read (RFC 9309 asks crawlers to parse at least 500 KiB).
ROBOTS_BYTES: Final = 512 * 1024
#: How many origins' rules are kept in memory at most.
MAX_ORIGINS: Final = 4096

#: An origin's rules: parsed, or everything allowed (True) or nothing (False).
_Rules = Protego | bool


class Robots:
    """The robots.txt rules of the origins fetched, per origin, for `ttl` seconds of `clock`.

    RFC 9309's cases: robots.txt answered 2xx → its rules; 4xx (not 429) → everything allowed;
    5xx, 429, or the site unreachable (refused, reset, a name that does not resolve) → nothing
    allowed for that origin until the TTL passes; redirects are followed as the fetcher follows
    them; a file past `ROBOTS_BYTES` is read up to there. A challenge page instead of the file
    allows everything (the page's own fetch then reports the challenge). The deadline passing,
    or an origin the fetch policy bars, raises (FetchTimeout, UrlNotAllowed) and is not cached.
    With the fetcher's policy `robots` off, every URL is allowed without fetching anything."""

    def __init__(self, fetcher: Fetcher, clock: Clock, ttl: float = 3600) -> None:
        self._fetcher = fetcher
        self._clock = clock
        self._ttl = ttl
        self._rules: dict[str, tuple[float, _Rules]] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def allowed(self, url: str, budget: Budget) -> bool:
        """Whether robots.txt lets websearch fetch `url` (fetching robots.txt within `budget`
        if it is not cached). Raises FetchTimeout or UrlNotAllowed."""
        if not self._fetcher.policy.robots:
            return True
        parts = check_url(url, self._fetcher.policy)
        origin = origin_of(parts)
        rules = self._fresh(origin)
        if rules is None:
            lock = self._locks.setdefault(origin, asyncio.Lock())
            try:
                async with asyncio.timeout(budget.remaining()), lock:
                    rules = self._fresh(origin)
                    if rules is None:
                        rules = await self._load(origin, budget)
                        self._keep(origin, rules)
            except TimeoutError:
                shown = f"{origin}/robots.txt"
                raise FetchTimeout(shown, f"{shown} was not read before the deadline; allow more time") from None
            finally:
                if not lock.locked():  # a caller still waiting holds its own reference
                    self._locks.pop(origin, None)
        if isinstance(rules, bool):
            return rules
        return rules.can_fetch(urlunsplit(parts._replace(fragment="")), AGENT)

    def crawl_delay(self, url: str) -> float | None:
        """The Crawl-delay (seconds) the cached robots.txt of `url`'s origin asks of websearch,
        if it has been read and names one."""
        try:
            origin = origin_of(check_url(url, self._fetcher.policy))
        except UrlNotAllowed:
            return None
        rules = self._fresh(origin)
        return rules.crawl_delay(AGENT) if isinstance(rules, Protego) else None

    def _keep(self, origin: str, rules: _Rules) -> None:
        now = self._clock.monotonic()
        if len(self._rules) >= MAX_ORIGINS:  # a long-running server reads many sites: forget the stale
            self._rules = {o: kept for o, kept in self._rules.items() if kept[0] > now}
            for old in list(self._rules)[: max(0, len(self._rules) - MAX_ORIGINS // 2)]:
                del self._rules[old]  # the oldest read first
        self._rules.pop(origin, None)
        self._rules[origin] = (now + self._ttl, rules)

    def _fresh(self, origin: str) -> _Rules | None:
        cached = self._rules.get(origin)
        if cached is None or cached[0] <= self._clock.monotonic():
            return None
        return cached[1]

    async def _load(self, origin: str, budget: Budget) -> _Rules:
        try:
            page = await self._fetcher.fetch(
                f"{origin}/robots.txt",
                budget,
                accept="text/plain, */*;q=0.1",
                max_bytes=ROBOTS_BYTES,
                truncate=True,
            )
        except FetchHttpError as exc:
            return exc.status is not None and 400 <= exc.status < 500 and exc.status != 429
        except (PageBlocked, TooManyRedirects):
            return True  # RFC 9309: too many redirects count as no robots.txt
        except (FetchTimeout, UrlNotAllowed, FetchConnectionError):
            raise  # the page cannot be read either: its own error says why, not "robots.txt disallows"
        except FetchError:
            return False  # RFC 9309's unreachable (an error status is above; a body it cannot read): nothing allowed
        return Protego.parse(page.body.decode("utf-8-sig", errors="replace"))
