"""An HTML page's main content and metadata: trafilatura first, a readability pass when trafilatura
finds nothing or too little, the whole page's visible text when neither finds a main content.

The readability pass is the port of readability-lxml that trafilatura carries (the issue named
readability-lxml itself): depending on readability-lxml beside trafilatura made the default pip of
a Python 3.11 virtual environment (23.2) fail to install websearch at all (an internal error on
`lxml[html-clean]`, which it and trafilatura's jusText spell two ways). The port reads the same
pages the same way (tests/test_extract.py's readability case).

The trafilatura options are the ones that scored best on the article-extraction benchmark
(bench/bench_extract.py): precision favoured and comments left out, tables kept (a table is often
the content of a reference page). Published dates are only those the page declares in its markup
(htmldate's extensive search, which guesses from free text, is off). Any failure of the two
libraries counts as "found nothing": their exceptions never leave this module.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urljoin

from ..errors import NeedsJavascript, NoText, PageBlocked
from . import _page_text
from ._meta import page_meta

Format = Literal["markdown", "text", "html"]

ENOUGH = 250  # characters of main content below which readability is tried and the whole page weighed
# Below this many characters, trafilatura's own extract is weighed against its fallbacks' (its
# `fast=False`): on the benchmark's pages that pass changes 4 of 141 extracts, all of them short,
# and costs a third of the extraction on every page.
SHORT = 500
_TRAFILATURA_OPTIONS: dict[str, Any] = {
    "favor_precision": True,
    "include_comments": False,
    "include_tables": True,
    "include_links": False,
    "include_images": False,
}
_TRAFILATURA_FORMAT = {"markdown": "markdown", "text": "txt", "html": "html"}
# dates the page declares; max_date far ahead keeps the extraction free of the clock
_DATE_PARAMS = {"original_date": True, "extensive_search": False, "max_date": "2999-12-31"}
_ALTERNATE = re.compile(r"<link\b[^>]*>", re.I)
_ATTR = re.compile(r"""([\w-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")
_HEADING_AFTER_LINE = re.compile(r"(?<=[^\n])\n(?=#{1,6} )")
_LANG = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$")

for _name in ("readability", "courlan", "justext"):
    # as trafilatura and htmldate do for theirs: without a handler, Python's last-resort handler would
    # print their warnings ("ruthless removal did not work") to stderr of every program reading pages
    logging.getLogger(_name).addHandler(logging.NullHandler())


@dataclass(frozen=True)
class HtmlContent:
    """What an HTML page gives: its text in the asked format and what it declares about itself."""

    text: str
    title: str | None
    byline: str | None
    published: str | None
    language: str | None
    whole_page: bool


def extract_html(html: str, *, url: str, fmt: Format) -> HtmlContent:
    """The main content of `html` in `fmt`, with its metadata; PageBlocked for a bot challenge,
    NeedsJavascript for an application shell, NoText for a page without text."""
    lxml_tree = _lxml_tree(html)
    text = _trafilatura(lxml_tree, url, fmt) if lxml_tree is not None else ""
    if _length(text, fmt) < ENOUGH:
        fallback = _readability(html, url, fmt)
        if _length(fallback, fmt) > _length(text, fmt):
            text = fallback
    # After the extract, which tells an article with a CAPTCHA-guarded comment form from a
    # challenge without a second parse of the page; before the checks of little text.
    if _page_text.is_challenge(html, extracted=len(text)):
        raise PageBlocked(url, f"{url} answered with a bot challenge page instead of the page.")
    whole_page = False
    if (length := _length(text, fmt)) < ENOUGH:
        tree = _page_text.parse(html)
        visible = _page_text.visible_text(tree)
        if _page_text.is_app_shell(len(html), tree, visible):
            raise NeedsJavascript(
                url,
                f"{url} is a JavaScript application: its text is written by scripts, which websearch does not run. "
                "A browser-based reader is needed for it.",
            )
        if len(visible) > 2 * length:
            text, whole_page = (_escape_html(visible) if fmt == "html" else visible), True
        elif length == 0:
            raise NoText(url, f"{url} has no text to read (an empty page).")
    declared = page_meta(lxml_tree, _language(lxml_tree))
    # trafilatura's metadata pass (as long as the extraction) only for what the page's own
    # declarations left out
    meta = _metadata(lxml_tree, url) if None in (declared.published, declared.byline, declared.language) else {}
    return HtmlContent(
        text=text,
        title=declared.title or _clean(meta.get("title")),
        byline=declared.byline or _clean(meta.get("author")),
        published=declared.published or _clean(meta.get("date")),
        language=declared.language or _clean(meta.get("language")),
        whole_page=whole_page,
    )


def markdown_alternate(html: bytes | str, base_url: str) -> str | None:
    """The absolute URL of the page's `<link rel="alternate" type="text/markdown" href=...>`, the
    markdown version some sites offer beside the HTML, or None."""
    head = html[:200_000].decode("utf-8", "replace") if isinstance(html, bytes) else html[:200_000]
    for tag in _ALTERNATE.findall(head):
        attrs: dict[str, str] = {
            m.group(1).lower(): next(g for g in m.groups()[1:] if g is not None) for m in _ATTR.finditer(tag)
        }
        rels = attrs.get("rel", "").lower().split()
        kind = attrs.get("type", "").split(";")[0].strip().lower()
        href = attrs.get("href", "").strip()
        if "alternate" in rels and kind in ("text/markdown", "text/x-markdown") and href:
            try:
                absolute = urljoin(base_url, href)
            except ValueError:
                continue
            if absolute.startswith(("http://", "https://")):
                return absolute
    return None


def _length(text: str, fmt: Format) -> int:
    """The characters of text in `text` (its markup left out when it is HTML)."""
    if fmt != "html" or not text:
        return len(text.strip())
    return len(_page_text.text_of(_page_text.parse(text).root))


def _lxml_tree(html: str) -> Any:
    from trafilatura.utils import load_html  # outside the try: a broken install must not read as "no content"

    try:
        return load_html(html)
    except Exception:  # an unparseable page is a page without main content
        return None


def _trafilatura(tree: Any, url: str, fmt: Format) -> str:
    import trafilatura

    found = ""
    for fast in (True, False):
        try:
            got = trafilatura.extract(
                tree, url=url, output_format=_TRAFILATURA_FORMAT[fmt], fast=fast, **_TRAFILATURA_OPTIONS
            )
        except Exception:  # trafilatura failing on a page means it found nothing in it
            got = None
        found = (got or "").strip()
        if _length(found, fmt) >= SHORT:
            break
    # trafilatura's markdown puts a heading right under the paragraph before it: a blank line between
    return _HEADING_AFTER_LINE.sub("\n\n", found) if fmt == "markdown" else found


def _readability(html: str, url: str, fmt: Format) -> str:
    from trafilatura.readability_lxml import Document

    try:
        tree = _lxml_tree(html)  # its own: the pass changes the tree it reads
        summary: str = Document(tree).summary() if tree is not None else ""
    except Exception:  # readability raises its own errors and lxml's on odd pages
        return ""
    if fmt == "html":
        return summary.strip() if _page_text.text_of(_page_text.parse(summary).body) else ""
    if fmt == "markdown":
        import trafilatura

        try:
            found = trafilatura.extract(summary, url=url, output_format="markdown", favor_recall=True)
        except Exception:  # the plain text below serves
            found = None
        if found:
            return found.strip()
    return _page_text.text_of(_page_text.parse(summary).body)


def _metadata(tree: Any, url: str) -> dict[str, Any]:
    if tree is None:
        return {}
    from trafilatura import extract_metadata

    try:
        found: dict[str, Any] = extract_metadata(tree, url, dict(_DATE_PARAMS)).as_dict()
    except Exception:  # metadata is optional: a page whose metadata cannot be read has none
        return {}
    return found


_LOWER_HTTP_EQUIV = "translate(@http-equiv, 'CONTENT-LANGUAGE', 'content-language')"


def _language(tree: Any) -> str | None:
    candidates = [
        _lxml_first(tree, "/html/@lang"),
        _lxml_first(
            tree, "//meta[translate(@http-equiv, 'CONTENT-LANGUAGE', 'content-language')='content-language']/@content"
        ),
        _lxml_first(tree, "//meta[@property='og:locale']/@content"),
    ]
    for value in candidates:
        value = (value or "").strip().split(",")[0].strip()
        if _LANG.match(value):
            return value.replace("_", "-")
    return None


def _lxml_first(tree: Any, xpath: str) -> str | None:
    if tree is None:
        return None
    try:
        found = tree.xpath(xpath)
    except Exception:  # an lxml tree of an odd page: no such value
        return None
    return _clean(str(found[0])) if found else None


def _clean(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    value = " ".join(value.split())
    return value or None


def _escape_html(text: str) -> str:
    from html import escape

    return "\n".join(f"<p>{escape(p)}</p>" for p in text.split("\n\n") if p.strip())
