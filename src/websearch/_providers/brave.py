"""Brave: the Brave Search API's web vertical, keyed by `BRAVE_API_KEY` or a stored credential.

GET https://api.search.brave.com/res/v1/web/search?q=...&count=N&extra_snippets=true[&freshness=pd|pw|pm|py]
with the key in `X-Subscription-Token`. The richer parameters: a date window (the ladder's start,
else `recency`'s, up to `end_published_date`, else today) is the range
`freshness=YYYY-MM-DDtoYYYY-MM-DD` (whole days); Brave has no domain filter, so domains become
`site:` / `-site:` operators in `q`. Each web result's trimmed description is followed by its
distinct extra snippets, one per line; Brave's `age` ("January 15, 2025", or "2 days ago", which
stays raw without an age) is the published date.

Brave's titles, descriptions and extra snippets are display HTML: the query's words wrapped in
`<strong>` (its `text_decorations`, on by default) and characters escaped (`Joe&#x27;s`,
`&amp;`). The spec's mapping copies them as they come; they reach an agent as plain text here,
the `<strong>` tags dropped and the entities decoded. Only those tags go, so text like
`vector<int>` that some page shows unescaped survives.

Errors come as `{"error": {...}}` or `{"errors": [{...}]}`. Brave reports a bad key as 422
`SUBSCRIPTION_TOKEN_INVALID` and tells quota (`QUOTA_LIMITED`) from rate limit (`RATE_LIMITED`)
only by the code of a 429. Retry hints come from `Retry-After`, else from the matching
`X-RateLimit-Reset` window.

Every answer reports the key's plan in `X-RateLimit-Limit` ("1, 15000": one request a second,
15000 a month); its per-second figure is the result's `plan_rate`, which the engine paces Brave at.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._core._filters import recency_start
from .._core._notices import Notice
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchParams, SearchSource
from .._core._wire import HttpRequest, HttpResponse
from ..errors import AuthenticationFailed, QuotaExhausted, RateLimited
from ._base import (
    HttpProvider,
    Plan,
    Support,
    age_seconds,
    as_list,
    as_str,
    count,
    day_range_notices,
    honours,
    require_key,
    site_operator_notices,
    with_site_operators,
)
from ._errors import ErrorEnvelope
from ._locale import LOCALE_NATIVE, brave_locale

if TYPE_CHECKING:
    from .._core._context import ProviderContext

URL: Final = "https://api.search.brave.com/res/v1/web/search"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 20
FRESHNESS: Final = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
WHOLE_DAYS: Final = "Brave's freshness takes dates only"
_DECORATION: Final = re.compile(r"</?strong>")


def _reset_window(headers: Mapping[str, str], code: str | None, body: object) -> float | None:
    """The `X-RateLimit-Reset` window a 429's code names ("1, 1419704": the per-second window
    first, the monthly one last)."""
    if code not in ("RATE_LIMITED", "QUOTA_LIMITED"):
        return None
    windows = [part.strip() for part in headers.get("x-ratelimit-reset", "").split(",")]
    # ASCII digits only ("²".isdigit() is true, and float() refuses it), and a finite number of seconds
    seconds = [n for part in windows if part.isascii() and part.isdigit() and math.isfinite(n := float(part))]
    if not seconds:
        return None
    return seconds[-1] if code == "QUOTA_LIMITED" else seconds[0]


def _per_second(headers: Mapping[str, str]) -> float | None:
    """The plan's requests per second: `X-RateLimit-Limit`'s first figure ("1, 15000")."""
    first = headers.get("x-ratelimit-limit", "").split(",")[0].strip()
    rate = float(first) if first.isascii() and first.isdigit() else 0.0  # ASCII digits, as `_reset_window`
    return rate if 0 < rate < math.inf else None


class Brave(HttpProvider):
    info = PROVIDERS["brave"]
    #: Query operators: Brave documents `filetype:`/`ext:` and `intitle:`; it treats `site:` loosely (the chain checks
    #: it), dates are `freshness`.
    operators = honours(native="filetype intitle", approximate="site -site")
    supports: ClassVar[dict[str, Support]] = {
        "recency": "native",
        "limit": "native",
        "num_search_results": "native",
        "recency_days": "native",
        "recency_hours": "approximate",
        "start_published_date": "native",
        "end_published_date": "native",
        "include_domains": "approximate",
        "exclude_domains": "approximate",
        **LOCALE_NATIVE,
    }
    envelope = ErrorEnvelope(
        message=(("error", "detail"), ("errors", "detail")),
        code=(("error", "code"), ("errors", "code")),
        codes={
            "SUBSCRIPTION_TOKEN_INVALID": AuthenticationFailed,
            "QUOTA_LIMITED": QuotaExhausted,
            "RATE_LIMITED": RateLimited,
        },
        auth_detail=True,
        retry_hint=_reset_window,
    )

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        key = require_key(ctx, self.info)
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        f = plan.filters
        q = with_site_operators(self.query_text(plan), f.include_domains, f.exclude_domains)
        query = [("q", q), ("count", str(plan.limit)), ("extra_snippets", "true")]
        window = _date_window(plan)
        if window is not None:
            query.append(("freshness", f"{window[0]}to{window[1]}"))
        elif params.recency:
            query.append(("freshness", FRESHNESS[params.recency]))
        query += brave_locale(params)
        plan.notices += _date_notices(plan, window)
        plan.notices += site_operator_notices(plan, self.label)
        headers = {"Accept": "application/json", "X-Subscription-Token": key}
        plan.request = HttpRequest("GET", ctx.endpoint(self.id, URL), headers=headers, params=query, secrets=(key,))
        return plan

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        data = self.answer_object(response, plan)
        web = data.get("web")
        results = web.get("results") if isinstance(web, dict) else None
        sources = [_source(r, plan.now) for r in as_list(results) if isinstance(r, dict) and as_str(r.get("url"))]
        request_id = response.headers.get("x-request-id") or response.headers.get("request-id") or None
        return ProviderResult(
            sources=tuple(sources[: plan.limit]), request_id=request_id, plan_rate=_per_second(response.headers)
        )


def _date_window(plan: Plan) -> tuple[date, date] | None:
    """The (start, end) days of `freshness` when the ladder or `end_published_date` asks for a
    window: the ladder's start, else `recency`'s; the end date, else today. None otherwise."""
    f = plan.filters
    start = f.start or (recency_start(plan.params.recency, plan.now) if f.end is not None else None)
    if start is None:
        return None
    return start.date(), (f.end or plan.now).date()


def _date_notices(plan: Plan, window: tuple[date, date] | None) -> list[Notice]:
    how = f"whole days (freshness={window[0]}to{window[1]})" if window else ""
    return day_range_notices(plan, window, "Brave's freshness range", how, WHOLE_DAYS)


def _source(result: dict[str, Any], now: datetime) -> SearchSource:
    url = result["url"]
    published = as_str(result.get("age"))
    return SearchSource(
        title=_plain(as_str(result.get("title")) or "") or url,
        url=url,
        snippet=_snippet(result),
        published_date=published,
        age_seconds=age_seconds(published, now),
    )


def _snippet(result: dict[str, Any]) -> str | None:
    """The trimmed description, then each non-empty extra snippet not already present, by line."""
    parts: list[str] = []
    description = _plain(as_str(result.get("description")) or "").strip()
    if description:
        parts.append(description)
    for extra in as_list(result.get("extra_snippets")):
        text = _plain(extra).strip() if isinstance(extra, str) else ""
        if text and text not in parts:
            parts.append(text)
    return "\n".join(parts) or None


def _plain(text: str) -> str:
    """Brave's display text as plain text: its `<strong>` highlighting dropped, entities decoded."""
    if "<" in text:
        text = _DECORATION.sub("", text)
    return html.unescape(text) if "&" in text else text


PROVIDER: Final = Brave()
