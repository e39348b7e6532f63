"""The engine for many agents, in one process: the cache, single-flight, provider health,
pacing, the deadline and hedging, against the loopback fakes (memory store unless a test
names another). The cross-process behaviour is in test_engine_shared.py."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import FIRECRAWL_KEY, NOW, FakeClock, StillClock, eventually, key_env, make_client, messages, run_cli
from websearch import SearchParams, WebSearch, render
from websearch._engine._cache import cache_key, entry_ttl, normalised
from websearch._engine._engine import credential_fingerprint
from websearch._state import MemoryStore
from websearch.testing import FakeBrave, FakeDuckDuckGo, FakeFirecrawl, FakeTavily, Reply
from websearch.testing.brave import quota_limited_reply, rate_limited_reply
from websearch.testing.tavily import tavily_results_body

BRAVE_KEY = "BSA-engine-secret-7f3e9a"


@pytest.fixture
def brave() -> Iterator[FakeBrave]:
    with FakeBrave() as fake:
        yield fake


@pytest.fixture
def benv(config_dir: Path, brave: FakeBrave) -> dict[str, str]:
    return {**key_env("brave", config_dir, BRAVE_KEY), **brave.env}


def engine_client(env: dict[str, str], clock: FakeClock, **kw: Any) -> WebSearch:
    """A client on the engine, its state in memory (unless `store` is given)."""
    kw.setdefault("store", MemoryStore(clock))
    return make_client(env=env, clock=clock, engine=True, **kw)


def settings(config_dir: Path, text: str) -> None:
    (config_dir / "settings.toml").write_text(text, encoding="utf-8")


# -- cache -----------------------------------------------------------------------------------


async def test_a_repeated_search_is_served_from_the_cache(benv: dict[str, str], brave: FakeBrave) -> None:
    clock = FakeClock()
    async with engine_client(benv, clock) as ws:
        first = await ws.asearch("solar eclipse 2027", limit=3)
        await clock.sleep(180)
        second = await ws.asearch("solar  eclipse 2027 ", limit=3)  # whitespace folded: the same search
    assert len(brave.requests) == 1
    assert (first.cached, first.cached_age_s) == (False, None)
    assert (second.cached, second.cached_age_s) == (True, 180.0)
    assert second.attempts == first.attempts  # the original attempts
    assert [s.url for s in second.sources] == [s.url for s in first.sources]
    fresh, hit = first.to_dict(), second.to_dict()
    assert (fresh["cached"], fresh["cached_age_s"]) == (False, None)  # both present on every response
    assert (hit["cached"], hit["cached_age_s"]) == (True, 180.0)
    assert "[served by: brave, cached 3 min ago]" in render(second, "blocks")
    assert "cached" not in render(first, "blocks").splitlines()[0]


async def test_each_hit_is_the_callers_own_and_the_counts_reach_the_store(
    benv: dict[str, str], brave: FakeBrave
) -> None:
    clock = FakeClock()
    async with engine_client(benv, clock) as ws:
        await ws.asearch("tidal range", limit=3)
        first = await ws.asearch("tidal range", limit=3)
        first.sources[0].title = "changed by the caller"
        first.notices = ()
        await clock.sleep(60)
        second = await ws.asearch("tidal range", limit=3)
        stats = await ws.cache_stats()
    assert len(brave.requests) == 1 and first.cached and second.cached
    assert second.sources[0].title != "changed by the caller" and second.sources[0] is not first.sources[0]
    assert (first.cached_age_s, second.cached_age_s) == (0.0, 60.0)
    assert (stats["hits"], stats["misses"]) == (2, 1)  # counted off the search's path, all in by now


async def test_an_answer_written_behind_is_cached_as_served_and_seen_at_once(
    benv: dict[str, str], brave: FakeBrave
) -> None:
    # An in-process store is written just after the search hands its answer back: what the
    # caller does to the answer meanwhile is not cached, and nothing that reads the cache
    # before the write has run misses it.
    clock = FakeClock()
    async with engine_client(benv, clock) as ws:
        served = await ws.asearch("ocean currents", limit=3)
        urls = [s.url for s in served.sources]
        served.sources[0].url = "https://changed.example/"
        served.sources = served.sources[1:]
        assert (await ws.engine.stats())["entries"] == 1  # no await in between let the write run
        again = await ws.asearch("ocean currents", limit=3)
        assert await ws.engine.clear() == 1
        await ws.asearch("ocean currents", limit=3)  # cleared: upstream again, then written behind
        assert (await ws.asearch("ocean currents", limit=3)).cached
    assert again.cached and [s.url for s in again.sources] == urls
    assert len(brave.requests) == 2


async def test_refresh_searches_anew_and_off_neither_reads_nor_writes(benv: dict[str, str], brave: FakeBrave) -> None:
    clock = FakeClock()
    async with engine_client(benv, clock) as ws:
        await ws.asearch("tidal power")
        refreshed = await ws.asearch("tidal power", cache="refresh")
        off = await ws.asearch("tidal power", cache="off")
        await ws.asearch("wave power", cache="off")
        after_off = await ws.asearch("wave power")
    assert len(brave.requests) == 5  # the first, the refresh, both offs, and the search the off left unwritten
    assert not refreshed.cached and not off.cached and not after_off.cached


async def test_an_entry_expires_after_the_ttl_and_ttl_zero_turns_the_cache_off(
    benv: dict[str, str], brave: FakeBrave, config_dir: Path
) -> None:
    clock = FakeClock()
    settings(config_dir, "[cache]\nttl = 600\n")
    async with engine_client(benv, clock) as ws:
        await ws.asearch("geothermal")
        await clock.sleep(599)
        assert (await ws.asearch("geothermal")).cached
        await clock.sleep(2)
        assert not (await ws.asearch("geothermal")).cached
    assert len(brave.requests) == 2
    settings(config_dir, "[cache]\nttl = 0\n")
    async with engine_client(benv, clock) as ws:
        await ws.asearch("geothermal")
        assert not (await ws.asearch("geothermal")).cached
    assert len(brave.requests) == 4


async def test_an_entry_never_outlives_the_window_it_answers_for(benv: dict[str, str], brave: FakeBrave) -> None:
    clock = FakeClock()
    async with engine_client(benv, clock) as ws:
        await ws.asearch("markets today", recency_hours=0.1)  # a six-minute window, under the 15-minute ttl
        await clock.sleep(300)
        assert (await ws.asearch("markets today", recency_hours=0.1)).cached
        await clock.sleep(61)
        assert not (await ws.asearch("markets today", recency_hours=0.1)).cached
    params = SearchParams("q", recency="day")
    assert entry_ttl(params, 900) == 900
    assert entry_ttl(SearchParams("q", recency_days=0.005), 900) == pytest.approx(432)
    assert entry_ttl(SearchParams("q", recency_hours=0.05), 900) == pytest.approx(180)
    # A window given as a string is honoured by the filters: the entry lived the full ttl.
    assert entry_ttl(SearchParams("q", recency_hours="0.05"), 900) == pytest.approx(180)
    assert entry_ttl(SearchParams("q", recency_days="soon"), 900) == 900  # no window: dropped


async def test_failures_and_empty_answers_are_never_cached(
    config_dir: Path, brave: FakeBrave, benv: dict[str, str]
) -> None:
    clock = FakeClock()
    brave.enqueue(Reply(500, {"error": {"code": "SERVER_ERROR", "detail": "boom", "status": 500}}))
    async with engine_client(benv, clock) as ws:
        failed = await ws.asearch("brittle")
        assert failed.error is not None
        assert (await ws.asearch("brittle")).ok  # asked again: the failure was not kept
    empty = FakeBrave(n_available=0)
    with empty:
        env = {**key_env("brave", config_dir, BRAVE_KEY), **empty.env}
        async with engine_client(env, clock) as ws:
            for _ in range(2):
                assert not (await ws.asearch("nothing at all")).ok
        assert len(empty.requests) == 2


def test_the_key_is_the_search_not_its_secrets() -> None:
    base = {"provider": None, "preferred": "", "excluded": (), "fallback": ("firecrawl",), "lineup": ("brave",)}
    nfd, nfc = "cafe\u0301  au lait", "caf\u00e9 au lait"
    assert normalised(nfd) == nfc
    assert cache_key(SearchParams(nfd), **base) == cache_key(SearchParams(nfc), **base)  # type: ignore[arg-type]
    key = cache_key(SearchParams(nfc), **base)  # type: ignore[arg-type]
    assert cache_key(SearchParams("Caf\u00e9 au lait"), **base) != key  # type: ignore[arg-type]  # case is kept
    assert cache_key(SearchParams(nfc, limit=3), **base) != key  # type: ignore[arg-type]
    assert cache_key(SearchParams(nfc, recency="week"), **base) != key  # type: ignore[arg-type]
    assert cache_key(SearchParams(nfc), **{**base, "provider": "brave"}) != key  # type: ignore[arg-type]
    assert cache_key(SearchParams(nfc), **{**base, "excluded": ("exa",)}) != key  # type: ignore[arg-type]
    assert cache_key(SearchParams(nfc), **{**base, "fallback": ()}) != key  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("toml", "env"),
    [
        ('[searxng]\nlanguage = "de"\n', {}),  # SearXNG's language
        ("", {"SEARXNG_ENDPOINT": "https://other.example"}),  # another instance
        ("", {"GEMINI_SEARCH_MODEL": "gemini-2.5-pro"}),  # another model
        ("", {"WEBSEARCH_BRAVE_BASE_URL": "https://gateway.example"}),  # another upstream
        ("[fanout]\nmax_providers = 2\n", {}),
    ],
)
def test_a_setting_that_changes_the_answer_changes_the_key(tmp_path: Path, toml: str, env: dict[str, str]) -> None:
    # Clients configured apart on one store (the default: one SQLite file per user) were served
    # each other's answers: a German SearXNG search answered an English one.
    from websearch._core._settings import Settings

    plain = Settings.load(tmp_path / "none", {}).answer_print()
    settings(tmp_path, toml)
    assert Settings.load(tmp_path, env).answer_print() != plain
    key = {"provider": None, "preferred": "auto", "excluded": (), "fallback": (), "lineup": ("searxng",)}
    apart = cache_key(SearchParams("q"), **key, config=Settings.load(tmp_path, env).answer_print())
    assert apart != cache_key(SearchParams("q"), **key, config=plain)


@pytest.mark.parametrize(
    ("toml", "env"),
    [
        ("[cache]\nttl = 60\n", {}),
        ('[pacing]\nbrave = "1/s"\n', {}),
        ('[searxng]\nbasicPassword = "s3cret"\n', {}),  # a secret: never part of the key
        ("", {"BRAVE_API_KEY": "another key"}),
        ("", {"SEARXNG_TOKEN": "t0ken"}),
    ],
)
def test_what_only_runs_the_search_or_is_secret_leaves_the_key_alone(
    tmp_path: Path, toml: str, env: dict[str, str]
) -> None:
    from websearch._core._settings import Settings

    plain = Settings.load(tmp_path / "none", {}).answer_print()
    settings(tmp_path, toml)
    assert Settings.load(tmp_path, env).answer_print() == plain


def test_a_remembered_key_is_the_key_made_afresh_and_tells_apart_what_only_its_type_does() -> None:
    from websearch._engine._cache import _made

    base = {
        "provider": "brave",
        "preferred": "",
        "excluded": ("exa",),
        "fallback": ("firecrawl",),
        "lineup": ("brave",),
    }
    selection = ("brave", "", frozenset({"exa"}), ("firecrawl",), ("brave",), "")
    searches = [
        SearchParams("rust async"),
        SearchParams("rust async", limit=3, include_domains=["docs.rs"]),
        SearchParams("rust async", recency_days=1),
        SearchParams("rust async", recency_days=True),  # equal to 1 in Python, not to the filters
        SearchParams("rust async", recency_days=1.0),
        SearchParams("rust async", recency_days=[1]),  # cannot be hashed: made afresh every time
    ]
    keys = []
    for params in searches:
        first = cache_key(params, **base)  # type: ignore[arg-type]
        assert cache_key(params, **base) == first == _made(params, selection)  # type: ignore[arg-type]
        keys.append(first)
    assert len(set(keys)) == len(keys)


async def test_no_secret_reaches_the_store(benv: dict[str, str], tmp_path: Path) -> None:
    from websearch._state import SqliteStore

    clock = FakeClock()
    path = tmp_path / "state.db"
    async with engine_client(benv, clock, store=SqliteStore(path, clock, 1 << 24)) as ws:
        await ws.asearch("privacy engineering")
        await ws.asearch("bad key", provider="brave", cache="refresh")
    assert all(BRAVE_KEY.encode() not in data for data in _state_files(tmp_path))


# -- single-flight ---------------------------------------------------------------------------


class _LateLease:
    """A shared store whose first lease is taken only once `go` is set: a search that looked in
    the cache, then was held up (a loaded machine, a busy loop) before it took the lease."""

    def __init__(self, store: Any, go: asyncio.Event) -> None:
        self._store, self._go, self.kind = store, go, store.kind

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def try_lease(self, key: str, owner: str, ttl: float) -> bool:
        await self._go.wait()
        taken: bool = await self._store.try_lease(key, owner, ttl)
        return taken


async def test_a_search_taking_a_lease_just_freed_finds_the_answer_its_leader_left(
    benv: dict[str, str], brave: FakeBrave, tmp_path: Path
) -> None:
    # Two clients on one SQLite file, as two processes: B misses the cache, then A leads the
    # same search through, writes its answer and lets its lease go, before B takes the lease.
    # B took the free lease as its own and asked again (a stress run of 800 searches over 30
    # queries in 4 processes made 31-34 upstream calls in 3 runs of 7); it must read A's answer.
    from websearch._state import SqliteStore

    clock, go = FakeClock(), asyncio.Event()
    path = tmp_path / "state.db"
    async with (
        engine_client(benv, clock, store=SqliteStore(path, clock)) as a,
        engine_client(benv, clock, store=_LateLease(SqliteStore(path, clock), go)) as b,
    ):
        late = asyncio.ensure_future(b.asearch("one question"))
        await eventually(lambda: bool(b.engine._flights))  # B missed the cache and is taking the lease
        first = await a.asearch("one question")
        go.set()
        second = await late
    assert first.ok and not first.cached
    assert second.ok and second.cached
    assert len(brave.requests) == 1


class _Slow:
    """A shared store whose `slow` calls (method names) take `delay` seconds (a loaded machine's
    round trips), within what the search allows them, as a real backend's are."""

    def __init__(self, store: Any, delay: float, *slow: str) -> None:
        self._store, self._delay, self._slow, self.kind = store, delay, slow, store.kind

    def __getattr__(self, name: str) -> Any:
        call = getattr(self._store, name)
        if name not in self._slow:
            return call

        async def slowly(*args: Any, **kwargs: Any) -> Any:
            from websearch._state._store import WRITE_SHARE, StoreDeadline, allowed_wait

            try:
                async with asyncio.timeout(allowed_wait(WRITE_SHARE)):
                    await asyncio.sleep(self._delay)
            except TimeoutError:
                raise StoreDeadline from None
            return await call(*args, **kwargs)

        return slowly


async def test_a_search_waiting_for_another_process_s_flight_spends_no_store_budget_on_its_looks(
    benv: dict[str, str], brave: FakeBrave, tmp_path: Path
) -> None:
    from websearch._core._clock import SystemClock
    from websearch._state import SqliteStore

    clock = SystemClock()
    path = tmp_path / "state.db"
    brave.enqueue(Reply(200, _brave_body("a long flight"), delay=1.2))
    async with (
        engine_client(benv, clock, store=SqliteStore(path, clock)) as a,
        engine_client(benv, clock, store=_Slow(SqliteStore(path, clock), 0.03, "get")) as b,
    ):
        leader = asyncio.ensure_future(a.asearch("a long flight"))
        await eventually(lambda: bool(brave.requests))  # A holds the lease and asks Brave
        follower = await b.asearch("a long flight", deadline=10)  # two 30 ms looks every 50 ms
        await leader
    assert follower.ok and follower.cached and not follower.notices
    assert len(brave.requests) == 1


async def test_a_long_flight_s_lease_renewals_spend_none_of_its_store_budget(
    benv: dict[str, str], brave: FakeBrave, tmp_path: Path
) -> None:
    # Renewed every half second in the background, the lease of a search of a few seconds spent
    # its budget (250 ms) at a loaded machine's round trips: its answer came with the notice.
    from websearch._core._clock import SystemClock
    from websearch._state import SqliteStore

    clock = SystemClock()
    brave.enqueue(Reply(200, _brave_body("a long flight"), delay=1.6))
    store = _Slow(SqliteStore(tmp_path / "state.db", clock), 0.1, "try_lease")
    async with engine_client(benv, clock, store=store) as ws:
        response = await ws.asearch("a long flight", deadline=10)  # the lease, then three renewals
    assert response.ok and not response.notices


async def test_fifty_identical_searches_at_once_make_one_upstream_call(benv: dict[str, str], brave: FakeBrave) -> None:
    brave.enqueue(Reply(200, _brave_body("many agents"), delay=0.3))
    async with engine_client(benv, FakeClock()) as ws:
        responses = await asyncio.gather(*(ws.asearch("many agents") for _ in range(50)))
    assert len(brave.requests) == 1
    assert all(r.ok and r.provider == "brave" for r in responses)
    assert len({id(r) for r in responses}) == 50  # each caller has its own response object


async def test_searches_sharing_a_flight_do_not_share_what_their_callers_change(
    benv: dict[str, str], brave: FakeBrave
) -> None:
    brave.enqueue(Reply(200, _brave_body("shared answer"), delay=0.2))

    async def changing() -> Any:  # changes its answer the moment it has it, before anyone else runs
        response = await ws.asearch("shared answer")
        response.sources[0].title = "changed by its caller"
        return response

    async with engine_client(benv, FakeClock()) as ws:
        leader = asyncio.create_task(changing())
        await eventually(lambda: brave.requests)
        followers = await asyncio.gather(*(ws.asearch("shared answer") for _ in range(3)))
        followers[0].sources[1].title = "changed by a follower"
        led = await leader
        cached = await ws.asearch("shared answer")
    assert len(brave.requests) == 1 and cached.cached
    pristine = [s.title for s in cached.sources]
    assert not any("changed" in title for title in pristine)
    assert all([s.title for s in response.sources] == pristine for response in followers[1:])
    assert followers[0].sources[0].title == pristine[0]  # the leader's caller's change did not reach it
    assert led.sources[1].title == pristine[1]  # nor a follower's the leader's


async def test_a_failed_flight_fails_its_followers_with_the_same_answer(benv: dict[str, str], brave: FakeBrave) -> None:
    brave.enqueue(Reply(500, {"error": {"code": "SERVER_ERROR", "detail": "boom", "status": 500}}, delay=0.2))
    async with engine_client({**benv, "WEBSEARCH_PROVIDERS": "brave"}, FakeClock(), providers=["brave"]) as ws:
        responses = await asyncio.gather(*(ws.asearch("shared failure") for _ in range(5)))
    assert len(brave.requests) == 1
    assert all(r.error is not None for r in responses)


async def test_a_cancelled_leader_leaves_its_followers_to_search_again(benv: dict[str, str], brave: FakeBrave) -> None:
    # One agent given up on (its task cancelled) must not cancel the others sharing its flight.
    brave.enqueue(Reply(200, _brave_body("given up"), delay=0.5))
    async with engine_client(benv, FakeClock()) as ws:
        leader = asyncio.create_task(ws.asearch("given up"))
        await eventually(lambda: brave.requests)
        followers = [asyncio.create_task(ws.asearch("given up")) for _ in range(3)]
        await asyncio.sleep(0.05)  # all three wait on the leader's flight
        leader.cancel()
        responses = await asyncio.gather(*followers)
    assert leader.cancelled()
    assert all(r.ok and r.provider == "brave" for r in responses)
    assert len(brave.requests) == 2  # the cancelled walk's, then one led by a follower for all three


async def test_a_search_on_another_event_loop_shares_the_flight_through_the_cache(
    benv: dict[str, str], brave: FakeBrave
) -> None:
    # The sync `search` runs on the client's private loop; beside `asearch` on the caller's
    # loop, the same search in flight there cannot be awaited, but its answer lands in the cache.
    brave.enqueue(Reply(200, _brave_body("two loops"), delay=0.3))
    loop = asyncio.get_running_loop()
    async with engine_client(benv, FakeClock()) as ws:
        leader = asyncio.create_task(ws.asearch("two loops"))
        await eventually(lambda: brave.requests)
        follower = await loop.run_in_executor(None, lambda: ws.search("two loops"))
        led = await leader
    await loop.run_in_executor(None, ws.close)
    assert len(brave.requests) == 1
    assert led.ok and not led.cached and follower.ok and follower.cached
    assert [s.url for s in follower.sources] == [s.url for s in led.sources]


async def test_a_search_on_another_loop_leads_its_own_when_the_flight_leaves_no_answer(
    benv: dict[str, str], brave: FakeBrave
) -> None:
    brave.enqueue(Reply(500, {"error": {"code": "SERVER_ERROR", "detail": "boom", "status": 500}}, delay=0.3))
    loop = asyncio.get_running_loop()
    async with engine_client({**benv, "WEBSEARCH_PROVIDERS": "brave"}, FakeClock(), providers=["brave"]) as ws:
        leader = asyncio.create_task(ws.asearch("two loops, one failure"))
        await eventually(lambda: brave.requests)
        follower = await loop.run_in_executor(None, lambda: ws.search("two loops, one failure"))
        led = await leader
    await loop.run_in_executor(None, ws.close)
    assert len(brave.requests) == 2  # the failure was not cached: the other loop asked again
    assert led.error is not None and follower.ok and not follower.cached


# -- provider health -------------------------------------------------------------------------


async def test_a_rate_limited_provider_is_skipped_until_its_reset(
    benv: dict[str, str], brave: FakeBrave, ddg: FakeDuckDuckGo
) -> None:
    clock = FakeClock()
    brave.enqueue(rate_limited_reply(reset="120, 1419704"))
    async with engine_client({**benv, **ddg.env}, clock) as ws:
        first = await ws.asearch("hydrogen", cache="off")
        second = await ws.asearch("hydrogen", cache="off")
        await clock.sleep(121)
        third = await ws.asearch("hydrogen", cache="off")
    assert first.provider == second.provider == "duckduckgo"
    assert first.attempts[0].error_kind == "rate_limited" and first.attempts[0].skipped is None
    skipped = second.attempts[0]
    assert (skipped.provider, skipped.skipped, skipped.error_kind) == ("brave", "cooldown", "rate_limited")
    assert skipped.until == "2026-11-30T12:02:00Z"  # NOW + the 120 s Brave named
    assert third.provider == "brave"
    assert len(brave.requests) == 2  # the skipped search cost no request


async def test_without_a_hint_the_backoff_doubles(config_dir: Path, ddg: FakeDuckDuckGo) -> None:
    clock = FakeClock()
    settings(config_dir, '[pacing]\nduckduckgo = "off"\n')  # no waits but the ones asked for
    with FakeBrave() as brave:
        body = {"error": {"code": "RATE_LIMITED", "detail": "slow down", "status": 429}}
        brave.enqueue(Reply(429, body), Reply(429, body))
        env = {**key_env("brave", config_dir, BRAVE_KEY), **brave.env, **ddg.env}
        async with engine_client(env, clock) as ws:
            await ws.asearch("a", cache="off")
            until = [(await ws.asearch("b", cache="off")).attempts[0].until]
            await clock.sleep(61)
            await ws.asearch("c", cache="off")  # asked again: a second 429
            until.append((await ws.asearch("d", cache="off")).attempts[0].until)
    assert until == ["2026-11-30T12:01:00Z", "2026-11-30T12:03:01Z"]  # 60 s, then 120 s after the second


async def test_a_spent_quota_is_skipped_for_the_reset_it_names(
    benv: dict[str, str], brave: FakeBrave, ddg: FakeDuckDuckGo
) -> None:
    brave.enqueue(quota_limited_reply())
    async with engine_client({**benv, **ddg.env}, FakeClock()) as ws:
        await ws.asearch("q1", cache="off")
        skipped = (await ws.asearch("q2", cache="off")).attempts[0]
    assert (skipped.skipped, skipped.error_kind) == ("cooldown", "quota")
    assert skipped.until == "2026-12-01T12:00:00Z"  # Brave's monthly reset header: 86400 s


async def test_a_spent_quota_is_the_credentials_own(config_dir: Path, ddg: FakeDuckDuckGo) -> None:
    # A quota is an account's: one agent's key out of credits kept every process sharing the
    # store (other keys, or the same client given a key with credits) off Brave for the day.
    clock = FakeClock()
    store = MemoryStore(clock)
    with FakeBrave() as brave:
        spent = {**key_env("brave", config_dir, "spent-key"), **brave.env, **ddg.env}
        other = {**spent, "BRAVE_API_KEY": "other-key"}
        brave.enqueue(quota_limited_reply())
        async with engine_client(spent, clock, store=store) as ws:
            assert (await ws.asearch("q1", cache="off")).attempts[0].error_kind == "quota"
            skipped = (await ws.asearch("q2", cache="off")).attempts[0]
            assert (skipped.skipped, skipped.error_kind, skipped.until) == ("cooldown", "quota", "2026-12-01T12:00:00Z")
            assert await ws.provider_health() == {"brave": "cooling down until 2026-12-01T12:00:00Z (quota)"}
        async with engine_client(other, clock, store=store) as ws:
            assert (await ws.asearch("q3", cache="off")).provider == "brave"  # asked at once
            assert await ws.provider_health() == {}
        async with engine_client(spent, clock, store=store) as ws:  # the success said nothing of this key
            assert (await ws.asearch("q4", cache="off")).attempts[0].skipped == "cooldown"
        assert len(brave.requests) == 2
        brave.enqueue(rate_limited_reply(reset="600, 1419704"))
        async with engine_client(other, clock, store=store) as ws:  # the provider's own state, beside it
            await ws.asearch("q5", cache="off")
        async with engine_client(spent, clock, store=store) as ws:
            shown = (await ws.provider_health())["brave"]
            assert shown.startswith("cooling down until 2026-11-30T12:10:")  # 600 s after q5
            assert shown.endswith(" (rate_limited); its key ran out of quota until 2026-12-01T12:00:00Z")
        await clock.sleep(86_401)  # Brave's reset has come
        async with engine_client(spent, clock, store=store) as ws:
            assert (await ws.asearch("q6", cache="off")).provider == "brave"
        assert len(brave.requests) == 4


async def test_a_refused_key_is_skipped_until_the_key_changes(config_dir: Path, ddg: FakeDuckDuckGo) -> None:
    clock = FakeClock()
    with FakeBrave(valid_keys={"good-key"}) as brave:
        env = {**key_env("brave", config_dir, "bad-key"), **brave.env, **ddg.env}
        store = MemoryStore(clock)
        async with engine_client(env, clock, store=store) as ws:
            assert (await ws.asearch("k1", cache="off")).attempts[0].error_kind == "auth"
            skipped = (await ws.asearch("k2", cache="off")).attempts[0]
            assert (skipped.skipped, skipped.error_kind, skipped.until) == ("cooldown", "auth", None)
        async with engine_client({**env, "BRAVE_API_KEY": "good-key"}, clock, store=store) as ws:
            assert (await ws.asearch("k3", cache="off")).provider == "brave"
            assert await ws.provider_health() == {}  # this client's key was not refused
        assert len(brave.requests) == 2
        # Another process still on the refused key (the store is shared): the good key's success
        # said nothing about it, so it is not asked again.
        async with engine_client(env, clock, store=store) as ws:
            again = (await ws.asearch("k4", cache="off")).attempts[0]
            assert (again.skipped, again.error_kind) == ("cooldown", "auth")
            assert await ws.provider_health() == {"brave": "skipped until its key changes (the credential was refused)"}
        assert len(brave.requests) == 2


async def test_a_key_refused_in_one_process_keeps_the_rate_limit_another_met(
    config_dir: Path, ddg: FakeDuckDuckGo
) -> None:
    """Refusals are per credential, beside the provider's own state: a 429 recorded after
    a refusal keeps the refusal, and the refused key's next search keeps the 429's cooldown."""
    clock = FakeClock()
    store = MemoryStore(clock)
    with FakeBrave(valid_keys={"good-key"}) as brave:
        bad = {**key_env("brave", config_dir, "bad-key"), **brave.env, **ddg.env}
        good = {**bad, "BRAVE_API_KEY": "good-key"}
        async with engine_client(bad, clock, store=store) as ws:
            assert (await ws.asearch("q1", cache="off")).attempts[0].error_kind == "auth"
        brave.enqueue(rate_limited_reply(reset="600, 1419704"))
        async with engine_client(good, clock, store=store) as ws:
            assert (await ws.asearch("q2", cache="off")).attempts[0].error_kind == "rate_limited"
            cooled = (await ws.asearch("q3", cache="off")).attempts[0]
            assert (cooled.skipped, cooled.error_kind) == ("cooldown", "rate_limited")
            assert (await ws.provider_health())["brave"] == "cooling down until 2026-11-30T12:10:00Z (rate_limited)"
        async with engine_client(bad, clock, store=store) as ws:
            refused = (await ws.asearch("q4", cache="off")).attempts[0]
            assert (refused.skipped, refused.error_kind) == ("cooldown", "auth")
            shown = (await ws.provider_health())["brave"]
            assert shown == "cooling down until 2026-11-30T12:10:00Z (rate_limited); its key was refused"
        await clock.sleep(601)
        async with engine_client(good, clock, store=store) as ws:
            assert (await ws.asearch("q5", cache="off")).provider == "brave"  # the cooldown is over
        async with engine_client(bad, clock, store=store) as ws:
            assert (await ws.asearch("q6", cache="off")).attempts[0].skipped == "cooldown"  # still refused
        assert len(brave.requests) == 3  # q1 (401), q2 (429), q5
        await clock.sleep(86_400)  # a refusal is remembered for a day
        async with engine_client(bad, clock, store=store) as ws:
            assert (await ws.asearch("q7", cache="off")).attempts[0].error_kind == "auth"
        assert len(brave.requests) == 4


def test_a_refusal_older_than_a_day_is_not_shown_beside_a_long_cooldown() -> None:
    """A quota record can live a month (Brave's monthly reset); a refusal it carries lasts a day."""
    from websearch._engine._health import describe, iso

    now = 1_800_000_000.0
    record = {"kind": "quota", "until": now + 30 * 86400, "refused": {"fp": [now - 90_000, "refused"]}}
    assert describe(record, "fp", now) == f"cooling down until {iso(now + 30 * 86400)} (quota)"
    record["refused"] = {"fp": [now - 60, "refused"]}
    assert describe(record, "fp", now) == f"cooling down until {iso(now + 30 * 86400)} (quota); its key was refused"
    assert describe({"refused": {"fp": [now - 60, "refused"]}}, "other", now) is None


def test_a_failure_streak_is_counted_in_words_that_agree() -> None:
    from websearch._engine._health import describe

    assert describe({"kind": "timeout", "fails": 1}, "fp", 0.0) == "1 failure in a row (timeout)"  # not "1 failures"
    assert describe({"kind": "timeout", "fails": 3}, "fp", 0.0) == "3 failures in a row (timeout)"


async def test_providers_reset_forgets_the_refused_keys_too(benv: dict[str, str], brave: FakeBrave) -> None:
    brave.valid_keys = {"another-key"}
    clock = FakeClock()
    async with engine_client(benv, clock) as ws:
        assert (await ws.asearch("r1", cache="off")).attempts[0].error_kind == "auth"
        assert "brave" in await ws.provider_health()
        await ws.reset_health("brave")
        assert await ws.provider_health() == {}
        assert (await ws.asearch("r2", cache="off")).attempts[0].skipped is None
    assert len(brave.requests) == 2


async def test_a_refusal_recorded_by_an_earlier_version_is_still_honoured(
    benv: dict[str, str], brave: FakeBrave
) -> None:
    """A record of the earlier shape (one refused credential as `fp`) lives a day in a store."""
    clock = FakeClock()
    store = MemoryStore(clock)
    async with engine_client(benv, clock, store=store) as ws:
        assert (await ws.asearch("e1", cache="off")).provider == "brave"
        fingerprint = credential_fingerprint(ws.lineup.info("brave"), ws._context(with_transport=False))
    earlier = {"kind": "auth", "until": None, "fp": fingerprint, "reason": "refused"}
    await store.set("health:brave", json.dumps(earlier).encode(), 3600)
    async with engine_client(benv, clock, store=store) as ws:
        assert (await ws.asearch("e2", cache="off")).attempts[0].skipped == "cooldown"
    assert len(brave.requests) == 1


async def test_repeated_outages_open_the_circuit_then_one_probe(
    benv: dict[str, str], brave: FakeBrave, ddg: FakeDuckDuckGo
) -> None:
    clock = FakeClock()
    down = Reply(503, "Service Unavailable")
    brave.enqueue(*[down] * 5)
    async with engine_client({**benv, **ddg.env}, clock) as ws:
        for i in range(5):
            assert (await ws.asearch(f"outage {i}", cache="off")).attempts[0].skipped is None
        open_ = (await ws.asearch("outage 5", cache="off")).attempts[0]
        assert (open_.skipped, open_.error_kind) == ("circuit_open", "unavailable")
        assert "circuit open until" in (await ws.provider_health())["brave"]
        await clock.sleep(61)
        probe = await ws.asearch("outage 6", cache="off")  # one probe, which succeeds
        assert probe.provider == "brave"
        assert await ws.provider_health() == {}
    assert len(brave.requests) == 6


async def test_a_half_open_circuit_is_probed_by_one_search_of_the_process(
    benv: dict[str, str], brave: FakeBrave, ddg: FakeDuckDuckGo
) -> None:
    # The probe's lease was the engine's: every search of the process held it, and eight at once
    # sent eight requests to a provider just back from an outage.
    clock = FakeClock()
    brave.enqueue(*[Reply(503, "Service Unavailable")] * 5, Reply(200, _brave_body("probe"), delay=0.3))
    async with engine_client({**benv, **ddg.env}, clock) as ws:
        for i in range(5):
            await ws.asearch(f"outage {i}", cache="off")
        await clock.sleep(61)
        responses = await asyncio.gather(*(ws.asearch(f"after {i}", cache="off") for i in range(8)))
    assert len(brave.requests) == 6  # five outages, one probe
    assert sorted(r.provider for r in responses) == ["brave"] + ["duckduckgo"] * 7
    skipped = [r.attempts[0].skipped for r in responses if r.provider == "duckduckgo"]
    assert skipped == ["circuit_open"] * 7


async def test_an_offline_machine_opens_no_circuit(config_dir: Path, ddg: FakeDuckDuckGo) -> None:
    """Five searches from a machine whose lookups fail opened the circuit of every provider it
    tried, for every machine sharing the store; a refused connection still counts."""
    env = {**key_env("brave", config_dir, "k" * 20), **ddg.env}
    store = MemoryStore(FakeClock())
    offline = {**env, "WEBSEARCH_BRAVE_BASE_URL": "http://[::1%25nosuchif]:9"}
    async with engine_client(offline, FakeClock(), store=store, providers=["brave", "duckduckgo"]) as ws:
        for i in range(6):
            attempt = (await ws.asearch(f"offline {i}", cache="off")).attempts[0]
            assert (attempt.error_kind, attempt.skipped) == ("connection", None)  # asked every time
        assert await ws.provider_health() == {}
    refused = {**env, "WEBSEARCH_BRAVE_BASE_URL": "http://127.0.0.1:1"}
    async with engine_client(refused, FakeClock(), store=store, providers=["brave", "duckduckgo"]) as ws:
        for i in range(5):
            await ws.asearch(f"refused {i}", cache="off")
        assert (await ws.asearch("refused 5", cache="off")).attempts[0].skipped == "circuit_open"


async def test_a_deadline_too_short_for_the_provider_leaves_its_health_alone(
    benv: dict[str, str], brave: FakeBrave
) -> None:
    # One agent allowing 0.2 s opened Brave's circuit for every agent sharing the store: each
    # cut attempt counted as a timeout of Brave's (a stress run with 50 ms deadlines saw it).
    brave.enqueue(*[Reply(200, _brave_body("impatient"), delay=1.0)] * 6)
    async with engine_client(benv, FakeClock()) as ws:
        for i in range(6):
            (attempt,) = (await ws.asearch(f"impatient {i}", cache="off", deadline=0.2)).attempts
            assert (attempt.error_kind, attempt.skipped) == ("timeout", None)  # asked every time
        assert await ws.provider_health() == {}
    assert len(brave.requests) == 6


async def test_closing_a_client_under_searches_in_flight_cancels_them_and_blames_no_provider(
    benv: dict[str, str], brave: FakeBrave
) -> None:
    # An agent process shutting down closed its client under five searches: each ended as "Brave
    # request failed: the server closed the connection without a complete response", and the five
    # opened Brave's circuit for every process sharing the store.
    clock = FakeClock()
    store = MemoryStore(clock)
    brave.enqueue(*[Reply(200, _brave_body("slow"), delay=2.0)] * 5)
    for i in range(5):
        ws = engine_client(benv, clock, store=store)
        search = asyncio.ensure_future(ws.asearch(f"in flight {i}", cache="off"))
        await eventually(lambda n=i: len(brave.requests) == n + 1)  # the request is out
        await ws.aclose()
        with pytest.raises(asyncio.CancelledError):
            await search
    async with engine_client(benv, clock, store=store) as ws:
        assert await ws.provider_health() == {}
    assert len(brave.requests) == 5


async def test_closing_a_client_under_a_shared_flight_cancels_its_followers_too(
    benv: dict[str, str], brave: FakeBrave
) -> None:
    # The leader's search ended cancelled; its follower led the same search again, on a session
    # made after the close, which nothing closed (aiohttp said so at exit).
    brave.enqueue(*[Reply(200, _brave_body("shared"), delay=2.0)] * 2)
    ws = engine_client(benv, FakeClock())
    leader = asyncio.ensure_future(ws.asearch("shared"))
    follower = asyncio.ensure_future(ws.asearch("shared"))
    await eventually(lambda: len(brave.requests) == 1)
    await ws.aclose()
    for search in (leader, follower):
        with pytest.raises(asyncio.CancelledError):
            await search
    assert len(brave.requests) == 1


def test_closing_a_client_under_a_blocking_search_cancels_it(benv: dict[str, str], brave: FakeBrave) -> None:
    import concurrent.futures
    import threading

    brave.enqueue(Reply(200, _brave_body("slow"), delay=2.0))
    ws = engine_client(benv, FakeClock())
    ended: list[BaseException] = []

    def search() -> None:
        try:
            ws.search("in flight", cache="off")
        except BaseException as exc:  # what the caller of `search` meets
            ended.append(exc)

    searching = threading.Thread(target=search)
    searching.start()
    deadline = time.monotonic() + 10
    while not brave.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    ws.close()
    searching.join(10)
    assert [type(exc) for exc in ended] == [concurrent.futures.CancelledError]


def test_closing_a_client_ends_every_blocking_search_on_its_loop(benv: dict[str, str]) -> None:
    """A search the close does not cut (here, on a transport of the caller's whose answer never
    comes) ends cancelled too. Before, the private loop stopped with its task pending, and the
    caller of `search` waited for ever (seen under load with a request the close had cut, whose
    end had not run yet when the loop stopped)."""
    import concurrent.futures
    import threading

    from websearch.testing import MockTransport

    asked = threading.Event()

    async def never(provider: str, request: Any) -> Any:
        asked.set()
        await asyncio.Event().wait()

    ws = make_client(env=benv, transport=MockTransport(never), providers=["brave"])
    ended: list[BaseException] = []

    def search(query: str) -> None:
        try:
            ws.search(query, cache="off", deadline=60)
        except BaseException as exc:
            ended.append(exc)

    searching = [threading.Thread(target=search, args=(f"waiting {i}",)) for i in range(2)]
    for thread in searching:
        thread.start()
    assert asked.wait(10)
    time.sleep(0.1)  # both in flight
    started = time.monotonic()
    ws.close()
    for thread in searching:
        thread.join(10)
    assert [type(exc) for exc in ended] == [concurrent.futures.CancelledError] * 2
    assert time.monotonic() - started < 5


async def test_a_request_timeout_too_short_for_the_provider_leaves_its_health_alone(
    benv: dict[str, str], brave: FakeBrave
) -> None:
    # The same agent, impatient through its request timeout (`--timeout 1`, `[http] timeout`)
    # instead of its deadline, opened Brave's circuit after five searches.
    brave.enqueue(*[Reply(200, _brave_body("impatient"), delay=1.0)] * 6)
    async with engine_client(benv, FakeClock(), timeout=0.2) as ws:
        for i in range(6):
            (attempt,) = (await ws.asearch(f"impatient {i}", cache="off")).attempts
            assert (attempt.error_kind, attempt.skipped) == ("timeout", None)
            assert attempt.error == "Brave did not answer within 0.2 s"
        assert await ws.provider_health() == {}
    assert len(brave.requests) == 6


async def test_timeouts_count_against_a_provider_given_its_patience_or_its_own_timeout() -> None:
    from websearch._core._context import DeadlineReached
    from websearch._engine._health import PATIENCE, Health
    from websearch.errors import ProviderTimeoutError

    def fingerprint() -> str:
        return "fp"

    def cut(provider: str, given: float) -> DeadlineReached:
        reached = DeadlineReached(provider, "cut")
        reached.given = given
        return reached

    def timed_out(provider: str, given: float) -> ProviderTimeoutError:
        error = ProviderTimeoutError(provider, f"did not answer within {given:g} s")
        error.given = given
        return error

    clock = FakeClock()
    for error, counted in (
        (cut("brave", PATIENCE["search"]), True),  # a fair time to answer in
        (ProviderTimeoutError("brave", "its own timeout"), True),  # the time it had unknown
        (timed_out("brave", PATIENCE["search"]), True),
        (cut("brave", PATIENCE["search"] - 0.1), False),
        (timed_out("brave", 1.0), False),  # a request timeout the caller set short
    ):
        health = Health(MemoryStore(clock), clock)
        for _ in range(5):
            await health.failed(error.provider, error, fingerprint, patience=PATIENCE["search"])
        record = await health.record(error.provider)
        assert (record is not None and record.get("circuit") is True) is counted, error
    answer = Health(MemoryStore(clock), clock)
    for _ in range(5):
        await answer.failed("gemini", cut("gemini", 10.0), fingerprint, patience=PATIENCE["answer"])
    assert await answer.record("gemini") is None  # 10 s is short for an answer engine


async def test_a_skip_says_what_the_provider_did_and_its_whole_reason() -> None:
    # It read "it answered rate_limited (Brave API error (429): ... (RATE_LIMITED); retry after
    # 120 s": the trailing ")" was stripped with the empty "()" it meant to drop.
    from websearch._engine._health import Health
    from websearch.errors import Blocked, QuotaExhausted, RateLimited, UpstreamUnavailable

    clock = FakeClock()

    async def skip_after(*errors: Exception) -> str:
        health = Health(MemoryStore(clock), clock)
        for error in errors:
            await health.failed("brave", error, lambda: "fp")
        skip, _ = await health.check("brave", "Brave", lambda: "fp")
        assert skip is not None
        return skip.message

    said = "Brave API error (429): slow down (RATE_LIMITED)"
    assert await skip_after(RateLimited("brave", said, 429, retry_after=120)) == (
        f"Brave is skipped until 2026-11-30T12:02:00Z: it was rate limited: {said}"
    )
    assert await skip_after(RateLimited("brave", "", 429, retry_after=120)) == (
        "Brave is skipped until 2026-11-30T12:02:00Z: it was rate limited"
    )
    assert (await skip_after(QuotaExhausted("brave", "spent", 429))).endswith(": it ran out of quota: spent")
    assert (await skip_after(Blocked("brave", "a challenge page", 403))).endswith(": it was blocked: a challenge page")
    circuit = await skip_after(*[UpstreamUnavailable("brave", f"down {i}", 503) for i in range(5)])
    assert circuit.endswith(": it keeps failing: down 4")
    long = await skip_after(RateLimited("brave", "x" * 1000, 429))
    assert long.endswith(": " + "x" * 299 + "…")  # a record keeps 300 characters, and says it cut


async def test_an_explicit_provider_cooling_down_goes_to_the_fallback_tier(config_dir: Path, brave: FakeBrave) -> None:
    brave.enqueue(rate_limited_reply(reset="300, 1419704"))
    with FakeFirecrawl() as firecrawl:
        env = {**key_env("brave", config_dir, BRAVE_KEY), **brave.env, **firecrawl.env}
        env["FIRECRAWL_API_KEY"] = FIRECRAWL_KEY
        async with engine_client(env, FakeClock()) as ws:
            await ws.asearch("robotics", provider="brave", cache="off")
            response = await ws.asearch("robotics", provider="brave", cache="off")
    assert response.provider == "firecrawl"
    brave_attempt = response.attempts[0]
    assert (brave_attempt.provider, brave_attempt.skipped) == ("brave", "cooldown")
    assert "skipped until 2026-11-30T12:05:00Z" in (brave_attempt.error or "")
    assert len(brave.requests) == 1


async def test_reset_forgets_a_cooldown(benv: dict[str, str], brave: FakeBrave, ddg: FakeDuckDuckGo) -> None:
    brave.enqueue(rate_limited_reply(reset="600, 1419704"))
    async with engine_client({**benv, **ddg.env}, FakeClock()) as ws:
        await ws.asearch("x", cache="off")
        assert (await ws.provider_health())["brave"] == "cooling down until 2026-11-30T12:10:00Z (rate_limited)"
        await ws.reset_health("brave")
        assert (await ws.asearch("y", cache="off")).provider == "brave"


async def test_a_cooldown_written_by_a_clock_running_ahead_lasts_its_length_from_the_readers_clock(
    benv: dict[str, str], brave: FakeBrave, ddg: FakeDuckDuckGo
) -> None:
    # A process an hour ahead turned a 30 s Retry-After into an hour's cooldown for everyone.
    env = {**benv, **ddg.env}
    ours, ahead = FakeClock(), FakeClock(NOW + timedelta(hours=1))
    store = MemoryStore(ours)
    brave.enqueue(rate_limited_reply(reset="30, 1419704"))
    async with engine_client(env, ahead, store=store) as fast:
        assert (await fast.asearch("a 429", cache="off")).provider == "duckduckgo"
    async with engine_client(env, ours, store=store) as ws:
        skipped = await ws.asearch("held back", cache="off")
        assert (skipped.attempts[0].skipped, skipped.attempts[0].until) == ("cooldown", "2026-11-30T12:00:30Z")
        await ours.sleep(31)
        again = await ws.asearch("asked again", cache="off")
    assert again.provider == "brave"
    assert len(brave.requests) == 2


# -- pacing ----------------------------------------------------------------------------------


async def test_pacing_spaces_a_providers_requests(
    benv: dict[str, str], brave: FakeBrave, config_dir: Path, ddg: FakeDuckDuckGo
) -> None:
    settings(config_dir, '[pacing]\nbrave = "30/min"\nduckduckgo = "off"\n')
    clock = FakeClock()
    async with engine_client({**benv, **ddg.env}, clock) as ws:
        for i in range(3):
            assert (await ws.asearch(f"paced {i}", cache="off")).provider == "brave"
        assert [round(s, 3) for s in clock.sleeps] == [2.0, 2.0]  # 30/min: one request every 2 s
        short = await ws.asearch("paced 3", cache="off", deadline=1.5)  # the slot is 2 s away: past the deadline
    assert short.provider == "duckduckgo"
    assert (short.attempts[0].provider, short.attempts[0].skipped) == ("brave", "paced")
    assert len(brave.requests) == 3


async def test_a_search_behind_others_for_a_pacing_slot_moves_on_at_once(
    benv: dict[str, str], brave: FakeBrave, config_dir: Path, ddg: FakeDuckDuckGo
) -> None:
    # Queued for the slots, searches waited their deadline away (a fan-out's soft deadline then
    # cancelled them having asked nobody): only the next slot is waited for.
    settings(config_dir, '[pacing]\nbrave = "1/s"\nduckduckgo = "off"\n')
    clock = StillClock()
    async with engine_client({**benv, **ddg.env}, clock) as ws:
        responses = await asyncio.gather(*(ws.asearch(f"queued {i}", cache="off") for i in range(4)))
    assert [r.provider for r in responses] == ["brave", "brave", "duckduckgo", "duckduckgo"]
    assert clock.sleeps == [1.0]  # the next slot, waited for once; none behind it
    for late in responses[2:]:
        assert (late.attempts[0].provider, late.attempts[0].skipped) == ("brave", "paced")
        assert late.attempts[0].error == (
            "Brave is skipped: its next request slot (1/s) is taken by other searches queued before this one"
        )
    assert len(brave.requests) == 2


async def test_a_flight_of_identical_searches_waits_for_its_pacing_slot_once(
    benv: dict[str, str], brave: FakeBrave, config_dir: Path
) -> None:
    settings(config_dir, '[pacing]\nbrave = "1/s"\n')
    clock = StillClock()
    async with engine_client(benv, clock) as ws:
        await ws.asearch("the slot before", cache="off")
        responses = await asyncio.gather(*(ws.asearch("one flight") for _ in range(5)))
    assert all(r.provider == "brave" for r in responses)
    assert clock.sleeps == [1.0]  # the leader's wait; its followers share its answer
    assert len(brave.requests) == 2


async def test_brave_is_paced_at_the_rate_its_free_plan_key_reports(
    benv: dict[str, str], brave: FakeBrave, config_dir: Path, ddg: FakeDuckDuckGo
) -> None:
    # No [pacing] entry: Brave's answers say the key's plan allows one request a second
    # (X-RateLimit-Limit: 1, 15000), and concurrent searches on a free key drew 429s.
    settings(config_dir, '[pacing]\nduckduckgo = "off"\n')
    brave.plan = (1, 15000)
    clock = StillClock()
    store = MemoryStore(clock)
    async with engine_client({**benv, **ddg.env}, clock, store=store) as ws:
        assert (await ws.asearch("the first answer", cache="off")).provider == "brave"
    async with engine_client({**benv, **ddg.env}, clock, store=store) as other:  # another process, same store
        responses = await asyncio.gather(*(other.asearch(f"free plan {i}", cache="off") for i in range(2)))
    assert [r.provider for r in responses] == ["brave", "duckduckgo"]
    assert clock.sleeps == [1.0]  # the next slot is a second after the first answer's; the other moves on
    assert (responses[1].attempts[0].provider, responses[1].attempts[0].skipped) == ("brave", "paced")
    assert len(brave.requests) == 2


async def test_a_pacing_setting_of_off_wins_over_the_plan_brave_reports(
    benv: dict[str, str], brave: FakeBrave, config_dir: Path
) -> None:
    settings(config_dir, '[pacing]\nbrave = "off"\n')
    brave.plan = (1, 15000)
    clock = StillClock()
    async with engine_client(benv, clock) as ws:
        await ws.asearch("the first answer", cache="off")
        responses = await asyncio.gather(*(ws.asearch(f"unpaced {i}", cache="off") for i in range(3)))
    assert [r.provider for r in responses] == ["brave"] * 3
    assert clock.sleeps == []
    assert len(brave.requests) == 4


async def test_brave_is_paced_at_its_upgraded_plans_rate(
    benv: dict[str, str], brave: FakeBrave, config_dir: Path
) -> None:
    brave.plan = (1, 15000)
    clock = FakeClock()
    async with engine_client(benv, clock) as ws:
        await ws.asearch("learns the free plan", cache="off")
        brave.plan = (50, 20_000_000)  # the key is upgraded
        await ws.asearch("waits a second, learns 50/s", cache="off")
        for i in range(5):  # each waits its slot; none is taken for one behind others (microsecond clocks)
            assert (await ws.asearch(f"at 50/s {i}", cache="off")).provider == "brave"
    assert [round(s, 3) for s in clock.sleeps] == [1.0] + [0.02] * 5
    assert len(brave.requests) == 7


async def test_a_cold_process_loads_the_http_stack_before_it_takes_a_pacing_slot(
    benv: dict[str, str], brave: FakeBrave, config_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A slot is a time to send at. Processes starting together each took a slot, then spent up
    # to 0.4 s loading aiohttp: at 2/s their first requests reached the provider 0.07-0.25 s
    # apart, which a strict rate limit (Brave's free tier: 1/s) answers with a 429.
    import concurrent.futures
    import importlib
    import threading

    from websearch._core._clock import SystemClock
    from websearch._http import _deferred

    loading: concurrent.futures.Future[Any] = concurrent.futures.Future()
    monkeypatch.setattr(_deferred, "_loading", loading)  # the import, taking 0.3 s
    threading.Timer(0.3, loading.set_result, [importlib.import_module(_deferred.MODULE)]).start()
    arrived: list[float] = []
    answer = brave.default_reply

    def stamped(request: Any) -> Reply:  # when each request reached the fake
        arrived.append(time.monotonic())
        return answer(request)

    monkeypatch.setattr(brave, "default_reply", stamped)
    settings(config_dir, '[pacing]\nbrave = "2/s"\n')
    transport = _deferred.DeferredTransport(timeout=30.0, labels={})
    async with engine_client(benv, SystemClock(), transport=transport) as ws:
        first, second = await asyncio.gather(*(ws.asearch(f"cold start {i}", cache="off") for i in range(2)))
    assert first.provider == second.provider == "brave"
    assert arrived[1] - arrived[0] >= 0.45  # 2/s: half a second apart, as the slots were


async def test_a_paced_search_whose_http_stack_failed_to_load_fails_its_attempt(
    benv: dict[str, str], config_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ready` raises nothing (as `SendsRequests` says): a failed import fails the attempt's
    request, as it does without pacing, and the search answers with it (the engine's wait for
    the transport once let the ImportError out of the search itself)."""
    import concurrent.futures

    from websearch._core._clock import SystemClock
    from websearch._http import _deferred

    failed: concurrent.futures.Future[Any] = concurrent.futures.Future()
    failed.set_exception(ImportError("no aiohttp here"))
    monkeypatch.setattr(_deferred, "_loading", failed)
    settings(config_dir, '[pacing]\nbrave = "2/s"\n')
    transport = _deferred.DeferredTransport(timeout=30.0, labels={})
    async with engine_client(benv, SystemClock(), transport=transport, providers=["brave"]) as ws:
        response = await ws.asearch("cold start", cache="off")
    (attempt,) = response.attempts
    assert (response.ok, attempt.provider, attempt.error_kind) == (False, "brave", "internal")


def test_pacing_rates_are_checked(config_dir: Path, benv: dict[str, str]) -> None:
    from websearch.errors import ConfigError

    settings(config_dir, '[pacing]\nbrave = "fast"\n')
    with pytest.raises(ConfigError) as info:
        make_client(env=benv, engine=True)
    assert str(info.value) == (
        'setting pacing.brave: a pacing rate must read like "1/s", "30/min" or "100/h"; got \'fast\''
    )
    settings(config_dir, '[pacing]\nbrave = "off"\nexa = "2/s"\n[search]\ndeadline = 10\nhedge = 1.5\n')
    make_client(env=benv, engine=True)
    settings(config_dir, "[search]\ndeadline = 0\n")
    with pytest.raises(ConfigError, match=r"setting search\.deadline must be a positive number; got 0"):
        make_client(env=benv)


# -- deadline and hedging --------------------------------------------------------------------


async def test_a_busy_shared_store_holds_no_search_past_its_deadline(
    benv: dict[str, str], brave: FakeBrave, tmp_path: Path
) -> None:
    # A burst of 500 on SQLite's one writer thread (and on Redis's pooled connections) held
    # searches given 1 s for up to 1.4 s (3.2 s on Redis): each store call waited its turn.
    from websearch._core._clock import SystemClock
    from websearch._state import SqliteStore

    clock = SystemClock()
    store = SqliteStore(tmp_path / "state.db", clock)
    async with make_client(env=benv, clock=clock, engine=True, store=store) as ws:
        await ws.asearch("opens the store")
        busy = asyncio.ensure_future(store._run(lambda db: time.sleep(1.2)))  # the writer, taken
        await asyncio.sleep(0.05)
        started = time.monotonic()
        response = await ws.asearch("a busy store", deadline=0.6)
        took = time.monotonic() - started
        assert not busy.done()  # the answer's cache write is still queued behind it
    assert took < 0.6 + 0.1
    assert response.ok  # busy is not down, but it was not reached in time: the one notice says so
    assert messages(response) == (
        "the shared state store did not answer in time; this search used in-process state only",
    )
    async with make_client(env=benv, clock=clock, engine=True, store=SqliteStore(tmp_path / "state.db", clock)) as ws:
        again = await ws.asearch("a busy store")
    assert again.cached  # written after the search returned; closing the client waited for it
    assert len(brave.requests) == 2


async def test_a_store_held_locked_costs_a_search_half_its_deadline_not_its_answer(
    benv: dict[str, str], brave: FakeBrave, tmp_path: Path
) -> None:
    # Another process holding the file locked took every short search's whole deadline in the
    # cache lookup: "Brave was not asked: the search's deadline had passed", and no notice.
    import sqlite3

    from websearch._core._clock import SystemClock
    from websearch._state import SqliteStore

    path = tmp_path / "state.db"
    async with make_client(env=benv, engine=True, store=SqliteStore(path, SystemClock())) as ws:
        await ws.asearch("warm the file", cache="off")  # lays the file out
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE meta SET n = n")
    async with make_client(env=benv, engine=True, store=SqliteStore(path, SystemClock())) as ws:
        try:
            started = time.monotonic()
            response = await ws.asearch("held", deadline=1.0)
            elapsed = time.monotonic() - started
        finally:
            holder.execute("ROLLBACK")
            holder.close()  # before the client closes, which waits for the writes still queued
    assert response.ok and response.attempts[0].provider == "brave", response.error
    assert elapsed <= 1.1, elapsed
    assert len(brave.requests) == 2


async def test_the_hit_counts_are_written_outside_the_deadline_of_the_search_that_started_their_timer(
    benv: dict[str, str], brave: FakeBrave, tmp_path: Path
) -> None:
    # The timer that writes the counts captures the context of the search that set it: under
    # that search's long-past deadline every write would have gone to memory, never the file.
    from websearch._core._clock import SystemClock
    from websearch._state import SqliteStore

    clock = SystemClock()
    async with make_client(env=benv, clock=clock, engine=True, store=SqliteStore(tmp_path / "state.db", clock)) as ws:
        await ws.asearch("counted", deadline=0.3)
        await asyncio.sleep(1.5)  # the counts are written once a second, off the search's path
        other = SqliteStore(tmp_path / "state.db", clock)
        misses = await other.get("stats:misses")
        await other.aclose()
    assert misses == b"1"


async def test_the_deadline_holds_under_a_hung_provider(
    benv: dict[str, str], brave: FakeBrave, ddg: FakeDuckDuckGo
) -> None:
    brave.enqueue(Reply(hang=True))
    async with make_client(env={**benv, **ddg.env}, engine=True, store=MemoryStore(FakeClock())) as ws:
        started = time.monotonic()
        response = await ws.asearch("stuck", deadline=1.0, cache="off")
        elapsed = time.monotonic() - started
    assert elapsed <= 1.1, elapsed
    assert response.attempts[0].error_kind == "timeout"
    assert response.attempts[0].error == "Brave did not answer before the search's deadline"
    assert response.error is not None or response.provider == "duckduckgo"


async def test_a_search_sharing_a_flight_with_a_longer_deadline_keeps_its_own(
    benv: dict[str, str], brave: FakeBrave
) -> None:
    # The deadline is not part of the cache key: a search may wait on a flight given more time.
    brave.enqueue(Reply(200, _brave_body("patient"), delay=1.0))
    async with make_client(env=benv, engine=True, store=MemoryStore(FakeClock())) as ws:
        leader = asyncio.create_task(ws.asearch("patient", deadline=10))
        await eventually(lambda: brave.requests)
        started = time.monotonic()
        hurried = await ws.asearch("patient", deadline=0.3)
        elapsed = time.monotonic() - started
        led = await leader
        again = await ws.asearch("patient")
    assert elapsed <= 0.4, elapsed
    assert hurried.error is not None and [a.skipped for a in hurried.attempts] == ["deadline"]
    assert led.ok and again.cached and len(brave.requests) == 1  # the flight ran on, for its own caller


async def test_a_search_sharing_a_flight_with_a_shorter_deadline_asks_again_with_its_own(
    benv: dict[str, str], brave: FakeBrave
) -> None:
    # The follower took the leader's failure, the leader's deadline passing, for its own, though
    # it had 20 s; across processes it led a walk of its own once the lease was free.
    brave.enqueue(Reply(200, _brave_body("hurried"), delay=1.0), Reply(200, _brave_body("hurried")))
    async with make_client(env=benv, engine=True, store=MemoryStore(FakeClock())) as ws:
        leader = asyncio.create_task(ws.asearch("hurried", deadline=0.5))
        await eventually(lambda: brave.requests)
        patient = await ws.asearch("hurried", deadline=20)
        led = await leader
    assert led.error is not None and led.attempts[0].error_kind == "timeout"
    assert patient.ok and not patient.cached and len(brave.requests) == 2


async def test_a_flight_that_failed_for_its_own_reasons_is_not_asked_again_by_its_followers(
    benv: dict[str, str], brave: FakeBrave
) -> None:
    brave.enqueue(Reply(503, "down", delay=0.5), Reply(200, _brave_body("down")))
    async with make_client(env=benv, engine=True, store=MemoryStore(FakeClock())) as ws:
        leader = asyncio.create_task(ws.asearch("down", deadline=5))
        await eventually(lambda: brave.requests)
        follower = await ws.asearch("down", deadline=20)
        await leader
    assert follower.error is not None and len(brave.requests) == 1  # the same failure, shared


async def test_the_deadline_holds_over_every_request_of_a_search_made_of_requests(
    tenv: dict[str, str], tavily: FakeTavily
) -> None:
    # Tavily's retry without time_range is a second request: with no timer around the search,
    # it is cut to what remains of the deadline, like the first.
    tavily.enqueue(Reply(200, tavily_results_body("stuck", 0)), Reply(hang=True))
    async with make_client(env=tenv, engine=True, store=MemoryStore(FakeClock())) as ws:
        started = time.monotonic()
        response = await ws.asearch("stuck", provider="tavily", recency="week", deadline=0.6, cache="off")
        elapsed = time.monotonic() - started
    assert elapsed <= 0.7, elapsed
    assert [("time_range" in r.json()) for r in tavily.requests] == [True, False]
    assert response.attempts[0].error_kind == "timeout"
    assert response.attempts[0].error == "Tavily did not answer before the search's deadline"


async def test_the_deadline_holds_over_a_transport_that_ignores_request_timeouts(benv: dict[str, str]) -> None:
    from websearch.testing import MockTransport

    async def hang(provider: str, request: Any) -> Any:
        await asyncio.sleep(30)

    async with make_client(env=benv, transport=MockTransport(hang), providers=["brave"]) as ws:
        started = time.monotonic()
        response = await ws.asearch("stuck", deadline=0.3)
        assert time.monotonic() - started <= 0.4
    assert response.attempts[0].error == "Brave did not answer before the search's deadline"


async def test_the_deadline_holds_with_the_engine_off(benv: dict[str, str], brave: FakeBrave) -> None:
    brave.enqueue(Reply(hang=True))
    async with make_client(env=benv) as ws:
        started = time.monotonic()
        response = await ws.asearch("stuck", deadline=0.5)
        assert time.monotonic() - started <= 0.6
    assert response.error is not None


@pytest.mark.parametrize(
    ("toml", "plain", "deep"),
    [
        ("", 30.0, 120.0),
        # docs/settings.md's own sample: a deadline for plain searches cut Exa's deep modes to 30 s.
        ("[search]\ndeadline = 30\n", 30.0, 120.0),
        ("[search]\ndeadline = 10\n", 10.0, 120.0),
        ("[search]\ndeadline = 200\n", 200.0, 200.0),  # longer than 120: the deep modes get it too
        ("[search]\ndeadline = 10\ndeep_deadline = 45\n", 10.0, 45.0),
    ],
)
def test_the_deep_modes_keep_their_own_deadline(tmp_path: Path, toml: str, plain: float, deep: float) -> None:
    from websearch._core._settings import Settings
    from websearch._engine._engine import Engine

    settings(tmp_path, toml)
    engine = Engine(Settings.load(tmp_path, {}), {}, FakeClock())
    assert engine.deadline_for(SearchParams("q"), None) == plain
    assert engine.deadline_for(SearchParams("q", mode="deep"), None) == deep
    assert engine.deadline_for(SearchParams("q", mode="deep"), 5.0) == 5.0  # the caller's wins


async def test_hedging_starts_the_next_provider_beside_a_slow_one(
    benv: dict[str, str], brave: FakeBrave, ddg: FakeDuckDuckGo
) -> None:
    brave.enqueue(Reply(200, _brave_body("slow"), delay=3.0))
    async with make_client(env={**benv, **ddg.env}, engine=True, store=MemoryStore(FakeClock())) as ws:
        started = time.monotonic()
        response = await ws.asearch("slow", hedge=0.2, cache="off")
        elapsed = time.monotonic() - started
    assert response.provider == "duckduckgo"
    assert elapsed < 2.0, elapsed
    assert [a.provider for a in response.attempts] == ["brave", "duckduckgo"]
    assert response.attempts[0].error_kind == "cancelled"


def test_engine_arguments_are_checked(benv: dict[str, str]) -> None:
    from websearch.errors import InvalidSearchParams

    with make_client(env=benv) as ws:
        for kwargs, message in (
            ({"cache": "maybe"}, 'cache must be one of: use, refresh, off; got "maybe"'),
            ({"deadline": 0}, "deadline must be a positive number of seconds; got 0"),
            ({"hedge": float("nan")}, "hedge must be a positive number of seconds; got NaN"),
        ):
            with pytest.raises(InvalidSearchParams) as info:
                ws.search("x", **kwargs)
            assert str(info.value) == message


def test_the_mcp_tool_takes_a_deadline() -> None:
    from websearch._faces._tool import input_schema, parse_arguments
    from websearch.errors import InvalidSearchParams

    prop = input_schema(["brave"])["properties"]["deadline"]
    # 0 is "not given" (a strict model must send some number), so the schema's minimum is 0.
    assert (prop["type"], prop["minimum"], prop["maximum"]) == ("number", 0, 600)
    assert parse_arguments({"query": "q", "deadline": 4.5}, ["brave"]).params["deadline"] == 4.5
    assert "deadline" not in parse_arguments({"query": "q", "deadline": 0}, ["brave"]).params
    with pytest.raises(InvalidSearchParams, match=r"^deadline must be a number from 1 to 600; got 0.2$"):
        parse_arguments({"query": "q", "deadline": 0.2}, ["brave"])


async def test_an_mcp_call_is_bounded_by_its_deadline(
    benv: dict[str, str], brave: FakeBrave, ddg: FakeDuckDuckGo
) -> None:
    from websearch._faces._mcp_server import WebSearchTool

    brave.enqueue(Reply(hang=True))
    async with make_client(env={**benv, **ddg.env}) as ws:
        started = time.monotonic()
        result = await WebSearchTool(ws).call({"query": "stuck", "provider": "brave", "deadline": 1})
        elapsed = time.monotonic() - started
    assert elapsed <= 1.1, elapsed
    assert not result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("SEARCH_FAILED: stuck") and "did not answer before the search's deadline" in text


# -- the command line ------------------------------------------------------------------------


def test_cli_cache_stats_clear_and_the_summary_note(benv: dict[str, str], brave: FakeBrave, tmp_path: Path) -> None:
    env = {**benv, "WEBSEARCH_ENGINE": "on", "WEBSEARCH_CACHE_DIR": str(tmp_path / "cache")}
    assert run_cli(["search", "heat pumps"], env).returncode == 0
    hit = run_cli(["search", "heat pumps"], env)
    assert hit.returncode == 0 and "note: served from the cache" in hit.stderr
    assert run_cli(["search", "heat pumps", "--no-cache"], env).returncode == 0
    assert run_cli(["search", "heat pumps", "--refresh"], env).returncode == 0
    assert len(brave.requests) == 3
    stats = run_cli(["cache", "stats", "--format", "json"], env)
    import json

    numbers = json.loads(stats.stdout)
    assert (numbers["entries"], numbers["hits"], numbers["misses"], numbers["store"]) == (1, 1, 1, "sqlite")
    assert numbers["bytes"] > 0 and numbers["hit_rate"] == 0.5
    text = run_cli(["cache", "stats"], env).stdout.strip()
    assert text == f"1 entry, {numbers['bytes']} bytes in the sqlite store; 1 hit, 1 miss (hit rate 50%)"
    cleared = run_cli(["cache", "clear", "--provider", "brave"], env)
    assert cleared.stdout.strip() == "removed 1 cached answer served by brave"
    assert json.loads(run_cli(["cache", "stats", "--format", "json"], env).stdout)["entries"] == 0


def test_cli_providers_shows_health_and_reset_clears_it(
    benv: dict[str, str], brave: FakeBrave, ddg: FakeDuckDuckGo, tmp_path: Path
) -> None:
    env = {**benv, **ddg.env, "WEBSEARCH_ENGINE": "on", "WEBSEARCH_CACHE_DIR": str(tmp_path / "cache")}
    brave.enqueue(rate_limited_reply(reset="3600, 1419704"))
    assert run_cli(["search", "wind", "--no-cache"], env).returncode == 0
    listing = run_cli(["providers"], env).stdout
    line = next(row for row in listing.splitlines() if " brave " in row)
    assert "[cooling down until" in line and "(rate_limited)]" in line
    reset = run_cli(["providers", "--reset", "brave"], env)
    assert reset.returncode == 0 and "forgot the health record of brave" in reset.stderr
    assert "cooling down" not in reset.stdout


def _state_files(folder: Path) -> list[bytes]:
    files = [path.read_bytes() for path in folder.glob("state.db*")]
    assert files
    return files


def test_a_client_used_from_one_asyncio_run_to_the_next_keeps_its_cache(
    benv: dict[str, str], brave: FakeBrave, tmp_path: Path
) -> None:
    """Each `asyncio.run` ends its loop (cancelling whatever is still pending there): the cache
    write of a search must be done when its answer is handed back."""
    from websearch._state import SqliteStore

    ws = engine_client(benv, FakeClock(), store=SqliteStore(tmp_path / "state.db", FakeClock()))
    first = asyncio.run(ws.asearch("tidal power"))
    second = asyncio.run(ws.asearch("tidal power"))
    ws.close()
    assert first.ok and not first.cached
    assert second.cached and len(brave.requests) == 1


def test_a_loop_closed_after_a_search_leaves_its_answer_and_no_lease_in_the_store(
    benv: dict[str, str], brave: FakeBrave, tmp_path: Path
) -> None:
    """`run_until_complete` then `close` cancels nothing: work still pending in that loop never
    finishes, so a search must have written its answer and let its single-flight lease go
    before it hands the answer back (else another process's identical search waits for it)."""
    from websearch._state import SqliteStore

    ws = engine_client(benv, FakeClock(), store=SqliteStore(tmp_path / "state.db", FakeClock()))
    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(ws.asearch("tidal power")).ok
    finally:
        loop.close()
    other = SqliteStore(tmp_path / "state.db", FakeClock())
    assert asyncio.run(other.usage("flight:")) == (0, 0)
    assert asyncio.run(other.usage("cache:"))[0] == 1


def test_close_after_loops_now_closed_closes_the_last_session_and_writes_the_counts(
    benv: dict[str, str], brave: FakeBrave, tmp_path: Path
) -> None:
    """A client used only from loops of the caller's, each closed after its search, never
    started its private loop: `close` skipped everything then, leaving the last loop's HTTP
    session unclosed (reported when collected) and the hit and miss counts unwritten."""
    from websearch._state import SqliteStore

    ws = engine_client(benv, FakeClock(), store=SqliteStore(tmp_path / "state.db", FakeClock()))
    for i in range(2):
        loop = asyncio.new_event_loop()
        try:
            assert loop.run_until_complete(ws.asearch(f"tidal power {i}")).ok
        finally:
            loop.close()
    session = ws._transport._session  # type: ignore[union-attr]
    assert session is not None and not session.closed
    ws.close()
    assert session.closed
    other = SqliteStore(tmp_path / "state.db", FakeClock())
    assert int(asyncio.run(other.get("stats:misses")) or 0) == 2


def test_a_loop_closed_without_aclose_leaves_no_pending_task_and_its_counts_are_written_later(
    benv: dict[str, str], brave: FakeBrave, caplog: pytest.LogCaptureFixture
) -> None:
    """The hit and miss counts wait for their write on a timer: a loop closed with the write
    still due drops it silently (a pending task would be reported as destroyed), and the counts
    go with the next write."""
    import gc
    import logging

    ws = engine_client(benv, FakeClock())
    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(ws.asearch("tidal power")).ok
        assert loop.run_until_complete(ws.asearch("tidal power")).cached
    finally:
        loop.close()
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        del loop
        gc.collect()
    assert not [r for r in caplog.records if "destroyed" in r.getMessage()]

    async def later() -> dict[str, Any]:
        async with ws:
            return await ws.cache_stats()

    stats = asyncio.run(later())
    assert (stats["hits"], stats["misses"]) == (1, 1)


def _brave_body(query: str) -> Any:
    from websearch.testing.brave import brave_results_body

    return brave_results_body(query, 5)


async def test_the_store_operations_raise_when_the_shared_store_is_out(config_dir: Path, ddg: FakeDuckDuckGo) -> None:
    """A search goes on without the shared store; `cache_stats`, `clear_cache` and
    `reset_health`, which are about that store, say it is out instead of answering for memory."""
    import socket

    from websearch import StoreUnavailable

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once the probe is closed
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), "WEBSEARCH_REDIS_URL": f"redis://127.0.0.1:{port}/0", **ddg.env}
    async with make_client(env=env, engine=True) as client:
        response = await client.asearch("still answered")
        assert response.ok and "the shared state store is unavailable" in response.notices[-1].message
        for call in (client.cache_stats(), client.clear_cache(), client.reset_health("duckduckgo")):
            with pytest.raises(StoreUnavailable, match=r"^connection refused$"):
                await call


def test_the_engine_class_stays_small_enough_to_read() -> None:
    """Issue 31: the engine did five jobs in one class; single-flight, the hit counts and the
    write-behind now live beside it. `Engine` stays under 250 lines, no method over 40."""
    import ast

    import websearch._engine._engine

    tree = ast.parse(Path(websearch._engine._engine.__file__).read_text(encoding="utf-8"))
    (engine,) = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Engine"]
    assert engine.end_lineno is not None and engine.end_lineno - engine.lineno + 1 < 250
    methods = [node for node in engine.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    long = {m.name: m.end_lineno - m.lineno + 1 for m in methods if m.end_lineno and m.end_lineno - m.lineno >= 40}
    assert not long, long
