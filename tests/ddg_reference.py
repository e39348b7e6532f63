"""The spec's regex rules for DuckDuckGo's HTML page, transcribed as a reference.

Used only to check that the real-parser implementation gives the same results, and by the
parse benchmark. Not shipped.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

_BLOCK = re.compile(
    r'<div[^>]*class="[^"]*\bresult\b[^"]*"[^>]*>([\s\S]*?)'
    r'(?=<div[^>]*class="[^"]*\bresult\b[^"]*"|<div[^>]*class="[^"]*nav-link[^"]*"|$)'
)
_TITLE = re.compile(r'<a[^>]*class="[^"]*\bresult__a\b[^"]*"[^>]*href="([^"]*)"[^>]*>([\s\S]*?)</a>')
_SNIPPET = re.compile(r'<(?:a|div|span)[^>]*class="[^"]*\bresult__snippet\b[^"]*"[^>]*>([\s\S]*?)</(?:a|div|span)>')
_TAG = re.compile(r"<[^>]+>")
_WS = re.compile(r"\s+")
_UDDG = re.compile(r"[?&]uddg=([^&]+)")
_ENTITIES = {"&nbsp;": " ", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'", "&apos;": "'"}


def _decode(text: str, tag: str = " ") -> str:
    text = _TAG.sub(tag, text)
    text = re.sub(r"&#(\d+);", lambda m: chr(int(m.group(1))), text)
    text = re.sub(r"&#x([0-9a-fA-F]+);", lambda m: chr(int(m.group(1), 16)), text)
    for k, v in _ENTITIES.items():
        text = text.replace(k, v)
    text = text.replace("&amp;", "&")
    return _WS.sub(" ", text).strip()


def _unwrap(href: str) -> str | None:
    href = href.replace("&amp;", "&")
    m = _UDDG.search(href)
    if m:
        try:
            return unquote(m.group(1), errors="strict")
        except UnicodeDecodeError:
            return None
    if href.startswith("//"):
        return "https:" + href
    if href.startswith(("http://", "https://")):
        return href
    return None


def parse_with_spec_regex(page: str, limit: int = 20, tag: str = " ") -> list[tuple[str, str, str | None]]:
    """The spec's reading; `tag` is what a tag becomes (the spec says a space; the real pages'
    inline highlight tags sit inside words, so websearch reads them as nothing)."""
    out: list[tuple[str, str, str | None]] = []
    seen: set[str] = set()
    for block in _BLOCK.finditer(page):
        body = block.group(1)
        t = _TITLE.search(body)
        if not t:
            continue
        title = _decode(t.group(2), tag)
        url = _unwrap(t.group(1))
        if not title or url is None or url in seen:
            continue
        s = _SNIPPET.search(body)
        snippet = _decode(s.group(1), tag) if s else ""
        seen.add(url)
        out.append((title, url, snippet or None))
        if len(out) >= limit:
            break
    return out
