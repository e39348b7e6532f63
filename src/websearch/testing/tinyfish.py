"""A fake TinyFish search API: GET / with `X-API-Key`, pages of at most ten results.

TinyFish publishes no wire reference; this follows what the upstream adapter sends and reads
(`query`, `recency_minutes`, `num_results` <= 10, a 0-based `page`; the answer
`{"total_results", "page", "results": [{title, url, snippet, site_name}]}`).
"""

from __future__ import annotations

from typing import Any

from ._server import FakeServer, RecordedRequest, Reply, honour_domains, site_domains

__all__ = ["FakeTinyFish", "tinyfish_page_body", "tinyfish_result"]


def tinyfish_result(i: int, query: str) -> dict[str, Any]:
    """Result number `i` (1-based across pages) for `query`."""
    site = f"Example Site {i % 6}"
    return {
        "title": f"{query.title()}: chapter {i}",
        "url": f"https://site{i % 6}.example.com/{query.replace(' ', '-')}/{i}",
        "snippet": f"Chapter {i} covers {query} with examples, pitfalls and a short FAQ.",
        "site_name": site,
    }


def tinyfish_page_body(query: str, page: int, page_size: int, total: int) -> dict[str, Any]:
    """Page `page` of `total` results, `page_size` per page."""
    first = page * page_size
    results = [tinyfish_result(i + 1, query) for i in range(first, min(first + page_size, total))]
    return {"total_results": total, "page": page, "results": results}


def _int(args: dict[str, str], name: str, default: int, low: int, high: int) -> int | None:
    raw = args.get(name)
    if raw is None:
        return default
    return int(raw) if raw.isdigit() and low <= int(raw) <= high else None


class FakeTinyFish(FakeServer):
    """Serves `total` results for any query, paged by `num_results` and `page`."""

    provider_id = "tinyfish"

    def __init__(self, total: int = 25) -> None:
        super().__init__()
        self.total = total

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method != "GET" or request.path != "/":
            return Reply(404, {"detail": "Not Found"})
        if not request.headers.get("x-api-key"):
            return Reply(401, {"detail": "Missing API key"})
        args = request.args
        if not args.get("query"):
            return Reply(400, {"detail": "query is required"})
        size = _int(args, "num_results", 10, 1, 10)
        page = _int(args, "page", 0, 0, 10_000)
        minutes = _int(args, "recency_minutes", 0, 1, 10**7)
        if size is None or page is None or minutes is None:
            return Reply(400, {"detail": "num_results must be 1..10; page and recency_minutes whole numbers"})
        body = tinyfish_page_body(args["query"], page, size, self.total)
        return Reply(200, honour_domains(body, *site_domains(args["query"])))
