"""Anthropic (Messages API + web_search tool) against a loopback fake of api.anthropic.com."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import NOW, FakeClock, eventually, make_client, messages, provider_context, run_cli, search_once
from websearch import SearchCitation, SearchParams, SearchResponse, SearchSource, SearchUsage, WebSearch
from websearch._core._credentials import CredentialStore
from websearch._core._notices import CutShort
from websearch._providers._prompts import SYSTEM_PROMPT
from websearch._providers.anthropic import PROVIDER, parse_message, parse_page_age
from websearch.errors import MissingCredentialError, RateLimited
from websearch.providers import HttpResponse, ProviderContext
from websearch.testing import MockTransport, Reply
from websearch.testing.anthropic import FakeAnthropic, anthropic_error, anthropic_message, anthropic_turn

KEY = "sk-ant-api03-Zq7Xw3Tn9Lp2Rv8Km4HsAAAA"
OAUTH = "sk-ant-oat01-Hd82jWq0PzL5mN3vB7cXAAAA"
REFRESH = "sk-ant-ort01-refresh-1"
QUERY = "bun 1.3 release"
SYSTEM = [{"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}}]
BODY = {
    "model": "claude-haiku-4-5",
    "max_tokens": 4096,
    "messages": [{"role": "user", "content": QUERY}],
    "tools": [{"type": "web_search_20250305", "name": "web_search"}],
    "system": SYSTEM,
}
MISSING = (
    "Anthropic needs an API key: set ANTHROPIC_SEARCH_API_KEY or ANTHROPIC_OAUTH_TOKEN or ANTHROPIC_API_KEY "
    "or run `websearch auth set anthropic`"
)
LOCAL = "{}={} applied as a local cap on sources: Anthropic has no result-count parameter"


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def make_env(env: dict[str, str], fake: FakeAnthropic, **extra: str) -> dict[str, str]:
    return {**env, **fake.env, "ANTHROPIC_SEARCH_API_KEY": KEY, **extra}


async def run(env: dict[str, str], query: str = QUERY, **params: Any) -> SearchResponse:
    return await search_once("anthropic", env, query, **params)


def context(config_dir: Path, env: dict[str, str]) -> ProviderContext:
    return provider_context(config_dir, env)


def assert_no_secret(response: SearchResponse, *secrets: str) -> None:
    for secret in secrets or (KEY,):
        for text in (response.error or "", repr(response), repr(response.attempts), json.dumps(response.to_dict())):
            assert secret not in text


# -- the request -------------------------------------------------------------------------------


async def test_default_request(fake: FakeAnthropic, env: dict[str, str]) -> None:
    response = await run(make_env(env, fake))
    req = fake.last
    assert (req.method, req.path, req.query) == ("POST", "/v1/messages", (("beta", "true"),))
    assert req.headers["x-api-key"] == KEY
    assert "authorization" not in req.headers
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert req.headers["anthropic-beta"] == "web-search-2025-03-05"
    assert (req.headers["content-type"], req.headers["accept"]) == ("application/json", "application/json")
    assert req.json() == BODY
    assert response.ok and response.provider == "anthropic" and messages(response) == ()


@pytest.mark.parametrize(
    ("params", "n", "notices"),
    [
        ({"limit": 3}, 3, (LOCAL.format("limit", 3),)),
        ({"num_search_results": 2}, 2, (LOCAL.format("num_search_results", 2),)),
        (
            {"limit": 4, "num_search_results": 2},
            2,
            ("limit=4 not applied: num_search_results=2 takes precedence", LOCAL.format("num_search_results", 2)),
        ),
        ({"limit": 2, "num_search_results": 2}, 2, (LOCAL.format("num_search_results", 2),)),
        ({"limit": 50}, 5, (LOCAL.format("limit", 50),)),
    ],
)
async def test_counts_are_a_local_cap_and_never_sent(
    fake: FakeAnthropic, env: dict[str, str], params: dict[str, int], n: int, notices: tuple[str, ...]
) -> None:
    response = await run(make_env(env, fake), **params)
    assert fake.last.json() == BODY
    assert len(response.sources) == n
    assert messages(response) == notices


@pytest.mark.parametrize("recency", ["day", "week", "month", "year"])
async def test_recency_is_not_sent_and_says_so(fake: FakeAnthropic, env: dict[str, str], recency: str) -> None:
    response = await run(make_env(env, fake), recency=recency)
    assert fake.last.json() == BODY
    assert messages(response) == (f'recency="{recency}" not applied: Anthropic does not support it',)


async def test_max_tokens_temperature_and_model_pass_through(fake: FakeAnthropic, env: dict[str, str]) -> None:
    response = await run(
        make_env(env, fake, ANTHROPIC_SEARCH_MODEL="claude-sonnet-4-5"), max_tokens=900, temperature=0.3
    )
    assert fake.last.json() == {**BODY, "model": "claude-sonnet-4-5", "max_tokens": 900, "temperature": 0.3}
    assert response.model == "claude-sonnet-4-5"
    assert messages(response) == ()


# -- base URLs: transparent redirect vs gateway --------------------------------------------------


async def test_search_base_url_names_a_gateway_with_bearer(fake: FakeAnthropic, env: dict[str, str]) -> None:
    gateway = {**env, "ANTHROPIC_SEARCH_API_KEY": KEY, "ANTHROPIC_SEARCH_BASE_URL": fake.base_url + "/anthropic/"}
    response = await run(gateway)
    req = fake.last
    assert (req.path, req.query) == ("/anthropic/v1/messages", (("beta", "true"),))
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert "x-api-key" not in req.headers
    assert req.json() == BODY
    assert response.ok and response.auth_mode == "api_key"


async def test_a_base_url_that_is_no_url_fails_the_attempt_as_config_naming_the_variable(
    fake: FakeAnthropic, env: dict[str, str]
) -> None:
    """Sent, it failed in aiohttp's words (`InvalidUrlClientError: api.anthropic.com/v1/messages`)."""
    response = await run({**env, "ANTHROPIC_SEARCH_API_KEY": KEY, "ANTHROPIC_SEARCH_BASE_URL": "api.anthropic.com"})
    (attempt,) = response.attempts
    assert attempt.error_kind == "config"
    assert (
        attempt.error
        == "ANTHROPIC_SEARCH_BASE_URL must be an http:// or https:// URL with a host; got 'api.anthropic.com'"
    )
    assert fake.requests == []


async def test_anthropic_base_url_is_a_gateway_too_but_search_base_url_wins(
    fake: FakeAnthropic, env: dict[str, str]
) -> None:
    both = {
        **env,
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": "https://chat-gateway.invalid",
        "ANTHROPIC_SEARCH_BASE_URL": fake.base_url + "/search-gw",
    }
    await run(both)
    assert fake.last.path == "/search-gw/v1/messages"
    await run({**env, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.base_url + "/chat-gw"})
    assert (fake.last.path, fake.last.headers["authorization"]) == ("/chat-gw/v1/messages", f"Bearer {KEY}")


async def test_websearch_base_url_wins_over_the_gateway_and_keeps_x_api_key(
    fake: FakeAnthropic, env: dict[str, str]
) -> None:
    response = await run(make_env(env, fake, ANTHROPIC_SEARCH_BASE_URL="https://llm-gateway.invalid/anthropic"))
    req = fake.last
    assert (req.path, req.headers["x-api-key"]) == ("/v1/messages", KEY)
    assert "authorization" not in req.headers
    assert req.json() == BODY
    assert response.ok


def test_official_base_url_is_not_a_gateway(config_dir: Path) -> None:
    ctx = context(config_dir, {"ANTHROPIC_SEARCH_BASE_URL": "https://api.anthropic.com/", "ANTHROPIC_API_KEY": KEY})
    request = PROVIDER.plan(SearchParams(QUERY), ctx).request
    assert request is not None and request.url == "https://api.anthropic.com/v1/messages"
    assert request.headers["X-Api-Key"] == KEY and "Authorization" not in request.headers
    assert request.secrets == (KEY,)
    default = PROVIDER.plan(SearchParams(QUERY), context(config_dir, {"ANTHROPIC_API_KEY": KEY})).request
    assert default is not None
    assert (default.url, default.params) == ("https://api.anthropic.com/v1/messages", [("beta", "true")])


def test_a_stored_login_is_planned_without_its_token(config_dir: Path) -> None:
    CredentialStore(config_dir / "agent.db").set(
        "anthropic", "oauth", {"access_token": OAUTH, "refresh_token": REFRESH, "expires_at": NOW.timestamp() + 3600}
    )
    plan = PROVIDER.plan(SearchParams(QUERY), context(config_dir, {}))
    assert (plan.state.oauth, plan.state.login) == (True, True)
    assert plan.request is not None and plan.request.secrets == ()
    assert "Authorization" not in plan.request.headers and "X-Api-Key" not in plan.request.headers
    assert plan.request.headers["anthropic-beta"] == "claude-code-20250219,oauth-2025-04-20,web-search-2025-03-05"
    assert plan.request.json["system"][0]["text"].startswith("You are Claude Code")


# -- the response ------------------------------------------------------------------------------


async def test_parses_the_full_message(fake: FakeAnthropic, env: dict[str, str]) -> None:
    response = await run(make_env(env, fake))
    body = anthropic_message(QUERY)
    r = body["content"][2]["content"]
    assert response.answer == (
        f"I'll search for {QUERY}.\n\nBased on the search results, {r[0]['title']} covers {QUERY}. "
        f"{r[1]['title']} covers {QUERY}. Check the release notes for details."
    )
    assert response.sources == (
        SearchSource(r[0]["title"], r[0]["url"], published_date="2 days ago", age_seconds=172800),
        SearchSource(r[1]["title"], r[1]["url"], published_date="April 30, 2025"),
        SearchSource(r[2]["title"], r[2]["url"]),
        SearchSource(r[3]["title"], r[3]["url"], published_date="3 weeks ago", age_seconds=1814400),
        SearchSource(r[4]["title"], r[4]["url"], published_date="5 hours ago", age_seconds=18000),
    )
    assert response.citations == tuple(
        SearchCitation(x["url"], x["title"], f"{x['title']} explains {QUERY} in detail.") for x in r[:2]
    )
    assert response.search_queries == (QUERY,)
    assert response.usage == SearchUsage(input_tokens=6039, output_tokens=931, search_requests=1)
    assert response.model == "claude-haiku-4-5"
    assert response.request_id is not None and response.request_id.startswith("req_011")
    assert response.auth_mode == "api_key"
    assert response.related_questions == ()


async def test_cited_text_comes_with_its_entities_decoded(fake: FakeAnthropic, env: dict[str, str]) -> None:
    # Anthropic's cited_text is the page's HTML text ("Today&#x27;s sunrise"); the fake escapes it so.
    query = 'joe\'s "pizza" & <pasta>'
    sent = anthropic_message(query)["content"][4]["citations"][0]["cited_text"]
    assert "joe&#x27;s &quot;pizza&quot; &amp; &lt;pasta&gt;" in sent
    response = await run(make_env(env, fake), query)
    assert [c.cited_text for c in response.citations] == [
        f"{s.title} explains {query} in detail." for s in response.sources[:2]
    ]


async def test_request_id_falls_back_to_the_message_id(fake: FakeAnthropic, env: dict[str, str]) -> None:
    fake.enqueue(Reply(200, anthropic_message(QUERY)))
    response = await run(make_env(env, fake))
    assert response.request_id == anthropic_message(QUERY)["id"]


def test_parse_message_dedupes_sources_and_skips_other_tools() -> None:
    result = {"type": "web_search_result", "url": "https://a.example", "title": "", "page_age": None}
    data = {
        "content": [
            {"type": "server_tool_use", "name": "web_fetch", "input": {"url": "https://x.example"}},
            {"type": "server_tool_use", "name": "web_search", "input": {"query": "  "}},
            {"type": "web_search_tool_result", "content": [result, dict(result, title="Again"), {"type": "other"}]},
            {
                "type": "text",
                "text": "A",
                "citations": [{"type": "web_search_result_location", "url": "https://a.example"}],
            },
            {"type": "text", "text": "B"},
        ]
    }
    parsed = parse_message(data)
    assert parsed.sources == [SearchSource("https://a.example", "https://a.example")]
    assert parsed.citations == [SearchCitation("https://a.example", "https://a.example", None)]
    assert (parsed.answer, parsed.queries, parsed.tool_errors) == ("AB", [], [])


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("2 days ago", 172800),
        ("1 day ago", 86400),
        ("3h", 10800),
        ("45 sec ago", 45),
        ("10 minutes ago", 600),
        ("5 m", 300),
        ("2 weeks ago", 1209600),
        ("3 months ago", 7776000),
        ("1 mo", 2592000),
        ("2 YEARS AGO", 63072000),
        ("April 30, 2025", None),
        ("yesterday", None),
        ("", None),
        (None, None),
    ],
)
def test_page_age_parser(value: str | None, seconds: int | None) -> None:
    assert parse_page_age(value) == seconds


async def test_empty_message_is_a_204(fake: FakeAnthropic, env: dict[str, str]) -> None:
    fake.enqueue(Reply(200, {"id": "msg_1", "type": "message", "content": [], "usage": {"input_tokens": 5}}))
    response = await run(make_env(env, fake))
    assert response.error == "Anthropic returned no renderable search content."
    assert response.attempts[0].status == 204


@pytest.mark.parametrize(
    ("code", "status", "kind"),
    [
        ("max_uses_exceeded", 502, "unavailable"),
        ("too_many_requests", 429, "rate_limited"),
        ("unavailable", 503, "unavailable"),
        ("query_too_long", 400, "rejected"),
        ("invalid_tool_input", 400, "rejected"),
    ],
)
async def test_tool_error_without_results_fails(
    fake: FakeAnthropic, env: dict[str, str], code: str, status: int, kind: str
) -> None:
    error = {"type": "web_search_tool_result_error", "error_code": code}
    content = [
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
        {"type": "web_search_tool_result", "tool_use_id": "s1", "content": error},
        {"type": "text", "text": "I could not search, but from memory..."},
    ]
    fake.enqueue(Reply(200, {"id": "msg_1", "type": "message", "content": content}))
    response = await run(make_env(env, fake))
    assert response.error == f"Anthropic web search failed: {code}"
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (status, kind)


async def test_tool_error_after_results_is_a_notice(fake: FakeAnthropic, env: dict[str, str]) -> None:
    body = anthropic_message(QUERY, n=2)
    body["content"].insert(
        3,
        {
            "type": "web_search_tool_result",
            "tool_use_id": "s2",
            "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
        },
    )
    fake.enqueue(Reply(200, body))
    response = await run(make_env(env, fake))
    assert len(response.sources) == 2
    assert messages(response) == ("Anthropic web search tool reported an error: max_uses_exceeded",)
    assert not isinstance(response.notices[0], CutShort)  # the turn's own limit: asked again, the same


async def test_a_passing_tool_error_after_results_cuts_the_answer_short(
    fake: FakeAnthropic, env: dict[str, str]
) -> None:
    body = anthropic_message(QUERY, n=2)
    error = {"type": "web_search_tool_result_error", "error_code": "too_many_requests"}
    body["content"].insert(3, {"type": "web_search_tool_result", "tool_use_id": "s2", "content": error})
    fake.enqueue(Reply(200, body))
    response = await run(make_env(env, fake))
    assert messages(response) == ("Anthropic web search tool reported an error: too_many_requests",)
    assert isinstance(response.notices[0], CutShort)  # served, never cached: asked again, it may be whole
    assert [n.kind for n in response.notices] == ["partial"]


# -- pause_turn: a long turn continued ---------------------------------------------------------

INCOMPLETE = "the answer may be incomplete"


def continuation(*paused: dict[str, Any]) -> dict[str, Any]:
    """The body that continues a turn after these paused replies: their content, as returned."""
    content = [block for reply in paused for block in reply["content"]]
    return {**BODY, "messages": [{"role": "user", "content": QUERY}, {"role": "assistant", "content": content}]}


def found(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """The search results of a reply, in order."""
    return [r for b in reply["content"] if b["type"] == "web_search_tool_result" for r in b["content"]]


async def test_a_paused_turn_is_continued_and_the_finished_answer_served(env: dict[str, str]) -> None:
    with FakeAnthropic(n=3, pauses=1) as fake:
        response = await run(make_env(env, fake))
    paused, final = anthropic_turn(QUERY, 1, n=3)
    assert [r.json() for r in fake.requests] == [BODY, continuation(paused)]
    first, last = found(paused)[0], found(final)[0]
    assert response.answer == (
        f"Based on the search results, {first['title']} covers {QUERY}. {last['title']} covers {QUERY}. "
        "Check the release notes for details."
    )
    # search 1 (in the paused reply) found results 1-3, search 2 (its results open the final reply) 3-5
    assert [s.url for s in response.sources] == [r["url"] for r in found(paused) + found(final)[1:]]
    assert len(response.sources) == 5
    assert [c.url for c in response.citations] == [first["url"], last["url"]]
    assert response.search_queries == (f"{QUERY} part 1", f"{QUERY} part 2")
    assert response.usage == SearchUsage(input_tokens=4000, output_tokens=300, search_requests=2)
    assert response.request_id is not None and response.request_id.startswith("req_011")
    assert messages(response) == ()


async def test_each_continuation_sends_every_paused_reply_so_far(env: dict[str, str]) -> None:
    with FakeAnthropic(n=3, pauses=2) as fake:
        response = await run(make_env(env, fake), limit=4)
    p0, p1, _ = anthropic_turn(QUERY, 2, n=3)
    assert [r.json() for r in fake.requests] == [BODY, continuation(p0), continuation(p0, p1)]
    assert len(response.sources) == 4  # the local cap applies to the whole turn's sources
    assert response.search_queries == tuple(f"{QUERY} part {j}" for j in range(1, 5))
    assert messages(response) == (LOCAL.format("limit", 4),)


async def test_a_turn_still_paused_after_three_continuations_is_served_as_partial(env: dict[str, str]) -> None:
    with FakeAnthropic(n=3, pauses=5) as fake:
        response = await run(make_env(env, fake))
    turn = anthropic_turn(QUERY, 5, n=3)
    assert [r.json() for r in fake.requests] == [BODY, *(continuation(*turn[:k]) for k in (1, 2, 3))]
    assert response.ok
    assert response.answer == f"Searching for {QUERY}, step 4.\n\nSearching further."
    assert len(response.sources) == 15  # results 1-15: 7 searches of 3, consecutive ones sharing one
    assert messages(response) == (
        f"Anthropic paused the turn and it was still paused after 3 continuations: {INCOMPLETE}",
    )
    assert [n.kind for n in response.notices] == ["partial"]
    assert isinstance(response.notices[0], CutShort)  # served, never cached


def test_parsing_a_lone_paused_reply_says_it_may_be_incomplete(config_dir: Path) -> None:
    plan = PROVIDER.plan(SearchParams(QUERY), context(config_dir, {"ANTHROPIC_API_KEY": KEY}))
    paused = anthropic_turn(QUERY, 1, n=2)[0]
    result = PROVIDER.parse(HttpResponse(200, {}, json.dumps(paused).encode()), plan)
    assert [s.url for s in result.sources] == [r["url"] for r in found(paused)]
    assert [n.message for n in result.notices] == [f"Anthropic paused the turn: {INCOMPLETE}"]


async def test_continuations_share_one_request_timeout(config_dir: Path) -> None:
    clock = FakeClock()
    turn = anthropic_turn(QUERY, 5, n=2)
    timeouts: list[float | None] = []

    async def handler(provider: str, request: Any) -> HttpResponse:
        timeouts.append(request.timeout)
        await clock.sleep(25)  # each reply takes 25 s
        return HttpResponse(200, {}, json.dumps(turn[len(timeouts) - 1]).encode())

    ctx = provider_context(config_dir, {"ANTHROPIC_API_KEY": KEY}, clock, MockTransport(handler))
    ctx.timeout = 60.0  # the client's per-request timeout
    result = await PROVIDER.search(PROVIDER.plan(SearchParams(QUERY), ctx), ctx)
    assert timeouts == [None, 35.0, 10.0]  # what is left of the 60 s; nothing left after the third reply
    assert [n.message for n in result.notices] == [
        f"Anthropic paused the turn and the time allowed for the search ran out before it finished: {INCOMPLETE}"
    ]
    assert clock.sleeps == [25, 25, 25]  # the replies' time only: the provider itself never waits


async def test_a_failed_continuation_serves_what_the_paused_reply_found(
    fake: FakeAnthropic, env: dict[str, str]
) -> None:
    paused = anthropic_turn(QUERY, 1, n=3)[0]
    fake.enqueue(Reply(200, paused), anthropic_error(529, "overloaded_error", f"Overloaded for {KEY}"))
    response = await run(make_env(env, fake))
    assert len(fake.requests) == 2
    assert response.ok and [s.url for s in response.sources] == [r["url"] for r in found(paused)]
    assert response.answer == f"Searching for {QUERY}, step 1.\n\nSearching further."
    assert messages(response) == (
        "Anthropic paused the turn and continuing it failed (Anthropic API error (529): Overloaded for [redacted] "
        f"(overloaded_error)): {INCOMPLETE}",
    )
    assert_no_secret(response)


def test_items_that_are_not_objects_are_skipped(config_dir: Path) -> None:
    junk: list[Any] = ["text", 7, None, ["nested"], True]
    data = {
        "content": [
            *junk,
            {"type": "server_tool_use", "name": "web_search", "input": "not an object"},
            {
                "type": "web_search_tool_result",
                "content": [*junk, {"type": "web_search_result", "url": "https://a.example"}],
            },
            {"type": "web_search_tool_result", "content": "not a list"},
            {"type": "text", "text": "A", "citations": [*junk, {"url": "https://a.example", "title": 5}]},
        ],
        "usage": ["not", "an", "object"],
        "stop_reason": "end_turn",
    }
    parsed = parse_message(data)
    assert parsed.sources == [SearchSource("https://a.example", "https://a.example")]
    assert parsed.citations == [SearchCitation("https://a.example", "https://a.example", None)]
    plan = PROVIDER.plan(SearchParams(QUERY), context(config_dir, {"ANTHROPIC_API_KEY": KEY}))
    result = PROVIDER.parse(HttpResponse(200, {}, json.dumps(data).encode()), plan)
    assert (result.answer, result.usage, result.notices) == ("A", None, ())


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "status", "kind", "message"),
    [
        (
            anthropic_error(401, "authentication_error", f"invalid x-api-key {KEY}"),
            401,
            "auth",
            "Anthropic authorization failed (401 authentication_error). Check API key or base URL.",
        ),
        (
            anthropic_error(
                403, "permission_error", "Your API key does not have permission to use the specified resource."
            ),
            403,
            "auth",
            "Anthropic authorization failed (403 permission_error). Check API key or base URL.",
        ),
        (
            anthropic_error(402, "billing_error", "Payment required"),
            402,
            "quota",
            "anthropic: 402 credits exhausted (billing_error): Payment required",
        ),
        (  # a low balance is reported as a bad request: quota comes from a status or a code, never the prose
            anthropic_error(
                400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API."
            ),
            400,
            "rejected",
            "Anthropic API error (400): Your credit balance is too low to access the Anthropic API. "
            "(invalid_request_error)",
        ),
        (
            anthropic_error(404, "not_found_error", "model: claude-nope"),
            404,
            "rejected",
            "Anthropic web search returned 404 (model or endpoint not found).",
        ),
        (
            anthropic_error(
                429, "rate_limit_error", "Number of requests has exceeded your rate limit.", {"retry-after": "30"}
            ),
            429,
            "rate_limited",
            "Anthropic API error (429): Number of requests has exceeded your rate limit. (rate_limit_error); "
            "retry after 30 s",
        ),
        (
            anthropic_error(500, "api_error", f"Internal server error for {KEY}"),
            500,
            "unavailable",
            "Anthropic API error (500): Internal server error for [redacted] (api_error)",
        ),
        (
            anthropic_error(529, "overloaded_error", "Overloaded"),
            529,
            "unavailable",
            "Anthropic API error (529): Overloaded (overloaded_error)",
        ),
        (
            Reply(502, "<html><body>502 Bad Gateway</body></html>", content_type="text/html"),
            502,
            "unavailable",
            "Anthropic API error (502): <html><body>502 Bad Gateway</body></html>",
        ),
        (
            Reply(200, "<html>captive portal</html>", content_type="text/html"),
            200,
            "invalid_response",
            "Anthropic returned a body that is not JSON",
        ),
        (
            Reply(200, [{"type": "message"}]),
            200,
            "invalid_response",
            "Anthropic returned JSON that is not an object",
        ),
        (  # an error inside a 200 takes the status its type stands for
            Reply(200, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            529,
            "unavailable",
            "Anthropic API error (529): Overloaded (overloaded_error)",
        ),
        (
            Reply(200, {"type": "error", "error": {"type": "strange_error", "message": "Odd"}}),
            502,
            "unavailable",
            "Anthropic API error (502): Odd (strange_error)",
        ),
    ],
)
async def test_error_statuses_and_envelopes(
    fake: FakeAnthropic, env: dict[str, str], reply: Reply, status: int, kind: str, message: str
) -> None:
    fake.enqueue(reply)
    response = await run(make_env(env, fake))
    assert response.error == message
    (attempt,) = response.attempts
    assert (attempt.status, attempt.error_kind, attempt.error) == (status, kind, message)
    assert_no_secret(response)


async def test_unknown_model_is_the_404_message(fake: FakeAnthropic, env: dict[str, str]) -> None:
    response = await run(make_env(env, fake, ANTHROPIC_SEARCH_MODEL="gpt-4o"))
    assert response.error == "Anthropic web search returned 404 (model or endpoint not found)."


def test_429_keeps_the_retry_after_hint(config_dir: Path) -> None:
    reply = anthropic_error(429, "rate_limit_error", "slow down", {"retry-after": "30"})
    response = HttpResponse(429, {"retry-after": "30"}, json.dumps(reply.body).encode())
    plan = PROVIDER.plan(SearchParams(QUERY), context(config_dir, {"ANTHROPIC_API_KEY": KEY}))
    with pytest.raises(RateLimited) as err:
        PROVIDER.parse(response, plan)
    assert (err.value.status, err.value.retry_after) == (429, 30.0)


async def test_body_cut_mid_way_is_an_error_not_a_partial_answer(fake: FakeAnthropic, env: dict[str, str]) -> None:
    fake.enqueue(Reply(200, anthropic_message(QUERY), truncate=True))
    response = await run(make_env(env, fake))
    assert response.error is not None and response.error.startswith("Anthropic request failed:")
    assert response.answer is None and response.sources == ()


async def test_missing_credential_message(config_dir: Path) -> None:
    ctx = context(config_dir, {})
    with pytest.raises(MissingCredentialError) as err:
        PROVIDER.plan(SearchParams(QUERY), ctx)
    assert err.value.message == MISSING


async def test_cancelling_mid_request_closes_the_connection(fake: FakeAnthropic, env: dict[str, str]) -> None:
    fake.enqueue(Reply(hang=True))
    async with make_client(env=make_env(env, fake), clock=FakeClock()) as ws:
        task = asyncio.create_task(ws.asearch(QUERY, provider="anthropic"))
        await eventually(lambda: fake.requests)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 1)
    await eventually(lambda: fake.disconnects)
    assert fake.disconnects == 1
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


# -- credentials and availability ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["ANTHROPIC_SEARCH_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"])
async def test_each_env_var_makes_it_available(env: dict[str, str], name: str) -> None:
    async with WebSearch(engine=False, env={**env, name: KEY}) as ws:
        row = next(r for r in ws.provider_status() if r.id == "anthropic")
    assert row.available


async def test_unavailable_without_credentials(env: dict[str, str]) -> None:
    async with WebSearch(engine=False, env=env) as ws:
        row = next(r for r in ws.provider_status() if r.id == "anthropic")
    assert not row.available
    assert row.reason == (
        "set ANTHROPIC_SEARCH_API_KEY or set ANTHROPIC_OAUTH_TOKEN or set ANTHROPIC_API_KEY or "
        "run `websearch auth set anthropic`"
    )


async def test_search_key_wins_over_api_key_and_env_over_stored(
    fake: FakeAnthropic, env: dict[str, str], config_dir: Path
) -> None:
    CredentialStore(config_dir / "agent.db").set("anthropic", "api_key", {"api_key": "sk-ant-api03-stored-0000"})
    await run({**env, **fake.env, "ANTHROPIC_API_KEY": "sk-ant-api03-general-0000", "ANTHROPIC_SEARCH_API_KEY": KEY})
    assert fake.last.headers["x-api-key"] == KEY
    await run({**env, **fake.env, "ANTHROPIC_API_KEY": "sk-ant-api03-general-0000"})
    assert fake.last.headers["x-api-key"] == "sk-ant-api03-general-0000"
    response = await run({**env, **fake.env})
    assert fake.last.headers["x-api-key"] == "sk-ant-api03-stored-0000"
    assert response.ok and response.auth_mode == "api_key"


async def test_oauth_token_in_env_is_bearer_with_claude_code_headers(fake: FakeAnthropic, env: dict[str, str]) -> None:
    response = await run({**env, **fake.env, "ANTHROPIC_OAUTH_TOKEN": OAUTH})
    req = fake.last
    assert req.headers["authorization"] == f"Bearer {OAUTH}"
    assert "x-api-key" not in req.headers
    assert req.headers["anthropic-beta"] == "claude-code-20250219,oauth-2025-04-20,web-search-2025-03-05"
    assert req.headers["user-agent"].startswith("claude-cli/") and req.headers["x-app"] == "cli"
    assert re.fullmatch(r"[0-9a-f-]{36}", req.headers["x-client-request-id"])
    assert req.json()["system"] == [
        {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
        {"type": "text", "text": "You are a helpful AI assistant with web search capabilities."},
        *SYSTEM,
    ]
    assert response.auth_mode == "oauth"


async def test_stored_oauth_login_is_used_without_refresh(
    fake: FakeAnthropic, env: dict[str, str], config_dir: Path
) -> None:
    CredentialStore(config_dir / "agent.db").set(
        "anthropic", "oauth", {"access_token": OAUTH, "refresh_token": REFRESH, "expires_at": NOW.timestamp() + 3600}
    )
    response = await run({**env, **fake.env})
    assert [r.path for r in fake.requests] == ["/v1/messages"]
    assert fake.last.headers["authorization"] == f"Bearer {OAUTH}"
    assert response.ok and response.auth_mode == "oauth"


async def test_expired_oauth_login_is_refreshed_and_written_back(
    fake: FakeAnthropic, env: dict[str, str], config_dir: Path
) -> None:
    store = CredentialStore(config_dir / "agent.db")
    store.set(
        "anthropic", "oauth", {"access_token": OAUTH, "refresh_token": REFRESH, "expires_at": NOW.timestamp() - 5}
    )
    response = await run({**env, **fake.env})
    token_req, search_req = fake.requests
    assert (token_req.method, token_req.path) == ("POST", "/v1/oauth/token")
    assert token_req.json() == {
        "grant_type": "refresh_token",
        "refresh_token": REFRESH,
        "client_id": "9d1c250a-e61b-44d9-88ed-5944d1962f5e",
    }
    assert search_req.headers["authorization"] == "Bearer sk-ant-oat01-fresh-1"
    assert response.ok and response.auth_mode == "oauth"
    stored = store.get("anthropic")
    assert stored is not None and dict(stored.data) == {
        "access_token": "sk-ant-oat01-fresh-1",
        "refresh_token": "sk-ant-ort01-next-1",
        "expires_at": NOW.timestamp() + 28800,
    }


async def test_failed_refresh_says_log_in_again(fake: FakeAnthropic, env: dict[str, str], config_dir: Path) -> None:
    revoked = "sk-ant-ort01-revoked-9999"
    CredentialStore(config_dir / "agent.db").set(
        "anthropic", "oauth", {"access_token": OAUTH, "refresh_token": revoked, "expires_at": 1.0}
    )
    response = await run({**env, **fake.env})
    assert response.error is not None
    assert response.error.startswith("Anthropic session expired and the refresh failed (token endpoint answered 400)")
    assert "log in again" in response.error
    assert [r.path for r in fake.requests] == ["/v1/oauth/token"]
    assert_no_secret(response, revoked, OAUTH)


async def test_stored_credential_makes_it_available(config_dir: Path, env: dict[str, str]) -> None:
    CredentialStore(config_dir / "agent.db").set("anthropic", "api_key", {"api_key": KEY})
    async with WebSearch(engine=False, env=env) as ws:
        assert next(r for r in ws.provider_status() if r.id == "anthropic").available


def test_cli_summary_layout(fake: FakeAnthropic, env: dict[str, str]) -> None:
    proc = run_cli(["search", QUERY, "--provider", "anthropic", "--limit", "2"], make_env(env, fake))
    assert proc.returncode == 0, proc.stderr
    r = anthropic_message(QUERY)["content"][2]["content"]
    lines = proc.stdout.splitlines()
    assert lines[:4] == [
        f"I'll search for {QUERY}.",
        "",
        f"Based on the search results, {r[0]['title']} covers "
        f"{QUERY}. {r[1]['title']} covers {QUERY}. Check the release notes for details.",
        "",
    ]
    assert lines[4:10] == [
        "## Sources",
        "2 sources",
        f"[1] {r[0]['title']} (2d ago)",
        f"    {r[0]['url']}",
        f"[2] {r[1]['title']} (April 30, 2025)",
        f"    {r[1]['url']}",
    ]
    assert "## Citations" in lines and "2 citations" in lines
    assert lines[-2:] == ["Search queries: 1", f"- {QUERY}"]
    assert KEY not in proc.stdout + proc.stderr


# -- the richer parameters --------------------------------------------------------------------

TOOL = {"type": "web_search_20250305", "name": "web_search"}


@pytest.mark.parametrize(
    ("params", "tool", "notices"),
    [
        ({"include_domains": ["bun.sh", "github.com"]}, {**TOOL, "allowed_domains": ["bun.sh", "github.com"]}, ()),
        ({"exclude_domains": ["w3schools.com"]}, {**TOOL, "blocked_domains": ["w3schools.com"]}, ()),
        ({"include_domains": ["bun.sh"], "exclude_domains": ["x.com"]}, {**TOOL, "allowed_domains": ["bun.sh"]}, ()),
        (
            {"include_domains": ["github.com"], "exclude_domains": ["gist.github.com", "x.com"]},
            {**TOOL, "allowed_domains": ["github.com"]},
            (
                'exclude_domains=["gist.github.com", "x.com"] dropped: Anthropic\'s web_search takes allowed_domains or '
                "blocked_domains, not both, so gist.github.com (inside the allowed ones) stays searchable; the others "
                "are outside them",
            ),
        ),
        (
            {"recency_days": 3, "exclude_domains": ["x.com"]},
            {**TOOL, "blocked_domains": ["x.com"]},
            ("recency_days=3 not applied: Anthropic does not support it",),
        ),
    ],
)
async def test_richer_domains_are_the_tools_domain_lists(
    fake: FakeAnthropic, env: dict[str, str], params: dict[str, Any], tool: dict[str, Any], notices: tuple[str, ...]
) -> None:
    response = await run(make_env(env, fake), **params)
    assert fake.last.json() == {**BODY, "tools": [tool]}
    assert response.ok and messages(response) == notices
