"""Startpage result-page parsing: ours (the props JSON, else selectolax) against ddgs (lxml) and a
naive lxml parse of the markup.

Run by hand: `python -m bench.bench_startpage_parse` (ddgs comes with the `bench` extra). The page
is the fake's realistic 10-result page (one Startpage page: markup and props); every contender
parses it in interleaved rounds and medians are compared. Target: ours at least 2x faster than
ddgs. "websearch (markup)" is our fallback for a page without readable props, for reference.
"""

from __future__ import annotations

from collections.abc import Callable

from lxml import html as lxml_html

from bench._parse import add_ddgs, compare
from websearch._providers.startpage import parse_results
from websearch.testing.startpage import results_page, sample_results

QUERY = "rust async book"


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
    ddgs = add_ddgs(contenders, "startpage", page, instead="the naive lxml parse")
    assert ddgs is None or len(ddgs()) == 10
    assert len(parse_results(raw, 10)) == len(parse_results(markup_only, 10)) == len(naive_lxml(raw)) == 10
    compare(contenders, ours="websearch (props)", header=f"page: {len(raw) / 1024:.1f} KB, 10 results", name_width=20)


if __name__ == "__main__":
    main()
