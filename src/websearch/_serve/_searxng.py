"""`/search`: SearXNG's search API, so tools that speak it (chat UIs, agent frameworks, MCP
servers built for SearXNG) get every websearch provider, the cache and failover unchanged.

Like searx/webapp.py: GET query or POST form; `q` (400 `No query` without one), `format=json`
(the only format served; missing means json), `categories`, `language`, `time_range`
(day/week/month/year), `pageno` (1, 2, ...), `safesearch` (0, 1, 2) and `engines`; a bad value
is SearXNG's 400 `{"error": "Invalid value \"x\" for parameter y"}`. How each maps:

- `time_range` → `recency`; `categories` news → `category="news"`, science → "research paper"
  (searched as publication), any other → an unscoped web search (reported as `general`);
- `pageno` → a window of 10 results: page p asks for 10·p and answers the last ten (within
  `[serve] max_limit`; a page past it is empty, as past SearXNG's last page);
- `engines` naming websearch providers → that provider, or a fan-out over several; names it
  does not know are ignored, as SearXNG ignores engines it has not enabled;
- `language` and `safesearch` are accepted and not applied (no provider parameter carries them).

The answer has SearXNG's shape: `query`, `number_of_results`, `results[]` (`url`, `title`,
`content`, `publishedDate`, `engine`, `engines`, `positions`, `score`, `category`, ...),
`answers` (an answer engine's answer), `suggestions` (related questions), `corrections`,
`infoboxes`, `unresponsive_engines` (`[provider, reason]` of each that failed, in SearXNG's
words). A search every provider failed is SearXNG's answer too: no results, every engine
unresponsive, 200. `GET /?q=...` redirects here (308), as SearXNG's index does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qsl, urlsplit

import orjson
from starlette.responses import RedirectResponse, Response

from .._dates import parse_date
from ..errors import InvalidSearchParams, WebSearchError
from ._api import error_response, json_response, note_search, prepared

if TYPE_CHECKING:
    from starlette.requests import Request

    from .._client import WebSearch
    from .._types import SearchResponse, SearchSource
    from ._config import ServeConfig

__all__ = ["PAGE_SIZE", "SearxngApi", "searxng_answer"]

PAGE_SIZE: Final = 10
TIME_RANGES: Final = ("day", "week", "month", "year")
#: SearXNG categories websearch can scope a search to, and the `category` it searches as.
CATEGORIES: Final = {"news": "news", "science": "research paper"}
#: An attempt's error kind in the words SearXNG uses for an unresponsive engine.
_REASONS: Final = {
    "timeout": "timeout",
    "connection": "network error",
    "rate_limited": "too many requests",
    "quota": "too many requests",
    "auth": "access denied",
    "missing_credential": "access denied",
    "blocked": "CAPTCHA",
    "unavailable": "HTTP error",
    "rejected": "HTTP error",
    "invalid_response": "parsing error",
}


def _invalid(name: str, value: str) -> Response:
    return error_response(400, f'Invalid value "{value}" for parameter {name}')


class SearxngApi:
    """`/search` (and the `/` redirect) bound to one client."""

    def __init__(self, client: WebSearch, config: ServeConfig, providers: Sequence[str]) -> None:
        self.client = client
        self.limits = config.limits
        self.engines = frozenset(p for p in providers if p != "public")

    async def index(self, request: Request) -> Response:
        """SearXNG's index: a search goes to /search (308 keeps the method and the form)."""
        form = await _form(request)
        if form.get("q"):
            query = request.url.query
            return RedirectResponse("/search" + (f"?{query}" if query else ""), status_code=308)
        routes = ["/v1/search", "/search", "/mcp", "/healthz", "/readyz", "/metrics", "/openapi.json"]
        return json_response(200, {"service": "websearch", "routes": routes})

    async def search(self, request: Request) -> Response:
        form = await _form(request)
        query = form.get("q", "").strip()
        if not query:
            return error_response(400, "No query")
        fmt = form.get("format") or "json"
        if fmt != "json":
            return error_response(400, f'Invalid value "{fmt}" for parameter format (this server answers json only)')
        pageno = form.get("pageno") or "1"
        if not pageno.isdigit() or int(pageno) < 1:
            return _invalid("pageno", pageno)
        time_range = form.get("time_range") or ""
        if time_range not in ("", "None", *TIME_RANGES):
            return _invalid("time_range", time_range)
        safesearch = form.get("safesearch") or "0"
        if safesearch not in ("0", "1", "2"):
            return _invalid("safesearch", safesearch)
        asked = [c.strip() for c in (form.get("categories") or "").split(",") if c.strip()]
        category = next((c for c in asked if c in CATEGORIES), None)
        kwargs: dict[str, Any] = {}
        if time_range in TIME_RANGES:
            kwargs["recency"] = time_range
        if category is not None:
            kwargs["category"] = CATEGORIES[category]
        engines = [e.strip() for e in (form.get("engines") or "").split(",") if e.strip() in self.engines]
        engines = list(dict.fromkeys(engines))
        if len(engines) == 1:
            kwargs["provider"] = engines[0]
        elif engines:
            kwargs["fanout"] = engines
        page = int(pageno)
        start = (page - 1) * PAGE_SIZE
        kwargs["limit"] = min(page * PAGE_SIZE, self.limits.max_limit)
        try:
            prepared(self.client, self.limits, query, kwargs)
            if start >= self.limits.max_limit:  # past the last page this server gives
                return Response(orjson.dumps(_empty(query)), media_type="application/json")
            response = await self.client.asearch(query, **kwargs)
        except InvalidSearchParams as exc:
            return error_response(400, f"Invalid value for parameter {exc.param}: {exc.message}")
        except WebSearchError as exc:
            return error_response(500, f"websearch could not run: {exc}")
        note_search(request, response, query)
        answer = searxng_answer(response, query, category or "general", start, self.client.clock.now())
        return Response(orjson.dumps(answer), media_type="application/json")


async def _form(request: Request) -> dict[str, str]:
    """The query string's parameters, overridden by a POST's urlencoded form (as SearXNG reads them)."""
    form = dict(request.query_params)
    if request.method == "POST":
        body = (await request.body()).decode("utf-8", "replace")
        form.update(parse_qsl(body, keep_blank_values=True))
    return form


def _empty(query: str) -> dict[str, Any]:
    return {
        "query": query,
        "number_of_results": 0,
        "results": [],
        "answers": [],
        "corrections": [],
        "infoboxes": [],
        "suggestions": [],
        "unresponsive_engines": [],
    }


def searxng_answer(response: SearchResponse, query: str, category: str, start: int, now: Any) -> dict[str, Any]:
    """A response in SearXNG's JSON shape: its results `start` to `start + 10`."""
    results = [
        _result(i, source, response.provider, category, now)
        for i, source in enumerate(response.sources, 1)
        if start < i <= start + PAGE_SIZE
    ]
    body = _empty(query)
    body.update(
        number_of_results=len(response.sources),
        results=results,
        answers=_answers(response) if start == 0 else [],
        suggestions=[q for q in response.related_questions if q.strip()],
        unresponsive_engines=_unresponsive(response),
    )
    return body


def _result(i: int, source: SearchSource, provider: str, category: str, now: Any) -> dict[str, Any]:
    if source.engines:  # a fan-out: every engine that returned it, at its rank
        engines = [e.provider for e in source.engines]
        positions = [e.rank for e in source.engines]
    else:
        engines, positions = [provider], [i]
    weight = len(positions)  # SearXNG's score: each position counts, more engines count more
    parts = urlsplit(source.url)
    return {
        "url": source.url,
        "title": source.title,
        "content": source.snippet or (source.highlights[0] if source.highlights else ""),
        "publishedDate": _published(source, now),
        "engine": engines[0],
        "engines": engines,
        "positions": positions,
        "score": sum(weight / p for p in positions if p > 0),
        "category": category,
        "template": "default.html",
        "parsed_url": [parts.scheme, parts.netloc, parts.path, "", parts.query, parts.fragment],
        "thumbnail": "",
        "img_src": "",
        "priority": "",
        "author": source.author or "",
    }


def _published(source: SearchSource, now: Any) -> str | None:
    """ISO 8601, as SearXNG writes `publishedDate`: the date given, else now minus its age."""
    when = parse_date(source.published_date)
    if when is None and source.age_seconds is not None:
        from datetime import timedelta

        when = now - timedelta(seconds=source.age_seconds)
    return when.isoformat() if when is not None else None


def _answers(response: SearchResponse) -> list[dict[str, Any]]:
    """Answer engines' answers, as SearXNG's `answers` entries (the first cited URL as `url`)."""
    if response.answers:
        pairs = [(a.provider, a.answer, a.citations) for a in response.answers]
    elif response.answer and response.answer.strip():
        pairs = [(response.provider, response.answer, response.citations)]
    else:
        return []
    return [
        {
            "answer": text,
            "url": citations[0].url if citations else None,
            "engine": provider,
            "template": "answer/legacy.html",
        }
        for provider, text, citations in pairs
    ]


def _unresponsive(response: SearchResponse) -> list[list[str]]:
    """`[provider, reason]` for each provider that failed or was passed over (once each)."""
    out: dict[str, str] = {}
    for attempt in response.attempts:
        if attempt.error is None and attempt.skipped is None:
            continue
        kind = attempt.error_kind or ""
        if attempt.skipped is None and kind == "no_results":
            continue  # it answered, with nothing: not unresponsive
        reason = "timeout" if attempt.skipped == "deadline" else _REASONS.get(kind, "unexpected crash")
        if attempt.skipped in ("cooldown", "circuit_open", "paced"):
            reason = "Suspended: " + (_REASONS.get(kind) or "too many requests")
        out.setdefault(attempt.provider, reason)
    return [[provider, reason] for provider, reason in out.items()]
