"""A fetched body to clean text: what `fetch` gives a reader once the fetcher has the bytes.

Pure (no network, no clock): bytes, the declared content type and charset, and the URL in; an
`Extracted` or a FetchError out, and nothing else for any input. What the body is comes from the
declared type corrected by its first bytes (see _decode). HTML goes to the main-content extractors
(_html), PDF, JSON, XML and feeds to their readers (_documents); text and markdown pass through
decoded. Binary types no reader reads raise UnsupportedContent naming the type.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Literal, get_args

from ..errors import FetchError, InvalidSearchParams, NoText, UnsupportedContent
from . import _decode, _documents, _html
from ._decode import Kind
from ._html import Format, markdown_alternate

__all__ = ["Extracted", "extract", "markdown_alternate"]

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", "application/vnd.wap.xhtml+xml"})
_PDF_TYPES = frozenset({"application/pdf", "application/x-pdf", "application/acrobat"})
_JSON_TYPES = frozenset({"application/json", "text/json", "application/x-json", "application/javascript+json"})
_XML_TYPES = frozenset({"application/xml", "text/xml", "application/x-rss+xml"})
_MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
_BINARY_PREFIXES = ("image/", "audio/", "video/", "font/", "model/", "application/vnd.", "multipart/")
_BINARY_TYPES = frozenset(
    {
        "image/svg+xml",
        "application/zip",
        "application/gzip",
        "application/x-gzip",
        "application/x-tar",
        "application/x-7z-compressed",
        "application/x-rar-compressed",
        "application/msword",
        "application/wasm",
        "application/x-shockwave-flash",
        "application/epub+zip",
        "application/java-archive",
        "application/x-msdownload",
        "application/x-bzip2",
        "application/x-xz",
    }
)
_MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd")


@dataclass(frozen=True)
class Extracted:
    """A page read: its `text` (in the asked format), what it declares about itself (`title`,
    `byline`, `published` as an ISO 8601 date, `language`; None when it does not say), the `kind`
    it was read as, its number of `pages` (PDF only), and `whole_page`: True when no main content
    was found and the text is the whole page's visible text."""

    text: str
    title: str | None
    byline: str | None
    published: str | None
    language: str | None
    kind: Kind
    pages: int | None = None
    whole_page: bool = False


def extract(
    body: bytes,
    *,
    url: str,
    content_type: str | None,
    charset: str | None,
    fmt: Literal["markdown", "text", "html"] = "markdown",
) -> Extracted:
    """The clean text of a fetched body with its metadata.

    `content_type` is the declared Content-Type (parameters allowed), `charset` the declared charset
    when the fetcher parsed it apart; `fmt` is markdown, plain text, or the main content as clean
    HTML (HTML pages; other kinds give their text escaped in a `<pre>`). Raises only FetchError
    subclasses: PageBlocked (a bot challenge), NeedsJavascript (an application shell), NoText (an
    empty body, an image-only PDF), UnsupportedContent (a type no reader reads, a damaged or
    locked PDF); InvalidSearchParams for an unknown `fmt`.
    """
    if fmt not in get_args(Format):
        raise InvalidSearchParams("fmt", f"fmt must be one of markdown, text, html (got {fmt!r}).")
    try:
        return read(body, url=url, content_type=content_type, charset=charset, fmt=fmt)
    except FetchError:
        raise
    except Exception as exc:  # the readers guard their libraries; this is the promise kept if one slips
        raise UnsupportedContent(
            url, f"{url} could not be read ({type(exc).__name__}).", content_type=content_type
        ) from None


def read(body: bytes, *, url: str, content_type: str | None, charset: str | None, fmt: Format) -> Extracted:
    """`extract` without its last guard (the property tests call it to find what would slip)."""
    media, header_charset = _decode.parse_content_type(content_type)
    charset = charset or header_charset
    if not body.strip():
        raise NoText(url, f"{url} answered with an empty body.")
    kind = _kind(body, media, url)
    if kind is None:
        shown = media or "an unlabelled binary body"
        raise UnsupportedContent(url, f"{url} is {shown}, a type websearch does not read as text.", content_type=media)
    if kind == "pdf":
        doc = _documents.read_pdf(body, url)
        return _plain(doc, "pdf", fmt)
    if kind == "xml":
        found = _documents.read_xml(body)
        if found is not None and found.text:
            return _plain(found, "xml", fmt)
        kind = "text"
    text = _decode.decode(body, charset)
    if kind == "html":
        page = _html.extract_html(text, url=url, fmt=fmt)
        return Extracted(
            text=page.text,
            title=page.title,
            byline=page.byline,
            published=page.published,
            language=page.language,
            kind="html",
            whole_page=page.whole_page,
        )
    if kind == "json":
        pretty = _documents.read_json(text)
        if pretty is not None:
            return _plain(_documents.Document(text=pretty), "json", fmt)
        kind = "text"
    cleaned = _documents.clean(text)
    if not cleaned:
        raise NoText(url, f"{url} has no text (only whitespace or control characters).")
    title = _documents.read_markdown_title(cleaned) if kind == "markdown" else None
    return _plain(_documents.Document(text=cleaned, title=title), kind, fmt)


def _kind(body: bytes, media: str | None, url: str) -> Kind | None:
    sniffed = _decode.sniff(body)
    path = url.split("?", 1)[0].split("#", 1)[0].lower()
    if sniffed == "pdf" and media not in _HTML_TYPES:
        return "pdf"
    if sniffed is None and _decode.has_magic(body):
        return None  # an image or archive, whatever the label says
    if media in _PDF_TYPES:
        return "html" if sniffed == "html" else "pdf"
    if media in _HTML_TYPES:
        return "xml" if sniffed == "xml" else "html"
    if media in _XML_TYPES or (media and media.endswith("+xml") and media not in _BINARY_TYPES):
        return "html" if sniffed == "html" else "xml"
    if media in _JSON_TYPES or (media and media.endswith("+json")):
        return "html" if sniffed == "html" else "json"
    if media in _MARKDOWN_TYPES:
        return "markdown"
    if media and media.startswith("text/"):
        return "markdown" if media == "text/plain" and path.endswith(_MARKDOWN_SUFFIXES) else "text"
    if sniffed in ("html", "xml", "json"):
        return sniffed
    if media in _BINARY_TYPES or (media and media.startswith(_BINARY_PREFIXES)):
        return None
    if _decode.looks_binary(body) or not _looks_like_text(body):
        return None
    return "markdown" if path.endswith(_MARKDOWN_SUFFIXES) else "text"


def _looks_like_text(body: bytes) -> bool:
    import codecs

    head = body[:4096]
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    controls = sum(1 for b in head if b < 9 or 13 < b < 32)
    return controls * 100 <= len(head)


def _plain(doc: _documents.Document, kind: Kind, fmt: Format) -> Extracted:
    text = f"<pre>{escape(doc.text)}</pre>" if fmt == "html" else doc.text
    return Extracted(
        text=text,
        title=doc.title,
        byline=doc.byline,
        published=doc.published,
        language=None,
        kind=kind,
        pages=doc.pages,
    )
