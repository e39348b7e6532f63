"""Per-search overhead and throughput of `WebSearch.asearch` against bare aiohttp, same upstream.

Run by hand: `python -m bench.bench_overhead`. Both sides hit one loopback fake (its own process)
serving a ~3.4 KB Tavily-like JSON body (five results and an answer); the bare side reuses one
ClientSession, POSTs the body Tavily gets and decodes the JSON (as any client must); ours runs
the whole search (chain, request building, parsing into a typed response), twice: with the
engine off, and with the engine on over the memory store, every search a cache miss (a new query
each time: the cache lookup, the single-flight lease, the health and pacing checks and the cache
write all run). Rounds are interleaved and medians compared, so machine noise affects all alike;
the fake and the client are pinned to different cores. Targets: overhead ratio <= 1.15x (both);
500-in-flight throughput >= 80% of aiohttp's.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable

import aiohttp

from websearch import WebSearch
from websearch._clock import SystemClock
from websearch._state import MemoryStore

from ._fake import QUERY, pin, upstream

SEQUENTIAL = 1000
CONCURRENT = 500
BATCHES = 4  # bursts of CONCURRENT per round: a single 0.1 s burst is at the mercy of one VM hiccup
ROUNDS = 9


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


async def bare_concurrent(session: aiohttp.ClientSession, url: str, n: int, batches: int = 1) -> float:
    async def one() -> None:
        async with session.post(url, json=REQUEST, headers=HEADERS) as resp:
            await resp.json()

    start = time.perf_counter()
    for _ in range(batches):
        await asyncio.gather(*(one() for _ in range(n)))
    return n * batches / (time.perf_counter() - start)


async def ours_concurrent(ws: WebSearch, n: int, batches: int = 1) -> float:
    start = time.perf_counter()
    for _ in range(batches):
        results = await asyncio.gather(*(ws.asearch(query(ws), provider="tavily") for _ in range(n)))
        assert all(r.ok for r in results)
    return n * batches / (time.perf_counter() - start)


async def main() -> None:
    pin(0)
    with upstream() as base, tempfile.TemporaryDirectory() as config:
        env = {"WEBSEARCH_CONFIG_DIR": config, "TAVILY_API_KEY": "tvly-bench", "WEBSEARCH_TAVILY_BASE_URL": base}
        url = f"{base}/search"
        store = MemoryStore(SystemClock(), max_bytes=256 * 1024 * 1024)
        async with (
            aiohttp.ClientSession() as session,
            WebSearch(env=env, engine=False) as off,
            WebSearch(env=env, store=store) as on,
        ):
            await bare_sequential(session, url, 50)  # warm every pool
            await ours_sequential(off, 50)
            await ours_sequential(on, 50)

            async def bare_round() -> tuple[float, float]:
                return (
                    await bare_sequential(session, url, SEQUENTIAL),
                    await bare_concurrent(session, url, CONCURRENT, BATCHES),
                )

            def ours_round(ws: WebSearch) -> Callable[[], Awaitable[tuple[float, float]]]:
                async def run() -> tuple[float, float]:
                    return await ours_sequential(ws, SEQUENTIAL), await ours_concurrent(ws, CONCURRENT, BATCHES)

                return run

            sides: dict[str, list[tuple[float, float]]] = {"bare": [], "engine off": [], "engine on": []}
            runs = {"bare": bare_round, "engine off": ours_round(off), "engine on": ours_round(on)}
            for i in range(ROUNDS):  # rotate which side goes first, so drift favours none
                order = list(sides)[i % 3 :] + list(sides)[: i % 3]
                for name in order:
                    sides[name].append(await runs[name]())
    bare_t, bare_c = zip(*sides["bare"], strict=True)
    b, bc = statistics.median(bare_t), statistics.median(bare_c)
    print(f"bare aiohttp: {b * 1e6:5.0f} us per call, {bc:5.0f}/s with {CONCURRENT} in flight")
    for name in ("engine off", "engine on"):
        ours_t, ours_c = zip(*sides[name], strict=True)
        # A ratio per round (the sides measured back to back), then the median and spread of those.
        per_call = sorted(o / b for b, o in zip(bare_t, ours_t, strict=True))
        share = sorted(o / b for b, o in zip(bare_c, ours_c, strict=True))
        o, oc = statistics.median(ours_t), statistics.median(ours_c)
        print(
            f"asearch, {name}: {o * 1e6:5.0f} us per call, ratio median {statistics.median(per_call):.3f}x "
            f"(range {per_call[0]:.3f}-{per_call[-1]:.3f}; target <= 1.15x); {oc:5.0f}/s in flight, share median "
            f"{statistics.median(share):.0%} (range {share[0]:.0%}-{share[-1]:.0%}; target >= 80%)"
        )


if __name__ == "__main__":
    if sys.platform != "win32":
        sys.setswitchinterval(0.005)
    asyncio.run(main())
