"""research's pure parts below the assembly: passages, BM25 and the rerankers, the recency boost,
near-duplicates and token counts."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from websearch._reading import _tokens
from websearch._reading._dedupe import jaccard, near_duplicates, shingles
from websearch._reading._passages import PageText, sentence_prefix, split_passages
from websearch._reading._rank import (
    BM25Reranker,
    Reranker,
    WordLlamaReranker,
    bm25_scores,
    recency_boosts,
    tokenize,
)
from websearch._reading._tokens import ESTIMATE, TokenCounter, estimate_tokens, token_counter


def page(text: str, url: str = "https://a.example/", rank: int = 0) -> PageText:
    return PageText(url, "Title", text, None, rank)


def sentences(n: int, start: int = 0) -> str:
    return " ".join(f"Sentence number {i} says something about topic {i % 7}." for i in range(start, start + n))


# -- passages ---------------------------------------------------------------------------------


def test_headings_name_the_passages_below_them_and_are_no_passage_of_their_own() -> None:
    text = "Intro before any heading.\n\n# Cats\n\nCats sleep.\n\n## Diet\n\nCats eat meat.\n\n### Empty\n\n## Last\nText right under it."
    passages = split_passages(3, page(text))
    assert [(p.heading, p.text) for p in passages] == [
        (None, "Intro before any heading."),
        ("Cats", "Cats sleep."),
        ("Diet", "Cats eat meat."),
        ("Last", "Text right under it."),
    ]
    assert all(p.source == 3 for p in passages)
    assert [p.index for p in passages] == [0, 1, 2, 3]
    assert all(text[p.start : p.end] == p.text for p in passages)


def test_an_underlined_heading_is_a_heading() -> None:
    passages = split_passages(0, page("Title Here\n==========\n\nBody text.\n\nSub\n---\n\nMore."))
    assert [(p.heading, p.text) for p in passages] == [("Title Here", "Body text."), ("Sub", "More.")]


def test_a_rule_breaks_a_paragraph_and_is_no_text() -> None:
    passages = split_passages(0, page("First part\nstill first.\n---\nSecond part.\n* * *\nThird."), target_chars=1)
    assert [p.text for p in passages] == ["First part\nstill first.", "Second part.", "Third."]


def test_short_paragraphs_merge_up_to_the_target_and_never_past_the_maximum() -> None:
    paragraphs = [f"Paragraph {i} has a few words in it." for i in range(40)]
    text = "\n\n".join(paragraphs)
    passages = split_passages(0, page(text), target_chars=200, max_chars=400)
    assert 1 < len(passages) < len(paragraphs)
    assert all(len(p.text) <= 400 for p in passages)
    assert all(len(p.text) >= 200 for p in passages[:-1])
    assert "\n\n".join(p.text for p in passages) == text  # nothing lost, nothing repeated


def test_a_long_paragraph_is_cut_at_sentence_ends() -> None:
    text = sentences(60)
    passages = split_passages(0, page(text), target_chars=300, max_chars=500)
    assert len(passages) > 3
    assert all(len(p.text) <= 500 for p in passages)
    assert all(p.text.endswith(".") and p.text.startswith("Sentence") for p in passages)


def test_a_list_stays_whole_when_it_fits_even_with_blank_lines_between_items() -> None:
    items = "\n\n".join(f"- item {i} of the list" for i in range(12))
    text = f"Lead paragraph that is long enough to reach the target on its own.\n\n{items}\n\nAfter."
    passages = split_passages(0, page(text), target_chars=60, max_chars=400)
    listed = [p for p in passages if "- item" in p.text]
    assert len(listed) == 1
    assert listed[0].text.count("- item") == 12


def test_a_table_stays_whole_when_it_fits_and_is_cut_between_rows_when_not() -> None:
    rows = "\n".join(f"| row {i} | value {i} |" for i in range(10))
    table = f"| name | value |\n|---|---|\n{rows}"
    fits = split_passages(0, page(f"Before.\n\n{table}\n\nAfter."), target_chars=50, max_chars=600)
    assert sum(table in p.text for p in fits) == 1
    big = "| name | value |\n|---|---|\n" + "\n".join(f"| row {i} | value {i} |" for i in range(80))
    cut = split_passages(0, page(big), target_chars=200, max_chars=400)
    assert len(cut) > 2
    assert all(len(p.text) <= 400 for p in cut)
    assert all(line.startswith("|") and line.endswith("|") for p in cut for line in p.text.split("\n"))


def test_fenced_code_with_blank_lines_is_one_block() -> None:
    code = "```python\ndef f():\n\n    return 1\n\n# not a heading\n```"
    passages = split_passages(0, page(f"# Code\n\n{code}\n\nAfter the code, more words here."), target_chars=10)
    assert passages[0].text == code
    assert passages[0].heading == "Code"
    assert {p.heading for p in passages} == {"Code"}


def test_cjk_text_is_cut_at_its_full_stops() -> None:
    text = "".join(f"東京の天気は第{i}日目も晴れでした。" for i in range(200))
    passages = split_passages(0, page(text), target_chars=100, max_chars=200)
    assert len(passages) > 10
    assert all(len(p.text) <= 200 and p.text.endswith("。") for p in passages)
    assert "".join(p.text for p in passages) == text


def test_a_run_with_no_sentence_end_is_still_cut_to_the_maximum() -> None:
    passages = split_passages(0, page("x" * 2500), target_chars=600, max_chars=1000)
    assert [len(p.text) for p in passages] == [1000, 1000, 500]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet="abc .!?\n#-|東。", min_size=0, max_size=300),
            st.sampled_from(["# Head", "- item", "| a | b |", "```", "", "Title\n===", "東京。大阪。"]),
        ),
        max_size=30,
    ),
    st.integers(1, 300),
    st.integers(1, 400),
)
def test_passages_are_ordered_disjoint_slices_within_the_maximum(parts: list[str], target: int, most: int) -> None:
    text = "\n".join(parts)
    passages = split_passages(0, page(text), target_chars=target, max_chars=most)
    end = 0
    for i, p in enumerate(passages):
        assert p.index == i
        assert p.start >= end and p.end > p.start
        assert text[p.start : p.end] == p.text == p.text.strip()
        assert len(p.text) <= most
        end = p.end


def test_sentence_prefix_keeps_whole_sentences_only() -> None:
    text = "One two. Three four five. Six."
    assert sentence_prefix(text, 100) == text
    assert sentence_prefix(text, 26) == "One two. Three four five."
    assert sentence_prefix(text, 12) == "One two."
    assert sentence_prefix(text, 5) is None


# -- BM25 -------------------------------------------------------------------------------------


def test_tokens_are_lowercase_word_runs_and_single_cjk_characters() -> None:
    assert tokenize("Hello, World_2 café!") == ["hello", "world_2", "café"]
    assert tokenize("東京abc タワー 서울") == ["東", "京", "abc", "タ", "ワ", "ー", "서", "울"]


def test_bm25_matches_the_formula_worked_by_hand() -> None:
    # N=3, df(cat)=2: idf = ln(1 + (3 - 2 + .5) / (2 + .5)) = ln 1.6; lengths 2, 3, 1, average 2
    # "cat sat": tf 1, K = 1.2 * (.25 + .75 * 2/2) = 1.2, 1 * 2.2 / (1 + 1.2) = 1
    # "cat cat dog": tf 2, K = 1.2 * (.25 + .75 * 3/2) = 1.65, 2 * 2.2 / (2 + 1.65) = 4.4 / 3.65
    scores = bm25_scores("cat", ["cat sat", "cat cat dog", "dog"])
    idf = math.log(1.6)
    assert scores == pytest.approx([idf * 1.0, idf * 4.4 / 3.65, 0.0])


def reference_bm25(query: str, passages: list[str]) -> list[float]:
    """BM25 the plain way: every passage tokenized, every term counted."""
    stop = {"the", "of", "and", "a"}
    terms = list(dict.fromkeys(t for t in tokenize(query) if t not in stop))
    docs = [tokenize(p) for p in passages]
    if not docs:
        return []
    average = (sum(map(len, docs)) / len(docs)) or 1.0
    df = {t: sum(t in d for d in docs) for t in terms}
    scores = []
    for doc in docs:
        score = 0.0
        for t in terms:
            tf = doc.count(t)
            if tf:
                idf = math.log(1 + (len(docs) - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(doc) / average))
        scores.append(score)
    return scores


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="ab cd_É.,’\n東京", max_size=12),
    st.lists(st.text(alphabet="ab cd_É.,’\n\t東京-9", max_size=60), max_size=8),
)
def test_bm25_equals_the_plain_computation(query: str, passages: list[str]) -> None:
    assert bm25_scores(query, passages) == pytest.approx(reference_bm25(query, passages))


def test_a_rarer_term_weighs_more_and_stop_words_weigh_nothing() -> None:
    passages = ["the common word here", "the common rare here", "common and the rest"]
    scores = bm25_scores("the rare common", passages)
    assert scores[1] > scores[0] > 0 and scores[1] > scores[2] > 0
    assert bm25_scores("the rare common", passages) == bm25_scores("rare common", passages)
    assert bm25_scores("the of and", passages) == [0.0, 0.0, 0.0]
    assert bm25_scores("", []) == []


def test_a_cjk_query_matches_cjk_passages_character_by_character() -> None:
    passages = ["東京の天気は晴れです", "大阪は雨が降っています", "Tokyo weather is sunny"]
    scores = bm25_scores("東京の天気", passages)
    assert scores[0] > scores[1] >= 0
    assert scores[2] == 0
    assert bm25_scores("서울 날씨", ["서울의 날씨는 맑음", "부산 바다"])[0] > 0


def test_the_bm25_reranker_is_a_reranker() -> None:
    reranker: Reranker = BM25Reranker()
    assert reranker.score("cat", ["a cat", "a dog"]) == bm25_scores("cat", ["a cat", "a dog"])


def test_importing_the_ranker_loads_no_model() -> None:
    code = "import sys, websearch._reading._rank, websearch._reading._assemble; print(sorted(m for m in sys.modules if m.split('.')[0] in ('wordllama', 'tiktoken', 'numpy')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_wordllama_ranks_by_meaning_from_the_weights_in_its_wheel() -> None:
    pytest.importorskip("wordllama")
    reranker = WordLlamaReranker()
    scores = reranker.score(
        "how long do cats sleep", ["Felines doze for most of the day.", "The bond market fell on Tuesday."]
    )
    assert scores[0] > scores[1]
    assert reranker.score("anything", []) == []
    (alone,) = reranker.score("how long do cats sleep", ["Felines doze for most of the day."])  # rank() wants two
    assert alone == pytest.approx(scores[0], abs=1e-6)


def test_wordllama_re_ranks_only_bm25_s_best_passages() -> None:
    # Embedding every passage of five long pages took 0.4 s (715 passages); BM25's best
    # RERANK_TOP are re-ranked by meaning, the rest are not relevant.
    pytest.importorskip("wordllama")
    from websearch._reading._rank import RERANK_TOP

    passages = [f"Passage {i} about the asyncio event loop and its tasks." for i in range(RERANK_TOP + 20)]
    passages += ["Nothing here but the weather report for Tuesday."] * 5
    scores = WordLlamaReranker().score("asyncio event loop", passages)
    assert len(scores) == len(passages)
    assert sum(1 for s in scores if s != 0.0) == RERANK_TOP
    assert all(s == 0.0 for s in scores[-5:])  # no word in common, and BM25's best filled the places


# -- recency ----------------------------------------------------------------------------------


def test_recency_boosts_come_only_from_declared_dates() -> None:
    boosts = recency_boosts([None, "2024-06-01", "2023-06-02", "not a date", "2022-06-02T00:00:00Z"])
    assert boosts[0] == 1.0 and boosts[3] == 1.0
    assert boosts[1] == pytest.approx(1.1)
    assert boosts[2] == pytest.approx(1.05, abs=0.001)
    assert boosts[4] == pytest.approx(1.025, abs=0.001)
    assert recency_boosts([None, None]) == [1.0, 1.0]
    assert recency_boosts([]) == []


# -- near-duplicates --------------------------------------------------------------------------


def test_shingles_and_jaccard() -> None:
    a = shingles("one two three four five six")
    assert len(a) == 2
    assert shingles("one two") == shingles("One, two!")
    assert shingles("") == frozenset()
    assert jaccard(a, a) == 1.0
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_near_duplicates_keep_the_first_copy_in_the_order_given() -> None:
    base = sentences(12)
    edited = base.replace("topic 3.", "topic three.", 1)  # a word changed: still a copy
    other = sentences(12, start=100)
    overlapping = sentences(6) + " " + sentences(6, start=200)  # half the same: not a copy
    texts = [other, edited, base, overlapping]
    assert jaccard(shingles(base), shingles(edited)) >= 0.8
    assert near_duplicates(texts, [0, 1, 2, 3]) == {2: 1}
    assert near_duplicates(texts, [2, 1, 0, 3]) == {1: 2}
    assert near_duplicates(texts, [3, 0]) == {}


def test_near_duplicates_report_the_best_placed_kept_copy() -> None:
    text = sentences(10)
    assert near_duplicates([text, text, text], [1, 0, 2]) == {0: 1, 2: 1}


# -- tokens -----------------------------------------------------------------------------------


def test_the_estimate_counts_cjk_by_character_and_other_text_by_quarter_words() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("hello world") == 4  # ceil(5/4) twice
    assert estimate_tokens("a an the") == 3  # a short word is a whole token
    assert estimate_tokens("東京は晴れ") == 5
    assert estimate_tokens("東京abcdefgh 晴れ。") == 2 + 2 + 3
    cjk, english = "天" * 400, "word " * 100
    assert len(cjk) < len(english) and estimate_tokens(cjk) > estimate_tokens(english)


def test_tiktoken_is_not_fetched_when_its_encoding_is_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(_tokens, "_loaded", {})
    counter = token_counter()
    assert counter is ESTIMATE and counter.name == "estimate"
    assert token_counter() is counter  # decided once


def test_a_counter_over_a_tiktoken_encoding_counts_its_tokens() -> None:
    tiktoken = pytest.importorskip("tiktoken")
    encoding = tiktoken.Encoding(
        "bytes", pat_str=r"\S+|\s+", mergeable_ranks={bytes([i]): i for i in range(256)}, special_tokens={}
    )
    counter = TokenCounter.from_encoding(encoding)
    assert counter.name == "tiktoken:bytes"
    assert counter.count("ab 東") == 6
    assert counter.count("") == 0
