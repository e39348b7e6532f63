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
from typing import Final

from .._core._types import EngineRank, SearchSource

__all__ = ["RRF_K", "fuse", "fusion_key"]

RRF_K: Final = 60
_DEFAULT_PORTS: Final = {"http": ":80", "https": ":443"}
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
    """The URL as fusion compares it (see the module docstring). http and https name one page,
    so the scheme is left out of the key (the shown URL keeps it); a URL that is not http(s)
    is its own key. `str.partition`, not urllib or a regex: fusion keys every result of every
    engine, and this is most of what fusion costs."""
    head, sep, rest = url.strip().partition("://")
    port = _DEFAULT_PORTS.get(head.lower()) if sep else None
    if port is None:
        return url
    rest, _, query = rest.partition("#")[0].partition("?")
    netloc, slash, path = rest.partition("/")
    netloc = netloc.lower().rpartition("@")[2]  # credentials name no page
    key = netloc.removesuffix(port).removeprefix("www.") + (slash + path).rstrip("/")
    if query:
        kept = []
        for param in query.split("&"):
            name = param.partition("=")[0].lower()
            if param and name not in _TRACKING and not name.startswith("utm_"):
                kept.append(param)
        if kept:
            kept.sort()
            return f"{key}?{'&'.join(kept)}"
    return key


_Hit = tuple[int, int, SearchSource]  # (list index, rank, source): one engine's listing of a page


def fuse(lists: Sequence[tuple[str, Sequence[SearchSource]]], limit: int | None = None) -> tuple[SearchSource, ...]:
    """One list from `lists` of (provider, its sources in rank order); at most `limit`.

    Pages are grouped first and merged last, only those shown."""
    pages: dict[str, list[_Hit]] = {}
    for index, (_, sources) in enumerate(lists):
        for rank, source in enumerate(sources, 1):
            key = fusion_key(source.url)
            hits = pages.get(key)
            if hits is None:
                pages[key] = [(index, rank, source)]
            elif hits[-1][0] != index:  # a provider that lists a page twice counts once, at its best rank
                hits.append((index, rank, source))
    ordered = sorted(pages.values(), key=_order)
    if limit is not None:
        ordered = ordered[:limit]
    return tuple(_shown(hits, lists) for hits in ordered)


def _order(hits: list[_Hit]) -> tuple[int, float, int, int]:
    """Agreement first, then the fused score (summed in listing order), then where the page first
    appeared (rank, list index)."""
    score = 0.0
    for _, rank, _ in hits:
        score += 1.0 / (RRF_K + rank)
    index, rank, _ = hits[0]
    return -len(hits), -score, rank, index


def _shown(hits: list[_Hit], lists: Sequence[tuple[str, Sequence[SearchSource]]]) -> SearchSource:
    """The page `hits` list as one source: its listings merged, in order, with its engines (built
    directly: `dataclasses.replace` costs several times more)."""
    _, rank, source = hits[0]
    best = (not source.url.startswith("https://"), rank)  # (not https, rank) of the shown URL
    for _, rank, other in hits[1:]:
        source, best = _merged(source, best, other, rank)
    engines = tuple(EngineRank(lists[index][0], rank) for index, rank, _ in hits)
    return SearchSource(
        source.title,
        source.url,
        source.snippet,
        source.published_date,
        source.age_seconds,
        source.author,
        source.highlights,
        engines,
    )


def _merged(
    mine: SearchSource, best: tuple[bool, int], other: SearchSource, rank: int
) -> tuple[SearchSource, tuple[bool, int]]:
    """`mine` with what `other` says better (a longer snippet, fields it lacks), and the best URL's rank key."""
    rank_key = (not other.url.startswith("https://"), rank)
    url, title = (other.url, other.title or mine.title) if rank_key < best else (mine.url, mine.title)
    snippet = mine.snippet if len(mine.snippet or "") >= len(other.snippet or "") else other.snippet
    highlights = tuple(dict.fromkeys((*mine.highlights, *other.highlights))) if other.highlights else mine.highlights
    merged = SearchSource(
        title or other.title,
        url,
        snippet or None,
        mine.published_date or other.published_date,
        mine.age_seconds if mine.age_seconds is not None else other.age_seconds,
        mine.author or other.author,
        highlights,
    )
    return merged, min(best, rank_key)
