"""The richer parameters' normalisation: the date ladder, category migrations, caps and clamps."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from conftest import NOW
from websearch import InvalidSearchParams, SearchParams
from websearch._filters import Filters, resolve_filters
from websearch._providers._base import recency_bucket, with_site_operators


def resolve(**kw: object) -> tuple[Filters, list[str]]:
    """The filters and the notices' texts."""
    filters, notices = resolve_filters(SearchParams("q", **kw), NOW)  # type: ignore[arg-type]
    return filters, [n.message for n in notices]


def test_nothing_given_is_nothing_resolved() -> None:
    assert resolve() == (Filters(), [])


def test_ladder_explicit_start_wins_and_lower_rungs_are_reported() -> None:
    f, notices = resolve(start_published_date="2026-01-15", recency_hours=6, recency_days=3)
    assert (f.start, f.start_source, f.start_has_time) == (
        datetime(2026, 1, 15, tzinfo=UTC),
        "start_published_date",
        False,
    )
    assert notices == [
        "recency_hours=6 not applied: start_published_date takes precedence",
        "recency_days=3 not applied: start_published_date takes precedence",
    ]


def test_ladder_hours_then_days() -> None:
    f, notices = resolve(recency_hours=6, recency_days=3)
    assert (f.start, f.start_source, f.start_has_time) == (NOW - timedelta(hours=6), "recency_hours", True)
    assert notices == ["recency_days=3 not applied: recency_hours takes precedence"]
    f, notices = resolve(recency_days=3)
    assert (f.start, f.start_source, notices) == (NOW - timedelta(days=3), "recency_days", [])


def test_invalid_rungs_fall_through_with_notices_never_errors() -> None:
    f, notices = resolve(start_published_date="last tuesday", recency_hours=-2, recency_days="2")
    assert (f.start, f.start_source) == (NOW - timedelta(days=2), "recency_days")
    assert notices == [
        'start_published_date="last tuesday" dropped: it is not an ISO date or timestamp',
        "recency_hours=-2 dropped: it is not a positive number",
    ]
    f, notices = resolve(recency_days=True, end_published_date="2026-13-45")
    assert (f.start, f.end) == (None, None)
    assert len(notices) == 2


def test_timestamps_and_reversed_bounds() -> None:
    f, notices = resolve(start_published_date="2026-03-01T10:30:00Z", end_published_date="2026-04-01")
    assert (f.start, f.start_has_time, f.end, f.end_has_time) == (
        datetime(2026, 3, 1, 10, 30, tzinfo=UTC),
        True,
        datetime(2026, 4, 1, tzinfo=UTC),
        False,
    )
    assert notices == []
    f, notices = resolve(start_published_date="2026-05-01", end_published_date="2026-04-01")
    assert (f.start, f.end) == (datetime(2026, 5, 1, tzinfo=UTC), None)
    assert notices == ['end_published_date="2026-04-01" dropped: it is before the start']


@pytest.mark.parametrize(
    ("given", "category", "notice"),
    [
        (
            "research paper",
            "publication",
            'category="research paper" searched as category="publication": it was renamed',
        ),
        ("tweet", None, 'category="tweet" dropped: it is no longer supported; the search is unscoped'),
        ("pdf", "pdf", 'category="pdf" applied as given: it is deprecated and may stop working'),
        ("github", "github", 'category="github" applied as given: it is deprecated and may stop working'),
        ("news", "news", None),
        ("Financial Report", "financial report", None),
        ("Some Free String", "Some Free String", None),
    ],
)
def test_category_migrations(given: str, category: str | None, notice: str | None) -> None:
    f, notices = resolve(category=given)
    assert f.category == category
    assert notices == ([notice] if notice else [])


@pytest.mark.parametrize("category", ["company", "people"])
def test_entity_categories_keep_dates_and_excluded_domains_until_exa_serves(category: str) -> None:
    # That they take neither is Exa's rule (its plan applies it): a fallback lost both.
    f, notices = resolve(category=category, recency_days=7, exclude_domains=["x.com"], include_domains=["linkedin.com"])
    assert (f.start is not None, f.exclude_domains, f.include_domains) == (True, ("x.com",), ("linkedin.com",))
    assert notices == []


def test_a_domain_given_as_a_url_is_its_host() -> None:
    # Sent as given, it reached Exa as a domain no page is on and Brave as `site:https://...`.
    f, notices = resolve(include_domains=["https://docs.python.org/3/library/", "example.org/blog"])
    assert f.include_domains == ("docs.python.org", "example.org/blog")  # no scheme: left as it is
    assert notices == [
        'include_domains=["https://docs.python.org/3/library/", "example.org/blog"] searched as '
        'include_domains=["docs.python.org", "example.org/blog"]: a domain filter takes host names'
    ]
    f, notices = resolve(exclude_domains=["http://user:pw@spam.example:8080/x?y"])
    assert (f.exclude_domains, len(notices)) == (("spam.example:8080",), 1)
    assert resolve(include_domains=["a.org"])[1] == []


def test_domain_lists_are_capped_at_twenty() -> None:
    many = [f"d{i}.example" for i in range(25)]
    f, notices = resolve(include_domains=many, exclude_domains=many[:3])
    assert f.include_domains == tuple(many[:20])
    assert f.exclude_domains == tuple(many[:3])
    assert notices == [f"include_domains={json.dumps(many)} clamped to its first 20 entries: at most 20 are used"]


@pytest.mark.parametrize(
    ("given", "used", "notices"),
    [
        (1200, 1200, []),
        (50, 200, ["text_chars=50 clamped to 200: allowed 200-8000"]),
        (99999, 8000, ["text_chars=99999 clamped to 8000: allowed 200-8000"]),
    ],
)
def test_text_chars_clamp(given: int, used: int, notices: list[str]) -> None:
    assert resolve(text_chars=given)[0].text_chars == used
    assert resolve(text_chars=given)[1] == notices


def test_modes() -> None:
    assert resolve(mode="keyword") == (
        Filters(mode="auto"),
        ['mode="keyword" searched as mode="auto": the legacy search types are gone'],
    )
    assert resolve(mode="deep-reasoning")[0].mode == "deep-reasoning"
    with pytest.raises(
        InvalidSearchParams, match="mode must be one of: auto, fast, instant, deep-lite, deep, deep-reasoning"
    ):
        SearchParams("q", mode="turbo")


def test_bad_types_are_errors() -> None:
    for bad in ({"include_domains": [1]}, {"summary": "yes"}, {"category": ""}, {"text_chars": 0}):
        with pytest.raises(InvalidSearchParams):
            SearchParams("q", **bad)  # type: ignore[arg-type]


def test_richer_parameter_helpers() -> None:
    assert SearchParams("q", recency="day").rich is False
    assert SearchParams("q", summary=True).rich is True
    assert SearchParams("q", summary=False).given() == {}
    assert with_site_operators("q", ("a.com",), ()) == "q site:a.com"
    assert with_site_operators("q", ("a.com", "b.org"), ("c.net",)) == "q (site:a.com OR site:b.org) -site:c.net"
    assert [recency_bucket(NOW - timedelta(days=d), NOW) for d in (0.5, 3, 20, 200, 400)] == [
        "day",
        "week",
        "month",
        "year",
        None,
    ]


def test_huge_date_values_fall_through_instead_of_failing() -> None:
    f, notices = resolve(recency_days=1e6, recency_hours=1e300)
    assert f.start is None
    assert notices == [
        "recency_hours=1e+300 dropped: it reaches before any date",
        "recency_days=1000000.0 dropped: it reaches before any date",
    ]
    f, notices = resolve(start_published_date="0001-01-01T00:00:00+01:00")
    assert (f.start, len(notices)) == (None, 1)
