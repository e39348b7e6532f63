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

from collections.abc import Callable
from pathlib import Path

from lxml import html as lxml_html

from bench._parse import add_ddgs, compare, result_count
from websearch._providers.mojeek import parse_results
from websearch.testing.mojeek import results_page, sample_results

PER_ROUND = 200
REAL = Path(__file__).resolve().parent.parent / "tests" / "pages" / "mojeek" / "javascript_tutorial.html"


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
    contenders: dict[str, Callable[[], object]] = {
        "websearch (selectolax)": lambda: parse_results(page),
        "naive lxml": lambda: naive_lxml(page),
    }
    add_ddgs(contenders, "mojeek", page.decode(), instead="naive lxml")
    compare(
        contenders,
        ours="websearch (selectolax)",
        header=f"{label}: {len(page) / 1024:.1f} KB",
        per_round=PER_ROUND,
        time_format="7.1f",
        indent="  ",
        per_round_in_header=True,
        extra=result_count,
    )


def main() -> None:
    fake = results_page("rust async book", sample_results("rust async book", 10)).encode()
    assert len(parse_results(fake)) == 10
    bench("fake page, 10 results", fake)
    if REAL.exists():
        bench("real saved page, 10 results", REAL.read_bytes())


if __name__ == "__main__":
    main()
