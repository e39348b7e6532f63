"""Startpage result-page parsing: ours (the props JSON, else selectolax) against ddgs (lxml) and a
naive lxml parse of the markup.

Run by hand: `python -m bench.bench_startpage_parse` (ddgs comes with the `bench` extra). The page
is the fake's realistic 10-result page (one Startpage page: markup and props); every contender
parses it in interleaved rounds and medians are compared. Target: ours at least 2x faster than
ddgs. "websearch (markup)" is our fallback for a page without readable props, for reference.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from lxml import html as lxml_html

from websearch._providers.startpage import parse_results
from websearch.testing.startpage import results_page, sample_results

ROUNDS, PER_ROUND = 25, 100
QUERY = "rust async book"


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    for _ in range(PER_ROUND):
        fn()
    return (time.perf_counter() - start) / PER_ROUND


def naive_lxml(page: bytes) -> list[tuple[str, str, str]]:
    """The obvious lxml version: every `div.result`, its title link's heading and its snippet."""
    tree = lxml_html.fromstring(page)
    found = []
    for block in tree.xpath('//div[contains(concat(" ", normalize-space(@class), " "), " result ")]'):
        links = block.xpath('.//a[contains(@class, "result-title")]')
        if not links:
            continue
        heading = links[0].xpath(".//h2")
        snippet = block.xpath('.//p[contains(@class, "description")]')
        title = " ".join((heading[0] if heading else links[0]).text_content().split())
        text = " ".join(snippet[0].text_content().split()) if snippet else ""
        found.append((title, links[0].get("href", ""), text))
    return found


def main() -> None:
    page = results_page(QUERY, sample_results(QUERY, 10), more=True)
    raw = page.encode()
    markup_only = results_page(QUERY, sample_results(QUERY, 10), more=True, props=False).encode()
    contenders: dict[str, Callable[[], object]] = {
        "websearch (props)": lambda: parse_results(raw, 10),
        "websearch (markup)": lambda: parse_results(markup_only, 10),
        "naive lxml": lambda: naive_lxml(raw),
    }
    try:
        from ddgs.engines.startpage import Startpage

        engine = Startpage()
        contenders["ddgs (lxml)"] = lambda: engine.post_extract_results(engine.extract_results(page))
        assert len(engine.post_extract_results(engine.extract_results(page))) == 10
    except ImportError:
        print("ddgs is not installed (pip install -e '.[bench]'); comparing with the naive lxml parse only")
    assert len(parse_results(raw, 10)) == len(parse_results(markup_only, 10)) == len(naive_lxml(raw)) == 10
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(ROUNDS):
        for name, fn in contenders.items():
            times[name].append(timed(fn))
    medians = {name: statistics.median(t) for name, t in times.items()}
    best = {name: min(t) for name, t in times.items()}
    ours, ours_best = medians["websearch (props)"], best["websearch (props)"]
    print(f"page: {len(raw) / 1024:.1f} KB, 10 results; median and best of {ROUNDS} interleaved rounds")
    for name, median in medians.items():
        print(
            f"{name:20} {median * 1e6:7.0f} us ({median / ours:5.2f}x ours)   best {best[name] * 1e6:7.0f} us "
            f"({best[name] / ours_best:5.2f}x ours)"
        )


if __name__ == "__main__":
    main()
