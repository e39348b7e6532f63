"""Bing result-page parsing: ours (selectolax/Lexbor) against ddgs (lxml) and a naive lxml parse.

Run by hand: `python -m bench.bench_bing_parse` (ddgs comes with the `bench` extra). The page is
the fake's realistic page: a top ad, ten organic results (three dated), the related searches,
the pager, the side column and the inline script and style a real page carries (about 95 KB).
All three parse it in interleaved rounds and medians are compared. Target: ours at least 2x
faster than ddgs. ddgs's Bing engine is disabled in ddgs itself, but its parser still runs.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import lxml.html

from bench._parse import add_ddgs, compare
from websearch._providers.bing import parse_results
from websearch.testing.bing import BingResult, results_page, sample_results

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def naive_lxml(page: str) -> list[tuple[str, str, str]]:
    """What a first attempt looks like: the whole page through lxml, XPath per field, `/ck/a`
    decoded with the standard library."""
    results = []
    for block in lxml.html.fromstring(page).xpath('//ol[@id="b_results"]/li[contains(@class, "b_algo")]'):
        links = block.xpath(".//h2/a")
        if not links:
            continue
        href = links[0].get("href", "")
        if href.startswith("https://www.bing.com/ck/a?"):
            u = parse_qs(urlsplit(href).query).get("u", [""])[0][2:]
            href = base64.urlsafe_b64decode(u + "=" * (-len(u) % 4)).decode()
        title = " ".join(links[0].text_content().split())
        snippet = " ".join(" ".join(p.text_content() for p in block.xpath(".//p")).split())
        results.append((title, href, snippet))
    return results


def main() -> None:
    query = "rust async book"
    ad = BingResult(f"{query} - Official Site", "https://shop.example.com/deal", "Buy now", ad=True)
    page = results_page(query, [ad, *sample_results(query, 10)])
    raw = page.encode()
    contenders: dict[str, Callable[[], object]] = {
        "websearch (selectolax)": lambda: parse_results(raw, NOW),
        "naive lxml": lambda: naive_lxml(page),
    }
    add_ddgs(contenders, "bing", page, instead="the naive lxml parse")
    ours_urls = [s.url for s in parse_results(raw, NOW)]
    assert ours_urls == [r.url for r in sample_results(query, 10)]
    assert [href for _, href, _ in naive_lxml(page)] == ours_urls
    compare(contenders, ours="websearch (selectolax)", header=f"page: {len(raw) / 1024:.1f} KB, 10 results")


if __name__ == "__main__":
    main()
