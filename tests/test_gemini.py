"""Gemini against a loopback fake of Google's hosts: Developer API and Cloud Code streams, retries on the
injected clock, OAuth refresh, project discovery, credential import, errors and cancellation."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import NOW, FakeClock, eventually, make_client, messages, provider_context, run_cli
from websearch import SearchCitation, SearchParams, SearchResponse, SearchSource, SearchUsage, WebSearch
from websearch._core._credentials import CredentialStore
from websearch._http._sse import SseEvent, iter_sse
from websearch._providers._prompts import SYSTEM_PROMPT
from websearch._providers.gemini import (
    ANTIGRAVITY_CLIENT,
    ANTIGRAVITY_ENDPOINTS,
    ANTIGRAVITY_SYSTEM,
    ANTIGRAVITY_USER_AGENT,
    CLIENT_METADATA,
    GEMINI_CLI_CLIENT,
    GEMINI_CLI_USER_AGENT,
    NO_CREDENTIALS,
    PROVIDER,
    GeminiAuth,
    Route,
    import_credentials,
    retry_hint,
)
from websearch.errors import (
    ConfigError,
    InvalidResponse,
    MissingCredentialError,
    QuotaExhausted,
    RateLimited,
    RequestRejected,
)
from websearch.providers import HttpResponse, ProviderContext, ProviderResult
from websearch.testing import Reply, running_providers
from websearch.testing.gemini import (
    RESPONSE_ID,
    FakeGemini,
    api_key_invalid,
    google_error,
    grounded_chunks,
    grounding_uri,
    quota_exhausted,
    sse_body,
    stream_reply,
)

KEY = "AIzaSyD-gemini-secret-7f3e9a1c"
ACCESS = "ya29.a0AfB-access-secret-0123"
REFRESH = "1//0gRefresh-secret-4567"
PROJECT = "fluent-cosmos-4kq2p"
DEV_PATH = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
CC_PATH = "/v1internal:streamGenerateContent"
Q = "euro 2024 winner"
OVERLOADED = google_error(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
SECRETS = (KEY, ACCESS, REFRESH)


@pytest.fixture
def gemini() -> Iterator[FakeGemini]:
    with FakeGemini(api_keys={KEY}, access_tokens={ACCESS}, refresh_tokens={REFRESH}, project=PROJECT) as fake:
        yield fake


@pytest.fixture
def genv(env: dict[str, str], gemini: FakeGemini) -> dict[str, str]:
    return {**env, **gemini.env, "GEMINI_API_KEY": KEY}


@pytest.fixture
def oenv(env: dict[str, str], gemini: FakeGemini) -> dict[str, str]:
    """No API key: only a stored login makes Gemini available."""
    return {**env, **gemini.env}


async def search(env: dict[str, str], clock: FakeClock, query: str = Q, **kwargs: Any) -> SearchResponse:
    """An explicit Gemini search (Gemini is in the client even when its fake is not running)."""
    providers = list(dict.fromkeys(["gemini", *running_providers()]))
    async with make_client(env=env, clock=clock, timeout=kwargs.pop("timeout", None), providers=providers) as ws:
        return await ws.asearch(query, provider="gemini", **kwargs)


def store_login(config_dir: Path, cred_id: str = "gemini", **fields: Any) -> CredentialStore:
    store = CredentialStore(config_dir / "agent.db")
    data = {
        "access_token": ACCESS,
        "refresh_token": REFRESH,
        "expires_at": NOW.timestamp() + 3600,
        "project_id": PROJECT,
        **fields,
    }
    store.set(cred_id, "oauth", {k: v for k, v in data.items() if v is not None})
    return store


def context(env: dict[str, str], config_dir: Path, clock: FakeClock) -> ProviderContext:
    return provider_context(config_dir, env, clock=clock)


def parse_events(
    events: list[SseEvent], params: SearchParams, config_dir: Path, model: str = "gemini-2.5-flash"
) -> ProviderResult:
    """A whole Developer API stream through `PROVIDER.parse`, planned with a key and `model`."""
    ctx = context({"GEMINI_API_KEY": KEY, "GEMINI_SEARCH_MODEL": model}, config_dir, FakeClock())
    return PROVIDER.parse(events, PROVIDER.plan(params, ctx))


def inner_body(query: str = Q, **extra: Any) -> dict[str, Any]:
    return {
        "contents": [{"role": "user", "parts": [{"text": query}]}],
        "tools": [{"googleSearch": {}}],
        "systemInstruction": {"parts": [{"text": SYSTEM_PROMPT}]},
        **extra,
    }


def assert_no_secret(response: SearchResponse) -> None:
    for secret in SECRETS:
        assert secret not in (response.error or "")
        assert secret not in repr(response.attempts)
        assert secret not in repr(response)


# -- the Developer API request ---------------------------------------------------------------


async def test_default_request(gemini: FakeGemini, genv: dict[str, str], clock: FakeClock) -> None:
    response = await search(genv, clock)
    assert response.ok and messages(response) == ()
    req = gemini.last
    assert (req.method, req.path, req.query) == ("POST", DEV_PATH, (("alt", "sse"),))
    assert req.headers["x-goog-api-key"] == KEY
    assert (req.headers["content-type"], req.headers["accept"]) == ("application/json", "text/event-stream")
    assert "authorization" not in req.headers
    assert req.json() == inner_body()
    assert len(gemini.requests) == 1 and clock.sleeps == []


@pytest.mark.parametrize(
    ("kwargs", "n_sources", "notices"),
    [
        ({"limit": 2}, 2, ()),
        ({"num_search_results": 3}, 3, ()),
        (
            {"limit": 2, "num_search_results": 3},
            3,
            ("limit=2 not applied: num_search_results=3 takes precedence",),
        ),
        ({"limit": 3, "num_search_results": 3}, 3, ()),
        ({"limit": 50}, 4, ()),
    ],
)
async def test_counts_cut_sources_locally_and_are_not_sent(
    gemini: FakeGemini,
    genv: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, int],
    n_sources: int,
    notices: tuple[str, ...],
) -> None:
    response = await search(genv, clock, **kwargs)
    assert gemini.last.json() == inner_body()
    assert gemini.last.query == (("alt", "sse"),)
    assert len(response.sources) == n_sources
    assert len(response.citations) == 4  # citations are not cut
    assert messages(response) == notices


@pytest.mark.parametrize("recency", ["day", "week", "month", "year"])
async def test_recency_is_not_sent_and_says_so(
    gemini: FakeGemini, genv: dict[str, str], clock: FakeClock, recency: str
) -> None:
    response = await search(genv, clock, recency=recency)
    assert gemini.last.json() == inner_body()
    assert messages(response) == (f'recency="{recency}" not applied: Gemini does not support it',)
    assert len(response.sources) == 4


@pytest.mark.parametrize(
    ("kwargs", "config"),
    [
        ({"max_tokens": 512}, {"maxOutputTokens": 512}),
        ({"temperature": 0.2}, {"temperature": 0.2}),
        ({"max_tokens": 64, "temperature": 0}, {"maxOutputTokens": 64, "temperature": 0}),
    ],
)
async def test_generation_config_only_when_asked(
    gemini: FakeGemini, genv: dict[str, str], clock: FakeClock, kwargs: dict[str, Any], config: dict[str, Any]
) -> None:
    response = await search(genv, clock, **kwargs)
    assert gemini.last.json() == inner_body(generationConfig=config)
    assert messages(response) == ()


async def test_model_from_env_then_settings(
    gemini: FakeGemini, genv: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    (config_dir / "settings.toml").write_text('[providers]\nwebSearchGeminiModel = "gemini-2.5-pro"\n')
    response = await search(genv, clock)
    assert gemini.last.path == "/v1beta/models/gemini-2.5-pro:streamGenerateContent"
    assert response.model == "gemini-2.5-pro"
    response = await search({**genv, "GEMINI_SEARCH_MODEL": " gemini-flash-latest "}, clock)
    assert gemini.last.path == "/v1beta/models/gemini-flash-latest:streamGenerateContent"
    assert response.model == "gemini-flash-latest"


# -- parsing ---------------------------------------------------------------------------------


async def test_parses_the_grounded_stream(gemini: FakeGemini, genv: dict[str, str], clock: FakeClock) -> None:
    response = await search(genv, clock)
    uri = [grounding_uri(Q, i) for i in range(4)]
    assert response.answer == (
        f"Here is what current sources say about {Q}: the official documentation covers it "
        "in depth. Independent coverage confirms the key points and adds recent figures."
    )
    assert response.sources == (
        SearchSource("uefa.com", uri[0]),
        SearchSource("aljazeera.com", uri[1]),
        SearchSource("en.wikipedia.org", uri[2]),
        SearchSource("bbc.com", uri[3]),
    )
    cited_1 = "the official documentation covers it in depth."
    cited_2 = "Independent coverage confirms the key points and adds recent figures."
    assert response.citations == (
        SearchCitation(uri[0], "uefa.com", cited_1),
        SearchCitation(uri[1], "aljazeera.com", cited_1),
        SearchCitation(uri[2], "en.wikipedia.org", cited_2),
        SearchCitation(uri[0], "uefa.com", cited_2),
    )
    assert response.search_queries == (Q, f"{Q} latest")
    assert response.related_questions == ()
    assert response.usage == SearchUsage(input_tokens=412, output_tokens=57, total_tokens=689)
    assert (response.model, response.request_id, response.auth_mode) == ("gemini-2.5-flash", RESPONSE_ID, "api_key")
    assert all(s.published_date is None and s.age_seconds is None and s.author is None for s in response.sources)


def test_parse_events_edge_cases(config_dir: Path) -> None:
    chunks = [
        "not json at all",
        json.dumps([1, 2]),
        json.dumps(
            {
                "response": {
                    "candidates": [
                        {"content": {"parts": [{"text": "thinking…", "thought": True}, {"text": "Answer "}]}}
                    ]
                },
                "traceId": "trace-9",
            }
        ),
        json.dumps(
            {
                "candidates": [
                    {
                        "content": {"parts": [{"text": "done."}, {"inlineData": {}}]},
                        "finishReason": "MAX_TOKENS",
                        "groundingMetadata": {
                            "groundingChunks": [
                                {"web": {"uri": "https://a.example/x"}},
                                {"retrievedContext": {"uri": "gs://b"}},
                                {"web": {"title": "no uri"}},
                                {"web": {"uri": "https://c.example", "title": "C"}},
                            ],
                            "groundingSupports": [
                                {"segment": {"endIndex": 7, "text": "Answer"}, "groundingChunkIndices": [0, 1, 9, 3]},
                                {"groundingChunkIndices": [3]},
                            ],
                            "webSearchQueries": ["q1", "", "q1", "q2"],
                        },
                    }
                ],
                "usageMetadata": {"promptTokenCount": 5},
            }
        ),
    ]
    text = "".join(f"data: {c}\n\n" for c in chunks)
    response = parse_events(iter_sse(text), SearchParams("q", limit=1), config_dir, model="gemini-x")
    assert response.answer == "Answer done."
    assert response.sources == (SearchSource("https://a.example/x", "https://a.example/x"),)
    assert response.citations == (
        SearchCitation("https://a.example/x", "https://a.example/x", "Answer"),
        SearchCitation("https://c.example", "C", "Answer"),
        SearchCitation("https://c.example", "C", None),
    )
    assert response.search_queries == ("q1", "q2")
    assert response.usage == SearchUsage(5, 0, 0)
    assert (response.model, response.request_id, response.auth_mode) == ("gemini-x", "trace-9", "api_key")


def test_parse_events_needs_a_finish_reason_and_a_body(config_dir: Path) -> None:
    first = sse_body(grounded_chunks(Q)[:2])
    with pytest.raises(InvalidResponse, match=r"stream ended early \(no chunk with a finishReason\)") as err:
        parse_events(iter_sse(b"".join(first).decode()), SearchParams(Q), config_dir)
    assert err.value.status is None
    with pytest.raises(InvalidResponse, match="returned no response body") as err:
        parse_events([], SearchParams(Q), config_dir)
    assert err.value.status == 500
    with pytest.raises(InvalidResponse, match="returned a stream whose events are not JSON"):
        parse_events(iter_sse("data: <html>\n\n"), SearchParams(Q), config_dir)
    blocked = 'data: {"promptFeedback": {"blockReason": "SAFETY"}}\n\n'
    with pytest.raises(RequestRejected, match=r"blocked the query \(blockReason SAFETY\)") as err:
        parse_events(iter_sse(blocked), SearchParams(Q), config_dir)
    assert err.value.status == 400


async def test_empty_answer_is_the_chains_204(gemini: FakeGemini, genv: dict[str, str], clock: FakeClock) -> None:
    empty = {
        "candidates": [{"content": {"parts": [{"text": ""}], "role": "model"}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 3},
        "modelVersion": "gemini-2.5-flash",
    }
    gemini.enqueue(stream_reply([empty]))
    response = await search(genv, clock)
    assert response.error == "Gemini returned no renderable search content."
    assert response.attempts[0].status == 204


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(200, chunks=[], content_type="text/event-stream"), "Gemini Developer API returned no response body"),
        (
            Reply(200, "<html><body>captive portal</body></html>", content_type="text/html"),
            "Gemini Developer API returned no response body",
        ),
        (
            Reply(200, chunks=[b"data: {not json\n\n"]),
            "Gemini Developer API returned a stream whose events are not JSON",
        ),
    ],
)
async def test_200_without_a_usable_body(
    gemini: FakeGemini, genv: dict[str, str], clock: FakeClock, reply: Reply, message: str
) -> None:
    gemini.enqueue(reply)
    response = await search(genv, clock)
    assert (response.error, response.attempts[0].status, response.attempts[0].error_kind) == (
        message,
        500,
        "invalid_response",
    )


# -- errors and retries ----------------------------------------------------------------------


AUTH = "Gemini authorization failed ({}). Check API key or base URL. Gemini said: {}"


@pytest.mark.parametrize(
    ("reply", "status", "kind", "message"),
    [
        (
            api_key_invalid(),
            400,
            "auth",
            AUTH.format("400 API_KEY_INVALID", "API key not valid. Please pass a valid API key."),
        ),
        (
            Reply(401, google_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")),
            401,
            "auth",
            AUTH.format("401 UNAUTHENTICATED", "Request had invalid authentication credentials."),
        ),
        (
            Reply(402, {"error": {"code": 402, "message": "Payment required"}}),
            402,
            "quota",
            "gemini: 402 credits exhausted: Payment required",
        ),
        (
            Reply(
                403,
                google_error(
                    403,
                    "PERMISSION_DENIED",
                    "Generative Language API has not been used in project 1 before or it is disabled.",
                ),
            ),
            403,
            "auth",
            AUTH.format(
                "403 PERMISSION_DENIED",
                "Generative Language API has not been used in project 1 before or it is disabled.",
            ),
        ),
        (
            Reply(404, google_error(404, "NOT_FOUND", "models/gemini-9 is not found for API version v1beta.")),
            404,
            "rejected",
            "Gemini Developer API error (404): models/gemini-9 is not found for API version v1beta. (NOT_FOUND)",
        ),
        (
            Reply(400, "Bad Request", content_type="text/plain"),
            400,
            "rejected",
            "Gemini Developer API error (400): Bad Request",
        ),
        # a spent quota is told from a rate limit by its ErrorInfo reason, and is not retried
        (
            Reply(
                429,
                google_error(
                    429,
                    "RESOURCE_EXHAUSTED",
                    "You have exhausted your capacity on this model.",
                    {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "QUOTA_EXHAUSTED"},
                ),
            ),
            429,
            "quota",
            "gemini: credits exhausted (QUOTA_EXHAUSTED): You have exhausted your capacity on this model.",
        ),
    ],
)
async def test_errors_that_are_not_retried(
    gemini: FakeGemini, genv: dict[str, str], clock: FakeClock, reply: Reply, status: int, kind: str, message: str
) -> None:
    gemini.enqueue(reply)
    response = await search(genv, clock)
    (attempt,) = response.attempts
    assert (response.error, attempt.status, attempt.error_kind) == (message, status, kind)
    assert len(gemini.requests) == 1 and clock.sleeps == []
    assert response.answer is None and response.sources == ()


async def test_bad_key_is_the_400_envelope(gemini: FakeGemini, genv: dict[str, str], clock: FakeClock) -> None:
    response = await search({**genv, "GEMINI_API_KEY": "AIzaSy-wrong-key-000000"}, clock)
    assert response.error is not None and response.error.startswith("Gemini authorization failed (400 API_KEY_INVALID)")


async def test_quota_429_retries_on_the_retry_info_hint(
    gemini: FakeGemini, genv: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    (config_dir / "settings.toml").write_text("[timeout]\ngemini = 300\n")  # an attempt past the default 60 s
    gemini.enqueue(*[quota_exhausted("37s")] * 4)
    response = await search(genv, clock, deadline=600)  # room for three 37 s waits
    assert len(gemini.requests) == 4
    assert clock.sleeps == [37.2, 37.2, 37.2]  # the longest hint in the body: "Please retry in 37.2s"
    # RESOURCE_EXHAUSTED without a quota reason is a rate limit, whatever the message says
    (attempt,) = response.attempts
    assert (attempt.status, attempt.error_kind, attempt.retry_after_s) == (429, "rate_limited", 37.2)
    assert response.error == (
        "Gemini Developer API error (429): You exceeded your current quota, please check your plan and billing "
        "details. Please retry in 37.2s. (RESOURCE_EXHAUSTED); retry after 37.2 s"
    )


async def test_429_with_retry_after_then_success(gemini: FakeGemini, genv: dict[str, str], clock: FakeClock) -> None:
    gemini.enqueue(Reply(429, "Too many requests, slow down.", headers={"Retry-After": "7"}))
    response = await search(genv, clock)
    assert response.ok and len(response.sources) == 4
    assert clock.sleeps == [7.0] and len(gemini.requests) == 2


async def test_429_with_retry_after_exhausted(gemini: FakeGemini, genv: dict[str, str], clock: FakeClock) -> None:
    gemini.enqueue(*[Reply(429, "Too many requests, slow down.", headers={"Retry-After": "7"})] * 4)
    response = await search(genv, clock)
    assert clock.sleeps == [7.0, 7.0, 7.0]
    assert response.error == "Gemini Developer API error (429): Too many requests, slow down.; retry after 7 s"
    assert (response.attempts[0].error_kind, response.attempts[0].retry_after_s) == ("rate_limited", 7.0)


async def test_a_retry_after_date_is_read_against_the_injected_clock(
    gemini: FakeGemini, genv: dict[str, str], clock: FakeClock
) -> None:
    gemini.enqueue(Reply(429, "Too many requests.", headers={"Retry-After": "Mon, 30 Nov 2026 12:00:30 GMT"}))
    response = await search(genv, clock, deadline=60)
    assert response.ok and clock.sleeps == [30.0]  # NOW is 12:00:00 on the fake clock


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (
            Reply(503, OVERLOADED),
            "Gemini Developer API error (503): The model is overloaded. Please try again later. (UNAVAILABLE)",
        ),
        (
            Reply(500, google_error(500, "INTERNAL", "An internal error has occurred.")),
            "Gemini Developer API error (500): An internal error has occurred. (INTERNAL)",
        ),
        (Reply(408, "Request Timeout"), "Gemini Developer API error (408): Request Timeout"),
        (
            Reply(
                502,
                "<html><head><title>502 Bad Gateway</title></head>\n<body>upstream</body></html>",
                content_type="text/html",
            ),
            "Gemini Developer API error (502): <html><head><title>502 Bad Gateway</title></head> <body>upstream</body></html>",
        ),
    ],
)
async def test_transient_errors_back_off_exponentially(
    gemini: FakeGemini, genv: dict[str, str], clock: FakeClock, reply: Reply, message: str
) -> None:
    gemini.enqueue(*[reply] * 4)
    response = await search(genv, clock)
    assert len(gemini.requests) == 4
    assert clock.sleeps == [1.0, 2.0, 4.0]
    assert (response.error, response.attempts[0].error_kind) == (message, "unavailable")


async def test_a_hint_beyond_the_budget_ends_retrying(
    gemini: FakeGemini, genv: dict[str, str], clock: FakeClock
) -> None:
    gemini.enqueue(quota_exhausted("400s"))
    response = await search(genv, clock)
    assert len(gemini.requests) == 1 and clock.sleeps == []
    assert (response.attempts[0].error_kind, response.attempts[0].retry_after_s) == ("rate_limited", 400.2)
    assert response.error is not None and response.error.endswith("(RESOURCE_EXHAUSTED); retry after 400.2 s")


async def test_the_budget_is_cumulative(
    gemini: FakeGemini, genv: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    (config_dir / "settings.toml").write_text("[timeout]\ngemini = 300\n")  # an attempt past the default 60 s
    gemini.enqueue(*[Reply(503, OVERLOADED, headers={"Retry-After": "120"})] * 4)
    response = await search(genv, clock, deadline=600)
    assert clock.sleeps == [120.0, 120.0]  # a third wait would pass 300 s
    assert len(gemini.requests) == 3
    assert response.attempts[0].status == 503


async def test_no_wait_passes_the_search_deadline(gemini: FakeGemini, genv: dict[str, str]) -> None:
    """Retry-After: 30, three times, was 90 s under `--timeout 3`; under a 3 s deadline the first
    429 ends Gemini's turn at once (real time), and the engine cools Gemini down for the 30 s."""
    gemini.enqueue(*[Reply(429, "Too many requests.", headers={"Retry-After": "30"})] * 4)
    from websearch._state import MemoryStore

    async with make_client(env=genv, engine=True, store=MemoryStore(FakeClock())) as ws:
        started = time.monotonic()
        response = await ws.asearch("euro 2024 winner", provider="gemini", deadline=3)
        elapsed = time.monotonic() - started
        again = await ws.asearch("euro 2024 winner", provider="gemini", deadline=3)
    assert elapsed < 3.1, elapsed
    assert len(gemini.requests) == 1
    assert (response.attempts[0].error_kind, response.attempts[0].retry_after_s) == ("rate_limited", 30.0)
    assert (again.attempts[0].skipped, again.attempts[0].error_kind) == ("cooldown", "rate_limited")
    until = datetime.fromisoformat(again.attempts[0].until or "")
    assert abs((until - datetime.now(UTC)).total_seconds() - 30) < 5  # the 30 s Gemini named


async def test_refused_connections_are_retried(env: dict[str, str], clock: FakeClock) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    response = await search(
        {**env, "WEBSEARCH_GEMINI_BASE_URL": f"http://127.0.0.1:{port}", "GEMINI_API_KEY": KEY}, clock
    )
    assert clock.sleeps == [1.0, 2.0, 4.0]
    assert response.error is not None and response.error.startswith(
        f"Gemini request failed: could not connect to 127.0.0.1:{port}"
    )


async def test_a_timeout_is_not_retried(gemini: FakeGemini, genv: dict[str, str], clock: FakeClock) -> None:
    gemini.enqueue(Reply(hang=True))
    response = await search(genv, clock, timeout=0.3)
    assert response.error == "Gemini did not answer within 0.3 s"
    assert len(gemini.requests) == 1 and clock.sleeps == []


def test_retry_hint_sources() -> None:
    def resp(body: str = "", **headers: str) -> HttpResponse:
        return HttpResponse(429, headers, body.encode())

    assert retry_hint(resp(**{"retry-after-ms": "1500"}), NOW) == 1.5
    assert retry_hint(resp("Please retry in 9s", **{"retry-after": "3"}), NOW) == 3.0
    assert retry_hint(resp('{"retryDelay": "34.07s"} Please retry in 250ms'), NOW) == 34.07
    assert retry_hint(resp("Please retry in 250ms"), NOW) == 0.25
    assert retry_hint(resp("slow down"), NOW) is None
    date = "Mon, 30 Nov 2026 12:00:30 GMT"
    assert retry_hint(resp(**{"retry-after": date}), NOW) == 30.0


async def test_keys_never_leak_from_error_paths(gemini: FakeGemini, genv: dict[str, str], clock: FakeClock) -> None:
    echo = google_error(400, "INVALID_ARGUMENT", f"API key {KEY} not valid.", {"reason": "API_KEY_INVALID"})
    gemini.enqueue(Reply(400, echo))
    response = await search(genv, clock)
    assert "[redacted]" in (response.error or "")
    assert_no_secret(response)
    gemini.enqueue(*[Reply(503, f"upstream saw key={KEY}")] * 4)
    response = await search(genv, clock)
    assert response.error == "Gemini Developer API error (503): upstream saw key=[redacted]"
    assert_no_secret(response)
    gemini.enqueue(
        Reply(
            200, chunks=[b"data: " + json.dumps({"error": {"code": 500, "message": f"bad {KEY}"}}).encode() + b"\n\n"]
        )
    )
    response = await search(genv, clock)
    assert response.error == "Gemini Developer API error (500): bad [redacted]"
    assert_no_secret(response)


async def test_a_block_reason_echoing_the_key_is_redacted(
    gemini: FakeGemini, genv: dict[str, str], clock: FakeClock
) -> None:
    gemini.enqueue(stream_reply([{"promptFeedback": {"blockReason": f"OTHER for key {KEY}"}}]))
    response = await search(genv, clock)
    assert response.error == "Gemini blocked the query (blockReason OTHER for key [redacted])"
    assert response.attempts[0].error_kind == "rejected"
    assert_no_secret(response)


async def test_a_refused_refresh_echoing_the_tokens_is_redacted(
    gemini: FakeGemini, oenv: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    store_login(config_dir, expires_at=1.0)
    echo = {"error": "invalid_grant", "error_description": f"refresh token {REFRESH} (for {ACCESS}) is revoked"}
    gemini.enqueue(Reply(400, echo))
    response = await search(oenv, clock)
    assert response.error == (
        "Gemini session expired and the refresh failed (the token endpoint answered 400: invalid_grant: refresh "
        "token [redacted] (for [redacted]) is revoked); log in again with `websearch auth import gemini` or "
        "`websearch auth set gemini`"
    )
    assert_no_secret(response)


# -- the stream: cut, error event, cancellation ----------------------------------------------


async def test_a_stream_cut_mid_event_is_an_error_and_not_retried(
    gemini: FakeGemini, genv: dict[str, str], clock: FakeClock
) -> None:
    first = sse_body(grounded_chunks(Q))[0]
    gemini.enqueue(Reply(200, chunks=[first, b'data: {"candidates": [{"content": {"parts": [{"te'], cut=True))
    response = await search(genv, clock)
    assert response.error == "Gemini request failed: the connection broke before the response body was complete"
    assert response.answer is None and response.sources == ()
    assert len(gemini.requests) == 1 and clock.sleeps == []


async def test_a_stream_that_ends_before_finishing_is_an_error(
    gemini: FakeGemini, genv: dict[str, str], clock: FakeClock
) -> None:
    two = sse_body(grounded_chunks(Q))[:2]
    gemini.enqueue(Reply(200, chunks=[*two, b'data: {"candidates": [{"cont']))  # a clean end, mid-event
    response = await search(genv, clock)
    assert response.error == (
        "Gemini Developer API stream ended early (no chunk with a finishReason); answer discarded"
    )
    assert response.answer is None


async def test_an_sse_error_event(gemini: FakeGemini, genv: dict[str, str], clock: FakeClock) -> None:
    first = sse_body(grounded_chunks(Q))[0]
    error = b"data: " + json.dumps(OVERLOADED).encode() + b"\r\n\r\n"
    gemini.enqueue(Reply(200, chunks=[first, error]))
    response = await search(genv, clock)
    assert (
        response.error
        == "Gemini Developer API error (503): The model is overloaded. Please try again later. (UNAVAILABLE)"
    )
    assert response.attempts[0].status == 503
    assert len(gemini.requests) == 1 and clock.sleeps == []


async def test_cancelling_mid_stream_closes_it(gemini: FakeGemini, genv: dict[str, str], clock: FakeClock) -> None:
    first = sse_body(grounded_chunks(Q))[0]
    gemini.enqueue(Reply(200, chunks=[first] + [b": keep-alive\n\n"] * 400, chunk_delay=0.05))
    async with make_client(env=genv, clock=clock) as ws:
        task = asyncio.create_task(ws.asearch(Q, provider="gemini"))
        await eventually(lambda: gemini.requests)
        await asyncio.sleep(0.2)  # inside the stream now
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 1)
        assert time.monotonic() - started < 1
        await eventually(lambda: gemini.disconnects)
        assert gemini.disconnects == 1
        assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


# -- credentials and availability ------------------------------------------------------------


async def test_missing_credentials_message(env: dict[str, str], config_dir: Path, clock: FakeClock) -> None:
    with pytest.raises(MissingCredentialError) as err:
        PROVIDER.plan(SearchParams(Q), context(env, config_dir, clock))
    assert err.value.message == NO_CREDENTIALS
    assert "GEMINI_API_KEY" in NO_CREDENTIALS and "websearch auth set gemini" in NO_CREDENTIALS
    async with make_client(env=env, clock=clock, providers=["gemini", "duckduckgo"]) as ws:
        response = await ws.asearch(Q, provider="gemini")
    assert response.provider == "duckduckgo"
    assert messages(response)[0] == (
        "provider gemini was requested but is not available (set GEMINI_API_KEY or run `websearch auth set gemini`); "
        "used the automatic chain instead"
    )


def availability(env: dict[str, str]) -> tuple[bool, str]:
    with WebSearch(engine=False, env=env) as ws:  # availability only: nothing is sent
        row = next(r for r in ws.provider_status() if r.id == "gemini")
    return row.available, row.reason


def test_availability(env: dict[str, str], config_dir: Path) -> None:
    assert availability(env)[0] is False
    assert availability({**env, "GEMINI_API_KEY": KEY})[0] is True
    for cred_id in ("gemini", "google-gemini-cli", "google-antigravity"):
        store = store_login(config_dir, cred_id)
        assert availability(env)[0] is True
        store.remove(cred_id)
    CredentialStore(config_dir / "agent.db").set("gemini", "api_key", {"api_key": KEY})
    assert availability(env)[0] is True


async def test_stored_api_key_is_used(
    gemini: FakeGemini, oenv: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    CredentialStore(config_dir / "agent.db").set("gemini", "api_key", {"api_key": KEY})
    response = await search(oenv, clock)
    assert response.ok and response.auth_mode == "api_key"
    assert gemini.last.headers["x-goog-api-key"] == KEY


async def test_explicit_key_wins(gemini: FakeGemini, oenv: dict[str, str], clock: FakeClock, config_dir: Path) -> None:
    store_login(config_dir)
    async with make_client(env=oenv, clock=clock, api_keys={"gemini": KEY}) as ws:
        response = await ws.asearch(Q, provider="gemini")
    assert response.auth_mode == "api_key" and gemini.last.path == DEV_PATH


# -- Cloud Code (OAuth) ----------------------------------------------------------------------


async def test_gemini_cli_login_request(
    gemini: FakeGemini, genv: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    store_login(config_dir)
    response = await search(genv, clock, max_tokens=300)  # a login wins over GEMINI_API_KEY
    req = gemini.last
    assert (req.method, req.path, req.query) == ("POST", CC_PATH, (("alt", "sse"),))
    assert req.headers["authorization"] == f"Bearer {ACCESS}"
    assert "x-goog-api-key" not in req.headers
    assert (req.headers["user-agent"], req.headers["client-metadata"]) == (GEMINI_CLI_USER_AGENT, CLIENT_METADATA)
    assert re.fullmatch(
        r"GeminiCLI/0\.46\.0/gemini-3\.1-pro-preview \((linux|darwin|win32); \w+; terminal\)", GEMINI_CLI_USER_AGENT
    )
    body = req.json()
    request_id = body.pop("requestId")
    assert re.fullmatch(rf"pi-{int(NOW.timestamp() * 1000)}-[0-9a-z]{{9}}", request_id)
    assert body == {
        "project": PROJECT,
        "model": "gemini-2.5-flash",
        "request": inner_body(generationConfig={"maxOutputTokens": 300}),
        "userAgent": "pi-coding-agent",
    }
    assert (response.auth_mode, response.request_id, len(response.sources)) == ("oauth", RESPONSE_ID, 4)
    assert response.answer is not None and response.answer.startswith("Here is what current sources say")


async def test_antigravity_tries_daily_then_sandbox(
    gemini: FakeGemini, oenv: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    store_login(config_dir, "google-antigravity")
    gemini.enqueue(Reply(503, OVERLOADED))
    response = await search(oenv, clock)
    assert response.ok and response.auth_mode == "oauth"
    assert len(gemini.requests) == 2 and clock.sleeps == []  # the first endpoint gets one try, no wait
    first, second = gemini.requests
    assert first.body == second.body and first.path == second.path == CC_PATH
    assert second.headers["user-agent"] == ANTIGRAVITY_USER_AGENT and "client-metadata" not in second.headers
    body = second.json()
    assert re.fullmatch(r"agent-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", body.pop("requestId"))
    system = {"role": "user", "parts": [{"text": ANTIGRAVITY_SYSTEM}, {"text": SYSTEM_PROMPT}]}
    assert body == {
        "project": PROJECT,
        "model": "gemini-2.5-flash",
        "request": {**inner_body(), "systemInstruction": system},
        "requestType": "agent",
        "userAgent": "antigravity",
    }


async def test_antigravity_endpoints_and_marker(env: dict[str, str], config_dir: Path, clock: FakeClock) -> None:
    store = store_login(config_dir, "google-antigravity")
    plan = PROVIDER.plan(SearchParams(Q), context(env, config_dir, clock))
    assert plan.request is None and isinstance(plan.state, Route)
    assert (plan.state.kind, plan.state.login, plan.state.endpoints) == (
        "antigravity",
        "google-antigravity",
        ANTIGRAVITY_ENDPOINTS,
    )
    auth = GeminiAuth("antigravity", ACCESS, PROJECT)
    requests = PROVIDER.cloud_requests(plan, context(env, config_dir, clock), auth)
    assert [r.url for r in requests] == [f"{e}/v1internal:streamGenerateContent?alt=sse" for e in ANTIGRAVITY_ENDPOINTS]
    assert ANTIGRAVITY_ENDPOINTS == (
        "https://daily-cloudcode-pa.googleapis.com",
        "https://daily-cloudcode-pa.sandbox.googleapis.com",
    )
    assert all(r.secrets == (ACCESS,) for r in requests)
    store.remove("google-antigravity")
    store_login(config_dir, client="antigravity")  # an Antigravity login stored under `gemini`
    ctx = context(env, config_dir, clock)
    chosen = await PROVIDER.authenticate(PROVIDER.plan(SearchParams(Q), ctx), ctx)
    assert (chosen.kind, chosen.project_id, chosen.credential_id) == ("antigravity", PROJECT, "gemini")


async def test_antigravity_retries_only_on_the_last_endpoint(
    gemini: FakeGemini, oenv: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    store_login(config_dir, "google-antigravity")
    gemini.enqueue(*[Reply(503, OVERLOADED)] * 5)
    response = await search(oenv, clock)
    assert len(gemini.requests) == 5 and clock.sleeps == [1.0, 2.0, 4.0]
    assert (
        response.error
        == "Gemini Cloud Code API error (503): The model is overloaded. Please try again later. (UNAVAILABLE)"
    )
    gemini.enqueue(Reply(400, google_error(400, "INVALID_ARGUMENT", "Request contains an invalid argument.")))
    response = await search(oenv, clock)
    assert len(gemini.requests) == 6  # a 400 on the daily endpoint is final
    assert (
        response.error == "Gemini Cloud Code API error (400): Request contains an invalid argument. (INVALID_ARGUMENT)"
    )


async def test_expired_login_is_refreshed_and_stored(
    gemini: FakeGemini, oenv: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    store = store_login(config_dir, expires_at=NOW.timestamp() - 10)
    response = await search(oenv, clock)
    assert response.ok
    token_request, stream_request = gemini.requests
    assert (token_request.method, token_request.path) == ("POST", "/token")
    assert token_request.headers["content-type"] == "application/x-www-form-urlencoded"
    assert token_request.form() == [
        ("client_id", GEMINI_CLI_CLIENT[0]),
        ("client_secret", GEMINI_CLI_CLIENT[1]),
        ("refresh_token", REFRESH),
        ("grant_type", "refresh_token"),
    ]
    assert stream_request.headers["authorization"] == "Bearer ya29.fresh-1"
    cred = store.get("gemini")
    assert cred is not None
    assert dict(cred.data) == {
        "access_token": "ya29.fresh-1",
        "refresh_token": REFRESH,
        "expires_at": NOW.timestamp() + 3599,
        "project_id": PROJECT,
    }


async def test_antigravity_refresh_uses_its_client(
    gemini: FakeGemini, oenv: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    store_login(config_dir, "google-antigravity", expires_at=1.0)
    await search(oenv, clock)
    assert dict(gemini.requests[0].form())["client_id"] == ANTIGRAVITY_CLIENT[0]


async def test_failed_refresh_says_log_in_again(
    gemini: FakeGemini, oenv: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    store_login(config_dir, expires_at=1.0, refresh_token="1//0gRevoked-secret-89ab")
    response = await search(oenv, clock)
    assert response.error == (
        "Gemini session expired and the refresh failed (the token endpoint answered 400: invalid_grant: Token has "
        "been expired or revoked.); log in again with `websearch auth import gemini` or `websearch auth set gemini`"
    )
    assert [r.path for r in gemini.requests] == ["/token"]
    assert "1//0gRevoked" not in repr(response)
    assert_no_secret(response)


async def test_a_rejected_token_is_refreshed_once(
    gemini: FakeGemini, oenv: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    store = store_login(config_dir, access_token="ya29.revoked-secret-cdef")
    response = await search(oenv, clock)
    assert response.ok
    assert [r.path for r in gemini.requests] == [CC_PATH, "/token", CC_PATH]
    assert gemini.last.headers["authorization"] == "Bearer ya29.fresh-1"
    cred = store.get("gemini")
    assert cred is not None and cred.data["access_token"] == "ya29.fresh-1"

    rejected = Reply(401, google_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."))
    gemini.enqueue(rejected, Reply(200, {"access_token": "ya29.fresh-2", "expires_in": 3599}), rejected)
    response = await search(oenv, clock)
    assert [r.path for r in gemini.requests[3:]] == [CC_PATH, "/token", CC_PATH]  # one refresh, one more try
    assert response.error == AUTH.format("401 UNAUTHENTICATED", "Request had invalid authentication credentials.")
    assert response.attempts[0].error_kind == "auth"


@pytest.mark.parametrize(
    ("rejected", "refreshes"),
    [
        (Reply(400, google_error(400, "UNAUTHENTICATED", "Request had invalid authentication credentials.")), True),
        (Reply(403, google_error(403, "PERMISSION_DENIED", "The caller does not have permission.")), True),
        # the class decides, not the words: a 400 INVALID_ARGUMENT that mentions credentials is no refused login
        (Reply(400, google_error(400, "INVALID_ARGUMENT", "Invalid credential field in the request.")), False),
    ],
)
async def test_only_a_refused_login_forces_the_refresh(
    gemini: FakeGemini, oenv: dict[str, str], clock: FakeClock, config_dir: Path, rejected: Reply, refreshes: bool
) -> None:
    store_login(config_dir)
    gemini.enqueue(rejected)
    response = await search(oenv, clock)
    if refreshes:
        assert response.ok and [r.path for r in gemini.requests] == [CC_PATH, "/token", CC_PATH]
    else:
        assert [r.path for r in gemini.requests] == [CC_PATH]
        assert response.attempts[0].error_kind == "rejected"


async def test_a_rejected_token_without_refresh_token(
    gemini: FakeGemini, oenv: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    store_login(config_dir, access_token="ya29.revoked-secret-cdef", refresh_token=None)
    response = await search(oenv, clock)
    assert [r.path for r in gemini.requests] == [CC_PATH]
    assert response.error is not None and response.error.startswith(
        AUTH.format("401 UNAUTHENTICATED", "Request had invalid authentication credentials.")
    )
    assert "ya29.revoked" not in repr(response)


async def test_project_is_discovered_and_kept(
    gemini: FakeGemini, oenv: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    store = store_login(config_dir, project_id=None)
    response = await search(oenv, clock)
    assert response.ok
    load, stream = gemini.requests
    assert (load.path, load.headers["authorization"], load.headers["accept"]) == (
        "/v1internal:loadCodeAssist",
        f"Bearer {ACCESS}",
        "application/json",
    )
    assert load.json() == {
        "metadata": {"ideType": "IDE_UNSPECIFIED", "platform": "PLATFORM_UNSPECIFIED", "pluginType": "GEMINI"}
    }
    assert stream.json()["project"] == PROJECT
    cred = store.get("gemini")
    assert cred is not None and cred.data["project_id"] == PROJECT
    await search(oenv, clock)
    assert [r.path for r in gemini.requests[2:]] == [CC_PATH]  # not asked again


async def test_antigravity_login_needs_a_project(
    gemini: FakeGemini, oenv: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    store_login(config_dir, "google-antigravity", project_id=None)
    response = await search(oenv, clock)
    assert response.error == (
        "the Gemini login `google-antigravity` has no project_id; store it again with one: `websearch auth set gemini`"
    )
    assert response.attempts[0].error_kind == "missing_credential"
    assert gemini.requests == []


def test_errors_read_cloud_code_list_envelopes(env: dict[str, str], config_dir: Path, clock: FakeClock) -> None:
    store_login(config_dir)
    plan = PROVIDER.plan(SearchParams(Q), context(env, config_dir, clock))
    body = json.dumps([google_error(429, "RESOURCE_EXHAUSTED", "Rate limited.")]).encode()
    error = PROVIDER.error(HttpResponse(429, {}, body), plan)
    assert (type(error), error.message, error.status) == (
        RateLimited,
        "Gemini Cloud Code API error (429): Rate limited. (RESOURCE_EXHAUSTED)",
        429,
    )
    quota = [
        google_error(
            429,
            "RESOURCE_EXHAUSTED",
            "Quota spent.",
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "90s"},
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "QUOTA_EXHAUSTED"},
        )
    ]
    error = PROVIDER.error(HttpResponse(429, {}, json.dumps(quota).encode()), plan)
    assert (type(error), error.message, error.retry_after) == (
        QuotaExhausted,
        "gemini: credits exhausted (QUOTA_EXHAUSTED): Quota spent.",
        90.0,
    )


# -- importing the Gemini CLI login ----------------------------------------------------------


def write_creds(home: Path, data: Any) -> Path:
    path = home / ".gemini" / "oauth_creds.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_import_credentials(tmp_path: Path) -> None:
    write_creds(
        tmp_path,
        {
            "access_token": ACCESS,
            "refresh_token": REFRESH,
            "scope": "openid",
            "token_type": "Bearer",
            "id_token": "eyJ...",
            "expiry_date": 1796043600123,
        },
    )
    token = import_credentials(tmp_path)
    assert (token.access_token, token.refresh_token, token.expires_at) == (ACCESS, REFRESH, 1796043600.123)
    assert token.to_dict() == {"access_token": ACCESS, "refresh_token": REFRESH, "expires_at": 1796043600.123}
    assert PROVIDER.import_login(tmp_path) == token  # what `WebSearch.import_login` calls


def test_client_import_login_stores_the_token(tmp_path: Path, env: dict[str, str], config_dir: Path) -> None:
    write_creds(tmp_path, {"access_token": ACCESS, "refresh_token": REFRESH, "expiry_date": 1796043600123})
    with make_client(env=env) as ws:
        cred = ws.import_login("gemini", tmp_path)
    assert (cred.provider, cred.kind) == ("gemini", "oauth")
    assert dict(cred.data) == {"access_token": ACCESS, "refresh_token": REFRESH, "expires_at": 1796043600.123}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no Gemini CLI login at {path}: run `gemini` and sign in with Google first"),
        ("{not json", "{path} is not valid JSON"),
        ({"refresh_token": REFRESH}, "{path} has no access_token: sign in with Google in the Gemini CLI again"),
        (["a"], "{path} has no access_token: sign in with Google in the Gemini CLI again"),
        (
            {"access_token": ACCESS, "expiry_date": "soon"},
            "{path} has an expiry_date that is not a number of milliseconds",
        ),
        ({"access_token": ACCESS, "refresh_token": 7}, "{path} has a refresh_token that is not a string"),
    ],
)
def test_import_credentials_errors(tmp_path: Path, content: Any, message: str) -> None:
    path = tmp_path / ".gemini" / "oauth_creds.json"
    if content is not None:
        write_creds(tmp_path, content)
    with pytest.raises(ConfigError) as err:
        import_credentials(tmp_path)
    assert str(err.value) == message.format(path=path)


def test_cli_import_then_search(gemini: FakeGemini, env: dict[str, str], config_dir: Path) -> None:
    write_creds(
        config_dir, {"access_token": ACCESS, "refresh_token": REFRESH, "expiry_date": int((time.time() + 3600) * 1000)}
    )
    proc = run_cli(["auth", "import", "gemini"], env)
    assert (proc.returncode, proc.stdout) == (0, f"imported the gemini login into {config_dir / 'agent.db'}\n")
    missing = run_cli(["auth", "import", "gemini"], {**env, "WEBSEARCH_CONFIG_DIR": str(config_dir / "nowhere")})
    assert missing.returncode == 2 and "no Gemini CLI login at" in missing.stderr

    proc = run_cli(["search", Q, "--provider", "gemini", "--limit", "2"], {**env, **gemini.env})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"Here is what current sources say about {Q}:")
    assert "\n## Sources\n2 sources\n[1] uefa.com\n    https://vertexaisearch.cloud.google.com/" in out
    assert "\n## Citations\n4 citations\n" in out
    assert f"Search queries: 2\n- {Q}\n- {Q} latest" in out
    assert [r.path for r in gemini.requests] == ["/v1internal:loadCodeAssist", CC_PATH]
    assert ACCESS not in proc.stdout + proc.stderr


# -- the richer parameters --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "window", "notices"),
    [
        ({"recency_hours": 6}, {"startTime": "2026-11-30T06:00:00Z", "endTime": "2026-11-30T12:00:00Z"}, ()),
        ({"recency_days": 2}, {"startTime": "2026-11-28T12:00:00Z", "endTime": "2026-11-30T12:00:00Z"}, ()),
        (
            {"start_published_date": "2026-01-15", "end_published_date": "2026-02-01T09:30:00+01:00"},
            {"startTime": "2026-01-15T00:00:00Z", "endTime": "2026-02-01T08:30:00Z"},
            (),
        ),
        (
            {"end_published_date": "2026-02-01"},
            None,
            (
                'end_published_date="2026-02-01" not applied: Gemini\'s time range needs a start (give a start date, '
                "recency_days or recency_hours)",
            ),
        ),
        (
            {"recency": "day", "include_domains": ["uefa.com"]},
            None,
            (
                'recency="day" not applied: Gemini does not support it',
                'include_domains=["uefa.com"] not applied: Gemini does not support it',
                'include_domains=["uefa.com"] enforced: 3 results outside these hosts removed',
            ),
        ),
    ],
)
async def test_richer_dates_are_the_time_range_filter(
    gemini: FakeGemini,
    genv: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, Any],
    window: dict[str, str] | None,
    notices: tuple[str, ...],
) -> None:
    response = await search(genv, clock, **kwargs)
    assert response.ok and messages(response) == notices
    tool = {"googleSearch": {"timeRangeFilter": window} if window else {}}
    assert gemini.last.json() == inner_body(tools=[tool])


async def test_richer_dates_are_not_applied_through_cloud_code(
    gemini: FakeGemini, oenv: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    store_login(config_dir, "google-gemini-cli")
    response = await search(oenv, clock, recency_days=3, end_published_date="2026-11-29")
    assert response.ok and response.auth_mode == "oauth"
    assert gemini.last.path == CC_PATH and gemini.last.json()["request"]["tools"] == [{"googleSearch": {}}]
    cloud = "not applied: Gemini through Cloud Code (OAuth) has no time range filter"
    assert messages(response) == (f"recency_days=3 {cloud}", f'end_published_date="2026-11-29" {cloud}')
