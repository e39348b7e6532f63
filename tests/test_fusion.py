"""Fusion: canonical URLs, reciprocal-rank fusion with agreement first, the richest merge."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusion_reference import reference_fuse, reference_key
from websearch import EngineRank, SearchSource
from websearch._engine._fusion import RRF_K, fuse, fusion_key


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


def filler(engine: str, count: int) -> list[SearchSource]:
    """`count` pages only `engine` lists, to push the pages a test is about down its list."""
    return [src(f"https://{engine}-only.example/{i}") for i in range(count)]


def listed(engine: str, length: int, at: dict[int, str]) -> list[SearchSource]:
    """`engine`'s `length` results: the URLs of `at` at their ranks (1-based), pages of its own elsewhere."""
    sources = filler(engine, length)
    for rank, url in at.items():
        sources[rank - 1] = src(url)
    return sources


def test_ties_above_rank_60_go_to_the_first_appearance_by_rank_then_list() -> None:
    # x and y each have two engines at ranks 61 and 70, so their scores are equal; x is met first
    # (list a, rank 70), y first appears higher (list b, rank 61): y comes first
    x, y = "https://x.example/", "https://y.example/"
    a = listed("a", 70, {70: x})
    b = listed("b", 70, {61: y})
    c = listed("c", 70, {61: x, 70: y})
    fused = fuse([("a", a), ("b", b), ("c", c)])
    assert [(s.url, s.engines) for s in fused[:2]] == [
        (y, (EngineRank("b", 61), EngineRank("c", 70))),
        (x, (EngineRank("a", 70), EngineRank("c", 61))),
    ]
    # single-engine pages at the same rank tie too: by rank, then by list
    assert [(e.provider, e.rank) for s in fused[2:8] for e in s.engines] == [
        ("a", 1), ("b", 1), ("c", 1), ("a", 2), ("b", 2), ("c", 2),
    ]  # fmt: skip
    tail = [(s.engines[0].provider, s.engines[0].rank) for s in fused if s.url not in (x, y)]
    assert tail == sorted(tail, key=lambda e: (e[1], e[0]))


def test_the_order_of_two_engine_pages_follows_k_60_above_rank_60() -> None:
    # with k = 59 p1 would pass p2, with k = 61 p4 would pass p3
    p1, p2, p3, p4 = (f"https://p{i}.example/" for i in range(1, 5))
    a = listed("a", 70, {1: p1, 14: p4, 23: p2, 34: p3})
    b = listed("b", 70, {1: p3, 14: p4, 23: p2, 70: p1})
    fused = fuse([("a", a), ("b", b)], 4)
    assert [s.url for s in fused] == [p3, p4, p2, p1]


# -- the same keys and the same fused lists as the fusion before its speed-up (fusion_reference) ---

ODD = st.text(st.sampled_from("aZ/?#&=:@.% _-\u212a\u0130\u017f\u03a3\t"), max_size=6)  # separators, odd cases
PARAM_NAMES = st.sampled_from(
    ["id", "q", "utm_source", "UTM_Medium", "fbclid", "Ref", "si", "msclkid", "ms\u212alid", ""]
)
PARAMS = st.lists(st.tuples(st.one_of(PARAM_NAMES, ODD), st.sampled_from(["", "=", "=1", "=x&y"])), max_size=4).map(
    lambda params: "&".join(name + value for name, value in params)
)
URLS = st.one_of(
    st.builds(
        "{}{}{}{}{}{}{}{}{}{}".format,
        st.sampled_from(["", " ", "\n"]),
        st.sampled_from(["https", "http", "HTTPS", "hTTp", "ftp", "", "https:/"]),
        st.sampled_from(["://", "://", ":", ""]),
        st.sampled_from(["", "user:pw@", "a@b@"]),
        st.sampled_from(["", "www.", "WWW.", "www.www."]),
        st.sampled_from(["example.com", "Example.COM", "docs.example.com", "", "[::1]"]),
        st.sampled_from(["", ":80", ":443", ":8443", ":"]),
        st.one_of(st.sampled_from(["", "/", "/a/", "/A//", "/a/b.html"]), ODD),
        st.one_of(st.just(""), PARAMS.map(lambda query: "?" + query)),
        st.one_of(st.sampled_from(["", "#", "#top", "#a?b=1"]), ODD),
    ),
    st.text(max_size=40),
)


@settings(max_examples=1000, deadline=None, database=None)
@given(URLS)
def test_keys_are_the_keys_before(url: str) -> None:
    assert fusion_key(url) == reference_key(url)


POOL = ("https://a.example/x", "http://www.a.example/x/", "https://b.example/?id=1", "https://b.example?id=1&ref=x")
SOURCES = st.builds(
    SearchSource,
    title=st.sampled_from(["", "T", "Title"]),
    url=st.one_of(st.sampled_from(POOL), st.text(max_size=4)),
    snippet=st.sampled_from([None, "", "s", "a longer snippet"]),
    published_date=st.sampled_from([None, "2026-11-01"]),
    age_seconds=st.sampled_from([None, 0, 60]),
    author=st.sampled_from([None, "Ada"]),
    highlights=st.lists(st.sampled_from(["h1", "h2"]), max_size=2).map(tuple),
)


@settings(max_examples=300, deadline=None, database=None)
@given(
    st.lists(st.tuples(st.sampled_from(["bing", "mojeek", "yahoo"]), st.lists(SOURCES, max_size=8)), max_size=5),
    st.one_of(st.none(), st.integers(0, 10)),
)
def test_fused_lists_are_the_lists_before(lists: list[tuple[str, list[SearchSource]]], limit: int | None) -> None:
    assert fuse(lists, limit) == reference_fuse(lists, limit)
