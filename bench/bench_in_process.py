"""What a search costs in this process, without the network: the CPU the library itself adds.

Run by hand: `python -m bench.bench_in_process`. The transport answers every request at once,
in process, with the same ~3.4 KB Tavily-like body `bench_overhead` serves, and says it bounds
each request as the built-in transport does, so a search takes the path it takes in production
(its deadline cut into each request, no timer of its own). Sides, rounds interleaved, the median
and the best round of each reported:

- engine off: planning, the chain, parsing into a typed response, the deadline;
- engine on, cache off: the key, single-flight and the health and pacing checks on top;
- engine on, a miss: the cache lookup and the write behind the answer too (a new query each time);
- engine on, a hit: the same query again, served from the memory store;
- SQLite, a miss / a hit: the same two on the default store, a file in a temporary directory
  (a miss takes the flight's lease and writes the answer on the store's worker thread).

`bench_overhead` measures the same code against a bare aiohttp call over loopback, where each
microsecond here costs two to three: each network wait leaves the CPU's caches cold.

`python -m bench.bench_in_process --against REV` (e.g. 1a4c39a, 1 December) times the engine off
side by side with the package as it was at REV: each tree's `src` (REV's taken out with
`git archive` into a temporary directory) is imported in a worker process of its own, both run
the same searches in alternating rounds on the same core, and the medians are compared. Goal:
engine off <= 1.07x 1a4c39a.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from websearch import WebSearch
from websearch._core._clock import SystemClock
from websearch._state import MemoryStore, SqliteStore
from websearch.providers import BaseTransport, HttpRequest, HttpResponse

from ._fake import QUERY, body, pin
from ._rounds import interleaved, medians

SEARCHES = 2000  # per round
SLOWER = 10  # the SQLite sides run this many times fewer (a miss costs a few hops to the store's thread)
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "25"))
#: A worker for `--against`: the engine-off search of this bench, with only what every tree since
#: 1 December has (`WebSearch(env, config_dir, transport, api_keys)`; `engine=False` where it exists).
WORKER = """
import asyncio, inspect, os, sys, time
from websearch import WebSearch
import importlib

def first(name, *modules):  # where the tree keeps it: layered (_core), flat, or older still
    for module in modules:
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            pass
    return None

HttpResponse = first("HttpResponse", "websearch._core._wire", "websearch._wire", "websearch.wire")
os.sched_setaffinity(0, {0})
# a tree with BaseTransport checks a transport's seam: a bare one would go without a bound
BaseTransport = first("BaseTransport", "websearch._core._context", "websearch._context") or object

class Answering(BaseTransport):
    bounds_each_request = True
    timeout = 60.0
    def __init__(self, body):
        self._response = HttpResponse(200, {"content-type": "application/json"}, body)
    async def send(self, provider, request):
        return self._response
    async def aclose(self):
        pass

async def main(config, body_path, query):
    with open(body_path, "rb") as f:
        transport = Answering(f.read())
    options = {"engine": False} if "engine" in inspect.signature(WebSearch).parameters else {}
    ws = WebSearch(env={"WEBSEARCH_CONFIG_DIR": config}, config_dir=config, transport=transport,
                   api_keys={"tavily": "tvly-bench"}, **options)
    for line in sys.stdin:
        start = time.perf_counter()
        for _ in range(int(line)):
            response = await ws.asearch(query, provider="tavily")
        assert response.ok, response.error
        print((time.perf_counter() - start) / int(line), flush=True)

asyncio.run(main(*sys.argv[1:]))
"""


class Answering(BaseTransport):
    """A transport answering every request at once with `bench._fake`'s body. Not
    `websearch.testing.MockTransport`: that one keeps every call (memory growing through 200,000
    searches), re-checks each JSON body, bounds each request and copies each response, which
    would be measured too."""

    bounds_each_request = True  # as `Transport`: the chain cuts each request to the deadline
    timeout = 60.0

    def __init__(self) -> None:
        self._response = HttpResponse(200, {"content-type": "application/json"}, body())

    async def send(self, provider: str, request: HttpRequest) -> HttpResponse:
        return self._response

    async def aclose(self) -> None:
        """Nothing to close."""


def client(config: str, **engine: Any) -> WebSearch:
    env = {"WEBSEARCH_CONFIG_DIR": config}
    return WebSearch(env=env, config_dir=config, transport=Answering(), api_keys={"tavily": "tvly-bench"}, **engine)


async def main() -> None:
    pin(0)
    fresh = itertools.count()
    with tempfile.TemporaryDirectory() as config:
        off = client(config, engine=False)
        on = client(config, store=MemoryStore(SystemClock(), max_bytes=256 * 1024 * 1024))
        shared = client(config, store=SqliteStore(f"{config}/state.db", SystemClock(), 256 * 1024 * 1024))
        sides: dict[str, Callable[[], Awaitable[Any]]] = {
            "engine off": lambda: off.asearch(QUERY, provider="tavily"),
            "engine on, cache off": lambda: on.asearch(f"{QUERY} {next(fresh)}", provider="tavily", cache="off"),
            "engine on, a miss": lambda: on.asearch(f"{QUERY} {next(fresh)}", provider="tavily"),
            "engine on, a hit": lambda: on.asearch(QUERY, provider="tavily"),
            "SQLite, a miss": lambda: shared.asearch(f"{QUERY} {next(fresh)}", provider="tavily"),
            "SQLite, a hit": lambda: shared.asearch(QUERY, provider="tavily"),
        }
        rounds: dict[str, list[float]] = {name: [] for name in sides}
        for _ in range(ROUNDS):
            for name, search in sides.items():
                n = SEARCHES // SLOWER if name.startswith("SQLite") else SEARCHES
                start = time.perf_counter()
                for _ in range(n):
                    response = await search()
                rounds[name].append((time.perf_counter() - start) / n)
                assert response.ok, response.error
                await asyncio.sleep(0)  # what the write behind a miss waits for
        await off.aclose()
        await on.aclose()
        await shared.aclose()
    median = medians(rounds)
    base = median["engine off"]
    print(
        f"in process, medians of {ROUNDS} rounds of {SEARCHES} searches ({SEARCHES // SLOWER} on SQLite; "
        "a 3.4 KB Tavily-like body)"
    )
    for name, seconds in median.items():
        added = name not in ("engine off", "engine on, a hit", "SQLite, a hit")
        extra = f"  ({(seconds - base) * 1e6:+5.1f} us on the engine off)" if added else ""
        print(f"  {name:22s} {seconds * 1e6:6.1f} us a search (best {min(rounds[name]) * 1e6:6.1f}){extra}")


def tree_of(rev: str, into: str) -> str:
    """`src` of the repository at `rev`, written below `into`."""
    repo = Path(__file__).resolve().parent.parent
    archive = subprocess.run(["git", "-C", str(repo), "archive", rev, "src"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)
    return str(Path(into, "src"))


def one_round(worker: subprocess.Popen[str]) -> float:
    """Seconds a search in one round of `worker`'s."""
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.write(f"{SEARCHES}\n")
    worker.stdin.flush()
    return float(worker.stdout.readline())


def against(rev: str) -> None:
    """The engine off here and at `rev`, side by side: alternating rounds in two workers."""
    with tempfile.TemporaryDirectory() as scratch:
        Path(scratch, "body").write_bytes(body())
        trees = {"this tree": str(Path(__file__).resolve().parent.parent / "src"), rev: tree_of(rev, scratch)}
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        workers = {}
        for name, src in trees.items():
            config = tempfile.mkdtemp(dir=scratch)
            argv = [sys.executable, "-c", WORKER, config, str(Path(scratch, "body")), QUERY]
            workers[name] = subprocess.Popen(
                argv, env={**env, "PYTHONPATH": src}, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            )
        times = interleaved({name: functools.partial(one_round, worker) for name, worker in workers.items()}, ROUNDS)
        for worker in workers.values():
            assert worker.stdin is not None
            worker.stdin.close()
            worker.wait(10)
    median = medians(times)
    print(f"engine off, side by side with {rev}: medians of {ROUNDS} alternating rounds of {SEARCHES} searches")
    for name, seconds in median.items():
        print(
            f"  {name:22s} {seconds * 1e6:6.1f} us a search   {seconds / median[rev]:5.3f}x {rev}"
            f"   (best {min(times[name]) * 1e6:6.1f} us)"
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--against"]:
        against(sys.argv[2])
    else:
        asyncio.run(main())
