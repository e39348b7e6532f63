"""Yahoo against a loopback fake that serves real-looking search.yahoo.com pages."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import FakeClock, make_client, messages, provider_context, run_cli
from websearch import SearchParams, SearchResponse
from websearch._providers.yahoo import (
    CONSENT_MESSAGE,
    HEADERS,
    MAX_RESULTS,
    PROVIDER,
    THROTTLED_MESSAGE,
    is_consent,
    parse_results,
    unwrap_href,
)
from websearch.providers import HttpResponse
from websearch.testing import Reply
from websearch.testing.yahoo import (
    FakeYahoo,
    YahooResult,
    consent_page,
    error_999_page,
    no_results_page,
    redirect_href,
    results_page,
    sample_results,
)

PAGE_ONE = (("iscqry", ""),)


def later(n: int) -> tuple[tuple[str, str], ...]:
    """The paging parameters of page `n` (2, 3, ...), as Yahoo's "Next" link has them."""
    return (("b", str(1 + 7 * (n - 1))), ("pz", "7"), ("bct", "0"), ("xargs", "0"))


@pytest.fixture
def yahoo() -> Iterator[FakeYahoo]:
    with FakeYahoo() as fake:
        yield fake


@pytest.fixture
def yenv(env: dict[str, str], yahoo: FakeYahoo) -> dict[str, str]:
    return {**env, **yahoo.env}


async def search(env: dict[str, str], query: str = "rust async book", **params: object) -> SearchResponse:
    async with make_client(env=env, clock=FakeClock()) as ws:
        return await ws.asearch(query, provider="yahoo", **params)  # type: ignore[arg-type]


# -- the request ---------------------------------------------------------------------------------


async def test_page_one_is_what_the_search_box_sends(yahoo: FakeYahoo, yenv: dict[str, str]) -> None:
    response = await search(yenv)
    assert response.ok and response.provider == "yahoo"
    assert len(yahoo.requests) == 1  # no count asked: one page
    req = yahoo.last
    assert (req.method, req.path, req.query, req.body) == ("GET", "/search", (("p", "rust async book"), *PAGE_ONE), b"")
    for name, value in HEADERS.items():
        assert req.headers[name.lower()] == value
    assert "content-type" not in req.headers
    assert [s.url for s in response.sources] == [r.url for r in sample_results("rust async book", 7)]


@pytest.mark.parametrize(("recency", "btf"), [("day", "d"), ("week", "w"), ("month", "m")])
async def test_recency_maps_to_btf(yahoo: FakeYahoo, yenv: dict[str, str], recency: str, btf: str) -> None:
    response = await search(yenv, "q", recency=recency)
    assert yahoo.last.query == (("p", "q"), ("btf", btf), *PAGE_ONE)
    assert messages(response) == ()


async def test_a_year_has_no_yahoo_window(yahoo: FakeYahoo, yenv: dict[str, str]) -> None:
    response = await search(yenv, "q", recency="year")
    assert response.ok
    assert yahoo.last.query == (("p", "q"), *PAGE_ONE)
    assert messages(response) == ('recency="year" not applied: Yahoo only filters by the past day, week or month',)


ONLY = "Yahoo only filters by the past day, week or month"


@pytest.mark.parametrize(
    ("kwargs", "btf", "notices"),
    [
        ({"recency_hours": 20}, "d", (f"recency_hours=20 widened to btf=d (the past day): {ONLY}",)),
        ({"recency_days": 3}, "w", (f"recency_days=3 widened to btf=w (the past week): {ONLY}",)),
        (
            {"recency_days": 20, "recency": "day"},
            "m",
            (
                'recency="day" not applied: recency_days takes precedence',
                f"recency_days=20 widened to btf=m (the past month): {ONLY}",
            ),
        ),
        (
            {"start_published_date": "2026-06-01"},
            None,
            ('start_published_date="2026-06-01" not applied: the window is longer than Yahoo\'s longest (a month)',),
        ),
        (
            {"recency_days": 200, "recency": "week"},
            None,
            (
                'recency="week" not applied: recency_days takes precedence',
                "recency_days=200 not applied: the window is longer than Yahoo's longest (a month)",
            ),
        ),
    ],
)
async def test_the_date_ladder_is_the_narrowest_btf(
    yahoo: FakeYahoo, yenv: dict[str, str], kwargs: dict[str, object], btf: str | None, notices: tuple[str, ...]
) -> None:
    response = await search(yenv, "q", **kwargs)
    assert response.ok and messages(response) == notices
    assert yahoo.last.query == (("p", "q"), *([("btf", btf)] * bool(btf)), *PAGE_ONE)


async def test_domains_are_site_operators(yahoo: FakeYahoo, yenv: dict[str, str]) -> None:
    response = await search(yenv, "q", include_domains=["a.org", "b.org"], exclude_domains=["c.org"])
    assert yahoo.last.args["p"] == "q (site:a.org OR site:b.org) -site:c.org"
    assert messages(response) == (
        'include_domains=["a.org", "b.org"] applied as site: operators in the query: Yahoo has no domain filter',
        'exclude_domains=["c.org"] applied as -site: operators in the query: Yahoo has no domain filter',
    )
    assert response.sources and all(s.url.split("/")[2] in ("a.org", "b.org") for s in response.sources)


async def test_unsupported_parameters_become_notices(yahoo: FakeYahoo, yenv: dict[str, str]) -> None:
    response = await search(yenv, "x", max_tokens=100, temperature=0.5)
    assert messages(response) == (
        "max_tokens=100 not applied: Yahoo does not support it",
        "temperature=0.5 not applied: Yahoo does not support it",
    )


# -- paging ----------------------------------------------------------------------------------------


async def test_a_count_beyond_a_page_asks_for_the_next_pages(yahoo: FakeYahoo, yenv: dict[str, str]) -> None:
    response = await search(yenv, "q", limit=15)
    assert [r.query for r in yahoo.requests] == [
        (("p", "q"), *PAGE_ONE),
        (("p", "q"), *later(2)),
        (("p", "q"), *later(3)),
    ]
    assert [s.url for s in response.sources] == [r.url for r in sample_results("q", 15)]
    assert messages(response) == ()


@pytest.mark.parametrize(
    ("kwargs", "expected", "pages", "notice"),
    [
        ({"limit": 3}, 3, 1, None),
        ({"limit": 7}, 7, 1, None),
        ({"limit": 8}, 8, 2, None),
        ({"num_search_results": 4, "limit": 9}, 4, 1, "limit=9 not applied: num_search_results=4 takes precedence"),
        ({"limit": 999}, 20, 3, "limit=999 clamped to 20: Yahoo returns at most 20 results"),
    ],
)
async def test_count_is_clamped_and_paged(
    yahoo: FakeYahoo, yenv: dict[str, str], kwargs: dict[str, int], expected: int, pages: int, notice: str | None
) -> None:
    response = await search(yenv, "x", **kwargs)
    assert len(response.sources) == expected
    assert len(yahoo.requests) == pages
    assert messages(response) == ((notice,) if notice else ())


async def test_paging_stops_when_a_page_adds_nothing(yenv: dict[str, str], yahoo: FakeYahoo) -> None:
    yahoo.results = sample_results("q", 9)
    response = await search(yenv, "q", limit=20)
    assert len(response.sources) == 9
    assert len(yahoo.requests) == 3  # page 3 is the no-results page

    yahoo.requests.clear()
    yahoo.enqueue(Reply(200, results_page("q", sample_results("q", 7)), content_type="text/html"))
    yahoo.enqueue(Reply(200, results_page("q", sample_results("q", 7)), content_type="text/html"))  # page 2 repeats
    response = await search(yenv, "q", limit=20)
    assert len(response.sources) == 7
    assert len(yahoo.requests) == 2


async def test_a_later_page_that_fails_keeps_the_pages_before_it(yahoo: FakeYahoo, yenv: dict[str, str]) -> None:
    yahoo.enqueue(
        Reply(200, results_page("q", sample_results("q", 7), more=True), content_type="text/html"),
        Reply(503, "<html>unavailable</html>", content_type="text/html"),
    )
    response = await search(yenv, "q", limit=20)
    assert response.ok and len(response.sources) == 7
    assert messages(response) == ("Yahoo page 2 failed, so the results stop at page 1: Yahoo HTML error (503)",)
    assert len(yahoo.requests) == 2


# -- parsing ---------------------------------------------------------------------------------------


async def test_parses_every_title_shape_and_unwraps_redirects(yahoo: FakeYahoo, yenv: dict[str, str]) -> None:
    yahoo.results = [
        YahooResult("First &amp; <b>result</b>", "https://example.com/a?x=1&y=2", "Snippet <b>one</b>"),
        YahooResult("Wrapped <b>heading</b>", "https://wrapped.example/p", "two", shape="wrapped"),
        YahooResult("Sibling heading", "https://sibling.example/", "three", shape="sibling"),
        YahooResult("Plain &quot;anchor&quot;", "https://plain.example/deep/path/x", "four", shape="plain"),
        YahooResult("No snippet", "https://example.org/b"),
        YahooResult("Direct", "https://direct.example.net/c", "plain", direct_href=True),
    ]
    response = await search(yenv, "x")
    assert [(s.title, s.url, s.snippet) for s in response.sources] == [
        ("First & result", "https://example.com/a?x=1&y=2", "Snippet one"),
        ("Wrapped heading", "https://wrapped.example/p", "two"),
        ("Sibling heading", "https://sibling.example/", "three"),
        ('Plain "anchor"', "https://plain.example/deep/path/x", "four"),
        ("No snippet", "https://example.org/b", None),
        ("Direct", "https://direct.example.net/c", "plain"),
    ]
    assert response.answer is None and response.request_id is None


def test_the_breadcrumb_never_leaks_into_a_title() -> None:
    """The anchor's own text is "host › pathTitle": the label, or the heading without its
    breadcrumb overlay, is the title."""
    page = results_page(
        "q",
        [
            YahooResult("Label title", "https://a.example/x/y", "s"),
            YahooResult("Plain title", "https://b.example/x/y", "s", shape="plain"),
        ],
    )
    assert "<span>a.example</span><span> › x › y</span></span>Label title</a>" in page
    assert [s.title for s in parse_results(page)] == ["Label title", "Plain title"]


async def test_ads_internal_links_and_duplicates_are_dropped(yahoo: FakeYahoo, yenv: dict[str, str]) -> None:
    yahoo.results = [
        YahooResult("Top ad", "https://shop.example.com", "buy now", ad=True),
        YahooResult("One", "https://one.example.com/", "1"),
        YahooResult("Bing ad", "https://ads.example.com/", "cheap", bing_ad=True),
        YahooResult("One again", "https://one.example.com/", "dup"),
        YahooResult("Related search", "https://search.yahoo.com/search?p=more", "internal", direct_href=True),
        YahooResult("Images", "https://images.search.yahoo.com/search/images?p=q", "internal"),
        YahooResult("Two", "https://two.example.com/", "2"),
    ]
    response = await search(yenv, "x")
    assert [s.url for s in response.sources] == ["https://one.example.com/", "https://two.example.com/"]


def test_results_that_are_not_http_are_dropped() -> None:
    page = results_page(
        "q",
        [
            YahooResult("Script", "javascript:alert(1)", "x"),
            YahooResult("Data", "data:text/html,hi", "x", direct_href=True),
            YahooResult("Mail", "mailto:a@b.example", "x"),
            YahooResult("Relative", "/search?p=x", "x", direct_href=True),
            YahooResult("Web", "https://web.example/", "x"),
        ],
    )
    assert [s.url for s in parse_results(page)] == ["https://web.example/"]


def test_unwrap_href_rules() -> None:
    wrapped = "https://r.search.yahoo.com/_ylt=Awr;_ylu=Y29s/RV=2/RE=1791872156/RO=10/RU={}/RK=2/RS=e2e-"
    assert unwrap_href(wrapped.format("https%3a%2f%2fa.com%2fx")) == "https://a.com/x"
    assert unwrap_href(wrapped.format("https%3A%2F%2Fa.com%2Fx%3Fq%3Da%2Bb")) == "https://a.com/x?q=a+b"
    assert unwrap_href(wrapped.format("https%3a%2f%2fa.com%2fa+b")) == "https://a.com/a+b"  # "+" kept
    assert unwrap_href(wrapped.format("https%3a%2f%2fa.com%2f%c3%a9")) == "https://a.com/é"
    assert unwrap_href(wrapped.format("https%3a%2f%2fa.com%2f%e9")) is None  # invalid UTF-8
    assert unwrap_href(wrapped.format("javascript%3aalert(1)")) is None
    rs_only = "https://r.search.yahoo.com/_ylt=A/RV=2/RU=https%3a%2f%2fgo.dev%2fdoc/RS=abc"
    assert unwrap_href(rs_only) == "https://go.dev/doc"
    assert unwrap_href("https://r.search.yahoo.com/_ylt=A/RV=2/RU=https%3a%2f%2fgo.dev%2f") == "https://go.dev/"
    assert unwrap_href("//example.com/p") == "https://example.com/p"
    assert unwrap_href("http://example.com/p") == "http://example.com/p"
    assert unwrap_href("/relative") is None
    assert unwrap_href("") is None
    assert unwrap_href(html.unescape(redirect_href("https://a.example/?x=1&y=2"))) == "https://a.example/?x=1&y=2"


def test_inline_highlight_tags_add_no_spaces() -> None:
    page = results_page(
        "antani",
        [
            YahooResult("<b>Eino</b>-ext docs", "https://a.example/", "Come se fosse <b>antani</b>: la storia"),
            YahooResult("B", "https://b.example/", "&quot;<b>Foo</b> was here&quot; and   <i>more</i>\n text"),
        ],
    )
    sources = parse_results(page.encode())
    assert [s.title for s in sources] == ["Eino-ext docs", "B"]
    assert [s.snippet for s in sources] == ["Come se fosse antani: la storia", '"Foo was here" and more text']


def test_parse_results_honours_its_limit() -> None:
    page = results_page("q", sample_results("q", 30))
    assert len(parse_results(page, 5)) == 5
    assert len(parse_results(page)) == MAX_RESULTS
    assert len(parse_results(page, 40)) == 30


def test_fixture_page_is_realistic() -> None:
    page = results_page("rust async book", sample_results("rust async book", 7), more=True)
    assert 60_000 < len(page) < 120_000  # the head's atomic CSS and scripts dominate, as on the real page
    assert page.count('class="dd algo algo-sr relsrch') == 7


# -- what is not a results page ------------------------------------------------------------------


async def test_the_eu_consent_redirect_is_blocked(yenv: dict[str, str]) -> None:
    with FakeYahoo(consent=True) as fake:
        response = await search({**yenv, **fake.env}, "x")
        assert [r.path for r in fake.requests] == ["/search", "/consent", "/v2/collectConsent"]
    assert response.error == CONSENT_MESSAGE
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (429, "blocked")


@pytest.mark.parametrize("status", [200, 403])
async def test_the_consent_form_itself_is_blocked(yahoo: FakeYahoo, yenv: dict[str, str], status: int) -> None:
    yahoo.enqueue(Reply(status, consent_page(), content_type="text/html"))
    response = await search(yenv, "x")
    assert response.error == CONSENT_MESSAGE
    assert response.attempts[0].error_kind == "blocked"


def test_consent_is_told_by_structure() -> None:
    assert is_consent(consent_page().encode())
    assert is_consent(b"", "https://guce.yahoo.com/consent?brandType=eu&gcrumb=x")
    assert is_consent(b"", "https://consent.yahoo.com/v2/collectConsent?sessionId=3_cc")
    assert is_consent(b"", "https://search.yahoo.com/search?p=x", "https://guce.yahoo.com/consent?done=x")
    assert not is_consent(b"", "https://search.yahoo.com/search?p=consent")
    query = 'collectConsent consent-form guce.yahoo.com name="sessionId"'
    assert not is_consent(results_page(query, sample_results("x", 2)).encode())
    assert not is_consent(b"<html><body><p>collectConsent consent-form</p></body></html>")


async def test_a_query_that_names_the_consent_wall_is_not_blocked(yahoo: FakeYahoo, yenv: dict[str, str]) -> None:
    query = 'consent.yahoo.com collectConsent <form class="consent-form"> name="sessionId"'
    response = await search(yenv, query)
    assert response.ok, response.error
    assert len(response.sources) == 7


async def test_error_999_is_blocked(yahoo: FakeYahoo, yenv: dict[str, str]) -> None:
    yahoo.enqueue(Reply(999, error_999_page(), content_type="text/html"))
    response = await search(yenv, "x")
    assert response.error == THROTTLED_MESSAGE
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (429, "blocked")


async def test_no_results_page_is_a_204_failure(yahoo: FakeYahoo, yenv: dict[str, str]) -> None:
    yahoo.enqueue(Reply(200, no_results_page("zzzz"), content_type="text/html"))
    response = await search(yenv, "zzzz")
    assert response.error == "Yahoo returned no renderable search content."
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (204, "no_results")
    assert len(yahoo.requests) == 1


async def test_a_server_error_is_unavailable(yahoo: FakeYahoo, yenv: dict[str, str]) -> None:
    yahoo.enqueue(Reply(503, "<html>unavailable</html>", content_type="text/html"))
    response = await search(yenv, "x")
    assert response.error == "Yahoo HTML error (503)"
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (503, "unavailable")


async def test_retry_after_is_reported(yahoo: FakeYahoo, yenv: dict[str, str]) -> None:
    yahoo.enqueue(Reply(429, "slow down", headers={"Retry-After": "30"}))
    response = await search(yenv, "x")
    assert response.error == "Yahoo HTML error (429); retry after 30 s"
    assert (response.attempts[0].error_kind, response.attempts[0].retry_after_s) == ("rate_limited", 30.0)


def test_parse_is_pure_on_one_page(config_dir: Path) -> None:
    ctx = provider_context(config_dir, {"WEBSEARCH_CONFIG_DIR": str(config_dir)})
    plan = PROVIDER.plan(SearchParams("q", limit=15), ctx)
    assert [dict(r.params).get("b") for r in plan.state] == [None, "8", "15"]
    assert plan.request is plan.state[0] and plan.request.url == "https://search.yahoo.com/search"
    page = results_page("q", sample_results("q", 7)).encode()
    result = PROVIDER.parse(HttpResponse(200, {}, page, "https://search.yahoo.com/search?p=q"), plan)
    assert len(result.sources) == 7


# -- the CLI -------------------------------------------------------------------------------------


def test_cli_json(yahoo: FakeYahoo, yenv: dict[str, str]) -> None:
    yahoo.results = [YahooResult("T &amp; U", "https://t.example/?a=1&b=2", "s <b>bold</b>")]
    proc = run_cli(["search", "q", "--provider", "yahoo", "--format", "json"], yenv)
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["error"] is None
    assert payload["response"]["provider"] == "yahoo"
    assert [(s["title"], s["url"], s["snippet"]) for s in payload["response"]["sources"]] == [
        ("T & U", "https://t.example/?a=1&b=2", "s bold")
    ]
    assert yahoo.last.args["p"] == "q"
