"""A fake SearXNG instance: the JSON format of searx/webapp.py, its errors and its quirks."""

from __future__ import annotations

from typing import Any

from ._server import FakeServer, RecordedRequest, Reply

__all__ = ["FakeSearXNG", "searxng_result", "searxng_results_body"]


def searxng_result(i: int, query: str, *, published: str | None = None, legacy: bool = False) -> dict[str, Any]:
    """One result as SearXNG serialises it; `legacy` drops the optional keys old engines omit."""
    url = f"https://site{i}.example.org/{query.replace(' ', '-')}/{i}"
    result: dict[str, Any] = {
        "url": url,
        "title": f"{query.title()} result {i}",
        "content": f"  About {query}: page {i} explains the details, trade-offs and examples.  ",
        "engine": "duckduckgo",
        "publishedDate": published,
    }
    if not legacy:
        result.update(
            engines=["duckduckgo", "brave"],
            positions=[i, i + 1],
            score=4.0 / i,
            category="general",
            template="default.html",
            parsed_url=["https", f"site{i}.example.org", f"/{i}", "", "", ""],
            pubdate="",
            thumbnail="",
            img_src="",
            iframe_src="",
            audio_src="",
            length=None,
            views="",
            author="",
            metadata="",
            priority="",
            open_group=False,
            close_group=False,
        )
    return result


def searxng_results_body(query: str, n: int = 12, **extra: Any) -> dict[str, Any]:
    """A 200 body with `n` results, two suggestions and one unresponsive engine."""
    body: dict[str, Any] = {
        "query": query,
        "number_of_results": 0,
        "results": [
            searxng_result(i, query, published="2026-11-27T00:00:00" if i == 1 else None, legacy=i % 3 == 0)
            for i in range(1, n + 1)
        ],
        "answers": [],
        "corrections": [],
        "infoboxes": [],
        "suggestions": [f"{query} tutorial", f"{query} vs alternatives"],
        "unresponsive_engines": [["google", "CAPTCHA"]],
    }
    body.update(extra)
    return body


def json_disabled_page() -> str:
    """What SearXNG answers (403) when `json` is not in `search.formats`."""
    return "<!DOCTYPE html><html><head><title>403 Forbidden</title></head><body><h1>Forbidden</h1></body></html>"


class FakeSearXNG(FakeServer):
    """Answers GET /search?format=json like a SearXNG instance with JSON output enabled."""

    provider_id = "searxng"

    def __init__(self, n_results: int = 12) -> None:
        super().__init__()
        self.n_results = n_results

    def default_reply(self, request: RecordedRequest) -> Reply:
        if not request.path.endswith("/search"):
            return Reply(404, "<html><body>Not Found</body></html>", content_type="text/html")
        args = request.args
        if "q" not in args:
            return Reply(400, {"error": "No query"})
        if args.get("format") != "json":
            return Reply(200, "<html><body>results</body></html>", content_type="text/html")
        if args.get("time_range") not in (None, "day", "week", "month", "year"):
            return Reply(400, {"error": "Invalid time_range"})
        return Reply(200, searxng_results_body(args["q"], self.n_results))
