"""Exa with the richer parameters of mcp-web_search-tool.md: the exact /search bodies, the deep
modes (synthesized answer, grounding, timeout) and every notice in the `blocks` header."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock, make_client, messages, provider_context, run_cli, search_once
from websearch import SearchCitation, SearchParams, SearchResponse, render
from websearch._providers.exa import ANSWER_SCHEMA, PEOPLE_HINT, PROVIDER
from websearch.providers import HttpRequest, ProviderContext
from websearch.testing import FakeFirecrawl, Reply, honour_domains
from websearch.testing.exa import FakeExa, exa_search_body, mcp_listing, mcp_reply, mcp_result

KEY = "exa-rich-key-51d0c7e2"
Q = "rust async"
TEXT: dict[str, Any] = {"text": {"maxCharacters": 1200}, "highlights": True}
KEYLESS_MCP = "not applied: Exa's keyless MCP search does not support it (set EXA_API_KEY)"
RECENCY = "applied as startPublishedDate={}: Exa has no recency window, only a start date"
DEPRECATED = "applied as given: it is deprecated and may stop working"
CAPPED = "clamped to its first 20 entries: at most 20 are used"


@pytest.fixture
def keyed(env: dict[str, str], exa: FakeExa) -> dict[str, str]:
    return {**env, **exa.env, "EXA_API_KEY": KEY}


@pytest.fixture
def keyless(env: dict[str, str], exa: FakeExa) -> dict[str, str]:
    return {**env, **exa.env}


async def search(env: dict[str, str], clock: FakeClock, query: str = Q, **params: Any) -> SearchResponse:
    response = await search_once("exa", env, query, clock, **params)
    assert_notices_in_header(response)
    return response


def assert_notices_in_header(response: SearchResponse) -> None:
    """Every notice is a `[...]` line of the blocks header, between the title and `[served by: ...]`."""
    lines = render(response, "blocks").splitlines()
    end = next((i for i, line in enumerate(lines) if line.startswith(("[served by:", "Error:"))), len(lines))
    assert lines[1:end] == [f"[{notice}]" for notice in messages(response)]


def body(**fields: Any) -> dict[str, Any]:
    """The rich /search body: auto, 10 results, text + highlights, plus `fields`."""
    return {"query": Q, "numResults": 10, "type": "auto", "contents": TEXT, **fields}


# -- the call without richer parameters is web_search.md's -------------------------------------


async def test_without_richer_parameters_the_body_is_unchanged(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock
) -> None:
    # false switches and empty domain lists are not "given"
    response = await search(keyed, clock, limit=4, summary=False, sort_by_date=False, include_domains=[])
    assert exa.last.json() == {"query": Q, "numResults": 4, "type": "auto", "contents": {"summary": {"query": Q}}}
    assert response.answer is not None and response.answer.startswith("**")  # the three-summary answer
    assert messages(response) == ()


# -- modes ---------------------------------------------------------------------------------------

DEEP = {"outputSchema": ANSWER_SCHEMA}


@pytest.mark.parametrize(
    ("mode", "sent", "extra", "notices"),
    [
        ("auto", "auto", {}, ()),
        ("fast", "fast", {}, ()),
        ("instant", "instant", {}, ()),
        ("deep-lite", "deep-lite", DEEP, ()),
        ("deep", "deep", DEEP, ()),
        ("deep-reasoning", "deep-reasoning", DEEP, ()),
        ("neural", "auto", {}, ('mode="neural" searched as mode="auto": the legacy search types are gone',)),
        ("keyword", "auto", {}, ('mode="keyword" searched as mode="auto": the legacy search types are gone',)),
    ],
)
async def test_mode_is_the_search_type(
    exa: FakeExa,
    keyed: dict[str, str],
    clock: FakeClock,
    mode: str,
    sent: str,
    extra: dict[str, Any],
    notices: tuple[str, ...],
) -> None:
    response = await search(keyed, clock, mode=mode)
    assert exa.last.json() == body(type=sent, **extra)
    assert messages(response) == notices
    assert (response.answer is not None) == bool(extra)  # only a deep mode synthesizes an answer


def context(config_dir: Path, clock: FakeClock, timeout: float | None, env: dict[str, str]) -> ProviderContext:
    """A context of a client whose per-request timeout is `timeout`."""
    return dataclasses.replace(provider_context(config_dir, env, clock=clock), timeout=timeout)


def request(params: SearchParams, ctx: ProviderContext) -> HttpRequest:
    """The request the plan for `params` sends."""
    planned = PROVIDER.plan(params, ctx).request
    assert planned is not None
    return planned


@pytest.mark.parametrize(
    ("mode", "client_timeout", "expected"),
    [
        ("deep-reasoning", 60.0, 180.0),
        ("deep", 60.0, 90.0),
        ("deep-lite", 60.0, 90.0),
        ("deep-lite", 120.0, 120.0),  # never shorter than the client's own timeout
        ("deep-reasoning", 300.0, 300.0),
        ("deep", None, 90.0),  # a context made without the client's timeout
        ("auto", 60.0, None),
        ("fast", 60.0, None),
        ("instant", 60.0, None),
    ],
)
def test_deep_modes_get_a_longer_timeout(
    config_dir: Path, clock: FakeClock, mode: str, client_timeout: float | None, expected: float | None
) -> None:
    ctx = context(config_dir, clock, client_timeout, {"EXA_API_KEY": KEY})
    assert request(SearchParams(Q, mode=mode), ctx).timeout == expected
    assert request(SearchParams(Q), ctx).timeout is None  # web_search.md's call keeps the client's


async def test_the_real_client_timeout_floors_the_deep_timeout(config_dir: Path, clock: FakeClock) -> None:
    async with make_client(env={"EXA_API_KEY": KEY}, clock=clock, timeout=150) as ws:
        ctx = ws._context()
        assert request(SearchParams(Q, mode="deep"), ctx).timeout == 150
        assert request(SearchParams(Q, mode="deep-reasoning"), ctx).timeout == 180


# -- the deep answer -----------------------------------------------------------------------------


async def test_deep_answer_and_grounding_in_the_blocks_output(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock
) -> None:
    response = await search(keyed, clock, mode="deep", limit=3)
    first, second = (r["url"] for r in exa_search_body(Q, 3)["results"][:2])
    assert response.answer == "Rust async is covered by 3 sources; the first two agree."
    assert [c.url for c in response.citations] == [first, second]
    text = render(response, "blocks")
    assert (
        "[served by: exa]\n\n## Synthesized answer\nRust async is covered by 3 sources; the first two agree.\n"
        f"Grounding: {first}; {second}\n\n## 1. Rust Async: part 1\n" in text
    )
    assert "- rust async highlight 1a.\n- rust async highlight 1b.\nrust async — part 1." in text


async def test_object_content_becomes_json_text_and_citations_are_deduplicated(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock
) -> None:
    reply = exa_search_body(Q, 2, text=True, summary=False)
    reply["output"] = {
        "content": {"answer_text": "Tokio wins", "confidence": 0.8},
        "grounding": [
            {"field": "answer_text", "citations": [{"url": "https://tokio.rs", "title": "Tokio"}, {"title": "no url"}]},
            {"field": "confidence", "citations": [{"url": "https://tokio.rs"}, {"url": "https://smol.rs"}]},
            "not an object",
        ],
    }
    exa.enqueue(Reply(200, reply))
    response = await search(keyed, clock, mode="deep-reasoning")
    assert response.answer == json.dumps({"answer_text": "Tokio wins", "confidence": 0.8}, indent=2)
    assert response.citations == (
        SearchCitation(url="https://tokio.rs", title="Tokio"),
        SearchCitation(url="https://smol.rs", title="https://smol.rs"),
    )
    assert "Grounding: https://tokio.rs; https://smol.rs" in render(response, "blocks")


async def test_a_rich_call_never_merges_summaries_into_an_answer(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock
) -> None:
    response = await search(keyed, clock, summary=True, limit=2)
    assert exa.last.json() == body(numResults=2, contents={"summary": {"query": Q}})
    assert response.answer is None
    assert [s.snippet for s in response.sources] == [
        "Part 1 explains how rust async works and when to use it.",
        "Part 2 explains how rust async works and when to use it.",
    ]
    assert "## Synthesized answer" not in render(response, "blocks")


async def test_summary_with_a_deep_mode_keeps_the_answer(exa: FakeExa, keyed: dict[str, str], clock: FakeClock) -> None:
    await search(keyed, clock, summary=True, mode="deep-lite")
    assert exa.last.json() == body(type="deep-lite", contents={"summary": {"query": Q}}, **DEEP)


# -- text size -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "sent", "notices"),
    [
        (3000, 3000, ()),
        (50, 200, ("text_chars=50 clamped to 200: allowed 200-8000",)),
        (9000, 8000, ("text_chars=9000 clamped to 8000: allowed 200-8000",)),
    ],
)
async def test_text_chars_sizes_the_request(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock, given: int, sent: int, notices: tuple[str, ...]
) -> None:
    response = await search(keyed, clock, text_chars=given)
    assert exa.last.json() == body(contents={"text": {"maxCharacters": sent}, "highlights": True})
    assert messages(response) == notices


async def test_the_fake_cuts_text_to_max_characters(exa: FakeExa, keyed: dict[str, str], clock: FakeClock) -> None:
    exa.enqueue(Reply(200, exa_search_body(Q, 1, text=True, summary=False, max_characters=200)))
    response = await search(keyed, clock, text_chars=200)
    assert response.sources[0].snippet == "rust async — part 1. Full page text with details, examples and caveats."


# -- the date ladder -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "dates", "notices"),
    [
        ({"start_published_date": "2026-11-01"}, {"startPublishedDate": "2026-11-01"}, ()),
        (
            {"start_published_date": "2026-11-29T08:30:00Z"},
            {"startPublishedDate": "2026-11-29T08:30:00.000Z"},
            (),
        ),
        (
            {"start_published_date": "2026-11-29T08:30:00+02:00", "end_published_date": "2026-11-30T01:00:00Z"},
            {"startPublishedDate": "2026-11-29T06:30:00.000Z", "endPublishedDate": "2026-11-30T01:00:00.000Z"},
            (),
        ),
        ({"recency_hours": 6}, {"startPublishedDate": "2026-11-30T06:00:00.000Z"}, ()),
        ({"recency_hours": "1.5"}, {"startPublishedDate": "2026-11-30T10:30:00.000Z"}, ()),
        ({"recency_days": 7}, {"startPublishedDate": "2026-11-23"}, ()),
        (
            {"start_published_date": "2026-11-01", "recency_hours": 6, "recency_days": 3},
            {"startPublishedDate": "2026-11-01"},
            (
                "recency_hours=6 not applied: start_published_date takes precedence",
                "recency_days=3 not applied: start_published_date takes precedence",
            ),
        ),
        (
            {"recency_hours": 6, "recency_days": 3},
            {"startPublishedDate": "2026-11-30T06:00:00.000Z"},
            ("recency_days=3 not applied: recency_hours takes precedence",),
        ),
        (
            {"start_published_date": "last tuesday", "recency_hours": -2, "recency_days": 2},
            {"startPublishedDate": "2026-11-28"},
            (
                'start_published_date="last tuesday" dropped: it is not an ISO date or timestamp',
                "recency_hours=-2 dropped: it is not a positive number",
            ),
        ),
        (
            {"start_published_date": "2026-11-01", "end_published_date": "2026-11-15"},
            {"startPublishedDate": "2026-11-01", "endPublishedDate": "2026-11-15"},
            (),
        ),
        (
            {"start_published_date": "2026-11-20", "end_published_date": "2026-11-15"},
            {"startPublishedDate": "2026-11-20"},
            ('end_published_date="2026-11-15" dropped: it is before the start',),
        ),
        (
            {"end_published_date": "2026-13-45", "recency_days": 0},
            {},
            (
                "recency_days=0 dropped: it is not a positive number",
                'end_published_date="2026-13-45" dropped: it is not an ISO date or timestamp',
            ),
        ),
        # recency, the base parameter, is the ladder's last rung in a call with richer parameters
        (
            {"recency": "week", "mode": "auto"},
            {"startPublishedDate": "2026-11-23"},
            ('recency="week" ' + RECENCY.format("2026-11-23"),),
        ),
        (
            {"recency": "day", "end_published_date": "2026-11-30"},
            {"startPublishedDate": "2026-11-29", "endPublishedDate": "2026-11-30"},
            ('recency="day" ' + RECENCY.format("2026-11-29"),),
        ),
        (
            {"recency": "year", "recency_days": 3},
            {"startPublishedDate": "2026-11-27"},
            ('recency="year" not applied: recency_days takes precedence',),
        ),
        (
            {"recency": "month", "end_published_date": "2026-01-01"},
            {"startPublishedDate": "2026-10-31"},
            (
                'recency="month" ' + RECENCY.format("2026-10-31"),
                'end_published_date="2026-01-01" dropped: it is before the start',
            ),
        ),
    ],
)
async def test_date_ladder(
    exa: FakeExa,
    keyed: dict[str, str],
    clock: FakeClock,
    params: dict[str, Any],
    dates: dict[str, str],
    notices: tuple[str, ...],
) -> None:
    response = await search(keyed, clock, **params)
    assert exa.last.json() == body(**dates)
    assert messages(response) == notices
    assert response.ok


# -- categories ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "fields", "notices"),
    [
        ({"category": "news"}, {"category": "news"}, ()),
        ({"category": "Financial Report"}, {"category": "financial report"}, ()),
        (
            {"category": "research paper"},
            {"category": "publication"},
            ('category="research paper" searched as category="publication": it was renamed',),
        ),
        ({"category": "tweet"}, {}, ('category="tweet" dropped: it is no longer supported; the search is unscoped',)),
        ({"category": "pdf"}, {"category": "pdf"}, (f'category="pdf" {DEPRECATED}',)),
        ({"category": "github"}, {"category": "github"}, (f'category="github" {DEPRECATED}',)),
        (
            {
                "category": "company",
                "recency_days": 7,
                "end_published_date": "2026-11-29",
                "exclude_domains": ["x.com"],
            },
            {"category": "company"},
            (
                'recency_days=7 dropped: category="company" does not allow it',
                'end_published_date="2026-11-29" dropped: category="company" does not allow it',
                # Not dropped: the results are filtered instead (a domain filter is a promise).
                'exclude_domains=["x.com"] applied as a filter on the results: Exa takes no excludeDomains with '
                'category="company"',
            ),
        ),
        (
            {"category": "people", "start_published_date": "2026-01-01", "include_domains": ["linkedin.com"]},
            {"category": "people", "includeDomains": ["linkedin.com"]},
            ('start_published_date="2026-01-01" dropped: category="people" does not allow it',),
        ),
        (
            {"category": "company", "recency": "week"},
            {"category": "company"},
            ('recency="week" dropped: category="company" does not allow it',),
        ),
    ],
)
async def test_category_migrations(
    exa: FakeExa,
    keyed: dict[str, str],
    clock: FakeClock,
    params: dict[str, Any],
    fields: dict[str, Any],
    notices: tuple[str, ...],
) -> None:
    response = await search(keyed, clock, **params)
    assert exa.last.json() == body(**fields)
    assert messages(response) == notices
    assert response.ok and response.provider == "exa"  # the fake refuses what Exa refuses: none of it was sent


async def test_people_outside_the_profile_domains_fails_over_to_the_fallback_tier(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock
) -> None:
    response = await search(keyed, clock, category="people", include_domains=["example.com"])
    assert exa.last.json() == body(category="people", includeDomains=["example.com"])
    message = (
        "Exa API error (400): includeDomains for category people must be among: linkedin.com (INVALID_REQUEST); "
        + PEOPLE_HINT
    )
    assert response.error == message
    assert [(a.provider, a.status) for a in response.attempts] == [("exa", 400)]
    with FakeFirecrawl() as firecrawl:
        env = {**keyed, **firecrawl.env, "FIRECRAWL_API_KEY": "fc-rich-test"}
        response = await search(env, clock, category="people", include_domains=["example.com"])
    assert response.provider == "firecrawl"
    assert response.fallback == f"exa unavailable: {message}"
    assert f"[served by: firecrawl search — exa unavailable: {message}]" in render(response, "blocks")


# -- domains -------------------------------------------------------------------------------------

MANY = [f"site{i}.example" for i in range(1, 26)]


async def test_domain_lists_over_twenty_are_capped(exa: FakeExa, keyed: dict[str, str], clock: FakeClock) -> None:
    response = await search(keyed, clock, include_domains=MANY)
    assert exa.last.json() == body(includeDomains=MANY[:20])
    assert messages(response) == (f"include_domains={json.dumps(MANY)} {CAPPED}",)
    response = await search(keyed, clock, exclude_domains=MANY)
    assert exa.last.json() == body(excludeDomains=MANY[:20])
    assert messages(response) == (f"exclude_domains={json.dumps(MANY)} {CAPPED}",)


async def test_include_wins_and_exclude_is_applied_to_the_results(
    exa: FakeExa, keyed: dict[str, str], clock: FakeClock
) -> None:
    urls = [
        "https://python.org/downloads",
        "https://mail.python.org/archives",
        "https://docs.python.org/3/",
        "https://www.mail.python.org/x",
        "https://notmail.python.org/y",
    ]
    reply = {"requestId": "r", "results": [{"url": u, "title": u, "text": "t"} for u in urls]}
    exa.enqueue(Reply(200, reply))
    response = await search(
        keyed, clock, include_domains=["python.org"], exclude_domains=["https://www.mail.python.org/"]
    )
    assert exa.last.json() == body(includeDomains=["python.org"])
    assert [s.url for s in response.sources] == [urls[0], urls[2], urls[4]]
    assert messages(response) == (
        'exclude_domains=["https://www.mail.python.org/"] searched as exclude_domains=["www.mail.python.org"]: '
        "a domain filter takes host names",
        'exclude_domains=["https://www.mail.python.org/"] applied as a filter on the results: '
        "Exa does not accept include_domains and exclude_domains together",
        'exclude_domains=["https://www.mail.python.org/"] enforced: 2 results on these hosts removed',
    )


# -- sort_by_date --------------------------------------------------------------------------------


async def test_sort_by_date_is_disclosed_as_not_applied(exa: FakeExa, keyed: dict[str, str], clock: FakeClock) -> None:
    response = await search(keyed, clock, sort_by_date=True)
    assert exa.last.json() == body()
    assert messages(response) == ("sort_by_date=true not applied: Exa does not support it",)
    assert "[sort_by_date=true not applied: Exa does not support it]\n[served by: exa]" in render(response, "blocks")


async def test_everything_at_once(exa: FakeExa, keyed: dict[str, str], clock: FakeClock) -> None:
    response = await search(
        keyed,
        clock,
        mode="deep",
        text_chars=2000,
        recency="week",
        recency_hours=12,
        end_published_date="2026-11-30T11:00:00Z",
        category="research paper",
        exclude_domains=["spam.example"],
        sort_by_date=True,
        max_tokens=50,
        num_results=5,
    )
    assert exa.last.json() == {
        "query": Q,
        "numResults": 5,
        "type": "deep",
        "contents": {"text": {"maxCharacters": 2000}, "highlights": True},
        "category": "publication",
        "excludeDomains": ["spam.example"],
        "startPublishedDate": "2026-11-30T00:00:00.000Z",
        "endPublishedDate": "2026-11-30T11:00:00.000Z",
        "outputSchema": ANSWER_SCHEMA,
    }
    assert messages(response) == (
        'category="research paper" searched as category="publication": it was renamed',
        'recency="week" not applied: recency_hours takes precedence',
        "max_tokens=50 not applied: Exa does not support it",
        "sort_by_date=true not applied: Exa does not support it",
    )
    assert response.answer is not None


# -- the keyless MCP path ------------------------------------------------------------------------


async def test_mcp_path_sends_the_count_and_discloses_the_rest(
    exa: FakeExa, keyless: dict[str, str], clock: FakeClock
) -> None:
    results = honour_domains(exa_search_body(Q, 3, text=True), ["a.example"])["results"]  # as if by chance
    exa.enqueue(mcp_reply(1, mcp_result(mcp_listing(results))))
    response = await search(
        keyless,
        clock,
        limit=3,
        mode="deep",
        text_chars=500,
        recency="day",
        recency_days=2,
        category="news",
        include_domains=["a.example"],
        summary=True,
        sort_by_date=True,
    )
    assert exa.last.json()["params"] == {"name": "web_search_exa", "arguments": {"query": Q, "numResults": 3}}
    assert messages(response) == (
        'recency="day" not applied: Exa does not support it',
        f'mode="deep" {KEYLESS_MCP}',
        f"recency_days=2 {KEYLESS_MCP}",
        f'category="news" {KEYLESS_MCP}',
        f'include_domains=["a.example"] {KEYLESS_MCP}',
        f"summary=true {KEYLESS_MCP}",
        "sort_by_date=true not applied: Exa does not support it",
    )
    assert response.answer is None and len(response.sources) == 3


async def test_mcp_results_outside_the_included_domains_are_removed(
    exa: FakeExa, keyless: dict[str, str], clock: FakeClock
) -> None:
    results = exa_search_body(Q, 3, text=True)["results"]
    results[1]["url"] = "https://a.example/kept"
    exa.enqueue(mcp_reply(1, mcp_result(mcp_listing(results))))
    response = await search(keyless, clock, include_domains=["a.example"])
    assert [s.url for s in response.sources] == ["https://a.example/kept"]
    assert messages(response)[-1] == 'include_domains=["a.example"] enforced: 2 results outside these hosts removed'
    assert response.notices[-1].kind == "dropped"


async def test_mcp_path_honours_mode_auto_silently(exa: FakeExa, keyless: dict[str, str], clock: FakeClock) -> None:
    response = await search(keyless, clock, mode="auto", text_chars=300)
    assert exa.last.json()["params"]["arguments"] == {"query": Q}
    assert messages(response) == ()


# -- the CLI ---------------------------------------------------------------------------------------


def test_cli_deep_mode_in_blocks(exa: FakeExa, keyed: dict[str, str]) -> None:
    proc = run_cli(
        ["search", "rust", "async", "--provider", "exa", "--mode", "deep", "--limit", "2", "--format", "blocks"], keyed
    )
    assert proc.returncode == 0, proc.stderr
    sent = exa.last.json()
    assert (sent["type"], sent["numResults"], sent["outputSchema"]) == ("deep", 2, ANSWER_SCHEMA)
    assert proc.stdout.startswith(
        "# Web search: rust async\n[served by: exa]\n\n## Synthesized answer\n"
        "Rust async is covered by 2 sources; the first two agree.\nGrounding: https://www.example1.com/"
    )
