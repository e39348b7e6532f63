"""A fake api.keenable.ai: POST /v1/search (keyed) and /v1/search/public (keyless), and their errors."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from ._server import FakeServer, RecordedRequest, Reply, honour_domains

__all__ = [
    "FakeKeenable",
    "FakeKeenablePublic",
    "keenable_error",
    "keenable_result",
    "keenable_results_body",
    "rate_limited_reply",
]

#: What the date fields take: YYYY-MM-DD, an ISO 8601 timestamp, or a relative window ("7d").
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?)?|\d+(?:h|d|w|mo|y)")
_DATE_FIELDS = ("published_after", "published_before", "acquired_after", "acquired_before")
_PUBLISHED = ("2026-11-27T09:30:00Z", None, "2025-03-03T00:00:00Z")


def keenable_error(status: int, message: str, **more: Any) -> Reply:
    """Keenable's error body: `{"error": message, ...}`."""
    return Reply(status, {"error": message, **more})


def rate_limited_reply(retry_after: int = 900) -> Reply:
    """The public endpoint's 429: `retryAfter` in the body, the window in `X-RateLimit-*` headers."""
    headers = {"X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1764900000"}
    return Reply(429, {"error": "Rate limit exceeded", "retryAfter": retry_after}, headers=headers)


def keenable_result(i: int, query: str, *, site: str | None = None) -> dict[str, Any]:
    """One `results[]` entry: page text as `snippet`, a meta description on some, dates on some."""
    slug = query.replace(" ", "-")
    result: dict[str, Any] = {
        "title": f"{query.title()} in practice ({i})",
        "url": f"https://{site or f'pages{i}.example.net'}/{slug}/{i}",
        "snippet": f"{query.capitalize()}, part {i}. The page's own words about it, as extracted for the query.",
        "acquired_at": "2026-12-01T12:00:00Z",
    }
    if i % 2:
        result["description"] = f"A guide to {query}."
    published = _PUBLISHED[(i - 1) % len(_PUBLISHED)]
    if published is not None:
        result["published_at"] = published
    return result


def keenable_results_body(query: str, n: int = 10, *, site: str | None = None, mode: str = "pro") -> dict[str, Any]:
    """A 200 body with `n` results (on `site` when given)."""
    return {"query": query, "mode": mode, "results": [keenable_result(i, query, site=site) for i in range(1, n + 1)]}


class FakeKeenable(FakeServer):
    """Answers POST /v1/search (an `X-API-Key` required) and POST /v1/search/public (an
    `X-Keenable-Title` required) like Keenable: `max_results` results (1..50, default 10).

    `valid_keys`, when given, are the only keys accepted (else 401). With `empty_with_dates`, a
    search with a publish-date filter finds nothing, as one on undated pages does. `site` is
    honoured; the body's fields are checked (422 with Keenable's `{"error"}` otherwise).
    """

    provider_id = "keenable"

    def __init__(self, valid_keys: Collection[str] | None = None, *, empty_with_dates: bool = False) -> None:
        super().__init__()
        self.valid_keys = valid_keys
        self.empty_with_dates = empty_with_dates

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.path not in ("/v1/search", "/v1/search/public"):
            return keenable_error(404, "Not Found")
        if request.method != "POST":
            return keenable_error(405, "Method Not Allowed")
        if request.path == "/v1/search":
            key = request.headers.get("x-api-key", "")
            if not key or (self.valid_keys is not None and key not in self.valid_keys):
                return keenable_error(401, "Unauthorized: Invalid API key")
        elif not request.headers.get("x-keenable-title", "").strip():
            return keenable_error(400, "X-Keenable-Title header is required")
        try:
            body = request.json()
        except (ValueError, UnicodeDecodeError):
            return keenable_error(422, "Invalid JSON body")
        problem = _invalid(body)
        if problem is not None:
            return keenable_error(422, problem)
        query, n, site = body["query"], body.get("max_results", 10), body.get("site")
        if self.empty_with_dates and any(name in body for name in _DATE_FIELDS):
            n = 0
        results = keenable_results_body(query, n, site=site, mode=body.get("mode", "pro"))
        return Reply(200, honour_domains(results, (site,) if site else ()), headers={"X-Request-Id": "kn-req-1"})


class FakeKeenablePublic(FakeKeenable):
    """The same fake for the keyless row (`keenable_public`), which calls /v1/search/public."""

    provider_id = "keenable_public"


def _invalid(body: Any) -> str | None:
    """What is wrong with a search body (None: nothing)."""
    if not isinstance(body, dict):
        return "Request body must be an object"
    query = body.get("query")
    if not isinstance(query, str) or not query.strip():
        return "query is required"
    n = body.get("max_results", 10)
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 50:
        return "max_results must be between 1 and 50"
    if body.get("mode", "pro") not in ("pro", "realtime"):
        return "mode must be one of: pro, realtime"
    site = body.get("site", "example.org")
    if not isinstance(site, str) or not site or "/" in site or " " in site:
        return "site must be a domain"
    for name in _DATE_FIELDS:
        value = body.get(name)
        if value is not None and (not isinstance(value, str) or not _DATE.fullmatch(value)):
            return f"{name} must be a date (YYYY-MM-DD), an ISO 8601 timestamp or a relative window like 7d"
    return None
