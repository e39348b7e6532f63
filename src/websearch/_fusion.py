"""Fusion: several providers' result lists become one, by reciprocal-rank fusion.

Pure functions, no I/O. Results are the same page when their `fusion_key`s match: scheme and
host lower-cased, a leading `www.` and default ports dropped, the fragment, a trailing slash and
tracking parameters (`utm_*`, `fbclid`, `gclid`, `ref`, ...) removed, the remaining parameters
sorted. Each page scores the sum of 1 / (k + rank) over the lists it is in (k = 60, as in
Cormack et al.'s RRF); pages more engines agree on come first, then by score, then by where
they first appeared. On merge the longest snippet and the richest fields (published date, age,
author, highlights) win, and the shown URL is the best original: https over http, then the one
ranked highest. Every fused source lists the engines that returned it and at which rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ._types import EngineRank, SearchSource

__all__ = ["RRF_K", "fuse", "fusion_key"]

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


def fusion_key(url: str) -> str:
    """The URL as fusion compares it (see the module docstring); the URL itself if unparseable."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").removeprefix("www.")
    if port is not None and str(port) != _DEFAULT_PORTS.get(scheme):
        host = f"{host}:{port}"
    query = sorted(
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not k.lower().startswith("utm_") and k.lower() not in _TRACKING
    )
    path = parts.path.rstrip("/")
    # http and https name one page: the scheme is left out of the key (the shown URL keeps it)
    return urlunsplit(("", host, path, urlencode(query), "")).removeprefix("//") if scheme in _DEFAULT_PORTS else url


@dataclass(slots=True)
class _Page:
    source: SearchSource
    first: tuple[int, int]  # (rank, list index) where it first appeared: the tie-breaker
    score: float = 0.0
    engines: list[EngineRank] = field(default_factory=list)
    best: tuple[bool, int] = (True, 0)  # (not https, rank) of the shown URL


def fuse(lists: Sequence[tuple[str, Sequence[SearchSource]]], limit: int | None = None) -> tuple[SearchSource, ...]:
    """One list from `lists` of (provider, its sources in rank order); at most `limit`."""
    pages: dict[str, _Page] = {}
    for index, (provider, sources) in enumerate(lists):
        seen: set[str] = set()  # a provider that lists a page twice counts once, at its best rank
        for rank, source in enumerate(sources, 1):
            key = fusion_key(source.url)
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
    fused = tuple(replace(p.source, engines=tuple(p.engines)) for p in ordered)
    return fused if limit is None else fused[:limit]


def _merged(page: _Page, other: SearchSource, rank: int) -> SearchSource:
    """`page`'s source with what `other` says better: a longer snippet, fields it lacks."""
    mine = page.source
    rank_key = (not other.url.startswith("https://"), rank)
    url, title = (other.url, other.title or mine.title) if rank_key < page.best else (mine.url, mine.title)
    page.best = min(page.best, rank_key)
    snippets = [s for s in (mine.snippet, other.snippet) if s]
    return replace(
        mine,
        url=url,
        title=title or other.title,
        snippet=max(snippets, key=len) if snippets else None,
        published_date=mine.published_date or other.published_date,
        age_seconds=mine.age_seconds if mine.age_seconds is not None else other.age_seconds,
        author=mine.author or other.author,
        highlights=tuple(dict.fromkeys((*mine.highlights, *other.highlights))),
    )
