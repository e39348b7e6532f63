"""Brave: the Brave Search API's web vertical, keyed by `BRAVE_API_KEY` or a stored credential.

GET https://api.search.brave.com/res/v1/web/search?q=...&count=N&extra_snippets=true[&freshness=pd|pw|pm|py]
with the key in `X-Subscription-Token`. The richer parameters: a date window (the ladder's start,
else `recency`'s, up to `end_published_date`, else today) is the range
`freshness=YYYY-MM-DDtoYYYY-MM-DD` (whole days); Brave has no domain filter, so domains become
`site:` / `-site:` operators in `q`. Each web result's trimmed description is followed by its
distinct extra snippets, one per line; Brave's `age` ("January 15, 2025", or "2 days ago", which
stays raw without an age) is the published date. Brave reports a bad key as 422
`SUBSCRIPTION_TOKEN_INVALID` and tells quota (`QUOTA_LIMITED`) from rate limit (`RATE_LIMITED`)
only by the error code of a 429, so the error envelope is read, in either its `error` or `errors`
form. Retry hints come from `Retry-After`, else from the matching `X-RateLimit-Reset` window.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._filters import recency_start
from .._types import SearchParams, SearchResponse, SearchSource
from .._wire import HttpRequest, HttpResponse
from ..errors import SearchProviderError
from ._base import (
    HttpProvider,
    Support,
    age_seconds,
    as_list,
    as_str,
    clamp_count,
    classify_http_error,
    json_object,
    recency_overridden,
    redact_detail,
    require_key,
    retry_after_seconds,
    site_operator_notices,
    status_phrase,
    with_site_operators,
)

if TYPE_CHECKING:
    from .._context import ProviderContext

URL: Final = "https://api.search.brave.com/res/v1/web/search"
ENV_KEYS: Final = ("BRAVE_API_KEY",)
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 20
FRESHNESS: Final = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}


class Brave(HttpProvider):
    id = "brave"
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
    }

    def build_request(self, params: SearchParams, ctx: ProviderContext) -> HttpRequest:
        key = require_key(ctx, self.id, ENV_KEYS)
        count = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0]
        f = ctx.filters(params)
        q = with_site_operators(params.query, f.include_domains, f.exclude_domains)
        query = [("q", q), ("count", str(count)), ("extra_snippets", "true")]
        window = date_window(params, ctx)
        if window is not None:
            query.append(("freshness", f"{window[0]}to{window[1]}"))
        elif params.recency:
            query.append(("freshness", FRESHNESS[params.recency]))
        headers = {"Accept": "application/json", "X-Subscription-Token": key}
        return HttpRequest("GET", ctx.endpoint(self.id, URL), headers=headers, params=query, secrets=(key,))

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        notices = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[1]
        f = ctx.filters(params)
        window = date_window(params, ctx)
        notices.extend(recency_overridden(params, f))
        if window is None and f.end is not None:
            notices.append(
                f"end_published_date={params.end_published_date!r} not applied: Brave's freshness range needs a "
                "start (give a start date, recency_days, recency_hours or recency)"
            )
        elif window is not None:
            whole = f"applied as whole days (freshness={window[0]}to{window[1]}): Brave's freshness takes dates only"
            if f.start_has_time and f.start_source is not None:
                notices.append(f"{f.start_source}={getattr(params, f.start_source)!r} {whole}")
            if f.end_has_time:
                notices.append(f"end_published_date={params.end_published_date!r} {whole}")
        notices.extend(site_operator_notices(params, f, self.label))
        return notices

    def parse_response(self, response: HttpResponse, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        if not response.ok:
            raise http_error(response)
        data = json_object(self.id, response)
        limit = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0]
        web = data.get("web")
        results = web.get("results") if isinstance(web, dict) else None
        now = ctx.clock.now()
        sources = [_source(r, now) for r in as_list(results) if isinstance(r, dict) and as_str(r.get("url"))]
        request_id = response.headers.get("x-request-id") or response.headers.get("request-id") or None
        return SearchResponse(provider=self.id, sources=tuple(sources[:limit]), request_id=request_id)


def date_window(params: SearchParams, ctx: ProviderContext) -> tuple[date, date] | None:
    """The (start, end) days of `freshness` when the ladder or `end_published_date` asks for a
    window: the ladder's start, else `recency`'s; the end date, else today. None otherwise."""
    f = ctx.filters(params)
    now = ctx.clock.now()
    start = f.start or (recency_start(params.recency, now) if f.end is not None else None)
    if start is None:
        return None
    return start.date(), (f.end or now).date()


def http_error(response: HttpResponse) -> SearchProviderError:
    """A non-2xx answer: the shared classification, else Brave's error envelope, else the body."""
    code, detail = _envelope(response)
    retry = _retry_after(response.headers, code)
    shared = classify_http_error("brave", response)
    if shared is not None:
        shared.retry_after = retry
        return shared
    status = response.status
    if code == "SUBSCRIPTION_TOKEN_INVALID":
        detail = detail or "The provided subscription token is invalid."
        return SearchProviderError(
            "brave", f"Brave authorization failed ({status} {code}): {detail} Check API key or base URL.", status
        )
    text = f"{detail} ({code})" if code and detail else response.safe_text() or status_phrase(status)
    message = f"Brave API error ({status}): {text}"
    if status == 429 and retry is not None:
        message += f"; retry after {retry:g} s"
    return SearchProviderError("brave", message, status, retry_after=retry)


def _envelope(response: HttpResponse) -> tuple[str | None, str | None]:
    """(code, detail) of `{"error": {...}}` or `{"errors": [{...}]}`; detail folded and redacted."""
    try:
        data = response.json()
    except ValueError:
        return None, None
    if not isinstance(data, dict):
        return None, None
    error = data.get("error")
    if error is None and isinstance(data.get("errors"), list) and data["errors"]:
        error = data["errors"][0]
    if not isinstance(error, dict):
        return None, None
    detail = as_str(error.get("detail"))
    if detail is not None:
        detail = redact_detail(response, detail) or None
    return as_str(error.get("code")), detail


def _retry_after(headers: Mapping[str, str], code: str | None) -> float | None:
    """`Retry-After`, else the `X-RateLimit-Reset` window the 429's code names ("1, 1419704":
    the per-second window first, the monthly one last)."""
    retry = retry_after_seconds(headers)
    if retry is not None or code not in ("RATE_LIMITED", "QUOTA_LIMITED"):
        return retry
    windows = [part.strip() for part in headers.get("x-ratelimit-reset", "").split(",")]
    seconds = [float(part) for part in windows if part.isdigit()]
    if not seconds:
        return None
    return seconds[-1] if code == "QUOTA_LIMITED" else seconds[0]


def _source(result: dict[str, Any], now: datetime) -> SearchSource:
    url = result["url"]
    published = as_str(result.get("age"))
    return SearchSource(
        title=as_str(result.get("title")) or url,
        url=url,
        snippet=_snippet(result),
        published_date=published,
        age_seconds=age_seconds(published, now),
    )


def _snippet(result: dict[str, Any]) -> str | None:
    """The trimmed description, then each non-empty extra snippet not already present, by line."""
    parts: list[str] = []
    description = as_str(result.get("description"))
    if description and description.strip():
        parts.append(description.strip())
    for extra in as_list(result.get("extra_snippets")):
        text = extra.strip() if isinstance(extra, str) else ""
        if text and text not in parts:
            parts.append(text)
    return "\n".join(parts) or None


PROVIDER: Final = Brave()
