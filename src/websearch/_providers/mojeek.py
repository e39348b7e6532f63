"""Mojeek: the keyless HTML frontend of an independent index (its own crawler, not Bing or Google).

GET https://www.mojeek.com/search?q=...[&since=YYYYMMDD][&before=YYYYMMDD][&s=11] with a desktop
Chrome's headers and the cookies `arc=us; lb=en`: Mojeek's location and language preferences as
its /preferences page stores them and as SearXNG and ddgs send them (a fixed en-US default). Its
region filter `reg` only offers uk, de, fr and eu ("All Regions" is the default), so none is sent.

The page is parsed with selectolax (Lexbor). What a real page shows (tests/pages/mojeek/): the
results are the `li.rN` children of `ul.results-standard` (a second result from the same host is
`li.rN.clu-result`); each has the breadcrumb link `a.ob` (its text is the URL, not the title), the
title link `h2 > a.title`, the snippet `p.s` with `<strong>` around query words (sometimes absent)
and `p.more`, a relative link to a `site:` search of that host. So the URL is the `h2` link's href
(the `a.ob` href when the heading has no link), the title the `h2` link's text, the snippet the
first `p.s`. Links are direct: no redirect to unwrap. Relative links, links back to Mojeek's own
/search and targets that are not http(s) are dropped, and each URL is kept once. Nothing outside
the list is read (the options bar, the result count, the pagination, "Try elsewhere", the summary
link, the header and footer); Mojeek's text ads are not in the served HTML at all (a script,
jsad.js, adds them). Text is taken as written, whitespace folded, inline tags adding no spaces
(`_html.node_text`, as DuckDuckGo's).

Paging: 10 results a page. `s` is the 1-based rank of the first result (`s=11`, `s=21`, ... as the
real page's pagination links and Mojeek's API docs have it; SearXNG's `s=10` is off by one). Page 1
is sent without `s`: `s=0` or `s=1` there draws the 403 (searx#1736, SearXNG's engine comment), as
an empty parameter does (`fmt=`: searxng#4307, #4354). A count above one page asks for pages 2
and 3 (MAX_PAGES) until the count is met, a page adds no new URL or a page has fewer than 10
result blocks (the last page); a later page failing keeps the earlier ones with a partial notice.
Pages are the row's pace apart (0.5/s: 2 s), and a later page is asked only when the search's
deadline leaves it time (`_paging`).

Dates: Mojeek has `since` and `before` (YYYYMMDD, whole days; `before` excludes its day; Mojeek's
API docs, SearXNG's engine), so `recency` is `since` one day, week, month (30 days) or year
(365 days) before now, the ladder's start (which wins over `recency`) is `since` its UTC day, and
`end_published_date` is `before` the day after it (so that day is included). A start or end with a
time of day is sent as its day, with a notice. Results carry no dates. Domains become `site:` /
`-site:` operators in `q` (Mojeek's `site` parameter is its paid API's); one project saw a 403 for
a query with `-site:`, so an excluded domain may cost a block.

Blocking: Mojeek answers automated traffic with a 403 page ("Sorry your network appears to be
sending automated queries"; a per-IP budget of about ten quick requests, searxng#4307) and, from
some networks, a 200 CAPTCHA page (`div.captcha-wrap` and the ALTCHA widget's script, no results
list). Both are `Blocked`, never "no results": the 403 by its status (Mojeek has no keys, so a 403
is never a login problem), the CAPTCHA by its structure (a results page echoes its query, "captcha"
included, in its title and search box, but never as an element). The genuine no-results page has
the ordinary chrome and no results list: no sources (the chain makes it NoResults).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Final

from selectolax.lexbor import LexborHTMLParser

from .._filters import recency_start
from .._notices import Notice, approximated
from .._registry import PROVIDERS
from .._types import SearchParams, SearchSource
from .._wire import HttpRequest, HttpResponse
from ..errors import Blocked
from ._base import Plan, Support, count, recency_overridden, site_operator_notices, with_site_operators
from ._html import DATED, browser_headers, has_class, html_envelope, keep, node_text
from ._paging import Page, PagedProvider

if TYPE_CHECKING:
    from .._context import ProviderContext

URL: Final = "https://www.mojeek.com/search"
DEFAULT_RESULTS: Final = 10
#: Results on one Mojeek page.
PAGE_SIZE: Final = 10
#: The most pages websearch asks one search for (Mojeek's budget per IP is small).
MAX_PAGES: Final = 3
MAX_RESULTS: Final = PAGE_SIZE * MAX_PAGES
HEADERS: Final = browser_headers(
    "same-origin", "https://www.mojeek.com/", accept_language="en,en-US;q=0.9", cookie="arc=us; lb=en"
)
BLOCKED_MESSAGE: Final = (
    "Mojeek blocked the request as automated traffic (403). Mojeek allows only a few quick searches per IP "
    "address and refuses many datacenter/shared-egress IPs; configure a credentialed provider such as Brave, "
    "Tavily, Exa, or Kagi for reliable web search."
)
CAPTCHA_MESSAGE: Final = (
    "Mojeek blocked the request with a CAPTCHA challenge. Mojeek challenges automated searches from "
    "datacenter/shared-egress IPs; configure a credentialed provider such as Brave, Tavily, Exa, or Kagi for "
    "reliable web search."
)
WHOLE_DAYS: Final = "Mojeek's date filters take dates only"
_RESULTS_START: Final = b'<ul class="results-standard'
_CAPTCHA: Final = "div.captcha-wrap, altcha-widget, script[src*=altcha]"
_LIST: Final = "ul.results-standard > li"
#: A result block and the parts of it that are read, in document order.
_BLOCK_PARTS: Final = f"{_LIST}, {_LIST} h2, {_LIST} a[href], {_LIST} p.s"
#: Mojeek's own search pages: a link there is another search, not a result.
_INTERNAL: Final = ("www.mojeek.com", "mojeek.com")


class Mojeek(PagedProvider[Page]):
    info = PROVIDERS["mojeek"]
    max_pages = MAX_PAGES
    supports: ClassVar[dict[str, Support]] = DATED

    envelope = html_envelope("Mojeek")

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        """Page 1's request, and in `state` every page's request (page 1's first)."""
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        f = plan.filters
        query = [("q", with_site_operators(params.query, f.include_domains, f.exclude_domains))]
        start = f.start if f.start is not None else recency_start(params.recency, plan.now)
        if start is not None:
            query.append(("since", _day(start.date())))
        before = _day_after(f.end) if f.end is not None else None
        if before is not None:
            query.append(("before", before))
        plan.notices += _date_notices(plan, dict(query))
        plan.notices += site_operator_notices(plan, self.label)
        plan.request = HttpRequest("GET", ctx.endpoint(self.id, URL), headers=HEADERS, params=query)
        pages = min(MAX_PAGES, -(-plan.limit // PAGE_SIZE))
        plan.state = tuple(page_request(plan.request, n) for n in range(1, pages + 1))
        return plan

    def page(self, response: HttpResponse, plan: Plan, n: int = 1) -> Page:
        """One page's results, the last one when it has fewer than PAGE_SIZE result blocks; the
        block pages raise `Blocked`, other errors their mapped error."""
        if response.status == 403:
            raise Blocked(self.id, BLOCKED_MESSAGE, 429)
        if is_challenge(response.body):
            raise Blocked(self.id, CAPTCHA_MESSAGE, 429)
        if not response.ok:
            raise self.error(response, plan)
        sources, blocks = read_page(response.body, MAX_RESULTS)
        return Page(sources, more=blocks >= PAGE_SIZE)


def page_request(first: HttpRequest, n: int) -> HttpRequest:
    """Page `n` (1-based): page 1's request with `s`, the rank of its first result (11, 21, ...)."""
    if n == 1:
        return first
    return dataclasses.replace(first, params=[*first.params, ("s", str(PAGE_SIZE * (n - 1) + 1))])


def is_challenge(page: bytes) -> bool:
    """Mojeek's CAPTCHA page, told by its structure: a page without a results list that has the
    challenge container or the ALTCHA widget. (The words alone prove nothing: a results page
    echoes the query, "captcha-wrap altcha" included, in its title and search box.)"""
    if _RESULTS_START in page or (b"captcha" not in page and b"altcha" not in page):
        return False
    return LexborHTMLParser(page).css_first(_CAPTCHA) is not None


def parse_results(html: bytes | str, limit: int = MAX_RESULTS) -> list[SearchSource]:
    """The results of a Mojeek page, deduplicated by URL, at most `limit`.

    Only the `li` children of `ul.results-standard` are read: the title link `h2 a` (else the
    breadcrumb link `a.ob`) gives the URL, its text the title, the first `p.s` the snippet.
    """
    return read_page(html, limit)[0]


def read_page(html: bytes | str, limit: int = MAX_RESULTS) -> tuple[list[SearchSource], int]:
    """`parse_results`, and the number of result blocks the page had (a page with fewer than
    PAGE_SIZE is the last one)."""
    page = html.encode() if isinstance(html, str) else html
    start = page.find(_RESULTS_START)
    if start < 0:
        return [], 0
    tree = LexborHTMLParser(page[start:])
    found = _walk(tree.css(_BLOCK_PARTS))
    sources: list[SearchSource] = []
    seen: set[str] = set()
    for title, href, snippet in found:
        url = target(href)
        if not title or not keep(url, seen):
            continue
        sources.append(SearchSource(title, url, snippet or None))
        if len(sources) >= limit:
            break
    return sources, len(found)


def _walk(nodes: Iterable[Any]) -> list[tuple[str, str, str]]:
    """(title, href, snippet) per result block, from one CSS query's nodes in document order
    (`_BLOCK_PARTS`): each `li` opens a block; in it the first link inside an `h2` gives the title
    and URL (else the first `a.ob` link and the `h2` text), the first `p.s` the snippet. One query
    and a walk cost a third of three `css_first` per block."""
    found: list[tuple[str, str, str]] = []
    block: list[Any] | None = None  # [title, href, snippet, a.ob href, h2]
    for node in nodes:
        tag = node.tag
        if tag == "li":
            if block is not None:
                found.append(_finished(block))
            block = [None, None, None, None, None]
        elif block is None:
            continue
        elif tag == "a":
            attrs = node.attrs
            if block[1] is None and block[4] is not None and _in_heading(node):
                block[0], block[1] = node_text(node), attrs.get("href") or ""
            elif block[3] is None and has_class(attrs.get("class") or "", "ob"):
                block[3] = attrs.get("href") or ""
        elif tag == "h2":
            if block[4] is None:
                block[4] = node
        elif block[2] is None:  # p.s
            block[2] = node_text(node)
    if block is not None:
        found.append(_finished(block))
    return found


def _finished(block: list[Any]) -> tuple[str, str, str]:
    title, href, snippet, ob, heading = block
    if href is None:  # no link in the heading: the breadcrumb link and the heading's text
        title, href = (node_text(heading) if heading is not None else ""), ob or ""
    return title, href, snippet or ""


def _in_heading(node: Any) -> bool:
    """Is this link inside its block's `h2`?"""
    parent = node.parent
    while parent is not None:
        tag = parent.tag
        if tag == "h2":
            return True
        if tag == "li":
            return False
        parent = parent.parent
    return False


def target(href: str) -> str | None:
    """A result link's target: absolute http(s) (`//x` made https) with a host, not one of
    Mojeek's own searches; else None. (Read by hand: `urlsplit` cost more than the parse.)"""
    if href.startswith("//"):
        href = "https:" + href
    if href.startswith("https://"):
        rest = href[8:]
    elif href.startswith("http://"):
        rest = href[7:]
    else:
        return None
    end = len(rest)
    for stop in "/?#":
        at = rest.find(stop, 0, end)
        if at >= 0:
            end = at
    host = rest[:end].rpartition("@")[2].lower()
    name = host if host.startswith("[") else host.partition(":")[0]
    if not name:
        return None
    if name in _INTERNAL:
        path = rest[end:]
        for stop in "?#":
            path = path.partition(stop)[0]
        if path.rstrip("/") in ("", "/search"):
            return None
    return href


def _day(day: date) -> str:
    """A date as Mojeek's YYYYMMDD (years below 1000 zero-padded too)."""
    return f"{day.year:04d}{day.month:02d}{day.day:02d}"


def _day_after(end: datetime) -> str | None:
    """`before` for an inclusive end: the day after the end's UTC day (None past the last date)."""
    try:
        return _day(end.date() + timedelta(days=1))
    except OverflowError:
        return None


def _date_notices(plan: Plan, sent: dict[str, str]) -> list[Notice]:
    """`recency` lost to a ladder rung; a start or end with a time of day sent as its day."""
    f, params = plan.filters, plan.params
    notices = recency_overridden(params, f)
    if f.start_source is not None and f.start_has_time:
        how = f"whole days (since={sent['since']})"
        notices.append(approximated(f.start_source, getattr(params, f.start_source), how, WHOLE_DAYS))
    if f.end is not None and f.end_has_time and "before" in sent:
        how = f"whole days (before={sent['before']}, so up to the end of {f.end.date().isoformat()})"
        notices.append(approximated("end_published_date", params.end_published_date, how, WHOLE_DAYS))
    return notices


PROVIDER: Final = Mojeek()
