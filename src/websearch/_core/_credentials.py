"""agent.db: the SQLite credential store, one row per provider id.

The file is created with mode 0600 (SQLite gives its WAL and journal files the database file's
mode), in a directory created 0700 when it does not exist yet. It runs in WAL mode with a busy
timeout so that two processes can write at once, and is only created when something is stored:
reading a missing store finds nothing.
Secrets never appear in a repr; `Credential.masked()` shows at most the last four characters.
"""

from __future__ import annotations

import json
import os
import stat
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from ..errors import ConfigError, InsecureConfigWarning

__all__ = ["Credential", "CredentialKind", "CredentialStore"]

CredentialKind = Literal["api_key", "oauth"]
#: Seconds `stamp()` trusts its last look at the file (another process's write shows within it).
STAMP_EVERY: Final = 1.0
_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS credentials (
    provider   TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,
    data       TEXT NOT NULL,
    updated_at REAL NOT NULL
)"""


@dataclass(frozen=True, slots=True)
class Credential:
    """A stored secret: `{"api_key": ...}` or an OAuth record (access_token, refresh_token, ...)."""

    provider: str
    kind: CredentialKind
    data: Mapping[str, Any] = field(repr=False)
    updated_at: float = 0.0

    @property
    def api_key(self) -> str | None:
        """The key to send: the API key, or an OAuth record's access token."""
        value = self.data.get("api_key") if self.kind == "api_key" else self.data.get("access_token")
        return value if isinstance(value, str) else None

    def masked(self) -> str:
        """A display form that never reveals more than the last four characters."""
        secret = self.api_key or ""
        return f"…{secret[-4:]}" if len(secret) >= 12 else "…"

    def __repr__(self) -> str:
        return f"Credential(provider={self.provider!r}, kind={self.kind!r}, secret={self.masked()!r})"


class CredentialStore:
    """Credentials keyed by provider id, in `path` (normally `<config dir>/agent.db`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._ids_cache: tuple[tuple[int, ...], frozenset[str]] | None = None
        self._records: dict[str, Credential | None] = {}
        self._records_stamp: tuple[int, ...] | None = None
        self._stamp_seen: tuple[float, tuple[int, ...] | None] | None = None  # (monotonic time, stamp)

    def __repr__(self) -> str:
        return f"CredentialStore({str(self.path)!r})"

    # -- reading -------------------------------------------------------------------------------

    def ids(self) -> frozenset[str]:
        """Provider ids with a stored credential; cached until the file changes."""
        stamp = self._stamp()
        if stamp is None:
            return frozenset()
        if self._ids_cache is not None and self._ids_cache[0] == stamp:
            return self._ids_cache[1]
        with self._connect() as db:
            ids = frozenset(row[0] for row in db.execute("SELECT provider FROM credentials"))
        self._ids_cache = (stamp, ids)
        return ids

    def get(self, provider: str, *, fresh: bool = False) -> Credential | None:
        """The stored credential, or None. Answers from memory until the file changes, so that
        providers can ask on every search without opening SQLite on the event loop; `fresh`
        reads the file regardless (for a token refresh taken under a lock)."""
        if fresh:
            self._forget()
        stamp = self._stamp()
        if stamp is None or provider not in self.ids():
            return None
        if self._records_stamp != stamp:
            self._records, self._records_stamp = {}, stamp
        if provider not in self._records:
            with self._connect() as db:
                row = db.execute(
                    "SELECT provider, kind, data, updated_at FROM credentials WHERE provider = ?", (provider,)
                ).fetchone()
            self._records[provider] = None if row is None else self._credential(row)
        return self._records[provider]

    def list(self) -> list[Credential]:
        """Every stored credential, ordered by provider id."""
        if self._stamp() is None:
            return []
        with self._connect() as db:
            rows = db.execute("SELECT provider, kind, data, updated_at FROM credentials ORDER BY provider")
            return [self._credential(row) for row in rows]

    # -- writing -------------------------------------------------------------------------------

    def set(self, provider: str, kind: CredentialKind, data: Mapping[str, Any]) -> Credential:
        """Store (or replace) the credential for `provider`."""
        cred = Credential(provider, kind, dict(data), time.time())
        self._forget()
        self._create()
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                "INSERT INTO credentials (provider, kind, data, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(provider) DO UPDATE SET kind = excluded.kind, data = excluded.data, "
                "updated_at = excluded.updated_at",
                (provider, kind, json.dumps(cred.data), cred.updated_at),
            )
            db.execute("COMMIT")
        return cred

    def remove(self, provider: str) -> bool:
        """Delete the credential; False when there was none."""
        if self._stamp() is None:
            return False
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            deleted: int = db.execute("DELETE FROM credentials WHERE provider = ?", (provider,)).rowcount
            db.execute("COMMIT")
        self._forget()
        return deleted > 0

    # -- plumbing ------------------------------------------------------------------------------

    def stamp(self) -> tuple[int, ...] | None:
        """What changes when anyone writes the store (None when it does not exist): for caches,
        which ask on every search. The file is looked at again after `STAMP_EVERY` seconds (or
        at once after this store's own writes): another process's change is seen within it."""
        now = time.monotonic()
        seen = self._stamp_seen
        if seen is not None and 0 <= now - seen[0] < STAMP_EVERY:
            return seen[1]
        value = self._stamp()
        self._stamp_seen = (now, value)
        return value

    def _stamp(self) -> tuple[int, ...] | None:
        """What changes when another process writes: mtime and size of the file and its WAL."""
        try:
            main = os.stat(self.path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._damaged(exc) from None
        try:
            wal = os.stat(f"{self.path}-wal")
        except FileNotFoundError:
            return (main.st_mtime_ns, main.st_size, 0, 0)
        return (main.st_mtime_ns, main.st_size, wal.st_mtime_ns, wal.st_size)

    def _forget(self) -> None:
        self._ids_cache, self._records, self._records_stamp, self._stamp_seen = None, {}, None, None

    def _create(self) -> None:
        """The file, 0600, in a directory created 0700 (one that already exists open to other
        users is left alone, with a warning: it may be shared on purpose)."""
        directory = self.path.parent
        try:
            existed = directory.is_dir()
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            mode = stat.S_IMODE(directory.stat().st_mode)
            if existed and mode & 0o077:
                warnings.warn(
                    f"the config directory {directory} can be read by other users (mode {mode:o}), and it holds "
                    f"agent.db; run `chmod 700 {directory}`",
                    InsecureConfigWarning,
                    stacklevel=4,
                )
            fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
            os.close(fd)
            os.chmod(self.path, 0o600)
        except OSError as exc:
            raise self._damaged(exc) from None

    def _connect(self) -> Any:
        import sqlite3

        try:
            db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        except sqlite3.Error as exc:
            raise self._damaged(exc) from None
        connection = _Closing(db, self._damaged)
        with connection.guard():
            db.execute("PRAGMA busy_timeout = 10000")
            _patiently(db, "PRAGMA journal_mode = WAL")
            _patiently(db, _SCHEMA)
        return connection

    def _damaged(self, exc: BaseException) -> ConfigError:
        """The one message of a store that cannot be used, whatever is wrong with it."""
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return ConfigError(
            f"the credential store {self.path} cannot be read ({reason}); move it aside and store the keys "
            "again with `websearch auth set`"
        )

    def _credential(self, row: tuple[str, str, str, float]) -> Credential:
        provider, kind, data, updated_at = row
        if kind not in ("api_key", "oauth"):
            raise ConfigError(f"credential for {provider} has unknown kind {kind!r}")
        try:
            record = json.loads(data)
        except (TypeError, ValueError) as exc:
            raise self._damaged(exc) from None
        if not isinstance(record, dict):
            raise self._damaged(ValueError(f"the record of {provider} is not an object"))
        return Credential(provider, kind, record, updated_at)  # type: ignore[arg-type]


class _Closing:
    """sqlite3's context manager commits but does not close; this one closes, and turns any
    failure of the file (sqlite3's errors, a record that is not JSON) into a ConfigError."""

    def __init__(self, db: Any, damaged: Callable[[BaseException], ConfigError]) -> None:
        self.db = db
        self.damaged = damaged

    def __enter__(self) -> Any:
        return self.db

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        self.db.close()
        if exc is not None and _is_damage(exc):
            raise self.damaged(exc) from None

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Inside, a failure of the file closes the connection and becomes a ConfigError."""
        try:
            yield
        except Exception as exc:
            if not _is_damage(exc):
                raise
            self.db.close()
            raise self.damaged(exc) from None


#: Seconds a quick "database is locked" is tried again for (the busy timeout's own length).
_BUSY_FOR: Final = 10.0
_LOCKED: Final = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED


def _patiently(db: Any, sql: str) -> None:
    """Run `sql`, trying again while SQLite answers "locked" at once: switching a new file to
    WAL while another process opens it is answered so without waiting the busy timeout (seen:
    two processes storing keys at once, one of them told the store "cannot be read")."""
    import sqlite3

    until = time.monotonic() + _BUSY_FOR
    while True:
        try:
            db.execute(sql)
            return
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorcode", 0) & 0xFF not in _LOCKED or time.monotonic() >= until:
                raise
            time.sleep(0.01)


def _is_damage(exc: BaseException) -> bool:
    import sqlite3

    return isinstance(exc, (sqlite3.Error, OSError, UnicodeError))
