"""The process environment as a client reads it: `os.environ`, live, without an exception per
unset name.

`os.environ.get` looks a name up by raising and catching a KeyError when it is not set, which
costs about 1.5 us; a search asks for some thirty names (every provider's key and base-URL
variables, for the availability scan and the request), most of them unset, so a client on
`os.environ` spent about 45 us a search on that alone. `Environ` reads the same dict
`os.environ` keeps, through `os.environ`'s own key and value codecs (so names are still
upper-cased on Windows): every read sees the environment as it is now, writes included.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any, Final, TypeVar, overload

__all__ = ["Environ"]

T = TypeVar("T")
_KEYS_KEPT: Final = 1024  # encoded names remembered (a client asks for the same few dozen)


class Environ(Mapping[str, str]):
    """A read-only, live view of `os.environ` with a cheap `get` and `in`."""

    __slots__ = ("_data", "_decode", "_encode", "_keys", "_stamped")

    def __init__(self) -> None:
        environ: Any = os.environ
        # CPython's `os._Environ` (and PyPy's, the same os.py) keeps the encoded variables in
        # `_data`; anything else falls back to its public methods.
        self._data: dict[Any, Any] | None = getattr(environ, "_data", None)
        self._encode = getattr(environ, "encodekey", None)
        self._decode = getattr(environ, "decodevalue", None)
        if not isinstance(self._data, dict) or self._encode is None or self._decode is None:
            self._data = None
        self._keys: dict[str, Any] = {}  # names as `_data` holds them
        self._stamped: dict[tuple[str, ...], tuple[Any, ...]] = {}  # the same, for `stamp`

    def __getitem__(self, key: str) -> str:
        return os.environ[key]

    @overload
    def get(self, key: str, /) -> str | None: ...

    @overload
    def get(self, key: str, default: str, /) -> str: ...

    @overload
    def get(self, key: str, default: T, /) -> str | T: ...

    def get(self, key: str, default: Any = None, /) -> Any:
        encoded = self._keys.get(key)  # asked before: the common case, one call less
        if encoded is None:
            encoded = self._encoded(key)
            if encoded is None:
                return os.environ.get(key, default)
        value = self._data.get(encoded)  # type: ignore[union-attr]
        return default if value is None else self._decode(value)  # type: ignore[misc]

    def __contains__(self, key: object) -> bool:
        encoded = self._encoded(key)
        return key in os.environ if encoded is None else encoded in self._data  # type: ignore[operator]

    def stamp(self, names: tuple[str, ...]) -> tuple[Any, ...]:
        """What the variables `names` hold now, in a form that differs whenever one of them
        does (the raw bytes, not decoded): for a cache that asks on every search."""
        if self._data is None:
            return tuple(map(os.environ.get, names))
        encoded = self._stamped.get(names)
        if encoded is None:
            if len(self._stamped) >= _KEYS_KEPT:
                self._stamped.clear()
            encoded = self._stamped[names] = tuple(map(self._encode, names))  # type: ignore[arg-type]
        return tuple(map(self._data.get, encoded))

    def _encoded(self, key: object) -> Any:
        """`key` as `_data` holds it, or None to ask `os.environ` itself."""
        if self._data is None or not isinstance(key, str):
            return None
        encoded = self._keys.get(key)
        if encoded is None:
            if len(self._keys) >= _KEYS_KEPT:
                self._keys.clear()
            encoded = self._keys[key] = self._encode(key)  # type: ignore[misc]
        return encoded

    def __iter__(self) -> Iterator[str]:
        return iter(os.environ)

    def __len__(self) -> int:
        return len(os.environ)

    def __repr__(self) -> str:
        return f"Environ({len(self)} variables)"  # never the values: they hold keys
