"""Z.AI (remote MCP `web_search_prime`) against a loopback fake of the Streamable-HTTP server."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock, eventually, make_client, messages, provider_context, search_once
from websearch import SearchParams, SearchResponse, SearchSource, WebSearch, __version__
from websearch._core._credentials import CredentialStore
from websearch._providers._base import Plan
from websearch._providers.zai import PROVIDER, parse_result
from websearch.errors import MissingCredentialError, SearchProviderError
from websearch.providers import HttpResponse, ProviderContext
from websearch.testing import RecordedRequest, Reply
from websearch.testing.zai import FakeZai, zai_error, zai_reply, zai_result, zai_tool_result

KEY = "4f0c2a9b7e6d5c4b3a29.Zq7Xw3Tn9Lp2Rv8K"
QUERY = "rust 1.90 release"
PATH = "/api/mcp/web_search_prime/mcp"
MISSING = "Z.AI needs an API key: set ZAI_API_KEY or run `websearch auth set zai`"
INIT_PARAMS = {
    "protocolVersion": "2025-03-26",
    "capabilities": {},
    "clientInfo": {"name": "websearch", "version": __version__},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}


@pytest.fixture
def fake() -> Iterator[FakeZai]:
    with FakeZai(api_key=KEY) as server:
        yield server


def make_env(env: dict[str, str], fake: FakeZai, **extra: str) -> dict[str, str]:
    return {**env, **fake.env, "ZAI_API_KEY": KEY, **extra}


async def run(env: dict[str, str], query: str = QUERY, **params: Any) -> SearchResponse:
    return await search_once("zai", env, query, **params)


def calls(fake: FakeZai) -> list[dict[str, Any]]:
    """The `arguments` of every tools/call the fake saw."""
    return [r.json()["params"]["arguments"] for r in fake.requests if r.json().get("method") == "tools/call"]


def assert_session(requests: list[RecordedRequest], arguments: dict[str, Any]) -> None:
    """One MCP session: initialize, initialized, tools/call, with the session id echoed."""
    init, initialized, call = requests
    for req in requests:
        assert (req.method, req.path, req.query) == ("POST", PATH, ())
        assert req.headers["authorization"] == f"Bearer {KEY}"
        assert req.headers["content-type"] == "application/json"
        assert req.headers["accept"] == "application/json, text/event-stream"
    body = init.json()
    assert {k: v for k, v in body.items() if k != "id"} == {
        "jsonrpc": "2.0",
        "method": "initialize",
        "params": INIT_PARAMS,
    }
    uuid.UUID(body["id"])
    assert "mcp-session-id" not in init.headers
    session = initialized.headers["mcp-session-id"]
    assert len(session) == 32 and call.headers["mcp-session-id"] == session
    assert initialized.json() == INITIALIZED
    body = call.json()
    assert {k: v for k, v in body.items() if k != "id"} == {
        "jsonrpc": "2.0",
        "method": "tools/call",
        "params": {"name": "web_search_prime", "arguments": arguments},
    }
    assert body["id"] != init.json()["id"]


def enqueue_session(fake: FakeZai, *call_replies: Reply) -> None:
    """Script one session: initialize (session "s-1"), initialized (202), then the given replies."""
    init = {"jsonrpc": "2.0", "id": "x", "result": {"protocolVersion": "2025-03-26", "capabilities": {}}}
    fake.enqueue(zai_reply(init, headers={"Mcp-Session-Id": "s-1"}), Reply(202, b""), *call_replies)


# -- the requests ------------------------------------------------------------------------------


async def test_session_sequence_when_the_first_shape_is_accepted(env: dict[str, str]) -> None:
    with FakeZai(api_key=KEY, query_key="query") as fake:
        response = await run(make_env(env, fake))
    assert_session(fake.requests, {"query": QUERY, "count": 10})
    assert response.ok and len(response.sources) == 10 and messages(response) == ()


async def test_default_call_falls_back_to_search_query(fake: FakeZai, env: dict[str, str]) -> None:
    response = await run(make_env(env, fake))
    assert len(fake.requests) == 6
    assert_session(fake.requests[:3], {"query": QUERY, "count": 10})
    assert_session(fake.requests[3:], {"search_query": QUERY, "count": 10})
    assert fake.requests[1].headers["mcp-session-id"] != fake.requests[4].headers["mcp-session-id"]
    assert response.ok and len(response.sources) == 10


async def test_third_shape_adds_the_search_engine(env: dict[str, str]) -> None:
    with FakeZai(api_key=KEY, require_engine=True) as fake:
        response = await run(make_env(env, fake))
    assert len(fake.requests) == 9
    assert_session(fake.requests[6:], {"search_query": QUERY, "search_engine": "search-prime", "count": 10})
    assert response.ok


@pytest.mark.parametrize(
    ("params", "count", "notices"),
    [
        ({"limit": 3}, 3, ()),
        ({"num_search_results": 7}, 7, ()),
        ({"limit": 3, "num_search_results": 7}, 7, ("limit=3 not applied: num_search_results=7 takes precedence",)),
        ({"limit": 80}, 50, ("limit=80 clamped to 50: Z.AI returns at most 50 results",)),
    ],
)
async def test_counts(
    fake: FakeZai, env: dict[str, str], params: dict[str, int], count: int, notices: tuple[str, ...]
) -> None:
    response = await run(make_env(env, fake), **params)
    assert calls(fake) == [{"query": QUERY, "count": count}, {"search_query": QUERY, "count": count}]
    assert len(response.sources) == count
    assert messages(response) == notices


@pytest.mark.parametrize("recency", ["day", "week", "month", "year"])
async def test_recency_is_not_sent_and_says_so(fake: FakeZai, env: dict[str, str], recency: str) -> None:
    response = await run(make_env(env, fake), recency=recency, max_tokens=100, temperature=0.5)
    assert calls(fake)[-1] == {"search_query": QUERY, "count": 10}
    assert messages(response) == (
        f'recency="{recency}" not applied: Z.AI does not support it',
        "max_tokens=100 not applied: Z.AI does not support it",
        "temperature=0.5 not applied: Z.AI does not support it",
    )


# -- the response ------------------------------------------------------------------------------


def expected_sources(n: int, query: str = QUERY) -> tuple[SearchSource, ...]:
    out = []
    for i in range(1, n + 1):
        r = zai_result(i, query)
        out.append(
            SearchSource(r["title"], r["link"], r["content"], r["publish_date"] or None, author=r["media"] or None)
        )
    return tuple(out)


@pytest.mark.parametrize("sse", [True, False])
async def test_parses_sources_and_the_raw_answer(env: dict[str, str], sse: bool) -> None:
    with FakeZai(api_key=KEY, sse=sse) as fake:
        response = await run(make_env(env, fake), limit=4)
    assert response.sources == expected_sources(4)
    assert response.sources[1].author is None and response.sources[1].published_date is None
    assert response.sources[0] == SearchSource(
        "Rust 1.90 Release — report 1",
        "https://news1.example.cn/rust-1.90-release/1.html",
        "Report 1 on rust 1.90 release: what changed and why it matters.",
        "2025-09-18",
        None,
        "Example News 1",
    )
    assert response.answer == zai_tool_result(QUERY, 4)["content"][0]["text"]  # the quirk: the raw JSON text
    assert json.loads(response.answer)[0]["link"] == response.sources[0].url
    assert response.request_id is None and response.auth_mode is None and response.citations == ()


async def test_object_payload_gives_the_request_id(env: dict[str, str]) -> None:
    with FakeZai(api_key=KEY, shape="object") as fake:
        response = await run(make_env(env, fake), limit=2)
    assert response.sources == expected_sources(2)
    assert response.request_id is not None and response.request_id.startswith("req-")


async def test_double_encoded_text_is_decoded(env: dict[str, str]) -> None:
    with FakeZai(api_key=KEY, shape="double") as fake:
        response = await run(make_env(env, fake), limit=3)
    assert response.sources == expected_sources(3)
    assert response.answer is not None and response.answer.startswith('"[{')


def test_result_candidates_and_slicing() -> None:
    item = {"title": "", "url": "https://u.example", "content": "c", "publishedDate": "2025-01-02"}
    structured = {
        "result": {
            "content": [{"type": "text", "text": "see structured"}],
            "structuredContent": {"results": [item, {"title": "no url"}], "requestId": "r-9"},
        }
    }
    parsed = parse_result(structured, 10)
    assert parsed.sources == (SearchSource("https://u.example", "https://u.example", "c", "2025-01-02"),)
    assert (parsed.answer, parsed.request_id) == ("see structured", "r-9")
    data = {"result": {"content": [], "data": [{"link": f"https://{i}.example"} for i in range(5)]}}
    assert [s.url for s in parse_result(data, 2).sources] == ["https://0.example", "https://1.example"]
    plain = parse_result({"result": {"content": [{"type": "text", "text": "no JSON here"}]}}, 5)
    assert (plain.answer, plain.sources) == ("no JSON here", ())


def plan(config_dir: Path, params: SearchParams | None = None) -> Plan:
    return PROVIDER.plan(params or SearchParams(QUERY), provider_context(config_dir, {"ZAI_API_KEY": KEY}))


def test_plan_holds_the_key_and_the_three_shapes(config_dir: Path) -> None:
    planned = plan(config_dir, SearchParams(QUERY, limit=4, include_domains=["rust-lang.org"], recency_days=3))
    assert (planned.state.url, planned.state.key, planned.limit) == (
        "https://api.z.ai/api/mcp/web_search_prime/mcp",
        KEY,
        4,
    )
    extra = {"search_domain_filter": "rust-lang.org", "search_recency_filter": "oneWeek"}
    assert planned.state.variants == (
        {"query": QUERY, "count": 4, **extra},
        {"search_query": QUERY, "count": 4, **extra},
        {"search_query": QUERY, "search_engine": "search-prime", "count": 4, **extra},
    )
    assert [n.kind for n in planned.notices] == ["widened"]


def test_sse_message_after_a_notification_is_the_answer(config_dir: Path) -> None:
    body = (
        'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n'
        'event: message\ndata: {"jsonrpc":"2.0","id":"1","result":{"content":[]}}\n\n'
        'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n'
    )
    assert PROVIDER.read_message(HttpResponse(200, {}, body.encode()), plan(config_dir)) == {
        "jsonrpc": "2.0",
        "id": "1",
        "result": {"content": []},
    }


@pytest.mark.parametrize("text", ["[]", '{"search_result": []}', json.dumps("[]")])
async def test_empty_result_set_is_a_204(fake: FakeZai, env: dict[str, str], text: str) -> None:
    enqueue_session(
        fake, zai_reply({"jsonrpc": "2.0", "id": "1", "result": {"content": [{"type": "text", "text": text}]}})
    )
    response = await run(make_env(env, fake))
    assert response.error == "Z.AI returned no renderable search content."
    assert response.attempts[0].status == 204


# -- errors ------------------------------------------------------------------------------------


AUTH = "Z.AI authorization failed ({}). Check API key or base URL. Z.AI said: {}"


@pytest.mark.parametrize(
    ("reply", "status", "kind", "message"),
    [
        (
            zai_error(401, "1002", f"Authorization Token invalid: {KEY}"),
            401,
            "auth",
            AUTH.format("401 1002", "Authorization Token invalid: [redacted]"),
        ),
        (
            zai_error(403, "1220", "You do not have permission to access web_search_prime"),
            403,
            "auth",
            AUTH.format("403 1220", "You do not have permission to access web_search_prime"),
        ),
        (  # the code says quota; the HTTP status stands
            zai_error(429, "1113", "Insufficient balance or no resource package. Please recharge."),
            429,
            "quota",
            "zai: credits exhausted (1113): Insufficient balance or no resource package. Please recharge.",
        ),
        (
            zai_error(
                429, "1302", "High concurrency usage of this API, please reduce concurrency.", {"Retry-After": "5"}
            ),
            429,
            "rate_limited",
            "Z.AI MCP error (429): High concurrency usage of this API, please reduce concurrency. (1302); "
            "retry after 5 s",
        ),
        (  # quota comes from a status or a code, never from the prose
            zai_error(429, "1303", "Insufficient quota of requests per minute"),
            429,
            "rate_limited",
            "Z.AI MCP error (429): Insufficient quota of requests per minute (1303)",
        ),
        (
            zai_error(402, "1113", "Payment required"),
            402,
            "quota",
            "zai: 402 credits exhausted (1113): Payment required",
        ),
        (
            Reply(500, {"error": {"code": "500", "message": "Internal Error"}}),
            500,
            "unavailable",
            "Z.AI MCP error (500): Internal Error (500)",
        ),
        (
            Reply(502, "<html><body>502 Bad Gateway</body></html>", content_type="text/html"),
            502,
            "unavailable",
            "Z.AI MCP error (502): <html><body>502 Bad Gateway</body></html>",
        ),
        (
            Reply(200, "<html>portal</html>", content_type="text/html"),
            500,
            "invalid_response",
            "Failed to parse Z.AI MCP response",
        ),
        (  # inside a 200, the code gives the status
            Reply(200, {"success": False, "code": 1001, "msg": "Header中未收到Authorization参数"}),
            401,
            "auth",
            AUTH.format("401 1001", "Header中未收到Authorization参数"),
        ),
    ],
)
async def test_initialize_errors_are_not_retried(
    fake: FakeZai, env: dict[str, str], reply: Reply, status: int, kind: str, message: str
) -> None:
    fake.enqueue(reply)
    response = await run(make_env(env, fake))
    assert response.error == message
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (status, kind)
    assert len(fake.requests) == 1
    assert KEY not in (response.error or "") + repr(response) + json.dumps(response.to_dict())


@pytest.mark.parametrize(
    ("reply", "status", "kind", "message"),
    [
        (
            zai_reply({"jsonrpc": "2.0", "id": "1", "error": {"code": -32603, "message": "Internal error"}}),
            500,
            "unavailable",
            "Z.AI MCP error (500): Internal error (-32603)",
        ),
        (
            zai_reply(
                {
                    "jsonrpc": "2.0",
                    "id": "1",
                    "result": {
                        "isError": True,
                        "content": [{"type": "text", "text": "MCP error -429: Rate limit reached for requests"}],
                    },
                }
            ),
            429,
            "rate_limited",
            "Z.AI MCP error (429): Rate limit reached for requests (-429)",
        ),
        (
            zai_reply(
                {
                    "jsonrpc": "2.0",
                    "id": "1",
                    "result": {"isError": True, "content": [{"type": "text", "text": "MCP error -401: 身份验证失败"}]},
                }
            ),
            401,
            "auth",
            AUTH.format("401 -401", "身份验证失败"),
        ),
        (
            zai_reply({"jsonrpc": "2.0", "id": "1", "success": False, "code": 1113, "msg": "余额不足"}),
            402,
            "quota",
            "zai: 402 credits exhausted (1113): 余额不足",
        ),
        (
            Reply(
                200,
                b'event: error\ndata: {"jsonrpc":"2.0","id":"1","error":{"code":-32603,"message":"upstream down"}}\n\n',
                content_type="text/event-stream",
            ),
            500,
            "unavailable",
            "Z.AI MCP error (500): upstream down (-32603)",
        ),
        (
            Reply(
                200,
                b'event: message\ndata: {"jsonrpc":"2.0","id":"1","result":{"content":[{"ty\n\n',
                content_type="text/event-stream",
            ),
            500,
            "invalid_response",
            "Failed to parse Z.AI MCP response",
        ),
        (
            Reply(200, b"event: message\ndata: \n\n", content_type="text/event-stream"),
            500,
            "invalid_response",
            "Failed to parse Z.AI MCP response",
        ),
        (
            zai_reply({"jsonrpc": "2.0", "id": "1"}),
            500,
            "invalid_response",
            "Failed to parse Z.AI MCP response: no result",
        ),
    ],
)
async def test_tool_call_errors_that_are_not_argument_errors(
    fake: FakeZai, env: dict[str, str], reply: Reply, status: int, kind: str, message: str
) -> None:
    enqueue_session(fake, reply)
    response = await run(make_env(env, fake))
    assert response.error == message
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (status, kind)
    assert len(fake.requests) == 3


async def test_json_rpc_invalid_params_moves_to_the_next_shape(fake: FakeZai, env: dict[str, str]) -> None:
    error = {"jsonrpc": "2.0", "id": "1", "error": {"code": -32602, "message": "Invalid params"}}
    enqueue_session(fake, zai_reply(error))
    response = await run(make_env(env, fake), limit=2)
    assert calls(fake) == [{"query": QUERY, "count": 2}, {"search_query": QUERY, "count": 2}]
    assert response.sources == expected_sources(2)


async def test_all_shapes_rejected_gives_the_last_error(env: dict[str, str]) -> None:
    with FakeZai(api_key=KEY, query_key="q") as fake:
        response = await run(make_env(env, fake))
    assert len(fake.requests) == 9
    assert response.error is not None
    assert response.error.startswith(
        'Z.AI MCP error (400): Invalid arguments for tool web_search_prime: [{"code": "invalid_type"'
    )
    assert response.error.endswith(" (-32602)")
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (400, "rejected")


def rpc(message: dict[str, Any]) -> HttpResponse:
    return HttpResponse(200, {}, json.dumps({"jsonrpc": "2.0", "id": "1", **message}).encode())


def tool_error(text: str) -> HttpResponse:
    return rpc({"result": {"isError": True, "content": [{"type": "text", "text": text}]}})


@pytest.mark.parametrize(
    ("response", "status", "variant"),
    [
        (HttpResponse(400, {}, b"Bad Request"), 400, True),
        (
            HttpResponse(400, {}, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}'),
            400,
            True,
        ),
        (rpc({"error": {"code": -32602, "message": "Invalid params"}}), 400, True),
        (tool_error("MCP error -32602: Invalid arguments for tool web_search_prime"), 400, True),
        (rpc({"success": False, "code": 1214, "msg": "参数非法"}), 400, True),
        (HttpResponse(422, {}, b'{"error": {"code": "1210", "message": "bad parameters"}}'), 422, True),
        (HttpResponse(401, {}, b'{"error": {"code": "1002", "message": "Token invalid"}}'), 401, False),
        (HttpResponse(500, {}, b'{"error": {"code": "500", "message": "invalid upstream"}}'), 500, False),
        (HttpResponse(429, {}, b'{"error": {"code": "1302", "message": "invalid concurrency"}}'), 429, False),
        (rpc({"error": {"code": -32601, "message": "Method not found"}}), 404, False),
        (tool_error("MCP error -429: Rate limit reached"), 429, False),
        # the upstream's code or status decides, never the words: this used to advance on "search_query"
        (HttpResponse(404, {}, b'{"error": {"code": "404", "message": "search_query is required"}}'), 404, False),
    ],
)
def test_argument_shape_errors_are_flagged_from_the_upstreams_code(
    config_dir: Path, response: HttpResponse, status: int, variant: bool
) -> None:
    with pytest.raises(SearchProviderError) as err:
        PROVIDER.read_message(response, plan(config_dir))
    assert (err.value.status, err.value.retry_variant) == (status, variant)


async def test_stream_cut_mid_event_is_an_error_without_partial_answer(fake: FakeZai, env: dict[str, str]) -> None:
    cut = Reply(
        200,
        chunks=[b"event: message\n", b'data: {"jsonrpc":"2.0","id":"1","result":{"content":[{"ty'],
        content_type="text/event-stream",
        cut=True,
    )
    enqueue_session(fake, cut)
    response = await run(make_env(env, fake))
    assert response.error is not None and response.error.startswith("Z.AI request failed:")
    assert response.answer is None and response.sources == ()
    assert len(fake.requests) == 3


async def test_cancelling_mid_session_closes_the_connection(fake: FakeZai, env: dict[str, str]) -> None:
    enqueue_session(fake, Reply(hang=True))
    async with make_client(env=make_env(env, fake), clock=FakeClock()) as ws:
        task = asyncio.create_task(ws.asearch(QUERY, provider="zai"))
        await eventually(lambda: len(fake.requests) == 3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 1)
    await eventually(lambda: fake.disconnects)
    assert fake.disconnects == 1 and len(fake.requests) == 3
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


# -- credentials and availability ---------------------------------------------------------------


def context(config_dir: Path, env: dict[str, str]) -> ProviderContext:
    return provider_context(config_dir, env)


async def test_missing_credential_message(config_dir: Path) -> None:
    with pytest.raises(MissingCredentialError) as err:
        PROVIDER.plan(SearchParams(QUERY), context(config_dir, {}))
    assert err.value.message == MISSING


async def test_availability(env: dict[str, str], config_dir: Path) -> None:
    async with WebSearch(engine=False, env=env) as ws:
        row = next(r for r in ws.provider_status() if r.id == "zai")
    assert (row.available, row.reason) == (False, "set ZAI_API_KEY or run `websearch auth set zai`")
    async with WebSearch(engine=False, env={**env, "ZAI_API_KEY": KEY}) as ws:
        assert next(r for r in ws.provider_status() if r.id == "zai").available


async def test_stored_credential_is_used(fake: FakeZai, env: dict[str, str], config_dir: Path) -> None:
    CredentialStore(config_dir / "agent.db").set("zai", "api_key", {"api_key": KEY})
    response = await run({**env, **fake.env})
    assert response.ok
    assert {r.headers["authorization"] for r in fake.requests} == {f"Bearer {KEY}"}


async def test_env_key_wins_over_stored(fake: FakeZai, env: dict[str, str], config_dir: Path) -> None:
    CredentialStore(config_dir / "agent.db").set("zai", "api_key", {"api_key": "stored-key-000000"})
    await run(make_env(env, fake))
    assert fake.last.headers["authorization"] == f"Bearer {KEY}"


# -- the richer parameters --------------------------------------------------------------------

APPROX = "widened to search_recency_filter={} (the past {}): Z.AI only filters by the past day, week, month or year"


@pytest.mark.parametrize(
    ("params", "extra", "notices"),
    [
        ({"include_domains": ["rust-lang.org"]}, {"search_domain_filter": "rust-lang.org"}, ()),
        (
            {"include_domains": ["a.org", "b.org"]},
            {},
            (
                'include_domains=["a.org", "b.org"] not applied: Z.AI\'s search_domain_filter takes a single domain',
                'include_domains=["a.org", "b.org"] enforced: 10 results outside these hosts removed',
            ),
        ),
        (
            {"recency_hours": 5},
            {"search_recency_filter": "oneDay"},
            (f"recency_hours=5 {APPROX.format('oneDay', 'day')}",),
        ),
        (
            {"recency_days": 20},
            {"search_recency_filter": "oneMonth"},
            (f"recency_days=20 {APPROX.format('oneMonth', 'month')}",),
        ),
        (
            {"start_published_date": "2025-01-01", "exclude_domains": ["x.org"]},
            {},
            (
                'start_published_date="2025-01-01" not applied: the window is longer than Z.AI\'s longest (a year)',
                'exclude_domains=["x.org"] not applied: Z.AI does not support it',
            ),
        ),
        ({"recency": "week"}, {}, ('recency="week" not applied: Z.AI does not support it',)),
    ],
)
async def test_richer_parameters_are_tool_arguments(
    env: dict[str, str], params: dict[str, Any], extra: dict[str, Any], notices: tuple[str, ...]
) -> None:
    with FakeZai(api_key=KEY, require_engine=True) as fake:
        response = await run(make_env(env, fake), **params)
    assert calls(fake) == [
        {"query": QUERY, "count": 10, **extra},
        {"search_query": QUERY, "count": 10, **extra},
        {"search_query": QUERY, "search_engine": "search-prime", "count": 10, **extra},
    ]
    assert response.ok and messages(response) == notices
