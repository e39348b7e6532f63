"""Parallel against a loopback fake of the Parallel Search API (v1beta)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock, make_client, messages, provider_context, search_once
from websearch import SearchParams, SearchResponse, SearchSource
from websearch._core._credentials import CredentialStore
from websearch._providers.parallel import PROVIDER
from websearch.errors import MissingCredentialError, RateLimited
from websearch.providers import HttpResponse, ProviderContext
from websearch.testing import Reply
from websearch.testing.parallel import FakeParallel, validation_error

KEY = "par_Vb6Qm2Xr8Tz4Wn1Ks9Jd"
QUERY = "bun 1.3 release notes"
BODY = {
    "objective": QUERY,
    "search_queries": [QUERY],
    "mode": "fast",
    "excerpts": {"max_chars_per_result": 10000},
}
AUTH_FAILED = "Parallel authorization failed ({}). Check API key or base URL."


@pytest.fixture
def parallel() -> Iterator[FakeParallel]:
    with FakeParallel() as fake:
        yield fake


def make_env(env: dict[str, str], fake: FakeParallel) -> dict[str, str]:
    return {**env, **fake.env, "PARALLEL_API_KEY": KEY}


async def run(env: dict[str, str], **params: Any) -> SearchResponse:
    return await search_once("parallel", env, QUERY, **params)


def context(config_dir: Path, env: dict[str, str] | None = None) -> ProviderContext:
    return provider_context(config_dir, {"PARALLEL_API_KEY": KEY} if env is None else env)


def assert_no_key(response: SearchResponse) -> None:
    for text in (response.error or "", repr(response), repr(response.attempts), json.dumps(response.to_dict())):
        assert KEY not in text


# -- the request -------------------------------------------------------------------------------


def assert_request(fake: FakeParallel) -> None:
    req = fake.last
    assert (req.method, req.path, req.query) == ("POST", "/v1beta/search", ())
    assert req.headers["x-api-key"] == KEY
    assert req.headers["parallel-beta"] == "search-extract-2025-10-10"
    assert req.headers["content-type"] == "application/json"
    assert req.headers["accept"] == "application/json"
    assert "authorization" not in req.headers
    assert req.json() == BODY


async def test_default_request(parallel: FakeParallel, env: dict[str, str]) -> None:
    response = await run(make_env(env, parallel))
    assert_request(parallel)
    assert response.ok and response.provider == "parallel"
    assert len(response.sources) == 10
    assert messages(response) == ()


@pytest.mark.parametrize(
    ("params", "count", "notices"),
    [
        ({"limit": 3}, 3, ()),
        ({"num_search_results": 25}, 25, ()),
        (
            {"limit": 3, "num_search_results": 25},
            25,
            ("limit=3 not applied: num_search_results=25 takes precedence",),
        ),
        ({"limit": 40}, 40, ()),
        ({"limit": 99}, 40, ("limit=99 clamped to 40: Parallel returns at most 40 results",)),
    ],
)
async def test_count_is_a_local_cap_and_never_sent(
    parallel: FakeParallel, env: dict[str, str], params: dict[str, int], count: int, notices: tuple[str, ...]
) -> None:
    parallel.n_results = 60
    response = await run(make_env(env, parallel), **params)
    assert_request(parallel)  # the body is the same whatever the count
    assert len(response.sources) == count
    assert messages(response) == notices


@pytest.mark.parametrize("recency", ["day", "week", "month", "year"])
async def test_recency_is_not_sent_and_says_so(parallel: FakeParallel, env: dict[str, str], recency: str) -> None:
    response = await run(make_env(env, parallel), recency=recency)
    assert_request(parallel)
    assert messages(response) == (f'recency="{recency}" not applied: Parallel does not support it',)


async def test_unsupported_parameters_become_notices(parallel: FakeParallel, env: dict[str, str]) -> None:
    response = await run(make_env(env, parallel), max_tokens=64, temperature=1.0)
    assert messages(response) == (
        "max_tokens=64 not applied: Parallel does not support it",
        "temperature=1.0 not applied: Parallel does not support it",
    )


# -- availability and credentials ---------------------------------------------------------------


async def test_env_key_makes_parallel_available(parallel: FakeParallel, env: dict[str, str]) -> None:
    async with make_client(env=make_env(env, parallel), clock=FakeClock()) as ws:
        available = {s.id: s.available for s in ws.provider_status()}["parallel"]
        response = await ws.asearch(QUERY)  # the automatic chain reaches Parallel before DuckDuckGo
    assert available and response.provider == "parallel"


async def test_stored_credential_makes_parallel_available(
    parallel: FakeParallel, env: dict[str, str], config_dir: Path
) -> None:
    CredentialStore(config_dir / "agent.db").set("parallel", "api_key", {"api_key": "stored-parallel-key"})
    async with make_client(env={**env, **parallel.env}, clock=FakeClock()) as ws:
        available = {s.id: s.available for s in ws.provider_status()}["parallel"]
        response = await ws.asearch(QUERY)
    assert available and response.provider == "parallel"
    assert parallel.last.headers["x-api-key"] == "stored-parallel-key"


async def test_env_key_beats_the_stored_one(parallel: FakeParallel, env: dict[str, str], config_dir: Path) -> None:
    CredentialStore(config_dir / "agent.db").set("parallel", "api_key", {"api_key": "stored-parallel-key"})
    await run(make_env(env, parallel))
    assert parallel.last.headers["x-api-key"] == KEY


async def test_not_available_without_a_key(parallel: FakeParallel, env: dict[str, str]) -> None:
    response = await run({**env, **parallel.env})
    assert parallel.requests == []
    assert response.provider == "duckduckgo"
    assert messages(response)[0] == (
        "provider parallel was requested but is not available (set PARALLEL_API_KEY or run "
        "`websearch auth set parallel`); used the automatic chain instead"
    )


def test_missing_credential_message(config_dir: Path) -> None:
    with pytest.raises(MissingCredentialError) as info:
        PROVIDER.plan(SearchParams(QUERY), context(config_dir, {}))
    assert info.value.message == "Parallel needs an API key: set PARALLEL_API_KEY or run `websearch auth set parallel`"


# -- parsing -----------------------------------------------------------------------------------

REALISTIC = {
    "search_id": "search_fcb2b4f3c75e418687bccaa1a8381331",
    "results": [
        {
            "url": "https://bun.com/blog/bun-v1.3",
            "title": "Bun 1.3 | Bun Blog",
            "publish_date": "2026-11-28",
            "excerpts": ["Bun 1.3 is the biggest release yet.", "It adds a full-stack dev server."],
        },
        {"url": "https://github.com/oven-sh/bun/releases", "publish_date": None, "excerpts": []},
        {"url": "https://news.ycombinator.com/item?id=1", "title": "", "excerpts": ["HN thread", 7, ""]},
        {"title": "no url", "excerpts": ["dropped"]},
        None,
    ],
    "warnings": [],
    "usage": [{"name": "sku_search", "count": 1}],
}
EXPECTED = (
    SearchSource(
        title="Bun 1.3 | Bun Blog",
        url="https://bun.com/blog/bun-v1.3",
        snippet="Bun 1.3 is the biggest release yet.\n\nIt adds a full-stack dev server.",
        published_date="2026-11-28",
        age_seconds=2 * 86400 + 12 * 3600,
    ),
    SearchSource(title="https://github.com/oven-sh/bun/releases", url="https://github.com/oven-sh/bun/releases"),
    SearchSource(
        title="https://news.ycombinator.com/item?id=1",
        url="https://news.ycombinator.com/item?id=1",
        snippet="HN thread",
    ),
)


async def test_parses_a_realistic_body(parallel: FakeParallel, env: dict[str, str]) -> None:
    parallel.enqueue(Reply(200, REALISTIC))
    response = await run(make_env(env, parallel))
    assert response.sources == EXPECTED
    assert response.request_id == "search_fcb2b4f3c75e418687bccaa1a8381331"
    assert (response.answer, response.related_questions, response.citations, response.auth_mode) == (None, (), (), None)


async def test_fake_default_body(parallel: FakeParallel, env: dict[str, str]) -> None:
    response = await run(make_env(env, parallel), limit=5)
    assert response.request_id is not None and response.request_id.startswith("search_")
    first, fifth = response.sources[0], response.sources[4]
    assert first.snippet == f"Section 1.1 on {QUERY}.\n\nSection 1.2: details and caveats."
    assert (first.published_date, first.age_seconds) == ("2026-11-28", 2 * 86400 + 12 * 3600)
    assert fifth.title == fifth.url  # the fake leaves every fifth title out


def test_parse_on_bytes(config_dir: Path) -> None:
    response = HttpResponse(200, {}, json.dumps(REALISTIC).encode())
    parsed = PROVIDER.parse(response, PROVIDER.plan(SearchParams(QUERY, num_search_results=2), context(config_dir)))
    assert parsed.sources == EXPECTED[:2]
    assert parsed.request_id == REALISTIC["search_id"]


@pytest.mark.parametrize("body", [{"search_id": "s_1", "results": []}, {}, {"results": {"url": "https://x"}}])
async def test_empty_result_is_a_204_failure(parallel: FakeParallel, env: dict[str, str], body: dict[str, Any]) -> None:
    parallel.enqueue(Reply(200, body))
    response = await run(make_env(env, parallel))
    assert response.error == "Parallel returned no renderable search content."
    assert response.attempts[0].status == 204


# -- errors ------------------------------------------------------------------------------------

UNPROCESSABLE = validation_error("mode", "Input should be 'one-shot', 'agentic' or 'fast'")
ERRORS = [
    (
        Reply(401, {"error": {"message": "Invalid or missing API key.", "ref_id": "ref_401"}}),
        401,
        "auth",
        AUTH_FAILED.format(401),
    ),
    (
        Reply(402, {"error": {"message": "Payment required"}}),
        402,
        "quota",
        "parallel: 402 credits exhausted: Payment required",
    ),
    (
        Reply(402, {"error": {"message": "Insufficient credits. Add credits at platform.parallel.ai"}}),
        402,
        "quota",
        "parallel: 402 credits exhausted: Insufficient credits. Add credits at platform.parallel.ai",
    ),
    (Reply(403, "Forbidden"), 403, "auth", AUTH_FAILED.format(403)),
    (Reply(422, UNPROCESSABLE), 422, "rejected", f"Parallel API error (422): {json.dumps(UNPROCESSABLE)}"),
    (
        Reply(429, {"error": {"message": "Rate limit exceeded. Retry in 30 seconds."}}, headers={"Retry-After": "30"}),
        429,
        "rate_limited",
        "Parallel API error (429): Rate limit exceeded. Retry in 30 seconds.; retry after 30 s",
    ),
    (Reply(500, "Internal Server Error"), 500, "unavailable", "Parallel API error (500): Internal Server Error"),
    (
        Reply(503, {"message": "Service temporarily unavailable"}),
        503,
        "unavailable",
        "Parallel API error (503): Service temporarily unavailable",
    ),
    (
        Reply(504, {"detail": "upstream   timed\nout"}),
        504,
        "unavailable",
        "Parallel API error (504): upstream timed out",
    ),
    (Reply(500, {"error": "boom"}), 500, "unavailable", "Parallel API error (500): boom"),
    (
        Reply(200, "<!doctype html><title>Parallel</title>", content_type="text/html"),
        200,
        "invalid_response",
        "Parallel returned a body that is not JSON",
    ),
    (Reply(200, ["not", "an", "object"]), 200, "invalid_response", "Parallel returned JSON that is not an object"),
]


@pytest.mark.parametrize(("reply", "status", "kind", "message"), ERRORS)
async def test_error_statuses(
    parallel: FakeParallel, env: dict[str, str], reply: Reply, status: int, kind: str, message: str
) -> None:
    parallel.enqueue(reply)
    response = await run(make_env(env, parallel))
    assert response.error == message
    (attempt,) = response.attempts
    assert (attempt.status, attempt.error, attempt.error_kind) == (status, message, kind)
    assert_no_key(response)


def test_retry_after_is_kept(config_dir: Path) -> None:
    response = HttpResponse(429, {"retry-after": "30"}, b"Too Many Requests", secrets=(KEY,))
    with pytest.raises(RateLimited) as info:
        PROVIDER.parse(response, PROVIDER.plan(SearchParams(QUERY), context(config_dir)))
    assert (info.value.message, info.value.status, info.value.retry_after) == (
        "Parallel API error (429): Too Many Requests; retry after 30 s",
        429,
        30.0,
    )


def test_retry_after_date_is_read_against_the_injected_clock(config_dir: Path) -> None:
    plan = PROVIDER.plan(SearchParams(QUERY), context(config_dir))  # the fake clock: 2026-11-30 12:00:00 UTC
    response = HttpResponse(429, {"retry-after": "Mon, 30 Nov 2026 12:01:30 GMT"}, b"slow down")
    assert PROVIDER.error(response, plan).retry_after == 90.0


@pytest.mark.parametrize("body", [f"bad key {KEY}", json.dumps({"error": {"message": f"key {KEY} revoked"}})])
async def test_key_echoed_in_an_error_body_is_redacted(parallel: FakeParallel, env: dict[str, str], body: str) -> None:
    parallel.enqueue(Reply(500, body))
    response = await run(make_env(env, parallel))
    assert response.error is not None and "[redacted]" in response.error
    assert_no_key(response)


def test_error_message_prefers_message_then_detail_then_error(config_dir: Path) -> None:
    plan = PROVIDER.plan(SearchParams(QUERY), context(config_dir))

    def message(body: object) -> str:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        return PROVIDER.error(HttpResponse(500, {}, raw), plan).message

    assert message({"message": "m", "detail": "d", "error": "e"}) == "Parallel API error (500): m"
    assert message({"detail": "d", "error": {"message": "em"}}) == "Parallel API error (500): d"
    assert message({"error": {"message": "em"}}) == "Parallel API error (500): em"
    assert message({"detail": [{"msg": "x"}]}) == 'Parallel API error (500): {"detail": [{"msg": "x"}]}'
    assert message(b"plain text") == "Parallel API error (500): plain text"


# -- the richer parameters --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "policy", "notices"),
    [
        (
            {"include_domains": ["bun.sh"], "exclude_domains": ["x.com", "y.com"]},
            {"include_domains": ["bun.sh"], "exclude_domains": ["x.com", "y.com"]},
            (),
        ),
        ({"recency_days": 3}, {"after_date": "2026-11-27"}, ()),
        (
            {"start_published_date": "2026-01-15", "end_published_date": "2026-02-01"},
            {"after_date": "2026-01-15"},
            ('end_published_date="2026-02-01" not applied: Parallel does not support it',),
        ),
        (
            {"recency_hours": 30, "recency": "day"},
            {"after_date": "2026-11-29"},
            (
                "recency_hours=30 applied as whole days (source_policy.after_date=2026-11-29): Parallel's date filters take dates only",
                'recency="day" not applied: Parallel does not support it',
            ),
        ),
    ],
)
async def test_richer_parameters_are_the_source_policy(
    parallel: FakeParallel,
    env: dict[str, str],
    params: dict[str, Any],
    policy: dict[str, Any],
    notices: tuple[str, ...],
) -> None:
    response = await run(make_env(env, parallel), **params)
    assert parallel.last.json() == {**BODY, "source_policy": policy}
    assert response.ok and messages(response) == notices
