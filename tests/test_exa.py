"""Exa against a loopback fake of api.exa.ai/search and mcp.exa.ai/mcp, plus its parsers on bytes."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock, StillClock, make_client, messages, provider_context, search_once
from websearch import ConfigError, SearchParams, SearchResponse, SearchSource, WebSearch
from websearch._core._credentials import CredentialStore
from websearch._providers.exa import PROVIDER, UNEXPECTED_SHAPE
from websearch._state import MemoryStore
from websearch.errors import MissingCredentialError, RateLimited
from websearch.providers import HttpResponse, ProviderResult
from websearch.testing import Reply
from websearch.testing.exa import FakeExa, exa_error, exa_search_body, mcp_listing, mcp_reply, mcp_result

KEY = "exa-test-key-7c1e9a44d2"
AUTH_FAILED = "Exa authorization failed ({}). Check API key or base URL."


@pytest.fixture
def keyed(env: dict[str, str], exa: FakeExa) -> dict[str, str]:
    return {**env, **exa.env, "EXA_API_KEY": KEY}


@pytest.fixture
def keyless(env: dict[str, str], exa: FakeExa) -> dict[str, str]:
    return {**env, **exa.env}


def client(env: dict[str, str], clock: FakeClock, **kwargs: Any) -> WebSearch:
    return make_client(env=env, clock=clock, **kwargs)


def paced(env: dict[str, str], clock: FakeClock) -> WebSearch:
    """A client on the engine, its state in memory: Exa's delay is its pacing (searches here
    pass cache="off", so each one goes to Exa)."""
    return make_client(env=env, clock=clock, engine=True, store=MemoryStore(clock))


async def search(env: dict[str, str], clock: FakeClock, query: str = "rust async", **params: Any) -> SearchResponse:
    return await search_once("exa", env, query, clock, **params)


def api_body(query: str, n: int) -> dict[str, Any]:
    return {"query": query, "numResults": n, "type": "auto", "contents": {"summary": {"query": query}}}


def settings(config_dir: Path, text: str) -> None:
    (config_dir / "settings.toml").write_text(text)


def parse(response: HttpResponse, config_dir: Path, *, keyed: bool = True, **params: Any) -> ProviderResult:
    """`response` parsed as the answer to a planned search: keyed (REST), or keyless (MCP, as when
    Exa is chosen explicitly without a key)."""
    ctx = provider_context(config_dir, {"EXA_API_KEY": KEY} if keyed else {}, FakeClock())
    plan = PROVIDER.plan(SearchParams("q", **params), dataclasses.replace(ctx, explicit=not keyed))
    return PROVIDER.parse(response, plan)


def assert_no_key(response: SearchResponse, key: str = KEY) -> None:
    assert key not in (response.error or "")
    assert key not in repr(response)
    assert key not in repr(response.attempts)
    assert key not in json.dumps(response.to_dict())


# -- the REST request ------------------------------------------------------------------------


async def test_default_request(exa: FakeExa, keyed: dict[str, str], clock: FakeClock) -> None:
    response = await search(keyed, clock)
    assert response.ok and response.provider == "exa"
    req = exa.last
    assert (req.method, req.path, req.query) == ("POST", "/search", ())
    assert req.headers["x-api-key"] == KEY
    assert req.headers["content-type"] == "application/json"
    assert "authorization" not in req.headers
    assert req.json() == api_body("rust async", 10)
    assert len(response.sources) == 10
    assert messages(response) == ()


@pytest.mark.parametrize(
    ("params", "sent", "returned", "notices"),
    [
        ({"limit": 3}, 3, 3, ()),
        ({"num_search_results": 7}, 7, 7, ()),
        (
            {"limit": 2, "num_search_results": 5},
            5,
            5,
            ("limit=2 not applied: num_search_results=5 takes precedence",),
        ),
        ({"limit": 150}, 100, 40, ("limit=150 clamped to 100: Exa returns at most 100 results",)),
    ],
)
async def test_counts(
    exa: FakeExa,
    keyed: dict[str, str],
    clock: FakeClock,
    params: dict[str, Any],
    sent: int,
    returned: int,
    notices: tuple[str, ...],
) -> None:
    response = await search(keyed, clock, **params)
    assert exa.last.json() == api_body("rust async", sent)
    assert len(response.sources) == returned  # the fake holds 40 results
    assert messages(response) == notices


@pytest.mark.parametrize("recency", ["day", "week", "month", "year"])
async def test_recency_is_not_sent_and_says_so(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock, recency: str
) -> None:
    response = await search(keyed, clock, recency=recency)
    assert exa.last.json() == api_body("rust async", 10)
    assert messages(response) == (f'recency="{recency}" not applied: Exa does not support it',)


async def test_unsupported_parameters_become_notices(keyed: dict[str, str], clock: FakeClock) -> None:
    response = await search(keyed, clock, max_tokens=100, temperature=0.5)
    assert messages(response) == (
        "max_tokens=100 not applied: Exa does not support it",
        "temperature=0.5 not applied: Exa does not support it",
    )


# -- the REST response -----------------------------------------------------------------------

REALISTIC = {
    "requestId": "b5947044c4b78efa9552a7c89b306d95",
    "resolvedSearchType": "neural",
    "searchType": "auto",
    "results": [
        {
            "id": "https://bun.com/blog/bun-v1.3",
            "url": "https://bun.com/blog/bun-v1.3",
            "title": "Bun 1.3",
            "score": 0.41,
            "publishedDate": "2026-11-27T00:00:00.000Z",
            "author": "Jarred Sumner",
            "text": "Bun 1.3 is the biggest release yet...",
            "highlights": ["Bun 1.3 ships a full-stack dev server.", "  "],
            "summary": "  Bun 1.3 adds a dev server, Redis client and MySQL driver.  ",
        },
        {"id": "x", "title": "No URL here", "summary": "dropped"},
        {
            "id": "https://example.org/untitled",
            "url": "https://example.org/untitled",
            "title": "",
            "publishedDate": "2025-06-15",
            "summary": "A page without a title.",
        },
        {
            "id": "https://deno.com/blog/v2",
            "url": "https://deno.com/blog/v2",
            "title": "Deno 2",
            "publishedDate": "last week",
            "highlights": ["Deno 2 is backwards compatible.", "It runs npm packages."],
        },
        {
            "id": "https://nodejs.org/en/blog",
            "url": "https://nodejs.org/en/blog",
            "title": "Node.js blog",
            "author": "",
            "text": "Node.js 24 release notes.",
            "summary": "Node.js 24 ships with npm 11.",
        },
        {
            "id": "https://example.com/fourth-summary",
            "url": "https://example.com/fourth-summary",
            "title": "Fourth summary",
            "summary": "Not in the answer: only three summaries are.",
        },
    ],
    "costDollars": {"total": 0.011},
    "searchTime": 388.2,
}


async def test_parses_a_realistic_body_exactly(exa: FakeExa, keyed: dict[str, str], clock: FakeClock) -> None:
    exa.enqueue(Reply(200, REALISTIC))
    response = await search(keyed, clock)
    assert response.sources == (
        SearchSource(
            title="Bun 1.3",
            url="https://bun.com/blog/bun-v1.3",
            snippet="Bun 1.3 adds a dev server, Redis client and MySQL driver.",
            published_date="2026-11-27T00:00:00.000Z",
            age_seconds=302400,
            author="Jarred Sumner",
            highlights=("Bun 1.3 ships a full-stack dev server.",),
        ),
        SearchSource(
            title="https://example.org/untitled",
            url="https://example.org/untitled",
            snippet="A page without a title.",
            published_date="2025-06-15",
            age_seconds=46094400,
        ),
        SearchSource(
            title="Deno 2",
            url="https://deno.com/blog/v2",
            snippet="Deno 2 is backwards compatible. It runs npm packages.",
            published_date="last week",
            age_seconds=None,
            highlights=("Deno 2 is backwards compatible.", "It runs npm packages."),
        ),
        SearchSource(
            title="Node.js blog",
            url="https://nodejs.org/en/blog",
            snippet="Node.js 24 ships with npm 11.",
        ),
        SearchSource(
            title="Fourth summary",
            url="https://example.com/fourth-summary",
            snippet="Not in the answer: only three summaries are.",
        ),
    )
    assert response.answer == (
        "**Bun 1.3**: Bun 1.3 adds a dev server, Redis client and MySQL driver.\n\n"
        "**https://example.org/untitled**: A page without a title.\n\n"
        "**Node.js blog**: Node.js 24 ships with npm 11."
    )
    assert response.request_id == "b5947044c4b78efa9552a7c89b306d95"
    assert response.auth_mode == "api_key"
    assert (response.citations, response.related_questions, response.usage) == ((), (), None)


async def test_sources_are_sliced_to_the_count(exa: FakeExa, keyed: dict[str, str], clock: FakeClock) -> None:
    exa.enqueue(Reply(200, exa_search_body("q", 12)))  # more than asked for
    response = await search(keyed, clock, limit=2)
    assert [s.url for s in response.sources] == [
        "https://www.example1.com/articles/q-1",
        "https://www.example2.com/articles/q-2",
    ]
    assert response.answer is not None and response.answer.count("**: ") == 2


def test_snippet_precedence_summary_text_highlights(config_dir: Path) -> None:
    body = {
        "results": [
            {"url": "https://a.example", "summary": "S", "text": "T", "highlights": ["H1", "H2"]},
            {"url": "https://b.example", "summary": " ", "text": "T", "highlights": ["H1"]},
            {"url": "https://c.example", "text": "", "highlights": ["H1", "H2"]},
            {"url": "https://d.example"},
        ]
    }
    response = parse(HttpResponse(200, {}, json.dumps(body).encode()), config_dir)
    assert [s.snippet for s in response.sources] == ["S", "T", "H1 H2", None]
    assert [s.highlights for s in response.sources] == [("H1", "H2"), ("H1",), ("H1", "H2"), ()]
    assert response.answer == "**https://a.example**: S"
    assert response.request_id is None


@pytest.mark.parametrize("body", [{"requestId": "r1", "results": []}, {"requestId": "r1"}])
async def test_empty_result_is_the_chains_204(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock, body: dict[str, Any]
) -> None:
    exa.enqueue(Reply(200, body))
    response = await search(keyed, clock)
    assert response.error == "Exa returned no renderable search content."
    assert [(a.provider, a.status) for a in response.attempts] == [("exa", 204)]


# -- REST errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "status", "kind", "error"),
    [
        (exa_error(401, "INVALID_API_KEY", "Invalid API key"), 401, "auth", AUTH_FAILED.format("401 INVALID_API_KEY")),
        (
            exa_error(402, "NO_MORE_CREDITS", "You have run out of credits"),
            402,
            "quota",
            "exa: 402 credits exhausted (NO_MORE_CREDITS): You have run out of credits",
        ),
        (
            exa_error(402, "API_KEY_BUDGET_EXCEEDED", "This API key has hit its budget"),
            402,
            "quota",
            "exa: 402 credits exhausted (API_KEY_BUDGET_EXCEEDED): This API key has hit its budget",
        ),
        (
            exa_error(403, "FEATURE_DISABLED", "Summaries are not enabled for this plan"),
            403,
            "auth",
            AUTH_FAILED.format("403 FEATURE_DISABLED"),
        ),
        (
            exa_error(429, "RATE_LIMIT_EXCEEDED", "Too many requests", headers={"Retry-After": "30"}),
            429,
            "rate_limited",
            "Exa API error (429): Too many requests (RATE_LIMIT_EXCEEDED); retry after 30 s",
        ),
        # the tag decides, not the words: a rate limit that mentions a quota is still a rate limit
        (
            exa_error(429, "RATE_LIMIT_EXCEEDED", "Monthly quota reached"),
            429,
            "rate_limited",
            "Exa API error (429): Monthly quota reached (RATE_LIMIT_EXCEEDED)",
        ),
        (
            exa_error(400, "INVALID_NUM_RESULTS", "numResults must be at most 100"),
            400,
            "rejected",
            "Exa API error (400): numResults must be at most 100 (INVALID_NUM_RESULTS)",
        ),
        # quota comes from a status or a tag, never from the words
        (
            exa_error(500, "INTERNAL_ERROR", "quota service unavailable"),
            500,
            "unavailable",
            "Exa API error (500): quota service unavailable (INTERNAL_ERROR)",
        ),
        (
            exa_error(400, "INVALID_REQUEST", "insufficient query"),
            400,
            "rejected",
            "Exa API error (400): insufficient query (INVALID_REQUEST)",
        ),
        (
            exa_error(422, "INVALID_REQUEST_BODY", "Insufficient parameters"),
            422,
            "rejected",
            "Exa API error (422): Insufficient parameters (INVALID_REQUEST_BODY)",
        ),
        (Reply(500, "Internal Server Error"), 500, "unavailable", "Exa API error (500): Internal Server Error"),
        (
            Reply(502, "<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html"),
            502,
            "unavailable",
            "Exa API error (502): <html><body><h1>502 Bad Gateway</h1></body></html>",
        ),
        (
            Reply(503, {"message": "upstream down"}),
            503,
            "unavailable",
            'Exa API error (503): {"message": "upstream down"}',
        ),
        (
            Reply(200, "<html>maintenance</html>", content_type="text/html"),
            200,
            "invalid_response",
            "Exa returned a body that is not JSON",
        ),
        (Reply(200, ["not", "an", "object"]), 200, "invalid_response", "Exa returned JSON that is not an object"),
    ],
)
async def test_errors(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock, reply: Reply, status: int, kind: str, error: str
) -> None:
    exa.enqueue(reply)
    response = await search(keyed, clock)
    assert response.error == error
    (attempt,) = response.attempts
    assert (attempt.provider, attempt.status, attempt.error, attempt.error_kind) == ("exa", status, error, kind)
    assert_no_key(response)


def test_retry_after_is_kept_on_the_error(config_dir: Path) -> None:
    response = HttpResponse(429, {"retry-after": "30"}, b'{"error": "Too many requests", "tag": "RATE_LIMITED"}')
    with pytest.raises(RateLimited) as info:
        parse(response, config_dir)
    assert (info.value.status, info.value.retry_after) == (429, 30.0)


@pytest.mark.parametrize("status", [400, 401, 402, 403, 429, 500])
async def test_key_echoed_by_the_server_is_redacted(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock, status: int
) -> None:
    exa.enqueue(exa_error(status, "ECHO", f"bad key {KEY}"), Reply(status, f"plain: x-api-key={KEY}"))
    for _ in range(2):
        response = await search(keyed, clock)
        assert response.error
        assert_no_key(response)


async def test_wrong_key_rejected_by_the_fake_is_redacted(env: dict[str, str], clock: FakeClock) -> None:
    with FakeExa(api_key="the-only-valid-key") as fake:
        response = await search({**env, **fake.env, "EXA_API_KEY": KEY}, clock)
    assert response.error == AUTH_FAILED.format("401 INVALID_API_KEY")
    assert fake.last.headers["x-api-key"] == KEY
    assert_no_key(response)


# -- availability ----------------------------------------------------------------------------


def exa_status(ws: WebSearch) -> tuple[bool, str]:
    row = next(s for s in ws.provider_status() if s.id == "exa")
    return row.available, row.reason


async def test_env_key_admits_exa_to_the_auto_chain(exa: FakeExa, keyed: dict[str, str], clock: FakeClock) -> None:
    async with client(keyed, clock) as ws:
        assert exa_status(ws)[0] is True
        response = await ws.asearch("rust async")
    assert response.provider == "exa" and response.auth_mode == "api_key"
    assert exa.last.path == "/search"


async def test_stored_credential_admits_exa(
    exa: FakeExa, keyless: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    CredentialStore(config_dir / "agent.db").set("exa", "api_key", {"api_key": "stored-exa-key-0001"})
    async with client(keyless, clock) as ws:
        assert exa_status(ws)[0] is True
        response = await ws.asearch("rust async")
    assert response.provider == "exa"
    assert exa.last.headers["x-api-key"] == "stored-exa-key-0001"
    assert_no_key(response, "stored-exa-key-0001")


async def test_key_order_is_explicit_then_env_then_stored(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    CredentialStore(config_dir / "agent.db").set("exa", "api_key", {"api_key": "stored-exa-key-0001"})
    async with client(keyed, clock, api_keys={"exa": "explicit-exa-key-01"}) as ws:
        await ws.asearch("q", provider="exa")
        assert exa.last.headers["x-api-key"] == "explicit-exa-key-01"
    async with client(keyed, FakeClock()) as ws:
        await ws.asearch("q", provider="exa")
        assert exa.last.headers["x-api-key"] == KEY


async def test_without_a_key_the_auto_chain_skips_exa(exa: FakeExa, keyless: dict[str, str], clock: FakeClock) -> None:
    async with client(keyless, clock) as ws:
        assert exa_status(ws) == (False, "set EXA_API_KEY or run `websearch auth set exa`")
        response = await ws.asearch("rust async")
    assert response.provider == "duckduckgo"
    assert exa.requests == []


@pytest.mark.parametrize("switch", ["enabled", "enableSearch"])
async def test_settings_switch_removes_exa_entirely(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock, config_dir: Path, switch: str
) -> None:
    settings(config_dir, f"[exa]\n{switch} = false\n")
    async with client(keyed, clock) as ws:
        assert exa_status(ws) == (False, f"disabled by the setting exa.{switch}")
        auto = await ws.asearch("q")
        explicit = await ws.asearch("q", provider="exa")
    assert auto.provider == explicit.provider == "duckduckgo"
    assert messages(explicit)[0] == (
        f"provider exa was requested but is not available (disabled by the setting exa.{switch}); "
        "used the automatic chain instead"
    )
    assert exa.requests == []


async def test_switches_set_true_keep_exa(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    settings(config_dir, "[exa]\nenabled = true\nenableSearch = true\n")
    async with client(keyed, clock) as ws:
        assert (await ws.asearch("q")).provider == "exa"


# -- the keyless MCP fallback ----------------------------------------------------------------


def test_keyed_or_keyless_is_decided_once_and_keyless_only_when_explicit(config_dir: Path) -> None:
    ctx = provider_context(config_dir, {}, FakeClock())
    with pytest.raises(MissingCredentialError) as info:
        PROVIDER.plan(SearchParams("q"), ctx)  # the automatic chain never reaches the keyless MCP
    assert info.value.message == "Exa needs an API key: set EXA_API_KEY or run `websearch auth set exa`"
    keyless = PROVIDER.plan(SearchParams("q"), dataclasses.replace(ctx, explicit=True))
    assert keyless.state.keyed is False
    assert keyless.request is not None and keyless.request.url == "https://mcp.exa.ai/mcp"
    with_key = provider_context(config_dir, {"EXA_API_KEY": KEY}, FakeClock())
    for explicit in (False, True):
        keyed = PROVIDER.plan(SearchParams("q"), dataclasses.replace(with_key, explicit=explicit))
        assert keyed.state.keyed is True
        assert keyed.request is not None and keyed.request.url == "https://api.exa.ai/search"


def mcp_call(query: str, **arguments: Any) -> dict[str, Any]:
    return {"name": "web_search_exa", "arguments": {"query": query, **arguments}}


async def test_explicit_exa_without_a_key_calls_the_mcp_tool(
    exa: FakeExa, keyless: dict[str, str], clock: FakeClock
) -> None:
    response = await search(keyless, clock)
    req = exa.last
    assert (req.method, req.path, req.query) == ("POST", "/mcp", (("tools", "web_search_exa"),))
    assert req.headers["accept"] == "application/json, text/event-stream"
    assert req.headers["content-type"] == "application/json"
    assert "x-api-key" not in req.headers and "authorization" not in req.headers
    body = req.json()
    assert isinstance(body["id"], int)
    assert body == {"jsonrpc": "2.0", "id": body["id"], "method": "tools/call", "params": mcp_call("rust async")}
    assert len(response.sources) == 8  # the tool's own default
    assert response.auth_mode == "anonymous" and response.provider == "exa"


@pytest.mark.parametrize(
    ("params", "arguments", "returned"),
    [
        ({"limit": 3}, {"numResults": 3}, 3),
        ({"num_search_results": 12}, {"numResults": 12}, 12),
        ({"limit": 2, "num_search_results": 5}, {"numResults": 5}, 5),
        ({"recency": "week"}, {}, 8),
    ],
)
async def test_mcp_counts_and_recency(
    exa: FakeExa,
    keyless: dict[str, str],
    clock: FakeClock,
    params: dict[str, Any],
    arguments: dict[str, int],
    returned: int,
) -> None:
    response = await search(keyless, clock, **params)
    assert exa.last.json()["params"] == mcp_call("rust async", **arguments)
    assert len(response.sources) == returned


async def test_mcp_plain_text_listing_is_parsed(exa: FakeExa, keyless: dict[str, str], clock: FakeClock) -> None:
    listing = (
        "Title: Bun 1.3\nURL: https://bun.com/blog/bun-v1.3\nPublished Date: 2026-11-27T00:00:00.000Z\n"
        "Author: Jarred Sumner\nText: Bun 1.3 is out.\nIt adds a dev server.\n\nURL: not a field inside Text\n\n"
        "Title: \nURL: https://example.org/untitled\nText: \n\n"
        "Title: No URL\nText: dropped\n\n"
        "Title: Deno 2\nURL: https://deno.com/blog/v2\nPublished Date: 2026-11-29T18:00:00Z\nText: Deno 2 notes."
    )
    exa.enqueue(mcp_reply(1, mcp_result(listing)))
    response = await search(keyless, clock)
    assert response.sources == (
        SearchSource(
            title="Bun 1.3",
            url="https://bun.com/blog/bun-v1.3",
            snippet="Bun 1.3 is out.\nIt adds a dev server.\n\nURL: not a field inside Text",
            published_date="2026-11-27T00:00:00.000Z",
            age_seconds=302400,
            author="Jarred Sumner",
        ),
        SearchSource(title="https://example.org/untitled", url="https://example.org/untitled"),
        SearchSource(
            title="Deno 2",
            url="https://deno.com/blog/v2",
            snippet="Deno 2 notes.",
            published_date="2026-11-29T18:00:00Z",
            age_seconds=64800,
        ),
    )
    assert response.answer is None and response.request_id is None


async def test_mcp_notifications_before_the_answer_are_passed_over(
    exa: FakeExa, keyless: dict[str, str], clock: FakeClock
) -> None:
    # MCP lets a server notify (a log line, progress) before it answers; the first event was
    # taken for the answer, and the search failed on its shape.
    listing = "Title: Bun 1.3\nURL: https://bun.com/blog/bun-v1.3\nText: Bun 1.3 is out."
    answer = mcp_reply(1, mcp_result(listing))
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "searching"}}
    assert isinstance(answer.body, str)
    exa.enqueue(dataclasses.replace(answer, body=f"event: message\ndata: {json.dumps(note)}\n\n" + answer.body))
    response = await search(keyless, clock)
    assert response.error is None and [s.url for s in response.sources] == ["https://bun.com/blog/bun-v1.3"]


async def test_mcp_json_shape_is_parsed_like_the_api(env: dict[str, str], clock: FakeClock) -> None:
    with FakeExa(mcp_shape="json") as fake:
        response = await search({**env, **fake.env}, clock, limit=2)
    assert [s.url for s in response.sources] == [
        "https://www.example1.com/articles/rust-async-1",
        "https://www.example2.com/articles/rust-async-2",
    ]
    assert response.sources[0].snippet == "rust async — part 1. Full page text with details, examples and caveats."
    assert response.request_id == exa_search_body("rust async", 2)["requestId"]


@pytest.mark.parametrize("where", ["structuredContent", "text"])
async def test_mcp_json_answer_from_summaries(
    exa: FakeExa, keyless: dict[str, str], clock: FakeClock, where: str
) -> None:
    body = exa_search_body("q", 4)
    result = (
        {"structuredContent": body, **mcp_result("see structured")} if where != "text" else mcp_result(json.dumps(body))
    )
    exa.enqueue(mcp_reply(1, result, sse=False))
    response = await search(keyless, clock)
    assert response.answer == "\n\n".join(
        [
            "**Q: part 1**: Part 1 explains how q works and when to use it.",
            "**Q: part 2**: Part 2 explains how q works and when to use it.",
            "**Q: part 3**: Part 3 explains how q works and when to use it.",
        ]
    )
    assert len(response.sources) == 4


async def test_mcp_empty_results_are_the_chains_204(exa: FakeExa, keyless: dict[str, str], clock: FakeClock) -> None:
    exa.enqueue(mcp_reply(1, mcp_result(json.dumps({"results": [], "searchTime": 12}))))
    response = await search(keyless, clock)
    assert response.error == "Exa returned no renderable search content."
    assert response.attempts[0].status == 204


@pytest.mark.parametrize(
    ("reply", "status", "kind", "error"),
    [
        (
            mcp_reply(1, error={"code": -32602, "message": "Invalid arguments for tool web_search_exa"}),
            None,
            "rejected",
            "Exa MCP error: Invalid arguments for tool web_search_exa",
        ),
        (
            mcp_reply(1, mcp_result("You've hit Exa's free MCP rate limit.\nCreate an API key.", is_error=True)),
            None,
            "unavailable",  # the tool failed; its words are not a code, so not a rate limit
            "Exa MCP tool error: You've hit Exa's free MCP rate limit. Create an API key.",
        ),
        (
            mcp_reply(1, mcp_result("No search results found. Please try a different query.")),
            None,
            "invalid_response",
            f"{UNEXPECTED_SHAPE} No search results found. Please try a different query.",
        ),
        (mcp_reply(1, {"unexpected": True}), None, "invalid_response", UNEXPECTED_SHAPE),
        (
            Reply(200, "<html>captive portal</html>", content_type="text/html"),
            200,
            "invalid_response",
            "Exa MCP returned a body that is neither JSON nor SSE",
        ),
        (
            Reply(429, "Too Many Requests", headers={"Retry-After": "5"}),
            429,
            "rate_limited",
            "Exa MCP error (429): Too Many Requests; retry after 5 s",
        ),
        (
            Reply(406, {"jsonrpc": "2.0", "error": {"code": -32000, "message": "Not Acceptable"}, "id": None}),
            406,
            "rejected",
            "Exa MCP error (406): Not Acceptable (-32000)",
        ),
        (Reply(503, b""), 503, "unavailable", "Exa MCP error (503): Service Unavailable"),
        (Reply(401, "Unauthorized"), 401, "auth", AUTH_FAILED.format(401)),
    ],
)
async def test_mcp_errors(
    exa: FakeExa, keyless: dict[str, str], clock: FakeClock, reply: Reply, status: int | None, kind: str, error: str
) -> None:
    exa.enqueue(reply)
    response = await search(keyless, clock)
    assert response.error == error
    (attempt,) = response.attempts
    assert (attempt.provider, attempt.status, attempt.error, attempt.error_kind) == ("exa", status, error, kind)


def test_mcp_sse_takes_the_first_data_line_with_json(config_dir: Path) -> None:
    listing = mcp_listing(exa_search_body("q", 2, text=True)["results"])
    message = {"jsonrpc": "2.0", "id": 3, "result": mcp_result(listing)}
    sse = f"event: ping\ndata: \ndata: {{}}\ndata: not json\nevent: message\ndata: {json.dumps(message)}\n\n"
    response = parse(HttpResponse(200, {}, sse.encode()), config_dir, keyed=False)
    assert [s.title for s in response.sources] == ["Q: part 1", "Q: part 2"]
    assert response.sources[0].snippet == "q — part 1. Full page text with details, examples and caveats."


# -- pacing (the engine's: exa.searchDelayMs is Exa's rate) -----------------------------------


async def test_exa_is_not_paced_unless_its_delay_is_set(exa: FakeExa, keyed: dict[str, str], clock: FakeClock) -> None:
    # A default of one request a second (the upstream tool's, not a limit Exa documents for a
    # plan) held `websearch serve`'s first minute behind it: p99 3-4 s.
    async with paced(keyed, clock) as ws:
        for _ in range(3):
            assert (await ws.asearch("q", provider="exa", cache="off")).ok
    assert clock.sleeps == []
    assert len(exa.requests) == 3


async def test_consecutive_requests_are_spaced_by_the_delay_set(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    settings(config_dir, "[exa]\nsearchDelayMs = 1000\n")
    async with paced(keyed, clock) as ws:
        for _ in range(3):
            assert (await ws.asearch("q", provider="exa", cache="off")).ok
    assert clock.sleeps == [1.0, 1.0]
    assert len(exa.requests) == 3


async def test_pacing_covers_mcp_and_rest_alike(
    exa: FakeExa, keyless: dict[str, str], keyed: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    settings(config_dir, "[exa]\nsearchDelayMs = 1000\n")
    store = MemoryStore(clock)
    for env in (keyless, keyed):
        async with make_client(env=env, clock=clock, engine=True, store=store) as ws:
            await ws.asearch("rust async", provider="exa", cache="off")
    assert [r.path for r in exa.requests] == ["/mcp", "/search"]
    assert clock.sleeps == [1.0]


async def test_delay_setting_and_elapsed_time(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    settings(config_dir, "[exa]\nsearchDelayMs = 250\n")
    async with paced(keyed, clock) as ws:
        await ws.asearch("q", provider="exa", cache="off")
        await ws.asearch("q", provider="exa", cache="off")
        await clock.sleep(0.1)  # time passes between searches: only the rest is waited
        await ws.asearch("q", provider="exa", cache="off")
        await clock.sleep(5)
        await ws.asearch("q", provider="exa", cache="off")
    assert clock.sleeps == [0.25, 0.1, pytest.approx(0.15), 5]


@pytest.mark.parametrize("value", [0, 0.0])
async def test_zero_delay_disables_pacing(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock, config_dir: Path, value: int
) -> None:
    settings(config_dir, f"[exa]\nsearchDelayMs = {value}\n")
    async with paced(keyed, clock) as ws:
        for _ in range(3):
            await ws.asearch("q", provider="exa", cache="off")
    assert clock.sleeps == []
    assert len(exa.requests) == 3


async def test_concurrent_requests_wait_for_the_next_slot_but_never_queue(
    exa: FakeExa, keyed: dict[str, str], config_dir: Path
) -> None:
    settings(config_dir, "[exa]\nsearchDelayMs = 1000\n")
    clock = StillClock()
    async with paced(keyed, clock) as ws:
        responses = await asyncio.gather(*(ws.asearch(f"q{i}", provider="exa") for i in range(3)))
    assert [r.ok for r in responses] == [True, True, False]
    assert clock.sleeps == [1.0]  # the second waits for the next slot; the third would wait 2 s in line
    assert (responses[2].attempts[0].provider, responses[2].attempts[0].skipped) == ("exa", "paced")
    assert len(exa.requests) == 2


async def test_without_the_engine_exa_is_not_paced(exa: FakeExa, keyed: dict[str, str], clock: FakeClock) -> None:
    async with client(keyed, clock) as ws:
        for _ in range(2):
            await ws.asearch("q", provider="exa")
    assert clock.sleeps == []


class BlockingClock(FakeClock):
    """A clock whose sleep never returns while `block` is set (a long real wait)."""

    def __init__(self) -> None:
        super().__init__()
        self.block = True
        self.waiting = asyncio.Event()

    async def sleep(self, seconds: float) -> None:
        if self.block:
            self.sleeps.append(seconds)
            self.waiting.set()
            await asyncio.Event().wait()
        await super().sleep(seconds)


async def test_the_wait_is_cancellable_and_gives_its_slot_back(
    exa: FakeExa, keyed: dict[str, str], config_dir: Path
) -> None:
    settings(config_dir, "[exa]\nsearchDelayMs = 1000\n")
    clock = BlockingClock()
    async with paced(keyed, clock) as ws:
        await ws.asearch("q", provider="exa", cache="off")
        task = asyncio.create_task(ws.asearch("q", provider="exa", cache="off"))
        await clock.waiting.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert len(exa.requests) == 1  # the cancelled search never reached Exa
        clock.block = False
        await ws.asearch("q", provider="exa", cache="off")
    assert clock.sleeps == [1.0, 1.0]  # the slot went back: the next search waits 1 s, not 2
    assert len(exa.requests) == 2


async def test_bad_delay_setting_is_reported(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    for bad in ('"fast"', "-5", "1e12"):
        settings(config_dir, f"[exa]\nsearchDelayMs = {bad}\n")
        with pytest.raises(ConfigError, match=r"setting exa\.searchDelayMs must be a number of milliseconds from 0"):
            await search(keyed, clock)  # reported when the settings are read, before any search
    assert exa.requests == []
