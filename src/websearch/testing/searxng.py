"""A fake SearXNG instance: the JSON format of searx/webapp.py, its errors and its quirks.

Like the real server it accepts `time_range` day, week, month or year (anything else is a 400),
`pageno` 1, 2, ... (a page past the last one with results answers an empty `results`), and a
`categories` comma list (names it does not know are ignored, as searx/webadapter.py does).
"""

from __future__ import annotations

from typing import Any, Final

from ._server import FakeServer, RecordedRequest, Reply, honour_domains, site_domains

__all__ = ["CATEGORIES", "FakeSearXNG", "searxng_result", "searxng_results_body"]

#: The categories of a default instance's tabs (searx/settings.yml `categories_as_tabs`).
CATEGORIES: Final = ("general", "images", "videos", "news", "map", "music", "it", "science", "files", "social media")
TIME_RANGES: Final = ("day", "week", "month", "year")


def searxng_result(
    i: int, query: str, *, published: str | None = None, legacy: bool = False, category: str = "general"
) -> dict[str, Any]:
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
            category=category,
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


def searxng_results_body(
    query: str, n: int = 12, *, first: int = 1, category: str = "general", **extra: Any
) -> dict[str, Any]:
    """A 200 body with `n` results numbered from `first`, two suggestions and one unresponsive engine."""
    body: dict[str, Any] = {
        "query": query,
        "number_of_results": 0,
        "results": [
            searxng_result(
                i, query, published="2026-11-27T00:00:00" if i == 1 else None, legacy=i % 3 == 0, category=category
            )
            for i in range(first, first + n)
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


def invalid_value(name: str, value: str) -> Reply:
    """SearXNG's 400 for a bad parameter (searx.exceptions.SearxParameterException)."""
    return Reply(400, {"error": f'Invalid value "{value}" for parameter {name}'})


class FakeSearXNG(FakeServer):
    """Answers GET /search?format=json like a SearXNG instance with JSON output enabled.

    Every page holds `n_results` results, distinct from one page to the next; pages after
    `pages` (when set) are empty, as when the engines have nothing more. `site:` / `-site:`
    operators in `q` are honoured, as most engines behind a real instance honour them.
    """

    provider_id = "searxng"

    def __init__(self, n_results: int = 12, pages: int | None = None) -> None:
        super().__init__()
        self.n_results = n_results
        self.pages = pages

    def default_reply(self, request: RecordedRequest) -> Reply:
        if not request.path.endswith("/search"):
            return Reply(404, "<html><body>Not Found</body></html>", content_type="text/html")
        args = request.args
        if not args.get("q"):
            return Reply(400, {"error": "No query"})
        if args.get("format") != "json":
            return Reply(200, "<html><body>results</body></html>", content_type="text/html")
        time_range = args.get("time_range")
        if time_range not in (None, "", "None", *TIME_RANGES):
            return invalid_value("time_range", time_range)
        pageno = args.get("pageno", "1")
        if not pageno.isdigit() or int(pageno) < 1:
            return invalid_value("pageno", pageno)
        page = int(pageno)
        asked = [c.strip() for c in args.get("categories", "").split(",")]
        category = next((c for c in asked if c in CATEGORIES), "general")
        n = 0 if self.pages is not None and page > self.pages else self.n_results
        body = searxng_results_body(args["q"], n, first=(page - 1) * self.n_results + 1, category=category)
        return Reply(200, honour_domains(body, *site_domains(args["q"])))  # most engines honour site:
