"""What the engine caches (`_engine._Search.cacheable`), tested at the engine with providers of the
tests' own: an answer is kept only when it is whole. A `cut_short` notice (a later page out of
time, a turn paused at the deadline) makes an answer that is served and never cached, whoever
gave it; a failure is never cached; a `partial` notice that is not cut short (the answer as the
provider will give it again) does not stop the cache. Both ways the engine writes an answer are
held to it: behind the search in an in-process store, and within the flight in a shared one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock
from test_chain import Scripted, answer
from websearch import SearchSource, WebSearch
from websearch._core._notices import CutShort, cut_short, partial
from websearch._state import MemoryStore, SqliteStore
from websearch._state._store import Store
from websearch.errors import UpstreamUnavailable
from websearch.providers import PROVIDERS, ProviderResult

KEYS = {"BRAVE_API_KEY": "b" * 20, "TAVILY_API_KEY": "t" * 20}
StoreMaker = Callable[[Path, FakeClock], Store]
STORES: dict[str, StoreMaker] = {
    "memory": lambda _, clock: MemoryStore(clock),  # written behind the search
    "sqlite": lambda path, clock: SqliteStore(path / "state.db", clock),  # written within the flight
}


def in_turn(*outcomes: ProviderResult | BaseException) -> Callable[[], Any]:
    """A provider's outcome: each call the next of `outcomes`, the last one again after that."""
    left = list(outcomes)

    async def next_outcome() -> ProviderResult | BaseException:
        return left.pop(0) if len(left) > 1 else left[0]

    return next_outcome


def cut(provider: str) -> ProviderResult:
    """Page 1 of an answer whose page 2 did not answer in time."""
    sources = (SearchSource("t0", f"https://{provider}.example/0"),)
    return ProviderResult(sources=sources, notices=(cut_short("page 2 did not answer in time"),))


def client(config_dir: Path, clock: FakeClock, store: Store, *scripts: Scripted) -> WebSearch:
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **KEYS}
    return WebSearch(engine=True, env=env, clock=clock, store=store, providers=list(scripts))


@pytest.fixture(params=sorted(STORES))
def store_kind(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


async def test_a_cut_short_answer_is_served_and_never_cached(config_dir: Path, tmp_path: Path, store_kind: str) -> None:
    clock = FakeClock()
    brave = Scripted(PROVIDERS["brave"], in_turn(cut("brave"), answer("brave", 3)))
    async with client(config_dir, clock, STORES[store_kind](tmp_path, clock), brave) as ws:
        first = await ws.asearch("q", provider="brave")
        whole = await ws.asearch("q", provider="brave")  # asked upstream again
        again = await ws.asearch("q", provider="brave")
        entries = (await ws.cache_stats())["entries"]
    assert first.ok and len(first.sources) == 1 and not first.cached
    assert [(n.kind, n.message) for n in first.notices] == [("partial", "page 2 did not answer in time")]
    assert isinstance(first.notices[0], CutShort)
    assert not whole.cached and len(whole.sources) == 3 and not whole.notices
    assert again.cached and [s.url for s in again.sources] == [s.url for s in whole.sources]
    assert len(brave.calls) == 2 and entries == 1


async def test_a_partial_notice_that_is_not_cut_short_is_cached(
    config_dir: Path, tmp_path: Path, store_kind: str
) -> None:
    # A quiet failure the provider will report again, asked again: the answer is as whole as it gets.
    clock = FakeClock()
    result = ProviderResult(sources=answer("brave").sources, notices=(partial("the summary tool failed quietly"),))
    brave = Scripted(PROVIDERS["brave"], result)
    async with client(config_dir, clock, STORES[store_kind](tmp_path, clock), brave) as ws:
        first = await ws.asearch("q", provider="brave")
        second = await ws.asearch("q", provider="brave")
    assert not first.cached and second.cached and len(brave.calls) == 1
    assert [n.message for n in second.notices] == ["the summary tool failed quietly"]


async def test_a_failure_is_never_cached(config_dir: Path, tmp_path: Path, store_kind: str) -> None:
    clock = FakeClock()
    down = UpstreamUnavailable("brave", "Brave API error (503): Service Unavailable", 503)
    brave = Scripted(PROVIDERS["brave"], in_turn(down, answer("brave")))
    async with client(config_dir, clock, STORES[store_kind](tmp_path, clock), brave) as ws:
        failed = await ws.asearch("q", provider="brave")
        served = await ws.asearch("q", provider="brave")
        kept = await ws.asearch("q", provider="brave")
    assert failed.error == "Brave API error (503): Service Unavailable" and not failed.cached
    assert served.ok and not served.cached
    assert kept.cached and len(brave.calls) == 2


async def test_a_cut_short_answer_served_by_a_fallback_is_not_cached(config_dir: Path, tmp_path: Path) -> None:
    # The rule is the answer's, not the chain position's: a fallback's cut-short answer too.
    clock = FakeClock()
    down = UpstreamUnavailable("brave", "Brave API error (503): Service Unavailable", 503)
    brave = Scripted(PROVIDERS["brave"], down)
    tavily = Scripted(PROVIDERS["tavily"], in_turn(cut("tavily"), answer("tavily")))
    async with client(config_dir, clock, MemoryStore(clock), brave, tavily) as ws:
        first = await ws.asearch("q")
        second = await ws.asearch("q")
    assert first.provider == second.provider == "tavily"
    assert not first.cached and not second.cached and len(tavily.calls) == 2


async def test_a_fanout_with_one_answer_cut_short_is_not_cached(config_dir: Path, tmp_path: Path) -> None:
    # Both providers answered (the quorum is met), but one answer is part of what it would be.
    clock = FakeClock()
    brave = Scripted(PROVIDERS["brave"], answer("brave", 2))
    tavily = Scripted(PROVIDERS["tavily"], in_turn(cut("tavily"), answer("tavily", 2)))
    async with client(config_dir, clock, MemoryStore(clock), brave, tavily) as ws:
        first = await ws.asearch("q", fanout=["brave", "tavily"])
        whole = await ws.asearch("q", fanout=["brave", "tavily"])
        again = await ws.asearch("q", fanout=["brave", "tavily"])
    assert first.ok and not first.cached
    assert any(isinstance(n, CutShort) for n in first.notices)
    assert not whole.cached and again.cached
    assert len(brave.calls) == len(tavily.calls) == 2


async def test_a_ttl_of_zero_turns_the_cache_off(config_dir: Path, tmp_path: Path, store_kind: str) -> None:
    # Off, not a cache of entries that expire at once: nothing is looked up, counted or written.
    (config_dir / "settings.toml").write_text("[cache]\nttl = 0\n", encoding="utf-8")
    clock = FakeClock()
    brave = Scripted(PROVIDERS["brave"], answer("brave"))
    async with client(config_dir, clock, STORES[store_kind](tmp_path, clock), brave) as ws:
        first = await ws.asearch("q", provider="brave")
        second = await ws.asearch("q", provider="brave")
        stats = await ws.cache_stats()
    assert first.ok and second.ok and not second.cached and len(brave.calls) == 2
    assert (stats["entries"], stats["hits"], stats["misses"]) == (0, 0, 0)
