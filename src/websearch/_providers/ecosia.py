"""Ecosia: the keyless www.ecosia.org results page, read as HTML.

On the keyless-engine kit (`_kit`); what it sends and reads is in docs/engines/ecosia.md.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any, ClassVar, Final

from selectolax.lexbor import LexborHTMLParser

from .._core._notices import Notice
from .._core._registry import PROVIDERS
from .._core._types import SearchSource
from .._core._wire import HttpResponse
from ..errors import Blocked
from ._base import Plan, Support, age_seconds, honours
from ._html import WINDOWED, ancestor, browser_headers, html_envelope, keep, node_text, results_part, web_url
from ._kit import ADVICE, QUERY, Challenge, KeylessEngine, url_parts
from ._locale import accept_language
from ._paging import Page

URL: Final = "https://www.ecosia.org/search"
PAGE_SIZE: Final = 10  # about how many organic results an Ecosia page holds
MAX_PAGES: Final = 3  # the most pages one search asks for (our cap, to stay polite to Cloudflare)
MAX_RESULTS: Final = PAGE_SIZE * MAX_PAGES
WINDOWS: Final = {"day": "day", "week": "week", "month": "month"}  # `recency` as Ecosia's `freshness`
HEADERS: Final = browser_headers("same-origin", "https://www.ecosia.org/")
CHALLENGE_MESSAGE: Final = (
    "Ecosia blocked the request with a Cloudflare challenge. Ecosia sits behind Cloudflare, which "
    f"challenges plain HTTP clients from many networks (datacenter and shared-egress IPs); {ADVICE}"
)
REFUSED_MESSAGE: Final = (
    f"Ecosia refused the request (403): its Cloudflare front blocks plain HTTP clients from many networks; {ADVICE}"
)
_RESULTS_START: Final = b'data-test-id="mainline"'
_RESULTS_END: Final = b'class="mainline__footer"'  # after the last result: the pagination
_CURRENT_MARK: Final = b'data-test-id="organic-result"'
_ARTICLE: Final = 'article[data-test-id="organic-result"]'
_CURRENT: Final = f'{_ARTICLE} a.result__link[href], {_ARTICLE} [data-test-id="web-result-description"]'
_BLOCKS: Final = (_ARTICLE, '[data-test-id="mainline-result-web"]', "div.result, article.result")
_TITLE_LINKS: Final = ("a.result__link[href]", 'a[data-test-id="result-link"][href]', "a.result-title[href]")
_TITLE_LINKS_MORE: Final = (".result__title a[href]", "h2 a[href], h3 a[href]")
_TITLE_TEXT: Final = '[data-test-id="result-title"], h2, h3'
_SNIPPETS: Final = (
    '[data-test-id="web-result-description"]',
    "p.web-result__description, p.result__description, .result-snippet, p.result-snippet",
    '[data-test-id="result-description"], .result__description',
)
_AD_CLASSES: Final = frozenset({"result--ad", "ad-result", "card-ad"})
_ECOSIA_HOSTS: Final = frozenset({"ecosia.org", "www.ecosia.org"})
#: Ecosia's own search pages: links to them are navigation, not results.
_VERTICALS: Final = frozenset(
    {"search", "images", "news", "videos", "ai-chat", "ai-overview", "ai-search", "maps", "shopping", "ads"}
)
_DATE_RE: Final = re.compile(
    r"(?P<dotted>(?P<d>\d{1,2})\.(?P<m>\d{1,2})\.(?P<y>\d{4}))|(?P<words>[A-Z][a-z]{2,8}\.? \d{1,2}, \d{4})"
)


#: A Cloudflare challenge or block page, told by its elements on a page without Ecosia's results markup.
is_challenge: Final = Challenge(
    CHALLENGE_MESSAGE,
    'input[name="cf-turnstile-response"], .cf-turnstile, form#challenge-form, form[action*="__cf_chl"], #cf-wrapper, '
    'script[src*="/cdn-cgi/challenge-platform/"], #challenge-stage, #challenge-running, #cf-error-details',
    hints=(b"cf-turnstile", b"challenge-platform", b"_cf_chl", b"challenge-form", b"cf-wrapper"),
    results=(b'data-test-id="mainline', b'data-test-id="web-no-results"'),
    script="_cf_chl_opt",
)


class Ecosia(KeylessEngine[Page]):
    info = PROVIDERS["ecosia"]
    #: Query operators: Its upstream index treats `site:` loosely; the chain's check holds it.
    operators = honours(approximate="site -site")
    url = URL
    headers = HEADERS
    supports: ClassVar[dict[str, Support]] = {**WINDOWED, "country": "approximate", "language": "approximate"}

    def locale(self, plan: Plan) -> tuple[dict[str, str], dict[str, str], list[Notice]]:
        """No settings cookie: the country and language as the Accept-Language it reads the market from."""
        header, notices = accept_language(plan.params, self.label)
        return {}, ({"Accept-Language": header} if header else {}), notices

    params = (("method", "index"), ("q", QUERY))
    max_results = MAX_RESULTS
    max_pages = MAX_PAGES
    says_page_cap = True
    paging_first = True
    page_offset = ("p", 1, 0)  # the page's number counted from 0, from the second page on
    windows = WINDOWS  # day, week, month; "year" is not applied (a notice)
    window_param = "freshness"
    challenges = (is_challenge,)
    envelope = html_envelope("Ecosia", status_classes={403: Blocked}, statuses={403: REFUSED_MESSAGE})

    def read(self, response: HttpResponse, plan: Plan, n: int) -> Page:
        return Page(parse_results(response.body, MAX_RESULTS, plan.now))


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
    """(title, href, snippet) of each organic block in document order, ads left out, before the
    URLs are checked: the current markup in one CSS query (`_walk_current`), else (older markups, or
    nothing found) block by block with the fallback selectors."""
    part = results_part(html, _RESULTS_START, _RESULTS_END)
    tree = LexborHTMLParser(part)
    found = _walk_current(tree) if _CURRENT_MARK in part else []
    if found:
        return found
    blocks = next((blocks for selector in _BLOCKS if (blocks := tree.css(selector))), [])
    for block in blocks:
        link = None if _is_ad(block) else _title_link(block)
        if link is not None:
            heading = link.css_first(_TITLE_TEXT)
            title = node_text(heading if heading is not None else link)
            found.append((title, link.attrs.get("href") or "", _snippet(block)))
    return found


def _walk_current(tree: LexborHTMLParser) -> list[tuple[str, str, str | None]]:
    """The organic-result articles: each title link opens a result, the snippet paragraph of the
    same article (told by `mem_id`: `==` on nodes compares their HTML) is its snippet, else the
    fallback selectors' text."""
    found: list[tuple[str, str, str | None]] = []
    articles: list[Any] = []
    current: int | None = None  # the article of the last result, while its snippet is missing
    for node in tree.css(_CURRENT):
        article = ancestor(node, "article", 12)  # an organic result's, else none
        if article is None or article.attrs.get("data-test-id") != "organic-result":
            continue
        if node.tag == "a":
            current = None if _is_ad(article) else article.mem_id
            if current is not None:
                found.append((node_text(node), node.attrs.get("href") or "", None))
                articles.append(article)
        elif current is not None and article.mem_id == current:
            found[-1] = (*found[-1][:2], node_text(node) or None)
            current = None
    return [(t, h, _snippet(a) if s is None else s) for (t, h, s), a in zip(found, articles, strict=True)]


def _snippet(block: Any) -> str | None:
    """The first non-empty text of the snippet selectors, tried in turn."""
    nodes = (block.css_first(selector) for selector in _SNIPPETS)
    return next((text for node in nodes if node is not None and (text := node_text(node))), None)


def _title_link(block: Any) -> Any:
    """The link that carries the title: the title row's, never the breadcrumb row's."""
    for selector in (*_TITLE_LINKS, *_TITLE_LINKS_MORE):
        for link in block.css(selector):
            if selector != _TITLE_LINKS[1] or link.css_first(_TITLE_TEXT) is not None:
                return link
    return None


def _is_ad(block: Any) -> bool:
    """An ad: its test id or its wrapper's says so (`mainline-result-ad`, `ad-google`), or its class."""
    for node in (block, block.parent):
        attrs = node.attrs if node is not None else {}
        test_id = attrs.get("data-test-id") or ""
        if test_id.endswith("-ad") or test_id.startswith("ad-") or "-ad-" in test_id:
            return True
        if not _AD_CLASSES.isdisjoint((attrs.get("class") or "").split()):
            return True
    return False


def result_url(href: str) -> str | None:
    """A result link's target: http(s) as given, `//host` made https; Ecosia's own search pages,
    relative links and other schemes are None."""
    url = web_url(href.strip())
    parts = url_parts(url) if url is not None else None
    if parts is None or not parts.hostname:
        return None
    own = parts.hostname.lower() in _ECOSIA_HOSTS and parts.path.strip("/").split("/", 1)[0] in _VERTICALS
    return None if own else url


def _leading_date(snippet: str) -> str | None:
    """The date a snippet starts with ("02.08.2025 ... ", "Aug 2, 2025 ... "): ISO for the dotted
    (day first) form, as written for the English one; None when there is none."""
    head, sep, _ = snippet.partition(" ... ")
    match = _DATE_RE.fullmatch(head) if sep and len(head) <= 20 else None
    if match is None or match["words"]:
        return match["words"] if match is not None else None
    try:
        return date(int(match["y"]), int(match["m"]), int(match["d"])).isoformat()
    except ValueError:
        return None


PROVIDER: Final = Ecosia()
