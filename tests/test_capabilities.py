"""The capability table: generated from the providers' declarations, committed as docs/parameters.md,
and true: every parameter a provider does not honour natively yields a notice."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock, key_env, make_client
from websearch import SearchParams
from websearch._core._notices import not_supported
from websearch._engine._capabilities import PARAMETERS, capability_table, main, render_markdown
from websearch.providers import PROVIDERS, SEARCH_PROVIDER_ORDER
from websearch.testing import FAKES

DOC = Path(__file__).parent.parent / "docs" / "parameters.md"
KEY = "test-key-capabilities-0123456789"

#: A valid value for every parameter (a news search: no category drops anything).
EVERY: dict[str, Any] = {
    "recency": "week",
    "limit": 4,
    "num_search_results": 5,
    "max_tokens": 600,
    "temperature": 0.3,
    "mode": "fast",
    "text_chars": 1500,
    "recency_days": 3,
    "recency_hours": 12,
    "start_published_date": "2026-11-01",
    "end_published_date": "2026-11-29",
    "category": "news",
    "include_domains": ["example.com"],
    "exclude_domains": ["spam.example.org"],
    "summary": True,
    "sort_by_date": True,
    "country": "DE",
    "language": "de",
    "safesearch": "strict",
}
#: Values a provider honours only approximately, where EVERY's value maps exactly (Tavily maps
#: mode=fast and category=news natively but approximates deep modes and has no pdf topic).
APPROXIMATED: dict[tuple[str, str], Any] = {
    ("tavily", "mode"): "deep",
    ("tavily", "category"): "pdf",
    ("keenable", "mode"): "deep",  # fast is its realtime mode; the deep modes are its default pro
    ("keenable_public", "mode"): "deep",
}
TABLE = capability_table()
NOT_NATIVE = [(p, param, s) for p, param, s in TABLE if s != "native"]
FAKE_OPTIONS: dict[str, dict[str, Any]] = {"gemini": {"api_keys": {KEY}}}


def configure(provider: str, config_dir: Path, fake_env: dict[str, str]) -> dict[str, str]:
    """The provider's key, configured as its registry row says, and its fake."""
    return {**key_env(provider, config_dir, KEY), **fake_env}


async def search(provider: str, config_dir: Path, **params: Any) -> tuple[str, ...]:
    """The notices of one explicit search's attempt. A provider that ignores `include_domains`
    may be left with nothing once websearch removes the results off those hosts: that attempt
    fails as no results, and still says what it did with every parameter."""
    with FAKES[provider](**FAKE_OPTIONS.get(provider, {})) as fake:
        env = configure(provider, config_dir, fake.env)
        async with make_client(env=env, clock=FakeClock()) as ws:
            response = await ws.asearch("rust async runtime", provider=provider, **params)
    attempt = response.attempts[0]
    assert attempt.provider == provider
    emptied = attempt.error_kind == "no_results" and "include_domains" in params
    assert response.ok or emptied, response.error
    return tuple(n.message for n in attempt.notices)


def not_applied(provider: str, param: str, value: object) -> str:
    """The chain's notice for a parameter the provider does not support."""
    given = SearchParams("q", **{param: value}).given()[param]  # the normalised value
    return not_supported(param, given, PROVIDERS[provider].label).message


def mentions(notices: tuple[str, ...], param: str) -> bool:
    return any(re.search(rf"(?<!\w){param}(?!\w)", notice) for notice in notices)


# -- the generated page -----------------------------------------------------------------------


def test_the_table_covers_every_provider_and_parameter() -> None:
    assert set(PARAMETERS) == set(EVERY) and "query" not in PARAMETERS
    assert [(p, param) for p, param, _ in TABLE] == [(p, q) for p in SEARCH_PROVIDER_ORDER for q in PARAMETERS]
    assert {s for _, _, s in TABLE} <= {"native", "approximate", "no"}
    assert all(s == "native" for _, param, s in TABLE if param == "text_chars")  # the renderer applies it


def test_docs_parameters_md_is_the_generated_page() -> None:
    assert DOC.read_text(encoding="utf-8") == render_markdown(), (
        "docs/parameters.md is out of date: run `python -m websearch._engine._capabilities docs/parameters.md`"
    )


def test_the_page_shows_each_declaration(tmp_path: Path) -> None:
    page = render_markdown()
    base, rest = page.split("## Richer parameters")
    rich, rest = rest.split("## Query operators")
    _operators, locale = rest.split("## Locale and safe search")
    marks = {"native": "✓", "approximate": "≈", "no": "✗"}
    for provider in SEARCH_PROVIDER_ORDER:
        declared = [marks[s] for p, _, s in TABLE if p == provider]
        cells = [
            line.strip("| ").split(" | ")[1:]
            for part in (base, rich, locale)
            for line in part.splitlines()
            if line.startswith(f"| `{provider}`")
        ]
        assert [cell for table in cells for cell in table] == declared, provider  # base, richer, locale
    assert "| `codex` (OpenAI) |" in page and "| `zai` |" in page
    main([str(tmp_path / "out.md")])
    assert (tmp_path / "out.md").read_bytes() == page.encode()


# -- the declarations are true ----------------------------------------------------------------


@pytest.mark.parametrize("provider", SEARCH_PROVIDER_ORDER)
async def test_every_parameter_set_yields_a_notice_for_each_not_honoured(provider: str, config_dir: Path) -> None:
    notices = await search(provider, config_dir, **EVERY)
    for p, param, support in TABLE:
        if p != provider:
            continue
        chain_notice = not_applied(provider, param, EVERY[param])
        if support == "no":
            assert chain_notice in notices, (param, notices)
        else:
            # native, or approximate (honoured for some values, approximated with a notice for
            # others: each provider's own tests pin which values get which notice)
            assert chain_notice not in notices, (param, notices)


@pytest.mark.parametrize(("provider", "param", "support"), NOT_NATIVE, ids=[f"{p}-{q}" for p, q, _ in NOT_NATIVE])
async def test_each_parameter_alone_yields_its_notice(
    provider: str, param: str, support: str, config_dir: Path
) -> None:
    value = APPROXIMATED.get((provider, param), EVERY[param])
    notices = await search(provider, config_dir, **{param: value})
    if support == "no":
        assert not_applied(provider, param, value) in notices, notices
    else:
        assert mentions(notices, param), notices
