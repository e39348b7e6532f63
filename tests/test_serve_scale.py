"""Scale-out: two `websearch serve` replicas on loopback sharing a real Redis (the session's
redis-server, its own database) share the cache, cooldowns, single-flight and pacing; and a Redis
stopped mid-load fails no request, `/readyz` says why, and both pick Redis up again."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import redis

from conftest import RedisServer, key_env
from serve_helper import ServeProcess, async_http, http, serve_env, start_all
from websearch.testing import FakeBrave, FakeDuckDuckGo, RecordedRequest, Reply
from websearch.testing.brave import brave_results_body, rate_limited_reply

BRAVE_KEY = "BSA-replicas-secret-3c9d1e"
DB = 15  # the session Redis' database for these tests (the engine's cross-process tests count from 1)
PLAN_DB = 14  # the one of the replicas that learn Brave's pace from its key's plan


class TimedBrave(FakeBrave):
    """Brave's fake, noting when each request it answers by default arrived (monotonic seconds)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []

    def default_reply(self, request: RecordedRequest) -> Reply:
        self.arrivals.append(time.monotonic())
        return super().default_reply(request)


@pytest.fixture(scope="module")
def fakes() -> Iterator[tuple[TimedBrave, FakeDuckDuckGo]]:
    with TimedBrave() as brave, FakeDuckDuckGo() as ddg:
        yield brave, ddg


def _db_url(url: str, db: int = DB) -> str:
    return f"{url.rsplit('/', 1)[0]}/{db}"


def _settings(config_dir: Path) -> Path:
    config_dir.mkdir(mode=0o700, parents=True)
    (config_dir / "settings.toml").write_text('[pacing]\nbrave = "1/s"\nduckduckgo = "off"\n', encoding="utf-8")
    return config_dir


@pytest.fixture(scope="module")
def pair(
    tmp_path_factory: pytest.TempPathFactory, redis_server: str, fakes: tuple[TimedBrave, FakeDuckDuckGo]
) -> Iterator[tuple[ServeProcess, ServeProcess]]:
    config_dir = _settings(tmp_path_factory.mktemp("replicas") / "config")
    env = serve_env(config_dir, *fakes, WEBSEARCH_ENGINE="on", WEBSEARCH_REDIS_URL=_db_url(redis_server))
    env.update(key_env("brave", config_dir, BRAVE_KEY))
    servers = ServeProcess(env), ServeProcess(env)
    try:
        start_all(*servers)
        yield servers
    finally:
        for server in servers:
            server.stop()


@pytest.fixture
def replicas(
    pair: tuple[ServeProcess, ServeProcess], redis_server: str, fakes: tuple[TimedBrave, FakeDuckDuckGo]
) -> tuple[str, str]:
    """Both replicas' URLs, with the shared state and the fakes' records emptied."""
    redis.Redis.from_url(_db_url(redis_server)).flushdb()  # (a db= argument would lose to the URL's /0)
    for fake in fakes:
        fake.requests.clear()
        fake._queue.clear()
    fakes[0].arrivals.clear()
    return pair[0].url, pair[1].url


def search(url: str, **body: Any) -> dict[str, Any]:
    with http(url) as client:
        reply = client.post("/v1/search", json=body)
    assert reply.status_code == 200, reply.text
    answer: dict[str, Any] = reply.json()["response"]
    return answer


def test_a_response_cached_through_one_replica_is_served_by_the_other(
    replicas: tuple[str, str], fakes: tuple[TimedBrave, FakeDuckDuckGo]
) -> None:
    a, b = replicas
    first = search(a, query="shared cache", provider="brave")
    second = search(b, query="shared cache", provider="brave")
    assert (first["provider"], first["cached"]) == ("brave", False)
    assert (second["provider"], second["cached"]) == ("brave", True)
    assert second["sources"] == first["sources"]
    assert len(fakes[0].requests) == 1


def test_a_429_through_one_replica_makes_the_other_skip_the_provider(
    replicas: tuple[str, str], fakes: tuple[TimedBrave, FakeDuckDuckGo]
) -> None:
    brave, _ = fakes
    a, b = replicas
    brave.enqueue(rate_limited_reply(reset="300, 1419704"))
    first = search(a, query="cooling down", cache="off")
    second = search(b, query="cooling down", cache="off")
    assert first["provider"] == second["provider"] == "duckduckgo"
    assert (first["attempts"][0]["provider"], first["attempts"][0]["error_kind"]) == ("brave", "rate_limited")
    skipped = second["attempts"][0]
    assert (skipped["provider"], skipped["skipped"], skipped["error_kind"]) == ("brave", "cooldown", "rate_limited")
    assert len(brave.requests) == 1  # replica B asked Brave nothing
    with http(b) as client:
        assert 'websearch_provider_cooling_down{provider="brave"} 1.0' in client.get("/metrics").text


def test_fifty_identical_searches_over_both_replicas_make_one_upstream_call(
    replicas: tuple[str, str], fakes: tuple[TimedBrave, FakeDuckDuckGo]
) -> None:
    brave, _ = fakes
    brave.enqueue(Reply(200, brave_results_body("one question", 5), delay=1.0))  # long enough to overlap

    async def fifty() -> list[httpx2.Response]:
        async with async_http(replicas[0]) as a, async_http(replicas[1]) as b:
            body = {"query": "one question", "provider": "brave"}
            return await asyncio.gather(*((a, b)[i % 2].post("/v1/search", json=body) for i in range(50)))

    replies = asyncio.run(fifty())
    answers = [r.json()["response"] for r in replies]
    assert [r.status_code for r in replies] == [200] * 50
    assert all(r["error"] is None and r["provider"] == "brave" for r in answers)
    assert len(brave.requests) == 1


def test_brave_paced_at_one_per_second_holds_across_replicas(
    replicas: tuple[str, str], fakes: tuple[TimedBrave, FakeDuckDuckGo]
) -> None:
    brave, _ = fakes

    async def three() -> list[httpx2.Response]:
        async with async_http(replicas[0]) as a, async_http(replicas[1]) as b:
            return await asyncio.gather(
                *(
                    (a, b)[i % 2].post("/v1/search", json={"query": f"paced {i}", "provider": "brave", "cache": "off"})
                    for i in range(3)
                )
            )

    replies = asyncio.run(three())
    responses = [r.json()["response"] for r in replies]
    served = [r for r in responses if r["error"] is None and r["provider"] == "brave"]
    # A search waits for the next slot, not behind another search's: the one a second slot
    # away is served, one further (when the three come together) moves on, paced.
    assert len(served) >= 2
    for passed_over in (r for r in responses if r not in served):
        assert passed_over["attempts"][0]["provider"] == "brave"
        assert passed_over["attempts"][0]["skipped"] == "paced"
    arrivals = sorted(brave.arrivals)
    assert len(arrivals) == len(served)
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    assert min(gaps) >= 0.9, gaps  # 1/s, whichever replica asked


def test_brave_paced_at_its_free_plan_key_reported_rate_across_replicas(
    tmp_path: Path, redis_server: str, fakes: tuple[TimedBrave, FakeDuckDuckGo]
) -> None:
    # No [pacing] entry for Brave: replica A's answer says the key allows one request a second
    # (X-RateLimit-Limit: 1, 15000), and replica B, which Brave has not answered, paces at it.
    brave, ddg = fakes
    paid, brave.plan = brave.plan, (1, 15000)
    config_dir = tmp_path / "config"
    config_dir.mkdir(mode=0o700)
    (config_dir / "settings.toml").write_text('[pacing]\nduckduckgo = "off"\n', encoding="utf-8")
    redis.Redis.from_url(_db_url(redis_server, PLAN_DB)).flushdb()
    env = serve_env(config_dir, brave, ddg, WEBSEARCH_ENGINE="on", WEBSEARCH_REDIS_URL=_db_url(redis_server, PLAN_DB))
    env.update(key_env("brave", config_dir, BRAVE_KEY))
    servers = ServeProcess(env), ServeProcess(env)
    try:
        start_all(*servers)
        brave.arrivals.clear()
        a, b = (server.url for server in servers)
        assert search(a, query="learns the plan", provider="brave", cache="off")["provider"] == "brave"

        async def two() -> list[httpx2.Response]:
            async with async_http(b) as client:
                body = {"provider": "brave", "cache": "off"}
                return await asyncio.gather(
                    *(client.post("/v1/search", json={**body, "query": f"b {i}"}) for i in (1, 2))
                )

        responses = [r.json()["response"] for r in asyncio.run(two())]
    finally:
        brave.plan = paid
        for server in servers:
            server.stop()
    served = [r for r in responses if r["error"] is None and r["provider"] == "brave"]
    assert len(served) == 1  # the next slot, a second after A's; the other is a further second away
    (passed_over,) = (r for r in responses if r not in served)
    assert (passed_over["attempts"][0]["provider"], passed_over["attempts"][0]["skipped"]) == ("brave", "paced")
    assert len(brave.arrivals) == 2
    assert brave.arrivals[1] - brave.arrivals[0] >= 0.9, brave.arrivals


def test_redis_stopped_mid_load_both_keep_answering_and_pick_it_up_again(
    tmp_path: Path, fakes: tuple[TimedBrave, FakeDuckDuckGo]
) -> None:
    _, ddg = fakes
    ddg.requests.clear()
    store = RedisServer()
    store.start()
    env = serve_env(_settings(tmp_path / "config"), ddg, WEBSEARCH_ENGINE="on", WEBSEARCH_REDIS_URL=store.url)
    servers = ServeProcess(env), ServeProcess(env)
    try:
        start_all(*servers)
        a, b = (server.url for server in servers)

        async def load() -> tuple[list[httpx2.Response], list[dict[str, Any]]]:
            async with async_http(a) as ca, async_http(b) as cb:

                async def one(i: int) -> httpx2.Response:
                    return await (ca, cb)[i % 2].post("/v1/search", json={"query": f"load {i}"})

                before = await asyncio.gather(*(one(i) for i in range(10)))
                stopping = asyncio.create_task(asyncio.to_thread(store.stop))  # Redis goes away mid-load
                during = await asyncio.gather(*(one(i) for i in range(10, 30)))
                await stopping
                after_stop = await asyncio.gather(*(one(i) for i in range(30, 40)))
                ready = [(await c.get("/readyz")).json() for c in (ca, cb)]
                return [*before, *during, *after_stop], ready

        replies, ready = asyncio.run(load())
        assert [r.status_code for r in replies] == [200] * 40
        assert all(r.json()["error"] is None for r in replies)
        notice = "the shared state store is unavailable (connection refused); this search used in-process state only"
        assert all(notice in [n["message"] for n in r.json()["response"]["notices"]] for r in replies[30:])
        assert ready == [{"status": "degraded", "store": "redis", "reason": "connection refused"}] * 2

        store.start()  # the same port, empty: as a restarted Redis without persistence
        deadline = time.monotonic() + 20
        with http(a) as ca, http(b) as cb:
            while [c.get("/readyz").json()["status"] for c in (ca, cb)] != ["ready", "ready"]:
                assert time.monotonic() < deadline, "the replicas did not go back to Redis"
                time.sleep(0.2)
        first = search(a, query="after the outage")
        second = search(b, query="after the outage")
        assert (first["cached"], second["cached"]) == (False, True)  # shared again
        assert not second["notices"]
    finally:
        codes = [server.stop()[0] for server in servers]
        store.stop()
    assert codes == [0, 0]
