"""The keyless-engine kit: an HTML engine declared by its facts, `plan` and paging written once.

An engine subclasses `KeylessEngine` and declares, as class attributes, what differs between
engines: its URL and method, headers, query parameters (`QUERY` marks the query's place), page
size and cap, result counts, blocked statuses, challenge pages (`Challenge`, told by structure)
and coarse date windows. It keeps only what is its own: `read` (its parser), its redirect
unwrapping, and `dates` / `page_params` where its date or paging parameters are not the common
ones. `plan` (count, domains as `site:` operators, dates, every page's request) and `page`
(blocked, error, parsed) are the kit's; `_paging` asks for the pages. The wire-format facts of
each engine are in docs/engines/<id>.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar, Final, Literal
from urllib.parse import SplitResult, urlencode, urlsplit

from selectolax.lexbor import LexborHTMLParser

from .._core._notices import Notice, not_applied
from .._core._types import SearchParams
from .._core._wire import HttpRequest, HttpResponse
from ..errors import Blocked
from ._base import Plan, Support, bucket_notices, count, recency_bucket, site_operator_notices, with_site_operators
from ._html import WINDOWED, html_envelope
from ._paging import P, PagedProvider

if TYPE_CHECKING:
    from .._core._context import ProviderContext

__all__ = ["ADVICE", "QUERY", "Challenge", "KeylessEngine", "Params", "url_host", "url_parts", "url_path"]

#: What every block message ends with: what to do instead.
ADVICE: Final = "configure a credentialed provider such as Brave, Tavily, Exa, or Kagi for reliable web search."
#: The query's place in `KeylessEngine.params` (replaced by the query with its `site:` operators).
QUERY: Final = "\x00query"

Params = list[tuple[str, str]]


def url_parts(url: str) -> SplitResult | None:
    """`url` split (`urlsplit`), or None for a URL it refuses."""
    try:
        return urlsplit(url)
    except ValueError:
        return None


def url_path(url: str) -> str:
    """The path of `url` ("" for none or a URL `urlsplit` refuses)."""
    parts = url_parts(url) if url else None
    return parts.path if parts is not None else ""


def url_host(url: str) -> str:
    """The host of `url`, lowercased ("" for none or a URL `urlsplit` refuses)."""
    parts = url_parts(url) if url else None
    return (parts.hostname or "") if parts is not None else ""


@dataclass(frozen=True, slots=True)
class Challenge:
    """A block page told by its structure, never by words (a results page echoes its query, so
    "captcha" in a title proves nothing): a final URL under one of `paths`, or a page holding
    none of the `results` marks, one of the cheap `hints`, no element matching `listing` (a
    results page's containers) and an element matching `selector` (or, with `script`, a script
    holding that text)."""

    message: str
    selector: str
    hints: tuple[bytes, ...]
    results: tuple[bytes, ...] = ()
    paths: tuple[str, ...] = ()
    script: str | None = None
    listing: str | None = None

    def __call__(self, page: bytes, url: str = "") -> bool:
        if self.paths and url_path(url).startswith(self.paths):
            return True
        if any(mark in page for mark in self.results) or not any(hint in page for hint in self.hints):
            return False
        tree = LexborHTMLParser(page)
        if self.listing is not None and tree.css_first(self.listing) is not None:
            return False
        if tree.css_first(self.selector) is not None:
            return True
        return self.script is not None and any(self.script in node.text(deep=True) for node in tree.css("script"))


def _merged(base: Params, pairs: Mapping[str, str]) -> Params:
    """`base` with each of `pairs` in place of the parameter of its name, or after them."""
    if not pairs:
        return base
    merged = [(name, pairs.get(name, value)) for name, value in base]
    return merged + [(name, value) for name, value in pairs.items() if name not in dict(base)]


class KeylessEngine(PagedProvider[P]):
    """A keyless HTML engine: the declarations below, `read`, and the hooks it needs."""

    url: ClassVar[str]
    method: ClassVar[Literal["GET", "POST"]] = "GET"
    headers: ClassVar[Mapping[str, str]]
    #: The query parameters in order, `QUERY` where the query goes; dates and paging follow.
    params: ClassVar[tuple[tuple[str, str], ...]] = (("q", QUERY),)
    default_results: ClassVar[int] = 10
    max_results: ClassVar[int]
    #: About how many results one page holds, and the most pages one search asks for.
    page_size: ClassVar[int] = 10
    max_pages: ClassVar[int] = 1
    #: A count over one page asks for every page up to `max_pages` (for engines whose pages
    #: often hold fewer than `page_size`), not only the pages the count needs.
    spare_pages: ClassVar[bool] = False
    #: Page n > 1's own parameter as (name, step, first): `name=first + step * (n - 1)` (`page_params`).
    page_offset: ClassVar[tuple[str, int, int] | None] = None
    #: Page n's own parameters go before the dates (as the engine's pager writes them), not after.
    paging_first: ClassVar[bool] = False
    #: Page n > 1 is sent as a click on page n-1's pager: same-origin, that page as the Referer.
    pager_referer: ClassVar[bool] = False
    #: Statuses that are a block, and what the error says.
    blocked_statuses: ClassVar[Mapping[int, str]] = {}
    challenges: ClassVar[Sequence[Challenge]] = ()
    #: Coarse recency windows (day/week/month/year → the value sent in `window_param`).
    windows: ClassVar[Mapping[str, str]] = {}
    window_param: ClassVar[str] = ""
    supports: ClassVar[Mapping[str, Support]] = WINDOWED

    def __init_subclass__(cls, **kw: object) -> None:
        super().__init_subclass__(**kw)
        if "envelope" not in cls.__dict__ and hasattr(cls, "info"):
            cls.envelope = html_envelope(cls.info.label)

    # -- the plan ------------------------------------------------------------------------------

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        """Page 1's request, and in `state` every page's request (page 1's first)."""
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, self.default_results, self.max_results, self.label)
        f = plan.filters
        query = with_site_operators(self.query_text(plan), f.include_domains, f.exclude_domains)
        base = [(name, query if value == QUERY else value) for name, value in self.params]
        pairs, headers, notices = self.locale(plan) if plan.params.has_given else ({}, {}, [])
        base = _merged(base, pairs)
        plan.notices += notices
        dated, notices = self.dates(plan)
        plan.notices += notices
        plan.notices += site_operator_notices(plan, self.label)
        url = ctx.endpoint(self.id, self.url)
        plan.state = tuple(self.page_request(url, base, dated, n) for n in range(1, self.pages(plan) + 1))
        if headers:
            plan.state = tuple(replace(r, headers={**r.headers, **headers}) for r in plan.state)
        plan.request = plan.state[0]
        return plan

    def locale(self, plan: Plan) -> tuple[Mapping[str, str], Mapping[str, str], list[Notice]]:
        """The engine's country, language and safesearch parameters (each replacing the one of
        `params` of its name, else added after them), the headers they change, and their notices.
        None by default: an engine that takes them says so in `supports` and here."""
        return {}, {}, []

    def pages(self, plan: Plan) -> int:
        """How many pages the plan holds: one without a count, else what the count needs."""
        limit = plan.limit or self.default_results
        if plan.params.count is None or limit <= self.page_size:
            return 1
        return self.max_pages if self.spare_pages else min(self.max_pages, -(-limit // self.page_size))

    def page_request(self, url: str, base: Params, dated: Params, n: int) -> HttpRequest:
        """Page `n`'s request: the parameters, the dates, then page `n`'s own (or those, then the dates)."""
        pairs = self._pairs(base, dated, n)
        headers = dict(self.headers)
        if self.pager_referer and n > 1:
            referer = f"{url}?{urlencode(self._pairs(base, dated, n - 1))}"
            headers |= {"Sec-Fetch-Site": "same-origin", "Referer": referer}
        if self.method == "POST":
            return HttpRequest("POST", url, headers=headers, form=pairs)
        return HttpRequest("GET", url, headers=headers, params=pairs)

    def _pairs(self, base: Params, dated: Params, n: int) -> Params:
        paging = self.page_params(n)
        return [*base, *paging, *dated] if self.paging_first else [*base, *dated, *paging]

    def page_params(self, n: int) -> Params:
        """What page `n` (1-based) adds to the parameters: by default `page_offset`, from page 2 on."""
        if self.page_offset is None or n == 1:
            return []
        name, step, first = self.page_offset
        return [(name, str(first + step * (n - 1)))]

    def dates(self, plan: Plan) -> tuple[Params, list[Notice]]:
        """The date parameters and their notices: by default the coarse `windows`, the ladder's
        start widened to the narrowest window that covers it (and winning over `recency`)."""
        names = list(self.windows)
        if not names:
            return [], []
        f, recency = plan.filters, plan.params.recency
        listed = f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else names[0]
        only = f"{self.label} only filters by the past {listed}"
        if f.start is not None:
            bucket = recency_bucket(f.start, plan.now)
            value = self.windows.get(bucket or "")
            applied = f"{self.window_param}={value} (the past {bucket})" if value else None
            sent = [(self.window_param, value)] if value else []
            return sent, bucket_notices(plan, applied, f"{self.label}'s longest (a {names[-1]})", only)
        if recency is not None and recency in self.windows:
            return [(self.window_param, self.windows[recency])], []
        return [], [not_applied("recency", recency, only)] if recency else []

    # -- the page ------------------------------------------------------------------------------

    def page(self, response: HttpResponse, plan: Plan, n: int = 1) -> P:
        """Page `n`'s results; a block page or status is Blocked, another non-2xx the mapped error."""
        reason = self.blocked(response)
        if reason is not None:
            raise Blocked(self.id, reason, 429)
        if not response.ok:
            raise self.error(response, plan)
        return self.read(response, plan, n)

    def blocked(self, response: HttpResponse) -> str | None:
        """Why the answer is a block (its message), or None."""
        if response.status in self.blocked_statuses:
            return self.blocked_statuses[response.status]
        return next((c.message for c in self.challenges if c(response.body, response.url)), None)

    def read(self, response: HttpResponse, plan: Plan, n: int) -> P:
        """The engine's parser: page `n` of a 2xx answer that is not a block."""
        raise NotImplementedError

    def requests_only(self) -> bool:
        return self.max_pages == 1 and type(self).search is PagedProvider.search
