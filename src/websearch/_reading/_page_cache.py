"""Pages in the cache: the key of a page read in one format, and a read page as bytes.

The key is the normalised URL (scheme and host lower-cased, default port and fragment dropped)
and the format, hashed: a page read as markdown and as text are two entries, a URL asked for
with and without its fragment one. A whole page is cached (its window is cut per call), and only
a page that was read: a failure is asked again. The value is versioned JSON with the time it was
written, so an entry's age is known and an entry of another shape is a miss.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final
from urllib.parse import SplitResult, urlsplit, urlunsplit

from .._core._notices import Notice
from .._core._pages import FetchResponse
from .._core._types import Attempt

__all__ = ["PREFIX", "decode", "encode", "normalised_url", "origin", "page_key"]

PREFIX: Final = "page:"
_VERSION: Final = 1
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def origin(parts: SplitResult) -> str:
    """scheme://host[:port] of a URL: lower-case, no user or password, no default port (the
    cache's URLs and robots.txt's origins both)."""
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    return f"{scheme}://{host if port is None or _DEFAULT_PORTS.get(scheme) == port else f'{host}:{port}'}"


def normalised_url(url: str) -> str:
    """`url` as the cache knows it: its `origin`, "/" for an empty path, no fragment."""
    parts = urlsplit(url.strip())
    return origin(parts) + urlunsplit(("", "", parts.path or "/", parts.query, ""))


def page_key(url: str, fmt: str) -> str:
    """The cache key of `url` read as `fmt` (no credential of any kind enters it)."""
    digest = hashlib.sha256(f"{normalised_url(url)}\n{fmt}".encode()).hexdigest()[:32]
    return f"{PREFIX}v{_VERSION}:{digest}"


def encode(page: FetchResponse, at: float) -> bytes:
    """A read page (its whole text) as the cache holds it, written at wall time `at`."""
    import orjson

    body = page.to_dict()
    body.pop("cached", None)
    body.pop("cached_age_s", None)
    return orjson.dumps({"v": _VERSION, "at": at, "page": body})


def decode(data: bytes, now: float) -> FetchResponse | None:
    """The page of a cache entry, marked cached with its age at wall time `now`; None for an
    entry this version cannot read."""
    import orjson

    try:
        entry = orjson.loads(data)
        if entry.get("v") != _VERSION:
            return None
        body: dict[str, Any] = dict(entry["page"])
        body["attempts"] = tuple(_attempt(a) for a in body.get("attempts", ()))
        body["notices"] = tuple(Notice(**n) for n in body.get("notices", ()))
        body["cached"], body["cached_age_s"] = True, max(0.0, round(now - float(entry["at"]), 3))
        return FetchResponse(**body)
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _attempt(data: dict[str, Any]) -> Attempt:
    notices = tuple(Notice(**n) for n in data.get("notices", ()))
    return Attempt(**{**data, "notices": notices})
