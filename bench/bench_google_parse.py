"""Google result-page parsing: ours (selectolax/Lexbor) against ddgs's Google engine (lxml XPath)
and a naive lxml parse that follows our rules.

Run by hand: `python -m bench.bench_google_parse` (ddgs comes with the `bench` extra). Pages: the
fake's basic page (what plain HTTP clients get) and browser page, 10 results each, and the
browser page padded to a real one's weight (Google's pages carry several hundred KB of inline
script and style, before and after the results). All contenders parse each page in interleaved
rounds and medians are compared; each contender's result count is printed. ddgs's Google engine
(disabled in ddgs) reads the WML page of /wml/search: its pre-processing keeps the page from its
`?>` on, which these pages lack (so it would parse the last character only: bypassed here), and
its XPath finds none of these pages' results. Its time is then lxml's parse of the whole page
plus one XPath over the tree, the least any lxml reader pays. Target: ours at least 2x faster
than ddgs.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote

from lxml import html as lxml_html

from bench._parse import add_ddgs, compare, result_count
from websearch._providers.google import parse_results
from websearch.testing.google import results_page, sample_results

_SNIPPETS = ("VwiC3b", "s3v9rd", "FrIlee")


def naive_lxml(page: bytes) -> list[tuple[str, str, str]]:
    """The obvious lxml version of our rules: every h3 inside a link, the link unwrapped, the
    first snippet after it."""
    tree = lxml_html.fromstring(page)
    found = []
    seen = set()
    for h3 in tree.xpath("//a[@href]//h3"):
        href = h3.xpath("ancestor::a[@href][1]/@href")[0]
        if href.startswith("/url?"):
            query = dict(p.split("=", 1) for p in href.split("?", 1)[1].split("&") if "=" in p)
            href = unquote(query.get("q") or query.get("url") or "")
        if not href.startswith(("http://", "https://")) or "google." in href.split("/")[2] or href in seen:
            continue
        seen.add(href)
        snippet = h3.xpath(
            "following::*[" + " or ".join(f'contains(concat(" ", @class, " "), " {c} ")' for c in _SNIPPETS) + "][1]"
        )
        text = " ".join(snippet[0].text_content().split()) if snippet else ""
        found.append((" ".join(h3.text_content().split()), href, text))
    return found


def padded(page: str) -> bytes:
    """`page` with a real page's weight of inline script and style around its results."""
    script = "<script nonce=x>(function(){var a=" + "[1,2,3,4,5,6,7,8,9]," * 24000 + "0;})();</script>"
    style = "<style>" + ".a1b2c3{color:#202124;margin:0 0 8px}" * 6000 + "</style>"
    head_end = page.index("</head>")
    body_end = page.index("</body>")
    page = page[:body_end] + script + page[body_end:]
    return (page[:head_end] + style + script + page[head_end:]).encode()


def bench(label: str, page: bytes) -> None:
    contenders: dict[str, Callable[[], object]] = {
        "websearch (selectolax)": lambda: parse_results(page),
        "naive lxml": lambda: naive_lxml(page),
    }
    # pre_process_html bypassed: see the module docstring
    add_ddgs(contenders, "google", page.decode(), instead="naive lxml", pre_process=False)
    compare(
        contenders,
        ours="websearch (selectolax)",
        header=f"{label}: {len(page) / 1024:.1f} KB",
        time_format="8.1f",
        indent="  ",
        per_round_in_header=True,
        extra=result_count,
    )


def main() -> None:
    results = sample_results("rust async book", 10)
    basic = results_page("rust async book", results)
    browser = results_page("rust async book", results, variant="browser")
    for page in (basic, browser):
        assert len(parse_results(page.encode())) == 10
    bench("basic page, 10 results", basic.encode())
    bench("browser page, 10 results", browser.encode())
    bench("browser page at a real page's weight, 10 results", padded(browser))


if __name__ == "__main__":
    main()
