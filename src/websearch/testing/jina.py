"""A fake s.jina.ai: GET /<query> answered as JSON (with `Accept: application/json`), Jina's errors."""

from __future__ import annotations

from typing import Any

from ._server import FakeServer, RecordedRequest, Reply, honour_domains, site_domains

__all__ = ["FakeJina", "jina_error_body", "jina_result", "jina_results_body"]

_ERRORS = {
    401: (
        "AuthenticationRequiredError",
        40103,
        "Authentication is required to use this endpoint. Please provide a valid API key via Authorization header.",
    ),
    402: ("InsufficientBalanceError", 40203, "Account balance not enough to run this query, please recharge."),
    422: ("ParamValidationError", 42206, "Invalid query: the search query must not be empty."),
    429: ("RateLimitTriggeredError", 42903, "Per IP rate limit exceeded: 200 requests per 60s."),
}


def jina_result(i: int, query: str) -> dict[str, Any]:
    """One result: the page's title, url, SERP description and the fetched page as markdown."""
    slug = query.replace(" ", "-")
    return {
        "title": f"{query.title()} | Guide {i}",
        "url": f"https://guide{i}.example.net/{slug}",
        "description": f"A short description of {query} (result {i}).",
        "content": f"# {query.title()}\n\nPage {i} covers {query} in depth: setup, usage and pitfalls.\n\n"
        + "More text. " * 40,
        "usage": {"tokens": 800 + i},
    }


def jina_results_body(query: str, n: int = 10) -> dict[str, Any]:
    """A 200 JSON body with `n` results (Jina's code defaults to 10, at most 20)."""
    data = [jina_result(i, query) for i in range(1, n + 1)]
    return {
        "code": 200,
        "status": 20000,
        "data": data,
        "meta": {"usage": {"tokens": sum(d["usage"]["tokens"] for d in data)}},
    }


def jina_error_body(
    code: int, name: str | None = None, status: int | None = None, message: str | None = None
) -> dict[str, Any]:
    """Jina's error envelope; the name, 5-digit status and message default to the known ones."""
    known_name, known_status, known_message = _ERRORS.get(code, ("InternalServerError", code * 100, "Internal error"))
    name, message = name or known_name, message or known_message
    return {
        "data": None,
        "code": code,
        "name": name,
        "status": status or known_status,
        "message": message,
        "readableMessage": f"{name}: {message}",
    }


class FakeJina(FakeServer):
    """Answers GET /<query> like s.jina.ai: Bearer auth required, JSON only when asked for.

    With `api_key` set, any other token gets 401; without it, any non-empty token is accepted.
    `count`/`num` in the query string pick the number of results (0..20), as the real service does.
    """

    provider_id = "jina"

    def __init__(self, n_results: int = 10, api_key: str | None = None) -> None:
        super().__init__()
        self.n_results = n_results
        self.api_key = api_key

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method not in ("GET", "POST"):
            return Reply(405, jina_error_body(405, "MethodNotAllowedError", 40500, "Method not allowed"))
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme != "Bearer" or not token or (self.api_key is not None and token != self.api_key):
            return Reply(401, jina_error_body(401))
        query = request.path.lstrip("/")
        if not query.strip():
            return Reply(422, jina_error_body(422))
        n = self.n_results
        count = request.args.get("count") or request.args.get("num")
        if count and count.isdigit():
            n = min(int(count), 20)
        include, exclude = site_domains(query)
        sites = tuple(v for k, v in request.query if k == "site")
        body = honour_domains(jina_results_body(query, n), (*sites, *include), exclude)
        tokens = {"X-Usage-Tokens": str(body["meta"]["usage"]["tokens"])}
        if "application/json" not in request.headers.get("accept", ""):
            text = "\n\n".join(
                f"[{i}] Title: {d['title']}\n[{i}] URL Source: {d['url']}\n[{i}] Description: {d['description']}"
                for i, d in enumerate(body["data"], 1)
            )
            return Reply(200, text, headers=tokens, content_type="text/markdown; charset=utf-8")
        return Reply(200, body, headers=tokens)
