"""Startpage against a loopback fake that serves real-looking result pages (markup and props)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import NOW, FakeClock, make_client, messages, run_cli
from websearch import SearchResponse
from websearch._providers.startpage import (
    ANUBIS_MESSAGE,
    CAPTCHA_MESSAGE,
    FORM_HEADERS,
    HEADERS,
    NOT_A_RESULTS_PAGE,
    PREFERENCES,
    SUSPENDED_MESSAGE,
    block_reason,
    parse_page,
    parse_results,
    result_url,
)
from websearch.testing import Reply
from websearch.testing.startpage import (
    FakeStartpage,
    SpResult,
    anubis_page,
    captcha_page,
    legacy_results_page,
    no_results_page,
    results_page,
    sample_results,
)

HTML = "text/html; charset=utf-8"
#: What every request carries after the query: web results, English, en_US, the default family filter.
FILTERS = [("cat", "web"), ("language", "english"), ("lui", "english"), ("qsr", "en_US"), ("qadf", "moderate")]


@pytest.fixture
def sp() -> Iterator[FakeStartpage]:
    with FakeStartpage() as fake:
        yield fake


@pytest.fixture
def sp_env(config_dir: Path, sp: FakeStartpage) -> dict[str, str]:
    """Our config dir and the Startpage fake only: the chain holds Startpage alone."""
    return {"WEBSEARCH_CONFIG_DIR": str(config_dir), **sp.env}


async def search(env: dict[str, str], query: str = "rust async", **params: Any) -> SearchResponse:
    async with make_client(env=env, clock=FakeClock()) as ws:
        return await ws.asearch(query, provider="startpage", **params)


def first_page(query: str = "rust async", extra: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    return [("query", query), *FILTERS, *(extra or []), ("pl", "opensearch")]


def triples(response: SearchResponse) -> list[tuple[str, str, str | None]]:
    return [(s.title, s.url, s.snippet) for s in response.sources]


# -- the request ----------------------------------------------------------------------------------


async def test_page_one_is_a_get_with_the_browser_headers_and_preferences(
    sp: FakeStartpage, sp_env: dict[str, str]
) -> None:
    response = await search(sp_env)
    assert response.ok, response.error
    assert response.provider == "startpage" and len(response.sources) == 10
    assert len(sp.requests) == 1
    req = sp.last
    assert (req.method, req.path, req.body) == ("GET", "/sp/search", b"")
    assert list(req.query) == first_page()
    for name, value in HEADERS.items():
        assert req.headers[name.lower()] == value
    assert req.headers["cookie"] == f"preferences={PREFERENCES}"
    assert "languageEEEenglish" in PREFERENCES.split("N1N") and "num_of_resultsEEE10" in PREFERENCES.split("N1N")
    assert req.headers["sec-fetch-site"] == "none" and "referer" not in req.headers and "origin" not in req.headers


@pytest.mark.parametrize(("recency", "code"), [("day", "d"), ("week", "w"), ("month", "m"), ("year", "y")])
async def test_recency_maps_to_with_date(sp: FakeStartpage, sp_env: dict[str, str], recency: str, code: str) -> None:
    response = await search(sp_env, recency=recency)
    assert response.ok and messages(response) == ()
    assert list(sp.last.query) == first_page(extra=[("with_date", code)])


async def test_paging_chains_the_sc_token_page_to_page(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    response = await search(sp_env, limit=25, recency="week")
    assert response.ok, response.error
    assert len(response.sources) == 25 and len({s.url for s in response.sources}) == 25
    assert messages(response) == ()
    assert [(r.method, r.path) for r in sp.requests] == [
        ("GET", "/sp/search"),
        ("POST", "/sp/search"),
        ("POST", "/sp/search"),
    ]
    for n, req in enumerate(sp.requests[1:], 2):
        assert req.query == ()
        assert req.form() == [
            ("query", "rust async"),
            *FILTERS,
            ("with_date", "w"),
            ("sc", sp.issued[n - 2]),  # the token of the page before
            ("t", "device"),
            ("segment", "startpage.udog"),
            ("abd", "0"),
            ("abe", "0"),
            ("page", str(n)),
        ]
        for name, value in FORM_HEADERS.items():
            assert req.headers[name.lower()] == value
    assert FORM_HEADERS["Origin"] == "https://www.startpage.com"
    assert FORM_HEADERS["Referer"] == "https://www.startpage.com/"
    assert [s.url for s in response.sources] == [r.url for r in sample_results("rust async")[:25]]


async def test_a_locale_is_in_the_query_and_in_the_preferences_cookie_of_every_page(
    sp: FakeStartpage, sp_env: dict[str, str]
) -> None:
    response = await search(sp_env, limit=25, country="AT", language="de")
    assert response.ok, response.error
    assert len(sp.requests) == 3
    first, *later = sp.requests
    query = dict(first.query)
    assert (query["language"], query["lui"], query["qsr"]) == ("deutsch", "deutsch", "de_AT")
    cookie = first.headers["cookie"].removeprefix("preferences=").split("N1N")
    assert {"languageEEEdeutsch", "language_uiEEEdeutsch", "search_results_regionEEEde_AT"} <= set(cookie)
    assert "num_of_resultsEEE10" in cookie and "search_results_regionEEEen_US" not in cookie
    for req in later:  # the posted pages carry the same settings
        assert req.headers["cookie"] == first.headers["cookie"]
        assert dict(req.form())["qsr"] == "de_AT"


async def test_a_count_within_one_page_asks_one_page(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    response = await search(sp_env, limit=10)
    assert len(response.sources) == 10 and len(sp.requests) == 1
    response = await search(sp_env, limit=11)
    assert len(response.sources) == 11 and len(sp.requests) == 3  # one more: page 2


async def test_paging_stops_at_the_last_page(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    sp.results = sample_results("q", 14)
    response = await search(sp_env, limit=30)
    assert len(response.sources) == 14 and len(sp.requests) == 2  # page 2 has no "Next"
    assert messages(response) == ()


async def test_paging_stops_when_a_page_brings_nothing_new(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    ten = sample_results("q", 10)
    sp.results = ten + ten + ten + ten
    response = await search(sp_env, limit=30)
    assert len(response.sources) == 10 and len(sp.requests) == 2


async def test_the_page_cap_is_a_notice(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    results = sample_results("q", 40)
    sp.results = [SpResult("Settings", "/do/settings") if i % 4 == 0 else r for i, r in enumerate(results)]
    response = await search(sp_env, limit=30)
    assert len(sp.requests) == 3 and len(response.sources) == 22  # 7 + 8 + 7
    assert messages(response) == ("limit=30 clamped to 22 results: websearch asks Startpage for at most 3 pages",)


async def test_a_failed_later_page_keeps_the_pages_before(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    sp.enqueue(
        Reply(200, results_page("q", sample_results("q", 10), sc="Q7Mt5TRqowKB00", more=True), content_type=HTML),
        Reply(503, "<html>unavailable</html>", content_type="text/html"),
    )
    response = await search(sp_env, "q", limit=20)
    assert response.ok and len(response.sources) == 10
    assert messages(response) == ("Startpage page 2 failed, so the results stop at page 1: Startpage HTML error (503)",)


async def test_a_forged_token_is_refused_with_the_captcha(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    """The fake, like Startpage, redirects a form with a token it never issued to /sp/captcha."""
    sp.enqueue(Reply(200, results_page("q", sample_results("q", 10), sc="forged", more=True), content_type=HTML))
    response = await search(sp_env, "q", limit=20)
    assert [(r.method, r.path) for r in sp.requests] == [
        ("GET", "/sp/search"),
        ("POST", "/sp/search"),
        ("GET", "/sp/captcha"),
    ]
    assert len(response.sources) == 10
    assert messages(response) == (f"Startpage page 2 failed, so the results stop at page 1: {CAPTCHA_MESSAGE}",)


async def test_a_page_without_a_token_is_followed_by_a_get(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    sp.enqueue(Reply(200, results_page("q", sample_results("q", 10), sc="", more=True), content_type=HTML))
    response = await search(sp_env, "q", limit=15)
    assert len(response.sources) == 15
    second = sp.requests[1]
    assert (second.method, second.body) == ("GET", b"")
    assert list(second.query) == [("query", "q"), *FILTERS, ("page", "2")]


# -- parsing --------------------------------------------------------------------------------------


async def test_parses_titles_urls_snippets_and_dates(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    sp.results = [
        SpResult("First &amp; <b>result</b>", "https://example.com/a?x=1&y=2", "Snippet <b>one</b>&#39;s"),
        SpResult("Second", "https://example.org/b", ""),
        SpResult("Dated", "https://example.net/c", "Feb 27, 2019 <b>...</b> The <b>Linux</b>® kernel."),
        SpResult("Recent", "https://example.net/d", "3 days ago <b>...</b> Release&nbsp;schedule."),
    ]
    response = await search(sp_env)
    assert triples(response) == [
        ("First & result", "https://example.com/a?x=1&y=2", "Snippet one's"),
        ("Second", "https://example.org/b", None),
        ("Dated", "https://example.net/c", "The Linux® kernel."),
        ("Recent", "https://example.net/d", "Release schedule."),
    ]
    dates = [(s.published_date, s.age_seconds) for s in response.sources]
    assert dates[:2] == [(None, None), (None, None)]
    assert dates[2] == ("Feb 27, 2019", int((NOW - NOW.replace(year=2019, month=2, day=27, hour=0)).total_seconds()))
    assert dates[3] == ("3 days ago", 3 * 86400)
    assert response.answer is None and response.request_id is None


async def test_ads_internal_links_non_http_and_duplicates_are_dropped(
    sp: FakeStartpage, sp_env: dict[str, str]
) -> None:
    sp.results = [
        SpResult("Ad", "https://shop.example.com/", "buy now", ad=True),
        SpResult("One", "https://one.example.com/", "1"),
        SpResult("Settings", "/do/settings", "internal"),
        SpResult("Anonymous", "https://eu2-browse.startpage.com/av/proxy?ep=4a51&ek=5547", "proxy"),
        SpResult("Script", "javascript:alert(1)", "x"),
        SpResult("Mail", "mailto:a@b.example", "x"),
        SpResult("Google ad", "https://www.google.com/aclk?sa=l&ai=x", "x"),
        SpResult("Ad services", "https://www.googleadservices.com/pagead/aclk?sa=L", "x"),
        SpResult("One again", "https://one.example.com/", "dup"),
        SpResult("Two", "https://two.example.com/", "2"),
    ]
    response = await search(sp_env)
    assert [s.url for s in response.sources] == ["https://one.example.com/", "https://two.example.com/"]


def test_result_url_rules() -> None:
    assert result_url("https://a.example/x?y=1") == "https://a.example/x?y=1"
    assert result_url("http://a.example/") == "http://a.example/"
    assert result_url("//a.example/p") == "https://a.example/p"
    assert result_url("https://www.startpage.com/do/d/search?url=https%3A%2F%2Fb.example%2Fq") == "https://b.example/q"
    assert result_url("/do/d/search?url=https%3A%2F%2Fb.example%2F") == "https://b.example/"
    assert result_url("https://www.startpage.com/do/settings") is None
    assert result_url("https://eu3-browse.startpage.com/av/proxy?ep=1&url=javascript:x") is None
    assert result_url("https://www.google.de/aclk?sa=l") is None
    assert result_url("https://ad.doubleclick.net/ddm/clk/1") is None
    assert result_url("https://www.google.com/maps/place/x") == "https://www.google.com/maps/place/x"
    for junk in ("", "http://", "ftp://files.example/x", "data:text/html,hi", "http://[::1", "example.com/x", None, 7):
        assert result_url(junk) is None, junk


def test_the_markup_says_what_the_props_say() -> None:
    """A page whose props are missing (or cannot be read) is read from its server-rendered blocks,
    with the same results: the `<style>` inside the first title link does not leak into it."""
    results = sample_results("quic vs tcp", 10)
    results.insert(2, SpResult("Under &lt;b&gt; tag", "https://x.example.com/?a=1&b=2", "Ex<b>am</b>ple &#39;q&#39;"))
    full = parse_page(results_page("quic vs tcp", results), NOW)
    assert full is not None and len(full.sources) == 11
    markup = parse_page(results_page("quic vs tcp", results, props=False), NOW)
    assert markup is not None and markup.sources == full.sources
    assert full.sources[2].title == "Under <b> tag" and full.sources[2].snippet == "Example 'q'"
    assert all("css-" not in s.title and "{" not in s.title for s in markup.sources)
    broken = results_page("quic vs tcp", results).replace('"render":{', '"render":{"x":', 1)
    again = parse_page(broken, NOW)
    assert again is not None and again.sources == full.sources


def test_the_older_layout_is_read_too() -> None:
    results = sample_results("q", 5)
    sources = parse_results(legacy_results_page("q", results), 30, NOW)
    assert [s.url for s in sources] == [r.url for r in results]
    assert sources[0].title == "q — guide part 1 | Example Docs"
    assert sources[0].published_date == "Mar 3, 2026" and sources[0].snippet.startswith("Learn about q in part 1")


def test_props_are_decoded_whole_braces_in_strings_included() -> None:
    tricky = SpResult('Braces {"a": "}})"} and \u2028 quotes', "https://a.example/", 'end "}})" </script> x')
    page = results_page("q", [tricky, SpResult("B", "https://b.example/", "b")])
    sources = parse_results(page)
    assert [s.title for s in sources] == ['Braces {"a": "}})"} and quotes', "B"]
    assert sources[0].snippet == 'end "}})" x'


def test_inline_tags_add_no_spaces_and_private_use_glyphs_go() -> None:
    page = results_page(
        "antani",
        [
            SpResult("<b>Eino</b>-ext docs\ue001", "https://a.example/", "Come se fosse <b>antani</b>: la storia"),
            SpResult("B", "https://b.example/", "&quot;<b>Foo</b> was here&quot; and   <i>more</i>\n text"),
        ],
    )
    sources = parse_results(page)
    assert [s.title for s in sources] == ["Eino-ext docs", "B"]
    assert [s.snippet for s in sources] == ["Come se fosse antani: la storia", '"Foo was here" and more text']


async def test_a_query_that_names_the_markers_is_an_ordinary_results_page(
    sp: FakeStartpage, sp_env: dict[str, str]
) -> None:
    query = 'React.createElement(UIStartpage.AppSerpWeb, {"render":{}}) anubis_challenge captcha-section /sp/captcha'
    response = await search(sp_env, query, limit=3)
    assert response.ok, response.error
    assert len(response.sources) == 3
    page = results_page(query, sample_results(query, 3), more=True).encode()
    assert block_reason(page) is None and len(parse_results(page)) == 3


def test_the_fixture_page_is_realistic() -> None:
    page = results_page("rust async book", sample_results("rust async book", 10), more=True)
    assert 35_000 < len(page) < 60_000
    assert page.count('<div class="result css-o7i03b">') == 10
    at = page.index("React.createElement(UIStartpage.AppSerpWeb, ") + len(
        "React.createElement(UIStartpage.AppSerpWeb, "
    )
    props, _ = json.JSONDecoder().raw_decode(page[at:])
    web = [b for b in props["render"]["presenter"]["regions"]["mainline"] if b["display_type"] == "web-google"]
    assert len(web[0]["results"]) == 10 and props["render"]["search_sc"] == "Q7Mt5TRqowKB00"


# -- blocks, errors, empty pages ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(200, captcha_page(), content_type=HTML), CAPTCHA_MESSAGE),
        (Reply(403, captcha_page(), content_type=HTML), CAPTCHA_MESSAGE),
        (Reply(302, "", headers={"Location": "/sp/captcha?rf=search"}), CAPTCHA_MESSAGE),
        (Reply(200, anubis_page(), content_type=HTML), ANUBIS_MESSAGE),
        (Reply(302, "", headers={"Location": "/error-pages/blocked.html"}), SUSPENDED_MESSAGE),
    ],
    ids=["captcha-200", "captcha-403", "captcha-redirect", "anubis", "suspended-redirect"],
)
async def test_blocks_are_errors_not_no_results(
    sp_env: dict[str, str], sp: FakeStartpage, reply: Reply, message: str
) -> None:
    sp.enqueue(reply)
    response = await search(sp_env)
    assert response.error == message
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (429, "blocked")


async def test_a_403_is_blocked(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    sp.enqueue(Reply(403, "<html><body>Forbidden</body></html>", content_type="text/html"))
    response = await search(sp_env)
    assert response.error == "Startpage HTML error (403)"
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (403, "blocked")


def test_blocks_are_told_by_structure() -> None:
    assert block_reason(captcha_page().encode()) == CAPTCHA_MESSAGE
    assert block_reason(anubis_page().encode()) == ANUBIS_MESSAGE
    assert block_reason(b"", "https://www.startpage.com/sp/captcha?rf=1") == CAPTCHA_MESSAGE
    assert block_reason(b"", "https://www.startpage.com/error-pages/blocked.html") == SUSPENDED_MESSAGE
    assert block_reason(b'<html><body><iframe src="/error-pages/blocked.html"></iframe></body></html>')
    words = b"<html><body><p>captcha anubis_challenge error-pages captcha-section</p></body></html>"
    assert block_reason(words) is None
    markup = results_page("captcha-section anubis_challenge", sample_results("x", 2), props=False).encode()
    assert block_reason(markup) is None
    assert block_reason(b"", "http://[::1") is None


async def test_http_error_message_is_exact(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    sp.enqueue(Reply(503, "<html>unavailable</html>", content_type="text/html"))
    response = await search(sp_env)
    assert response.error == "Startpage HTML error (503)"
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (503, "unavailable")


async def test_retry_after_is_reported(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    sp.enqueue(Reply(429, "slow down", headers={"Retry-After": "30"}))
    response = await search(sp_env)
    assert response.error == "Startpage HTML error (429); retry after 30 s"
    assert (response.attempts[0].error_kind, response.attempts[0].retry_after_s) == ("rate_limited", 30.0)


@pytest.mark.parametrize("props", [True, False], ids=["with-props", "notice-only"])
async def test_the_empty_page_is_no_results(sp: FakeStartpage, sp_env: dict[str, str], props: bool) -> None:
    """Either shape of it: the props without a web block, or (was `invalid_response`) no props,
    only the `mainline-results__notice` block."""
    sp.enqueue(Reply(200, no_results_page("zzzz", props=props), content_type=HTML))
    response = await search(sp_env, "zzzz")
    assert response.error == "Startpage returned no renderable search content."
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (204, "no_results")
    assert len(sp.requests) == 1


async def test_a_page_that_is_no_results_page_is_invalid(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    sp.enqueue(Reply(200, "<html><body><p>Error 883</p></body></html>", content_type=HTML))
    response = await search(sp_env)
    assert response.error == NOT_A_RESULTS_PAGE
    assert response.attempts[0].error_kind == "invalid_response"


# -- counts and the richer parameters -------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected", "notice"),
    [
        ({}, 10, None),
        ({"limit": 3}, 3, None),
        ({"num_search_results": 4, "limit": 9}, 4, "limit=9 not applied: num_search_results=4 takes precedence"),
        ({"limit": 999}, 30, "limit=999 clamped to 30: Startpage returns at most 30 results"),
    ],
)
async def test_count_is_clamped(
    sp: FakeStartpage, sp_env: dict[str, str], kwargs: dict[str, int], expected: int, notice: str | None
) -> None:
    response = await search(sp_env, **kwargs)
    assert len(response.sources) == expected
    assert messages(response) == ((notice,) if notice else ())


async def test_unsupported_parameters_become_notices(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    response = await search(sp_env, max_tokens=100, temperature=0.5)
    assert messages(response) == (
        "max_tokens=100 not applied: Startpage does not support it",
        "temperature=0.5 not applied: Startpage does not support it",
    )


ONLY = "Startpage only filters by the past day, week, month or year"


@pytest.mark.parametrize(
    ("kwargs", "code", "notices"),
    [
        ({"recency_hours": 20}, "d", (f"recency_hours=20 widened to with_date=d (the past day): {ONLY}",)),
        ({"recency_days": 3}, "w", (f"recency_days=3 widened to with_date=w (the past week): {ONLY}",)),
        (
            {"recency_days": 20, "recency": "day"},
            "m",
            (
                'recency="day" not applied: recency_days takes precedence',
                f"recency_days=20 widened to with_date=m (the past month): {ONLY}",
            ),
        ),
        (
            {"start_published_date": "2026-02-01"},
            "y",
            (f'start_published_date="2026-02-01" widened to with_date=y (the past year): {ONLY}',),
        ),
        (
            {"start_published_date": "2020-02-01"},
            None,
            ('start_published_date="2020-02-01" not applied: the window is longer than Startpage\'s longest (a year)',),
        ),
    ],
)
async def test_richer_dates_are_the_narrowest_with_date(
    sp: FakeStartpage, sp_env: dict[str, str], kwargs: dict[str, object], code: str | None, notices: tuple[str, ...]
) -> None:
    response = await search(sp_env, "q", **kwargs)
    assert response.ok and messages(response) == notices
    assert list(sp.last.query) == first_page("q", [("with_date", code)] if code else [])


async def test_richer_domains_are_site_operators(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    response = await search(sp_env, "q", include_domains=["a.org"], exclude_domains=["b.org"])
    assert list(sp.last.query) == first_page("q site:a.org -site:b.org")
    assert response.ok and all(s.url.startswith("https://a.org/") for s in response.sources)
    assert messages(response) == (
        'include_domains=["a.org"] applied as site: operators in the query: Startpage has no domain filter',
        'exclude_domains=["b.org"] applied as -site: operators in the query: Startpage has no domain filter',
    )


# -- the CLI and the sync API ---------------------------------------------------------------------


def test_cli_search_json(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    result = run_cli(["search", "rust async", "--provider", "startpage", "--format", "json"], sp_env)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["error"] is None and payload["response"]["provider"] == "startpage"
    sources = payload["response"]["sources"]
    assert [s["url"] for s in sources] == [r.url for r in sample_results("rust async")[:10]]
    assert sources[0]["published_date"] == "Mar 3, 2026"
    assert sp.last.args["query"] == "rust async"


def test_sync_api(sp: FakeStartpage, sp_env: dict[str, str]) -> None:
    with make_client(env=sp_env) as ws:
        response = ws.search("sync query", provider="startpage", limit=2)
    assert len(response.sources) == 2
    assert sp.last.args["query"] == "sync query"
