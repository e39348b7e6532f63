"""`research`'s pure half over 5 pages of 100 KB: splitting, ranking, dedupe and assembly, in ms.

Run by hand: `python -m bench.bench_rank`. The pages are real article text: the `articleBody`s of
/work/shared/benchmarks/article-extraction/ground-truth.json (when present) concatenated, a
different slice per page, each cut to 100 KB; without that file, text made from a fixed seed.
One page is a mirror of another (for the dedupe to find). Each stage is timed alone (the median
and the fastest of 9 runs after one not kept), then the whole `assemble`. Goal: ranking 5 x 100 KB <= 30 ms.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from websearch._reading._assemble import assemble
from websearch._reading._dedupe import near_duplicates
from websearch._reading._passages import PageText, split_passages
from websearch._reading._rank import bm25_scores

GROUND_TRUTH = Path("/work/shared/benchmarks/article-extraction/ground-truth.json")
PAGE_CHARS = 100_000
QUERY = "how do streaming services change the price of games and movies"
ROUNDS = 9


def bodies() -> list[str]:
    """Article texts: the benchmark's ground truth, or paragraphs of seeded words."""
    if GROUND_TRUTH.is_file():
        entries = json.loads(GROUND_TRUTH.read_text(encoding="utf-8"))
        texts = [str(e.get("articleBody") or "") for e in entries.values()]
        return [t for t in texts if t.strip()]
    rng = random.Random(7)
    words = ["the", "price", "of", "games", "movies", "streaming", "service", "market", "player", "studio"]
    words += [f"w{i}" for i in range(2000)]
    return [
        "\n\n".join(
            " ".join(rng.choice(words) for _ in range(rng.randint(20, 120))).capitalize() + "." for _ in range(20)
        )
        for _ in range(60)
    ]


def pages() -> list[PageText]:
    """Five 100 KB pages; the last mirrors the first."""
    texts = bodies()
    made: list[PageText] = []
    i = 0  # each page its own articles (they come round again only when the file has too few)
    for n in range(4):
        chunk: list[str] = []
        size = 0
        while size < PAGE_CHARS:
            body = texts[i % len(texts)]
            chunk.append(f"## Article {i}\n\n{body}")
            size += len(body) + 16
            i += 1
        made.append(PageText(f"https://site{n}.example/a", f"Page {n}", "\n\n".join(chunk)[:PAGE_CHARS], None, n))
    made.append(PageText("https://mirror.example/a", "Mirror", made[0].text, "2026-01-01", 4))
    return made


def timed(work: Callable[[], object]) -> tuple[float, float]:
    """The median and the fastest of ROUNDS runs, in ms (the fastest is what a busy machine hides least)."""
    times = []
    for round_ in range(ROUNDS + 1):
        start = time.perf_counter()
        work()
        if round_:
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), min(times)


def main() -> None:
    given = pages()
    passages = [p for i, page in enumerate(given) for p in split_passages(i, page)]
    texts = [p.text for p in passages]
    scores = bm25_scores(QUERY, texts)
    relevant = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: -scores[i])
    print(f"{len(given)} pages, {sum(len(p.text) for p in given)} chars, {len(passages)} passages")
    split_ms = timed(lambda: [split_passages(i, page) for i, page in enumerate(given)])
    rank_ms = timed(lambda: bm25_scores(QUERY, texts))
    dedupe_ms = timed(lambda: near_duplicates(texts, relevant))
    whole_ms = timed(lambda: assemble(QUERY, given))
    tokens_ms = timed(lambda: assemble(QUERY, given, budget_chars=None, budget_tokens=3000))
    context = assemble(QUERY, given)
    print("                                   median  fastest")
    print("split                            {:7.1f} {:7.1f} ms".format(*split_ms))
    print("rank (BM25, all passages)        {:7.1f} {:7.1f} ms   goal <= 30 ms".format(*rank_ms))
    print("dedupe ({:3d} relevant passages)   {:7.1f} {:7.1f} ms".format(len(relevant), *dedupe_ms))
    print("assemble, all of it, 12000 chars {:7.1f} {:7.1f} ms".format(*whole_ms))
    print("assemble, all of it, 3000 tokens {:7.1f} {:7.1f} ms".format(*tokens_ms))
    skipped = [use.reason for use in context.skipped]
    print(f"context: {context.chars} chars, {len(context.sources)} sources, skipped {skipped}")


if __name__ == "__main__":
    main()
