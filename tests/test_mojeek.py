"""Mojeek against a loopback fake that serves pages shaped like www.mojeek.com's, and a real saved page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FakeClock, make_client, messages, provider_context, run_cli
from websearch import SearchParams, SearchResponse
from websearch._providers.mojeek import (
    BLOCKED_MESSAGE,
    CAPTCHA_MESSAGE,
    HEADERS,
    MAX_PAGES,
    PROVIDER,
    is_challenge,
    parse_results,
    target,
)
from websearch.testing import Reply
from websearch.testing.mojeek import (
    FakeMojeek,
    MojeekResult,
    blocked_page,
    captcha_page,
    no_results_page,
    results_page,
    sample_results,
)

PAGES = Path(__file__).parent / "pages" / "mojeek"
WHOLE_DAYS = "Mojeek's date filters take dates only"


@pytest.fixture
def mojeek() -> Iterator[FakeMojeek]:
    with FakeMojeek() as fake:
        yield fake


@pytest.fixture
def menv(config_dir: Path, mojeek: FakeMojeek) -> dict[str, str]:
    return {"WEBSEARCH_CONFIG_DIR": str(config_dir), **mojeek.env}


async def search(env: dict[str, str], query: str = "rust async book", **params: Any) -> SearchResponse:
    async with make_client(env=env, clock=FakeClock()) as ws:
        return await ws.asearch(query, provider="mojeek", **params)


def page(results: list[MojeekResult], query: str = "q") -> Reply:
    return Reply(200, results_page(query, results), content_type="text/html; charset=UTF-8")


# -- the request --------------------------------------------------------------------------------


async def test_request_is_a_browser_get_with_the_query_only(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    response = await search(menv)
    assert response.ok and response.provider == "mojeek"
    req = mojeek.last
    assert (req.method, req.path, req.query, req.body) == ("GET", "/search", (("q", "rust async book"),), b"")
    for name, value in HEADERS.items():
        assert req.headers[name.lower()] == value
    assert req.headers["cookie"] == "arc=us; lb=en"  # region and language, as Mojeek's preferences store them
    assert "content-type" not in req.headers
    assert len(mojeek.requests) == 1
    assert messages(response) == ()


@pytest.mark.parametrize(
    ("recency", "since"), [("day", "20261129"), ("week", "20261123"), ("month", "20261031"), ("year", "20251130")]
)
async def test_recency_is_since_that_day(mojeek: FakeMojeek, menv: dict[str, str], recency: str, since: str) -> None:
    response = await search(menv, recency=recency)
    assert mojeek.last.query == (("q", "rust async book"), ("since", since))
    assert response.ok and messages(response) == ()


def test_the_plan_holds_every_page_request(config_dir: Path) -> None:
    ctx = provider_context(config_dir, {"WEBSEARCH_CONFIG_DIR": str(config_dir)})
    plan = PROVIDER.plan(SearchParams("q", limit=30, recency="week"), ctx)
    assert plan.request is not None and plan.request.url == "https://www.mojeek.com/search"
    assert [list(r.params) for r in plan.state] == [
        [("q", "q"), ("since", "20261123")],
        [("q", "q"), ("since", "20261123"), ("s", "11")],
        [("q", "q"), ("since", "20261123"), ("s", "21")],
    ]
    assert plan.state[0] is plan.request and MAX_PAGES == 3


# -- parsing ------------------------------------------------------------------------------------


async def test_parses_titles_links_and_snippets_as_written(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    mojeek.results = [
        MojeekResult("First &amp; result", "https://example.com/a?x=1&y=2", "Snippet <strong>one</strong>"),
        MojeekResult("Second", "https://example.org/b"),
        MojeekResult("<strong>Eino</strong>-ext docs", "http://plain.example.net/c", "Come se fosse <b>antani</b>: la"),
    ]
    response = await search(menv)
    assert [(s.title, s.url, s.snippet) for s in response.sources] == [
        ("First & result", "https://example.com/a?x=1&y=2", "Snippet one"),
        ("Second", "https://example.org/b", None),
        ("Eino-ext docs", "http://plain.example.net/c", "Come se fosse antani: la"),
    ]
    assert response.answer is None and response.request_id is None
    assert all(s.published_date is None for s in response.sources)


def test_links_are_direct_and_kept_as_they_are() -> None:
    """Mojeek links straight to the target: nothing to unwrap, the query string kept."""
    assert (
        target("https://a.example/x?u=https%3A%2F%2Fb.example&y=1")
        == "https://a.example/x?u=https%3A%2F%2Fb.example&y=1"
    )
    assert target("http://a.example/") == "http://a.example/"
    assert target("//cdn.example/p") == "https://cdn.example/p"
    assert target("https://blog.mojeek.com/2024/12/post.html") == "https://blog.mojeek.com/2024/12/post.html"
    assert target("https://www.mojeek.com/about/") == "https://www.mojeek.com/about/"
    for internal in (
        "/search?q=site%3Aa.example+q",
        "https://www.mojeek.com/search?q=q&mal=1",
        "https://mojeek.com/search/?q=q",
        "search?q=x",
        "",
    ):
        assert target(internal) is None, internal
    for other in (
        "javascript:alert(1)",
        "mailto:a@b.example",
        "ftp://files.example/x",
        "data:text/html,hi",
        "https://",
    ):
        assert target(other) is None, other


def test_a_block_without_a_title_link_falls_back_to_the_breadcrumb_link() -> None:
    html = results_page("q", [MojeekResult("Plain <em>heading</em>", "https://ob.example/x", "s", no_title_link=True)])
    assert [(s.title, s.url) for s in parse_results(html)] == [("Plain heading", "https://ob.example/x")]


def test_only_the_result_list_is_read() -> None:
    """The header, options bar, pagination, "Try elsewhere", the summary link, the `p.more` site:
    searches and the footer are links too, none of them a result (and Mojeek's ads are added by a
    script, never served in the HTML)."""
    html = results_page("q", sample_results("q", 3))
    assert html.count("<a ") > 40
    assert [s.url for s in parse_results(html)] == [r.url for r in sample_results("q", 3)]


async def test_internal_non_http_and_duplicate_links_are_dropped(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    mojeek.results = [
        MojeekResult("Script", "javascript:alert(1)", "x"),
        MojeekResult("Another search", "https://www.mojeek.com/search?q=more", "x"),
        MojeekResult("Relative", "/search?q=site%3Aa.example", "x"),
        MojeekResult("Mail", "mailto:a@b.example", "x"),
        MojeekResult("One", "https://one.example/", "1"),
        MojeekResult("One again", "https://one.example/", "dup"),
        MojeekResult("Mojeek's blog", "https://blog.mojeek.com/post", "2"),
    ]
    response = await search(menv)
    assert [(s.title, s.url) for s in response.sources] == [
        ("One", "https://one.example/"),
        ("Mojeek's blog", "https://blog.mojeek.com/post"),
    ]


def test_the_real_saved_page() -> None:
    """tests/pages/mojeek/javascript_tutorial.html (see SOURCE.md): ten results, r2 without a
    snippet, r3 a `clu-result`, titles from `h2 a.title` (never the breadcrumb), whitespace folded."""
    raw = (PAGES / "javascript_tutorial.html").read_bytes()
    sources = parse_results(raw)
    assert [s.url for s in sources] == [
        "https://javascript.info/",
        "https://www.w3schools.com/js/",
        "https://www.w3schools.com/",
        "http://javascriptkit.com/javatutors/",
        "https://www.geeksforgeeks.org/javascript/javascript-tutorial/",
        "https://www.javascripttutorial.net/",
        "https://www.tutorialspoint.com/javascript/index.htm",
        "https://www.scaler.com/topics/javascript/",
        "https://trans4mind.com/personal_development/JavaScript/index.html",
        "https://smartwebby.com/DHTML/",
    ]
    assert sources[0].title == "The Modern JavaScript Tutorial"
    assert sources[0].snippet == (
        "The Modern JavaScript Tutorial ... Main course contains 2 parts which cover JavaScript as a programming "
        "language and working with a browser."
    )
    assert (sources[1].title, sources[1].snippet) == ("w3schools.com/js", None)
    assert sources[7].title == "JavaScript Tutorial | Learn JavaScript - Scaler Topics"
    assert sources[9].snippet == (
        "Web Design Tutorials > Dreamweaver | Fireworks | Flash | Javascript & DHTML | PHP & MySQL | SEO & Promotion"
    )
    assert not is_challenge(raw)
    assert [s.url for s in parse_results(raw, 3)] == [s.url for s in sources[:3]]


async def test_the_real_saved_page_through_a_search(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    mojeek.enqueue(Reply(200, (PAGES / "javascript_tutorial.html").read_bytes(), content_type="text/html"))
    response = await search(menv, "javascript tutorial")
    assert response.ok and len(response.sources) == 10 and len(mojeek.requests) == 1


def test_fixture_page_is_realistic() -> None:
    html = results_page("rust async book", sample_results("rust async book", 10))
    assert 12_000 < len(html) < 40_000  # the real page is 39 KB after Prettier, less as served
    assert html.count('<!--rs--><li class="r') == 10
    assert len(parse_results(html)) == 10


# -- paging -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "count", "starts"),
    [
        ({}, 10, [None]),
        ({"limit": 3}, 3, [None]),
        ({"limit": 10}, 10, [None]),
        ({"limit": 12}, 12, [None, "11"]),
        ({"limit": 25}, 25, [None, "11", "21"]),
        ({"num_search_results": 30}, 30, [None, "11", "21"]),
    ],
)
async def test_a_count_above_one_page_asks_for_the_next_pages(
    mojeek: FakeMojeek, menv: dict[str, str], params: dict[str, int], count: int, starts: list[str | None]
) -> None:
    response = await search(menv, **params)
    assert [r.args.get("s") for r in mojeek.requests] == starts
    assert len(response.sources) == count and len({s.url for s in response.sources}) == count
    assert [s.url for s in response.sources] == [r.url for r in sample_results("rust async book")][:count]
    assert messages(response) == ()


async def test_the_count_is_clamped_to_three_pages(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    response = await search(menv, limit=999)
    assert len(response.sources) == 30 and len(mojeek.requests) == 3
    assert messages(response) == ("limit=999 clamped to 30: Mojeek returns at most 30 results",)


async def test_num_search_results_wins_over_limit(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    response = await search(menv, num_search_results=4, limit=9)
    assert len(response.sources) == 4
    assert messages(response) == ("limit=9 not applied: num_search_results=4 takes precedence",)


async def test_paging_stops_at_the_no_results_page(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    mojeek.results = sample_results("q", 12)
    response = await search(menv, limit=30)
    assert [r.args.get("s") for r in mojeek.requests] == [None, "11", "21"][:2]
    assert len(response.sources) == 12 and messages(response) == ()


async def test_paging_stops_when_a_page_adds_nothing_new(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    first = sample_results("q", 10)
    mojeek.enqueue(page(first), page(first))
    response = await search(menv, limit=30)
    assert len(mojeek.requests) == 2 and len(response.sources) == 10


async def test_a_later_page_blocked_keeps_the_earlier_pages(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    mojeek.enqueue(page(sample_results("q", 10)), Reply(403, blocked_page(), content_type="text/html"))
    response = await search(menv, limit=20)
    assert response.ok and len(response.sources) == 10
    assert messages(response) == (f"Mojeek page 2 failed, so the results stop at page 1: {BLOCKED_MESSAGE}",)


async def test_the_first_page_blocked_fails_the_search(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    mojeek.enqueue(Reply(403, blocked_page(), content_type="text/html"))
    response = await search(menv, limit=25)
    assert not response.ok and len(mojeek.requests) == 1
    assert (response.attempts[0].error_kind, response.error) == ("blocked", BLOCKED_MESSAGE)


async def test_the_fake_refuses_what_mojeek_refuses(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    """`s=1` (or `s=0`) on page 1 and an empty parameter draw the 403, so websearch sends neither."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        for query in ("q=x&s=1", "q=x&s=0", "q=x&fmt=", "q=x&s=11", "q=x"):
            async with session.get(f"{mojeek.base_url}/search?{query}") as reply:
                assert reply.status == (403 if query in ("q=x&s=1", "q=x&s=0", "q=x&fmt=") else 200), query


# -- dates and domains --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "sent", "notices"),
    [
        ({"recency_days": 3}, [("since", "20261127")], ()),
        (
            {"recency_hours": 20},
            [("since", "20261129")],
            (f"recency_hours=20 applied as whole days (since=20261129): {WHOLE_DAYS}",),
        ),
        ({"start_published_date": "2026-02-01"}, [("since", "20260201")], ()),
        ({"start_published_date": "2020-02-01"}, [("since", "20200201")], ()),  # no longest window: any date
        (
            {"start_published_date": "2026-02-01T10:00:00Z"},
            [("since", "20260201")],
            (f'start_published_date="2026-02-01T10:00:00Z" applied as whole days (since=20260201): {WHOLE_DAYS}',),
        ),
        (
            {"recency_days": 20, "recency": "day"},
            [("since", "20261110")],
            ('recency="day" not applied: recency_days takes precedence',),
        ),
        ({"end_published_date": "2026-11-20"}, [("before", "20261121")], ()),
        (
            {"start_published_date": "2026-11-01", "end_published_date": "2026-11-20T10:00:00Z"},
            [("since", "20261101"), ("before", "20261121")],
            (
                'end_published_date="2026-11-20T10:00:00Z" applied as whole days '
                f"(before=20261121, so up to the end of 2026-11-20): {WHOLE_DAYS}",
            ),
        ),
        ({"recency": "week", "end_published_date": "2026-11-29"}, [("since", "20261123"), ("before", "20261130")], ()),
    ],
)
async def test_the_date_ladder_is_since_and_before(
    mojeek: FakeMojeek,
    menv: dict[str, str],
    kwargs: dict[str, Any],
    sent: list[tuple[str, str]],
    notices: tuple[str, ...],
) -> None:
    response = await search(menv, "q", **kwargs)
    assert response.ok, response.error
    assert mojeek.last.query == (("q", "q"), *sent)
    assert messages(response) == notices


async def test_domains_are_site_operators(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    response = await search(menv, "q", include_domains=["a.org"], exclude_domains=["b.org"])
    assert mojeek.last.query == (("q", "q site:a.org -site:b.org"),)
    assert response.ok and {s.url.split("/")[2] for s in response.sources} == {"a.org"}
    assert messages(response) == (
        'include_domains=["a.org"] applied as site: operators in the query: Mojeek has no domain filter',
        'exclude_domains=["b.org"] applied as -site: operators in the query: Mojeek has no domain filter',
    )


async def test_unsupported_parameters_become_notices(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    response = await search(menv, max_tokens=100, category="news", sort_by_date=True)
    assert messages(response) == (
        "max_tokens=100 not applied: Mojeek does not support it",
        'category="news" not applied: Mojeek does not support it',
        "sort_by_date=true not applied: Mojeek does not support it",
    )


# -- blocks, empty pages, errors ----------------------------------------------------------------


async def test_the_automated_queries_403_is_blocked(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    mojeek.enqueue(Reply(403, blocked_page(), content_type="text/html"))
    response = await search(menv)
    assert response.error == BLOCKED_MESSAGE
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (429, "blocked")


async def test_a_403_of_any_shape_is_blocked_not_a_login_problem(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    mojeek.enqueue(Reply(403, b"", content_type="text/plain"))
    response = await search(menv)
    assert response.attempts[0].error_kind == "blocked"
    assert "authorization" not in (response.error or "")


@pytest.mark.parametrize("status", [200, 202])
async def test_the_captcha_page_is_blocked(mojeek: FakeMojeek, menv: dict[str, str], status: int) -> None:
    mojeek.enqueue(Reply(status, captcha_page("rust async book"), content_type="text/html"))
    response = await search(menv)
    assert response.error == CAPTCHA_MESSAGE
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (429, "blocked")


def test_the_captcha_is_told_by_its_structure() -> None:
    assert is_challenge(captcha_page().encode())
    words = "captcha-wrap altcha altcha-widget challenge.js"
    assert not is_challenge(results_page(words, sample_results(words, 2)).encode())
    assert not is_challenge(no_results_page(words).encode())
    assert not is_challenge(b"<html><body><p>captcha altcha</p></body></html>")


async def test_a_query_that_names_the_captcha_is_searched(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    query = "captcha-wrap altcha.js"
    response = await search(menv, query)
    assert response.ok, response.error
    assert len(response.sources) == 10


async def test_the_no_results_page_is_no_results(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    mojeek.enqueue(Reply(200, no_results_page("zzxqv"), content_type="text/html"))
    response = await search(menv, "zzxqv")
    assert response.error == "Mojeek returned no renderable search content."
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (204, "no_results")


async def test_a_5xx_is_unavailable(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    mojeek.enqueue(Reply(503, "<html>unavailable</html>", content_type="text/html"))
    response = await search(menv)
    assert response.error == "Mojeek HTML error (503)"
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (503, "unavailable")


async def test_a_429_is_rate_limited_with_its_retry_after(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    mojeek.enqueue(Reply(429, "slow down", headers={"Retry-After": "30"}))
    response = await search(menv)
    assert response.error == "Mojeek HTML error (429); retry after 30 s"
    assert (response.attempts[0].error_kind, response.attempts[0].retry_after_s) == ("rate_limited", 30.0)


# -- the library and the CLI --------------------------------------------------------------------


def test_sync_api(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    with make_client(env=menv) as ws:
        response = ws.search("sync query", provider="mojeek", limit=2)
    assert len(response.sources) == 2
    assert mojeek.last.args["q"] == "sync query"


def test_cli_json(mojeek: FakeMojeek, menv: dict[str, str]) -> None:
    mojeek.results = [MojeekResult("First &amp; one", "https://example.com/a?b=1&c=2", "Snip <strong>pet</strong>")]
    proc = run_cli(["search", "q", "--provider", "mojeek", "--format", "json"], menv)
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["error"] is None and payload["response"]["provider"] == "mojeek"
    assert [(s["title"], s["url"], s["snippet"]) for s in payload["response"]["sources"]] == [
        ("First & one", "https://example.com/a?b=1&c=2", "Snip pet")
    ]
    assert mojeek.last.query == (("q", "q"),)


# -- damaged pages ------------------------------------------------------------------------------

_PIECES = (
    '<ul class="results-standard">',
    "</ul>",
    '<li class="r1">',
    "</li>",
    "<!--rs-->",
    "<h2>",
    "</h2>",
    '<a class="title" href="https://a.example/x">',
    '<a class="ob" href="https://b.example/">',
    '<a href="/search?q=site%3Aa.example">',
    '<a href="javascript:void(0)">',
    '<a href="https://www.mojeek.com/search?q=x">',
    '<a href="//c.example/p?q=1&amp;r=2">',
    '<a href="https://[::1]:8080/">',
    '<a href="https://user@d.example:443/">',
    "</a>",
    '<p class="s">',
    "</p>",
    "<strong>word</strong>",
    "text &amp; more\n  folded",
    '<div class="captcha-wrap">',
)


@settings(max_examples=300, deadline=None, database=None)
@given(parts=st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=8)), max_size=30), limit=st.integers(1, 30))
def test_the_parser_takes_any_mix_of_its_markup(parts: list[str], limit: int) -> None:
    page = "".join(parts)
    sources = parse_results(page.encode("utf-8", "surrogatepass"), limit)
    assert len(sources) <= limit and len({s.url for s in sources}) == len(sources)
    for source in sources:
        assert source.url.startswith(("http://", "https://")) and source.title
        assert target(source.url) == source.url
    is_challenge(page.encode("utf-8", "surrogatepass"))
