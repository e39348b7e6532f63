"""Fusion of 6 lists of 20 results: ours against ddgs's merge of the same results, in one run.

Run by hand: `python -m bench.bench_fusion` (ddgs comes with the `bench` extra). ddgs's merge is
what its `DDGS.text` does with its engines' results: `ResultsAggregator` (dedup on the exact URL,
the longest body kept, ordered by how many engines returned it) then `SimpleFilterRanker`; its
results are built beforehand, so the URL clean-up ddgs does on building them is not counted, while
ours (`fusion_key`) is. The fusion before its speed-up (tests/fusion_reference.py) runs alongside.
Goal: ours <= ddgs's merge.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from bench._parse import compare
from websearch import SearchSource
from websearch._engine._fusion import fuse

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from fusion_reference import reference_fuse

LIMIT = 10


def result_lists() -> list[tuple[str, list[SearchSource]]]:
    """Six engines' 20 results each, with a tracking parameter on every URL."""
    return [
        (
            f"engine{j}",
            [
                SearchSource(
                    f"Result {i} of engine {j}",
                    f"https://www.site{(i * 7 + j) % 40}.example.com/page/{i % 13}?utm_source=x&id={i}",
                    f"snippet {i} " * (5 + j),
                    "2026-11-01" if i % 3 == 0 else None,
                )
                for i in range(20)
            ],
        )
        for j in range(6)
    ]


def add_ddgs_merge(contenders: dict[str, Callable[[], object]], lists: list[tuple[str, list[SearchSource]]]) -> None:
    """Add ddgs's merge of `lists` as a contender, when ddgs is installed."""
    try:
        from ddgs.results import ResultsAggregator, TextResult
        from ddgs.similarity import SimpleFilterRanker
    except ImportError:
        print("ddgs is not installed (pip install -e '.[bench]'); comparing with the fusion before only")
        return
    results = [[TextResult(title=s.title, href=s.url, body=s.snippet or "") for s in sources] for _, sources in lists]

    def merge() -> list[dict[str, str]]:
        aggregator: ResultsAggregator[TextResult] = ResultsAggregator({"href", "image", "url", "embed_url"})
        for engine_results in results:
            aggregator.extend(engine_results)
        return SimpleFilterRanker().rank(aggregator.extract_dicts(), "bench query")[:LIMIT]

    contenders["ddgs's merge"] = merge


def main() -> None:
    lists = result_lists()
    assert fuse(lists, LIMIT) == reference_fuse(lists, LIMIT)
    contenders: dict[str, Callable[[], object]] = {
        "websearch fuse": lambda: fuse(lists, LIMIT),
        "fusion before": lambda: reference_fuse(lists, LIMIT),
    }
    add_ddgs_merge(contenders, lists)
    compare(contenders, ours="websearch fuse", header="fusion of 6 x 20 results (goal: <= ddgs's merge)", rounds=41)


if __name__ == "__main__":
    main()
