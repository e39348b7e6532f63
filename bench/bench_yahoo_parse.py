"""Yahoo result-page parsing: ours (selectolax/Lexbor) against ddgs's Yahoo engine and a naive lxml parse.

Run by hand: `python -m bench.bench_yahoo_parse` (ddgs comes with the `bench` extra). The page is the
fake's realistic one (7 organic results, two ads, the ~60 KB of inline atomic CSS and scripts a real
page carries in its head); all contenders parse it in interleaved rounds and medians are compared.
Target: ours at least 2x faster than ddgs. "naive lxml" is the obvious hand-written parser: the whole
page through lxml.html, the `algo` blocks by XPath, the same fields, the RU= segment unquoted.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote

from lxml import html as lxml_html

from bench._parse import add_ddgs, compare
from websearch._providers.yahoo import parse_results
from websearch.testing.yahoo import YahooResult, results_page, sample_results

QUERY = "rust async book"


def naive_lxml(page: str) -> list[tuple[str, str, str]]:
    tree = lxml_html.fromstring(page)
    found = []
    for block in tree.xpath('//div[contains(concat(" ", normalize-space(@class), " "), " algo ")]'):
        links = block.xpath('.//div[contains(@class, "compTitle")]//a[@href]')
        if not links:
            continue
        href = links[0].get("href")
        if "/RU=" in href:
            href = unquote(href.split("/RU=", 1)[1].split("/RK=", 1)[0].split("/RS=", 1)[0])
        title = links[0].get("aria-label") or " ".join(block.xpath("string(.//h3)").split())
        snippet = " ".join(block.xpath('string(.//div[contains(@class, "compText")])').split())
        found.append((title, href, snippet))
    return found


def main() -> None:
    results = [YahooResult("Sponsored &#8212; async book", "https://shop.example/", "Buy it", ad=True)]
    results += sample_results(QUERY, 7)
    page = results_page(QUERY, results, more=True)
    raw = page.encode()
    contenders: dict[str, Callable[[], object]] = {
        "websearch (selectolax)": lambda: parse_results(raw, 20),
        "naive lxml": lambda: naive_lxml(page),
    }
    add_ddgs(contenders, "yahoo", page, instead="the naive lxml parse")
    assert len(parse_results(raw, 20)) == 7
    assert len(naive_lxml(page)) == 7
    compare(contenders, ours="websearch (selectolax)", header=f"page: {len(raw) / 1024:.1f} KB, 7 organic results")


if __name__ == "__main__":
    main()
