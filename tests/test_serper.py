"""Serper against a loopback fake of google.serper.dev: the request, the rich answer, errors, keys."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock, make_client, messages, provider_context, search_once
from websearch import Attempt, SearchParams, SearchResponse, SearchSource, WebSearch
from websearch._core._credentials import CredentialStore
from websearch._providers.serper import PROVIDER, _locale_fields
from websearch.errors import MissingCredentialError
from websearch.providers import HttpResponse, ProviderContext
from websearch.testing import Reply
from websearch.testing.serper import FakeSerper, serper_error, serper_results_body

KEY = "serper-secret-5e1d9c3b7a"


@pytest.fixture
def serper() -> Iterator[FakeSerper]:
    with FakeSerper(valid_keys={KEY}) as fake:
        yield fake


@pytest.fixture
def senv(env: dict[str, str], serper: FakeSerper) -> dict[str, str]:
    return {**env, **serper.env, "SERPER_API_KEY": KEY}


async def search(env: dict[str, str], clock: FakeClock, query: str = "rust async", **kwargs: Any) -> SearchResponse:
    return await search_once("serper", env, query, clock, **kwargs)


def context(env: dict[str, str], config_dir: Path, clock: FakeClock) -> ProviderContext:
    return provider_context(config_dir, env, clock=clock)


# -- the request ------------------------------------------------------------------------------


async def test_default_request(serper: FakeSerper, senv: dict[str, str], clock: FakeClock) -> None:
    response = await search(senv, clock)
    assert response.ok and messages(response) == ()
    req = serper.last
    assert (req.method, req.path, req.query) == ("POST", "/search", ())
    assert req.headers["x-api-key"] == KEY
    assert req.headers["content-type"] == "application/json"
    assert "authorization" not in req.headers
    assert req.json() == {"q": "rust async", "num": 10}
    assert len(response.sources) == 10 and response.auth_mode == "api_key"


@pytest.mark.parametrize(
    ("kwargs", "num", "notices"),
    [
        ({"limit": 3}, 3, ()),
        ({"num_search_results": 40}, 40, ()),
        ({"limit": 3, "num_search_results": 7}, 7, ("limit=3 not applied: num_search_results=7 takes precedence",)),
        ({"limit": 500}, 100, ("limit=500 clamped to 100: Serper returns at most 100 results",)),
    ],
)
async def test_num_is_the_collapsed_clamped_count(
    serper: FakeSerper,
    senv: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, int],
    num: int,
    notices: tuple[str, ...],
) -> None:
    response = await search(senv, clock, **kwargs)
    assert serper.last.json()["num"] == num
    assert len(response.sources) == num  # the answer box's and the knowledge graph's links count too
    assert messages(response) == notices


WHOLE_DAYS = "Serper's custom date range (Google's tbs) takes whole days"


@pytest.mark.parametrize(
    ("kwargs", "tbs", "notices"),
    [
        ({"recency": "day"}, "qdr:d", ()),
        ({"recency": "week"}, "qdr:w", ()),
        ({"recency": "month"}, "qdr:m", ()),
        ({"recency": "year"}, "qdr:y", ()),
        ({"recency_days": 3}, "qdr:d3", ()),
        ({"recency_hours": 6}, "qdr:h6", ()),
        ({"recency_hours": 1}, "qdr:h", ()),
        (
            {"recency_hours": 1.5},
            "qdr:h2",
            (
                "recency_hours=1.5 applied as whole hours (qdr:h2): Serper's relative windows (Google's tbs) count whole "
                "hours",
            ),
        ),
        (
            {"start_published_date": "2026-01-15", "end_published_date": "2026-02-01"},
            "cdr:1,cd_min:1/15/2026,cd_max:2/1/2026",
            (),
        ),
        (
            {"start_published_date": "2026-03-01T10:30:00Z"},
            "cdr:1,cd_min:3/1/2026",
            (f'start_published_date="2026-03-01T10:30:00Z" applied as whole days (cd_min:3/1/2026): {WHOLE_DAYS}',),
        ),
        (
            {"recency": "week", "recency_days": 2},
            "qdr:d2",
            ('recency="week" not applied: recency_days takes precedence',),
        ),
    ],
)
async def test_dates_are_googles_tbs(
    serper: FakeSerper,
    senv: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, Any],
    tbs: str,
    notices: tuple[str, ...],
) -> None:
    response = await search(senv, clock, **kwargs)
    assert response.ok
    assert serper.last.json() == {"q": "rust async", "num": 10, "tbs": tbs}
    assert messages(response) == notices


async def test_domains_are_site_operators_and_enforced(
    serper: FakeSerper, senv: dict[str, str], clock: FakeClock
) -> None:
    response = await search(senv, clock, include_domains=["docs.rs", "rust-lang.org"], exclude_domains=["reddit.com"])
    assert serper.last.json()["q"] == "rust async (site:docs.rs OR site:rust-lang.org) -site:reddit.com"
    assert messages(response)[:2] == (
        'include_domains=["docs.rs", "rust-lang.org"] applied as site: operators in the query: Serper has no domain '
        "filter",
        'exclude_domains=["reddit.com"] applied as -site: operators in the query: Serper has no domain filter',
    )
    hosts = {s.url.split("/")[2] for s in response.sources}
    assert hosts <= {"docs.rs", "rust-lang.org"} and response.sources


async def test_unsupported_parameters_become_notices(
    serper: FakeSerper, senv: dict[str, str], clock: FakeClock
) -> None:
    response = await search(senv, clock, max_tokens=64, category="news")
    assert messages(response) == (
        "max_tokens=64 not applied: Serper does not support it",
        'category="news" not applied: Serper does not support it',
    )
    assert serper.last.json() == {"q": "rust async", "num": 10}


def test_locale_fields() -> None:
    assert _locale_fields("DE", "de") == {"gl": "de", "hl": "de"}
    assert _locale_fields(None, "fr") == {"hl": "fr"}  # a language alone sets no country
    assert _locale_fields("GB", None) == {"gl": "gb"}
    assert _locale_fields(None, None) == {} and _locale_fields(" ", "") == {}


# -- parsing ----------------------------------------------------------------------------------


async def test_the_rich_answer(serper: FakeSerper, senv: dict[str, str], clock: FakeClock) -> None:
    response = await search(senv, clock, limit=4)
    assert response.answer == "Rust Async / Summary: The short answer about rust async"
    assert [s.url for s in response.sources] == [
        "https://answers.example.org/rust-async",
        "https://en.wikipedia.org/wiki/rust_async",
        "https://www.site1.example.com/rust-async/1",
        "https://www.site2.example.com/rust-async/2",
    ]
    assert response.sources[1].snippet == "Rust async is a topic with an encyclopaedia entry."
    assert response.related_questions == (
        "What is rust async?",
        "Is rust async free?",
        "rust async tutorial",
        "rust async vs alternatives",
    )
    # organic dates: "Nov 27, 2026" three and a half days before NOW, "2 days ago" kept raw
    assert response.sources[2].published_date == "Nov 27, 2026"
    assert response.sources[2].age_seconds == 3 * 86400 + 12 * 3600


REALISTIC = {
    "searchParameters": {"q": "capital of france", "type": "search", "engine": "google"},
    "answerBox": {"title": "France / Capital", "answer": " Paris "},
    "knowledgeGraph": {
        "title": "Paris",
        "type": "Capital of France",
        "website": "http://www.paris.fr/",
        "description": "Paris is the capital and largest city of France.",
        "descriptionSource": "Wikipedia",
        "descriptionLink": "https://en.wikipedia.org/wiki/Paris",
        "attributes": {"Population": "2.1 million"},
    },
    "organic": [
        {"title": "Second", "link": "https://b.example.com/", "snippet": "two", "position": 2},
        {
            "title": "Paris - Wikipedia",
            "link": "https://en.wikipedia.org/wiki/Paris",
            "snippet": "duplicate of the graph's link",
            "position": 1,
            "sitelinks": [{"title": "History", "link": "https://en.wikipedia.org/wiki/History_of_Paris"}],
        },
        {"title": "", "link": "https://c.example.com/", "snippet": " ", "date": "3 days ago", "position": 3},
        {"title": "no link", "snippet": "dropped", "position": 4},
        {"title": "not http", "link": "javascript:void(0)", "position": 5},
        "not an object",
    ],
    "peopleAlsoAsk": [{"question": "Why is Paris the capital?"}, {"question": " "}, {"title": "no question"}],
    "relatedSearches": [{"query": "paris population"}, {"query": "Why is Paris the capital?"}],
    "credits": 1,
}


async def test_parses_a_realistic_body_exactly(serper: FakeSerper, senv: dict[str, str], clock: FakeClock) -> None:
    serper.enqueue(Reply(200, REALISTIC, headers={"X-Request-Id": "srp-1"}))
    response = await search(senv, clock, query="capital of france")
    assert response == SearchResponse(
        provider="serper",
        query="capital of france",
        answer="France / Capital: Paris",
        sources=(
            SearchSource(
                "Paris", "https://en.wikipedia.org/wiki/Paris", "Paris is the capital and largest city of France."
            ),
            SearchSource("Second", "https://b.example.com/", "two"),
            SearchSource("https://c.example.com/", "https://c.example.com/", None, "3 days ago"),  # relative: no age
        ),
        related_questions=("Why is Paris the capital?", "paris population"),
        request_id="srp-1",
        auth_mode="api_key",
        attempts=(Attempt("serper", None, None, 0.0),),
    )


@pytest.mark.parametrize(
    ("box", "answer"),
    [
        ({"title": "T", "snippet": " A featured snippet. ", "link": "https://x.example/"}, "A featured snippet."),
        ({"snippetHighlighted": ["one", " ", "two"]}, "one\ntwo"),
        ({"answer": "42"}, "42"),
        ({"title": "only a title"}, None),
        ("not an object", None),
    ],
)
def test_answer_box_shapes(box: object, answer: str | None, clock: FakeClock, config_dir: Path) -> None:
    plan = PROVIDER.plan(SearchParams("q"), context({"SERPER_API_KEY": KEY}, config_dir, clock))
    raw = HttpResponse(200, {}, json.dumps({"answerBox": box, "organic": []}).encode())
    assert PROVIDER.parse(raw, plan).answer == answer


def test_parse_tolerates_missing_fields(clock: FakeClock, config_dir: Path) -> None:
    plan = PROVIDER.plan(SearchParams("q"), context({"SERPER_API_KEY": KEY}, config_dir, clock))
    parsed = PROVIDER.parse(HttpResponse(200, {}, b"{}"), plan)
    assert (parsed.answer, parsed.sources, parsed.related_questions, parsed.request_id) == (None, (), (), None)
    body = serper_results_body("q", 15, rich=False)
    parsed = PROVIDER.parse(HttpResponse(200, {}, json.dumps(body).encode()), plan)
    assert len(parsed.sources) == 10 and parsed.answer is None


async def test_nothing_found_is_the_chains_204(serper: FakeSerper, senv: dict[str, str], clock: FakeClock) -> None:
    serper.enqueue(Reply(200, {"searchParameters": {"q": "zzz"}, "organic": [], "credits": 1}))
    response = await search(senv, clock)
    assert response.error == "Serper returned no renderable search content."
    assert response.attempts[0].error_kind == "no_results"


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "status", "kind", "message"),
    [
        (
            serper_error(403, "Unauthorized."),
            403,
            "auth",
            "Serper authorization failed (403). Check API key or base URL.",
        ),
        (
            serper_error(401, "Unauthorized."),
            401,
            "auth",
            "Serper authorization failed (401). Check API key or base URL.",
        ),
        # out of credits is a 400 told only by its words: a rejected request, never decided by text
        (serper_error(400, "Not enough credits"), 400, "rejected", "Serper API error (400): Not enough credits"),
        (serper_error(400, "Query not allowed."), 400, "rejected", "Serper API error (400): Query not allowed."),
        (serper_error(402, "Payment required"), 402, "quota", "serper: 402 credits exhausted: Payment required"),
        (
            Reply(429, {"message": "Too many requests", "statusCode": 429}, headers={"Retry-After": "3"}),
            429,
            "rate_limited",
            "Serper API error (429): Too many requests; retry after 3 s",
        ),
        (serper_error(500, "Internal error"), 500, "unavailable", "Serper API error (500): Internal error"),
        (Reply(502, b""), 502, "unavailable", "Serper API error (502): Bad Gateway"),
        (
            Reply(200, "<html>maintenance</html>", content_type="text/html"),
            200,
            "invalid_response",
            "Serper returned a body that is not JSON",
        ),
        (Reply(200, ["a"]), 200, "invalid_response", "Serper returned JSON that is not an object"),
    ],
)
async def test_error_statuses_and_envelopes(
    serper: FakeSerper, senv: dict[str, str], clock: FakeClock, reply: Reply, status: int, kind: str, message: str
) -> None:
    serper.enqueue(reply)
    response = await search(senv, clock)
    assert response.error == message and response.sources == ()
    (attempt,) = response.attempts
    assert (attempt.provider, attempt.status, attempt.error, attempt.error_kind) == ("serper", status, message, kind)


async def test_the_fakes_own_refusals(env: dict[str, str], clock: FakeClock) -> None:
    with FakeSerper(valid_keys={KEY}, credits=1) as fake:
        good = {**env, **fake.env, "SERPER_API_KEY": KEY}
        first, second = await search(good, clock), await search(good, clock, query="again")
        wrong = await search({**good, "SERPER_API_KEY": "serper-wrong-0000"}, clock)
    assert first.ok
    assert second.error == "Serper API error (400): Not enough credits"
    assert wrong.error == "Serper authorization failed (403). Check API key or base URL."


@pytest.mark.parametrize(
    "reply",
    [
        serper_error(403, f"Unauthorized key {KEY}."),
        serper_error(400, f"Not enough credits for {KEY}"),
        Reply(500, f"internal error for key {KEY}"),
        Reply(200, f"not json {KEY}"),
    ],
)
async def test_key_never_leaks_from_error_paths(
    serper: FakeSerper, senv: dict[str, str], clock: FakeClock, reply: Reply
) -> None:
    serper.enqueue(reply)
    response = await search(senv, clock)
    assert response.error
    for text in (response.error, repr(response.attempts), repr(response), str(response.to_dict())):
        assert KEY not in text
    assert KEY not in repr(serper.last)


# -- credentials ------------------------------------------------------------------------------


def test_missing_key_message(config_dir: Path, clock: FakeClock) -> None:
    ctx = context({"WEBSEARCH_CONFIG_DIR": str(config_dir)}, config_dir, clock)
    with pytest.raises(MissingCredentialError) as info:
        PROVIDER.plan(SearchParams("q"), ctx)
    assert info.value.message == "Serper needs an API key: set SERPER_API_KEY or run `websearch auth set serper`"


async def test_key_resolution_order(
    serper: FakeSerper, env: dict[str, str], config_dir: Path, clock: FakeClock
) -> None:
    CredentialStore(config_dir / "agent.db").set("serper", "api_key", {"api_key": "stored-key-0000"})
    await search({**env, **serper.env}, clock)
    assert serper.last.headers["x-api-key"] == "stored-key-0000"
    full = {**env, **serper.env, "SERPER_API_KEY": "env-key-1111"}
    await search(full, clock)
    assert serper.last.headers["x-api-key"] == "env-key-1111"
    async with make_client(env=full, clock=clock, api_keys={"serper": "explicit-2222"}) as ws:
        await ws.asearch("q", provider="serper")
    assert serper.last.headers["x-api-key"] == "explicit-2222"


def test_availability(config_dir: Path) -> None:
    def available(env: dict[str, str]) -> bool:
        return next(s for s in WebSearch(engine=False, env=env).provider_status() if s.id == "serper").available

    base = {"WEBSEARCH_CONFIG_DIR": str(config_dir)}
    assert not available(base)
    assert available({**base, "SERPER_API_KEY": KEY})
