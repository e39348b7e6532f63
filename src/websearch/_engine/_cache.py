"""The search cache: which searches are the same, and a response as bytes and back.

A key is a hash of the normalised query (Unicode NFC, whitespace folded, case kept: engines
tell "Go" from "go"), the provider selection (the chosen provider, the preference, the
excluded ids, the fallback tier, the lineup) and every parameter that can change the result,
relative date parameters as given. Nothing secret goes in: no key, no credential, no
environment value. An entry lives `ttl` seconds, never longer than the date window it
answers for (`recency_hours=1` is not served an hour later). Only successes are stored.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import fields
from operator import attrgetter
from typing import Any, Final, TypeVar

from .._core._filters import positive_number
from .._core._fork import in_child
from .._core._lru import BoundedLRU
from .._core._notices import Notice
from .._core._types import (
    Attempt,
    EngineRank,
    Locale,
    LocaleValue,
    ProviderAnswer,
    SearchCitation,
    SearchParams,
    SearchResponse,
    SearchSource,
    SearchUsage,
)

__all__ = ["PREFIX", "cache_key", "copy_of", "decode", "encode", "encode_copy", "entry_ttl"]

PREFIX: Final = "cache:"
_Selection = tuple[str, str, frozenset[str], tuple[str, ...], tuple[str, ...], str]
_WINDOWS: Final = {"day": 86400.0, "week": 7 * 86400.0, "month": 30 * 86400.0, "year": 365 * 86400.0}


def normalised(query: str) -> str:
    """The query as the cache compares it: NFC, runs of whitespace folded to one space."""
    return " ".join(unicodedata.normalize("NFC", query).split())


def cache_key(
    params: SearchParams,
    *,
    provider: str | None,
    preferred: str,
    excluded: Iterable[str],
    fallback: Iterable[str],
    lineup: Iterable[str],
    config: str = "",
) -> str:
    """The key of a search: same key, same answer (`config`: `Settings.answer_print`). The given
    parameters come in their declaration order, so the same search always writes the same bytes
    (tuples as arrays).

    Agents ask the same things again and again (that is what the cache is for), so the keys
    made last are remembered by what they were made from: a hit then costs a tuple's hash
    instead of normalising and hashing the search (a third of a hit)."""
    excluded = excluded if type(excluded) is frozenset else frozenset(excluded)
    selection = (provider or "", preferred, excluded, tuple(fallback), tuple(lineup), config)
    given = _typed(params.given_items)
    if given is None:
        return _made(params, selection)
    inputs = (params.query, given, selection)
    key = _KEYS.get(inputs)
    if key is None:
        if len(_KEYS) >= _KEYS_KEPT:
            _KEYS.clear()  # simpler than an LRU, and the searches still asked are made again once
        key = _KEYS[inputs] = _made(params, selection)
    return key


def _made(params: SearchParams, selection: _Selection) -> str:
    """The key itself: a hash of the version, the normalised query, the selection and the
    given parameters."""
    import orjson

    provider, preferred, excluded, fallback, lineup, config = selection
    ordered = (provider, preferred, sorted(excluded), fallback, lineup, config)
    text = orjson.dumps((_VERSION, normalised(params.query), ordered, params.given()))
    return PREFIX + hashlib.sha256(text).hexdigest()


def _typed(given: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, type, Any], ...] | None:
    """The given parameters with their types, to remember a key by (`True == 1`, but a
    lenient `recency_days=True` is not one day); None when a value is not a plain scalar or a
    tuple of strings, and the key is made afresh."""
    if not given:
        return ()
    typed = []
    for name, value in given:
        kind = type(value)
        if kind not in _SCALARS and not (kind is tuple and all(type(item) is str for item in value)):
            return None
        typed.append((name, kind, value))
    return tuple(typed)


_SCALARS: Final = frozenset({str, int, float, bool})
#: Keys by what they were made from (query, given parameters, selection); one per process.
_KEYS: Final[dict[tuple[Any, ...], str]] = {}
_KEYS_KEPT: Final = 4096


def entry_ttl(params: SearchParams, ttl: float) -> float:
    """`ttl`, cut to the date window the search asks for (hours, days or recency), if shorter."""
    windows = [ttl]
    for name, seconds in (("recency_hours", 3600.0), ("recency_days", 86400.0)):
        value = positive_number(getattr(params, name))  # as the filters read it: "0.05" is 3 minutes
        if value is not None:
            windows.append(value * seconds)
    if params.recency in _WINDOWS:
        windows.append(_WINDOWS[params.recency])
    return min(windows)


def encode(key: str, response: SearchResponse, at: float) -> bytes:
    """The cache entry of `key`: the served response, stamped with the wall time `at` it was
    served (no secret is in a response: errors are redacted).

    Each dataclass is written as the array of its field values in field order (half the time
    of writing objects, and fewer bytes); `_VERSION` holds a hash of every class's field
    names, so entries written before a field changed are simply missed. The response is
    remembered with its bytes at once: the next hit on this entry in this process is a copy."""
    return encode_copy(key, copy_of(response), at)


def copy_of(response: SearchResponse) -> SearchResponse:
    """A copy of `response` that its holder may change without changing `response`: the one a
    follower of a flight gets, and the one the cache keeps of a served answer."""
    return _copied(response, cached=response.cached, age=response.cached_age_s)


def encode_copy(key: str, template: SearchResponse, at: float) -> bytes:
    """`encode` of a `copy_of` the served response, remembered as it is (nothing else holds it)."""
    import orjson  # here, not at the top: `websearch providers` imports this module

    data = orjson.dumps([_VERSION, at, template], option=orjson.OPT_PASSTHROUGH_DATACLASS, default=_values)
    _MEMO.put(key, (data, at, template))
    return data


def decode(key: str, data: bytes, now: float) -> SearchResponse | None:
    """The response of the entry `data` that `encode` wrote for `key`, marked as cached (its
    age at wall time `now`); None for anything else.

    The same entry is read again and again (that is what a cache is for), so the entries
    written or read last are kept, and a hit whose bytes are the ones kept copies the response
    (3 us) instead of building it again from JSON (about 15 us)."""
    remembered = _MEMO.get(key)
    if remembered is None or remembered[0] != data:
        at_template = _decoded(data)
        if at_template is None:
            return None
        remembered = (data, *at_template)
        _MEMO.put(key, remembered)
    _, at, template = remembered
    return _copied(template, cached=True, age=round(max(0.0, now - at), 3))


#: Each key's entry last written or read, with its response. A hit is served from here only
#: when the store handed back the same bytes: an entry changed by anyone is other bytes.
#: Bounded by the entries' bytes (the objects take a few times that); one per process.
_MEMO: Final[BoundedLRU[str, tuple[bytes, float, SearchResponse]]] = BoundedLRU(
    1024, 16 * 1024 * 1024, lambda _, entry: len(entry[0])
)
in_child(_MEMO.after_fork)


def _copied(template: SearchResponse, *, cached: bool, age: float | None) -> SearchResponse:
    """A copy of `template` the caller may change without changing the template: the response
    and its mutable parts (sources, citations) are new objects; the rest is immutable."""
    response = _COPY_RESPONSE(template)
    response.sources = tuple([_COPY_SOURCE(s) for s in template.sources])
    response.citations = tuple([_COPY_CITATION(c) for c in template.citations])
    response.cached, response.cached_age_s = cached, age
    return response


def _copier(cls: type[T]) -> Callable[[T], T]:
    """A function copying a `cls` (a slots dataclass) field by field: a third of the cost of
    calling its constructor with the same values. Generated, like the dataclass's own methods."""
    lines = [f"    new.{name} = old.{name}" for name in _names(cls)]
    source = "def copy(old):\n    new = make(cls)\n" + "\n".join(lines) + "\n    return new\n"
    namespace: dict[str, Any] = {"make": object.__new__, "cls": cls}
    exec(source, namespace)  # the field names of our own classes, nothing else
    copy: Callable[[T], T] = namespace["copy"]
    return copy


def _decoded(data: bytes) -> tuple[float, SearchResponse] | None:
    import orjson

    try:
        version, at, raw = orjson.loads(data)
        if version != _VERSION:
            return None
        return float(at), _RESPONSE(raw)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None


def _values(obj: Any) -> tuple[Any, ...]:
    """A dataclass as the tuple of its field values (orjson's `default`, for dataclasses)."""
    getter = _GETTERS.get(type(obj))
    if getter is None:
        raise TypeError(f"{type(obj).__name__} is not a response dataclass")
    values: tuple[Any, ...] = getter(obj)
    return values


T = TypeVar("T")

#: The dataclasses a response is made of (their field names make `_VERSION`).
_CLASSES: Final = (
    SearchResponse,
    SearchSource,
    SearchCitation,
    EngineRank,
    ProviderAnswer,
    SearchUsage,
    Attempt,
    Notice,
    Locale,
    LocaleValue,
)


def _names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


_GETTERS: Final[dict[type, Callable[[Any], tuple[Any, ...]]]] = {cls: attrgetter(*_names(cls)) for cls in _CLASSES}
_COPY_RESPONSE: Final = _copier(SearchResponse)
_COPY_SOURCE: Final = _copier(SearchSource)
_COPY_CITATION: Final = _copier(SearchCitation)
_VERSION: Final = "v3-" + hashlib.sha256(repr([(c.__name__, _names(c)) for c in _CLASSES]).encode()).hexdigest()[:12]


def _builder(cls: Callable[..., T], nested: Mapping[str, Callable[[Any], Any]]) -> Callable[[list[Any]], T]:
    """Build `cls` from the array `encode` wrote: the right number of values, the nested ones
    built back too."""
    names = _names(cls)  # type: ignore[arg-type]
    converters = [(names.index(name), convert) for name, convert in nested.items()]

    def build(values: list[Any]) -> T:
        if type(values) is not list or len(values) != len(names):
            raise ValueError(f"not a {getattr(cls, '__name__', cls)}")
        for i, convert in converters:
            values[i] = convert(values[i])
        return cls(*values)

    return build


def _many(build: Callable[[list[Any]], T]) -> Callable[[list[list[Any]]], tuple[T, ...]]:
    return lambda items: tuple([build(item) for item in items])


def _optional(build: Callable[[list[Any]], T]) -> Callable[[list[Any] | None], T | None]:
    return lambda item: None if item is None else build(item)


_NOTICE: Final = _builder(Notice, {})
_CITATION: Final = _builder(SearchCitation, {})
_LOCALE_VALUE: Final = _builder(LocaleValue, {})
#: A response from the array `encode` wrote, every nested class built back.
_RESPONSE: Final = _builder(
    SearchResponse,
    {
        "sources": _many(_builder(SearchSource, {"highlights": tuple, "engines": _many(_builder(EngineRank, {}))})),
        "citations": _many(_CITATION),
        "related_questions": tuple,
        "search_queries": tuple,
        "usage": _optional(_builder(SearchUsage, {})),
        "attempts": _many(_builder(Attempt, {"notices": _many(_NOTICE)})),
        "notices": _many(_NOTICE),
        "answers": _many(_builder(ProviderAnswer, {"citations": _many(_CITATION)})),
        "locale": _optional(_builder(Locale, dict.fromkeys(("country", "language", "safesearch"), _LOCALE_VALUE))),
    },
)
