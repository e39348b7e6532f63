"""The provider chain's semantics, with scripted providers injected in place of real ones.

Every client here is given exactly the scripted providers (`WebSearch(providers=[...])`), so no
test in this file can reach a real provider, however many the registry holds.
"""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from conftest import FakeClock, messages
from websearch import SearchCitation, SearchParams, SearchResponse, SearchSource, SearchUsage, WebSearch
from websearch._core._notices import partial
from websearch.errors import AuthenticationFailed, RequestRejected, UpstreamUnavailable
from websearch.providers import PROVIDERS, SEARCH_PROVIDER_ORDER, Plan, Provider, ProviderInfo, ProviderResult

Outcome = ProviderResult | BaseException | Callable[[], Any]


class Scripted(Provider):
    """A provider whose search returns or raises what the test says, counting calls."""

    supports: ClassVar[dict[str, str]] = {"limit": "native"}

    def __init__(self, info: ProviderInfo, outcome: Outcome, clock: FakeClock | None = None, cost: float = 0.0):
        self.info = info  # type: ignore[misc]
        self.outcome = outcome
        self.calls: list[SearchParams] = []
        self.clock = clock
        self.cost = cost

    def plan(self, params: SearchParams, ctx: Any) -> Plan:
        return self.new_plan(params, ctx)

    async def search(self, plan: Plan, ctx: Any) -> ProviderResult:
        self.calls.append(plan.params)
        if self.clock is not None:
            await self.clock.sleep(self.cost)
        outcome = self.outcome
        if callable(outcome) and not isinstance(outcome, BaseException):
            outcome = await outcome()
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def answer(provider: str, n: int = 1) -> ProviderResult:
    return ProviderResult(sources=tuple(SearchSource(f"t{i}", f"https://{provider}.example/{i}") for i in range(n)))


class Stage:
    """Scripted stand-ins for registry providers, and clients given exactly those."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.scripts: dict[str, Scripted] = {}

    def __call__(self, provider_id: str, outcome: Outcome, **kw: Any) -> Scripted:
        self.scripts[provider_id] = Scripted(PROVIDERS[provider_id], outcome, **kw)
        return self.scripts[provider_id]

    def client(self, extra_env: dict[str, str] | None = None, **kw: Any) -> WebSearch:
        lineup = [self.scripts[p] for p in SEARCH_PROVIDER_ORDER if p in self.scripts]
        return WebSearch(
            engine=False,
            env={**self.env, **(extra_env or {})},
            clock=kw.pop("clock", FakeClock()),
            providers=lineup,
            **kw,
        )


@pytest.fixture
def script(config_dir: Path) -> Stage:
    return Stage({"WEBSEARCH_CONFIG_DIR": str(config_dir)})


#: The spec's chain order of its eighteen providers (answer engines, search APIs, keyless last).
SPEC_ORDER = (
    "perplexity",
    "gemini",
    "anthropic",
    "codex",
    "xai",
    "zai",
    "exa",
    "tinyfish",
    "jina",
    "kagi",
    "tavily",
    "firecrawl",
    "brave",
    "kimi",
    "parallel",
    "synthetic",
    "searxng",
    "duckduckgo",
)


def test_the_registry_keeps_the_specs_order() -> None:
    assert tuple(PROVIDERS) == SEARCH_PROVIDER_ORDER
    assert tuple(p for p in SEARCH_PROVIDER_ORDER if p in SPEC_ORDER) == SPEC_ORDER
    assert {PROVIDERS[p].tier for p in SPEC_ORDER[:6]} == {"answer"}
    assert {PROVIDERS[p].tier for p in SPEC_ORDER[-2:]} == {"keyless"}


async def test_sequential_fallback_records_every_attempt(script: Stage) -> None:
    clock = FakeClock()
    failure = AuthenticationFailed("brave", "Brave authorization failed (401). Check API key or base URL.", 401)
    brave = script("brave", failure, clock=clock, cost=0.25)
    ddg = script("duckduckgo", answer("duckduckgo"), clock=clock, cost=0.5)
    async with script.client({"BRAVE_API_KEY": "k" * 20}, clock=clock) as ws:
        response = await ws.asearch("q")
    assert response.provider == "duckduckgo"
    assert response.ok
    assert [(a.provider, a.status, a.error, a.error_kind, a.duration_ms) for a in response.attempts] == [
        ("brave", 401, "Brave authorization failed (401). Check API key or base URL.", "auth", 250.0),
        ("duckduckgo", None, None, None, 500.0),
    ]
    assert len(brave.calls) == len(ddg.calls) == 1


async def test_preferred_provider_first(script: Stage, config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text('providers.webSearch = "tavily"\n')
    script("brave", answer("brave"))
    tavily = script("tavily", answer("tavily"))
    async with script.client({"BRAVE_API_KEY": "x" * 12, "TAVILY_API_KEY": "y" * 12}) as ws:
        response = await ws.asearch("q")
    assert response.provider == "tavily"
    assert [a.provider for a in response.attempts] == ["tavily"]
    assert len(tavily.calls) == 1


async def test_auto_ignores_preference(script: Stage, config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text('providers.webSearch = "brave"\n')
    script("brave", answer("brave"))
    script("tavily", answer("tavily"))
    async with script.client({"BRAVE_API_KEY": "x" * 12, "TAVILY_API_KEY": "y" * 12}) as ws:
        assert (await ws.asearch("q")).provider == "brave"
        assert (await ws.asearch("q", provider="auto")).provider == "tavily"


async def test_unavailable_preferred_is_skipped(script: Stage, config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text('providers.webSearch = "brave"\n')
    script("brave", answer("brave"))
    script("duckduckgo", answer("duckduckgo"))
    async with script.client() as ws:  # no BRAVE_API_KEY
        response = await ws.asearch("q")
    assert response.provider == "duckduckgo"
    assert [a.provider for a in response.attempts] == ["duckduckgo"]


async def test_excluded_never_used_even_as_preferred(script: Stage, config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text(
        '[providers]\nwebSearch = "brave"\nwebSearchExclude = ["brave", "duckduckgo"]\n'
    )
    brave = script("brave", answer("brave"))
    ddg = script("duckduckgo", answer("duckduckgo"))
    async with script.client({"BRAVE_API_KEY": "x" * 12}) as ws:
        response = await ws.asearch("q")
    assert response.error == "No web search provider configured."
    assert response.provider == "none"
    assert brave.calls == ddg.calls == []


async def test_exclude_argument_adds_to_settings(script: Stage) -> None:
    script("brave", answer("brave"))
    script("duckduckgo", answer("duckduckgo"))
    async with script.client({"BRAVE_API_KEY": "x" * 12}) as ws:
        assert (await ws.asearch("q", exclude=["brave"])).provider == "duckduckgo"


async def test_explicit_provider_runs_alone_even_if_excluded(script: Stage, config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text('providers.webSearchExclude = ["brave"]\n')
    script("brave", UpstreamUnavailable("brave", "Brave API error (500): boom", 500))
    ddg = script("duckduckgo", answer("duckduckgo"))
    async with script.client({"BRAVE_API_KEY": "x" * 12}) as ws:
        response = await ws.asearch("q", provider="brave")
    assert response.error == "Brave API error (500): boom"  # one provider: no "All ... failed" prefix
    assert response.provider == "brave"
    assert ddg.calls == []


async def test_explicit_unavailable_falls_back_with_a_notice(script: Stage) -> None:
    brave = script("brave", answer("brave"))
    script("duckduckgo", answer("duckduckgo"))
    async with script.client() as ws:
        response = await ws.asearch("q", provider="brave")
    assert response.provider == "duckduckgo"
    assert brave.calls == []
    (notice,) = response.notices
    assert (notice.param, notice.value, notice.kind) == ("provider", "brave", "fallback")
    assert notice.message == (
        "provider brave was requested but is not available (set BRAVE_API_KEY or run `websearch auth set brave`); "
        "used the automatic chain instead"
    )


async def test_unrenderable_response_is_no_results_and_advances(script: Stage) -> None:
    script("brave", ProviderResult(answer="   ", related_questions=(" ",)))
    script("duckduckgo", answer("duckduckgo"))
    async with script.client({"BRAVE_API_KEY": "x" * 12}) as ws:
        response = await ws.asearch("q")
    assert response.provider == "duckduckgo"
    first = response.attempts[0]
    assert (first.status, first.error, first.error_kind) == (
        204,
        "Brave returned no renderable search content.",
        "no_results",
    )


@pytest.mark.parametrize(
    "renderable",
    [
        SearchResponse("x", answer="a"),
        SearchResponse("x", related_questions=("q?",)),
        SearchResponse("x", search_queries=("query",)),
        SearchResponse("x", sources=(SearchSource("t", "u"),)),
    ],
)
def test_renderable_rule(renderable: SearchResponse) -> None:
    assert renderable.has_renderable_content()
    assert not SearchResponse("x", answer=" \n", search_queries=("",)).has_renderable_content()
    assert not ProviderResult(answer=" \n", search_queries=("",)).has_renderable_content()


async def test_all_failed_message_keeps_each_providers_own_words(script: Stage) -> None:
    script(
        "anthropic",
        RequestRejected("anthropic", "Anthropic web search returned 404 (model or endpoint not found).", 404),
    )
    script("zai", AuthenticationFailed("zai", "Z.AI raw auth message", 401))
    script("kagi", RuntimeError("kagi exploded"))
    script("brave", RuntimeError(""))
    script("duckduckgo", UpstreamUnavailable("duckduckgo", "DuckDuckGo HTML error (503)", 503))
    env = {"ANTHROPIC_API_KEY": "a" * 12, "ZAI_API_KEY": "z" * 12, "KAGI_API_KEY": "k" * 12, "BRAVE_API_KEY": "b" * 12}
    async with script.client(env) as ws:
        response = await ws.asearch("q")
    assert response.error == (
        "All web search providers failed: "
        "anthropic: Anthropic web search returned 404 (model or endpoint not found).; "
        "zai: Z.AI raw auth message; "
        "kagi: kagi exploded; "
        "brave: Unknown error from Brave; "
        "duckduckgo: DuckDuckGo HTML error (503)"
    )
    assert response.provider == "duckduckgo"
    assert [(a.provider, a.error_kind) for a in response.attempts] == [
        ("anthropic", "rejected"),
        ("zai", "auth"),
        ("kagi", "internal"),
        ("brave", "internal"),
        ("duckduckgo", "unavailable"),
    ]
    assert response.sources == ()


async def test_a_failed_attempt_keeps_the_notices_its_plan_made(script: Stage) -> None:
    class Planned(Scripted):
        def plan(self, params: SearchParams, ctx: Any) -> Plan:
            plan = super().plan(params, ctx)
            plan.notices.append(partial("planned for brave"))
            return plan

    script.scripts["brave"] = Planned(PROVIDERS["brave"], UpstreamUnavailable("brave", "down", 503))
    script("duckduckgo", answer("duckduckgo"))
    async with script.client({"BRAVE_API_KEY": "x" * 12}) as ws:
        response = await ws.asearch("q", max_tokens=5)
    brave, ddg = response.attempts
    assert [n.message for n in brave.notices] == [
        "planned for brave",
        "max_tokens=5 not applied: Brave does not support it",
    ]
    assert [n.message for n in ddg.notices] == ["max_tokens=5 not applied: DuckDuckGo does not support it"]
    assert messages(response) == ("max_tokens=5 not applied: DuckDuckGo does not support it",)


async def test_cancellation_propagates_and_stops_the_walk(script: Stage) -> None:
    started = asyncio.Event()

    async def hang() -> None:
        started.set()
        await asyncio.sleep(3600)

    script("brave", hang)
    ddg = script("duckduckgo", answer("duckduckgo"))
    async with script.client({"BRAVE_API_KEY": "x" * 12}) as ws:
        task = asyncio.create_task(ws.asearch("q"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert ddg.calls == []


async def test_a_provider_raising_cancelled_error_is_not_turned_into_text(script: Stage) -> None:
    script("duckduckgo", asyncio.CancelledError())
    async with script.client() as ws:
        with pytest.raises(asyncio.CancelledError):
            await ws.asearch("q")


def test_lazy_loading_imports_only_the_tried_provider(tmp_path: Path) -> None:
    code = (
        "import sys, asyncio, websearch\n"
        "assert not [m for m in sys.modules if m.startswith('websearch._providers.')], 'eager provider import'\n"
        "from websearch._engine._chain import resolve_chain\n"
        "ws = websearch.WebSearch(env={'WEBSEARCH_CONFIG_DIR': sys.argv[1], 'SEARXNG_ENDPOINT': 'http://127.0.0.1:9'})\n"
        "print(resolve_chain(ws._context(with_transport=False), ws.lineup))\n"
        "print(sorted(m for m in sys.modules if m.startswith('websearch._providers.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True).stdout
    keyless = [p for p in SEARCH_PROVIDER_ORDER if PROVIDERS[p].keyless or p == "searxng"]
    assert out.splitlines() == [str(keyless), "[]"]


def test_unknown_provider_and_bad_params_raise(script: Stage) -> None:
    from websearch import InvalidSearchParams

    script("duckduckgo", answer("duckduckgo"))
    with script.client() as ws:
        with pytest.raises(
            InvalidSearchParams, match='provider must be one of: auto, public, duckduckgo; got "altavista"'
        ):
            ws.search("q", provider="altavista")
        with pytest.raises(InvalidSearchParams, match='got "yahoo"'):
            ws.search("q", exclude=["yahoo"])
        for bad in (
            {"limit": 0},
            {"recency": "decade"},
            {"num_search_results": "3"},
            {"temperature": 3.0},
            {"limit": True},
        ):
            with pytest.raises(InvalidSearchParams):
                ws.search("q", **bad)
        with pytest.raises(InvalidSearchParams, match="query must be a non-empty string"):
            ws.search("   ")
        with pytest.raises(InvalidSearchParams) as unknown:
            ws.search("q", num_result=3)
        assert unknown.value.param == "num_result"
        assert str(unknown.value).startswith("num_result is not a search parameter (did you mean num_results?); ")
        with pytest.raises(InvalidSearchParams, match=r"^recency_day is not .*\(did you mean recency_days\?\)"):
            ws.search("q", recency_day=3)
        with pytest.raises(
            InvalidSearchParams, match=r"^colour is not a search parameter; the parameters are: cache, "
        ):
            ws.search("q", colour="blue")


async def test_failed_explicit_provider_is_followed_by_the_fallback_tier(script: Stage) -> None:
    script("brave", UpstreamUnavailable("brave", "Brave API error (500): boom", 500))
    firecrawl = script("firecrawl", answer("firecrawl"))
    ddg = script("duckduckgo", answer("duckduckgo"))
    async with script.client({"BRAVE_API_KEY": "x" * 12, "FIRECRAWL_API_KEY": "f" * 12}) as ws:
        response = await ws.asearch("q", provider="brave")
    assert response.provider == "firecrawl"
    assert response.fallback == "brave unavailable: Brave API error (500): boom"
    assert [a.provider for a in response.attempts] == ["brave", "firecrawl"]
    assert len(firecrawl.calls) == 1
    assert ddg.calls == []
    from websearch import render

    assert render(response, "blocks").splitlines()[1] == (
        "[served by: firecrawl search — brave unavailable: Brave API error (500): boom]"
    )


async def test_fallback_tier_is_skipped_when_unavailable_or_not_explicit(script: Stage, config_dir: Path) -> None:
    script("brave", UpstreamUnavailable("brave", "Brave API error (500): boom", 500))
    firecrawl = script("firecrawl", UpstreamUnavailable("firecrawl", "Firecrawl API error (502): bad gateway", 502))
    async with script.client({"BRAVE_API_KEY": "x" * 12}) as ws:  # no Firecrawl key
        response = await ws.asearch("q", provider="brave")
    assert response.error == "Brave API error (500): boom"
    assert firecrawl.calls == []
    async with script.client({"BRAVE_API_KEY": "x" * 12, "FIRECRAWL_API_KEY": "f" * 12}) as ws:
        response = await ws.asearch("q", provider="brave")
    assert response.error == (
        "All web search providers failed: brave: Brave API error (500): boom; "
        "firecrawl: Firecrawl API error (502): bad gateway"
    )
    (config_dir / "settings.toml").write_text("providers.webSearchFallback = []\n")
    async with script.client({"BRAVE_API_KEY": "x" * 12, "FIRECRAWL_API_KEY": "f" * 12}) as ws:
        response = await ws.asearch("q", provider="brave")
    assert response.error == "Brave API error (500): boom"
    assert len(firecrawl.calls) == 1


async def test_served_response_keeps_every_field_the_provider_set(script: Stage) -> None:
    full = ProviderResult(
        answer="answer",
        sources=(SearchSource("t", "https://u"),),
        citations=(SearchCitation("https://c", "c"),),
        related_questions=("related?",),
        search_queries=("query",),
        usage=SearchUsage(1, 2, 3, 4),
        model="model-x",
        request_id="req-1",
        auth_mode="api_key",
        notices=(partial("own notice"),),
    )
    script("duckduckgo", full)
    async with script.client() as ws:
        response = await ws.asearch("the query", provider="duckduckgo", limit=1)
    # (plan_rate is the engine's, for pacing: an answer does not carry it)
    provider_fields = [f.name for f in dataclasses.fields(ProviderResult) if f.name not in ("notices", "plan_rate")]
    assert {k: getattr(response, k) for k in provider_fields} == {k: getattr(full, k) for k in provider_fields}
    assert (response.provider, response.query, response.error, response.fallback) == (
        "duckduckgo",
        "the query",
        None,
        None,
    )
    assert messages(response) == ("own notice",)
    assert [f.name for f in dataclasses.fields(SearchResponse)] == [
        "provider",
        "query",
        *provider_fields,
        "attempts",
        "notices",
        "error",
        "fallback",
        "cached",
        "cached_age_s",
        "answers",
        "locale",
        "replayed",
    ]


# -- the provider list ---------------------------------------------------------------------------


async def test_a_provider_list_fixes_the_chain_exactly(script: Stage) -> None:
    from websearch import InvalidSearchParams

    script("tavily", answer("tavily"))
    brave = script("brave", answer("brave"))
    ddg = script("duckduckgo", answer("duckduckgo"))
    env = {"BRAVE_API_KEY": "x" * 12, "TAVILY_API_KEY": "y" * 12}
    async with WebSearch(engine=False, env={**script.env, **env}, clock=FakeClock(), providers=[ddg, brave]) as ws:
        assert [s.id for s in ws.provider_status()] == ["duckduckgo", "brave", "public"]
        assert (await ws.asearch("q")).provider == "duckduckgo"
        assert (await ws.asearch("q", exclude=["duckduckgo"])).provider == "brave"
        assert (await ws.asearch("q", providers=["brave"])).provider == "brave"
        with pytest.raises(InvalidSearchParams, match="tavily"):
            await ws.asearch("q", provider="tavily")
    assert len(brave.calls) == 2


async def test_a_search_narrowed_to_providers_not_here_says_which_and_why(script: Stage) -> None:
    """`providers=` naming a provider with no key, or one excluded: it was left out without a
    word, and a search left with none answered only "No web search provider configured."."""
    brave = script("brave", answer("brave"))
    ddg = script("duckduckgo", answer("duckduckgo"))
    tavily = script("tavily", answer("tavily"))
    env = {**script.env, "BRAVE_API_KEY": "x" * 12}
    async with WebSearch(engine=False, env=env, clock=FakeClock(), providers=[ddg, brave, tavily]) as ws:
        served = await ws.asearch("q", providers=["tavily", "brave"], exclude=["duckduckgo"])
        assert served.provider == "brave"
        assert messages(served) == (
            'providers=["tavily", "brave"] dropped: not available here (tavily: set TAVILY_API_KEY or run '
            "`websearch auth set tavily`)",
        )
        none = await ws.asearch("q", providers=["duckduckgo", "tavily"], exclude=["duckduckgo"])
        assert none.error == "No web search provider configured." and not none.attempts
        assert messages(none) == (
            'providers=["duckduckgo", "tavily"] dropped: duckduckgo excluded (by the setting '
            "providers.webSearchExclude or exclude=)",
            'providers=["duckduckgo", "tavily"] dropped: not available here (tavily: set TAVILY_API_KEY or run '
            "`websearch auth set tavily`)",
        )
        once = await ws.asearch("q", providers=iter(["tavily", "brave"]), exclude=["duckduckgo"])  # read once
        assert once.provider == "brave" and messages(once) == messages(served)
        whole = await ws.asearch("q", providers=["brave", "duckduckgo"])  # every one asked is here
        assert whole.provider == "brave" and not whole.notices
        chosen = await ws.asearch("q", provider="brave", providers=["brave", "tavily"])  # one chosen: the rest unasked
        assert chosen.provider == "brave" and not chosen.notices


def test_a_provider_list_names_known_providers_once() -> None:
    from websearch import InvalidSearchParams

    with pytest.raises(InvalidSearchParams, match="unknown provider 'altavista'"):
        WebSearch(engine=False, env={}, providers=["altavista"])
    with pytest.raises(InvalidSearchParams, match="listed twice"):
        WebSearch(engine=False, env={}, providers=["brave", "brave"])


async def test_the_provider_list_setting_and_its_env_twin(script: Stage, config_dir: Path) -> None:
    async with WebSearch(engine=False, env={**script.env, "WEBSEARCH_PROVIDERS": "duckduckgo, brave"}) as ws:
        assert ws.lineup.ids == ("duckduckgo", "brave")
    (config_dir / "settings.toml").write_text('providers.list = ["searxng", "duckduckgo"]\n')
    async with WebSearch(engine=False, env=script.env) as ws:
        assert ws.lineup.ids == ("searxng", "duckduckgo")
