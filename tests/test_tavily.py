"""Tavily against a loopback fake of api.tavily.com: request body, recency retry, parsing, errors, keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import TAVILY_KEY, FakeClock, messages, provider_context, search_once
from websearch import Attempt, SearchParams, SearchResponse, SearchSource, WebSearch
from websearch._core._credentials import CredentialStore
from websearch._core._notices import not_applied
from websearch._providers.tavily import PROVIDER
from websearch.errors import MissingCredentialError
from websearch.providers import HttpResponse, ProviderContext
from websearch.testing import Reply
from websearch.testing.tavily import FakeTavily, tavily_error, tavily_results_body, usage_limit_reply

KEY = TAVILY_KEY


async def search(env: dict[str, str], clock: FakeClock, query: str = "bun release", **kwargs: Any) -> SearchResponse:
    return await search_once("tavily", env, query, clock, **kwargs)


def context(env: dict[str, str], config_dir: Path, clock: FakeClock) -> ProviderContext:
    return provider_context(config_dir, env, clock=clock)


def body(max_results: int = 5, query: str = "bun release", **extra: Any) -> dict[str, Any]:
    return {
        "query": query,
        "search_depth": "basic",
        "max_results": max_results,
        "include_answer": "advanced",
        "include_raw_content": False,
        **extra,
    }


# -- the request ------------------------------------------------------------------------------


async def test_default_request(tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(tenv, clock)
    assert response.ok and messages(response) == ()
    req = tavily.last
    assert (req.method, req.path, req.query) == ("POST", "/search", ())
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.headers["content-type"] == "application/json"
    assert req.json() == body()
    assert list(req.json()) == list(body())  # no topic, no time_range, nothing else
    assert len(response.sources) == 5 and response.answer


@pytest.mark.parametrize(
    ("kwargs", "max_results", "notices"),
    [
        ({"limit": 3}, 3, ()),
        ({"limit": 1}, 1, ()),  # upstream's code clamps to 1..20 (its doc's 5..20 is wrong)
        ({"num_search_results": 12}, 12, ()),
        (
            {"limit": 3, "num_search_results": 12},
            12,
            ("limit=3 not applied: num_search_results=12 takes precedence",),
        ),
        ({"limit": 40}, 20, ("limit=40 clamped to 20: Tavily returns at most 20 results",)),
        (
            {"num_search_results": 99, "limit": 99},
            20,
            ("num_search_results=99 clamped to 20: Tavily returns at most 20 results",),
        ),
    ],
)
async def test_max_results_is_the_collapsed_clamped_number(
    tavily: FakeTavily,
    tenv: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, int],
    max_results: int,
    notices: tuple[str, ...],
) -> None:
    response = await search(tenv, clock, **kwargs)
    assert tavily.last.json() == body(max_results)
    assert len(response.sources) == max_results
    assert messages(response) == notices


@pytest.mark.parametrize("recency", ["day", "week", "month", "year"])
async def test_recency_is_time_range_verbatim(
    tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock, recency: str
) -> None:
    response = await search(tenv, clock, recency=recency, limit=2)
    assert len(tavily.requests) == 1
    assert tavily.last.json() == body(2, time_range=recency)
    assert "topic" not in tavily.last.json()
    assert response.ok and messages(response) == ()


async def test_unsupported_parameters_become_notices(
    tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock
) -> None:
    response = await search(tenv, clock, max_tokens=64, temperature=1.0)
    assert messages(response) == (
        "max_tokens=64 not applied: Tavily does not support it",
        "temperature=1.0 not applied: Tavily does not support it",
    )
    assert tavily.last.json() == body()


# -- the recency retry ------------------------------------------------------------------------


@pytest.mark.parametrize("recency", ["day", "week", "month", "year"])
async def test_empty_filtered_search_is_repeated_without_time_range(
    env: dict[str, str], clock: FakeClock, recency: str
) -> None:
    with FakeTavily(empty_with_time_range=True) as fake:
        response = await search({**env, **fake.env, "TAVILY_API_KEY": KEY}, clock, recency=recency, limit=3)
    assert [r.json() for r in fake.requests] == [body(3, time_range=recency), body(3)]
    assert len(response.sources) == 3 and response.ok
    notice = not_applied(
        "recency",
        recency,
        f"Tavily found nothing with time_range={recency}, so these results come from a search without it",
    )
    assert messages(response) == (
        f'recency="{recency}" not applied: Tavily found nothing with time_range={recency}, '
        "so these results come from a search without it",
    )
    assert response.notices == (notice,)
    assert response.attempts == (Attempt("tavily", None, None, 0.0, notices=(notice,)),)


async def test_answer_alone_needs_no_retry(tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock) -> None:
    tavily.enqueue(Reply(200, {**tavily_results_body("q", 0), "answer": " Yes. "}))
    response = await search(tenv, clock, recency="day")
    assert len(tavily.requests) == 1
    assert response.answer == "Yes." and response.sources == ()


async def test_blank_answer_and_no_results_is_retried(
    tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock
) -> None:
    tavily.enqueue(Reply(200, {**tavily_results_body("q", 0), "answer": "   "}))
    response = await search(tenv, clock, recency="week")
    assert [("time_range" in r.json()) for r in tavily.requests] == [True, False]
    assert len(response.sources) == 5


async def test_retry_that_is_still_empty_is_the_chains_204(
    tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock
) -> None:
    tavily.enqueue(Reply(200, tavily_results_body("q", 0)), Reply(200, {"results": []}))
    response = await search(tenv, clock, recency="month")
    assert len(tavily.requests) == 2
    assert response.error == "Tavily returned no renderable search content."
    (attempt,) = response.attempts
    assert (attempt.status, attempt.error, attempt.error_kind) == (
        204,
        "Tavily returned no renderable search content.",
        "no_results",
    )
    assert [n.kind for n in attempt.notices] == ["not_applied"]  # the retry without time_range, said


async def test_error_is_not_retried(tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock) -> None:
    tavily.enqueue(Reply(500, tavily_error("Internal error")))
    response = await search(tenv, clock, recency="day")
    assert len(tavily.requests) == 1
    assert response.error == "Tavily API error (500): Internal error"


async def test_empty_without_recency_is_not_retried(tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock) -> None:
    tavily.enqueue(Reply(200, tavily_results_body("q", 0)))
    response = await search(tenv, clock)
    assert len(tavily.requests) == 1
    assert response.error == "Tavily returned no renderable search content."


# -- parsing ----------------------------------------------------------------------------------

REALISTIC = {
    "query": "bun release",
    "follow_up_questions": None,
    "answer": "  Bun v1.3.12 was released on 2026-11-27 with a faster installer.  \n",
    "images": [],
    "results": [
        {
            "title": "Bun v1.3.12",
            "url": "https://bun.com/blog/bun-v1.3.12",
            "content": " release notes ",
            "published_date": "2026-11-27",
            "score": 0.93,
            "raw_content": None,
        },
        {
            "title": "Bun on GitHub",
            "url": "https://github.com/oven-sh/bun/releases",
            "content": "Releases of oven-sh/bun",
            "published_date": "Sun, 29 Nov 2026 18:00:00 GMT",
            "score": 0.8,
        },
        {"title": "", "url": "https://news.example.com/bun", "content": "", "published_date": "last week"},
        {"title": "no url", "content": "dropped"},
        {"url": "", "title": "empty url"},
        {"title": "Sixth", "url": "https://six.example.com", "content": "beyond the limit"},
    ],
    "response_time": 1.67,
    "request_id": "req-123",
}


async def test_parses_a_realistic_body_exactly(tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock) -> None:
    tavily.enqueue(Reply(200, REALISTIC))
    response = await search(tenv, clock, limit=3)
    assert response == SearchResponse(
        provider="tavily",
        query="bun release",
        answer="Bun v1.3.12 was released on 2026-11-27 with a faster installer.",
        sources=(
            SearchSource(
                title="Bun v1.3.12",
                url="https://bun.com/blog/bun-v1.3.12",
                snippet="release notes",
                published_date="2026-11-27",
                age_seconds=3 * 86400 + 12 * 3600,
            ),
            SearchSource(
                title="Bun on GitHub",
                url="https://github.com/oven-sh/bun/releases",
                snippet="Releases of oven-sh/bun",
                published_date="Sun, 29 Nov 2026 18:00:00 GMT",
                age_seconds=18 * 3600,
            ),
            SearchSource(
                title="https://news.example.com/bun", url="https://news.example.com/bun", published_date="last week"
            ),
        ),
        request_id="req-123",
        auth_mode="api_key",
        attempts=(Attempt("tavily", None, None, 0.0),),
    )


def test_parse_tolerates_missing_fields(clock: FakeClock, config_dir: Path) -> None:
    plan = PROVIDER.plan(SearchParams("q"), context({"TAVILY_API_KEY": KEY}, config_dir, clock))
    raw = HttpResponse(200, {}, json.dumps({"answer": None, "response_time": "0.4"}).encode())
    parsed = PROVIDER.parse(raw, plan)
    assert (parsed.answer, parsed.sources, parsed.request_id, parsed.auth_mode) == (None, (), None, "api_key")
    news = tavily_results_body("q", 7, news=True, request_id="r-1")
    parsed = PROVIDER.parse(HttpResponse(200, {}, json.dumps(news).encode()), plan)
    assert len(parsed.sources) == 5 and parsed.request_id == "r-1"
    assert parsed.sources[0].published_date == "Sun, 29 Nov 2026 18:00:00 GMT"
    assert parsed.sources[0].age_seconds == 18 * 3600


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "status", "kind", "message"),
    [
        (
            Reply(401, tavily_error("Unauthorized: missing or invalid API key.")),
            401,
            "auth",
            "Tavily authorization failed (401). Check API key or base URL.",
        ),
        (Reply(402, {"detail": "Payment Required"}), 402, "quota", "tavily: 402 credits exhausted: Payment Required"),
        (
            Reply(403, tavily_error("Forbidden")),
            403,
            "auth",
            "Tavily authorization failed (403). Check API key or base URL.",
        ),
        (
            usage_limit_reply(432),
            432,
            "quota",
            "tavily: 432 credits exhausted: This request exceeds your plan's set usage limit. "
            "Please upgrade your plan or contact support@tavily.com",
        ),
        (
            usage_limit_reply(433),
            433,
            "quota",
            "tavily: 433 credits exhausted: This request exceeds the pay-as-you-go limit. "
            "You can increase your limit on the Tavily dashboard.",
        ),
        (Reply(432, "<html>limit</html>", content_type="text/html"), 432, "quota", "tavily: 432 credits exhausted"),
        (
            Reply(
                429,
                tavily_error(
                    "Your request has been blocked due to excessive requests. Please reduce rate of requests."
                ),
                headers={"Retry-After": "20"},
            ),
            429,
            "rate_limited",
            "Tavily API error (429): Your request has been blocked due to excessive requests. Please reduce rate of "
            "requests.; retry after 20 s",
        ),
        (
            Reply(
                429,
                {
                    "error": {
                        "code": "rate_limited",
                        "message": "Keyless rate limit reached",
                        "window": "minute",
                        "retry_after_seconds": 45,
                        "next_actions": ["get an API key"],
                    }
                },
            ),
            429,
            "rate_limited",
            "Tavily API error (429): Keyless rate limit reached (rate_limited); retry after 45 s",
        ),
        (
            Reply(400, tavily_error("Invalid time_range.")),
            400,
            "rejected",
            "Tavily API error (400): Invalid time_range.",
        ),
        (
            Reply(400, {"detail": [{"loc": ["body", "query"], "msg": "field required"}]}),
            400,
            "rejected",
            'Tavily API error (400): {"detail": [{"loc": ["body", "query"], "msg": "field required"}]}',
        ),
        (Reply(422, {"message": "Unprocessable"}), 422, "rejected", "Tavily API error (422): Unprocessable"),
        # quota comes from a status, never from the words: none of these is "credits exhausted"
        (
            Reply(500, tavily_error("quota service unavailable")),
            500,
            "unavailable",
            "Tavily API error (500): quota service unavailable",
        ),
        (Reply(400, tavily_error("insufficient query")), 400, "rejected", "Tavily API error (400): insufficient query"),
        (
            Reply(422, tavily_error("Insufficient parameters")),
            422,
            "rejected",
            "Tavily API error (422): Insufficient parameters",
        ),
        (Reply(500, "Internal   Server\nError"), 500, "unavailable", "Tavily API error (500): Internal Server Error"),
        (Reply(502, b""), 502, "unavailable", "Tavily API error (502): Bad Gateway"),
        (
            Reply(200, "<html>maintenance</html>", content_type="text/html"),
            200,
            "invalid_response",
            "Tavily returned a body that is not JSON",
        ),
        (Reply(200, '{"answer": "cut sh'), 200, "invalid_response", "Tavily returned a body that is not JSON"),
        (Reply(200, ["a"]), 200, "invalid_response", "Tavily returned JSON that is not an object"),
    ],
)
async def test_error_statuses_and_envelopes(
    tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock, reply: Reply, status: int, kind: str, message: str
) -> None:
    tavily.enqueue(reply)
    response = await search(tenv, clock)
    assert response.error == message
    assert response.provider == "tavily" and response.sources == ()
    (attempt,) = response.attempts
    assert (attempt.provider, attempt.status, attempt.error, attempt.error_kind) == ("tavily", status, message, kind)


async def test_unknown_key_is_a_401(tavily: FakeTavily, env: dict[str, str], clock: FakeClock) -> None:
    response = await search({**env, **tavily.env, "TAVILY_API_KEY": "tvly-wrong-000000"}, clock)
    assert response.error == "Tavily authorization failed (401). Check API key or base URL."


@pytest.mark.parametrize(
    ("reply", "retry"),
    [
        (Reply(429, tavily_error("slow down"), headers={"retry-after": "20"}), 20.0),
        (Reply(429, {"error": {"message": "x", "retry_after_seconds": 45}}), 45.0),
        (Reply(429, {"error": {"message": "x", "retry_after_seconds": 45}}, headers={"retry-after": "5"}), 5.0),
        (Reply(432, tavily_error("quota exceeded"), headers={"retry-after": "7"}), 7.0),
        (Reply(500, "boom"), None),
    ],
)
def test_retry_hint(reply: Reply, retry: float | None, clock: FakeClock, config_dir: Path) -> None:
    raw, _ = reply.encoded()
    plan = PROVIDER.plan(SearchParams("q"), context({"TAVILY_API_KEY": KEY}, config_dir, clock))
    headers = {name.lower(): value for name, value in reply.headers.items()}
    assert PROVIDER.error(HttpResponse(reply.status, headers, raw), plan).retry_after == retry


# -- credentials ------------------------------------------------------------------------------


def test_missing_key_message(config_dir: Path, clock: FakeClock) -> None:
    ctx = context({"WEBSEARCH_CONFIG_DIR": str(config_dir)}, config_dir, clock)
    with pytest.raises(MissingCredentialError) as info:
        PROVIDER.plan(SearchParams("q"), ctx)
    assert info.value.message == "Tavily needs an API key: set TAVILY_API_KEY or run `websearch auth set tavily`"


async def test_without_a_key_an_explicit_tavily_falls_back(
    tavily: FakeTavily, env: dict[str, str], clock: FakeClock
) -> None:
    response = await search({**env, **tavily.env}, clock)
    assert response.provider == "duckduckgo"
    assert messages(response)[0] == (
        "provider tavily was requested but is not available (set TAVILY_API_KEY or run `websearch auth set tavily`); "
        "used the automatic chain instead"
    )
    assert tavily.requests == []


def test_availability(env: dict[str, str], config_dir: Path) -> None:
    def available(env: dict[str, str]) -> bool:
        return next(s for s in WebSearch(engine=False, env=env).provider_status() if s.id == "tavily").available

    assert not available(env)
    assert available({**env, "TAVILY_API_KEY": KEY})
    CredentialStore(config_dir / "agent.db").set("tavily", "api_key", {"api_key": KEY})
    assert available(env)


async def test_stored_credential_is_sent_and_env_wins(
    tavily: FakeTavily, env: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    CredentialStore(config_dir / "agent.db").set("tavily", "api_key", {"api_key": KEY})
    response = await search({**env, **tavily.env}, clock)
    assert response.provider == "tavily" and response.ok
    assert tavily.last.headers["authorization"] == f"Bearer {KEY}"
    await search({**env, **tavily.env, "TAVILY_API_KEY": "tvly-env-1111"}, clock)
    assert tavily.last.headers["authorization"] == "Bearer tvly-env-1111"


@pytest.mark.parametrize(
    "reply",
    [
        Reply(500, f"server error while using key {KEY}"),
        Reply(400, tavily_error(f"Invalid API key format: {KEY}")),
        Reply(432, tavily_error(f"Key {KEY} exceeded its plan usage limit")),
        Reply(429, {"error": {"message": f"too many requests for {KEY}", "retry_after_seconds": 3}}),
        Reply(401, tavily_error(f"Unauthorized: {KEY}")),
        Reply(200, f"<html>{KEY}</html>"),
    ],
)
async def test_key_never_leaks_from_error_paths(
    tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock, reply: Reply
) -> None:
    tavily.enqueue(reply)
    response = await search(tenv, clock, recency="day")
    assert response.error
    for text in (response.error, repr(response.attempts), repr(response), str(response.to_dict())):
        assert KEY not in text
