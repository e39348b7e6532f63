"""Firecrawl against a loopback fake of POST /v2/search: request, parsing, errors, credentials."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import FIRECRAWL_KEY, FakeClock, make_client, messages, provider_context, search_once
from websearch import Attempt, SearchParams, SearchResponse, SearchSource
from websearch._core._credentials import CredentialStore
from websearch._providers.firecrawl import PROVIDER
from websearch.errors import MissingCredentialError, SearchProviderError
from websearch.providers import HttpResponse, ProviderContext
from websearch.testing import Reply
from websearch.testing.firecrawl import (
    INSUFFICIENT_CREDITS,
    FakeFirecrawl,
    firecrawl_error,
    firecrawl_results_body,
    rate_limited,
)

KEY = FIRECRAWL_KEY
MISSING = "Firecrawl needs an API key: set FIRECRAWL_API_KEY or run `websearch auth set firecrawl`"
AUTH_FAILED = "Firecrawl authorization failed ({}). Check API key or base URL."


async def search(env: dict[str, str], clock: FakeClock, query: str = "rust async book", **kw: Any) -> SearchResponse:
    return await search_once("firecrawl", env, query, clock, **kw)


def context(env: dict[str, str], config_dir: Path, clock: FakeClock) -> ProviderContext:
    return provider_context(config_dir, env, clock=clock)


def error_of(response: HttpResponse, config_dir: Path, clock: FakeClock) -> SearchProviderError:
    """The error the provider maps `response` to."""
    plan = PROVIDER.plan(SearchParams("q"), context({"FIRECRAWL_API_KEY": KEY}, config_dir, clock))
    return PROVIDER.error(response, plan)


# -- the request -------------------------------------------------------------------------------


async def test_default_request(fc: FakeFirecrawl, fc_env: dict[str, str], clock: FakeClock) -> None:
    response = await search(fc_env, clock)
    req = fc.last
    assert (req.method, req.path, req.query) == ("POST", "/v2/search", ())
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.headers["content-type"] == "application/json"
    assert req.json() == {"query": "rust async book", "limit": 10, "sources": [{"type": "web"}]}
    assert len(fc.requests) == 1
    assert response.provider == "firecrawl" and response.error is None
    assert len(response.sources) == 10
    assert messages(response) == ()


@pytest.mark.parametrize(
    ("kwargs", "limit", "notice"),
    [
        ({"limit": 3}, 3, None),
        ({"num_search_results": 25}, 25, None),
        (
            {"limit": 4, "num_search_results": 7},
            7,
            "limit=4 not applied: num_search_results=7 takes precedence",
        ),
        ({"limit": 500}, 100, "limit=500 clamped to 100: Firecrawl returns at most 100 results"),
        (
            {"num_search_results": 101, "limit": 101},
            100,
            "num_search_results=101 clamped to 100: Firecrawl returns at most 100 results",
        ),
    ],
)
async def test_count_becomes_limit(
    fc: FakeFirecrawl, fc_env: dict[str, str], clock: FakeClock, kwargs: dict[str, int], limit: int, notice: str | None
) -> None:
    response = await search(fc_env, clock, **kwargs)
    assert fc.last.json() == {"query": "rust async book", "limit": limit, "sources": [{"type": "web"}]}
    assert len(response.sources) == limit
    assert messages(response) == ((notice,) if notice else ())


@pytest.mark.parametrize(
    ("recency", "tbs"), [("day", "qdr:d"), ("week", "qdr:w"), ("month", "qdr:m"), ("year", "qdr:y")]
)
async def test_recency_becomes_tbs(
    fc: FakeFirecrawl, fc_env: dict[str, str], clock: FakeClock, recency: str, tbs: str
) -> None:
    response = await search(fc_env, clock, recency=recency)
    assert fc.last.json() == {"query": "rust async book", "limit": 10, "sources": [{"type": "web"}], "tbs": tbs}
    assert response.ok and messages(response) == ()


async def test_unsupported_parameters_become_notices(
    fc: FakeFirecrawl, fc_env: dict[str, str], clock: FakeClock
) -> None:
    response = await search(fc_env, clock, max_tokens=200, temperature=0.3)
    assert "max_tokens" not in fc.last.json() and "temperature" not in fc.last.json()
    assert messages(response) == (
        "max_tokens=200 not applied: Firecrawl does not support it",
        "temperature=0.3 not applied: Firecrawl does not support it",
    )


# -- parsing -----------------------------------------------------------------------------------

REALISTIC: dict[str, Any] = {
    "success": True,
    "data": {
        "web": [
            {
                "url": "https://tokio.rs/tokio/tutorial",
                "title": "Tutorial | Tokio",
                "description": "Tokio is a runtime for writing reliable asynchronous applications with Rust.",
                "position": 1,
            },
            {
                "url": "https://github.com/rust-lang/async-book",
                "title": "rust-lang/async-book",
                "description": "Asynchronous Programming in Rust",
                "position": 2,
                "category": "github",
            },
            {"title": "No URL here", "description": "dropped", "position": 3},
            {
                "url": "https://rust-lang.github.io/async-book/",
                "title": None,
                "description": "The async book.",
                "position": 4,
            },
            {
                "url": "https://blog.example.com/async",
                "title": "Scraped",
                "markdown": "# Async in Rust\n\nFutures are lazy.",
                "position": 5,
            },
            {
                "url": "https://down.example.com/",
                "title": "Scrape failed",
                "description": "",
                "position": 6,
                "metadata": {"statusCode": 500, "error": "timeout"},
            },
        ]
    },
    "creditsUsed": 6,
    "id": "019a8c6e-5d1f-7c3b-9e2a-4f6b8d0c1a2e",
}


async def test_realistic_body_is_parsed_exactly(fc: FakeFirecrawl, fc_env: dict[str, str], clock: FakeClock) -> None:
    fc.enqueue(Reply(200, REALISTIC))
    response = await search(fc_env, clock)
    assert response == SearchResponse(
        provider="firecrawl",
        query="rust async book",
        sources=(
            SearchSource(
                "Tutorial | Tokio",
                "https://tokio.rs/tokio/tutorial",
                "Tokio is a runtime for writing reliable asynchronous applications with Rust.",
            ),
            SearchSource(
                "rust-lang/async-book", "https://github.com/rust-lang/async-book", "Asynchronous Programming in Rust"
            ),
            SearchSource(
                "https://rust-lang.github.io/async-book/", "https://rust-lang.github.io/async-book/", "The async book."
            ),
            SearchSource("Scraped", "https://blog.example.com/async", "# Async in Rust\n\nFutures are lazy."),
            SearchSource("Scrape failed", "https://down.example.com/"),
        ),
        request_id="019a8c6e-5d1f-7c3b-9e2a-4f6b8d0c1a2e",
        auth_mode="api_key",
        attempts=(Attempt("firecrawl", None, None, 0.0),),
    )


async def test_more_results_than_asked_are_cut(fc: FakeFirecrawl, fc_env: dict[str, str], clock: FakeClock) -> None:
    fc.enqueue(Reply(200, firecrawl_results_body("q", 15)))
    response = await search(fc_env, clock, "q", limit=3)
    assert [s.url for s in response.sources] == [r["url"] for r in firecrawl_results_body("q", 3)["data"]["web"]]


async def test_warning_becomes_a_notice(fc: FakeFirecrawl, fc_env: dict[str, str], clock: FakeClock) -> None:
    fc.enqueue(Reply(200, firecrawl_results_body("q", 2, warning="Only 2 results were found for this query.")))
    response = await search(fc_env, clock, "q")
    assert messages(response) == ("Firecrawl warning: Only 2 results were found for this query.",)
    assert [n.kind for n in response.notices] == ["partial"]


def test_parse_v1_flat_data_and_missing_id(config_dir: Path, clock: FakeClock) -> None:
    body = b'{"success":true,"data":[{"url":"https://a.example","title":"A","description":"first"},{"url":""}]}'
    plan = PROVIDER.plan(SearchParams("q"), context({"FIRECRAWL_API_KEY": KEY}, config_dir, clock))
    parsed = PROVIDER.parse(HttpResponse(200, {}, body), plan)
    assert parsed.sources == (SearchSource("A", "https://a.example", "first"),)
    assert parsed.request_id is None and parsed.auth_mode == "api_key"


@pytest.mark.parametrize(
    "body",
    [
        {"success": True, "data": {"web": []}, "creditsUsed": 0},
        {"success": True, "data": {}, "creditsUsed": 0},
        {"success": True, "data": {"web": [{"title": "no url", "position": 1}]}},
    ],
)
async def test_empty_result_is_a_204_failure(
    fc: FakeFirecrawl, fc_env: dict[str, str], clock: FakeClock, body: dict[str, Any]
) -> None:
    fc.enqueue(Reply(200, body))
    response = await search(fc_env, clock)
    assert response.error == "Firecrawl returned no renderable search content."
    assert response.attempts[0].status == 204


# -- errors ------------------------------------------------------------------------------------

ERRORS = [
    (Reply(401, firecrawl_error("Unauthorized: Invalid token")), 401, "auth", AUTH_FAILED.format(401)),
    (Reply(403, firecrawl_error("Forbidden")), 403, "auth", AUTH_FAILED.format(403)),
    (
        Reply(402, firecrawl_error(INSUFFICIENT_CREDITS)),
        402,
        "quota",
        f"firecrawl: 402 credits exhausted: {INSUFFICIENT_CREDITS}",
    ),
    (Reply(402, "Payment Required"), 402, "quota", "firecrawl: 402 credits exhausted"),
    (
        Reply(429, rate_limited(12)),
        429,
        "rate_limited",
        "Firecrawl API error (429): " + rate_limited(12)["error"] + "; retry after 12 s",
    ),
    (
        Reply(429, firecrawl_error("Too many requests"), headers={"Retry-After": "30"}),
        429,
        "rate_limited",
        "Firecrawl API error (429): Too many requests; retry after 30 s",
    ),
    (
        Reply(
            400,
            firecrawl_error(
                "Invalid request body",
                details=[
                    {
                        "code": "unrecognized_keys",
                        "keys": ["x"],
                        "path": [],
                        "message": "Unrecognized key in body -- please review the v1 API documentation for request body changes",
                    }
                ],
            ),
        ),
        400,
        "rejected",
        "Firecrawl API error (400): Invalid request body: Unrecognized key in body -- please review the v1 API documentation for request body changes",
    ),
    (
        Reply(408, firecrawl_error("Request timed out", code="SCRAPE_TIMEOUT")),
        408,
        "unavailable",
        "Firecrawl API error (408): Request timed out (SCRAPE_TIMEOUT)",
    ),
    (
        Reply(500, firecrawl_error("An unexpected error occurred. Your exception ID is 7e1f")),
        500,
        "unavailable",
        "Firecrawl API error (500): An unexpected error occurred. Your exception ID is 7e1f",
    ),
    (
        Reply(502, "<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html"),
        502,
        "unavailable",
        "Firecrawl API error (502): <html><body><h1>502 Bad Gateway</h1></body></html>",
    ),
    # quota comes from the status, never from the words: none of these is "credits exhausted"
    (
        Reply(500, firecrawl_error("quota service unavailable")),
        500,
        "unavailable",
        "Firecrawl API error (500): quota service unavailable",
    ),
    (
        Reply(400, firecrawl_error("insufficient query")),
        400,
        "rejected",
        "Firecrawl API error (400): insufficient query",
    ),
    (
        Reply(422, firecrawl_error("Insufficient parameters")),
        422,
        "rejected",
        "Firecrawl API error (422): Insufficient parameters",
    ),
    (
        Reply(200, "<html>maintenance</html>", content_type="text/html"),
        200,
        "invalid_response",
        "Firecrawl returned a body that is not JSON",
    ),
    # a failure envelope served with 2xx keeps the status 502: Firecrawl failed
    (
        Reply(200, firecrawl_error("Search engine returned no response")),
        502,
        "unavailable",
        "Firecrawl API error (502): Search engine returned no response",
    ),
    (
        Reply(200, firecrawl_error("Search timed out", code="SCRAPE_TIMEOUT")),
        502,
        "unavailable",
        "Firecrawl API error (502): Search timed out (SCRAPE_TIMEOUT)",
    ),
    (Reply(200, [1, 2]), 200, "invalid_response", "Firecrawl returned JSON that is not an object"),
]


@pytest.mark.parametrize(("reply", "status", "kind", "message"), ERRORS)
async def test_error_replies(
    fc: FakeFirecrawl, fc_env: dict[str, str], clock: FakeClock, reply: Reply, status: int, kind: str, message: str
) -> None:
    fc.enqueue(reply)
    response = await search(fc_env, clock)
    assert response.error == message
    assert response.sources == ()
    (attempt,) = response.attempts
    assert (attempt.provider, attempt.status, attempt.error, attempt.error_kind) == ("firecrawl", status, message, kind)


def test_retry_after_from_header_or_message_text(config_dir: Path, clock: FakeClock) -> None:
    header = HttpResponse(429, {"retry-after": "30"}, b'{"success":false,"error":"Too many requests"}')
    assert error_of(header, config_dir, clock).retry_after == 30.0
    text = HttpResponse(429, {}, json.dumps(rate_limited(12)).encode())
    assert error_of(text, config_dir, clock).retry_after == 12.0
    assert error_of(HttpResponse(500, {}, b"{}"), config_dir, clock).retry_after is None


def test_envelope_detail_is_redacted(config_dir: Path, clock: FakeClock) -> None:
    body = b'{"success":false,"error":"token fc-3f9a1c7e5b2d4a6c8e0f is malformed"}'
    error = error_of(HttpResponse(418, {}, body, secrets=(KEY,)), config_dir, clock)
    assert error.message == "Firecrawl API error (418): token [redacted] is malformed"


async def test_key_never_leaks_on_error_paths(fc: FakeFirecrawl, fc_env: dict[str, str], clock: FakeClock) -> None:
    echoes = [
        Reply(500, firecrawl_error(f"bad token {KEY}")),
        Reply(418, f"plain text with {KEY}"),
        Reply(400, firecrawl_error("Invalid request body", details=[{"message": f"key {KEY} rejected"}])),
        *(reply for reply, _, _, _ in ERRORS),
    ]
    for reply in echoes:
        fc.enqueue(reply)
        response = await search(fc_env, clock)
        assert response.error
        for text in (response.error, repr(response), repr(response.attempts), str(response.to_dict())):
            assert KEY not in text


# -- credentials and availability --------------------------------------------------------------


def test_missing_key_message(config_dir: Path, clock: FakeClock) -> None:
    with pytest.raises(MissingCredentialError) as info:
        PROVIDER.plan(SearchParams("q"), context({}, config_dir, clock))
    assert info.value.message == MISSING and info.value.provider == "firecrawl"


async def test_empty_stored_credential_reports_the_missing_key(
    fc: FakeFirecrawl, env: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    CredentialStore(config_dir / "agent.db").set("firecrawl", "api_key", {})
    response = await search({**env, **fc.env}, clock)
    assert response.error == MISSING
    assert fc.requests == []


async def test_unavailable_explicit_provider_falls_back_to_the_chain(
    fc: FakeFirecrawl, env: dict[str, str], clock: FakeClock
) -> None:
    response = await search({**env, **fc.env}, clock)
    assert response.provider == "duckduckgo" and fc.requests == []
    assert messages(response)[0] == (
        "provider firecrawl was requested but is not available (set FIRECRAWL_API_KEY or run "
        "`websearch auth set firecrawl`); used the automatic chain instead"
    )


async def test_stored_credential_makes_it_available_and_is_sent(
    fc: FakeFirecrawl, env: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    stored = "fc-stored-0a1b2c3d4e5f"
    env = {**env, **fc.env}
    assert not _available(env)
    CredentialStore(config_dir / "agent.db").set("firecrawl", "api_key", {"api_key": stored})
    assert _available(env)
    response = await search(env, clock)
    assert response.ok and fc.last.headers["authorization"] == f"Bearer {stored}"


async def test_key_precedence_explicit_then_env_then_store(
    fc: FakeFirecrawl, fc_env: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    CredentialStore(config_dir / "agent.db").set("firecrawl", "api_key", {"api_key": "fc-stored-key-999"})
    assert _available(fc_env)
    await search(fc_env, clock)
    assert fc.last.headers["authorization"] == f"Bearer {KEY}"
    async with make_client(env=fc_env, clock=clock, api_keys={"firecrawl": "fc-explicit-key-1"}) as ws:
        await ws.asearch("q", provider="firecrawl")
    assert fc.last.headers["authorization"] == "Bearer fc-explicit-key-1"


async def test_auto_chain_uses_it_before_duckduckgo(
    fc: FakeFirecrawl, fc_env: dict[str, str], clock: FakeClock
) -> None:
    async with make_client(env=fc_env, clock=clock) as ws:
        response = await ws.asearch("q")
    assert response.provider == "firecrawl" and len(fc.requests) == 1


def _available(env: dict[str, str]) -> bool:
    with make_client(env=env) as ws:
        return next(s.available for s in ws.provider_status() if s.id == "firecrawl")


# -- the fake itself ---------------------------------------------------------------------------


async def test_fake_rejects_what_the_real_server_rejects(fc: FakeFirecrawl) -> None:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        async with session.post(f"{fc.base_url}/v2/search", json={"query": "q"}) as resp:
            assert (resp.status, await resp.json()) == (401, firecrawl_error("Unauthorized: Token missing"))
        headers = {"Authorization": "Bearer x"}
        async with session.post(f"{fc.base_url}/v2/search", json={"query": "q", "count": 3}, headers=headers) as resp:
            body = await resp.json()
            assert resp.status == 400 and body["details"][0]["keys"] == ["count"]
        async with session.post(f"{fc.base_url}/v2/search", json={"query": "q"}, headers=headers) as resp:
            assert len((await resp.json())["data"]["web"]) == 5  # the API's own default limit
