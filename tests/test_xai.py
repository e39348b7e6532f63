"""xAI against a loopback fake of api.x.ai's Responses endpoint: request, annotation parsing, caps, errors."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock, eventually, make_client, messages, run_cli, search_once
from websearch import SearchCitation, SearchParams, SearchResponse, SearchSource, SearchUsage
from websearch._core._credentials import CredentialStore
from websearch._core._settings import Settings
from websearch._providers._prompts import SYSTEM_PROMPT
from websearch._providers.xai import PROVIDER
from websearch.errors import InvalidResponse, MissingCredentialError, RateLimited
from websearch.providers import HttpResponse, ProviderContext, ProviderResult
from websearch.testing import Reply
from websearch.testing.xai import RESPONSES_PATH, FakeXAI, bad_key_reply, xai_body, xai_error

KEY = "xai-Zk3f9QwErTy7uIoP1aSdF2gH"
NOT_SENT = "applied as a local cap on sources and citations: xAI has no result-count parameter"


@pytest.fixture
def xai() -> Iterator[FakeXAI]:
    with FakeXAI(keys={KEY}) as fake:
        yield fake


@pytest.fixture
def xenv(env: dict[str, str], xai: FakeXAI) -> dict[str, str]:
    return {**env, **xai.env, "XAI_API_KEY": KEY}


async def search(env: dict[str, str], clock: FakeClock, query: str = "rust async", **kwargs: Any) -> SearchResponse:
    return await search_once("xai", env, query, clock, **kwargs)


def expected_body(query: str = "rust async", **extra: Any) -> dict[str, Any]:
    return {
        "model": "grok-4.3",
        "input": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": query}],
        "tools": [{"type": "web_search"}],
        **extra,
    }


def context() -> ProviderContext:
    return ProviderContext(
        {"XAI_API_KEY": KEY}, Settings(), CredentialStore(Path("/nonexistent/agent.db")), None, FakeClock()
    )


def parse(body: Any, params: SearchParams | None = None, status: int = 200) -> ProviderResult:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return PROVIDER.parse(HttpResponse(status, {}, raw), PROVIDER.plan(params or SearchParams("q"), context()))


def assert_no_secret(response: SearchResponse) -> None:
    assert KEY not in (response.error or "")
    assert KEY not in repr(response.attempts)
    assert KEY not in repr(response)


# -- the request ------------------------------------------------------------------------------


async def test_default_request(xai: FakeXAI, xenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(xenv, clock)
    assert response.ok and messages(response) == ()
    req = xai.last
    assert (req.method, req.path, req.query) == ("POST", RESPONSES_PATH, ())
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.headers["content-type"] == "application/json"
    assert req.json() == expected_body()
    assert sorted(req.json()) == ["input", "model", "tools"]


@pytest.mark.parametrize(
    ("kwargs", "cap", "notices"),
    [
        ({"limit": 3}, 3, (f"limit=3 {NOT_SENT}",)),
        ({"num_search_results": 4}, 4, (f"num_search_results=4 {NOT_SENT}",)),
        (
            {"limit": 2, "num_search_results": 5},
            5,
            (
                f"num_search_results=5 {NOT_SENT}",
                "limit=2 not applied: num_search_results=5 takes precedence",
            ),
        ),
        (
            {"limit": 50},
            30,
            (f"limit=50 {NOT_SENT}", "limit=50 clamped to 30: xAI returns at most 30 results"),
        ),
        ({}, 10, ()),
    ],
)
async def test_counts_are_a_local_cap_only(
    xai: FakeXAI, xenv: dict[str, str], clock: FakeClock, kwargs: dict[str, int], cap: int, notices: tuple[str, ...]
) -> None:
    xai.cited, xai.extra_urls = 25, 15
    response = await search(xenv, clock, **kwargs)
    assert xai.last.json() == expected_body()  # never search_parameters
    assert len(response.sources) == len(response.citations) == cap
    assert response.sources[0].url == "https://news.example1.com/1"
    assert messages(response) == notices


@pytest.mark.parametrize("recency", ["day", "week", "month", "year"])
async def test_recency_is_not_sent(xai: FakeXAI, xenv: dict[str, str], clock: FakeClock, recency: str) -> None:
    response = await search(xenv, clock, recency=recency, limit=2)
    assert xai.last.json() == expected_body()
    assert messages(response) == (f"limit=2 {NOT_SENT}", f'recency="{recency}" not applied: xAI does not support it')


async def test_max_tokens_and_temperature_pass_through(xai: FakeXAI, xenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(xenv, clock, max_tokens=800, temperature=0.4)
    assert xai.last.json() == expected_body(max_output_tokens=800, temperature=0.4)
    assert messages(response) == ()


# -- the parse --------------------------------------------------------------------------------


async def test_parsed_response(xai: FakeXAI, xenv: dict[str, str], clock: FakeClock) -> None:
    xai.cited, xai.extra_urls = 2, 1
    response = await search(xenv, clock, "quic")
    assert response.answer == "Grok's answer about quic, citing 2 sources."
    assert response.sources == (
        SearchSource("Report 1 on quic", "https://news.example1.com/1", "Quoted passage 1."),
        SearchSource("Report 2 on quic", "https://news.example2.com/2", "Quoted passage 2."),
        SearchSource("https://more.example.org/page-1", "https://more.example.org/page-1"),
    )
    assert response.citations == (
        SearchCitation("https://news.example1.com/1", "Report 1 on quic", "Quoted passage 1."),
        SearchCitation("https://news.example2.com/2", "Report 2 on quic", "Quoted passage 2."),
        SearchCitation("https://more.example.org/page-1", "https://more.example.org/page-1"),
    )
    assert response.usage == SearchUsage(input_tokens=2104, output_tokens=388, total_tokens=2492)
    assert (response.model, response.request_id, response.auth_mode) == (
        "grok-4.3",
        "resp_0d8c1f6e-3b2a-4c5d-9e8f-7a6b5c4d3e2f",
        "api_key",
    )


def test_annotation_order_and_dedupe() -> None:
    body = {
        "id": "resp_xai_123",
        "model": "grok-4.3",
        "output_text": "  Top-level answer  ",
        "annotations": [{"type": "url_citation", "url": " https://a.example ", "title": " A ", "text": " quoted "}],
        "output": [
            {
                "type": "message",
                "annotations": [
                    {"type": "url_citation", "url": "https://d.example", "title": ""},
                    {"type": "file_citation", "url": "https://ignored.example"},
                ],
                "content": [
                    {
                        "type": "output_text",
                        "text": "part",
                        "annotations": [
                            {
                                "type": "url_citation",
                                "url": "https://b.example",
                                "title": "B",
                                "cited_text": "cited",
                                "text": "not this",
                            },
                            {"type": "url_citation", "url": "https://a.example", "title": "A again"},
                        ],
                    }
                ],
            }
        ],
        "citations": ["https://c.example", "https://b.example", 7],
        "usage": {"inputTokens": 12, "outputTokens": 8, "totalTokens": 20},
    }
    response = parse(body)
    assert response.answer == "Top-level answer"
    assert [(s.url, s.title, s.snippet) for s in response.sources] == [
        ("https://a.example", "A", "quoted"),
        ("https://d.example", "https://d.example", None),
        ("https://b.example", "B", "cited"),
        ("https://c.example", "https://c.example", None),
    ]
    assert [c.cited_text for c in response.citations] == ["quoted", None, "cited", None]
    assert response.usage == SearchUsage(12, 8, 20)
    assert (response.request_id, response.auth_mode) == ("resp_xai_123", "api_key")


def test_answer_falls_back_to_content_parts() -> None:
    body = xai_body("ignored", top_level_text=False)
    body["output"][1]["content"] = [
        {"type": "output_text", "text": "First."},
        {"type": "refusal", "text": "no"},
        {"type": "text", "output_text": "Second.", "text": "not this"},
    ]
    assert parse(body).answer == "First.\nSecond."
    assert parse({**body, "output_text": "   "}).answer == "First.\nSecond."


async def test_empty_result_is_the_chains_204(xai: FakeXAI, xenv: dict[str, str], clock: FakeClock) -> None:
    xai.enqueue(Reply(200, {"id": "resp_empty", "model": "grok-4.3", "output": [], "citations": [], "usage": {}}))
    response = await search(xenv, clock)
    assert response.error == "xAI returned no renderable search content."
    assert response.attempts[0].status == 204


# -- errors -----------------------------------------------------------------------------------


BAD_KEY = (
    "xAI authorization failed (400 invalid_api_key). Check API key or base URL. xAI said: Incorrect API key "
    "provided: xai-***gH. You can obtain an API key from https://console.x.ai."
)


@pytest.mark.parametrize(
    ("reply", "status", "kind", "error"),
    [
        (bad_key_reply(KEY), 400, "auth", BAD_KEY),
        (
            xai_error(401, "Unauthenticated: no valid API key", code="Unauthenticated"),
            401,
            "auth",
            "xAI authorization failed (401). Check API key or base URL. xAI said: Unauthenticated: no valid API key",
        ),
        (xai_error(402, "Payment required"), 402, "quota", "xai: 402 credits exhausted: Payment required"),
        (
            xai_error(
                403,
                "Your newly created team doesn't have any credits or licenses yet.",
                code="The caller does not have permission",
            ),
            403,
            "auth",
            "xAI authorization failed (403). Check API key or base URL. xAI said: Your newly created team doesn't "
            "have any credits or licenses yet.",
        ),
        (
            xai_error(
                429,
                "Rate limit reached for requests per minute.",
                code="Too many requests",
                headers={"Retry-After": "7"},
            ),
            429,
            "rate_limited",
            "xAI Responses API error (429): Rate limit reached for requests per minute.; retry after 7 s",
        ),
        (
            Reply(
                429,
                {"error": {"message": "You have exceeded your monthly spending limit.", "type": "insufficient_quota"}},
            ),
            429,
            "quota",
            "xai: credits exhausted (insufficient_quota): You have exceeded your monthly spending limit.",
        ),
        # only a code says quota: a 429 that merely mentions a quota is a rate limit
        (
            xai_error(429, "Your team has exceeded its quota of requests per second.", code="Too many requests"),
            429,
            "rate_limited",
            "xAI Responses API error (429): Your team has exceeded its quota of requests per second.",
        ),
        # a 400 that is not about the key stays a rejected request
        (
            xai_error(400, "Argument not supported: search_parameters"),
            400,
            "rejected",
            "xAI Responses API error (400): Argument not supported: search_parameters",
        ),
        (
            xai_error(
                410, "The Live Search API has been deprecated. Please use the Agent Tools API instead.", code="Gone"
            ),
            410,
            "rejected",
            "xAI Responses API error (410): The Live Search API has been deprecated. Please use the Agent Tools API instead.",
        ),
        (
            Reply(503, "upstream connect error or disconnect/reset before headers", content_type="text/plain"),
            503,
            "unavailable",
            "xAI Responses API error (503): upstream connect error or disconnect/reset before headers",
        ),
        (Reply(500, b""), 500, "unavailable", "xAI Responses API error (500): Internal Server Error"),
    ],
)
async def test_http_errors_are_not_retried(
    xai: FakeXAI, xenv: dict[str, str], clock: FakeClock, reply: Reply, status: int, kind: str, error: str
) -> None:
    xai.enqueue(reply)
    response = await search(xenv, clock)
    assert response.error == error
    (attempt,) = response.attempts
    assert (attempt.status, attempt.error, attempt.error_kind) == (status, error, kind)
    assert len(xai.requests) == 1
    assert_no_secret(response)


def test_retry_after_is_kept() -> None:
    plan = PROVIDER.plan(SearchParams("q"), context())
    response = HttpResponse(429, {"retry-after": "7"}, b'{"code":"Too many requests","error":"slow down"}')
    error = PROVIDER.error(response, plan)
    assert (type(error), error.status, error.retry_after) == (RateLimited, 429, 7)
    date = HttpResponse(429, {"retry-after": "Mon, 30 Nov 2026 12:00:45 GMT"}, b"{}")
    assert PROVIDER.error(date, plan).retry_after == 45.0  # against the injected clock


async def test_non_json_200_body(xai: FakeXAI, xenv: dict[str, str], clock: FakeClock) -> None:
    xai.enqueue(Reply(200, "<html>maintenance</html>", content_type="text/html"))
    response = await search(xenv, clock)
    assert response.error == "xAI returned a body that is not JSON"
    with pytest.raises(InvalidResponse, match="not an object"):
        parse([1, 2])


async def test_error_echoing_the_full_key_is_redacted(xai: FakeXAI, xenv: dict[str, str], clock: FakeClock) -> None:
    xai.enqueue(xai_error(400, f"Incorrect API key provided: {KEY}."))
    response = await search(xenv, clock)
    assert response.error == (
        "xAI authorization failed (400 invalid_api_key). Check API key or base URL. "
        "xAI said: Incorrect API key provided: [redacted]."
    )
    assert_no_secret(response)
    xai.enqueue(Reply(500, f"internal error for key {KEY}", content_type="text/plain"))
    response = await search(xenv, clock)
    assert response.error == "xAI Responses API error (500): internal error for key [redacted]"
    assert_no_secret(response)


async def test_truncated_body_is_a_connection_error(xai: FakeXAI, xenv: dict[str, str], clock: FakeClock) -> None:
    xai.enqueue(Reply(200, xai_body("answer", [("https://a.example", "A", "q")]), truncate=True))
    response = await search(xenv, clock)
    assert response.answer is None
    assert response.error is not None and response.error.startswith("xAI request failed:")
    assert_no_secret(response)


async def test_cancelling_a_pending_request_closes_it(xai: FakeXAI, xenv: dict[str, str], clock: FakeClock) -> None:
    xai.enqueue(Reply(hang=True))
    async with make_client(env=xenv, clock=clock) as ws:
        task = asyncio.create_task(ws.asearch("q", provider="xai"))
        await eventually(lambda: xai.requests)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 1)
    await eventually(lambda: xai.disconnects)
    assert xai.disconnects == 1
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


# -- credentials ------------------------------------------------------------------------------


async def test_missing_key_message(env: dict[str, str], xai: FakeXAI, config_dir: Path) -> None:
    ctx = ProviderContext(env, Settings(), CredentialStore(config_dir / "agent.db"), None, FakeClock())
    with pytest.raises(
        MissingCredentialError, match=r"^xAI needs an API key: set XAI_API_KEY or run `websearch auth set xai`$"
    ):
        PROVIDER.plan(SearchParams("q"), ctx)
    async with make_client(env={**env, **xai.env}) as ws:
        assert not {s.id: s.available for s in ws.provider_status()}["xai"]
        response = await ws.asearch("q", provider="xai")
    assert response.provider == "duckduckgo" and xai.requests == []


async def test_stored_credential_and_explicit_key(
    env: dict[str, str], xai: FakeXAI, config_dir: Path, clock: FakeClock
) -> None:
    CredentialStore(config_dir / "agent.db").set("xai", "api_key", {"api_key": KEY})
    async with make_client(env={**env, **xai.env}, clock=clock) as ws:
        assert {s.id: s.available for s in ws.provider_status()}["xai"]
        response = await ws.asearch("q", provider="xai")
    assert response.ok and xai.last.headers["authorization"] == f"Bearer {KEY}"
    async with make_client(env={**env, **xai.env, "XAI_API_KEY": "xai-wrong-env-key"}, api_keys={"xai": KEY}) as ws:
        assert (await ws.asearch("q", provider="xai")).ok


async def test_env_key_wins_over_the_stored_one(
    env: dict[str, str], xai: FakeXAI, config_dir: Path, clock: FakeClock
) -> None:
    CredentialStore(config_dir / "agent.db").set("xai", "api_key", {"api_key": "xai-stored-key-0000"})
    async with make_client(env={**env, **xai.env, "XAI_API_KEY": KEY}, clock=clock) as ws:
        status = {s.id: s for s in ws.provider_status()}["xai"]
        response = await ws.asearch("q", provider="xai")
    assert status.available and status.reason == "set XAI_API_KEY or run `websearch auth set xai`"
    assert response.ok and xai.last.headers["authorization"] == f"Bearer {KEY}"


def test_cli_summary(env: dict[str, str], xai: FakeXAI) -> None:
    xai.cited, xai.extra_urls = 1, 0
    proc = run_cli(["search", "quic", "--provider", "xai", "--recency", "week"], {**env, **xai.env, "XAI_API_KEY": KEY})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(
        "Grok's answer about quic, citing 1 sources.\n\n## Sources\n1 source\n[1] Report 1 on quic\n"
        "    https://news.example1.com/1\n    Quoted passage 1.\n\n## Citations\n1 citation\n"
    )
    assert KEY not in proc.stdout + proc.stderr


# -- the richer parameters --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "tool", "notices"),
    [
        (
            {"include_domains": ["x.ai"], "exclude_domains": ["reddit.com"]},
            {"type": "web_search", "allowed_domains": ["x.ai"]},
            (),
        ),
        ({"exclude_domains": ["reddit.com"]}, {"type": "web_search", "excluded_domains": ["reddit.com"]}, ()),
        (
            {"include_domains": [f"d{i}.com" for i in range(7)]},
            {"type": "web_search", "allowed_domains": [f"d{i}.com" for i in range(5)]},
            (
                'include_domains=["d0.com", "d1.com", "d2.com", "d3.com", "d4.com", "d5.com", "d6.com"] dropped: '
                "xAI's web_search takes at most 5 domains, so d5.com, d6.com were left out",
            ),
        ),
        (
            {"include_domains": ["x.ai"], "exclude_domains": ["docs.x.ai"], "recency_days": 2},
            {"type": "web_search", "allowed_domains": ["x.ai"]},
            (
                'exclude_domains=["docs.x.ai"] dropped: xAI\'s web_search takes allowed_domains or excluded_domains, '
                "not both, and the allowed domains include docs.x.ai",
                "recency_days=2 not applied: xAI does not support it",
            ),
        ),
    ],
)
async def test_richer_domains_are_the_tools_domain_lists(
    xai: FakeXAI,
    xenv: dict[str, str],
    clock: FakeClock,
    params: dict[str, Any],
    tool: dict[str, Any],
    notices: tuple[str, ...],
) -> None:
    response = await search(xenv, clock, **params)
    assert xai.last.json() == {**expected_body(), "tools": [tool]}
    assert response.ok and messages(response) == notices
