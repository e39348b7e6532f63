"""Ecosia: the keyless web search at www.ecosia.org, behind Cloudflare.

Request: GET https://www.ecosia.org/search?method=index&q=...[&p=N][&freshness=...] with the
headers of a desktop Chrome that navigates from Ecosia's own pages (Referer www.ecosia.org,
Sec-Fetch-Site same-origin). `method=index` is what Ecosia's own "Next" link carries; `p` is the
0-based page (page 1 sends none); `freshness` is day, week or month. No region is sent: Ecosia
takes its market from its ECFG settings cookie, else from Accept-Language and the client's IP.
We send no cookie and `Accept-Language: en-US,en;q=0.9`, a fixed en-US default (what the IP adds
is Ecosia's doing). Safe search stays Ecosia's default (it lives in the same cookie).

The page is server-rendered (a Vue app); the parser reads the markup of a real page saved by
karust/openserp (MIT, tests/pages/ecosia/SOURCE.md). Each organic result is
`div[data-test-id=mainline-result-web] > article[data-test-id=organic-result]` holding two
`a[data-test-id=result-link]`: the breadcrumb row (tabindex=-1, its text the domain) and the
title row, `a.result__link` around `h2[data-test-id=result-title]`. The snippet is
`p[data-test-id=web-result-description]` inside `div[data-test-id=result-description]`; the div
may also hold a screen-reader "Thumbnail for ..." caption, so the paragraph is read first. The
older markup (`article.result[data-test-id=mainline-result-web]`, `div.result` with
`a.result__link` or `a.result-title`, `p.result__description` or `.result-snippet`) is read too.
Links are direct: there is no redirect to unwrap (`//host/...` is made https). Dropped: ads
(their `[data-test-id=mainline-result-ad]` wrappers, an empty `ad-google` div filled by script,
or any block whose test id or class marks an ad), Ecosia's own vertical links (www.ecosia.org
/search, /images, /news, /videos, ...; a real result on another Ecosia page or host is kept),
targets that are not http(s), and duplicates. The knowledge panel (`mainline-result-entity`) and
the related queries are not results. Text is taken as written, whitespace folded, inline tags
adding no spaces. Where the page deviates from what one might assume: snippets of Google-served
results begin with the date as the market writes it ("02.08.2025 ... " in Germany, "Aug 2, 2025
... " in English): the snippet keeps it and the date becomes `published_date` (ISO for the dotted
form) with its age.

An empty result (`[data-test-id=web-no-results]`, or a mainline without organic results) is no
sources, which the chain reports as no results. Ecosia answers plain HTTP clients from many
networks with a Cloudflare page instead: the managed "Just a moment..." challenge (the
`window._cf_chl_opt` script, `/cdn-cgi/challenge-platform/`), Ecosia's Turnstile "Confirm you're
not a robot" page (`input[name=cf-turnstile-response]`), the older `form#challenge-form`, or the
"you have been blocked" page (`#cf-wrapper`), with 403, 503, 429 or 200. It is told by structure
(one of those elements on a page without Ecosia's results markup, whose `data-test-id="mainline`
and `web-no-results` attributes a challenge never has; a results page echoes its query only in
text and attribute values) and is `Blocked` (429); a bare 403 is `Blocked` too (Ecosia has no
login that could be refused). Other statuses map through the envelope.

Paging (`_paging`): about 10 organic results a page (the saved page has 10). A count within one
page asks for page 1 only; a larger one (at most MAX_RESULTS) asks for the further pages, up to
MAX_PAGES, the row's pace apart (0.2/s: 5 s), until the count is met, a page adds no new URL, or a
page fails (a notice; the pages before it are kept). A later page is asked only when the search's
deadline leaves it a second (after the gap and half a second for the chain), and is given up when
that runs out, so a slow page 2 never costs page 1; a search that used every page and is still
short says so (a clamped notice). The date ladder's start (which wins over `recency`) becomes the
narrowest `freshness` covering it; Ecosia has no year window, so `recency="year"` and windows
past a month are not applied (a notice says so). Domains become `site:` / `-site:` operators.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import urlsplit

from selectolax.lexbor import LexborHTMLParser

from .._notices import not_applied
from .._registry import PROVIDERS
from .._types import SearchParams, SearchSource
from .._wire import HttpRequest, HttpResponse
from ..errors import Blocked
from ._base import (
    Plan,
    Support,
    age_seconds,
    bucket_notices,
    count,
    recency_bucket,
    site_operator_notices,
    with_site_operators,
)
from ._html import WINDOWED, browser_headers, html_envelope, keep, node_text, results_part, web_url
from ._paging import Page, PagedProvider

if TYPE_CHECKING:
    from .._context import ProviderContext

URL: Final = "https://www.ecosia.org/search"
DEFAULT_RESULTS: Final = 10
#: About how many organic results an Ecosia page holds.
PAGE_SIZE: Final = 10
#: The most pages websearch asks one search for (our cap, to stay polite to Cloudflare).
MAX_PAGES: Final = 3
MAX_RESULTS: Final = PAGE_SIZE * MAX_PAGES
#: Ecosia's `freshness` windows.
FRESHNESS: Final = ("day", "week", "month")
ONLY_WINDOWS: Final = "Ecosia only filters by the past day, week or month"
HEADERS: Final = browser_headers("same-origin", "https://www.ecosia.org/")
CHALLENGE_MESSAGE: Final = (
    "Ecosia blocked the request with a Cloudflare challenge. Ecosia sits behind Cloudflare, which challenges "
    "plain HTTP clients from many networks (datacenter and shared-egress IPs); configure a credentialed provider "
    "such as Brave, Tavily, Exa, or Kagi for reliable web search."
)
REFUSED_MESSAGE: Final = (
    "Ecosia refused the request (403): its Cloudflare front blocks plain HTTP clients from many networks; "
    "configure a credentialed provider such as Brave, Tavily, Exa, or Kagi for reliable web search."
)

#: Attribute text only Ecosia's result pages carry (a results list, or its "no results" block).
_RESULTS_MARKERS: Final = (b'data-test-id="mainline', b'data-test-id="web-no-results"')
#: Cheap hints that a page may be one of Cloudflare's; the tree then decides.
_CF_HINTS: Final = (b"cf-turnstile", b"challenge-platform", b"_cf_chl", b"challenge-form", b"cf-wrapper")
_CHALLENGE: Final = (
    'input[name="cf-turnstile-response"], .cf-turnstile, form#challenge-form, form[action*="__cf_chl"], '
    'script[src*="/cdn-cgi/challenge-platform/"], #challenge-stage, #challenge-running, #cf-wrapper, '
    "#cf-error-details"
)
_RESULTS_START: Final = b'data-test-id="mainline"'
#: After the last result: the mainline's footer (the pagination).
_RESULTS_END: Final = b'class="mainline__footer"'
_CURRENT_MARK: Final = b'data-test-id="organic-result"'
_CURRENT: Final = (
    'article[data-test-id="organic-result"] a.result__link[href], '
    'article[data-test-id="organic-result"] [data-test-id="web-result-description"]'
)
_MAX_DEPTH: Final = 12
_BLOCKS: Final = (
    'article[data-test-id="organic-result"]',
    '[data-test-id="mainline-result-web"]',
    "div.result, article.result",
)
_TITLE_LINKS: Final = (
    "a.result__link[href]",
    'a[data-test-id="result-link"][href]',
    "a.result-title[href]",
    ".result__title a[href]",
    "h2 a[href], h3 a[href]",
)
_TITLE_TEXT: Final = '[data-test-id="result-title"], h2, h3'
_SNIPPETS: Final = (
    '[data-test-id="web-result-description"]',
    "p.web-result__description, p.result__description, .result-snippet, p.result-snippet",
    '[data-test-id="result-description"], .result__description',
)
_AD_CLASSES: Final = ("result--ad", "ad-result", "card-ad")
_ECOSIA_HOSTS: Final = frozenset({"ecosia.org", "www.ecosia.org"})
#: Ecosia's own search pages: links to them are navigation, not results.
_VERTICALS: Final = frozenset(
    {"search", "images", "news", "videos", "ai-chat", "ai-overview", "ai-search", "maps", "shopping", "ads"}
)
_DATE_RE: Final = re.compile(
    r"(?P<dotted>(?P<d>\d{1,2})\.(?P<m>\d{1,2})\.(?P<y>\d{4}))|(?P<words>[A-Z][a-z]{2,8}\.? \d{1,2}, \d{4})"
)
_DATE_SEPARATOR: Final = " ... "


class Ecosia(PagedProvider[Page]):
    info = PROVIDERS["ecosia"]
    max_pages = MAX_PAGES
    says_page_cap = True
    supports: ClassVar[dict[str, Support]] = WINDOWED  # day, week, month; "year" is not applied (a notice)

    envelope = html_envelope("Ecosia", status_classes={403: Blocked}, statuses={403: REFUSED_MESSAGE})

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        """Page 1's request, and in `state` every page's request (page 1's first)."""
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        f = plan.filters
        query = [("method", "index"), ("q", with_site_operators(params.query, f.include_domains, f.exclude_domains))]
        freshness: str | None = None
        if f.start is not None:
            bucket = recency_bucket(f.start, plan.now)
            freshness = bucket if bucket in FRESHNESS else None
            applied = f"freshness={freshness} (the past {freshness})" if freshness else None
            plan.notices += bucket_notices(plan, applied, "Ecosia's longest (a month)", ONLY_WINDOWS)
        elif params.recency in FRESHNESS:
            freshness = params.recency
        elif params.recency:
            plan.notices.append(not_applied("recency", params.recency, ONLY_WINDOWS))
        plan.notices += site_operator_notices(plan, self.label)
        plan.request = HttpRequest("GET", ctx.endpoint(self.id, URL), headers=HEADERS, params=query)
        pages = min(MAX_PAGES, -(-plan.limit // PAGE_SIZE))
        plan.state = tuple(_page_request(plan.request, n, freshness) for n in range(pages))
        plan.request = plan.state[0]
        return plan

    def page(self, response: HttpResponse, plan: Plan, n: int = 1) -> Page:
        """One page's organic results; a challenge, a refusal or an error status raises."""
        body = response.body
        if is_challenge(body):
            raise Blocked(self.id, CHALLENGE_MESSAGE, 429)
        if not response.ok:
            raise self.error(response, plan)
        return Page(parse_results(body, MAX_RESULTS, plan.now))


def _page_request(first: HttpRequest, n: int, freshness: str | None) -> HttpRequest:
    """Page `n` (0-based, as Ecosia counts): `p` from the second page on, then `freshness`."""
    params = [*first.params, *([("p", str(n))] if n else []), *([("freshness", freshness)] if freshness else [])]
    return dataclasses.replace(first, params=params)


def is_challenge(page: bytes) -> bool:
    """A Cloudflare challenge or block page, told by its structure: one of Cloudflare's elements
    (the Turnstile input, the challenge form or script, the block page's wrapper) on a page
    without Ecosia's results markup. Words prove nothing: a results page echoes its query, and
    "Just a moment" or "cf-turnstile-response" can be one."""
    if any(marker in page for marker in _RESULTS_MARKERS) or not any(hint in page for hint in _CF_HINTS):
        return False
    tree = LexborHTMLParser(page)
    if tree.css_first(_CHALLENGE) is not None:
        return True
    return any("_cf_chl_opt" in script.text(deep=True) for script in tree.css("script"))


def parse_results(html: bytes | str, limit: int = MAX_RESULTS, now: datetime | None = None) -> list[SearchSource]:
    """The organic results of an Ecosia page, deduplicated by URL, at most `limit`. With `now`, a
    snippet's leading date ("02.08.2025 ... ") becomes the source's date and age."""
    sources: list[SearchSource] = []
    seen: set[str] = set()
    for title, href, snippet in walk(html):
        url = result_url(href)
        if not title or not keep(url, seen):
            continue
        published = _leading_date(snippet) if snippet else None
        age = age_seconds(published, now) if published and now is not None else None
        sources.append(SearchSource(title, url, snippet or None, published, age))
        if len(sources) >= limit:
            break
    return sources


def walk(html: bytes | str) -> list[tuple[str, str, str | None]]:
    """(title, href, snippet) of each organic block in document order, ads left out, before
    the URLs are checked: the parser's first step, exposed for tests of real pages.

    The current markup is read in one CSS query (title links and snippets of the organic-result
    articles, in document order); the older markups, or a page where that finds nothing, block
    by block with the fallback selectors."""
    part = results_part(html, _RESULTS_START, _RESULTS_END)
    tree = LexborHTMLParser(part)
    if _CURRENT_MARK in part:
        found = _walk_current(tree)
        if found:
            return found
    blocks: list[Any] = []
    for selector in _BLOCKS:  # the current markup, else the older ones
        blocks = tree.css(selector)
        if blocks:
            break
    found = []
    for block in blocks:
        if _is_ad(block):
            continue
        link = _title_link(block)
        if link is None:
            continue
        heading = link.css_first(_TITLE_TEXT)
        title = node_text(heading if heading is not None else link)
        found.append((title, link.attrs.get("href") or "", _snippet(block)))
    return found


def _walk_current(tree: LexborHTMLParser) -> list[tuple[str, str, str | None]]:
    """The organic-result articles in one query: each title link (`a.result__link`) opens a
    result, the snippet paragraph of the same article is its snippet (else the fallback
    selectors' text). Articles are told apart by `mem_id`: `==` on nodes compares their HTML."""
    found: list[tuple[str, str, str | None]] = []
    articles: list[Any] = []
    current: int | None = None  # the article of the last result, while its snippet is missing
    for node in tree.css(_CURRENT):
        article = _article_of(node)
        if article is None:
            continue
        if node.tag == "a":
            if _is_ad(article):
                current = None
                continue
            found.append((node_text(node), node.attrs.get("href") or "", None))
            articles.append(article)
            current = article.mem_id
        elif current is not None and article.mem_id == current:
            title, href, _ = found[-1]
            found[-1] = (title, href, node_text(node) or None)
            current = None
    for n, (title, href, snippet) in enumerate(found):
        if snippet is None:  # no snippet paragraph: the older snippet elements, if any
            found[n] = (title, href, _snippet(articles[n]))
    return found


def _article_of(node: Any) -> Any:
    """The organic-result article a node is in (a few parents up), or None."""
    for _ in range(_MAX_DEPTH):
        node = node.parent
        if node is None:
            return None
        if node.tag == "article":
            return node if node.attrs.get("data-test-id") == "organic-result" else None
    return None


def _snippet(block: Any) -> str | None:
    """The first non-empty text of the snippet selectors, tried in turn."""
    for selector in _SNIPPETS:
        node = block.css_first(selector)
        text = node_text(node) if node is not None else ""
        if text:
            return text
    return None


def _title_link(block: Any) -> Any:
    """The link that carries the title: the title row's, never the breadcrumb row's."""
    for selector in _TITLE_LINKS:
        for link in block.css(selector):
            if selector != _TITLE_LINKS[1] or link.css_first(_TITLE_TEXT) is not None:
                return link
    return None


def _is_ad(block: Any) -> bool:
    """An ad: its test id or its wrapper's says so (`mainline-result-ad`, `ad-google`), or its class."""
    for node in (block, block.parent):
        if node is None:
            continue
        attrs = node.attrs
        test_id = attrs.get("data-test-id") or ""
        if test_id.endswith("-ad") or test_id.startswith("ad-") or "-ad-" in test_id:
            return True
        classes = (attrs.get("class") or "").split()
        if any(name in classes for name in _AD_CLASSES):
            return True
    return False


def result_url(href: str) -> str | None:
    """A result link's target: http(s) as given, `//host` made https; Ecosia's own search pages,
    relative links and other schemes are None."""
    url = web_url(href.strip())
    if url is None:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if not parts.hostname:
        return None
    if parts.hostname.lower() in _ECOSIA_HOSTS and parts.path.strip("/").split("/", 1)[0] in _VERTICALS:
        return None
    return url


def _leading_date(snippet: str) -> str | None:
    """The date a snippet starts with ("02.08.2025 ... ", "Aug 2, 2025 ... "): ISO for the
    dotted (day first) form, as written for the English one; None when there is none."""
    head, sep, _ = snippet.partition(_DATE_SEPARATOR)
    if not sep or len(head) > 20:
        return None
    match = _DATE_RE.fullmatch(head)
    if match is None:
        return None
    if match["words"]:
        return match["words"]
    try:
        return date(int(match["y"]), int(match["m"]), int(match["d"])).isoformat()
    except ValueError:
        return None


PROVIDER: Final = Ecosia()
