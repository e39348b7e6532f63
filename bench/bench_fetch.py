"""`fetch` and `research` against what a user would write by hand, on a loopback web site.

Run by hand: `python -m bench.bench_fetch [--rounds N]`. Printed, as ratios of medians measured
in interleaved rounds of one run (never asserted):

- fetch + extract of a ~100 KB article (`WebSearch.afetch`, cache off: the address checks,
  robots.txt, the host's pace, the thread hop, our extractor) against a bare aiohttp GET on one
  session + `trafilatura.extract` with its defaults. Goal: <= 1.1x.
- a cached fetch against the upstream fetch. Goal: >= 50x faster.
- `research` over 5 pages of ~100 KB (the five largest articles under 120 KB, each its own),
  each answering after `--delay` seconds, all read at once:
  its wall time less the slowest page's delay is our own work. Goal: <= 50 ms. The pages and
  the search are served from a process of their own (`_web`), as the web is. Measured with
  BM25 and with the default reranker, then (for comparison, not the goal's case) with the
  pages' answers spread over the delay, as they come from the web.

The article is the largest page of the article-extraction benchmark under 120 KB when that is
beside the checkout (`../shared/benchmarks/article-extraction`), else a generated one.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import trafilatura

from websearch import WebSearch
from websearch._core._clock import SystemClock
from websearch.state import MemoryStore
from websearch.testing import FakeResolver, FakeSite, Reply
from websearch.testing._site import TEST_HOST_RATE

from ._web import HOST, web

ROOT = Path(__file__).resolve().parent.parent
PAGES = (ROOT.parent / "shared" / "benchmarks" / "article-extraction" / "html").resolve()


def articles(n: int) -> list[str]:
    """The `n` largest real articles of at most 120 KB (about 100 KB each), or generated ones."""
    sizes = []
    if PAGES.is_dir():
        for path in PAGES.glob("*.html.gz"):
            html = gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")
            if len(html) <= 120_000:
                sizes.append((len(html), html))
    if len(sizes) >= n:
        return [html for _, html in sorted(sizes, reverse=True)[:n]]
    paragraph = "<p>{} lets one thread wait on many sockets at once; </p>"
    return [
        f"<html><head><title>Generated {i}</title></head><body><article>"
        + "".join(paragraph.format(f"Asyncio {i}.{j}") for j in range(1400))
        + "</article></body></html>"
        for i in range(n)
    ]


def article() -> str:
    """A real article of about 100 KB, or a generated one."""
    return articles(1)[0]


PATHS = ("/article", *(f"/page{i}" for i in range(5)))


def site(html: str, delay: float = 0.0) -> FakeSite:
    """The article at each of `PATHS`, after `delay` seconds."""
    reply = Reply(200, html, content_type="text/html; charset=utf-8", delay=delay)
    return FakeSite(dict.fromkeys(PATHS, reply))


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await call()
    return time.perf_counter() - started


async def rounds(sides: dict[str, Callable[[], Awaitable[object]]], n: int) -> dict[str, float]:
    """Median seconds of each side over `n` interleaved rounds, after one not kept."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    for i in range(n + 1):
        for name, call in sides.items():
            took = await timed(call)
            if i:
                times[name].append(took)
    return {name: statistics.median(t) for name, t in times.items()}


def client(
    config: Path, fake: FakeSite, env: dict[str, str] | None = None, providers: list[str] | None = None
) -> WebSearch:
    fake.write_settings(config)
    return WebSearch(
        env={"WEBSEARCH_CONFIG_DIR": str(config), **(env or {})},
        resolver=fake.resolver,
        store=MemoryStore(SystemClock()),
        providers=providers or [],
    )


async def fetch_sides(html: str, n: int) -> None:
    with site(html) as fake, tempfile.TemporaryDirectory() as tmp:
        url = fake.url("/article")
        direct = fake.url("/article", host="127.0.0.1")
        async with client(Path(tmp), fake) as ws, aiohttp.ClientSession() as session:

            async def bare() -> None:
                async with session.get(direct) as resp:
                    body = await resp.text()
                trafilatura.extract(body)

            async def ours() -> None:
                page = await ws.afetch(url, cache="off")
                assert page.ok, page.error

            async def cached() -> None:
                page = await ws.afetch(url)
                assert page.cached

            await ws.afetch(url)  # the cache's entry
            took = await rounds({"bare": bare, "ours": ours, "cached": cached}, n)
    print(f"article: {len(html) / 1024:.0f} KB")
    print(f"bare aiohttp GET + trafilatura: {took['bare'] * 1000:.1f} ms")
    slower = took["ours"] / took["bare"]
    print(f"afetch, cache off:              {took['ours'] * 1000:.1f} ms  ({slower:.2f}x; goal <= 1.1x)")
    ratio = took["ours"] / took["cached"]
    print(f"afetch, cached:                 {took['cached'] * 1000:.2f} ms  ({ratio:.0f}x faster; goal >= 50x)")


async def research_side(pages: list[str], n: int, delay: float, reranker: str, *, spread: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp, web(pages, delay, Path(tmp), spread=spread) as (port, brave_url):
        config = Path(tmp) / "config"
        config.mkdir()
        (config / "settings.toml").write_text(
            f'[fetch]\nallow_hosts = ["{HOST}"]\nhost_rate = "{TEST_HOST_RATE}"\n[research]\nreranker = "{reranker}"\n',
            encoding="utf-8",
        )
        env = {"WEBSEARCH_CONFIG_DIR": str(config), "WEBSEARCH_BRAVE_BASE_URL": brave_url, "BRAVE_API_KEY": "BSA-bench"}
        resolver = FakeResolver({HOST: ["127.0.0.1"]})
        store = MemoryStore(SystemClock())
        async with WebSearch(env=env, resolver=resolver, store=store, providers=["brave"]) as ws:

            async def research() -> None:
                found = await ws.aresearch("asyncio sockets", search={"provider": "brave", "cache": "off"})
                assert found.ok and len(found.sources) >= 1, found.error
                assert all(f":{port}/" in s.url for s in found.sources)
                await ws.engine.state().clear("page:")  # every round reads the pages

            took = await rounds({"research": research}, n)
    own = took["research"] - delay
    when = f"between {delay * 200:.0f} and {delay * 1000:.0f} ms" if spread else f"after {delay * 1000:.0f} ms"
    print(f"research ({reranker}) over 5 pages answering {when}: {took['research'] * 1000:.0f} ms")
    print(f"  our own work beyond the slowest page: {own * 1000:.0f} ms (goal <= 50 ms)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--delay", type=float, default=0.3, help="seconds each research page takes to answer")
    args = parser.parse_args()
    pages = articles(5)
    asyncio.run(fetch_sides(pages[0], args.rounds))
    for reranker in ("bm25", "auto"):  # auto: WordLlama when the rerank extra is installed
        asyncio.run(research_side(pages, max(3, args.rounds // 3), args.delay, reranker))
    # as pages come on the web, one after another: those in early are read while the rest come
    asyncio.run(research_side(pages, max(3, args.rounds // 3), args.delay, "bm25", spread=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
