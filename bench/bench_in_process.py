"""What a search costs in this process, without the network: the CPU the library itself adds.

Run by hand: `python -m bench.bench_in_process`. The transport answers every request at once,
in process, with the same ~3.4 KB Tavily-like body `bench_overhead` serves, and says it bounds
each request as the built-in transport does, so a search takes the path it takes in production
(its deadline cut into each request, no timer of its own). Sides, rounds interleaved, the best
round of each reported (the least disturbed by the rest of the machine):

- engine off: planning, the chain, parsing into a typed response, the deadline;
- engine on, cache off: the key, single-flight and the health and pacing checks on top;
- engine on, a miss: the cache lookup and the write behind the answer too (a new query each time);
- engine on, a hit: the same query again, served from the memory store;
- SQLite, a miss / a hit: the same two on the default store, a file in a temporary directory
  (a miss takes the flight's lease and writes the answer on the store's worker thread).

`bench_overhead` measures the same code against a bare aiohttp call over loopback, where each
microsecond here costs two to three: each network wait leaves the CPU's caches cold.
"""

from __future__ import annotations

import asyncio
import itertools
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

from websearch import HttpRequest, HttpResponse, WebSearch
from websearch._clock import SystemClock
from websearch._state import MemoryStore, SqliteStore

from ._fake import QUERY, body, pin

SEARCHES = 2000  # per round
SLOWER = 10  # the SQLite sides run this many times fewer (a miss costs a few hops to the store's thread)
ROUNDS = 25


class Answering:
    """A transport answering every request at once with `bench._fake`'s body. Not
    `websearch.testing.MockTransport`: that one keeps every call (memory growing through 200,000
    searches), re-checks each JSON body and copies each response, which would be measured too."""

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
    return WebSearch(env=env, config_dir=config, transport=Answering(), api_keys={"tavily": "tvly-bench"}, **engine)  # type: ignore[arg-type]


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
        best = dict.fromkeys(sides, float("inf"))
        for _ in range(ROUNDS):
            for name, search in sides.items():
                n = SEARCHES // SLOWER if name.startswith("SQLite") else SEARCHES
                start = time.perf_counter()
                for _ in range(n):
                    response = await search()
                best[name] = min(best[name], (time.perf_counter() - start) / n)
                assert response.ok, response.error
                await asyncio.sleep(0)  # what the write behind a miss waits for
        await off.aclose()
        await on.aclose()
        await shared.aclose()
    base = best["engine off"]
    print(f"in process, best of {ROUNDS} rounds of {SEARCHES} searches (a 3.4 KB Tavily-like body)")
    for name, seconds in best.items():
        added = name not in ("engine off", "engine on, a hit", "SQLite, a hit")
        extra = f"  ({(seconds - base) * 1e6:+5.1f} us on the engine off)" if added else ""
        print(f"  {name:22s} {seconds * 1e6:6.1f} us a search{extra}")


if __name__ == "__main__":
    asyncio.run(main())
