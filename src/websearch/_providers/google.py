"""Google: the keyless web search page at https://www.google.com/search, parsed as HTML.

On the keyless-engine kit (`_kit`); what it sends and reads, and why, is in docs/engines/google.md.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Final
from urllib.parse import parse_qsl

from selectolax.lexbor import LexborHTMLParser

from .._core._notices import Notice, partial
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchSource
from .._core._wire import HttpResponse
from ..errors import Blocked, InvalidResponse
from . import _paging as paging
from ._base import Plan, Support, honours
from ._errors import ErrorEnvelope
from ._html import DATED, RETAIN_MAX, ancestor, browser_headers, has_class, keep, kept_tree, node_text
from ._kit import ADVICE, QUERY, Challenge, KeylessEngine, Params, url_host, url_parts, url_path
from ._locale import LOCALE_NATIVE, google_locale
from ._tbs import TbsWords, tbs_parts

if TYPE_CHECKING:
    from .._core._context import ProviderContext

URL: Final = "https://www.google.com/search"
MAX_RESULTS: Final = 20
#: About how many organic results a Google page holds.
PAGE_SIZE: Final = 10
#: The most pages one search asks for (ours: a spare page for pages short of 10 results).
MAX_PAGES: Final = 3
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

_SELECTOR: Final = "h3, span.CVA68e, .VwiC3b, .IsZvec, .aCOpRe, .s3v9rd, .FrIlee"  # titles and snippets
_TITLE_CLASS: Final = "CVA68e"  # the text-browser page's title span
_RESULTS_MARKERS: Final = (b' id="main"', b' id="search"', b' id="rso"')
_BOTTOM_MARKERS: Final = (b' id="pnnext"', b' aria-label="Next page"', b' id="botstuff"', b"<footer")
_TITLES: Final = "h3, span.CVA68e"
_AD_BLOCKS: Final = "#tads, #tadsb, #bottomads, [data-text-ad]"
_AD_MARKERS: Final = (b"tads", b"bottomads", b"data-text-ad")
#: The last two results columns parsed and their trees, kept alive on purpose (`kept_tree`).
_RECENT_TREES: Final[deque[tuple[bytes, LexborHTMLParser]]] = deque(maxlen=2)
_RETAIN_MAX: Final = RETAIN_MAX
_GOOGLE_HOST_RE: Final = re.compile(r"(?:www\.)?google\.(?:com?\.)?[a-z]{2,3}")
_UI_HOST_RE: Final = re.compile(r"(?:maps|translate|accounts|consent)\.google\.(?:com?\.)?[a-z]{2,3}")
#: The first path segments of the search UI on google.<tld> (other paths are Google's sites).
_UI_PATHS: Final = frozenset(
    {"search", "url", "aclk", "imgres", "maps", "setprefs", "preferences", "advanced_search", "webhp", "sorry"}
    | {"httpservice", "goto"}
)
_UI_HOSTS: Final = frozenset({"webcache.googleusercontent.com", "googleadservices.com", "www.googleadservices.com"})
_AD_HOSTS: Final = frozenset({"googleadservices.com", "www.googleadservices.com"})
_START_RE: Final = re.compile(r"[?&]start=(\d+)")
_PAGING: Final = 'a[href^="/search?"][href*="start="]'
_CONTAINERS: Final = "#search, #rso, #topstuff, #botstuff"
#: The walls, told by structure (docs/engines/google.md): the CAPTCHA; on a page with none of a
#: results page's containers, the cookie-consent page and the JavaScript wall.
_CAPTCHA: Final = 'form#captcha-form, form[action*="/sorry/"], div.g-recaptcha'
_JAVASCRIPT: Final = (
    'meta[http-equiv="refresh"][content*="/httpservice/retry/enablejs"], '
    'a[href*="/httpservice/retry/enablejs"], noscript iframe[src*="/httpservice/retry/enablejs"], #yvlrue'
)
WALLS: Final = (
    Challenge(CAPTCHA_MESSAGE, _CAPTCHA, (b"captcha-form", b"/sorry/", b"g-recaptcha")),
    Challenge(CONSENT_MESSAGE, 'form[action*="consent.google."]', (b"consent.google.",), listing=_CONTAINERS),
    Challenge(JAVASCRIPT_MESSAGE, _JAVASCRIPT, (b"/httpservice/retry/enablejs", b"yvlrue"), listing=_CONTAINERS),
)


@dataclass(frozen=True, slots=True)
class Page(paging.Page):
    """One result page: its sources (each URL once, in page order), whether it links a next page
    (`more`, also `has_next`), and how many result titles linked only through an opaque `/goto?url=`
    redirect."""

    opaque: int = 0

    @property
    def has_next(self) -> bool:
        """`more`: whether the page links a page after it."""
        return self.more


class Google(KeylessEngine[Page]):
    info = PROVIDERS["google"]
    #: Query operators: Google's own operators, kept in `q`; `site:`/`-site:` come back from the domain filters, the
    #: dates go in `tbs`.
    operators = honours(native="site -site filetype intitle inurl after before")
    url = URL
    headers = HEADERS
    params = (("q", QUERY), ("hl", "en"), ("gl", "us"), ("udm", "14"))
    max_results = MAX_RESULTS
    max_pages = MAX_PAGES
    spare_pages = True  # a spare page for pages short of PAGE_SIZE results
    says_page_cap = True
    page_offset = ("start", PAGE_SIZE, 0)  # the offset of page n's first result
    #: Days, hours and start as `qdr:`/`cdr:` (`_tbs`, fractions and times of day with notices), domains as operators.
    supports: ClassVar[dict[str, Support]] = {**DATED, "recency_hours": "native", **LOCALE_NATIVE}
    envelope = ErrorEnvelope(message=(), code=(), prefix="Google search error", body_in_message=False)

    def locale(self, plan: Plan) -> tuple[dict[str, str], dict[str, str], list[Notice]]:
        """`gl`, `hl` and `safe` (`_locale.google_locale`)."""
        return google_locale(plan.params), {}, []

    def dates(self, plan: Plan) -> tuple[Params, list[Notice]]:
        """`tbs`: `qdr:` windows or the `cdr:` custom range (`_tbs`)."""
        parts, notices = tbs_parts(plan, _TBS_WORDS)
        return ([("tbs", ",".join(parts))] if parts else []), notices

    def blocked(self, response: HttpResponse) -> str | None:
        """A wall on a non-2xx answer (a 2xx page is read first: a results page can echo any query)."""
        return None if response.ok else block_reason(response.body, response.url, response.headers.get("location"))

    def read(self, response: HttpResponse, plan: Plan, n: int) -> Page:
        """Page `n`'s results; a page of only opaque links is InvalidResponse, a wall without results Blocked."""
        page = parse_page(response.body, PAGE_SIZE * (n - 1))
        if not page.sources and page.opaque:
            raise InvalidResponse(self.id, OPAQUE_MESSAGE, 502)
        reason = None if page.sources else block_reason(response.body, response.url, response.headers.get("location"))
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


def block_reason(page: bytes, url: str = "", location: str | None = "") -> str | None:
    """The message of the wall a page is (`WALLS`; a final URL or redirect under `/sorry/` or on a
    `consent.` host), or None. Only asked of pages without results."""
    for where in (url, location or ""):
        if url_path(where).startswith("/sorry/"):
            return CAPTCHA_MESSAGE
        if url_host(where).startswith("consent."):
            return CONSENT_MESSAGE
    return next((wall.message for wall in WALLS if wall(page)), None)


def parse_page(html: bytes | str, start: int = 0) -> Page:
    """The organic results of a Google result page (any variant; ads, sitelinks, Google's own links
    and non-http(s) targets dropped), and whether it links a page after offset `start`."""
    part = _results_part(html)
    tree = kept_tree(part, _RECENT_TREES)
    sources: list[SearchSource] = []
    seen: set[str] = set()
    opaque = 0
    for title, href, snippet in _walk(tree, any(marker in part for marker in _AD_MARKERS)):
        url = unwrap_href(href)
        if url is None:
            opaque += href.startswith("/goto?") or ("/goto?" in href and "google." in href.partition("/goto?")[0])
        elif not is_internal(url) and keep(url, seen):
            sources.append(SearchSource(title, url, snippet or None))
    return Page(tuple(sources), bool(sources) and _links_beyond(tree, start), opaque)


def parse_results(html: bytes | str, limit: int = MAX_RESULTS) -> list[SearchSource]:
    """The organic results of one Google page, at most `limit`."""
    return list(parse_page(html).sources[:limit])


def _walk(tree: LexborHTMLParser, ad_markers: bool) -> list[tuple[str, str, str | None]]:
    """(title, href, snippet) per result title, in document order: a title inside a link opens a
    result (an ad's opens none), the first snippet before the next title is its."""
    ads = {t.mem_id for block in tree.css(_AD_BLOCKS) for t in block.css(_TITLES)} if ad_markers else set()
    found: list[tuple[str, str, str | None]] = []
    current = False  # whether the last title opened a result that still lacks its snippet
    for node in tree.css(_SELECTOR):
        tag = node.tag
        if tag == "h3" or (tag == "span" and has_class(node.attributes.get("class") or "", _TITLE_CLASS)):
            link = None if node.mem_id in ads else ancestor(node, "a", 6)  # a title in no link is no result
            href = (link.attributes.get("href") or None) if link is not None else None
            title = node_text(node) if href else ""
            current = bool(title)
            if current:
                found.append((title, href or "", None))
        elif current:
            title, href, _ = found[-1]
            found[-1] = (title, href, node_text(node) or None)
            current = False
    return found


def _results_part(html: bytes | str) -> bytes:
    """The results column: from the first results container found to the first script after the
    "Next" link, else after the bottom block (docs/engines/google.md)."""
    page = html.encode() if isinstance(html, str) else html
    at = next((at for marker in _RESULTS_MARKERS if (at := page.find(marker)) > 0), -1)
    begin = max(0, page.rfind(b"<", 0, at)) if at > 0 else 0
    at = next((at for marker in _BOTTOM_MARKERS if (at := page.find(marker, begin)) > 0), -1)
    script = page.find(b"<script", at) if at > 0 else -1
    end = script if script > 0 else len(page)
    return page[begin:end] if begin or end < len(page) else page


def _links_beyond(tree: LexborHTMLParser, start: int) -> bool:
    """Whether the page's own pagination (its `/search?...&start=N` links) reaches past offset `start`."""
    hrefs = (link.attrs.get("href") or "" for link in tree.css(_PAGING))
    return any(int(match.group(1)) > start for href in hrefs for match in _START_RE.finditer(href))


def unwrap_href(href: str) -> str | None:
    """The target of a result link: `/url?q=` / `/url?url=` decoded, `//x` made https, a direct
    http(s) link as it is; None for ads, Google's relative links and other schemes."""
    href = href.strip().replace("&amp;", "&")
    if href.startswith("//"):
        href = "https:" + href
    if href.startswith("/"):  # /search?, /aclk?, /imgres? ...: the search UI and ads; /url? unwrapped
        return _redirect_target(href) if href.startswith("/url?") else None
    if not href.startswith(("http://", "https://")):
        return None
    parts = url_parts(href)
    host = (parts.hostname or "") if parts is not None else ""
    if parts is None or host in _AD_HOSTS:
        return None
    if _GOOGLE_HOST_RE.fullmatch(host):
        if parts.path == "/url":
            return _redirect_target(href)
        if parts.path.startswith(("/aclk", "/goto")):
            return None
    return href


def _redirect_target(href: str) -> str | None:
    """The http(s) target of a `/url?` redirect: its first `q`, else its first `url`, decoded as
    decodeURIComponent (`+` kept, invalid UTF-8 rejected)."""
    query = href.partition("?")[2].partition("#")[0].replace("+", "%2B")
    pairs = dict(reversed(parse_qsl(query, errors="surrogateescape")))
    target = pairs.get("q") or pairs.get("url")
    if target is None or (not target.isprintable() and any("\udc80" <= c <= "\udcff" for c in target)):
        return None
    return target if target.startswith(("http://", "https://")) else None


def is_internal(url: str) -> bool:
    """Is `url` Google's own UI (the search pages on google.<tld>, maps, translate, sign-in, consent,
    the cache)? Other Google sites, such as support.google.com, are results."""
    if "google" not in url:
        return False
    parts = url_parts(url)
    if parts is None:
        return True
    host = parts.hostname or ""
    if host in _UI_HOSTS or _UI_HOST_RE.fullmatch(host):
        return True
    return bool(_GOOGLE_HOST_RE.fullmatch(host)) and parts.path.lstrip("/").split("/", 1)[0] in _UI_PATHS


PROVIDER: Final = Google()
