"""A fake synthetic.new search API (POST /v2/search): `results[]` with a raw `published` value."""

from __future__ import annotations

from typing import Any

from ._server import FakeServer, RecordedRequest, Reply

__all__ = ["FakeSynthetic", "synthetic_result", "synthetic_results_body"]


def synthetic_result(i: int, query: str) -> dict[str, Any]:
    return {
        "url": f"https://docs{i}.example.net/{query.replace(' ', '-')}",
        "title": f"{query.title()}: notes {i}",
        "text": f"Notes {i} on {query}, summarised from the page content.",
        "published": f"2026-11-{27 - i % 20:02d}T00:00:00.000Z" if i % 2 else None,
    }


def synthetic_results_body(query: str, n: int = 8) -> dict[str, Any]:
    return {"results": [synthetic_result(i, query) for i in range(1, n + 1)]}


class FakeSynthetic(FakeServer):
    """Answers POST /v2/search with `n_results` results for `query` (the API has no count)."""

    provider_id = "synthetic"

    def __init__(self, n_results: int = 8) -> None:
        super().__init__()
        self.n_results = n_results

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method != "POST" or request.path != "/v2/search":
            return Reply(404, {"error": "Not found"})
        if not request.headers.get("authorization", "").startswith("Bearer "):
            return Reply(401, {"error": "Invalid API key"})
        try:
            query = request.json()["query"]
        except (ValueError, KeyError, TypeError):
            return Reply(400, {"error": "query is required"})
        if not isinstance(query, str) or not query.strip():
            return Reply(400, {"error": "query is required"})
        return Reply(200, synthetic_results_body(query, self.n_results))
