"""Yahoo: the keyless search.yahoo.com results page, read as HTML (Bing's index behind it).

On the keyless-engine kit (`_kit`); what it sends and reads is in docs/engines/yahoo.md.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final
from urllib.parse import unquote, urlsplit

from selectolax.lexbor import LexborHTMLParser

from .._core._notices import Notice
from .._core._registry import PROVIDERS
from .._core._types import SearchSource
from .._core._wire import HttpResponse
from ._base import Plan, Support, honours
from ._html import WINDOWED, browser_headers, fold, keep, node_text, results_part, web_url
from ._kit import ADVICE, QUERY, KeylessEngine, Params
from ._locale import yahoo_locale
from ._paging import Page

URL: Final = "https://search.yahoo.com/search"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 20
#: Organic results on one Yahoo page (`pz`), and the step of `b`.
PAGE_SIZE: Final = 7
#: The most pages one search asks for (our cap: 3 pages of 7 cover MAX_RESULTS).
MAX_PAGES: Final = 3
#: `recency` as Yahoo's `btf` windows.
WINDOWS: Final = {"day": "d", "week": "w", "month": "m"}
HEADERS: Final = browser_headers("same-origin", "https://search.yahoo.com/", cache_control="max-age=0")
CONSENT_MESSAGE: Final = (
    "Yahoo answered with its cookie-consent page (guce.yahoo.com / consent.yahoo.com) instead of results: "
    "Yahoo asks visitors from the EU to accept its cookies first. Configure a credentialed provider such as "
    "Brave, Tavily, Exa, or Kagi for reliable web search."
)
THROTTLED_MESSAGE: Final = (
    "Yahoo refused the request (error 999): Yahoo blocks automated searches from datacenter/shared-egress "
    f"IPs for a while; {ADVICE}"
)
THROTTLED: Final = {999: THROTTLED_MESSAGE}
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


class Yahoo(KeylessEngine[Page]):
    info = PROVIDERS["yahoo"]
    #: Query operators: Bing's index behind it: `site:` holds, `filetype:` loosely.
    operators = honours(native="site -site", approximate="filetype")
    url = URL
    headers = HEADERS
    params = (("p", QUERY),)
    max_results = MAX_RESULTS
    page_size = PAGE_SIZE
    max_pages = MAX_PAGES
    windows = WINDOWS  # day, week, month; "year" has no Yahoo window (a notice)
    window_param = "btf"
    blocked_statuses = THROTTLED
    supports: ClassVar[dict[str, Support]] = {**WINDOWED, "language": "native", "safesearch": "native"}

    def locale(self, plan: Plan) -> tuple[dict[str, str], dict[str, str], list[Notice]]:
        """The `sB` preference cookie: safe search and the results' language."""
        cookie = yahoo_locale(plan.params)
        return {}, ({"Cookie": cookie} if cookie else {}), []

    def page_params(self, n: int) -> Params:
        """Page 1 as the search box sends it, later pages as Yahoo's pager."""
        if n == 1:
            return [("iscqry", "")]
        return [("b", str(1 + (n - 1) * PAGE_SIZE)), ("pz", str(PAGE_SIZE)), ("bct", "0"), ("xargs", "0")]

    def blocked(self, response: HttpResponse) -> str | None:
        if is_consent(response.body, response.url, response.headers.get("location", "")):
            return CONSENT_MESSAGE
        return super().blocked(response)

    def read(self, response: HttpResponse, plan: Plan, n: int) -> Page:
        return Page(parse_results(response.body, MAX_RESULTS))


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
