"""The engine's costs and gains, side by side in one run.

Run by hand: `python -m bench.bench_engine` (Redis rows need `redis-server` on PATH; without it
they are left out and said so). Against the loopback Tavily-like fake in its own process:

- a cache hit vs the upstream call it saves, per store (memory, SQLite, Redis): medians per
  search and the ratio (goal >= 50x faster), and the p50 of a SQLite hit (goal <= 1 ms);
- single-flight: N identical searches at once, upstream calls with the engine on and off;
- the provider-health check around one attempt (health before, pacing, health after) on SQLite:
  microseconds per attempt (goal <= 0.2 ms).

Per-search overhead with the engine on is in `bench.bench_overhead`.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from websearch import WebSearch
from websearch._core._clock import SystemClock
from websearch._state import MemoryStore, SqliteStore
from websearch._state._store import Store
from websearch.testing import FakeTavily, Reply
from websearch.testing.tavily import tavily_results_body

from ._fake import QUERY, pin, upstream

SEARCHES = 400
ROUNDS = 5
FLIGHT = 50
ATTEMPTS = 5000


@contextmanager
def redis_url() -> Iterator[str | None]:
    """A throwaway redis-server on a free loopback port, or None when it is not installed."""
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(500):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.01)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)


async def per_search(fn: Callable[[int], Awaitable[Any]], n: int) -> list[float]:
    """Seconds per call of `fn(i)`, one sample per call."""
    samples = []
    for i in range(n):
        start = time.perf_counter()
        await fn(i)
        samples.append(time.perf_counter() - start)
    return samples


async def cache_rows(env: dict[str, str], stores: dict[str, Store]) -> None:
    print(f"cache hit vs the upstream call ({SEARCHES} searches per round, {ROUNDS} rounds; medians)")
    for name, store in stores.items():
        async with WebSearch(env=env, store=store) as ws:
            await ws.asearch(f"{QUERY} warm", provider="tavily")
            await ws.asearch(f"{QUERY} warm", provider="tavily")
            misses: list[float] = []
            hits: list[float] = []
            for r in range(ROUNDS):

                async def miss(i: int, tag: str = f"{name} {r}") -> None:
                    assert (await ws.asearch(f"{QUERY} {tag} {i}", provider="tavily")).ok

                async def hit(i: int, tag: str = f"{name} {r}") -> None:
                    assert (await ws.asearch(f"{QUERY} {tag} {i}", provider="tavily")).cached

                misses += await per_search(miss, SEARCHES)  # upstream, then stored
                hits += await per_search(hit, SEARCHES)  # the same searches, served from the store
            m, h = statistics.median(misses), statistics.median(hits)
            p99 = sorted(hits)[int(len(hits) * 0.99)]
            print(
                f"  {name:<7} upstream {m * 1e6:7.0f} us   hit {h * 1e6:6.0f} us (p50; p99 {p99 * 1e6:5.0f} us)"
                f"   {m / h:6.1f}x faster (goal >= 50x)"
            )
            await ws.clear_cache()


async def single_flight_rows(config: str) -> None:
    with FakeTavily() as fake:
        fake.enqueue(*[Reply(200, tavily_results_body(QUERY, 5), delay=0.2)] * FLIGHT)
        env = {"WEBSEARCH_CONFIG_DIR": config, "TAVILY_API_KEY": "tvly-bench", **fake.env}
        print(f"single-flight: {FLIGHT} identical searches at once (upstream answers in 200 ms)")
        for label, kwargs in (("engine on ", {"store": MemoryStore(SystemClock())}), ("engine off", {"engine": False})):
            fake.requests.clear()
            async with WebSearch(env=env, **kwargs) as ws:
                start = time.perf_counter()
                responses = await asyncio.gather(*(ws.asearch(QUERY, provider="tavily") for _ in range(FLIGHT)))
                wall = time.perf_counter() - start
            assert all(r.ok for r in responses)
            print(f"  {label}: {len(fake.requests):2} upstream calls, {wall * 1e3:5.0f} ms wall")


async def health_row(env: dict[str, str], folder: Path) -> None:
    from websearch._core._budget import Budget
    from websearch._engine._engine import _Guards

    async with WebSearch(env=env, store=SqliteStore(folder / "health.db", SystemClock())) as ws:
        ctx = ws._context()
        info = ws.lineup.info("tavily")
        guards = _Guards(ws.engine, ws.lineup)
        budget = Budget.start(ws.clock, 30.0)
        await guards.before(info, ctx, budget)

        async def attempt(i: int) -> None:
            assert await guards.before(info, ctx, budget) is None
            await guards.after(info, ctx, None, None)

        samples = await per_search(attempt, ATTEMPTS)
    median, p99 = statistics.median(samples), sorted(samples)[int(ATTEMPTS * 0.99)]
    print(
        f"health check per attempt on SQLite (health, pacing, record): median {median * 1e6:.0f} us,"
        f" p99 {p99 * 1e6:.0f} us (goal <= 200 us)"
    )


async def main() -> None:
    pin(0)
    with upstream() as base, tempfile.TemporaryDirectory() as config, redis_url() as redis:
        env = {"WEBSEARCH_CONFIG_DIR": config, "TAVILY_API_KEY": "tvly-bench", "WEBSEARCH_TAVILY_BASE_URL": base}
        folder = Path(config)
        stores: dict[str, Store] = {
            "memory": MemoryStore(SystemClock()),
            "sqlite": SqliteStore(folder / "state.db", SystemClock()),
        }
        if redis is not None:
            from websearch._state.redis import RedisStore

            stores["redis"] = RedisStore(redis)
        else:
            print("redis-server is not installed: the Redis row is left out")
        await cache_rows(env, stores)
        await single_flight_rows(config)
        await health_row(env, folder)


if __name__ == "__main__":
    asyncio.run(main())
