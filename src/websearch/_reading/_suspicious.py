"""Prompt-injection flags on a page's text: the places where a page speaks to the model reading it
rather than to a person, or hides characters a person would not see. The text is never altered:
the spans are reported, and the caller (fetch, research) turns them into a notice for the model.

The phrases are the addressing forms ("ignore all previous instructions", "if you are an AI",
"your system prompt", chat-template markup), not the mere topic, so an article about language
models is not flagged for saying "system prompt". Zero-width joiners and non-joiners are flagged
only between Latin letters: emoji sequences and Arabic or Indic scripts use them properly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from . import _decode, _page_text

ADDRESSED = "instructions addressed to the model"
ZERO_WIDTH = "zero-width characters"
BIDI = "bidirectional override characters"
HIDDEN = "hidden text"

_ROLE = (
    r"(?:ai|a\.i\.|llm|language model|large language model|assistant|chatbot|chat ?gpt|gpt|claude|gemini|agent|bot)s?"
)
_PHRASES = re.compile(
    "|".join(
        (
            r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|of\s+|your\s+|these\s+|those\s+){0,3}"
            r"(?:previous|prior|above|earlier|preceding|former|original|existing)\s+"
            r"(?:instructions?|prompts?|directions?|directives?|rules|messages?|context|guidelines)\b",
            r"\b(?:disregard|ignore|forget)\s+(?:everything|all|anything)\s+"
            r"(?:above|before|previously|you were told)\b",
            r"\bdisregard\s+the\s+above\b",
            r"\byou\s+are\s+now\s+(?:a\s+|an\s+|in\s+)?(?:[\w-]+\s+){0,3}?"
            r"(?:assistant|ai|model|chatbot|bot|agent|persona|mode|jailbroken|dan|unrestricted|unfiltered)\b",
            r"\b(?:your|new|updated|real|hidden|secret)\s+system\s+(?:prompt|message|instructions)\b",
            r"\b(?:reveal|print|repeat|show|output|leak|ignore|override)\s+(?:the|your)\s+system\s+(?:prompt|message)\b",
            r"\bas\s+an\s+ai\b[^.\n]{0,40}?\byou\s+(?:must|should|will|are|need)\b",
            rf"\bif\s+you\s+are\s+(?:an?\s+)?{_ROLE}\b",
            rf"\b(?:attention|note|message|instructions?|a\s+note)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?{_ROLE}\b",
            rf"\b(?:dear|hey|hello|hi)\s+{_ROLE}\b",
            r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to)\s+the\s+user\b",
            r"\bwithout\s+(?:telling|informing|notifying)\s+the\s+user\b",
            r"\bnew\s+instructions\s*:",
            r"<\|[A-Za-z_]{2,24}\|>",
            r"\[/?INST\]",
            r"<</?SYS>>",
            r"</?(?:system|system_prompt|assistant|tool_call|function_calls|instructions)>",
        )
    ),
    re.I,
)
_ZERO_WIDTH = re.compile(r"[\u200b\u2060\ufeff]+|(?<=[A-Za-z])[\u200c\u200d]+(?=[A-Za-z])")
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]+")
_TAGS = re.compile(r"[\U000e0000-\U000e007f]+")  # Unicode tag characters: invisible ASCII
_HIDDEN_TEXT_MAX = 500


@dataclass(frozen=True)
class Span:
    """A flagged stretch of a text: `text[start:end]`, and the `reason` it was flagged for."""

    start: int
    end: int
    reason: str


def find_suspicious(text: str) -> list[Span]:
    """The spans of `text` that address the model or hide characters, in order of their start.
    Reasons: ADDRESSED, ZERO_WIDTH (a byte order mark at the very start is no flag), BIDI, and
    HIDDEN (Unicode tag characters, which spell ASCII no one sees)."""
    spans = [Span(m.start(), m.end(), ADDRESSED) for m in _PHRASES.finditer(text)]
    spans += [
        Span(m.start(), m.end(), ZERO_WIDTH)
        for m in _ZERO_WIDTH.finditer(text)
        if not (m.start() == 0 and m.group() == "\ufeff")
    ]
    spans += [Span(m.start(), m.end(), BIDI) for m in _BIDI.finditer(text)]
    spans += [Span(m.start(), m.end(), HIDDEN) for m in _TAGS.finditer(text)]
    return sorted(spans, key=lambda s: (s.start, s.end))


def addresses_model(text: str) -> bool:
    """Some of `text` speaks to the model (ADDRESSED) or smuggles tag characters (HIDDEN)."""
    return bool(_PHRASES.search(text) or _TAGS.search(text))


_MAY_HIDE = "[hidden], [aria-hidden], [style]"
_NOT_SHOWN = frozenset({"script", "style", "template", "head", "title", "meta", "link"})


def _under_hidden(node: Any) -> bool:
    """Whether an ancestor of `node` hides it already (its text is that ancestor's)."""
    parent = node.parent
    while parent is not None and (parent.tag or "") not in ("html", "-undef"):
        if (parent.tag or "") in _NOT_SHOWN or _page_text.is_hidden(parent):
            return True
        parent = parent.parent
    return False


def hidden_html_text(html: bytes | str) -> list[str]:
    """The texts of elements a person does not see (`display:none`, `visibility:hidden`,
    `font-size:0`, the `hidden` attribute, `aria-hidden="true"`) that address the model; each at
    most 500 characters. The caller makes a notice of them: a reader sees no such text."""
    page = _decode.decode(html, None) if isinstance(html, bytes) else html
    if not page:
        return []
    tree = _page_text.parse(page)
    found: list[str] = []
    # Only the elements that can hide are looked at (matched in C: a Python walk of every node
    # of a 100 KB page took 1.8 ms), the outermost of each hidden subtree once.
    for node in tree.css(_MAY_HIDE):
        if (node.tag or "") in _NOT_SHOWN or not _page_text.is_hidden(node) or _under_hidden(node):
            continue
        text = " ".join(_page_text.text_of(node, skip_hidden=False).split())
        if text and addresses_model(text):
            found.append(text[:_HIDDEN_TEXT_MAX])
    return found
