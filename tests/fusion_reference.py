"""Fusion as it was before its speed-up (December 2026), kept as a reference.

Used only to check that `websearch._engine._fusion` keys and fuses exactly as before. Not shipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from websearch._core._types import EngineRank, SearchSource

RRF_K: Final = 60
_DEFAULT_PORTS: Final = {"http": "80", "https": "443"}
_TRACKING: Final = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "mc_cid",
        "mc_eid",
        "igshid",
        "ref",
        "ref_src",
        "ref_url",
        "_hsenc",
        "_hsmi",
        "spm",
        "si",
    }
)


def reference_key(url: str) -> str:
    """The URL as fusion compares it (see the module docstring). http and https name one page,
    so the scheme is left out of the key (the shown URL keeps it); a URL that is not http(s)
    is its own key. String slicing, not urllib: fusion keys every result of every engine."""
    head, sep, rest = url.strip().partition("://")
    if not sep or head.lower() not in _DEFAULT_PORTS:
        return url
    rest = rest.split("#", 1)[0]
    cut = len(rest)
    for mark in "/?":
        at = rest.find(mark)
        if 0 <= at < cut:
            cut = at
    netloc, tail = rest[:cut].lower(), rest[cut:]
    netloc = netloc.rsplit("@", 1)[-1]  # credentials name no page
    if netloc.endswith(":" + _DEFAULT_PORTS[head.lower()]):
        netloc = netloc.rsplit(":", 1)[0]
    netloc = netloc.removeprefix("www.")
    path, _, query = tail.partition("?")
    if query:
        kept = sorted(p for p in query.split("&") if p and not _tracking(p.split("=", 1)[0]))
        query = "&".join(kept)
    return f"{netloc}{path.rstrip('/')}" + (f"?{query}" if query else "")


def _tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith("utm_") or lowered in _TRACKING


@dataclass(slots=True)
class _Page:
    source: SearchSource
    first: tuple[int, int]  # (rank, list index) where it first appeared: the tie-breaker
    score: float = 0.0
    engines: list[EngineRank] = field(default_factory=list)
    best: tuple[bool, int] = (True, 0)  # (not https, rank) of the shown URL


def reference_fuse(
    lists: Sequence[tuple[str, Sequence[SearchSource]]], limit: int | None = None
) -> tuple[SearchSource, ...]:
    """One list from `lists` of (provider, its sources in rank order); at most `limit`."""
    pages: dict[str, _Page] = {}
    for index, (provider, sources) in enumerate(lists):
        seen: set[str] = set()  # a provider that lists a page twice counts once, at its best rank
        for rank, source in enumerate(sources, 1):
            key = reference_key(source.url)
            if key in seen:
                continue
            seen.add(key)
            page = pages.get(key)
            if page is None:
                page = pages[key] = _Page(source, (rank, index))
                page.best = (not source.url.startswith("https://"), rank)
            else:
                page.source = _merged(page, source, rank)
            page.score += 1.0 / (RRF_K + rank)
            page.engines.append(EngineRank(provider, rank))
    ordered = sorted(pages.values(), key=lambda p: (-len(p.engines), -p.score, p.first))
    if limit is not None:
        ordered = ordered[:limit]
    return tuple(_with_engines(p.source, tuple(p.engines)) for p in ordered)


def _with_engines(s: SearchSource, engines: tuple[EngineRank, ...]) -> SearchSource:
    """`s` with its engines (built directly: `dataclasses.replace` costs several times more)."""
    return SearchSource(s.title, s.url, s.snippet, s.published_date, s.age_seconds, s.author, s.highlights, engines)


def _merged(page: _Page, other: SearchSource, rank: int) -> SearchSource:
    """`page`'s source with what `other` says better: a longer snippet, fields it lacks."""
    mine = page.source
    rank_key = (not other.url.startswith("https://"), rank)
    url, title = (other.url, other.title or mine.title) if rank_key < page.best else (mine.url, mine.title)
    page.best = min(page.best, rank_key)
    snippet = mine.snippet if len(mine.snippet or "") >= len(other.snippet or "") else other.snippet
    highlights = tuple(dict.fromkeys((*mine.highlights, *other.highlights))) if other.highlights else mine.highlights
    return SearchSource(
        title or other.title,
        url,
        snippet or None,
        mine.published_date or other.published_date,
        mine.age_seconds if mine.age_seconds is not None else other.age_seconds,
        mine.author or other.author,
        highlights,
    )
