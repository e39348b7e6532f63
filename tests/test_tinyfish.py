"""TinyFish against a loopback fake: the paged GET, parsing, errors, credentials."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock, make_client, messages, provider_context, search_once
from websearch import Attempt, SearchParams, SearchResponse, SearchSource
from websearch._core._credentials import CredentialStore
from websearch._providers.tinyfish import PROVIDER, page_request
from websearch.errors import MissingCredentialError, SearchProviderError
from websearch.providers import HttpResponse, ProviderContext
from websearch.testing import Reply
from websearch.testing.tinyfish import FakeTinyFish, tinyfish_page_body, tinyfish_result

KEY = "tf-live-8c2e4a6b0d1f3e5a"
MISSING = "TinyFish needs an API key: set TINYFISH_API_KEY or run `websearch auth set tinyfish`"
Q = "rust async book"


@pytest.fixture
def tf() -> Iterator[FakeTinyFish]:
    with FakeTinyFish() as fake:
        yield fake


@pytest.fixture
def tf_env(env: dict[str, str], tf: FakeTinyFish) -> dict[str, str]:
    return {**env, **tf.env, "TINYFISH_API_KEY": KEY}


async def search(env: dict[str, str], clock: FakeClock, query: str = Q, **kw: Any) -> SearchResponse:
    return await search_once("tinyfish", env, query, clock, **kw)


def context(env: dict[str, str], config_dir: Path, clock: FakeClock) -> ProviderContext:
    return provider_context(config_dir, env, clock=clock)


def pages(tf: FakeTinyFish) -> list[tuple[tuple[str, str], ...]]:
    return [r.query for r in tf.requests]


def page(n: int, size: int = 10, page_no: int = 0, **extra: Any) -> Reply:
    """A page of `n` results numbered from page_no * size + 1."""
    body = tinyfish_page_body(Q, page_no, size, page_no * size + n)
    body.update(extra)
    return Reply(200, body)


# -- the request and paging --------------------------------------------------------------------


async def test_default_request_is_one_page_of_ten(tf: FakeTinyFish, tf_env: dict[str, str], clock: FakeClock) -> None:
    response = await search(tf_env, clock)
    req = tf.last
    assert (req.method, req.path) == ("GET", "/")
    assert req.query == (("query", Q), ("num_results", "10"), ("page", "0"))
    assert req.headers["x-api-key"] == KEY and req.headers["accept"] == "application/json"
    assert "authorization" not in req.headers
    assert len(tf.requests) == 1
    assert response.provider == "tinyfish" and len(response.sources) == 10
    assert messages(response) == ()


@pytest.mark.parametrize(
    ("kwargs", "size", "n_pages", "n_sources", "notice"),
    [
        ({"limit": 3}, "3", 1, 3, None),
        ({"num_search_results": 10}, "10", 1, 10, None),
        ({"num_search_results": 15}, "10", 2, 15, None),
        (
            {"limit": 4, "num_search_results": 20},
            "10",
            2,
            20,
            "limit=4 not applied: num_search_results=20 takes precedence",
        ),
        (
            {"limit": 12, "num_search_results": 5},
            "5",
            1,
            5,
            "limit=12 not applied: num_search_results=5 takes precedence",
        ),
        ({"limit": 50}, "10", 2, 20, "limit=50 clamped to 20: TinyFish returns at most 20 results"),
    ],
)
async def test_count_sets_page_size_and_pages(
    tf: FakeTinyFish,
    tf_env: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, int],
    size: str,
    n_pages: int,
    n_sources: int,
    notice: str | None,
) -> None:
    response = await search(tf_env, clock, **kwargs)
    assert pages(tf) == [(("query", Q), ("num_results", size), ("page", str(p))) for p in range(n_pages)]
    assert [s.url for s in response.sources] == [tinyfish_result(i, Q)["url"] for i in range(1, n_sources + 1)]
    assert messages(response) == ((notice,) if notice else ())


@pytest.mark.parametrize(
    ("recency", "minutes"), [("day", "1440"), ("week", "10080"), ("month", "43200"), ("year", "525600")]
)
async def test_recency_becomes_recency_minutes(
    tf: FakeTinyFish, tf_env: dict[str, str], clock: FakeClock, recency: str, minutes: str
) -> None:
    response = await search(tf_env, clock, recency=recency, num_search_results=20)
    assert pages(tf) == [
        (("query", Q), ("recency_minutes", minutes), ("num_results", "10"), ("page", "0")),
        (("query", Q), ("recency_minutes", minutes), ("num_results", "10"), ("page", "1")),
    ]
    assert len(response.sources) == 20 and messages(response) == ()


@pytest.mark.parametrize(("total", "n_pages", "n_sources"), [(13, 2, 13), (10, 2, 10), (5, 1, 5), (0, 1, 0)])
async def test_a_short_page_stops_paging(
    tf: FakeTinyFish, tf_env: dict[str, str], clock: FakeClock, total: int, n_pages: int, n_sources: int
) -> None:
    tf.total = total
    response = await search(tf_env, clock, num_search_results=20)
    assert len(tf.requests) == n_pages
    assert len(response.sources) == n_sources


async def test_results_without_url_are_dropped_and_paging_continues(
    tf: FakeTinyFish, tf_env: dict[str, str], clock: FakeClock
) -> None:
    first = tinyfish_page_body(Q, 0, 10, 10)
    for item in first["results"][:3]:
        item["url"] = None
    tf.enqueue(Reply(200, first))
    response = await search(tf_env, clock)
    assert [q[-1] for q in pages(tf)] == [("page", "0"), ("page", "1")]
    expected = [tinyfish_result(i, Q)["url"] for i in (*range(4, 11), 11, 12, 13)]
    assert [s.url for s in response.sources] == expected


async def test_paging_stops_after_page_ten(tf: FakeTinyFish, tf_env: dict[str, str], clock: FakeClock) -> None:
    no_urls = {"total_results": 500, "page": 0, "results": [{"title": "t", "snippet": "s"}] * 10}
    tf.enqueue(*[Reply(200, no_urls)] * 12)
    response = await search(tf_env, clock)
    assert [q[-1] for q in pages(tf)] == [("page", str(p)) for p in range(11)]
    assert response.error == "TinyFish returned no renderable search content."


# -- parsing -----------------------------------------------------------------------------------

REALISTIC: dict[str, Any] = {
    "total_results": 4,
    "page": 0,
    "results": [
        {
            "title": "Asynchronous Programming in Rust",
            "url": "https://rust-lang.github.io/async-book/",
            "snippet": "This book aims to be a thorough guide to asynchronous programming in Rust.",
            "site_name": "rust-lang.github.io",
        },
        {
            "title": None,
            "url": "https://tokio.rs/tokio/tutorial",
            "snippet": "Tokio is an asynchronous runtime.",
            "site_name": "Tokio",
        },
        {"title": "", "url": "https://example.org/bare", "snippet": None, "site_name": None},
        {"title": "No link", "url": "", "snippet": "dropped", "site_name": "x"},
    ],
}


async def test_realistic_body_is_parsed_exactly(tf: FakeTinyFish, tf_env: dict[str, str], clock: FakeClock) -> None:
    tf.enqueue(Reply(200, REALISTIC))
    response = await search(tf_env, clock)
    assert response == SearchResponse(
        provider="tinyfish",
        query=Q,
        sources=(
            SearchSource(
                "Asynchronous Programming in Rust",
                "https://rust-lang.github.io/async-book/",
                "This book aims to be a thorough guide to asynchronous programming in Rust.",
                author="rust-lang.github.io",
            ),
            SearchSource(
                "Tokio", "https://tokio.rs/tokio/tutorial", "Tokio is an asynchronous runtime.", author="Tokio"
            ),
            SearchSource("https://example.org/bare", "https://example.org/bare"),
        ),
        auth_mode="api_key",
        attempts=(Attempt("tinyfish", None, None, 0.0),),
    )
    assert len(tf.requests) == 1  # four raw results < page size 10: a short page


def test_parse_one_page_on_bytes(config_dir: Path, clock: FakeClock) -> None:
    body = b'{"total_results":1,"page":3,"results":[{"url":"https://a.example","site_name":"A site","snippet":"s"}]}'
    plan = PROVIDER.plan(SearchParams("q"), context({"TINYFISH_API_KEY": KEY}, config_dir, clock))
    parsed = PROVIDER.parse(HttpResponse(200, {}, body), plan)
    assert parsed.sources == (SearchSource("A site", "https://a.example", "s", author="A site"),)
    assert parsed.auth_mode == "api_key" and parsed.request_id is None


@pytest.mark.parametrize(
    "body",
    [
        {"total_results": 0, "page": 0, "results": []},
        {"total_results": 0, "page": 0, "results": None},
        {"total_results": 0, "page": 0},
    ],
)
async def test_empty_result_is_a_204_failure(
    tf: FakeTinyFish, tf_env: dict[str, str], clock: FakeClock, body: dict[str, Any]
) -> None:
    tf.enqueue(Reply(200, body))
    response = await search(tf_env, clock)
    assert response.error == "TinyFish returned no renderable search content."
    assert response.attempts[0].status == 204
    assert len(tf.requests) == 1


# -- errors ------------------------------------------------------------------------------------

AUTH_FAILED = "TinyFish authorization failed ({}). Check API key or base URL."
ERRORS = [
    (Reply(401, {"detail": "Invalid API key"}), 401, "auth", AUTH_FAILED.format(401)),
    (Reply(403, {"detail": "Forbidden"}), 403, "auth", AUTH_FAILED.format(403)),
    (Reply(402, {"detail": "Payment required"}), 402, "quota", "tinyfish: 402 credits exhausted: Payment required"),
    (
        Reply(402, {"detail": "Insufficient credits: top up at tinyfish.ai"}),
        402,
        "quota",
        "tinyfish: 402 credits exhausted: Insufficient credits: top up at tinyfish.ai",
    ),
    # a 429 is a rate limit whatever its prose says: quota comes only from a status or a code
    (
        Reply(429, {"detail": "Monthly quota reached"}),
        429,
        "rate_limited",
        "TinyFish API error (429): Monthly quota reached",
    ),
    (
        Reply(429, {"detail": "Rate limit exceeded"}, headers={"Retry-After": "30"}),
        429,
        "rate_limited",
        "TinyFish API error (429): Rate limit exceeded; retry after 30 s",
    ),
    (Reply(500, "Internal Server Error"), 500, "unavailable", "TinyFish API error (500): Internal Server Error"),
    (
        Reply(503, "<html><body>upstream\n  unavailable</body></html>", content_type="text/html"),
        503,
        "unavailable",
        "TinyFish API error (503): <html><body>upstream unavailable</body></html>",
    ),
    (Reply(200, "not json at all"), 200, "invalid_response", "TinyFish returned a body that is not JSON"),
    (Reply(200, ["a"]), 200, "invalid_response", "TinyFish returned JSON that is not an object"),
]


@pytest.mark.parametrize(("reply", "status", "kind", "message"), ERRORS)
async def test_error_replies(
    tf: FakeTinyFish, tf_env: dict[str, str], clock: FakeClock, reply: Reply, status: int, kind: str, message: str
) -> None:
    tf.enqueue(reply)
    response = await search(tf_env, clock)
    assert response.error == message
    assert [(a.provider, a.status, a.error, a.error_kind) for a in response.attempts] == [
        ("tinyfish", status, message, kind)
    ]
    assert len(tf.requests) == 1


@pytest.mark.parametrize(("reply", "status", "kind", "message"), ERRORS)
def test_page_errors_on_bytes(
    reply: Reply, status: int, kind: str, message: str, config_dir: Path, clock: FakeClock
) -> None:
    body = reply.encoded()[0]
    headers = {k.lower(): v for k, v in reply.headers.items()}
    plan = PROVIDER.plan(SearchParams("q"), context({"TINYFISH_API_KEY": KEY}, config_dir, clock))
    with pytest.raises(SearchProviderError) as info:
        PROVIDER.parse(HttpResponse(reply.status, headers, body), plan)
    assert (info.value.message, info.value.status, info.value.kind) == (message, status, kind)
    assert info.value.retry_after == (30.0 if "retry-after" in headers else None)


def test_page_requests_come_from_the_plan(config_dir: Path, clock: FakeClock) -> None:
    plan = PROVIDER.plan(
        SearchParams("q", num_search_results=15), context({"TINYFISH_API_KEY": KEY}, config_dir, clock)
    )
    assert plan.request is not None and (plan.limit, plan.state) == (15, 10)
    second = page_request(plan.request, 1)
    assert second.params == [("query", "q"), ("num_results", "10"), ("page", "1")]
    assert (second.url, second.headers, second.secrets) == (plan.request.url, plan.request.headers, (KEY,))
    assert page_request(plan.request, 0).params == list(plan.request.params)


async def test_an_error_on_a_later_page_fails_the_search(
    tf: FakeTinyFish, tf_env: dict[str, str], clock: FakeClock
) -> None:
    tf.enqueue(page(10), Reply(503, "Service Unavailable"))
    response = await search(tf_env, clock, num_search_results=20)
    assert [q[-1] for q in pages(tf)] == [("page", "0"), ("page", "1")]
    assert response.error == "TinyFish API error (503): Service Unavailable"
    assert response.sources == () and response.attempts[0].status == 503


async def test_key_never_leaks_on_error_paths(tf: FakeTinyFish, tf_env: dict[str, str], clock: FakeClock) -> None:
    echoes = [Reply(500, f"bad key {KEY}"), Reply(400, {"detail": f"X-API-Key {KEY} malformed"})]
    errors = []
    for reply in [*echoes, *(e[0] for e in ERRORS)]:
        tf.enqueue(reply)
        response = await search(tf_env, clock)
        assert response.error
        errors.append(response.error)
        for text in (response.error, repr(response), repr(response.attempts), str(response.to_dict())):
            assert KEY not in text
    assert errors[:2] == [
        "TinyFish API error (500): bad key [redacted]",
        "TinyFish API error (400): X-API-Key [redacted] malformed",
    ]


# -- credentials and availability --------------------------------------------------------------


def test_missing_key_message(config_dir: Path, clock: FakeClock) -> None:
    with pytest.raises(MissingCredentialError) as info:
        PROVIDER.plan(SearchParams("q"), context({}, config_dir, clock))
    assert info.value.message == MISSING and info.value.provider == "tinyfish"


async def test_empty_stored_credential_reports_the_missing_key(
    tf: FakeTinyFish, env: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    CredentialStore(config_dir / "agent.db").set("tinyfish", "api_key", {})
    response = await search({**env, **tf.env}, clock)
    assert response.error == MISSING and tf.requests == []


async def test_unavailable_explicit_provider_falls_back_to_the_chain(
    tf: FakeTinyFish, env: dict[str, str], clock: FakeClock
) -> None:
    response = await search({**env, **tf.env}, clock)
    assert response.provider == "duckduckgo" and tf.requests == []
    assert messages(response)[0] == (
        "provider tinyfish was requested but is not available (set TINYFISH_API_KEY or run "
        "`websearch auth set tinyfish`); used the automatic chain instead"
    )


async def test_stored_credential_makes_it_available_and_is_sent_on_every_page(
    tf: FakeTinyFish, env: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    stored = "tf-stored-0a1b2c3d4e"
    env = {**env, **tf.env}
    assert not _available(env)
    CredentialStore(config_dir / "agent.db").set("tinyfish", "api_key", {"api_key": stored})
    assert _available(env)
    response = await search(env, clock, num_search_results=20)
    assert response.ok and [r.headers["x-api-key"] for r in tf.requests] == [stored, stored]


async def test_key_precedence_explicit_then_env_then_store(
    tf: FakeTinyFish, tf_env: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    CredentialStore(config_dir / "agent.db").set("tinyfish", "api_key", {"api_key": "tf-stored-key-999"})
    await search(tf_env, clock)
    assert tf.last.headers["x-api-key"] == KEY
    async with make_client(env=tf_env, clock=clock, api_keys={"tinyfish": "tf-explicit-key-1"}) as ws:
        await ws.asearch("q", provider="tinyfish")
    assert tf.last.headers["x-api-key"] == "tf-explicit-key-1"


async def test_unsupported_parameters_become_notices(
    tf: FakeTinyFish, tf_env: dict[str, str], clock: FakeClock
) -> None:
    response = await search(tf_env, clock, max_tokens=64, temperature=1.0)
    assert dict(tf.last.query).keys() == {"query", "num_results", "page"}
    assert messages(response) == (
        "max_tokens=64 not applied: TinyFish does not support it",
        "temperature=1.0 not applied: TinyFish does not support it",
    )


async def test_auto_chain_uses_it_before_duckduckgo(tf: FakeTinyFish, tf_env: dict[str, str], clock: FakeClock) -> None:
    async with make_client(env=tf_env, clock=clock) as ws:
        response = await ws.asearch("q")
    assert response.provider == "tinyfish" and len(tf.requests) == 1


def _available(env: dict[str, str]) -> bool:
    with make_client(env=env) as ws:
        return next(s.available for s in ws.provider_status() if s.id == "tinyfish")


# -- the richer parameters --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "minutes", "notices"),
    [
        ({"recency_hours": 6}, "360", ()),
        ({"recency_days": 2.5}, "3600", ()),
        ({"start_published_date": "2026-11-30T10:00:30Z"}, "120", ()),
        (
            {"recency": "year", "recency_hours": 1},
            "60",
            ('recency="year" not applied: recency_hours takes precedence',),
        ),
        (
            {"recency": "day", "end_published_date": "2026-11-29"},
            "1440",
            ('end_published_date="2026-11-29" not applied: TinyFish does not support it',),
        ),
    ],
)
async def test_richer_dates_are_recency_minutes(
    tf: FakeTinyFish,
    tf_env: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, Any],
    minutes: str,
    notices: tuple[str, ...],
) -> None:
    response = await search(tf_env, clock, **kwargs)
    assert response.ok and messages(response) == notices
    assert tf.last.query == (("query", Q), ("recency_minutes", minutes), ("num_results", "10"), ("page", "0"))


async def test_richer_domains_are_site_operators(tf: FakeTinyFish, tf_env: dict[str, str], clock: FakeClock) -> None:
    response = await search(tf_env, clock, include_domains=["a.io", "b.io"], exclude_domains=["c.io"])
    assert tf.last.query == (
        ("query", f"{Q} (site:a.io OR site:b.io) -site:c.io"),
        ("num_results", "10"),
        ("page", "0"),
    )
    assert messages(response) == (
        'include_domains=["a.io", "b.io"] applied as site: operators in the query: TinyFish has no domain filter',
        'exclude_domains=["c.io"] applied as -site: operators in the query: TinyFish has no domain filter',
    )
