"""DuckDuckGo: the keyless HTML frontend, always available, last in the chain.

On the keyless-engine kit (`_kit`); what it sends and reads is in docs/engines/duckduckgo.md.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any, ClassVar, Final
from urllib.parse import parse_qsl

from selectolax.lexbor import LexborHTMLParser

from .._core._notices import Notice
from .._core._registry import PROVIDERS
from .._core._types import SearchSource
from .._core._wire import HttpResponse
from ._base import Plan, Support, honours
from ._html import RETAIN_MAX, WINDOWED, browser_headers, has_class, keep, kept_tree, node_text, results_part, web_url
from ._kit import ADVICE, QUERY, Challenge, KeylessEngine, Params
from ._locale import ddg_locale
from ._paging import Page

URL: Final = "https://html.duckduckgo.com/html/"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 20
#: `recency` as DuckDuckGo's `df` windows.
WINDOWS: Final = {"day": "d", "week": "w", "month": "m", "year": "y"}
HEADERS: Final = browser_headers(
    "same-origin", "https://html.duckduckgo.com/", accept_language="en,en-US;q=0.9", posted=True
)
CHALLENGE_MESSAGE: Final = (
    "DuckDuckGo blocked the request with a bot-detection challenge. DuckDuckGo throttles automated HTML "
    f"searches from datacenter/shared-egress IPs; {ADVICE}"
)
_RESULTS_START: Final = b'<div id="links"'
_SELECTOR: Final = "div.result a.result__a[href], div.result .result__snippet"
_AD_PREFIX: Final = "https://duckduckgo.com/y.js"
#: The last two pages parsed and their trees (`kept_tree` says why): for DuckDuckGo's ~55 KB
#: pages the process keeps about 3 MB more resident memory.
_RECENT_TREES: Final[deque[tuple[bytes, LexborHTMLParser]]] = deque(maxlen=2)
_RETAIN_MAX: Final = RETAIN_MAX


#: The bot challenge (its form or the anomaly modal, served with 200 or 202) on a page without a
#: results list: a results page echoes its query, "anomaly.js source map" included.
is_challenge: Final = Challenge(
    CHALLENGE_MESSAGE,
    "form#challenge-form, .anomaly-modal__modal, [data-testid=anomaly-modal]",
    hints=(b"challenge-form", b"anomaly-modal"),
    results=(_RESULTS_START,),
)


def parse_results(html: bytes | str, limit: int = MAX_RESULTS) -> list[SearchSource]:
    """The organic results of a DuckDuckGo HTML page, deduplicated by URL, at most `limit`.

    One pass over the parsed tree's links in document order: each `a.result__a` opens a result,
    the first `.result__snippet` after it is its snippet. Walking the `<a>` elements is 5x
    cheaper than a CSS query; when a result lacks a link snippet and the page has snippets that
    may be `<div>`/`<span>`, the CSS query runs instead. Text is `node_text`'s (tags add no
    spaces, whitespace folded). The tree outlives the call in `_RECENT_TREES` (`kept_tree`).
    """
    part = results_part(html, _RESULTS_START)
    tree = kept_tree(part, _RECENT_TREES)
    found = _walk(tree.tags("a"))
    if any(snippet is None for _, _, snippet in found) and b"result__snippet" in part:
        found = _walk(tree.css(_SELECTOR))  # some snippets are <div>/<span>, not links
    sources: list[SearchSource] = []
    seen: set[str] = set()
    for title, href, snippet in found:
        url = unwrap_href(href or "")
        if not title or url is None or url.startswith(_AD_PREFIX) or _is_end_row(title, url) or not keep(url, seen):
            continue
        sources.append(SearchSource(title, url, snippet or None))
        if len(sources) >= limit:
            break
    return sources


def _walk(nodes: Iterable[Any]) -> list[tuple[str, str | None, str | None]]:
    """(title, href, snippet) per title link, in document order."""
    found: list[tuple[str, str | None, str | None]] = []
    for node in nodes:
        attrs = node.attrs
        classes = attrs.get("class")
        if not classes:  # icon and plain links
            continue
        if has_class(classes, "result__a") and node.tag == "a":
            found.append((node_text(node), attrs.get("href"), None))
        elif has_class(classes, "result__snippet") and found and found[-1][2] is None:
            title, href, _ = found[-1]
            found[-1] = (title, href, node_text(node))
    return found


def unwrap_href(href: str) -> str | None:
    """The target of a result link: the `uddg` parameter of DuckDuckGo's redirect decoded as
    decodeURIComponent ("+" kept, invalid UTF-8 rejected), `//x` made https, else None."""
    href = href.replace("&amp;", "&")
    encoded = href.partition("?")[2].replace("+", "%2B")
    target = next((v for k, v in parse_qsl(encoded, errors="surrogateescape") if k == "uddg"), None)
    if target is None:
        return web_url(href)
    if not target.isprintable() and any("\udc80" <= c <= "\udcff" for c in target):
        return None  # invalid UTF-8
    return target if target.startswith(("http://", "https://")) else None


def _is_end_row(title: str, url: str) -> bool:
    """DuckDuckGo's end-of-results row: "EOF", linking to a Google search for the query."""
    return title == "EOF" and url.split("?", 1)[0].rstrip("/").endswith(
        ("//www.google.com/search", "//google.com/search")
    )


class DuckDuckGo(KeylessEngine[Page]):
    info = PROVIDERS["duckduckgo"]
    #: Query operators: DuckDuckGo honours `site:`, `-site:`, `filetype:`, `intitle:` and `inurl:` in `q`; dates are
    #: coarse windows.
    operators = honours(native="site -site filetype intitle inurl")
    url = URL
    method = "POST"
    headers = HEADERS
    params = (("q", QUERY), ("kl", "us-en"))
    max_results = MAX_RESULTS
    windows = WINDOWS
    window_param = "df"
    challenges = (is_challenge,)
    supports: ClassVar[dict[str, Support]] = {
        **WINDOWED,
        "country": "native",
        "language": "approximate",
        "safesearch": "native",
    }

    def locale(self, plan: Plan) -> tuple[dict[str, str], dict[str, str], list[Notice]]:
        """`kl` (a region: country and language together) and `kp` (safe search)."""
        pairs, notices = ddg_locale(plan.params, self.label)
        return pairs, {}, notices

    def page_params(self, n: int) -> Params:
        return [("b", "")]

    def read(self, response: HttpResponse, plan: Plan, n: int) -> Page:
        return Page(parse_results(response.body, plan.limit or DEFAULT_RESULTS))


PROVIDER: Final = DuckDuckGo()
