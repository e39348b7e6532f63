"""`websearch serve`'s own cost: `POST /v1/search` at 100 and 500 concurrent against the same
searches through the library in-process, on one loopback Tavily-like fake; and the memory of a
replica, idle and under load. Ratios in one run; never asserted in tests.

Run by hand: `python -m bench.bench_serve` (needs the serve extra). The fake runs in its own
process on core 1 (`bench._fake`); the server runs on core 0; the load generator (aiohttp, in
this process) shares core 1 with the fake while the server is measured, and the library
in-process run has core 0 to itself, like the server. The engine is off on both sides
(`WEBSEARCH_ENGINE=off`: every search goes upstream), so the difference is the HTTP front
(uvicorn, Starlette, the gates, JSON, the access log) and nothing else.

SearXNG itself is not measured side by side: it is not installable here. SearXNG does not
publish itself to PyPI (the `searxng` name there is an unrelated MCP server, and `searx` is searx
0.17 of 2020, the project SearXNG forked from; Debian too packages only searx), and this machine
has no internet to fetch SearXNG's source or container image; so a `/search?format=json` run of a
real SearXNG over the same single fake engine could not be made.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

from websearch import WebSearch

from ._fake import QUERY, pin, upstream

TOKEN = "bench-token-4f1c9a7e2b6d"
REQUESTS = 3000  # per row
LEVELS = (100, 500)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def rss_kb(pid: int) -> tuple[int, int]:
    """(resident now, peak resident) of a process, in KB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def summary(label: str, wall: float, latencies: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)
    row = {
        "rps": len(latencies) / wall,
        "p50": statistics.median(ordered) * 1000,
        "p99": ordered[int(len(ordered) * 0.99) - 1] * 1000,
    }
    print(f"  {label:<28} {row['rps']:8.0f} req/s   p50 {row['p50']:7.1f} ms   p99 {row['p99']:7.1f} ms")
    return row


async def drive(concurrency: int, call: Callable[[int], Awaitable[None]]) -> tuple[float, list[float]]:
    """REQUESTS calls, `concurrency` at a time: wall seconds and each call's latency."""
    latencies: list[float] = []
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            start = time.perf_counter()
            await call(i)
            latencies.append(time.perf_counter() - start)

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(REQUESTS)))
    return time.perf_counter() - start, latencies


async def library_rows(env: dict[str, str]) -> dict[int, dict[str, float]]:
    pin(0)
    rows = {}
    async with WebSearch(env=env, providers=["tavily"], engine=False) as ws:
        await ws.asearch(QUERY, provider="tavily")  # warm: session, provider module

        async def call(i: int) -> None:
            assert (await ws.asearch(f"{QUERY} {i}", provider="tavily", limit=5)).ok

        for level in LEVELS:
            wall, latencies = await drive(level, call)
            rows[level] = summary(f"library, {level} concurrent", wall, latencies)
    return rows


async def server_rows(url: str, pid: int) -> tuple[dict[int, dict[str, float]], int]:
    pin(1)
    rows = {}
    peak = 0
    connector = aiohttp.TCPConnector(limit=max(LEVELS), force_close=False)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with aiohttp.ClientSession(url, connector=connector, headers=headers) as session:

        async def call(i: int) -> None:
            async with session.post("/v1/search", json={"query": f"{QUERY} {i}", "limit": 5}) as reply:
                body: Any = await reply.json()
                assert reply.status == 200 and body["error"] is None, body

        await call(-1)

        async def sample() -> None:
            nonlocal peak
            while True:
                peak = max(peak, rss_kb(pid)[0])
                await asyncio.sleep(0.05)

        for level in LEVELS:
            sampler = asyncio.create_task(sample())
            wall, latencies = await drive(level, call)
            sampler.cancel()
            rows[level] = summary(f"websearch serve, {level} concurrent", wall, latencies)
    return rows, peak


def start_server(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    command = [sys.executable, "-m", "websearch", "serve", "--port", str(port)]
    preexec = (lambda: os.sched_setaffinity(0, {0})) if hasattr(os, "sched_setaffinity") else None
    proc = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL, preexec_fn=preexec)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, url
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("websearch serve did not start") from None
            time.sleep(0.05)


async def main() -> None:
    with upstream() as base, tempfile.TemporaryDirectory() as config:
        env = {"WEBSEARCH_CONFIG_DIR": config, "TAVILY_API_KEY": "tvly-bench", "WEBSEARCH_TAVILY_BASE_URL": base}
        print(f"POST /v1/search vs the library in-process, {REQUESTS} searches per row, engine off, one fake upstream")
        library = await library_rows(env)
        server_env = {
            **os.environ,
            **env,
            "WEBSEARCH_PROVIDERS": "tavily",
            "WEBSEARCH_ENGINE": "off",
            "WEBSEARCH_SERVE_TOKENS": TOKEN,
        }
        proc, url = start_server(server_env)
        try:
            await asyncio.sleep(1.0)
            idle, _ = rss_kb(proc.pid)
            served, loaded = await server_rows(url, proc.pid)
            _, peak = rss_kb(proc.pid)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
        print("the server's own cost (library / server)")
        for level in LEVELS:
            lib, srv = library[level], served[level]
            print(
                f"  {level} concurrent: throughput {lib['rps'] / srv['rps']:4.1f}x higher in-process,"
                f" p50 {srv['p50'] / lib['p50']:4.1f}x, p99 {srv['p99'] / lib['p99']:4.1f}x longer through the server"
            )
        print(
            f"memory per replica: idle {idle / 1024:.0f} MB RSS, under load {loaded / 1024:.0f} MB"
            f" (peak {peak / 1024:.0f} MB)"
        )


if __name__ == "__main__":
    asyncio.run(main())
