"""Query operators, read once: `site:`, `-site:`, `after:`, `before:`, `filetype:`/`ext:`,
`intitle:`, `inurl:`, `"exact phrase"`, `-term` and `OR`.

A model writes `site:docs.python.org asyncio after:2025-01-01` and expects every provider to
honour it. `parse_operators` reads the query once, purely, and never fails: an operator that
is malformed (`site:` with nothing or no host after it, `after:2025-13-45`, a quote that is
never closed) is a plain word and stays in the query as it was written. What it gives:

- the operators, by kind (`sites`, `after`, `filetypes`, ...), for the normalised filters
  (`site:` is `include_domains`, `after:` the start date, ...) and the lenient pass that checks
  the sources after a provider answered;
- `render(keep)`: the query again with the operators of the kinds in `keep` written as they
  were and the others taken out (a phrase not kept loses its quotes, a `-term` or an `OR` not
  kept goes), so each provider sends only what its engine honours; `words` keeps none.

Several `site:` operators name any of those hosts (`site:a.org OR site:b.org` alike), as
`include_domains` does. A query left with no words at all is never sent empty: the values of
the operators taken out stand in for it (a search API refuses a query of only `site:`).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import date
from typing import Final, Literal, get_args

__all__ = [
    "FILTER_OPERATORS",
    "OPERATORS",
    "TEXT_OPERATORS",
    "Operator",
    "QueryOperators",
    "Token",
    "may_have_operators",
    "parse_operators",
]

Operator = Literal["site", "-site", "after", "before", "filetype", "intitle", "inurl", "phrase", "-term", "OR"]
#: Every operator kind, in the order the docs list them.
OPERATORS: Final[tuple[Operator, ...]] = get_args(Operator)
#: The kinds that constrain the results (and that the lenient pass enforces, dates included).
FILTER_OPERATORS: Final[frozenset[Operator]] = frozenset(
    {"site", "-site", "after", "before", "filetype", "intitle", "inurl"}
)
#: The kinds that only shape the words; a provider that does not declare them still gets them as text.
TEXT_OPERATORS: Final[frozenset[Operator]] = frozenset({"phrase", "-term", "OR"})

_HOST: Final = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,63}")
_DAY: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
_EXT: Final = re.compile(r"[a-z0-9]{1,10}")
_NAMED: Final[dict[str, Operator]] = {
    "site": "site",
    "after": "after",
    "before": "before",
    "filetype": "filetype",
    "ext": "filetype",
    "intitle": "intitle",
    "inurl": "inurl",
}


@dataclass(frozen=True, slots=True)
class Token:
    """One piece of the query: its `kind` (None for a plain word), its `text` as written and its
    `value` (a host lowercased, a date, an extension, the words of a phrase or a `-term`)."""

    kind: Operator | None
    text: str
    value: str


@dataclass(frozen=True, slots=True)
class QueryOperators:
    """A query read once: its tokens in order, and the operators among them by kind."""

    query: str
    tokens: tuple[Token, ...]

    def values(self, kind: Operator) -> tuple[str, ...]:
        """The values of the operators of `kind`, in order, without repeats."""
        return tuple(dict.fromkeys(t.value for t in self.tokens if t.kind == kind))

    def texts(self, kind: Operator) -> tuple[str, ...]:
        """The operators of `kind` as written (`site:Docs.Python.org`)."""
        return tuple(t.text for t in self.tokens if t.kind == kind)

    @property
    def kinds(self) -> frozenset[Operator]:
        """The kinds of operator the query holds."""
        return frozenset(t.kind for t in self.tokens if t.kind is not None)

    @property
    def has_filters(self) -> bool:
        """Whether the query holds an operator that constrains the results."""
        return any(t.kind in FILTER_OPERATORS for t in self.tokens)

    @property
    def sites(self) -> tuple[str, ...]:
        """The hosts of `site:` (any of them)."""
        return self.values("site")

    @property
    def not_sites(self) -> tuple[str, ...]:
        """The hosts of `-site:`."""
        return self.values("-site")

    @property
    def after(self) -> date | None:
        """The latest `after:` day (the results are from it on), or None."""
        days = self.values("after")
        return date.fromisoformat(max(days)) if days else None

    @property
    def before(self) -> date | None:
        """The earliest `before:` day (the results are up to it), or None."""
        days = self.values("before")
        return date.fromisoformat(min(days)) if days else None

    @property
    def filetypes(self) -> tuple[str, ...]:
        """The extensions of `filetype:` / `ext:` (any of them), lowercased, no dot."""
        return self.values("filetype")

    @property
    def words(self) -> str:
        """The query with every operator taken out (phrases unquoted)."""
        return self.render(())

    def render(self, keep: Collection[str]) -> str:
        """The query with the operators of the kinds in `keep` as written and the others taken
        out. Everything kept gives the query back unchanged; a query left with no words gets the
        values of what was taken out instead (never an empty query)."""
        shown: list[bool] = [t.kind is None or t.kind in keep for t in self.tokens]
        for i, token in enumerate(self.tokens):  # an OR stays only between two tokens that stay
            if token.kind == "OR":
                shown[i] = shown[i] and shown[i - 1] and shown[i + 1]
        if all(shown):
            return self.query
        parts = [
            t.text if on else t.value for t, on in zip(self.tokens, shown, strict=True) if on or t.kind == "phrase"
        ]
        text = " ".join(parts)
        if text.strip():
            return text
        taken = [t.value for t in self.tokens if t.kind in FILTER_OPERATORS]
        return " ".join(dict.fromkeys(taken)) or self.query


def may_have_operators(query: str) -> bool:
    """A cheap first look: can the query hold an operator that constrains the results?"""
    return ":" in query


def parse_operators(query: str) -> QueryOperators:
    """Read the operators of `query` (pure; never raises: a malformed one is a plain word)."""
    pieces = _split(query)
    tokens = [_token(piece) for piece in pieces]
    for i, token in enumerate(tokens):
        if token.kind == "OR" and not (0 < i < len(tokens) - 1 and tokens[i + 1].text != "OR"):
            tokens[i] = Token(None, token.text, token.text)
    return QueryOperators(query, tuple(tokens))


def _split(query: str) -> list[str]:
    """The query cut at white space, a quoted stretch (closed later) held as one piece."""
    pieces: list[str] = []
    i, n = 0, len(query)
    while i < n:
        if query[i].isspace():
            i += 1
            continue
        start = i
        while i < n and not query[i].isspace():
            if query[i] == '"':
                close = query.find('"', i + 1)
                if close > i + 1 and query[i + 1 : close].strip():
                    i = close + 1
                    continue
            i += 1
        pieces.append(query[start:i])
    return pieces


def _quoted(text: str) -> str | None:
    """The words inside `"..."` when `text` is exactly that, else None."""
    if len(text) > 2 and text[0] == '"' and text[-1] == '"' and '"' not in text[1:-1] and text[1:-1].strip():
        return " ".join(text[1:-1].split())
    return None


def _token(text: str) -> Token:
    word = Token(None, text, text)
    if text == "OR":
        return Token("OR", text, text)
    phrase = _quoted(text)
    if phrase is not None:
        return Token("phrase", text, phrase)
    negated = text.startswith("-")
    body = text[1:] if negated else text
    name, colon, value = body.partition(":")
    kind = _NAMED.get(name.lower()) if colon else None
    if kind is not None:
        parsed = _value(kind, value)
        if parsed is None:
            return word
        if not negated:
            return Token(kind, text, parsed)
        if kind == "site":
            return Token("-site", text, parsed)
    if negated and body and not body.startswith("-"):
        inner = _quoted(body)
        if inner is not None:
            return Token("-term", text, inner)
        if '"' not in body:
            return Token("-term", text, body)
    return word


def _value(kind: str, value: str) -> str | None:
    """An operator's value checked (None when malformed)."""
    if kind == "site":
        host = value.lower().rstrip(".")
        return host if _HOST.fullmatch(host) else None
    if kind in ("after", "before"):
        if not _DAY.fullmatch(value):
            return None
        try:
            return date.fromisoformat(value).isoformat()
        except ValueError:
            return None
    if kind == "filetype":
        ext = value.lower().removeprefix(".")
        return ext if _EXT.fullmatch(ext) else None
    inner = _quoted(value)
    if inner is not None:
        return inner
    return value if value and '"' not in value else None
