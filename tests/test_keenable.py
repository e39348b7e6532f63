"""Keenable against a loopback fake of api.keenable.ai: the keyed row and the keyless public row,
the native site and date filters, the retry without dates, parsing, errors, keys."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock, make_client, messages, provider_context, search_once
from websearch import Attempt, SearchParams, SearchResponse, SearchSource, WebSearch
from websearch._core._credentials import CredentialStore
from websearch._core._notices import not_applied
from websearch._providers.keenable import PROVIDER, PUBLIC
from websearch.errors import MissingCredentialError
from websearch.providers import PROVIDERS, SEARCH_PROVIDER_ORDER, HttpResponse, ProviderContext
from websearch.testing import RecordedRequest, Reply
from websearch.testing.keenable import (
    FakeKeenable,
    FakeKeenablePublic,
    keenable_error,
    keenable_results_body,
    rate_limited_reply,
)

KEY = "sk-kn_live_secret-9d2f4a6b"


@pytest.fixture
def keenable() -> Iterator[FakeKeenable]:
    with FakeKeenable(valid_keys={KEY}) as fake:
        yield fake


@pytest.fixture
def kenv(env: dict[str, str], keenable: FakeKeenable) -> dict[str, str]:
    return {**env, **keenable.env, "KEENABLE_API_KEY": KEY}


@pytest.fixture
def public() -> Iterator[FakeKeenablePublic]:
    with FakeKeenablePublic() as fake:
        yield fake


async def search(env: dict[str, str], clock: FakeClock, query: str = "rust async", **kwargs: Any) -> SearchResponse:
    return await search_once("keenable", env, query, clock, **kwargs)


def context(env: dict[str, str], config_dir: Path, clock: FakeClock) -> ProviderContext:
    return provider_context(config_dir, env, clock=clock)


def body(max_results: int = 10, query: str = "rust async", **extra: Any) -> dict[str, Any]:
    return {"query": query, "max_results": max_results, **extra}


# -- the request ------------------------------------------------------------------------------


async def test_default_keyed_request(keenable: FakeKeenable, kenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(kenv, clock)
    assert response.ok and messages(response) == ()
    req = keenable.last
    assert (req.method, req.path, req.query) == ("POST", "/v1/search", ())
    assert req.headers["x-api-key"] == KEY
    assert req.headers["x-keenable-title"] == "websearch"
    assert req.headers["content-type"] == "application/json"
    assert req.json() == body()
    assert len(response.sources) == 10
    assert (response.auth_mode, response.request_id) == ("api_key", "kn-req-1")


@pytest.mark.parametrize(
    ("kwargs", "max_results", "notices"),
    [
        ({"limit": 3}, 3, ()),
        ({"num_search_results": 25}, 25, ()),
        ({"limit": 3, "num_search_results": 7}, 7, ("limit=3 not applied: num_search_results=7 takes precedence",)),
        ({"limit": 80}, 50, ("limit=80 clamped to 50: Keenable returns at most 50 results",)),
    ],
)
async def test_max_results_is_the_collapsed_clamped_count(
    keenable: FakeKeenable,
    kenv: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, int],
    max_results: int,
    notices: tuple[str, ...],
) -> None:
    response = await search(kenv, clock, **kwargs)
    assert keenable.last.json() == body(max_results)
    assert len(response.sources) == max_results
    assert messages(response) == notices


@pytest.mark.parametrize(
    ("kwargs", "fields", "notices"),
    [
        ({"recency": "day"}, {"published_after": "1d"}, ()),
        ({"recency": "week"}, {"published_after": "7d"}, ()),
        ({"recency": "month"}, {"published_after": "30d"}, ()),
        ({"recency": "year"}, {"published_after": "365d"}, ()),
        ({"recency_days": 3}, {"published_after": "2026-11-27T12:00:00Z"}, ()),
        ({"recency_hours": 6}, {"published_after": "2026-11-30T06:00:00Z"}, ()),
        ({"start_published_date": "2026-01-15"}, {"published_after": "2026-01-15"}, ()),
        (
            {"start_published_date": "2026-03-01T10:30:00+02:00", "end_published_date": "2026-04-01T08:00:00Z"},
            {"published_after": "2026-03-01T08:30:00Z", "published_before": "2026-04-01T08:00:00Z"},
            (),
        ),
        ({"end_published_date": "2026-02-01"}, {"published_before": "2026-02-01"}, ()),
        (
            {"recency": "month", "end_published_date": "2026-11-29"},
            {"published_after": "30d", "published_before": "2026-11-29"},
            (),
        ),
        (
            {"recency": "week", "recency_days": 2},
            {"published_after": "2026-11-28T12:00:00Z"},
            ('recency="week" not applied: recency_days takes precedence',),
        ),
    ],
)
async def test_dates_are_published_after_and_before(
    keenable: FakeKeenable,
    kenv: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, Any],
    fields: dict[str, str],
    notices: tuple[str, ...],
) -> None:
    response = await search(kenv, clock, **kwargs)
    assert response.ok and len(keenable.requests) == 1
    assert keenable.last.json() == body(**fields)
    assert messages(response) == notices


async def test_one_included_host_is_the_site_filter(
    keenable: FakeKeenable, kenv: dict[str, str], clock: FakeClock
) -> None:
    response = await search(kenv, clock, include_domains=["docs.rs"])
    assert keenable.last.json() == body(site="docs.rs")
    assert messages(response) == ()
    assert response.sources and all(s.url.startswith("https://docs.rs/") for s in response.sources)


async def test_several_hosts_and_exclusions_are_enforced_on_the_results(
    keenable: FakeKeenable, kenv: dict[str, str], clock: FakeClock
) -> None:
    keenable.enqueue(
        Reply(
            200,
            {
                "results": [
                    {"title": "A", "url": "https://docs.rs/a", "snippet": "a"},
                    {"title": "B", "url": "https://www.rust-lang.org/b", "snippet": "b"},
                    {"title": "C", "url": "https://reddit.com/c", "snippet": "c"},
                ]
            },
        )
    )
    response = await search(kenv, clock, include_domains=["docs.rs", "rust-lang.org"], exclude_domains=["docs.rs"])
    assert keenable.last.json() == body()  # no site, no exclusion: Keenable has neither for these
    assert [s.url for s in response.sources] == ["https://www.rust-lang.org/b"]
    assert messages(response)[:2] == (
        'include_domains=["docs.rs", "rust-lang.org"] applied as a filter on the results: '
        "Keenable's site filter takes one domain",
        'exclude_domains=["docs.rs"] applied as a filter on the results: Keenable has no domain exclusion',
    )


@pytest.mark.parametrize(
    ("mode", "sent", "notices"),
    [
        ("auto", None, ()),
        ("fast", "realtime", ()),
        ("instant", "realtime", ()),
        ("deep", None, ('mode="deep" applied as Keenable\'s pro retrieval: Keenable has no deeper mode',)),
    ],
)
async def test_mode(
    keenable: FakeKeenable,
    kenv: dict[str, str],
    clock: FakeClock,
    mode: str,
    sent: str | None,
    notices: tuple[str, ...],
) -> None:
    response = await search(kenv, clock, mode=mode)
    assert keenable.last.json().get("mode") == sent
    assert messages(response) == notices


async def test_unsupported_parameters_become_notices(
    keenable: FakeKeenable, kenv: dict[str, str], clock: FakeClock
) -> None:
    response = await search(kenv, clock, max_tokens=64, category="news")
    assert messages(response) == (
        "max_tokens=64 not applied: Keenable does not support it",
        'category="news" not applied: Keenable does not support it',
    )
    assert keenable.last.json() == body()


# -- the retry without dates ------------------------------------------------------------------

WHY = (
    "Keenable found nothing with {} (its date filters leave out undated pages), "
    "so these results come from a search without them"
)


@pytest.mark.parametrize(
    ("kwargs", "fields", "params"),
    [
        ({"recency": "week"}, {"published_after": "7d"}, [("recency", "week")]),
        ({"recency_days": 3}, {"published_after": "2026-11-27T12:00:00Z"}, [("recency_days", 3)]),
        (
            {"start_published_date": "2026-01-15", "end_published_date": "2026-02-01"},
            {"published_after": "2026-01-15", "published_before": "2026-02-01"},
            [("start_published_date", "2026-01-15"), ("end_published_date", "2026-02-01")],
        ),
        (
            {"end_published_date": "2026-02-01"},
            {"published_before": "2026-02-01"},
            [("end_published_date", "2026-02-01")],
        ),
    ],
)
async def test_a_dated_search_that_finds_nothing_is_sent_again_without_dates(
    env: dict[str, str], clock: FakeClock, kwargs: dict[str, Any], fields: dict[str, str], params: list[Any]
) -> None:
    with FakeKeenable(empty_with_dates=True) as fake:
        response = await search({**env, **fake.env, "KEENABLE_API_KEY": KEY}, clock, limit=3, **kwargs)
    assert [r.json() for r in fake.requests] == [body(3, **fields), body(3)]
    assert response.ok and len(response.sources) == 3
    sent = ", ".join(f"{name}={value}" for name, value in fields.items())
    expected = tuple(not_applied(name, value, WHY.format(sent)) for name, value in params)
    assert response.notices == expected
    assert response.attempts == (Attempt("keenable", None, None, 0.0, notices=expected),)


async def test_the_retry_keeps_the_site(env: dict[str, str], clock: FakeClock) -> None:
    with FakeKeenable(empty_with_dates=True) as fake:
        env = {**env, **fake.env, "KEENABLE_API_KEY": KEY}
        response = await search(env, clock, recency="day", include_domains=["docs.rs"])
    assert [r.json() for r in fake.requests] == [body(site="docs.rs", published_after="1d"), body(site="docs.rs")]
    assert response.ok


async def test_a_retry_still_empty_is_the_chains_204(
    keenable: FakeKeenable, kenv: dict[str, str], clock: FakeClock
) -> None:
    keenable.enqueue(Reply(200, keenable_results_body("q", 0)), Reply(200, {"results": []}))
    response = await search(kenv, clock, recency="month")
    assert len(keenable.requests) == 2
    assert response.error == "Keenable returned no renderable search content."
    (attempt,) = response.attempts
    assert (attempt.status, attempt.error_kind) == (204, "no_results")
    assert [n.kind for n in attempt.notices] == ["not_applied"]  # the retry without dates, said


async def test_no_retry_without_dates_or_after_an_error(
    keenable: FakeKeenable, kenv: dict[str, str], clock: FakeClock
) -> None:
    keenable.enqueue(Reply(200, keenable_results_body("q", 0)))
    response = await search(kenv, clock)
    assert len(keenable.requests) == 1 and response.error == "Keenable returned no renderable search content."
    keenable.enqueue(keenable_error(500, "Internal error"))
    response = await search(kenv, clock, recency="day")
    assert len(keenable.requests) == 2 and response.error == "Keenable API error (500): Internal error"


# -- the keyless public endpoint --------------------------------------------------------------


async def test_the_public_row_calls_the_public_endpoint_without_a_key(
    public: FakeKeenablePublic, env: dict[str, str], clock: FakeClock
) -> None:
    response = await search_once(
        "keenable_public", {**env, **public.env, "KEENABLE_API_KEY": KEY}, "rust async", clock, limit=4
    )
    assert response.ok and response.provider == "keenable_public" and len(response.sources) == 4
    req = public.last
    assert (req.method, req.path) == ("POST", "/v1/search/public")
    assert req.headers["x-keenable-title"] == "websearch"
    assert "x-api-key" not in req.headers  # the public row never sends the key, even when one is set
    assert req.json() == body(4)
    assert response.auth_mode == "keyless"


async def test_the_keyed_row_chosen_without_a_key_uses_the_public_endpoint(
    keenable: FakeKeenable, env: dict[str, str], clock: FakeClock
) -> None:
    response = await search({**env, **keenable.env}, clock)
    assert response.ok and response.provider == "keenable" and response.auth_mode == "keyless"
    assert keenable.last.path == "/v1/search/public" and "x-api-key" not in keenable.last.headers


def test_the_fake_public_endpoint_needs_its_title(public: FakeKeenablePublic) -> None:
    untitled = public.default_reply(RecordedRequest("POST", "/v1/search/public", (), {}, b'{"query": "q"}'))
    assert (untitled.status, untitled.body) == (400, {"error": "X-Keenable-Title header is required"})
    titled = {"x-keenable-title": "websearch"}
    assert (
        public.default_reply(RecordedRequest("POST", "/v1/search/public", (), titled, b'{"query": "q"}')).status == 200
    )


def test_rows_and_chain_positions() -> None:
    keyed, keyless = PROVIDERS["keenable"], PROVIDERS["keenable_public"]
    assert (keyed.tier, keyed.keyless, keyed.explicit_keyless, keyed.env_keys) == (
        "search",
        False,
        True,
        ("KEENABLE_API_KEY",),
    )
    assert (keyless.tier, keyless.keyless, keyless.env_keys, keyless.pace) == ("keyless", True, (), 0.25)
    assert SEARCH_PROVIDER_ORDER[-1] == "keenable_public"  # after every other keyless engine
    assert SEARCH_PROVIDER_ORDER.index("keenable") < SEARCH_PROVIDER_ORDER.index("duckduckgo")
    assert PROVIDER.supports == PUBLIC.supports and PUBLIC.id == "keenable_public"


def test_availability(config_dir: Path) -> None:
    def available(env: dict[str, str]) -> dict[str, bool]:
        rows = WebSearch(engine=False, env=env).provider_status()
        return {s.id: s.available for s in rows if s.id.startswith("keenable")}

    base = {"WEBSEARCH_CONFIG_DIR": str(config_dir)}
    assert available(base) == {"keenable": False, "keenable_public": True}
    assert available({**base, "KEENABLE_API_KEY": KEY}) == {"keenable": True, "keenable_public": True}


# -- parsing ----------------------------------------------------------------------------------

REALISTIC = {
    "query": "rust async",
    "mode": "pro",
    "results": [
        {
            "title": "Async in Rust",
            "url": "https://rust-lang.github.io/async-book/",
            "snippet": "  The page text about futures.  ",
            "description": "The async book.",
            "published_at": "2026-11-27T00:00:00Z",
            "acquired_at": "2026-11-28T10:00:00Z",
        },
        {"title": "", "url": "https://tokio.rs/", "snippet": " ", "description": "Tokio, an async runtime."},
        {"title": "no url", "snippet": "dropped"},
        {"url": "", "title": "empty url"},
        "not an object",
        {"title": "Beyond", "url": "https://beyond.example/", "snippet": "cut by the count"},
    ],
}


async def test_parses_a_realistic_body_exactly(keenable: FakeKeenable, kenv: dict[str, str], clock: FakeClock) -> None:
    keenable.enqueue(Reply(200, REALISTIC, headers={"X-Request-Id": "kn-77"}))
    response = await search(kenv, clock, limit=2)
    assert response == SearchResponse(
        provider="keenable",
        query="rust async",
        sources=(
            SearchSource(
                "Async in Rust",
                "https://rust-lang.github.io/async-book/",
                "The page text about futures.",
                "2026-11-27T00:00:00Z",
                3 * 86400 + 12 * 3600,
            ),
            SearchSource("https://tokio.rs/", "https://tokio.rs/", "Tokio, an async runtime."),
        ),
        request_id="kn-77",
        auth_mode="api_key",
        attempts=(Attempt("keenable", None, None, 0.0),),
    )


def test_parse_tolerates_missing_fields(clock: FakeClock, config_dir: Path) -> None:
    plan = PROVIDER.plan(SearchParams("q"), context({"KEENABLE_API_KEY": KEY}, config_dir, clock))
    parsed = PROVIDER.parse(HttpResponse(200, {}, b"{}"), plan)
    assert (parsed.sources, parsed.request_id, parsed.auth_mode) == ((), None, "api_key")
    raw = json.dumps({"results": {"not": "a list"}}).encode()
    assert PROVIDER.parse(HttpResponse(200, {}, raw), plan).sources == ()


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "status", "kind", "message"),
    [
        (
            keenable_error(401, "Unauthorized: Invalid API key"),
            401,
            "auth",
            "Keenable authorization failed (401). Check API key or base URL.",
        ),
        (
            keenable_error(403, "Key disabled"),
            403,
            "auth",
            "Keenable authorization failed (403). Check API key or base URL.",
        ),
        (
            keenable_error(402, "Insufficient credits"),
            402,
            "quota",
            "keenable: 402 credits exhausted: Insufficient credits",
        ),
        (keenable_error(422, "query is required"), 422, "rejected", "Keenable API error (422): query is required"),
        (
            Reply(422, {"detail": [{"loc": ["body", "query"], "msg": "field required"}]}),
            422,
            "rejected",
            "Keenable API error (422): field required",
        ),
        (
            rate_limited_reply(900),
            429,
            "rate_limited",
            "Keenable API error (429): Rate limit exceeded; retry after 900 s",
        ),
        (keenable_error(500, "Internal error"), 500, "unavailable", "Keenable API error (500): Internal error"),
        (Reply(503, b""), 503, "unavailable", "Keenable API error (503): Service Unavailable"),
        (
            Reply(200, "<html>maintenance</html>", content_type="text/html"),
            200,
            "invalid_response",
            "Keenable returned a body that is not JSON",
        ),
        (Reply(200, ["a"]), 200, "invalid_response", "Keenable returned JSON that is not an object"),
    ],
)
async def test_error_statuses_and_envelopes(
    keenable: FakeKeenable,
    kenv: dict[str, str],
    clock: FakeClock,
    reply: Reply,
    status: int,
    kind: str,
    message: str,
) -> None:
    keenable.enqueue(reply)
    response = await search(kenv, clock)
    assert response.error == message and response.sources == ()
    (attempt,) = response.attempts
    assert (attempt.provider, attempt.status, attempt.error, attempt.error_kind) == ("keenable", status, message, kind)


@pytest.mark.parametrize(
    ("reply", "retry"),
    [
        (rate_limited_reply(120), 120.0),
        (Reply(429, {"error": "slow down", "retryAfter": 120}, headers={"Retry-After": "5"}), 5.0),
        (Reply(429, {"error": "slow down", "retryAfter": -1}), None),
        (Reply(429, {"error": "slow down", "retryAfter": True}), None),
        (Reply(500, "boom"), None),
    ],
)
def test_retry_hint(reply: Reply, retry: float | None, clock: FakeClock, config_dir: Path) -> None:
    raw, _ = reply.encoded()
    plan = PROVIDER.plan(SearchParams("q"), context({"KEENABLE_API_KEY": KEY}, config_dir, clock))
    headers = {name.lower(): value for name, value in reply.headers.items()}
    assert PROVIDER.error(HttpResponse(reply.status, headers, raw), plan).retry_after == retry


async def test_a_wrong_key_is_the_fakes_401(keenable: FakeKeenable, env: dict[str, str], clock: FakeClock) -> None:
    response = await search({**env, **keenable.env, "KEENABLE_API_KEY": "sk-kn_live_wrong"}, clock)
    assert response.error == "Keenable authorization failed (401). Check API key or base URL."


@pytest.mark.parametrize(
    "reply",
    [
        keenable_error(401, f"Invalid API key {KEY}"),
        keenable_error(429, f"rate limited for {KEY}"),
        Reply(500, f"internal error for key {KEY}"),
        Reply(200, f"not json {KEY}"),
    ],
)
async def test_key_never_leaks_from_error_paths(
    keenable: FakeKeenable, kenv: dict[str, str], clock: FakeClock, reply: Reply
) -> None:
    keenable.enqueue(reply)
    response = await search(kenv, clock)
    assert response.error
    for text in (response.error, repr(response.attempts), repr(response), str(response.to_dict())):
        assert KEY not in text
    assert KEY not in repr(keenable.last)


# -- credentials ------------------------------------------------------------------------------


def test_missing_key_message_in_the_automatic_chain(config_dir: Path, clock: FakeClock) -> None:
    ctx = context({"WEBSEARCH_CONFIG_DIR": str(config_dir)}, config_dir, clock)
    with pytest.raises(MissingCredentialError) as info:
        PROVIDER.plan(SearchParams("q"), ctx)  # not chosen explicitly: the key is required
    assert info.value.message == "Keenable needs an API key: set KEENABLE_API_KEY or run `websearch auth set keenable`"
    assert PUBLIC.plan(SearchParams("q"), ctx).request is not None  # the public row needs none


async def test_key_resolution_order(
    keenable: FakeKeenable, env: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    CredentialStore(config_dir / "agent.db").set("keenable", "api_key", {"api_key": "stored-key-0000"})
    await search({**env, **keenable.env}, clock)
    assert keenable.last.headers["x-api-key"] == "stored-key-0000"
    full = {**env, **keenable.env, "KEENABLE_API_KEY": "env-key-1111"}
    await search(full, clock)
    assert keenable.last.headers["x-api-key"] == "env-key-1111"
    async with make_client(env=full, clock=clock, api_keys={"keenable": "explicit-2222"}) as ws:
        await ws.asearch("q", provider="keenable")
    assert keenable.last.headers["x-api-key"] == "explicit-2222"
