"""SearXNG against a loopback fake that speaks searx/webapp.py's JSON format."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from conftest import FakeClock, messages, provider_context, search_once
from websearch import HttpResponse, SearchParams, SearchSource, WebSearch
from websearch._providers.searxng import NOT_CONFIGURED, PROVIDER
from websearch.errors import MissingCredentialError
from websearch.testing import FakeSearXNG, Reply
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


@pytest.mark.parametrize(("recency", "sent"), [("day", "day"), ("week", "month"), ("month", "month"), ("year", "year")])
async def test_recency_maps_to_time_range(searx: FakeSearXNG, config_dir: Path, recency: str, sent: str) -> None:
    response = await run(make_env(config_dir, searx), recency=recency, limit=3)
    assert searx.last.query == (("q", "rust async"), ("format", "json"), ("pageno", "1"), ("time_range", sent))
    week_notice = 'recency="week" widened to time_range=month: SearXNG has no week time range'
    assert (week_notice in messages(response)) == (recency == "week")


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


@pytest.mark.parametrize(("params", "count"), [({}, 10), ({"limit": 50}, 20), ({"num_search_results": 4}, 4)])
async def test_count_clamped_locally(searx: FakeSearXNG, config_dir: Path, params: dict[str, int], count: int) -> None:
    searx.n_results = 30
    response = await run(make_env(config_dir, searx), **params)
    assert len(response.sources) == count


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
    async with WebSearch(env={"WEBSEARCH_CONFIG_DIR": str(config_dir)}) as ws:
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
    assert plan.request.params == [("q", "q"), ("format", "json"), ("pageno", "1"), ("time_range", "month")]
    assert [n.kind for n in plan.notices] == ["widened"] and plan.limit == 2
    body = b'{"results": [{"url": "https://a.example"}, {"url": "https://b.example"}, {"url": "https://c.example"}]}'
    parsed = PROVIDER.parse(HttpResponse(200, {}, body), plan)
    assert [s.url for s in parsed.sources] == ["https://a.example", "https://b.example"]


# -- the richer parameters --------------------------------------------------------------------

APPROX = "widened to time_range={0} (the past {0}): SearXNG only filters by the past day, month or year"


@pytest.mark.parametrize(
    ("kwargs", "time_range", "notices"),
    [
        ({"recency_hours": 6}, "day", ("recency_hours=6 " + APPROX.format("day"),)),
        ({"recency_days": 3}, "month", ("recency_days=3 " + APPROX.format("month"),)),
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
    assert response.ok and messages(response) == notices
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
    )


async def test_an_empty_error_body_says_the_status(searx: FakeSearXNG, config_dir: Path) -> None:
    searx.enqueue(Reply(503, b""))
    response = await run(make_env(config_dir, searx))
    assert response.error == "SearXNG API error (503): Service Unavailable"
    assert response.attempts[-1].error_kind == "unavailable"
