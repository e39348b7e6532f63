"""Mojeek result-page parsing: ours (selectolax/Lexbor) against ddgs's Mojeek engine (lxml XPath)
and a naive lxml parse.

Run by hand: `python -m bench.bench_mojeek_parse` (ddgs comes with the `bench` extra). Two pages:
the fake's realistic 10-result page and the real saved page (tests/pages/mojeek/, 39 KB after
Prettier). All contenders parse each page in interleaved rounds and medians are compared; each
contender's result count is printed, since ddgs keeps every `li` (the `p.more` links' lists have
none, but a result without a snippet or with an empty title is kept). Target: ours at least 2x
faster than ddgs.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

from lxml import html as lxml_html

from websearch._providers.mojeek import parse_results
from websearch.testing.mojeek import results_page, sample_results

ROUNDS, PER_ROUND = 25, 200
REAL = Path(__file__).resolve().parent.parent / "tests" / "pages" / "mojeek" / "javascript_tutorial.html"


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    for _ in range(PER_ROUND):
        fn()
    return (time.perf_counter() - start) / PER_ROUND


def naive_lxml(page: bytes) -> list[tuple[str, str, str]]:
    """The obvious lxml version: parse everything, one XPath for the blocks, three per block."""
    tree = lxml_html.fromstring(page)
    found = []
    for li in tree.xpath('//ul[@class="results-standard"]/li'):
        hrefs = li.xpath(".//h2/a/@href")
        title = " ".join("".join(li.xpath(".//h2//text()")).split())
        snippet = " ".join("".join(li.xpath('.//p[@class="s"]//text()')).split())
        if hrefs and title:
            found.append((title, hrefs[0], snippet))
    return found


def bench(label: str, page: bytes) -> None:
    text = page.decode()
    contenders: dict[str, Callable[[], object]] = {
        "websearch (selectolax)": lambda: parse_results(page),
        "naive lxml": lambda: naive_lxml(page),
    }
    counts = {"websearch (selectolax)": len(parse_results(page)), "naive lxml": len(naive_lxml(page))}
    try:
        from ddgs.engines.mojeek import Mojeek

        engine = Mojeek()
        contenders["ddgs (lxml)"] = lambda: engine.post_extract_results(engine.extract_results(text))
        counts["ddgs (lxml)"] = len(engine.post_extract_results(engine.extract_results(text)))
    except ImportError:
        print("ddgs is not installed (pip install -e '.[bench]'); comparing with naive lxml only")
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(ROUNDS):
        for name, fn in contenders.items():
            times[name].append(timed(fn))
    medians = {name: statistics.median(t) for name, t in times.items()}
    best = {name: min(t) for name, t in times.items()}
    ours, ours_best = medians["websearch (selectolax)"], best["websearch (selectolax)"]
    print(f"{label}: {len(page) / 1024:.1f} KB; median and best of {ROUNDS} interleaved rounds of {PER_ROUND}")
    for name, median in medians.items():
        print(
            f"  {name:24} {median * 1e6:7.1f} us ({median / ours:5.2f}x ours)   best {best[name] * 1e6:7.1f} us "
            f"({best[name] / ours_best:5.2f}x ours)   {counts[name]:2} results"
        )


def main() -> None:
    fake = results_page("rust async book", sample_results("rust async book", 10)).encode()
    assert len(parse_results(fake)) == 10
    bench("fake page, 10 results", fake)
    if REAL.exists():
        bench("real saved page, 10 results", REAL.read_bytes())


if __name__ == "__main__":
    main()
