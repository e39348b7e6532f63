"""Fusion: canonical URLs, reciprocal-rank fusion with agreement first, the richest merge."""

from __future__ import annotations

import pytest

from websearch import EngineRank, SearchSource
from websearch._fusion import RRF_K, fuse, fusion_key


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://www.Example.com/a/", "https://example.com/a"),
        ("HTTPS://EXAMPLE.com:443/a", "https://example.com/a"),
        ("http://example.com:80/a", "https://example.com/a"),  # http and https name one page
        ("https://example.com/a#section", "https://example.com/a"),
        ("https://example.com/a?utm_source=x&utm_medium=y", "https://example.com/a"),
        ("https://example.com/a?fbclid=1&gclid=2&ref=hn", "https://example.com/a"),
        ("https://example.com/a?b=2&a=1", "https://example.com/a?a=1&b=2"),
    ],
)
def test_one_page_has_one_key(a: str, b: str) -> None:
    assert fusion_key(a) == fusion_key(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://example.com/a", "https://example.com/b"),
        ("https://example.com:8443/a", "https://example.com/a"),
        ("https://example.com/a?id=1", "https://example.com/a?id=2"),
        ("https://docs.example.com/a", "https://example.com/a"),
        ("https://example.com/A", "https://example.com/a"),  # paths are case-sensitive
    ],
)
def test_different_pages_have_different_keys(a: str, b: str) -> None:
    assert fusion_key(a) != fusion_key(b)


def test_what_is_not_http_is_its_own_key() -> None:
    assert fusion_key("ftp://Example.com/a/") == "ftp://Example.com/a/"
    assert fusion_key("not a url") == "not a url"
    assert fusion_key("https://user:pw@Example.com/a") == fusion_key("https://example.com/a")


def src(url: str, snippet: str | None = None, **kw: object) -> SearchSource:
    return SearchSource(url.rsplit("/", 1)[-1].upper(), url, snippet, **kw)  # type: ignore[arg-type]


def test_agreement_comes_first_then_the_fused_score() -> None:
    bing = [src("https://a.example/1"), src("https://b.example/2"), src("https://c.example/3")]
    mojeek = [src("https://d.example/4"), src("https://c.example/3"), src("https://b.example/2")]
    yahoo = [src("https://e.example/5"), src("https://c.example/3")]
    fused = fuse([("bing", bing), ("mojeek", mojeek), ("yahoo", yahoo)])
    assert [s.url for s in fused] == [
        "https://c.example/3",  # three engines
        "https://b.example/2",  # two: 1/62 + 1/63
        "https://a.example/1",  # one each, by score (rank 1) then by first appearance
        "https://d.example/4",
        "https://e.example/5",
    ]
    assert fused[0].engines == (EngineRank("bing", 3), EngineRank("mojeek", 2), EngineRank("yahoo", 2))
    assert fused[1].engines == (EngineRank("bing", 2), EngineRank("mojeek", 3))


def test_rrf_scores_follow_k_60() -> None:
    # one engine ranks x first, two others rank y third: 2/63 > 1/61, so agreement and score agree
    assert 2 / (RRF_K + 3) > 1 / (RRF_K + 1)
    fused = fuse([("a", [src("https://x.example/x"), src("https://y.example/y")]), ("b", [src("https://y.example/y")])])
    assert [s.url for s in fused] == ["https://y.example/y", "https://x.example/x"]


def test_the_merge_keeps_the_richest_fields_and_the_best_url() -> None:
    first = src("http://www.example.com/page/", "short")
    second = src(
        "https://example.com/page?utm_source=mojeek",
        "a much longer snippet",
        published_date="2026-11-01",
        author="Ada",
        highlights=("h1",),
    )
    third = src("https://example.com/page", "mid snippet", age_seconds=3600, highlights=("h1", "h2"))
    (merged,) = fuse([("bing", [first]), ("mojeek", [second]), ("yahoo", [third])])
    assert merged.url == "https://example.com/page?utm_source=mojeek"  # https wins over http, then rank
    assert merged.snippet == "a much longer snippet"
    assert (merged.published_date, merged.author, merged.age_seconds) == ("2026-11-01", "Ada", 3600)
    assert merged.highlights == ("h1", "h2")
    assert [e.provider for e in merged.engines] == ["bing", "mojeek", "yahoo"]


def test_an_https_url_is_shown_over_an_http_one_ranked_higher() -> None:
    # The order of the lists does not decide it: https first, http ranked higher later.
    fused = fuse(
        [
            ("bing", [src("https://x.example/a"), src("https://page.example/p")]),
            ("mojeek", [src("http://page.example/p")]),
        ]
    )
    assert fused[0].url == "https://page.example/p"  # agreed on by two engines: first
    assert fused[0].engines == (EngineRank("bing", 2), EngineRank("mojeek", 1))


def test_an_engine_listing_a_page_twice_counts_once_at_its_best_rank() -> None:
    fused = fuse([("bing", [src("https://a.example/x"), src("https://a.example/x/"), src("https://b.example/y")])])
    assert [(s.url, s.engines) for s in fused] == [
        ("https://a.example/x", (EngineRank("bing", 1),)),
        ("https://b.example/y", (EngineRank("bing", 3),)),
    ]


def test_the_limit_cuts_the_fused_list_and_nothing_is_lost_before_it() -> None:
    lists = [(f"e{j}", [src(f"https://s{j}.example/{i}") for i in range(20)]) for j in range(6)]
    assert len(fuse(lists)) == 120
    assert len(fuse(lists, 10)) == 10
    assert fuse([]) == ()
