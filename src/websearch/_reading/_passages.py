"""A fetched page's text cut into passages: the unit that `research` ranks, dedupes and cites.

Passages are slices of the page text (`start`/`end` are offsets into it), so a citation can point
back at the page. Paragraphs are merged up to a target size, because a lone short paragraph ranks
badly and cites poorly; a paragraph longer than the maximum is cut at sentence ends. A markdown
heading is not a passage: it names the passages below it (`heading`), and a passage never runs
across one. Tables, lists and fenced code stay whole when they fit the maximum, and are cut at
line ends when they do not.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Final

__all__ = ["PageText", "Passage", "sentence_prefix", "split_passages"]


@dataclass(frozen=True)
class PageText:
    """One fetched page as `research` reads it: its text (markdown or plain), the date it declares
    (ISO, None when it declares none) and its position in the search results (`rank`, 0 first)."""

    url: str
    title: str | None
    text: str
    published: str | None = None
    rank: int = 0


@dataclass(frozen=True)
class Passage:
    """A slice of page `source`'s text (`text == page.text[start:end]`), the `index`-th of the page,
    under the nearest markdown heading above it (`heading`, None before any)."""

    source: int
    index: int
    start: int
    end: int
    text: str
    heading: str | None


_HEADING: Final = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT: Final = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")
_FENCE: Final = re.compile(r" {0,3}(```|~~~)")
_TABLE: Final = re.compile(r"[ \t]*\|")
_LIST: Final = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S")
_RULE: Final = re.compile(r" {0,3}(?:(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|(?:-[ \t]*){3,})$")
#: Where a sentence ends: Latin end punctuation and closing quotes then space, CJK end punctuation
#: (no space needed), or a line end. The cut goes at the match's end.
_SENTENCE_END: Final = re.compile(r"[.!?…][\"'”’)\]]*\s+|[。！？][」』”’）]*\s*|\n\s*")
_LINE_END: Final = re.compile(r"\n")

_PARA, _LIST_KIND, _TABLE_KIND, _CODE, _HEAD = "para", "list", "table", "code", "heading"


@dataclass
class _Block:
    kind: str
    start: int
    end: int
    heading: str | None = None


def _blocks(text: str) -> list[_Block]:
    """The page's blocks in order: headings, paragraphs, lists, tables and fenced code."""
    blocks: list[_Block] = []
    current: _Block | None = None
    current_lines = 0
    fence: str | None = None
    offset = 0
    for line in text.split("\n"):
        start, end = offset, offset + len(line)
        offset = end + 1
        if fence is not None:
            assert current is not None
            current.end = end
            if line.lstrip().startswith(fence):
                blocks.append(current)
                current, fence = None, None
            continue
        if current is not None and current.kind == _PARA and current_lines == 1 and _SETEXT.match(line):
            # the line above is a heading underlined with === or ---
            blocks.append(_Block(_HEAD, current.start, end, text[current.start : current.end].strip() or None))
            current = None
            continue
        if not line.strip() or _RULE.match(line):
            if current is not None:
                blocks.append(current)
            current = None
            continue
        if (fenced := _FENCE.match(line)) is not None:
            if current is not None:
                blocks.append(current)
            current, fence = _Block(_CODE, start, end), fenced.group(1)
            continue
        if (heading := _HEADING.match(line)) is not None:
            if current is not None:
                blocks.append(current)
            current = None
            blocks.append(_Block(_HEAD, start, end, (heading.group(2) or "").strip() or None))
            continue
        kind = _TABLE_KIND if _TABLE.match(line) else _LIST_KIND if _LIST.match(line) else _PARA
        if current is not None and (
            kind == current.kind or (current.kind == _LIST_KIND and kind == _PARA)  # an item's next line
        ):
            current.end = end
            current_lines += 1
            continue
        if current is not None:
            blocks.append(current)
        current, current_lines = _Block(kind, start, end), 1
    if current is not None:
        blocks.append(current)
    return blocks


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _cuts(text: str, start: int, end: int, by_line: bool) -> list[int]:
    """Where a block may be cut: after each line (tables, lists, code) or each sentence."""
    pattern = _LINE_END if by_line else _SENTENCE_END
    return [m.end() for m in pattern.finditer(text, start, end) if start < m.end() < end]


def _pack(text: str, start: int, end: int, by_line: bool, target: int, most: int) -> list[tuple[int, int]]:
    """Cut text[start:end] into pieces of at most `most` characters, each ending at the first cut
    past `target` characters (or the last cut that fits, or a space, or a hard cut)."""
    cuts = _cuts(text, start, end, by_line)
    pieces: list[tuple[int, int]] = []
    pos = start
    while end - pos > most:
        lo = bisect.bisect_right(cuts, pos)
        hi = bisect.bisect_right(cuts, pos + most)
        at_target = bisect.bisect_left(cuts, pos + target, lo, hi)
        if at_target < hi:
            cut = cuts[at_target]
        elif lo < hi:
            cut = cuts[hi - 1]
        else:
            space = text.rfind(" ", pos + target // 2, pos + most)
            cut = space + 1 if space > pos else pos + most
        pieces.append((pos, cut))
        pos = cut
    pieces.append((pos, end))
    return pieces


def split_passages(page_index: int, page: PageText, *, target_chars: int = 600, max_chars: int = 1200) -> list[Passage]:
    """Page `page_index`'s passages in document order: blocks merged until a passage reaches
    `target_chars` (lists merged while they fit `max_chars`), none longer than `max_chars`."""
    if max_chars < 1 or target_chars < 1:
        raise ValueError("target_chars and max_chars must be positive")
    target = min(target_chars, max_chars)
    text = page.text
    spans: list[tuple[int, int, str | None]] = []
    heading: str | None = None
    open_start = open_end = -1
    open_kind = ""

    def close() -> None:
        nonlocal open_start
        if open_start >= 0:
            spans.append((open_start, open_end, heading))
        open_start = -1

    for block in _blocks(text):
        if block.kind == _HEAD:
            close()
            heading = block.heading
            continue
        start, end = _trimmed(text, block.start, block.end)
        if start >= end:
            continue
        if end - start > max_chars:
            close()
            by_line = block.kind != _PARA
            for piece_start, piece_end in _pack(text, start, end, by_line, target, max_chars):
                if by_line and piece_end - piece_start > max_chars:  # one very long line
                    pieces = _pack(text, piece_start, piece_end, False, target, max_chars)
                else:
                    pieces = [(piece_start, piece_end)]
                for a, b in pieces:
                    spans.append((a, b, heading))
            continue
        if open_start >= 0:
            together = open_kind == _LIST_KIND and block.kind == _LIST_KIND
            if end - open_start > max_chars or (open_end - open_start >= target and not together):
                close()
        if open_start < 0:
            open_start = start
        open_end, open_kind = end, block.kind
    close()
    passages: list[Passage] = []
    for a, b, head in spans:
        a, b = _trimmed(text, a, b)
        if a < b:
            passages.append(Passage(page_index, len(passages), a, b, text[a:b], head))
    return passages


def sentence_prefix(text: str, limit: int) -> str | None:
    """The longest start of `text` that ends at a sentence end and has at most `limit` characters
    (trailing space dropped), or None when not even the first sentence fits."""
    if len(text) <= limit:
        return text
    best = None
    for match in _SENTENCE_END.finditer(text, 0, limit + 1):
        end = match.start() + len(match.group().rstrip())
        if end > limit:
            break
        best = end
    return text[:best].rstrip() if best else None
