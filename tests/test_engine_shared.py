"""The engine across processes: what one process learns (a 429, a pacing slot, a search in
flight, a cached answer) the others sharing its store act on, on SQLite (one machine) and on a
real Redis (many machines); and the store going away never fails a search."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import TESTS, FakeClock, RedisServer, key_env, make_client, run_cli
from websearch.testing import FakeBrave, FakeDuckDuckGo, Reply
from websearch.testing.brave import brave_results_body, rate_limited_reply

BRAVE_KEY = "BSA-shared-secret-51c0d2"
_DB = itertools.count(1)  # each Redis test its own database of the session's server


@pytest.fixture
def brave() -> Iterator[FakeBrave]:
    with FakeBrave() as fake:
        yield fake


@pytest.fixture(params=["sqlite", "redis"])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    """The environment naming one shared store: a SQLite file, or a database of the real Redis."""
    if request.param == "sqlite":
        return {"WEBSEARCH_CACHE_DIR": str(tmp_path / "cache")}
    url = request.getfixturevalue("redis_server")
    db = next(_DB) % 16
    import redis

    own = f"{url.rsplit('/', 1)[0]}/{db}"
    redis.Redis.from_url(own).flushdb()  # this test's database only (the URL's /0 would win over db=)
    return {"WEBSEARCH_REDIS_URL": own}


def worker_env(config_dir: Path, *fakes: Any, **extra: str) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(config_dir),
        "PYTHONPATH": str(TESTS),
        "WEBSEARCH_PROVIDERS": ",".join(fake.provider_id for fake in fakes),
        **key_env("brave", config_dir, BRAVE_KEY),
        **extra,
    }
    for fake in fakes:
        env.update(fake.env)
    env.update(extra)  # a state store the test names wins over the fakes' own
    return env


def spawn(env: dict[str, str], n: int, query: str, go: Path | None = None, **kwargs: Any) -> subprocess.Popen[str]:
    args = [sys.executable, str(TESTS / "engine_worker.py"), str(n), query, json.dumps(kwargs)]
    if go is not None:
        args.append(str(go))
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen[str], timeout: float = 60) -> list[dict[str, Any]]:
    """The worker's responses (its `ready` line skipped, if the test has not read it already)."""
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err[-2000:]
    lines = out.splitlines()
    return [json.loads(line) for line in lines if line != "ready"]


def run(env: dict[str, str], n: int, query: str, **kwargs: Any) -> list[dict[str, Any]]:
    return finish(spawn(env, n, query, **kwargs))


def test_a_429_seen_by_one_process_makes_another_skip_the_provider(
    shared: dict[str, str], config_dir: Path, brave: FakeBrave, ddg: FakeDuckDuckGo
) -> None:
    env = worker_env(config_dir, brave, ddg, **shared)
    brave.enqueue(rate_limited_reply(reset="300, 1419704"))
    (first,) = run(env, 1, "fusion power", cache="off")
    (second,) = run(env, 1, "fusion power", cache="off")
    assert first["provider"] == second["provider"] == "duckduckgo"
    assert first["attempts"][0]["error_kind"] == "rate_limited"
    skipped = second["attempts"][0]
    assert (skipped["provider"], skipped["skipped"], skipped["error_kind"]) == ("brave", "cooldown", "rate_limited")
    assert skipped["until"] is not None
    assert len(brave.requests) == 1  # the second process asked Brave nothing


def test_fifty_identical_searches_over_two_processes_make_one_upstream_call(
    shared: dict[str, str], config_dir: Path, brave: FakeBrave, tmp_path: Path
) -> None:
    # Single-flight, not the store's budget, is what is tested: on a loaded machine a store call
    # slower than the default budget (0.25 s) sent that search on without the store, to Brave.
    (config_dir / "settings.toml").write_text("[state]\nmax_wait = 10\n", encoding="utf-8")
    env = worker_env(config_dir, brave, **shared)
    brave.enqueue(Reply(200, brave_results_body("one question", 5), delay=1.0))  # long enough to overlap
    go = tmp_path / "go"
    workers = [spawn(env, 25, "one question", go) for _ in range(2)]
    for worker in workers:
        assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
    go.touch()  # both start their 25 searches now
    responses = [r for worker in workers for r in finish(worker)]
    assert len(responses) == 50 and all(r["error"] is None and r["provider"] == "brave" for r in responses)
    assert len(brave.requests) == 1, {json.dumps(r["notices"]) for r in responses}
    assert sum(r["cached"] for r in responses) == 25  # the other process got the leader's answer from the store


def test_a_leader_killed_mid_flight_holds_the_others_up_for_its_short_lease_only(
    shared: dict[str, str], config_dir: Path, brave: FakeBrave, tmp_path: Path
) -> None:
    # The flight's lease lives 2 s unless renewed; before, it lived the leader's whole deadline,
    # so a crashed agent left every other process waiting on it until their deadline passed.
    env = worker_env(config_dir, brave, **shared)
    brave.enqueue(Reply(hang=True), Reply(200, brave_results_body("crashed leader", 3)))
    leader = spawn(env, 1, "crashed leader")
    give_up = time.monotonic() + 30
    while not brave.requests and time.monotonic() < give_up:  # it leads, its request hangs
        time.sleep(0.005)
    go = tmp_path / "go"
    follower = spawn(env, 1, "crashed leader", go, deadline=15)
    assert follower.stdout is not None and follower.stdout.readline().strip() == "ready"
    go.touch()
    time.sleep(0.5)  # the follower waits on the leader's lease
    leader.send_signal(signal.SIGKILL)
    leader.wait(10)
    started = time.monotonic()
    (answer,) = finish(follower)
    assert time.monotonic() - started < 5  # the lease ran out, the follower led: not 15 s
    assert answer["error"] is None and answer["provider"] == "brave" and not answer["cached"]
    assert len(brave.requests) == 2


def test_a_flight_longer_than_its_lease_keeps_it_by_renewing(
    shared: dict[str, str], config_dir: Path, brave: FakeBrave, tmp_path: Path
) -> None:
    env = worker_env(config_dir, brave, **shared)
    brave.enqueue(Reply(200, brave_results_body("slow answer", 3), delay=3.0))  # past the 2 s lease
    go = tmp_path / "go"
    workers = [spawn(env, 1, "slow answer", go) for _ in range(2)]
    for worker in workers:
        assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
    go.touch()
    responses = [r for worker in workers for r in finish(worker)]
    assert all(r["error"] is None for r in responses)
    assert len(brave.requests) == 1 and sum(r["cached"] for r in responses) == 1, [
        (r["cached"], r["notices"]) for r in responses
    ]


def test_a_pacing_slot_taken_in_one_process_holds_in_another(
    shared: dict[str, str], config_dir: Path, brave: FakeBrave, ddg: FakeDuckDuckGo
) -> None:
    (config_dir / "settings.toml").write_text('[pacing]\nbrave = "1/min"\n', encoding="utf-8")
    env = worker_env(config_dir, brave, ddg, **shared)
    (first,) = run(env, 1, "tide tables", cache="off")
    (second,) = run(env, 1, "tide tables", cache="off")
    assert first["provider"] == "brave"
    assert second["provider"] == "duckduckgo"  # Brave's next slot is a minute away, past the 30 s deadline
    assert (second["attempts"][0]["provider"], second["attempts"][0]["skipped"]) == ("brave", "paced")
    assert len(brave.requests) == 1


def test_a_writer_killed_mid_run_leaves_a_readable_store(config_dir: Path, brave: FakeBrave, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = worker_env(config_dir, brave, WEBSEARCH_CACHE_DIR=str(cache))
    writer = spawn(env, 400, "topic {i}")  # 400 different searches, each cached as it lands
    assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
    # Its lines are read as they come: a full pipe would stop it at its twentieth or so.
    landed = threading.Thread(target=writer.stdout.read, daemon=True)
    landed.start()
    give_up = time.monotonic() + 30
    while len(brave.requests) < 50 and time.monotonic() < give_up:  # killed in the middle of its writes
        time.sleep(0.005)
    writer.send_signal(signal.SIGKILL)
    writer.wait(10)
    landed.join(10)
    assert 50 <= len(brave.requests) < 400  # the kill came mid-run, not after it
    results = run(env, 1, "topic {i}")  # "topic 0": cached before the kill
    assert results[0]["cached"] is True
    assert run(env, 1, "after the kill")[0]["error"] is None
    stats = json.loads(
        subprocess.run(
            [sys.executable, str(TESTS / "guarded_cli.py"), "cache", "stats", "--format", "json"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert stats["entries"] >= 2 and stats["store"] == "sqlite"
    assert not list(cache.glob("state.db.corrupt-*"))  # nothing to set aside: the file was whole


async def test_redis_stopped_mid_run_fails_no_search_and_state_resumes(
    config_dir: Path, brave: FakeBrave, ddg: FakeDuckDuckGo
) -> None:
    server = RedisServer()
    server.start()
    clock = FakeClock()
    env = {**key_env("brave", config_dir, BRAVE_KEY), **brave.env, **ddg.env, "WEBSEARCH_REDIS_URL": server.url}
    try:
        async with make_client(env=env, clock=clock, engine=True) as ws:
            before = await ws.asearch("before the outage")
            assert before.ok and not before.notices
            server.stop()
            during = [await ws.asearch(f"during the outage {i}") for i in range(3)]
            assert all(r.ok for r in during)
            for response in during:
                (notice,) = response.notices
                assert notice.kind == "partial"
                assert notice.message.startswith("the shared state store is unavailable (")
                assert notice.message.endswith("); this search used in-process state only")
            server.start()
            await clock.sleep(6)  # the store is tried again a few seconds after it failed
            brave.enqueue(rate_limited_reply(reset="300, 1419704"))
            after = await ws.asearch("after the outage", cache="off")
            assert after.ok and after.provider == "duckduckgo" and not after.notices
        async with make_client(env=env, clock=clock, engine=True) as other:  # another client, same Redis
            response = await other.asearch("after the outage", cache="off")
        assert response.attempts[0].skipped == "cooldown"  # the 429 recorded after the restart is shared
    finally:
        server.stop()


@pytest.fixture
def mute_redis() -> Iterator[str]:
    """The URL of a "Redis" that accepts connections and never answers: a socket that listens
    and is never read (the kernel completes the connections; nobody writes back)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield f"redis://127.0.0.1:{listener.getsockname()[1]}/0"


@pytest.fixture(params=["wal", "rollback"])
def locked_sqlite(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A cache directory whose state file another process holds in `BEGIN EXCLUSIVE`: a store's
    file, in WAL mode (a write waits for it), or one that process created (nobody reads it)."""
    cache = tmp_path / "cache"
    cache.mkdir()
    if request.param == "wal":
        from websearch._core._clock import SystemClock
        from websearch._state import SqliteStore

        async def lay_out() -> None:
            store = SqliteStore(cache / "state.db", SystemClock())
            await store.set("stats:laid-out", b"1", 60)
            await store.aclose()

        asyncio.run(lay_out())
    hold = (
        "import sqlite3, sys, time\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('BEGIN EXCLUSIVE')\n"
        "print('held', flush=True)\n"
        "time.sleep(120)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", hold, str(cache / "state.db")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield cache
    finally:
        holder.kill()
        holder.wait()


#: Deadlines long enough that a store waited a share of one (the fault fixed) and one that waited
#: its budget (a quarter of a second) are told apart with seconds to spare on a loaded machine: the
#: issue's 4 s for a mute Redis (a call waited half of what was left, then the next half of the rest),
#: 8 s for a locked file (its first call waits half: longer than opening the file may take).
MUTE_DEADLINE = 4.0
HUNG_DEADLINE = 8.0


def _served_with_one_store_notice(response: Any) -> None:
    assert response.ok and response.provider == "duckduckgo"
    (notice,) = response.notices
    assert notice.kind == "partial"
    assert notice.message == (
        "the shared state store did not answer in time; this search used in-process state only"
    ) or notice.message.startswith("the shared state store is unavailable (")


async def test_a_redis_that_never_answers_costs_a_search_its_store_budget_once(
    config_dir: Path, ddg: FakeDuckDuckGo, mute_redis: str
) -> None:
    # A search given 4 s took 5.2-9.2 s: each store call waited its share of what was left.
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **ddg.env, "WEBSEARCH_REDIS_URL": mute_redis}
    started = time.monotonic()
    async with make_client(env=env, engine=True) as ws:
        response = await ws.asearch("a mute redis", deadline=MUTE_DEADLINE)
        searched = time.monotonic() - started
    closed = time.monotonic() - started
    assert searched < MUTE_DEADLINE / 2  # the store had its budget, not half of the deadline
    assert closed < MUTE_DEADLINE / 2  # nor did closing wait for it
    _served_with_one_store_notice(response)
    assert response.notices[0].message.startswith("the shared state store did not answer in time")


async def test_a_sqlite_file_locked_by_another_process_costs_a_search_its_store_budget_once(
    config_dir: Path, ddg: FakeDuckDuckGo, locked_sqlite: Path
) -> None:
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **ddg.env, "WEBSEARCH_CACHE_DIR": str(locked_sqlite)}
    async with make_client(env=env, engine=True) as ws:
        started = time.monotonic()
        response = await ws.asearch("a locked file", deadline=HUNG_DEADLINE)
        searched = time.monotonic() - started
    assert searched < HUNG_DEADLINE / 2
    _served_with_one_store_notice(response)


def test_the_cli_over_a_redis_that_never_answers_returns_within_its_deadline(
    config_dir: Path, ddg: FakeDuckDuckGo, mute_redis: str
) -> None:
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **ddg.env, "WEBSEARCH_ENGINE": "on"}
    env["WEBSEARCH_REDIS_URL"] = mute_redis
    started = time.monotonic()
    proc = run_cli(["search", "a mute redis", "--deadline", str(MUTE_DEADLINE)], env)
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert took < MUTE_DEADLINE  # the process, start to exit (a store waited for took 5.2-9.2 s of 4)
    # One note, and nothing else: no task of the store's left pending at exit.
    assert (
        proc.stderr == "note: the shared state store did not answer in time; this search used in-process state only\n"
    )


SCRIPTS = {
    "websearch.search": "print([websearch.search('closing time').cached for _ in range(2)])",
    "a client never closed": "ws = websearch.WebSearch()\nprint([ws.search('closing time').cached for _ in range(2)])",
    "a client on two asyncio.run": (
        "ws = websearch.WebSearch()\nprint([asyncio.run(ws.asearch('closing time')).cached for _ in range(2)])"
    ),
    "close() in the loop that searched": (  # the running loop's session is closed on that loop
        "async def main():\n    with websearch.WebSearch() as ws:\n"
        "        print([ws.search('closing time').cached, (await ws.asearch('closing time')).cached])\n"
        "asyncio.run(main())"
    ),
    "clients dropped without close": "print([websearch.WebSearch().search('closing time').cached for _ in range(2)])",
    "clients dropped in the loop that searched": (
        "async def main():\n"
        "    print([(await websearch.WebSearch().asearch('closing time')).cached for _ in range(2)])\n"
        "asyncio.run(main())"
    ),
}


@pytest.mark.parametrize("script", SCRIPTS.values(), ids=SCRIPTS.keys())
async def test_a_client_left_open_is_closed_at_exit_quietly(
    shared: dict[str, str], config_dir: Path, ddg: FakeDuckDuckGo, script: str
) -> None:
    """A script that never closes its client (or uses `websearch.search`, whose client is the
    module's): at exit the client is closed, after Python has shut every thread pool down, with
    no "Unclosed client session" lines, and its last hit and miss counts still reach the store."""
    prelude = "import netguard; netguard.install()\nimport asyncio, websearch\n"
    env = worker_env(config_dir, ddg, **shared)
    command = [sys.executable, "-c", prelude + script]
    done = await asyncio.to_thread(subprocess.run, command, env=env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr, done.stdout) == (0, "", "[False, True]\n")
    async with make_client(env=env, engine=True) as client:
        stats = await client.engine.stats()
    assert (stats["hits"], stats["misses"], stats["entries"]) == (1, 1, 1)


DROPPED = """\
import netguard; netguard.install()
import asyncio, threading, time, websearch
for _ in range(4):
    websearch.WebSearch().search("dropped")
async def main():
    for _ in range(4):
        await websearch.WebSearch().asearch("dropped")
asyncio.run(main())
until = time.monotonic() + 5  # a store's worker ends just after its client closed (not awaited)
for other in threading.enumerate():
    if other is not threading.main_thread():
        other.join(max(0.0, until - time.monotonic()))
print(sorted(thread.name for thread in threading.enumerate()))
"""


async def test_clients_dropped_without_close_leave_no_thread_behind(
    shared: dict[str, str], config_dir: Path, ddg: FakeDuckDuckGo
) -> None:
    """`WebSearch().search(q)` on one line, again and again (a client a request): each client
    left its private loop's thread and its store's worker running for the life of the process."""
    env = worker_env(config_dir, ddg, **shared)
    command = [sys.executable, "-c", DROPPED]
    done = await asyncio.to_thread(subprocess.run, command, env=env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr, done.stdout) == (0, "", "['MainThread']\n")
    assert len(ddg.requests) == 1  # the others were served from the store the first one wrote to


DROPPED_IN_A_CYCLE = """\
import netguard; netguard.install()
import gc, threading, time, websearch
gc.disable()  # only the collection below, on the client's own loop, finds the cycle
ws = websearch.WebSearch()
ws.search("dropped")
ws.itself = ws  # a cycle: the collector, not the last reference, ends the client
loop, thread = ws._loop, ws._thread
del ws
loop.call_soon_threadsafe(gc.collect)
thread.join(10)
until = time.monotonic() + 5  # the store's worker ends just after the loop (shut down, not awaited)
for other in threading.enumerate():
    if other is not threading.main_thread():
        other.join(max(0.0, until - time.monotonic()))
print(thread.is_alive(), sorted(thread.name for thread in threading.enumerate()))
"""


async def test_a_client_collected_on_its_own_loop_closes_there(
    shared: dict[str, str], config_dir: Path, ddg: FakeDuckDuckGo
) -> None:
    """Collected on its private loop's thread, a dropped client cannot wait there for its own
    loop to close it: it is closed on that loop, which then stops, and no thread is left. (The
    collector finalizes aiohttp's session and connector in the same pass, in no set order, and
    aiohttp may say them unclosed: a cycle through a client is the caller's to avoid.)"""
    env = worker_env(config_dir, ddg, **shared)
    command = [sys.executable, "-c", DROPPED_IN_A_CYCLE]
    done = await asyncio.to_thread(subprocess.run, command, env=env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "False ['MainThread']\n")
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


FORKED = """\
import netguard; netguard.install()
import os, sys, websearch
print(websearch.search("before the fork").provider, flush=True)
pid = os.fork()
if pid == 0:
    print(websearch.search("in the child").provider, flush=True)
    sys.exit(0)  # the child's exit closes what it opened, and only that
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status), websearch.search("in the child").cached, flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
async def test_a_child_made_by_fork_searches_with_state_of_its_own(
    shared: dict[str, str], config_dir: Path, brave: FakeBrave
) -> None:
    """A process that searched, then forked (multiprocessing's default on Linux): the child's
    search once waited forever on the parent's private loop, whose thread is not in the child.
    It now opens its own loop, session and store connection; the parent's go on working, and
    the child's answer reaches the parent through the shared store."""
    env = worker_env(config_dir, brave, **shared)
    # Python 3.12 warns of any fork in a process with threads (ours has the private loop's).
    command = [sys.executable, "-W", "ignore::DeprecationWarning", "-c", FORKED]
    done = await asyncio.to_thread(subprocess.run, command, env=env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr, done.stdout) == (0, "", "brave\nbrave\n0 True\n")
    assert len(brave.requests) == 2


STUCK_AT_EXIT = """\
import netguard; netguard.install()
import asyncio, websearch
from websearch._core._clock import SystemClock
from websearch._state import MemoryStore

class Stuck(MemoryStore):
    async def aclose(self) -> None:
        await asyncio.Event().wait()  # never done closing

ws = websearch.WebSearch(store=Stuck(SystemClock()))
print(ws.search("stuck").provider, flush=True)
"""


async def test_a_client_that_cannot_finish_closing_does_not_hold_the_exit_up(
    config_dir: Path, ddg: FakeDuckDuckGo
) -> None:
    """The clients left open are closed at exit, each given a few seconds: one whose store never
    finishes closing lets the process end (it once waited forever). Python reports the close
    left undone, as a task destroyed while pending."""
    env = worker_env(config_dir, ddg)
    command = [sys.executable, "-c", STUCK_AT_EXIT]
    done = await asyncio.to_thread(subprocess.run, command, env=env, capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout) == (0, "duckduckgo\n")
    assert "Traceback" not in done.stderr and "WebSearch.aclose()" in done.stderr
