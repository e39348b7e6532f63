"""The state store: one contract over the three backends (memory, SQLite, a real Redis), then what
only one of them can show: SQLite across processes, bounded, damaged, killed, read-only; Redis
stopped and restarted; the resilient wrapper; and which backend the settings choose."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import FakeClock, RedisServer, held_at_fork
from websearch import ConfigError
from websearch._core._budget import Budget
from websearch._core._clock import SystemClock
from websearch._core._settings import Settings
from websearch._state import (
    MemoryStore,
    ResilientStore,
    SqliteStore,
    Store,
    StoreUnavailable,
    default_path,
    open_store,
)
from websearch._state import Unavailable as UnavailableStore
from websearch._state._store import DEADLINE, StoreDeadline, StoreWait
from websearch._state.redis import RedisStore
from websearch._state.sqlite import BUSY_TIMEOUT

#: Short, so that Redis's real expiry costs little, yet long enough for a few round trips on a
#: loaded machine (at 0.2 s the usage test failed once in a full run); the fake clock just moves past it.
TTL = 0.5


@dataclass
class Rig:
    """A store and its time: the fake clock, or real time for Redis (whose buckets run on its own
    clock: the time the test's round trips take passes for them too)."""

    store: Store
    elapse: Callable[[float], Awaitable[None]]
    now: Callable[[], float]


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def rig(request: pytest.FixtureRequest, clock: FakeClock, tmp_path: Path) -> AsyncIterator[Rig]:
    store: Store
    if request.param == "memory":
        store = MemoryStore(clock)
    elif request.param == "sqlite":
        store = SqliteStore(tmp_path / "state.db", clock)
    else:
        store = RedisStore(request.getfixturevalue("redis_server"), prefix=f"test-{uuid.uuid4().hex[:8]}:")
    if request.param == "redis":
        yield Rig(store, asyncio.sleep, time.monotonic)
    else:
        yield Rig(store, clock.sleep, clock.monotonic)
    await store.clear("")
    await store.aclose()


# -- the contract, on every backend ---------------------------------------------------------------


async def test_get_set_delete_and_expiry(rig: Rig) -> None:
    s = rig.store
    assert await s.get("cache:a") is None
    await s.set("cache:a", b"\x00one\xff", 60)
    await s.set("cache:b", b"short", TTL)
    assert await s.get("cache:a") == b"\x00one\xff"
    await s.set("cache:a", b"two", 60)  # overwrite
    assert await s.get("cache:a") == b"two"
    assert await s.get("cache:b") == b"short"
    await rig.elapse(TTL + 0.05)
    assert await s.get("cache:b") is None
    assert await s.get("cache:a") == b"two"
    await s.delete("cache:a")
    await s.delete("cache:absent")
    assert await s.get("cache:a") is None
    for bad in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="ttl"):
            await s.set("cache:c", b"x", bad)
    await s.ping()


async def test_clear_by_prefix_and_tag(rig: Rig) -> None:
    s = rig.store
    await s.set("cache:1", b"a", 60, tag="brave")
    await s.set("cache:2", b"b", 60, tag="exa")
    await s.set("cache:3", b"c", 60)
    await s.set("cache:4", b"d", TTL, tag="brave")
    await s.set("cache*[x]", b"e", 60, tag="brave")  # glob characters are plain text in a prefix
    await s.set("other:1", b"f", 60, tag="brave")
    await s.set("cache:5", b"g", 60, tag="brave")
    await s.set("cache:5", b"g", 60, tag="exa")  # re-tagged: no longer brave's
    await rig.elapse(TTL + 0.05)
    assert await s.clear("cache:", tag="brave") == 1  # cache:1 (cache:4 expired: not counted)
    assert [await s.get(k) for k in ("cache:1", "cache:2", "cache:3", "cache:5")] == [None, b"b", b"c", b"g"]
    assert await s.clear("cache*") == 1
    assert await s.get("cache:2") == b"b"
    assert await s.clear("cache:") == 3
    assert await s.get("other:1") == b"f"
    assert await s.clear("nothing:") == 0


async def test_incr_counts_atomically_and_lives_from_creation(rig: Rig) -> None:
    s = rig.store
    values = await asyncio.gather(*(s.incr("stats:n", 60) for _ in range(50)))
    assert sorted(values) == list(range(1, 51))
    assert await s.incr("stats:n", 60, 10) == 60
    assert await s.get("stats:n") == b"60"  # a counter reads as its digits
    assert await s.incr("stats:t", TTL) == 1
    await rig.elapse(TTL * 0.6)
    assert await s.incr("stats:t", TTL) == 2  # the TTL runs from creation, not from each incr
    await rig.elapse(TTL * 0.6)
    assert await s.incr("stats:t", TTL, 5) == 5


def owed(debt: float, since: float, now: float) -> tuple[float, float]:
    """The bounds of a wait in a bucket whose tokens were `debt` seconds short when it was full
    at `since`: that, less what has passed since (on a loaded machine a round trip to Redis took
    tens of milliseconds, and its clock ran on meanwhile)."""
    return debt - (now - since) - 1e-6, debt + 1e-6


async def test_token_bucket_pace_debt_and_untake(rig: Rig) -> None:
    s = rig.store
    full = rig.now()
    waits = [await s.take("pace:x", 10, 2) for _ in range(4)]
    took = rig.now()
    assert waits[:2] == [0, 0]
    low, high = owed(0.1, full, took)
    assert low <= waits[2] <= high  # in debt: callers queue in order
    low, high = owed(0.2, full, took)
    assert low <= waits[3] <= high
    await s.untake("pace:x", 10, 2)  # the last one did not wait: its slot goes back
    again = await s.take("pace:x", 10, 2)
    low, high = owed(0.2, full, rig.now())
    assert low <= again <= high
    await rig.elapse(0.45)  # -2 + 4.5 tokens: 2 (capped at burst)
    assert [await s.take("pace:x", 10, 2) for _ in range(3)][:2] == [0, 0]
    assert await s.take("pace:y", 1, 1) == 0  # buckets are separate
    await s.untake("pace:fresh", 10, 2)  # giving back to a full bucket changes nothing
    assert [await s.take("pace:fresh", 10, 2) for _ in range(2)] == [0, 0]
    with pytest.raises(ValueError, match="rate"):
        await s.take("pace:z", 0, 1)


async def test_set_and_release_writes_the_value_and_lets_only_its_owners_lease_go(rig: Rig) -> None:
    s = rig.store
    assert await s.try_lease("flight:q", "a", 60)
    await s.set_and_release("cache:q", b"answer", 60, tag="brave", lease="flight:q", owner="b")  # not b's lease
    assert await s.get("cache:q") == b"answer"
    assert not await s.try_lease("flight:q", "c", 60)
    await s.set_and_release("cache:q", b"again", 60, tag="brave", lease="flight:q", owner="a")
    assert await s.get("cache:q") == b"again"
    assert await s.try_lease("flight:q", "c", 60)  # a's lease went with the write
    assert await s.clear("cache:", tag="brave") == 1  # tagged as `set` tags


async def test_leases_are_exclusive_expire_and_are_released_by_their_owner(rig: Rig) -> None:
    s = rig.store
    assert await s.try_lease("flight:q", "a", TTL)
    assert not await s.try_lease("flight:q", "b", 60)
    assert await s.try_lease("flight:q", "a", TTL)  # its holder may renew it
    assert await s.get("flight:q") == b"a"
    await s.release("flight:q", "b")  # not b's: still held
    assert not await s.try_lease("flight:q", "b", 60)
    await s.release("flight:q", "a")
    assert await s.try_lease("flight:q", "b", TTL)
    await rig.elapse(TTL + 0.05)  # b never released it: it expired
    assert await s.try_lease("flight:q", "c", 60)
    results = await asyncio.gather(*(s.try_lease("flight:r", f"o{i}", 60) for i in range(20)))
    assert results.count(True) == 1


async def test_usage_counts_live_entries_and_their_bytes(rig: Rig) -> None:
    s = rig.store
    assert await s.usage("cache:") == (0, 0)
    await s.set("cache:a", b"x" * 100, 60, tag="brave")
    await s.set("cache:b", b"y" * 50, 60)
    await s.set("cache:c", b"z" * 10, TTL)
    await s.set("flight:a", b"w" * 7, 60)
    assert await s.usage("cache:") == (3, 160)
    await rig.elapse(TTL + 0.05)
    assert await s.usage("cache:") == (2, 150)
    await s.incr("stats:n", 60, 123)
    assert await s.usage("stats:") == (1, 3)
    assert await s.usage("") == (4, 160)


# -- SQLite ---------------------------------------------------------------------------------------

CHILD = """
import asyncio, sys
from websearch._core._clock import SystemClock
from websearch._state.sqlite import SqliteStore

async def main(path, mode):
    store = SqliteStore(path, SystemClock())
    if mode == "incr":
        for _ in range(200):
            await store.incr("stats:n", 60)
    elif mode == "lease":
        print(await store.try_lease("flight:q", "child", 60))
    else:
        i = 0
        while True:
            await store.set(f"cache:{i}", b"v" * 1000, 60)
            i += 1
            if i == 50:
                print("ready", flush=True)
    await store.aclose()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def mode(path: Path | str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def set_aside(directory: Path) -> list[Path]:
    return list(directory.glob("*.corrupt-*"))


def child(path: Path, job: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", CHILD, str(path), job], stdout=subprocess.PIPE, text=True)


async def test_sqlite_incr_and_leases_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    counters = [child(path, "incr"), child(path, "incr")]
    store = SqliteStore(path, SystemClock())
    for _ in range(100):
        await store.incr("stats:n", 60)
    assert [p.wait(30) for p in counters] == [0, 0]
    assert await store.get("stats:n") == b"500"
    lease = child(path, "lease")
    assert lease.communicate(timeout=30)[0].strip() == "True"
    assert not await store.try_lease("flight:q", "parent", 60)  # the child's, though it exited
    await store.aclose()


async def test_sqlite_file_is_private_and_survives_a_killed_writer(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "websearch" / "state.db"
    writer = child(path, "write")
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "ready"
    writer.send_signal(signal.SIGKILL)
    writer.wait(10)
    assert [mode(f"{path}{extra}") for extra in ("", "-wal", "-shm")] == [0o600] * 3
    assert mode(path.parent) == 0o700
    store = SqliteStore(path, SystemClock())
    assert await store.get("cache:49") == b"v" * 1000
    await store.set("cache:after", b"ok", 60)
    assert await store.get("cache:after") == b"ok"
    await store.aclose()
    assert not set_aside(path.parent)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_bounded_store_evicts_expired_first_then_oldest(kind: str, clock: FakeClock, tmp_path: Path) -> None:
    store: Store = (
        MemoryStore(clock, max_bytes=10_000) if kind == "memory" else SqliteStore(tmp_path / "s.db", clock, 10_000)
    )
    await store.set("cache:old", b"a" * 1000, 600)
    await store.set("cache:expiring", b"b" * 3000, 1)
    await store.incr("stats:n", 600)
    await clock.sleep(2)
    for i in range(7):  # 1000 + 3000 + 7000 > 10,000: the expired entry goes, the old one stays
        await store.set(f"cache:{i}", b"c" * 1000, 600)
    assert await store.get("cache:old") == b"a" * 1000
    assert await store.usage("cache:") == (8, 8000)
    for i in range(7, 10):  # over again: now the oldest go, until 90% is left
        await store.set(f"cache:{i}", b"c" * 1000, 600)
    assert await store.get("cache:old") is None
    assert await store.get("cache:0") is None
    assert await store.get("cache:1") == b"c" * 1000
    assert await store.usage("cache:") == (9, 9000)
    assert await store.get("stats:n") == b"1"  # counters are never evicted
    await store.set("cache:huge", b"h" * 20_000, 600)  # larger than the store: not kept
    assert await store.get("cache:huge") is None
    assert await store.get("cache:9") == b"c" * 1000
    await store.aclose()


async def test_memory_store_drops_expired_entries_on_later_writes_and_keeps_its_heap_small(clock: FakeClock) -> None:
    store = MemoryStore(clock)
    for i in range(100):
        await store.set(f"cache:old{i}", b"x", 10)
    await clock.sleep(11)
    await store.set("cache:new", b"y", 600)  # the old ones' time has come: gone without being read
    assert list(store._entries) == ["cache:new"]
    for _ in range(1000):  # one key written again and again
        await store.set("cache:new", b"y", 600)
    assert len(store._expiries) <= 2 * len(store._entries) + 64
    assert await store.get("cache:new") == b"y"


def _another_database(path: Path) -> None:
    path.unlink()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (body TEXT)")
    db.commit()
    db.close()


def _altered_schema(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("DROP TABLE entries")
    db.commit()
    db.close()


def _garbage(path: Path) -> None:
    path.write_bytes(os.urandom(8192))


def _truncated(path: Path) -> None:
    with path.open("r+b") as f:
        f.truncate(path.stat().st_size // 2)


@pytest.mark.parametrize("damage", [_garbage, _another_database, _altered_schema, _truncated])
async def test_a_damaged_sqlite_file_is_set_aside_and_rebuilt(
    damage: Callable[[Path], None], clock: FakeClock, tmp_path: Path
) -> None:
    path = tmp_path / "state.db"
    store = SqliteStore(path, clock)
    for i in range(200):
        await store.set(f"cache:{i}", b"x" * 500, 600)
    await store.aclose()
    damage(path)
    assert await store.get("cache:199") is None  # the call proceeds, on a new file
    await store.set("cache:new", b"fresh", 600)
    assert await store.get("cache:new") == b"fresh"
    await store.aclose()
    (aside,) = set_aside(tmp_path)
    assert aside.name.startswith("state.db.corrupt-2026")  # named for when (the fake clock's time)
    assert mode(path) == 0o600


@contextmanager
def read_only(directory: Path) -> Iterator[None]:
    """`directory` unwritable, even for root (who ignores modes: the immutable attribute)."""
    if os.geteuid() != 0:
        directory.chmod(0o500)
        try:
            yield
        finally:
            directory.chmod(0o700)
        return
    done = subprocess.run(["chattr", "+i", str(directory)], capture_output=True, text=True, check=False)
    if done.returncode:
        pytest.skip(f"cannot make a directory read-only for root here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)


async def test_sqlite_in_a_read_only_place_is_unavailable(clock: FakeClock, tmp_path: Path) -> None:
    fresh, existing = tmp_path / "fresh", tmp_path / "existing"
    fresh.mkdir()
    existing.mkdir()
    store = SqliteStore(existing / "state.db", clock)
    await store.set("cache:a", b"a", 600)
    await store.aclose()
    with read_only(fresh), read_only(existing):
        for path in (fresh / "state.db", fresh / "sub" / "state.db", existing / "state.db"):
            store = SqliteStore(path, clock)
            with pytest.raises(StoreUnavailable) as caught:
                await store.set("cache:b", b"b", 600)
            assert caught.value.reason
            await store.aclose()
    assert not set_aside(existing)  # unwritable is not damaged


async def test_sqlite_locked_by_another_process_fails_fast_and_reads_go_on(clock: FakeClock, tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "state.db", clock)
    await store.set("cache:a", b"a", 600)
    other = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # holds the write lock
    try:
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match="locked"):
            await store.incr("stats:n", 60)
        assert time.monotonic() - started < BUSY_TIMEOUT + 0.5  # the busy timeout, not OPEN_TIMEOUT or forever
        assert await store.get("cache:a") == b"a"  # WAL: readers do not wait for the writer
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert await store.incr("stats:n", 60) == 1
    await store.aclose()


async def test_sqlite_reads_in_place_see_another_processs_writes_at_once(clock: FakeClock, tmp_path: Path) -> None:
    ours, theirs = SqliteStore(tmp_path / "state.db", clock), SqliteStore(tmp_path / "state.db", clock)
    await ours.set("cache:a", b"one", 600)
    assert await ours.get("cache:a") == b"one"  # read in place from here on
    await theirs.set("cache:a", b"two", 600)
    assert await ours.get("cache:a") == b"two"
    await theirs.delete("cache:a")
    assert await ours.get("cache:a") is None
    await ours.aclose()
    await theirs.aclose()


async def test_a_sqlite_file_deleted_under_open_stores_is_shared_again_within_a_second(
    clock: FakeClock, tmp_path: Path
) -> None:
    # `rm -rf ~/.cache/websearch` under running agents: each kept its connection to the deleted
    # file, a process started afterwards made a new one, and they shared nothing from then on.
    import shutil

    from websearch._state.sqlite import RECHECK

    directory = tmp_path / "cache"
    ours, reader = SqliteStore(directory / "state.db", clock), SqliteStore(directory / "state.db", clock)
    await ours.set("cache:a", b"before", 600)
    assert await reader.get("cache:a") == b"before"  # read in place from here on
    shutil.rmtree(directory)
    newcomer = SqliteStore(directory / "state.db", clock)
    await newcomer.set("cache:b", b"after", 600)
    await asyncio.sleep(RECHECK + 0.05)
    await ours.set("cache:c", b"ours", 600)
    assert await newcomer.get("cache:c") == b"ours"  # the writer opened the path again
    assert await reader.get("cache:b") == b"after"  # and so did the reader (in place, then the worker)
    assert await reader.get("cache:a") is None  # what the deleted file held went with it
    assert stat.S_IMODE((directory / "state.db").stat().st_mode) == 0o600
    for store in (ours, reader, newcomer):
        await store.aclose()


async def test_a_sqlite_read_in_place_that_cannot_be_made_goes_to_the_worker(clock: FakeClock, tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "state.db", clock)
    assert await store.get("cache:a") is None  # before the worker opened the file: the worker reads
    await store.set("cache:a", b"a", 600)
    with store._here_lock:  # the reader busy on another thread (the blocking API's loop)
        assert await store.get("cache:a") == b"a"
    assert await store.get("cache:a") == b"a"
    await store.aclose()


async def test_a_sqlite_write_that_can_finish_at_once_is_made_on_the_calling_thread(
    clock: FakeClock, tmp_path: Path
) -> None:
    import threading

    store = SqliteStore(tmp_path / "state.db", clock)
    await store.set("cache:a", b"a", 600)  # the worker opens the file first
    here = threading.get_ident()
    assert await store._write(lambda db: threading.get_ident()) == here  # no hop to the worker
    assert await store.try_lease("flight:a", "me", 2.0)
    assert not await store.try_lease("flight:a", "you", 2.0)
    await store.set_and_release("cache:b", b"b", 600, tag=None, lease="flight:a", owner="me")
    assert await store.try_lease("flight:a", "you", 2.0)
    with store._here_lock:  # the connection in use on another thread: the worker writes
        assert await store._write(lambda db: threading.get_ident()) != here
    await store.aclose()


async def test_a_sqlite_write_behind_queued_work_waits_its_turn(clock: FakeClock, tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "state.db", clock)
    await store.set("cache:k", b"first", 600)

    def slow_write(db: sqlite3.Connection) -> None:
        time.sleep(0.2)
        db.execute("UPDATE entries SET value = ? WHERE key = ?", (b"second", "cache:k"))

    queued = asyncio.ensure_future(store._run(slow_write))
    await asyncio.sleep(0.05)  # on the worker now
    await store.set("cache:k", b"third", 600)  # after it, though it could have been made in place
    await queued
    assert await store.get("cache:k") == b"third"
    await store.aclose()


async def test_a_sqlite_write_that_would_wait_for_the_lock_goes_to_the_worker(clock: FakeClock, tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = SqliteStore(path, clock)
    await store.set("cache:a", b"a", 600)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another process's write under way
    asyncio.get_running_loop().call_later(0.2, other.execute, "COMMIT")
    started = time.monotonic()
    # The worker waits within its busy timeout; the loop does not (else the COMMIT above never
    # ran, and the write failed as StoreUnavailable).
    await store.set("cache:b", b"b", 600)
    assert time.monotonic() - started >= 0.15  # it waited for the other write, not failed at once
    assert await store.get("cache:b") == b"b"
    other.close()
    await store.aclose()


def _size(path: Path) -> int:
    return path.stat().st_size


async def test_sqlite_writes_in_place_leave_the_wal_to_the_worker_to_checkpoint(
    clock: FakeClock, tmp_path: Path
) -> None:
    from websearch._state.sqlite import CHECKPOINT_EVERY

    path = tmp_path / "state.db"
    store = SqliteStore(path, clock)
    await store.set("cache:warm", b"x", 600)
    value = b"v" * 3000
    for i in range(16 * CHECKPOINT_EVERY):  # a steady burst: no pause for the worker to catch up
        await store.set(f"cache:{i}", value, 600)
    # without a checkpoint the WAL holds every page written (some 6 a write: 38 MB), and so it
    # did with checkpoints that writes in place kept adding to
    assert _size(Path(f"{path}-wal")) < 8 * 1024 * 1024
    await store.aclose()


async def test_a_sqlite_file_damaged_while_open_is_rebuilt_and_read_in_place_again(
    clock: FakeClock, tmp_path: Path
) -> None:
    path = tmp_path / "state.db"
    store = SqliteStore(path, clock)
    await store.set("cache:a", b"a", 600)
    assert await store.get("cache:a") == b"a"  # the reader is open on the first file
    await store.aclose()
    _garbage(path)
    assert await store.get("cache:a") is None  # set aside and rebuilt by the worker
    await store.set("cache:b", b"b", 600)
    assert await store.get("cache:b") == b"b"  # and read in place from the new file
    await store.aclose()
    assert len(set_aside(tmp_path)) == 1


# -- Redis ----------------------------------------------------------------------------------------


async def test_redis_keys_live_under_the_prefix_with_redis_ttls(redis_server: str) -> None:
    import redis.asyncio as aioredis

    prefix = f"test-{uuid.uuid4().hex[:8]}:"
    store = RedisStore(redis_server, prefix=prefix)
    await store.set("cache:a", b"a", 60, tag="brave")
    await store.incr("stats:n", 60)
    await store.take("pace:x", 1, 2)
    await store.try_lease("flight:q", "me", 60)
    raw = aioredis.Redis.from_url(redis_server)
    keys = sorted([k async for k in raw.scan_iter(match=f"{prefix}*")])
    assert keys == [f"{prefix}{k}".encode() for k in ("cache:a", "flight:q", "pace:x", "stats:n")]
    assert all(0 < ttl <= 61_000 for ttl in [await raw.pttl(k) for k in keys])
    await raw.aclose()
    await store.clear("")
    await store.aclose()


async def test_redis_queues_a_burst_for_its_connections_instead_of_failing(redis_server: str) -> None:
    # 500 searches at once on 64 connections waited past the half second a command had for a
    # free connection: the store called itself unavailable ("too many connections") and 274
    # searches lost the shared state. A busy pool is not a Redis that is down.
    store = RedisStore(redis_server, prefix=f"test-{uuid.uuid4().hex[:8]}:", max_connections=1)
    started = time.monotonic()
    # The one connection is held 0.6 s first (Redis's own wait, however fast this machine is), so
    # the whole burst waits longer than the half second a command once had for a connection.
    held = asyncio.ensure_future(store._call(lambda c: c.redis.blpop(["nothing"], timeout=0.6)))
    await asyncio.sleep(0)
    tasks: list[asyncio.Task[int]] = []
    for _ in range(20):  # queued 200 at a time: 4000 first steps in one turn of the loop stall it
        # past the answer's timeout on a loaded machine, which is the loop's lag, not a busy pool
        tasks += [asyncio.create_task(store.incr("stats:burst", 60)) for _ in range(200)]
        await asyncio.sleep(0)
    counts = await asyncio.gather(*tasks)
    took = time.monotonic() - started
    assert await held is None
    await store.clear("")
    await store.aclose()
    assert sorted(counts) == list(range(1, 4001))
    assert took > 0.5  # by construction (the held connection), not by this machine's speed


async def test_redis_waits_in_a_queue_that_moves_and_fails_one_that_is_stuck(
    redis_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A command waited POOL_WAIT for a pooled connection in all: a burst longer than that on a
    # loaded machine failed its last commands ("too many connections") with the queue moving.
    from websearch._state import redis as module

    monkeypatch.setattr(module, "POOL_WAIT", 0.5)
    store = RedisStore(redis_server, prefix=f"test-{uuid.uuid4().hex[:8]}:", max_connections=1)
    # Five commands in line for the one connection, each holding it 0.3 s: the last waits 1.2 s,
    # with a connection given back every 0.3 s.
    held = [asyncio.ensure_future(store._call(lambda c: c.redis.blpop(["nothing"], timeout=0.3))) for _ in range(4)]
    await asyncio.sleep(0)
    assert await store.incr("stats:last", 60) == 1
    await asyncio.gather(*held)
    stuck = asyncio.ensure_future(store._call(lambda c: c.redis.blpop(["nothing"], timeout=1.5)))
    await asyncio.sleep(0.05)
    with pytest.raises(StoreUnavailable, match=r"^too many connections$"):  # nothing came free for 0.5 s
        await store.incr("stats:stuck", 60)
    await stuck
    await store.clear("")
    await store.aclose()


@contextmanager
def search_deadline(seconds: float, max_wait: float = float("inf")) -> Iterator[StoreWait]:
    """Store calls made here belong to a search with `seconds` left and `max_wait` seconds to wait
    for the store in all (as the engine sets it; unbounded unless given)."""
    clock = SystemClock()
    budget = StoreWait(Budget.start(clock, seconds), max_wait)
    bound = DEADLINE.set(budget)
    try:
        yield budget
    finally:
        DEADLINE.reset(bound)


async def test_a_busy_sqlite_store_waits_no_longer_than_the_searchs_deadline(clock: FakeClock, tmp_path: Path) -> None:
    # A burst of 500 queued its writes on the one worker thread, and searches given 1 s took 1.7 s.
    store = SqliteStore(tmp_path / "state.db", clock)
    await store.set("cache:warm", b"x", 60)
    busy = asyncio.ensure_future(store._run(lambda db: time.sleep(0.6)))  # the writer, taken
    await asyncio.sleep(0.05)
    started = time.monotonic()
    with search_deadline(0.3), pytest.raises(StoreDeadline):  # it may wait half of that
        await store.set("cache:late", b"y", 60)
    took = time.monotonic() - started
    with search_deadline(0.15):
        assert await store.get("cache:warm") == b"x"  # a read in place never queues
    await store.set("cache:after", b"z", 60)  # no search's deadline: it waits its turn
    await busy
    assert 0.05 < took < 0.4
    assert await store.get("cache:after") == b"z"
    assert await store.get("cache:late") is None  # dropped before it began: it did not run late
    await store.aclose()


async def test_a_busy_redis_pool_waits_no_longer_than_the_searchs_deadline(redis_server: str) -> None:
    store = RedisStore(redis_server, prefix=f"test-{uuid.uuid4().hex[:8]}:", max_connections=1)
    await store.ping()
    held = asyncio.ensure_future(store._call(lambda c: c.redis.blpop(["nothing"], timeout=0.4)))  # the one connection
    await asyncio.sleep(0.05)
    started = time.monotonic()
    with search_deadline(0.2), pytest.raises(StoreDeadline):  # it may wait half of that
        await store.incr("stats:late", 60)
    took = time.monotonic() - started
    with search_deadline(10.0):  # far enough: not bounded, it waits for the connection
        assert await store.incr("stats:waited", 60) == 1
    await held
    await store.clear("")
    await store.aclose()
    assert 0.05 < took < 0.35


async def test_a_call_cut_by_its_deadline_uses_memory_and_leaves_the_store_in_use(clock: FakeClock) -> None:
    class Busy(UnavailableStore):
        """A shared store every call of which came too late for its search."""

        async def get(self, key: str) -> bytes | None:
            raise StoreDeadline

        async def incr(self, key: str, ttl: float, amount: int = 1) -> int:
            raise StoreDeadline

    store = ResilientStore(Busy("sqlite", "unused"), clock)
    assert await store.get("cache:a") is None
    assert await store.incr("stats:n", 60) == 1  # counted in memory for this call
    assert store.degraded is None  # busy is not down: no notice, the next call tries it again


async def test_a_search_waits_for_a_hung_store_its_budget_in_all_then_goes_on_in_memory(tmp_path: Path) -> None:
    # A search given 4 s waited for a hung store half of what was left on each call: 5-9 s in all.
    clock = SystemClock()
    primary = SqliteStore(tmp_path / "state.db", clock)
    await primary.set("cache:warm", b"x", 60)
    hung = asyncio.ensure_future(primary._run(lambda db: time.sleep(1.5)))  # the writer, taken
    await asyncio.sleep(0.05)
    store = ResilientStore(primary, clock)
    started = time.monotonic()
    with search_deadline(8.0, max_wait=0.25) as budget:
        assert await store.try_lease("flight:a", "me", 2.0)  # cut at 0.25 s: in memory
        assert budget.cut and budget.left < 0.05
        assert await store.incr("stats:n", 60) == 1  # the rest of the search: memory, at once
        assert await store.get("cache:warm") is None
    took = time.monotonic() - started
    with search_deadline(8.0, max_wait=0.25) as other:  # the next search tries the store again
        assert await store.get("cache:warm") == b"x"  # a read in place: no wait
    assert not other.cut
    assert store.degraded is None  # busy is not down
    await hung
    await primary.aclose()
    assert took < 1.0  # its budget, not half of its 8 s (nor the 1.5 s the writer was held)


async def test_redis_stopped_is_unavailable_quickly_and_resumes_when_restarted() -> None:
    server = RedisServer()
    server.start()
    store = RedisStore(server.url)
    try:
        await store.set("cache:a", b"a", 60)
        server.stop()
        started = time.monotonic()
        for call in (store.get("cache:a"), store.set("cache:b", b"b", 60), store.incr("n", 60), store.ping()):
            with pytest.raises(StoreUnavailable, match="connection refused"):
                await call
        assert time.monotonic() - started < 1.0
        server.start()  # same port, empty (no persistence)
        assert await store.get("cache:a") is None
        await store.set("cache:a", b"again", 60)
        assert await store.get("cache:a") == b"again"
    finally:
        await store.aclose()
        server.stop()


async def test_redis_that_never_answers_times_out_in_two_seconds() -> None:
    from websearch._state.redis import TIMEOUT

    async def mute(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # accepts, reads, never answers
        writer.close()

    server = await asyncio.start_server(mute, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    store = RedisStore(f"redis://127.0.0.1:{port}/0")
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match="timeout"):
        await store.get("cache:a")
    assert TIMEOUT <= time.monotonic() - started < TIMEOUT + 1.0  # the answer's (a held-up loop is not a mute Redis)
    await store.aclose()
    server.close()
    await server.wait_closed()


# -- ResilientStore -------------------------------------------------------------------------------


async def test_resilient_store_falls_back_to_memory_and_resumes(clock: FakeClock) -> None:
    redis = RedisServer()
    redis.start()
    server = RedisStore(redis.url)
    try:
        store = ResilientStore(server, clock)
        assert store.kind == "redis"
        await store.set("cache:a", b"shared", 60)
        assert store.degraded is None
        redis.stop()
        assert await store.get("cache:a") is None  # served from memory, which never saw it
        assert store.degraded == "connection refused"
        await store.set("cache:b", b"local", 60)
        assert await store.get("cache:b") == b"local"
        assert await store.incr("stats:n", 60) == 1
        assert await store.try_lease("flight:q", "me", 60)
        await store.release("flight:q", "me")
        assert await store.take("pace:x", 1, 1) == 0
        await store.ping()
        redis.start()
        assert await store.get("cache:b") == b"local"  # still in its back-off
        assert store.degraded == "connection refused"
        await clock.sleep(5)
        await store.set("cache:c", b"shared again", 60)
        assert store.degraded is None
        assert await server.get("cache:c") == b"shared again"  # in Redis
        assert await store.get("cache:b") is None  # written while degraded: not carried over
    finally:
        await server.aclose()
        redis.stop()


async def test_resilient_store_over_a_store_that_cannot_work(clock: FakeClock) -> None:
    store = ResilientStore(UnavailableStore("redis", "the redis package is not installed"), clock)
    await store.set("cache:a", b"a", 60)
    assert await store.get("cache:a") == b"a"
    assert await store.clear("cache:") == 1
    assert store.degraded == "the redis package is not installed"
    await store.aclose()


# -- choosing the backend -------------------------------------------------------------------------


def test_open_store_chooses_the_backend(tmp_path: Path, clock: FakeClock) -> None:
    env = {"WEBSEARCH_CACHE_DIR": str(tmp_path / "cache")}
    default = open_store(Settings({}, env), env, clock)
    assert isinstance(default, SqliteStore)
    assert default.path == tmp_path / "cache" / "state.db" == default_path(env)
    assert default._max_bytes == 64 * 1024 * 1024
    chosen = open_store(Settings({"state.path": str(tmp_path / "x.db"), "cache.max_mb": 1}, env), env, clock)
    assert isinstance(chosen, SqliteStore) and chosen.path == tmp_path / "x.db" and chosen._max_bytes == 1024 * 1024
    assert isinstance(open_store(Settings({"state.backend": "memory"}, env), env, clock), MemoryStore)
    url = "redis://:secret@127.0.0.1:1/0"
    assert isinstance(open_store(Settings({"state.url": url}, env), env, clock), RedisStore)
    redis_env = {**env, "WEBSEARCH_REDIS_URL": url}
    from_env = open_store(Settings({}, redis_env), redis_env, clock)
    assert isinstance(from_env, RedisStore) and "secret" not in repr(from_env)
    assert isinstance(open_store(Settings({"state.backend": "sqlite"}, redis_env), redis_env, clock), SqliteStore)
    assert default_path({}).parent.name == "websearch"


def test_state_settings_are_checked(tmp_path: Path, clock: FakeClock) -> None:
    for values, words in [
        ({"state.backend": "postgres"}, "use one of: memory, sqlite, redis"),
        ({"state.url": 6379}, "must be a string"),
        ({"cache.ttl": -1}, "0 or more"),
        ({"cache.max_mb": 0}, "positive"),
    ]:
        with pytest.raises(ConfigError, match=words):
            Settings(values, {})
    assert Settings({"cache.ttl": 0}, {}).get("cache.ttl") == 0
    with pytest.raises(ConfigError, match=r"no state\.url"):
        open_store(Settings({"state.backend": "redis"}, {}), {}, clock)
    with pytest.raises(ConfigError, match="not a Redis URL") as caught:
        open_store(Settings({"state.url": "http://user:secret@host"}, {}), {}, clock)
    assert "secret" not in str(caught.value)


# -- Redis: the in-process copy of cache entries ---------------------------------------------------


async def copied(store: RedisStore, key: str, value: bytes) -> None:
    """Wait until `store`'s in-process copy holds `value` at `key`: its tracking connection is
    up (made in the background when the client is), and a read has copied the entry."""
    for _ in range(200):
        front = store._loop_client().front
        if front is not None and front.up:
            if front.get(store._key(key)) == value and not front._checks:  # and no re-check still on its way
                return
            await store.get(key)
        await asyncio.sleep(0.01)
    raise AssertionError(f"{key} was not copied in process")


async def evalsha_calls(url: str) -> int:
    import redis.asyncio as aioredis

    raw = aioredis.Redis.from_url(url)
    stats = await raw.info("commandstats")
    await raw.aclose()
    return int(stats.get("cmdstat_evalsha", {}).get("calls", 0))


async def test_redis_hits_on_the_copy_make_no_round_trip() -> None:
    server = RedisServer()  # its own: the counts below are every client's
    server.start()
    store = RedisStore(server.url)
    try:
        await store.set("cache:a", b"answer", 60)
        await copied(store, "cache:a", b"answer")
        await store.get("stats:warm")  # the plain read's script loaded (a first EVALSHA is answered NOSCRIPT)
        before = await evalsha_calls(server.url)
        for _ in range(50):
            assert await store.get("cache:a") == b"answer"
        assert await evalsha_calls(server.url) == before
        assert await store.get("stats:n") is None  # only cache entries are copied: this one asks Redis
        assert await evalsha_calls(server.url) == before + 1
    finally:
        await store.aclose()
        server.stop()


async def eventually(check: Callable[[], Awaitable[bool]]) -> None:
    for _ in range(100):
        if await check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not within a second")


async def test_redis_copy_drops_what_another_process_changes_removes_or_clears(redis_server: str) -> None:
    prefix = f"test-{uuid.uuid4().hex[:8]}:"
    ours, theirs = RedisStore(redis_server, prefix=prefix), RedisStore(redis_server, prefix=prefix)
    await ours.set("cache:a", b"one", 60)
    await copied(ours, "cache:a", b"one")
    await theirs.set("cache:a", b"two", 60)
    await eventually(lambda: _is(ours, "cache:a", b"two"))
    await ours.get("cache:a")
    await theirs.delete("cache:a")
    await eventually(lambda: _is(ours, "cache:a", None))
    await ours.set("cache:b", b"b", 60)
    await copied(ours, "cache:b", b"b")
    assert await theirs.clear("cache:") == 1
    await eventually(lambda: _is(ours, "cache:b", None))
    await ours.set("cache:c", b"c", 60)  # our own clear empties our copy at once
    await copied(ours, "cache:c", b"c")
    await ours.clear("cache:")
    assert await ours.get("cache:c") is None
    await ours.set("cache:d", b"d", 60)
    await copied(ours, "cache:d", b"d")
    await ours.clear("")  # everything, the cache among it
    assert await ours.get("cache:d") is None
    await ours.aclose()
    await theirs.aclose()


async def _is(store: RedisStore, key: str, value: bytes | None) -> bool:
    return await store.get(key) == value


async def test_redis_copy_ends_with_the_entrys_ttl(redis_server: str) -> None:
    store = RedisStore(redis_server, prefix=f"test-{uuid.uuid4().hex[:8]}:")
    await store.set("cache:a", b"brief", 0.3)
    await copied(store, "cache:a", b"brief")
    await asyncio.sleep(0.35)
    assert await store.get("cache:a") is None
    await store.aclose()


async def test_redis_copy_is_left_unused_while_its_connection_is_down(monkeypatch: pytest.MonkeyPatch) -> None:
    import redis.asyncio as aioredis

    from websearch._state import redis_front

    monkeypatch.setattr(redis_front, "RETRY_EVERY", 0.2)
    server = RedisServer()
    server.start()
    ours, theirs = RedisStore(server.url), RedisStore(server.url)
    raw = aioredis.Redis.from_url(server.url)
    try:
        await ours.set("cache:a", b"one", 60)
        await copied(ours, "cache:a", b"one")
        assert await raw.client_kill_filter(_type="normal", skipme=True) >= 1  # the copy's connection among them
        front = ours._loop_client().front
        assert front is not None
        for _ in range(100):
            if not front.up:
                break
            await asyncio.sleep(0.01)
        await theirs.set("cache:a", b"two", 60)
        assert await ours.get("cache:a") == b"two"  # not the copy's "one": the copy went with its connection
        await eventually(lambda: _up(ours))  # and comes back
        await ours.get("cache:a")
        await raw.flushdb()
        await eventually(lambda: _is(ours, "cache:a", None))  # a flush empties the copy
    finally:
        await raw.aclose()
        await ours.aclose()
        await theirs.aclose()
        server.stop()


async def _up(store: RedisStore) -> bool:
    front = store._loop_client().front
    return front is not None and front.up


async def test_redis_copy_stops_being_used_when_redis_stops_answering(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Redis that goes quiet without closing the connection (a frozen server, a partition):
    the tracking connection's ping goes unanswered, and the copy, which would miss every
    invalidation meanwhile, is taken out of use."""
    from websearch._state import redis_front

    monkeypatch.setattr(redis_front, "PING_EVERY", 0.2)
    server = RedisServer()
    server.start()
    store = RedisStore(server.url)
    process = server._process
    assert process is not None
    try:
        await store.set("cache:a", b"one", 60)
        await copied(store, "cache:a", b"one")
        front = store._loop_client().front
        assert front is not None
        process.send_signal(signal.SIGSTOP)
        try:
            for _ in range(300):  # the ping after 0.2 s of quiet, unanswered within PING_ANSWER (0.5 s)
                if not front.up:
                    break
                await asyncio.sleep(0.01)
            assert not front.up and front.get(store._key("cache:a")) is None
        finally:
            process.send_signal(signal.SIGCONT)
    finally:
        await store.aclose()
        server.stop()


class _LosesACancel:
    """A tracking connection whose writes lose a cancellation that comes while they run, as
    redis-py's do on Python 3.11 (it writes under `asyncio.wait_for`), and whose timed reads
    answer None, as redis-py's do when their timeout passes."""

    def __init__(self) -> None:
        self._parser = self
        self.writing = asyncio.Event()
        self.written: list[tuple[str, ...]] = []
        self.gate = asyncio.Event()

    def set_invalidation_push_handler(self, handler: object) -> None:
        pass

    async def connect(self) -> None:
        pass

    async def send_command(self, *command: str) -> None:
        self.written.append(command)
        self.writing.set()
        with suppress(asyncio.CancelledError):  # lost
            await self.gate.wait()

    async def read_response(self, push_request: bool = False, **options: object) -> object:
        timeout = options.get("timeout")
        if isinstance(timeout, float):
            await asyncio.sleep(timeout)
            return None
        return b"OK"

    async def disconnect(self, nowait: bool = False) -> None:
        pass


async def _never(key: str) -> bytes | None:
    return None


async def test_redis_copys_task_ends_on_a_cancellation_its_write_lost() -> None:
    """`asyncio.run` cancels what is left once at its end and waits: a cancellation lost in a
    write must not leave the tracking task listening forever."""
    from websearch._state.redis_front import Front

    connection = _LosesACancel()
    front = Front(lambda: connection, "p:cache:", _never)
    task = front._task
    assert task is not None
    await connection.writing.wait()  # in the handshake's first write
    task.cancel()
    connection.gate.set()
    done, _ = await asyncio.wait([task], timeout=2)
    assert done and task.cancelled()
    assert len(connection.written) <= 2  # the handshake's writes, then nothing more
    await front.aclose()


class _DownLosingACancel(_LosesACancel):
    """A Redis that is down, whose connect loses a cancellation that comes while it runs."""

    async def connect(self) -> None:
        self.writing.set()
        with suppress(asyncio.CancelledError):  # lost
            await self.gate.wait()
        raise OSError("connection refused")


async def test_redis_copys_task_ends_on_a_lost_cancellation_while_redis_is_down() -> None:
    from websearch._state.redis_front import Front

    connection = _DownLosingACancel()
    front = Front(lambda: connection, "p:cache:", _never)
    task = front._task
    assert task is not None
    await connection.writing.wait()
    task.cancel()
    connection.gate.set()
    done, _ = await asyncio.wait([task], timeout=2)  # not after the 5 s wait before the next try
    assert done and task.cancelled()
    await front.aclose()


async def test_redis_copy_pings_a_quiet_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    from websearch._state import redis_front

    monkeypatch.setattr(redis_front, "PING_EVERY", 0.05)
    connection = _LosesACancel()
    connection.gate.set()  # writes go through
    front = redis_front.Front(lambda: connection, "p:cache:", _never)
    for _ in range(200):
        if ("PING",) in connection.written:
            break
        await asyncio.sleep(0.01)
    assert ("PING",) in connection.written
    await asyncio.wait_for(front.aclose(), 2)


async def test_redis_copy_can_be_turned_off(redis_server: str, tmp_path: Path, clock: FakeClock) -> None:
    store = RedisStore(redis_server, prefix=f"test-{uuid.uuid4().hex[:8]}:", local_copy=False)
    await store.set("cache:a", b"a", 60)
    assert await store.get("cache:a") == b"a"
    assert store._loop_client().front is None
    await store.aclose()
    settings = Settings({"state.url": redis_server, "state.redis_local_copy": False})
    configured = open_store(settings, {}, clock)
    assert isinstance(configured, RedisStore) and not configured._local_copy


STORE_FORKED = """\
import asyncio, os, sys
from websearch._core._clock import SystemClock
from websearch._state import SqliteStore
store = SqliteStore(sys.argv[1], SystemClock())
asyncio.run(store.set("k", b"parent", 60))
pid = os.fork()
if pid == 0:
    asyncio.run(store.set("k", b"child", 60))
    print(asyncio.run(store.get("k")), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
print(asyncio.run(store.get("k")), flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_sqlite_store_used_across_a_fork_opens_its_own_connection_in_the_child(tmp_path: Path) -> None:
    """The child has no worker thread and must not use the parent's SQLite connection: it once
    waited forever on the worker; it now opens its own, and both see one file."""
    # Python 3.12 warns of any fork in a process with threads (this one has the worker).
    command = [sys.executable, "-W", "ignore::DeprecationWarning", "-c", STORE_FORKED, str(tmp_path / "state.db")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr, done.stdout) == (0, "", "b'child'\nb'child'\n")


MEMORY_FORKED = (
    """\
import asyncio, signal
from websearch._core._clock import SystemClock
from websearch._state import MemoryStore
store = MemoryStore(SystemClock())  # a client's own, given as WebSearch(store=...)
asyncio.run(store.set("k", b"parent", 60))
"""
    + held_at_fork("store._lock")  # as the sync search's loop, in the store as the process forks
    + """\
if pid == 0:
    signal.alarm(10)  # a store that waits for the parent's thread never answers: end, and say so
    asyncio.run(store.set("k", b"child", 60))
    print(asyncio.run(store.get("k")), flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
done.set()
print(os.waitstatus_to_exitcode(status), asyncio.run(store.get("k")), flush=True)
"""
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_memory_store_is_usable_in_a_child_forked_while_another_thread_held_it() -> None:
    """A store given to a client is the child's too (its values are the parent's, copied): its
    lock, held by another of the parent's threads at the fork, once stayed held in the child."""
    command = [sys.executable, "-W", "ignore::DeprecationWarning", "-c", MEMORY_FORKED]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr, done.stdout) == (0, "", "b'child'\n0 b'parent'\n")
