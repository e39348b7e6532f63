"""A fake api.tavily.com: POST /search with the JSON body and answers of tavily-python's era, and its errors."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Collection
from typing import Any

from ._server import FakeServer, RecordedRequest, Reply, honour_domains

__all__ = [
    "FakeTavily",
    "tavily_error",
    "tavily_result",
    "tavily_results_body",
    "usage_limit_reply",
]

_TIME_RANGES = ("day", "week", "month", "year", "d", "w", "m", "y")
_DEPTHS = ("basic", "advanced", "fast", "ultra-fast")
_TOPICS = ("general", "news", "finance")
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


def tavily_result(
    i: int, query: str, *, published_date: str | None = None, domain: str | None = None
) -> dict[str, Any]:
    """One `results[]` entry; `published_date` is present only when given (Tavily sends it for news)."""
    result: dict[str, Any] = {
        "title": f"{query.title()} explained ({i})",
        "url": f"https://{domain or f'docs{i}.example.net'}/{query.replace(' ', '-')}",
        "content": f"{query.capitalize()} in depth, part {i}: the key facts, a worked example and the caveats. ",
        "score": round(0.9 - i * 0.03, 8),
        "raw_content": None,
    }
    if published_date is not None:
        result["published_date"] = published_date
    return result


def tavily_results_body(
    query: str,
    n: int = 5,
    *,
    answer: str | None = None,
    news: bool = False,
    request_id: str | None = None,
    domains: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A 200 body with `n` results (hosted on `domains` in turn, when given); news results carry
    RFC 2822 `published_date`s."""
    dates = ("Fri, 27 Nov 2026 09:30:00 GMT", "Sun, 29 Nov 2026 18:00:00 GMT")
    results = [
        tavily_result(
            i,
            query,
            published_date=dates[i % 2] if news else None,
            domain=domains[i % len(domains)] if domains else None,
        )
        for i in range(1, n + 1)
    ]
    return {
        "query": query,
        "follow_up_questions": None,
        "answer": answer,
        "images": [],
        "results": results,
        "response_time": "1.67",
        "request_id": request_id or str(uuid.uuid4()),
    }


def tavily_error(message: str) -> dict[str, Any]:
    """The error body the Python SDK parses: `{"detail": {"error": "<message>"}}`."""
    return {"detail": {"error": message}}


def usage_limit_reply(status: int = 432) -> Reply:
    """432: the plan's usage limit; 433: the pay-as-you-go limit."""
    if status == 432:
        text = (
            "This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com"
        )
    else:
        text = "This request exceeds the pay-as-you-go limit. You can increase your limit on the Tavily dashboard."
    return Reply(status, tavily_error(text))


class FakeTavily(FakeServer):
    """Answers POST /search like Tavily: `max_results` results (0..20), an answer when asked.

    `valid_keys`, when given, are the only Bearer keys accepted (else 401). With `empty_with_time_range`,
    a search that carries `time_range` finds nothing, as a narrow window often does. Results come
    from `include_domains` when it is given; `topic`, the dates and the domain lists are checked.
    """

    provider_id = "tavily"

    def __init__(self, valid_keys: Collection[str] | None = None, *, empty_with_time_range: bool = False) -> None:
        super().__init__()
        self.valid_keys = valid_keys
        self.empty_with_time_range = empty_with_time_range

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method != "POST" or request.path != "/search":
            return Reply(404, {"detail": "Not Found"})
        auth = request.headers.get("authorization", "")
        key = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else ""
        if not key or (self.valid_keys is not None and key not in self.valid_keys):
            return Reply(401, tavily_error("Unauthorized: missing or invalid API key."))
        try:
            body = request.json()
        except (ValueError, UnicodeDecodeError):
            return Reply(400, tavily_error("Invalid JSON body."))
        if not isinstance(body, dict) or not isinstance(body.get("query"), str) or not body["query"].strip():
            return Reply(400, tavily_error("Query is missing."))
        if body.get("time_range") not in (None, *_TIME_RANGES):
            return Reply(400, tavily_error(f"Invalid time_range: {json.dumps(body['time_range'])}."))
        if body.get("search_depth", "basic") not in _DEPTHS:
            return Reply(400, tavily_error("Invalid search_depth."))
        if body.get("topic", "general") not in _TOPICS:
            return Reply(400, tavily_error("Invalid topic."))
        for field in ("start_date", "end_date"):
            value = body.get(field)
            if value is not None and (not isinstance(value, str) or not _DATE_RE.fullmatch(value)):
                return Reply(400, tavily_error(f"Invalid {field}: expected YYYY-MM-DD."))
        for field in ("include_domains", "exclude_domains"):
            value = body.get(field, [])
            if not isinstance(value, list) or not all(isinstance(d, str) for d in value):
                return Reply(400, tavily_error(f"{field} must be a list of strings."))
        n = body.get("max_results", 5)
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= 20:
            return Reply(400, tavily_error("max_results must be between 0 and 20."))
        query = body["query"]
        if self.empty_with_time_range and body.get("time_range"):
            return Reply(200, tavily_results_body(query, 0))
        answer = (
            f"{query.capitalize()} is covered by {n} sources; the short answer is yes."
            if body.get("include_answer")
            else None
        )
        domains = tuple(body.get("include_domains", ()))
        results = tavily_results_body(query, n, answer=answer, news=body.get("topic") == "news", domains=domains)
        return Reply(200, honour_domains(results, (), body.get("exclude_domains", ())))
