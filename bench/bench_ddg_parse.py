"""DuckDuckGo result-page parsing: ours (selectolax/Lexbor) against ddgs (lxml) and the spec's regex.

Run by hand: `python -m bench.bench_ddg_parse` (ddgs comes with the `bench` extra). The page is the
fake's realistic 30-result page; all three parse it in interleaved rounds and medians are
compared. Target: ours at least 3x faster than ddgs. The minor page faults per parse are printed
too: on this VM each costs about 3 us, and they are where lexbor's time went before the provider
kept its two most recent trees alive (see `_RECENT_TREES` in the provider).
"""

from __future__ import annotations

import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from websearch._providers.duckduckgo import parse_results
from websearch.testing.duckduckgo import results_page, sample_results

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from ddg_reference import parse_with_spec_regex

ROUNDS, PER_ROUND = 25, 100


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    for _ in range(PER_ROUND):
        fn()
    return (time.perf_counter() - start) / PER_ROUND


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
    try:
        from ddgs.engines.duckduckgo import Duckduckgo

        engine = Duckduckgo()
        contenders["ddgs (lxml)"] = lambda: engine.post_extract_results(engine.extract_results(page))
    except ImportError:
        print("ddgs is not installed (pip install -e '.[bench]'); comparing with the spec regex only")
    assert len(parse_results(raw, 30)) == 30
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(ROUNDS):
        for name, fn in contenders.items():
            times[name].append(timed(fn))
    faults = {name: faults_per_call(fn) for name, fn in contenders.items()}
    medians = {name: statistics.median(t) for name, t in times.items()}
    best = {name: min(t) for name, t in times.items()}
    ours, ours_best = medians["websearch (selectolax)"], best["websearch (selectolax)"]
    print(f"page: {len(raw) / 1024:.1f} KB, 30 results; median and best of {ROUNDS} interleaved rounds")
    for name, median in medians.items():
        print(
            f"{name:24} {median * 1e6:7.0f} us ({median / ours:5.2f}x ours)   best {best[name] * 1e6:7.0f} us "
            f"({best[name] / ours_best:5.2f}x ours)   {faults[name]:5.1f} page faults"
        )


if __name__ == "__main__":
    main()
