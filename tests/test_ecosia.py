"""Ecosia against a loopback fake that serves real-looking HTML pages, and real saved pages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import NOW, FakeClock, make_client, messages, run_cli
from websearch import SearchResponse, WebSearch
from websearch._core._registry import PROVIDERS
from websearch._providers._paging import page_gap
from websearch._providers.ecosia import (
    CHALLENGE_MESSAGE,
    HEADERS,
    MAX_PAGES,
    REFUSED_MESSAGE,
    is_challenge,
    parse_results,
    result_url,
    walk,
)
from websearch.testing import Reply
from websearch.testing._html import html_reply
from websearch.testing.ecosia import (
    ChallengeKind,
    EcosiaResult,
    FakeEcosia,
    block_page,
    challenge_page,
    no_results_page,
    results_page,
    sample_results,
)

PAGES = Path(__file__).parent / "pages" / "ecosia"
PAGE_GAP_S = page_gap(PROVIDERS["ecosia"])  # the row's pace (0.2/s) as the gap between pages
ONLY = "Ecosia only filters by the past day, week or month"


@pytest.fixture
def eco() -> Iterator[FakeEcosia]:
    with FakeEcosia() as fake:
        yield fake


@pytest.fixture
def eenv(config_dir: Path, eco: FakeEcosia) -> dict[str, str]:
    """Our config dir and the Ecosia fake only: no other provider can answer."""
    return {"WEBSEARCH_CONFIG_DIR": str(config_dir), **eco.env}


def client(env: dict[str, str], clock: FakeClock | None = None) -> WebSearch:
    return make_client(env=env, clock=clock or FakeClock())


async def search(env: dict[str, str], query: str = "rust async book", **params: object) -> SearchResponse:
    async with client(env) as ws:
        return await ws.asearch(query, provider="ecosia", **params)


# -- the request ------------------------------------------------------------------------------


async def test_request_is_a_browser_get_of_search(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    response = await search(eenv)
    assert response.ok, response.error
    assert response.provider == "ecosia"
    req = eco.last
    assert (req.method, req.path, req.body) == ("GET", "/search", b"")
    assert req.query == (("method", "index"), ("q", "rust async book"))
    for name, value in HEADERS.items():
        assert req.headers[name.lower()] == value
    assert "cookie" not in req.headers and "content-type" not in req.headers
    assert len(eco.requests) == 1 and messages(response) == ()


@pytest.mark.parametrize("recency", ["day", "week", "month"])
async def test_recency_is_sent_as_freshness(eco: FakeEcosia, eenv: dict[str, str], recency: str) -> None:
    response = await search(eenv, recency=recency)
    assert eco.last.query == (("method", "index"), ("q", "rust async book"), ("freshness", recency))
    assert response.ok and messages(response) == ()


async def test_a_year_is_not_an_ecosia_window(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    response = await search(eenv, recency="year")
    assert eco.last.query == (("method", "index"), ("q", "rust async book"))
    assert response.ok and messages(response) == (f'recency="year" not applied: {ONLY}',)


@pytest.mark.parametrize(
    ("kwargs", "freshness", "notices"),
    [
        ({"recency_hours": 20}, "day", (f"recency_hours=20 widened to freshness=day (the past day): {ONLY}",)),
        ({"recency_days": 3}, "week", (f"recency_days=3 widened to freshness=week (the past week): {ONLY}",)),
        (
            {"recency_days": 20, "recency": "day"},
            "month",
            (
                'recency="day" not applied: recency_days takes precedence',
                f"recency_days=20 widened to freshness=month (the past month): {ONLY}",
            ),
        ),
        (
            {"start_published_date": "2026-11-01"},
            "month",
            (f'start_published_date="2026-11-01" widened to freshness=month (the past month): {ONLY}',),
        ),
        (
            {"start_published_date": "2026-02-01"},
            None,
            ('start_published_date="2026-02-01" not applied: the window is longer than Ecosia\'s longest (a month)',),
        ),
        (
            {"recency_days": 90, "recency": "week"},
            None,
            (
                'recency="week" not applied: recency_days takes precedence',
                "recency_days=90 not applied: the window is longer than Ecosia's longest (a month)",
            ),
        ),
    ],
)
async def test_the_date_ladder_is_the_narrowest_freshness(
    eco: FakeEcosia, eenv: dict[str, str], kwargs: dict[str, object], freshness: str | None, notices: tuple[str, ...]
) -> None:
    response = await search(eenv, "q", **kwargs)
    assert response.ok and messages(response) == notices
    assert eco.last.query == (("method", "index"), ("q", "q"), *([("freshness", freshness)] * bool(freshness)))


async def test_domains_are_site_operators(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    response = await search(eenv, "q", include_domains=["a.org"], exclude_domains=["b.org"])
    assert eco.last.args["q"] == "q site:a.org -site:b.org"
    assert response.ok and {s.url.split("/")[2] for s in response.sources} == {"a.org"}
    assert messages(response) == (
        'include_domains=["a.org"] applied as site: operators in the query: Ecosia has no domain filter',
        'exclude_domains=["b.org"] applied as -site: operators in the query: Ecosia has no domain filter',
    )


async def test_unsupported_parameters_become_notices(eenv: dict[str, str]) -> None:
    response = await search(eenv, max_tokens=100, end_published_date="2026-11-20")
    assert messages(response) == (
        "max_tokens=100 not applied: Ecosia does not support it",
        'end_published_date="2026-11-20" not applied: Ecosia does not support it',
    )


# -- the page ---------------------------------------------------------------------------------


async def test_parses_a_realistic_page(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    eco.results = [
        EcosiaResult("First &amp; <b>best</b>", "https://example.com/a?x=1&y=2", "Snippet <b>one</b>", site="Example"),
        EcosiaResult("Second", "https://example.org/b"),
        EcosiaResult("Dated", "https://dated.example/c", "02.08.2025 ... Meta's &quot;Toolformer&quot; paper"),
        EcosiaResult("Dated in English", "https://dated.example/d", "Nov 20, 2026 ... ten days ago"),
    ]
    response = await search(eenv)
    assert [(s.title, s.url, s.snippet, s.published_date) for s in response.sources] == [
        ("First & best", "https://example.com/a?x=1&y=2", "Snippet one", None),
        ("Second", "https://example.org/b", None, None),
        ("Dated", "https://dated.example/c", '02.08.2025 ... Meta\'s "Toolformer" paper', "2025-08-02"),
        ("Dated in English", "https://dated.example/d", "Nov 20, 2026 ... ten days ago", "Nov 20, 2026"),
    ]
    assert response.sources[3].age_seconds == 10 * 86400 + 12 * 3600  # NOW is 2026-11-30 12:00 UTC
    assert response.answer is None and response.request_id is None


async def test_ads_internal_links_and_duplicates_are_dropped(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    eco.results = [
        EcosiaResult("Sponsored", "https://shop.example.com/buy", "buy now", ad=True),
        EcosiaResult("One", "https://one.example.com/", "1"),
        EcosiaResult("Images for x", "https://www.ecosia.org/images?q=x", "internal"),
        EcosiaResult("News for x", "https://ecosia.org/news?q=x", "internal"),
        EcosiaResult("Related", "/search?q=x+more", "relative"),
        EcosiaResult("One again", "https://one.example.com/", "dup"),
        EcosiaResult("Ecosia privacy", "https://www.ecosia.org/privacy", "a real page of Ecosia's"),
        EcosiaResult("Ecosia blog", "https://blog.ecosia.org/search/", "another host"),
        EcosiaResult("Two", "https://two.example.com/", "2"),
    ]
    response = await search(eenv)
    assert [s.url for s in response.sources] == [
        "https://one.example.com/",
        "https://www.ecosia.org/privacy",
        "https://blog.ecosia.org/search/",
        "https://two.example.com/",
    ]


def test_results_that_are_not_http_are_dropped() -> None:
    page = results_page(
        "q",
        [
            EcosiaResult("Script", "javascript:alert(1)", "x"),
            EcosiaResult("Data", "data:text/html,hi", "x"),
            EcosiaResult("Mail", "mailto:a@b.example", "x"),
            EcosiaResult("No host", "https:///path", "x"),
            EcosiaResult("Protocol-relative", "//rel.example/p", "x"),
            EcosiaResult("Web", "http://web.example/", "x"),
        ],
    )
    assert [s.url for s in parse_results(page)] == ["https://rel.example/p", "http://web.example/"]


def test_result_url_rules() -> None:
    assert result_url("https://a.example/x?y=1#z") == "https://a.example/x?y=1#z"
    assert result_url("  http://a.example/ ") == "http://a.example/"
    assert result_url("//a.example/p") == "https://a.example/p"
    assert result_url("/search?q=x") is None
    assert result_url("https://www.ecosia.org/search?q=x") is None
    assert result_url("https://WWW.ECOSIA.ORG/videos/?q=x") is None
    assert result_url("https://www.ecosia.org/") == "https://www.ecosia.org/"
    assert result_url("https://www.ecosia.org/searching-trees") == "https://www.ecosia.org/searching-trees"
    assert result_url("https://[::1") is None  # unparseable
    assert result_url("ftp://a.example/") is None


def test_inline_tags_add_no_spaces_and_whitespace_folds() -> None:
    page = results_page(
        "antani",
        [
            EcosiaResult("<b>Eino</b>-ext docs", "https://a.example/", "Come se fosse <b>antani</b>: la storia"),
            EcosiaResult(
                "  B\n  title ", "https://b.example/", "&quot;<em>Foo</em> was here&quot; and   <i>more</i>\n x"
            ),
        ],
    )
    sources = parse_results(page)
    assert [s.title for s in sources] == ["Eino-ext docs", "B title"]
    assert [s.snippet for s in sources] == ["Come se fosse antani: la storia", '"Foo was here" and more x']


def test_the_breadcrumb_link_is_not_the_title() -> None:
    """Each result has two result links; the first (tabindex=-1) shows the domain, not the title."""
    page = results_page("q", [EcosiaResult("Real title", "https://t.example/a/b", "s")])
    assert page.count('data-test-id="result-link"') == 2
    assert walk(page) == [("Real title", "https://t.example/a/b", "s")]


def test_a_result_without_a_title_is_skipped() -> None:
    page = results_page(
        "q", [EcosiaResult("", "https://untitled.example/", "s"), EcosiaResult("T", "https://t.example/")]
    )
    assert [s.url for s in parse_results(page)] == ["https://t.example/"]


def test_the_older_markup_is_read_too() -> None:
    """Before the organic-result articles: `div.result` blocks, `a.result__link` / `a.result-title`
    and `p.result__description` / `.result-snippet` (as other projects' scrapers read it)."""
    page = """<html><body><div class="mainline-results">
      <div class="result js-result card-ad"><a class="result__link" href="https://ad.example/">Ad</a></div>
      <div class="result js-result"><div class="result__body"><div class="result__title">
        <a class="result__link" href="https://old.example/1"><h2>Old <b>one</b></h2></a></div>
        <p class="result__description">First &amp; old</p></div></div>
      <div class="result js-result"><a class="result-title" href="https://old.example/2">Old two</a>
        <p class="result-snippet">Second</p></div>
    </div></body></html>"""
    assert [(s.title, s.url, s.snippet) for s in parse_results(page)] == [
        ("Old one", "https://old.example/1", "First & old"),
        ("Old two", "https://old.example/2", "Second"),
    ]


def test_a_mainline_result_web_article_is_read() -> None:
    """The markup in between: the result article carries `mainline-result-web` itself."""
    page = """<main class="mainline"><div class="mainline__result-wrapper">
      <article class="result web-result mainline__result" data-test-id="mainline-result-ad">
        <a href="https://www.ecosia.org/ads/click?x=1"><h2>Sponsored</h2></a></article>
      <article class="result web-result mainline__result" data-test-id="mainline-result-web">
        <div class="result__title"><a class="result__link" data-test-id="result-link" href="https://www.kernel.org/">
        <h2 data-test-id="result-title">The Linux Kernel Archives</h2></a></div>
        <div data-test-id="web-result-description"><p>This site is operated by the Linux  Kernel Organization.</p></div>
      </article></div></main>"""
    assert [(s.title, s.url, s.snippet) for s in parse_results(page)] == [
        (
            "The Linux Kernel Archives",
            "https://www.kernel.org/",
            "This site is operated by the Linux Kernel Organization.",
        )
    ]


@pytest.mark.parametrize(
    ("snippet", "published"),
    [
        ("02.08.2025 ... text", "2025-08-02"),
        ("2.8.2025 ... text", "2025-08-02"),
        ("Aug 2, 2025 ... text", "Aug 2, 2025"),
        ("September 12, 2024 ... text", "September 12, 2024"),
        ("31.02.2025 ... text", None),  # no such day
        ("02.08.2025 text", None),  # no separator
        ("In 02.08.2025 ... text", None),
        ("A long sentence that is not a date at all ... text", None),
        ("Nothing dated", None),
    ],
)
def test_a_leading_date_becomes_the_published_date(snippet: str, published: str | None) -> None:
    page = results_page("q", [EcosiaResult("T", "https://t.example/", snippet)])
    (source,) = parse_results(page, now=NOW)
    assert (source.snippet, source.published_date) == (snippet, published)
    assert (source.age_seconds is not None) == (published is not None)


@pytest.mark.parametrize("name", ["fake", "mixed", "real"])
def test_the_one_query_walk_agrees_with_the_block_walk(name: str) -> None:
    """The fast path (one CSS query) and the block-by-block walk of the wrappers read the same."""
    mixed = [
        EcosiaResult("Ad", "https://ad.example/", "x", ad=True),
        EcosiaResult("No snippet", "https://n.example/"),
        EcosiaResult("<b>Bold</b> title", "https://b.example/", "s <i>i</i>"),
        EcosiaResult("Dup", "https://b.example/", "d"),
    ]
    pages = {
        "fake": results_page("q", sample_results("q", 10)),
        "mixed": results_page("q", mixed),
        "real": (PAGES / "search_results.html").read_text(encoding="utf-8"),
    }
    page = pages[name]
    by_blocks = page.replace('data-test-id="organic-result"', 'data-test-id="organic-result-renamed"')
    assert walk(page) == walk(by_blocks) and walk(page)


def test_the_fixture_page_is_realistic() -> None:
    page = results_page("rust async book", sample_results("rust async book", 10))
    assert 35_000 < len(page) < 70_000
    assert len(parse_results(page.encode())) == 10


# -- paging -----------------------------------------------------------------------------------


async def test_a_count_within_a_page_asks_once(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    response = await search(eenv, limit=3)
    assert len(response.sources) == 3 and len(eco.requests) == 1


async def test_a_larger_count_pages_with_p(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    clock = FakeClock()
    async with client(eenv, clock) as ws:
        response = await ws.asearch("rust", provider="ecosia", limit=25, recency="week")
    assert response.ok and messages(response) == ()
    assert [r.query for r in eco.requests] == [
        (("method", "index"), ("q", "rust"), ("freshness", "week")),
        (("method", "index"), ("q", "rust"), ("p", "1"), ("freshness", "week")),
        (("method", "index"), ("q", "rust"), ("p", "2"), ("freshness", "week")),
    ]
    urls = [s.url for s in response.sources]
    assert len(urls) == 25 == len(set(urls))
    assert urls[:2] == [s.url for s in sample_results("rust", 2)]
    assert urls[-1] == sample_results("rust", 25)[-1].url
    assert clock.sleeps == [PAGE_GAP_S, PAGE_GAP_S]


async def test_paging_stops_when_the_results_end(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    eco.results = sample_results("q", 12)
    response = await search(eenv, "q", limit=30)
    assert len(response.sources) == 12 and len(eco.requests) == 3  # page 3 is the "no results" page
    assert messages(response) == ()


async def test_paging_stops_when_a_page_adds_nothing(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    page = results_page("q", sample_results("q", 10))
    eco.enqueue(html_reply(page), html_reply(page))
    response = await search(eenv, "q", limit=20)
    assert len(response.sources) == 10 and len(eco.requests) == 2


async def test_short_pages_say_the_page_cap_bit(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    results = sample_results("q", 27)
    eco.enqueue(*(html_reply(results_page("q", results[n * 9 : n * 9 + 9], n)) for n in range(3)))
    response = await search(eenv, "q", limit=30)
    assert len(response.sources) == 27 and len(eco.requests) == MAX_PAGES
    assert messages(response) == (
        f"limit=30 clamped to 27 results: websearch asks Ecosia for at most {MAX_PAGES} pages",
    )


@pytest.mark.parametrize(
    "reply",
    [html_reply("<html>unavailable</html>", 503), html_reply(challenge_page(), 403)],
    ids=["5xx", "challenge"],
)
async def test_a_failed_later_page_keeps_the_first(eco: FakeEcosia, eenv: dict[str, str], reply: Reply) -> None:
    eco.enqueue(html_reply(results_page("q", sample_results("q", 10))), reply)
    response = await search(eenv, "q", limit=20)
    assert response.ok and len(response.sources) == 10 and len(eco.requests) == 2
    (notice,) = messages(response)
    assert notice.startswith("Ecosia page 2 failed, so the results stop at page 1: ")
    assert response.notices[0].kind == "partial"


async def test_no_time_for_another_page(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    async with client(eenv) as ws:  # under 6.5 s: the 5 s gap, 1 s for the page, 0.5 s for the chain
        response = await ws.asearch("q", provider="ecosia", limit=20, deadline=6.4)
    assert len(response.sources) == 10 and len(eco.requests) == 1
    assert messages(response) == (
        "Ecosia page 2 was not asked, so the results stop at page 1: the search's deadline leaves it no time after "
        "waiting 5 s between Ecosia's pages",
    )


async def test_a_later_page_that_hangs_keeps_the_first(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    eco.enqueue(html_reply(results_page("q", sample_results("q", 10))), Reply(hang=True))
    async with client(eenv) as ws:  # page 2 gets 6.6 - 5 - 0.5 = 1.1 s, then gives up
        response = await ws.asearch("q", provider="ecosia", limit=20, deadline=6.6)
    assert response.ok and len(response.sources) == 10 and len(eco.requests) == 2
    assert messages(response) == ("Ecosia page 2 did not answer in time, so the results stop at page 1",)


async def test_an_answer_a_hung_later_page_cut_short_is_served_not_cached(
    eco: FakeEcosia, eenv: dict[str, str]
) -> None:
    # It was cached: for the next 15 minutes the same search, given all the time it needed,
    # got the 10 results of page 1 and the notice that page 2 had not answered.
    from websearch._state import MemoryStore

    clock = FakeClock()
    first, second = sample_results("q", 20)[:10], sample_results("q", 20)[10:]
    eco.enqueue(html_reply(results_page("q", first)), Reply(hang=True))
    eco.enqueue(html_reply(results_page("q", first)), html_reply(results_page("q", second, 1)))
    async with make_client(env=eenv, clock=clock, engine=True, store=MemoryStore(clock)) as ws:
        cut = await ws.asearch("q", provider="ecosia", limit=20, deadline=6.6)
        whole = await ws.asearch("q", provider="ecosia", limit=20, deadline=6.6)
        again = await ws.asearch("q", provider="ecosia", limit=20, deadline=6.6)
    assert cut.notices[0].kind == "partial" and len(cut.sources) == 10 and not cut.cached
    assert not whole.cached and len(whole.sources) == 20 and not whole.notices
    assert again.cached and len(again.sources) == 20  # a whole answer is kept as before
    assert len(eco.requests) == 4


@pytest.mark.parametrize(
    ("kwargs", "expected", "notice"),
    [
        ({}, 10, None),
        ({"num_search_results": 4, "limit": 9}, 4, "limit=9 not applied: num_search_results=4 takes precedence"),
        ({"limit": 999}, 30, "limit=999 clamped to 30: Ecosia returns at most 30 results"),
    ],
)
async def test_count_is_clamped(
    eenv: dict[str, str], kwargs: dict[str, int], expected: int, notice: str | None
) -> None:
    response = await search(eenv, **kwargs)
    assert len(response.sources) == expected
    assert messages(response) == ((notice,) if notice else ())


# -- blocked, empty, failed --------------------------------------------------------------------


@pytest.mark.parametrize("status", [200, 403, 429, 503])
@pytest.mark.parametrize("kind", ["managed", "turnstile", "legacy"])
async def test_a_cloudflare_challenge_is_blocked(
    eco: FakeEcosia, eenv: dict[str, str], kind: ChallengeKind, status: int
) -> None:
    eco.enqueue(html_reply(challenge_page(kind), status))
    response = await search(eenv)
    assert response.error == CHALLENGE_MESSAGE
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (429, "blocked")


async def test_the_block_page_is_blocked(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    eco.enqueue(html_reply(block_page(), 403))
    response = await search(eenv)
    assert response.error == CHALLENGE_MESSAGE
    assert response.attempts[0].error_kind == "blocked"


async def test_a_bare_403_is_blocked_not_an_auth_failure(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    eco.enqueue(html_reply("<html><body>Forbidden</body></html>", 403))
    response = await search(eenv)
    assert response.error == REFUSED_MESSAGE
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (403, "blocked")


async def test_a_query_that_names_the_challenge_is_not_a_challenge(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    query = 'Just a moment... cf-turnstile-response _cf_chl_opt <form id="challenge-form"> cf-wrapper'
    response = await search(eenv, query)
    assert response.ok, response.error
    assert len(response.sources) == 10
    assert not is_challenge(no_results_page(query).encode())


def test_the_challenge_is_told_by_its_structure() -> None:
    kinds: tuple[ChallengeKind, ...] = ("managed", "turnstile", "legacy")
    for kind in kinds:
        assert is_challenge(challenge_page(kind).encode())
    assert is_challenge(block_page().encode())
    assert not is_challenge(results_page("q", sample_results("q", 2)).encode())
    assert not is_challenge(b"<html><body><p>cf-turnstile challenge-platform _cf_chl_opt</p></body></html>")
    assert not is_challenge(b"<html><head><title>Just a moment...</title></head><body></body></html>")


async def test_the_empty_page_is_no_results(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    eco.enqueue(html_reply(no_results_page("zzzz")))
    response = await search(eenv, "zzzz")
    assert response.error == "Ecosia returned no renderable search content."
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (204, "no_results")


async def test_a_mainline_of_ads_only_is_no_results(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    eco.enqueue(html_reply(results_page("q", [EcosiaResult("Ad", "https://ad.example/", "x", ad=True)], more=False)))
    response = await search(eenv, "q")
    assert response.attempts[0].error_kind == "no_results"


async def test_a_5xx_is_unavailable(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    eco.enqueue(html_reply("<html>unavailable</html>", 503))
    response = await search(eenv)
    assert response.error == "Ecosia HTML error (503)"
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (503, "unavailable")


async def test_retry_after_is_reported(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    eco.enqueue(Reply(429, "slow down", headers={"Retry-After": "30"}))
    response = await search(eenv)
    assert response.error == "Ecosia HTML error (429); retry after 30 s"
    assert (response.attempts[0].error_kind, response.attempts[0].retry_after_s) == ("rate_limited", 30.0)


def test_the_fake_answers_only_get_search(eco: FakeEcosia) -> None:
    from websearch.testing import RecordedRequest

    assert eco.default_reply(RecordedRequest("POST", "/search", (("q", "x"),), {}, b"")).status == 404
    assert eco.default_reply(RecordedRequest("GET", "/", (("q", "x"),), {}, b"")).status == 404
    page = eco.default_reply(RecordedRequest("GET", "/search", (("q", "x"), ("p", "1")), {}, b""))
    assert [s.url for s in parse_results(page.body)] == [r.url for r in sample_results("x")[10:20]]


# -- the CLI and the sync API ------------------------------------------------------------------


def test_cli_search_json(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    eco.results = [EcosiaResult("First &amp; one", "https://example.com/a?b=1&c=2", "Snip<b>pet</b>")]
    proc = run_cli(["search", "q", "--provider", "ecosia", "--format", "json"], eenv)
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["error"] is None and payload["response"]["provider"] == "ecosia"
    assert [(s["title"], s["url"], s["snippet"]) for s in payload["response"]["sources"]] == [
        ("First & one", "https://example.com/a?b=1&c=2", "Snippet")
    ]
    assert eco.last.args["q"] == "q"


def test_sync_api(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    with make_client(env=eenv) as ws:
        response = ws.search("sync query", provider="ecosia", limit=2)
    assert len(response.sources) == 2
    assert eco.last.args["q"] == "sync query"


# -- real saved pages (karust/openserp, MIT: tests/pages/ecosia/SOURCE.md) -----------------------

REAL_TITLES = [
    'What is "tool use", exactly? : r/LocalLLaMA - Reddit',
    "What Are Tools in the Scope of LLMs and Why Are They So ...",
    "From RAG to Tool Use - Cohere",
    "Simon Willison on llm-tool-use",
]


def test_the_real_results_page_is_walked() -> None:
    found = walk((PAGES / "search_results.html").read_bytes())
    assert [title for title, _, _ in found] == REAL_TITLES  # the knowledge panel and ads are not results
    assert {href for _, href, _ in found} == {"http://test.test"}  # upstream anonymised every link
    assert found[0][2] == (
        '02.08.2025 ... The best resource to understand tools is Meta\'s "Toolformer" paper, which invented '
        "the idea of tool-calling agents."
    )
    assert all(snippet for _, _, snippet in found)


def test_the_real_results_page_is_parsed() -> None:
    page = (PAGES / "search_results.html").read_text(encoding="utf-8")
    assert not is_challenge(page.encode())
    (only,) = parse_results(page, now=NOW)  # one URL for all: de-duplicated
    assert (only.title, only.url, only.published_date) == (REAL_TITLES[0], "http://test.test", "2025-08-02")
    title_link = (
        '<a data-test-id="result-link" href="http://test.test" target="_self" rel="noopener" class="result__link'
    )
    pieces = page.split(title_link)
    assert len(pieces) == 5
    distinct = pieces[0] + "".join(
        title_link.replace("http://test.test", f"https://r{n}.example/") + piece
        for n, piece in enumerate(pieces[1:], 1)
    )
    sources = parse_results(distinct, now=NOW)
    assert [s.title for s in sources] == REAL_TITLES
    assert [s.url for s in sources] == [f"https://r{n}.example/" for n in range(1, 5)]
    assert [s.published_date for s in sources] == ["2025-08-02", "2024-06-20", None, None]


async def test_the_real_turnstile_page_is_blocked(eco: FakeEcosia, eenv: dict[str, str]) -> None:
    page = (PAGES / "search_captcha.html").read_bytes()
    assert is_challenge(page)
    eco.enqueue(Reply(403, page, content_type="text/html"))
    response = await search(eenv)
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (429, "blocked")


# -- damaged pages ----------------------------------------------------------------------------

_PAGE = results_page("q", sample_results("q", 10)).encode()
_PIECES = [
    '<div data-test-id="mainline-result-web">',
    '<article data-test-id="organic-result" class="result">',
    '<div data-test-id="mainline-result-ad">',
    '<a data-test-id="result-link" href="//x.example/">',
    '<a class="result__link" href="javascript:alert(1)">',
    '<a class="result__link" href="https://[::1">',
    '<h2 data-test-id="result-title">',
    '<p data-test-id="web-result-description">',
    "02.08.2025 ... ",
    "99.99.9999 ... ",
    '<input name="cf-turnstile-response">',
    "<script>window._cf_chl_opt={}</script>",
    '<section data-test-id="mainline">',
    "</a>",
    "</article>",
    "</div>",
    "\x00",
    "\ud800",
    "&#0;",
    "text",
]


@settings(deadline=None, database=None, max_examples=150)
@given(cut=st.integers(0, len(_PAGE)), junk=st.binary(max_size=64), at=st.integers(0, len(_PAGE)))
def test_damaged_pages_never_raise(cut: int, junk: bytes, at: int) -> None:
    page = _PAGE[:at] + junk + _PAGE[at:cut]
    is_challenge(page)
    for source in parse_results(page, now=NOW):
        assert source.url.startswith(("http://", "https://")) and source.title


@settings(deadline=None, database=None, max_examples=150)
@given(parts=st.lists(st.sampled_from(_PIECES), max_size=30), as_text=st.booleans())
def test_random_ecosia_html_never_raises(parts: list[str], as_text: bool) -> None:
    page = "".join(parts)
    parse_results(page if as_text else page.encode("utf-8", "surrogatepass"), now=NOW)
    is_challenge(page.encode("utf-8", "surrogatepass"))
