"""Which passages answer the question: BM25 of our own, an optional embedding reranker, and a
small boost for pages that declare a recent date.

BM25 is enough for picking passages out of a handful of pages a search already chose, costs no
download and runs in milliseconds (bench/bench_rank.py). Tokens are lowercase runs of word
characters, except CJK ideographs, kana and hangul, which count one character a token (those
scripts write no spaces, and a character is the unit a query and a page share most reliably).
English stop words are dropped from the query. The embedding reranker (WordLlama, the `rerank`
extra) ships its weights in its wheel and loads them on first use, never on import.
"""

from __future__ import annotations

import importlib
import math
import re
import threading
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Final, Protocol, runtime_checkable

from .._core._dates import parse_date

__all__ = [
    "BM25_B",
    "BM25_K1",
    "RECENCY_HALF_LIFE_DAYS",
    "RECENCY_MAX_BOOST",
    "STOP_WORDS",
    "BM25Reranker",
    "Reranker",
    "WordLlamaReranker",
    "bm25_scores",
    "query_terms",
    "recency_boosts",
    "tokenize",
]

BM25_K1: Final = 1.2
BM25_B: Final = 0.75

_CJK: Final = "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
#: One CJK character, or a run of the other word characters.
_TOKEN: Final = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")

#: Words too common in English questions to tell passages apart; dropped from the query only.
STOP_WORDS: Final = frozenset(
    (
        *("a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how", "i"),
        *("in", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "what", "when"),
        *("where", "which", "who", "why", "will", "with"),
    )
)


_WORDS: Final = re.compile(r"\w+")
_ANY_CJK: Final = re.compile(f"[{_CJK}]")


def tokenize(text: str) -> list[str]:
    """`text`'s tokens: lowercase word runs, each CJK ideograph, kana or hangul on its own."""
    return _tokens(text.lower())


#: ASCII word characters kept, every other byte a space: an ASCII text's tokens split on spaces.
_ASCII_WORDS: Final = bytes(c if chr(c).isalnum() or c == ord("_") else ord(" ") for c in range(128)) + b" " * 128


def _count(lowered: str) -> int:
    """How many tokens `lowered` has (what len(_tokens(lowered)) is, faster for ASCII text)."""
    if lowered.isascii():
        return len(lowered.encode("ascii").translate(_ASCII_WORDS).split())
    return len(_tokens(lowered))


def _tokens(lowered: str) -> list[str]:
    # a text with no CJK character splits with the plain pattern, a third faster
    if lowered.isascii() or _ANY_CJK.search(lowered) is None:
        return _WORDS.findall(lowered)
    return _TOKEN.findall(lowered)


def query_terms(query: str) -> list[str]:
    """The distinct tokens of `query` less the stop words, in their first order."""
    return list(dict.fromkeys(t for t in tokenize(query) if t not in STOP_WORDS))


def bm25_scores(query: str, passages: Sequence[str]) -> list[float]:
    """Okapi BM25 of each passage for `query` (k1 1.2, b 0.75, idf ln(1 + (N - df + .5)/(df + .5)),
    which is never negative), statistics over `passages` alone; each distinct query term once."""
    terms = query_terms(query)
    if not terms or not passages:
        return [0.0] * len(passages)
    counts: list[dict[str, int]] = []
    lengths: list[int] = []
    df: Counter[str] = Counter()
    for text in passages:
        lowered = text.lower()
        found: dict[str, int] = {}
        # a term's token is in the text only if its characters are: the cheap test first
        if any(term in lowered for term in terms):
            tokens = _tokens(lowered)
            lengths.append(len(tokens))
            for term in terms:
                if n := tokens.count(term):
                    found[term] = n
            df.update(found.keys())
        else:
            lengths.append(_count(lowered))
        counts.append(found)
    n = len(passages)
    average = (sum(lengths) / n) or 1.0
    idf = {t: math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms if df[t]}
    scores: list[float] = []
    for found, length in zip(counts, lengths, strict=True):
        if not found:
            scores.append(0.0)
            continue
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * length / average)
        scores.append(sum(idf[t] * tf * (BM25_K1 + 1.0) / (tf + norm) for t, tf in found.items()))
    return scores


class Reranker(Protocol):
    """Scores passages for a query, higher more relevant; a passage scored 0 or less is taken as
    not relevant. One score per passage, in the passages' order."""

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


@runtime_checkable
class Embeds(Protocol):
    """A reranker that can also give each passage's meaning as a unit vector: near-duplicates
    that share few words (a reworded mirror) are then found by meaning too (`_dedupe`)."""

    def embed(self, passages: Sequence[str]) -> list[list[float]]: ...


class BM25Reranker:
    """The default reranker: `bm25_scores`."""

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """BM25 of each passage for `query`."""
        return bm25_scores(query, passages)

    def __repr__(self) -> str:
        return "BM25Reranker()"


#: The passages WordLlama re-ranks: BM25's best, then the first ones in order up to this many.
#: Embedding takes about 0.55 ms a passage here: all 715 passages of five 100 KB pages took 0.4 s.
RERANK_TOP: Final = 48


class WordLlamaReranker:
    """Cosine similarity of WordLlama embeddings (the `rerank` extra), over BM25's best
    `RERANK_TOP` passages (topped up with the first passages when fewer match the query's words,
    so a passage in other words still has its chance); the rest score 0, not relevant. The
    model, about 16 MB in the wheel, loads on the first `score` (about a second), from the wheel
    only: it never downloads. Raises ImportError on first use when wordllama is not installed."""

    def __init__(self, config: str = "l2_supercat", dim: int = 256) -> None:
        self._config = config
        self._dim = dim
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                wordllama = importlib.import_module("wordllama")  # untyped: Any

                # the wheel holds the tokenizer under tokenizers/, which is where the loader looks
                # for it in a cache directory: the package's own folder is that directory
                home = Path(str(wordllama.__file__)).parent
                self._model = wordllama.WordLlama.load(
                    self._config, cache_dir=home, dim=self._dim, disable_download=True
                )
            return self._model

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Similarity of each passage to `query`, in -1..1."""
        if not passages:
            return []
        words = bm25_scores(query, passages)
        matched = sorted((i for i, s in enumerate(words) if s > 0), key=lambda i: (-words[i], i))[:RERANK_TOP]
        chosen = set(matched)
        top = matched + [i for i in range(len(passages)) if i not in chosen][: RERANK_TOP - len(matched)]
        vectors = self.embed([*(passages[i] for i in top), query])
        question = vectors.pop()
        scores = [0.0] * len(passages)
        for i, vector in zip(top, vectors, strict=True):
            scores[i] = float(sum(a * b for a, b in zip(vector, question, strict=True)))
        return scores

    def embed(self, passages: Sequence[str]) -> list[list[float]]:
        """Each passage's embedding, normalised to unit length."""
        if not passages:
            return []
        vectors = self._load().embed(list(passages), norm=True)
        return [[float(x) for x in row] for row in vectors.tolist()]

    def __repr__(self) -> str:
        return f"WordLlamaReranker(config={self._config!r}, dim={self._dim})"


#: The most a declared date multiplies a page's passage scores by: the newest page gets 1 + this.
RECENCY_MAX_BOOST: Final = 0.1
#: Each this many days older than the newest declared date halves the boost.
RECENCY_HALF_LIFE_DAYS: Final = 365.0


def recency_boosts(published: Sequence[str | None]) -> list[float]:
    """A score multiplier per page from the dates pages declare, measured from the newest declared
    date (no clock is read): the newest gets 1.1, a year older 1.05, two years 1.025. A page that
    declares no date, or one that does not parse, gets 1.0. Small on purpose: it orders pages
    that are about equally relevant, it does not lift an off-topic page over a relevant one."""
    dates: list[datetime | None] = [parse_date(p) for p in published]
    known = [d for d in dates if d is not None]
    if not known:
        return [1.0] * len(published)
    newest = max(known)
    boosts: list[float] = []
    for when in dates:
        if when is None:
            boosts.append(1.0)
            continue
        days = (newest - when).total_seconds() / 86400.0
        boosts.append(1.0 + RECENCY_MAX_BOOST * 0.5 ** (days / RECENCY_HALF_LIFE_DAYS))
    return boosts
