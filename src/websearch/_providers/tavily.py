"""Tavily: the Tavily search API, keyed by `TAVILY_API_KEY` or a stored credential.

POST https://api.tavily.com/search with a Bearer key and the JSON body
`{query, search_depth: "basic", max_results, include_answer: "advanced", include_raw_content: false}`,
plus `time_range` (day/week/month/year, verbatim) for `recency`; `topic` is never sent, so a
recency filter never narrows the search to news. When a time-filtered search comes back with
neither an answer nor a result, it is repeated once without `time_range` (with a notice).
`max_results` is the collapsed count clamped to 1..20, default 5 (what upstream's code does; its
doc's "5..20" is wrong).

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

Errors: the message is read from `{"detail": {"error": ...}}` (the SDK's envelope) or the keyless
`{"error": {"code", "message", "retry_after_seconds"}}`, whose hint is a Retry-After. Quota is a
status of its own here: 432 (plan limit) and 433 (pay-as-you-go limit).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._core._filters import recency_start
from .._core._notices import Notice, approximated, not_applied
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchParams
from .._core._wire import HttpRequest, HttpResponse
from ..errors import QuotaExhausted
from ._base import (
    HttpProvider,
    Plan,
    Support,
    Unfiltered,
    as_str,
    count,
    make_source,
    recency_overridden,
    require_key,
)
from ._errors import ErrorEnvelope
from ._locale import tavily_country

if TYPE_CHECKING:
    from .._core._context import ProviderContext

URL: Final = "https://api.tavily.com/search"
DEFAULT_RESULTS: Final = 5
MAX_RESULTS: Final = 20
#: Tavily's own statuses for quota: 432 the plan's usage limit, 433 the pay-as-you-go limit.
QUOTA_STATUSES: Final = (432, 433)
_DEPTHS: Final = {
    "auto": "basic",
    "fast": "fast",
    "instant": "ultra-fast",
    "deep-lite": "advanced",
    "deep": "advanced",
    "deep-reasoning": "advanced",
}
_TOPICS: Final = {"news": "news", "financial report": "finance"}
WHOLE_DAYS: Final = "Tavily's date filters take dates only"


class Tavily(HttpProvider):
    info = PROVIDERS["tavily"]
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
        "country": "native",  # a country's name; general searches only
    }
    envelope = ErrorEnvelope(
        message=(
            ("detail", "error"),
            ("detail", "message"),
            ("detail",),
            ("error", "message"),
            ("error",),
            ("message",),
        ),
        code=(("error", "code"),),
        status_classes=dict.fromkeys(QUOTA_STATUSES, QuotaExhausted),
        retry_after=(("error", "retry_after_seconds"),),  # the keyless tier's
    )

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        key = require_key(ctx, self.info)
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        f = plan.filters
        body: dict[str, Any] = {
            "query": self.query_text(plan),
            "search_depth": _DEPTHS[f.mode] if f.mode else "basic",
            "max_results": plan.limit,
            "include_answer": "advanced",
            "include_raw_content": False,
        }
        if f.category in _TOPICS:
            body["topic"] = _TOPICS[f.category]
        time_range, start, end = _window(plan)
        if time_range:
            body["time_range"] = time_range
        if start is not None:
            body["start_date"] = start.isoformat()
        if end is not None:
            body["end_date"] = end.isoformat()
        if f.include_domains:
            body["include_domains"] = list(f.include_domains)
        if f.exclude_domains:
            body["exclude_domains"] = list(f.exclude_domains)
        plan.notices += _notices(plan, start, end)
        if params.country:
            country, notices = tavily_country(params, self.label)
            if country and body.get("topic", "general") == "general":
                body["country"] = country
            elif country:
                why = "Tavily boosts a country in general searches only"
                notices.append(not_applied("country", params.country, why))
            plan.notices += notices
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
        plan.request = HttpRequest("POST", ctx.endpoint(self.id, URL), headers=headers, json=body, secrets=(key,))
        if time_range:
            unfiltered = {name: value for name, value in body.items() if name != "time_range"}
            why = f"Tavily found nothing with time_range={time_range}, so these results come from a search without it"
            notice = not_applied("recency", params.recency, why)
            plan.unfiltered = Unfiltered(replace(plan.request, json=unfiltered), (notice,))
        return plan

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        data = self.answer_object(response, plan)
        results = data.get("results")
        sources = [
            make_source(url, r.get("title"), r.get("content"), r.get("published_date"), plan.now)
            for r in (results if isinstance(results, list) else ())
            if isinstance(r, dict) and isinstance(url := r.get("url"), str) and url
        ]
        answer = as_str(data.get("answer"))
        return ProviderResult(
            answer=answer.strip() or None if answer else None,
            sources=tuple(sources[: plan.limit]),
            request_id=as_str(data.get("request_id")),
            auth_mode="api_key",
        )


def _window(plan: Plan) -> tuple[str | None, date | None, date | None]:
    """(time_range, start_date, end_date): the ladder's dates when it has any, else `recency`.

    Only a date range can carry an end, so an end with only `recency` turns the window into a start.
    """
    f, recency = plan.filters, plan.params.recency
    start = f.start
    if start is None and f.end is not None:
        start = recency_start(recency, plan.now)
    if start is None and f.end is None:
        return recency, None, None
    return None, start.date() if start else None, f.end.date() if f.end else None


def _notices(plan: Plan, start: date | None, end: date | None) -> list[Notice]:
    """What the plan approximated: a deep mode, `recency` under the ladder or an end, days for times."""
    f, params = plan.filters, plan.params
    notices: list[Notice] = []
    if f.mode in ("deep-lite", "deep", "deep-reasoning"):
        notices.append(approximated("mode", params.mode, "search_depth=advanced", "Tavily has no deep-research mode"))
    if params.recency and f.start_source is not None:
        notices += recency_overridden(params, f)
    elif params.recency and start is not None:
        why = "with end_published_date Tavily needs a date range"
        notices.append(approximated("recency", params.recency, f"start_date={start}", why))
    if f.start_source is not None and f.start_has_time:
        how = f"whole days (start_date={start})"
        notices.append(approximated(f.start_source, getattr(params, f.start_source), how, WHOLE_DAYS))
    if f.end_has_time:
        how = f"whole days (end_date={end})"
        notices.append(approximated("end_published_date", params.end_published_date, how, WHOLE_DAYS))
    if f.category is not None and f.category not in _TOPICS:
        why = "Tavily does not support it (its topics are news and finance)"
        notices.append(not_applied("category", params.category, why))
    return notices


PROVIDER: Final = Tavily()
