"""Jina (s.jina.ai) against a loopback fake: the request, the local slice, every error shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock, make_client, messages, search_once
from websearch import SearchParams, SearchResponse, SearchSource
from websearch._core._credentials import CredentialStore
from websearch._core._settings import Settings
from websearch._providers.jina import PROVIDER
from websearch.errors import MissingCredentialError, RateLimited
from websearch.providers import HttpResponse, ProviderContext
from websearch.testing import Reply
from websearch.testing.jina import FakeJina, jina_error_body, jina_results_body

KEY = "jina_test_KEY_4b8e2d90c1"
AUTH_FAILED = "Jina authorization failed ({}). Check API key or base URL."
KEYED = {"JINA_API_KEY": KEY}


@pytest.fixture
def jina() -> Iterator[FakeJina]:
    with FakeJina() as fake:
        yield fake


@pytest.fixture
def jenv(env: dict[str, str], jina: FakeJina) -> dict[str, str]:
    return {**env, **jina.env, "JINA_API_KEY": KEY}


async def search(env: dict[str, str], clock: FakeClock, query: str = "rust async book", **kw: Any) -> SearchResponse:
    return await search_once("jina", env, query, clock, **kw)


def ctx(env: dict[str, str], clock: FakeClock, config_dir: Path) -> ProviderContext:
    return ProviderContext(env, Settings({}, env), CredentialStore(config_dir / "agent.db"), None, clock)


def assert_default_request(jina: FakeJina, query: str = "rust async book") -> None:
    req = jina.last
    assert (req.method, req.path, req.query, req.body) == ("GET", "/" + query, (), b"")
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.headers["accept"] == "application/json"
    assert "content-type" not in req.headers


def assert_no_key(response: SearchResponse) -> None:
    assert KEY not in (response.error or "")
    assert KEY not in repr(response)
    assert all(KEY not in (a.error or "") for a in response.attempts)


# -- the request -------------------------------------------------------------------------------


async def test_default_request_returns_every_item(jina: FakeJina, jenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(jenv, clock)
    assert_default_request(jina)
    assert len(response.sources) == 10 and messages(response) == ()


def test_query_is_encoded_like_encode_uri_component(clock: FakeClock, config_dir: Path) -> None:
    params = SearchParams("c++ async/await? 50% & más (beta)!*'~")
    request = PROVIDER.plan(params, ctx(KEYED, clock, config_dir)).request
    assert request is not None
    assert request.url == "https://s.jina.ai/c%2B%2B%20async%2Fawait%3F%2050%25%20%26%20m%C3%A1s%20(beta)!*'~"
    assert (request.method, request.params, request.json, request.secrets) == ("GET", (), None, (KEY,))
    assert request.headers == {"Accept": "application/json", "Authorization": f"Bearer {KEY}"}
    redirected = PROVIDER.plan(
        params, ctx({**KEYED, "WEBSEARCH_JINA_BASE_URL": "http://127.0.0.1:9/gw"}, clock, config_dir)
    ).request
    assert redirected is not None and redirected.url == request.url.replace(
        "https://s.jina.ai/", "http://127.0.0.1:9/gw/"
    )


async def test_special_characters_reach_the_server_intact(
    jina: FakeJina, jenv: dict[str, str], clock: FakeClock
) -> None:
    query = "c++ async/await? 50% & más #1"
    response = await search(jenv, clock, query)
    assert_default_request(jina, query)
    assert response.sources[0].url == "https://guide1.example.net/c++-async/await?-50%-&-más-#1"


@pytest.mark.parametrize(
    ("kwargs", "count", "notices"),
    [
        ({"limit": 3}, 3, ()),
        ({"num_search_results": 4}, 4, ()),
        (
            {"limit": 2, "num_search_results": 5},
            5,
            ("limit=2 not applied: num_search_results=5 takes precedence",),
        ),
        ({"limit": 6, "num_search_results": 6}, 6, ()),
        ({"limit": 15}, 10, ()),  # nothing is asked upstream; Jina's own 10 are all there is
    ],
)
async def test_counts_slice_locally_and_send_nothing(
    jina: FakeJina, jenv: dict[str, str], clock: FakeClock, kwargs: dict[str, int], count: int, notices: tuple[str, ...]
) -> None:
    response = await search(jenv, clock, **kwargs)
    assert_default_request(jina)
    assert [s.url for s in response.sources] == [
        f"https://guide{i}.example.net/rust-async-book" for i in range(1, count + 1)
    ]
    assert messages(response) == notices


@pytest.mark.parametrize("recency", ["day", "week", "month", "year"])
async def test_recency_is_not_sent_and_says_so(
    jina: FakeJina, jenv: dict[str, str], clock: FakeClock, recency: str
) -> None:
    response = await search(jenv, clock, recency=recency)
    assert_default_request(jina)
    assert response.ok
    assert messages(response) == (f'recency="{recency}" not applied: Jina does not support it',)


async def test_token_caps_are_not_sent_and_say_so(jina: FakeJina, jenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(jenv, clock, max_tokens=200, temperature=0.1, limit=1)
    assert_default_request(jina)
    assert messages(response) == (
        "max_tokens=200 not applied: Jina does not support it",
        "temperature=0.1 not applied: Jina does not support it",
    )


# -- parsing -----------------------------------------------------------------------------------

REALISTIC = {
    "code": 200,
    "status": 20000,
    "data": [
        {
            "title": "Asynchronous Programming in Rust",
            "url": "https://rust-lang.github.io/async-book/",
            "description": "The async book.",
            "content": "\n# Asynchronous Programming in Rust\n\nThis book...\n",
            "date": "Mar 3, 2025",
            "usage": {"tokens": 5321},
        },
        {"url": "https://tokio.rs/tokio/tutorial", "description": "Tokio tutorial", "usage": {"tokens": 12}},
        {"title": "No URL", "content": "dropped"},
        "not an object",
        {"title": "", "url": "https://docs.rs/futures", "content": "   ", "description": ""},
    ],
    "meta": {"usage": {"tokens": 5333}},
}


async def test_parses_a_realistic_body_exactly(jina: FakeJina, jenv: dict[str, str], clock: FakeClock) -> None:
    jina.enqueue(Reply(200, REALISTIC, headers={"X-Usage-Tokens": "5333"}))
    response = await search(jenv, clock)
    assert response.sources == (
        SearchSource(
            "Asynchronous Programming in Rust",
            "https://rust-lang.github.io/async-book/",
            "# Asynchronous Programming in Rust\n\nThis book...",
        ),
        SearchSource("https://tokio.rs/tokio/tutorial", "https://tokio.rs/tokio/tutorial", "Tokio tutorial"),
        SearchSource("https://docs.rs/futures", "https://docs.rs/futures"),
    )
    assert (response.provider, response.query, response.answer, response.request_id, response.auth_mode) == (
        "jina",
        "rust async book",
        None,
        None,
        None,
    )
    assert (response.related_questions, response.citations) == ((), ())
    assert [(a.provider, a.status, a.error) for a in response.attempts] == [("jina", None, None)]


def test_parse_on_bytes_slices_to_the_count(clock: FakeClock, config_dir: Path) -> None:
    raw = HttpResponse(200, {}, json.dumps(jina_results_body("q", 8)).encode())
    plan = PROVIDER.plan(SearchParams("q", num_search_results=3, limit=7), ctx(KEYED, clock, config_dir))
    response = PROVIDER.parse(raw, plan)
    assert [s.title for s in response.sources] == ["Q | Guide 1", "Q | Guide 2", "Q | Guide 3"]
    assert response.sources[0].snippet is not None and response.sources[0].snippet.startswith("# Q\n\nPage 1 covers q")
    assert len(PROVIDER.parse(raw, PROVIDER.plan(SearchParams("q"), ctx(KEYED, clock, config_dir))).sources) == 8


@pytest.mark.parametrize(
    "body",
    [
        {"code": 200, "status": 20000, "data": [], "meta": {"usage": {"tokens": 0}}},
        {"code": 200, "status": 20000, "data": None},
        {"code": 200, "status": 20000, "data": {"title": "not a list", "url": "https://x.example"}},
        {"code": 200, "status": 20000, "data": [{"title": "no url"}]},
    ],
)
async def test_empty_result_is_the_chain_204(jina: FakeJina, jenv: dict[str, str], clock: FakeClock, body: Any) -> None:
    jina.enqueue(Reply(200, body))
    response = await search(jenv, clock)
    assert response.error == "Jina returned no renderable search content."
    assert [(a.provider, a.status, a.error_kind) for a in response.attempts] == [("jina", 204, "no_results")]


# -- errors ------------------------------------------------------------------------------------


async def test_401_wrong_key_is_an_authorization_failure(env: dict[str, str], clock: FakeClock) -> None:
    with FakeJina(api_key="jina_the_right_one_000") as fake:
        response = await search({**env, **fake.env, "JINA_API_KEY": KEY}, clock)
    assert response.error == AUTH_FAILED.format("401 AuthenticationRequiredError")
    assert (response.attempts[0].status, response.attempts[0].error_kind) == (401, "auth")
    assert_no_key(response)


@pytest.mark.parametrize(
    ("reply", "status", "kind", "error"),
    [
        (
            Reply(402, jina_error_body(402)),
            402,
            "quota",
            "jina: 402 credits exhausted (InsufficientBalanceError): Account balance not enough to run this query, "
            "please recharge.",
        ),
        (Reply(402, {"detail": "payment required"}), 402, "quota", "jina: 402 credits exhausted"),
        # The code says quota whatever the status; the prose never does.
        (
            Reply(403, jina_error_body(403, "InsufficientBalanceError", 40302, "Balance too low")),
            403,
            "quota",
            "jina: credits exhausted (InsufficientBalanceError): Balance too low",
        ),
        (
            Reply(429, jina_error_body(429, "RateLimitTriggeredError", 42903, "insufficient quota, slow down")),
            429,
            "rate_limited",
            "Jina API error (429): insufficient quota, slow down (RateLimitTriggeredError)",
        ),
        # A blocked domain refuses the request, not the key: no "check API key" advice.
        (
            Reply(403, jina_error_body(403, "SecurityCompromiseError", 40302, "Domain blocked")),
            403,
            "rejected",
            "Jina API error (403): Domain blocked (SecurityCompromiseError)",
        ),
        (Reply(403, {"detail": "forbidden"}), 403, "auth", AUTH_FAILED.format(403)),
        (
            Reply(422, jina_error_body(422)),
            422,
            "rejected",
            "Jina API error (422): Invalid query: the search query must not be empty. (ParamValidationError)",
        ),
        (
            Reply(429, jina_error_body(429), headers={"Retry-After": "60"}),
            429,
            "rate_limited",
            "Jina API error (429): Per IP rate limit exceeded: 200 requests per 60s. (RateLimitTriggeredError); "
            "retry after 60 s",
        ),
        (Reply(500, "upstream request timeout"), 500, "unavailable", "Jina API error (500): upstream request timeout"),
        (
            Reply(502, "<html>\n<h1>502  Bad Gateway</h1>\n</html>", content_type="text/html"),
            502,
            "unavailable",
            "Jina API error (502): <html> <h1>502 Bad Gateway</h1> </html>",
        ),
        (Reply(503, b""), 503, "unavailable", "Jina API error (503): Service Unavailable"),
        (
            Reply(200, "[1] Title: Rust\n[1] URL Source: https://x", content_type="text/markdown"),
            200,
            "invalid_response",
            "Jina returned a body that is not JSON",
        ),
        (Reply(200, ["a", "b"]), 200, "invalid_response", "Jina returned JSON that is not an object"),
    ],
)
async def test_error_shapes(
    jina: FakeJina, jenv: dict[str, str], clock: FakeClock, reply: Reply, status: int, kind: str, error: str
) -> None:
    jina.enqueue(reply)
    response = await search(jenv, clock)
    assert response.error == error
    assert [(a.provider, a.status, a.error, a.error_kind) for a in response.attempts] == [("jina", status, error, kind)]
    assert response.sources == ()


def test_retry_after_is_kept_on_the_error(clock: FakeClock, config_dir: Path) -> None:
    raw = HttpResponse(429, {"retry-after": "60"}, json.dumps(jina_error_body(429)).encode())
    with pytest.raises(RateLimited) as info:
        PROVIDER.parse(raw, PROVIDER.plan(SearchParams("q"), ctx(KEYED, clock, config_dir)))
    assert (info.value.provider, info.value.status, info.value.retry_after) == ("jina", 429, 60.0)


@pytest.mark.parametrize(
    "reply",
    [
        Reply(500, f"bad token {KEY}"),
        Reply(422, jina_error_body(422, message=f"Authorization: Bearer {KEY} is malformed")),
        Reply(429, {"data": None, "code": 429, "message": f"too many requests for {KEY}"}),
    ],
)
async def test_key_never_leaks_from_error_paths(
    jina: FakeJina, jenv: dict[str, str], clock: FakeClock, reply: Reply
) -> None:
    jina.enqueue(reply)
    response = await search(jenv, clock)
    assert response.error and "[redacted]" in response.error
    assert_no_key(response)


# -- credentials and availability --------------------------------------------------------------


def test_missing_key_message(clock: FakeClock, config_dir: Path) -> None:
    with pytest.raises(MissingCredentialError) as info:
        PROVIDER.plan(SearchParams("q"), ctx({}, clock, config_dir))
    assert info.value.message == "Jina needs an API key: set JINA_API_KEY or run `websearch auth set jina`"


async def test_without_a_key_explicit_jina_falls_back_to_the_chain(
    env: dict[str, str], jina: FakeJina, clock: FakeClock
) -> None:
    response = await search({**env, **jina.env}, clock)
    assert response.provider == "duckduckgo" and jina.requests == []
    assert messages(response)[0] == (
        "provider jina was requested but is not available (set JINA_API_KEY or run `websearch auth set jina`); "
        "used the automatic chain instead"
    )


async def test_env_key_puts_jina_in_the_automatic_chain(jina: FakeJina, jenv: dict[str, str], clock: FakeClock) -> None:
    async with make_client(env=jenv, clock=clock) as ws:
        assert next(s for s in ws.provider_status() if s.id == "jina").available
        response = await ws.asearch("rust async book")
    assert response.provider == "jina"
    assert_default_request(jina)


async def test_stored_credential_makes_jina_available(
    env: dict[str, str], jina: FakeJina, clock: FakeClock, config_dir: Path
) -> None:
    CredentialStore(config_dir / "agent.db").set("jina", "api_key", {"api_key": "jina_stored_key_1234"})
    async with make_client(env={**env, **jina.env}, clock=clock) as ws:
        assert next(s for s in ws.provider_status() if s.id == "jina").available
        response = await ws.asearch("q", provider="jina")
    assert response.provider == "jina"
    assert jina.last.headers["authorization"] == "Bearer jina_stored_key_1234"


async def test_explicit_key_wins_over_env(jina: FakeJina, jenv: dict[str, str], clock: FakeClock) -> None:
    async with make_client(env=jenv, clock=clock, api_keys={"jina": "jina_explicit_key_99"}) as ws:
        await ws.asearch("q", provider="jina")
    assert jina.last.headers["authorization"] == "Bearer jina_explicit_key_99"


# -- the richer parameters --------------------------------------------------------------------


async def test_richer_include_domains_are_site_filters(jina: FakeJina, jenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(jenv, clock, include_domains=["tokio.rs", "docs.rs"], recency_days=3)
    req = jina.last
    assert (req.path, req.query) == ("/rust async book", (("site", "tokio.rs"), ("site", "docs.rs")))
    assert response.ok and messages(response) == ("recency_days=3 not applied: Jina does not support it",)


async def test_richer_exclude_domains_are_site_operators(
    jina: FakeJina, jenv: dict[str, str], clock: FakeClock
) -> None:
    response = await search(jenv, clock, include_domains=["docs.rs"], exclude_domains=["spam.rs", "ads.rs"])
    req = jina.last
    assert (req.path, req.query) == ("/rust async book -site:spam.rs -site:ads.rs", (("site", "docs.rs"),))
    assert messages(response) == (
        'exclude_domains=["spam.rs", "ads.rs"] applied as -site: operators in the query: Jina can only restrict '
        "to sites, not exclude them",
    )


def test_richer_request_url_and_params(clock: FakeClock, config_dir: Path) -> None:
    params = SearchParams("a b", include_domains=("x.io",), exclude_domains=("y.io",))
    request = PROVIDER.plan(params, ctx(KEYED, clock, config_dir)).request
    assert request is not None
    assert (request.url, request.params) == ("https://s.jina.ai/a%20b%20-site%3Ay.io", (("site", "x.io"),))
