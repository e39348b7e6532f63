"""The harness the `bench_*_parse` benchmarks share, so that each of them holds only its engine's parts.

Every parser benchmark times a few contenders (ours first, then ddgs's engine and hand-written parsers)
in interleaved rounds and prints the median and best time of each against ours; `compare` does that
and `add_ddgs` adds ddgs's engine as a contender when ddgs is installed (the `bench` extra).
"""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Callable, Mapping, Sized
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ddgs.base import BaseSearchEngine


def timed(fn: Callable[[], object], per_round: int) -> float:
    """Seconds per call of `fn`, over `per_round` calls."""
    start = time.perf_counter()
    for _ in range(per_round):
        fn()
    return (time.perf_counter() - start) / per_round


def compare(
    contenders: Mapping[str, Callable[[], object]],
    *,
    ours: str,
    header: str,
    rounds: int = 25,
    per_round: int = 100,
    name_width: int = 24,
    time_format: str = "7.0f",
    indent: str = "",
    per_round_in_header: bool = False,
    extra: Callable[[Callable[[], object]], str] | None = None,
) -> dict[str, float]:
    """Time `contenders` in `rounds` interleaved rounds of `per_round` calls each and print `header`
    (with the rounds) and one row per contender: median and best, each also as a multiple of `ours`'s.
    `extra`, given a contender, makes the text of a last column; it runs after the rounds. Returns the
    medians in seconds."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            times[name].append(timed(fn, per_round))
    tails = {name: extra(fn) if extra else "" for name, fn in contenders.items()}
    medians = {name: statistics.median(t) for name, t in times.items()}
    best = {name: min(t) for name, t in times.items()}
    ours_median, ours_best = medians[ours], best[ours]
    of_per_round = f" of {per_round}" if per_round_in_header else ""
    print(f"{header}; median and best of {rounds} interleaved rounds{of_per_round}")
    for name, median in medians.items():
        print(
            f"{indent}{name:{name_width}} {median * 1e6:{time_format}} us ({median / ours_median:5.2f}x ours)   "
            f"best {best[name] * 1e6:{time_format}} us ({best[name] / ours_best:5.2f}x ours){tails[name]}"
        )
    return medians


def result_count(fn: Callable[[], object]) -> str:
    """An `extra` column for `compare`: how many results the contender finds."""
    results = fn()
    assert isinstance(results, Sized)
    return f"   {len(results):2} results"


def add_ddgs(
    contenders: dict[str, Callable[[], object]], engine: str, page: str, *, instead: str, pre_process: bool = True
) -> Callable[[], list[Any]] | None:
    """Add ddgs's engine (class `engine.capitalize()` in `ddgs.engines.<engine>`) as the contender
    "ddgs (lxml)", parsing `page`, and return its parse; without ddgs, say that the comparison is with
    `instead` only and return None. `pre_process=False` bypasses the engine's `pre_process_html`."""
    try:
        module = importlib.import_module(f"ddgs.engines.{engine}")
    except ImportError:
        print(f"ddgs is not installed (pip install -e '.[bench]'); comparing with {instead} only")
        return None
    ddgs: BaseSearchEngine[Any] = getattr(module, engine.capitalize())()
    if not pre_process:
        ddgs.pre_process_html = lambda html_text: html_text  # type: ignore[method-assign]

    def parse() -> list[Any]:
        return ddgs.post_extract_results(ddgs.extract_results(page))

    contenders["ddgs (lxml)"] = parse
    return parse
