"""Mojeek: the keyless HTML frontend of an independent index (its own crawler, not Bing or Google).

On the keyless-engine kit (`_kit`); what it sends and reads is in docs/engines/mojeek.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from datetime import date, timedelta
from typing import Any, ClassVar, Final
from urllib.parse import urlsplit

from selectolax.lexbor import LexborHTMLParser

from .._core._filters import recency_start
from .._core._notices import Notice, approximated
from .._core._registry import PROVIDERS
from .._core._types import SearchSource
from .._core._wire import HttpResponse
from ._base import Plan, Support, honours, recency_overridden
from ._html import DATED, browser_headers, has_class, keep, node_text, web_url
from ._kit import ADVICE, Challenge, KeylessEngine, Params
from ._locale import LOCALE_NATIVE, mojeek_locale
from ._paging import Page

URL: Final = "https://www.mojeek.com/search"
#: Results on one Mojeek page.
PAGE_SIZE: Final = 10
#: The most pages websearch asks one search for (Mojeek's budget per IP is small).
MAX_PAGES: Final = 3
MAX_RESULTS: Final = PAGE_SIZE * MAX_PAGES
HEADERS: Final = browser_headers(
    "same-origin", "https://www.mojeek.com/", accept_language="en,en-US;q=0.9", cookie="arc=us; lb=en"
)
BLOCKED_MESSAGE: Final = (
    "Mojeek blocked the request as automated traffic (403). Mojeek allows only a few quick searches per "
    f"IP address and refuses many datacenter/shared-egress IPs; {ADVICE}"
)
CAPTCHA_MESSAGE: Final = (
    "Mojeek blocked the request with a CAPTCHA challenge. Mojeek challenges automated searches from "
    f"datacenter/shared-egress IPs; {ADVICE}"
)
BLOCKED: Final = {403: BLOCKED_MESSAGE}
WHOLE_DAYS: Final = "Mojeek's date filters take dates only"
_RESULTS_START: Final = b'<ul class="results-standard'
_LIST: Final = "ul.results-standard > li"
#: A result block and the parts of it that are read, in document order.
_BLOCK_PARTS: Final = f"{_LIST}, {_LIST} h2, {_LIST} a[href], {_LIST} p.s"
#: Mojeek's own search pages: a link there is another search, not a result.
_INTERNAL: Final = ("www.mojeek.com", "mojeek.com")


#: The CAPTCHA page some networks get (200, no results list; a results page echoes its query).
is_challenge: Final = Challenge(
    CAPTCHA_MESSAGE,
    "div.captcha-wrap, altcha-widget, script[src*=altcha]",
    hints=(b"captcha", b"altcha"),
    results=(_RESULTS_START,),
)


class Mojeek(KeylessEngine[Page]):
    info = PROVIDERS["mojeek"]
    #: Query operators: Mojeek honours `site:`; `-site:` may cost a block (docs/engines/mojeek.md); the rest is the
    #: chain's check.
    operators = honours(native="site", approximate="-site")
    url = URL
    headers = HEADERS
    max_results = MAX_RESULTS
    max_pages = MAX_PAGES
    supports: ClassVar[dict[str, Support]] = {**DATED, **LOCALE_NATIVE, "safesearch": "approximate"}

    def locale(self, plan: Plan) -> tuple[dict[str, str], dict[str, str], list[Notice]]:
        """`safe`, and the `arc` (region) and `lb` (language) preference cookies."""
        pairs, cookie, notices = mojeek_locale(plan.params, self.label)
        return pairs, ({"Cookie": cookie} if cookie else {}), notices

    #: Mojeek has no keys, so a 403 is its automated-traffic refusal, never a login problem.
    blocked_statuses = BLOCKED
    challenges = (is_challenge,)

    def page_params(self, n: int) -> Params:
        """`s`, the rank of page n's first result (11, 21, ...); page 1 has none (`s=1` draws a 403)."""
        return [("s", str(PAGE_SIZE * (n - 1) + 1))] if n > 1 else []

    def dates(self, plan: Plan) -> tuple[Params, list[Notice]]:
        """`since` the start's day (else `recency`'s), `before` the day after the end; a start or
        end with a time of day is sent as its day (a notice), and `recency` loses to a ladder rung."""
        f, params = plan.filters, plan.params
        start = f.start if f.start is not None else recency_start(params.recency, plan.now)
        sent = {"since": _day(start.date())} if start is not None else {}
        with contextlib.suppress(OverflowError):  # the last date has no day after it
            sent |= {"before": _day(f.end.date() + timedelta(days=1))} if f.end is not None else {}
        notices = recency_overridden(params, f)
        if f.start_source is not None and f.start_has_time:
            how = f"whole days (since={sent['since']})"
            notices.append(approximated(f.start_source, getattr(params, f.start_source), how, WHOLE_DAYS))
        if f.end is not None and f.end_has_time and "before" in sent:
            how = f"whole days (before={sent['before']}, so up to the end of {f.end.date().isoformat()})"
            notices.append(approximated("end_published_date", params.end_published_date, how, WHOLE_DAYS))
        return list(sent.items()), notices

    def read(self, response: HttpResponse, plan: Plan, n: int) -> Page:
        """The page's results; the last page when it has fewer than PAGE_SIZE result blocks."""
        sources, blocks = read_page(response.body, MAX_RESULTS)
        return Page(sources, more=blocks >= PAGE_SIZE)


def parse_results(html: bytes | str, limit: int = MAX_RESULTS) -> list[SearchSource]:
    """The results of a Mojeek page, deduplicated by URL, at most `limit`.

    Only the `li` children of `ul.results-standard` are read: the title link `h2 a` (else the
    breadcrumb link `a.ob`) gives the URL, its text the title, the first `p.s` the snippet.
    """
    return read_page(html, limit)[0]


def read_page(html: bytes | str, limit: int = MAX_RESULTS) -> tuple[list[SearchSource], int]:
    """`parse_results`, and the number of result blocks the page had (a page with fewer than
    PAGE_SIZE is the last one)."""
    page = html.encode() if isinstance(html, str) else html
    start = page.find(_RESULTS_START)
    if start < 0:
        return [], 0
    tree = LexborHTMLParser(page[start:])
    found = _walk(tree.css(_BLOCK_PARTS))
    sources: list[SearchSource] = []
    seen: set[str] = set()
    for title, href, snippet in found:
        url = target(href)
        if not title or not keep(url, seen):
            continue
        sources.append(SearchSource(title, url, snippet or None))
        if len(sources) >= limit:
            break
    return sources, len(found)


def _walk(nodes: Iterable[Any]) -> list[tuple[str, str, str]]:
    """(title, href, snippet) per result block, from one CSS query's nodes in document order
    (`_BLOCK_PARTS`): each `li` opens a block; in it the first link inside an `h2` gives the title
    and URL (else the first `a.ob` link and the `h2` text), the first `p.s` the snippet. One query
    and a walk cost a third of three `css_first` per block."""
    found: list[tuple[str, str, str]] = []
    block: list[Any] | None = None  # [title, href, snippet, a.ob href, h2]
    for node in nodes:
        tag = node.tag
        if tag == "li":
            if block is not None:
                found.append(_finished(block))
            block = [None, None, None, None, None]
        elif block is None:
            continue
        elif tag == "a":
            attrs = node.attrs
            if block[1] is None and block[4] is not None and _in_heading(node):
                block[0], block[1] = node_text(node), attrs.get("href") or ""
            elif block[3] is None and has_class(attrs.get("class") or "", "ob"):
                block[3] = attrs.get("href") or ""
        elif tag == "h2":
            if block[4] is None:
                block[4] = node
        elif block[2] is None:  # p.s
            block[2] = node_text(node)
    if block is not None:
        found.append(_finished(block))
    return found


def _finished(block: list[Any]) -> tuple[str, str, str]:
    title, href, snippet, ob, heading = block
    if href is None:  # no link in the heading: the breadcrumb link and the heading's text
        title, href = (node_text(heading) if heading is not None else ""), ob or ""
    return title, href, snippet or ""


def _in_heading(node: Any) -> bool:
    """Is this link inside its block's `h2`?"""
    parent = node.parent
    while parent is not None:
        tag = parent.tag
        if tag == "h2":
            return True
        if tag == "li":
            return False
        parent = parent.parent
    return False


def target(href: str) -> str | None:
    """A result link's target: absolute http(s) (`//x` made https) with a host, not one of
    Mojeek's own searches; else None."""
    url = web_url(href)
    try:
        parts = urlsplit(url or "")
    except ValueError:
        return None
    internal = parts.hostname in _INTERNAL and parts.path.rstrip("/") in ("", "/search")
    return url if url and parts.hostname and not internal else None


def _day(day: date) -> str:
    """A date as Mojeek's YYYYMMDD (years below 1000 zero-padded too)."""
    return f"{day.year:04d}{day.month:02d}{day.day:02d}"


PROVIDER: Final = Mojeek()
