"""The state stores' door: where a client keeps its cache, cooldowns, pacing and flights.

    from websearch.state import MemoryStore, SqliteStore, RedisStore

A client opens the store its settings name (`[state]` in settings.toml: SQLite by default,
Redis when `state.url` is set; docs/engine.md); these are for whoever picks one in code,
writes one of their own, or reads a store directly.

- `Store`: the protocol every store implements: values with a TTL, counters, token buckets,
  short leases; each call may raise `StoreUnavailable`.
- `MemoryStore`: one client's state in process memory (`[state] backend = "memory"`).
- `SqliteStore`: a file (WAL) that every process on one machine shares; the default.
- `RedisStore`: one Redis that every replica shares (needs the `redis` extra).
- `StoreUnavailable`: what a store raises when it cannot serve a call; the engine then runs the
  search on in-process state, with a notice. `WebSearch.cache_stats`, `clear_cache` and
  `reset_health` raise it to their caller, which is why `websearch` has it too (and
  `websearch.errors`, whose tree holds it).

Every name loads on first use: importing this module opens no file and loads no Redis client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _load

if TYPE_CHECKING:
    from ._state import MemoryStore, SqliteStore, Store, StoreUnavailable
    from ._state.redis import RedisStore

__all__ = ["MemoryStore", "RedisStore", "SqliteStore", "Store", "StoreUnavailable"]

_LAZY = {  # name -> the module of websearch that defines it
    "MemoryStore": "_state",
    "SqliteStore": "_state",
    "Store": "_state",
    "StoreUnavailable": "_state",
    "RedisStore": "_state.redis",
}


def __getattr__(name: str) -> Any:
    return _load(__name__, _LAZY, name)
