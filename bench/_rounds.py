"""Interleaved rounds, the first one a warm-up: what the start-up and side-by-side benchmarks share."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping


def interleaved(sides: Mapping[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Each side's measurements over `rounds` rounds, every side once a round in turn, after one
    round not kept (caches, bytecode, pools warmed alike)."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    for round_ in range(rounds + 1):
        for name, measure in sides.items():
            took = measure()
            if round_:
                times[name].append(took)
    return times


def medians(times: Mapping[str, list[float]]) -> dict[str, float]:
    return {name: statistics.median(t) for name, t in times.items()}
