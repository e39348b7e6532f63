"""A fake Kagi Search API v1: POST /api/v1/search, typed result arrays, Kagi's error envelopes."""

from __future__ import annotations

import re
from typing import Any

from ._server import FakeServer, RecordedRequest, Reply, honour_domains, site_domains

__all__ = ["FakeKagi", "kagi_error_body", "kagi_legacy_error_body", "kagi_result", "kagi_results_body"]

_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


def kagi_result(i: int, query: str, *, time: str | None = None) -> dict[str, Any]:
    """One `data.search` item as v1 serialises it (`time`, `image` and `props` are optional)."""
    slug = query.replace(" ", "-")
    item: dict[str, Any] = {
        "url": f"https://www.example{i}.com/{slug}",
        "title": f"{query.title()} — article {i}",
        "snippet": f"What {query} means, part {i}: background, examples and the trade-offs people ask about.",
    }
    if time is not None:
        item["time"] = time
    if i % 2:
        item["image"] = {"url": f"https://img.example{i}.com/thumb.jpg", "height": 120, "width": 160}
        item["props"] = {}
    return item


def kagi_results_body(
    query: str, n: int = 12, *, limit: int | None = None, trace: str = "kagi-trace-0001"
) -> dict[str, Any]:
    """A 200 body: `n` search results (truncated to `limit`), a video, news, related searches,
    an adjacent question and a direct answer, as the v1 API mixes them."""
    count = n if limit is None else min(n, limit)
    return {
        "meta": {"trace": trace, "node": "us-east4", "ms": 512},
        "data": {
            "search": [
                kagi_result(i, query, time="2026-11-27T12:00:00Z" if i == 1 else None) for i in range(1, count + 1)
            ],
            "video": [
                {
                    "url": f"https://www.youtube.com/watch?v={query[:4]}123",
                    "title": f"{query.title()} explained",
                    "snippet": "A 12 minute walkthrough.",
                    "time": "2026-10-31T12:00:00Z",
                }
            ],
            "news": [
                {
                    "url": f"https://news.example.org/{query.replace(' ', '-')}",
                    "title": f"{query.title()} in the news",
                    "snippet": "Latest coverage.",
                    "time": "2026-11-30T09:00:00Z",
                },
                {"title": "A news item without a link"},
            ],
            "adjacent_question": [{"title": f"What is {query}?", "props": {"question": f"What is {query}?"}}],
            "related_search": [
                {
                    "url": f"https://kagi.com/search?q={query.replace(' ', '+')}+vs",
                    "title": f"{query} vs alternatives",
                    "props": {"query": f"{query} vs alternatives"},
                },
                {"url": f"https://kagi.com/search?q={query.replace(' ', '+')}+pricing", "title": f"{query} pricing"},
            ],
            "direct_answer": [
                {"url": "https://kagi.com/answer", "title": f"{query.title()}", "snippet": f"{query} is a thing."}
            ],
            "image": [{"url": "https://img.example.com/1.jpg", "title": "An image (not a source)"}],
        },
    }


def kagi_error_body(code: str, message: str, location: str | None = None) -> dict[str, Any]:
    """The v1 error envelope (sent with 400, 401 or 403)."""
    error: dict[str, Any] = {"code": code, "url": "https://help.kagi.com/kagi/api/search.html", "message": message}
    if location is not None:
        error["location"] = location
    return {"meta": {"trace": "kagi-trace-err", "node": "us-east4", "ms": 3}, "data": [], "error": [error]}


def kagi_legacy_error_body(code: int, msg: str) -> dict[str, Any]:
    """The legacy envelope with a numeric code, which Kagi also sends with HTTP 200 (101: no credit)."""
    return {
        "meta": {"id": "ec420bfd904acf489f741494c87a50e7", "node": "us-central1", "ms": 4},
        "data": None,
        "error": [{"code": code, "msg": msg, "ref": None}],
    }


class FakeKagi(FakeServer):
    """Answers POST /api/v1/search like Kagi: Bearer (or Bot) auth, body validation, typed arrays.

    With `api_key` set, any other token gets 401; without it, any non-empty token is accepted.
    """

    provider_id = "kagi"

    def __init__(self, n_results: int = 12, api_key: str | None = None) -> None:
        super().__init__()
        self.n_results = n_results
        self.api_key = api_key

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.path != "/api/v1/search":
            return Reply(404, kagi_error_body("not_found", "Not found"))
        if request.method != "POST":
            return Reply(405, kagi_error_body("method_not_allowed", "Method not allowed"))
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme not in ("Bearer", "Bot") or not token:
            return Reply(401, kagi_error_body("auth.missing_token", "Missing API token"))
        if self.api_key is not None and token != self.api_key:
            return Reply(401, kagi_error_body("auth.invalid_token", "Invalid API token"))
        try:
            body = request.json()
        except ValueError:
            return Reply(400, kagi_error_body("request.invalid_json", "Body is not valid JSON"))
        query, limit = body.get("query"), body.get("limit", 1024)
        if not isinstance(query, str) or not query.strip():
            return Reply(400, kagi_error_body("request.missing_field", "query is required", "query"))
        if not isinstance(limit, int) or not 1 <= limit <= 1024:
            return Reply(400, kagi_error_body("request.invalid_field", "limit must be 1..1024", "limit"))
        after = (body.get("filters") or {}).get("after")
        if after is not None and not (isinstance(after, str) and _DATE_RE.fullmatch(after)):
            return Reply(400, kagi_error_body("request.invalid_field", "filters.after must be YYYY-MM-DD", "filters"))
        return Reply(200, honour_domains(kagi_results_body(query, self.n_results, limit=limit), *site_domains(query)))
