"""The research bench's web in a process of its own: a site serving five articles at five paths
after a delay (each the same, or spread: the i-th of five after (i + 1) / 5 of it), and a
Brave-like search answering every query with those five pages.

In the bench's own process (as the test fakes run, in a thread) the servers' work, some 10 ms of
CPU a research to send five 100 KB pages, would hold the GIL beside ours and be counted as our
own work; the web a user reads is never in their process.

    python -m bench._web FOLDER DELAY [spread]   serves FOLDER/page0.html ... page4.html; prints
                                                 `SITE_PORT BRAVE_BASE_URL`, then serves
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from websearch.testing import FakeBrave, FakeSite, RecordedRequest, Reply

HOST = "site.test"
PAGES = tuple(f"/page{i}" for i in range(5))


class _FixedBrave(FakeBrave):
    """Answers every search with the five pages (and keeps no request log)."""

    def __init__(self, site_port: int) -> None:
        super().__init__()
        results = [
            {"title": f"Page {i}", "url": f"http://{HOST}:{site_port}{path}", "description": "asyncio"}
            for i, path in enumerate(PAGES)
        ]
        self._reply = Reply(200, {"type": "search", "web": {"type": "search", "results": results}})

    def default_reply(self, request: RecordedRequest) -> Reply:
        self.requests.clear()
        return self._reply


@contextmanager
def web(pages: list[str], delay: float, folder: Path, *, spread: bool = False) -> Iterator[tuple[int, str]]:
    """Serve the five `pages` at `PAGES` after `delay` seconds (`spread`: the i-th after (i + 1) / 5
    of it) from a child process; yield the site's port and the search's base URL."""
    for path, html in zip(PAGES, pages, strict=True):
        (folder / f"{path.lstrip('/')}.html").write_text(html, encoding="utf-8")
    argv = [sys.executable, "-m", "bench._web", str(folder), str(delay), *(["spread"] if spread else [])]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port, base_url = proc.stdout.readline().split()
        yield int(port), base_url
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    folder, delay, spread = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3:] == ["spread"]
    pages = {
        path: Reply(
            200,
            (folder / f"{path.lstrip('/')}.html").read_text(encoding="utf-8"),
            content_type="text/html; charset=utf-8",
            delay=delay * (i + 1) / 5 if spread else delay,
        )
        for i, path in enumerate(PAGES)
    }
    site = FakeSite(pages, hosts=(HOST,)).start()
    brave = _FixedBrave(site.port).start()
    print(site.port, brave.base_url, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
