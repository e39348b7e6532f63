"""Startpage: Google's web results through Startpage's privacy front end, keyless.

The request. Page 1 is a plain GET, as a browser's search box (OpenSearch) sends it:
`GET https://www.startpage.com/sp/search?query=...&cat=web&language=english&lui=english&qsr=en_US
&qadf=moderate[&with_date=d|w|m|y]&pl=opensearch`, with a desktop Chrome's navigation headers and
Startpage's `preferences` cookie (English search and interface, the en_US results region, 10
results a page; `keyEEEvalue` pairs joined by `N1N`). The region and language are a fixed en-US
default (`qsr=en_US`, `language=english`) and the family filter is Startpage's default
(`qadf=moderate`). Further pages are what Startpage's own "Next" button sends: a POST of the
search form (the same filters, plus `sc` = the `render.search_sc` token of the page before,
`t=device`, `segment` = that page's `render.segment` (`startpage.udog`), `abd=0`, `abe=0` and the
1-based `page`), with `Origin`/`Referer` https://www.startpage.com. A page without a token is
followed by a GET with `page=N` instead.

Where the real flow deviates from what one might assume: SearXNG and ddgs first fetch the home
page to scrape an `sc` token from `form#search input[name=sc]` and POST every search with it (one
extra request per search). Current pages do not need that for page 1 (a 2026 Startpage engine built
on trimmed real responses sends exactly the GET above; hearchco's notes found the token-less GET
working as early as 2023), and each results page carries the token for the next one in its props
(`render.search_sc`, also in its pagination form), so paging chains page to page and no search
costs a home-page request. An invented `sc` is refused (Startpage answers it with an error or
CAPTCHA page), so the token sent is only ever one Startpage issued. No live request was made
while writing this: the facts come from SearXNG's and ddgs's engines, that 2026 engine and a
results page captured in August 2026 (markup below).

The page. Results pages are React pages rendered on the server: the result markup (`section#main`
> `div.w-gl` > `div.result`, a title link `a.result-title` holding an `h2`, a `p.description`
snippet, Emotion `<style>` elements inside the blocks) and, in the hydration script, the same
results as JSON: `React.createElement(UIStartpage.AppSerpWeb, {...})`. The JSON is read (with
`json`'s raw decoder, so braces and `})` inside strings cannot cut it short): the blocks of
`render.presenter.regions.mainline` whose `display_type` starts with `web-` (`web-google`) are
the organic results, each `{title, clickUrl, description, ...}` with `<b>` highlights and HTML
entities in its text; the `ads-google-top`/`-bottom` blocks (ads), spelling suggestions, news and
image blocks are skipped. `render.presenter.pagination.pages` tells whether a next page exists.
A page without readable props falls back to the markup: `div.result` or the older
`div.w-gl__result` blocks, the title from the heading inside `a.result-title` /
`a.w-gl__result-title` (never the link's whole text: the `<style>` inside it would leak in), the
snippet from `p.description` / `p.w-gl__description`.

Results link straight to their targets (no redirect to unwrap). Dropped: targets that are not
http(s), links on Startpage itself (`/do/settings`, the Anonymous View proxy
`*.startpage.com/av/proxy`; a Startpage link carrying a `url=` target is unwrapped to it),
Google ad clicks (`google.*/aclk`, googleadservices.com, doubleclick.net) and duplicates. Text is
taken as written, tags removed without adding spaces and whitespace folded (`_html.fold`, as
DuckDuckGo's), icon-font glyphs (private use) removed; Google's date prefix of a snippet ("Feb 27,
2019 ... ", "3 days ago ... ") becomes the source's `published_date` (and its age) and leaves the
snippet.

Blocked, told by structure, never by words a results page could echo: a final URL under
`/sp/captcha` (Startpage redirects there) or Startpage's `/error-pages/` (a suspended IP); a page
without results whose form posts to `/sp/captcha` or has the `captcha-section` class; the Anubis
proof-of-work gate (`<script id="anubis_challenge">`) Startpage puts in front of `/sp/search` for
some networks; a 401/403. Those are `Blocked` (429), never "no results". A page with the props
but no web result is no results, and so is the no-results page Startpage serves without props
(its `mainline-results__notice` block in place of the results); a page with none of these is an
InvalidResponse.

The richer parameters are approximated: the ladder's start (which wins over `recency`) becomes
the narrowest `with_date` window (day, week, month, year) covering it, and domains `site:` /
`-site:` operators in `query` (Google honours them). A count up to 10 is one page; a larger one
asks for pages 2 and 3 (at most `MAX_PAGES`) until it is met, a page brings nothing new, there is
no next page, or a page fails (a partial notice; the pages before it are kept); pages are the
row's pace apart (0.5/s: 2 s), and a later page is asked only when the search's deadline leaves it
time (`_paging`). A search that used every page and is still short says so (a clamped notice).
"""

from __future__ import annotations

import html as _html
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import parse_qsl, urlsplit

from selectolax.lexbor import LexborHTMLParser

from .._dates import age_seconds
from .._registry import PROVIDERS
from .._types import SearchParams, SearchSource
from .._wire import HttpRequest, HttpResponse
from ..errors import Blocked, InvalidResponse
from ._base import (
    Plan,
    Support,
    bucket_notices,
    count,
    recency_bucket,
    site_operator_notices,
    with_site_operators,
)
from ._html import WINDOWED, browser_headers, fold, html_envelope, keep
from ._paging import PagedProvider

if TYPE_CHECKING:
    from .._context import ProviderContext

URL: Final = "https://www.startpage.com/sp/search"
ORIGIN: Final = "https://www.startpage.com"
DEFAULT_RESULTS: Final = 10
#: Results on one Startpage page (the `num_of_results` preference sent).
PAGE_SIZE: Final = 10
#: The most pages websearch asks one search for (ours: Startpage pages on to about 18).
MAX_PAGES: Final = 3
MAX_RESULTS: Final = PAGE_SIZE * MAX_PAGES
_WITH_DATE: Final = {"day": "d", "week": "w", "month": "m", "year": "y"}
#: What both the GET and the paging POST carry after the query: web results, English, en_US, the
#: default family filter.
_FILTERS: Final = (("cat", "web"), ("language", "english"), ("lui", "english"), ("qsr", "en_US"), ("qadf", "moderate"))
DEFAULT_SEGMENT: Final = "startpage.udog"
PREFERENCES: Final = "N1N".join(
    f"{key}EEE{value}"
    for key, value in (
        ("date_time", "world"),
        ("disable_open_in_new_window", "0"),
        ("enable_post_method", "1"),
        ("enable_proxy_safety_suggest", "1"),
        ("enable_stay_control", "1"),
        ("instant_answers", "1"),
        ("lang_homepage", "s/device/en/"),
        ("language", "english"),
        ("language_ui", "english"),
        ("num_of_results", str(PAGE_SIZE)),
        ("search_results_region", "en_US"),
        ("suggestions", "1"),
        ("wt_unit", "celsius"),
    )
)
#: Page 1: a top-level navigation from the browser's search box.
HEADERS: Final = browser_headers("none", cookie=f"preferences={PREFERENCES}")
#: Pages 2+: the results page's own search form, posted.
FORM_HEADERS: Final = browser_headers(
    "same-origin",
    ORIGIN + "/",
    cache_control="max-age=0",
    content_type="application/x-www-form-urlencoded",
    cookie=f"preferences={PREFERENCES}",
    origin=ORIGIN,
)
_ADVICE: Final = (
    "Startpage throttles automated searches from datacenter/shared-egress IPs; configure a credentialed "
    "provider such as Brave, Tavily, Exa, or Kagi for reliable web search."
)
CAPTCHA_MESSAGE: Final = f"Startpage blocked the request with a CAPTCHA page. {_ADVICE}"
ANUBIS_MESSAGE: Final = (
    f"Startpage answered with its proof-of-work bot check (Anubis), which only a browser running JavaScript passes. "
    f"{_ADVICE}"
)
SUSPENDED_MESSAGE: Final = f"Startpage refused the request (access denied for suspected automated use). {_ADVICE}"
NOT_A_RESULTS_PAGE: Final = (
    "Startpage returned a page without search results (neither the result data nor result markup)"
)
ONLY_BUCKETS: Final = "Startpage only filters by the past day, week, month or year"

_PROPS_MARKER: Final = b"React.createElement(UIStartpage.AppSerpWeb,"
_PROPS_TRIES: Final = 4  # occurrences of the marker tried (a query can echo it before the script)
_MARKUP: Final = (b'class="result', b"w-gl__result")
_BLOCK_HINTS: Final = (b"anubis_challenge", b"captcha", b"error-pages")
_ANUBIS: Final = "script#anubis_challenge"
_CAPTCHA: Final = 'form[action*="/sp/captcha"], form.captcha-section, .captcha-section form'
_SUSPENDED: Final = '[src*="/error-pages/"], [href*="/error-pages/blocked"], meta[content*="/error-pages/"]'
_BLOCKS: Final = "div.result, div.w-gl__result"
_NOTICE_MARKER: Final = b"mainline-results__notice"
_NOTICE: Final = ".mainline-results__notice"
_TITLE_LINK: Final = "a.result-title, a.w-gl__result-title"
_HEADING: Final = "h2, h3"
_SNIPPET: Final = "p.description, p.w-gl__description, .w-gl__description"
_TAG_RE: Final = re.compile(r"<[^>]*>")
_PUA_RE: Final = re.compile("[\ue000-\uf8ff]")
#: Google's date prefix of a snippet (English interface): "Feb 27, 2019 ... ", "27 Feb 2019 ... ",
#: "3 days ago ... ". The count is bounded: a longer one is not a date.
_DATE_PREFIX: Final = re.compile(
    r"((?:[A-Z][a-z]{2,8}\.? \d{1,2}, \d{4})|(?:\d{1,2} [A-Z][a-z]{2,8}\.? \d{4})"
    r"|(?:(\d{1,4}) (second|minute|hour|day|week|month|year)s? ago)) \.\.\.(?: |$)"
)
_UNIT_SECONDS: Final = {
    "second": 1,
    "minute": 60,
    "hour": 3600,
    "day": 86400,
    "week": 7 * 86400,
    "month": 30 * 86400,
    "year": 365 * 86400,
}
_AD_HOSTS: Final = ("googleadservices.com", "doubleclick.net")


@dataclass(frozen=True, slots=True)
class Page:
    """One results page: its sources, and what asking for the next page takes."""

    sources: tuple[SearchSource, ...]
    sc: str | None = None  # the token the next page's form must carry (`render.search_sc`)
    segment: str | None = None  # `render.segment`
    more: bool = True  # False when the page's pagination shows no next page


@dataclass(frozen=True, slots=True)
class Paging:
    """What building page 2+ takes: the endpoint, the query and filters, how many pages at most."""

    url: str
    filters: tuple[tuple[str, str], ...]  # query first, then `_FILTERS` and `with_date`
    pages: int


class Startpage(PagedProvider[Page]):
    info = PROVIDERS["startpage"]
    max_pages = MAX_PAGES
    says_page_cap = True
    supports: ClassVar[dict[str, Support]] = WINDOWED
    envelope = html_envelope("Startpage", status_classes={401: Blocked, 403: Blocked})

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        """Page 1's GET, and in `state` what pages 2+ take (`Paging`)."""
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        f = plan.filters
        filters = [("query", with_site_operators(params.query, f.include_domains, f.exclude_domains)), *_FILTERS]
        bucket = recency_bucket(f.start, plan.now) if f.start is not None else None
        window = bucket if f.start is not None else params.recency
        if window in _WITH_DATE:
            filters.append(("with_date", _WITH_DATE[window]))
        applied = f"with_date={_WITH_DATE[bucket]} (the past {bucket})" if bucket else None
        plan.notices += bucket_notices(plan, applied, "Startpage's longest (a year)", ONLY_BUCKETS)
        plan.notices += site_operator_notices(plan, self.label)
        url = ctx.endpoint(self.id, URL)
        plan.request = HttpRequest("GET", url, headers=HEADERS, params=[*filters, ("pl", "opensearch")])
        pages = 1 if plan.limit <= PAGE_SIZE else MAX_PAGES
        plan.state = Paging(url, tuple(filters), pages)
        return plan

    def next_request(self, plan: Plan, n: int, previous: Page) -> HttpRequest | None:
        """Page `n` (n > 1), built from the page before it, while the plan allows it."""
        paging: Paging = plan.state
        return next_page_request(paging, previous, n) if n <= paging.pages else None

    def page(self, response: HttpResponse, plan: Plan, n: int = 1) -> Page:
        """One page's results and paging token; a block, an error status or a stranger page raises."""
        body = response.body
        blocked = block_reason(body, response.url)
        if blocked is not None:
            raise Blocked(self.id, blocked, 429)
        if not response.ok:
            raise self.error(response, plan)
        page = parse_page(body, plan.now)
        if page is None:
            raise InvalidResponse(self.id, NOT_A_RESULTS_PAGE, response.status)
        return page


def next_page_request(paging: Paging, page: Page, n: int) -> HttpRequest:
    """Page `n` (1-based, n > 1): the search form posted with the previous page's token, or, when
    that page had none, a GET with `page=n`."""
    if page.sc:
        form = [*paging.filters, ("sc", page.sc), ("t", "device"), ("segment", page.segment or DEFAULT_SEGMENT)]
        form += [("abd", "0"), ("abe", "0"), ("page", str(n))]
        return HttpRequest("POST", paging.url, headers=FORM_HEADERS, form=form)
    return HttpRequest("GET", paging.url, headers=HEADERS, params=[*paging.filters, ("page", str(n))])


# -- blocked pages ---------------------------------------------------------------------------------


def block_reason(page: bytes, url: str = "") -> str | None:
    """Why the answer is a block (CAPTCHA, proof-of-work gate, suspension), told by structure; None
    for anything else. Only a page without results is inspected: a results page echoes its query,
    "captcha" or "anubis_challenge" included, in its title, search box and props."""
    path = _path(url)
    if "/sp/captcha" in path:
        return CAPTCHA_MESSAGE
    if "/error-pages/" in path:
        return SUSPENDED_MESSAGE
    if _PROPS_MARKER in page or not any(hint in page for hint in _BLOCK_HINTS):
        return None
    tree = LexborHTMLParser(page)
    if tree.css_first(_BLOCKS) is not None:
        return None
    if tree.css_first(_ANUBIS) is not None:
        return ANUBIS_MESSAGE
    if tree.css_first(_CAPTCHA) is not None:
        return CAPTCHA_MESSAGE
    if tree.css_first(_SUSPENDED) is not None:
        return SUSPENDED_MESSAGE
    return None


def _path(url: str) -> str:
    try:
        return urlsplit(url).path if url else ""
    except ValueError:
        return ""


# -- results pages ---------------------------------------------------------------------------------


def parse_results(html: bytes | str, limit: int = MAX_RESULTS, now: datetime | None = None) -> list[SearchSource]:
    """The organic results of a Startpage results page, deduplicated, at most `limit` (dates are
    aged from `now`, when given); a page that is not a results page has none."""
    page = parse_page(html, now)
    return list(page.sources[:limit]) if page is not None else []


def parse_page(html: bytes | str, now: datetime | None = None) -> Page | None:
    """A results page: from its props when they can be read, else from its markup, else the
    no-results notice (no sources); None when the page is none of these."""
    page = html.encode() if isinstance(html, str) else html
    props = _props(page)
    if props is not None:
        return _from_props(props, now)
    if any(marker in page for marker in _MARKUP):
        return _from_markup(page, now)
    if _NOTICE_MARKER in page and LexborHTMLParser(page).css_first(_NOTICE) is not None:
        return Page((), more=False)  # the no-results page without props: its notice block only
    return None


def _props(page: bytes) -> dict[str, Any] | None:
    """The object given to `React.createElement(UIStartpage.AppSerpWeb, ...)`: the first occurrence
    of the marker followed by a JSON object with a `render` object (an echo of the query in the
    title or search box is HTML-escaped, so it never decodes as one)."""
    at = page.find(_PROPS_MARKER)
    decoder = json.JSONDecoder()
    for _ in range(_PROPS_TRIES):
        if at < 0:
            return None
        start = at + len(_PROPS_MARKER)
        while start < len(page) and page[start] in b" \t\r\n":
            start += 1
        if page[start : start + 1] == b"{":
            try:
                value, _ = decoder.raw_decode(page[start:].decode("utf-8", "replace"))
            except (ValueError, RecursionError):
                value = None
            if isinstance(value, dict) and isinstance(value.get("render"), dict):
                return value
        at = page.find(_PROPS_MARKER, start)
    return None


def _from_props(props: dict[str, Any], now: datetime | None) -> Page:
    render: dict[str, Any] = props["render"]
    presenter = _dict(render.get("presenter"))
    mainline = _dict(presenter.get("regions")).get("mainline")
    sources: list[SearchSource] = []
    seen: set[str] = set()
    for block in mainline if isinstance(mainline, list) else ():
        if not isinstance(block, dict):
            continue
        kind, items = block.get("display_type"), block.get("results")
        if not isinstance(kind, str) or not kind.startswith("web-") or not isinstance(items, list):
            continue  # ads-google-top/-bottom, spellsuggest-google, news, images, ...
        for item in items:
            if not isinstance(item, dict):
                continue
            url = result_url(item.get("clickUrl"))
            title = _html_text(item.get("title"))
            if not title or not keep(url, seen):
                continue
            sources.append(_source(title, url, _html_text(item.get("description")), now))
    sc, segment = render.get("search_sc"), render.get("segment")
    return Page(
        tuple(sources),
        sc if isinstance(sc, str) and sc else None,
        segment if isinstance(segment, str) and segment else None,
        _has_next(presenter.get("pagination")),
    )


def _has_next(pagination: object) -> bool:
    """Whether the pagination lists a page after the current one (True when it cannot be read)."""
    if not isinstance(pagination, dict) or not isinstance(pagination.get("pages"), list):
        return True
    current = pagination.get("current")
    for entry in pagination["pages"]:
        if isinstance(entry, dict) and entry.get("nextPrev") is True:
            number = entry.get("number")
            if not isinstance(number, int) or isinstance(number, bool) or not isinstance(current, int):
                return True
            if number > current:
                return True
    return False


def _from_markup(page: bytes, now: datetime | None) -> Page:
    """The server-rendered result blocks, for a page whose props are missing or unreadable."""
    tree = LexborHTMLParser(page)
    tree.strip_tags(["style", "script", "noscript"])
    sources: list[SearchSource] = []
    seen: set[str] = set()
    for block in tree.css(_BLOCKS):
        link = block.css_first(_TITLE_LINK)
        if link is None:
            continue
        url = result_url(link.attrs.get("href"))
        heading = link.css_first(_HEADING)
        title = _text(heading if heading is not None else link)
        if not title or not keep(url, seen):
            continue
        snippet = block.css_first(_SNIPPET)
        sources.append(_source(title, url, _text(snippet) if snippet is not None else "", now))
    form = tree.css_first('form input[name="sc"]')
    sc = form.attrs.get("value") if form is not None else None
    return Page(tuple(sources), sc or None)


def _source(title: str, url: str, snippet: str, now: datetime | None) -> SearchSource:
    """A result, Google's date prefix taken out of the snippet into the date."""
    published = age = None
    match = _DATE_PREFIX.match(snippet)
    if match is not None:
        published = match.group(1)
        snippet = snippet[match.end() :]
        if match.group(2):  # "3 days ago": an age already
            age = int(match.group(2)) * _UNIT_SECONDS[match.group(3)]
        elif now is not None:
            age = age_seconds(published, now)
    return SearchSource(title, url, snippet or None, published, age)


def result_url(value: object) -> str | None:
    """A result's target: an absolute http(s) URL off Startpage (a Startpage link's `url=` target
    unwrapped) that is not a Google ad click; else None."""
    if not isinstance(value, str):
        return None
    url = value.strip()
    if url.startswith("//"):
        url = "https:" + url
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError:
        return None
    if parts.scheme not in ("", "http", "https") or (parts.scheme and not host):
        return None
    if not parts.scheme or host == "startpage.com" or host.endswith(".startpage.com"):
        target = next((v for k, v in parse_qsl(parts.query) if k == "url"), "")
        return result_url(target) if target.startswith(("http://", "https://")) else None
    if _is_ad(host, parts.path):
        return None
    return url


def _is_ad(host: str, path: str) -> bool:
    if any(host == ad or host.endswith("." + ad) for ad in _AD_HOSTS):
        return True
    name = host.removeprefix("www.")
    return path.startswith("/aclk") and (name.startswith("google.") or ".google." in host)


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _html_text(value: object) -> str:
    """A props field's text: tags removed (adding no spaces), entities decoded, folded."""
    if not isinstance(value, str):
        return ""
    text = _TAG_RE.sub("", value) if "<" in value else value
    if "&" in text:
        text = _html.unescape(text)
    return _fold(text)


def _text(node: Any) -> str:
    """A node's text as written (tags add no spaces), whitespace folded."""
    return _fold(node.text(deep=True, separator=""))


def _fold(text: str) -> str:
    """Whitespace folded to single spaces (`_html.fold`), private-use glyphs (icon fonts) removed."""
    return fold(text if text.isprintable() else _PUA_RE.sub("", text))


PROVIDER: Final = Startpage()
