"""A loopback SearXNG-like upstream in its own process, serving one fixed ~3.4 KB JSON body."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from websearch.testing import FakeSearXNG, RecordedRequest, Reply
from websearch.testing.searxng import searxng_results_body


def body() -> bytes:
    data = searxng_results_body("rust async runtime comparison", 8)
    return json.dumps(data).encode()


class FixedFake(FakeSearXNG):
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
        url = proc.stdout.readline().strip()
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    fake = FixedFake().start()
    print(fake.base_url, flush=True)
    print(f"body: {len(body())} bytes", file=sys.stderr)
    while True:
        time.sleep(3600)
