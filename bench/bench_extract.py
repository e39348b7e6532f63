"""Article extraction: our `extract(..., fmt="text")` against trafilatura run directly (default
options) on the article-extraction benchmark's pages, and the cost of our extra steps.

Run by hand: `python -m bench.bench_extract [--pages DIR]`. The pages and the metric are described
in the benchmark's README.md: 4-token shingles over `\\w+` tokens, per-page TP/FP/FN normalised, mean
precision and recall, F1 of the two means. Targets: F1 >= 0.95 and not below trafilatura direct.
Then one 100 KB page is extracted in interleaved rounds by both, and the ratio of medians printed
(our extra work: charset, challenge and shell checks, metadata). Also printed: how many pages any
prompt-injection flag marks (find_suspicious on the text, hidden_html_text on the page), and the
same metric for PDFs generated (with fpdf2) from five of the articles, read back by our PDF reader.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import trafilatura

from websearch._reading._extract import extract
from websearch._reading._suspicious import find_suspicious, hidden_html_text
from websearch.errors import FetchError

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PAGES = (ROOT.parent / "shared" / "benchmarks" / "article-extraction").resolve()
FALLBACK_PAGES = Path("/work/shared/benchmarks/article-extraction")
_TOKEN = re.compile(r"\w+")
ROUNDS = 15


def shingles(text: str) -> Counter[tuple[str, ...]]:
    """The text's 4-token shingles with their multiplicity."""
    words = _TOKEN.findall(text)
    return Counter(tuple(words[i : i + 4]) for i in range(len(words) - 3))


def page_scores(predicted: str, truth: str) -> tuple[float | None, float | None]:
    """(precision, recall) of one page, None where the benchmark leaves the page out."""
    got, want = shingles(predicted), shingles(truth)
    tp = sum((got & want).values())
    fp = sum(got.values()) - tp
    fn = sum(want.values()) - tp
    if fp == 0 and fn == 0:
        return 1.0, 1.0
    return (tp / (tp + fp) if tp + fp else None), (tp / (tp + fn) if tp + fn else None)


def score(outputs: dict[str, str], truth: dict[str, str]) -> tuple[float, float, float]:
    """Mean precision, mean recall and the F1 of the two means."""
    scores = [page_scores(outputs[key], truth[key]) for key in truth]
    precision = statistics.fmean(p for p, _ in scores if p is not None)
    recall = statistics.fmean(r for _, r in scores if r is not None)
    return precision, recall, 2 * precision * recall / (precision + recall)


def ours(html: bytes, url: str) -> str:
    try:
        return extract(html, url=url, content_type="text/html", charset=None, fmt="text").text
    except FetchError:
        return ""


def direct(html: bytes, url: str) -> str:
    return trafilatura.extract(html, url=url) or ""


def run(fn: Callable[[bytes, str], str], pages: dict[str, tuple[bytes, str]]) -> tuple[dict[str, str], float]:
    outputs: dict[str, str] = {}
    started = time.perf_counter()
    for key, (html, url) in pages.items():
        outputs[key] = fn(html, url)
    return outputs, (time.perf_counter() - started) * 1000 / len(pages)


def big_page(pages: dict[str, tuple[bytes, str]]) -> tuple[bytes, str]:
    """The benchmark page whose size is nearest 100 KB."""
    return min(pages.values(), key=lambda page: abs(len(page[0]) - 100_000))


def direct_tuned(html: bytes, url: str) -> str:
    """trafilatura with the options our extract passes it (the rest of the gap is our own work)."""
    return trafilatura.extract(html, url=url, favor_precision=True, include_comments=False) or ""


def speed_ratios(html: bytes, url: str) -> tuple[float, float]:
    """Median time of ours over trafilatura direct with its defaults, and with our options."""
    times: dict[str, list[float]] = {"ours": [], "direct": [], "tuned": []}
    for _ in range(ROUNDS):
        for name, fn in (("ours", ours), ("direct", direct), ("tuned", direct_tuned)):
            started = time.perf_counter()
            fn(html, url)
            times[name].append(time.perf_counter() - started)
    ours_median = statistics.median(times["ours"])
    return ours_median / statistics.median(times["direct"]), ours_median / statistics.median(times["tuned"])


def flagged(pages: dict[str, tuple[bytes, str]], outputs: dict[str, str]) -> tuple[int, int]:
    """How many pages find_suspicious flags (on our text), and how many hidden_html_text flags."""
    in_text = sum(1 for key in pages if find_suspicious(outputs[key]))
    hidden = sum(1 for html, _ in pages.values() if hidden_html_text(html))
    return in_text, hidden


def pdf_texts(truth: dict[str, str], n: int = 5, chars: int = 4000) -> list[str]:
    """Texts for generated PDFs: the first `n` articles' bodies, cut to `chars` and folded to
    Latin-1 (the PDF core fonts' characters)."""
    texts = []
    for body in list(truth.values())[:n]:
        text = body[:chars].encode("latin-1", errors="ignore").decode("latin-1")
        texts.append(text)
    return texts


def pdf_scores(texts: list[str]) -> tuple[float, float, float, float] | None:
    """P, R, F1 and ms per document of our PDF reading of PDFs made from `texts` (None without fpdf2)."""
    try:
        from fpdf import FPDF
    except ImportError:
        return None
    outputs, truth = {}, {}
    took = 0.0
    for i, text in enumerate(texts):
        pdf = FPDF()
        pdf.set_font("Helvetica", size=11)
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
        data = bytes(pdf.output())
        started = time.perf_counter()
        read = extract(
            data, url=f"https://example.org/{i}.pdf", content_type="application/pdf", charset=None, fmt="text"
        )
        took += time.perf_counter() - started
        outputs[str(i)] = re.sub(r"\[page \d+\]", " ", read.text)  # the page markers are ours, not the text's
        truth[str(i)] = text
    precision, recall, f1 = score(outputs, truth)
    return precision, recall, f1, took / len(texts) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=Path, default=None, help="the benchmark directory (ground-truth.json, html/)")
    args = parser.parse_args()
    folder = args.pages or (DEFAULT_PAGES if DEFAULT_PAGES.is_dir() else FALLBACK_PAGES)
    if not (folder / "ground-truth.json").is_file():
        sys.exit(f"no benchmark at {folder} (give --pages DIR)")
    ground = json.loads((folder / "ground-truth.json").read_text())
    pages = {
        key: (gzip.decompress((folder / "html" / f"{key}.html.gz").read_bytes()), v["url"]) for key, v in ground.items()
    }
    truth = {key: v["articleBody"] for key, v in ground.items()}
    print(f"{len(pages)} pages from {folder}")
    our_outputs: dict[str, str] = {}
    for name, fn in (("websearch extract (text)", ours), ("trafilatura direct (defaults)", direct)):
        outputs, ms = run(fn, pages)
        our_outputs = our_outputs or outputs
        precision, recall, f1 = score(outputs, truth)
        print(f"{name:32} P {precision:.4f}  R {recall:.4f}  F1 {f1:.4f}  {ms:7.1f} ms/page")
    html, url = big_page(pages)
    defaults, tuned = speed_ratios(html, url)
    print(
        f"{len(html) / 1000:.0f} KB page, median of {ROUNDS}: ours / trafilatura direct = {defaults:.2f} "
        f"(its defaults), {tuned:.2f} (our options: the rest is charset, challenge check, metadata)"
    )
    in_text, hidden = flagged(pages, our_outputs)
    print(f"pages flagged: find_suspicious on the text {in_text}/{len(pages)}, hidden_html_text {hidden}/{len(pages)}")
    texts = pdf_texts(truth)
    scored = pdf_scores(texts)
    if scored is None:
        print("PDFs: left out (fpdf2, in the test extras, makes them)")
    else:
        precision, recall, f1, ms = scored
        shown = f"P {precision:.4f}  R {recall:.4f}  F1 {f1:.4f}  {ms:7.1f} ms/PDF"
        print(f"{len(texts)} generated PDFs (their text known)  {shown}")


if __name__ == "__main__":
    main()
