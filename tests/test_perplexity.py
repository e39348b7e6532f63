"""Perplexity against a loopback fake: API-key chat streams, the ask endpoint, auth order and fall-through."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import NOW, FakeClock, eventually, make_client, messages, provider_context, run_cli, search_once
from websearch import Attempt, SearchCitation, SearchParams, SearchResponse, SearchSource, SearchUsage, WebSearch
from websearch._core._credentials import CredentialStore
from websearch._http._sse import iter_sse
from websearch._providers._base import Plan
from websearch._providers._prompts import SYSTEM_PROMPT
from websearch._providers.perplexity import (
    APP_USER_AGENT,
    BROWSER_USER_AGENT,
    PROVIDER,
    Auth,
    Methods,
    auth_methods,
    build_ask_request,
    merge_snapshot,
    parse_events,
    snapshot_answer,
    snapshot_sources,
    text_answer,
)
from websearch.errors import InvalidResponse, MissingCredentialError, RateLimited
from websearch.providers import HttpResponse, ProviderContext
from websearch.testing import Reply
from websearch.testing.perplexity import (
    ANSWER,
    RELATED,
    FakePerplexity,
    anonymous_chunks,
    api_error,
    ask_chunks,
    chat_chunks,
    search_results,
    sse,
)

KEY = "pplx-test-key-9f3e7a1c5b"
OR_KEY = "sk-or-v1-openrouter-4d2c8e71"
COOKIES = "pplx.visitor-id=visitor-77aa01; __Secure-next-auth.session-token=cookie-session-5e6f7a8b9c"
QUERY = "quic protocol"
ASK_PATH = "/rest/sse/perplexity_ask"


def jwt(exp: float | None) -> str:
    """A session token shaped like Perplexity's (an unverified JWT), with or without `exp`."""

    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    claims: dict[str, Any] = {"sub": "user-123", "iat": 1700000000} | ({"exp": exp} if exp is not None else {})
    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJlLXNpZ25hdHVyZQ"


SESSION = jwt(NOW.timestamp() + 30 * 86400)


@pytest.fixture
def pplx() -> Iterator[FakePerplexity]:
    with FakePerplexity(api_keys={KEY, OR_KEY}) as fake:
        yield fake


@pytest.fixture
def base(env: dict[str, str], pplx: FakePerplexity) -> dict[str, str]:
    return {**env, **pplx.env}


@pytest.fixture
def keyed(base: dict[str, str]) -> dict[str, str]:
    return {**base, "PERPLEXITY_API_KEY": KEY}


def store_session(config_dir: Path, token: str = SESSION, **extra: Any) -> None:
    CredentialStore(config_dir / "agent.db").set("perplexity", "oauth", {"access_token": token, **extra})


async def search(env: dict[str, str], clock: FakeClock, query: str = QUERY, **kwargs: Any) -> SearchResponse:
    return await search_once("perplexity", env, query, clock, **kwargs)


def context(env: dict[str, str], config_dir: Path, clock: FakeClock, *, explicit: bool = False) -> ProviderContext:
    """A context for the pure parts; `explicit` as when Perplexity is the provider chosen."""
    return dataclasses.replace(provider_context(config_dir, env, clock=clock), explicit=explicit)


def keyed_plan(params: SearchParams, config_dir: Path, clock: FakeClock) -> Plan:
    """The plan of an API-key search (what `parse_events` dates and slices from)."""
    return PROVIDER.plan(params, context({"PERPLEXITY_API_KEY": KEY}, config_dir, clock))


def kinds(response: SearchResponse) -> list[str]:
    return [notice.kind for notice in response.notices]


def chat_body(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "sonar-pro",
        "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": QUERY}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 8192,
        "temperature": 0.2,
        "search_mode": "web",
        "num_search_results": 20,
        "web_search_options": {"search_type": "pro", "search_context_size": "high"},
        "enable_search_classifier": True,
        "reasoning_effort": "medium",
        "language_preference": "en",
        "return_related_questions": True,
    }
    return body | changes


def age(date: str) -> int:
    return int((NOW - datetime.fromisoformat(date.replace("Z", "+00:00")).replace(tzinfo=NOW.tzinfo)).total_seconds())


# -- API-key mode: the request ----------------------------------------------------------------


async def test_default_api_request(pplx: FakePerplexity, keyed: dict[str, str], clock: FakeClock) -> None:
    response = await search(keyed, clock)
    assert response.ok and messages(response) == ()
    req = pplx.last
    assert (req.method, req.path, req.query) == ("POST", "/chat/completions", ())
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.headers["content-type"] == "application/json"
    assert req.headers["accept"] == "text/event-stream"
    assert "cookie" not in req.headers
    assert req.json() == chat_body()
    assert len(pplx.requests) == 1


@pytest.mark.parametrize(
    ("kwargs", "sent", "n_sources"),
    [
        ({}, 20, 20),
        ({"limit": 3}, 20, 3),
        ({"num_search_results": 7}, 7, 7),
        ({"limit": 3, "num_search_results": 7}, 7, 3),
        ({"limit": 50, "num_search_results": 5}, 5, 5),
    ],
)
async def test_limit_slices_sources_and_num_search_results_is_the_api_breadth(
    pplx: FakePerplexity, keyed: dict[str, str], clock: FakeClock, kwargs: dict[str, int], sent: int, n_sources: int
) -> None:
    response = await search(keyed, clock, **kwargs)
    assert pplx.last.json() == chat_body(num_search_results=sent)
    assert len(response.sources) == n_sources
    assert len(response.citations) == sent  # citations are not sliced
    assert messages(response) == ()


@pytest.mark.parametrize("recency", ["day", "week", "month", "year"])
async def test_recency_is_search_recency_filter(
    pplx: FakePerplexity, keyed: dict[str, str], clock: FakeClock, recency: str
) -> None:
    response = await search(keyed, clock, recency=recency)
    assert pplx.last.json() == chat_body(search_recency_filter=recency)
    assert response.ok and messages(response) == ()


async def test_max_tokens_and_temperature_pass_through(
    pplx: FakePerplexity, keyed: dict[str, str], clock: FakeClock
) -> None:
    response = await search(keyed, clock, max_tokens=512, temperature=0)
    assert pplx.last.json() == chat_body(max_tokens=512, temperature=0)
    assert messages(response) == ()


# -- API-key mode: parsing --------------------------------------------------------------------

RFC = "https://www.rfc-editor.org/rfc/rfc9000"
CLOUDFLARE = "https://blog.cloudflare.com/quic"
REALISTIC = sse(
    {
        "id": "req-1",
        "model": "sonar-pro",
        "object": "chat.completion.chunk",
        "created": 1796040000,
        "choices": [
            {"index": 0, "delta": {"role": "assistant", "content": "QUIC runs over UDP "}, "finish_reason": None}
        ],
        "citations": ["https://stale.example/early"],
    },
    {
        "id": "req-1",
        "model": "sonar-pro",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": "and encrypts by default [1][2]."}, "finish_reason": None}],
    },
    {
        "id": "req-1",
        "model": "sonar-pro",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "citations": [RFC, CLOUDFLARE, "https://no-result.example/page"],
        "search_results": [
            {
                "title": "RFC 9000: QUIC",
                "url": RFC,
                "date": "2021-05-27",
                "last_updated": "2024-01-01",
                "snippet": "QUIC: A UDP-Based Multiplexed and Secure Transport",
                "source": "web",
            },
            {"title": "", "url": CLOUDFLARE, "date": None, "snippet": ""},
            {"title": "No URL, dropped", "snippet": "x"},
            {"title": "A later duplicate", "url": RFC, "date": "2020-01-01"},
        ],
        "related_questions": ["What is 0-RTT?", "   ", "How does HTTP/3 use QUIC?", 7],
    },
    {
        "id": "req-1",
        "model": "sonar-pro",
        "object": "chat.completion.chunk",
        "choices": [],
        "citations": [],
        "usage": {
            "prompt_tokens": 12,
            "completion_tokens": 80,
            "total_tokens": 92,
            "num_search_queries": 1,
            "cost": {"total_cost": 0.0051},
        },
    },
    "[DONE]",
)


async def test_parses_a_realistic_stream_exactly(pplx: FakePerplexity, keyed: dict[str, str], clock: FakeClock) -> None:
    pplx.enqueue(Reply(200, chunks=REALISTIC))
    response = await search(keyed, clock)
    rfc = SearchSource(
        title="RFC 9000: QUIC",
        url=RFC,
        snippet="QUIC: A UDP-Based Multiplexed and Secure Transport",
        published_date="2021-05-27",
        age_seconds=age("2021-05-27"),
    )
    assert response == SearchResponse(
        provider="perplexity",
        query=QUERY,
        answer="QUIC runs over UDP and encrypts by default [1][2].",
        sources=(
            rfc,
            SearchSource(title=CLOUDFLARE, url=CLOUDFLARE),
            SearchSource(title="https://no-result.example/page", url="https://no-result.example/page"),
        ),
        citations=(
            SearchCitation(RFC, "RFC 9000: QUIC"),
            SearchCitation(CLOUDFLARE, CLOUDFLARE),
            SearchCitation("https://no-result.example/page", "https://no-result.example/page"),
        ),
        related_questions=("What is 0-RTT?", "How does HTTP/3 use QUIC?"),
        usage=SearchUsage(input_tokens=12, output_tokens=80, total_tokens=92),
        model="sonar-pro",
        request_id="req-1",
        auth_mode="api_key",
        attempts=(Attempt("perplexity", None, None, 0.0),),
    )
    assert rfc.age_seconds == 2013 * 86400 + 12 * 3600  # 2021-05-27 to 2026-11-30T12:00Z


def test_without_citations_sources_come_from_search_results(config_dir: Path, clock: FakeClock) -> None:
    stream = b"".join(chat_chunks("Answer.", search_results(3), related=())).decode()
    chunks = [json.loads(e.data) for e in iter_sse(stream) if e.data != "[DONE]"]
    for chunk in chunks:
        chunk.pop("citations", None)
    plan = keyed_plan(SearchParams("q", limit=2), config_dir, clock)
    response = parse_events(iter_sse(b"".join(sse(*chunks, "[DONE]")).decode()), plan)
    assert [s.url for s in response.sources] == [r["url"] for r in search_results(2)]
    assert response.sources[0].published_date == "2021-05-27"
    assert response.citations == () and response.related_questions == ()
    assert response.answer == "Answer." and response.usage == SearchUsage(12, 80, 92)


def test_metadata_is_gathered_from_any_event_and_nested_output(config_dir: Path, clock: FakeClock) -> None:
    text = b"".join(
        sse(
            {
                "response": {
                    "id": "resp-1",
                    "model": "sonar-pro",
                    "output": [
                        {
                            "type": "message",
                            "content": [{"search_results": [{"title": "T", "url": "https://t.example"}]}],
                        }
                    ],
                }
            },
            {
                "choices": [{"delta": {"content": "A"}}],
                "output": [
                    {
                        "type": "search",
                        "results": [{"title": "R", "url": "https://r.example"}],
                        "related_questions": ["Why?"],
                    }
                ],
            },
            {"choices": [{"delta": {"content": "B"}, "finish_reason": "stop"}], "search_results": []},
            "[DONE]",
        )
    ).decode()
    response = parse_events(iter_sse(text), keyed_plan(SearchParams("q"), config_dir, clock))
    assert response.answer == "AB"
    assert response.sources == (SearchSource(title="R", url="https://r.example"),)  # the last non-empty list wins
    assert response.related_questions == ("Why?",)
    assert (response.request_id, response.model, response.usage) == ("resp-1", "sonar-pro", None)


async def test_a_whole_json_completion_is_accepted(
    pplx: FakePerplexity, keyed: dict[str, str], clock: FakeClock
) -> None:
    body = {
        "id": "whole-1",
        "model": "sonar-pro",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Whole."}}],
        "citations": ["https://a.example"],
        "search_results": [{"title": "A", "url": "https://a.example"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
    }
    pplx.enqueue(Reply(200, body))
    response = await search(keyed, clock)
    assert (response.answer, response.request_id, response.usage) == ("Whole.", "whole-1", SearchUsage(1, 2, 3))
    assert response.citations == (SearchCitation("https://a.example", "A"),)


async def test_chunks_carrying_the_text_so_far_beside_the_delta_are_read_once(
    pplx: FakePerplexity, keyed: dict[str, str], clock: FakeClock
) -> None:
    # Live Sonar chunks carry `message` (the text so far) beside `delta`; reading both gave
    # "TheThe answerThe answer is...".
    words, so_far, events = ["The", " answer", " is", " 42."], "", []
    for i, word in enumerate(words):
        so_far += word
        choice = {
            "index": 0,
            "delta": {"role": "assistant", "content": word},
            "message": {"role": "assistant", "content": so_far},
            "finish_reason": "stop" if i == len(words) - 1 else None,
        }
        events.append({"id": "live", "model": "sonar", "choices": [choice], "citations": ["https://a.example"]})
    pplx.enqueue(Reply(200, chunks=sse(*events, "[DONE]")))
    response = await search(keyed, clock)
    assert response.answer == "The answer is 42."


@pytest.mark.parametrize(
    "chunks",
    [
        sse(
            {
                "id": "e",
                "choices": [{"delta": {"content": ""}, "finish_reason": "stop"}],
                "citations": [],
                "search_results": [],
            },
            "[DONE]",
        ),
        sse("[DONE]"),
        chat_chunks("", (), related=("  ",)),
    ],
)
async def test_an_empty_answer_is_the_chains_204(
    pplx: FakePerplexity, keyed: dict[str, str], clock: FakeClock, chunks: list[bytes]
) -> None:
    pplx.enqueue(Reply(200, chunks=chunks))
    response = await search(keyed, clock)
    assert response.error == "Perplexity returned no renderable search content."
    assert response.attempts == (
        Attempt("perplexity", 204, "Perplexity returned no renderable search content.", 0.0, "no_results"),
    )


# -- API-key mode: errors ---------------------------------------------------------------------

AUTH_FAILED = "Perplexity authorization failed ({}). Check API key or base URL."
ENDED = "Perplexity stream ended before its last event; the partial answer was discarded"
FIRST = chat_chunks()[:2]


@pytest.mark.parametrize(
    ("reply", "status", "kind", "message"),
    [
        (
            api_error(401, "Invalid API key provided.", "invalid_api_key"),
            401,
            "auth",
            AUTH_FAILED.format("401 invalid_api_key"),
        ),
        (
            Reply(401, "<html><head><title>401 Authorization Required</title></head></html>", content_type="text/html"),
            401,
            "auth",
            AUTH_FAILED.format(401),
        ),
        (
            api_error(402, "Insufficient credits. Add funds to continue.", "insufficient_quota"),
            402,
            "quota",
            "perplexity: 402 credits exhausted (insufficient_quota): Insufficient credits. Add funds to continue.",
        ),
        (Reply(402, b""), 402, "quota", "perplexity: 402 credits exhausted"),
        # The code says quota whatever the status; a 429 without it is a rate limit, whatever its prose.
        (
            api_error(429, "You exceeded your current quota.", "insufficient_quota"),
            429,
            "quota",
            "perplexity: credits exhausted (insufficient_quota): You exceeded your current quota.",
        ),
        (
            Reply(403, "<html>Attention Required! | Cloudflare</html>", content_type="text/html"),
            403,
            "auth",
            AUTH_FAILED.format(403),
        ),
        (
            Reply(
                429,
                {"error": {"message": "Rate limit exceeded", "type": "rate_limit_exceeded", "code": 429}},
                headers={"Retry-After": "30"},
            ),
            429,
            "rate_limited",
            "Perplexity API error (429): Rate limit exceeded (rate_limit_exceeded); retry after 30 s",
        ),
        (
            Reply(429, {"error": {"message": "insufficient quota for now", "code": 429}}),
            429,
            "rate_limited",
            "Perplexity API error (429): insufficient quota for now",
        ),
        (
            api_error(400, "Invalid model 'sonar-x'.", "invalid_model"),
            400,
            "rejected",
            "Perplexity API error (400): Invalid model 'sonar-x'. (invalid_model)",
        ),
        (Reply(500, "upstream   exploded\n"), 500, "unavailable", "Perplexity API error (500): upstream exploded"),
        (Reply(503, b""), 503, "unavailable", "Perplexity API error (503): Service Unavailable"),
        (
            Reply(200, "<html>captive portal</html>", content_type="text/html"),
            200,
            "invalid_response",
            "Perplexity returned a body that is not JSON",
        ),
        (Reply(200, [1, 2]), 200, "invalid_response", "Perplexity returned JSON that is not an object"),
        (
            Reply(
                200,
                chunks=[
                    *FIRST,
                    b'data: {"error": {"message": "Internal server error", "type": "server_error", "code": 500}}\n\n',
                ],
            ),
            500,
            "unavailable",
            "Perplexity API error (500): Internal server error (server_error)",
        ),
        (
            Reply(200, chunks=[*FIRST, b'event: error\ndata: {"error": {"message": "overloaded", "code": 529}}\n\n']),
            529,
            "unavailable",
            "Perplexity API error (529): overloaded",
        ),
        (
            Reply(200, chunks=[*FIRST, b'data: {"error": {"message": "no funds", "type": "insufficient_quota"}}\n\n']),
            500,
            "quota",
            "perplexity: credits exhausted (insufficient_quota): no funds",
        ),
        (
            Reply(200, chunks=[*FIRST, b"data: {not json\n\n"]),
            502,
            "invalid_response",
            "Perplexity sent a stream event that is not JSON",
        ),
        (Reply(200, chunks=FIRST), 502, "invalid_response", ENDED),
    ],
)
async def test_error_statuses_envelopes_and_stream_errors(
    pplx: FakePerplexity, keyed: dict[str, str], clock: FakeClock, reply: Reply, status: int, kind: str, message: str
) -> None:
    pplx.enqueue(reply)
    response = await search(keyed, clock)
    assert response.error == message
    assert response.answer is None and response.sources == ()
    (attempt,) = response.attempts
    assert (attempt.provider, attempt.status, attempt.error, attempt.error_kind) == (
        "perplexity",
        status,
        message,
        kind,
    )


async def test_a_stream_cut_mid_event_is_an_error_without_a_partial_answer(
    pplx: FakePerplexity, keyed: dict[str, str], clock: FakeClock
) -> None:
    pplx.enqueue(Reply(200, chunks=[*FIRST, b'data: {"id": "x", "choices": [{"delta": {"cont'], cut=True))
    response = await search(keyed, clock)
    assert response.error is not None and response.error.startswith("Perplexity request failed: ")
    assert response.answer is None and response.attempts[0].status is None
    assert response.attempts[0].error_kind == "connection"


def test_retry_after_is_kept_on_the_error(config_dir: Path, clock: FakeClock) -> None:
    plan = keyed_plan(SearchParams("q"), config_dir, clock)
    error = PROVIDER.error(HttpResponse(429, {"retry-after": "12"}, b'{"error": {"message": "slow down"}}'), plan)
    assert isinstance(error, RateLimited)
    assert (error.status, error.retry_after, error.message) == (
        429,
        12.0,
        "Perplexity API error (429): slow down; retry after 12 s",
    )


def test_a_chat_stream_that_stops_early_raises(config_dir: Path, clock: FakeClock) -> None:
    with pytest.raises(InvalidResponse, match="stream ended before its last event"):
        parse_events(iter_sse(b"".join(FIRST).decode()), keyed_plan(SearchParams("q"), config_dir, clock))


# -- auth: order, fall-through, availability --------------------------------------------------


async def test_pplx_api_key_is_honoured(pplx: FakePerplexity, base: dict[str, str], clock: FakeClock) -> None:
    response = await search({**base, "PPLX_API_KEY": KEY}, clock)
    assert response.ok and response.auth_mode == "api_key"
    assert pplx.last.headers["authorization"] == f"Bearer {KEY}"


async def test_key_resolution_order(
    pplx: FakePerplexity, base: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    store = CredentialStore(config_dir / "agent.db")
    store.set("perplexity", "api_key", {"api_key": "stored-key-000000"})
    await search(base, clock)
    assert pplx.last.headers["authorization"] == "Bearer stored-key-000000"
    await search({**base, "PPLX_API_KEY": "pplx-env-222222"}, clock)
    assert pplx.last.headers["authorization"] == "Bearer pplx-env-222222"
    await search({**base, "PPLX_API_KEY": "pplx-env-222222", "PERPLEXITY_API_KEY": "env-111111"}, clock)
    assert pplx.last.headers["authorization"] == "Bearer env-111111"
    async with make_client(
        env={**base, "PERPLEXITY_API_KEY": "env-111111"}, clock=clock, api_keys={"perplexity": "explicit-333333"}
    ) as ws:
        await ws.asearch(QUERY, provider="perplexity")
    assert pplx.last.headers["authorization"] == "Bearer explicit-333333"


async def test_falls_through_from_perplexity_to_openrouter(
    pplx: FakePerplexity, base: dict[str, str], clock: FakeClock
) -> None:
    response = await search({**base, "PERPLEXITY_API_KEY": "revoked-key-000000", "OPENROUTER_API_KEY": OR_KEY}, clock)
    assert [r.path for r in pplx.requests] == ["/chat/completions", "/api/v1/chat/completions"]
    assert pplx.last.headers["authorization"] == f"Bearer {OR_KEY}"
    assert pplx.last.json() == chat_body(model="perplexity/sonar-pro")
    assert (response.auth_mode, response.model, response.answer) == ("api_key", "perplexity/sonar-pro", ANSWER)
    assert messages(response) == (
        "Perplexity with the API key failed; fell through to the next auth method: "
        + AUTH_FAILED.format("401 invalid_api_key"),
    )
    assert kinds(response) == ["partial"]
    assert response.attempts == (Attempt("perplexity", None, None, 0.0, notices=response.notices),)


async def test_when_the_only_method_fails_its_classified_error_is_reported(
    pplx: FakePerplexity, base: dict[str, str], clock: FakeClock
) -> None:
    response = await search({**base, "PERPLEXITY_API_KEY": "revoked-key-000000"}, clock)
    assert response.error == AUTH_FAILED.format("401 invalid_api_key")
    assert response.attempts[0].error_kind == "auth"
    assert len(pplx.requests) == 1


async def test_every_method_in_order_with_fall_through(
    pplx: FakePerplexity, keyed: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    store_session(config_dir)
    pplx.enqueue(
        Reply(403, "<html>Just a moment...</html>", content_type="text/html"),
        Reply(500, {"detail": "ask backend unavailable"}),
    )
    response = await search({**keyed, "PERPLEXITY_COOKIES": COOKIES, "OPENROUTER_API_KEY": OR_KEY}, clock)
    assert [r.path for r in pplx.requests] == [ASK_PATH, ASK_PATH, "/chat/completions"]
    assert pplx.requests[0].headers["cookie"] == COOKIES
    assert pplx.requests[1].headers["cookie"] == f"__Secure-next-auth.session-token={SESSION}"
    assert response.auth_mode == "api_key" and response.answer == ANSWER
    assert messages(response) == (
        "Perplexity with PERPLEXITY_COOKIES failed; fell through to the next auth method: " + AUTH_FAILED.format(403),
        "Perplexity with the stored session failed; fell through to the next auth method: "
        "Perplexity ask API error (500): ask backend unavailable",
    )
    assert kinds(response) == ["partial", "partial"]


def test_auth_methods_order(config_dir: Path, clock: FakeClock) -> None:
    store_session(config_dir)
    env = {"PERPLEXITY_COOKIES": f"  {COOKIES}  ", "PERPLEXITY_API_KEY": KEY, "OPENROUTER_API_KEY": OR_KEY}
    methods, expired = auth_methods(context(env, config_dir, clock), NOW)
    assert not expired
    assert [(m.kind, m.secret) for m in methods] == [
        ("cookies", COOKIES),
        ("session", SESSION),
        ("api_key", KEY),
        ("openrouter", OR_KEY),
    ]
    assert all(m.secret not in repr(m) for m in methods)
    assert methods[0].secrets == (COOKIES, "visitor-77aa01", "cookie-session-5e6f7a8b9c")
    # Nothing configured: anonymous only for the provider chosen explicitly.
    assert auth_methods(context({}, config_dir / "empty", clock, explicit=True), NOW) == ([Auth("anonymous")], False)
    with pytest.raises(MissingCredentialError):
        auth_methods(context({}, config_dir / "empty", clock), NOW)


CATEGORY_NEWS = (
    'category="news" not applied: Perplexity\'s search modes only cover publication (academic) and financial report '
    "(sec)"
)


def test_the_plan_holds_every_method_with_its_request_and_notices(config_dir: Path, clock: FakeClock) -> None:
    store_session(config_dir)
    env = {"PERPLEXITY_COOKIES": COOKIES, "PERPLEXITY_API_KEY": KEY, "OPENROUTER_API_KEY": OR_KEY}
    params = SearchParams(QUERY, max_tokens=100, category="news")
    plan = PROVIDER.plan(params, context(env, config_dir, clock))
    assert isinstance(plan.state, Methods) and not plan.state.session_expired
    methods = plan.state.methods
    assert [(m.auth.kind, m.request.url) for m in methods] == [
        ("cookies", "https://www.perplexity.ai/rest/sse/perplexity_ask"),
        ("session", "https://www.perplexity.ai/rest/sse/perplexity_ask"),
        ("api_key", "https://api.perplexity.ai/chat/completions"),
        ("openrouter", "https://openrouter.ai/api/v1/chat/completions"),
    ]
    every_secret = (COOKIES, "visitor-77aa01", "cookie-session-5e6f7a8b9c", SESSION, KEY, OR_KEY)
    assert all(m.request.secrets == every_secret for m in methods)  # any error text is redacted of them all
    ask = "not applied: Perplexity's ask endpoint (used with {}) does not support it"
    assert [[n.message for n in m.notices] for m in methods] == [
        [f"max_tokens=100 {ask.format('PERPLEXITY_COOKIES')}", f'category="news" {ask.format("PERPLEXITY_COOKIES")}'],
        [f"max_tokens=100 {ask.format('the stored session')}", f'category="news" {ask.format("the stored session")}'],
        [CATEGORY_NEWS],
        [CATEGORY_NEWS],
    ]
    assert methods[2].notices is methods[3].notices  # decided once for both key methods
    assert plan.notices == []  # the serving method's notices travel with the result


@pytest.mark.parametrize(
    ("credential", "used"),
    [
        ({"access_token": jwt(NOW.timestamp() + 301)}, True),
        ({"access_token": jwt(NOW.timestamp() + 300)}, False),  # within the 5-minute margin
        ({"access_token": jwt(NOW.timestamp() - 10)}, False),
        ({"access_token": jwt(None)}, True),  # no exp: Perplexity sessions usually never expire
        ({"access_token": "opaque-session-token-1234"}, True),
        ({"access_token": jwt(None), "expires_at": NOW.timestamp() - 1}, False),
        ({"access_token": jwt(NOW.timestamp() - 10), "expires_at": NOW.timestamp() + 3600}, True),
    ],
)
async def test_a_session_about_to_expire_is_skipped(
    pplx: FakePerplexity,
    keyed: dict[str, str],
    config_dir: Path,
    clock: FakeClock,
    credential: dict[str, Any],
    used: bool,
) -> None:
    CredentialStore(config_dir / "agent.db").set("perplexity", "oauth", credential)
    response = await search(keyed, clock)
    assert response.ok
    assert pplx.requests[0].path == (ASK_PATH if used else "/chat/completions")
    assert response.auth_mode == ("oauth" if used else "api_key")
    expired = (
        "the stored Perplexity session has expired; searched with the API key instead "
        "(log in again with `websearch auth set perplexity`)"
    )
    assert (expired in messages(response)) is not used  # a skipped session is never silent
    assert set(kinds(response)) <= {"partial"}


async def test_an_expired_session_alone_says_log_in_again(
    pplx: FakePerplexity, base: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    store_session(config_dir, jwt(NOW.timestamp() - 60))
    response = await search(base, clock)
    assert response.error == (
        "Perplexity session expired; log in again: set PERPLEXITY_COOKIES, PERPLEXITY_API_KEY or PPLX_API_KEY, "
        "or run `websearch auth set perplexity`"
    )
    assert pplx.requests == []  # never anonymous when a login is configured


def test_missing_credential_message(config_dir: Path, clock: FakeClock) -> None:
    ctx = context({"PERPLEXITY_COOKIES": "   "}, config_dir, clock)
    with pytest.raises(MissingCredentialError) as info:
        PROVIDER.plan(SearchParams("q"), ctx)
    assert info.value.message == (
        "Perplexity needs a login or an API key: set PERPLEXITY_COOKIES, PERPLEXITY_API_KEY or PPLX_API_KEY, "
        "or run `websearch auth set perplexity`"
    )
    assert info.value.provider == "perplexity"


def test_blank_cookies_chosen_explicitly_ask_anonymously(config_dir: Path, clock: FakeClock) -> None:
    """A blank PERPLEXITY_COOKIES is no login: the explicitly chosen provider asks without one
    (it used to fail, because availability counted the blank variable as a login)."""
    plan = PROVIDER.plan(SearchParams("q"), context({"PERPLEXITY_COOKIES": "   "}, config_dir, clock, explicit=True))
    assert [m.auth for m in plan.state.methods] == [Auth("anonymous")]


def test_availability(env: dict[str, str], config_dir: Path) -> None:
    def status(env: dict[str, str]) -> bool:
        return next(s for s in WebSearch(engine=False, env=env).provider_status() if s.id == "perplexity").available

    assert not status(env)
    assert not status({**env, "OPENROUTER_API_KEY": OR_KEY})  # OpenRouter alone is explicit-only
    for name in ("PERPLEXITY_COOKIES", "PERPLEXITY_API_KEY", "PPLX_API_KEY"):
        assert status({**env, name: "value-123456"}), name
        assert not status({**env, name: ""}), name
    store = CredentialStore(config_dir / "agent.db")
    store.set("perplexity", "api_key", {"api_key": KEY})
    assert status(env)
    store.set("perplexity", "oauth", {"access_token": SESSION})
    assert status(env)
    reason = next(
        s
        for s in WebSearch(engine=False, env={**env, "WEBSEARCH_CONFIG_DIR": str(config_dir / "x")}).provider_status()
        if s.id == "perplexity"
    ).reason
    assert reason == (
        "set PERPLEXITY_COOKIES or set PERPLEXITY_API_KEY or set PPLX_API_KEY or run `websearch auth set perplexity`"
    )


async def test_auto_chain_skips_perplexity_with_only_an_openrouter_key(
    pplx: FakePerplexity, base: dict[str, str], clock: FakeClock
) -> None:
    async with make_client(env={**base, "OPENROUTER_API_KEY": OR_KEY}, clock=clock) as ws:
        response = await ws.asearch(QUERY)
    assert response.provider == "duckduckgo" and pplx.requests == []
    explicit = await search({**base, "OPENROUTER_API_KEY": OR_KEY}, clock)
    assert explicit.auth_mode == "api_key" and pplx.last.path == "/api/v1/chat/completions"


async def test_auto_chain_uses_perplexity_first_when_configured(
    pplx: FakePerplexity, keyed: dict[str, str], clock: FakeClock
) -> None:
    async with make_client(env=keyed, clock=clock) as ws:
        response = await ws.asearch(QUERY)
    assert response.provider == "perplexity" and response.answer == ANSWER


async def test_stored_credential_is_sent(
    pplx: FakePerplexity, base: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    CredentialStore(config_dir / "agent.db").set("perplexity", "api_key", {"api_key": KEY})
    async with make_client(env=base, clock=clock) as ws:
        response = await ws.asearch(QUERY)  # the stored key admits it to the auto chain
    assert response.provider == "perplexity" and pplx.last.headers["authorization"] == f"Bearer {KEY}"


# -- ask mode ---------------------------------------------------------------------------------


def ask_params(**changes: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "query_str": QUERY,
        "search_focus": "internet",
        "mode": "copilot",
        "model_preference": "experimental",
        "sources": ["web"],
        "attachments": [],
        "version": "2.18",
        "language": "en-US",
        "timezone": "UTC",
        "search_recency_filter": None,
        "is_incognito": True,
        "use_schematized_api": True,
        "skip_search_enabled": True,
    }
    return params | changes


def sent_ask(body: dict[str, Any]) -> dict[str, Any]:
    """The ask body with its random uuids checked and removed."""
    params = dict(body["params"])
    front, context_id = params.pop("frontend_uuid"), params.pop("frontend_context_uuid")
    assert uuid.UUID(front) != uuid.UUID(context_id)
    return {**body, "params": params}


async def test_session_token_request_and_exact_response(
    pplx: FakePerplexity, keyed: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    store_session(config_dir)
    response = await search(keyed, clock)
    req = pplx.last
    assert (req.method, req.path, len(pplx.requests)) == ("POST", ASK_PATH, 1)
    assert {k: v for k, v in req.headers.items() if k not in ("host", "accept-encoding", "content-length")} == {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "origin": "https://www.perplexity.ai",
        "referer": "https://www.perplexity.ai/",
        "user-agent": APP_USER_AGENT,
        "x-request-id": req.headers["x-request-id"],
        "cookie": f"__Secure-next-auth.session-token={SESSION}",
        "x-app-apiclient": "default",
        "x-app-apiversion": "2.18",
        "x-perplexity-request-reason": "submit",
    }
    uuid.UUID(req.headers["x-request-id"])
    assert sent_ask(req.json()) == {"query_str": QUERY, "params": ask_params()}  # the bare query: no system prompt
    expected_sources = tuple(
        SearchSource(
            title=r["title"],
            url=r["url"],
            snippet=r["snippet"],
            published_date=r["date"],
            age_seconds=age(r["date"]) if r["date"] else None,
        )
        for r in search_results(8, "quic")
    )
    assert response == SearchResponse(
        provider="perplexity",
        query=QUERY,
        answer=ANSWER,
        sources=expected_sources,
        model="pplx_pro",
        request_id="ask-0001",
        auth_mode="oauth",
        attempts=(Attempt("perplexity", None, None, 0.0),),
    )
    assert expected_sources[1].age_seconds == 28 * 86400 + 12 * 3600  # 2026-11-02


async def test_cookies_come_first_and_report_oauth(
    pplx: FakePerplexity, keyed: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    store_session(config_dir)
    response = await search({**keyed, "PERPLEXITY_COOKIES": COOKIES}, clock)
    assert len(pplx.requests) == 1 and pplx.last.headers["cookie"] == COOKIES
    assert "authorization" not in pplx.last.headers
    assert response.auth_mode == "oauth" and response.answer == ANSWER


async def test_ask_mode_ignores_breadth_and_sampling_and_says_so(
    pplx: FakePerplexity, base: dict[str, str], clock: FakeClock
) -> None:
    kwargs = {"limit": 2, "num_search_results": 9, "max_tokens": 100, "temperature": 0.5, "recency": "week"}
    response = await search({**base, "PERPLEXITY_COOKIES": COOKIES}, clock, **kwargs)
    assert sent_ask(pplx.last.json())["params"] == ask_params(search_recency_filter="week")
    assert len(response.sources) == 2
    assert messages(response) == tuple(
        f"{name}={value} not applied: Perplexity's ask endpoint (used with PERPLEXITY_COOKIES) does not support it"
        for name, value in (("num_search_results", 9), ("max_tokens", 100), ("temperature", 0.5))
    )


@pytest.mark.parametrize("recency", ["day", "week", "month", "year"])
async def test_ask_recency(pplx: FakePerplexity, base: dict[str, str], clock: FakeClock, recency: str) -> None:
    response = await search({**base, "PERPLEXITY_COOKIES": COOKIES}, clock, recency=recency)
    assert sent_ask(pplx.last.json())["params"]["search_recency_filter"] == recency
    assert messages(response) == ()


async def test_anonymous_only_when_explicit_and_nothing_is_configured(
    pplx: FakePerplexity, base: dict[str, str], clock: FakeClock
) -> None:
    response = await search(base, clock)
    req = pplx.last
    assert req.path == ASK_PATH
    assert req.headers["user-agent"] == BROWSER_USER_AGENT and BROWSER_USER_AGENT.startswith("Mozilla/5.0")
    for name in ("cookie", "authorization", "x-app-apiclient", "x-app-apiversion", "x-perplexity-request-reason"):
        assert name not in req.headers
    assert sent_ask(req.json())["params"] == ask_params(send_back_text_in_streaming_api=True, source="default")
    assert response.answer == ANSWER and response.auth_mode == "anonymous"
    assert (response.model, response.request_id) == ("turbo", "req-anon")
    assert [s.url for s in response.sources] == [r["url"] for r in search_results(8, "quic")]
    assert response.sources[0].title == "Quic explained, part 1"
    async with make_client(env=base, clock=clock) as ws:
        auto = await ws.asearch(QUERY)
    assert auto.provider == "duckduckgo" and len(pplx.requests) == 1


async def test_ask_stream_error_event(pplx: FakePerplexity, base: dict[str, str], clock: FakeClock) -> None:
    pplx.enqueue(
        Reply(
            200,
            chunks=sse(
                {"status": "PENDING", "blocks": [], "uuid": "u1"},
                {"error_code": "RATE_LIMITED", "error_message": "Too many requests", "status": "FAILED"},
            ),
        )
    )
    response = await search({**base, "PERPLEXITY_COOKIES": COOKIES}, clock)
    assert response.error == "Perplexity ask API error (429): Too many requests (RATE_LIMITED)"
    assert response.attempts == (Attempt("perplexity", 429, response.error, 0.0, "rate_limited"),)


async def test_ask_stream_error_event_without_a_known_code(
    pplx: FakePerplexity, base: dict[str, str], clock: FakeClock
) -> None:
    pplx.enqueue(Reply(200, chunks=sse({"error_code": "QUERY_BLOCKED", "error_message": "Query not allowed"})))
    response = await search({**base, "PERPLEXITY_COOKIES": COOKIES}, clock)
    assert response.error == "Perplexity ask API error (400): Query not allowed (QUERY_BLOCKED)"
    assert response.attempts == (Attempt("perplexity", 400, response.error, 0.0, "rejected"),)


@pytest.mark.parametrize(
    ("reply", "status", "kind", "message"),
    [
        (Reply(200, chunks=ask_chunks(ANSWER, search_results(2))[:3]), 502, "invalid_response", ENDED),
        (
            Reply(500, "<html>Internal Server Error</html>", content_type="text/html"),
            500,
            "unavailable",
            "Perplexity ask API error (500): <html>Internal Server Error</html>",
        ),
        (
            Reply(403, "<html>Just a moment...</html>", content_type="text/html"),
            403,
            "auth",
            AUTH_FAILED.format(403),
        ),
        (
            Reply(429, {"detail": "Too many requests"}, headers={"Retry-After": "5"}),
            429,
            "rate_limited",
            "Perplexity ask API error (429): Too many requests; retry after 5 s",
        ),
        (
            Reply(400, {"detail": "query_str is required"}),
            400,
            "rejected",
            "Perplexity ask API error (400): query_str is required",
        ),
        (
            Reply(200, chunks=sse({"status": "PENDING"}, "not json")),
            502,
            "invalid_response",
            "Perplexity sent a stream event that is not JSON",
        ),
    ],
)
async def test_ask_errors(
    pplx: FakePerplexity, base: dict[str, str], clock: FakeClock, reply: Reply, status: int, kind: str, message: str
) -> None:
    pplx.enqueue(reply)
    response = await search({**base, "PERPLEXITY_COOKIES": COOKIES}, clock)
    assert response.error == message
    (attempt,) = response.attempts
    assert (attempt.provider, attempt.status, attempt.error, attempt.error_kind) == (
        "perplexity",
        status,
        message,
        kind,
    )


async def test_ask_stream_cut_mid_event(pplx: FakePerplexity, base: dict[str, str], clock: FakeClock) -> None:
    chunks = ask_chunks(ANSWER, search_results(2))
    pplx.enqueue(Reply(200, chunks=[*chunks[:3], chunks[3][:40]], cut=True))
    response = await search({**base, "PERPLEXITY_COOKIES": COOKIES}, clock)
    assert response.error is not None and response.error.startswith("Perplexity request failed: ")
    assert response.answer is None and response.sources == ()
    assert response.attempts[0].error_kind == "connection"


# -- ask mode: the snapshot rules, pure -------------------------------------------------------


def test_markdown_chunks_merge_by_offset_and_block() -> None:
    snap: dict[str, Any] = {"blocks": []}
    for event in (
        {
            "blocks": [
                {"intended_usage": "ask_text", "markdown_block": {"chunks": ["A", "b"], "chunk_starting_offset": 0}},
                {
                    "intended_usage": "web_results",
                    "web_result_block": {"web_results": [{"name": "N", "url": "https://n.example"}]},
                },
                {"markdown_block": {"chunks": ["dropped: no intended_usage"]}},
            ],
            "sources_list": [{"title": "S", "url": "https://s.example"}],
        },
        {
            "blocks": [
                {"intended_usage": "ask_text", "markdown_block": {"chunks": ["B", "C"], "chunk_starting_offset": 1}}
            ],
            "status": "PENDING",
        },
        {"status": "COMPLETED", "blocks": []},
    ):
        snap = merge_snapshot(snap, event)
    assert snapshot_answer(snap) == "ABC"
    assert [b["intended_usage"] for b in snap["blocks"]] == ["ask_text", "web_results"]
    assert snap["status"] == "COMPLETED" and snap["sources_list"] == [{"title": "S", "url": "https://s.example"}]
    assert snapshot_sources(snap, NOW) == [SearchSource(title="N", url="https://n.example")]
    snap = merge_snapshot(
        snap, {"blocks": [{"intended_usage": "web_results", "web_result_block": {"web_results": []}}]}
    )
    assert snapshot_sources(snap, NOW) == [SearchSource(title="S", url="https://s.example")]


def test_answer_precedence() -> None:
    md = {"intended_usage": "answer_markdown", "markdown_block": {"answer": "from markdown"}}
    ask = {"intended_usage": "ask_text", "markdown_block": {"chunks": ["from ", "ask_text"]}}
    empty = {"intended_usage": "markdown_x", "markdown_block": {"answer": ""}}
    assert snapshot_answer({"blocks": [ask, md]}) == "from markdown"
    assert snapshot_answer({"blocks": [empty, ask]}) == "from ask_text"
    assert snapshot_answer({"blocks": [{"intended_usage": "plan"}], "text": "plain"}) == "plain"
    assert snapshot_answer({"blocks": [], "text": '{"answer": "payload"}'}) == "payload"


def test_text_payload_forms() -> None:
    inner = {"answer": "plain answer", "structured_answer": [{"type": "markdown", "chunks": ["struc", "tured"]}]}
    steps = [
        {"step_type": "INITIAL_QUERY", "content": {"query": "q"}},
        {"step_type": "FINAL", "content": {"answer": json.dumps(inner)}},
    ]
    assert text_answer(json.dumps(steps)) == "structured"
    assert text_answer(json.dumps({"chunks": ["a", "b"], "answer": "x"})) == "ab"
    assert text_answer(json.dumps([{"content": {"answer": "not json"}}])) == "not json"
    assert text_answer("just text") == "just text"
    sources = snapshot_sources(
        {
            "text": json.dumps(
                [
                    {
                        "content": {
                            "answer": json.dumps(
                                {
                                    "web_results": [
                                        {"title": "T", "url": "https://t.example", "timestamp": "2026-11-29T12:00:00Z"},
                                        {"name": "no url"},
                                    ]
                                }
                            )
                        }
                    }
                ]
            )
        },
        NOW,
    )
    assert sources == [SearchSource("T", "https://t.example", None, "2026-11-29T12:00:00Z", 86400)]


def test_parse_events_for_the_ask_stream(config_dir: Path, clock: FakeClock) -> None:
    plan = PROVIDER.plan(SearchParams("q"), context({}, config_dir, clock, explicit=True))
    text = b"".join(anonymous_chunks("Anon.", search_results(1))).decode()
    response = parse_events(iter_sse(text), plan, Auth("anonymous"), "fallback-id")
    assert (response.answer, response.auth_mode, response.request_id) == ("Anon.", "anonymous", "req-anon")
    no_uuid = sse({"final": True, "blocks": [{"intended_usage": "ask_text", "markdown_block": {"answer": "x"}}]})
    parsed = parse_events(iter_sse(b"".join(no_uuid).decode()), plan, Auth("session"), "xrid")
    assert (parsed.answer, parsed.request_id, parsed.model) == ("x", "xrid", None)
    with pytest.raises(InvalidResponse, match="stream ended before its last event"):
        parse_events(iter_sse(text.split("\n\n")[0] + "\n\n"), plan, Auth("anonymous"))


@pytest.mark.parametrize(
    ("tz", "expected"),
    [
        ("Europe/Paris", "Europe/Paris"),
        (":America/New_York", "America/New_York"),
        ("UTC", "UTC"),
        ("EST5EDT,M3.2.0", "UTC"),
        ("", "UTC"),
    ],
)
def test_timezone_comes_from_tz(config_dir: Path, clock: FakeClock, tz: str, expected: str) -> None:
    request = build_ask_request(SearchParams("q"), context({"TZ": tz}, config_dir, clock), Auth("cookies", COOKIES))
    assert request.json["params"]["timezone"] == expected
    assert request.secrets == (COOKIES, "visitor-77aa01", "cookie-session-5e6f7a8b9c")


# -- secrets ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        Reply(500, f"internal error for key {KEY}"),
        Reply(401, {"error": {"message": f"Invalid API key {KEY}", "type": "invalid_api_key", "code": 401}}),
        Reply(400, {"error": {"message": f"bad header Authorization: Bearer {KEY}", "code": 400}}),
        Reply(
            200, chunks=[*FIRST, f'data: {{"error": {{"message": "key {KEY} over quota", "code": 429}}}}\n\n'.encode()]
        ),
        Reply(200, chunks=[*FIRST, f'data: {{"error": {{"message": "boom {KEY}", "code": 500}}}}\n\n'.encode()]),
        Reply(200, f"not json {KEY}"),
    ],
)
async def test_api_key_never_leaks_from_error_paths(
    pplx: FakePerplexity, keyed: dict[str, str], clock: FakeClock, reply: Reply
) -> None:
    pplx.enqueue(reply)
    response = await search(keyed, clock)
    assert response.error
    for text in (response.error, repr(response.attempts), repr(response), str(response.to_dict())):
        assert KEY not in text


@pytest.mark.parametrize(
    "reply",
    [
        Reply(500, f"bad cookie {COOKIES} / session {SESSION}"),
        Reply(500, {"detail": f"session cookie-session-5e6f7a8b9c and {SESSION} rejected"}),
        Reply(200, chunks=sse({"error_code": "AUTH", "error_message": f"token {SESSION} / cookie-session-5e6f7a8b9c"})),
    ],
)
async def test_cookies_and_session_never_leak(
    pplx: FakePerplexity, base: dict[str, str], config_dir: Path, clock: FakeClock, reply: Reply
) -> None:
    store_session(config_dir)
    pplx.enqueue(reply, reply)
    response = await search({**base, "PERPLEXITY_COOKIES": COOKIES}, clock)
    assert response.error and len(pplx.requests) == 2
    for text in (response.error, repr(response.attempts), repr(response), str(response.to_dict())):
        for secret in (COOKIES, SESSION, "cookie-session-5e6f7a8b9c"):
            assert secret not in text


async def test_fall_through_notices_never_leak(pplx: FakePerplexity, keyed: dict[str, str], clock: FakeClock) -> None:
    pplx.enqueue(Reply(500, f"cookie {COOKIES} rejected"))
    response = await search({**keyed, "PERPLEXITY_COOKIES": COOKIES}, clock)
    assert response.ok and len(messages(response)) == 1
    assert "cookie-session-5e6f7a8b9c" not in repr(response) and "visitor-77aa01" not in repr(response)


# -- cancellation -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["api_key", "cookies"])
async def test_cancelling_mid_stream_closes_it_promptly(
    pplx: FakePerplexity, base: dict[str, str], clock: FakeClock, mode: str
) -> None:
    first = chat_chunks()[:1] if mode == "api_key" else ask_chunks(ANSWER, search_results(1))[:1]
    pplx.enqueue(Reply(200, chunks=first + [b": keep-alive\n\n"] * 400, chunk_delay=0.05))
    env = {**base, "PERPLEXITY_API_KEY": KEY} if mode == "api_key" else {**base, "PERPLEXITY_COOKIES": COOKIES}
    async with make_client(env=env, clock=clock) as ws:
        task = asyncio.create_task(ws.asearch(QUERY, provider="perplexity"))
        await eventually(lambda: pplx.requests)
        await asyncio.sleep(0.15)  # the first event has arrived; the stream is open
        assert not task.done()
        task.cancel()
        started = asyncio.get_running_loop().time()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 1)
        assert asyncio.get_running_loop().time() - started < 0.5
        await eventually(lambda: pplx.disconnects)
        assert pplx.disconnects == 1  # the fake saw the connection close
        assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


# -- the CLI ----------------------------------------------------------------------------------


def test_cli_summary_layout(pplx: FakePerplexity, env: dict[str, str]) -> None:
    results = [
        {
            "title": "RFC 9000: QUIC",
            "url": RFC,
            "date": None,
            "snippet": "QUIC: A UDP-Based Multiplexed and Secure Transport",
        },
        {"title": "The road to QUIC", "url": CLOUDFLARE, "date": None, "snippet": "QUIC is a new transport."},
        {"title": "HTTP/3 explained", "url": "https://http3-explained.haxx.se/", "date": None, "snippet": "h3"},
    ]
    pplx.enqueue(Reply(200, chunks=chat_chunks("QUIC is a UDP-based transport [1][2].", results, related=RELATED[:2])))
    proc = run_cli(
        ["search", "quic", "--provider", "perplexity", "--format", "summary", "--limit", "2"],
        {**env, **pplx.env, "PERPLEXITY_API_KEY": KEY},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout == (
        "QUIC is a UDP-based transport [1][2].\n"
        "\n## Sources\n2 sources\n"
        f"[1] RFC 9000: QUIC\n    {RFC}\n    QUIC: A UDP-Based Multiplexed and Secure Transport\n"
        f"[2] The road to QUIC\n    {CLOUDFLARE}\n    QUIC is a new transport.\n"
        "\n## Citations\n3 citations\n"
        f"[1] RFC 9000: QUIC\n    {RFC}\n"
        f"[2] The road to QUIC\n    {CLOUDFLARE}\n"
        "[3] HTTP/3 explained\n    https://http3-explained.haxx.se/\n"
        "\n## Related\n2 questions\n- What is 0-RTT in QUIC?\n- How does HTTP/3 use QUIC?\n"
    )
    assert "Search queries:" not in proc.stdout  # Perplexity reports none (spec: answer, sources, citations, usage...)
    assert pplx.last.json()["num_search_results"] == 20


# -- the richer parameters --------------------------------------------------------------------

WHOLE_DAYS = "applied as whole days ({}): Perplexity's date filters take dates only"


@pytest.mark.parametrize(
    ("kwargs", "changes", "notices"),
    [
        (
            {"start_published_date": "2026-01-15", "end_published_date": "2026-02-01"},
            {"search_after_date_filter": "01/15/2026", "search_before_date_filter": "02/01/2026"},
            (),
        ),
        (
            {"recency": "week", "recency_days": 3},
            {"search_after_date_filter": "11/27/2026"},
            ('recency="week" not applied: recency_days takes precedence',),
        ),
        (
            {"recency": "week", "end_published_date": "2026-11-29"},
            {"search_after_date_filter": "11/23/2026", "search_before_date_filter": "11/29/2026"},
            (),
        ),
        (
            {"recency_hours": 6},
            {"search_after_date_filter": "11/30/2026"},
            ("recency_hours=6 " + WHOLE_DAYS.format("search_after_date_filter=11/30/2026"),),
        ),
        (
            {"end_published_date": "2026-11-29T18:00:00Z"},
            {"search_before_date_filter": "11/29/2026"},
            ('end_published_date="2026-11-29T18:00:00Z" ' + WHOLE_DAYS.format("search_before_date_filter=11/29/2026"),),
        ),
        ({"include_domains": ["docs.rs"], "exclude_domains": ["spam.org"]}, {"search_domain_filter": ["docs.rs"]}, ()),
        ({"exclude_domains": ["spam.org", "ads.org"]}, {"search_domain_filter": ["-spam.org", "-ads.org"]}, ()),
        (
            {"include_domains": ["rust-lang.org"], "exclude_domains": ["forum.rust-lang.org", "x.org"]},
            {"search_domain_filter": ["rust-lang.org"]},
            (
                'exclude_domains=["forum.rust-lang.org", "x.org"] dropped: Perplexity\'s search_domain_filter cannot mix '
                "allowed and denied domains, so only the allow list is sent, which does not exclude forum.rust-lang.org",
            ),
        ),
        (
            {"category": "research paper"},
            {"search_mode": "academic"},
            (
                'category="research paper" searched as category="publication": it was renamed',
                'category="research paper" applied as search_mode=academic: Perplexity has search modes, not categories',
            ),
        ),
        (
            {"category": "financial report"},
            {"search_mode": "sec"},
            ('category="financial report" applied as search_mode=sec: Perplexity has search modes, not categories',),
        ),
        (
            {"category": "news"},
            {},
            (CATEGORY_NEWS,),
        ),
    ],
)
async def test_richer_api_request(
    pplx: FakePerplexity,
    keyed: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, Any],
    changes: dict[str, Any],
    notices: tuple[str, ...],
) -> None:
    response = await search(keyed, clock, **kwargs)
    assert response.ok and messages(response) == notices
    assert pplx.last.json() == chat_body(**changes)


async def test_richer_parameters_are_not_applied_in_ask_mode(
    pplx: FakePerplexity, base: dict[str, str], clock: FakeClock
) -> None:
    response = await search(
        {**base, "PERPLEXITY_COOKIES": COOKIES},
        clock,
        recency="day",
        recency_days=3,
        include_domains=["docs.rs"],
        category="news",
    )
    assert response.ok and response.auth_mode == "oauth"
    params = pplx.last.json()["params"]
    assert params["search_recency_filter"] == "day"
    assert not {"search_domain_filter", "search_after_date_filter", "search_mode"} & set(params)
    ask = "not applied: Perplexity's ask endpoint (used with PERPLEXITY_COOKIES) does not support it"
    assert messages(response) == (
        f"recency_days=3 {ask}",
        f'category="news" {ask}',
        f'include_domains=["docs.rs"] {ask}',
        'include_domains=["docs.rs"] enforced: 8 results outside these hosts removed',
    )


async def test_the_serving_methods_notices_are_shown(
    pplx: FakePerplexity, keyed: dict[str, str], clock: FakeClock
) -> None:
    """The cookies fail, the API key serves: its notices (not the ask endpoint's) come with the answer."""
    pplx.enqueue(Reply(500, {"detail": "ask backend unavailable"}))
    response = await search({**keyed, "PERPLEXITY_COOKIES": COOKIES}, clock, category="news", max_tokens=100)
    assert [r.path for r in pplx.requests] == [ASK_PATH, "/chat/completions"]
    assert response.ok and response.auth_mode == "api_key"
    assert messages(response) == (
        "Perplexity with PERPLEXITY_COOKIES failed; fell through to the next auth method: "
        "Perplexity ask API error (500): ask backend unavailable",
        CATEGORY_NEWS,
    )
    assert kinds(response) == ["partial", "not_applied"]
