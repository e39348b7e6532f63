"""Per-search overhead and throughput of `WebSearch.asearch` against bare aiohttp, same upstream.

Run by hand: `python -m bench.bench_overhead`. Both sides hit one loopback fake (its own process)
serving a ~3.4 KB Tavily-like JSON body (five results and an answer); the bare side reuses one
ClientSession, POSTs the body Tavily gets and decodes the JSON (as any client must); ours runs
the whole search (chain, request building, parsing into a typed response) on a client made as
users make it (`WebSearch()`, its key in the process environment), twice: with the
engine off, and with the engine on over the memory store, every search a cache miss (a new query
each time: the cache lookup, the single-flight lease, the health and pacing checks and the cache
write all run). The sides take turns in short batches (20 searches, or one burst of 500 in
flight), hundreds of times, rotating which goes first; a ratio is taken per turn (the sides
measured back to back) and the median of those is reported with its quartiles. On a noisy VM
one long round per side is at the mercy of whatever else the host runs in those seconds; short
turns share the noise out. The fake and the client are pinned to different cores. Targets:
overhead ratio <= 1.15x (both); 500-in-flight throughput >= 80% of aiohttp's.

Beside each side's time per call is the CPU this process spent on it (the fake's is its own):
what a search costs on top of aiohttp is that difference. It is two to three times what the same
code costs in a tight loop in process (`MockTransport`): each call waits on the network, and
what ran meanwhile (aiohttp, the kernel) leaves the caches cold for the next.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable

import aiohttp

from websearch import WebSearch
from websearch._core._clock import SystemClock
from websearch._state import MemoryStore

from ._fake import QUERY, pin, upstream

SEQUENTIAL = 20  # searches one after another per turn
SEQUENTIAL_TURNS = 300
CONCURRENT = 500  # searches in flight at once per turn
CONCURRENT_TURNS = 40


REQUEST = {
    "query": QUERY,
    "search_depth": "basic",
    "max_results": 5,
    "include_answer": "advanced",
    "include_raw_content": False,
}
HEADERS = {"Authorization": "Bearer tvly-bench", "Content-Type": "application/json"}


async def bare_sequential(session: aiohttp.ClientSession, url: str, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        async with session.post(url, json=REQUEST, headers=HEADERS) as resp:
            await resp.json()
    return (time.perf_counter() - start) / n


_FRESH = itertools.count()


def query(ws: WebSearch) -> str:
    """The bench query; a new one each time on the engine, so every search is a cache miss."""
    return f"{QUERY} {next(_FRESH)}" if ws.engine.enabled else QUERY


async def ours_sequential(ws: WebSearch, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        response = await ws.asearch(query(ws), provider="tavily")
        assert response.ok, response.error
    return (time.perf_counter() - start) / n


async def bare_concurrent(session: aiohttp.ClientSession, url: str, n: int) -> float:
    async def one() -> None:
        async with session.post(url, json=REQUEST, headers=HEADERS) as resp:
            await resp.json()

    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return n / (time.perf_counter() - start)


async def ours_concurrent(ws: WebSearch, n: int) -> float:
    start = time.perf_counter()
    results = await asyncio.gather(*(ws.asearch(query(ws), provider="tavily") for _ in range(n)))
    assert all(r.ok for r in results)
    return n / (time.perf_counter() - start)


async def main() -> None:
    pin(0)
    with upstream() as base, tempfile.TemporaryDirectory() as config:
        # In the process environment, as a user's keys are: `WebSearch()` reads os.environ.
        os.environ.update(
            {"WEBSEARCH_CONFIG_DIR": config, "TAVILY_API_KEY": "tvly-bench", "WEBSEARCH_TAVILY_BASE_URL": base}
        )
        url = f"{base}/search"
        store = MemoryStore(SystemClock(), max_bytes=256 * 1024 * 1024)
        async with (
            aiohttp.ClientSession() as session,
            WebSearch(engine=False) as off,
            WebSearch(store=store) as on,
        ):
            await bare_sequential(session, url, 50)  # warm every pool
            await ours_sequential(off, 50)
            await ours_sequential(on, 50)

            sides = ("bare", "engine off", "engine on")
            sequential: dict[str, Callable[[], Awaitable[float]]] = {
                "bare": lambda: bare_sequential(session, url, SEQUENTIAL),
                "engine off": lambda: ours_sequential(off, SEQUENTIAL),
                "engine on": lambda: ours_sequential(on, SEQUENTIAL),
            }
            concurrent: dict[str, Callable[[], Awaitable[float]]] = {
                "bare": lambda: bare_concurrent(session, url, CONCURRENT),
                "engine off": lambda: ours_concurrent(off, CONCURRENT),
                "engine on": lambda: ours_concurrent(on, CONCURRENT),
            }
            per_call, cpu = await turns(sequential, sides, SEQUENTIAL_TURNS)
            per_second, _ = await turns(concurrent, sides, CONCURRENT_TURNS)
    b, bc = statistics.median(per_call["bare"]), statistics.median(per_second["bare"])
    b_cpu = statistics.median(cpu["bare"]) / SEQUENTIAL
    print(f"bare aiohttp: {b * 1e6:5.0f} us per call ({b_cpu * 1e6:3.0f} us CPU), {bc:5.0f}/s, {CONCURRENT} in flight")
    for name in sides[1:]:
        ratio = quartiles([ours / bare for ours, bare in zip(per_call[name], per_call["bare"], strict=True)])
        share = quartiles([ours / bare for ours, bare in zip(per_second[name], per_second["bare"], strict=True)])
        o, oc = statistics.median(per_call[name]), statistics.median(per_second[name])
        o_cpu = statistics.median(cpu[name]) / SEQUENTIAL
        print(
            f"asearch, {name}: {o * 1e6:5.0f} us per call ({o_cpu * 1e6:3.0f} us CPU, +{(o_cpu - b_cpu) * 1e6:.0f}), "
            f"ratio median {ratio[1]:.3f}x (quartiles {ratio[0]:.3f}-{ratio[2]:.3f}; target <= 1.15x); {oc:5.0f}/s in "
            f"flight, share median {share[1]:.0%} (quartiles {share[0]:.0%}-{share[2]:.0%}; target >= 80%)"
        )


async def turns(
    runs: dict[str, Callable[[], Awaitable[float]]], sides: tuple[str, ...], count: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """`count` turns of every side, rotating which goes first, so drift favours none: what each
    turn returned, and the CPU seconds this process spent in it."""
    measured: dict[str, list[float]] = {name: [] for name in sides}
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    for i in range(count):
        for name in sides[i % len(sides) :] + sides[: i % len(sides)]:
            start = time.process_time()
            measured[name].append(await runs[name]())
            cpu[name].append(time.process_time() - start)
    return measured, cpu


def quartiles(values: list[float]) -> tuple[float, float, float]:
    low, median, high = statistics.quantiles(values, n=4)
    return low, median, high


if __name__ == "__main__":
    if sys.platform != "win32":
        sys.setswitchinterval(0.005)
    asyncio.run(main())
