"""Kagi (v1 Search API) against a loopback fake: the request, the parsing, every error shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock, make_client, messages, search_once
from websearch import SearchParams, SearchResponse, SearchSource
from websearch._core._credentials import CredentialStore
from websearch._core._settings import Settings
from websearch._providers.kagi import PROVIDER, after_date
from websearch.errors import MissingCredentialError, RateLimited
from websearch.providers import HttpResponse, ProviderContext, ProviderResult
from websearch.testing import Reply
from websearch.testing.kagi import FakeKagi, kagi_error_body, kagi_legacy_error_body, kagi_results_body

KEY = "kagi-test-KEY-7f3a9c21"
HEADERS = {"authorization": f"Bearer {KEY}", "content-type": "application/json", "accept": "application/json"}
AUTH_HINT = "Kagi authorization failed ({}). Check API key or base URL."


@pytest.fixture
def kagi() -> Iterator[FakeKagi]:
    with FakeKagi() as fake:
        yield fake


@pytest.fixture
def kenv(env: dict[str, str], kagi: FakeKagi) -> dict[str, str]:
    return {**env, **kagi.env, "KAGI_API_KEY": KEY}


async def search(env: dict[str, str], clock: FakeClock, query: str = "rust async", **kw: Any) -> SearchResponse:
    return await search_once("kagi", env, query, clock, **kw)


def ctx(env: dict[str, str], clock: FakeClock, config_dir: Path) -> ProviderContext:
    return ProviderContext(env, Settings({}, env), CredentialStore(config_dir / "agent.db"), None, clock)


def parse(
    status: int,
    body: Any,
    clock: FakeClock,
    config_dir: Path,
    *,
    limit: int | None = None,
    headers: dict[str, str] | None = None,
) -> ProviderResult:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = HttpResponse(status, headers or {}, raw, secrets=(KEY,))
    plan = PROVIDER.plan(SearchParams("q", limit=limit), ctx({"KAGI_API_KEY": KEY}, clock, config_dir))
    return PROVIDER.parse(response, plan)


def assert_no_key(response: SearchResponse) -> None:
    assert KEY not in (response.error or "")
    assert KEY not in repr(response)
    assert all(KEY not in (a.error or "") for a in response.attempts)


# -- the request -------------------------------------------------------------------------------


async def test_default_request(kagi: FakeKagi, kenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(kenv, clock)
    req = kagi.last
    assert (req.method, req.path, req.query) == ("POST", "/api/v1/search", ())
    assert {k: req.headers[k] for k in HEADERS} == HEADERS
    assert req.json() == {"query": "rust async", "workflow": "search", "limit": 10}
    assert response.ok and messages(response) == ()


@pytest.mark.parametrize(
    ("kwargs", "sent", "notices"),
    [
        ({"limit": 5}, 5, ()),
        ({"num_search_results": 25}, 25, ()),
        (
            {"limit": 3, "num_search_results": 7},
            7,
            ("limit=3 not applied: num_search_results=7 takes precedence",),
        ),
        ({"limit": 7, "num_search_results": 7}, 7, ()),
        ({"limit": 100}, 40, ("limit=100 clamped to 40: Kagi returns at most 40 results",)),
        (
            {"num_search_results": 41, "limit": 2},
            40,
            (
                "limit=2 not applied: num_search_results=41 takes precedence",
                "num_search_results=41 clamped to 40: Kagi returns at most 40 results",
            ),
        ),
    ],
)
async def test_counts(
    kagi: FakeKagi, kenv: dict[str, str], clock: FakeClock, kwargs: dict[str, int], sent: int, notices: tuple[str, ...]
) -> None:
    kagi.n_results = 60
    response = await search(kenv, clock, **kwargs)
    assert kagi.last.json() == {"query": "rust async", "workflow": "search", "limit": sent}
    assert len(response.sources) == sent  # search results first; video/news fall past the cap
    assert messages(response) == notices


@pytest.mark.parametrize(
    ("recency", "after"),
    [
        ("day", "2026-11-29"),
        ("week", "2026-11-23"),
        ("month", "2026-10-30"),
        ("year", "2025-11-30"),
    ],
)
async def test_recency_is_filters_after(
    kagi: FakeKagi, kenv: dict[str, str], clock: FakeClock, recency: str, after: str
) -> None:
    response = await search(kenv, clock, recency=recency, limit=4)
    assert kagi.last.json() == {"query": "rust async", "workflow": "search", "limit": 4, "filters": {"after": after}}
    assert response.ok and messages(response) == ()


@pytest.mark.parametrize(
    ("now", "recency", "expected"),
    [
        (datetime(2026, 3, 31, 8, tzinfo=UTC), "month", "2026-02-28"),
        (datetime(2028, 3, 31, 8, tzinfo=UTC), "month", "2028-02-29"),
        (datetime(2028, 2, 29, 8, tzinfo=UTC), "year", "2027-02-28"),
        (datetime(2026, 1, 15, 8, tzinfo=UTC), "month", "2025-12-15"),
        (datetime(2026, 1, 3, 8, tzinfo=UTC), "week", "2025-12-27"),
        (datetime(2026, 11, 30, 23, 30, tzinfo=timezone(timedelta(hours=-5))), "day", "2026-11-30"),  # 04:30 UTC Dec 1
    ],
)
def test_after_date_is_a_utc_calendar_date(now: datetime, recency: Any, expected: str) -> None:
    assert after_date(recency, now).isoformat() == expected


async def test_unsupported_parameters_become_notices(kagi: FakeKagi, kenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(kenv, clock, max_tokens=100, temperature=0.5)
    assert "max_tokens" not in kagi.last.json() and "temperature" not in kagi.last.json()
    assert messages(response) == (
        "max_tokens=100 not applied: Kagi does not support it",
        "temperature=0.5 not applied: Kagi does not support it",
    )


# -- parsing -----------------------------------------------------------------------------------

REALISTIC = {
    "meta": {"trace": "3f1c9e0a7b", "node": "us-east4", "ms": 433},
    "data": {
        "search": [
            {
                "url": "https://tokio.rs/tokio/tutorial",
                "title": "Tutorial | Tokio",
                "snippet": "  Tokio is a runtime.  ",
                "time": "2026-11-27T12:00:00Z",
                "image": {"url": "https://tokio.rs/img.png"},
                "props": {},
            },
            {"url": "https://rust-lang.github.io/async-book/", "snippet": ""},
            {"title": "No URL, dropped"},
        ],
        "video": [
            {
                "url": "https://youtu.be/abc",
                "title": "Async Rust in 10 minutes",
                "snippet": "A talk.",
                "time": "November 20, 2026",
            }
        ],
        "news": [{"url": "https://news.example.com/r", "title": "Rust 2026 edition", "time": "3 days ago"}],
        "infobox": [
            {
                "url": "https://en.wikipedia.org/wiki/Rust",
                "title": "Rust (programming language)",
                "snippet": "A multi-paradigm language.",
            }
        ],
        "image": [{"url": "https://img.example.com/x.png", "title": "not a source"}],
        "adjacent_question": [
            {"title": "Is Tokio required?", "props": {"question": "Is Tokio required for async Rust?"}},
            {"title": "  "},
        ],
        "related_search": [
            {"title": "rust async vs threads", "props": {"query": "rust async vs threads"}},
            {"url": "https://kagi.com/search?q=tokio", "title": "tokio tutorial"},
        ],
        "direct_answer": [
            {"url": "https://kagi.com/a", "title": "Async Rust", "snippet": " Futures driven by an executor. "}
        ],
    },
}


async def test_parses_a_realistic_body_exactly(kagi: FakeKagi, kenv: dict[str, str], clock: FakeClock) -> None:
    kagi.enqueue(Reply(200, REALISTIC))
    response = await search(kenv, clock)
    assert response.sources == (
        SearchSource(
            "Tutorial | Tokio",
            "https://tokio.rs/tokio/tutorial",
            "Tokio is a runtime.",
            "2026-11-27T12:00:00Z",
            3 * 86400,
        ),
        SearchSource("https://rust-lang.github.io/async-book/", "https://rust-lang.github.io/async-book/"),
        SearchSource(
            "[Video] Async Rust in 10 minutes",
            "https://youtu.be/abc",
            "A talk.",
            "November 20, 2026",
            10 * 86400 + 12 * 3600,
        ),
        SearchSource("[News] Rust 2026 edition", "https://news.example.com/r", None, "3 days ago", None),
        SearchSource(
            "[Info] Rust (programming language)", "https://en.wikipedia.org/wiki/Rust", "A multi-paradigm language."
        ),
    )
    assert response.answer == "Futures driven by an executor."
    assert response.related_questions == (
        "Is Tokio required for async Rust?",
        "rust async vs threads",
        "tokio tutorial",
    )
    assert response.request_id == "3f1c9e0a7b"
    assert (response.provider, response.query, response.auth_mode, response.citations) == (
        "kagi",
        "rust async",
        None,
        (),
    )
    assert [(a.provider, a.status, a.error) for a in response.attempts] == [("kagi", None, None)]


async def test_the_fake_default_body_is_tagged_and_capped(
    kagi: FakeKagi, kenv: dict[str, str], clock: FakeClock
) -> None:
    kagi.n_results = 3
    response = await search(kenv, clock)
    assert [s.title.split(" ")[0] for s in response.sources] == ["Rust", "Rust", "Rust", "[Video]", "[News]"]
    assert response.sources[4].age_seconds == 3 * 3600
    assert response.related_questions == ("What is rust async?", "rust async vs alternatives", "rust async pricing")
    assert response.answer == "rust async is a thing."
    assert response.request_id == "kagi-trace-0001"


def test_answer_falls_back_to_title_and_request_id_to_meta_id(clock: FakeClock, config_dir: Path) -> None:
    body = {"meta": {"id": "legacy-id"}, "data": {"direct_answer": [{"title": "42"}]}}
    response = parse(200, body, clock, config_dir)
    assert (response.answer, response.request_id, response.sources) == ("42", "legacy-id", ())


def test_local_slice_keeps_search_results_first(clock: FakeClock, config_dir: Path) -> None:
    response = parse(200, kagi_results_body("q", 12), clock, config_dir, limit=5)
    assert [s.url for s in response.sources] == [f"https://www.example{i}.com/q" for i in range(1, 6)]


@pytest.mark.parametrize(
    "body",
    [
        {"meta": {"trace": "t"}, "data": {}},
        {
            "meta": {"trace": "t"},
            "data": {"search": [], "news": [{"title": "no url"}], "related_search": [{"title": " "}]},
        },
        {"meta": {"trace": "t"}, "data": [], "error": []},
    ],
)
async def test_empty_result_is_the_chain_204(kagi: FakeKagi, kenv: dict[str, str], clock: FakeClock, body: Any) -> None:
    kagi.enqueue(Reply(200, body))
    response = await search(kenv, clock)
    assert response.error == "Kagi returned no renderable search content."
    assert [(a.provider, a.status) for a in response.attempts] == [("kagi", 204)]


# -- errors ------------------------------------------------------------------------------------

AUTH_401 = AUTH_HINT.format("401 auth.invalid_token") + " Kagi said: Invalid API token"


async def test_401_wrong_key_is_an_authorization_failure(env: dict[str, str], clock: FakeClock) -> None:
    with FakeKagi(api_key="the-right-key-0000") as fake:
        response = await search({**env, **fake.env, "KAGI_API_KEY": KEY}, clock)
    assert response.error == AUTH_401
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (401, "auth")
    assert_no_key(response)


@pytest.mark.parametrize(
    ("reply", "status", "kind", "error"),
    [
        (
            Reply(403, kagi_error_body("auth.ip_not_allowed", "IP address not authorized for this token")),
            403,
            "auth",
            AUTH_HINT.format("403 auth.ip_not_allowed") + " Kagi said: IP address not authorized for this token",
        ),
        (
            Reply(402, kagi_error_body("billing.no_credit", "Payment required")),
            402,
            "quota",
            "kagi: 402 credits exhausted (billing.no_credit): Payment required",
        ),
        (
            Reply(400, kagi_error_body("request.invalid_field", "limit must be 1..1024", "limit")),
            400,
            "rejected",
            "Kagi API error (400): limit must be 1..1024 (request.invalid_field)",
        ),
        (
            Reply(429, kagi_error_body("rate_limited", "Too many requests"), headers={"Retry-After": "30"}),
            429,
            "rate_limited",
            "Kagi API error (429): Too many requests (rate_limited); retry after 30 s",
        ),
        (Reply(429, {"detail": "Slow down"}), 429, "rate_limited", "Kagi API error (429): Slow down"),
        (
            Reply(500, "upstream connect error or disconnect/reset before headers\n"),
            500,
            "unavailable",
            "Kagi API error (500): upstream connect error or disconnect/reset before headers",
        ),
        (
            Reply(503, "<html><body><h1>503   Service Unavailable</h1></body></html>", content_type="text/html"),
            503,
            "unavailable",
            "Kagi API error (503): <html><body><h1>503 Service Unavailable</h1></body></html>",
        ),
        (Reply(502, b""), 502, "unavailable", "Kagi API error (502): Bad Gateway"),
        (Reply(504, "   "), 504, "unavailable", "Kagi API error (504): Gateway Timeout"),
        # the legacy numeric codes, inside a 200: each stands for a status, 100 and 101 for quota
        (
            Reply(200, kagi_legacy_error_body(101, "Insufficient credit to perform this request.")),
            402,
            "quota",
            "kagi: 402 credits exhausted (101): Insufficient credit to perform this request.",
        ),
        (
            Reply(200, kagi_legacy_error_body(100, "No billing information on file")),
            402,
            "quota",
            "kagi: 402 credits exhausted (100): No billing information on file",
        ),
        (
            Reply(200, kagi_legacy_error_body(2, "Unauthorized")),
            401,
            "auth",
            AUTH_HINT.format("401 2") + " Kagi said: Unauthorized",
        ),
        (
            Reply(200, kagi_legacy_error_body(1, "Missing q parameter")),
            400,
            "rejected",
            "Kagi API error (400): Missing q parameter (1)",
        ),
        (
            Reply(200, kagi_legacy_error_body(0, "Internal error")),
            500,
            "unavailable",
            "Kagi API error (500): Internal error (0)",
        ),
        (
            Reply(200, kagi_error_body("search.failed", "Search backend failed")),
            502,
            "unavailable",
            "Kagi API error (502): Search backend failed (search.failed)",
        ),
        # quota comes from a status or a code, never from the words: these are not credits exhausted
        (
            Reply(500, kagi_error_body("internal", "quota service unavailable")),
            500,
            "unavailable",
            "Kagi API error (500): quota service unavailable (internal)",
        ),
        (
            Reply(400, kagi_error_body("request.invalid_field", "insufficient query", "query")),
            400,
            "rejected",
            "Kagi API error (400): insufficient query (request.invalid_field)",
        ),
        (
            Reply(200, kagi_legacy_error_body(1, "Insufficient parameters")),
            400,
            "rejected",
            "Kagi API error (400): Insufficient parameters (1)",
        ),
        (
            Reply(200, "<html>maintenance</html>", content_type="text/html"),
            200,
            "invalid_response",
            "Kagi returned a body that is not JSON",
        ),
        (Reply(200, [1, 2]), 200, "invalid_response", "Kagi returned JSON that is not an object"),
    ],
)
async def test_error_shapes(
    kagi: FakeKagi, kenv: dict[str, str], clock: FakeClock, reply: Reply, status: int, kind: str, error: str
) -> None:
    kagi.enqueue(reply)
    response = await search(kenv, clock)
    assert response.error == error
    (attempt,) = response.attempts
    assert (attempt.provider, attempt.status, attempt.error, attempt.error_kind) == ("kagi", status, error, kind)
    assert response.sources == ()


def test_retry_after_is_kept_on_the_error(clock: FakeClock, config_dir: Path) -> None:
    body = kagi_error_body("rate_limited", "Too many requests")
    with pytest.raises(RateLimited) as info:
        parse(429, body, clock, config_dir, headers={"retry-after": "30"})
    assert (info.value.status, info.value.retry_after) == (429, 30.0)


@pytest.mark.parametrize(
    "reply",
    [
        Reply(500, f"invalid token {KEY} rejected"),
        Reply(400, kagi_error_body("request.invalid", f"bad header Bearer {KEY}")),
        Reply(401, kagi_error_body("auth.invalid_token", f"token {KEY} is not valid")),
        Reply(200, kagi_legacy_error_body(1, f"token {KEY} malformed")),
        Reply(200, kagi_legacy_error_body(2, f"Unauthorized: {KEY}")),
    ],
)
async def test_key_never_leaks_from_error_paths(
    kagi: FakeKagi, kenv: dict[str, str], clock: FakeClock, reply: Reply
) -> None:
    kagi.enqueue(reply)
    response = await search(kenv, clock)
    assert response.error and "[redacted]" in response.error
    assert_no_key(response)


# -- credentials and availability --------------------------------------------------------------


def test_missing_key_message(clock: FakeClock, config_dir: Path) -> None:
    with pytest.raises(MissingCredentialError) as info:
        PROVIDER.plan(SearchParams("q"), ctx({}, clock, config_dir))
    assert info.value.message == "Kagi needs an API key: set KAGI_API_KEY or run `websearch auth set kagi`"


async def test_without_a_key_explicit_kagi_falls_back_to_the_chain(
    env: dict[str, str], kagi: FakeKagi, clock: FakeClock
) -> None:
    response = await search({**env, **kagi.env}, clock)
    assert response.provider == "duckduckgo" and kagi.requests == []
    assert messages(response)[0] == (
        "provider kagi was requested but is not available (set KAGI_API_KEY or run `websearch auth set kagi`); "
        "used the automatic chain instead"
    )


async def test_stored_credential_makes_kagi_available(
    env: dict[str, str], kagi: FakeKagi, clock: FakeClock, config_dir: Path
) -> None:
    fenv = {**env, **kagi.env}
    async with make_client(env=fenv, clock=clock) as ws:
        assert not next(s for s in ws.provider_status() if s.id == "kagi").available
    CredentialStore(config_dir / "agent.db").set("kagi", "api_key", {"api_key": "stored-kagi-key-1234"})
    async with make_client(env=fenv, clock=clock) as ws:
        assert next(s for s in ws.provider_status() if s.id == "kagi").available
        response = await ws.asearch("q")  # the automatic chain: Kagi comes before DuckDuckGo
    assert response.provider == "kagi"
    assert kagi.last.headers["authorization"] == "Bearer stored-kagi-key-1234"


async def test_resolution_order_explicit_then_env_then_store(
    env: dict[str, str], kagi: FakeKagi, clock: FakeClock, config_dir: Path
) -> None:
    CredentialStore(config_dir / "agent.db").set("kagi", "api_key", {"api_key": "stored-kagi-key-1234"})
    fenv = {**env, **kagi.env, "KAGI_API_KEY": "env-kagi-key-5678"}
    async with make_client(env=fenv, clock=clock) as ws:
        await ws.asearch("q", provider="kagi")
    assert kagi.last.headers["authorization"] == "Bearer env-kagi-key-5678"
    async with make_client(env=fenv, clock=clock, api_keys={"kagi": "explicit-kagi-key-9"}) as ws:
        await ws.asearch("q", provider="kagi")
    assert kagi.last.headers["authorization"] == "Bearer explicit-kagi-key-9"


def test_the_key_is_handed_to_the_transport_for_redaction(clock: FakeClock, config_dir: Path) -> None:
    request = PROVIDER.plan(SearchParams("q"), ctx({"KAGI_API_KEY": KEY}, clock, config_dir)).request
    assert request is not None
    assert (request.method, request.url, request.secrets) == ("POST", "https://kagi.com/api/v1/search", (KEY,))


# -- the richer parameters --------------------------------------------------------------------

WHOLE = "applied as whole days (filters.{}={}): Kagi's date filters take dates only"


@pytest.mark.parametrize(
    ("kwargs", "filters", "notices"),
    [
        ({"recency_days": 3}, {"after": "2026-11-27"}, ()),
        ({"recency_hours": 6}, {"after": "2026-11-30"}, ("recency_hours=6 " + WHOLE.format("after", "2026-11-30"),)),
        (
            {"start_published_date": "2026-01-15", "end_published_date": "2026-02-01"},
            {"after": "2026-01-15", "before": "2026-02-01"},
            (),
        ),
        (
            {"start_published_date": "2026-03-01T10:30:00Z", "end_published_date": "2026-04-01T23:30:00-05:00"},
            {"after": "2026-03-01", "before": "2026-04-02"},
            (
                'start_published_date="2026-03-01T10:30:00Z" ' + WHOLE.format("after", "2026-03-01"),
                'end_published_date="2026-04-01T23:30:00-05:00" ' + WHOLE.format("before", "2026-04-02"),
            ),
        ),
        (
            {"recency": "month", "recency_hours": 30},
            {"after": "2026-11-29"},
            (
                'recency="month" not applied: recency_hours takes precedence',
                "recency_hours=30 " + WHOLE.format("after", "2026-11-29"),
            ),
        ),
        ({"recency": "month", "end_published_date": "2026-11-20"}, {"after": "2026-10-30", "before": "2026-11-20"}, ()),
        ({"end_published_date": "2026-11-20"}, {"before": "2026-11-20"}, ()),
    ],
)
async def test_richer_dates_are_filters(
    kagi: FakeKagi,
    kenv: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, Any],
    filters: dict[str, str],
    notices: tuple[str, ...],
) -> None:
    response = await search(kenv, clock, **kwargs)
    assert response.ok and messages(response) == notices
    assert kagi.last.json() == {"query": "rust async", "workflow": "search", "limit": 10, "filters": filters}


async def test_richer_domains_are_site_operators(kagi: FakeKagi, kenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(kenv, clock, include_domains=["tokio.rs"], exclude_domains=["a.com", "b.com"])
    assert kagi.last.json() == {
        "query": "rust async site:tokio.rs -site:a.com -site:b.com",
        "workflow": "search",
        "limit": 10,
    }
    assert messages(response) == (
        'include_domains=["tokio.rs"] applied as site: operators in the query: Kagi has no domain filter',
        'exclude_domains=["a.com", "b.com"] applied as -site: operators in the query: Kagi has no domain filter',
    )
