"""Startpage: the keyless www.startpage.com results page (Google's results, read as HTML).

On the keyless-engine kit (`_kit`); what it sends and reads, and why, is in docs/engines/startpage.md.
"""

from __future__ import annotations

import contextlib
import html as _html
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Final
from urllib.parse import parse_qsl

from selectolax.lexbor import LexborHTMLParser

from .._core._dates import age_seconds
from .._core._notices import Notice
from .._core._registry import PROVIDERS
from .._core._types import SearchSource
from .._core._wire import HttpRequest, HttpResponse
from ..errors import Blocked, InvalidResponse
from . import _paging as paging
from ._base import Plan, Support, as_dict, as_list, as_str, honours
from ._html import WINDOWED, browser_headers, fold, html_envelope, keep
from ._kit import ADVICE, QUERY, Challenge, KeylessEngine, Params, url_parts, url_path
from ._locale import LOCALE_NATIVE, startpage_locale

URL: Final = "https://www.startpage.com/sp/search"
ORIGIN: Final = "https://www.startpage.com"
PAGE_SIZE: Final = 10  # results on one page (the `num_of_results` preference sent)
MAX_PAGES: Final = 3  # the most pages one search asks for (ours: Startpage pages on to about 18)
MAX_RESULTS: Final = PAGE_SIZE * MAX_PAGES
WINDOWS: Final = {"day": "d", "week": "w", "month": "m", "year": "y"}  # `recency` as `with_date`
#: What the GET and the paging POST carry after the query: web results, English, en_US, the default family filter.
_FILTERS: Final = (("cat", "web"), ("language", "english"), ("lui", "english"), ("qsr", "en_US"), ("qadf", "moderate"))
DEFAULT_SEGMENT: Final = "startpage.udog"
_SETTINGS: Final = (
    "date_time=world disable_open_in_new_window=0 enable_post_method=1 enable_proxy_safety_suggest=1 "
    "enable_stay_control=1 instant_answers=1 lang_homepage=s/device/en/ language=english language_ui=english "
    f"num_of_results={PAGE_SIZE} search_results_region=en_US suggestions=1 wt_unit=celsius"
)


def preferences(**changed: str) -> str:
    """The `preferences` cookie: `keyEEEvalue` pairs joined by `N1N`, the defaults above with
    `changed` values (a locale's language, interface language and results region)."""
    pairs = dict(pair.split("=", 1) for pair in _SETTINGS.split())
    return "N1N".join(f"{key}EEE{value}" for key, value in {**pairs, **changed}.items())


PREFERENCES: Final = preferences()
#: Page 1: a top-level navigation from the browser's search box.
HEADERS: Final = browser_headers("none", cookie=f"preferences={PREFERENCES}")
#: Pages 2+: the results page's own search form, posted.
FORM_HEADERS: Final = browser_headers("same-origin", ORIGIN + "/", posted=True, cookie=HEADERS["Cookie"], origin=ORIGIN)
_ADVICE: Final = f"Startpage throttles automated searches from datacenter/shared-egress IPs; {ADVICE}"
CAPTCHA_MESSAGE: Final = f"Startpage blocked the request with a CAPTCHA page. {_ADVICE}"
ANUBIS_MESSAGE: Final = (
    "Startpage answered with its proof-of-work bot check (Anubis), which only a browser running "
    f"JavaScript passes. {_ADVICE}"
)
SUSPENDED_MESSAGE: Final = f"Startpage refused the request (access denied for suspected automated use). {_ADVICE}"
NOT_A_RESULTS_PAGE: Final = (
    "Startpage returned a page without search results (neither the result data nor result markup)"
)
_PROPS_MARKER: Final = b"React.createElement(UIStartpage.AppSerpWeb,"
_DECODER: Final = json.JSONDecoder()
_PROPS_TRIES: Final = 4  # occurrences of the marker tried (a query can echo it before the script)
_MARKUP: Final = (b'class="result', b"w-gl__result")
_BLOCKS: Final = "div.result, div.w-gl__result"
_NOTICE_MARKER: Final = b"mainline-results__notice"
_TITLE_LINK: Final = "a.result-title, a.w-gl__result-title"
_SNIPPET: Final = "p.description, p.w-gl__description, .w-gl__description"
_TAG_RE: Final = re.compile(r"<[^>]*>")
_PUA_RE: Final = re.compile("[\ue000-\uf8ff]")
#: Google's date prefix of a snippet (English interface): "Feb 27, 2019 ... ", "27 Feb 2019 ... ",
#: "3 days ago ... ". The count is bounded: a longer one is not a date.
_DATE_PREFIX: Final = re.compile(
    r"((?:[A-Z][a-z]{2,8}\.? \d{1,2}, \d{4})|(?:\d{1,2} [A-Z][a-z]{2,8}\.? \d{4})"
    r"|(?:(\d{1,4}) (second|minute|hour|day|week|month|year)s? ago)) \.\.\.(?: |$)"
)
_UNIT_SECONDS: Final = dict(
    second=1, minute=60, hour=3600, day=86400, week=7 * 86400, month=30 * 86400, year=365 * 86400
)
_AD_HOSTS: Final = ("googleadservices.com", "doubleclick.net")
#: The walls of a page without results (neither props nor result blocks), told by structure.
_HINTS: Final = (b"anubis_challenge", b"captcha", b"error-pages")
WALLS: Final = tuple(
    Challenge(message, selector, _HINTS, (_PROPS_MARKER,), listing=_BLOCKS)
    for message, selector in (
        (ANUBIS_MESSAGE, "script#anubis_challenge"),
        (CAPTCHA_MESSAGE, 'form[action*="/sp/captcha"], form.captcha-section, .captcha-section form'),
        (SUSPENDED_MESSAGE, '[src*="/error-pages/"], [href*="/error-pages/blocked"], meta[content*="/error-pages/"]'),
    )
)


@dataclass(frozen=True, slots=True)
class Page(paging.Page):
    """One results page: its sources, whether its pagination shows a next page, and what asking for
    that takes: the token the next page's form must carry (`render.search_sc`), `render.segment`."""

    sc: str | None = None
    segment: str | None = None


class Startpage(KeylessEngine[Page]):
    info = PROVIDERS["startpage"]
    #: Query operators: Google's results behind it: `site:` holds; the others reach Google loosely through Startpage.
    operators = honours(native="site -site", approximate="filetype intitle inurl")
    url = URL
    headers = HEADERS
    params = (("query", QUERY), *_FILTERS)
    max_results = MAX_RESULTS
    max_pages = MAX_PAGES
    spare_pages = True
    says_page_cap = True
    windows = WINDOWS
    window_param = "with_date"
    envelope = html_envelope("Startpage", status_classes={401: Blocked, 403: Blocked})
    supports: ClassVar[dict[str, Support]] = {**WINDOWED, **LOCALE_NATIVE}

    def locale(self, plan: Plan) -> tuple[dict[str, str], dict[str, str], list[Notice]]:
        """`language`/`lui`, `qsr` and `qadf` in place of the en-US defaults (`_locale.startpage_locale`),
        and the `preferences` cookie saying the same (its settings must not contradict the query)."""
        pairs, notices = startpage_locale(plan.params, self.label)
        changed = {"search_results_region": pairs["qsr"]} if "qsr" in pairs else {}
        if "language" in pairs:
            changed |= {"language": pairs["language"], "language_ui": pairs["lui"]}
        cookie = {"Cookie": f"preferences={preferences(**changed)}"} if changed else {}
        return pairs, cookie, notices

    def page_params(self, n: int) -> Params:
        """Page 1 as the search box sends it; page n as a GET with `page=n` (when page n-1 has no form token)."""
        return [("pl", "opensearch")] if n == 1 else [("page", str(n))]

    def next_request(self, plan: Plan, n: int, previous: Page) -> HttpRequest | None:
        """Page `n` (n > 1): the search form posted with page n-1's token, else the planned GET."""
        planned = super().next_request(plan, n, previous)
        if planned is None or not previous.sc:
            return planned
        form = [*plan.state[0].params[:-1], ("sc", previous.sc), ("t", "device")]
        form += [("segment", previous.segment or DEFAULT_SEGMENT), ("abd", "0"), ("abe", "0"), ("page", str(n))]
        headers = {**FORM_HEADERS, "Cookie": planned.headers.get("Cookie", FORM_HEADERS["Cookie"])}
        return HttpRequest("POST", planned.url, headers=headers, form=form)

    def blocked(self, response: HttpResponse) -> str | None:
        return block_reason(response.body, response.url)

    def read(self, response: HttpResponse, plan: Plan, n: int) -> Page:
        page = parse_page(response.body, plan.now)
        if page is None:
            raise InvalidResponse(self.id, NOT_A_RESULTS_PAGE, response.status)
        return page


def block_reason(page: bytes, url: str = "") -> str | None:
    """Why the answer is a block (a final URL under the CAPTCHA or error pages, else `WALLS`), or
    None. A results page echoes its query, "captcha" or "anubis_challenge" included."""
    path = url_path(url)
    if "/sp/captcha" in path:
        return CAPTCHA_MESSAGE
    if "/error-pages/" in path:
        return SUSPENDED_MESSAGE
    return next((wall.message for wall in WALLS if wall(page)), None)


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
    if _NOTICE_MARKER in page and LexborHTMLParser(page).css_first(".mainline-results__notice") is not None:
        return Page((), more=False)  # the no-results page without props: its notice block only
    return None


def _props(page: bytes) -> dict[str, Any] | None:
    """The object given to `React.createElement(UIStartpage.AppSerpWeb, ...)`: the first occurrence of
    the marker followed by a JSON object with a `render` object (an echo of the query is HTML-escaped)."""
    at = page.find(_PROPS_MARKER)
    for _ in range(_PROPS_TRIES):
        if at < 0:
            return None
        start = at + len(_PROPS_MARKER)
        while start < len(page) and page[start] in b" \t\r\n":
            start += 1
        value: object = None
        if page[start : start + 1] == b"{":
            with contextlib.suppress(ValueError, RecursionError):
                value = _DECODER.raw_decode(page[start:].decode("utf-8", "replace"))[0]
        if isinstance(value, dict) and isinstance(value.get("render"), dict):
            return value
        at = page.find(_PROPS_MARKER, start)
    return None


def _from_props(props: dict[str, Any], now: datetime | None) -> Page:
    render: dict[str, Any] = props["render"]
    presenter = as_dict(render.get("presenter"))
    mainline = as_dict(presenter.get("regions")).get("mainline")
    sources: list[SearchSource] = []
    seen: set[str] = set()
    for block in map(as_dict, as_list(mainline)):
        kind = block.get("display_type")
        if not isinstance(kind, str) or not kind.startswith("web-"):
            continue  # ads-google-top/-bottom, spellsuggest-google, news, images, ...
        for item in map(as_dict, as_list(block.get("results"))):
            url, title = result_url(item.get("clickUrl")), _html_text(item.get("title"))
            if title and keep(url, seen):
                sources.append(_source(title, url, _html_text(item.get("description")), now))
    sc, segment = as_str(render.get("search_sc")), as_str(render.get("segment"))
    return Page(tuple(sources), _has_next(presenter.get("pagination")), sc, segment)


def _has_next(pagination: object) -> bool:
    """Whether the pagination lists a page after the current one (True when it cannot be read)."""
    if not isinstance(pagination, dict) or not isinstance(pagination.get("pages"), list):
        return True
    current = pagination.get("current")
    for entry in map(as_dict, pagination["pages"]):
        number = entry.get("number")
        if entry.get("nextPrev") is True and (
            type(number) is not int or not isinstance(current, int) or number > current
        ):
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
        url, heading = result_url(link.attrs.get("href")), link.css_first("h2, h3")
        title = _text(heading if heading is not None else link)
        if title and keep(url, seen):
            snippet = block.css_first(_SNIPPET)
            sources.append(_source(title, url, _text(snippet) if snippet is not None else "", now))
    form = tree.css_first('form input[name="sc"]')
    return Page(tuple(sources), sc=(form.attrs.get("value") if form is not None else None) or None)


def _source(title: str, url: str, snippet: str, now: datetime | None) -> SearchSource:
    """A result, Google's date prefix taken out of the snippet into the date."""
    match = _DATE_PREFIX.match(snippet)
    if match is None:
        return SearchSource(title, url, snippet or None)
    published, snippet = match.group(1), snippet[match.end() :]
    if match.group(2):  # "3 days ago": an age already
        age: int | None = int(match.group(2)) * _UNIT_SECONDS[match.group(3)]
    else:
        age = age_seconds(published, now) if now is not None else None
    return SearchSource(title, url, snippet or None, published, age)


def result_url(value: object) -> str | None:
    """A result's target: an absolute http(s) URL off Startpage (a Startpage link's `url=` target
    unwrapped) that is not a Google ad click; else None."""
    url = value.strip() if isinstance(value, str) else ""
    url = "https:" + url if url.startswith("//") else url
    parts = url_parts(url) if isinstance(value, str) else None
    host = (parts.hostname or "").lower() if parts is not None else ""
    if parts is None or parts.scheme not in ("", "http", "https") or (parts.scheme and not host):
        return None
    if not parts.scheme or host == "startpage.com" or host.endswith(".startpage.com"):
        target = next((v for k, v in parse_qsl(parts.query) if k == "url"), "")
        return result_url(target) if target.startswith(("http://", "https://")) else None
    if any(host == ad or host.endswith("." + ad) for ad in _AD_HOSTS):
        return None
    name = host.removeprefix("www.")
    return None if parts.path.startswith("/aclk") and (name.startswith("google.") or ".google." in host) else url


def _html_text(value: object) -> str:
    """A props field's text: tags removed (adding no spaces), entities decoded, folded."""
    text = value if isinstance(value, str) else ""
    text = _TAG_RE.sub("", text) if "<" in text else text
    return _fold(_html.unescape(text) if "&" in text else text)


def _text(node: Any) -> str:
    """A node's text as written (tags add no spaces), whitespace folded, private-use glyphs removed."""
    return _fold(node.text(deep=True, separator=""))


def _fold(text: str) -> str:
    """Whitespace folded to single spaces (`_html.fold`), private-use glyphs (icon fonts) removed."""
    return fold(text if text.isprintable() else _PUA_RE.sub("", text))


PROVIDER: Final = Startpage()
