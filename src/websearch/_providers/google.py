"""Google: the keyless web search page at https://www.google.com/search, parsed as HTML.

On the keyless-engine kit (`_kit`); what it sends and reads is in docs/engines/google.md.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import parse_qsl, urlsplit

from selectolax.lexbor import LexborHTMLParser

from .._core._notices import Notice, partial
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchSource
from .._core._wire import HttpResponse
from ..errors import Blocked, InvalidResponse
from ._base import Plan, Support
from ._errors import ErrorEnvelope
from ._html import browser_headers, has_class, keep, node_text
from ._kit import ADVICE, QUERY, KeylessEngine, Params
from ._tbs import TbsWords, tbs_parts

if TYPE_CHECKING:
    from .._core._context import ProviderContext

URL: Final = "https://www.google.com/search"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 20
#: About how many organic results a Google page holds.
PAGE_SIZE: Final = 10
#: The most pages one search asks for (ours: a spare page for pages short of 10 results).
MAX_PAGES: Final = 3
PARAMS: Final = (("hl", "en"), ("gl", "us"), ("udm", "14"))
HEADERS: Final = browser_headers("same-origin", "https://www.google.com/")
_ADVICE: Final = f"Google blocks automated searches from many networks; {ADVICE}"
CAPTCHA_MESSAGE: Final = f"Google blocked the request with its unusual-traffic CAPTCHA (/sorry/). {_ADVICE}"
CONSENT_MESSAGE: Final = f"Google answered with its cookie-consent page instead of results. {_ADVICE}"
JAVASCRIPT_MESSAGE: Final = f"Google answered with a page that requires JavaScript instead of results. {_ADVICE}"
OPAQUE_WHY: Final = (
    "their links are opaque /goto?url= redirects, whose target only Google's redirect tells (websearch does not "
    "ask Google once per result)"
)
OPAQUE_MESSAGE: Final = f"Google returned results websearch cannot read: {OPAQUE_WHY}."
WHOLE_DAYS: Final = "Google's custom date range takes whole days"
RANGE_FOR_END: Final = "with end_published_date Google needs its custom date range, which takes whole days"
WHOLE_HOURS: Final = "Google's relative windows count whole hours"
_TBS_WORDS: Final = TbsWords(WHOLE_DAYS, RANGE_FOR_END, WHOLE_HOURS, start_day="its start day")

_SELECTOR: Final = "h3, span.CVA68e, .VwiC3b, .IsZvec, .aCOpRe, .s3v9rd, .FrIlee"
_TITLE_CLASS: Final = "CVA68e"  # the text-browser page's title span
_RESULTS_MARKERS: Final = (b' id="main"', b' id="search"', b' id="rso"')
_BOTTOM_MARKERS: Final = (b' id="pnnext"', b' aria-label="Next page"', b' id="botstuff"', b"<footer")
_TITLES: Final = "h3, span.CVA68e"
_AD_BLOCKS: Final = "#tads, #tadsb, #bottomads, [data-text-ad]"
_AD_MARKERS: Final = (b"tads", b"bottomads", b"data-text-ad")
_LINK_DEPTH: Final = 6
_OPAQUE: Final = "/goto?"
_RECENT_TREES: Final[deque[tuple[bytes, LexborHTMLParser]]] = deque(maxlen=2)
"""The last two results columns parsed and their trees, kept alive on purpose, as DuckDuckGo's
provider does: freeing a lexbor document hands its heap back to the kernel and the next parse
page-faults it in again (a third of a basic page's parse on this VM). Bounded: two parts, each
at most `_RETAIN_MAX` bytes (a results column is 15-40 KB once cut from the page)."""
_RETAIN_MAX: Final = 256 * 1024
_GOOGLE_HOST_RE: Final = re.compile(r"(?:www\.)?google\.(?:com?\.)?[a-z]{2,3}")
_UI_HOST_RE: Final = re.compile(r"(?:maps|translate|accounts|consent)\.google\.(?:com?\.)?[a-z]{2,3}")
#: The first path segments of the search UI on google.<tld> (other paths are Google's sites).
_UI_PATHS: Final = frozenset(
    {
        "search",
        "url",
        "aclk",
        "imgres",
        "maps",
        "setprefs",
        "preferences",
        "advanced_search",
        "webhp",
        "sorry",
        "httpservice",
        "goto",
    }
)
_OTHER_UI_HOSTS: Final = frozenset({"webcache.googleusercontent.com"})
_AD_HOSTS: Final = frozenset({"googleadservices.com", "www.googleadservices.com"})
_START_RE: Final = re.compile(r"[?&]start=(\d+)")
_PAGING: Final = 'a[href^="/search?"][href*="start="]'
_CAPTCHA: Final = 'form#captcha-form, form[action*="/sorry/"], div.g-recaptcha'
_CONSENT: Final = 'form[action*="consent.google."]'
_JAVASCRIPT: Final = (
    'meta[http-equiv="refresh"][content*="/httpservice/retry/enablejs"], '
    'a[href*="/httpservice/retry/enablejs"], noscript iframe[src*="/httpservice/retry/enablejs"], #yvlrue'
)
_RESULTS_CONTAINERS: Final = "#search, #rso, #topstuff, #botstuff"


@dataclass(frozen=True, slots=True)
class Page:
    """One result page: its sources (each URL once, in page order), whether it links a next page,
    and how many result titles linked only through an opaque `/goto?url=` redirect."""

    sources: tuple[SearchSource, ...]
    has_next: bool
    opaque: int = 0

    @property
    def more(self) -> bool:
        """`has_next`, as the paging loop reads it."""
        return self.has_next


class Google(KeylessEngine[Page]):
    info = PROVIDERS["google"]
    url = URL
    headers = HEADERS
    params = (("q", QUERY), *PARAMS)
    max_results = MAX_RESULTS
    max_pages = MAX_PAGES
    spare_pages = True  # a spare page for pages short of PAGE_SIZE results
    says_page_cap = True
    supports: ClassVar[dict[str, Support]] = {
        "recency": "native",
        "limit": "native",
        "num_search_results": "native",
        "recency_days": "native",  # qdr:dN; a fraction of a day as hours
        "recency_hours": "native",  # qdr:hN; a fraction of an hour rounded up (a notice)
        "start_published_date": "native",  # whole days: a timestamp loses its time (a notice)
        "end_published_date": "native",
        "include_domains": "approximate",  # site: operators in the query
        "exclude_domains": "approximate",  # -site: operators in the query
    }
    envelope = ErrorEnvelope(message=(), code=(), prefix="Google search error", body_in_message=False)

    def page_params(self, n: int) -> Params:
        """`start`, the offset of page n's first result, from page 2 on."""
        return [("start", str(PAGE_SIZE * (n - 1)))] if n > 1 else []

    def dates(self, plan: Plan) -> tuple[Params, list[Notice]]:
        """`tbs`: `qdr:` windows or the `cdr:` custom range (`_tbs`)."""
        parts, notices = tbs_parts(plan, _TBS_WORDS)
        return ([("tbs", ",".join(parts))] if parts else []), notices

    def blocked(self, response: HttpResponse) -> str | None:
        """A wall on a non-2xx answer (a 2xx page is read first: a results page can echo any query)."""
        return None if response.ok else _block_reason(response)

    def read(self, response: HttpResponse, plan: Plan, n: int) -> Page:
        """Page `n`'s results; a page of only opaque links is InvalidResponse, a wall without
        results Blocked."""
        page = parse_page(response.body, PAGE_SIZE * (n - 1))
        if not page.sources and page.opaque:
            raise InvalidResponse(self.id, OPAQUE_MESSAGE, 502)
        reason = _block_reason(response) if not page.sources else None
        if reason is not None:
            raise Blocked(self.id, reason, 429)
        return page

    async def search(self, plan: Plan, ctx: ProviderContext) -> ProviderResult:
        """The pages (`_paging`), and a notice of the results behind opaque links."""
        paged = await self.fetch_pages(plan, ctx)
        opaque = sum(page.opaque for page in paged.pages)
        if opaque:
            paged.notices.append(partial(f"{opaque} Google results were left out: {OPAQUE_WHY}"))
        return ProviderResult(sources=paged.sources, notices=tuple(paged.notices))


def _block_reason(response: HttpResponse) -> str | None:
    return block_reason(response.body, response.url, response.headers.get("location", ""))


# -- parsing -----------------------------------------------------------------------------------


def parse_page(html: bytes | str, start: int = 0) -> Page:
    """The organic results of a Google result page (any of its variants) and whether it links a
    page after offset `start`. Each URL once, in page order; ads, sitelinks, Google's own links
    and non-http(s) targets dropped."""
    part = _results_part(html)
    tree = LexborHTMLParser(part)
    if len(part) <= _RETAIN_MAX:
        _RECENT_TREES.append((part, tree))
    sources: list[SearchSource] = []
    seen: set[str] = set()
    opaque = 0
    for title, href, snippet in _walk(tree, any(marker in part for marker in _AD_MARKERS)):
        url = unwrap_href(href)
        if url is None:
            opaque += href.startswith(_OPAQUE) or ("/goto?" in href and "google." in href.partition("/goto?")[0])
            continue
        if is_internal(url) or not keep(url, seen):
            continue
        sources.append(SearchSource(title, url, snippet or None))
    return Page(tuple(sources), bool(sources) and _links_beyond(tree, start), opaque)


def parse_results(html: bytes | str, limit: int = MAX_RESULTS) -> list[SearchSource]:
    """The organic results of one Google page, at most `limit`."""
    return list(parse_page(html).sources[:limit])


def _walk(tree: LexborHTMLParser, ad_markers: bool) -> list[tuple[str, str, str | None]]:
    """(title, href, snippet) per result title, in document order: a title opens a result (an
    ad's, or a title without a link, opens none), the first snippet before the next title is its."""
    ads: set[int] = set()
    if ad_markers:
        ads = {title.mem_id for block in tree.css(_AD_BLOCKS) for title in block.css(_TITLES)}
    found: list[tuple[str, str, str | None]] = []
    current = False  # whether the last title opened a result that still lacks its snippet
    for node in tree.css(_SELECTOR):
        tag = node.tag
        if tag == "h3" or (tag == "span" and has_class(node.attributes.get("class") or "", _TITLE_CLASS)):
            href = None if node.mem_id in ads else _link_around(node)
            title = node_text(node) if href else ""
            current = bool(title)
            if current:
                found.append((title, href or "", None))
        elif current:
            title, href, _ = found[-1]
            found[-1] = (title, href, node_text(node) or None)
            current = False
    return found


def _link_around(title: Any) -> str | None:
    """The href of the result link around a title, or None for a title that is no result: one
    not inside a link (a section heading; a sitelink, whose `<h3>` holds its own link inside
    another result). The link is at most a few levels up (three on the basic page)."""
    node = title.parent
    for _ in range(_LINK_DEPTH):
        if node is None:
            return None
        if node.tag == "a":
            href: str | None = node.attributes.get("href")
            return href or None
        node = node.parent
    return None


def _results_part(html: bytes | str) -> bytes:
    """The results column: from the first results container (the head's styles and scripts and
    the search form, which echoes the query, hold no results) to the first script after the
    "Next" link, else after the bottom block that would hold it (`#botstuff`, the basic page's
    `<footer>`): a real page's remaining scripts weigh several hundred KB."""
    page = html.encode() if isinstance(html, str) else html
    begin = 0
    for marker in _RESULTS_MARKERS:  # the first found: each scan stops there
        at = page.find(marker)
        if at > 0:
            begin = max(0, page.rfind(b"<", 0, at))
            break
    end = len(page)
    for marker in _BOTTOM_MARKERS:
        at = page.find(marker, begin)
        if at > 0:
            script = page.find(b"<script", at)
            end = script if script > 0 else end
            break
    return page[begin:end] if begin or end < len(page) else page


def _links_beyond(tree: LexborHTMLParser, start: int) -> bool:
    """Whether the page's own pagination (its `/search?...&start=N` links: "Next", the page
    numbers) reaches past offset `start`."""
    for link in tree.css(_PAGING):
        for match in _START_RE.finditer(link.attrs.get("href") or ""):
            if int(match.group(1)) > start:
                return True
    return False


def unwrap_href(href: str) -> str | None:
    """The target of a result link: `/url?q=` / `/url?url=` decoded, `//x` made https, a direct
    http(s) link as it is; None for ads, Google's relative links and other schemes."""
    href = href.strip().replace("&amp;", "&")
    if href.startswith("//"):
        href = "https:" + href
    if href.startswith("/"):
        if not href.startswith("/url?"):
            return None  # /search?, /aclk?, /imgres? ...: the search UI and ads
        return _redirect_target(href)
    if not href.startswith(("http://", "https://")):
        return None
    try:
        parts = urlsplit(href)
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if host in _AD_HOSTS:
        return None
    if _GOOGLE_HOST_RE.fullmatch(host):
        if parts.path == "/url":
            return _redirect_target(href)
        if parts.path.startswith(("/aclk", "/goto")):
            return None
    return href


def _redirect_target(href: str) -> str | None:
    """The http(s) target of a `/url?` redirect: its `q`, else its `url` (the desktop form has
    `q=` empty), decoded as decodeURIComponent (`+` kept, invalid UTF-8 rejected)."""
    query = href.partition("?")[2].partition("#")[0].replace("+", "%2B")
    pairs = dict(reversed(parse_qsl(query, errors="surrogateescape")))  # the first of each name
    target = pairs.get("q") or pairs.get("url")
    if target is None or (not target.isprintable() and any("\udc80" <= c <= "\udcff" for c in target)):
        return None
    return target if target.startswith(("http://", "https://")) else None


def is_internal(url: str) -> bool:
    """Is `url` Google's own UI: the search pages on google.<tld>, maps, translate, sign-in,
    consent, the cache? (Other Google sites, such as support.google.com, are results.)"""
    if "google" not in url:
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return True
    host = (parts.hostname or "").lower()
    if host in _OTHER_UI_HOSTS or host in _AD_HOSTS or _UI_HOST_RE.fullmatch(host):
        return True
    if _GOOGLE_HOST_RE.fullmatch(host):
        first = parts.path.lstrip("/").split("/", 1)[0]
        return first in _UI_PATHS
    return False


# -- walls ------------------------------------------------------------------------------------


def block_reason(page: bytes, url: str = "", location: str = "") -> str | None:
    """The message of the wall a page is (CAPTCHA, consent, JavaScript), told by its structure,
    or None. Only asked of pages without results."""
    for where in (url, location):
        if where:
            try:
                parts = urlsplit(where)
            except ValueError:
                continue
            if parts.path.startswith("/sorry/"):
                return CAPTCHA_MESSAGE
            if (parts.hostname or "").startswith("consent."):
                return CONSENT_MESSAGE
    captcha = b"captcha-form" in page or b"/sorry/" in page or b"g-recaptcha" in page
    consent = b"consent.google." in page
    javascript = b"/httpservice/retry/enablejs" in page or b"yvlrue" in page
    if not (captcha or consent or javascript):
        return None
    tree = LexborHTMLParser(page)
    if captcha and tree.css_first(_CAPTCHA) is not None:
        return CAPTCHA_MESSAGE
    if tree.css_first(_RESULTS_CONTAINERS) is not None:  # a results page that has none: no results
        return None
    if consent and tree.css_first(_CONSENT) is not None:
        return CONSENT_MESSAGE
    if javascript and tree.css_first(_JAVASCRIPT) is not None:
        return JAVASCRIPT_MESSAGE
    return None


PROVIDER: Final = Google()
