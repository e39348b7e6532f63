"""Bing: the keyless www.bing.com results page, read as HTML (no API, no key).

GET https://www.bing.com/search?q=...&mkt=en-US&setlang=en[&filters=ex1:"<window>"] with a desktop
Chrome's headers; page n > 1 adds first=10(n-1)+1 (11, 21, ...) and FORM=PERE, PERE1, ... as
Bing's own pager does, with page n-1 as its Referer. The page is parsed with selectolax (Lexbor)
from the results list on: results are the `li.b_algo` children of `ol#b_results`; the title and
link come from the block's first `h2 a`, the snippet from the first `p` after it (`.b_caption p`,
or a bare `p.b_lineclamp2` in newer layouts), the date from the snippet's `span.news_dt`
("Sep 22, 2026", "3 days ago"; it and its " · " are taken out of the snippet), and Bing's
decorative `span.algoSlug_icon` label is dropped. Text is taken as written, whitespace folded,
inline tags adding no spaces (`_html.node_text`, as DuckDuckGo's). Links are
`https://www.bing.com/ck/a?!&&p=...&u=a1<base64url of the target>&ntb=1` redirects: "a1" is cut,
the rest decoded as padded base64url and UTF-8, strictly; a link that does not decode to an
http(s) URL is dropped, and so are Bing's own pages (`/search`, `/aclick` ads, `/ck/`, the image,
video and news verticals, maps, shopping), other schemes and duplicates. Ads are the `li.b_ad`
blocks: not `b_algo`, never read. An empty results page (`li.b_no`) is no results.

Region and language are fixed to en-US: `mkt=en-US` (the market, Bing's primary locale signal),
`setlang=en` and an Accept-Language of en-US, because Bing answers with unrelated results when
`mkt` and Accept-Language disagree (SearXNG's Bing engine, 2026).

The richer parameters: `recency` is `ex1:"ez1"` (day), `"ez2"` (week), `"ez3"` (month), and a
year is the custom range `ez5_<day>_<day>` of the last 365 days (Bing has no year preset; day
numbers count days since 1970-01-01, as SearXNG and ddgs send them). The date ladder's start
(which wins over `recency`, with a notice) and `end_published_date` (else today) are that custom
range, in whole days: a start with a time of day (`recency_hours`, a timestamp) is widened to its
day with a notice. Domains are `site:` / `-site:` operators in `q`; the chain post-filters them.

`limit` beyond one page (PAGE_SIZE) asks for pages 2, 3, ... (at most MAX_PAGES) until the count
is met or a page adds no new URL: Bing answers a `first` past its last result with page 1 again,
and (per SearXNG's 2026 engine) often answers clients without JavaScript with page 1 whatever
`first` says and without applying `filters`. A page that fails after the first ends the paging
with a partial notice; the pages before it are kept. Pages are the row's pace apart (0.5/s: 2 s),
and a later page is asked only when the search's deadline leaves it time (`_paging`).

Blocked, told by structure, never by words a results page could echo (its title and search box
hold the query): a response whose final URL is under `/turing/captcha/` (Bing's CAPTCHA page, a
Cloudflare Turnstile wrapper), or a page without a results list that holds the CAPTCHA block
(`#b_captcha`), a CAPTCHA frame or form (`/turing/captcha`, `/captcha`), the Turnstile widget
or script, or a Cloudflare challenge form. No real saved CAPTCHA page with a licence that allows
keeping it was found; this structure comes from other projects' detectors and reports.

Deviations one might not expect: Bing's `count` parameter is not sent (it is no longer honoured
and degrades results, per SerpApi's 2025 reports); Bing sometimes answers a query it has nothing
for with an unrelated cached page of results, which cannot be told from a real one.
"""

from __future__ import annotations

import binascii
import re
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import unquote, urlencode, urlsplit

from selectolax.lexbor import LexborHTMLParser

from .._filters import recency_start
from .._notices import Notice
from .._registry import PROVIDERS
from .._types import SearchParams, SearchSource
from .._wire import HttpRequest, HttpResponse
from ..errors import Blocked
from ._base import (
    Plan,
    Support,
    age_seconds,
    count,
    day_range_notices,
    site_operator_notices,
    with_site_operators,
)
from ._html import DATED, browser_headers, html_envelope, keep, node_text, results_part
from ._paging import Page, PagedProvider

if TYPE_CHECKING:
    from .._context import ProviderContext

URL: Final = "https://www.bing.com/search"
DEFAULT_RESULTS: Final = 10
#: About how many organic results one Bing page holds.
PAGE_SIZE: Final = 10
#: The most pages websearch asks one search for (our cap, to stay polite).
MAX_PAGES: Final = 4
MAX_RESULTS: Final = 30
MARKET: Final = "en-US"
LANGUAGE: Final = "en"
#: `recency` as Bing's presets; a year has none (see `_filter`).
PRESETS: Final = {"day": "ez1", "week": "ez2", "month": "ez3"}
WHOLE_DAYS: Final = "Bing's custom date range takes whole days"
_EPOCH: Final = date(1970, 1, 1)
HEADERS: Final = browser_headers("none", cache_control="max-age=0")
CHALLENGE_MESSAGE: Final = (
    "Bing blocked the request with a CAPTCHA challenge. Bing challenges automated searches from "
    "datacenter/shared-egress IPs; configure a credentialed provider such as Brave, Tavily, Exa, or Kagi "
    "for reliable web search."
)
_RESULTS_MARK: Final = b'id="b_results"'
_CONTEXT_MARK: Final = b'id="b_context"'
_CHALLENGE_MARKS: Final = (b"b_captcha", b"/captcha", b"turnstile", b"challenge-form")
_CHALLENGE: Final = (
    "#b_captcha, iframe[src*='/turing/captcha'], form[action*='/captcha'], "
    "script[src*='challenges.cloudflare.com/turnstile'], .cf-turnstile, form#challenge-form"
)
_CHALLENGE_PATH: Final = "/turing/captcha"
_BLOCKS: Final = "ol#b_results > li.b_algo"
#: Paths of Bing's own pages on bing.com hosts: navigation and ads, not results.
_INTERNAL: Final = (
    "/search",
    "/aclick",
    "/aclk",
    "/ck/",
    "/images/search",
    "/videos/search",
    "/news/search",
    "/maps",
    "/shop",
)
_CK: Final = "https://www.bing.com/ck/a?"
_HOST: Final = re.compile(r"https?://([^/?#]*)")
_DATE: Final = re.compile(r"([A-Z][a-z]{2}) ([0-9]{1,2}), ([0-9]{4})")
_MONTHS: Final = {
    m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)
}
_DATE_SEPARATORS: Final = " \u00b7-\u2013\u2014"


class Bing(PagedProvider[Page]):
    info = PROVIDERS["bing"]
    max_pages = MAX_PAGES
    supports: ClassVar[dict[str, Support]] = DATED
    envelope = html_envelope("Bing")

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        """Page 1's request, and in `state` every page's request (page 1's first)."""
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        f = plan.filters
        query = [
            ("q", with_site_operators(params.query, f.include_domains, f.exclude_domains)),
            ("mkt", MARKET),
            ("setlang", LANGUAGE),
        ]
        window = _date_window(plan)
        code = _filter(plan, window)
        if code is not None:
            query.append(("filters", f'ex1:"{code}"'))
        plan.notices += _date_notices(plan, window, code)
        plan.notices += site_operator_notices(plan, self.label)
        url = ctx.endpoint(self.id, URL)
        pages = MAX_PAGES if plan.limit > PAGE_SIZE else 1
        plan.state = _page_requests(url, query, pages)
        plan.request = plan.state[0]
        return plan

    def page(self, response: HttpResponse, plan: Plan, n: int = 1) -> Page:
        """One page's results; the CAPTCHA is Blocked, another non-2xx the mapped error."""
        if is_challenge(response.body, response.url):
            raise Blocked(self.id, CHALLENGE_MESSAGE, 429)
        if not response.ok:
            raise self.error(response, plan)
        return Page(parse_results(response.body, plan.now))


# -- the request -------------------------------------------------------------------------------


def _day(when: datetime | date) -> int:
    """Bing's day number: days since 1970-01-01 (of the UTC date)."""
    return ((when.date() if isinstance(when, datetime) else when) - _EPOCH).days


def _date_window(plan: Plan) -> tuple[date, date] | None:
    """The (start, end) days of a custom range when the ladder or `end_published_date` asks for
    one: the ladder's start, else `recency`'s; the end date, else today. None otherwise."""
    f = plan.filters
    start = f.start or (recency_start(plan.params.recency, plan.now) if f.end is not None else None)
    if start is None:
        return None
    return start.date(), (f.end or plan.now).date()


def _filter(plan: Plan, window: tuple[date, date] | None) -> str | None:
    """The `ex1` code: a custom range for a window, else `recency`'s preset (a year as a range)."""
    if window is not None:
        return f"ez5_{_day(window[0])}_{_day(window[1])}"
    recency = plan.params.recency
    if recency == "year":
        today = _day(plan.now)
        return f"ez5_{today - 365}_{today}"
    return PRESETS.get(recency or "")


def _date_notices(plan: Plan, window: tuple[date, date] | None, code: str | None) -> list[Notice]:
    how = f'whole days (filters=ex1:"{code}", {window[0]} to {window[1]})' if window else ""
    return day_range_notices(plan, window, "Bing's custom date range", how, WHOLE_DAYS)


def _page_requests(url: str, query: list[tuple[str, str]], pages: int) -> tuple[HttpRequest, ...]:
    """Pages 1..`pages`: page n > 1 adds `first` and Bing's pager `FORM`, and is sent as a click
    on page n-1's pager (same-origin, that page as the Referer)."""
    requests: list[HttpRequest] = []
    previous: list[tuple[str, str]] = []
    for n in range(1, pages + 1):
        params = list(query)
        headers: dict[str, str] = HEADERS
        if n > 1:
            params += [("first", str(PAGE_SIZE * (n - 1) + 1)), ("FORM", "PERE" if n == 2 else f"PERE{n - 2}")]
            headers = browser_headers("same-origin", f"{url}?{urlencode(previous)}", cache_control="max-age=0")
        requests.append(HttpRequest("GET", url, headers=headers, params=params))
        previous = params
    return tuple(requests)


# -- the page ----------------------------------------------------------------------------------


def is_challenge(page: bytes, url: str = "") -> bool:
    """Bing's CAPTCHA, told by structure: the final URL under /turing/captcha/, or a page without
    a results list holding the CAPTCHA block, frame or form, or a Turnstile / Cloudflare challenge.
    (Words prove nothing: a results page echoes its query in the title and the search box.)"""
    if url:
        try:
            path = urlsplit(url).path
        except ValueError:
            path = ""
        if path.startswith(_CHALLENGE_PATH):
            return True
    if _RESULTS_MARK in page or not any(mark in page for mark in _CHALLENGE_MARKS):
        return False
    return LexborHTMLParser(page).css_first(_CHALLENGE) is not None


def parse_results(html: bytes | str, now: datetime, limit: int = MAX_RESULTS) -> list[SearchSource]:
    """The organic results of a Bing page, deduplicated by URL, at most `limit`.

    One query for the blocks, one per block for its `h2 a` title links and paragraphs in document
    order (the first link is the result, the first paragraph after it the snippet): cheaper than
    a query per field. The snippet's date and label are its direct `<span>` children.
    """
    tree = LexborHTMLParser(results_part(html, _RESULTS_MARK, _CONTEXT_MARK))
    sources: list[SearchSource] = []
    seen: set[str] = set()
    for block in tree.css(_BLOCKS):
        link = snippet = None
        for node in block.css("h2 a, p"):
            if node.tag == "a":
                if link is not None:
                    break
                link = node
            elif link is not None:
                snippet = node
                break
        if link is None:
            continue
        url = unwrap_href(link.attributes.get("href"))
        title = node_text(link)
        if not title or not keep(url, seen):
            continue
        text, published = _snippet(snippet) if snippet is not None else (None, None)
        age = _age(published, now) if published else None
        sources.append(SearchSource(title, url, text, published, age))
        if len(sources) >= limit:
            break
    return sources


def _snippet(p: Any) -> tuple[str | None, str | None]:
    """(text, date) of a snippet paragraph: Bing's decorative label (`span.algoSlug_icon`) left
    out, its leading date (`span.news_dt`) taken out with the " · " after it."""
    published = None
    for child in p.iter(include_text=False):
        if child.tag != "span":
            continue
        classes = child.attributes.get("class") or ""
        if "news_dt" in classes:
            published = node_text(child) or None
            child.decompose()
        elif "algoSlug_icon" in classes:
            child.decompose()
    text = node_text(p)
    if published:
        text = text.lstrip(_DATE_SEPARATORS)
    return text or None, published


def _age(published: str, now: datetime) -> int | None:
    """Seconds since a snippet's date: Bing's "Sep 22, 2026" read directly (strptime costs as much
    as parsing a result), anything else ("3 days ago") as `age_seconds` reads it."""
    match = _DATE.fullmatch(published)
    month = _MONTHS.get(match.group(1)) if match else None
    if match is None or month is None:
        return age_seconds(published, now)
    try:
        when = datetime(int(match.group(3)), month, int(match.group(2)), tzinfo=UTC)
    except ValueError:
        return None
    return int((now - when).total_seconds() // 1)


def unwrap_href(href: str | None) -> str | None:
    """The target of a result link: Bing's `/ck/a` redirect decoded; a direct http(s) link as
    is; None for Bing's own pages, relative links, other schemes and undecodable redirects."""
    if not href:
        return None
    if "&amp;" in href:
        href = href.replace("&amp;", "&")
    href = href.strip()
    if href.startswith(_CK):  # the common case, without parsing the URL
        target = _redirect_target(href[len(_CK) :])
        return _direct(target) if target is not None else None
    if href.startswith("//"):
        href = "https:" + href
    return _direct(href)


def _direct(href: str) -> str | None:
    """`href` if it is an http(s) URL off Bing's own pages, with a host and without spaces."""
    match = _HOST.match(href)
    if match is None or " " in href or not href.isprintable():
        return None
    host = match.group(1).rpartition("@")[2].partition(":")[0].lower()
    if not host:
        return None
    if host != "bing.com" and not host.endswith(".bing.com"):
        return href
    try:
        path = urlsplit(href).path
    except ValueError:
        return None
    if path == "/ck/a":  # a redirect on another Bing host (cn.bing.com)
        at = href.find("?")
        target = _redirect_target(href[at + 1 :]) if at > 0 else None
        return _direct(target) if target is not None and "/ck/a" not in target else None
    return None if path.startswith(_INTERNAL) else href


def _redirect_target(query: str) -> str | None:
    """The `u` parameter of a `/ck/a` link's query: "a1" then the target as base64url, padding
    optional, decoded strictly (base64 alphabet, UTF-8)."""
    at = query.find("u=")
    while at > 0 and query[at - 1] not in "&!?":
        at = query.find("u=", at + 1)
    if at < 0:
        return None
    stop = query.find("&", at)
    value = query[at + 2 : stop if stop >= 0 else None]
    if "%" in value:
        value = unquote(value)
    if not value.startswith("a1") or len(value) < 3:
        return None
    encoded = value[2:].rstrip("=").replace("-", "+").replace("_", "/")
    try:
        target = binascii.a2b_base64(encoded + "=" * (-len(encoded) % 4), strict_mode=True).decode("utf-8")
    except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    return target if target.startswith(("http://", "https://")) else None


PROVIDER: Final = Bing()
