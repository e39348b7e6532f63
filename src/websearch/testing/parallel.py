"""A fake Parallel Search API (POST /v1beta/search): `search_id` and `results[]` with excerpts,
the beta header check, FastAPI-style 422s and plain-text failures."""

from __future__ import annotations

import hashlib
from typing import Any

from ._server import FakeServer, RecordedRequest, Reply, honour_domains

__all__ = ["FakeParallel", "parallel_result", "parallel_results_body"]

BETA = "search-extract-2025-10-10"


def parallel_result(i: int, query: str) -> dict[str, Any]:
    """One result; like the real API, `publish_date` is often null and `title` sometimes absent."""
    result: dict[str, Any] = {
        "url": f"https://www.example{i}.com/{query.replace(' ', '-')}",
        "title": f"{query.title()} explained ({i})",
        "publish_date": f"2026-11-{29 - i % 25:02d}" if i % 3 == 1 else None,
        "excerpts": [f"Section {i}.1 on {query}.", f"Section {i}.2: details and caveats."],
    }
    if i % 5 == 0:
        del result["title"]
    return result


def parallel_results_body(query: str, n: int = 10) -> dict[str, Any]:
    digest = hashlib.sha256(query.encode()).hexdigest()[:32]
    return {
        "search_id": f"search_{digest}",
        "results": [parallel_result(i, query) for i in range(1, n + 1)],
        "warnings": [],
        "usage": [{"name": "sku_search", "count": 1}],
    }


def validation_error(loc: str, msg: str) -> dict[str, Any]:
    """FastAPI's 422 body."""
    return {"detail": [{"type": "value_error", "loc": ["body", loc], "msg": msg, "input": None}]}


class FakeParallel(FakeServer):
    """Answers POST /v1beta/search with `max_results` (default 10) results; `n_results` overrides
    the default so tests can see the local cap at work."""

    provider_id = "parallel"

    def __init__(self, n_results: int = 10) -> None:
        super().__init__()
        self.n_results = n_results

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method != "POST" or request.path != "/v1beta/search":
            return Reply(404, "Not Found")
        if not request.headers.get("x-api-key"):
            return Reply(401, {"error": {"message": "Invalid or missing API key.", "ref_id": "ref_401"}})
        if request.headers.get("parallel-beta") != BETA:
            return Reply(
                400, {"error": {"message": "Missing or unsupported parallel-beta header.", "ref_id": "ref_400"}}
            )
        try:
            body = request.json()
        except ValueError:
            return Reply(422, validation_error("", "JSON decode error"))
        if not isinstance(body, dict) or not (body.get("objective") or body.get("search_queries")):
            return Reply(422, validation_error("objective", "objective or search_queries is required"))
        if body.get("mode", "one-shot") not in ("one-shot", "agentic", "fast"):
            return Reply(422, validation_error("mode", "Input should be 'one-shot', 'agentic' or 'fast'"))
        n = int(body.get("max_results", self.n_results))
        policy = body.get("source_policy") or {}
        results = parallel_results_body(body.get("objective") or body["search_queries"][0], n)
        return Reply(200, honour_domains(results, policy.get("include_domains", ()), policy.get("exclude_domains", ())))
