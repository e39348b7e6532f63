"""Firecrawl's mapping of the richer parameters: the date ladder, recency and sort in Google's `tbs`,
domains as `site:` operators, categories; and Firecrawl as the fallback tier of the real chain."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import FIRECRAWL_KEY, FakeClock, make_client, messages, run_cli, search_once
from websearch import SearchResponse, render
from websearch.testing import FakeBrave, Reply
from websearch.testing.firecrawl import FakeFirecrawl

KEY = FIRECRAWL_KEY
QUERY = "rust async book"
DOMAINS = [f"site{i}.example.org" for i in range(1, 26)]


async def search(env: dict[str, str], clock: FakeClock, **kwargs: Any) -> SearchResponse:
    return await search_once("firecrawl", env, QUERY, clock, **kwargs)


def body(query: str = QUERY, **extra: Any) -> dict[str, Any]:
    return {"query": query, "limit": 10, "sources": [{"type": "web"}], **extra}


def header(response: SearchResponse) -> list[str]:
    """The blocks header lines between the title and `[served by: ...]`; checks they are the notices."""
    lines = render(response, "blocks").splitlines()
    served = next(i for i, line in enumerate(lines) if line.startswith("[served by: "))
    assert lines[1:served] == [f"[{n}]" for n in messages(response)]
    return lines[: served + 1]


# -- the date ladder and recency in tbs --------------------------------------------------------

WHOLE_DAYS = "applied as whole days ({}): Firecrawl's date range takes dates only"
RANGE = "applied as whole days ({}): with end_published_date Firecrawl needs a date range, which takes dates only"
HOURS = "applied as whole hours ({}): Firecrawl's relative windows count whole hours"
TBS = [
    ({"start_published_date": "2026-11-01"}, "cdr:1,cd_min:11/01/2026", ()),
    (
        {"start_published_date": "2026-11-01", "end_published_date": "2026-11-20"},
        "cdr:1,cd_min:11/01/2026,cd_max:11/20/2026",
        (),
    ),
    (
        {"start_published_date": "2026-11-20T08:30:00Z"},
        "cdr:1,cd_min:11/20/2026",
        ('start_published_date="2026-11-20T08:30:00Z" ' + WHOLE_DAYS.format("cd_min:11/20/2026"),),
    ),
    (
        {"start_published_date": "2026-01-05", "end_published_date": "2026-02-07T18:00:00+01:00"},
        "cdr:1,cd_min:01/05/2026,cd_max:02/07/2026",
        ('end_published_date="2026-02-07T18:00:00+01:00" ' + WHOLE_DAYS.format("cd_max:02/07/2026"),),
    ),
    ({"recency_hours": 1}, "qdr:h", ()),
    ({"recency_hours": 6}, "qdr:h6", ()),
    ({"recency_hours": "48"}, "qdr:h48", ()),
    (
        {"recency_hours": 1.5},
        "qdr:h2",
        ("recency_hours=1.5 " + HOURS.format("qdr:h2"),),
    ),
    (
        {"recency_hours": 0.25},
        "qdr:h",
        ("recency_hours=0.25 " + HOURS.format("qdr:h"),),
    ),
    (
        {"recency_hours": 1e-7},
        "qdr:h",
        ("recency_hours=1e-07 " + HOURS.format("qdr:h"),),
    ),
    ({"recency_days": 1}, "qdr:d", ()),
    ({"recency_days": 7}, "qdr:d7", ()),
    ({"recency_days": "3"}, "qdr:d3", ()),
    ({"recency_days": 0.5}, "qdr:h12", ()),
    (
        {"recency_days": 1.01},
        "qdr:h25",
        ("recency_days=1.01 " + HOURS.format("qdr:h25"),),
    ),
    (
        {"recency_hours": 6, "recency": "year"},
        "qdr:h6",
        ('recency="year" not applied: recency_hours takes precedence',),
    ),
    (
        {"start_published_date": "last tuesday", "recency_hours": 12},
        "qdr:h12",
        ('start_published_date="last tuesday" dropped: it is not an ISO date or timestamp',),
    ),
    ({"recency_hours": 0, "recency_days": 2}, "qdr:d2", ("recency_hours=0 dropped: it is not a positive number",)),
    (
        {"start_published_date": "2026-11-01", "recency_hours": 6, "recency_days": 3, "recency": "week"},
        "cdr:1,cd_min:11/01/2026",
        (
            "recency_hours=6 not applied: start_published_date takes precedence",
            "recency_days=3 not applied: start_published_date takes precedence",
            'recency="week" not applied: start_published_date takes precedence',
        ),
    ),
    (
        {"start_published_date": "2026-11-20", "end_published_date": "2026-11-10"},
        "cdr:1,cd_min:11/20/2026",
        ('end_published_date="2026-11-10" dropped: it is before the start',),
    ),
    ({"end_published_date": "2026-11-20"}, "cdr:1,cd_max:11/20/2026", ()),
    (
        {"end_published_date": "2026-11-29", "recency_days": 7},
        "cdr:1,cd_min:11/23/2026,cd_max:11/29/2026",
        ("recency_days=7 " + RANGE.format("cd_min:11/23/2026"),),
    ),
    (
        {"end_published_date": "2026-11-30", "recency_hours": 30},
        "cdr:1,cd_min:11/29/2026,cd_max:11/30/2026",
        ("recency_hours=30 " + RANGE.format("cd_min:11/29/2026"),),
    ),
    (
        {"end_published_date": "2026-11-29", "recency": "month"},
        "cdr:1,cd_min:10/31/2026,cd_max:11/29/2026",
        ('recency="month" ' + RANGE.format("cd_min:10/31/2026"),),
    ),
]


@pytest.mark.parametrize(("kwargs", "tbs", "notices"), TBS)
async def test_dates_become_tbs(
    fc: FakeFirecrawl,
    fc_env: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, Any],
    tbs: str,
    notices: tuple[str, ...],
) -> None:
    response = await search(fc_env, clock, **kwargs)
    assert fc.last.json() == body(tbs=tbs)
    assert response.ok and messages(response) == notices
    header(response)


# -- sort_by_date: sbd:1, alone or after the date part -----------------------------------------

SORTED = [
    ({}, "sbd:1"),
    ({"recency": "week"}, "qdr:w,sbd:1"),
    ({"recency_hours": 6}, "qdr:h6,sbd:1"),
    ({"recency_days": 1}, "qdr:d,sbd:1"),
    ({"start_published_date": "2026-11-01"}, "cdr:1,cd_min:11/01/2026,sbd:1"),
    (
        {"start_published_date": "2026-11-01", "end_published_date": "2026-11-20"},
        "cdr:1,cd_min:11/01/2026,cd_max:11/20/2026,sbd:1",
    ),
]


@pytest.mark.parametrize(("kwargs", "tbs"), SORTED)
async def test_sort_by_date_is_sbd(
    fc: FakeFirecrawl, fc_env: dict[str, str], clock: FakeClock, kwargs: dict[str, Any], tbs: str
) -> None:
    response = await search(fc_env, clock, sort_by_date=True, **kwargs)
    assert fc.last.json() == body(tbs=tbs)
    assert response.ok and messages(response) == ()


# -- domains and categories --------------------------------------------------------------------

SITE = "include_domains={} applied as site: operators in the query: Firecrawl has no domain filter"
NOT_SITE = "exclude_domains={} applied as -site: operators in the query: Firecrawl has no domain filter"


@pytest.mark.parametrize(
    ("kwargs", "query", "notices"),
    [
        ({"include_domains": ["docs.rs"]}, f"{QUERY} site:docs.rs", (SITE.format('["docs.rs"]'),)),
        (
            {"include_domains": ["docs.rs", "tokio.rs"], "exclude_domains": ["reddit.com"]},
            f"{QUERY} (site:docs.rs OR site:tokio.rs) -site:reddit.com",
            (SITE.format('["docs.rs", "tokio.rs"]'), NOT_SITE.format('["reddit.com"]')),
        ),
        (
            {"exclude_domains": ["a.com", "b.com"]},
            f"{QUERY} -site:a.com -site:b.com",
            (NOT_SITE.format('["a.com", "b.com"]'),),
        ),
    ],
)
async def test_domains_become_site_operators(
    fc: FakeFirecrawl,
    fc_env: dict[str, str],
    clock: FakeClock,
    kwargs: dict[str, Any],
    query: str,
    notices: tuple[str, ...],
) -> None:
    response = await search(fc_env, clock, **kwargs)
    assert fc.last.json() == body(query)
    assert messages(response) == notices
    header(response)


async def test_domain_lists_over_twenty_are_capped(fc: FakeFirecrawl, fc_env: dict[str, str], clock: FakeClock) -> None:
    response = await search(fc_env, clock, include_domains=DOMAINS, exclude_domains=DOMAINS[::-1])
    include = " OR ".join(f"site:{d}" for d in DOMAINS[:20])
    exclude = " ".join(f"-site:{d}" for d in DOMAINS[::-1][:20])
    assert fc.last.json() == body(f"{QUERY} ({include}) {exclude}")
    assert messages(response) == (
        "exclude_domains=" + json.dumps(DOMAINS[::-1]) + " clamped to its first 20 entries: at most 20 are used",
        "include_domains=" + json.dumps(DOMAINS) + " clamped to its first 20 entries: at most 20 are used",
        SITE.format(json.dumps(DOMAINS)),
        NOT_SITE.format(json.dumps(DOMAINS[::-1])),
    )
    header(response)


NO_CATEGORY = (
    "not applied: Firecrawl does not support it (its categories are github, research for publication, and pdf)"
)
CATEGORIES = [
    ("github", "github", ('category="github" applied as given: it is deprecated and may stop working',)),
    ("publication", "research", ()),
    (
        "research paper",
        "research",
        ('category="research paper" searched as category="publication": it was renamed',),
    ),
    ("pdf", "pdf", ('category="pdf" applied as given: it is deprecated and may stop working',)),
    ("news", None, (f'category="news" {NO_CATEGORY}',)),
    ("financial report", None, (f'category="financial report" {NO_CATEGORY}',)),
    ("tweet", None, ('category="tweet" dropped: it is no longer supported; the search is unscoped',)),
    ("company", None, (f'category="company" {NO_CATEGORY}',)),
]


@pytest.mark.parametrize(("category", "sent", "notices"), CATEGORIES)
async def test_category_becomes_categories(
    fc: FakeFirecrawl,
    fc_env: dict[str, str],
    clock: FakeClock,
    category: str,
    sent: str | None,
    notices: tuple[str, ...],
) -> None:
    response = await search(fc_env, clock, category=category)
    assert fc.last.json() == (body(categories=[{"type": sent}]) if sent else body())
    assert response.ok and messages(response) == notices
    header(response)


async def test_people_keep_dates_and_exclusions(fc: FakeFirecrawl, fc_env: dict[str, str], clock: FakeClock) -> None:
    # Exa's rule (no dates, no excludeDomains with company or people) cost Firecrawl both.
    response = await search(
        fc_env,
        clock,
        category="people",
        start_published_date="2026-01-01",
        sort_by_date=True,
        exclude_domains=["x.com"],
    )
    assert fc.last.json() == body(query="rust async book -site:x.com", tbs="cdr:1,cd_min:01/01/2026,sbd:1")
    assert messages(response) == (
        'exclude_domains=["x.com"] applied as -site: operators in the query: Firecrawl has no domain filter',
        f'category="people" {NO_CATEGORY}',
    )


async def test_mode_and_summary_are_not_supported(fc: FakeFirecrawl, fc_env: dict[str, str], clock: FakeClock) -> None:
    response = await search(fc_env, clock, mode="fast", summary=True, text_chars=3000)
    assert fc.last.json() == body()
    assert messages(response) == (
        'mode="fast" not applied: Firecrawl does not support it',
        "summary=true not applied: Firecrawl does not support it",
    )


# -- the fallback tier, through the real chain --------------------------------------------------

BRAVE_KEY = "BSA-7c1e5b2d4a6c8e0f3f9a"
BRAVE_DOWN = "brave unavailable: Brave API error (500): upstream timeout"


@pytest.fixture
def brave() -> Iterator[FakeBrave]:
    with FakeBrave() as fake:
        yield fake


@pytest.fixture
def tier_env(fc_env: dict[str, str], brave: FakeBrave) -> dict[str, str]:
    brave.enqueue(Reply(500, "upstream timeout", content_type="text/plain"))
    return {**fc_env, **brave.env, "BRAVE_API_KEY": BRAVE_KEY}


async def test_failing_explicit_provider_falls_to_firecrawl_with_tbs(
    fc: FakeFirecrawl, brave: FakeBrave, tier_env: dict[str, str], clock: FakeClock
) -> None:
    async with make_client(env=tier_env, clock=clock) as ws:
        response = await ws.asearch(
            QUERY,
            provider="brave",
            recency="week",
            recency_hours=6,
            start_published_date="2026-11-01T09:00:00Z",
            end_published_date="2026-11-20",
            sort_by_date=True,
            include_domains=["docs.rs"],
            category="research paper",
            mode="deep",
            summary=True,
        )
    assert len(brave.requests) == 1 and len(fc.requests) == 1
    assert response.provider == "firecrawl" and response.ok
    assert response.fallback == BRAVE_DOWN
    assert [(a.provider, a.status) for a in response.attempts] == [("brave", 500), ("firecrawl", None)]
    assert fc.last.json() == body(
        f"{QUERY} site:docs.rs",
        categories=[{"type": "research"}],
        tbs="cdr:1,cd_min:11/01/2026,cd_max:11/20/2026,sbd:1",
    )
    assert messages(response) == (
        "recency_hours=6 not applied: start_published_date takes precedence",
        'category="research paper" searched as category="publication": it was renamed',
        'recency="week" not applied: start_published_date takes precedence',
        'start_published_date="2026-11-01T09:00:00Z" ' + WHOLE_DAYS.format("cd_min:11/01/2026"),
        SITE.format('["docs.rs"]'),
        'mode="deep" not applied: Firecrawl does not support it',
        "summary=true not applied: Firecrawl does not support it",
    )
    lines = header(response)
    assert lines[0] == f"# Web search: {QUERY}"
    assert lines[-1] == f"[served by: firecrawl search — {BRAVE_DOWN}]"
    assert all(s.url.startswith("https://") for s in response.sources) and len(response.sources) == 10


async def test_fallback_tier_maps_relative_dates_and_sort(
    fc: FakeFirecrawl, tier_env: dict[str, str], clock: FakeClock
) -> None:
    async with make_client(env=tier_env, clock=clock) as ws:
        response = await ws.asearch(QUERY, provider="brave", recency_days=2, sort_by_date=True, limit=4)
    assert fc.last.json() == {"query": QUERY, "limit": 4, "sources": [{"type": "web"}], "tbs": "qdr:d2,sbd:1"}
    assert response.fallback == BRAVE_DOWN and messages(response) == ()
    assert render(response, "blocks").splitlines()[1] == f"[served by: firecrawl search — {BRAVE_DOWN}]"


async def test_fallback_tier_without_richer_parameters_sends_the_base_request(
    fc: FakeFirecrawl, tier_env: dict[str, str], clock: FakeClock
) -> None:
    async with make_client(env=tier_env, clock=clock) as ws:
        response = await ws.asearch(QUERY, provider="brave", recency="month")
    assert fc.last.json() == body(tbs="qdr:m")
    assert response.fallback == BRAVE_DOWN and messages(response) == ()


def test_fallback_tier_through_the_cli(fc: FakeFirecrawl, tier_env: dict[str, str]) -> None:
    proc = run_cli(
        ["search", QUERY, "--provider", "brave", "--recency-hours", "6", "--sort-by-date", "--format", "blocks"],
        tier_env,
    )
    assert proc.returncode == 0, proc.stderr
    assert fc.last.json() == body(tbs="qdr:h6,sbd:1")
    assert proc.stdout.splitlines()[:2] == [f"# Web search: {QUERY}", f"[served by: firecrawl search — {BRAVE_DOWN}]"]
