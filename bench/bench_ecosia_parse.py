"""Ecosia result-page parsing: ours (selectolax/Lexbor) against a naive lxml parse.

Run by hand: `python -m bench.bench_ecosia_parse`. ddgs has no Ecosia engine, so the comparison is
with what a straightforward scraper does: lxml.html on the whole page and XPath for the organic
results (the same blocks, title links and snippets ours reads). The page is the fake's realistic
10-result page (about 40 KB, the size of a real one without its scripts); the contenders parse it
in interleaved rounds and medians are compared. Target: ours at least 2x faster.
"""

from __future__ import annotations

from collections.abc import Callable

from bench._parse import compare
from websearch._providers.ecosia import parse_results
from websearch.testing.ecosia import results_page, sample_results


def naive_lxml(page: bytes) -> list[tuple[str, str, str | None]]:
    """The obvious lxml scraper: whole-page tree, XPath per result."""
    import lxml.html

    tree = lxml.html.fromstring(page)
    found: list[tuple[str, str, str | None]] = []
    seen: set[str] = set()
    for block in tree.xpath('//div[@data-test-id="mainline-result-web"]/article[@data-test-id="organic-result"]'):
        links = block.xpath('.//a[contains(concat(" ", @class, " "), " result__link ")]')
        if not links:
            continue
        href = links[0].get("href") or ""
        if not href.startswith(("http://", "https://")) or href in seen:
            continue
        seen.add(href)
        title = " ".join(links[0].text_content().split())
        snippet = block.xpath('.//*[@data-test-id="web-result-description"]')
        found.append((title, href, " ".join(snippet[0].text_content().split()) if snippet else None))
    return found


def main() -> None:
    page = results_page("rust async book", sample_results("rust async book", 10)).encode()
    contenders: dict[str, Callable[[], object]] = {"websearch (selectolax)": lambda: parse_results(page)}
    try:
        import lxml.html  # noqa: F401

        contenders["naive lxml + XPath"] = lambda: naive_lxml(page)
        ours = [(s.title, s.url, s.snippet) for s in parse_results(page)]
        assert ours == naive_lxml(page), "the two parsers disagree"
    except ImportError:
        print("lxml is not installed (pip install -e '.[bench]'); timing ours alone")
    assert len(parse_results(page)) == 10
    compare(contenders, ours="websearch (selectolax)", header=f"page: {len(page) / 1024:.1f} KB, 10 results")


if __name__ == "__main__":
    main()
