"""Tavily: the Tavily search API, keyed by `TAVILY_API_KEY` or a stored credential.

POST https://api.tavily.com/search with a Bearer key and the JSON body
`{query, search_depth: "basic", max_results, include_answer: "advanced", include_raw_content: false}`,
plus `time_range` (day/week/month/year, verbatim) for `recency`; `topic` is never sent, so a
recency filter never narrows the search to news. When a time-filtered search comes back with
neither an answer nor a result, it is repeated once without `time_range` (with a notice).
`max_results` is the collapsed count clamped to 1..20, default 5 (what upstream's code does; its
doc's "5..20" is wrong). Quota is a status of its own here: 432 (plan limit) and 433
(pay-as-you-go limit). Error text is read from Tavily's `{"detail": {"error": ...}}` envelope.

The richer parameters (mcp-web_search-tool.md) add fields only when they are given, so a call
with web_search.md's parameters alone sends exactly the body above:
- dates: the ladder's start and the end become `start_date` / `end_date` (YYYY-MM-DD, UTC) and
  replace `time_range`; a start or end with a time of day (recency_hours, a timestamp) is cut to
  its day, with a notice. An end with only `recency` makes the recency window a start_date.
- `include_domains` / `exclude_domains`: sent as they are.
- category: `news` -> `topic: "news"`, `financial report` -> `topic: "finance"`; the other
  categories have no Tavily counterpart (a notice).
- mode: auto -> basic, fast -> fast, instant -> ultra-fast; the deep modes -> advanced (a notice).
- `summary`, `sort_by_date`: not supported. `text_chars` is applied by the renderer: `content` is
  Tavily's snippet, and `include_raw_content` (whole pages) is not asked for.
The empty-result retry applies to `time_range` only: explicit dates are never dropped.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._filters import Filters, recency_start
from .._types import SearchParams, SearchResponse
from .._wire import HttpRequest, HttpResponse
from ..errors import SearchProviderError
from ._legacy import (
    HttpProvider,
    Support,
    as_str,
    clamp_count,
    classify_http_error,
    json_object,
    make_source,
    redact_detail,
    require_key,
    retry_after_seconds,
    status_phrase,
)

if TYPE_CHECKING:
    from .._context import ProviderContext

URL: Final = "https://api.tavily.com/search"
ENV_KEYS: Final = ("TAVILY_API_KEY",)
DEFAULT_RESULTS: Final = 5
MAX_RESULTS: Final = 20
QUOTA_STATUSES: Final = {432: "plan usage limit exceeded", 433: "pay-as-you-go limit exceeded"}
_DEPTHS: Final = {
    "auto": "basic",
    "fast": "fast",
    "instant": "ultra-fast",
    "deep-lite": "advanced",
    "deep": "advanced",
    "deep-reasoning": "advanced",
}
_TOPICS: Final = {"news": "news", "financial report": "finance"}


class Tavily(HttpProvider):
    id = "tavily"
    supports: ClassVar[dict[str, Support]] = {
        "recency": "native",
        "limit": "native",
        "num_search_results": "native",
        "mode": "approximate",  # the deep modes search with search_depth=advanced
        "recency_days": "native",
        "recency_hours": "approximate",  # whole days only
        "start_published_date": "native",  # a timestamp is cut to its day (a notice)
        "end_published_date": "native",
        "category": "approximate",  # news and financial report only
        "include_domains": "native",
        "exclude_domains": "native",
    }

    def build_request(self, params: SearchParams, ctx: ProviderContext, *, time_range: bool = True) -> HttpRequest:
        key = require_key(ctx, self.id, ENV_KEYS)
        f = ctx.filters(params)
        body: dict[str, Any] = {
            "query": params.query,
            "search_depth": _DEPTHS[f.mode] if f.mode else "basic",
            "max_results": clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0],
            "include_answer": "advanced",
            "include_raw_content": False,
        }
        if f.category in _TOPICS:
            body["topic"] = _TOPICS[f.category]
        recency, start, end = _window(params, f, ctx)
        if recency and time_range:
            body["time_range"] = recency
        if start is not None:
            body["start_date"] = start.isoformat()
        if end is not None:
            body["end_date"] = end.isoformat()
        if f.include_domains:
            body["include_domains"] = list(f.include_domains)
        if f.exclude_domains:
            body["exclude_domains"] = list(f.exclude_domains)
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
        return HttpRequest("POST", ctx.endpoint(self.id, URL), headers=headers, json=body, secrets=(key,))

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        notices = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[1]
        f = ctx.filters(params)
        if f.mode in ("deep-lite", "deep", "deep-reasoning"):
            notices.append(
                f"mode={f.mode} approximated: Tavily has no deep-research mode; searched with search_depth=advanced"
            )
        _, start, end = _window(params, f, ctx)
        if params.recency and f.start_source is not None:
            notices.append(f"recency={params.recency!r} not applied: {f.start_source} takes precedence")
        elif params.recency and start is not None:
            notices.append(
                f"recency={params.recency!r} approximated: with end_published_date it is sent as start_date={start}"
            )
        if f.start_source is not None and f.start_has_time:
            raw = getattr(params, f.start_source)
            notices.append(
                f"{f.start_source}={raw!r} approximated: Tavily filters by whole days; sent start_date={start}"
            )
        if f.end_has_time:
            raw = params.end_published_date
            notices.append(
                f"end_published_date={raw!r} approximated: Tavily filters by whole days; sent end_date={end}"
            )
        if f.category is not None and f.category not in _TOPICS:
            notices.append(
                f"category={f.category!r} not applied: Tavily does not support it (its topics are news and finance)"
            )
        return notices

    async def search(self, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        response = self.parse_response(await ctx.send(self.id, self.build_request(params, ctx)), params, ctx)
        if not _window(params, ctx.filters(params), ctx)[0] or response.answer or response.sources:
            return response
        retry = await ctx.send(self.id, self.build_request(params, ctx, time_range=False))
        response = self.parse_response(retry, params, ctx)
        notice = (
            f"recency={params.recency!r} not applied: Tavily found nothing with time_range={params.recency}, "
            "so these results come from a search without it"
        )
        return replace(response, notices=(*response.notices, notice))

    def parse_response(self, response: HttpResponse, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        if not response.ok:
            raise http_error(response)
        data = json_object(self.id, response)
        limit = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0]
        now = ctx.clock.now()
        results = data.get("results")
        sources = [
            make_source(url, r.get("title"), r.get("content"), r.get("published_date"), now)
            for r in (results if isinstance(results, list) else ())
            if isinstance(r, dict) and isinstance(url := r.get("url"), str) and url
        ]
        answer = as_str(data.get("answer"))
        return SearchResponse(
            provider=self.id,
            answer=answer.strip() or None if answer else None,
            sources=tuple(sources[:limit]),
            request_id=as_str(data.get("request_id")),
            auth_mode="api_key",
        )


def _window(params: SearchParams, f: Filters, ctx: ProviderContext) -> tuple[str | None, date | None, date | None]:
    """(time_range, start_date, end_date): the ladder's dates when it has any, else `recency`.

    Only a date range can carry an end, so an end with only `recency` turns the window into a start.
    """
    start = f.start
    if start is None and f.end is not None:
        start = recency_start(params.recency, ctx.clock.now())
    if start is None and f.end is None:
        return params.recency, None, None
    return None, start.date() if start else None, f.end.date() if f.end else None


def http_error(response: HttpResponse) -> SearchProviderError:
    """A non-2xx answer: the shared classification, then 432/433 as quota, else
    `Tavily API error (<status>): <message from the envelope, the body, or the status>`."""
    data = _json_or_none(response)
    retry = retry_after_seconds(response.headers)
    if retry is None and isinstance(data, dict) and isinstance(data.get("error"), dict):
        hint = data["error"].get("retry_after_seconds")  # the keyless envelope's hint
        retry = float(hint) if isinstance(hint, (int, float)) and not isinstance(hint, bool) else None
    shared = classify_http_error("tavily", response)
    if shared is not None:
        shared.retry_after = retry
        return shared
    status = response.status
    text = _message(data) if data is not None else None
    if text is not None:
        text = redact_detail(response, text) or None
    text = text or response.safe_text() or status_phrase(status)
    if status in QUOTA_STATUSES:
        return SearchProviderError(
            "tavily", f"tavily: credits exhausted ({status} {QUOTA_STATUSES[status]}): {text}", status
        )
    message = f"Tavily API error ({status}): {text}"
    if status == 429 and retry is not None:
        message += f"; retry after {retry:g} s"
    return SearchProviderError("tavily", message, status, retry_after=retry)


def _message(value: object) -> str | None:
    """The first string under `detail`, `error` or `message`, however deeply nested."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, dict):
        for key in ("detail", "error", "message"):
            found = _message(value.get(key))
            if found:
                return found
    return None


def _json_or_none(response: HttpResponse) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


PROVIDER: Final = Tavily()
