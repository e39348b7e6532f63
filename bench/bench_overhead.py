"""Per-search overhead and throughput of `WebSearch.asearch` against bare aiohttp, same upstream.

Run by hand: `python -m bench.bench_overhead`. Both sides hit one loopback fake (its own process)
serving a ~3.4 KB Tavily-like JSON body (five results and an answer); the bare side reuses one
ClientSession, POSTs the body Tavily gets and decodes the JSON (as any client must); ours runs
the whole search (chain, request building, parsing into a typed response). Rounds are
interleaved and medians compared, so machine noise affects both alike; the fake and the client
are pinned to different cores. Targets: overhead ratio <= 1.15x; 500-in-flight throughput >= 80% of aiohttp's.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time

import aiohttp

from websearch import WebSearch

from ._fake import QUERY, pin, upstream

SEQUENTIAL = 1000
CONCURRENT = 500
ROUNDS = 7


REQUEST = {"query": QUERY, "search_depth": "basic", "max_results": 5, "include_answer": "advanced",
           "include_raw_content": False}  # fmt: skip
HEADERS = {"Authorization": "Bearer tvly-bench", "Content-Type": "application/json"}


async def bare_sequential(session: aiohttp.ClientSession, url: str, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        async with session.post(url, json=REQUEST, headers=HEADERS) as resp:
            await resp.json()
    return (time.perf_counter() - start) / n


async def ours_sequential(ws: WebSearch, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        response = await ws.asearch(QUERY, provider="tavily")
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
    results = await asyncio.gather(*(ws.asearch(QUERY, provider="tavily") for _ in range(n)))
    assert all(r.ok for r in results)
    return n / (time.perf_counter() - start)


async def main() -> None:
    pin(0)
    with upstream() as base, tempfile.TemporaryDirectory() as config:
        env = {"WEBSEARCH_CONFIG_DIR": config, "TAVILY_API_KEY": "tvly-bench", "WEBSEARCH_TAVILY_BASE_URL": base}
        url = f"{base}/search"
        async with aiohttp.ClientSession() as session, WebSearch(env=env) as ws:
            await bare_sequential(session, url, 50)  # warm both pools
            await ours_sequential(ws, 50)
            bare_t, ours_t, bare_c, ours_c = [], [], [], []
            for _ in range(ROUNDS):
                bare_t.append(await bare_sequential(session, url, SEQUENTIAL))
                ours_t.append(await ours_sequential(ws, SEQUENTIAL))
                bare_c.append(await bare_concurrent(session, url, CONCURRENT))
                ours_c.append(await ours_concurrent(ws, CONCURRENT))
    b, o = statistics.median(bare_t), statistics.median(ours_t)
    bc, oc = statistics.median(bare_c), statistics.median(ours_c)
    print(
        f"per call: bare aiohttp {b * 1e6:7.0f} us   asearch {o * 1e6:7.0f} us   ratio {o / b:.3f}x (target <= 1.15x)"
    )
    print(f"{CONCURRENT} in flight: bare aiohttp {bc:7.0f}/s   asearch {oc:7.0f}/s   "
          f"{oc / bc:.0%} of aiohttp (target >= 80%)")  # fmt: skip


if __name__ == "__main__":
    if sys.platform != "win32":
        sys.setswitchinterval(0.005)
    asyncio.run(main())
