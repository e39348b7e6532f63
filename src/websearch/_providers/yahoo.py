"""Yahoo: the keyless HTML results page of search.yahoo.com (results from Bing's index).

Sent: GET https://search.yahoo.com/search with a desktop Chrome's headers (English first in
Accept-Language). Page 1 is `p=<query>&iscqry=` as the search box sends it; page n is
`p=<query>&b=<1 + 7(n-1)>&pz=7&bct=0&xargs=0`, as Yahoo's own "Next" link asks: `b` is the 1-based
position of the first result and a page holds 7 organic results (ddgs, SearXNG and Yahoo's pager
all step by 7, not 10). With no count asked one page is fetched; a larger count asks for pages 1, 2,
... (at most MAX_PAGES, 20 results) until the count is met, a page adds no new URL, or a page fails
(a partial notice; the pages before it are kept), the row's pace apart (0.5/s: 2 s) and only when
the search's deadline leaves a page time (`_paging`). Region and language are fixed: the US host and
English Accept-Language; Yahoo's `vl=lang_<xx>` is a hard language filter that would empty
non-English searches, so it is not sent. Safe search is Yahoo's default (no `sB` cookie).

`recency` is `btf=d|w|m`: Yahoo's time filter has past day, week and month only, so "year" is not
applied (a notice). The ladder's start (which wins over `recency`) becomes the narrowest of those
windows covering it, and is not applied past a month. Domains are `site:` / `-site:` operators in
`p` (Bing's syntax, `OR` between several sites).

Parsed (selectolax/Lexbor, from `<div id="web">` on: the header, styles and scripts before it hold
no results): each `div` whose class has the token `algo` or `algo-sr` is a result. The page is not
one shape:

- `h3.title > a[aria-label]`, the anchor holding a breadcrumb `<span class="... p-abs ...">host ›
  path</span>` before the title text: the anchor's text is "host › pathTitle", so the title is the
  `aria-label`;
- `a > (breadcrumb) + h3.title > span`: the anchor opens before the heading, and has no label; the
  title is the heading's text;
- `.compTitle > a (breadcrumb) + h3.title`: the heading outside the anchor; the link is the
  title block's first anchor.

The link is the heading's enclosing anchor, else the anchor inside it, else the first anchor of
`.compTitle`, else of the block; the snippet is the block's first `.compText`. Hrefs are redirects
`https://r.search.yahoo.com/_ylt=...;_ylu=.../RV=2/RE=.../RO=10/RU=<target>/RK=2/RS=...`: the target
is the `RU=` segment up to the next `/RK=` or `/RS=`, percent-decoded (lower-case hex, as Yahoo
writes it; "+" kept, invalid UTF-8 rejected). Ads are dropped: `/cbclk` click redirects, Bing
`aclick` targets (ddgs saw those inside organic-looking blocks), and links into Yahoo's own search
(`*.search.yahoo.com`); so are non-http(s) targets and duplicates. Text is as written, whitespace
folded, inline tags adding no spaces (`_html.node_text`, as DuckDuckGo's).

Blocked, told by structure: Yahoo's consent wall for EU visitors (a redirect to guce.yahoo.com /
consent.yahoo.com, seen as the final URL's host or its `/consent` or `/v2/collectConsent` path, or a
page without a results list that holds the consent form: a form posting to collectConsent or with
its `sessionId` input), and the status 999 Yahoo answers to clients it throttles. A results page
for a query that names those things is still a results page. Yahoo also mints a `YBV` cookie
through a short redirect chain (a tracking pixel, a GIF, an optional regional host) before it
serves results; the transport follows the redirects and its session's cookie jar keeps the cookie.

Sources of these facts: ddgs's engines/yahoo.py (endpoint, `b` stepping by 7, `btf`, the RU=
segment, Bing `aclick` ads), SearXNG's searx/engines/yahoo.py and its pull request 6723 (the
`algo-sr` blocks, the aria-label title, `pz=7&bct=0&xargs=0`, `btf` without a year, the YBV
redirect chain; SearXNG asks page n at `b=7n+1`, skipping results 8-14, where Yahoo's own pager
and ddgs use `b=7(n-1)+1`), yfinance (the consent form's fields and hosts), and saved markup in
other projects' tests (the breadcrumb inside the anchor, the anchor around the heading).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import unquote, urlsplit

from selectolax.lexbor import LexborHTMLParser

from .._notices import not_applied
from .._registry import PROVIDERS
from .._types import SearchParams, SearchSource
from .._wire import HttpRequest, HttpResponse
from ..errors import Blocked
from ._base import (
    Plan,
    Support,
    bucket_notices,
    count,
    recency_bucket,
    site_operator_notices,
    with_site_operators,
)
from ._html import WINDOWED, browser_headers, fold, html_envelope, keep, node_text, results_part, web_url
from ._paging import Page, PagedProvider

if TYPE_CHECKING:
    from .._context import ProviderContext

URL: Final = "https://search.yahoo.com/search"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 20
#: Organic results on one Yahoo page (`pz`), and the step of `b`.
PAGE_SIZE: Final = 7
#: The most pages one search asks for (our cap: 3 pages of 7 cover MAX_RESULTS).
MAX_PAGES: Final = 3
_BTF: Final = {"day": "d", "week": "w", "month": "m"}
ONLY: Final = "Yahoo only filters by the past day, week or month"
HEADERS: Final = browser_headers("same-origin", "https://search.yahoo.com/", cache_control="max-age=0")
CONSENT_MESSAGE: Final = (
    "Yahoo answered with its cookie-consent page (guce.yahoo.com / consent.yahoo.com) instead of results: "
    "Yahoo asks visitors from the EU to accept its cookies first. Configure a credentialed provider such as "
    "Brave, Tavily, Exa, or Kagi for reliable web search."
)
THROTTLED_MESSAGE: Final = (
    "Yahoo refused the request (error 999): Yahoo blocks automated searches from datacenter/shared-egress "
    "IPs for a while; configure a credentialed provider such as Brave, Tavily, Exa, or Kagi for reliable "
    "web search."
)
_RESULTS_START: Final = b'<div id="web"'
_CONSENT_HOSTS: Final = ("consent.", "guce.")
_CONSENT_PATHS: Final = ("/consent", "/v2/collectconsent", "/copyconsent")
_CONSENT_HINTS: Final = (b"collectConsent", b"consent-form", b'name="sessionId"', b"guce.yahoo.com")
_CONSENT_FORM: Final = (
    'form[action*="collectConsent"], form[action*="consent.yahoo.com"], form[action*="guce.yahoo.com"], '
    "form.consent-form, form input[name=sessionId]"
)
_REDIRECT_STATUSES: Final = frozenset({301, 302, 303, 307, 308})
_BLOCK_SELECTOR: Final = "div[class*=algo]"
_BLOCK_CLASSES: Final = frozenset({"algo", "algo-sr"})
_PARTS: Final = "h3, .compText"
_AD_TARGETS: Final = ("https://www.bing.com/aclick", "http://www.bing.com/aclick", "https://bing.com/aclick")


class Yahoo(PagedProvider[Page]):
    info = PROVIDERS["yahoo"]
    max_pages = MAX_PAGES
    supports: ClassVar[dict[str, Support]] = WINDOWED  # day, week, month; "year" has no Yahoo window (a notice)

    envelope = html_envelope("Yahoo")

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        """Page 1's request, and in `state` every page's request (page 1's first)."""
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        f = plan.filters
        query = [("p", with_site_operators(params.query, f.include_domains, f.exclude_domains))]
        if f.start is not None:
            bucket = recency_bucket(f.start, plan.now)
            btf = _BTF.get(bucket or "")
            if btf:
                query.append(("btf", btf))
            applied = f"btf={btf} (the past {bucket})" if btf else None
            plan.notices += bucket_notices(plan, applied, "Yahoo's longest (a month)", ONLY)
        elif params.recency in _BTF:
            query.append(("btf", _BTF[params.recency]))
        elif params.recency:
            plan.notices.append(not_applied("recency", params.recency, ONLY))
        plan.notices += site_operator_notices(plan, self.label)
        url = ctx.endpoint(self.id, URL)
        pages = min(MAX_PAGES, -(-plan.limit // PAGE_SIZE)) if params.count else 1
        plan.state = tuple(_page_request(url, query, n) for n in range(1, pages + 1))
        plan.request = plan.state[0]
        return plan

    def page(self, response: HttpResponse, plan: Plan, n: int = 1) -> Page:
        """One page's results; the consent wall and error 999 are Blocked, other failures mapped."""
        if is_consent(response.body, response.url, response.headers.get("location", "")):
            raise Blocked(self.id, CONSENT_MESSAGE, 429)
        if response.status == 999:
            raise Blocked(self.id, THROTTLED_MESSAGE, 429)
        if not response.ok:
            raise self.error(response, plan)
        return Page(parse_results(response.body, MAX_RESULTS))


def _page_request(url: str, query: list[tuple[str, str]], n: int) -> HttpRequest:
    """Page `n` (1-based): page 1 as the search box sends it, later pages as Yahoo's pager."""
    if n == 1:
        params = [*query, ("iscqry", "")]
    else:
        params = [*query, ("b", str(1 + (n - 1) * PAGE_SIZE)), ("pz", str(PAGE_SIZE)), ("bct", "0"), ("xargs", "0")]
    return HttpRequest("GET", url, headers=HEADERS, params=params)


def is_consent(page: bytes, url: str = "", location: str = "") -> bool:
    """Yahoo's consent wall, told by structure: the final URL (or an unfollowed redirect) on the
    consent hosts or paths, or a page without a results list that holds the consent form. (A
    results page for a query about "collectConsent" echoes the word, never the form.)"""
    for target in (url, location):
        if target and _is_consent_url(target):
            return True
    if _RESULTS_START in page or not any(hint in page for hint in _CONSENT_HINTS):
        return False
    return LexborHTMLParser(page).css_first(_CONSENT_FORM) is not None


def _is_consent_url(target: str) -> bool:
    try:
        parts = urlsplit(target)
    except ValueError:
        return False
    host = (parts.hostname or "").lower()
    path = parts.path.lower()
    return host.startswith(_CONSENT_HOSTS) or path.startswith(_CONSENT_PATHS)


def parse_results(html: bytes | str, limit: int = MAX_RESULTS) -> list[SearchSource]:
    """The organic results of a Yahoo results page, deduplicated by URL, at most `limit`."""
    tree = LexborHTMLParser(results_part(html, _RESULTS_START))
    sources: list[SearchSource] = []
    seen: set[str] = set()
    for block in tree.css(_BLOCK_SELECTOR):
        if _BLOCK_CLASSES.isdisjoint((block.attributes.get("class") or "").split()):
            continue  # "richAlgo", "algo-xyz" and the like name styles, not results
        found = _result(block)
        if found is None:
            continue
        title, href, snippet = found
        url = unwrap_href(href)
        if url is None or _is_ad_or_internal(href, url) or not keep(url, seen):
            continue
        sources.append(SearchSource(title, url, snippet or None))
        if len(sources) >= limit:
            break
    return sources


def _result(block: Any) -> tuple[str, str, str] | None:
    """(title, href, snippet) of one result block, or None when it has no titled link."""
    heading = snippet = None
    for node in block.css(_PARTS):  # one query for both: each css call costs more than the walk
        if node.tag == "h3":
            heading = heading or node
        elif snippet is None:
            snippet = node
    link = _heading_link(heading, block) if heading is not None else None
    if link is None:
        head = block.css_first(".compTitle")
        link = (head if head is not None else block).css_first("a[href]")
    if link is None:
        return None
    href = link.attributes.get("href") or ""
    title = fold(link.attributes.get("aria-label") or "")
    if not title and heading is not None:
        for crumb in heading.css("span.p-abs"):  # the "host › path" overlay inside the heading
            crumb.decompose()
        title = node_text(heading)
    if not title:
        title = node_text(link)
    if not title or not href:
        return None
    return title, href, node_text(snippet) if snippet is not None else ""


def _heading_link(heading: Any, block: Any) -> Any:
    """The anchor around the heading, else the one inside it (a child, as Yahoo writes it, or
    deeper), or None; only anchors with an href count."""
    node = heading.parent
    while node is not None and node is not block:
        if node.tag == "a":
            return node if node.attributes.get("href") else None
        node = node.parent
    for child in heading.iter():
        if child.tag == "a" and child.attributes.get("href"):
            return child
    return heading.css_first("a[href]")


def unwrap_href(href: str) -> str | None:
    """The target of a result link: the `RU=` segment of a Yahoo redirect decoded, a direct
    http(s) link as it is, `//x` made https; None for anything else."""
    at = href.find("/RU=")
    if at >= 0:
        start = at + 4
        ends = [end for end in (href.find("/RK=", start), href.find("/RS=", start)) if end >= 0]
        encoded = href[start : min(ends)] if ends else href[start:]
        try:  # decodeURIComponent semantics: "+" kept, invalid UTF-8 rejected
            target = unquote(encoded, errors="strict")
        except UnicodeDecodeError:
            return None
        return target if target.startswith(("http://", "https://")) else None
    return web_url(href)


def _is_ad_or_internal(href: str, url: str) -> bool:
    """An ad (a `/cbclk` click redirect or a Bing `aclick` target) or a link into Yahoo's own
    search (an unwrapped redirect or a search page) rather than to a result."""
    if "/cbclk" in href or url.startswith(_AD_TARGETS):
        return True
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:  # not a URL a browser would open (a broken IPv6 literal)
        return True
    return host == "search.yahoo.com" or host.endswith(".search.yahoo.com")


PROVIDER: Final = Yahoo()
