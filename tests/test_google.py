"""Google against a loopback fake that serves real-looking result pages and Google's walls."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from conftest import FakeClock, make_client, messages, run_cli
from websearch import SearchResponse, WebSearch
from websearch._core._registry import PROVIDERS
from websearch._core._wire import HttpResponse
from websearch._providers._paging import page_gap
from websearch._providers.google import (
    CAPTCHA_MESSAGE,
    CONSENT_MESSAGE,
    HEADERS,
    JAVASCRIPT_MESSAGE,
    block_reason,
    is_internal,
    parse_page,
    parse_results,
    unwrap_href,
)
from websearch.testing import Reply
from websearch.testing.google import (
    FakeGoogle,
    GoogleResult,
    challenge_page,
    consent_page,
    javascript_page,
    no_results_page,
    results_page,
    sample_results,
    sorry_redirect,
)

BASE = [("hl", "en"), ("gl", "us"), ("udm", "14")]
PAGE_GAP_S = page_gap(PROVIDERS["google"])  # the row's pace (0.2/s) as the gap between pages
HTML = "text/html; charset=UTF-8"


@pytest.fixture
def google() -> Iterator[FakeGoogle]:
    with FakeGoogle() as fake:
        yield fake


@pytest.fixture
def genv(env: dict[str, str], google: FakeGoogle) -> dict[str, str]:
    return {**env, **google.env}


def client(env: dict[str, str], clock: FakeClock | None = None) -> WebSearch:
    return make_client(env=env, clock=clock or FakeClock())


async def search(
    env: dict[str, str], query: str = "q", clock: FakeClock | None = None, **params: object
) -> SearchResponse:
    async with client(env, clock) as ws:
        return await ws.asearch(query, provider="google", **params)


def triples(response: SearchResponse) -> list[tuple[str, str, str | None]]:
    return [(s.title, s.url, s.snippet) for s in response.sources]


# -- the request ------------------------------------------------------------------------------


async def test_request_is_a_browser_get_of_the_web_tab(google: FakeGoogle, genv: dict[str, str]) -> None:
    response = await search(genv, "rust async book")
    assert response.ok, response.error
    assert response.provider == "google"
    req = google.last
    assert (req.method, req.path, req.body) == ("GET", "/search", b"")
    assert list(req.query) == [("q", "rust async book"), *BASE]
    for name, value in HEADERS.items():
        assert req.headers[name.lower()] == value
    assert "cookie" not in req.headers
    assert len(google.requests) == 1


@pytest.mark.parametrize(
    ("recency", "tbs"), [("day", "qdr:d"), ("week", "qdr:w"), ("month", "qdr:m"), ("year", "qdr:y")]
)
async def test_recency_is_qdr(google: FakeGoogle, genv: dict[str, str], recency: str, tbs: str) -> None:
    response = await search(genv, recency=recency)
    assert list(google.last.query) == [("q", "q"), *BASE, ("tbs", tbs)]
    assert messages(response) == ()


# -- parsing ----------------------------------------------------------------------------------


async def test_parses_the_basic_page_and_unwraps_url_q(google: FakeGoogle, genv: dict[str, str]) -> None:
    google.results = [
        GoogleResult(
            "First &amp; <b>result</b>", "https://example.com/a?x=1&y=2#top", "Snippet <b>one</b>&nbsp;— here"
        ),
        GoogleResult("Second", "https://example.org/b c", ""),
        GoogleResult("Wiki", "https://en.wikipedia.org/wiki/Rust_(programming_language)", "A language"),
    ]
    response = await search(genv)
    assert triples(response) == [
        ("First & result", "https://example.com/a?x=1&y=2#top", "Snippet one — here"),
        ("Second", "https://example.org/b c", None),
        ("Wiki", "https://en.wikipedia.org/wiki/Rust_(programming_language)", "A language"),
    ]
    assert response.answer is None and response.request_id is None


@pytest.mark.parametrize("variant", ["basic", "browser", "text"])
def test_every_page_variant_gives_the_same_results(variant: str) -> None:
    results = sample_results("quic vs tcp", 10)
    results.insert(1, GoogleResult("Buy QUIC now", "https://shop.example.com/quic", "Sponsored deal", ad=True))
    page = results_page("quic vs tcp", results, variant=variant)  # type: ignore[arg-type]
    found = parse_page(page.encode())
    assert [(s.title, s.url) for s in found.sources] == [
        (
            f"quic vs tcp — guide part {i} | Example Docs",
            f"https://docs.example{i % 7}.org/quic-vs-tcp/part-{i}?ref=g&lang=en",
        )
        for i in range(1, 11)
    ]
    assert found.sources[2].snippet is not None and found.sources[2].snippet.startswith(
        "Mar 4, 2026 · Learn about quic"
    )
    assert found.has_next
    assert block_reason(page.encode()) is None  # the browser page's <noscript> refresh is no wall


def test_not_results_are_dropped_images_maps_related_sitelinks() -> None:
    basic = results_page("rust", sample_results("rust", 8)).encode()
    assert b"Images for rust" in basic and b"maps.google.com" in basic and b"Related searches" in basic
    browser = results_page("rust", sample_results("rust", 8), variant="browser").encode()
    assert b"/install/" in browser  # the first result's sitelinks
    for page in (basic, browser):
        urls = [s.url for s in parse_results(page, 40)]
        assert len(urls) == 8
        assert all(url.startswith("https://docs.example") and "/install/" not in url for url in urls)


async def test_ads_google_links_non_http_and_duplicates_are_dropped(google: FakeGoogle, genv: dict[str, str]) -> None:
    google.results = [
        GoogleResult("Ad", "https://shop.example.com/", "buy", ad=True),
        GoogleResult("One", "https://one.example.com/", "1"),
        GoogleResult("One again", "https://one.example.com/", "dup"),
        GoogleResult("Search page", "https://www.google.com/search?q=more", "internal"),
        GoogleResult("Script", "javascript:alert(1)", "x"),
        GoogleResult("Ftp", "ftp://files.example.com/a", "x"),
        GoogleResult("Relative", "https://x.example/", "x", href="/search?q=x&amp;tbm=nws"),
        GoogleResult(
            "Direct ad", "https://ads.example/", "x", href="https://www.googleadservices.com/pagead/aclk?sa=L"
        ),
        GoogleResult("Support", "https://support.google.com/websearch/answer/1", "kept: a Google site, not the UI"),
        GoogleResult("Two", "https://two.example.com/", "2"),
    ]
    response = await search(genv)
    assert [s.url for s in response.sources] == [
        "https://one.example.com/",
        "https://support.google.com/websearch/answer/1",
        "https://two.example.com/",
    ]


def test_ads_are_dropped_on_the_browser_page_by_their_block() -> None:
    page = results_page("q", [GoogleResult("Ad", "https://shop.example.com/", "buy", ad=True), *sample_results("q", 2)])
    browser = results_page(
        "q",
        [GoogleResult("Ad", "https://shop.example.com/", "buy", ad=True), *sample_results("q", 2)],
        variant="browser",
    )
    assert 'id="tads"' in browser and "https://shop.example.com/" in browser
    # an ad block whose title were an <h3> with a direct link: still an ad
    h3_ad = browser.replace(
        '<div class="CCgQ5 vCa9Yd QfkTvb N8QANc Va3FIb EE3Upf" role="heading" aria-level="3">', "<h3>"
    )
    for html in (page, browser, h3_ad):
        assert [s.url for s in parse_results(html.encode())] == [r.url for r in sample_results("q", 2)]


def test_unwrap_href_rules() -> None:
    assert unwrap_href("/url?q=https://a.example/x%3Fb%3D1%26c%3D2&amp;sa=U&amp;ved=x") == "https://a.example/x?b=1&c=2"
    assert unwrap_href("/url?q=https://a.example/p%23frag&sa=U") == "https://a.example/p#frag"
    assert unwrap_href("/url?q=https://a.example/a+b&sa=U") == "https://a.example/a+b"
    assert unwrap_href("/url?q=https://a.example/%C3%A9&sa=U") == "https://a.example/é"
    assert unwrap_href("/url?q=https://a.example/%E9&sa=U") is None  # invalid UTF-8
    assert unwrap_href("/url?sa=t&rct=j&q=&esrc=s&url=https%3A%2F%2Fb.example%2F&ved=x") == "https://b.example/"
    assert unwrap_href("https://www.google.com/url?q=https://c.example/&sa=U") == "https://c.example/"
    assert unwrap_href("https://www.google.co.uk/url?url=https://d.example/") == "https://d.example/"
    assert unwrap_href("/url?q=javascript:alert(1)&sa=U") is None
    assert unwrap_href("/url?q=&sa=U") is None
    assert unwrap_href("/search?q=x&tbm=isch") is None
    assert unwrap_href("/aclk?sa=l&ai=x&adurl=https://e.example/") is None
    assert unwrap_href("https://www.google.com/aclk?sa=l&ai=x") is None
    assert unwrap_href("https://www.googleadservices.com/pagead/aclk?sa=L") is None
    assert unwrap_href("//e.example/p") == "https://e.example/p"
    assert unwrap_href("https://f.example/p?start=10") == "https://f.example/p?start=10"
    assert unwrap_href("mailto:a@b.example") is None
    assert unwrap_href("#") is None


def test_google_ui_links_are_internal() -> None:
    for url in (
        "https://www.google.com/search?q=x",
        "https://google.de/imgres?imgurl=x",
        "https://www.google.co.uk/maps/place/x",
        "https://maps.google.com/maps?q=x",
        "https://translate.google.com/translate?u=https://a.example/",
        "https://accounts.google.com/ServiceLogin",
        "https://webcache.googleusercontent.com/search?q=cache:x",
    ):
        assert is_internal(url), url
    for url in (
        "https://support.google.com/websearch/",
        "https://developers.google.com/search",
        "https://www.google.com/chrome/",
        "https://books.google.com/books?id=x",
        "https://example.com/search?q=x",
        "https://notgoogle.com/search",
    ):
        assert not is_internal(url), url


def test_inline_tags_add_no_spaces_and_whitespace_folds() -> None:
    page = results_page(
        "antani",
        [
            GoogleResult("<em>Eino</em>-ext docs", "https://a.example/", "Come se fosse <b>antani</b>: la storia"),
            GoogleResult("B", "https://b.example/", "&quot;<b>Foo</b> was here&quot; and   <i>more</i>\n text"),
        ],
    )
    sources = parse_results(page.encode())
    assert [s.title for s in sources] == ["Eino-ext docs", "B"]
    assert [s.snippet for s in sources] == ["Come se fosse antani: la storia", '"Foo was here" and more text']


def test_the_title_is_the_h3_not_the_whole_link() -> None:
    page = results_page("q", [GoogleResult("Only the title", "https://site.example/deep/path", "s")], variant="browser")
    (source,) = parse_results(page.encode())
    assert source.title == "Only the title"  # the link also holds "Site" and "https://site.example › deep › path"


async def test_a_query_that_names_the_walls_is_still_a_results_page(google: FakeGoogle, genv: dict[str, str]) -> None:
    query = 'captcha-form g-recaptcha /sorry/index consent.google.com/save "/httpservice/retry/enablejs" yvlrue'
    for variant in ("basic", "browser", "text"):
        google.variant = variant  # type: ignore[assignment]
        response = await search(genv, query, limit=3)
        assert response.ok, response.error
        assert len(response.sources) == 3


def test_a_page_at_a_real_pages_weight_parses_the_same() -> None:
    """Real pages carry hundreds of KB of inline script and style before and after the results
    column; the parser reads only the column (and keeps its page links)."""
    from websearch._providers import google as module

    for variant in ("basic", "browser"):
        page = results_page("q", sample_results("q", 10), variant=variant)  # type: ignore[arg-type]
        script = "<script nonce=x>var a=" + "[1,2,3]," * 40000 + "0;</script>"
        heavy = page.replace("</head>", script + "</head>").replace("</body>", script + "</body>")
        assert len(heavy) > 600_000
        assert parse_page(heavy.encode()) == parse_page(page.encode())
        assert parse_page(heavy.encode()).has_next
        part = module._results_part(heavy.encode())
        assert len(part) < 40_000 and b"var a=" not in part


def test_retained_trees_are_bounded() -> None:
    """Two recent results columns are kept so lexbor's heap is reused; never more, never a large one."""
    from websearch._providers import google as module

    page = results_page("q", sample_results("q", 3)).encode()
    for _ in range(5):
        assert len(parse_results(page)) == 3
    assert len(module._RECENT_TREES) == 2
    kept = list(module._RECENT_TREES)
    big = results_page("q", sample_results("q", 3) * 300, extras=False).encode()
    assert len(module._results_part(big)) > module._RETAIN_MAX
    assert len(parse_results(big)) == 3  # duplicates dropped
    assert list(module._RECENT_TREES) == kept


async def test_opaque_goto_links_are_left_out_with_a_notice(google: FakeGoogle, genv: dict[str, str]) -> None:
    """Browser pages since 2025 may link results through /goto?url=<protobuf>, whose target only a
    request to Google tells: those results are left out, and a page of nothing else is unreadable."""
    google.variant = "browser"
    google.results = [
        GoogleResult("Opaque", "https://o.example/", "x", href="/goto?url=CAESbAHrOzAVB5cKQ2Fv"),
        GoogleResult("Direct", "https://d.example/", "y"),
        GoogleResult("Opaque 2", "https://p.example/", "x", href="https://www.google.com/goto?url=CAESfAHrOzAV"),
    ]
    response = await search(genv)
    assert [s.url for s in response.sources] == ["https://d.example/"]
    assert messages(response) == (
        "2 Google results were left out: their links are opaque /goto?url= redirects, whose target only Google's "
        "redirect tells (websearch does not ask Google once per result)",
    )
    google.results = [google.results[0]]
    response = await search(genv)
    assert response.error is not None and response.error.startswith("Google returned results websearch cannot read")
    assert response.attempts[0].error_kind == "invalid_response"


# -- paging -----------------------------------------------------------------------------------


async def test_a_count_over_one_page_asks_the_next_page_after_a_pause(google: FakeGoogle, genv: dict[str, str]) -> None:
    clock = FakeClock()
    response = await search(genv, "q", clock, limit=20)
    assert response.ok and messages(response) == ()
    assert [r.args.get("start") for r in google.requests] == [None, "10"]
    assert list(google.requests[1].query) == [("q", "q"), *BASE, ("start", "10")]
    assert [s.url for s in response.sources] == [r.url for r in sample_results("q", 20)]
    assert clock.sleeps == [PAGE_GAP_S]


async def test_paging_stops_at_the_last_page(google: FakeGoogle, genv: dict[str, str]) -> None:
    google.results = sample_results("q", 14)
    response = await search(genv, limit=20)
    assert len(response.sources) == 14 and messages(response) == ()
    assert len(google.requests) == 2  # page 2 links no page 3
    google.results = sample_results("q", 7)
    google.requests.clear()
    response = await search(genv, limit=20)
    assert len(response.sources) == 7 and len(google.requests) == 1  # page 1 links no page 2


async def test_short_pages_use_the_spare_page_then_say_so(google: FakeGoogle, genv: dict[str, str]) -> None:
    ad = GoogleResult("Ad", "https://shop.example.com/", "buy", ad=True)
    real = sample_results("q", 24)
    google.results = [x for i in range(0, 18, 6) for x in (*real[i : i + 6], ad, ad, ad, ad)] + real[18:]
    response = await search(genv, limit=20)
    assert [r.args.get("start") for r in google.requests] == [None, "10", "20"]
    assert len(response.sources) == 18
    assert messages(response) == ("limit=20 clamped to 18 results: websearch asks Google for at most 3 pages",)


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (Reply(503, "<html>unavailable</html>", content_type="text/html"), "Google search error (503)"),
        (Reply(429, challenge_page("q"), content_type=HTML), CAPTCHA_MESSAGE),
    ],
)
async def test_a_failed_later_page_keeps_the_first(
    google: FakeGoogle, genv: dict[str, str], reply: Reply, why: str
) -> None:
    google.enqueue(Reply(200, results_page("q", sample_results("q", 10)), content_type=HTML), reply)
    response = await search(genv, limit=20)
    assert response.ok and len(response.sources) == 10
    assert messages(response) == (f"Google page 2 failed, so the results stop at page 1: {why}",)


async def test_the_pause_never_passes_the_deadline(google: FakeGoogle, genv: dict[str, str]) -> None:
    async with client(genv) as ws:
        response = await ws.asearch("q", provider="google", limit=20, deadline=3)
    assert len(response.sources) == 10 and len(google.requests) == 1
    assert messages(response) == (
        "Google page 2 was not asked, so the results stop at page 1: the search's deadline leaves it no time after "
        "waiting 5 s between Google's pages",
    )


@pytest.mark.parametrize(
    ("kwargs", "expected", "notice"),
    [
        ({}, 10, None),
        ({"limit": 3}, 3, None),
        ({"num_search_results": 4, "limit": 9}, 4, "limit=9 not applied: num_search_results=4 takes precedence"),
        ({"limit": 999}, 20, "limit=999 clamped to 20: Google returns at most 20 results"),
    ],
)
async def test_count_is_clamped(
    google: FakeGoogle, genv: dict[str, str], kwargs: dict[str, int], expected: int, notice: str | None
) -> None:
    response = await search(genv, **kwargs)
    assert len(response.sources) == expected
    assert messages(response) == ((notice,) if notice else ())


async def test_unsupported_parameters_become_notices(google: FakeGoogle, genv: dict[str, str]) -> None:
    response = await search(genv, max_tokens=100, sort_by_date=True)
    assert messages(response) == (
        "max_tokens=100 not applied: Google does not support it",
        "sort_by_date=true not applied: Google does not support it",
    )


# -- the walls, errors and empty pages --------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(429, challenge_page("q"), content_type=HTML), CAPTCHA_MESSAGE),
        (Reply(200, challenge_page("q"), content_type=HTML), CAPTCHA_MESSAGE),
        (sorry_redirect("q"), CAPTCHA_MESSAGE),  # followed to the fake's /sorry/index (429)
        (Reply(302, "", headers={"Location": "/sorry/index?continue=x"}), CAPTCHA_MESSAGE),
        (Reply(200, javascript_page("q"), content_type=HTML), JAVASCRIPT_MESSAGE),
        # Its <noscript><iframe src=".../enablejs..."> shape was "no results": Google never cooled down.
        (Reply(200, javascript_page("q", "iframe"), content_type=HTML), JAVASCRIPT_MESSAGE),
        (Reply(200, consent_page(), content_type=HTML), CONSENT_MESSAGE),
    ],
)
async def test_walls_are_blocked_not_no_results(
    google: FakeGoogle, genv: dict[str, str], reply: Reply, message: str
) -> None:
    google.enqueue(reply)
    response = await search(genv)
    assert response.error == message
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (429, "blocked")
    if reply.status == 302:
        assert [r.path for r in google.requests] == ["/search", "/sorry/index"]


def test_walls_are_told_by_structure_and_final_url() -> None:
    assert block_reason(b"", "https://www.google.com/sorry/index?continue=x") == CAPTCHA_MESSAGE
    assert block_reason(b"", "", "https://www.google.com/sorry/index?continue=x") == CAPTCHA_MESSAGE
    assert block_reason(b"<html></html>", "https://consent.google.com/ml?continue=x") == CONSENT_MESSAGE
    assert block_reason(b"<html></html>", "https://www.google.com/search?q=sorry") is None
    words = b"<html><body><p>captcha-form g-recaptcha /sorry/ consent.google.com /httpservice/retry/enablejs</p></body>"
    assert block_reason(words) is None  # the words, not the structure
    # the JavaScript wall's refresh on an empty results page (a browser's) is no wall
    assert block_reason(no_results_page("zzz", "browser").encode()) is None
    assert b"/httpservice/retry/enablejs" in no_results_page("zzz", "browser").encode()


def test_a_consent_url_answer_is_blocked() -> None:
    from websearch._providers.google import PROVIDER

    response = HttpResponse(200, {}, consent_page().encode(), url="https://consent.google.com/ml?continue=x")
    plan = type("P", (), {"limit": 10})()
    with pytest.raises(Exception, match="cookie-consent") as caught:
        PROVIDER.page(response, plan)  # type: ignore[arg-type]
    assert getattr(caught.value, "kind", None) == "blocked"


@pytest.mark.parametrize("variant", ["basic", "browser"])
async def test_the_empty_page_is_no_results(google: FakeGoogle, genv: dict[str, str], variant: str) -> None:
    google.enqueue(Reply(200, no_results_page("zzzz", variant), content_type=HTML))  # type: ignore[arg-type]
    response = await search(genv, "zzzz")
    assert response.error == "Google returned no renderable search content."
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (204, "no_results")


async def test_a_5xx_is_unavailable(google: FakeGoogle, genv: dict[str, str]) -> None:
    google.enqueue(Reply(503, "<html>unavailable</html>", content_type="text/html"))
    response = await search(genv)
    assert response.error == "Google search error (503)"
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (503, "unavailable")


async def test_a_plain_429_is_rate_limited(google: FakeGoogle, genv: dict[str, str]) -> None:
    google.enqueue(Reply(429, "slow down", headers={"Retry-After": "30"}))
    response = await search(genv)
    assert response.error == "Google search error (429); retry after 30 s"
    assert (response.attempts[0].error_kind, response.attempts[0].retry_after_s) == ("rate_limited", 30.0)


# -- the richer parameters --------------------------------------------------------------------

WHOLE_DAYS = "Google's custom date range takes whole days"
FOR_END = "with end_published_date Google needs its custom date range, which takes whole days"


@pytest.mark.parametrize(
    ("kwargs", "tbs", "notices"),
    [
        ({"recency_hours": 1}, "qdr:h", ()),
        ({"recency_hours": 20}, "qdr:h20", ()),
        (
            {"recency_hours": 1.5},
            "qdr:h2",
            ("recency_hours=1.5 applied as whole hours (qdr:h2): Google's relative windows count whole hours",),
        ),
        ({"recency_days": 1}, "qdr:d", ()),
        ({"recency_days": 3}, "qdr:d3", ()),
        ({"recency_days": 0.5}, "qdr:h12", ()),
        (
            {"recency_days": 20, "recency": "day"},
            "qdr:d20",
            ('recency="day" not applied: recency_days takes precedence',),
        ),
        ({"start_published_date": "2026-02-01"}, "cdr:1,cd_min:2/1/2026", ()),
        (
            {"start_published_date": "2026-02-01T10:30:00Z"},
            "cdr:1,cd_min:2/1/2026",
            (f'start_published_date="2026-02-01T10:30:00Z" applied as whole days (cd_min:2/1/2026): {WHOLE_DAYS}',),
        ),
        (
            {"start_published_date": "2020-02-01", "end_published_date": "2020-12-31"},
            "cdr:1,cd_min:2/1/2020,cd_max:12/31/2020",
            (),
        ),
        ({"end_published_date": "2026-03-01"}, "cdr:1,cd_max:3/1/2026", ()),
        (
            {"recency": "week", "end_published_date": "2026-11-29"},
            "cdr:1,cd_min:11/23/2026,cd_max:11/29/2026",
            (f'recency="week" applied as its start day (cd_min:11/23/2026): {FOR_END}',),
        ),
        (
            {"recency_days": 3, "end_published_date": "2026-11-29T08:00:00Z"},
            "cdr:1,cd_min:11/27/2026,cd_max:11/29/2026",
            (
                f"recency_days=3 applied as its start day (cd_min:11/27/2026): {FOR_END}",
                f'end_published_date="2026-11-29T08:00:00Z" applied as whole days (cd_max:11/29/2026): {WHOLE_DAYS}',
            ),
        ),
    ],
)
async def test_the_date_ladder_is_tbs(
    google: FakeGoogle, genv: dict[str, str], kwargs: dict[str, object], tbs: str, notices: tuple[str, ...]
) -> None:
    response = await search(genv, **kwargs)
    assert response.ok, response.error
    assert list(google.last.query) == [("q", "q"), *BASE, ("tbs", tbs)]
    assert messages(response) == notices


async def test_domains_are_site_operators(google: FakeGoogle, genv: dict[str, str]) -> None:
    response = await search(genv, include_domains=["a.org", "b.org"], exclude_domains=["c.org"])
    assert google.last.args["q"] == "q (site:a.org OR site:b.org) -site:c.org"
    assert messages(response) == (
        'include_domains=["a.org", "b.org"] applied as site: operators in the query: Google has no domain filter',
        'exclude_domains=["c.org"] applied as -site: operators in the query: Google has no domain filter',
    )
    assert response.sources and all(s.url.split("/")[2] in ("a.org", "b.org") for s in response.sources)


# -- the CLI ----------------------------------------------------------------------------------


def test_cli_json(google: FakeGoogle, genv: dict[str, str]) -> None:
    google.results = [GoogleResult("T &amp; U", "https://t.example/?a=1&b=2", "s <b>x</b>")]
    proc = run_cli(["search", "q", "--provider", "google", "--format", "json"], genv)
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["error"] is None
    assert payload["response"]["provider"] == "google"
    assert [(s["title"], s["url"], s["snippet"]) for s in payload["response"]["sources"]] == [
        ("T & U", "https://t.example/?a=1&b=2", "s x")
    ]
    assert google.last.args["q"] == "q"
