"""OpenAI Codex against a loopback fake of the ChatGPT Codex backend and the OpenAI token endpoint."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import NOW, FakeClock, eventually, make_client, messages, provider_context, run_cli, search_once
from websearch import SearchParams, SearchResponse, SearchSource, SearchUsage
from websearch._core._credentials import CredentialStore
from websearch._http._sse import iter_sse
from websearch._providers._base import Plan
from websearch._providers._prompts import SYSTEM_PROMPT
from websearch._providers.codex import (
    CLIENT_ID,
    MODELS,
    PROVIDER,
    import_credentials,
    is_image_placeholder,
    parse_events,
    scrape_links,
)
from websearch.errors import ConfigError, NoResults
from websearch.providers import HttpResponse
from websearch.testing import Reply
from websearch.testing.codex import CODEX_PATH, TOKEN_PATH, FakeCodex, codex_events, make_jwt, sse_chunks, stream_reply

ACCOUNT = "acct-7d1f2c3b"
CLAIM = "https://api.openai.com/auth"
ACCESS = make_jwt({"exp": int(NOW.timestamp()) + 3600, CLAIM: {"chatgpt_account_id": ACCOUNT}})
REFRESH = "rt-codex-refresh-5f9a2e7c"
CITED = [(f"https://docs.example{i}.org/guide/{i}", f"Guide {i}") for i in range(1, 13)]


@pytest.fixture
def codex() -> Iterator[FakeCodex]:
    with FakeCodex(access_tokens={ACCESS}, refresh_tokens={REFRESH}, citations=CITED[:3]) as fake:
        yield fake


def store_login(config_dir: Path, cred_id: str = "codex", **overrides: Any) -> CredentialStore:
    store = CredentialStore(config_dir / "agent.db")
    data = {
        "access_token": ACCESS,
        "refresh_token": REFRESH,
        "expires_at": NOW.timestamp() + 3600,
        "account_id": ACCOUNT,
        **overrides,
    }
    store.set(cred_id, "oauth", {k: v for k, v in data.items() if v is not None})
    return store


@pytest.fixture
def cenv(env: dict[str, str], codex: FakeCodex, config_dir: Path) -> dict[str, str]:
    store_login(config_dir)
    return {**env, **codex.env}


async def search(env: dict[str, str], clock: FakeClock, query: str = "rust async", **kwargs: Any) -> SearchResponse:
    return await search_once("codex", env, query, clock, **kwargs)


def expected_body(query: str = "rust async", model: str = "gpt-5.5") -> dict[str, Any]:
    return {
        "model": model,
        "stream": True,
        "store": False,
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": query}]}],
        "tools": [{"type": "web_search", "search_context_size": "high"}],
        "tool_choice": {"type": "web_search"},
        "instructions": SYSTEM_PROMPT,
    }


def plan(config_dir: Path, params: SearchParams | None = None, **env: str) -> Plan:
    return PROVIDER.plan(params or SearchParams("q"), provider_context(config_dir, env))


def assert_no_secret(response: SearchResponse, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in (response.error or "")
        assert secret not in repr(response.attempts)
        assert secret not in repr(response)


# -- the request ------------------------------------------------------------------------------


async def test_default_request(codex: FakeCodex, cenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(cenv, clock)
    assert response.ok and messages(response) == ()
    req = codex.last
    assert (req.method, req.path, req.query) == ("POST", CODEX_PATH, ())
    assert req.headers["authorization"] == f"Bearer {ACCESS}"
    assert req.headers["chatgpt-account-id"] == ACCOUNT
    assert req.headers["openai-beta"] == "responses=experimental"
    assert req.headers["originator"] == "websearch"
    assert req.headers["user-agent"].startswith("websearch/")
    assert req.headers["accept"] == "text/event-stream"
    assert req.headers["content-type"] == "application/json"
    assert req.json() == expected_body()
    assert list(req.json()) == list(expected_body())


LOCAL = "{}={} applied as a local cap on sources: OpenAI has no result-count parameter"


@pytest.mark.parametrize(
    ("kwargs", "count", "notices"),
    [
        ({"limit": 2}, 2, (LOCAL.format("limit", 2),)),
        ({"num_search_results": 5}, 5, (LOCAL.format("num_search_results", 5),)),
        (
            {"limit": 2, "num_search_results": 5},
            5,
            ("limit=2 not applied: num_search_results=5 takes precedence", LOCAL.format("num_search_results", 5)),
        ),
        ({"limit": 5, "num_search_results": 5}, 5, (LOCAL.format("num_search_results", 5),)),
        ({"limit": 40}, 12, (LOCAL.format("limit", 40),)),
    ],
)
async def test_counts_are_a_local_cap_only(
    codex: FakeCodex,
    cenv: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, int],
    count: int,
    notices: tuple[str, ...],
) -> None:
    codex.citations = CITED
    response = await search(cenv, clock, **kwargs)
    assert codex.last.json() == expected_body()
    assert [s.url for s in response.sources] == [url for url, _ in CITED][:count]
    assert messages(response) == notices


@pytest.mark.parametrize("recency", ["day", "week", "month", "year"])
async def test_recency_is_not_sent(codex: FakeCodex, cenv: dict[str, str], clock: FakeClock, recency: str) -> None:
    response = await search(cenv, clock, recency=recency)
    assert codex.last.json() == expected_body()
    assert messages(response) == (f'recency="{recency}" not applied: OpenAI does not support it',)


async def test_max_tokens_and_temperature_are_not_sent(
    codex: FakeCodex, cenv: dict[str, str], clock: FakeClock
) -> None:
    response = await search(cenv, clock, max_tokens=500, temperature=0.3)
    assert codex.last.json() == expected_body()
    assert messages(response) == (
        "max_tokens=500 not applied: OpenAI does not support it",
        "temperature=0.3 not applied: OpenAI does not support it",
    )


# -- the parse --------------------------------------------------------------------------------


async def test_parsed_response(codex: FakeCodex, cenv: dict[str, str], clock: FakeClock) -> None:
    codex.answer = "QUIC runs over UDP and folds TLS 1.3 into its handshake [1]. See RFC 9000."
    codex.citations = [
        ("https://www.rfc-editor.org/rfc/rfc9000", "RFC 9000"),
        ("https://blog.example.com/quic", ""),
        ("https://www.rfc-editor.org/rfc/rfc9000", "RFC 9000 again"),
    ]
    response = await search(cenv, clock, "quic")
    assert response.answer == codex.answer
    assert response.sources == (
        SearchSource(title="RFC 9000", url="https://www.rfc-editor.org/rfc/rfc9000"),
        SearchSource(title="https://blog.example.com/quic", url="https://blog.example.com/quic"),
    )
    assert response.usage == SearchUsage(input_tokens=8123 - 1024, output_tokens=512, total_tokens=8635)
    assert (response.model, response.request_id, response.auth_mode) == (
        "gpt-5.5",
        "resp_68a1f0c2b7e48190a3c1d2e3f4a5b6c7",
        "oauth",
    )
    assert response.citations == () and response.related_questions == () and response.search_queries == ()


def test_plan_decides_models_login_and_body(config_dir: Path) -> None:
    store_login(config_dir, cred_id="openai-codex")
    planned = plan(config_dir, SearchParams("q", include_domains=["python.org"], limit=3))
    assert (planned.state.credential_id, planned.state.models, planned.limit) == ("openai-codex", MODELS, 3)
    assert planned.state.url == "https://chatgpt.com/backend-api/codex/responses"
    assert {"model": "m", **planned.state.body} == {
        **expected_body("q", "m"),
        "tools": [
            {"type": "web_search", "search_context_size": "high", "filters": {"allowed_domains": ["python.org"]}}
        ],
    }
    assert plan(config_dir, PI_CODEX_WEB_SEARCH_MODEL=" gpt-5 ").state.models == ("gpt-5",)
    assert plan(config_dir).limit is None


def test_parse_events_pure_on_bytes(config_dir: Path) -> None:
    stream = b"".join(
        sse_chunks(
            codex_events(
                "Codex answer",
                [("https://example.com/article", "Example Article")],
                reasoning=["Searched for the article."],
                model="gpt-5",
            )
        )
    )
    response = parse_events(iter_sse(stream.decode()), plan(config_dir))
    assert response.answer == "Searched for the article.\n\nCodex answer"  # reasoning summaries join the final parts
    assert response.sources == (SearchSource(title="Example Article", url="https://example.com/article"),)
    assert response.model == "gpt-5"


def test_spec_example_stream_with_done_sentinel(config_dir: Path) -> None:
    text = (
        'data: {"type":"response.output_text.delta","delta":"Codex "}\n\n'
        'data: {"type":"response.output_item.done","item":{"type":"message","content":[{"type":"output_text",'
        '"text":"Codex answer","annotations":[{"type":"url_citation","url":"https://example.com/article","title":"Example Article"}]}]}}\n\n'
        'data: {"type":"response.completed","response":{"id":"resp_1","model":"gpt-5.5","usage":{"input_tokens":12,'
        '"output_tokens":7,"total_tokens":19,"input_tokens_details":{"cached_tokens":2}}}}\n\n'
        "data: [DONE]\n\n"
    )
    response = parse_events(iter_sse(text), plan(config_dir))
    assert (response.answer, response.request_id, response.model) == ("Codex answer", "resp_1", "gpt-5.5")
    assert response.usage == SearchUsage(10, 7, 19)
    only_done = parse_events(
        iter_sse('data: {"type":"response.output_text.delta","delta":"Hi"}\n\ndata: [DONE]\n\n'), plan(config_dir)
    )
    assert (only_done.answer, only_done.usage, only_done.request_id) == ("Hi", None, None)


async def test_empty_answer_is_the_chains_204(codex: FakeCodex, cenv: dict[str, str], clock: FakeClock) -> None:
    codex.enqueue(stream_reply(codex_events("", [], deltas=[])))
    response = await search(cenv, clock)
    assert response.error == "OpenAI returned no renderable search content."
    assert response.attempts[0].status == 204


# -- the pages the search consulted (web_search_call action.sources) --------------------------


async def test_consulted_pages_follow_the_cited_sources(
    codex: FakeCodex, cenv: dict[str, str], clock: FakeClock
) -> None:
    codex.citations = [
        ("https://news.example.com/a?utm_source=openai", "Story A"),  # OpenAI tags the links it cites
        ("https://blog.example.org/b", "Post B"),
    ]
    codex.consulted = [
        "https://news.example.com/a",  # the cited page, untagged: the same source
        "https://docs.example.net/c",
        {"type": "api", "name": "oai-weather"},  # not a page
        "https://blog.example.org/b",
        "https://docs.example.net/c",
        "https://wiki.example.org/d",
    ]
    response = await search(cenv, clock)
    assert response.sources == (
        SearchSource("Story A", "https://news.example.com/a?utm_source=openai"),
        SearchSource("Post B", "https://blog.example.org/b"),
        SearchSource("https://docs.example.net/c", "https://docs.example.net/c"),
        SearchSource("https://wiki.example.org/d", "https://wiki.example.org/d"),
    )
    response = await search(cenv, clock, limit=3)
    assert [s.url for s in response.sources] == [
        "https://news.example.com/a?utm_source=openai",
        "https://blog.example.org/b",
        "https://docs.example.net/c",
    ]


def test_consulted_pages_follow_the_links_of_an_uncited_answer(config_dir: Path) -> None:
    events = codex_events("Read [the RFC](https://www.rfc-editor.org/rfc/rfc9000).", consulted=["https://quicwg.org/"])
    response = parse_events(iter_sse(b"".join(sse_chunks(events)).decode()), plan(config_dir))
    assert response.sources == (
        SearchSource("the RFC", "https://www.rfc-editor.org/rfc/rfc9000"),
        SearchSource("https://quicwg.org/", "https://quicwg.org/"),
    )
    image_only = codex_events("See attached image", consulted=["https://quicwg.org/"])
    response = parse_events(iter_sse(b"".join(sse_chunks(image_only)).decode()), plan(config_dir))
    assert (response.answer, [s.url for s in response.sources]) == (None, ["https://quicwg.org/"])


def test_entries_that_are_not_objects_are_skipped(config_dir: Path) -> None:
    junk: list[Any] = ["text", 7, None, ["nested"], True]
    message = {
        "type": "message",
        "content": [
            *junk,
            {
                "type": "output_text",
                "text": "Answer.",
                "annotations": [*junk, {"type": "url_citation", "url": "https://a.example/x", "title": 3}],
            },
        ],
    }
    search_call = {
        "type": "web_search_call",
        "action": {"type": "search", "sources": [*junk, {"type": "url", "url": 5}]},
    }
    reasoning = {"type": "reasoning", "summary": [*junk, {"type": "summary_text", "text": "Thought."}]}
    items = [message, search_call, reasoning, {"type": "web_search_call", "action": "search"}, *junk]
    events = [{"type": "response.output_item.done", "item": item} for item in items]
    events.append({"type": "response.completed", "response": {"id": "resp_1", "usage": ["junk"]}})
    response = parse_events(iter_sse(b"".join(sse_chunks(events)).decode()), plan(config_dir))
    assert response.answer == "Answer.\n\nThought."
    assert response.sources == (SearchSource("https://a.example/x", "https://a.example/x"),)
    assert (response.request_id, response.usage) == ("resp_1", None)


# -- image placeholders and the link-scraping fallback ----------------------------------------


def test_image_placeholder_rule() -> None:
    for text in (
        "See attached image.",
        "[see the attached image]",
        "  **Image above!**  ",
        "`see image below`",
        "(image below?)",
    ):
        assert is_image_placeholder(text), text
    for text in ("See attached image for details", "image", "An image above the fold."):
        assert not is_image_placeholder(text), text


def test_placeholder_final_text_prefers_the_streamed_text(config_dir: Path) -> None:
    events = iter_sse(
        b"".join(sse_chunks(codex_events("See attached image.", deltas=["Real streamed ", "answer."]))).decode()
    )
    assert parse_events(events, plan(config_dir)).answer == "Real streamed answer."


def test_image_only_answer_is_a_502(config_dir: Path) -> None:
    events = iter_sse(b"".join(sse_chunks(codex_events("[See attached image]", deltas=["see image above"]))).decode())
    with pytest.raises(NoResults, match=r"^Codex returned image-only response$") as err:
        parse_events(events, plan(config_dir))
    assert err.value.status == 502


def test_placeholder_with_annotations_keeps_sources_without_answer(config_dir: Path) -> None:
    events = iter_sse(b"".join(sse_chunks(codex_events("See attached image", [("https://a.example/x", "A")]))).decode())
    response = parse_events(events, plan(config_dir))
    assert response.answer is None
    assert response.sources == (SearchSource(title="A", url="https://a.example/x"),)


def test_scrape_links_rules() -> None:
    text = (
        "Per [the Wikipedia page](https://en.wikipedia.org/wiki/Rust_(programming_language)) and "
        "[docs](https://Docs.Rust-Lang.org/book/ch01.html), see https://blog.rust-lang.org/2025/09/18/Rust-1.90.0.html. "
        "Also (https://example.com/a_(b)), https://EXAMPLE.org, https://example.com/q?x=1;, "
        "again https://docs.rust-lang.org/book/ch01.html! and ftp://files.example.com/x, "
        "[broken](https://broken.example.com/x\n) [weird](javascript:alert(1)) 'https://quoted.example.com/p'"
    )
    assert scrape_links(text) == [
        SearchSource("the Wikipedia page", "https://en.wikipedia.org/wiki/Rust_(programming_language)"),
        SearchSource("docs", "https://docs.rust-lang.org/book/ch01.html"),
        SearchSource(
            "https://blog.rust-lang.org/2025/09/18/Rust-1.90.0.html",
            "https://blog.rust-lang.org/2025/09/18/Rust-1.90.0.html",
        ),
        SearchSource("https://example.com/a_(b)", "https://example.com/a_(b)"),
        SearchSource("https://example.org/", "https://example.org/"),
        SearchSource("https://example.com/q?x=1", "https://example.com/q?x=1"),
        SearchSource("https://broken.example.com/x", "https://broken.example.com/x"),
        SearchSource("https://quoted.example.com/p", "https://quoted.example.com/p"),
    ]


async def test_links_are_scraped_when_there_are_no_url_citations(
    codex: FakeCodex, cenv: dict[str, str], clock: FakeClock
) -> None:
    codex.citations = []
    codex.answer = "Read [the RFC](https://www.rfc-editor.org/rfc/rfc9000) and https://quicwg.org/."
    response = await search(cenv, clock, limit=1)
    assert response.sources == (SearchSource("the RFC", "https://www.rfc-editor.org/rfc/rfc9000"),)


# -- models -----------------------------------------------------------------------------------


async def test_unsupported_models_are_skipped_in_order(
    codex: FakeCodex, cenv: dict[str, str], clock: FakeClock
) -> None:
    codex.models = {"gpt-5"}
    response = await search(cenv, clock)
    assert [r.json()["model"] for r in codex.requests] == ["gpt-5.5", "gpt-5.4", "gpt-5-codex", "gpt-5"]
    assert response.ok and response.model == "gpt-5"


async def test_every_model_unsupported_reports_the_last(
    codex: FakeCodex, cenv: dict[str, str], clock: FakeClock
) -> None:
    codex.models = set()
    response = await search(cenv, clock)
    assert [r.json()["model"] for r in codex.requests] == list(MODELS)
    assert response.error == (
        "Codex API error (400): The 'gpt-5-codex-mini' model is not supported when using Codex with a ChatGPT account."
    )
    assert response.attempts[0].error_kind == "rejected"


async def test_pinned_model_is_tried_once(codex: FakeCodex, cenv: dict[str, str], clock: FakeClock) -> None:
    response = await search({**cenv, "PI_CODEX_WEB_SEARCH_MODEL": "  gpt-5.4 "}, clock)
    assert response.ok and [r.json()["model"] for r in codex.requests] == ["gpt-5.4"]
    codex.requests.clear()
    response = await search({**cenv, "PI_CODEX_WEB_SEARCH_MODEL": "gpt-4o"}, clock)
    assert len(codex.requests) == 1
    assert response.error is not None and "'gpt-4o' model is not supported" in response.error


async def test_other_400s_are_not_retried(codex: FakeCodex, cenv: dict[str, str], clock: FakeClock) -> None:
    codex.enqueue(
        Reply(
            400,
            {
                "error": {
                    "message": "Invalid value for 'input'.",
                    "type": "invalid_request_error",
                    "param": "input",
                    "code": "invalid_value",
                }
            },
        )
    )
    response = await search(cenv, clock)
    assert len(codex.requests) == 1
    assert response.error == "Codex API error (400): Invalid value for 'input'. (invalid_value)"
    assert response.attempts[0].error_kind == "rejected"


@pytest.mark.parametrize(
    ("status", "body", "variant"),
    [
        (400, {"detail": "The 'gpt-5.5' model is not supported when using Codex with a ChatGPT account."}, True),
        (400, {"error": {"message": "The requested model is not supported.", "type": "invalid_request_error"}}, True),
        (400, {"error": {"message": "Invalid value for 'input'.", "code": "invalid_value"}}, False),
        (400, "model is not supported", False),  # not the envelope's detail: the raw body never decides
        (401, {"error": {"message": "Token expired.", "code": "token_expired"}}, False),
    ],
)
def test_the_next_model_is_tried_on_the_envelopes_flag(
    config_dir: Path, status: int, body: object, variant: bool
) -> None:
    raw = (json.dumps(body) if not isinstance(body, str) else body).encode()
    assert PROVIDER.error(HttpResponse(status, {}, raw), plan(config_dir)).retry_variant is variant


# -- errors -----------------------------------------------------------------------------------


LOGIN_AGAIN = "Log in again with `websearch auth import codex` or `websearch auth set codex`."


@pytest.mark.parametrize(
    ("reply", "status", "kind", "error"),
    [
        (
            Reply(
                401,
                {
                    "error": {
                        "message": "Your authentication token has expired. Please try signing in again.",
                        "type": "invalid_request_error",
                        "code": "token_expired",
                    }
                },
            ),
            401,
            "auth",
            f"OpenAI authorization failed (401 token_expired). {LOGIN_AGAIN}",
        ),
        (
            Reply(403, {"detail": "You do not have access to this workspace."}),
            403,
            "auth",
            f"OpenAI authorization failed (403). {LOGIN_AGAIN}",
        ),
        (Reply(402, {"detail": "Payment required"}), 402, "quota", "codex: 402 credits exhausted: Payment required"),
        (
            Reply(
                429,
                {
                    "error": {
                        "type": "usage_limit_reached",
                        "message": "The usage limit has been reached",
                        "resets_in_seconds": 1800,
                    }
                },
                headers={"Retry-After": "1800"},
            ),
            429,
            "rate_limited",
            "Codex API error (429): The usage limit has been reached (usage_limit_reached); retry after 1800 s",
        ),
        (
            Reply(
                429,
                {
                    "error": {
                        "message": "You exceeded your current quota.",
                        "type": "insufficient_quota",
                        "code": "insufficient_quota",
                    }
                },
            ),
            429,
            "quota",
            "codex: credits exhausted (insufficient_quota): You exceeded your current quota.",
        ),
        (  # quota comes from a code, never from the prose: this 429 is a rate limit
            Reply(429, {"error": {"message": "Your quota is insufficient, slow down.", "type": "requests"}}),
            429,
            "rate_limited",
            "Codex API error (429): Your quota is insufficient, slow down. (requests)",
        ),
        (
            Reply(
                500, {"error": {"message": "An error occurred while processing your request.", "type": "server_error"}}
            ),
            500,
            "unavailable",
            "Codex API error (500): An error occurred while processing your request. (server_error)",
        ),
        (
            Reply(502, "<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html"),
            502,
            "unavailable",
            "Codex API error (502): <html><body><h1>502 Bad Gateway</h1></body></html>",
        ),
    ],
)
async def test_http_errors(
    codex: FakeCodex, cenv: dict[str, str], clock: FakeClock, reply: Reply, status: int, kind: str, error: str
) -> None:
    codex.enqueue(reply)
    response = await search(cenv, clock)
    assert response.error == error
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (status, kind)
    assert len(codex.requests) == 1
    assert_no_secret(response, ACCESS, REFRESH)


def test_retry_hint_from_header_or_body(config_dir: Path) -> None:
    body = json.dumps(
        {"error": {"type": "usage_limit_reached", "message": "limit", "resets_in_seconds": 1800}}
    ).encode()
    from_body = PROVIDER.error(HttpResponse(429, {}, body), plan(config_dir))
    assert (from_body.retry_after, from_body.kind) == (1800, "rate_limited")
    assert from_body.message == "Codex API error (429): limit (usage_limit_reached); retry after 1800 s"
    assert PROVIDER.error(HttpResponse(429, {"retry-after": "20"}, body), plan(config_dir)).retry_after == 20
    junk = json.dumps({"error": {"message": "limit", "resets_in_seconds": -5}}).encode()
    assert PROVIDER.error(HttpResponse(429, {}, junk), plan(config_dir)).retry_after is None


async def test_error_body_echoing_the_token_is_redacted(
    codex: FakeCodex, cenv: dict[str, str], clock: FakeClock
) -> None:
    codex.enqueue(Reply(500, {"detail": f"bad header Authorization: Bearer {ACCESS}"}))
    response = await search(cenv, clock)
    assert response.error == "Codex API error (500): bad header Authorization: Bearer [redacted]"
    assert_no_secret(response, ACCESS)


async def test_non_sse_200_body_is_an_incomplete_stream(
    codex: FakeCodex, cenv: dict[str, str], clock: FakeClock
) -> None:
    codex.enqueue(Reply(200, "<html>Just a moment...</html>", content_type="text/html"))
    response = await search(cenv, clock)
    assert response.error == "Codex stream ended before the response was complete"
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (500, "invalid_response")


async def test_stream_cut_mid_event_is_an_error(codex: FakeCodex, cenv: dict[str, str], clock: FakeClock) -> None:
    chunks = sse_chunks(codex_events("A long answer that will never finish."))
    half = chunks[10][: len(chunks[10]) // 2]
    codex.enqueue(Reply(200, chunks=[*chunks[:10], half], content_type="text/event-stream", cut=True))
    response = await search(cenv, clock)
    assert response.answer is None and response.sources == ()
    assert response.error is not None and response.error.startswith("OpenAI request failed:")
    assert response.attempts[0].error_kind == "connection"
    # the same stream closed cleanly but without its terminal event
    codex.enqueue(Reply(200, chunks=[*chunks[:10], half], content_type="text/event-stream"))
    response = await search(cenv, clock)
    assert response.error == "Codex stream ended before the response was complete"


@pytest.mark.parametrize(
    ("event", "kind", "error"),
    [
        (
            {"type": "error", "code": "server_error", "message": "The server had an error processing your request."},
            "unavailable",
            "Codex error (server_error): The server had an error processing your request.",
        ),
        (
            {"type": "error", "error": {"code": "context_length_exceeded", "message": "Input too long."}},
            "rejected",
            "Codex error (context_length_exceeded): Input too long.",
        ),
        (
            {"type": "error", "error": {"code": "insufficient_quota", "message": "You exceeded your current quota."}},
            "quota",
            "Codex error (insufficient_quota): You exceeded your current quota.",
        ),
        (
            {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down."},
            "rate_limited",
            "Codex error (rate_limit_exceeded): Slow down.",
        ),
        (
            {
                "type": "response.failed",
                "response": {
                    "id": "resp_x",
                    "status": "failed",
                    "error": {"code": "server_error", "message": "Web search failed."},
                },
            },
            "unavailable",
            "Codex request failed: Web search failed.",
        ),
        (
            {
                "type": "response.failed",
                "response": {"status": "failed", "error": {"code": "insufficient_quota", "message": "No credits."}},
            },
            "quota",
            "Codex request failed: No credits.",
        ),
    ],
)
async def test_sse_error_events(
    codex: FakeCodex, cenv: dict[str, str], clock: FakeClock, event: dict[str, Any], kind: str, error: str
) -> None:
    events = codex_events("partial answer")
    codex.enqueue(stream_reply([*events[:8], event, events[-1]]))
    response = await search(cenv, clock)
    assert response.error == error
    assert response.answer is None
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (500, kind)


@pytest.mark.parametrize(
    ("event", "error"),
    [
        (
            {"type": "error", "code": f"bad_{ACCESS}", "message": f"Token {ACCESS} was rejected."},
            "Codex error (bad_[redacted]): Token [redacted] was rejected.",
        ),
        (
            {"type": "response.failed", "response": {"error": {"code": "server_error", "message": f"Bearer {ACCESS}"}}},
            "Codex request failed: Bearer [redacted]",
        ),
    ],
)
async def test_sse_error_events_are_redacted(
    codex: FakeCodex, cenv: dict[str, str], clock: FakeClock, event: dict[str, Any], error: str
) -> None:
    codex.enqueue(stream_reply([*codex_events("partial answer")[:8], event]))
    response = await search(cenv, clock)
    assert response.error == error
    assert_no_secret(response, ACCESS)


async def test_cancelling_mid_stream_closes_it(codex: FakeCodex, cenv: dict[str, str], clock: FakeClock) -> None:
    events = codex_events("slow answer")
    codex.enqueue(
        Reply(
            200,
            chunks=sse_chunks(events[:6]) + [b": keep-alive\n\n"] * 400,
            chunk_delay=0.05,
            content_type="text/event-stream",
        )
    )
    async with make_client(env=cenv, clock=clock) as ws:
        task = asyncio.create_task(ws.asearch("q", provider="codex"))
        await eventually(lambda: codex.requests)
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 1)
    await eventually(lambda: codex.disconnects)
    assert codex.disconnects == 1
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


# -- credentials ------------------------------------------------------------------------------


async def test_missing_login(env: dict[str, str], codex: FakeCodex, clock: FakeClock) -> None:
    async with make_client(env={**env, **codex.env}, clock=clock) as ws:
        status = {s.id: s for s in ws.provider_status()}["codex"]
        response = await ws.asearch("q", provider="codex")
    assert not status.available and status.reason == "run `websearch auth set codex`"
    assert response.provider == "duckduckgo"  # not available, so the automatic chain ran
    assert messages(response)[0].startswith("provider codex was requested but is not available")
    assert codex.requests == []


async def test_login_without_refresh_or_account(
    env: dict[str, str], codex: FakeCodex, config_dir: Path, clock: FakeClock
) -> None:
    store_login(config_dir, access_token="opaque-token-without-claims", account_id=None)
    response = await search({**env, **codex.env}, clock)
    assert response.error == (
        "No Codex OAuth credentials found (the login has no ChatGPT account id): run `websearch auth "
        "import codex` or pipe an OAuth JSON object with account_id to `websearch auth set codex`"
    )
    assert codex.requests == []


async def test_account_id_from_the_jwt_and_the_openai_codex_id(
    env: dict[str, str], codex: FakeCodex, config_dir: Path, clock: FakeClock
) -> None:
    store_login(config_dir, cred_id="openai-codex", account_id=None)
    async with make_client(env={**env, **codex.env}, clock=clock) as ws:
        assert {s.id: s.available for s in ws.provider_status()}["codex"]
        response = await ws.asearch("q", provider="codex")
    assert response.ok
    assert codex.last.headers["chatgpt-account-id"] == ACCOUNT


async def test_expired_token_is_refreshed_and_written_back(
    env: dict[str, str], codex: FakeCodex, config_dir: Path, clock: FakeClock
) -> None:
    store = store_login(config_dir, expires_at=NOW.timestamp() - 10)
    response = await search({**env, **codex.env}, clock)
    assert response.ok
    token_req, search_req = codex.requests
    assert (token_req.method, token_req.path) == ("POST", TOKEN_PATH)
    assert token_req.headers["content-type"] == "application/json"
    assert token_req.json() == {
        "client_id": CLIENT_ID,
        "grant_type": "refresh_token",
        "refresh_token": REFRESH,
        "scope": "openid profile email",
    }
    fresh = codex.issued[0]
    assert search_req.headers["authorization"] == f"Bearer {fresh}"
    cred = store.get("codex")
    assert cred is not None and dict(cred.data) == {
        "access_token": fresh,
        "refresh_token": "rt-rotated-1",
        "expires_at": NOW.timestamp() + 864000,
        "account_id": ACCOUNT,
    }
    await search({**env, **codex.env}, clock)  # the stored token is fresh now: no second refresh
    assert [r.path for r in codex.requests].count(TOKEN_PATH) == 1


async def test_failed_refresh_says_log_in_again(
    env: dict[str, str], codex: FakeCodex, config_dir: Path, clock: FakeClock
) -> None:
    store_login(config_dir, expires_at=NOW.timestamp() - 10, refresh_token="rt-revoked-0c1d2e3f")
    response = await search({**env, **codex.env}, clock)
    assert response.error == (
        "OpenAI session expired and the refresh failed (the token endpoint answered 401: Your refresh token has already "
        "been used to generate a new access token. Please try signing in again.); log in again with "
        "`websearch auth import codex` or `websearch auth set codex`"
    )
    assert [r.path for r in codex.requests] == [TOKEN_PATH]
    assert_no_secret(response, "rt-revoked-0c1d2e3f", ACCESS)


# -- importing the Codex CLI's login ------------------------------------------------------------


def write_auth_json(home: Path, tokens: dict[str, Any] | None, raw: str | None = None) -> Path:
    path = home / ".codex" / "auth.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        raw
        if raw is not None
        else json.dumps({"OPENAI_API_KEY": None, "tokens": tokens, "last_refresh": "2026-11-29T08:00:00Z"})
    )
    return path


def test_import_credentials(tmp_path: Path) -> None:
    id_token = make_jwt({"email": "u@example.com", CLAIM: {"chatgpt_account_id": "acct-from-id-token"}})
    access = make_jwt({"exp": 1796000000})
    write_auth_json(tmp_path, {"id_token": id_token, "access_token": access, "refresh_token": REFRESH})
    token = import_credentials(tmp_path)
    assert (token.access_token, token.refresh_token, token.expires_at, token.account_id) == (
        access,
        REFRESH,
        1796000000,
        "acct-from-id-token",
    )
    write_auth_json(
        tmp_path, {"id_token": id_token, "access_token": access, "refresh_token": REFRESH, "account_id": "acct-x"}
    )
    assert import_credentials(tmp_path).account_id == "acct-x"
    assert PROVIDER.import_login(tmp_path) == import_credentials(tmp_path)


def test_the_client_imports_the_login_through_the_provider(tmp_path: Path, config_dir: Path) -> None:
    write_auth_json(tmp_path, {"access_token": ACCESS, "refresh_token": REFRESH, "account_id": ACCOUNT})
    with make_client(env={"WEBSEARCH_CONFIG_DIR": str(config_dir)}) as ws:
        cred = ws.import_login("codex", tmp_path)
    assert (cred.provider, cred.kind, cred.data["account_id"]) == ("codex", "oauth", ACCOUNT)


@pytest.mark.parametrize(
    ("tokens", "raw", "message"),
    [
        (None, None, "holds no ChatGPT login"),
        ({"access_token": "a"}, None, "holds no ChatGPT login"),
        (None, "{not json", "is not readable JSON"),
    ],
)
def test_import_rejects_malformed_files(
    tmp_path: Path, tokens: dict[str, Any] | None, raw: str | None, message: str
) -> None:
    write_auth_json(tmp_path, tokens, raw)
    with pytest.raises(ConfigError, match=message):
        import_credentials(tmp_path)


def test_import_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no Codex login found at .*auth\.json: run `codex login`"):
        import_credentials(tmp_path)


def test_cli_auth_import_codex_then_search(env: dict[str, str], codex: FakeCodex, config_dir: Path) -> None:
    missing = run_cli(["auth", "import", "codex"], env)
    assert missing.returncode == 2
    assert "no Codex login found at" in missing.stderr and "Traceback" not in missing.stderr
    write_auth_json(
        config_dir, {"access_token": ACCESS, "refresh_token": REFRESH, "account_id": ACCOUNT, "id_token": make_jwt({})}
    )
    proc = run_cli(["auth", "import", "codex"], env)
    assert proc.returncode == 0, proc.stderr
    cred = CredentialStore(config_dir / "agent.db").get("codex")
    assert cred is not None and cred.kind == "oauth"
    assert dict(cred.data) == {
        "access_token": ACCESS,
        "refresh_token": REFRESH,
        "expires_at": NOW.timestamp() + 3600,
        "account_id": ACCOUNT,
    }
    codex.answer = "Tokio is the most used async runtime."
    out = run_cli(["search", "rust", "async", "--provider", "codex"], {**env, **codex.env})
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Tokio is the most used async runtime.\n\n## Sources\n3 sources\n[1] Guide 1\n")
    assert ACCESS not in out.stdout + out.stderr


# -- the richer parameters --------------------------------------------------------------------


async def test_richer_include_domains_are_the_tools_allowed_domains(
    codex: FakeCodex, cenv: dict[str, str], clock: FakeClock
) -> None:
    response = await search(cenv, clock, include_domains=["python.org", "peps.python.org"], exclude_domains=["x.com"])
    tool = {
        "type": "web_search",
        "search_context_size": "high",
        "filters": {"allowed_domains": ["python.org", "peps.python.org"]},
    }
    assert codex.last.json() == {**expected_body(), "tools": [tool]}
    assert response.ok and messages(response) == ('exclude_domains=["x.com"] not applied: OpenAI does not support it',)
