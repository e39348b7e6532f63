"""DuckDuckGo result-page parsing: ours (selectolax/Lexbor) against ddgs (lxml) and the spec's regex.

Run by hand: `python -m bench.bench_ddg_parse` (ddgs comes with the `bench` extra). The page is the
fake's realistic 30-result page; all three parse it in interleaved rounds and medians are
compared. Target: ours at least 3x faster than ddgs. The minor page faults per parse are printed
too: on this VM each costs about 3 us, and they are where lexbor's time went before the provider
kept its two most recent trees alive (see `_RECENT_TREES` in the provider).
"""

from __future__ import annotations

import resource
import sys
from collections.abc import Callable
from pathlib import Path

from bench._parse import add_ddgs, compare
from websearch._providers.duckduckgo import parse_results
from websearch.testing.duckduckgo import results_page, sample_results

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from ddg_reference import parse_with_spec_regex

PER_ROUND = 100


def faults_per_call(fn: Callable[[], object]) -> float:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(PER_ROUND):
        fn()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / PER_ROUND


def main() -> None:
    page = results_page("rust async book", sample_results("rust async book", 30))
    raw = page.encode()
    contenders: dict[str, Callable[[], object]] = {
        "websearch (selectolax)": lambda: parse_results(raw, 30),
        "spec regex": lambda: parse_with_spec_regex(page, 30),
    }
    add_ddgs(contenders, "duckduckgo", page, instead="the spec regex")
    assert len(parse_results(raw, 30)) == 30
    compare(
        contenders,
        ours="websearch (selectolax)",
        header=f"page: {len(raw) / 1024:.1f} KB, 30 results",
        per_round=PER_ROUND,
        extra=lambda fn: f"   {faults_per_call(fn):5.1f} page faults",
    )


if __name__ == "__main__":
    main()
