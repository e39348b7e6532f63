"""Bytes to text, and what a body is: the declared content type weighed against the body's first
bytes, and the charset found the way a browser would look for it.

Servers mislabel often (a PDF sent as application/octet-stream, an error page sent as
application/pdf, a feed sent as text/html), so the kind of a body is its declared type corrected by
sniffing; and a page's charset may be in the HTTP header, in a `<meta>` tag, in a byte order mark, or
nowhere. Decoding never raises: the last resort replaces the bytes it cannot read.
"""

from __future__ import annotations

import codecs
import re
from typing import Literal

Kind = Literal["html", "pdf", "markdown", "text", "json", "xml"]

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE, whose mark is its prefix
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# labels browsers read as another encoding than Python's codec of that name (WHATWG Encoding)
_ALIASES = {"iso-8859-1": "cp1252", "latin-1": "cp1252", "latin1": "cp1252", "ascii": "cp1252", "us-ascii": "cp1252"}
_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]{1,40})""", re.I)
_XML_ENCODING = re.compile(rb"""^<\?xml[^>]{0,100}?encoding\s*=\s*["']([A-Za-z0-9_.:-]{1,40})""", re.I)
_HTML_START = re.compile(
    rb"^(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body|meta|title|script|div|p\b)", re.I | re.S
)
_XML_ROOT = re.compile(rb"<(?:rss|feed|rdf:RDF|urlset|sitemapindex)[\s>]", re.I)
_MAGIC = (
    b"\x89PNG",
    b"\xff\xd8\xff",
    b"GIF8",
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"RIFF",
    b"ID3",
    b"OggS",
    b"fLaC",
    b"BM",
    b"\x00\x00\x01\x00",
    b"7z\xbc\xaf",
    b"Rar!",
    b"\x7fELF",
    b"MZ",
    b"wOFF",
    b"wOF2",
)
_HEAD = 4096


def parse_content_type(value: str | None) -> tuple[str | None, str | None]:
    """`text/html; charset=UTF-8` -> ("text/html", "UTF-8"); the media type lower-cased."""
    if not value:
        return None, None
    media, _, params = value.partition(";")
    charset = None
    for param in params.split(";"):
        name, _, val = param.partition("=")
        if name.strip().lower() == "charset" and val.strip():
            charset = val.strip().strip("\"'")
    return (media.strip().lower() or None), charset


def codec_for(label: str | bytes | None) -> str | None:
    """The Python codec for a charset label, or None when Python knows no such encoding."""
    if not label:
        return None
    name = (label.decode("ascii", "replace") if isinstance(label, bytes) else label).strip().lower()
    name = _ALIASES.get(name, name)
    try:
        return codecs.lookup(name).name
    except (LookupError, ValueError):
        return None


def bom_codec(body: bytes) -> str | None:
    """The encoding a byte order mark at the start of `body` names."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name
    return None


def declared_in_body(body: bytes) -> str | None:
    """The charset an HTML `<meta>` tag or an XML declaration names, within the first 4 KB."""
    head = body[:_HEAD]
    found = _XML_ENCODING.search(head) or _META_CHARSET.search(head)
    codec = codec_for(found.group(1)) if found else None
    # a document decoded from bytes cannot be UTF-16 in a tag written in ASCII: browsers read it as UTF-8
    return "utf-8" if codec and codec.startswith("utf-16") else codec


def decode(body: bytes, header_charset: str | None) -> str:
    """The text of `body`: a byte order mark first (as browsers do, since it cannot lie), then the
    header's charset, then a `<meta>` or XML declaration, then UTF-8, then a statistical guess
    (charset_normalizer); a charset that does not fit the bytes is passed over, and when none fits
    the best candidate decodes with replacement characters. Never raises."""
    bom = bom_codec(body)
    if bom:
        return body.decode(bom, "replace").lstrip("\ufeff")
    candidates = [codec_for(header_charset), declared_in_body(body), "utf-8"]
    for codec in candidates:
        if codec:
            try:
                return body.decode(codec)
            except (UnicodeDecodeError, LookupError):
                continue
    guessed = _guess(body)
    first = next((c for c in candidates if c), "utf-8")
    return body.decode(guessed or first, "replace")


def _guess(body: bytes) -> str | None:
    try:
        from charset_normalizer import from_bytes

        best = from_bytes(body[:65536]).best()
    except Exception:  # a guess is optional: a failure of the guesser falls back to replacement
        return None
    return codec_for(best.encoding) if best is not None else None


def has_magic(body: bytes) -> bool:
    """The body starts with the signature of a binary format (an image, an archive, audio, video...)."""
    return body.startswith(_MAGIC) or body[4:8] == b"ftyp"


def looks_binary(body: bytes) -> bool:
    """A known binary signature, or NUL bytes in a head that no text encoding we read explains."""
    if has_magic(body):
        return True
    head = body[:_HEAD]
    return b"\x00" in head and bom_codec(body) is None


def sniff(body: bytes) -> Kind | None:
    """What the first bytes say the body is, or None when they say nothing we read."""
    bom = bom_codec(body)
    if bom and bom != "utf-8":
        head = body[:_HEAD].decode(bom, "replace").lstrip("\ufeff").lstrip().encode("utf-8", "replace")
    else:
        head = body[:_HEAD].removeprefix(codecs.BOM_UTF8).lstrip()
    if b"%PDF-" in body[:1024]:
        return "pdf"
    if _HTML_START.match(head):
        return "html"
    if head.startswith(b"<?xml") or _XML_ROOT.match(head):
        after = head[:1024].lower()
        return "html" if (b"<!doctype html" in after or b"<html" in after) else "xml"
    if head[:1] in (b"{", b"["):
        return "json"
    return None
