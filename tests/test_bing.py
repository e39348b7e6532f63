"""Bing against a loopback fake that serves real-looking www.bing.com pages."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import NOW, FakeClock, make_client, messages, run_cli
from websearch import SearchResponse
from websearch._providers.bing import CHALLENGE_MESSAGE, HEADERS, is_challenge, parse_results, unwrap_href
from websearch.testing import Reply
from websearch.testing.bing import (
    BingResult,
    FakeBing,
    captcha_page,
    challenge_page,
    ck_href,
    no_results_page,
    results_page,
    sample_results,
)

TODAY = 20787  # 2026-11-30 (NOW) as Bing's day number: days since 1970-01-01
BASE = [("mkt", "en-US"), ("setlang", "en")]


@pytest.fixture
def bing() -> Iterator[FakeBing]:
    with FakeBing() as fake:
        yield fake


@pytest.fixture
def benv(config_dir: Any, bing: FakeBing) -> dict[str, str]:
    """A hermetic environment with the Bing fake only."""
    return {"WEBSEARCH_CONFIG_DIR": str(config_dir), **bing.env}


async def search(env: dict[str, str], query: str = "rust async book", **params: Any) -> SearchResponse:
    async with make_client(env=env, clock=FakeClock()) as ws:
        return await ws.asearch(query, provider="bing", **params)


def b64(url: str) -> str:
    return base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")


# -- the request ------------------------------------------------------------------------------


async def test_request_is_a_browser_get_of_search(bing: FakeBing, benv: dict[str, str]) -> None:
    response = await search(benv)
    assert response.ok, response.error
    assert len(bing.requests) == 1
    req = bing.last
    assert (req.method, req.path, req.query, req.body) == ("GET", "/search", (("q", "rust async book"), *BASE), b"")
    for name, value in HEADERS.items():
        assert req.headers[name.lower()] == value
    assert req.headers["accept-language"].startswith("en-US")  # it must agree with mkt
    assert "referer" not in req.headers and "first" not in req.args
    assert messages(response) == ()


@pytest.mark.parametrize(
    ("recency", "code"),
    [("day", "ez1"), ("week", "ez2"), ("month", "ez3"), ("year", f"ez5_{TODAY - 365}_{TODAY}")],
)
async def test_recency_maps_to_filters(bing: FakeBing, benv: dict[str, str], recency: str, code: str) -> None:
    response = await search(benv, "q", recency=recency)
    assert bing.last.query == (("q", "q"), *BASE, ("filters", f'ex1:"{code}"'))
    assert messages(response) == ()


# -- parsing ----------------------------------------------------------------------------------


async def test_parses_results_unwraps_redirects_and_decodes(bing: FakeBing, benv: dict[str, str]) -> None:
    bing.results = [
        BingResult(
            "First &amp; <strong>result</strong>", "https://example.com/a?x=1&y=2", "Snippet <strong>one</strong>"
        ),
        BingResult("Second", "https://example.org/b", ""),
        BingResult("Direct", "https://direct.example.net/c", "plain", link="direct"),
        BingResult("Dated", "https://news.example/d", "Fresh &quot;news&quot;.", date="Sep 22, 2026"),
        BingResult("Relative", "https://news.example/e", "ago", date="3 days ago"),
    ]
    response = await search(benv)
    assert [(s.title, s.url, s.snippet, s.published_date) for s in response.sources] == [
        ("First & result", "https://example.com/a?x=1&y=2", "Snippet one", None),
        ("Second", "https://example.org/b", None, None),
        ("Direct", "https://direct.example.net/c", "plain", None),
        ("Dated", "https://news.example/d", 'Fresh "news".', "Sep 22, 2026"),
        ("Relative", "https://news.example/e", "ago", "3 days ago"),
    ]
    dated = response.sources[3]
    assert dated.age_seconds == int((NOW - NOW.replace(month=9, day=22, hour=0)).total_seconds())
    assert response.sources[4].age_seconds is None  # relative dates stay raw
    assert response.provider == "bing"
    assert response.answer is None and response.request_id is None


def test_the_realistic_page_parses_fully() -> None:
    page = results_page("rust async book", [BingResult("Ad", "https://ad.example/", ad=True), *sample_results("x", 10)])
    assert 80_000 < len(page) < 130_000  # a real SERP carries its inline script and style
    sources = parse_results(page.encode(), NOW)
    assert [s.url for s in sources] == [r.url for r in sample_results("x", 10)]
    assert all(s.snippet and s.snippet.startswith("Learn about x in part") for s in sources)
    assert [s.published_date for s in sources if s.published_date] == ["Mar 2, 2021", "Nov 6, 2025", "Jul 10, 2023"]
    assert not any("WEB" in (s.snippet or "") for s in sources)  # Bing's decorative label is not text


async def test_ads_internal_links_and_duplicates_are_dropped(bing: FakeBing, benv: dict[str, str]) -> None:
    bing.results = [
        BingResult("Ad", "https://shop.example.com", "buy now", ad=True),
        BingResult("One", "https://one.example.com/", "1"),
        BingResult("One again", "https://one.example.com/", "dup"),
        BingResult("Images of it", "https://www.bing.com/images/search?q=x&FORM=IQFRBA", "internal", link="relative"),
        BingResult("Bing search", "https://www.bing.com/search?q=more", "internal"),
        BingResult("Two", "https://two.example.com/", "2", link="direct"),
    ]
    response = await search(benv)
    assert [s.url for s in response.sources] == ["https://one.example.com/", "https://two.example.com/"]


def test_unwrap_href_rules() -> None:
    target = "https://example.com/a?b=1&c=%20d#frag"
    assert unwrap_href(ck_href(target)) == target  # the page's &amp; form
    assert unwrap_href(ck_href(target).replace("&amp;", "&")) == target  # as the parser reads it
    plain = f"https://www.bing.com/ck/a?!&&p=x&u=a1{b64(target)}&ntb=1"
    assert unwrap_href(plain) == target
    padded = base64.urlsafe_b64encode(b"https://a.example/x").decode()
    assert padded.endswith("=") and unwrap_href(f"https://www.bing.com/ck/a?u=a1{padded}") == "https://a.example/x"
    urlsafe = "https://a.example/?q=\u00ff\u00fe>>>"  # base64url's "-" and "_" in the encoding
    assert "-" in b64(urlsafe) or "_" in b64(urlsafe)
    assert unwrap_href(f"https://www.bing.com/ck/a?p=1&u=a1{b64(urlsafe)}") == urlsafe
    assert unwrap_href(f"https://cn.bing.com/ck/a?!&&p=1&u=a1{b64(target)}&ntb=1") == target
    assert unwrap_href("https://example.org/p") == "https://example.org/p"
    assert unwrap_href("//example.org/p") == "https://example.org/p"
    assert unwrap_href("https://www.bing.com/webmasters/help") == "https://www.bing.com/webmasters/help"


@pytest.mark.parametrize(
    "href",
    [
        None,
        "",
        "/search?q=x&FORM=QSRE1",
        "javascript:alert(1)",
        "mailto:a@b.example",
        "ftp://files.example/x",
        "https://",
        "https://www.bing.com/search?q=x",
        "https://www.bing.com/aclick?ld=e8&u=aHR0cHM6Ly9zaG9wLmV4YW1wbGU",
        "https://www.bing.com/images/search?q=x",
        "https://www.bing.com/ck/a?!&&p=1&ntb=1",  # no target
        "https://www.bing.com/ck/a?!&&p=1&u=a3" + b64("https://a.example/") + "&ntb=1",  # not "a1"
        "https://www.bing.com/ck/a?!&&p=1&u=a1%%%%&ntb=1",  # not base64
        "https://www.bing.com/ck/a?!&&p=1&u=a1" + base64.urlsafe_b64encode(b"https://a.example/\xff").decode(),
        "https://www.bing.com/ck/a?!&&p=1&u=a1" + b64("javascript:alert(1)"),
        "https://www.bing.com/ck/a?!&&p=1&u=a1" + b64("/search?q=inner"),
        "https://www.bing.com/ck/a?!&&p=1&u=a1" + b64("https://www.bing.com/videos/search?q=x"),
        "https://www.bing.com/ck/a?!&&p=1&xu=a1" + b64("https://a.example/"),  # not the u parameter
        "https://a.example/has space",
        "https://a.example/has\ncontrol",
    ],
)
def test_links_that_are_not_results(href: str | None) -> None:
    assert unwrap_href(href) is None


def test_inline_tags_add_no_spaces_and_whitespace_is_folded() -> None:
    page = results_page(
        "antani",
        [
            BingResult(
                "<strong>Eino</strong>-ext docs", "https://a.example/", "Come se fosse <strong>antani</strong>: la"
            ),
            BingResult("B", "https://b.example/", "&quot;<strong>Foo</strong> was here&quot; and   <i>more</i>\n text"),
        ],
    )
    sources = parse_results(page, NOW)
    assert [s.title for s in sources] == ["Eino-ext docs", "B"]
    assert [s.snippet for s in sources] == ["Come se fosse antani: la", '"Foo was here" and more text']


def test_blocks_outside_the_results_list_and_without_a_title_are_not_results() -> None:
    organic = ck_href("https://real.example/")
    page = (
        '<html><body><ol id="b_results" class="">'
        '<li class="b_ad"><ul><li class="b_algo"><h2><a href="https://nested.example/">Nested ad</a></h2></li></ul></li>'
        '<li class="b_algo"><div class="b_caption"><p>no title link</p></div></li>'
        f'<li class="b_algo" data-id iid=SERP.5334><link rel="stylesheet" href="/rp/a.css"/><h2 class=""><a href="{organic}">'
        'Real</a></h2><p class="b_lineclamp2 b_algoSlug">snippet outside a caption</p></li>'
        '</ol><ol id="b_context"><li class="b_algo"><h2><a href="https://side.example/">Side</a></h2></li></ol>'
        "</body></html>"
    )
    assert [(s.title, s.url, s.snippet) for s in parse_results(page, NOW)] == [
        ("Real", "https://real.example/", "snippet outside a caption")
    ]


_HREFS = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["javascript:x", "/search?q=a", "https://www.bing.com/aclick?u=x", "//x.example/p"]),
    st.builds(lambda t: "https://www.bing.com/ck/a?!&&p=1&u=a1" + t, st.text(max_size=30)),
    st.builds(lambda u: "https://www.bing.com/ck/a?!&&p=1&u=a1" + b64(u) + "&ntb=1", st.text(max_size=30)),
)
_PIECES = (b'<li class="b_algo">', b'<h2><a href="', b"</a></h2>", b"<p>", b'<span class="news_dt">', b"</ol>")


@st.composite
def damaged_pages(draw: st.DrawFn) -> bytes:
    results = draw(
        st.lists(
            st.builds(
                BingResult,
                title=st.text(max_size=20),
                url=_HREFS,
                snippet=st.text(max_size=30),
                date=st.one_of(st.none(), st.text(max_size=12), st.sampled_from(["Feb 30, 2026", "Sep 22, 2026"])),
                ad=st.booleans(),
                link=st.sampled_from(["ck", "direct", "relative"]),
            ),
            max_size=6,
        )
    )
    page = results_page(draw(st.text(max_size=10)), results).encode("utf-8", "surrogatepass")
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(page)))
        if draw(st.booleans()):
            page = page[:at] + draw(st.sampled_from(_PIECES)) + page[at:]
        else:
            page = page[:at] + page[at + draw(st.integers(1, 400)) :]
    return page


@settings(deadline=None, database=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(page=damaged_pages(), limit=st.integers(1, 30))
def test_damaged_pages_never_raise_and_give_only_http_urls(page: bytes, limit: int) -> None:
    sources = parse_results(page, NOW, limit)
    assert len(sources) <= limit and len({s.url for s in sources}) == len(sources)
    for source in sources:
        assert source.url.startswith(("http://", "https://")) and " " not in source.url, source.url
        assert source.title
    is_challenge(page, "https://www.bing.com/search?q=x")


# -- paging -----------------------------------------------------------------------------------


async def test_a_limit_beyond_one_page_asks_for_the_next_pages(bing: FakeBing, benv: dict[str, str]) -> None:
    response = await search(benv, limit=25)
    assert response.ok, response.error
    assert len(response.sources) == 25 and len({s.url for s in response.sources}) == 25
    assert [s.url for s in response.sources] == [r.url for r in sample_results("rust async book", 25)]
    assert [req.args.get("first") for req in bing.requests] == [None, "11", "21"]
    assert [req.args.get("FORM") for req in bing.requests] == [None, "PERE", "PERE1"]
    _, second, third = bing.requests
    assert second.headers["sec-fetch-site"] == third.headers["sec-fetch-site"] == "same-origin"
    assert second.headers["referer"] == f"{bing.base_url}/search?q=rust+async+book&mkt=en-US&setlang=en"
    assert third.headers["referer"].endswith("&setlang=en&first=11&FORM=PERE")
    assert messages(response) == ()


async def test_paging_stops_when_a_page_adds_nothing_new(bing: FakeBing, benv: dict[str, str]) -> None:
    bing.results = sample_results("q", 13)  # page 2 holds 3; "page 3" is page 1 again, as Bing answers
    response = await search(benv, "q", limit=30)
    assert [s.url for s in response.sources] == [r.url for r in sample_results("q", 13)]
    assert [req.args.get("first") for req in bing.requests] == [None, "11", "21"]
    assert messages(response) == ()


async def test_paging_stops_at_max_pages(bing: FakeBing, benv: dict[str, str]) -> None:
    bing.page_size = 7  # Bing's pages often hold fewer than ten organic results
    response = await search(benv, "q", num_search_results=30)
    assert [req.args.get("first") for req in bing.requests] == [None, "11", "21", "31"]
    assert len(response.sources) == 28 and messages(response) == ()


async def test_a_failed_later_page_keeps_the_earlier_ones(bing: FakeBing, benv: dict[str, str]) -> None:
    bing.enqueue(Reply(200, results_page("q", sample_results("q", 10)), content_type="text/html"))
    bing.enqueue(Reply(503, "<html>unavailable</html>", content_type="text/html"))
    response = await search(benv, "q", limit=20)
    assert response.ok and len(response.sources) == 10
    assert messages(response) == ("Bing page 2 failed, so the results stop at page 1: Bing HTML error (503)",)
    bing.enqueue(Reply(200, results_page("q", sample_results("q", 10)), content_type="text/html"))
    bing.enqueue(Reply(200, captcha_page("q"), content_type="text/html"))
    blocked = await search(benv, "q", limit=20)
    assert len(blocked.sources) == 10
    assert messages(blocked) == (f"Bing page 2 failed, so the results stop at page 1: {CHALLENGE_MESSAGE}",)


@pytest.mark.parametrize(
    ("kwargs", "expected", "notice"),
    [
        ({}, 10, None),
        ({"limit": 3}, 3, None),
        ({"num_search_results": 4, "limit": 9}, 4, "limit=9 not applied: num_search_results=4 takes precedence"),
        ({"limit": 999}, 30, "limit=999 clamped to 30: Bing returns at most 30 results"),
    ],
)
async def test_count_is_clamped(
    bing: FakeBing, benv: dict[str, str], kwargs: dict[str, int], expected: int, notice: str | None
) -> None:
    response = await search(benv, **kwargs)
    assert len(response.sources) == expected
    assert len(bing.requests) == (1 if expected <= 10 else 3)
    assert messages(response) == ((notice,) if notice else ())


async def test_unsupported_parameters_become_notices(bing: FakeBing, benv: dict[str, str]) -> None:
    response = await search(benv, max_tokens=100, temperature=0.5)
    assert messages(response) == (
        "max_tokens=100 not applied: Bing does not support it",
        "temperature=0.5 not applied: Bing does not support it",
    )


# -- the richer parameters --------------------------------------------------------------------

WHOLE = "Bing's custom date range takes whole days"


@pytest.mark.parametrize(
    ("kwargs", "code", "notices"),
    [
        ({"recency_days": 3}, f"ez5_{TODAY - 3}_{TODAY}", ()),
        (
            {"recency_hours": 20},
            f"ez5_{TODAY - 1}_{TODAY}",
            (
                f'recency_hours=20 applied as whole days (filters=ex1:"ez5_{TODAY - 1}_{TODAY}", 2026-11-29 to 2026-11-30): {WHOLE}',
            ),
        ),
        (
            {"recency_days": 20, "recency": "day"},
            f"ez5_{TODAY - 20}_{TODAY}",
            ('recency="day" not applied: recency_days takes precedence',),
        ),
        ({"start_published_date": "2026-11-01"}, f"ez5_{TODAY - 29}_{TODAY}", ()),
        (
            {"start_published_date": "2026-11-01", "end_published_date": "2026-11-29"},
            f"ez5_{TODAY - 29}_{TODAY - 1}",
            (),
        ),
        ({"start_published_date": "2020-02-01"}, f"ez5_{TODAY - 2494}_{TODAY}", ()),
        ({"recency": "week", "end_published_date": "2026-11-29"}, f"ez5_{TODAY - 7}_{TODAY - 1}", ()),
        (
            {"end_published_date": "2026-11-29"},
            None,
            (
                'end_published_date="2026-11-29" not applied: Bing\'s custom date range needs a start '
                "(give a start date, recency_days, recency_hours or recency)",
            ),
        ),
        (
            {"start_published_date": "2026-11-01T08:30:00Z"},
            f"ez5_{TODAY - 29}_{TODAY}",
            (
                'start_published_date="2026-11-01T08:30:00Z" applied as whole days '
                f'(filters=ex1:"ez5_{TODAY - 29}_{TODAY}", 2026-11-01 to 2026-11-30): {WHOLE}',
            ),
        ),
    ],
)
async def test_the_date_ladder_is_a_custom_range(
    bing: FakeBing, benv: dict[str, str], kwargs: dict[str, object], code: str | None, notices: tuple[str, ...]
) -> None:
    response = await search(benv, "q", **kwargs)
    assert response.ok and messages(response) == notices
    assert bing.last.query == (("q", "q"), *BASE, *([("filters", f'ex1:"{code}"')] * bool(code)))


async def test_domains_are_site_operators(bing: FakeBing, benv: dict[str, str]) -> None:
    response = await search(benv, "q", include_domains=["a.org", "c.org"], exclude_domains=["b.org"])
    assert bing.last.args["q"] == "q (site:a.org OR site:c.org) -site:b.org"
    assert messages(response) == (
        'include_domains=["a.org", "c.org"] applied as site: operators in the query: Bing has no domain filter',
        'exclude_domains=["b.org"] applied as -site: operators in the query: Bing has no domain filter',
    )
    assert response.sources and all(s.url.startswith(("https://a.org/", "https://c.org/")) for s in response.sources)


# -- failures ---------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [200, 403, 429])
async def test_the_captcha_page_is_blocked(bing: FakeBing, benv: dict[str, str], status: int) -> None:
    bing.enqueue(Reply(status, captcha_page("rust"), content_type="text/html"))
    response = await search(benv)
    assert response.error == CHALLENGE_MESSAGE
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (429, "blocked")


async def test_a_redirect_to_the_captcha_is_blocked(bing: FakeBing, benv: dict[str, str]) -> None:
    bing.enqueue(Reply(302, b"", headers={"Location": "/turing/captcha/challenge?q=rust&rurl=%2Fsearch"}))
    response = await search(benv)
    assert [req.path for req in bing.requests] == ["/search", "/turing/captcha/challenge"]
    assert (response.attempts[0].error_kind, response.error) == ("blocked", CHALLENGE_MESSAGE)


async def test_a_query_that_names_the_challenge_is_not_a_challenge(bing: FakeBing, benv: dict[str, str]) -> None:
    query = "b_captcha /turing/captcha cf-turnstile challenge-form One last step"
    response = await search(benv, query)
    assert response.ok, response.error
    assert len(response.sources) == 10


def test_the_challenge_is_told_by_its_structure() -> None:
    assert is_challenge(captcha_page("x").encode())
    assert is_challenge(challenge_page().encode())
    assert is_challenge(b"<html><body>whatever</body></html>", "https://www.bing.com/turing/captcha/challenge?q=x")
    assert is_challenge(b'<html><form id="challenge-form" action="/x"></form></html>')
    page = results_page("b_captcha /turing/captcha turnstile challenge-form", sample_results("x", 2)).encode()
    assert not is_challenge(page, "https://www.bing.com/search?q=turing")
    assert not is_challenge(no_results_page("b_captcha turnstile").encode())
    assert not is_challenge(b"<html><body><p>Please solve the challenge below: b_captcha</p></body></html>")


async def test_the_no_results_page_is_a_204_failure(bing: FakeBing, benv: dict[str, str]) -> None:
    bing.enqueue(Reply(200, no_results_page("zzzz"), content_type="text/html"))
    response = await search(benv, "zzzz")
    assert response.error == "Bing returned no renderable search content."
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (204, "no_results")


async def test_a_5xx_is_unavailable(bing: FakeBing, benv: dict[str, str]) -> None:
    bing.enqueue(Reply(503, "<html>unavailable</html>", content_type="text/html"))
    response = await search(benv)
    assert response.error == "Bing HTML error (503)"
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (503, "unavailable")


async def test_retry_after_is_reported(bing: FakeBing, benv: dict[str, str]) -> None:
    bing.enqueue(Reply(429, "slow down", headers={"Retry-After": "30"}))
    response = await search(benv)
    assert response.error == "Bing HTML error (429); retry after 30 s"
    assert (response.attempts[0].error_kind, response.attempts[0].retry_after_s) == ("rate_limited", 30.0)


# -- the library and the CLI ------------------------------------------------------------------


def test_sync_api(bing: FakeBing, benv: dict[str, str]) -> None:
    with make_client(env=benv) as ws:
        response = ws.search("sync query", provider="bing", limit=2)
    assert len(response.sources) == 2
    assert bing.last.args["q"] == "sync query"


def test_cli_search(bing: FakeBing, benv: dict[str, str]) -> None:
    result = run_cli(["search", "rust async book", "--provider", "bing", "--format", "json"], benv)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["error"] is None
    data = payload["response"]
    assert data["provider"] == "bing"
    assert [s["url"] for s in data["sources"]] == [r.url for r in sample_results("rust async book", 10)]
    assert bing.last.args["q"] == "rust async book"
