"""The one JSON form of a response, and the typed response back from it.

Every face that writes a response as JSON writes these bytes: `websearch search --format json`
and `POST /v1/search` (inside their `{text, response, error}` object), `fetch --json`,
`POST /v1/fetch` and `/v1/research`, `to_json()` in the library, and each line of a recording
(`websearch._client._recording`). One serialiser, so a response replayed through any face reads
the same byte for byte: orjson, compact, UTF-8 kept as it is, every field present in declaration
order, a non-finite number as null. (The MCP tool's `structuredContent` is the lean form of the
same object: no null, empty or false field.)

`response_from` is the inverse, for the response dataclasses (`SearchResponse`, `FetchResponse`,
`ResearchResponse` and what they hold): it reads the types of the fields, builds the nested
dataclasses back, turns arrays into tuples, leaves unknown keys out (a recording of a newer
version) and gives a field that is missing its default (one of an older version).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

__all__ = ["response_from", "response_json"]

T = TypeVar("T")


def response_json(response: Any) -> bytes:
    """`response` (a response dataclass) as its JSON bytes."""
    import orjson  # here: the command line imports this module for --help too

    data: bytes = orjson.dumps(response)
    return data


def response_from(cls: type[T], data: Mapping[str, Any]) -> T:
    """A `cls` built from its JSON object `data`; ValueError when `data` cannot be one."""
    if not isinstance(data, Mapping):
        raise ValueError(f"a {cls.__name__} is a JSON object; got {type(data).__name__}")
    try:
        return _builder(cls)(data)
    except (TypeError, AttributeError) as exc:
        raise ValueError(f"not a {cls.__name__}: {exc}") from None


_BUILDERS: Final[dict[type, Callable[[Any], Any]]] = {}


def _builder(cls: type[T]) -> Callable[[Mapping[str, Any]], T]:
    made = _BUILDERS.get(cls)
    if made is None:
        hints = typing.get_type_hints(cls)
        converters = {f.name: _converter(hints[f.name]) for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]

        def build(data: Mapping[str, Any]) -> T:
            if not isinstance(data, Mapping):
                raise TypeError(f"{cls.__name__} must be an object")
            return cls(**{name: convert(data[name]) for name, convert in converters.items() if name in data})

        made = _BUILDERS[cls] = build
    return made


def _same(value: Any) -> Any:
    return value


def _converter(hint: Any) -> Callable[[Any], Any]:
    """How a JSON value becomes a value of the type `hint`."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _builder(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        inner = [arg for arg in args if arg is not type(None)]
        if len(inner) != 1:
            return _same
        convert = _converter(inner[0])
        if convert is _same:
            return _same
        return lambda value: None if value is None else convert(value)
    if origin is tuple:
        item = _converter(args[0]) if args else _same
        return lambda value: tuple(item(v) for v in value) if isinstance(value, list) else value
    return _same
