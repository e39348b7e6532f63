"""Bing: the keyless www.bing.com results page, read as HTML (no API, no key).

On the keyless-engine kit (`_kit`); what it sends and reads is in docs/engines/bing.md.
"""

from __future__ import annotations

import binascii
from datetime import date, datetime
from typing import Any, ClassVar, Final
from urllib.parse import parse_qsl, urlsplit

from selectolax.lexbor import LexborHTMLParser

from .._core._filters import recency_start
from .._core._notices import Notice
from .._core._registry import PROVIDERS
from .._core._types import SearchSource
from .._core._wire import HttpResponse
from ._base import Plan, Support, age_seconds, day_range_notices, honours
from ._html import DATED, browser_headers, keep, node_text, results_part
from ._kit import ADVICE, QUERY, Challenge, KeylessEngine, Params
from ._locale import LOCALE_NATIVE, bing_locale
from ._paging import Page

URL: Final = "https://www.bing.com/search"
#: About how many organic results one Bing page holds.
PAGE_SIZE: Final = 10
#: The most pages websearch asks one search for (our cap, to stay polite).
MAX_PAGES: Final = 4
MAX_RESULTS: Final = 30
#: `recency` as Bing's presets; a year has none (a range, see `Bing.dates`).
PRESETS: Final = {"day": "ez1", "week": "ez2", "month": "ez3"}
WHOLE_DAYS: Final = "Bing's custom date range takes whole days"
_EPOCH: Final = date(1970, 1, 1)
HEADERS: Final = browser_headers("none", cache_control="max-age=0")
CHALLENGE_MESSAGE: Final = (
    "Bing blocked the request with a CAPTCHA challenge. Bing challenges automated searches from "
    f"datacenter/shared-egress IPs; {ADVICE}"
)
_RESULTS_MARK: Final = b'id="b_results"'
_CONTEXT_MARK: Final = b'id="b_context"'
_BLOCKS: Final = "ol#b_results > li.b_algo"
#: Paths of Bing's own pages on bing.com hosts: navigation and ads, not results.
_NAVIGATION: Final = ("/search", "/images/search", "/videos/search", "/news/search", "/maps", "/shop")
_INTERNAL: Final = (*_NAVIGATION, "/aclick", "/aclk", "/ck/")
_CK: Final = "https://www.bing.com/ck/a?"
_DATE_SEPARATORS: Final = " \u00b7-\u2013\u2014"


#: Bing's CAPTCHA (a Cloudflare Turnstile wrapper): the final URL under /turing/captcha/, or a
#: page without a results list holding the CAPTCHA block, frame or form, or a Turnstile or
#: Cloudflare challenge. (Words prove nothing: a results page echoes its query.)
is_challenge: Final = Challenge(
    CHALLENGE_MESSAGE,
    "#b_captcha, iframe[src*='/turing/captcha'], form[action*='/captcha'], "
    "script[src*='challenges.cloudflare.com/turnstile'], .cf-turnstile, form#challenge-form",
    hints=(b"b_captcha", b"/captcha", b"turnstile", b"challenge-form"),
    results=(_RESULTS_MARK,),
    paths=("/turing/captcha",),
)


class Bing(KeylessEngine[Page]):
    info = PROVIDERS["bing"]
    #: Query operators: Bing documents `site:`, `filetype:`/`ext:` and `intitle:`; `inurl:` is left to the chain's
    #: check.
    operators = honours(native="site -site filetype intitle")
    url = URL
    headers = HEADERS
    params = (("q", QUERY), ("mkt", "en-US"), ("setlang", "en"))  # en-US, as Accept-Language
    max_results = MAX_RESULTS
    max_pages = MAX_PAGES
    spare_pages = True  # Bing's pages often repeat page 1 or hold fewer than PAGE_SIZE
    pager_referer = True
    supports: ClassVar[dict[str, Support]] = {**DATED, **LOCALE_NATIVE, "language": "approximate"}
    challenges = (is_challenge,)

    def locale(self, plan: Plan) -> tuple[dict[str, str], dict[str, str], list[Notice]]:
        """`cc`, `setlang`, `adlt`, and `mkt` with an Accept-Language that agrees with it."""
        return bing_locale(plan.params, self.label)

    def page_params(self, n: int) -> Params:
        """`first` and Bing's pager `FORM` from page 2 on."""
        return (
            [("first", str(PAGE_SIZE * (n - 1) + 1)), ("FORM", "PERE" if n == 2 else f"PERE{n - 2}")] if n > 1 else []
        )

    def dates(self, plan: Plan) -> tuple[Params, list[Notice]]:
        """`filters=ex1:"<code>"`: a custom range of whole days (from the ladder's start, else from
        `recency`'s under an end; to the end, else today), else `recency`'s preset, a year as a range."""
        f, recency = plan.filters, plan.params.recency
        start = f.start or (recency_start(recency, plan.now) if f.end is not None else None)
        window = (start.date(), (f.end or plan.now).date()) if start is not None else None
        day = [(d - _EPOCH).days for d in window or (plan.now.date(),)]  # Bing's days count from 1970-01-01
        if window is not None:
            code: str | None = f"ez5_{day[0]}_{day[1]}"
        elif recency == "year":  # no preset: the last 365 days as a range
            code = f"ez5_{day[0] - 365}_{day[0]}"
        else:
            code = PRESETS.get(recency or "")
        how = f'whole days (filters=ex1:"{code}", {window[0]} to {window[1]})' if window else ""
        notices = day_range_notices(plan, window, "Bing's custom date range", how, WHOLE_DAYS)
        return ([("filters", f'ex1:"{code}"')] if code is not None else []), notices

    def read(self, response: HttpResponse, plan: Plan, n: int) -> Page:
        return Page(parse_results(response.body, plan.now))


def parse_results(html: bytes | str, now: datetime, limit: int = MAX_RESULTS) -> list[SearchSource]:
    """The organic results of a Bing page, deduplicated by URL, at most `limit`. Per block, one
    query for its `h2 a` links and paragraphs in document order (cheaper than one per field): the
    first link is the result, the first paragraph after it the snippet."""
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
        age = age_seconds(published, now) if published else None
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
    try:
        parts = urlsplit(href)
        host = parts.hostname
    except ValueError:
        return None
    if not href.startswith(("http://", "https://")) or not host or " " in href or not href.isprintable():
        return None
    if host != "bing.com" and not host.endswith(".bing.com"):
        return href
    if parts.path == "/ck/a":  # a redirect on another Bing host (cn.bing.com)
        target = _redirect_target(href.partition("?")[2])
        return _direct(target) if target is not None and "/ck/a" not in target else None
    return None if parts.path.startswith(_INTERNAL) else href


def _redirect_target(query: str) -> str | None:
    """The `u` parameter of a `/ck/a` link's query: "a1" then the target as base64url, padding
    optional, decoded strictly (base64 alphabet, UTF-8); a "+" is kept as written."""
    value = next((v for k, v in parse_qsl(query.replace("+", "%2B")) if k == "u"), "")
    if not value.startswith("a1") or len(value) < 3:
        return None
    encoded = value[2:].rstrip("=").replace("-", "+").replace("_", "/")
    try:
        target = binascii.a2b_base64(encoded + "=" * (-len(encoded) % 4), strict_mode=True).decode("utf-8")
    except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    return target if target.startswith(("http://", "https://")) else None


PROVIDER: Final = Bing()
