"""A window on a long text: at most `max_chars` characters from `start`, cut where a reader would
pause, and where the next window begins.

A model reads a long page in windows (`fetch(url, start=...)`); the cut falls on a paragraph break,
else a sentence end, else a space, searched in the last fifth of the window, and only mid-word when
the window has none of them. The windows tile the text exactly: each begins where the last ended,
so their concatenation is the text, nothing repeated or lost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InvalidSearchParams

_SEARCH_SHARE = 0.2  # the cut is looked for in this last share of the window
_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE = re.compile(r"[.!?…。！？][\"'”’)\]]*\s+")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Window:
    """A slice of a text: `text` (= whole[start:next_start]), its `start`, `next_start` where the
    next window begins (None when this one reaches the end), the text's `total_chars`, and
    `truncated`: True when text remains after this window."""

    text: str
    start: int
    next_start: int | None
    total_chars: int
    truncated: bool


def window(text: str, start: int, max_chars: int) -> Window:
    """The window of `text` beginning at `start`, at most `max_chars` long (see the module
    docstring). InvalidSearchParams when `start` is negative or past the end, or `max_chars` < 1."""
    total = len(text)
    if max_chars < 1:
        raise InvalidSearchParams("max_chars", f"max_chars must be at least 1 (got {max_chars}).")
    if start < 0 or start > total:
        raise InvalidSearchParams("start", f"start must be between 0 and {total}, the text's length (got {start}).")
    end = start + max_chars
    if end >= total:
        return Window(text=text[start:], start=start, next_start=None, total_chars=total, truncated=False)
    cut = _cut(text, start, end)
    return Window(text=text[start:cut], start=start, next_start=cut, total_chars=total, truncated=True)


def _cut(text: str, start: int, end: int) -> int:
    """Where a window from `start` that may reach `end` (< len(text)) should end: just after the
    last separator found in its last fifth (its trailing whitespace kept with it)."""
    floor = max(start, end - max(1, int((end - start) * _SEARCH_SHARE)) - 1)
    for pattern in (_PARAGRAPH, _SENTENCE, _SPACE):
        ends = [match.end() for match in pattern.finditer(text, floor, end)]
        if ends:
            return ends[-1]
    return end
