"""Keyless resilience: the keyless tier after DuckDuckGo, a search that survives DuckDuckGo
blocking it, and `public` over every keyless engine, against all their loopback fakes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock, make_client, messages, run_cli
from websearch._state import MemoryStore
from websearch.providers import PROVIDERS, SEARCH_PROVIDER_ORDER
from websearch.testing import FAKES, Reply
from websearch.testing.duckduckgo import challenge_page

KEYLESS = [i for i in SEARCH_PROVIDER_ORDER if PROVIDERS[i].keyless]


@pytest.fixture
def engines(config_dir: Path) -> Iterator[dict[str, Any]]:
    """Every keyless engine's fake, running; `env` points the library at all of them."""
    with ExitStack() as stack:
        fakes = {i: stack.enter_context(FAKES[i]()) for i in KEYLESS}
        env = {"WEBSEARCH_CONFIG_DIR": str(config_dir)}
        for fake in fakes.values():
            env.update(fake.env)
        yield {"fakes": fakes, "env": env}


KEYLESS_TIER = ["duckduckgo", "bing", "yahoo", "startpage", "mojeek", "google", "ecosia"]  # the order


def test_the_keyless_tier_follows_duckduckgo_in_order() -> None:
    assert [i for i in KEYLESS if i in KEYLESS_TIER] == KEYLESS_TIER  # whatever else the registry holds
    at = SEARCH_PROVIDER_ORDER.index("duckduckgo")
    assert SEARCH_PROVIDER_ORDER[at : at + len(KEYLESS_TIER)] == tuple(KEYLESS_TIER)  # one run, DuckDuckGo first
    assert all(PROVIDERS[i].tier == "keyless" and PROVIDERS[i].pace for i in KEYLESS_TIER)


async def test_a_keyless_search_survives_duckduckgo_blocking_it(engines: dict[str, Any]) -> None:
    ddg = engines["fakes"]["duckduckgo"]
    ddg.enqueue(Reply(200, challenge_page(), content_type="text/html"))
    clock = FakeClock()
    chain = KEYLESS[KEYLESS.index("duckduckgo") :]  # DuckDuckGo first, the tier after it behind
    async with make_client(
        env=engines["env"], clock=clock, engine=True, store=MemoryStore(clock), providers=chain
    ) as ws:
        first = await ws.asearch("keyless resilience", cache="off")
        second = await ws.asearch("keyless resilience", cache="off")
    assert first.ok and first.provider == chain[1]
    assert (first.attempts[0].provider, first.attempts[0].error_kind) == ("duckduckgo", "blocked")
    assert (second.attempts[0].skipped, second.attempts[0].error_kind) == ("cooldown", "blocked")
    assert second.provider == chain[1] and len(ddg.requests) == 1  # cooling down: not asked again


async def test_public_asks_every_keyless_engine_and_fuses_them(engines: dict[str, Any]) -> None:
    async with make_client(env=engines["env"]) as ws:
        response = await ws.asearch("rust async book", provider="public", limit=10)
    assert response.ok and response.provider == "public"
    assert [a.provider for a in response.attempts] == KEYLESS
    assert all(a.error is None for a in response.attempts), [a.error for a in response.attempts]
    assert len(response.sources) == 10
    assert len({e.provider for s in response.sources for e in s.engines}) >= 2
    assert all(len(engines["fakes"][i].requests) >= 1 for i in KEYLESS)


async def test_public_with_engines_down_says_which_and_still_answers(engines: dict[str, Any]) -> None:
    engines["fakes"]["duckduckgo"].enqueue(Reply(200, challenge_page(), content_type="text/html"))
    engines["fakes"]["ecosia"].enqueue(Reply(503, "Service Unavailable"))
    async with make_client(env=engines["env"]) as ws:
        response = await ws.asearch("two down", provider="public")
    assert response.ok
    kinds = {a.provider: a.error_kind for a in response.attempts}
    assert (kinds["duckduckgo"], kinds["ecosia"]) == ("blocked", "unavailable")
    said = f"2 of {len(KEYLESS)} providers failed: duckduckgo (blocked), ecosia (unavailable)"
    assert said in messages(response)


def test_the_cli_lists_24_providers_then_public(engines: dict[str, Any]) -> None:
    env = {**engines["env"], "WEBSEARCH_PROVIDERS": ",".join(SEARCH_PROVIDER_ORDER)}  # listing only
    rows = json.loads(run_cli(["providers", "--format", "json"], env).stdout)
    assert [r["id"] for r in rows] == [*SEARCH_PROVIDER_ORDER, "public"]
    public = rows[-1]
    assert public["available"] and public["reason"] == "all keyless engines at once: " + ", ".join(KEYLESS)
