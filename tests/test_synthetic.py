"""Synthetic against a loopback fake of the synthetic.new search API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock, make_client, messages, provider_context, search_once
from websearch import SearchParams, SearchResponse, SearchSource
from websearch._core._credentials import CredentialStore
from websearch._providers.synthetic import PROVIDER
from websearch.errors import MissingCredentialError, RateLimited
from websearch.providers import HttpResponse, ProviderContext
from websearch.testing import Reply
from websearch.testing.synthetic import FakeSynthetic

KEY = "syn_Hk3Pw9Lq5Zt1Xc7Vb2Nm"
QUERY = "python 3.14 free threading"
AUTH_FAILED = "Synthetic authorization failed ({}). Check API key or base URL."


@pytest.fixture
def synthetic() -> Iterator[FakeSynthetic]:
    with FakeSynthetic() as fake:
        yield fake


def make_env(env: dict[str, str], fake: FakeSynthetic) -> dict[str, str]:
    return {**env, **fake.env, "SYNTHETIC_API_KEY": KEY}


async def run(env: dict[str, str], **params: Any) -> SearchResponse:
    return await search_once("synthetic", env, QUERY, **params)


def context(config_dir: Path, env: dict[str, str]) -> ProviderContext:
    return provider_context(config_dir, env)


def assert_no_key(response: SearchResponse) -> None:
    for text in (response.error or "", repr(response), repr(response.attempts), json.dumps(response.to_dict())):
        assert KEY not in text


# -- the request -------------------------------------------------------------------------------


def assert_request(fake: FakeSynthetic) -> None:
    req = fake.last
    assert (req.method, req.path, req.query) == ("POST", "/v2/search", ())
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.headers["content-type"] == "application/json"
    assert req.headers["accept"] == "application/json"
    assert req.json() == {"query": QUERY}


async def test_default_request_returns_every_result(synthetic: FakeSynthetic, env: dict[str, str]) -> None:
    response = await run(make_env(env, synthetic))
    assert_request(synthetic)
    assert response.ok and response.provider == "synthetic"
    assert len(response.sources) == 8  # no default cap: all of them
    assert messages(response) == ()


@pytest.mark.parametrize(
    ("params", "count", "notices"),
    [
        ({"limit": 3}, 3, ()),
        ({"num_search_results": 5}, 5, ()),
        (
            {"limit": 3, "num_search_results": 5},
            5,
            ("limit=3 not applied: num_search_results=5 takes precedence",),
        ),
        ({"limit": 4, "num_search_results": 4}, 4, ()),
        ({"limit": 100}, 8, ()),
    ],
)
async def test_count_is_a_local_slice_and_never_sent(
    synthetic: FakeSynthetic, env: dict[str, str], params: dict[str, int], count: int, notices: tuple[str, ...]
) -> None:
    response = await run(make_env(env, synthetic), **params)
    assert_request(synthetic)
    assert len(response.sources) == count
    assert messages(response) == notices


@pytest.mark.parametrize("recency", ["day", "week", "month", "year"])
async def test_recency_is_not_sent_and_says_so(synthetic: FakeSynthetic, env: dict[str, str], recency: str) -> None:
    response = await run(make_env(env, synthetic), recency=recency)
    assert_request(synthetic)
    assert messages(response) == (f'recency="{recency}" not applied: Synthetic does not support it',)


async def test_unsupported_parameters_become_notices(synthetic: FakeSynthetic, env: dict[str, str]) -> None:
    response = await run(make_env(env, synthetic), max_tokens=10, temperature=0.0)
    assert messages(response) == (
        "max_tokens=10 not applied: Synthetic does not support it",
        "temperature=0.0 not applied: Synthetic does not support it",
    )


# -- availability and credentials ---------------------------------------------------------------


async def test_env_key_makes_synthetic_available(synthetic: FakeSynthetic, env: dict[str, str]) -> None:
    async with make_client(env=make_env(env, synthetic), clock=FakeClock()) as ws:
        available = {s.id: s.available for s in ws.provider_status()}["synthetic"]
        response = await ws.asearch(QUERY)
    assert available and response.provider == "synthetic"


async def test_stored_credential_makes_synthetic_available(
    synthetic: FakeSynthetic, env: dict[str, str], config_dir: Path
) -> None:
    CredentialStore(config_dir / "agent.db").set("synthetic", "api_key", {"api_key": "stored-synthetic-key"})
    async with make_client(env={**env, **synthetic.env}, clock=FakeClock()) as ws:
        available = {s.id: s.available for s in ws.provider_status()}["synthetic"]
        response = await ws.asearch(QUERY)
    assert available and response.provider == "synthetic"
    assert synthetic.last.headers["authorization"] == "Bearer stored-synthetic-key"


async def test_explicit_key_beats_env(synthetic: FakeSynthetic, env: dict[str, str]) -> None:
    async with make_client(
        env=make_env(env, synthetic), api_keys={"synthetic": "explicit-key"}, clock=FakeClock()
    ) as ws:
        await ws.asearch(QUERY, provider="synthetic")
    assert synthetic.last.headers["authorization"] == "Bearer explicit-key"


async def test_not_available_without_a_key(synthetic: FakeSynthetic, env: dict[str, str]) -> None:
    response = await run({**env, **synthetic.env})
    assert synthetic.requests == []
    assert response.provider == "duckduckgo"
    assert messages(response)[0] == (
        "provider synthetic was requested but is not available (set SYNTHETIC_API_KEY or run "
        "`websearch auth set synthetic`); used the automatic chain instead"
    )


def test_missing_credential_message(config_dir: Path) -> None:
    with pytest.raises(MissingCredentialError) as info:
        PROVIDER.plan(SearchParams(QUERY), context(config_dir, {}))
    assert info.value.message == (
        "Synthetic needs an API key: set SYNTHETIC_API_KEY or run `websearch auth set synthetic`"
    )


# -- parsing -----------------------------------------------------------------------------------

REALISTIC = {
    "results": [
        {
            "url": "https://docs.python.org/3.14/whatsnew/3.14.html",
            "title": "What's new in Python 3.14",
            "text": "Free-threaded Python is now officially supported.",
            "published": "2026-11-27T00:00:00.000Z",
        },
        {"url": "https://peps.python.org/pep-0779/", "title": None, "text": "", "published": "last Tuesday"},
        {
            "url": "https://lwn.net/Articles/1/",
            "title": "LWN: free threading",
            "text": "An overview.",
            "published": None,
        },
        {"title": "no url", "text": "dropped"},
        ["not", "an", "object"],
    ]
}
EXPECTED = (
    SearchSource(
        title="What's new in Python 3.14",
        url="https://docs.python.org/3.14/whatsnew/3.14.html",
        snippet="Free-threaded Python is now officially supported.",
        published_date="2026-11-27T00:00:00.000Z",  # kept raw; no age is computed from it
    ),
    SearchSource(
        title="https://peps.python.org/pep-0779/",
        url="https://peps.python.org/pep-0779/",
        published_date="last Tuesday",
    ),
    SearchSource(title="LWN: free threading", url="https://lwn.net/Articles/1/", snippet="An overview."),
)


async def test_parses_a_realistic_body(synthetic: FakeSynthetic, env: dict[str, str]) -> None:
    synthetic.enqueue(Reply(200, REALISTIC))
    response = await run(make_env(env, synthetic))
    assert response.sources == EXPECTED
    assert all(s.age_seconds is None for s in response.sources)
    assert (response.answer, response.request_id, response.auth_mode, response.related_questions) == (
        None,
        None,
        None,
        (),
    )


def test_parse_on_bytes(config_dir: Path) -> None:
    response = HttpResponse(200, {}, json.dumps(REALISTIC).encode())
    ctx = context(config_dir, {"SYNTHETIC_API_KEY": KEY})
    assert PROVIDER.parse(response, PROVIDER.plan(SearchParams(QUERY, limit=2), ctx)).sources == EXPECTED[:2]
    assert PROVIDER.parse(response, PROVIDER.plan(SearchParams(QUERY), ctx)).sources == EXPECTED  # no default cap


@pytest.mark.parametrize("body", [{"results": []}, {}, {"results": "none"}, {"results": [{"title": "no url"}]}])
async def test_empty_result_is_a_204_failure(
    synthetic: FakeSynthetic, env: dict[str, str], body: dict[str, Any]
) -> None:
    synthetic.enqueue(Reply(200, body))
    response = await run(make_env(env, synthetic))
    assert response.error == "Synthetic returned no renderable search content."
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (204, "no_results")


# -- errors ------------------------------------------------------------------------------------

ERRORS = [
    (Reply(401, {"error": "Invalid API key"}), 401, "auth", AUTH_FAILED.format(401)),
    (Reply(402, {"error": "Payment required"}), 402, "quota", "synthetic: 402 credits exhausted: Payment required"),
    (Reply(403, {"error": "Forbidden"}), 403, "auth", AUTH_FAILED.format(403)),
    # Quota comes only from a status or a code, never from the prose: a 429 is a rate limit.
    (
        Reply(429, {"error": "Quota exceeded for this billing period"}),
        429,
        "rate_limited",
        "Synthetic API error (429): Quota exceeded for this billing period",
    ),
    (
        Reply(429, {"error": "Rate limit exceeded"}, headers={"Retry-After": "5"}),
        429,
        "rate_limited",
        "Synthetic API error (429): Rate limit exceeded; retry after 5 s",
    ),
    (Reply(400, {"error": "query is required"}), 400, "rejected", "Synthetic API error (400): query is required"),
    (Reply(500, "Internal Server Error"), 500, "unavailable", "Synthetic API error (500): Internal Server Error"),
    (
        Reply(502, "<html>\n<body>Bad   Gateway</body>\n</html>", content_type="text/html"),
        502,
        "unavailable",
        "Synthetic API error (502): <html> <body>Bad Gateway</body> </html>",
    ),
    (Reply(503, b""), 503, "unavailable", "Synthetic API error (503): Service Unavailable"),
    (
        Reply(200, "OK", content_type="text/plain"),
        200,
        "invalid_response",
        "Synthetic returned a body that is not JSON",
    ),
    (Reply(200, [{"url": "https://x"}]), 200, "invalid_response", "Synthetic returned JSON that is not an object"),
]


@pytest.mark.parametrize(("reply", "status", "kind", "message"), ERRORS)
async def test_error_statuses(
    synthetic: FakeSynthetic, env: dict[str, str], reply: Reply, status: int, kind: str, message: str
) -> None:
    synthetic.enqueue(reply)
    response = await run(make_env(env, synthetic))
    assert response.error == message
    (attempt,) = response.attempts
    assert (attempt.provider, attempt.status, attempt.error, attempt.error_kind) == ("synthetic", status, message, kind)
    assert_no_key(response)


def test_retry_after_is_kept(config_dir: Path) -> None:
    response = HttpResponse(429, {"retry-after": "5"}, b'{"error": "Rate limit exceeded"}', secrets=(KEY,))
    plan = PROVIDER.plan(SearchParams(QUERY), context(config_dir, {"SYNTHETIC_API_KEY": KEY}))
    with pytest.raises(RateLimited) as info:
        PROVIDER.parse(response, plan)
    assert (info.value.status, info.value.retry_after) == (429, 5.0)


async def test_key_echoed_in_an_error_body_is_redacted(synthetic: FakeSynthetic, env: dict[str, str]) -> None:
    synthetic.enqueue(Reply(500, {"error": f"token {KEY} rejected by upstream"}))
    response = await run(make_env(env, synthetic))
    assert response.error == "Synthetic API error (500): token [redacted] rejected by upstream"
    assert_no_key(response)


# -- the richer parameters --------------------------------------------------------------------


async def test_richer_parameters_are_not_sent_and_each_is_disclosed(
    synthetic: FakeSynthetic, env: dict[str, str]
) -> None:
    response = await run(make_env(env, synthetic), include_domains=["example.net"], recency_days=3)
    assert_request(synthetic)  # still just {"query": ...}: the fake's results happen to be on example.net
    assert response.ok and messages(response) == (
        "recency_days=3 not applied: Synthetic does not support it",
        'include_domains=["example.net"] not applied: Synthetic does not support it',
    )


async def test_results_off_the_included_domains_are_removed(synthetic: FakeSynthetic, env: dict[str, str]) -> None:
    synthetic.enqueue(
        Reply(
            200,
            {"results": [{"url": "https://python.org/a", "title": "A"}, {"url": "https://b.example/", "title": "B"}]},
        )
    )
    response = await run(make_env(env, synthetic), include_domains=["python.org"])
    assert [s.url for s in response.sources] == ["https://python.org/a"]
    assert messages(response)[-1] == 'include_domains=["python.org"] enforced: 1 result outside these hosts removed'
    synthetic.enqueue(Reply(200, {"results": [{"url": "https://b.example/", "title": "B"}]}))
    emptied = await run(make_env(env, synthetic), include_domains=["python.org"])
    assert (emptied.ok, emptied.attempts[0].error_kind) == (False, "no_results")
