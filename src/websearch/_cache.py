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
import json
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any, Final

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
_VERSION: Final = "v1"  # bump when the encoded shape changes: old entries are then simply missed
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
    text = json.dumps([_VERSION, normalised(params.query), selection, given], sort_keys=True, ensure_ascii=False)
    return PREFIX + hashlib.sha256(text.encode()).hexdigest()


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
    return json.dumps({"at": at, "r": response.to_dict()}, ensure_ascii=False).encode()


def decode(data: bytes, now: float) -> SearchResponse | None:
    """The response of an entry `encode` wrote, marked as cached (its age at wall time `now`);
    None for anything else."""
    try:
        entry = json.loads(data)
        raw, age = entry["r"], now - float(entry["at"])
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
    response.cached, response.cached_age_s = True, round(max(0.0, age), 3)
    return response


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
    names = {f.name for f in fields(cls) if f.init}
    return {k: v for k, v in raw.items() if k in names}


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
