"""Paging for the keyless HTML engines: a count beyond one page asks for the pages after it.

`PagedProvider.search` sends page 1, then page 2, 3, ... while the count is not met, the last
page added a new URL and shows a next one (`more`), and the engine has a request for it (at most
its `max_pages`). A later page that fails ends the paging with one `partial` notice; the pages
before it are kept. Between two pages it waits the registry row's polite gap (`page_gap`:
`1 / info.pace` seconds; the pacing spaces searches, this spaces one search's pages), and only
when that fits before the search's deadline: a later page is asked only when the deadline leaves
it `PAGE_MIN_S` after the gap and `MARGIN_S` for the chain, and is given up when that time runs
out, so a slow later page never costs the pages before it (each a `cut_short` notice: the
answer is served, and never cached, for a search with more time may read every page). In a
fan-out, the soft deadline (`ctx.budget.soft_ends`) bounds the pages the same way, as the fan-out
cancels an engine still running then: the pages in hand are served, with a `partial` notice
(cached as the fan-out's answer is: the next fan-out has the same soft deadline).

The keyless-engine kit (`_kit`) plans every page's request (`plan.state`, page 1's first) and
writes `page`, which reads one answer (block detection, then the engine's parser); an engine whose
page is built from the one before it overrides `next_request`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Final, Generic, Protocol, TypeVar

from .._core._notices import Notice, clamped, cut_short, partial
from .._core._types import ProviderResult, SearchSource
from .._core._wire import HttpRequest, HttpResponse
from ..errors import SearchProviderError
from ._base import HttpProvider, Plan

if TYPE_CHECKING:
    from .._core._context import ProviderContext
    from .._core._registry import ProviderInfo

__all__ = ["MARGIN_S", "PAGE_MIN_S", "Page", "Paged", "PagedProvider", "page_gap"]

#: A later page is asked only with this many seconds for it left before the search's deadline...
PAGE_MIN_S: Final = 1.0
#: ...after the gap, and after keeping this many for the chain to finish the search.
MARGIN_S: Final = 0.5


class PageLike(Protocol):
    """What the loop reads of a page: its results, and whether it shows a next page."""

    @property
    def sources(self) -> Sequence[SearchSource]: ...

    @property
    def more(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Page:
    """One page's results, and whether it shows a next page (unknown: True)."""

    sources: Sequence[SearchSource]
    more: bool = True


P = TypeVar("P", bound=PageLike)


@dataclass(frozen=True, slots=True)
class Paged(Generic[P]):
    """A paged search: the pages read, their results (each URL once, at most the count), notices."""

    pages: list[P]
    sources: tuple[SearchSource, ...]
    notices: list[Notice]


def page_gap(info: ProviderInfo) -> float:
    """Seconds between the pages of one search: the row's polite pace as a gap (0 without one)."""
    return 1 / info.pace if info.pace else 0.0


class PagedProvider(HttpProvider, Generic[P]):
    """An HTML engine whose `search` asks for further pages (see the module docstring)."""

    #: The most pages one search asks for (named in the notice below).
    max_pages: ClassVar[int]
    #: Whether a search that used every page planned and is short of its count says so.
    says_page_cap: ClassVar[bool] = False

    def page(self, response: HttpResponse, plan: Plan, n: int = 1) -> P:
        """Page `n`'s answer read: its results; a block page or an error status raises."""
        raise NotImplementedError

    def next_request(self, plan: Plan, n: int, previous: P) -> HttpRequest | None:
        """Page `n`'s request (n > 1; `previous` is page n-1), None when there is none: by
        default the planned one, `plan.state[n - 1]`."""
        requests: tuple[HttpRequest, ...] = plan.state
        return requests[n - 1] if n <= len(requests) else None

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        """Page 1 as results (pure; `search` asks for the further pages)."""
        return ProviderResult(sources=tuple(self.page(response, plan).sources[: plan.limit]))

    async def search(self, plan: Plan, ctx: ProviderContext) -> ProviderResult:
        paged = await self.fetch_pages(plan, ctx)
        return ProviderResult(sources=paged.sources, notices=tuple(paged.notices))

    async def fetch_pages(self, plan: Plan, ctx: ProviderContext) -> Paged[P]:
        """Page 1, then each further page while it is wanted, has a request and has the time."""
        request, limit, label = plan.request, plan.limit, self.label
        assert request is not None and limit is not None, f"{self.id}: plan() made no request"
        gap = page_gap(self.info)
        found: dict[str, SearchSource] = {}
        pages: list[P] = []
        notices: list[Notice] = []
        n = 1
        while True:
            budget: float | None = None  # for a later page: what the deadline (and a soft one) leaves it
            stop = f"so the results stop at page {n - 1}"
            if n > 1:
                budget, refused = _page_budget(ctx, gap, label, n, stop)
                if refused is not None:
                    notices.append(refused)
                    break
                if gap:
                    await ctx.clock.sleep(gap)
            try:
                async with asyncio.timeout(budget):  # a slow later page must not cost the pages before it
                    response = await ctx.send(self.id, request)
                page = self.page(response, plan, n)
            except TimeoutError:
                if budget is None:
                    raise
                notices.append(cut_short(f"{label} page {n} did not answer in time, {stop}"))
                break
            except SearchProviderError as exc:
                if n == 1:
                    raise
                notices.append(cut_short(f"{label} page {n} failed, {stop}: {exc.message}"))
                break
            pages.append(page)
            fresh = [source for source in page.sources if source.url not in found]
            found.update((source.url, source) for source in fresh)
            if not fresh or len(found) >= limit or not page.more:
                break
            following = self.next_request(plan, n + 1, page)
            if following is None:
                if self.says_page_cap and n > 1:
                    name = "num_search_results" if plan.params.num_search_results is not None else "limit"
                    why = f"websearch asks {label} for at most {self.max_pages} pages"
                    notices.append(clamped(name, plan.params.count, f"{len(found)} results", why))
                break
            request, n = following, n + 1
        return Paged(pages, tuple(found.values())[:limit], notices)


def _page_budget(ctx: ProviderContext, gap: float, label: str, n: int, stop: str) -> tuple[float | None, Notice | None]:
    """What later page `n` may take after the gap: the time the search's deadline leaves it
    and, in a fan-out, its soft deadline (None: unbounded); instead, the notice that it is not
    asked when either leaves less than `PAGE_MIN_S`."""
    budget: float | None = None
    now = ctx.clock.monotonic()
    ends = (
        (ctx.budget.ends, "the search's deadline", cut_short),
        (ctx.budget.soft_ends, "the fan-out's soft deadline", partial),
    )
    for end, whose, notice in ends:
        if end is None:
            continue
        left = end - now - gap - MARGIN_S
        if left < PAGE_MIN_S:
            why = f"{whose} leaves it no time after waiting {gap:g} s between {label}'s pages"
            return None, notice(f"{label} page {n} was not asked, {stop}: {why}")
        budget = left if budget is None else min(budget, left)
    return budget, None
