"""`websearch serve`'s app over real HTTP (uvicorn on a free loopback port of this process): the
routes and their shapes, errors, limits, tokens, Host/Origin, CORS, rate limits, metrics, the
access log, the OpenAPI document, the MCP tool at /mcp, readiness and the drain."""

from __future__ import annotations

import asyncio
import io
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families

from conftest import eventually, key_env, make_client, run_cli
from serve_helper import OTHER_TOKEN, TOKEN, InProcess, async_http, free_port, http
from websearch import (
    Attempt,
    EngineRank,
    Notice,
    ProviderAnswer,
    SearchCitation,
    SearchResponse,
    SearchSource,
    SearchUsage,
)
from websearch._core._clock import SystemClock
from websearch._core._params import PARAMS
from websearch._faces._rendering import render
from websearch._faces._serve import Limits, RateLimit, ServeConfig
from websearch._faces._serve._api import answer_json
from websearch._faces._serve._logging import configure
from websearch._state import MemoryStore
from websearch._state.redis import RedisStore
from websearch.providers import SEARCH_PROVIDER_ORDER
from websearch.testing import DdgResult, FakeBrave, FakeDuckDuckGo, FakeSearXNG, Reply
from websearch.testing.brave import brave_results_body, rate_limited_reply
from websearch.testing.duckduckgo import results_page

BRAVE_KEY = "BSA-serve-secret-8e1f7a2c"
BLOCKS = "# Web search: q\n[served by: duckduckgo]\n\n## 1. T\nURL: https://t.example/\ns\n\nSources:\n[1] https://t.example/"


def serving(env: dict[str, str], config: ServeConfig | None = None, **kw: Any) -> InProcess:
    """The app on a client of the running fakes, its state in memory (never the user's cache)."""
    kw.setdefault("store", MemoryStore(SystemClock()))
    return InProcess(make_client(env=env, **kw), config)


@pytest.fixture
def one_result(ddg: FakeDuckDuckGo) -> FakeDuckDuckGo:
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    return ddg


@pytest.fixture
def brave() -> Iterator[FakeBrave]:
    with FakeBrave() as fake:
        yield fake


# -- POST /v1/search -----------------------------------------------------------------------------


def test_v1_search_answers_the_format_json_object(one_result: FakeDuckDuckGo, env: dict[str, str]) -> None:
    with serving(env) as server, http(server.url) as client:
        reply = client.post("/v1/search", json={"query": "q", "recency": "week"})
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json"
    body = reply.json()
    assert set(body) == {"text", "response", "error"}
    assert body["error"] is None
    assert body["text"] == "[1] T\n    https://t.example/\n    s"  # the summary layout, as `--format json`
    response = body["response"]
    assert (response["provider"], response["query"], response["cached"]) == ("duckduckgo", "q", False)
    assert [(s["title"], s["url"], s["snippet"]) for s in response["sources"]] == [("T", "https://t.example/", "s")]
    assert dict(one_result.last.form())["df"] == "w"  # recency reached the provider


def test_v1_search_of_only_a_query_answers_what_the_cli_answers(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.results = [DdgResult(f"T{i}", f"https://t{i}.example/", f"s{i}") for i in range(15)]
    cli = run_cli(["search", "q", "--format", "json"], env)
    with serving(env) as server, http(server.url) as client:
        reply = client.post("/v1/search", json={"query": "q"})
        schema = client.get("/openapi.json").json()
    assert cli.returncode == 0, cli.stderr
    body_schema = schema["paths"]["/v1/search"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert "default" not in body_schema["properties"]["num_results"]  # not the MCP tool's 8
    expected, body = json.loads(cli.stdout), reply.json()
    assert len(body["response"]["sources"]) == len(expected["response"]["sources"]) == 10  # not the tool's 8
    assert body["text"] == expected["text"]
    assert body["response"]["sources"] == expected["response"]["sources"]


def test_a_fanout_longer_than_the_setting_allows_is_422_on_the_server(
    one_result: FakeDuckDuckGo, searx: FakeSearXNG, env: dict[str, str], config_dir: Path
) -> None:
    (config_dir / "settings.toml").write_text("[fanout]\nmax_providers = 1\n", encoding="utf-8")
    env = {**env, **searx.env, "SEARXNG_ENDPOINT": "https://searxng.example.org"}
    with serving(env) as server, http(server.url) as client:
        rest = client.post("/v1/search", json={"query": "q", "fanout": ["duckduckgo", "searxng"]})
        (tool,) = asyncio.run(call_tools(server.url, [{"query": "q", "fanout": ["duckduckgo", "searxng"]}]))
        schema = client.get("/openapi.json").json()
    message = "fanout must name at most 1 providers on this server; got 2"
    assert (rest.status_code, rest.json()) == (422, {"error": message, "param": "fanout"})
    assert tool.is_error and tool.content[0].text == f"Invalid argument `fanout`: {message}"
    body = schema["paths"]["/v1/search"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["fanout"]["maxItems"] == 1
    assert one_result.requests == [] and searx.requests == []


@pytest.mark.parametrize(
    ("fmt", "text"),
    [("blocks", BLOCKS), ("summary", "[1] T\n    https://t.example/\n    s")],
)
def test_v1_search_text_formats_are_the_tool_text(
    one_result: FakeDuckDuckGo, env: dict[str, str], fmt: str, text: str
) -> None:
    with serving(env) as server, http(server.url) as client:
        reply = client.post(f"/v1/search?format={fmt}", json={"query": "q"})
    assert (reply.status_code, reply.headers["content-type"], reply.text) == (200, "text/plain; charset=utf-8", text)


INVALID = [
    ({"query": ""}, "query", 'query must be a non-empty string; got ""'),
    ({"recency": "day"}, "query", "query must be a non-empty string; got nothing"),
    ({"query": "q", "limit": 0}, "limit", "limit must be a whole number of at least 1; got 0"),
    (  # JSON's parser makes 10**30 a float: refused as the number it became, not rounded to an int
        {"query": "q", "max_tokens": 10**30},
        "max_tokens",
        f"max_tokens must be a whole number from 1 to {2**53 - 1}; got 1e+30",
    ),
    ({"query": "q", "recency": "decade"}, "recency", 'recency must be one of: day, week, month, year; got "decade"'),
    ({"query": "q", "provider": "nope"}, "provider", 'provider must be one of: auto, duckduckgo, public; got "nope"'),
    ({"query": "q", "temperature": 3}, "temperature", "temperature must be a number from 0 to 2; got 3"),
    ({"query": "q", "exclude": ["nope"]}, "exclude", 'exclude must be a list of: duckduckgo; got ["nope"]'),
    ({"query": "q", "providers": []}, "providers", "providers must be a list of: duckduckgo; got []"),
    ({"query": "q", "cache": "sometimes"}, "cache", 'cache must be one of: use, refresh, off; got "sometimes"'),
    ({"query": "q", "hedge": 0}, "hedge", "hedge must be a number from 0.1 to 600; got 0"),
    ({"query": "q", "deadline": 0.5}, "deadline", "deadline must be a number from 1 to 600; got 0.5"),
]


def test_invalid_parameters_are_422_naming_the_parameter(one_result: FakeDuckDuckGo, env: dict[str, str]) -> None:
    with serving(env) as server, http(server.url) as client:
        replies = [(client.post("/v1/search", json=body), param, message) for body, param, message in INVALID]
    for reply, param, message in replies:
        assert (reply.status_code, reply.json()) == (422, {"error": message, "param": param})
    assert one_result.requests == []


def test_unknown_fields_bad_bodies_and_bad_query_parameters(one_result: FakeDuckDuckGo, env: dict[str, str]) -> None:
    with serving(env) as server, http(server.url) as client:
        unknown = client.post("/v1/search", json={"query": "q", "page": 2})
        typo = client.post("/v1/search", json={"query": "q", "num_result": 2})
        not_json = client.post("/v1/search", content=b"q=1", headers={"content-type": "application/json"})
        a_list = client.post("/v1/search", json=["q"])
        fmt = client.post("/v1/search?format=xml", json={"query": "q"})
        strict = client.post("/v1/search?strict=maybe", json={"query": "q"})
    assert unknown.status_code == 422 and unknown.json()["param"] == "page"
    assert unknown.json()["error"].startswith("page must be left out (the fields are: query, recency, num_results,")
    assert unknown.json()["error"].endswith(", exclude, providers, cache, hedge); got 2")
    assert typo.json()["error"].startswith("num_result must be left out (did you mean num_results?) (the fields are: ")
    assert (not_json.status_code, not_json.json()["param"]) == (400, "body")
    assert not_json.json()["error"].startswith("the body must be a JSON object of search parameters; it is not JSON (")
    assert (a_list.status_code, a_list.json()["error"]) == (
        400,
        'the body must be a JSON object of search parameters; got ["q"]',
    )
    assert fmt.json() == {"error": 'format must be one of: json, blocks, summary; got "xml"', "param": "format"}
    assert (strict.status_code, strict.json()["param"]) == (422, "strict")
    assert one_result.requests == []


def test_an_unknown_route_or_method_is_a_json_error_naming_what_there_is(env: dict[str, str]) -> None:
    with serving(env) as server, http(server.url) as client:
        missing = client.get("/v2/search")
        wrong_method = client.get("/v1/search")
    assert missing.status_code == 404 and missing.headers["content-type"] == "application/json"
    assert missing.json()["error"].startswith("there is no route /v2/search (the routes are: /, /healthz, /readyz,")
    assert (wrong_method.status_code, wrong_method.headers["allow"]) == (405, "POST")
    assert wrong_method.json() == {"error": "GET is not allowed on /v1/search (allowed: POST)"}


def test_get_on_mcp_is_405_at_once_not_a_silent_stream(env: dict[str, str]) -> None:
    # The SDK's GET stream stayed open and silent on a stateless server, and held the drain for
    # its whole grace period; the MCP spec's answer for a server with nothing to push is a 405.
    headers = {"Accept": "text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    with serving(env) as server, http(server.url, headers=headers) as client:
        stream = client.get("/mcp", timeout=5)
    assert (stream.status_code, stream.headers["allow"], stream.headers["content-type"]) == (
        405,
        "POST",
        "application/json",
    )
    assert stream.json()["error"].startswith("GET is not allowed on /mcp")


def test_every_provider_failing_is_an_answer_unless_strict(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.enqueue(Reply(503, "down"), Reply(503, "down"), Reply(503, "down"))
    with serving(env) as server, http(server.url) as client:
        answer = client.post("/v1/search", json={"query": "q"})
        strict = client.post("/v1/search?strict=true", json={"query": "q"})
        text = client.post("/v1/search?format=summary&strict=true", json={"query": "q"})
    assert answer.status_code == 200
    assert answer.json()["error"] == "DuckDuckGo HTML error (503)"
    assert answer.json()["text"] == "Error: DuckDuckGo HTML error (503)"
    assert strict.status_code == 502
    assert (strict.json()["error"], strict.json()["text"]) == (answer.json()["error"], answer.json()["text"])
    assert (text.status_code, text.text) == (502, "SEARCH_FAILED: q — duckduckgo: DuckDuckGo HTML error (503)")


def test_the_other_fields_reach_the_search(one_result: FakeDuckDuckGo, searx: FakeSearXNG, env: dict[str, str]) -> None:
    env = {**env, **searx.env, "SEARXNG_ENDPOINT": "https://searxng.example.org"}
    with serving(env) as server, http(server.url) as client:
        excluded = client.post("/v1/search", json={"query": "q", "exclude": ["searxng"]}).json()
        narrowed = client.post("/v1/search", json={"query": "q", "providers": ["duckduckgo"]}).json()
        fused = client.post("/v1/search", json={"query": "q", "fanout": ["duckduckgo", "searxng"]}).json()
    assert excluded["response"]["provider"] == narrowed["response"]["provider"] == "duckduckgo"
    assert [a["provider"] for a in excluded["response"]["attempts"]] == ["duckduckgo"]
    assert {a["provider"] for a in fused["response"]["attempts"]} == {"duckduckgo", "searxng"}
    assert any(len(s["engines"]) == 2 for s in fused["response"]["sources"]) or fused["response"]["sources"]


def test_the_json_answer_is_the_whole_response_as_json() -> None:
    response = SearchResponse(
        provider="fanout",
        query="q",
        answer="A.",
        sources=(
            SearchSource("T", "https://t.example/", "s", "2026-11-27", 3600, "Ann", ("h",), (EngineRank("brave", 1),)),
        ),
        citations=(SearchCitation("https://c.example/", "C", "cited"),),
        usage=SearchUsage(1, 2, 3, 4),
        attempts=(Attempt("brave", 200, None, 12.5, notices=(Notice("limit", 3, "clamped", "limit=3 clamped"),)),),
        notices=(Notice(None, None, "partial", "part"),),
        answers=(ProviderAnswer("perplexity", "A.", (SearchCitation("https://c.example/", "C"),)),),
        cached=True,
        cached_age_s=1.5,
    )
    body = json.loads(answer_json(response))
    assert body == {
        "text": render(response, "summary"),
        "response": json.loads(render(response, "json"))["response"],
        "error": None,
    }


# -- limits --------------------------------------------------------------------------------------

SMALL = Limits(max_query_chars=20, max_body_bytes=1024, max_limit=5, max_fanout=1, max_deadline=5)


LIMITED = [
    ({"query": "x" * 21}, "query", "query must be at most 20 characters on this server; got 21"),
    ({"query": "q", "limit": 6}, "limit", "limit must be at most 5 on this server; got 6"),
    ({"query": "q", "num_results": 9}, "num_results", "num_results must be at most 5 on this server; got 9"),
    (
        {"query": "q", "num_search_results": 50},
        "num_search_results",
        "num_search_results must be at most 5 on this server; got 50",
    ),
    (
        {"query": "q", "fanout": ["duckduckgo", "searxng"]},
        "fanout",
        "fanout must name at most 1 providers on this server; got 2",
    ),
    ({"query": "q", "deadline": 10}, "deadline", "deadline must be at most 5 seconds on this server; got 10"),
]


def test_each_limit_is_a_clear_4xx_on_every_face(
    one_result: FakeDuckDuckGo, searx: FakeSearXNG, env: dict[str, str]
) -> None:
    env = {**env, **searx.env, "SEARXNG_ENDPOINT": "https://searxng.example.org"}
    with serving(env, ServeConfig(limits=SMALL).with_tokens(TOKEN)) as server, http(server.url) as client:
        rest = [client.post("/v1/search", json=body) for body, _, _ in LIMITED]
        tools = asyncio.run(call_tools(server.url, [body for body, _, _ in LIMITED]))
    for reply, tool, (_, param, message) in zip(rest, tools, LIMITED, strict=True):
        assert (reply.status_code, reply.json()) == (422, {"error": message, "param": param})
        assert tool.is_error
        assert tool.content[0].text == f"Invalid argument `{param}`: {message}"  # num_results named as given
    assert one_result.requests == [] and searx.requests == []


def test_limits_of_body_size_default_limit_searxng_and_the_deep_deadline(
    one_result: FakeDuckDuckGo, env: dict[str, str]
) -> None:
    with serving(env, ServeConfig(limits=SMALL).with_tokens(TOKEN)) as server, http(server.url) as client:
        big = client.post("/v1/search", json={"query": "q", "category": "x" * 2000})
        chunked = client.post(
            "/v1/search",
            content=iter([b'{"query": "q", "category": "', b"y" * 2000, b'"}']),
            headers={"content-type": "application/json"},
        )
        default = client.post("/v1/search", json={"query": "q"})
        searx = client.get("/search", params={"q": "x" * 21, "format": "json"})
        past = client.get("/search", params={"q": "q", "format": "json", "pageno": "2"})
    assert big.status_code == 413 and big.json()["param"] == "body"
    assert re.fullmatch(
        r"the request body must be at most 1 KB on this server; got 20\d\d bytes or more", big.json()["error"]
    )
    assert chunked.status_code == 413
    assert default.status_code == 200  # no num_results: the library's default, not refused
    assert searx.status_code == 400
    assert searx.json() == {
        "error": "Invalid value for parameter query: query must be at most 20 characters on this server; got 21"
    }
    assert past.json()["results"] == []  # past the last page max_limit allows: empty, as SearXNG's last page
    assert len(one_result.requests) == 1


# -- tokens, Host, Origin, CORS ------------------------------------------------------------------

ROUTES = [
    ("GET", "/"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
    ("GET", "/openapi.json"),
    ("POST", "/v1/search"),
    ("GET", "/search?q=q&format=json"),
    ("POST", "/mcp"),
    ("GET", "/nowhere"),
]


def test_every_route_but_healthz_needs_a_valid_token(one_result: FakeDuckDuckGo, env: dict[str, str]) -> None:
    with serving(env) as server, http(server.url, None) as anonymous:
        missing = [anonymous.request(method, path, json={"query": "q"}) for method, path in ROUTES]
        wrong = [
            anonymous.request(method, path, json={"query": "q"}, headers={"Authorization": "Bearer " + "z" * 24})
            for method, path in ROUTES
        ]
        basic = anonymous.get("/readyz", headers={"Authorization": "Basic dXNlcjpwYXNz"})  # user:pass
        not_base64 = anonymous.get("/readyz", headers={"Authorization": "Basic !!"})
        digest = anonymous.get("/readyz", headers={"Authorization": 'Digest username="u"'})
        as_basic = anonymous.get("/readyz", auth=("anyone", OTHER_TOKEN))  # the token as Basic password
        health = anonymous.get("/healthz")
        with http(server.url, OTHER_TOKEN) as other:
            ok = other.get("/readyz")
    for reply in missing:
        assert reply.status_code == 401
        assert reply.json() == {"error": "a bearer token is required: Authorization: Bearer <token>"}
        assert reply.headers["www-authenticate"] == 'Bearer realm="websearch"'
    for reply in wrong:
        assert reply.status_code == 401
        assert reply.json() == {"error": "the bearer token is not valid"}
        assert reply.headers["www-authenticate"] == 'Bearer realm="websearch", error="invalid_token"'
    for reply in (basic, not_base64):  # worded for the scheme sent
        assert reply.status_code == 401
        error = "the Basic credentials' password is not a valid token (send the token as the password)"
        assert reply.json() == {"error": error}
        assert reply.headers["www-authenticate"] == 'Basic realm="websearch", charset="UTF-8"'
    assert (digest.status_code, digest.json()) == (
        401,
        {"error": "the Authorization scheme must be Bearer (or Basic, with the token as the password)"},
    )
    assert as_basic.status_code == 200
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert (ok.status_code, ok.json()) == (200, {"status": "ready", "store": "off"})  # the engine is off here
    assert one_result.requests == []


def test_loopback_server_checks_host_and_origin_on_every_route(one_result: FakeDuckDuckGo, env: dict[str, str]) -> None:
    with serving(env) as server, http(server.url) as client:
        evil_host = [client.get(path, headers={"Host": "evil.example"}) for path in ("/healthz", "/search?q=q")]
        # The whole value is read: a loopback name followed by anything but a port is refused.
        hosts = ("127.0.0.1:evil", "127.0.0.1:80@evil.example", "[::1]evil", "127.0.0.1%evil.example")
        evil_host += [client.get("/healthz", headers={"Host": host}) for host in hosts]
        evil_origin = client.post("/mcp", json={}, headers={"Origin": "https://evil.example"})
        local_origin = client.get("/healthz", headers={"Origin": "http://localhost:3000"})
        localhost = client.get("/healthz", headers={"Host": f"localhost:{server.port}"})
        ipv6 = client.get("/healthz", headers={"Host": f"[::1]:{server.port}"})
    for reply in evil_host:
        assert reply.status_code == 421
        assert reply.json() == {"error": "the Host header must name this machine (localhost, 127.0.0.1, [::1])"}
    assert evil_origin.status_code == 403
    assert evil_origin.json() == {"error": "this Origin may not call the server (see [serve] cors_origins)"}
    assert local_origin.status_code == localhost.status_code == ipv6.status_code == 200
    config = ServeConfig(host="0.0.0.0").with_tokens(TOKEN)  # off loopback, the token is the defence
    with serving(env, config) as server, http(server.url) as client:
        assert (
            client.get("/readyz", headers={"Host": "search.internal", "Origin": "https://x.example"}).status_code == 200
        )


def test_cors_is_off_unless_origins_are_listed(one_result: FakeDuckDuckGo, env: dict[str, str]) -> None:
    preflight = {
        "Origin": "https://chat.example.org",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
    }
    with serving(env, ServeConfig(host="0.0.0.0").with_tokens(TOKEN)) as server, http(server.url, None) as client:
        off = client.options("/v1/search", headers=preflight)
    assert off.status_code == 401 and "access-control-allow-origin" not in off.headers
    config = ServeConfig(cors_origins=("https://chat.example.org",)).with_tokens(TOKEN)
    with serving(env, config) as server, http(server.url, None) as client:
        allowed = client.options("/v1/search", headers=preflight)  # a preflight carries no token
        with http(server.url) as authed:
            search = authed.post("/v1/search", json={"query": "q"}, headers={"Origin": "https://chat.example.org"})
            other = authed.post("/v1/search", json={"query": "q"}, headers={"Origin": "https://other.example"})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://chat.example.org"
    assert "authorization" in allowed.headers["access-control-allow-headers"].lower()
    assert search.status_code == 200 and search.headers["access-control-allow-origin"] == "https://chat.example.org"
    assert other.status_code == 403  # a loopback server: an Origin neither local nor listed is refused


# -- rate limits ---------------------------------------------------------------------------------


def test_rate_limit_per_token_in_the_store(one_result: FakeDuckDuckGo, env: dict[str, str]) -> None:
    store = MemoryStore(SystemClock())
    config = ServeConfig(rate_limit=RateLimit("2/min", 2 / 60, 2)).with_tokens(TOKEN, OTHER_TOKEN)
    with serving(env, config, store=store) as server, http(server.url) as client:
        first = [client.post("/v1/search", json={"query": "q"}), client.get("/search?q=q&format=json")]
        limited = client.post("/v1/search", json={"query": "q"})
        free = [client.get(path) for path in ("/readyz", "/metrics", "/openapi.json")]
        with http(server.url, OTHER_TOKEN) as other:
            other_ok = other.post("/v1/search", json={"query": "q"})
        keys = asyncio.run(store.usage("serve:rate:"))
    assert [r.status_code for r in first] == [200, 200]
    assert limited.status_code == 429
    seconds = int(limited.headers["retry-after"])
    assert 1 <= seconds <= 30
    assert limited.json() == {
        "error": f"rate limit reached (2/min per token); retry in {seconds} s",
        "retry_after": seconds,
    }
    assert [r.status_code for r in free] == [200, 200, 200]  # only searches cost
    assert other_ok.status_code == 200  # each token its own bucket
    assert keys[0] == 2
    assert not [k for k in store_keys(store) if TOKEN in k or OTHER_TOKEN in k]
    assert sorted(k for k in store_keys(store) if k.startswith("serve:rate:")) == sorted(
        f"serve:rate:{_sha(t)}" for t in (TOKEN, OTHER_TOKEN)
    )


def test_a_refused_search_gives_its_token_back(one_result: FakeDuckDuckGo, env: dict[str, str]) -> None:
    # The bucket's take reserves a token even when none is left (its debt queues waiters): a
    # 429 that kept it pushed the caller an hour further out with every refused retry, so a
    # client retrying on 429 locked itself out for good.
    store = MemoryStore(SystemClock())
    config = ServeConfig(rate_limit=RateLimit("1/h", 1 / 3600, 1)).with_tokens(TOKEN)
    with serving(env, config, store=store) as server, http(server.url) as client:
        first = client.post("/v1/search", json={"query": "q"})
        refused = [client.post("/v1/search", json={"query": "q"}) for _ in range(4)]
        refused.append(client.get("/search?q=q&format=json"))
    key = f"serve:rate:{_sha(TOKEN)}"
    after = asyncio.run(store.take(key, 1 / 3600, 1))  # one more take, as the next search would
    assert first.status_code == 200
    assert [r.status_code for r in refused] == [429] * 5
    assert all(3000 < int(r.headers["retry-after"]) <= 3600 for r in refused)  # each waits for the same token
    assert 3000 < after <= 3600  # the bucket owes one token: the first search's, none of the refused
    assert len(one_result.requests) == 1


def test_mcp_tool_calls_cost_a_token_each_and_nothing_else_does(
    one_result: FakeDuckDuckGo, env: dict[str, str]
) -> None:
    config = ServeConfig(rate_limit=RateLimit("1/h", 1 / 3600, 1)).with_tokens(TOKEN)
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    call = {"name": "web_search", "arguments": {"query": "q"}}
    with serving(env, config) as server, http(server.url, headers=headers) as client:
        first = asyncio.run(call_tool(server.url, {"query": "q"}))  # initialize, then one call
        listed = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        refused = client.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
        # JSON the MCP transport reads and orjson does not (NaN): it ran free of the limit.
        body = '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"_meta": {"x": NaN}, "name": '
        body += '"web_search", "arguments": {"query": "q"}}}'
        sneaked = client.post("/mcp", content=body, headers={"Content-Type": "application/json"})
    assert not first.is_error and first.content[0].text == BLOCKS
    assert listed.status_code == 200 and listed.json()["result"]["tools"][0]["name"] == "web_search"
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 60
    assert sneaked.status_code == 429
    assert len(one_result.requests) == 1


def test_an_mcp_message_the_transport_refuses_takes_no_token(one_result: FakeDuckDuckGo, env: dict[str, str]) -> None:
    store = MemoryStore(SystemClock())
    config = ServeConfig(rate_limit=RateLimit("1/h", 1 / 3600, 1)).with_tokens(TOKEN)
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "web_search", "arguments": {"query": "q"}}}
    with serving(env, config, store=store) as server, http(server.url, headers=headers) as client:
        batch = client.post("/mcp", json=[{**call, "id": 1}, {**call, "id": 2}])
        shapeless = client.post("/mcp", json={"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": 7})
        untouched = [k for k in store_keys(store) if k.startswith("serve:rate:")]
        single = client.post("/mcp", json={**call, "id": 4})
    assert (batch.status_code, shapeless.status_code) == (400, 400)  # the MCP transport's refusals
    assert untouched == []  # the bucket was never opened: still full
    assert single.status_code == 200 and single.json()["result"]["isError"] is False
    assert len(one_result.requests) == 1


def store_keys(store: MemoryStore) -> list[str]:
    return list(store._entries)  # the memory store's own table: what a Redis SCAN would list


def _sha(token: str) -> str:
    import hashlib

    return hashlib.sha256(token.encode()).hexdigest()[:16]


# -- MCP at /mcp ---------------------------------------------------------------------------------


async def call_tool(url: str, arguments: dict[str, Any], token: str = TOKEN) -> Any:
    (result,) = await call_tools(url, [arguments], token)
    return result


async def call_tools(url: str, calls: list[dict[str, Any]], token: str = TOKEN) -> list[Any]:
    """Each call's result, through one MCP session of the official client."""
    async with (
        async_http(url, token) as http_client,
        Client(streamable_http_client(f"{url}/mcp", http_client=http_client)) as client,
    ):
        return [await client.call_tool("web_search", arguments) for arguments in calls]


async def test_mcp_serves_the_web_search_tool(one_result: FakeDuckDuckGo, env: dict[str, str]) -> None:
    with serving(env) as server:
        async with (
            async_http(server.url) as http_client,
            Client(streamable_http_client(f"{server.url}/mcp", http_client=http_client)) as client,
        ):
            (tool, *_) = (await client.list_tools()).tools
            result = await client.call_tool("web_search", {"query": "q"})
            bad = await client.call_tool("web_search", {"query": "q", "num_results": 0})
            # The server's own limit named `limit`, the parameter, not the argument given.
            over = await client.call_tool("web_search", {"query": "q", "num_results": 51})
            over_limit = await client.call_tool("web_search", {"query": "q", "limit": 51})
    assert tool.name == "web_search"
    assert tool.input_schema["properties"]["provider"]["enum"] == ["auto", "duckduckgo", "public"]
    assert (result.is_error, result.content[0].text) == (False, BLOCKS)
    assert result.structured_content["provider"] == "duckduckgo"
    assert bad.is_error and bad.content[0].text == (
        "Invalid argument `num_results`: num_results must be a whole number of at least 1; got 0"
    )
    assert over.is_error and over.content[0].text == (
        "Invalid argument `num_results`: num_results must be at most 50 on this server; got 51"
    )
    assert over_limit.content[0].text == "Invalid argument `limit`: limit must be at most 50 on this server; got 51"


# -- metrics -------------------------------------------------------------------------------------


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_metrics_count_searches_attempts_cache_joins_and_cooldowns(
    ddg: FakeDuckDuckGo, brave: FakeBrave, config_dir: Path
) -> None:
    env = {**key_env("brave", config_dir, BRAVE_KEY), **brave.env, **ddg.env}
    (config_dir / "settings.toml").write_text('[pacing]\nduckduckgo = "off"\n', encoding="utf-8")
    brave.enqueue(
        Reply(200, brave_results_body("secret topic", 3)),
        Reply(200, brave_results_body("joined topic", 3), delay=0.5),
        rate_limited_reply(reset="300, 1419704"),
    )
    with serving(env, engine=True) as server, http(server.url) as client:
        client.post("/v1/search", json={"query": "secret topic"})  # ok
        client.post("/v1/search", json={"query": "secret topic"})  # cached

        async def joined() -> None:
            async with async_http(server.url) as c:
                await asyncio.gather(*(c.post("/v1/search", json={"query": "joined topic"}) for _ in range(3)))

        asyncio.run(joined())  # one leader, two joined its flight
        client.post("/v1/search", json={"query": "rate limited", "cache": "off"})  # brave 429, then duckduckgo
        ddg.enqueue(Reply(503, "down"))
        client.post("/v1/search", json={"query": "everything down", "providers": ["duckduckgo"], "cache": "off"})
        text = client.get("/metrics").text
    values = samples(text)
    assert values[("websearch_searches_total", (("outcome", "ok"),))] == 5  # secret, rate limited, 3 joined
    assert values[("websearch_searches_total", (("outcome", "cached"),))] == 1
    assert values[("websearch_searches_total", (("outcome", "failed"),))] == 1
    assert values[("websearch_provider_attempts_total", (("error_kind", "none"), ("provider", "brave")))] == 2
    assert values[("websearch_provider_attempts_total", (("error_kind", "rate_limited"), ("provider", "brave")))] == 1
    assert (
        values[("websearch_provider_attempts_total", (("error_kind", "unavailable"), ("provider", "duckduckgo")))] == 1
    )
    assert values[("websearch_provider_attempts_total", (("error_kind", "none"), ("provider", "duckduckgo")))] == 1
    assert values[("websearch_provider_attempt_duration_seconds_count", (("provider", "brave"),))] == 3
    assert values[("websearch_cache_hits_total", ())] == 1
    assert values[("websearch_cache_misses_total", ())] == 4  # secret, and the three identical at once
    assert values[("websearch_singleflight_joins_total", ())] == 2
    assert values[("websearch_provider_cooling_down", (("provider", "brave"),))] == 1
    assert values[("websearch_provider_cooling_down", (("provider", "duckduckgo"),))] == 1  # its 503 cools it too
    assert values[("websearch_providers_cooling_down", ())] == 2
    assert values[("websearch_http_requests_in_flight", ())] == 1  # the scrape itself
    assert (
        values[("websearch_http_requests_total", (("method", "POST"), ("route", "/v1/search"), ("status", "200")))] == 7
    )
    assert len(brave.requests) == 3
    labels = {v for (_, pairs) in values for _, v in pairs}
    for secret in (TOKEN, OTHER_TOKEN, BRAVE_KEY, "secret topic", "joined topic", "rate limited"):
        assert secret not in text
    assert labels <= {*SEARCH_PROVIDER_ORDER, *_LABEL_WORDS} | {v for v in labels if _number_like(v)}


_LABEL_WORDS = {"ok", "cached", "failed", "none", "rate_limited", "unavailable", "cooldown", "paced", "POST", "GET"}
_LABEL_WORDS |= {"/", "/healthz", "/readyz", "/metrics", "/openapi.json", "/v1/search", "/search", "/mcp", "other"}


def _number_like(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


# -- access logs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("log_queries", [False, True])
def test_access_log_is_json_without_the_query_unless_asked(
    one_result: FakeDuckDuckGo, env: dict[str, str], log_queries: bool
) -> None:
    stream = io.StringIO()
    handler = configure(stream)
    try:
        config = ServeConfig(log_queries=log_queries).with_tokens(TOKEN)
        with serving(env, config) as server, http(server.url) as client:
            client.post("/v1/search", json={"query": "private matter"})
            client.get("/search", params={"q": "private matter", "format": "json"})
            client.get("/metrics", headers={"Authorization": "Bearer " + "x" * 20})
            client.get("/healthz")
    finally:
        import logging

        logging.getLogger("websearch.serve.access").removeHandler(handler)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(e["method"], e["path"], e["status"]) for e in lines] == [
        ("POST", "/v1/search", 200),
        ("GET", "/search", 200),
        ("GET", "/metrics", 401),
    ]  # probes (/healthz, /readyz) are not logged
    search = lines[0]
    assert search["event"] == "request" and search["client"] == "127.0.0.1"
    assert search["token"] == _sha(TOKEN)
    assert (search["provider"], search["outcome"], search["cached"]) == ("duckduckgo", "ok", False)
    assert search["ms"] >= 0 and search["bytes"] > 0 and search["ts"].endswith("Z")
    assert "token" not in lines[2]
    text = stream.getvalue()
    assert TOKEN not in text and "x" * 20 not in text
    if log_queries:
        assert [e.get("query") for e in lines] == ["private matter", "private matter", None]
    else:
        assert "private" not in text


# -- OpenAPI -------------------------------------------------------------------------------------


def test_openapi_describes_v1_search_from_the_parameter_table(one_result: FakeDuckDuckGo, env: dict[str, str]) -> None:
    config = ServeConfig(limits=SMALL).with_tokens(TOKEN)
    with serving(env, config) as server, http(server.url) as client:
        document = client.get("/openapi.json").json()
    assert document["openapi"] == "3.1.0"
    operation = document["paths"]["/v1/search"]["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    Draft202012Validator.check_schema(body)
    validator = Draft202012Validator(body)
    properties = body["properties"]
    for param in PARAMS:
        assert (param.mcp[0] if param.mcp else param.name) in properties
    assert {"query", "provider", "fanout", "deadline", "exclude", "providers", "cache", "hedge"} <= set(properties)
    assert properties["query"]["maxLength"] == 20 and properties["limit"]["maximum"] == 5
    assert properties["fanout"]["maxItems"] == 1 and properties["deadline"]["maximum"] == 5
    assert properties["provider"]["enum"] == ["auto", "duckduckgo", "public"]
    assert validator.is_valid({"query": "q", "num_results": 3, "cache": "refresh", "exclude": ["duckduckgo"]})
    assert not validator.is_valid({"query": "q", "page": 2})
    assert not validator.is_valid({"recency": "day"})
    assert [p["name"] for p in operation["parameters"]] == ["format", "strict"]
    assert set(operation["responses"]) == {"200", "400", "401", "413", "422", "429", "502", "503"}
    answer = document["components"]["schemas"]["Answer"]
    Draft202012Validator.check_schema(answer)
    assert document["security"] == [{"bearer": []}]
    with serving(env) as server, http(server.url) as client:  # the answer the schema describes
        reply = client.post("/v1/search", json={"query": "q"}).json()
    Draft202012Validator(answer).validate(reply)


# -- readiness and the drain ---------------------------------------------------------------------


def test_readyz_says_why_the_store_is_degraded_while_searches_go_on(
    one_result: FakeDuckDuckGo, env: dict[str, str]
) -> None:
    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    with serving(env, engine=True, store=store) as server, http(server.url) as client:
        ready = client.get("/readyz")
        search = client.post("/v1/search", json={"query": "q"}).json()
    assert ready.status_code == 200
    assert ready.json() == {"status": "degraded", "store": "redis", "reason": "connection refused"}
    assert search["error"] is None
    assert [n["message"] for n in search["response"]["notices"]] == [
        "the shared state store is unavailable (connection refused); this search used in-process state only"
    ]


def test_a_drain_answers_503_to_new_requests_and_finishes_those_in_flight(
    ddg: FakeDuckDuckGo, env: dict[str, str]
) -> None:
    ddg.enqueue(
        Reply(
            200, results_page("slow", [DdgResult("S", "https://s.example/", "s")]), delay=1.0, content_type="text/html"
        )
    )
    with serving(env) as server, http(server.url) as client:
        results: list[httpx2.Response] = []
        worker = threading.Thread(target=lambda: results.append(client.post("/v1/search", json={"query": "slow"})))
        worker.start()
        asyncio.run(eventually(lambda: len(ddg.requests) == 1))
        server.lifecycle.drain()
        with http(server.url) as fresh:
            refused = fresh.post("/v1/search", json={"query": "other"})
            ready = fresh.get("/readyz")
            health = fresh.get("/healthz")
        worker.join(10)
    assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
    assert refused.json() == {"error": "the server is shutting down; retry on another"}
    assert (ready.status_code, ready.json()) == (503, {"status": "draining"})
    assert health.status_code == 200
    (done,) = results
    assert done.status_code == 200 and done.json()["response"]["sources"][0]["url"] == "https://s.example/"
    assert len(ddg.requests) == 1


def test_index_redirects_a_search_to_search_as_searxng_does(one_result: FakeDuckDuckGo, env: dict[str, str]) -> None:
    with serving(env) as server, http(server.url) as client:
        redirect = client.get("/?q=q&format=json")
        index = client.get("/")
    assert redirect.status_code == 308 and redirect.headers["location"] == "/search?q=q&format=json"
    assert index.json()["service"] == "websearch"
