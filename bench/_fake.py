"""A loopback Tavily-like upstream in its own process, serving one fixed ~3.4 KB JSON body.

The issue's reference measurements used "a 3.4 KB Tavily-like body"; this is five results with
realistic snippet lengths and an answer, as Tavily's /search returns them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from websearch.testing import FakeTavily, RecordedRequest, Reply
from websearch.testing.tavily import tavily_results_body

QUERY = "rust async runtime comparison"


def body() -> bytes:
    data = tavily_results_body(QUERY, 5)
    for i, result in enumerate(data["results"]):
        result["content"] = (
            f"{result['content']} Tokio, async-std and smol take different approaches to scheduling, I/O drivers "
            f"and timers; this section (part {i}) compares their work-stealing executors, blocking pools and "
            "the ecosystem around each runtime, with benchmarks for latency and throughput under load, and notes "
            "on cancellation safety, structured concurrency and the migration paths between them."
        )
    return json.dumps(data).encode()


class FixedFake(FakeTavily):
    """Answers every request with the same bytes and keeps no request log (no memory growth)."""

    def __init__(self) -> None:
        super().__init__()
        self._reply = Reply(200, body(), content_type="application/json")

    def default_reply(self, request: RecordedRequest) -> Reply:
        self.requests.clear()
        return self._reply


@contextmanager
def upstream() -> Iterator[str]:
    """Start the fake in a child process; yield its base URL."""
    proc = subprocess.Popen([sys.executable, "-m", "bench._fake"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(10)


def pin(cpu: int) -> None:
    """Keep a process on one core so the fake and the client do not trade places (less noise)."""
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {cpu})


if __name__ == "__main__":
    pin(1)
    fake = FixedFake().start()
    print(fake.base_url, flush=True)
    print(f"body: {len(body())} bytes", file=sys.stderr)
    while True:
        time.sleep(3600)
