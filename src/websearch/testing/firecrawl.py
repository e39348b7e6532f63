"""A fake Firecrawl `/v2/search`: its strict request schema, the v2 answer and its error envelopes."""

from __future__ import annotations

import re
from typing import Any, Final

from ._server import FakeServer, RecordedRequest, Reply, honour_domains, site_domains

__all__ = [
    "INSUFFICIENT_CREDITS",
    "FakeFirecrawl",
    "firecrawl_error",
    "firecrawl_results_body",
    "firecrawl_web_result",
    "rate_limited",
]

INSUFFICIENT_CREDITS: Final = (
    "Insufficient credits to perform this request. For more credits, you can upgrade your plan at "
    "https://firecrawl.dev/pricing or try changing the request limit to a lower value."
)
_KEYS: Final = {
    "query",
    "limit",
    "sources",
    "categories",
    "tbs",
    "filter",
    "lang",
    "country",
    "location",
    "timeout",
    "ignoreInvalidURLs",
    "scrapeOptions",
    "integration",
    "origin",
}
_SOURCE_TYPES: Final = {"web", "images", "news"}
_CATEGORIES: Final = {"github", "research", "pdf"}
#: Google's `tbs` pieces: relative windows (qdr:h, qdr:d3 ...), a custom range, sort by date.
_TBS_PART: Final = re.compile(r"qdr:[hdwmy]\d*|cdr:1|cd_(?:min|max):\d{2}/\d{2}/\d{4}|sbd:[01]")


def firecrawl_error(message: str, **extra: Any) -> dict[str, Any]:
    """The envelope every Firecrawl error uses."""
    return {"success": False, "error": message, **extra}


def rate_limited(retry_seconds: int = 12) -> dict[str, Any]:
    """The 429 body: the retry delay appears only inside the text (no Retry-After header)."""
    return firecrawl_error(
        "Rate limit exceeded. Consumed (req/min): 6, Remaining (req/min): 0. Upgrade your plan at "
        f"https://firecrawl.dev/pricing for increased rate limits or please retry after {retry_seconds}s, "
        "resets at Mon Nov 30 2026 12:00:12 GMT+0000 (Coordinated Universal Time)"
    )


def firecrawl_web_result(i: int, query: str, category: str | None = None) -> dict[str, Any]:
    """One `data.web[]` item as the v2 API returns it without scraping; with `category`, labelled so."""
    slug = query.replace(" ", "-")
    result: dict[str, Any] = {
        "url": f"https://www.example{i % 5}.com/{slug}/{i}",
        "title": f"{query.title()} — part {i}",
        "description": f"Part {i} on {query}: how it works, trade-offs and worked examples.",
        "position": i,
    }
    if category is not None:
        result["category"] = category
    elif i % 4 == 2:
        result.update(url=f"https://github.com/example/{slug}-{i}", category="github")
    return result


def firecrawl_results_body(
    query: str,
    n: int = 10,
    *,
    request_id: str | None = "019a8c6e-5d1f-7c3b-9e2a-4f6b8d0c1a2e",
    category: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A 200 body with `n` web results (all labelled `category` when given)."""
    body: dict[str, Any] = {
        "success": True,
        "data": {"web": [firecrawl_web_result(i, query, category) for i in range(1, n + 1)]},
        "creditsUsed": max(1, n),
    }
    if request_id is not None:
        body["id"] = request_id
    body.update(extra)
    return body


class FakeFirecrawl(FakeServer):
    """Answers POST /v2/search like api.firecrawl.dev: Bearer auth, strict body, `limit` per source."""

    provider_id = "firecrawl"

    def __init__(self, available: int = 100) -> None:
        super().__init__()
        self.available = available  # how many web results the "index" holds for any query

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.path != "/v2/search" or request.method != "POST":
            page = f"<!DOCTYPE html><html><body><pre>Cannot {request.method} {request.path}</pre></body></html>"
            return Reply(404, page, content_type="text/html; charset=utf-8")
        auth = request.headers.get("authorization", "")
        if not auth.startswith("Bearer ") or not auth[7:].strip():
            return Reply(401, firecrawl_error("Unauthorized: Token missing"))
        try:
            body = request.json()
        except ValueError:
            return Reply(400, firecrawl_error("Invalid JSON in request body"))
        problem = _validate(body)
        if problem is not None:
            return Reply(400, firecrawl_error("Invalid request body", details=[problem]))
        kinds = [s["type"] if isinstance(s, dict) else s for s in body.get("sources", ["web"])]
        if "web" not in kinds:  # only the requested source types appear in `data`
            return Reply(200, firecrawl_results_body(body["query"], 0, data={}))
        categories = [c["type"] if isinstance(c, dict) else c for c in body.get("categories", [])]
        n = min(body.get("limit", 5), self.available)
        results = firecrawl_results_body(body["query"], n, category=categories[0] if categories else None)
        return Reply(200, honour_domains(results, *site_domains(body["query"])))


def _validate(body: Any) -> dict[str, Any] | None:
    """The first zod-style issue with the body, or None."""
    if not isinstance(body, dict):
        return {"code": "invalid_type", "expected": "object", "path": [], "message": "Expected object"}
    unknown = sorted(set(body) - _KEYS)
    if unknown:
        return {
            "code": "unrecognized_keys",
            "keys": unknown,
            "path": [],
            "message": "Unrecognized key in body -- please review the v1 API documentation for request body changes",
        }
    if not isinstance(body.get("query"), str) or not body["query"]:
        return {"code": "invalid_type", "expected": "string", "path": ["query"], "message": "Required"}
    limit = body.get("limit", 5)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
        return {"code": "too_big", "path": ["limit"], "message": "Number must be between 1 and 100"}
    for source in body.get("sources", ["web"]):
        kind = source.get("type") if isinstance(source, dict) else source
        if kind not in _SOURCE_TYPES:
            return {"code": "invalid_enum_value", "path": ["sources"], "message": f"Invalid source type {kind!r}"}
    for category in body.get("categories", []):
        kind = category.get("type") if isinstance(category, dict) else category
        if kind not in _CATEGORIES:
            return {"code": "invalid_enum_value", "path": ["categories"], "message": f"Invalid category {kind!r}"}
    tbs = body.get("tbs")
    if tbs is not None and (not isinstance(tbs, str) or not all(_TBS_PART.fullmatch(p) for p in tbs.split(","))):
        return {"code": "custom", "path": ["tbs"], "message": "Invalid tbs value"}
    return None
