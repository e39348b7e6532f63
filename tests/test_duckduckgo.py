"""DuckDuckGo against a loopback fake that serves real-looking HTML pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FakeClock, make_client, messages
from ddg_reference import parse_with_spec_regex
from websearch import WebSearch
from websearch._providers.duckduckgo import CHALLENGE_MESSAGE, HEADERS, parse_results, unwrap_href
from websearch.testing import DdgResult, FakeDuckDuckGo, Reply
from websearch.testing.duckduckgo import challenge_page, no_results_page, results_page, sample_results


def client(env: dict[str, str], clock: FakeClock | None = None) -> WebSearch:
    return make_client(env=env, clock=clock or FakeClock())


async def test_request_is_the_spec_form_and_headers(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    async with client(env) as ws:
        response = await ws.asearch("rust async book", provider="duckduckgo")
    assert response.ok
    req = ddg.last
    assert (req.method, req.path, req.query) == ("POST", "/html/", ())
    assert req.form() == [("q", "rust async book"), ("kl", "us-en"), ("b", "")]
    for name, value in HEADERS.items():
        assert req.headers[name.lower()] == value


@pytest.mark.parametrize(("recency", "df"), [("day", "d"), ("week", "w"), ("month", "m"), ("year", "y")])
async def test_recency_maps_to_df(ddg: FakeDuckDuckGo, env: dict[str, str], recency: str, df: str) -> None:
    async with client(env) as ws:
        response = await ws.asearch("q", recency=recency)
    assert ddg.last.form() == [("q", "q"), ("kl", "us-en"), ("df", df), ("b", "")]
    assert messages(response) == ()


async def test_parses_results_unwraps_redirects_and_decodes(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.results = [
        DdgResult("First &amp; result", "https://example.com/a?x=1&y=2", "Snippet <b>one</b>"),
        DdgResult("Second", "https://example.org/b", ""),
        DdgResult("Direct", "https://direct.example.net/c", "plain", direct_href=True),
    ]
    async with client(env) as ws:
        response = await ws.asearch("x")
    assert [(s.title, s.url, s.snippet) for s in response.sources] == [
        ("First & result", "https://example.com/a?x=1&y=2", "Snippet one"),
        ("Second", "https://example.org/b", None),
        ("Direct", "https://direct.example.net/c", "plain"),
    ]
    assert response.provider == "duckduckgo"
    assert response.answer is None and response.request_id is None


async def test_ads_and_duplicates_are_dropped(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.results = [
        DdgResult("Ad", "https://shop.example.com", "buy now", ad=True),
        DdgResult("One", "https://one.example.com", "1"),
        DdgResult("One again", "https://one.example.com", "dup"),
        DdgResult("Two", "https://two.example.com", "2"),
    ]
    async with client(env) as ws:
        response = await ws.asearch("x")
    assert [s.url for s in response.sources] == ["https://one.example.com", "https://two.example.com"]


@pytest.mark.parametrize(
    ("kwargs", "expected", "notice"),
    [
        ({}, 10, None),
        ({"limit": 3}, 3, None),
        ({"num_search_results": 4, "limit": 9}, 4, "limit=9 not applied: num_search_results=4 takes precedence"),
        ({"limit": 999}, 20, "limit=999 clamped to 20: DuckDuckGo returns at most 20 results"),
    ],
)
async def test_count_is_clamped(
    ddg: FakeDuckDuckGo, env: dict[str, str], kwargs: dict[str, int], expected: int, notice: str | None
) -> None:
    async with client(env) as ws:
        response = await ws.asearch("x", **kwargs)
    assert len(response.sources) == expected
    if notice:
        assert any(n.startswith(notice) for n in messages(response)), messages(response)
    else:
        assert messages(response) == ()


async def test_unsupported_parameters_become_notices(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    async with client(env) as ws:
        response = await ws.asearch("x", max_tokens=100, temperature=0.5)
    assert messages(response) == (
        "max_tokens=100 not applied: DuckDuckGo does not support it",
        "temperature=0.5 not applied: DuckDuckGo does not support it",
    )


@pytest.mark.parametrize("status", [200, 202])
async def test_bot_challenge_is_an_error_not_no_results(ddg: FakeDuckDuckGo, env: dict[str, str], status: int) -> None:
    ddg.enqueue(Reply(status, challenge_page(), content_type="text/html"))
    async with client(env) as ws:
        response = await ws.asearch("x")
    assert response.error == CHALLENGE_MESSAGE
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (429, "blocked")


async def test_202_results_page_is_parsed(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.enqueue(Reply(202, results_page("x", sample_results("x", 3)), content_type="text/html"))
    async with client(env) as ws:
        response = await ws.asearch("x")
    assert len(response.sources) == 3


async def test_http_error_message_is_exact(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.enqueue(Reply(503, "<html>unavailable</html>", content_type="text/html"))
    async with client(env) as ws:
        response = await ws.asearch("x")
    assert response.error == "DuckDuckGo HTML error (503)"
    assert response.attempts[0].status == 503


async def test_retry_after_is_reported(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.enqueue(Reply(429, "slow down", headers={"Retry-After": "30"}))
    async with client(env) as ws:
        response = await ws.asearch("x")
    assert response.error == "DuckDuckGo HTML error (429); retry after 30 s"
    assert (response.attempts[0].error_kind, response.attempts[0].retry_after_s) == ("rate_limited", 30.0)


async def test_no_results_page_is_a_204_failure(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.enqueue(Reply(200, no_results_page("zzzz"), content_type="text/html"))
    async with client(env) as ws:
        response = await ws.asearch("zzzz")
    assert response.error == "DuckDuckGo returned no renderable search content."
    assert response.attempts[0].status == 204


def test_unwrap_href_rules() -> None:
    assert unwrap_href("//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.com%2Fx&amp;rut=1") == "https://a.com/x"
    assert unwrap_href("//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.com%2Fx%2By&rut=1") == "https://a.com/x+y"
    assert unwrap_href("//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.com%2Fa+b") == "https://a.com/a+b"
    assert unwrap_href("//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.com%2Fx#frag") == "https://a.com/x#frag"
    assert unwrap_href("//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.com%2F%C3%A9") == "https://a.com/é"
    assert unwrap_href("//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.com%2F%E9") is None  # invalid UTF-8
    assert unwrap_href("//example.com/p") == "https://example.com/p"
    assert unwrap_href("http://example.com/p") == "http://example.com/p"
    assert unwrap_href("/relative") is None
    # A redirect whose target is not a web page is no result (javascript:, data:, a bare path).
    assert unwrap_href("//duckduckgo.com/l/?uddg=javascript%3Aalert(1)&rut=1") is None
    assert unwrap_href("//duckduckgo.com/l/?uddg=data%3Atext%2Fhtml%2Cx") is None
    assert unwrap_href("//duckduckgo.com/l/?uddg=%2Fpath") is None
    assert unwrap_href("//duckduckgo.com/l/?uddg=javascript%3Aa+b") is None  # with "+": the strict decoder


@pytest.mark.parametrize("n", [1, 10, 30])
def test_parser_agrees_with_the_spec_regex_rules(n: int) -> None:
    results = sample_results("quic vs tcp", n)
    results.insert(
        min(2, n), DdgResult("Under &lt;b&gt; tag", "https://x.example.com/?a=1&b=2", "Ex<b>am</b>ple &#39;q&#39;")
    )
    results.append(DdgResult("Direct", "https://direct.example.com/d", "&quot;quoted&quot;", direct_href=True))
    page = results_page("quic vs tcp", results)
    ours = [(s.title, s.url, s.snippet) for s in parse_results(page, 40)]
    assert ours == parse_with_spec_regex(page, 40, tag="")  # tags add no spaces: see the module docstring
    assert ours != parse_with_spec_regex(page, 40)  # the spec's literal rule would read "Ex am ple"
    assert len(ours) == n + 2


def test_snippets_that_are_not_links_are_found_too() -> None:
    page = results_page("q", sample_results("q", 3))
    page = page.replace('<a class="result__snippet"', '<div class="result__snippet"', 2).replace(
        '</a>\n            <div class="clear">', '</div>\n            <div class="clear">', 2
    )
    assert page.count('<div class="result__snippet"') == 2
    ours = [(s.title, s.url, s.snippet) for s in parse_results(page, 40)]
    assert ours == parse_with_spec_regex(page, 40, tag="")
    assert all(snippet for _, _, snippet in ours)


def test_empty_uddg_is_not_a_url() -> None:
    assert unwrap_href("//duckduckgo.com/l/?uddg=&rut=1") == "https://duckduckgo.com/l/?uddg=&rut=1"
    assert unwrap_href("//duckduckgo.com/l/?x=1&uddg=https%3A%2F%2Fb.example") == "https://b.example"
    assert (
        unwrap_href("//duckduckgo.com/l/?xuddg=https%3A%2F%2Fb.example")
        == "https://duckduckgo.com/l/?xuddg=https%3A%2F%2Fb.example"
    )


def test_retained_trees_are_bounded() -> None:
    """Two recent pages are kept so lexbor's heap is reused; never more, never a large one."""
    from websearch._providers import duckduckgo

    page = results_page("q", sample_results("q", 3)).encode()
    for _ in range(5):
        assert len(parse_results(page)) == 3
    assert len(duckduckgo._RECENT_TREES) == 2
    assert all(part.startswith(b'<div id="links"') for part, _ in duckduckgo._RECENT_TREES)
    kept = list(duckduckgo._RECENT_TREES)
    big = results_page("q", sample_results("q", 3) * 200).encode()
    assert len(big) > duckduckgo._RETAIN_MAX
    assert len(parse_results(big)) == 3  # duplicates dropped
    assert list(duckduckgo._RECENT_TREES) == kept


def test_fixture_page_is_realistic_size() -> None:
    page = results_page("rust async book", sample_results("rust async book", 30))
    assert 40_000 < len(page) < 60_000


async def test_sync_api(ddg: FakeDuckDuckGo, env: dict[str, str], tmp_path: Path) -> None:
    with make_client(env=env) as ws:
        response = ws.search("sync query", limit=2)
    assert len(response.sources) == 2
    assert ddg.last.form()[0] == ("q", "sync query")


# -- the richer parameters --------------------------------------------------------------------

ONLY = "DuckDuckGo only filters by the past day, week, month or year"


@pytest.mark.parametrize(
    ("kwargs", "df", "notices"),
    [
        ({"recency_hours": 20}, "d", (f"recency_hours=20 widened to df=d (the past day): {ONLY}",)),
        ({"recency_days": 3}, "w", (f"recency_days=3 widened to df=w (the past week): {ONLY}",)),
        (
            {"recency_days": 20, "recency": "day"},
            "m",
            (
                'recency="day" not applied: recency_days takes precedence',
                f"recency_days=20 widened to df=m (the past month): {ONLY}",
            ),
        ),
        (
            {"start_published_date": "2026-02-01"},
            "y",
            (f'start_published_date="2026-02-01" widened to df=y (the past year): {ONLY}',),
        ),
        (
            {"start_published_date": "2020-02-01"},
            None,
            (
                'start_published_date="2020-02-01" not applied: the window is longer than DuckDuckGo\'s longest (a year)',
            ),
        ),
    ],
)
async def test_richer_dates_are_the_narrowest_df(
    ddg: FakeDuckDuckGo, env: dict[str, str], kwargs: dict[str, object], df: str | None, notices: tuple[str, ...]
) -> None:
    async with client(env) as ws:
        response = await ws.asearch("q", provider="duckduckgo", **kwargs)
    assert response.ok and messages(response) == notices
    assert ddg.last.form() == [("q", "q"), ("kl", "us-en"), *([("df", df)] * bool(df)), ("b", "")]


async def test_richer_domains_are_site_operators(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    async with client(env) as ws:
        response = await ws.asearch("q", provider="duckduckgo", include_domains=["a.org"], exclude_domains=["b.org"])
    assert ddg.last.form() == [("q", "q site:a.org -site:b.org"), ("kl", "us-en"), ("b", "")]
    assert messages(response) == (
        'include_domains=["a.org"] applied as site: operators in the query: DuckDuckGo has no domain filter',
        'exclude_domains=["b.org"] applied as -site: operators in the query: DuckDuckGo has no domain filter',
    )


# -- what real result pages showed (issue: real-world fidelity) ---------------------------------


async def test_the_end_of_results_row_is_not_a_source(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    eof = DdgResult("EOF", "http://www.google.com/search?hl=en&amp;q=zzz", direct_href=True)
    ddg.enqueue(Reply(200, results_page("zzz", [eof]), content_type="text/html"))
    ddg.enqueue(
        Reply(
            200, results_page("zzz", [DdgResult("Real", "https://real.example/", "s"), eof]), content_type="text/html"
        )
    )
    async with client(env) as ws:
        only_eof = await ws.asearch("zzz")
        with_eof = await ws.asearch("zzz")
    assert (only_eof.attempts[0].error_kind, only_eof.attempts[0].status) == ("no_results", 204)
    assert [s.url for s in with_eof.sources] == ["https://real.example/"]


async def test_a_query_that_names_the_challenge_is_not_a_challenge(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    query = "anomaly.js source map anomaly-modal"
    ddg.enqueue(Reply(200, results_page(query, sample_results(query, 3)), content_type="text/html"))
    async with client(env) as ws:
        response = await ws.asearch(query)
    assert response.ok, response.error
    assert len(response.sources) == 3


def test_the_challenge_is_told_by_its_structure() -> None:
    from websearch._providers.duckduckgo import is_challenge

    assert is_challenge(challenge_page().encode())
    page = results_page("anomaly.js anomaly-modal challenge-form", sample_results("x", 2)).encode()
    assert not is_challenge(page)
    assert not is_challenge(b"<html><body><p>anomaly.js</p></body></html>")


def test_inline_highlight_tags_add_no_spaces() -> None:
    page = results_page(
        "antani",
        [
            DdgResult("<b>Eino</b>-ext docs", "https://a.example/", "Come se fosse <b>antani</b>: la storia"),
            DdgResult("B", "https://b.example/", "&quot;<b>Foo</b> was here&quot; and   <i>more</i>\n text"),
        ],
    )
    sources = parse_results(page.encode())
    assert [s.title for s in sources] == ["Eino-ext docs", "B"]
    assert [s.snippet for s in sources] == ["Come se fosse antani: la storia", '"Foo was here" and more text']


def test_results_that_are_not_http_are_dropped() -> None:
    page = results_page(
        "q",
        [
            DdgResult("Script", "javascript:alert(1)", "x"),
            DdgResult("Data", "data:text/html,hi", "x", direct_href=True),
            DdgResult("Mail", "mailto:a@b.example", "x", direct_href=True),
            DdgResult("Web", "https://web.example/", "x"),
        ],
    )
    assert [s.url for s in parse_results(page.encode())] == ["https://web.example/"]


def test_a_page_given_as_text_with_a_lone_surrogate_parses() -> None:
    page = results_page("q", sample_results("q", 2)).replace("part 1", "part \ud800 1")
    sources = parse_results(page, 10)
    assert len(sources) == 2 and "\ud800" not in sources[0].title


def test_parse_results_keeps_at_most_its_limit_in_page_order() -> None:
    """The parse stops at `limit` (the paging layer cuts the fused list too, so a search alone
    would not show a parse that read past it)."""
    page = results_page("q", sample_results("q", 12)).encode()
    everything = parse_results(page, 40)
    assert len(everything) == 12
    assert parse_results(page, 5) == everything[:5]
