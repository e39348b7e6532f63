"""DuckDuckGo parse cost inside real searches: the provider's retained trees on and off.

Run by hand: `python -m bench.bench_ddg_search`. Each mode runs in fresh interpreters, alternately:
300 searches through `WebSearch.asearch` (engine off: no cache, no pacing) against the loopback
fake, timing only the provider's `parse` in thread CPU time (which counts the kernel's page-fault work and not the wait
for the network), and counting minor page faults per parse. "off" sets the retention limit to
-1, so every tree is freed as soon as the parse returns, as it would be without `_RECENT_TREES`.
"""

from __future__ import annotations

import asyncio
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

PROCESSES, SEARCHES, WARMUP = 3, 300, 50


def child(mode: str) -> None:
    from websearch import WebSearch
    from websearch._providers import duckduckgo
    from websearch.testing import FakeDuckDuckGo

    if mode == "off":
        duckduckgo._RETAIN_MAX = -1  # type: ignore[misc]  # a benchmark switch, not an API
    cpu: list[float] = []
    faults: list[int] = []
    parse = duckduckgo.DuckDuckGo.parse

    def timed(self: duckduckgo.DuckDuckGo, *args: Any) -> Any:
        before, start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.thread_time()
        try:
            return parse(self, *args)
        finally:
            cpu.append(time.thread_time() - start)
            faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)

    duckduckgo.DuckDuckGo.parse = timed  # type: ignore[method-assign]

    async def searches(env: dict[str, str], config: str) -> None:
        async with WebSearch(env=env, config_dir=config, engine=False) as client:
            for i in range(SEARCHES):
                await client.asearch(f"rust async book {i % 7}", provider="duckduckgo", limit=20)

    with FakeDuckDuckGo() as fake, tempfile.TemporaryDirectory() as config:
        asyncio.run(searches(dict(fake.env), config))
    print(json.dumps({"cpu": statistics.median(cpu[WARMUP:]), "faults": statistics.mean(faults[WARMUP:])}))


def main() -> None:
    runs: dict[str, list[dict[str, float]]] = {"on": [], "off": []}
    for _ in range(PROCESSES):
        for mode in runs:
            argv = [sys.executable, "-m", "bench.bench_ddg_search", "--child", mode]
            out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
            runs[mode].append(json.loads(out))
    print(f"{SEARCHES} searches per process against the fake, {PROCESSES} processes per mode")
    for mode, results in runs.items():
        cpu = [r["cpu"] * 1e6 for r in results]
        faults = [r["faults"] for r in results]
        print(
            f"retention {mode:3}: parse CPU medians {', '.join(f'{c:.0f}' for c in cpu)} us; "
            f"page faults per parse {', '.join(f'{f:.1f}' for f in faults)}"
        )
    on, off = (statistics.median(r["cpu"] for r in runs[m]) for m in ("on", "off"))
    print(f"off / on: {off / on:.2f}x")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2])
    else:
        main()
