"""The readers of what is not HTML: PDF (pypdf, page by page), JSON (pretty-printed), XML and
feeds (RSS, Atom, RDF: each item's title, link, date and summary), plain text and markdown.

PDF pages are given in order, each opened by a marker line `[page N]` (1-based) and separated from
the next by a blank line, so a reader can cite a page; pages without text keep their marker so the
numbers stay true. Control characters and replacement characters never reach the text.
"""

from __future__ import annotations

import io
import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from ..errors import NoText, UnsupportedContent

logging.getLogger("pypdf").addHandler(logging.NullHandler())  # its warnings on damaged files are ours to report

PDF_TYPE = "application/pdf"
_NOISE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd\ud800-\udfff]")
_PDF_DATE = re.compile(r"^(?:D:)?(\d{4})(\d{2})?(\d{2})?")
_HEADING = re.compile(r"^#{1,2}\s+(.+?)\s*#*\s*$", re.M)
_NS = re.compile(r"^\{[^}]*\}")


@dataclass(frozen=True)
class Document:
    """A non-HTML body's text and what it says about itself."""

    text: str
    title: str | None = None
    byline: str | None = None
    published: str | None = None
    pages: int | None = None


def clean(text: str) -> str:
    """Newlines made `\\n`, control and replacement characters removed, the ends stripped."""
    return _NOISE.sub("", text.replace("\r\n", "\n").replace("\r", "\n")).strip()


def read_pdf(body: bytes, url: str) -> Document:
    """The text of a PDF, page by page (see the module docstring); NoText for a PDF without a text
    layer, UnsupportedContent for one that is damaged or needs a password."""
    try:
        from pypdf import PdfReader

        reader = PdfReader(io.BytesIO(body), strict=False)
        if reader.is_encrypted and not _decrypted(reader):
            raise UnsupportedContent(
                url, f"{url} is an encrypted PDF that needs a password to read.", content_type=PDF_TYPE
            )
        texts = [_page_text(page) for page in reader.pages]
        info = _info(reader)
    except (UnsupportedContent, NoText):
        raise
    except Exception as exc:  # pypdf raises many kinds (PdfReadError, ValueError, KeyError...) on damaged files
        raise UnsupportedContent(
            url,
            f"{url} is a damaged or truncated PDF that cannot be read ({type(exc).__name__}).",
            content_type=PDF_TYPE,
        ) from None
    if not texts:
        raise NoText(url, f"{url} is a PDF without pages.")
    if not any(texts):
        raise NoText(
            url,
            f"{url} is a PDF of {len(texts)} page(s) with no text layer (scanned or image-only); it would need OCR.",
        )
    text = "\n\n".join(f"[page {n}]\n\n{t}" if t else f"[page {n}]" for n, t in enumerate(texts, 1))
    return Document(
        text=text,
        title=_info_text(info, "/Title"),
        byline=_info_text(info, "/Author"),
        published=_pdf_date(_info_text(info, "/CreationDate")),
        pages=len(texts),
    )


def _decrypted(reader: Any) -> bool:
    try:
        return bool(reader.decrypt(""))
    except Exception:  # a cipher pypdf cannot undo without an optional dependency counts as locked
        return False


def _page_text(page: Any) -> str:
    return clean(page.extract_text() or "")


def _info(reader: Any) -> Any:
    try:
        return reader.metadata
    except Exception:  # a damaged info dictionary leaves the metadata unknown, the text readable
        return None


def _info_text(info: Any, key: str) -> str | None:
    try:
        value = info.get(key) if info is not None else None
    except Exception:  # an unresolvable reference in the info dictionary
        return None
    if not isinstance(value, str):
        return None
    value = " ".join(clean(value).split())
    return value or None


def _pdf_date(raw: str | None) -> str | None:
    found = _PDF_DATE.match(raw or "")
    if not found:
        return None
    year, month, day = found.groups()
    if month and not 1 <= int(month) <= 12:
        return year
    if day and month and not 1 <= int(day) <= 31:
        day = None
    return "-".join(part for part in (year, month, day if month else None) if part)


def read_json(text: str) -> str | None:
    """The JSON pretty-printed (indent 2, characters kept as they are), or None when it is not JSON."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return None


def read_markdown_title(text: str) -> str | None:
    """The first level-1 or level-2 heading of a markdown text."""
    found = _HEADING.search(text)
    return found.group(1).strip() if found else None


def read_xml(body: bytes) -> Document | None:
    """A feed as its items (title, link, date, summary) under the feed's title, any other XML as
    the text of its elements one per line; None when the body is not XML lxml can recover."""
    try:
        from lxml import etree

        parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=True, huge_tree=False)
        root = etree.fromstring(body, parser)
    except Exception:  # lxml's syntax and value errors: not XML after all
        return None
    if root is None or not isinstance(root.tag, str):
        return None
    name = _local(root.tag)
    if name in ("rss", "RDF", "feed"):
        return _feed(root, name)
    lines = (clean(t) for t in root.itertext())
    return Document(text="\n".join(line for line in lines if line))


def _feed(root: Any, name: str) -> Document:
    channel = _child(root, "channel") if name != "feed" else root
    scope = channel if channel is not None else root
    entries = [el for el in root.iter() if isinstance(el.tag, str) and _local(el.tag) in ("item", "entry")]
    blocks: list[str] = []
    for entry in entries:
        title = _child_text(entry, "title")
        link = _child_text(entry, "link")
        if not link:
            node = _child(entry, "link")
            link = node.get("href") if node is not None else None
        date = next((d for tag in ("pubDate", "published", "updated", "date") if (d := _child_text(entry, tag))), None)
        summary = next(
            (_strip_html(s) for tag in ("description", "summary", "content") if (s := _child_text(entry, tag))), None
        )
        block = [f"## {title or '(untitled)'}"]
        block += [line for line in (link, date) if line]
        if summary:
            block += ["", summary]
        blocks.append("\n".join(block))
    title = _child_text(scope, "title")
    head = [f"# {title}"] if title else []
    description = _child_text(scope, "description") or _child_text(scope, "subtitle")
    if description:
        head.append(_strip_html(description))
    return Document(text="\n\n".join(["\n\n".join(head), *blocks]).strip(), title=title)


def _local(tag: str) -> str:
    return _NS.sub("", tag).rpartition(":")[2]


def _child(node: Any, name: str) -> Any:
    return next((c for c in node if isinstance(c.tag, str) and _local(c.tag) == name), None)


def _child_text(node: Any, name: str) -> str | None:
    child = _child(node, name)
    if child is None:
        return None
    text = " ".join(clean("".join(child.itertext())).split())
    return text or None


def _strip_html(fragment: str) -> str:
    if "<" not in fragment:
        return fragment
    from ._page_text import parse, text_of

    tree = parse(fragment)
    return text_of(tree.body or tree.root) or fragment
