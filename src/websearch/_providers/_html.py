"""What the keyless HTML engines share: a desktop Chrome's headers, node text, class tokens, result URLs.

Each engine's docstring says what it sends and reads; these are the pieces that are the same
everywhere: the header set of Chrome 149 on macOS navigating to a page (`browser_headers`), a
node's text as written with whitespace folded (`node_text`, `fold`), the class-token test
(`has_class`), a result's target as an absolute http(s) URL kept once a page (`web_url`, `keep`),
the results part of a page cut from the markup around it (`results_part`), and its tree kept
alive a little longer so the next parse reuses its heap (`kept_tree`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, TypeGuard

from selectolax.lexbor import LexborHTMLParser

from ._errors import ErrorEnvelope

if TYPE_CHECKING:
    from collections import deque

    from ._base import Support

__all__ = [
    "DATED",
    "ENGLISH",
    "RETAIN_MAX",
    "WINDOWED",
    "ancestor",
    "browser_headers",
    "fold",
    "has_class",
    "html_envelope",
    "keep",
    "kept_tree",
    "node_text",
    "results_part",
    "web_url",
]

#: Accept-Language with US English first (Chrome's own for an en-US profile).
ENGLISH: Final = "en-US,en;q=0.9"
_ACCEPT: Final = (
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,"
    "application/signed-exchange;v=b3;q=0.7"
)
_USER_AGENT: Final = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/149.0.0.0 Safari/537.36"
)
_WEB: Final = ("http://", "https://")
#: The largest page part whose tree `kept_tree` keeps (a results part is 15-60 KB).
RETAIN_MAX: Final = 256 * 1024

#: What an engine with coarse recency windows (its day, week, month...) and `site:` operators
#: supports: the date ladder is approximated by a window, domains by operators.
WINDOWED: Final[dict[str, Support]] = {
    "recency": "native",
    "limit": "native",
    "num_search_results": "native",
    "recency_days": "approximate",
    "recency_hours": "approximate",
    "start_published_date": "approximate",
    "include_domains": "approximate",
    "exclude_domains": "approximate",
}
#: An engine that also takes a custom date range of whole days: days, start and end are its own.
DATED: Final[dict[str, Support]] = {
    **WINDOWED,
    "recency_days": "native",
    "start_published_date": "native",
    "end_published_date": "native",
}


def html_envelope(label: str, **more: Any) -> ErrorEnvelope:
    """An HTML engine's error envelope: no JSON message or code to read, the status tells the
    class (`more`: `status_classes`, `statuses`)."""
    return ErrorEnvelope(message=(), code=(), prefix=f"{label} HTML error", body_in_message=False, **more)


def browser_headers(
    site: str,
    referer: str | None = None,
    *,
    accept_language: str = ENGLISH,
    posted: bool = False,
    cache_control: str | None = None,
    content_type: str | None = None,
    cookie: str | None = None,
    origin: str | None = None,
) -> dict[str, str]:
    """A desktop Chrome's headers for a top-level navigation, in one order for every engine.

    `site` is Sec-Fetch-Site ("none": a search from the address bar or search box; "same-origin":
    from the engine's own page, which `referer` names). A `posted` form adds its content type
    (and `origin`) and Chrome's "max-age=0" `cache_control` (also sent on a reload); `cookie`
    carries an engine's preference cookie.
    """
    if posted:
        cache_control, content_type = "max-age=0", "application/x-www-form-urlencoded"
    headers = {"Accept": _ACCEPT, "Accept-Language": accept_language}
    optional = (("Cache-Control", cache_control), ("Content-Type", content_type), ("Cookie", cookie))
    headers.update((name, value) for name, value in (*optional, ("Origin", origin)) if value is not None)
    headers.update(
        {
            "Priority": "u=0, i",
            "Sec-Ch-Ua": '"Google Chrome";v="149", "Chromium";v="149", "Not)A;Brand";v="24"',
            "Sec-Ch-Ua-Mobile": "?0",
            "Sec-Ch-Ua-Platform": '"macOS"',
            "Sec-Fetch-Dest": "document",
            "Sec-Fetch-Mode": "navigate",
            "Sec-Fetch-Site": site,
            "Sec-Fetch-User": "?1",
            "Upgrade-Insecure-Requests": "1",
            "User-Agent": _USER_AGENT,
        }
    )
    if referer is not None:
        headers["Referer"] = referer
    return headers


def node_text(node: Any) -> str:
    """A node's text as written, whitespace folded: tags add no spaces.

    The spec's rule reads every tag as a space, but the real pages put inline highlight tags
    inside words and before punctuation ("<b>antani</b>: la", "<b>Eino</b>-ext"): a space there
    is not on the page, so tags add none here (the page's own whitespace is kept, then folded).
    """
    return fold(node.text(deep=True, separator=""))


def fold(text: str) -> str:
    """`" ".join(text.split())`, but a printable string (whose only whitespace is plain spaces)
    is folded with C-speed replaces: splitting every snippet into words cost more than parsing
    the links."""
    if not text.isprintable():
        return " ".join(text.split())
    while "  " in text:
        text = text.replace("  ", " ")
    return text.strip(" ")


def ancestor(node: Any, tag: str, depth: int) -> Any:
    """The nearest `tag` element at most `depth` levels above `node`, or None."""
    for _ in range(depth):
        node = node.parent
        if node is None or node.tag == tag:
            return node
    return None


def has_class(classes: str, name: str) -> bool:
    """`name` is one of the space-separated tokens of a class attribute."""
    return classes == name or (name in classes and name in classes.split())


def web_url(href: str) -> str | None:
    """`href` as an absolute http(s) URL (`//host/...` made https); None for a relative link or
    another scheme."""
    if href.startswith("//"):
        return "https:" + href
    return href if href.startswith(_WEB) else None


def keep(url: str | None, seen: set[str]) -> TypeGuard[str]:
    """Whether a result with this target is kept: an http(s) URL not in `seen` yet (now it is)."""
    if url is None or url in seen or not url.startswith(_WEB):
        return False
    seen.add(url)
    return True


def kept_tree(part: bytes, recent: deque[tuple[bytes, LexborHTMLParser]]) -> LexborHTMLParser:
    """`part` parsed, and the tree kept alive in `recent` (bounded by its `maxlen`) when the part
    is at most `RETAIN_MAX` bytes. Memory reuse only, results never depend on it: lexbor takes
    about 1 MB of heap per document, and when one is freed glibc hands the heap top back to the
    kernel, so the next parse page-faults it all in again (85 faults, 60% of a DuckDuckGo page's
    parse on this VM, a third of a Google page's); freeing a tree two parses later leaves a hole
    the next page and tree fit in. Measured: 1.6x faster DuckDuckGo parses in a loop
    (bench/bench_ddg_parse.py), 1.2-1.5x less parse CPU search by search (bench/bench_ddg_search.py)."""
    tree = LexborHTMLParser(part)
    if len(part) <= RETAIN_MAX:
        recent.append((part, tree))
    return tree


def results_part(html: bytes | str, start: bytes, end: bytes | None = None) -> bytes:
    """The page from the tag holding `start` up to the tag holding `end` (else to the page's
    end): the header, search form, styles and scripts around the results hold none, and
    Lexbor's time grows with the bytes. The whole page when `start` is not in it. A `str` is
    encoded as UTF-8, a lone surrogate as "?"."""
    page = html.encode("utf-8", "replace") if isinstance(html, str) else html
    at = page.find(start)
    begin = page.rfind(b"<", 0, at + 1) if at > 0 else -1
    if begin < 0:
        return page
    stop = page.find(end, at) if end is not None else -1
    close = page.rfind(b"<", at, stop) if stop > 0 else -1
    return page[begin:close] if close > 0 else page[begin:]
