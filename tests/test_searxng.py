"""SearXNG against a loopback fake that speaks searx/webapp.py's JSON format."""

from __future__ import annotations

import base64
import time
from pathlib import Path

import pytest

from conftest import FakeClock, make_client, messages, provider_context, search_once
from websearch import SearchParams, SearchSource, WebSearch
from websearch._providers.searxng import MAX_PAGES, NOT_CONFIGURED, PROVIDER
from websearch.errors import MissingCredentialError
from websearch.providers import HttpResponse
from websearch.testing import FakeSearXNG, RecordedRequest, Reply
from websearch.testing.searxng import json_disabled_page, searxng_results_body


def make_env(config_dir: Path, searx: FakeSearXNG, **extra: str) -> dict[str, str]:
    return {
        "WEBSEARCH_CONFIG_DIR": str(config_dir),
        "SEARXNG_ENDPOINT": "https://searx.example.org",
        **searx.env,
        **extra,
    }


async def run(env: dict[str, str], **params: object):  # type: ignore[no-untyped-def]
    return await search_once("searxng", env, "rust async", **params)


async def test_default_request(searx: FakeSearXNG, config_dir: Path) -> None:
    response = await run(make_env(config_dir, searx))
    req = searx.last
    assert (req.method, req.path) == ("GET", "/search")
    assert req.query == (("q", "rust async"), ("format", "json"))
    assert req.headers["accept"] == "application/json"
    assert "authorization" not in req.headers
    assert response.provider == "searxng"


#: The partial notice of the fake's default body (one engine answered a CAPTCHA).
ENGINES_DOWN = "some SearXNG engines did not answer, so the results come from the others: google: CAPTCHA"


@pytest.mark.parametrize("recency", ["day", "week", "month", "year"])
async def test_recency_is_sent_as_time_range(searx: FakeSearXNG, config_dir: Path, recency: str) -> None:
    # SearXNG has accepted time_range=week since 2020 (searx/webadapter.py); only its API doc omits it
    response = await run(make_env(config_dir, searx), recency=recency, limit=3)
    assert response.ok, response.error
    assert searx.last.query == (("q", "rust async"), ("format", "json"), ("pageno", "1"), ("time_range", recency))
    assert messages(response) == (ENGINES_DOWN,)


def fake_answer(searx: FakeSearXNG, **args: str) -> Reply:
    """What the fake answers GET /search?format=json&q=x&<args> (its rules, without a socket)."""
    query = (("q", "x"), ("format", "json"), *args.items())
    return searx.default_reply(RecordedRequest("GET", "/search", query, {}, b""))


@pytest.mark.parametrize("time_range", ["day", "week", "month", "year", ""])
def test_the_fake_accepts_the_time_ranges_searxng_accepts(searx: FakeSearXNG, time_range: str) -> None:
    assert fake_answer(searx, time_range=time_range).status == 200


@pytest.mark.parametrize(("name", "value"), [("time_range", "fortnight"), ("pageno", "0"), ("pageno", "two")])
def test_the_fake_refuses_what_searxng_refuses(searx: FakeSearXNG, name: str, value: str) -> None:
    reply = fake_answer(searx, **{name: value})
    assert (reply.status, reply.body) == (400, {"error": f'Invalid value "{value}" for parameter {name}'})


async def test_parse_realistic_body(searx: FakeSearXNG, config_dir: Path) -> None:
    response = await run(make_env(config_dir, searx), limit=3)
    assert response.sources == (
        SearchSource(
            title="Rust Async result 1",
            url="https://site1.example.org/rust-async/1",
            snippet="About rust async: page 1 explains the details, trade-offs and examples.",
            published_date="2026-11-27T00:00:00",
            age_seconds=3 * 86400 + 12 * 3600,
        ),
        SearchSource(
            title="Rust Async result 2",
            url="https://site2.example.org/rust-async/2",
            snippet="About rust async: page 2 explains the details, trade-offs and examples.",
        ),
        SearchSource(
            title="Rust Async result 3",
            url="https://site3.example.org/rust-async/3",
            snippet="About rust async: page 3 explains the details, trade-offs and examples.",
        ),
    )
    assert response.related_questions == ("rust async tutorial", "rust async vs alternatives")
    assert response.answer is None


@pytest.mark.parametrize(
    ("params", "count", "pages"), [({}, 10, 1), ({"limit": 50}, 50, 2), ({"num_search_results": 4}, 4, 1)]
)
async def test_count_is_cut_locally_with_no_searxng_maximum(
    searx: FakeSearXNG, config_dir: Path, params: dict[str, int], count: int, pages: int
) -> None:
    # SearXNG has no result-count parameter and no maximum: a page holds what its engines merged
    searx.n_results = 30
    response = await run(make_env(config_dir, searx), **params)
    assert len(response.sources) == count == len({s.url for s in response.sources})
    assert len(searx.requests) == pages
    assert messages(response) == (ENGINES_DOWN,)  # no "SearXNG returns at most 20 results"


# -- pages ------------------------------------------------------------------------------------


async def test_a_limit_above_one_page_fetches_the_next_pages(searx: FakeSearXNG, config_dir: Path) -> None:
    searx.n_results = 10
    response = await run(make_env(config_dir, searx), limit=25)
    assert [r.args.get("pageno") for r in searx.requests] == ["1", "2", "3"]
    assert all(r.args["q"] == "rust async" and r.args["format"] == "json" for r in searx.requests)
    assert [s.url.rsplit("/", 1)[1] for s in response.sources] == [str(i) for i in range(1, 26)]
    assert response.related_questions == ("rust async tutorial", "rust async vs alternatives")
    assert messages(response) == (ENGINES_DOWN,)


@pytest.mark.parametrize("limit", [3, 10])
async def test_a_limit_within_one_page_sends_one_request(searx: FakeSearXNG, config_dir: Path, limit: int) -> None:
    searx.n_results = 4  # fewer than asked: the limit is within one page, so no second request
    response = await run(make_env(config_dir, searx), limit=limit)
    assert [r.args.get("pageno") for r in searx.requests] == ["1"]
    assert len(response.sources) == min(limit, 4)


async def test_paging_stops_at_an_empty_page(searx: FakeSearXNG, config_dir: Path) -> None:
    searx.n_results, searx.pages = 12, 1
    response = await run(make_env(config_dir, searx), limit=30)
    assert [r.args.get("pageno") for r in searx.requests] == ["1", "2"]
    assert len(response.sources) == 12
    assert messages(response) == (ENGINES_DOWN,)


async def test_paging_stops_when_a_page_adds_nothing_new(searx: FakeSearXNG, config_dir: Path) -> None:
    page = searxng_results_body("rust async", 8, unresponsive_engines=[])
    repeat = searxng_results_body("rust async", 3, first=6, unresponsive_engines=[])  # results 6-8 again
    searx.enqueue(Reply(200, page), Reply(200, repeat))
    response = await run(make_env(config_dir, searx), limit=20)
    assert len(searx.requests) == 2
    assert [s.url.rsplit("/", 1)[1] for s in response.sources] == [str(i) for i in range(1, 9)]
    assert messages(response) == ()


async def test_paging_stops_at_our_page_cap_with_a_notice(searx: FakeSearXNG, config_dir: Path) -> None:
    searx.n_results = 3
    response = await run(make_env(config_dir, searx), num_search_results=40)
    assert [r.args.get("pageno") for r in searx.requests] == ["1", "2", "3", "4", "5"] and MAX_PAGES == 5
    assert len(response.sources) == 15
    assert messages(response) == (
        ENGINES_DOWN,
        "num_search_results=40 clamped to 15 results: websearch asks SearXNG for at most 5 pages",
    )
    assert [n.kind for n in response.notices] == ["partial", "clamped"]


async def test_a_later_page_failing_keeps_the_earlier_pages(searx: FakeSearXNG, config_dir: Path) -> None:
    searx.enqueue(
        Reply(200, searxng_results_body("rust async", 10)),
        Reply(429, "Too Many Requests", content_type="text/plain"),
    )
    response = await run(make_env(config_dir, searx), limit=30)
    assert response.ok and len(response.sources) == 10 and len(searx.requests) == 2
    assert messages(response) == (
        ENGINES_DOWN,
        "SearXNG page 2 failed, so the results stop at page 1: SearXNG API error (429): Too Many Requests",
    )


async def test_a_later_page_cut_by_the_deadline_keeps_the_earlier_pages(searx: FakeSearXNG, config_dir: Path) -> None:
    searx.enqueue(Reply(200, searxng_results_body("rust async", 10)), Reply(hang=True))
    async with make_client(env=make_env(config_dir, searx)) as ws:
        started = time.monotonic()
        response = await ws.asearch("rust async", provider="searxng", limit=30, deadline=0.5)
        elapsed = time.monotonic() - started
    assert elapsed <= 0.6, elapsed
    assert response.ok and len(response.sources) == 10 and len(searx.requests) == 2
    assert messages(response) == (
        ENGINES_DOWN,
        "SearXNG page 2 failed, so the results stop at page 1: SearXNG did not answer before the search's deadline",
    )


async def test_the_first_page_failing_fails_the_search(searx: FakeSearXNG, config_dir: Path) -> None:
    searx.enqueue(Reply(429, "Too Many Requests", content_type="text/plain"))
    response = await run(make_env(config_dir, searx), limit=30)
    assert response.error == "SearXNG API error (429): Too Many Requests"
    assert len(searx.requests) == 1


def test_the_plan_holds_every_page_request(config_dir: Path, clock: FakeClock) -> None:
    env = {"SEARXNG_ENDPOINT": "https://searx.example.org", "SEARXNG_TOKEN": "tok-abcdef"}
    plan = PROVIDER.plan(SearchParams("q", limit=25, recency="day"), provider_context(config_dir, env, clock))
    assert plan.request is plan.state[0] and plan.limit == 25
    assert [dict(r.params)["pageno"] for r in plan.state] == ["1", "2", "3", "4", "5"]
    assert all(r.secrets == ("tok-abcdef",) and dict(r.params)["time_range"] == "day" for r in plan.state)
    assert plan.notices == []


async def test_title_falls_back_to_url_and_urlless_results_are_dropped(searx: FakeSearXNG, config_dir: Path) -> None:
    searx.enqueue(
        Reply(
            200,
            {
                "results": [
                    {"url": "https://a.example"},
                    {"title": "no url"},
                    {"url": "https://b.example", "title": "B", "content": "   ", "published_date": "2026-11-29"},
                ]
            },
        )
    )
    response = await run(make_env(config_dir, searx))
    assert [(s.title, s.url, s.snippet, s.published_date) for s in response.sources] == [
        ("https://a.example", "https://a.example", None, None),
        ("B", "https://b.example", None, "2026-11-29"),
    ]


async def test_results_without_an_http_url_are_dropped(searx: FakeSearXNG, config_dir: Path) -> None:
    # SearXNG keeps an engine's URL whatever its scheme (only a missing one becomes http)
    urls = [
        "magnet:?xt=urn:btih:c9e15763f722f23e98a29decdfae341b98d53056",
        "ftp://ftp.example.org/pub/file.iso",
        "javascript:alert(1)",
        "http:///no-host",
        "HTTPS://Upper.example/a",
        "http://plain.example/b",
    ]
    searx.enqueue(Reply(200, {"results": [{"url": u, "title": u} for u in urls], "unresponsive_engines": []}))
    response = await run(make_env(config_dir, searx))
    assert [s.url for s in response.sources] == ["HTTPS://Upper.example/a", "http://plain.example/b"]


@pytest.mark.parametrize(
    ("engines", "notice"),
    [
        ([["google", "CAPTCHA"]], ENGINES_DOWN),
        (
            [["brave", "Suspended: too many requests"], ["startpage", "timeout"]],
            "some SearXNG engines did not answer, so the results come from the others: "
            "brave: Suspended: too many requests; startpage: timeout",
        ),
        ([], None),
        ("not a list", None),
        ([[], "junk"], None),
    ],
)
async def test_unresponsive_engines_are_a_partial_notice_when_others_answered(
    searx: FakeSearXNG, config_dir: Path, engines: object, notice: str | None
) -> None:
    searx.enqueue(Reply(200, searxng_results_body("q", 3, unresponsive_engines=engines)))
    response = await run(make_env(config_dir, searx))
    assert response.ok and len(response.sources) == 3
    assert messages(response) == ((notice,) if notice else ())
    assert [n.kind for n in response.notices] == (["partial"] if notice else [])


async def test_unresponsive_engines_of_every_page_are_one_notice(searx: FakeSearXNG, config_dir: Path) -> None:
    searx.enqueue(
        Reply(200, searxng_results_body("q", 10, unresponsive_engines=[["google", "CAPTCHA"]])),
        Reply(
            200,
            searxng_results_body("q", 10, first=11, unresponsive_engines=[["google", "CAPTCHA"], ["qwant", "timeout"]]),
        ),
    )
    response = await run(make_env(config_dir, searx), limit=20)
    assert messages(response) == (
        "some SearXNG engines did not answer, so the results come from the others: google: CAPTCHA; qwant: timeout",
    )


async def test_no_results_with_failed_engines_is_503(searx: FakeSearXNG, config_dir: Path) -> None:
    searx.enqueue(
        Reply(200, searxng_results_body("q", 0, unresponsive_engines=[["google", "CAPTCHA"], ["brave", "timeout"]]))
    )
    response = await run(make_env(config_dir, searx))
    assert (
        response.error == "SearXNG returned no usable results; upstream engines failed: google: CAPTCHA; brave: timeout"
    )
    assert (response.attempts[-1].status, response.attempts[-1].error_kind) == (503, "unavailable")


async def test_no_results_without_failures_is_204(searx: FakeSearXNG, config_dir: Path) -> None:
    searx.enqueue(Reply(200, searxng_results_body("q", 0, unresponsive_engines=[], suggestions=[])))
    response = await run(make_env(config_dir, searx))
    assert response.error == "SearXNG returned no renderable search content."
    assert (response.attempts[-1].status, response.attempts[-1].error_kind) == (204, "no_results")


async def test_json_format_disabled_403_says_how_to_fix(searx: FakeSearXNG, config_dir: Path) -> None:
    searx.enqueue(Reply(403, json_disabled_page(), content_type="text/html"))
    response = await run(make_env(config_dir, searx))
    assert response.error == f"SearXNG authorization failed (403). {AUTH_HINT}"
    assert "add `json` to `search.formats`" in response.error
    assert "API key" not in response.error  # SearXNG has none: Basic auth or a token
    assert response.attempts[-1].error_kind == "auth"


AUTH_HINT = (
    "Check searxng.basicUsername/basicPassword or searxng.token. If the instance has JSON output disabled, "
    "add `json` to `search.formats` in its settings.yml."
)


@pytest.mark.parametrize(
    ("reply", "status", "kind", "message"),
    [
        (
            Reply(429, "Too Many Requests", content_type="text/plain"),
            429,
            "rate_limited",
            "SearXNG API error (429): Too Many Requests",
        ),
        (
            Reply(429, "Too Many Requests", headers={"Retry-After": "20"}, content_type="text/plain"),
            429,
            "rate_limited",
            "SearXNG API error (429): Too Many Requests; retry after 20 s",
        ),
        (Reply(500, {"error": "search error"}), 500, "unavailable", "SearXNG API error (500): search error"),
        (Reply(400, {"error": "Invalid time_range"}), 400, "rejected", "SearXNG API error (400): Invalid time_range"),
        # quota comes from a status or a code, never from prose: this is a rejected request
        (Reply(400, {"error": "quota exceeded"}), 400, "rejected", "SearXNG API error (400): quota exceeded"),
        (
            Reply(401, "Unauthorized", content_type="text/plain"),
            401,
            "auth",
            f"SearXNG authorization failed (401). {AUTH_HINT}",
        ),
        (Reply(502, b""), 502, "unavailable", "SearXNG API error (502): Bad Gateway"),
        (
            Reply(200, "<html>not json</html>", content_type="text/html"),
            200,
            "invalid_response",
            "SearXNG returned a body that is not JSON",
        ),
        (Reply(200, [1, 2]), 200, "invalid_response", "SearXNG returned JSON that is not an object"),
    ],
)
async def test_errors(searx: FakeSearXNG, config_dir: Path, reply: Reply, status: int, kind: str, message: str) -> None:
    searx.enqueue(reply)
    response = await run(make_env(config_dir, searx))
    assert response.error == message
    (attempt,) = response.attempts
    assert (attempt.status, attempt.error_kind) == (status, kind)


async def test_basic_auth_from_settings_wins_over_bearer(searx: FakeSearXNG, config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text(
        '[searxng]\nbasicUsername = "alice"\nbasicPassword = "pässwörd"\ntoken = "tok-123456"\ncategories = "general,it"\nlanguage = "en"\n'
    )
    await run(make_env(config_dir, searx))
    expected = base64.b64encode("alice:pässwörd".encode()).decode()
    assert searx.last.headers["authorization"] == f"Basic {expected}"
    assert searx.last.args["categories"] == "general,it"
    assert searx.last.args["language"] == "en"


async def test_basic_auth_from_env_and_empty_password_allowed(searx: FakeSearXNG, config_dir: Path) -> None:
    await run(make_env(config_dir, searx, SEARXNG_BASIC_USERNAME="bob", SEARXNG_BASIC_PASSWORD=""))
    assert searx.last.headers["authorization"] == "Basic " + base64.b64encode(b"bob:").decode()


async def test_bearer_token(searx: FakeSearXNG, config_dir: Path) -> None:
    await run(make_env(config_dir, searx, SEARXNG_TOKEN="tok-abcdef"))
    assert searx.last.headers["authorization"] == "Bearer tok-abcdef"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"SEARXNG_BASIC_USERNAME": "bob"}, "SearXNG Basic auth needs both"),
        (
            {"SEARXNG_BASIC_USERNAME": "a:b", "SEARXNG_BASIC_PASSWORD": "x"},
            "SearXNG Basic auth username must not contain ':'",
        ),
        (
            {"SEARXNG_BASIC_USERNAME": "a", "SEARXNG_BASIC_PASSWORD": "x\ny"},
            "SearXNG Basic auth credentials must not contain control",
        ),
        (
            {"SEARXNG_BASIC_USERNAME": "a\x85", "SEARXNG_BASIC_PASSWORD": "x"},
            "SearXNG Basic auth credentials must not contain control",
        ),
    ],
)
async def test_basic_auth_validation_fails_before_any_request(
    searx: FakeSearXNG, config_dir: Path, extra: dict[str, str], message: str
) -> None:
    response = await run(make_env(config_dir, searx, **extra))
    assert response.error is not None
    assert response.error.startswith(message)
    assert response.attempts[-1].error_kind == "config"
    assert searx.requests == []


async def test_env_endpoint_wins_over_settings(searx: FakeSearXNG, config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text('searxng.endpoint = "https://from-file.example/base"\n')
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **searx.env}
    await run(env)
    assert searx.last.path == "/base/search"
    await run({**env, "SEARXNG_ENDPOINT": "https://from-env.example/other/"})
    assert searx.last.path == "/other/search"


async def test_unavailable_without_endpoint(config_dir: Path) -> None:
    async with WebSearch(engine=False, env={"WEBSEARCH_CONFIG_DIR": str(config_dir)}) as ws:
        status = {s.id: s for s in ws.provider_status()}
    assert not status["searxng"].available
    assert status["searxng"].reason == "set searxng.endpoint in settings.toml or SEARXNG_ENDPOINT"


def test_plan_without_endpoint_is_a_missing_credential(config_dir: Path) -> None:
    with pytest.raises(MissingCredentialError) as err:
        PROVIDER.plan(SearchParams("q"), provider_context(config_dir, {}))
    assert (err.value.provider, err.value.message) == ("searxng", NOT_CONFIGURED)


def test_plan_then_parse_is_pure(config_dir: Path, clock: FakeClock) -> None:
    env = {"SEARXNG_ENDPOINT": "https://searx.example.org/", "SEARXNG_TOKEN": "tok-abcdef"}
    plan = PROVIDER.plan(
        SearchParams("q", num_search_results=2, recency="week"), provider_context(config_dir, env, clock)
    )
    assert plan.request is not None
    assert (plan.request.url, plan.request.secrets) == ("https://searx.example.org/search", ("tok-abcdef",))
    assert plan.request.params == [("q", "q"), ("format", "json"), ("pageno", "1"), ("time_range", "week")]
    assert plan.notices == [] and plan.limit == 2 and plan.state == (plan.request,)
    body = b'{"results": [{"url": "https://a.example"}, {"url": "https://b.example"}, {"url": "https://c.example"}]}'
    parsed = PROVIDER.parse(HttpResponse(200, {}, body), plan)
    assert [s.url for s in parsed.sources] == ["https://a.example", "https://b.example"]


# -- the richer parameters --------------------------------------------------------------------

APPROX = "widened to time_range={0} (the past {0}): SearXNG only filters by the past day, week, month or year"


@pytest.mark.parametrize(
    ("kwargs", "time_range", "notices"),
    [
        ({"recency_hours": 6}, "day", ("recency_hours=6 " + APPROX.format("day"),)),
        ({"recency_days": 3}, "week", ("recency_days=3 " + APPROX.format("week"),)),
        ({"recency_days": 7}, "week", ("recency_days=7 " + APPROX.format("week"),)),
        ({"recency_days": 8}, "month", ("recency_days=8 " + APPROX.format("month"),)),
        ({"recency_days": 45}, "year", ("recency_days=45 " + APPROX.format("year"),)),
        (
            {"start_published_date": "2026-11-01", "recency": "week"},
            "month",
            (
                'recency="week" not applied: start_published_date takes precedence',
                'start_published_date="2026-11-01" ' + APPROX.format("month"),
            ),
        ),
        (
            {"start_published_date": "2024-01-01"},
            None,
            ('start_published_date="2024-01-01" not applied: the window is longer than SearXNG\'s longest (a year)',),
        ),
        (
            {"end_published_date": "2026-11-01", "recency": "day"},
            "day",
            ('end_published_date="2026-11-01" not applied: SearXNG does not support it',),
        ),
    ],
)
async def test_richer_dates_are_the_narrowest_time_range(
    searx: FakeSearXNG, config_dir: Path, kwargs: dict[str, object], time_range: str | None, notices: tuple[str, ...]
) -> None:
    response = await run(make_env(config_dir, searx), **kwargs)
    assert response.ok and messages(response) == (*notices, ENGINES_DOWN)
    assert searx.last.query == (
        ("q", "rust async"),
        ("format", "json"),
        *([("time_range", time_range)] * bool(time_range)),
    )


async def test_richer_domains_are_site_operators(searx: FakeSearXNG, config_dir: Path) -> None:
    response = await run(make_env(config_dir, searx), include_domains=["a.org", "b.org"], exclude_domains=["c.org"])
    assert searx.last.query == (("q", "rust async (site:a.org OR site:b.org) -site:c.org"), ("format", "json"))
    tail = "in the query: SearXNG has no domain filter (most of its engines honour the operators)"
    assert messages(response) == (
        f'include_domains=["a.org", "b.org"] applied as site: operators {tail}',
        f'exclude_domains=["c.org"] applied as -site: operators {tail}',
        ENGINES_DOWN,
    )


ENGINES_NOT_KIND = "a SearXNG category picks the engines it asks, not the kind of result"


def nearest(category: str) -> str:
    return f'SearXNG\'s nearest category is "{category}"; {ENGINES_NOT_KIND}'


NO_CATEGORY = (
    "SearXNG has no matching category (its categories are general, images, videos, news, map, music, it, "
    "science, files and social media)"
)


@pytest.mark.parametrize(
    ("category", "sent", "notices"),
    [
        ("news", "news", (f'category="news" applied as categories=news: {ENGINES_NOT_KIND}',)),
        (
            "publication",
            "science",
            ('category="publication" applied as categories=science: ' + nearest("science"),),
        ),
        (
            "research paper",
            "science",
            (
                'category="research paper" searched as category="publication": it was renamed',
                'category="research paper" applied as categories=science: ' + nearest("science"),
            ),
        ),
        (
            "github",
            "it",
            (
                'category="github" applied as given: it is deprecated and may stop working',
                'category="github" applied as categories=it: ' + nearest("it"),
            ),
        ),
        (
            "Social Media",
            "social media",
            (f'category="Social Media" applied as categories=social media: {ENGINES_NOT_KIND}',),
        ),
        ("company", None, (f'category="company" not applied: {NO_CATEGORY}',)),
        ("financial report", None, (f'category="financial report" not applied: {NO_CATEGORY}',)),
        ("personal site", None, (f'category="personal site" not applied: {NO_CATEGORY}',)),
        (
            "pdf",
            None,
            (
                'category="pdf" applied as given: it is deprecated and may stop working',
                f'category="pdf" not applied: {NO_CATEGORY}',
            ),
        ),
    ],
)
async def test_category_maps_to_a_searxng_category(
    searx: FakeSearXNG, config_dir: Path, category: str, sent: str | None, notices: tuple[str, ...]
) -> None:
    response = await run(make_env(config_dir, searx), category=category)
    assert response.ok, response.error
    assert searx.last.args.get("categories") == sent
    assert messages(response) == (*notices, ENGINES_DOWN)


async def test_category_merges_with_the_categories_setting(searx: FakeSearXNG, config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text('[searxng]\ncategories = "general, it,,news"\n')
    response = await run(make_env(config_dir, searx), category="news")
    assert searx.last.args["categories"] == "general,it,news"  # the setting's, then the mapped one, once
    assert messages(response) == (
        'category="news" applied as categories=general,it,news: searxng.categories adds general, it; '
        + ENGINES_NOT_KIND,
        ENGINES_DOWN,
    )
    response = await run(make_env(config_dir, searx), category="publication")
    assert searx.last.args["categories"] == "general,it,news,science"
    response = await run(make_env(config_dir, searx), category="people")
    assert searx.last.args["categories"] == "general,it,news"
    assert messages(response)[0] == f'category="people" not applied: {NO_CATEGORY}'


async def test_the_categories_setting_alone_is_sent_without_blanks(searx: FakeSearXNG, config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text('[searxng]\ncategories = "general, it"\n')
    response = await run(make_env(config_dir, searx))
    assert searx.last.args["categories"] == "general,it"
    assert messages(response) == (ENGINES_DOWN,)


async def test_an_empty_error_body_says_the_status(searx: FakeSearXNG, config_dir: Path) -> None:
    searx.enqueue(Reply(503, b""))
    response = await run(make_env(config_dir, searx))
    assert response.error == "SearXNG API error (503): Service Unavailable"
    assert response.attempts[-1].error_kind == "unavailable"
