"""A small LRU map bounded by count and by bytes: the cache's memo of decoded responses and
Redis's in-process copy of cache entries both keep one.

An OrderedDict underneath: dropping a plain dict's first key again and again walks over its
deleted slots. A lock makes each call safe across threads (the memo is shared by every
thread's event loop); uncontended, it costs tens of nanoseconds.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["BoundedLRU"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedLRU(Generic[K, V]):
    """At most `max_entries` items and `max_bytes` by `size(key, value)`, least recently used
    dropped first."""

    def __init__(self, max_entries: int, max_bytes: int, size: Callable[[K, V], int]) -> None:
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def after_fork(self) -> None:
        """In a child made by `fork`: a lock of its own (another thread may have held this
        one at the fork, and would never release it here)."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: K) -> V | None:
        """The value of `key` (now the most recently used), or None."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def peek(self, key: K) -> V | None:
        """The value of `key`, leaving its place alone."""
        return self._items.get(key)

    def put(self, key: K, value: V) -> None:
        with self._lock:
            items = self._items
            old = items.pop(key, None)
            if old is not None:
                self._bytes -= self._size(key, old)
            items[key] = value
            self._bytes += self._size(key, value)
            while len(items) > self.max_entries or self._bytes > self.max_bytes:
                gone, dropped = items.popitem(last=False)
                self._bytes -= self._size(gone, dropped)

    def pop(self, key: K) -> V | None:
        with self._lock:
            value = self._items.pop(key, None)
            if value is not None:
                self._bytes -= self._size(key, value)
            return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0
