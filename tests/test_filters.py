"""The richer parameters' normalisation (the date ladder, category migrations, caps and clamps), and
the domain filters enforced on whatever a provider returned (a provider of the tests' own)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import pytest

from conftest import NOW, FakeClock, messages
from test_chain import Scripted
from websearch import InvalidSearchParams, SearchParams, SearchResponse, SearchSource, WebSearch
from websearch._core._filters import Filters, on_domains, resolve_filters, source_on_domains
from websearch._providers._base import recency_bucket, with_site_operators
from websearch.providers import PROVIDERS, ProviderResult


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


# -- domain enforcement: the promise kept on what the provider returned -------------------------


@pytest.mark.parametrize(
    ("url", "domains", "on"),
    [
        ("https://python.org/about", ("python.org",), True),
        ("https://docs.python.org/3/", ("python.org",), True),  # a subdomain is on its domain
        ("https://a.b.docs.python.org/", ("python.org",), True),
        ("https://notpython.org/", ("python.org",), False),  # a suffix of the name is not the domain
        ("https://python.org.evil.example/", ("python.org",), False),
        ("https://python.org/", ("docs.python.org",), False),  # the parent is not on a subdomain
        ("https://Docs.PYTHON.org/", ("python.org",), True),  # case, both sides
        ("https://docs.python.org/", ("PYTHON.ORG",), True),
        ("https://www.example.org/", ("example.org",), True),
        ("https://example.org/", ("www.example.org",), True),  # `www.` in a domain is ignored
        ("https://mail.example.org/", ("www.example.org",), True),
        ("https://example.org/", ("https://example.org/docs",), True),  # a scheme and a path, too
        ("https://example.org:8443/x", ("example.org",), True),  # the URL's port names no other host
        ("https://user:pw@example.org/", ("example.org",), True),
        ("https://example.org/", ("other.example", "example.org"), True),  # any of the list
        ("https://example.org/", ("", "other.example"), False),  # an empty entry matches nothing
        ("https://example.org/", (), False),
        ("not a url", ("example.org",), False),
        ("http://[::1/", ("example.org",), False),  # unparseable: on no domain
        ("/relative/path", ("example.org",), False),
    ],
)
def test_on_domains(url: str, domains: tuple[str, ...], on: bool) -> None:
    assert on_domains(url, domains) is on


def test_a_domain_with_a_port_names_its_host() -> None:
    # A domain given as a URL with a port is searched as `host:port` (see above); enforced as
    # that, it matched no result: include_domains removed every result, exclude_domains none.
    (spam,) = resolve_filters(SearchParams("q", exclude_domains=["http://spam.example:8080/x"]), NOW)[0].exclude_domains
    assert spam == "spam.example:8080"
    assert on_domains("http://spam.example:8080/page", (spam,))
    assert on_domains("https://spam.example/page", (spam,))  # a domain filter is about hosts
    assert on_domains("https://www.spam.example/", ("spam.example:",))
    assert not on_domains("https://other.example:8080/", (spam,))


def test_a_host_written_with_its_final_dot_is_the_same_host() -> None:
    # `example.org.` is the fully qualified spelling of `example.org`: it slipped past exclusion.
    assert on_domains("https://spam.example./x", ("spam.example",))
    assert on_domains("https://a.spam.example./x", ("spam.example.",))
    assert on_domains("https://spam.example/x", ("spam.example.",))


def test_a_source_whose_title_is_a_bare_host_is_on_that_host() -> None:
    # Gemini's grounding links redirect through its own host; the title names the page's host.
    redirect = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC"
    assert source_on_domains(SearchSource("uefa.com", redirect), ("uefa.com",))
    assert source_on_domains(SearchSource(" WWW.UEFA.com ", redirect), ("uefa.com",))
    assert not source_on_domains(SearchSource("UEFA news about uefa.com", redirect), ("uefa.com",))
    assert not source_on_domains(SearchSource("fifa.com", redirect), ("uefa.com",))
    assert source_on_domains(SearchSource("anything", "https://uefa.com/x"), ("uefa.com",))


class Filtering(Scripted):
    """A provider that says it filters domains itself, and returns what it likes anyway."""

    supports: ClassVar[dict[str, str]] = {"limit": "native", "include_domains": "native", "exclude_domains": "native"}


def sources(*urls: str) -> ProviderResult:
    return ProviderResult(sources=tuple(SearchSource(f"t{i}", url) for i, url in enumerate(urls)))


URLS = (
    "https://python.org/a",
    "https://docs.python.org/b",
    "https://example.org/c",
    "https://www.pypi.org/d",
    "https://spam.python.org/e",
)


async def search_with(config_dir: Path, result: ProviderResult, **params: Any) -> tuple[SearchResponse, Filtering]:
    """One search of a client whose only provider is a `Filtering` one returning `result`."""
    brave = Filtering(PROVIDERS["brave"], result)
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), "BRAVE_API_KEY": "b" * 20}
    async with WebSearch(engine=False, env=env, clock=FakeClock(), providers=[brave]) as ws:
        return await ws.asearch("q", **params), brave


async def test_included_domains_are_enforced_on_the_answer(config_dir: Path) -> None:
    response, _ = await search_with(config_dir, sources(*URLS), include_domains=["python.org"])
    assert [s.url for s in response.sources] == [URLS[0], URLS[1], URLS[4]]
    assert messages(response) == ('include_domains=["python.org"] enforced: 2 results outside these hosts removed',)


async def test_excluded_domains_are_enforced_on_the_answer(config_dir: Path) -> None:
    response, _ = await search_with(config_dir, sources(*URLS), exclude_domains=["https://Docs.Python.org/x"])
    assert [s.url for s in response.sources] == [URLS[0], URLS[2], URLS[3], URLS[4]]
    assert messages(response)[-1] == (  # the list as the caller gave it
        'exclude_domains=["https://Docs.Python.org/x"] enforced: 1 result on these hosts removed'
    )


async def test_exclusion_wins_over_inclusion(config_dir: Path) -> None:
    # A host both included (as a subdomain of one) and excluded is out.
    response, _ = await search_with(
        config_dir, sources(*URLS), include_domains=["python.org", "pypi.org"], exclude_domains=["spam.python.org"]
    )
    assert [s.url for s in response.sources] == [URLS[0], URLS[1], URLS[3]]
    assert messages(response) == (
        'include_domains=["python.org", "pypi.org"] enforced: 1 result outside these hosts removed',
        'exclude_domains=["spam.python.org"] enforced: 1 result on these hosts removed',
    )


async def test_nothing_to_remove_says_nothing(config_dir: Path) -> None:
    response, _ = await search_with(
        config_dir, sources(URLS[0], URLS[1]), include_domains=["python.org"], exclude_domains=["pypi.org"]
    )
    assert len(response.sources) == 2 and messages(response) == ()


async def test_a_search_left_with_nothing_fails_as_no_results(config_dir: Path) -> None:
    # Every source off the included hosts: nothing renderable is left, so the attempt fails as
    # "no results" (the chain goes on to the next provider, when there is one) with its notice.
    response, brave = await search_with(config_dir, sources(*URLS), include_domains=["nowhere.example"])
    assert not response.ok and response.sources == () and len(brave.calls) == 1
    (attempt,) = response.attempts
    assert (attempt.error_kind, attempt.status) == ("no_results", 204)
    assert [n.message for n in attempt.notices] == [
        'include_domains=["nowhere.example"] enforced: 5 results outside these hosts removed'
    ]


async def test_an_answer_left_without_sources_is_still_served(config_dir: Path) -> None:
    # An answer engine's text stays; only its sources off the hosts go.
    result = ProviderResult(answer="It is 42.", sources=sources(*URLS).sources)
    response, _ = await search_with(config_dir, result, exclude_domains=["python.org", "example.org", "pypi.org"])
    assert response.ok and response.answer == "It is 42." and response.sources == ()
    assert messages(response) == (
        'exclude_domains=["python.org", "example.org", "pypi.org"] enforced: 5 results on these hosts removed',
    )


async def test_a_redirect_source_is_kept_by_its_title(config_dir: Path) -> None:
    redirect = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC"
    result = ProviderResult(sources=(SearchSource("python.org", redirect), SearchSource("pypi.org", redirect + "2")))
    response, _ = await search_with(config_dir, result, include_domains=["python.org"])
    assert [s.title for s in response.sources] == ["python.org"]
