"""A fake Kimi Code search service (POST .../coding/v1/search): `search_results[]`, Moonshot's
OpenAI-style error envelopes, and the `x-msh-request-id` header."""

from __future__ import annotations

import hashlib
from typing import Any

from ._server import FakeServer, RecordedRequest, Reply, honour_domains, site_domains

__all__ = ["FakeKimi", "kimi_error", "kimi_result", "kimi_results_body"]

SEARCH_PATH = "/coding/v1/search"


def kimi_result(i: int, query: str) -> dict[str, Any]:
    """One result as the service sends it (fields padded, as crawled text often is)."""
    slug = query.replace(" ", "-")
    return {
        "title": f" {query.title()} — part {i} \n",
        "url": f"https://site{i}.example.cn/{slug}/{i}",
        "snippet": f"  Part {i} about {query}: what changed, why it matters and how to migrate.  ",
        "content": "",
        "date": f"2026-11-{28 - i % 20:02d}" if i % 4 else "",
        "site_name": f" Example Site {i} ",
        "icon": f"https://site{i}.example.cn/favicon.ico",
        "mime": "text/html",
    }


def kimi_results_body(query: str, n: int = 10) -> dict[str, Any]:
    return {"search_results": [kimi_result(i, query) for i in range(1, n + 1)]}


def kimi_error(message: str, kind: str) -> dict[str, Any]:
    """Moonshot's error envelope, e.g. kind `invalid_authentication_error`, `rate_limit_reached_error`,
    `exceeded_current_quota_error`, `invalid_request_error`."""
    return {"error": {"message": message, "type": kind}}


def request_id(body: bytes) -> str:
    return "msh-" + hashlib.sha256(body).hexdigest()[:24]


class FakeKimi(FakeServer):
    """Answers POST /coding/v1/search with `limit` results (at most 20) for `text_query`."""

    provider_id = "kimi"

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method != "POST" or not request.path.endswith("/search"):
            return Reply(404, kimi_error("Not Found", "resource_not_found_error"))
        if not request.headers.get("authorization", "").startswith("Bearer "):
            return Reply(401, kimi_error("Invalid Authentication", "invalid_authentication_error"))
        try:
            body = request.json()
            query, limit = body["text_query"], int(body.get("limit", 10))
        except (ValueError, KeyError, TypeError):
            return Reply(400, kimi_error("Invalid request: text_query is required", "invalid_request_error"))
        if not isinstance(query, str) or not 1 <= limit <= 20:
            return Reply(400, kimi_error("Invalid request: limit must be between 1 and 20", "invalid_request_error"))
        body = honour_domains(kimi_results_body(query, limit), *site_domains(query))
        return Reply(200, body, headers={"x-msh-request-id": request_id(request.body)})
