"""The embedded default: one SQLite file shared by every process of the machine.

Why it is safe to share: WAL mode (readers never wait for the writer) and every write in one
`BEGIN IMMEDIATE` transaction, so a read-modify-write (`incr`, `take`, `try_lease`) is atomic
across processes. A busy timeout of 1 s turns a file locked for longer into StoreUnavailable
instead of a stalled search. SQLite blocks, so what may wait runs on one worker thread per store.
What can finish at once is done on the calling thread, on a connection of its own without a busy
timeout: a `get` (a cache hit, a health record; a WAL reader never waits for the writer), and a
small write (a lease, a cache entry, a counter, a bucket) when the file's write lock is free and
nothing is queued for the worker (so writes keep their order). A read or write that would wait,
or fails in any way, goes to the worker instead (which waits the busy timeout and repairs what it
finds). A thread hop costs about 0.1 ms; a read in place about 5 us, a write about 40 us. That
connection never checkpoints the WAL (a checkpoint syncs the disk: not on the caller's event
loop); the worker does, after every `CHECKPOINT_EVERY` writes in place, with the writes that
come meanwhile queued behind it (so the WAL starts over instead of growing).

Bounded: triggers keep the total size of the values in `meta`; when a write takes it past
`max_bytes`, expired rows go first, then the oldest values (rowid order is write order, since
`set` re-inserts) until 90% is left. Counters, buckets and leases are tiny and never evicted.
Expired rows are otherwise pruned a few at a time on each write.

A file that is not this store (not a database, another schema, truncated) is set aside as
`<name>.corrupt-<timestamp>` and rebuilt, once per call; a location that cannot be written
raises StoreUnavailable. The file is created 0600 (SQLite gives its -wal and -shm the same
mode), in a directory created 0700.

A file deleted or replaced under the store (the cache directory cleaned, `rm -rf ~/.cache`)
is opened again at its path within `RECHECK` seconds: an open connection keeps the deleted
file alive, and processes that kept writing to theirs while new ones made a new file no
longer shared anything, and nothing said so. A stat at most once a RECHECK per call path
tells (about 2 us).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Final, TypeVar, cast

from .._core._clock import Clock, wall_seconds
from .._core._fork import INHERITED, in_child
from ._store import READ_SHARE, WRITE_SHARE, StoreDeadline, StoreUnavailable, allowed_wait
from .memory import BUCKET, COUNTER, LEASE, VALUE, bucket_step, check_bucket, check_ttl

__all__ = ["BUSY_TIMEOUT", "SqliteStore", "default_path"]

T = TypeVar("T")

#: Seconds a write waits for another process's transaction (on a loaded machine one was held 0.3 s).
BUSY_TIMEOUT: Final = 1.0
_BUSY_PAUSE: Final = 0.005  # seconds between two tries of a busy file
_BUSY_QUICK: Final = 0.05  # a busy answer sooner than this did not wait the busy timeout
#: Writes in place between two WAL checkpoints on the worker: about 1,000 pages (a cached answer
#: writes 4 to 8), SQLite's own interval.
CHECKPOINT_EVERY: Final = 160
RECHECK: Final = 1.0  # seconds between two looks at whether the file at the path is still the one open
OPEN_TIMEOUT: Final = 5.0  # seconds opening waits: processes starting together switch the file to WAL and lay it out
_APP_ID: Final = 0x77656273  # "webs": this file is ours
_VERSION: Final = 1
_PRUNE: Final = 32  # expired rows removed per write
_LOW_WATER: Final = 0.9
_SCHEMA: Final = (
    """CREATE TABLE entries (
        key     TEXT PRIMARY KEY,
        kind    INTEGER NOT NULL,
        value   BLOB NOT NULL,
        expires REAL NOT NULL,
        tag     TEXT,
        tokens  REAL,
        stamp   REAL
    )""",
    "CREATE INDEX entries_expires ON entries (expires)",
    "CREATE TABLE meta (name TEXT PRIMARY KEY, n INTEGER NOT NULL)",
    "INSERT INTO meta VALUES ('bytes', 0)",
    """CREATE TRIGGER entries_in AFTER INSERT ON entries BEGIN
        UPDATE meta SET n = n + length(NEW.value) WHERE name = 'bytes'; END""",
    """CREATE TRIGGER entries_out AFTER DELETE ON entries BEGIN
        UPDATE meta SET n = n - length(OLD.value) WHERE name = 'bytes'; END""",
    """CREATE TRIGGER entries_change AFTER UPDATE OF value ON entries BEGIN
        UPDATE meta SET n = n + length(NEW.value) - length(OLD.value) WHERE name = 'bytes'; END""",
    f"PRAGMA application_id = {_APP_ID}",
    f"PRAGMA user_version = {_VERSION}",
)
#: SQLite's primary result codes a store can meet, as the few words of a notice.
_REASONS: Final[Mapping[int, str]] = {
    3: "permission denied",
    5: "locked by another process",
    6: "locked by another process",
    8: "read-only",
    10: "I/O error",
    13: "disk full",
    14: "cannot open the file",
    23: "permission denied",
}
_CORRUPT: Final = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB
_SCHEMA_GONE: Final = ("no such table", "no such column")  # our file, with its tables altered
_BUSY: Final = frozenset({5, 6})  # the connection stays open: the lock is another's
_GET: Final = "SELECT value FROM entries WHERE key = ? AND expires > ? AND kind != ?"
_LATER: Final = object()  # a call in place could not be made: the worker makes it


def default_path(env: Mapping[str, str] | None = None) -> Path:
    """`$WEBSEARCH_CACHE_DIR/state.db`, else `state.db` in the platform's user cache directory."""
    env = os.environ if env is None else env
    override = env.get("WEBSEARCH_CACHE_DIR")
    if override:
        return Path(override).expanduser() / "state.db"
    import platformdirs

    return Path(platformdirs.user_cache_dir("websearch", appauthor=False)) / "state.db"


#: Every store of this process, for a child made by `fork` (`_after_fork`).
_STORES: Final[weakref.WeakSet[SqliteStore]] = weakref.WeakSet()


def _forked() -> None:
    for store in list(_STORES):
        store._after_fork()


in_child(_forked)


class _Corrupt(Exception):
    """The file is a database, but not this store's."""


class SqliteStore:
    """State in one SQLite file at `path`, values bounded by `max_bytes`."""

    kind: str = "sqlite"

    def __init__(self, path: Path | str, clock: Clock, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.path = Path(path)
        self._clock = clock
        self._max_bytes = max_bytes
        self._db: sqlite3.Connection | None = None  # used only on the worker thread
        self._executor: ThreadPoolExecutor | None = None
        self._here: sqlite3.Connection | None = None  # calls in place, on whichever thread calls
        self._here_lock = threading.Lock()
        self._queued: set[object] = set()  # calls waiting for (or on) the worker
        self._written_here = 0  # writes in place since the worker's last checkpoint
        self._opened = 0  # times the worker opened the file: a reader of an older opening is stale
        self._here_opened = 0
        self._identity: tuple[int, int] | None = None  # (device, inode) of the file opened
        self._looked = 0.0  # when (monotonic) the path was last compared with it
        self._gone = False  # the file was found deleted or replaced: the worker opens the path again
        _STORES.add(self)

    def _after_fork(self) -> None:
        """In a child made by `fork`: the worker thread is not here, and SQLite's connections
        must not be used (nor closed) across a fork. They are left to the parent, kept from
        being collected, and the child opens its own."""
        INHERITED.append((self._db, self._here, self._executor))
        self._db = self._here = self._executor = None
        self._here_lock = threading.Lock()
        self._queued = set()

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r})"

    # -- the Store methods -----------------------------------------------------------------------

    async def get(self, key: str) -> bytes | None:
        args = (key, self._now(), BUCKET)
        row = self._in_place(_read, _GET, args)  # reads keep no order with queued writes: not looked at
        if row is _LATER:
            row = await self._run(_read, _GET, args, share=READ_SHARE)
        return None if row is None else bytes(row[0])

    async def set(self, key: str, value: bytes, ttl: float, *, tag: str | None = None) -> None:
        check_ttl(ttl)
        await self._write(self._set, key, bytes(value), self._now(), ttl, tag)

    async def delete(self, key: str) -> None:
        await self._write(_write_one, "DELETE FROM entries WHERE key = ?", (key,))

    async def clear(self, prefix: str, *, tag: str | None = None) -> int:
        return await self._run(self._clear, prefix, tag, self._now())

    async def incr(self, key: str, ttl: float, amount: int = 1) -> int:
        check_ttl(ttl)
        return await self._write(self._incr, key, ttl, amount, self._now())

    async def take(self, key: str, rate: float, burst: float) -> float:
        check_bucket(rate, burst)
        return await self._write(self._bucket, key, rate, burst, -1.0, self._now())

    async def untake(self, key: str, rate: float, burst: float) -> None:
        check_bucket(rate, burst)
        await self._write(self._bucket, key, rate, burst, 1.0, self._now())

    async def try_lease(self, key: str, owner: str, ttl: float) -> bool:
        check_ttl(ttl)
        return await self._write(self._lease, key, owner.encode(), ttl, self._now())

    async def release(self, key: str, owner: str) -> None:
        await self._write(
            _write_one, "DELETE FROM entries WHERE key = ? AND kind = ? AND value = ?", (key, LEASE, owner.encode())
        )

    async def set_and_release(
        self, key: str, value: bytes, ttl: float, *, tag: str | None, lease: str, owner: str
    ) -> None:
        check_ttl(ttl)
        await self._write(self._set, key, bytes(value), self._now(), ttl, tag, (lease, owner.encode()))

    async def usage(self, prefix: str) -> tuple[int, int]:
        row = await self._run(
            _read,
            "SELECT count(*), coalesce(sum(length(value)), 0) FROM entries WHERE substr(key, 1, ?) = ? AND expires > ?",
            (len(prefix), prefix, self._now()),
        )
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    async def ping(self) -> None:
        await self._run(_read, "SELECT n FROM meta WHERE name = 'bytes'", ())

    async def aclose(self) -> None:
        with self._here_lock:
            self._close_here()
        executor, self._executor = self._executor, None
        if executor is not None:
            try:
                await asyncio.get_running_loop().run_in_executor(executor, self._close)
            except RuntimeError:  # at exit, as in `_run`
                self._close()
            executor.shutdown(wait=False)

    # -- the transactions (on the worker thread) -------------------------------------------------

    def _set(
        self,
        db: sqlite3.Connection,
        key: str,
        value: bytes,
        now: float,
        ttl: float,
        tag: str | None,
        lease: tuple[str, bytes] | None = None,
    ) -> None:
        """Store a value; with `lease` (key, owner), drop that lease in the same transaction."""
        with _immediate(db):
            _prune(db, now)
            db.execute("DELETE FROM entries WHERE key = ?", (key,))  # re-inserted: a new rowid, the newest
            if len(value) <= self._max_bytes:  # larger than the whole store: not kept
                db.execute(
                    "INSERT INTO entries (key, kind, value, expires, tag) VALUES (?, ?, ?, ?, ?)",
                    (key, VALUE, value, now + ttl, tag),
                )
                if _bytes(db) > self._max_bytes:
                    self._evict(db, key, now)
            if lease is not None:
                db.execute("DELETE FROM entries WHERE key = ? AND kind = ? AND value = ?", (lease[0], LEASE, lease[1]))

    def _evict(self, db: sqlite3.Connection, keep: str, now: float) -> None:
        db.execute("DELETE FROM entries WHERE expires <= ?", (now,))
        excess = _bytes(db) - self._max_bytes * _LOW_WATER
        doomed: list[int] = []
        rows = db.execute(
            "SELECT rowid, length(value) FROM entries WHERE kind = ? AND key != ? ORDER BY rowid", (VALUE, keep)
        )
        for rowid, size in rows:
            if excess <= 0:
                break
            doomed.append(rowid)
            excess -= size
        rows.close()
        for i in range(0, len(doomed), 500):
            chunk = doomed[i : i + 500]
            db.execute(f"DELETE FROM entries WHERE rowid IN ({','.join('?' * len(chunk))})", chunk)

    def _clear(self, db: sqlite3.Connection, prefix: str, tag: str | None, now: float) -> int:
        where = "substr(key, 1, ?) = ?" + ("" if tag is None else " AND tag = ?")
        args: tuple[Any, ...] = (len(prefix), prefix) if tag is None else (len(prefix), prefix, tag)
        with _immediate(db):
            (count,) = db.execute(
                f"SELECT count(*) FROM entries WHERE {where} AND expires > ?", (*args, now)
            ).fetchone()
            db.execute(f"DELETE FROM entries WHERE {where}", args)
        return int(count)

    def _incr(self, db: sqlite3.Connection, key: str, ttl: float, amount: int, now: float) -> int:
        with _immediate(db):
            row = db.execute(
                "SELECT value FROM entries WHERE key = ? AND kind = ? AND expires > ?", (key, COUNTER, now)
            ).fetchone()
            if row is not None:
                value = int(row[0]) + amount
                db.execute("UPDATE entries SET value = ? WHERE key = ?", (str(value).encode(), key))
                return value
            _prune(db, now)
            db.execute("DELETE FROM entries WHERE key = ?", (key,))
            db.execute(
                "INSERT INTO entries (key, kind, value, expires) VALUES (?, ?, ?, ?)",
                (key, COUNTER, str(amount).encode(), now + ttl),
            )
            return amount

    def _bucket(self, db: sqlite3.Connection, key: str, rate: float, burst: float, delta: float, now: float) -> float:
        with _immediate(db):
            row = db.execute(
                "SELECT tokens, stamp FROM entries WHERE key = ? AND kind = ? AND expires > ?", (key, BUCKET, now)
            ).fetchone()
            if row is None and delta > 0:
                return 0.0  # nothing to give back: the bucket is full
            tokens, wait, ttl = bucket_step(None if row is None else (row[0], row[1]), now, rate, burst, delta)
            if tokens >= burst:
                db.execute("DELETE FROM entries WHERE key = ?", (key,))
                return wait
            db.execute(
                "INSERT INTO entries (key, kind, value, expires, tokens, stamp) VALUES (?, ?, x'', ?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET kind = excluded.kind, value = excluded.value, "
                "expires = excluded.expires, tag = NULL, tokens = excluded.tokens, stamp = excluded.stamp",
                (key, BUCKET, now + ttl, tokens, now),
            )
            return wait

    def _lease(self, db: sqlite3.Connection, key: str, owner: bytes, ttl: float, now: float) -> bool:
        with _immediate(db):
            row = db.execute("SELECT value FROM entries WHERE key = ? AND expires > ?", (key, now)).fetchone()
            if row is not None and bytes(row[0]) != owner:
                return False
            _prune(db, now)
            db.execute(
                "INSERT INTO entries (key, kind, value, expires) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET kind = excluded.kind, value = excluded.value, "
                "expires = excluded.expires, tag = NULL",
                (key, LEASE, owner, now + ttl),
            )
            return True

    # -- plumbing --------------------------------------------------------------------------------

    def _now(self) -> float:
        return wall_seconds(self._clock)

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        """A write transaction, in place when it can finish at once and nothing waits for the
        worker (writes keep their order), else on the worker."""
        done = _LATER if self._queued else self._in_place(fn, *args)
        if done is _LATER:
            return await self._run(fn, *args)
        self._written_here += 1
        if self._written_here >= CHECKPOINT_EVERY:
            self._written_here = 0
            # Queued, so the writes that come while it runs wait behind it: the first of them
            # then finds the whole WAL copied and starts it over. Writes in place beside it kept
            # adding to the WAL, which grew without end under a steady burst (41 MB in a test).
            with suppress(RuntimeError):  # the pool takes no more work at exit: the next opening checkpoints
                self._queue(_checkpoint, ()).add_done_callback(_retrieved)
        return cast(T, done)

    def _in_place(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(connection, *args)` on the calling thread, or `_LATER` when the worker must do it:
        the file not yet opened (and checked) by the worker, the connection in use on another
        thread, a lock that would be waited for, or any error at all (the transaction rolled back
        with the connection closed)."""
        if self._db is None or self._gone or self._moved():
            return _LATER
        if not self._here_lock.acquire(blocking=False):
            return _LATER
        try:
            if self._here is None or self._here_opened != self._opened:
                self._close_here()
                opened = self._opened
                here = sqlite3.connect(self.path, timeout=0, isolation_level=None, check_same_thread=False)
                here.execute("PRAGMA synchronous = NORMAL")  # as the worker's: a commit syncs nothing
                here.execute("PRAGMA wal_autocheckpoint = 0")
                here.execute("PRAGMA journal_size_limit = 4194304")  # as the worker's, when this one restarts the WAL
                self._here, self._here_opened = here, opened
            return fn(self._here, *args)
        except (sqlite3.Error, _Corrupt):
            self._close_here()
            return _LATER
        finally:
            self._here_lock.release()

    def _close_here(self) -> None:
        here, self._here = self._here, None
        if here is not None:
            with suppress(sqlite3.Error):
                here.close()

    async def _run(self, fn: Callable[..., T], *args: Any, share: float = WRITE_SHARE) -> T:
        """`fn` on the worker thread, waited for no longer than the search's deadline allows
        (`allowed_wait`): a burst queues its writes there, and a search must not wait its time away."""
        try:
            done = self._queue(fn, args)
        except RuntimeError:
            # The pool takes no more work: the interpreter is exiting. Python shuts every thread
            # pool down before it runs the `atexit` handlers, so a client closed there
            # (`websearch.search`'s own) writes its last counts in this thread; the worker has
            # drained its work and stopped, so the connection is this thread's alone.
            return self._call(fn, args)
        left = allowed_wait(share)
        if left is None:
            return await done
        try:
            return await asyncio.wait_for(done, left)  # a call not yet begun is dropped
        except TimeoutError:
            raise StoreDeadline from None

    def _queue(self, fn: Callable[..., T], args: tuple[Any, ...]) -> asyncio.Future[T]:
        """`fn` queued for the worker thread; writes wait behind it until it is done.
        RuntimeError when the pool takes no more work."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="websearch-state")
        done = asyncio.get_running_loop().run_in_executor(self._executor, self._call, fn, args)
        self._queued.add(done)
        done.add_done_callback(self._queued.discard)
        return done

    def _call(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        """Run `fn(db, *args)` on the worker thread; a corrupt file is set aside and rebuilt
        once, then `fn` runs again; any other failure is StoreUnavailable.

        SQLite answers some reads of a WAL file "database is locked" at once, without waiting
        the busy timeout (seen about once in twenty two-process test runs, on a `SELECT`, in
        1 ms): such a quick busy answer is tried again until the busy timeout has passed since the
        first try. One that came after waiting (a write's busy timeout) is final."""
        busy_until = time.monotonic() + BUSY_TIMEOUT
        attempt = 1
        while True:
            started = time.monotonic()
            if self._db is not None and (self._gone or self._moved()):
                self._close()  # the path holds another file now, or none: open (or create) it
            try:
                return fn(self._connection(), *args)
            except (sqlite3.Error, _Corrupt) as exc:
                code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
                if code in _BUSY:
                    now = time.monotonic()
                    if now - started < _BUSY_QUICK and now < busy_until:
                        time.sleep(_BUSY_PAUSE)
                        continue
                    raise StoreUnavailable(_REASONS[code]) from None
                self._close()
                if isinstance(exc, _Corrupt) or code in _CORRUPT or str(exc).startswith(_SCHEMA_GONE):
                    if attempt == 1:
                        self._set_aside()
                        attempt = 2
                        continue
                    raise StoreUnavailable("the state file is damaged") from None
                raise StoreUnavailable(_REASONS.get(code, "database error")) from None
            except OSError as exc:
                self._close()
                raise StoreUnavailable(f"cannot create the state file: {(exc.strerror or 'error').lower()}") from None

    def _connection(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        directory = self.path.parent
        if not directory.is_dir():
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
        os.close(fd)
        db = sqlite3.connect(self.path, timeout=OPEN_TIMEOUT, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # with WAL: survives a killed process, not power loss
            db.execute("PRAGMA journal_size_limit = 4194304")
            (app,) = db.execute("PRAGMA application_id").fetchone()
            if app != _APP_ID:
                self._create(db)
            (version,) = db.execute("PRAGMA user_version").fetchone()
            if version != _VERSION:
                raise _Corrupt("another schema version")
            db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
        except BaseException:
            db.close()
            raise
        with suppress(OSError):
            opened = os.stat(self.path)
            self._identity = (opened.st_dev, opened.st_ino)
        self._db, self._gone, self._looked = db, False, time.monotonic()
        self._opened += 1
        return db

    def _moved(self) -> bool:
        """Whether the file at the path is no longer the one open (deleted, or replaced), looked
        at once a RECHECK at most; True also sets `_gone` until the worker opens the path again."""
        now = time.monotonic()
        if now - self._looked < RECHECK or self._identity is None:
            return False
        self._looked = now
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._gone = True
        except OSError:  # cannot tell (a permission changed): the open file serves on
            return False
        else:
            self._gone = (st.st_dev, st.st_ino) != self._identity
        return self._gone

    def _create(self, db: sqlite3.Connection) -> None:
        """Lay out an empty file, in one transaction (another process may be doing the same);
        a database that holds anything else is not ours."""
        with _immediate(db):
            (app,) = db.execute("PRAGMA application_id").fetchone()
            if app == _APP_ID:
                return  # another process created it meanwhile
            if db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None:
                raise _Corrupt("another schema")
            for statement in _SCHEMA:
                db.execute(statement)

    def _set_aside(self) -> None:
        """Rename the damaged file (and its -wal, -shm) out of the way, unless another process
        already replaced it."""
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(self._now()))
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        n = 1
        while target.exists():
            n += 1
            target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{n}")
        for suffix in ("", "-wal", "-shm"):
            with suppress(FileNotFoundError):
                os.replace(f"{self.path}{suffix}", f"{target}{suffix}")

    def _close(self) -> None:
        db, self._db, self._identity = self._db, None, None
        if db is not None:
            with suppress(sqlite3.Error):
                db.close()


@contextmanager
def _immediate(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction: BEGIN IMMEDIATE takes the write lock first (waiting at most the
    busy timeout), so nothing read inside it can change before COMMIT."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _read(db: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> Any:
    return db.execute(sql, args).fetchone()


def _checkpoint(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA wal_checkpoint(PASSIVE)")


def _retrieved(done: asyncio.Future[Any]) -> None:
    """A checkpoint nobody waits for: its failure is retrieved (the next one tries again)."""
    if not done.cancelled():
        done.exception()


def _write_one(db: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> None:
    db.execute(sql, args)  # one statement: its own transaction, atomic


def _prune(db: sqlite3.Connection, now: float) -> None:
    db.execute(
        "DELETE FROM entries WHERE rowid IN (SELECT rowid FROM entries WHERE expires <= ? LIMIT ?)", (now, _PRUNE)
    )


def _bytes(db: sqlite3.Connection) -> int:
    (n,) = db.execute("SELECT n FROM meta WHERE name = 'bytes'").fetchone()
    return int(n)
