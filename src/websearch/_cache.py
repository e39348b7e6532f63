"""The search cache: which searches are the same, and a response as bytes and back.

A key is a hash of the normalised query (Unicode NFC, whitespace folded, case kept: engines
tell "Go" from "go"), the provider selection (the chosen provider, the preference, the
excluded ids, the fallback tier, the lineup) and every parameter that can change the result,
relative date parameters as given. Nothing secret goes in: no key, no credential, no
environment value. An entry lives `ttl` seconds, never longer than the date window it
answers for (`recency_hours=1` is not served an hour later). Only successes are stored.
"""

from __future__ import annotations

import functools
import hashlib
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any, Final, TypeVar

from ._notices import Notice
from ._types import (
    Attempt,
    EngineRank,
    ProviderAnswer,
    SearchCitation,
    SearchParams,
    SearchResponse,
    SearchSource,
    SearchUsage,
)

__all__ = ["PREFIX", "cache_key", "decode", "encode", "entry_ttl"]

PREFIX: Final = "cache:"
_VERSION: Final = "v2"  # bump when the encoded shape changes: old entries are then simply missed
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
) -> str:
    """The key of a search: same key, same answer."""
    given = {name: _jsonable(value) for name, value in sorted(params.given().items())}
    selection = {
        "provider": provider or "",
        "preferred": preferred,
        "excluded": sorted(excluded),
        "fallback": list(fallback),
        "lineup": list(lineup),
    }
    import orjson

    text = orjson.dumps([_VERSION, normalised(params.query), selection, given], option=orjson.OPT_SORT_KEYS)
    return PREFIX + hashlib.sha256(text).hexdigest()


def entry_ttl(params: SearchParams, ttl: float) -> float:
    """`ttl`, cut to the date window the search asks for (hours, days or recency), if shorter."""
    windows = [ttl]
    for name, seconds in (("recency_hours", 3600.0), ("recency_days", 86400.0)):
        value = getattr(params, name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            windows.append(float(value) * seconds)
    if params.recency in _WINDOWS:
        windows.append(_WINDOWS[params.recency])
    return min(windows)


def encode(response: SearchResponse, at: float) -> bytes:
    """A cache entry: the served response as JSON, stamped with the wall time `at` it was
    served (no secret is in a response: errors are redacted)."""
    import orjson  # here, not at the top: `websearch providers` imports this module

    return orjson.dumps({"at": at, "r": response})  # orjson writes dataclasses itself, as `to_dict` would


def decode(data: bytes, now: float) -> SearchResponse | None:
    """The response of an entry `encode` wrote, marked as cached (its age at wall time `now`);
    None for anything else.

    The same entry is read again and again (that is what a cache is for), so the last entries
    decoded are kept by their bytes and a hit copies one: building the objects from JSON was
    two thirds of a hit."""
    decoded = _DECODED.get(data)
    if decoded is None:
        decoded = _decoded(data)
        if decoded is None:
            return None
        if len(_DECODED) >= _DECODED_MAX:
            _DECODED.pop(next(iter(_DECODED)), None)
        _DECODED[data] = decoded
    at, template = decoded
    response = _copy(template)
    response.sources = tuple(_copy(source) for source in template.sources)
    response.citations = tuple(_copy(citation) for citation in template.citations)
    response.cached, response.cached_age_s = True, round(max(0.0, now - at), 3)
    return response


#: The entries decoded last, by their bytes: (the wall time served, the response to copy).
_DECODED: Final[dict[bytes, tuple[float, SearchResponse]]] = {}
_DECODED_MAX: Final = 64


def _decoded(data: bytes) -> tuple[float, SearchResponse] | None:
    import orjson

    try:
        entry = orjson.loads(data)
        raw, at = entry["r"], float(entry["at"])
        response = SearchResponse(
            **{
                **_pick(SearchResponse, raw),
                "sources": tuple(SearchSource(**_source(s)) for s in raw["sources"]),
                "citations": tuple(SearchCitation(**_pick(SearchCitation, c)) for c in raw["citations"]),
                "related_questions": tuple(raw["related_questions"]),
                "search_queries": tuple(raw["search_queries"]),
                "usage": SearchUsage(**_pick(SearchUsage, raw["usage"])) if raw.get("usage") else None,
                "attempts": tuple(_attempt(a) for a in raw["attempts"]),
                "notices": tuple(Notice(**_pick(Notice, n)) for n in raw["notices"]),
                "answers": tuple(_answer(a) for a in raw.get("answers", ())),
            }
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    return at, response


T = TypeVar("T")


def _copy(obj: T) -> T:
    """A shallow copy of a slotted dataclass (the mutable ones: a response, a source, a
    citation), so that a caller changing a cached response changes only its own."""
    cls: type[Any] = type(obj)
    new: T = object.__new__(cls)
    for name in cls.__slots__:
        setattr(new, name, getattr(obj, name))
    return new


def _attempt(raw: Mapping[str, Any]) -> Attempt:
    notices = tuple(Notice(**_pick(Notice, n)) for n in raw.get("notices", ()))
    return Attempt(**{**_pick(Attempt, raw), "notices": notices})


def _source(raw: Mapping[str, Any]) -> dict[str, Any]:
    picked = _pick(SearchSource, raw)
    picked["highlights"] = tuple(picked.get("highlights", ()))
    picked["engines"] = tuple(EngineRank(**_pick(EngineRank, e)) for e in picked.get("engines", ()))
    return picked


def _answer(raw: Mapping[str, Any]) -> ProviderAnswer:
    citations = tuple(SearchCitation(**_pick(SearchCitation, c)) for c in raw.get("citations", ()))
    return ProviderAnswer(**{**_pick(ProviderAnswer, raw), "citations": citations})


def _pick(cls: Any, raw: Mapping[str, Any]) -> dict[str, Any]:
    names = _init_names(cls)
    return {k: v for k, v in raw.items() if k in names}


@functools.cache
def _init_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in fields(cls) if f.init)


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
