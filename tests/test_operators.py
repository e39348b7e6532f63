"""Query operators: the parser, their merge into the filters (and the conflicts with explicit
parameters), what every provider's fake receives, and the lenient pass on the sources."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import NOW, FakeClock, key_env, make_client, messages
from test_chain import Scripted
from websearch import SearchParams, SearchResponse, SearchSource, WebSearch
from websearch._core._dates import parse_date
from websearch._core._filters import on_domains, resolve_filters
from websearch._core._operators import FILTER_OPERATORS, OPERATORS, TEXT_OPERATORS, parse_operators
from websearch._engine._capabilities import operator_table
from websearch._engine._lineup import load_provider
from websearch._providers._base import OPERATOR_FILTERS, honours
from websearch.providers import PROVIDERS, ProviderResult
from websearch.testing import FAKES, DdgResult, FakeDuckDuckGo, FakeTavily

# -- the parser ----------------------------------------------------------------------------------


def kinds(query: str) -> list[tuple[str | None, str]]:
    return [(t.kind, t.value) for t in parse_operators(query).tokens]


def test_every_operator_is_read() -> None:
    query = (
        "site:Docs.Python.org -site:spam.com after:2025-01-01 before:2025-06-30 filetype:PDF ext:txt "
        'intitle:"event loop" inurl:asyncio "exact phrase" -bad a OR b'
    )
    assert kinds(query) == [
        ("site", "docs.python.org"),
        ("-site", "spam.com"),
        ("after", "2025-01-01"),
        ("before", "2025-06-30"),
        ("filetype", "pdf"),
        ("filetype", "txt"),
        ("intitle", "event loop"),
        ("inurl", "asyncio"),
        ("phrase", "exact phrase"),
        ("-term", "bad"),
        (None, "a"),
        ("OR", "OR"),
        (None, "b"),
    ]
    ops = parse_operators(query)
    assert ops.sites == ("docs.python.org",) and ops.not_sites == ("spam.com",)
    assert (ops.after, ops.before) == (date(2025, 1, 1), date(2025, 6, 30))
    assert ops.filetypes == ("pdf", "txt")
    assert ops.words == "exact phrase a b"
    assert ops.kinds == frozenset(OPERATORS)


def test_several_sites_with_or_between_them() -> None:
    ops = parse_operators("site:a.org OR site:b.org asyncio")
    assert ops.sites == ("a.org", "b.org")
    assert ops.words == "asyncio"  # the OR between two sites goes with them
    assert ops.render({"site", "OR"}) == "site:a.org OR site:b.org asyncio"


@pytest.mark.parametrize(
    "query",
    [
        "site: asyncio",
        "site:localhost asyncio",
        "site:https://example.org/docs asyncio",
        "after:2025-13-45 asyncio",
        "before:yesterday asyncio",
        "filetype: asyncio",
        'intitle:"unbalanced asyncio',
        '"unbalanced asyncio',
        "OR asyncio OR",
        "- asyncio",
        "--flag asyncio",
    ],
)
def test_a_malformed_operator_is_plain_text(query: str) -> None:
    ops = parse_operators(query)
    assert not ops.has_filters
    assert ops.render(()) == query  # nothing to take out: the query as written


def test_render_keeps_the_chosen_operators_as_written() -> None:
    ops = parse_operators('site:x.org intitle:"A B" "exact phrase" -bad foo filetype:PDF')
    assert ops.render(TEXT_OPERATORS | {"filetype"}) == '"exact phrase" -bad foo filetype:PDF'
    assert ops.render(TEXT_OPERATORS) == '"exact phrase" -bad foo'
    assert ops.render(OPERATORS) == 'site:x.org intitle:"A B" "exact phrase" -bad foo filetype:PDF'


def test_a_query_of_operators_only_is_never_rendered_empty() -> None:
    assert parse_operators("site:example.org").words == "example.org"
    assert parse_operators("site:example.org filetype:pdf").words == "example.org pdf"


def test_the_last_after_and_the_first_before_win() -> None:
    ops = parse_operators("x after:2024-01-01 after:2025-02-03 before:2025-12-01 before:2025-06-01")
    assert (ops.after, ops.before) == (date(2025, 2, 3), date(2025, 6, 1))


PIECES = st.sampled_from(
    [
        "site:",
        "-site:",
        "after:",
        "before:",
        "filetype:",
        "ext:",
        "intitle:",
        "inurl:",
        '"',
        "-",
        "OR",
        " ",
        "  ",
        "\t",
        "example.org",
        "2025-01-01",
        "2025-13-45",
        "pdf",
        "a",
        "Ünï",
        ":",
        ".",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), st.lists(PIECES, max_size=12).map("".join)))
def test_the_parser_never_raises_and_round_trips(query: str) -> None:
    ops = parse_operators(query)
    assert ops.render(OPERATORS) == query
    assert "".join("".join(t.text.split()) for t in ops.tokens) == "".join(query.split())
    for keep in (frozenset(), TEXT_OPERATORS, FILTER_OPERATORS):
        text = ops.render(keep)
        if query.strip():
            assert text.strip()
        for token in ops.tokens:
            if token.kind in keep and token.kind != "OR":
                assert token.text in text


# -- the merge into the filters -------------------------------------------------------------------


def resolve(query: str, **kw: Any) -> tuple[Any, list[str]]:
    filters, notices = resolve_filters(SearchParams(query, **kw), NOW)
    return filters, [n.message for n in notices]


def test_operators_become_the_filters() -> None:
    f, notices = resolve("site:docs.python.org asyncio -site:spam.com after:2025-01-01 before:2025-06-30")
    assert f.include_domains == ("docs.python.org",) and f.query_sites == ("docs.python.org",)
    assert f.exclude_domains == ("spam.com",) and f.query_excludes == ("spam.com",)
    assert (f.start, f.start_source, f.query_start) == (
        datetime(2025, 1, 1, tzinfo=UTC),
        "start_published_date",
        "after:2025-01-01",
    )
    assert (f.end, f.query_end) == (datetime(2025, 6, 30, tzinfo=UTC), "before:2025-06-30")
    assert f.explicit_include == () and f.explicit_exclude == ()
    assert notices == []


def test_operators_work_without_any_rich_parameter() -> None:
    from conftest import provider_context

    params = SearchParams("site:example.org foo")
    assert not params.rich
    ctx = provider_context(Path("/nonexistent"), {}, FakeClock())
    assert ctx.filters(params).include_domains == ("example.org",)


def test_the_explicit_parameter_wins_a_conflict_with_a_notice() -> None:
    f, notices = resolve(
        "site:b.org after:2025-01-01 before:2025-03-01 x",
        include_domains=["a.org"],
        start_published_date="2024-06-01",
        end_published_date="2024-12-01",
    )
    assert f.include_domains == ("a.org",) and f.query_sites == ()
    assert f.start == datetime(2024, 6, 1, tzinfo=UTC) and f.query_start is None
    assert f.end == datetime(2024, 12, 1, tzinfo=UTC) and f.query_end is None
    assert notices == [
        'query="site:b.org" not applied: include_domains takes precedence',
        'query="after:2025-01-01" not applied: start_published_date takes precedence',
        'query="before:2025-03-01" not applied: end_published_date takes precedence',
    ]


def test_recency_and_excluded_domains_win_too() -> None:
    f, notices = resolve("site:a.org -site:b.org after:2025-01-01 x", recency="week", include_domains=["b.org"])
    assert f.start is None and f.exclude_domains == ()
    assert notices == [
        'query="site:a.org" not applied: include_domains takes precedence',
        'query="-site:b.org" not applied: include_domains takes precedence',
        'query="after:2025-01-01" not applied: recency takes precedence',
    ]
    f, notices = resolve("site:a.org x", exclude_domains=["a.org"])
    assert f.include_domains == () and notices == ['query="site:a.org" not applied: exclude_domains takes precedence']


def test_operators_and_parameters_that_agree_combine() -> None:
    f, notices = resolve("site:a.org -site:spam.a.org before:2026-12-31 x", include_domains=["a.org"], recency_days=30)
    assert f.include_domains == ("a.org",) and f.explicit_include == ("a.org",)  # the caller's: strict
    assert f.exclude_domains == ("spam.a.org",) and f.explicit_exclude == ()
    assert f.start_source == "recency_days" and f.end == datetime(2026, 12, 31, tzinfo=UTC)
    assert notices == []


def test_a_before_earlier_than_the_start_is_dropped() -> None:
    f, notices = resolve("x before:2020-01-01", start_published_date="2024-01-01")
    assert f.end is None
    assert notices == ['query="before:2020-01-01" dropped: it is before the start']


# -- every provider, through its fake ------------------------------------------------------------

QUERY = "site:example.org foo filetype:pdf after:2025-01-01"
#: What the lenient pass reads each constraint as, and the relaxed notice it would give.
CONSTRAINTS = ("site:example.org", "filetype:pdf", "after:2025-01-01")


def sent_text(requests: list[Any]) -> str:
    """Everything the fake received, decoded: query strings, forms and JSON bodies."""
    parts = []
    for request in requests:
        parts.append(unquote(request.path))
        parts += [f"{k}={v}" for k, v in request.query]
        body = request.body.decode(errors="replace")
        try:
            parts.append(json.dumps(json.loads(body), ensure_ascii=False))
        except ValueError:
            parts.append(unquote(body.replace("+", " ")))
    return "\n".join(parts)


def kept_in_text(provider: str) -> frozenset[str]:
    """The operator kinds the provider keeps in its query text (SearXNG: all, as given)."""
    impl = load_provider(provider)
    if provider == "searxng":
        return frozenset(OPERATORS)
    return frozenset(op for op in impl.operators if OPERATOR_FILTERS.get(op) not in impl.supports)


def holds(response: SearchResponse) -> None:
    """Every source meets every constraint, or a relaxed notice says it was lifted."""
    relaxed = {n.value for n in response.notices if n.kind == "relaxed"}
    for source in response.sources:
        assert "site:example.org" in relaxed or on_domains(source.url, ("example.org",)), source.url
        assert "filetype:pdf" in relaxed or source.url.split("?")[0].lower().endswith(".pdf"), source.url
        when = parse_date(source.published_date) if source.published_date else None
        assert "after:2025-01-01" in relaxed or when is None or when.date() >= date(2025, 1, 1), source


@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_every_provider_gets_the_operators_it_honours(provider: str, config_dir: Path) -> None:
    key = "k-" + "7" * 30
    with FAKES[provider](api_keys=[key]) if provider == "gemini" else FAKES[provider]() as fake:
        env = {**key_env(provider, config_dir, key), **fake.env}
        async with make_client(env=env, clock=FakeClock()) as ws:
            response = await ws.asearch(QUERY, provider=provider)
        sent = sent_text(fake.requests)
    assert response.error is None, response.error
    assert response.query == QUERY
    assert "foo" in sent
    kept = kept_in_text(provider)
    assert ("filetype:pdf" in sent) == ("filetype" in kept), sent
    assert ("after:2025-01-01" in sent) == ("after" in kept), sent
    assert sent.count("site:example.org") <= max(1, len(fake.requests)), sent  # never doubled
    supports = load_provider(provider).supports
    if "site" in kept or "include_domains" in supports:
        assert "example.org" in sent  # as a native domain filter, a site: operator or an instruction
    if "site" not in kept and supports.get("include_domains") == "native":
        assert "site:example.org" not in sent, sent  # the provider's own domain filter carries it
    holds(response)
    notices = [n for n in response.notices if n.param in ("include_domains", "start_published_date")]
    assert all(n.value is not None for n in notices), notices  # never `include_domains=null`


async def test_tavily_never_gets_a_query_of_only_site_operators(config_dir: Path) -> None:
    with FakeTavily() as fake:
        env = {**key_env("tavily", config_dir, "tvly-" + "7" * 20), **fake.env}
        async with make_client(env=env, clock=FakeClock()) as ws:
            response = await ws.asearch("site:example.org", provider="tavily")
        body = fake.last.json()
    assert response.error is None
    assert body["query"] == "example.org" and body["include_domains"] == ["example.org"]


async def test_a_malformed_operator_reaches_the_engine_as_text(config_dir: Path) -> None:
    with FakeDuckDuckGo() as fake:
        env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **fake.env}
        async with make_client(env=env, clock=FakeClock()) as ws:
            response = await ws.asearch("foo site: after:2025-13-45", provider="duckduckgo")
        assert fake.last.form()[0] == ("q", "foo site: after:2025-13-45")
    assert response.error is None and response.notices == ()


async def test_the_engine_keeps_what_it_honours_and_the_kit_adds_site_once(config_dir: Path) -> None:
    with FakeDuckDuckGo() as fake:
        env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **fake.env}
        async with make_client(env=env, clock=FakeClock()) as ws:
            await ws.asearch('site:Example.org "exact words" -bad intitle:guide foo', provider="duckduckgo")
        assert fake.last.form()[0] == ("q", '"exact words" -bad intitle:guide foo site:example.org')


# -- the lenient pass ----------------------------------------------------------------------------


class Filtering(Scripted):
    """A provider that returns what the test says, whatever it was asked."""

    supports: ClassVar[dict[str, str]] = {"limit": "native", "include_domains": "native", "exclude_domains": "native"}


def sources(*pairs: tuple[str, str | None]) -> ProviderResult:
    return ProviderResult(sources=tuple(SearchSource(f"title {i}", url, None, d) for i, (url, d) in enumerate(pairs)))


async def search_with(config_dir: Path, result: ProviderResult, query: str, **params: Any) -> SearchResponse:
    brave = Filtering(PROVIDERS["brave"], result)
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), "BRAVE_API_KEY": "b" * 20}
    async with WebSearch(engine=False, env=env, clock=FakeClock(), providers=[brave]) as ws:
        return await ws.asearch(query, **params)


def results() -> ProviderResult:
    """Four sources (a fresh result each time: the chain filters a result in place)."""
    return sources(
        ("https://docs.python.org/3/library/asyncio.pdf", "2025-03-01"),
        ("https://docs.python.org/3/library/asyncio.html", "2024-03-01"),
        ("https://example.org/guide.pdf", None),
        ("https://spam.python.org/x.pdf", "2025-05-01"),
    )


async def test_the_lenient_pass_enforces_each_operator(config_dir: Path) -> None:
    response = await search_with(
        config_dir, results(), "site:python.org -site:spam.python.org filetype:pdf after:2025-01-01 x"
    )
    assert [s.url for s in response.sources] == ["https://docs.python.org/3/library/asyncio.pdf"]
    assert messages(response) == (
        'query="site:python.org" enforced: 1 result outside these hosts removed',
        'query="-site:spam.python.org" enforced: 1 result on this host removed',
        'query="filetype:pdf" enforced: 1 result of other file types removed',
    )


async def test_undated_sources_are_kept_by_the_dates(config_dir: Path) -> None:
    response = await search_with(config_dir, results(), "x after:2025-01-01 before:2025-04-01")
    assert [s.url for s in response.sources] == [
        "https://docs.python.org/3/library/asyncio.pdf",
        "https://example.org/guide.pdf",
    ]


async def test_intitle_and_inurl(config_dir: Path) -> None:
    result = ProviderResult(
        sources=(
            SearchSource("The Event Loop guide", "https://a.org/asyncio/loop"),
            SearchSource("Other", "https://a.org/asyncio/other"),
            SearchSource("event loop, again", "https://a.org/trio"),
        )
    )
    response = await search_with(config_dir, result, 'intitle:"event loop" inurl:asyncio x')
    assert [s.title for s in response.sources] == ["The Event Loop guide"]


async def test_a_constraint_no_result_meets_is_relaxed(config_dir: Path) -> None:
    response = await search_with(config_dir, results(), "site:docs.rust-lang.org filetype:pdf x")
    assert len(response.sources) == 3  # the site: was lifted, the filetype: still held
    relaxed = [n for n in response.notices if n.kind == "relaxed"]
    assert [n.message for n in relaxed] == ["no results matched site:docs.rust-lang.org; the constraint was relaxed"]
    assert (relaxed[0].param, relaxed[0].value) == ("query", "site:docs.rust-lang.org")


async def test_explicit_domains_stay_strict(config_dir: Path) -> None:
    response = await search_with(config_dir, results(), "x", include_domains=["docs.rust-lang.org"])
    assert response.sources == () and response.error is not None  # nothing left: no results, as before
    assert not [n for n in response.notices if n.kind == "relaxed"]


async def test_engine_results_that_break_the_operators_are_filtered(config_dir: Path) -> None:
    results = [
        DdgResult("Guide", "https://example.org/guide.pdf"),
        DdgResult("Page", "https://example.org/page.html"),
    ]
    with FakeDuckDuckGo(results) as fake:
        env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **fake.env}
        async with make_client(env=env, clock=FakeClock()) as ws:
            response = await ws.asearch("site:example.org filetype:pdf guide", provider="duckduckgo")
    assert [s.url for s in response.sources] == ["https://example.org/guide.pdf"]


# -- the declarations and the table --------------------------------------------------------------


def test_honours_refuses_an_unknown_operator() -> None:
    assert honours(native="site", approximate="inurl") == {"site": "native", "inurl": "approximate"}
    with pytest.raises(ValueError, match="unknown query operator"):
        honours(native="allintitle")


def test_the_operator_table_covers_every_provider() -> None:
    rows = operator_table()
    assert {p for p, _, _ in rows} == set(PROVIDERS)
    cells = {(p, op): c for p, op, c in rows}
    assert cells["google", "site"] == "native" and cells["exa", "filetype"] == "post-filtered"
    assert cells["tavily", "site"] == "native"  # its include_domains


async def test_a_coarse_window_names_the_operator_it_widened(config_dir: Path) -> None:
    with FakeDuckDuckGo() as fake:
        env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **fake.env}
        async with make_client(env=env, clock=FakeClock()) as ws:
            response = await ws.asearch("foo after:2026-11-25", provider="duckduckgo")
        assert ("df", "w") in fake.last.form()
    (notice,) = [n for n in response.notices if n.kind == "widened"]
    assert (notice.param, notice.value) == ("query", "after:2026-11-25")
    assert notice.message.startswith('query="after:2026-11-25" widened to df=w (the past week)')


#: Queries whose operators alone meet each provider's harder rules (several sites, an exclusion
#: inside an inclusion, an end without a start, both dates).
AWKWARD = (
    "foo site:a.org site:b.org",
    "foo site:a.org -site:b.a.org",
    "foo before:2025-06-01",
    "foo -site:example.org",
)
FILTER_PARAMS = ("include_domains", "exclude_domains", "start_published_date", "end_published_date")


@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_a_notice_about_an_operator_names_the_operator_never_a_null_parameter(
    provider: str, config_dir: Path
) -> None:
    key = "k-" + "7" * 30
    with FAKES[provider](api_keys=[key]) if provider == "gemini" else FAKES[provider]() as fake:
        env = {**key_env(provider, config_dir, key), **fake.env}
        async with make_client(env=env, clock=FakeClock()) as ws:
            responses = [await ws.asearch(q, provider=provider) for q in AWKWARD]
            if provider == "exa":  # its entity categories drop dates and exclusions
                responses.append(
                    await ws.asearch("foo -site:b.org before:2025-06-01", provider=provider, category="company")
                )
    for response in responses:
        said = [*response.notices, *(n for a in response.attempts for n in a.notices)]
        about = [n for n in said if n.param in FILTER_PARAMS]
        assert all(n.value is not None for n in about), about
        assert all(n.value for n in said if n.param == "query"), said
