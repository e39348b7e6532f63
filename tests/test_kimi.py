"""Kimi against a loopback fake of the Kimi Code search service."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import NOW, FakeClock, make_client, messages, provider_context, search_once
from websearch import SearchParams, SearchResponse, SearchSource
from websearch._core._credentials import CredentialStore
from websearch._http._transport import Transport
from websearch._providers.kimi import PROVIDER
from websearch.errors import ConfigError, MissingCredentialError, RateLimited
from websearch.providers import HttpRequest, HttpResponse, ProviderContext
from websearch.testing import Reply
from websearch.testing.kimi import FakeKimi, kimi_error

KEY = "sk-kimi-Zq7Xw3Tn9Lp2Rv8Km4Hs"
QUERY = "rust 1.90 release"
BODY = {"text_query": QUERY, "limit": 10, "enable_page_crawling": False, "timeout_seconds": 30}
MISSING = (
    "Kimi needs an API key: set MOONSHOT_SEARCH_API_KEY or KIMI_SEARCH_API_KEY or MOONSHOT_API_KEY or "
    "KIMI_API_KEY or run `websearch auth set kimi`"
)
AUTH_FAILED = "Kimi authorization failed ({}). Check API key or base URL."


@pytest.fixture
def kimi() -> Iterator[FakeKimi]:
    with FakeKimi() as fake:
        yield fake


def make_env(env: dict[str, str], fake: FakeKimi, **extra: str) -> dict[str, str]:
    return {**env, **fake.env, "MOONSHOT_SEARCH_API_KEY": KEY, **extra}


async def run(env: dict[str, str], query: str = QUERY, **params: Any) -> SearchResponse:
    return await search_once("kimi", env, query, **params)


def context(config_dir: Path, env: dict[str, str]) -> ProviderContext:
    return provider_context(config_dir, env)


def assert_no_key(response: SearchResponse, key: str = KEY) -> None:
    for text in (response.error or "", repr(response), repr(response.attempts), json.dumps(response.to_dict())):
        assert key not in text


# -- the request -------------------------------------------------------------------------------


async def test_default_request(kimi: FakeKimi, env: dict[str, str]) -> None:
    response = await run(make_env(env, kimi))
    req = kimi.last
    assert (req.method, req.path, req.query) == ("POST", "/coding/v1/search", ())
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.headers["content-type"] == "application/json"
    assert req.headers["accept"] == "application/json"
    assert req.json() == BODY
    assert response.ok and response.provider == "kimi"
    assert len(response.sources) == 10
    assert messages(response) == ()


@pytest.mark.parametrize(
    ("params", "limit", "notices"),
    [
        ({"limit": 3}, 3, ()),
        ({"num_search_results": 7}, 7, ()),
        (
            {"limit": 3, "num_search_results": 7},
            7,
            ("limit=3 not applied: num_search_results=7 takes precedence",),
        ),
        ({"limit": 5, "num_search_results": 5}, 5, ()),
        ({"limit": 50}, 20, ("limit=50 clamped to 20: Kimi returns at most 20 results",)),
        (
            {"num_search_results": 21},
            20,
            ("num_search_results=21 clamped to 20: Kimi returns at most 20 results",),
        ),
    ],
)
async def test_count_is_sent_as_limit(
    kimi: FakeKimi, env: dict[str, str], params: dict[str, int], limit: int, notices: tuple[str, ...]
) -> None:
    response = await run(make_env(env, kimi), **params)
    assert kimi.last.json() == {**BODY, "limit": limit}
    assert len(response.sources) == limit
    assert messages(response) == notices


@pytest.mark.parametrize("recency", ["day", "week", "month", "year"])
async def test_recency_is_not_sent_and_says_so(kimi: FakeKimi, env: dict[str, str], recency: str) -> None:
    response = await run(make_env(env, kimi), recency=recency)
    assert kimi.last.json() == BODY
    assert messages(response) == (f'recency="{recency}" not applied: Kimi does not support it',)


async def test_unsupported_parameters_become_notices(kimi: FakeKimi, env: dict[str, str]) -> None:
    response = await run(make_env(env, kimi), max_tokens=100, temperature=0.5)
    assert kimi.last.json() == BODY
    assert messages(response) == (
        "max_tokens=100 not applied: Kimi does not support it",
        "temperature=0.5 not applied: Kimi does not support it",
    )


@pytest.mark.parametrize(
    ("extra", "path"),
    [
        ({"MOONSHOT_SEARCH_BASE_URL": "https://search.example.test/custom/v2/search"}, "/custom/v2/search"),
        ({"KIMI_SEARCH_BASE_URL": "https://kimi.example.test/k/search"}, "/k/search"),
        (
            {
                "MOONSHOT_SEARCH_BASE_URL": "https://m.example.test/m/search",
                "KIMI_SEARCH_BASE_URL": "https://k.example.test/k/search",
            },
            "/m/search",
        ),
    ],
)
async def test_search_url_env_is_still_redirected_to_the_fake(
    kimi: FakeKimi, env: dict[str, str], extra: dict[str, str], path: str
) -> None:
    response = await run(make_env(env, kimi, **extra))
    assert response.ok
    assert kimi.last.path == path


def test_search_url_env_is_the_full_url(config_dir: Path) -> None:
    params = SearchParams(QUERY)
    ctx = context(config_dir, {"KIMI_API_KEY": KEY})
    request = PROVIDER.plan(params, ctx).request
    assert request is not None and request.url == "https://api.kimi.com/coding/v1/search"
    ctx = context(config_dir, {"KIMI_API_KEY": KEY, "KIMI_SEARCH_BASE_URL": " https://gw.example.test/v9/search?x=1 "})
    request = PROVIDER.plan(params, ctx).request
    assert request is not None and request.url == "https://gw.example.test/v9/search?x=1"
    assert request.secrets == (KEY,)


def test_a_search_url_env_that_is_no_url_is_a_config_error_naming_it(config_dir: Path) -> None:
    ctx = context(config_dir, {"KIMI_API_KEY": KEY, "MOONSHOT_SEARCH_BASE_URL": "api.moonshot.cn/v1/search"})
    with pytest.raises(ConfigError, match=r"^MOONSHOT_SEARCH_BASE_URL must be an http:// or https:// URL"):
        PROVIDER.plan(SearchParams(QUERY), ctx)


# -- availability and credentials ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["MOONSHOT_SEARCH_API_KEY", "KIMI_SEARCH_API_KEY", "MOONSHOT_API_KEY", "KIMI_API_KEY"])
async def test_each_env_key_makes_kimi_available(kimi: FakeKimi, env: dict[str, str], name: str) -> None:
    full = {**env, **kimi.env, name: f"  {KEY}-{name}\n"}
    async with make_client(env=full, clock=FakeClock()) as ws:
        status = {s.id: s for s in ws.provider_status()}["kimi"]
        response = await ws.asearch(QUERY, provider="kimi")
    assert status.available
    assert response.provider == "kimi"
    assert kimi.last.headers["authorization"] == f"Bearer {KEY}-{name}"  # trimmed


async def test_env_key_order(kimi: FakeKimi, env: dict[str, str]) -> None:
    keys = {"KIMI_API_KEY": "k4-key", "MOONSHOT_API_KEY": "k3-key", "KIMI_SEARCH_API_KEY": "k2-key"}
    await run({**env, **kimi.env, **keys})
    assert kimi.last.headers["authorization"] == "Bearer k2-key"
    await run({**env, **kimi.env, **keys, "MOONSHOT_SEARCH_API_KEY": "   "})  # blank: skipped
    assert kimi.last.headers["authorization"] == "Bearer k2-key"


@pytest.mark.parametrize("cred_id", ["kimi", "moonshot", "kimi-code"])
async def test_stored_credential_makes_kimi_available(
    kimi: FakeKimi, env: dict[str, str], config_dir: Path, cred_id: str
) -> None:
    CredentialStore(config_dir / "agent.db").set(cred_id, "api_key", {"api_key": f"stored-{cred_id}-key"})
    async with make_client(env={**env, **kimi.env}, clock=FakeClock()) as ws:
        available = {s.id: s.available for s in ws.provider_status()}["kimi"]
        response = await ws.asearch(QUERY)  # the automatic chain now reaches Kimi before DuckDuckGo
    assert available
    assert response.provider == "kimi"
    assert kimi.last.headers["authorization"] == f"Bearer stored-{cred_id}-key"


async def test_explicit_key_beats_env_beats_store(kimi: FakeKimi, env: dict[str, str], config_dir: Path) -> None:
    CredentialStore(config_dir / "agent.db").set("kimi", "api_key", {"api_key": "stored-key"})
    await run({**env, **kimi.env, "MOONSHOT_API_KEY": "env-key"})
    assert kimi.last.headers["authorization"] == "Bearer env-key"
    async with make_client(
        env={**env, **kimi.env, "MOONSHOT_API_KEY": "env-key"}, api_keys={"kimi": "explicit-key"}, clock=FakeClock()
    ) as ws:
        await ws.asearch(QUERY, provider="kimi")
    assert kimi.last.headers["authorization"] == "Bearer explicit-key"


async def test_not_available_without_a_key(kimi: FakeKimi, env: dict[str, str]) -> None:
    response = await run({**env, **kimi.env})
    assert kimi.requests == []
    assert response.provider == "duckduckgo"
    assert messages(response)[0] == (
        "provider kimi was requested but is not available (set MOONSHOT_SEARCH_API_KEY or set KIMI_SEARCH_API_KEY "
        "or set MOONSHOT_API_KEY or set KIMI_API_KEY or run `websearch auth set kimi`); used the automatic chain instead"
    )


def test_missing_credential_message(config_dir: Path) -> None:
    with pytest.raises(MissingCredentialError) as info:
        PROVIDER.plan(SearchParams(QUERY), context(config_dir, {}))
    assert info.value.message == MISSING


async def test_blank_key_is_a_missing_credential(kimi: FakeKimi, env: dict[str, str]) -> None:
    response = await run({**env, **kimi.env, "MOONSHOT_SEARCH_API_KEY": " \t "})
    assert kimi.requests == []
    assert response.error == MISSING
    assert (response.attempts[0].provider, response.attempts[0].error_kind) == ("kimi", "missing_credential")


# -- parsing -----------------------------------------------------------------------------------

REALISTIC = {
    "search_results": [
        {
            "title": "  Announcing Rust 1.90.0 | Rust Blog\n",
            "url": " https://blog.rust-lang.org/2025/09/18/Rust-1.90.0/ ",
            "snippet": "  The Rust team is happy to announce a new version of Rust, 1.90.0.  ",
            "content": "ignored",
            "date": " 2026-11-27 ",
            "site_name": " Rust Blog ",
            "icon": "https://blog.rust-lang.org/favicon.ico",
        },
        {
            "title": "   ",
            "url": "https://releases.rs/docs/1.90.0/",
            "snippet": "  ",
            "content": "  Full release notes.  ",
            "date": "",
            "site_name": "",
        },
        {"title": "no url", "url": "   ", "snippet": "dropped"},
        {"title": "no url at all"},
        "not an object",
        {
            "title": "Rust 1.90 on Reddit",
            "url": "https://www.reddit.com/r/rust/comments/abc/",
            "snippet": None,
            "date": "2026-11-30T11:00:00+00:00",
            "site_name": "reddit",
        },
    ]
}
EXPECTED = (
    SearchSource(
        title="Announcing Rust 1.90.0 | Rust Blog",
        url="https://blog.rust-lang.org/2025/09/18/Rust-1.90.0/",
        snippet="The Rust team is happy to announce a new version of Rust, 1.90.0.",
        published_date="2026-11-27",
        age_seconds=3 * 86400 + 12 * 3600,
        author="Rust Blog",
    ),
    SearchSource(
        title="https://releases.rs/docs/1.90.0/", url="https://releases.rs/docs/1.90.0/", snippet="Full release notes."
    ),
    SearchSource(
        title="Rust 1.90 on Reddit",
        url="https://www.reddit.com/r/rust/comments/abc/",
        published_date="2026-11-30T11:00:00+00:00",
        age_seconds=3600,
        author="reddit",
    ),
)


async def test_parses_a_realistic_body(kimi: FakeKimi, env: dict[str, str]) -> None:
    kimi.enqueue(Reply(200, REALISTIC, headers={"x-request-id": "req-42", "x-msh-request-id": "msh-7"}))
    response = await run(make_env(env, kimi))
    assert response.sources == EXPECTED
    assert response.request_id == "req-42"
    assert (response.answer, response.related_questions, response.citations, response.auth_mode) == (None, (), (), None)
    assert response.attempts[0].provider == "kimi" and response.attempts[0].error is None


async def test_request_id_from_msh_header(kimi: FakeKimi, env: dict[str, str]) -> None:
    response = await run(make_env(env, kimi), limit=2)
    assert response.request_id is not None and response.request_id.startswith("msh-")
    assert [s.author for s in response.sources] == ["Example Site 1", "Example Site 2"]
    assert response.sources[0].title == "Rust 1.90 Release — part 1"


def test_parse_on_bytes(config_dir: Path) -> None:
    ctx = context(config_dir, {"KIMI_API_KEY": KEY})
    response = HttpResponse(200, {}, json.dumps(REALISTIC).encode())
    plan = PROVIDER.plan(SearchParams(QUERY, limit=1), ctx)
    parsed = PROVIDER.parse(response, plan)
    assert parsed.sources == EXPECTED[:1]
    assert parsed.request_id is None
    assert plan.now == NOW  # ages are counted from the plan's instant


@pytest.mark.parametrize(
    "body", [{"search_results": []}, {}, {"search_results": None}, {"search_results": [{"title": "x"}]}]
)
async def test_empty_result_is_a_204_failure(kimi: FakeKimi, env: dict[str, str], body: dict[str, Any]) -> None:
    kimi.enqueue(Reply(200, body))
    response = await run(make_env(env, kimi))
    assert response.error == "Kimi returned no renderable search content."
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (204, "no_results")


# -- errors ------------------------------------------------------------------------------------

RATE_LIMIT = kimi_error(
    "Your account org-1 request reached max request: 3, please try again after 1 seconds", "rate_limit_reached_error"
)
ERRORS = [
    (
        Reply(401, kimi_error("Invalid Authentication", "invalid_authentication_error")),
        401,
        "auth",
        AUTH_FAILED.format("401 invalid_authentication_error"),
    ),
    (
        Reply(402, kimi_error("Payment required", "payment_required_error")),
        402,
        "quota",
        "kimi: 402 credits exhausted (payment_required_error): Payment required",
    ),
    (
        Reply(403, kimi_error("permission denied", "permission_denied_error")),
        403,
        "auth",
        AUTH_FAILED.format("403 permission_denied_error"),
    ),
    # A suspended, unpaid account is told from a rate limit by its code, never by the prose.
    (
        Reply(
            429,
            kimi_error(
                "Your account org-1 is suspended due to insufficient balance, please recharge",
                "exceeded_current_quota_error",
            ),
        ),
        429,
        "quota",
        "kimi: credits exhausted (exceeded_current_quota_error): Your account org-1 is suspended due to insufficient "
        "balance, please recharge",
    ),
    (
        Reply(429, kimi_error("insufficient quota for now, slow down", "rate_limit_reached_error")),
        429,
        "rate_limited",
        "Kimi search API error (429): insufficient quota for now, slow down (rate_limit_reached_error)",
    ),
    (
        Reply(429, RATE_LIMIT, headers={"Retry-After": "1"}),
        429,
        "rate_limited",
        "Kimi search API error (429): Your account org-1 request reached max request: 3, please try again after 1 "
        "seconds (rate_limit_reached_error); retry after 1 s",
    ),
    (
        Reply(400, kimi_error("Invalid request: limit must be between 1 and 20", "invalid_request_error")),
        400,
        "rejected",
        "Kimi search API error (400): Invalid request: limit must be between 1 and 20 (invalid_request_error)",
    ),
    (
        Reply(502, "<html>\n<head><title>502 Bad Gateway</title></head>\n</html>", content_type="text/html"),
        502,
        "unavailable",
        "Kimi search API error (502): <html> <head><title>502 Bad Gateway</title></head> </html>",
    ),
    (Reply(503, ""), 503, "unavailable", "Kimi search API error (503): Service Unavailable"),
    (
        Reply(200, "<html>maintenance</html>", content_type="text/html"),
        200,
        "invalid_response",
        "Kimi returned a body that is not JSON",
    ),
    (Reply(200, [1, 2]), 200, "invalid_response", "Kimi returned JSON that is not an object"),
]


@pytest.mark.parametrize(("reply", "status", "kind", "message"), ERRORS)
async def test_error_statuses(
    kimi: FakeKimi, env: dict[str, str], reply: Reply, status: int, kind: str, message: str
) -> None:
    kimi.enqueue(reply)
    response = await run(make_env(env, kimi))
    assert response.error == message
    (attempt,) = response.attempts
    assert (attempt.provider, attempt.status, attempt.error, attempt.error_kind) == ("kimi", status, message, kind)
    assert response.sources == ()
    assert_no_key(response)


def test_retry_after_is_kept(config_dir: Path) -> None:
    response = HttpResponse(429, {"retry-after": "7"}, json.dumps(RATE_LIMIT).encode(), secrets=(KEY,))
    plan = PROVIDER.plan(SearchParams(QUERY), context(config_dir, {"KIMI_API_KEY": KEY}))
    with pytest.raises(RateLimited) as info:
        PROVIDER.parse(response, plan)
    assert (info.value.status, info.value.retry_after) == (429, 7.0)


async def test_key_echoed_in_an_error_body_is_redacted(kimi: FakeKimi, env: dict[str, str]) -> None:
    kimi.enqueue(Reply(500, f"internal error while checking token Bearer {KEY}"))
    response = await run(make_env(env, kimi))
    assert response.error == "Kimi search API error (500): internal error while checking token Bearer [redacted]"
    assert_no_key(response)


async def test_fake_answers_like_the_service_without_auth(kimi: FakeKimi) -> None:
    transport = Transport()
    try:
        answer = await transport.send("kimi", HttpRequest("POST", kimi.base_url + "/coding/v1/search", json=BODY))
    finally:
        await transport.aclose()
    assert answer.status == 401
    assert answer.json() == kimi_error("Invalid Authentication", "invalid_authentication_error")


# -- the richer parameters --------------------------------------------------------------------


async def test_richer_domains_are_site_operators(kimi: FakeKimi, env: dict[str, str]) -> None:
    response = await run(
        make_env(env, kimi), include_domains=["rust-lang.org"], exclude_domains=["x.cn"], recency_days=3
    )
    assert kimi.last.json() == {**BODY, "text_query": f"{QUERY} site:rust-lang.org -site:x.cn"}
    assert messages(response) == (
        'include_domains=["rust-lang.org"] applied as site: operators in the query: Kimi has no domain filter',
        'exclude_domains=["x.cn"] applied as -site: operators in the query: Kimi has no domain filter',
        "recency_days=3 not applied: Kimi does not support it",
    )
