"""The notices' one vocabulary (`_notices`): each constructor's sentence, values shown as the
caller wrote them (JSON, non-ASCII kept, tuples as lists), and `cut_short` the one kind of
`partial` that keeps an answer out of the cache (tested at the engine in test_cache_rules.py)."""

from __future__ import annotations

import pytest

from websearch._core._notices import (
    NOTICE_KINDS,
    CutShort,
    Notice,
    approximated,
    clamped,
    cut_short,
    dropped,
    fallback,
    not_applied,
    not_supported,
    overridden,
    partial,
    replaced,
    results_dropped,
    shown,
    widened,
)


@pytest.mark.parametrize(
    ("notice", "kind", "message"),
    [
        (not_supported("summary", True, "Brave"), "not_applied", "summary=true not applied: Brave does not support it"),
        (not_applied("limit", 5, "the plan has none"), "not_applied", "limit=5 not applied: the plan has none"),
        (
            approximated("recency", "day", "tbs=qdr:d", "the nearest"),
            "approximated",
            'recency="day" applied as tbs=qdr:d: the nearest',
        ),
        (widened("recency_hours", 3, "a day", "days only"), "widened", "recency_hours=3 widened to a day: days only"),
        (clamped("limit", 99, 30, "at most 30"), "clamped", "limit=99 clamped to 30: at most 30"),
        (
            overridden("recency_days", 3, "recency_hours"),
            "overridden",
            "recency_days=3 not applied: recency_hours takes precedence",
        ),
        (replaced("mode", "neural", 'mode="auto"', "gone"), "replaced", 'mode="neural" searched as mode="auto": gone'),
        (dropped("category", "tweet", "gone"), "dropped", 'category="tweet" dropped: gone'),
        (
            results_dropped("include_domains", ("a.org",), 1, "outside these hosts"),
            "dropped",
            'include_domains=["a.org"] enforced: 1 result outside these hosts removed',
        ),
        (
            results_dropped("exclude_domains", ("a.org",), 2, "on these hosts"),
            "dropped",
            'exclude_domains=["a.org"] enforced: 2 results on these hosts removed',
        ),
        (fallback("provider", "exa", "Exa failed; Brave served"), "fallback", "Exa failed; Brave served"),
        (partial("a step failed"), "partial", "a step failed"),
        (cut_short("page 2 did not answer in time"), "partial", "page 2 did not answer in time"),
    ],
)
def test_each_constructor_says_its_sentence(notice: Notice, kind: str, message: str) -> None:
    assert (notice.kind, notice.message, str(notice)) == (kind, message, message)
    assert notice.kind in NOTICE_KINDS


def test_values_are_shown_as_the_caller_wrote_them() -> None:
    # JSON, with what is not ASCII as it was written: "b\u00fccher.de" is not what the agent sent.
    assert shown("include_domains", ("bücher.de", "例え.jp")) == 'include_domains=["bücher.de", "例え.jp"]'
    assert shown("query", "naïve") == 'query="naïve"'
    assert shown("summary", False) == "summary=false"
    assert shown("x", object).startswith("x=<class")  # not JSON: its repr, never an error


def test_a_notices_value_is_json_ready() -> None:
    # Parameters arrive as tuples; a notice's value is what the caller sent: lists, nested too.
    notice = dropped("include_domains", ("a.org", ("b.org",)), "why")
    assert notice.value == ["a.org", ["b.org"]] and type(notice.value) is list
    assert type(notice.value[1]) is list
    assert partial("m", "exclude_domains", ("c.org",)).value == ["c.org"]
    assert cut_short("m", "limit", 20).value == 20


def test_cut_short_is_a_partial_notice_of_its_own_class() -> None:
    cut, plain = cut_short("page 2 did not answer in time"), partial("page 2 did not answer in time")
    assert isinstance(cut, CutShort) and isinstance(cut, Notice)
    assert not isinstance(plain, CutShort)
    assert (cut.param, cut.value, cut.kind, cut.message) == (plain.param, plain.value, plain.kind, plain.message)
