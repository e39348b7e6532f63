"""Brave against a loopback fake of api.search.brave.com: requests, parsing, error envelopes, keys."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import FakeClock, make_client, messages, provider_context, search_once
from websearch import Attempt, SearchParams, SearchResponse, SearchSource, WebSearch
from websearch._core._credentials import CredentialStore
from websearch._providers.brave import PROVIDER
from websearch.errors import MissingCredentialError
from websearch.providers import HttpResponse, ProviderContext
from websearch.testing import Reply
from websearch.testing.brave import (
    FakeBrave,
    brave_error,
    brave_result,
    brave_results_body,
    invalid_token_reply,
    quota_limited_reply,
    rate_limited_reply,
)

KEY = "BSAbrave-secret-7f3e9a1c"
PATH = "/res/v1/web/search"


@pytest.fixture
def brave() -> Iterator[FakeBrave]:
    with FakeBrave(valid_keys={KEY}) as fake:
        yield fake


@pytest.fixture
def benv(env: dict[str, str], brave: FakeBrave) -> dict[str, str]:
    return {**env, **brave.env, "BRAVE_API_KEY": KEY}


async def search(env: dict[str, str], clock: FakeClock, query: str = "rust async", **kwargs: object) -> SearchResponse:
    return await search_once("brave", env, query, clock, **kwargs)


def context(env: dict[str, str], config_dir: Path, clock: FakeClock) -> ProviderContext:
    return provider_context(config_dir, env, clock=clock)


# -- the request ------------------------------------------------------------------------------


async def test_default_request(brave: FakeBrave, benv: dict[str, str], clock: FakeClock) -> None:
    response = await search(benv, clock)
    assert response.ok and messages(response) == ()
    req = brave.last
    assert (req.method, req.path, req.body) == ("GET", PATH, b"")
    assert req.query == (("q", "rust async"), ("count", "10"), ("extra_snippets", "true"))
    assert req.headers["accept"] == "application/json"
    assert req.headers["x-subscription-token"] == KEY
    assert "authorization" not in req.headers
    assert len(response.sources) == 10


@pytest.mark.parametrize(
    ("kwargs", "count", "notices"),
    [
        ({"limit": 3}, "3", ()),
        ({"num_search_results": 7}, "7", ()),
        (
            {"limit": 3, "num_search_results": 7},
            "7",
            ("limit=3 not applied: num_search_results=7 takes precedence",),
        ),
        ({"limit": 4, "num_search_results": 4}, "4", ()),
        ({"limit": 50}, "20", ("limit=50 clamped to 20: Brave returns at most 20 results",)),
        (
            {"num_search_results": 21, "limit": 2},
            "20",
            (
                "limit=2 not applied: num_search_results=21 takes precedence",
                "num_search_results=21 clamped to 20: Brave returns at most 20 results",
            ),
        ),
    ],
)
async def test_count_is_the_collapsed_clamped_number(
    brave: FakeBrave,
    benv: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, int],
    count: str,
    notices: tuple[str, ...],
) -> None:
    response = await search(benv, clock, **kwargs)
    assert brave.last.query == (("q", "rust async"), ("count", count), ("extra_snippets", "true"))
    assert len(response.sources) == int(count)
    assert messages(response) == notices


@pytest.mark.parametrize(("recency", "freshness"), [("day", "pd"), ("week", "pw"), ("month", "pm"), ("year", "py")])
async def test_recency_is_freshness(
    brave: FakeBrave, benv: dict[str, str], clock: FakeClock, recency: str, freshness: str
) -> None:
    response = await search(benv, clock, recency=recency, limit=2)
    assert brave.last.query == (
        ("q", "rust async"),
        ("count", "2"),
        ("extra_snippets", "true"),
        ("freshness", freshness),
    )
    assert response.ok and messages(response) == ()


async def test_unsupported_parameters_become_notices(brave: FakeBrave, benv: dict[str, str], clock: FakeClock) -> None:
    response = await search(benv, clock, max_tokens=100, temperature=0.5)
    assert messages(response) == (
        "max_tokens=100 not applied: Brave does not support it",
        "temperature=0.5 not applied: Brave does not support it",
    )
    assert brave.last.query == (("q", "rust async"), ("count", "10"), ("extra_snippets", "true"))


# -- parsing ----------------------------------------------------------------------------------

REALISTIC = {
    "type": "search",
    "query": {"original": "rust async", "altered": "rust async await", "more_results_available": True},
    "mixed": {"type": "mixed", "main": [], "top": [], "side": []},
    "web": {
        "type": "search",
        "family_friendly": True,
        "results": [
            {
                "type": "search_result",
                "title": "<strong>Async</strong> in Rust &amp; Tokio&#x27;s book",
                "url": "https://doc.rust-lang.org/book/ch17-00-async-await.html",
                "description": "  Learn <strong>async</strong> programming in Rust: Vec&lt;Future&gt;.  ",
                "page_age": "2026-11-27T00:00:00",
                "age": "November 27, 2026",
                "extra_snippets": [
                    " Futures are lazy. ",
                    "",
                    "Learn <strong>async</strong> programming in Rust: Vec&lt;Future&gt;.",
                    "Futures are lazy.",
                    "<strong></strong>",
                    "A page's own text: vector<int> & co.",
                    "Use an executor such as Tokio.",
                ],
                "profile": {"name": "Rust"},
                "meta_url": {"hostname": "doc.rust-lang.org"},
            },
            {
                "type": "search_result",
                "title": "",
                "url": "https://tokio.rs/tokio/tutorial",
                "description": "Tokio is an asynchronous runtime.",
                "age": "2 days ago",
            },
            {"type": "search_result", "title": "No URL, dropped", "description": "x"},
            {
                "type": "search_result",
                "title": "Async book",
                "url": "https://rust-lang.github.io/async-book/",
                "extra_snippets": ["Only an extra snippet."],
            },
            {"type": "search_result", "title": "Bare", "url": "https://example.com/bare", "description": "   "},
            {
                "type": "search_result",
                "title": "<strong></strong>",
                "url": "https://example.com/empty",
                "description": "<strong> </strong>",
            },
        ],
    },
}


async def test_parses_a_realistic_body_exactly(brave: FakeBrave, benv: dict[str, str], clock: FakeClock) -> None:
    brave.enqueue(Reply(200, REALISTIC, headers={"X-Request-Id": "req-7c1f"}))
    response = await search(benv, clock)
    assert response == SearchResponse(
        provider="brave",
        query="rust async",
        sources=(
            SearchSource(
                title="Async in Rust & Tokio's book",
                url="https://doc.rust-lang.org/book/ch17-00-async-await.html",
                snippet=(
                    "Learn async programming in Rust: Vec<Future>.\nFutures are lazy.\n"
                    "A page's own text: vector<int> & co.\nUse an executor such as Tokio."
                ),
                published_date="November 27, 2026",
                age_seconds=3 * 86400 + 12 * 3600,
            ),
            SearchSource(
                title="https://tokio.rs/tokio/tutorial",
                url="https://tokio.rs/tokio/tutorial",
                snippet="Tokio is an asynchronous runtime.",
                published_date="2 days ago",
                age_seconds=None,
            ),
            SearchSource(
                title="Async book", url="https://rust-lang.github.io/async-book/", snippet="Only an extra snippet."
            ),
            SearchSource(title="Bare", url="https://example.com/bare"),
            SearchSource(title="https://example.com/empty", url="https://example.com/empty"),
        ),
        request_id="req-7c1f",
        attempts=(Attempt("brave", None, None, 0.0),),
    )


async def test_display_html_reaches_the_agent_as_plain_text(
    brave: FakeBrave, benv: dict[str, str], clock: FakeClock
) -> None:
    # The fake writes its results as Brave does: the query escaped and wrapped in <strong>.
    sent = brave_result(1, "joe's pizza & pasta")
    assert "<strong>joe&#x27;s pizza &amp; pasta</strong>" in sent["description"]
    assert sent["title"] == "Joe&#x27;S Pizza &amp; Pasta - part 1"
    response = await search(benv, clock, "joe's pizza & pasta")
    first = response.sources[0]
    assert first.title == "Joe'S Pizza & Pasta - part 1"
    assert first.snippet is not None
    assert first.snippet.startswith("Everything about joe's pizza & pasta, part 1:")
    assert "Extra excerpt 1a about joe's pizza & pasta." in first.snippet
    assert all("<strong>" not in (s.snippet or "") and "&#x27;" not in s.title for s in response.sources)


def test_parse_slices_and_reads_request_id_fallback(clock: FakeClock, config_dir: Path) -> None:
    ctx = context({"BRAVE_API_KEY": KEY}, config_dir, clock)
    body = brave_results_body("q", 20)
    raw = HttpResponse(200, {"request-id": "rid-2"}, json.dumps(body).encode())
    parsed = PROVIDER.parse(raw, PROVIDER.plan(SearchParams("q", limit=4), ctx))
    assert [s.url for s in parsed.sources] == [r["url"] for r in body["web"]["results"][:4]]
    assert parsed.request_id == "rid-2"
    assert parsed.auth_mode is None and parsed.answer is None
    assert parsed.sources[0].snippet == (
        "Everything about q, part 1: setup, pitfalls and examples.\nExtra excerpt 1a about q.\nExtra excerpt 1b."
    )
    no_header = PROVIDER.parse(
        HttpResponse(200, {}, b'{"web": {"results": []}}'), PROVIDER.plan(SearchParams("q"), ctx)
    )
    assert no_header.request_id is None and no_header.sources == ()


@pytest.mark.parametrize(
    ("limit", "rate"),
    [("1, 15000", 1.0), ("50, 20000000", 50.0), ("0, 15000", None), ("abc", None), ("\u00b2, 15000", None), ("", None)],
)
def test_parse_reports_the_plans_per_second_limit(
    limit: str, rate: float | None, clock: FakeClock, config_dir: Path
) -> None:
    # X-RateLimit-Limit: the key's plan, the per-second window first, the month last
    ctx = context({"BRAVE_API_KEY": KEY}, config_dir, clock)
    raw = HttpResponse(200, {"x-ratelimit-limit": limit}, json.dumps(brave_results_body("q", 2)).encode())
    assert PROVIDER.parse(raw, PROVIDER.plan(SearchParams("q"), ctx)).plan_rate == rate


def test_fake_result_shape_is_brave_like() -> None:
    result = brave_result(1, "q", age="November 27, 2026", extra=["a"])
    assert {"title", "url", "description", "age", "page_age", "extra_snippets", "profile", "meta_url"} <= set(result)
    assert "web" not in brave_results_body("q", 0)


@pytest.mark.parametrize("body", [{"web": {"results": []}}, brave_results_body("zzz", 0), {"web": {}}])
async def test_no_results_is_the_chains_204(
    brave: FakeBrave, benv: dict[str, str], clock: FakeClock, body: dict[str, object]
) -> None:
    brave.enqueue(Reply(200, body))
    response = await search(benv, clock, "zzz")
    assert response.error == "Brave returned no renderable search content."
    assert response.attempts == (
        Attempt("brave", 204, "Brave returned no renderable search content.", 0.0, "no_results"),
    )


# -- errors -----------------------------------------------------------------------------------

TOKEN_MESSAGE = (
    "Brave authorization failed (422 SUBSCRIPTION_TOKEN_INVALID). Check API key or base URL. "
    "Brave said: The provided subscription token is invalid."
)


@pytest.mark.parametrize(
    ("reply", "status", "kind", "message"),
    [
        (invalid_token_reply(), 422, "auth", TOKEN_MESSAGE),
        (invalid_token_reply(plural=True), 422, "auth", TOKEN_MESSAGE),
        (
            Reply(401, {"message": "Unauthorized"}),
            401,
            "auth",
            "Brave authorization failed (401). Check API key or base URL.",
        ),
        (Reply(402, {"message": "Payment required"}), 402, "quota", "brave: 402 credits exhausted"),
        (
            Reply(403, "<html>Forbidden</html>", content_type="text/html"),
            403,
            "auth",
            "Brave authorization failed (403). Check API key or base URL.",
        ),
        (
            quota_limited_reply(),
            429,
            "quota",
            "brave: credits exhausted (QUOTA_LIMITED): Request quota limit exceeded for plan.",
        ),
        (
            rate_limited_reply(),
            429,
            "rate_limited",
            "Brave API error (429): Request rate limit exceeded for plan. (RATE_LIMITED); retry after 1 s",
        ),
        (
            Reply(
                429,
                brave_error(429, "RATE_LIMITED", "Request rate limit exceeded for plan.", "rate_limiter"),
                headers={"Retry-After": "30"},
            ),
            429,
            "rate_limited",
            "Brave API error (429): Request rate limit exceeded for plan. (RATE_LIMITED); retry after 30 s",
        ),
        (
            Reply(404, brave_error(404, "SUBSCRIPTION_NOT_FOUND", "No subscription found.", "authentication")),
            404,
            "rejected",
            "Brave API error (404): No subscription found. (SUBSCRIPTION_NOT_FOUND)",
        ),
        (Reply(500, "upstream   exploded\n"), 500, "unavailable", "Brave API error (500): upstream exploded"),
        (Reply(503, b""), 503, "unavailable", "Brave API error (503): Service Unavailable"),
        (
            Reply(200, "<html>captive portal</html>", content_type="text/html"),
            200,
            "invalid_response",
            "Brave returned a body that is not JSON",
        ),
        (Reply(200, [1, 2]), 200, "invalid_response", "Brave returned JSON that is not an object"),
    ],
)
async def test_error_statuses_and_envelopes(
    brave: FakeBrave, benv: dict[str, str], clock: FakeClock, reply: Reply, status: int, kind: str, message: str
) -> None:
    brave.enqueue(reply)
    response = await search(benv, clock)
    assert response.error == message
    assert response.provider == "brave" and response.sources == ()
    (attempt,) = response.attempts
    assert (attempt.provider, attempt.status, attempt.error, attempt.error_kind) == ("brave", status, message, kind)


async def test_brave_quota_and_rate_limit_are_told_apart_by_code(
    brave: FakeBrave, benv: dict[str, str], clock: FakeClock
) -> None:
    brave.enqueue(quota_limited_reply(), rate_limited_reply())
    quota, rate = await search(benv, clock), await search(benv, clock)
    assert (quota.attempts[0].error_kind, quota.attempts[0].retry_after_s) == ("quota", 86400.0)
    assert (rate.attempts[0].error_kind, rate.attempts[0].retry_after_s) == ("rate_limited", 1.0)


async def test_unknown_key_gets_the_real_422(brave: FakeBrave, env: dict[str, str], clock: FakeClock) -> None:
    response = await search({**env, **brave.env, "BRAVE_API_KEY": "wrong-key-000000"}, clock)
    assert response.error == TOKEN_MESSAGE


async def test_validation_422_shows_the_detail(brave: FakeBrave, benv: dict[str, str], clock: FakeClock) -> None:
    response = await search(benv, clock, "x" * 401)
    assert response.error == "Brave API error (422): Unable to validate request parameter(s) (VALIDATION)"


@pytest.mark.parametrize(
    ("reply", "retry"),
    [
        (rate_limited_reply("1, 1419704"), 1.0),
        (rate_limited_reply("3, 100"), 3.0),
        (quota_limited_reply(), 86400.0),
        (
            Reply(
                429,
                brave_error(429, "QUOTA_LIMITED", "Request quota limit exceeded for plan.", "rate_limiter"),
                headers={"Retry-After": "60", "X-RateLimit-Reset": "1, 5"},
            ),
            60.0,
        ),
        (Reply(500, "boom", headers={"X-RateLimit-Reset": "1, 5"}), None),
    ],
)
def test_retry_hint_comes_from_the_matching_window(
    reply: Reply, retry: float | None, clock: FakeClock, config_dir: Path
) -> None:
    body, _ = reply.encoded()
    headers = {k.lower(): v for k, v in reply.headers.items()}
    plan = PROVIDER.plan(SearchParams("q"), context({"BRAVE_API_KEY": KEY}, config_dir, clock))
    assert PROVIDER.error(HttpResponse(reply.status, headers, body), plan).retry_after == retry


# -- credentials ------------------------------------------------------------------------------


async def test_missing_key_message(config_dir: Path, clock: FakeClock) -> None:
    ctx = context({"WEBSEARCH_CONFIG_DIR": str(config_dir)}, config_dir, clock)
    with pytest.raises(MissingCredentialError) as info:
        PROVIDER.plan(SearchParams("q"), ctx)
    assert info.value.message == "Brave needs an API key: set BRAVE_API_KEY or run `websearch auth set brave`"
    assert info.value.provider == "brave"


async def test_without_a_key_an_explicit_brave_falls_back(
    brave: FakeBrave, env: dict[str, str], clock: FakeClock
) -> None:
    response = await search({**env, **brave.env}, clock)
    assert response.provider == "duckduckgo"
    assert messages(response)[0] == (
        "provider brave was requested but is not available (set BRAVE_API_KEY or run `websearch auth set brave`); "
        "used the automatic chain instead"
    )
    assert brave.requests == []


def test_availability(env: dict[str, str], config_dir: Path) -> None:
    def available(env: dict[str, str]) -> bool:
        return next(s for s in WebSearch(engine=False, env=env).provider_status() if s.id == "brave").available

    assert not available(env)
    assert available({**env, "BRAVE_API_KEY": KEY})
    assert not available({**env, "BRAVE_API_KEY": ""})
    CredentialStore(config_dir / "agent.db").set("brave", "api_key", {"api_key": KEY})
    assert available(env)


async def test_stored_credential_is_sent(
    brave: FakeBrave, env: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    CredentialStore(config_dir / "agent.db").set("brave", "api_key", {"api_key": KEY})
    response = await search({**env, **brave.env}, clock)
    assert response.provider == "brave" and response.ok
    assert brave.last.headers["x-subscription-token"] == KEY


async def test_key_resolution_order(brave: FakeBrave, env: dict[str, str], config_dir: Path, clock: FakeClock) -> None:
    CredentialStore(config_dir / "agent.db").set("brave", "api_key", {"api_key": "stored-key-0000"})
    full = {**env, **brave.env, "BRAVE_API_KEY": "env-key-1111"}
    await search(full, clock)
    assert brave.last.headers["x-subscription-token"] == "env-key-1111"
    async with make_client(env=full, clock=clock, api_keys={"brave": "explicit-2222"}) as ws:
        await ws.asearch("q", provider="brave")
    assert brave.last.headers["x-subscription-token"] == "explicit-2222"


@pytest.mark.parametrize(
    "reply",
    [
        Reply(500, f"internal error for token {KEY}"),
        Reply(422, brave_error(422, "VALIDATION", f"bad header x-subscription-token={KEY}", "validation")),
        Reply(422, brave_error(422, "SUBSCRIPTION_TOKEN_INVALID", f"Token {KEY} is invalid.", "authentication")),
        Reply(429, brave_error(429, "RATE_LIMITED", f"rate limited for {KEY}", "rate_limiter")),
        Reply(401, f"bad key {KEY}"),
        Reply(200, f"not json {KEY}"),
    ],
)
async def test_key_never_leaks_from_error_paths(
    brave: FakeBrave, benv: dict[str, str], clock: FakeClock, reply: Reply
) -> None:
    brave.enqueue(reply)
    response = await search(benv, clock)
    assert response.error
    for text in (response.error, repr(response.attempts), repr(response), str(response.to_dict())):
        assert KEY not in text


# -- the richer parameters --------------------------------------------------------------------

DAYS = "applied as whole days (freshness={}): Brave's freshness takes dates only"


@pytest.mark.parametrize(
    ("kwargs", "freshness", "notices"),
    [
        ({"recency_days": 3}, "2026-11-27to2026-11-30", ()),
        ({"recency_hours": 6}, "2026-11-30to2026-11-30", ("recency_hours=6 " + DAYS.format("2026-11-30to2026-11-30"),)),
        ({"start_published_date": "2026-01-15", "end_published_date": "2026-02-01"}, "2026-01-15to2026-02-01", ()),
        (
            {"start_published_date": "2026-03-01T10:30:00Z", "end_published_date": "2026-04-01T08:00:00+02:00"},
            "2026-03-01to2026-04-01",
            (
                'start_published_date="2026-03-01T10:30:00Z" ' + DAYS.format("2026-03-01to2026-04-01"),
                'end_published_date="2026-04-01T08:00:00+02:00" ' + DAYS.format("2026-03-01to2026-04-01"),
            ),
        ),
        (
            {"recency": "week", "recency_days": 3},
            "2026-11-27to2026-11-30",
            ('recency="week" not applied: recency_days takes precedence',),
        ),
        ({"recency": "week", "end_published_date": "2026-11-29"}, "2026-11-23to2026-11-29", ()),
        (
            {"recency": "day", "include_domains": ["docs.rs"]},
            "pd",
            ('include_domains=["docs.rs"] applied as site: operators in the query: Brave has no domain filter',),
        ),
        (
            {"end_published_date": "2026-11-29"},
            None,
            (
                'end_published_date="2026-11-29" not applied: Brave\'s freshness range needs a start (give a start date, '
                "recency_days, recency_hours or recency)",
            ),
        ),
    ],
)
async def test_richer_date_window_is_a_freshness_range(
    brave: FakeBrave,
    benv: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, object],
    freshness: str | None,
    notices: tuple[str, ...],
) -> None:
    response = await search(benv, clock, **kwargs)
    assert response.ok and messages(response) == notices
    assert dict(brave.last.query).get("freshness") == freshness


async def test_richer_domains_are_site_operators(brave: FakeBrave, benv: dict[str, str], clock: FakeClock) -> None:
    response = await search(
        benv, clock, include_domains=["tokio.rs", "docs.rs"], exclude_domains=["reddit.com"], mode="fast"
    )
    assert brave.last.query == (
        ("q", "rust async (site:tokio.rs OR site:docs.rs) -site:reddit.com"),
        ("count", "10"),
        ("extra_snippets", "true"),
    )
    assert messages(response) == (
        'include_domains=["tokio.rs", "docs.rs"] applied as site: operators in the query: Brave has no domain filter',
        'exclude_domains=["reddit.com"] applied as -site: operators in the query: Brave has no domain filter',
        'mode="fast" not applied: Brave does not support it',
    )
