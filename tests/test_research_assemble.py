"""research's assembly: pages and answers to one cited context, fair between pages, in document
order, numbered 1:1 with its sources, never over its budget, the same for the same input."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from websearch._reading._assemble import GAP, Answer, Context, assemble
from websearch._reading._passages import PageText, split_passages
from websearch._reading._rank import WordLlamaReranker
from websearch._reading._tokens import ESTIMATE, TokenCounter


def filler(seed: int, n: int) -> str:
    """`n` sentences about nothing the tests ask, different for each seed (no two are near-copies)."""
    return " ".join(
        f"Item {seed}-{k} on the list goes on about road {seed * 31 + k} and train {seed * 17 + k * 3} today."
        for k in range(n)
    )


def paragraph(words: str, n: int = 8, seed: int | None = None) -> str:
    """About `n` filler sentences with `words` in the middle: one passage of its own (> 600 chars)."""
    seed = zlib.crc32(words.encode()) if seed is None else seed
    return filler(seed, n // 2) + " " + words + ". " + filler(seed + 1, n - n // 2)


def numbers_in(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"\[(\d+)\]", text)}


def sources_list(context: Context) -> list[tuple[int, str]]:
    if "Sources:\n" not in context.text:
        return []
    tail = context.text.rsplit("Sources:\n", 1)[1]
    return [(int(m.group(1)), m.group(2)) for m in re.finditer(r"^\[(\d+)\] (\S+)$", tail, re.M)]


def test_no_pages_is_an_empty_context_that_says_why() -> None:
    context = assemble("anything", [])
    assert (context.text, context.sources, context.used, context.skipped) == ("", (), (), ())
    assert context.reason == "no pages"
    assert context.chars == context.tokens == 0
    empty = assemble("anything", [PageText("https://a.example/", "A", "  \n", None, 0)])
    assert empty.text == "" and empty.reason == "no page has text"
    assert [(u.url, u.reason) for u in empty.skipped] == [("https://a.example/", "empty")]


def test_a_query_that_matches_nothing_takes_each_pages_first_passages() -> None:
    pages = [
        PageText("https://a.example/", "A", paragraph("alpha lead") + "\n\n" + paragraph("alpha later"), None, 0),
        PageText("https://b.example/", "B", paragraph("beta lead") + "\n\n" + paragraph("beta later"), None, 1),
    ]
    context = assemble("zebra", pages, budget_chars=2000)
    assert context.ranked_by == "position"
    assert "alpha lead" in context.text and "beta lead" in context.text
    assert "later" not in context.text
    assert [u.url for u in context.used] == ["https://a.example/", "https://b.example/"]


def test_a_page_with_nothing_relevant_is_skipped_as_such() -> None:
    pages = [
        PageText("https://a.example/", "A", paragraph("zebra stripes"), None, 0),
        PageText("https://b.example/", "B", paragraph("giraffe necks"), None, 1),
    ]
    context = assemble("zebra", pages)
    assert [u.url for u in context.used] == ["https://a.example/"]
    assert [(u.url, u.reason) for u in context.skipped] == [("https://b.example/", "no_relevant_passage")]


def test_every_page_gets_its_share_before_a_better_page_gets_more() -> None:
    strong = "\n\n".join(paragraph("solar panels solar cells solar power solar farms", seed=i * 2) for i in range(20))
    pages = [
        PageText("https://long.example/", "Long", strong, None, 0),
        PageText("https://b.example/", "B", "Rooftop solar is cheap now.", None, 1),
        PageText("https://c.example/", "C", "Solar output falls in winter.", None, 2),
    ]
    context = assemble("solar power", pages, budget_chars=3000)
    assert context.chars <= 3000
    used = {u.url: u for u in context.used}
    assert set(used) == {"https://long.example/", "https://b.example/", "https://c.example/"}
    assert used["https://b.example/"].chars_used == len("Rooftop solar is cheap now.")
    assert used["https://c.example/"].chars_used == len("Solar output falls in winter.")
    # the short pages leave most of their share, which goes to the long page's best passages
    assert used["https://long.example/"].chars_used > 1500
    # the long page's passages score higher: it is source [1]
    assert context.sources[0].url == "https://long.example/"


def test_a_tight_budget_is_shared_between_the_pages() -> None:
    pages = [
        PageText(
            f"https://p{i}.example/",
            f"P{i}",
            "\n\n".join(paragraph(f"kiwi fruit {i} " * (5 - i), seed=i * 100 + j * 2) for j in range(4)),
            None,
            i,
        )
        for i in range(3)
    ]
    context = assemble("kiwi", pages, budget_chars=2600)
    assert context.chars <= 2600
    # the best page's best passages alone would fill it; each page has about a third instead
    assert len(context.used) == 3
    assert all(700 <= use.chars_used <= 900 for use in context.used)


def test_passages_come_in_document_order_with_a_gap_mark_between() -> None:
    paragraphs = [paragraph(f"filler {i}") for i in range(6)]
    paragraphs[1] = paragraph("the zebra is striped")
    paragraphs[4] = paragraph("zebra zebra zebra herds of zebra")  # the better passage, further down
    page = PageText("https://z.example/", "Zebras", "\n\n".join(paragraphs), None, 0)
    context = assemble("zebra", [page], budget_chars=4000)
    text = context.text
    assert text.index("the zebra is striped") < text.index(GAP) < text.index("herds of zebra")
    assert text.startswith("[1] Zebras\n\n")
    assert "filler" not in text
    assert context.used[0].passages == 2


def test_consecutive_passages_have_no_gap_mark() -> None:
    page = PageText("https://z.example/", "Z", paragraph("zebra one") + "\n\n" + paragraph("zebra two"), None, 0)
    context = assemble("zebra", [page], budget_chars=4000)
    assert context.used[0].passages == 2
    assert GAP not in context.text


def test_sources_are_numbered_one_to_one_with_urls_and_the_text_uses_those_numbers() -> None:
    pages = [
        PageText("https://a.example/", "A", paragraph("otters swim [7] in rivers"), "2025-01-02", 0),
        PageText("https://b.example/", "B", paragraph("otters eat fish"), None, 1),
        PageText("https://a.example/", "A again", paragraph("otters again"), None, 2),
        PageText("https://c.example/", "C", paragraph("sea otters hold hands"), None, 3),
    ]
    context = assemble("otters", pages)
    numbers = [s.number for s in context.sources]
    assert numbers == list(range(1, len(numbers) + 1))
    assert len({s.url for s in context.sources}) == len(context.sources) == 3
    assert numbers_in(context.text) == set(numbers)  # the footnote mark [7] was taken out
    assert sources_list(context) == [(s.number, s.url) for s in context.sources]
    for source in context.sources:
        assert f"[{source.number}] {next(p.title for p in pages if p.url == source.url)}" in context.text
    assert "(2025-01-02)" in context.text
    assert [(u.url, u.reason, u.duplicate_of) for u in context.skipped] == [
        ("https://a.example/", "duplicate", "https://a.example/")
    ]


def test_a_mirrored_page_is_dropped_as_a_duplicate_of_the_better_ranked_copy() -> None:
    text = paragraph("the lighthouse keeper lit the lamp") + "\n\n" + paragraph("the lighthouse stood on the rock")
    mirror = text.replace("weather", "climate", 1)  # a mirror with a small edit
    pages = [
        PageText("https://mirror.example/", "Mirror", mirror, "2026-01-01", 3),  # its date lifts its score
        PageText("https://origin.example/", "Origin", text, None, 0),
        PageText("https://other.example/", "Other", paragraph("a lighthouse guide for sailors"), None, 1),
    ]
    context = assemble("lighthouse", pages)
    assert {u.url for u in context.used} == {"https://origin.example/", "https://other.example/"}
    assert [(u.url, u.reason, u.duplicate_of) for u in context.skipped] == [
        ("https://mirror.example/", "duplicate", "https://origin.example/")
    ]


def test_a_declared_recent_date_orders_equally_relevant_pages_and_no_date_changes_nothing() -> None:
    undated = PageText("https://old.example/", "Undated", "The zebra alpha beta gamma delta.", None, 0)
    dated = PageText("https://new.example/", "Dated", "The zebra epsilon zeta eta theta.", "2026-01-01", 1)
    assert [s.url for s in assemble("zebra", [undated, dated]).sources] == [dated.url, undated.url]
    plain = PageText(dated.url, dated.title, dated.text, None, 1)
    assert [s.url for s in assemble("zebra", [undated, plain]).sources] == [undated.url, plain.url]


def test_answers_are_kept_with_their_citations_in_the_one_sources_list() -> None:
    pages = [
        PageText("https://a.example/", "A", paragraph("comets have tails"), None, 0),
        PageText("https://b.example/", "B", paragraph("comets are icy"), None, 1),
    ]
    answer = Answer("perplexity", "Comets are icy bodies with tails [2].", ("https://b.example/", "https://x.example/"))
    context = assemble("comets", pages, answers=[answer])
    assert "Answer from perplexity, citing [2] [3]:\nComets are icy bodies with tails." in context.text
    assert sources_list(context) == [(1, "https://a.example/"), (2, "https://b.example/"), (3, "https://x.example/")]
    assert context.sources[2].chars_used == 0 and context.sources[2].title is None
    assert context.answers == (Answer("perplexity", "Comets are icy bodies with tails.", answer.citations),)
    only = assemble("comets", [], answers=[answer])
    assert only.reason is None
    assert "citing [1] [2]" in only.text and sources_list(only) == [(1, answer.citations[0]), (2, answer.citations[1])]


def test_a_passage_that_does_not_fit_is_cut_at_a_sentence_end_or_skipped() -> None:
    text = " ".join(f"The quasar number {i} is very bright." for i in range(40))
    page = PageText("https://q.example/", "Q", text, None, 0)
    cut = assemble("quasar", [page], budget_chars=600)
    assert cut.chars <= 600
    body = cut.text.split("\n\nSources:")[0]
    assert body.endswith("bright. " + GAP)
    too_small = assemble("quasar", [page], budget_chars=120)
    assert too_small.text == ""
    assert too_small.reason == "the budget is too small for one passage"
    assert [u.reason for u in too_small.skipped] == ["over_budget"]


def test_a_token_budget_counts_cjk_by_character() -> None:
    text = "\n\n".join(
        "".join(f"東京の天気は第{i}日目も晴れでした。" for i in range(j, j + 30)) for j in range(0, 300, 30)
    )
    page = PageText("https://tokyo.example/", "東京", text, None, 0)
    context = assemble("東京の天気", [page], budget_chars=None, budget_tokens=500, counter=ESTIMATE)
    assert context.token_counter == "estimate"
    assert 400 < context.tokens <= 500
    assert context.chars < 600  # about a character a token (the header and source line are ASCII)
    english = assemble(
        "weather",
        [PageText("https://w.example/", "W", paragraph("weather") * 20, None, 0)],
        budget_chars=None,
        budget_tokens=500,
        counter=ESTIMATE,
    )
    assert english.tokens <= 500 and english.chars > 1500


def test_the_same_input_gives_the_same_context_whatever_the_page_order() -> None:
    pages = [
        PageText(
            f"https://s{i}.example/",
            f"S{i}",
            "\n\n".join(paragraph(f"tide pools {j} " * (1 + (i + j) % 3)) for j in range(5)),
            None,
            i,
        )
        for i in range(4)
    ]
    pages.append(PageText("https://copy.example/", "Copy", pages[1].text, None, 4))
    first = assemble("tide pools", pages, budget_chars=5000)
    again = assemble("tide pools", pages, budget_chars=5000)
    backwards = assemble("tide pools", pages[::-1], budget_chars=5000)
    assert first == again
    assert (backwards.text, backwards.sources, backwards.used) == (first.text, first.sources, first.used)
    assert set(backwards.skipped) == set(first.skipped)


def test_another_reranker_decides_the_order() -> None:
    class Longest:
        def score(self, query: str, passages: Sequence[str]) -> list[float]:
            return [float(len(p)) for p in passages]

    pages = [
        PageText("https://short.example/", "Short", "Tiny text.", None, 0),
        PageText("https://long.example/", "Long", "A much longer text with many more words in it.", None, 1),
    ]
    assert [s.url for s in assemble("zzz", pages, reranker=Longest()).sources] == [pages[1].url, pages[0].url]


def test_wordllama_can_rank_the_passages() -> None:
    pytest.importorskip("wordllama")
    pages = [
        PageText("https://cats.example/", "Cats", "Felines doze for most of the day, often sixteen hours.", None, 1),
        PageText("https://bonds.example/", "Bonds", "The bond market fell sharply on Tuesday afternoon.", None, 0),
    ]
    context = assemble("how long do cats sleep", pages, reranker=WordLlamaReranker())
    assert context.sources[0].url == "https://cats.example/"


def test_with_wordllama_a_reworded_mirror_is_a_duplicate_by_meaning() -> None:
    # It shares too few word sequences for the shingles (a copy edited word by word), but it
    # says the same: with an embedding reranker it is dropped as the better-ranked page's copy.
    pytest.importorskip("wordllama")
    original = (
        "Asyncio is a library to write concurrent code using the async and await syntax. It is used as a "
        "foundation for many Python asynchronous frameworks."
    )
    reworded = (
        "asyncio is a library for writing concurrent code with the async/await syntax, and it serves as the "
        "foundation for multiple asynchronous Python frameworks."
    )
    other = "The asyncio event loop runs asynchronous tasks and callbacks, performs network IO, and runs subprocesses."
    pages = [
        PageText("https://docs.example/asyncio", "Asyncio", original, None, 0),
        PageText("https://mirror.example/asyncio", "Asyncio (mirror)", reworded, None, 1),
        PageText("https://loop.example/", "The loop", other, None, 2),
    ]
    by_words = assemble("asyncio async await frameworks", pages)
    by_meaning = assemble("asyncio async await frameworks", pages, reranker=WordLlamaReranker())
    assert "https://mirror.example/asyncio" in [s.url for s in by_words.sources]
    assert sorted(s.url for s in by_meaning.sources) == ["https://docs.example/asyncio", "https://loop.example/"]
    (mirror,) = [use for use in by_meaning.skipped if use.url == "https://mirror.example/asyncio"]
    assert (mirror.reason, mirror.duplicate_of) == ("duplicate", "https://docs.example/asyncio")


def test_no_budget_takes_every_relevant_passage_and_counts_what_it_used() -> None:
    pages = [
        PageText(
            f"https://r{i}.example/",
            f"R{i}",
            "\n\n".join(paragraph(f"reef {i} {j}", seed=i * 10 + j) for j in range(5)),
            None,
            i,
        )
        for i in range(3)
    ]
    context = assemble("reef", pages, budget_chars=None)
    assert {u.url: u.passages for u in context.used} == {p.url: len(split_passages(i, p)) for i, p in enumerate(pages)}
    for use, source in zip(context.used, context.sources, strict=True):
        assert use.url == source.url and use.chars_used == source.chars_used
    for page in pages:
        for paragraph_text in page.text.split("\n\n"):
            assert paragraph_text in context.text
    assert GAP not in context.text


def test_a_negative_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        assemble("q", [], budget_chars=-1)


# -- the budget is never exceeded -------------------------------------------------------------

WORDS = st.sampled_from(
    ["moon", "tide", "the", "of", "ocean", "waves", "月", "潮", "海", "[3]", "e.g.", "Mr.", "x" * 30, "—", "…"]
)
SENTENCE = st.lists(WORDS, min_size=1, max_size=25).map(lambda w: " ".join(w) + st_end(w))


def st_end(words: list[str]) -> str:
    return "。" if words[-1] in ("月", "潮", "海") else "."


BLOCK = st.one_of(
    st.lists(SENTENCE, min_size=1, max_size=30).map(" ".join),
    st.lists(WORDS, min_size=1, max_size=8).map(lambda w: "## " + " ".join(w)),
    st.lists(SENTENCE, min_size=1, max_size=6).map(lambda s: "\n".join("- " + x for x in s)),
    st.lists(WORDS, min_size=2, max_size=6).map(lambda w: "| " + " | ".join(w) + " |"),
)
PAGE_TEXTS = st.lists(BLOCK, max_size=12).map("\n\n".join)
PAGES = st.lists(
    st.tuples(PAGE_TEXTS, st.sampled_from([None, "2024-01-01", "2020-05-05", "bad"]), st.integers(0, 3)), max_size=5
).map(
    lambda items: [
        PageText(f"https://p{i % 4}.example/{'x' * (i * 7)}", f"Page {i}" if i % 2 else None, text, published, rank)
        for i, (text, published, rank) in enumerate(items)
    ]
)
ANSWERS = st.lists(
    st.builds(
        Answer,
        st.sampled_from(["perplexity", "exa"]),
        st.lists(SENTENCE, max_size=8).map(" ".join),
        st.lists(
            st.sampled_from(["https://p0.example/", "https://cited.example/a", "https://cited.example/b"]), max_size=3
        ).map(tuple),
    ),
    max_size=2,
)
QUERIES = st.sampled_from(["moon tide", "潮の海", "the of", "waves", "nothing here"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(QUERIES, PAGES, ANSWERS, st.integers(0, 4000))
def test_the_context_never_exceeds_a_character_budget(
    query: str, pages: list[PageText], answers: list[Answer], budget: int
) -> None:
    context = assemble(query, pages, budget_chars=budget, answers=answers)
    assert len(context.text) == context.chars <= budget
    check_numbers(context)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(QUERIES, PAGES, ANSWERS, st.integers(0, 1000))
def test_the_context_never_exceeds_a_token_budget(
    query: str, pages: list[PageText], answers: list[Answer], budget: int
) -> None:
    context = assemble(query, pages, budget_chars=None, budget_tokens=budget, answers=answers, counter=ESTIMATE)
    assert ESTIMATE.count(context.text) == context.tokens <= budget
    check_numbers(context)


def byte_counter() -> TokenCounter:
    tiktoken = pytest.importorskip("tiktoken")
    encoding = tiktoken.Encoding(
        "bytes", pat_str=r"\s+|\S+", mergeable_ranks={bytes([i]): i for i in range(256)}, special_tokens={}
    )
    return TokenCounter.from_encoding(encoding)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(QUERIES, PAGES, ANSWERS, st.integers(0, 3000))
def test_the_context_never_exceeds_a_budget_counted_by_a_tiktoken_encoding(
    query: str, pages: list[PageText], answers: list[Answer], budget: int
) -> None:
    counter = byte_counter()
    context = assemble(query, pages, budget_chars=None, budget_tokens=budget, answers=answers, counter=counter)
    assert counter.count(context.text) == context.tokens <= budget
    assert context.token_counter == "tiktoken:bytes"


def check_numbers(context: Context) -> None:
    if not context.text:
        assert context.sources == ()
        assert context.reason
        return
    assert context.reason is None
    assert numbers_in(context.text) == {s.number for s in context.sources}
    assert sources_list(context) == [(s.number, s.url) for s in context.sources]
    assert len({s.url for s in context.sources}) == len(context.sources)
    assert {u.url for u in context.used} <= {s.url for s in context.sources}
