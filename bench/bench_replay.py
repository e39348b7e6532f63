"""What recording and replaying cost a search, in this process, without the network.

Run by hand: `python -m bench.bench_replay`. The transport answers at once with `bench._fake`'s
3.4 KB Tavily-like body (as `bench_in_process`). Sides, rounds interleaved, medians reported as
ratios to a plain search with the engine off:

- engine off: the search with no recording;
- recorded: the same, each answer also appended to a recording (a line of ~4 KB, one `write`);
- replayed: the same search answered from a recording (the key, the index, the response built
  back from its JSON);
- engine on, a hit: the cache's answer to the same search, for comparison.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from websearch import WebSearch
from websearch._core._clock import SystemClock
from websearch._state import MemoryStore

from ._fake import QUERY, pin
from ._rounds import medians
from .bench_in_process import Answering

SEARCHES = 1000  # per round
FEWER = 10  # the recorded side runs this many times fewer (each appends ~4 KB to a file)
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))


def client(config: str, **options: Any) -> WebSearch:
    env = {"WEBSEARCH_CONFIG_DIR": config}
    options.setdefault("engine", False)
    return WebSearch(env=env, config_dir=config, transport=Answering(), api_keys={"tavily": "tvly-bench"}, **options)


async def main() -> None:
    pin(0)
    with tempfile.TemporaryDirectory() as config:
        recording = Path(config, "session.jsonl")
        recorder = client(config, record=Path(config, "recorded.jsonl"))
        seed = client(config, record=recording)
        await seed.asearch(QUERY, provider="tavily")
        await seed.aclose()
        off = client(config)
        replayer = client(config, replay=recording)
        on = client(config, engine=True, store=MemoryStore(SystemClock()))
        sides: dict[str, Callable[[], Awaitable[Any]]] = {
            "engine off": lambda: off.asearch(QUERY, provider="tavily"),
            "recorded": lambda: recorder.asearch(QUERY, provider="tavily"),
            "replayed": lambda: replayer.asearch(QUERY, provider="tavily"),
            "engine on, a hit": lambda: on.asearch(QUERY, provider="tavily"),
        }
        rounds: dict[str, list[float]] = {name: [] for name in sides}
        for round_ in range(ROUNDS + 1):
            for name, search in sides.items():
                n = SEARCHES // FEWER if name == "recorded" else SEARCHES
                start = time.perf_counter()
                for _ in range(n):
                    response = await search()
                if round_:  # the first round warms up
                    rounds[name].append((time.perf_counter() - start) / n)
                assert response.ok, response.error
        for ws in (off, recorder, replayer, on):
            await ws.aclose()
    median = medians(rounds)
    base = median["engine off"]
    print(f"record and replay, medians of {ROUNDS} rounds of {SEARCHES} searches ({SEARCHES // FEWER} recorded)")
    for name, seconds in median.items():
        print(f"  {name:18s} {seconds * 1e6:7.1f} us a search   {seconds / base:5.2f}x engine off")


if __name__ == "__main__":
    asyncio.run(main())
