"""Tavily's mapping of the richer parameters (mcp-web_search-tool.md): the exact request body for
each mode, each rung of the date ladder, each category, the domain lists, and every notice."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import TAVILY_KEY, FakeClock, messages, search_once
from websearch import SearchResponse, render
from websearch.testing import Reply
from websearch.testing.tavily import FakeTavily, tavily_results_body

KEY = TAVILY_KEY
DOMAINS = [f"site{i}.example.org" for i in range(1, 26)]
DAYS = "applied as whole days ({}): Tavily's date filters take dates only"


async def search(env: dict[str, str], clock: FakeClock, query: str = "bun release", **kwargs: Any) -> SearchResponse:
    return await search_once("tavily", env, query, clock, **kwargs)


def body(**extra: Any) -> dict[str, Any]:
    """The request body: web_search.md's fields, then whatever the richer parameters add."""
    base: dict[str, Any] = {
        "query": "bun release",
        "search_depth": "basic",
        "max_results": 5,
        "include_answer": "advanced",
        "include_raw_content": False,
    }
    return {**base, **extra}


def assert_in_header(response: SearchResponse) -> None:
    """Every notice is a `[...]` line of the blocks header, above the `[served by: ...]` line."""
    lines = render(response, "blocks").splitlines()
    served = next(i for i, line in enumerate(lines) if line.startswith("[served by: "))
    assert lines[1:served] == [f"[{n}]" for n in messages(response)]


# -- mode -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "depth", "notices"),
    [
        ("auto", "basic", ()),
        ("fast", "fast", ()),
        ("instant", "ultra-fast", ()),
        (
            "deep-lite",
            "advanced",
            ('mode="deep-lite" applied as search_depth=advanced: Tavily has no deep-research mode',),
        ),
        (
            "deep",
            "advanced",
            ('mode="deep" applied as search_depth=advanced: Tavily has no deep-research mode',),
        ),
        (
            "deep-reasoning",
            "advanced",
            ('mode="deep-reasoning" applied as search_depth=advanced: Tavily has no deep-research mode',),
        ),
        ("neural", "basic", ('mode="neural" searched as mode="auto": the legacy search types are gone',)),
        ("keyword", "basic", ('mode="keyword" searched as mode="auto": the legacy search types are gone',)),
    ],
)
async def test_mode_is_search_depth(
    tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock, mode: str, depth: str, notices: tuple[str, ...]
) -> None:
    response = await search(tenv, clock, mode=mode)
    assert tavily.last.json() == body(search_depth=depth)
    assert list(tavily.last.json()) == list(body())  # the same fields, in the same order
    assert response.ok and messages(response) == notices
    assert_in_header(response)


# -- the date ladder --------------------------------------------------------------------------

LADDER = [
    ({"start_published_date": "2026-11-01"}, {"start_date": "2026-11-01"}, ()),
    (
        {"start_published_date": "2026-11-01", "end_published_date": "2026-11-20"},
        {"start_date": "2026-11-01", "end_date": "2026-11-20"},
        (),
    ),
    (
        {"start_published_date": "2026-11-20T08:30:00Z"},
        {"start_date": "2026-11-20"},
        ('start_published_date="2026-11-20T08:30:00Z" ' + DAYS.format("start_date=2026-11-20"),),
    ),
    (
        {"start_published_date": "2026-11-20T23:30:00-05:00"},
        {"start_date": "2026-11-21"},  # UTC day
        ('start_published_date="2026-11-20T23:30:00-05:00" ' + DAYS.format("start_date=2026-11-21"),),
    ),
    (
        {"recency_hours": 6},
        {"start_date": "2026-11-30"},
        ("recency_hours=6 " + DAYS.format("start_date=2026-11-30"),),
    ),
    (
        {"recency_hours": "36"},
        {"start_date": "2026-11-29"},
        ('recency_hours="36" ' + DAYS.format("start_date=2026-11-29"),),
    ),
    ({"recency_days": 7}, {"start_date": "2026-11-23"}, ()),
    (
        {"recency_days": 30, "recency": "year"},
        {"start_date": "2026-10-31"},
        ('recency="year" not applied: recency_days takes precedence',),
    ),
    (
        {"start_published_date": "yesterday", "recency_days": 3},
        {"start_date": "2026-11-27"},
        ('start_published_date="yesterday" dropped: it is not an ISO date or timestamp',),
    ),
    (
        {"recency_hours": -2, "recency_days": 2},
        {"start_date": "2026-11-28"},
        ("recency_hours=-2 dropped: it is not a positive number",),
    ),
    (
        {"start_published_date": "2026-11-01", "recency_hours": 6, "recency_days": 3, "recency": "week"},
        {"start_date": "2026-11-01"},
        (
            "recency_hours=6 not applied: start_published_date takes precedence",
            "recency_days=3 not applied: start_published_date takes precedence",
            'recency="week" not applied: start_published_date takes precedence',
        ),
    ),
    (
        {"start_published_date": "2026-11-20", "end_published_date": "2026-11-10"},
        {"start_date": "2026-11-20"},
        ('end_published_date="2026-11-10" dropped: it is before the start',),
    ),
    ({"end_published_date": "2026-11-20"}, {"end_date": "2026-11-20"}, ()),
    (
        {"end_published_date": "2026-11-29T06:00:00Z", "recency": "week"},
        {"start_date": "2026-11-23", "end_date": "2026-11-29"},
        (
            'recency="week" applied as start_date=2026-11-23: with end_published_date Tavily needs a date range',
            'end_published_date="2026-11-29T06:00:00Z" ' + DAYS.format("end_date=2026-11-29"),
        ),
    ),
    (
        {"end_published_date": "not a date", "recency": "month"},
        {"time_range": "month"},
        ('end_published_date="not a date" dropped: it is not an ISO date or timestamp',),
    ),
]


@pytest.mark.parametrize(("kwargs", "fields", "notices"), LADDER)
async def test_date_ladder(
    tavily: FakeTavily,
    tenv: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, Any],
    fields: dict[str, str],
    notices: tuple[str, ...],
) -> None:
    response = await search(tenv, clock, **kwargs)
    assert tavily.last.json() == body(**fields)
    assert len(tavily.requests) == 1
    assert response.ok and messages(response) == notices
    assert_in_header(response)


@pytest.mark.parametrize(
    "kwargs", [{"start_published_date": "2026-11-01", "recency": "day"}, {"end_published_date": "2026-11-20"}]
)
async def test_explicit_dates_are_never_retried_without(
    tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock, kwargs: dict[str, Any]
) -> None:
    """The empty-result retry drops `time_range` only; a date range the caller set is kept."""
    tavily.enqueue(Reply(200, tavily_results_body("bun release", 0)))
    response = await search(tenv, clock, **kwargs)
    assert len(tavily.requests) == 1 and "time_range" not in tavily.last.json()
    assert response.error == "Tavily returned no renderable search content."


# -- category ---------------------------------------------------------------------------------

NOT_A_TOPIC = "not applied: Tavily does not support it (its topics are news and finance)"
DEPRECATED = "applied as given: it is deprecated and may stop working"
CATEGORIES = [
    ("news", {"topic": "news"}, ()),
    ("News", {"topic": "news"}, ()),
    ("financial report", {"topic": "finance"}, ()),
    (
        "research paper",
        {},
        (
            'category="research paper" searched as category="publication": it was renamed',
            f'category="research paper" {NOT_A_TOPIC}',
        ),
    ),
    ("tweet", {}, ('category="tweet" dropped: it is no longer supported; the search is unscoped',)),
    ("github", {}, (f'category="github" {DEPRECATED}', f'category="github" {NOT_A_TOPIC}')),
    ("pdf", {}, (f'category="pdf" {DEPRECATED}', f'category="pdf" {NOT_A_TOPIC}')),
    ("personal site", {}, (f'category="personal site" {NOT_A_TOPIC}',)),
    ("recipes", {}, (f'category="recipes" {NOT_A_TOPIC}',)),
]


@pytest.mark.parametrize(("category", "fields", "notices"), CATEGORIES)
async def test_category_is_topic_where_tavily_has_one(
    tavily: FakeTavily,
    tenv: dict[str, str],
    clock: FakeClock,
    category: str,
    fields: dict[str, str],
    notices: tuple[str, ...],
) -> None:
    response = await search(tenv, clock, category=category)
    assert tavily.last.json() == body(**fields)
    assert response.ok and messages(response) == notices
    assert_in_header(response)


async def test_news_results_carry_dates(tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(tenv, clock, category="news", recency="week")
    assert tavily.last.json() == body(topic="news", time_range="week")
    assert all(s.published_date for s in response.sources)


@pytest.mark.parametrize("category", ["company", "people"])
async def test_entity_categories_keep_dates_and_exclusions(
    tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock, category: str
) -> None:
    response = await search(
        tenv, clock, category=category, recency_days=7, exclude_domains=["x.com"], include_domains=["y.com"]
    )
    # Exa's rule (no dates, no excludeDomains with company or people) cost Tavily both.
    assert tavily.last.json() == body(include_domains=["y.com"], exclude_domains=["x.com"], start_date="2026-11-23")
    assert messages(response)[-1] == f'category="{category}" {NOT_A_TOPIC}'
    assert not [m for m in messages(response) if "dropped" in m]


# -- domains, and what Tavily does not support -------------------------------------------------


async def test_domain_lists_are_native(tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(tenv, clock, include_domains=["bun.com", "github.com"], exclude_domains="reddit.com")
    assert tavily.last.json() == body(include_domains=["bun.com", "github.com"], exclude_domains=["reddit.com"])
    assert messages(response) == ()
    assert {s.url.split("/")[2] for s in response.sources} == {"bun.com", "github.com"}


async def test_domain_lists_over_twenty_are_capped(tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(tenv, clock, include_domains=DOMAINS, exclude_domains=DOMAINS[::-1])
    assert tavily.last.json() == body(include_domains=DOMAINS[:20], exclude_domains=DOMAINS[::-1][:20])
    assert messages(response) == (
        f"exclude_domains={json.dumps(DOMAINS[::-1])} clamped to its first 20 entries: at most 20 are used",
        f"include_domains={json.dumps(DOMAINS)} clamped to its first 20 entries: at most 20 are used",
    )
    assert_in_header(response)


async def test_summary_and_sort_are_not_supported(tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(tenv, clock, summary=True, sort_by_date=True, text_chars=5000)
    assert tavily.last.json() == body()  # text_chars is the renderer's; Tavily's content stays a snippet
    assert messages(response) == (
        "summary=true not applied: Tavily does not support it",
        "sort_by_date=true not applied: Tavily does not support it",
    )


async def test_false_switches_and_empty_lists_are_not_given(
    tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock
) -> None:
    response = await search(tenv, clock, summary=False, sort_by_date=False, include_domains=[], exclude_domains=())
    assert tavily.last.json() == body()
    assert messages(response) == ()


async def test_every_parameter_at_once(tavily: FakeTavily, tenv: dict[str, str], clock: FakeClock) -> None:
    response = await search(
        tenv,
        clock,
        recency="month",
        limit=3,
        num_search_results=4,
        max_tokens=100,
        temperature=0.5,
        mode="deep",
        text_chars=100,
        recency_days=3,
        recency_hours=12,
        start_published_date="2026-11-02T10:00:00Z",
        end_published_date="2026-11-28",
        category="news",
        include_domains=DOMAINS,
        exclude_domains=["spam.example"],
        summary=True,
        sort_by_date=True,
    )
    assert tavily.last.json() == body(
        search_depth="advanced",
        max_results=4,
        topic="news",
        start_date="2026-11-02",
        end_date="2026-11-28",
        include_domains=DOMAINS[:20],
        exclude_domains=["spam.example"],
    )
    assert messages(response) == (
        "text_chars=100 clamped to 200: allowed 200-8000",
        "recency_hours=12 not applied: start_published_date takes precedence",
        "recency_days=3 not applied: start_published_date takes precedence",
        f"include_domains={json.dumps(DOMAINS)} clamped to its first 20 entries: at most 20 are used",
        "limit=3 not applied: num_search_results=4 takes precedence",
        'mode="deep" applied as search_depth=advanced: Tavily has no deep-research mode',
        'recency="month" not applied: start_published_date takes precedence',
        'start_published_date="2026-11-02T10:00:00Z" ' + DAYS.format("start_date=2026-11-02"),
        "max_tokens=100 not applied: Tavily does not support it",
        "temperature=0.5 not applied: Tavily does not support it",
        "summary=true not applied: Tavily does not support it",
        "sort_by_date=true not applied: Tavily does not support it",
    )
    assert_in_header(response)
