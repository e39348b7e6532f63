"""Near-duplicate passages: the same text on mirrors, syndicated copies and quoting pages.

Two passages are near-duplicates when the Jaccard similarity of their word 5-gram shingles
(tokens as the ranker sees them, so CJK text shingles by characters) is at least 0.8: the same
paragraph with a changed date, a byline or a few words of boilerplate still matches, two
passages that share a sentence do not. A passage shorter than five tokens is one shingle, so it
matches only its exact copy.

Exact Jaccard on every pair would be quadratic; a prefix filter finds the candidate pairs
instead, exactly (no MinHash, no false negatives): order each passage's shingles one global way;
two sets with Jaccard >= t must share one of the first |s| - ceil(t * |s|) + 1 shingles of each.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from ._rank import tokenize

__all__ = ["DUPLICATE_THRESHOLD", "SHINGLE_WORDS", "jaccard", "near_duplicates", "shingles"]

#: Jaccard similarity of shingle sets from which two passages are one.
DUPLICATE_THRESHOLD: Final = 0.8
SHINGLE_WORDS: Final = 5


def shingles(text: str, size: int = SHINGLE_WORDS) -> frozenset[int]:
    """Hashes of the word `size`-grams of `text` (one for the whole text when it is shorter)."""
    tokens = tokenize(text)
    if len(tokens) <= size:
        return frozenset((hash(tuple(tokens)),)) if tokens else frozenset()
    return frozenset(map(hash, zip(*(tokens[i:] for i in range(size)), strict=False)))


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    """|a & b| / |a | b| (0 for two empty sets)."""
    if not a and not b:
        return 0.0
    common = len(a & b)
    return common / (len(a) + len(b) - common)


#: Cosine of unit embeddings: a reworded copy scored 0.96 with WordLlama, passages on one topic 0.5.
MEANING_THRESHOLD: Final = 0.9


def same_meaning(
    vectors: Sequence[Sequence[float]], order: Sequence[int], *, threshold: float = MEANING_THRESHOLD
) -> dict[int, int]:
    """Which passages say the same as a better-placed one (cosine of their unit embeddings at
    least `threshold`): {dropped: kept}, as `near_duplicates` gives them. Needs numpy, which the
    embedding models that give `vectors` bring (all pairs at once: hundreds of passages)."""
    import numpy

    if not vectors:
        return {}
    cosines = numpy.asarray(vectors, dtype=numpy.float32)
    cosines = cosines @ cosines.T
    kept: list[int] = []
    dropped: dict[int, int] = {}
    for i in order:
        if kept:
            row = cosines[i, kept]
            best = int(row.argmax())
            if row[best] >= threshold:
                dropped[i] = kept[best]
                continue
        kept.append(i)
    return dropped


def near_duplicates(
    texts: Sequence[str], order: Sequence[int], *, threshold: float = DUPLICATE_THRESHOLD
) -> dict[int, int]:
    """Which of `texts` are near-duplicates of which: {dropped: kept}, indices into `texts`.
    `order` lists the indices to consider, best first; the first of a group of copies is kept,
    and a later one is dropped as a copy of the first kept passage it matches."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError("threshold must be in (0, 1]")
    position = {index: rank for rank, index in enumerate(order)}
    dropped: dict[int, int] = {}
    kept_sets: dict[int, frozenset[int]] = {}
    by_prefix: dict[int, list[int]] = {}
    for i in order:
        mine = shingles(texts[i])
        if not mine:
            continue
        ranked = sorted(mine)
        # (the epsilon: a float product a hair over a whole number must not shorten the prefix)
        prefix = ranked[: len(ranked) - math.ceil(threshold * len(ranked) - 1e-9) + 1]
        seen: set[int] = set()
        match: int | None = None
        for shingle in prefix:
            for j in by_prefix.get(shingle, ()):
                if j in seen:
                    continue
                seen.add(j)
                theirs = kept_sets[j]
                small, large = sorted((len(mine), len(theirs)))
                if small >= threshold * large and jaccard(mine, theirs) >= threshold:
                    # the best-placed kept copy is the one reported, wherever the prefix met it
                    match = j if match is None or position[j] < position[match] else match
        if match is not None:
            dropped[i] = match
            continue
        kept_sets[i] = mine
        for shingle in prefix:
            by_prefix.setdefault(shingle, []).append(i)
    return dropped
