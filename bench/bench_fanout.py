"""Fan-out wall time, side by side in one run (fusion's cost: `bench.bench_fusion`).

Run by hand: `python -m bench.bench_fanout`.

- `public` over the six keyless engines' loopback fakes, answering after 50, 100, 200, 400 and
  800 ms and one never answering: the fan-out's wall time against its soft deadline (goal: at
  most the soft deadline + 50 ms) and against asking the five that answer one after another.
"""

from __future__ import annotations

import asyncio
import dataclasses
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from websearch import WebSearch
from websearch.testing import FAKES, RecordedRequest, Reply

ENGINES = ("bing", "yahoo", "startpage", "mojeek", "google", "ecosia")
DELAYS = (0.05, 0.1, 0.2, 0.4, 0.8, None)  # None: never answers
SOFT = (1.0, 5.0)
ROUNDS = 3


def delayed(fake: Any, delay: float | None) -> None:
    """Make `fake` answer its realistic page after `delay` seconds (or never)."""
    realistic = fake.default_reply

    def reply(request: RecordedRequest) -> Reply:
        answer: Reply = realistic(request)
        return dataclasses.replace(answer, hang=True) if delay is None else dataclasses.replace(answer, delay=delay)

    fake.default_reply = reply


async def fanout_rows() -> None:
    with ExitStack() as stack, tempfile.TemporaryDirectory() as config:
        env: dict[str, str] = {"WEBSEARCH_CONFIG_DIR": config}
        for engine, delay in zip(ENGINES, DELAYS, strict=True):
            fake = stack.enter_context(FAKES[engine]())
            delayed(fake, delay)
            env.update(fake.env)
        print("public over six fakes (50, 100, 200, 400, 800 ms, one hung); medians of", ROUNDS, "rounds")
        for soft in SOFT:
            settings = f"[fanout]\nsoft_deadline = {soft}\n[search]\ndeadline = 30\n"
            await asyncio.to_thread(Path(config, "settings.toml").write_text, settings)
            async with WebSearch(env=env, providers=list(ENGINES), engine=False) as ws:
                walls = []
                for i in range(ROUNDS):
                    start = time.perf_counter()
                    response = await ws.asearch(f"bench fanout {soft} {i}", provider="public")
                    walls.append(time.perf_counter() - start)
                    assert response.ok, response.error
                answered = sum(1 for a in response.attempts if a.error is None)
            wall = statistics.median(walls)
            print(
                f"  soft deadline {soft:g} s: wall {wall * 1e3:6.0f} ms, over the soft deadline by "
                f"{(wall - soft) * 1e3:+5.0f} ms (goal <= +50 ms); {answered} of 6 engines answered"
            )
        async with WebSearch(env=env, providers=list(ENGINES), engine=False) as ws:
            start = time.perf_counter()
            for engine in ENGINES[:5]:
                assert (await ws.asearch("bench sequential", provider=engine)).ok
            sequential = time.perf_counter() - start
        print(
            f"  the five that answer, one after another: {sequential * 1e3:6.0f} ms "
            "(the hung one would add the whole deadline)"
        )


if __name__ == "__main__":
    asyncio.run(fanout_rows())
