"""The provider chain's semantics, with scripted providers standing in for real ones."""

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
from websearch import (
    SEARCH_PROVIDER_ORDER,
    SearchParams,
    SearchProviderError,
    SearchResponse,
    SearchSource,
    WebSearch,
)
from websearch import _registry as registry
from websearch._providers._base import Provider

Outcome = SearchResponse | BaseException | Callable[[], Any]


class Scripted(Provider):
    """A provider whose search returns or raises what the test says, counting calls."""

    supports: ClassVar[dict[str, str]] = {"limit": "native"}

    def __init__(self, provider_id: str, outcome: Outcome, clock: FakeClock | None = None, cost: float = 0.0) -> None:
        self.id = provider_id  # type: ignore[misc]
        self.outcome = outcome
        self.calls: list[SearchParams] = []
        self.clock = clock
        self.cost = cost

    async def search(self, params: SearchParams, ctx: Any) -> SearchResponse:
        self.calls.append(params)
        if self.clock is not None:
            await self.clock.sleep(self.cost)
        outcome = self.outcome
        if callable(outcome) and not isinstance(outcome, BaseException):
            outcome = await outcome()
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def answer(provider: str, n: int = 1) -> SearchResponse:
    return SearchResponse(
        provider, sources=tuple(SearchSource(f"t{i}", f"https://{provider}.example/{i}") for i in range(n))
    )


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Scripted]:
    """Install a scripted provider under a real id and mark that id implemented."""

    def install(provider_id: str, outcome: Outcome, **kw: Any) -> Scripted:
        info = registry.PROVIDERS[provider_id]
        monkeypatch.setitem(registry.PROVIDERS, provider_id, dataclasses.replace(info, implemented=True))  # type: ignore[arg-type]
        fake = Scripted(provider_id, outcome, **kw)
        monkeypatch.setitem(registry._loaded, provider_id, fake)
        return fake

    return install


@pytest.fixture
def base_env(config_dir: Path) -> dict[str, str]:
    return {"WEBSEARCH_CONFIG_DIR": str(config_dir)}


def client(env: dict[str, str], **kw: Any) -> WebSearch:
    return WebSearch(env=env, clock=kw.pop("clock", FakeClock()), **kw)


def test_order_is_the_specs_eighteen() -> None:
    assert SEARCH_PROVIDER_ORDER == (
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
    assert tuple(registry.PROVIDERS) == SEARCH_PROVIDER_ORDER


async def test_sequential_fallback_records_every_attempt(
    script: Callable[..., Scripted], base_env: dict[str, str]
) -> None:
    clock = FakeClock()
    brave = script("brave", SearchProviderError("brave", "brave: 401 unauthorized", 401), clock=clock, cost=0.25)
    ddg = script("duckduckgo", answer("duckduckgo"), clock=clock, cost=0.5)
    async with client({**base_env, "BRAVE_API_KEY": "k" * 20}, clock=clock) as ws:
        response = await ws.asearch("q")
    assert response.provider == "duckduckgo"
    assert response.ok
    assert [(a.provider, a.status, a.error, a.duration_ms) for a in response.attempts] == [
        ("brave", 401, "Brave authorization failed (401). Check API key or base URL.", 250.0),
        ("duckduckgo", None, None, 500.0),
    ]
    assert len(brave.calls) == len(ddg.calls) == 1


async def test_preferred_provider_first(
    script: Callable[..., Scripted], base_env: dict[str, str], config_dir: Path
) -> None:
    (config_dir / "settings.toml").write_text('providers.webSearch = "tavily"\n')
    script("brave", answer("brave"))
    tavily = script("tavily", answer("tavily"))
    env = {**base_env, "BRAVE_API_KEY": "x" * 12, "TAVILY_API_KEY": "y" * 12}
    async with client(env) as ws:
        response = await ws.asearch("q")
    assert response.provider == "tavily"
    assert [a.provider for a in response.attempts] == ["tavily"]
    assert len(tavily.calls) == 1


async def test_auto_ignores_preference(
    script: Callable[..., Scripted], base_env: dict[str, str], config_dir: Path
) -> None:
    (config_dir / "settings.toml").write_text('providers.webSearch = "brave"\n')
    script("brave", answer("brave"))
    script("tavily", answer("tavily"))
    env = {**base_env, "BRAVE_API_KEY": "x" * 12, "TAVILY_API_KEY": "y" * 12}
    async with client(env) as ws:
        assert (await ws.asearch("q")).provider == "brave"
        assert (await ws.asearch("q", provider="auto")).provider == "tavily"


async def test_unavailable_preferred_is_skipped(
    script: Callable[..., Scripted], base_env: dict[str, str], config_dir: Path
) -> None:
    (config_dir / "settings.toml").write_text('providers.webSearch = "brave"\n')
    script("brave", answer("brave"))
    script("duckduckgo", answer("duckduckgo"))
    async with client(base_env) as ws:  # no BRAVE_API_KEY
        response = await ws.asearch("q")
    assert response.provider == "duckduckgo"
    assert [a.provider for a in response.attempts] == ["duckduckgo"]


async def test_excluded_never_used_even_as_preferred(
    script: Callable[..., Scripted], base_env: dict[str, str], config_dir: Path
) -> None:
    (config_dir / "settings.toml").write_text(
        '[providers]\nwebSearch = "brave"\nwebSearchExclude = ["brave", "duckduckgo"]\n'
    )
    brave = script("brave", answer("brave"))
    ddg = script("duckduckgo", answer("duckduckgo"))
    async with client({**base_env, "BRAVE_API_KEY": "x" * 12}) as ws:
        response = await ws.asearch("q")
    assert response.error == "No web search provider configured."
    assert response.provider == "none"
    assert brave.calls == ddg.calls == []


async def test_exclude_argument_adds_to_settings(script: Callable[..., Scripted], base_env: dict[str, str]) -> None:
    script("brave", answer("brave"))
    script("duckduckgo", answer("duckduckgo"))
    async with client({**base_env, "BRAVE_API_KEY": "x" * 12}) as ws:
        assert (await ws.asearch("q", exclude=["brave"])).provider == "duckduckgo"


async def test_explicit_provider_runs_alone_even_if_excluded(
    script: Callable[..., Scripted], base_env: dict[str, str], config_dir: Path
) -> None:
    (config_dir / "settings.toml").write_text('providers.webSearchExclude = ["brave"]\n')
    script("brave", SearchProviderError("brave", "Brave API error (500): boom", 500))
    ddg = script("duckduckgo", answer("duckduckgo"))
    async with client({**base_env, "BRAVE_API_KEY": "x" * 12}) as ws:
        response = await ws.asearch("q", provider="brave")
    assert response.error == "Brave API error (500): boom"  # one provider: no "All ... failed" prefix
    assert response.provider == "brave"
    assert ddg.calls == []


async def test_explicit_unavailable_falls_back_with_a_notice(
    script: Callable[..., Scripted], base_env: dict[str, str]
) -> None:
    brave = script("brave", answer("brave"))
    script("duckduckgo", answer("duckduckgo"))
    async with client(base_env) as ws:
        response = await ws.asearch("q", provider="brave")
    assert response.provider == "duckduckgo"
    assert brave.calls == []
    assert messages(response)[0] == (
        "provider brave was requested but is not available (set BRAVE_API_KEY or run `websearch auth set brave`); "
        "used the automatic chain instead"
    )


async def test_unimplemented_provider_is_registered_but_unavailable(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    info = registry.PROVIDERS["brave"]
    monkeypatch.setitem(registry.PROVIDERS, "brave", dataclasses.replace(info, implemented=False))  # type: ignore[arg-type]
    monkeypatch.delitem(registry._loaded, "brave", raising=False)
    async with client({**env, "BRAVE_API_KEY": "x" * 12}) as ws:  # env: the DuckDuckGo fake answers
        rows = {r.id: r for r in ws.provider_status()}
        response = await ws.asearch("q", provider="brave")
    assert list(rows) == list(SEARCH_PROVIDER_ORDER)
    assert (rows["brave"].available, rows["brave"].reason) == (False, "not implemented yet")
    assert messages(response)[0].startswith("provider brave was requested but is not available (not implemented yet)")
    with pytest.raises(LookupError, match="Brave is not implemented yet"):
        registry.load_provider("brave")


async def test_unrenderable_response_is_204_and_advances(
    script: Callable[..., Scripted], base_env: dict[str, str]
) -> None:
    script("brave", SearchResponse("brave", answer="   ", related_questions=(" ",)))
    script("duckduckgo", answer("duckduckgo"))
    async with client({**base_env, "BRAVE_API_KEY": "x" * 12}) as ws:
        response = await ws.asearch("q")
    assert response.provider == "duckduckgo"
    assert (response.attempts[0].status, response.attempts[0].error) == (
        204,
        "Brave returned no renderable search content.",
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


async def test_all_failed_message_and_normalisation(script: Callable[..., Scripted], base_env: dict[str, str]) -> None:
    script("anthropic", SearchProviderError("anthropic", "not found", 404))
    script("zai", SearchProviderError("zai", "Z.AI raw auth message", 401))
    script("tinyfish", SearchProviderError("tinyfish", "tinyfish: 403 forbidden", 403))
    script("kagi", RuntimeError("kagi exploded"))
    script("brave", RuntimeError(""))
    script("duckduckgo", SearchProviderError("duckduckgo", "DuckDuckGo HTML error (503)", 503))
    env = {
        **base_env,
        "ANTHROPIC_API_KEY": "a" * 12,
        "ZAI_API_KEY": "z" * 12,
        "TINYFISH_API_KEY": "t" * 12,
        "KAGI_API_KEY": "k" * 12,
        "BRAVE_API_KEY": "b" * 12,
    }
    async with client(env) as ws:
        response = await ws.asearch("q")
    assert response.error == (
        "All web search providers failed: "
        "anthropic: Anthropic web search returned 404 (model or endpoint not found).; "
        "zai: Z.AI raw auth message; "
        "tinyfish: TinyFish authorization failed (403). Check API key or base URL.; "
        "kagi: kagi exploded; "
        "brave: Unknown error from Brave; "
        "duckduckgo: DuckDuckGo HTML error (503)"
    )
    assert response.provider == "duckduckgo"
    assert [a.provider for a in response.attempts] == ["anthropic", "zai", "tinyfish", "kagi", "brave", "duckduckgo"]
    assert response.sources == ()


async def test_cancellation_propagates_and_stops_the_walk(
    script: Callable[..., Scripted], base_env: dict[str, str]
) -> None:
    started = asyncio.Event()

    async def hang() -> None:
        started.set()
        await asyncio.sleep(3600)

    script("brave", hang)
    ddg = script("duckduckgo", answer("duckduckgo"))
    async with client({**base_env, "BRAVE_API_KEY": "x" * 12}) as ws:
        task = asyncio.create_task(ws.asearch("q"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert ddg.calls == []


async def test_a_provider_raising_cancelled_error_is_not_turned_into_text(
    script: Callable[..., Scripted], base_env: dict[str, str]
) -> None:
    script("duckduckgo", asyncio.CancelledError())
    async with client(base_env) as ws:
        with pytest.raises(asyncio.CancelledError):
            await ws.asearch("q")


def test_lazy_loading_imports_only_the_tried_provider(tmp_path: Path) -> None:
    code = (
        "import sys, asyncio, websearch\n"
        "assert not [m for m in sys.modules if m.startswith('websearch._providers.')], 'eager provider import'\n"
        "from websearch._chain import resolve_chain\n"
        "ws = websearch.WebSearch(env={'WEBSEARCH_CONFIG_DIR': sys.argv[1], 'SEARXNG_ENDPOINT': 'http://127.0.0.1:9'})\n"
        "chain = resolve_chain(ws._context(with_transport=False))\n"
        "print([i.id for i in chain])\n"
        "print(sorted(m for m in sys.modules if m.startswith('websearch._providers.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["['searxng', 'duckduckgo']", "[]"]


def test_unknown_provider_and_bad_params_raise(base_env: dict[str, str]) -> None:
    from websearch import InvalidSearchParams

    with client(base_env) as ws:
        with pytest.raises(InvalidSearchParams, match="unknown provider 'bing'"):
            ws.search("q", provider="bing")
        with pytest.raises(InvalidSearchParams, match="unknown provider 'yahoo'"):
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


async def test_failed_explicit_provider_is_followed_by_the_fallback_tier(
    script: Callable[..., Scripted], base_env: dict[str, str]
) -> None:
    script("brave", SearchProviderError("brave", "Brave API error (500): boom", 500))
    firecrawl = script("firecrawl", answer("firecrawl"))
    ddg = script("duckduckgo", answer("duckduckgo"))
    env = {**base_env, "BRAVE_API_KEY": "x" * 12, "FIRECRAWL_API_KEY": "f" * 12}
    async with client(env) as ws:
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


async def test_fallback_tier_is_skipped_when_unavailable_or_not_explicit(
    script: Callable[..., Scripted], base_env: dict[str, str], config_dir: Path
) -> None:
    script("brave", SearchProviderError("brave", "Brave API error (500): boom", 500))
    firecrawl = script("firecrawl", SearchProviderError("firecrawl", "Firecrawl API error (502): bad gateway", 502))
    async with client({**base_env, "BRAVE_API_KEY": "x" * 12}) as ws:  # no Firecrawl key
        response = await ws.asearch("q", provider="brave")
    assert response.error == "Brave API error (500): boom"
    assert firecrawl.calls == []
    async with client({**base_env, "BRAVE_API_KEY": "x" * 12, "FIRECRAWL_API_KEY": "f" * 12}) as ws:
        response = await ws.asearch("q", provider="brave")
    assert response.error == (
        "All web search providers failed: brave: Brave API error (500): boom; "
        "firecrawl: Firecrawl API error (502): bad gateway"
    )
    (config_dir / "settings.toml").write_text("providers.webSearchFallback = []\n")
    async with client({**base_env, "BRAVE_API_KEY": "x" * 12, "FIRECRAWL_API_KEY": "f" * 12}) as ws:
        response = await ws.asearch("q", provider="brave")
    assert response.error == "Brave API error (500): boom"
    assert len(firecrawl.calls) == 1


async def test_served_response_keeps_every_field_the_provider_set(
    script: Callable[..., Scripted], base_env: dict[str, str]
) -> None:
    from websearch import SearchCitation, SearchUsage

    full = SearchResponse(
        "duckduckgo",
        "ignored",
        "answer",
        (SearchSource("t", "https://u"),),
        (SearchCitation("https://c", "c"),),
        ("related?",),
        ("query",),
        SearchUsage(1, 2, 3, 4),
        "model-x",
        "req-1",
        "api_key",
        (),
        ("own notice",),
    )
    script("duckduckgo", full)
    async with client(base_env) as ws:
        response = await ws.asearch("the query", provider="duckduckgo", limit=1)
    import dataclasses

    kept = (
        "answer",
        "sources",
        "citations",
        "related_questions",
        "search_queries",
        "usage",
        "model",
        "request_id",
        "auth_mode",
    )
    assert {k: getattr(response, k) for k in kept} == {k: getattr(full, k) for k in kept}
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
        "answer",
        "sources",
        "citations",
        "related_questions",
        "search_queries",
        "usage",
        "model",
        "request_id",
        "auth_mode",
        "attempts",
        "notices",
        "error",
        "fallback",
    ]
