"""Parallel: the Parallel Search API (v1beta), one objective and one search query per call.

POST https://api.parallel.ai/v1beta/search with `x-api-key` and the beta header
`parallel-beta: search-extract-2025-10-10`; the body is the query as both `objective` and the
single entry of `search_queries`, `mode: "fast"` and excerpts capped at 10 000 characters per
result. No count or recency is sent: results are cut locally to 1..40 (default 10). A result's
excerpts, joined by blank lines, are its snippet; `search_id` is the request id. Errors may be
plain text or JSON (`message` / `detail` / `error` / `error.message`). The richer parameters go in
`source_policy`: `include_domains`, `exclude_domains` and `after_date` (the ladder's start, a date).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._types import SearchParams, SearchResponse, SearchSource
from .._wire import HttpRequest, HttpResponse
from ..errors import SearchProviderError
from ._legacy import (
    HttpProvider,
    Support,
    age_seconds,
    api_error,
    as_str,
    clamp_count,
    json_body,
    redact_detail,
    require_key,
)

if TYPE_CHECKING:
    from datetime import datetime

    from .._context import ProviderContext

URL: Final = "https://api.parallel.ai/v1beta/search"
ENV_KEYS: Final = ("PARALLEL_API_KEY",)
BETA_HEADER: Final = "search-extract-2025-10-10"
MODE: Final = "fast"
MAX_CHARS_PER_RESULT: Final = 10_000
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 40
INVALID_PAYLOAD: Final = "Parallel search returned an invalid response payload."


class Parallel(HttpProvider):
    id = "parallel"
    supports: ClassVar[dict[str, Support]] = {
        "limit": "native",
        "num_search_results": "native",
        "recency_days": "native",
        "recency_hours": "approximate",
        "start_published_date": "native",
        "include_domains": "native",
        "exclude_domains": "native",
    }

    def build_request(self, params: SearchParams, ctx: ProviderContext) -> HttpRequest:
        key = require_key(ctx, self.id, ENV_KEYS)
        body: dict[str, Any] = {
            "objective": params.query,
            "search_queries": [params.query],
            "mode": MODE,
            "excerpts": {"max_chars_per_result": MAX_CHARS_PER_RESULT},
        }
        f = ctx.filters(params)
        policy: dict[str, Any] = {}
        if f.include_domains:
            policy["include_domains"] = list(f.include_domains)
        if f.exclude_domains:
            policy["exclude_domains"] = list(f.exclude_domains)
        if f.start is not None:
            policy["after_date"] = f.start.date().isoformat()
        if policy:
            body["source_policy"] = policy
        headers = {
            "Accept": "application/json",
            "Content-Type": "application/json",
            "x-api-key": key,
            "parallel-beta": BETA_HEADER,
        }
        return HttpRequest("POST", ctx.endpoint(self.id, URL), headers=headers, json=body, secrets=(key,))

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        notices = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[1]
        f = ctx.filters(params)
        if f.start_source is not None and f.start is not None and f.start_has_time:
            notices.append(
                f"{f.start_source}={getattr(params, f.start_source)!r} applied as whole days "
                f"(source_policy.after_date={f.start.date()}): Parallel's after_date is a date"
            )
        return notices

    def parse_response(self, response: HttpResponse, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        if not response.ok:
            raise api_error(self.id, response, detail=error_detail(response))
        data = json_body(self.id, response)
        if not isinstance(data, dict):
            raise SearchProviderError(self.id, INVALID_PAYLOAD, response.status)
        limit = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0]
        now = ctx.clock.now()
        results = data.get("results")
        sources = [s for r in (results if isinstance(results, list) else []) if (s := _source(r, now)) is not None]
        search_id = data.get("search_id")
        return SearchResponse(
            provider=self.id,
            sources=tuple(sources[:limit]),
            request_id=search_id if isinstance(search_id, str) and search_id else None,
        )


def error_detail(response: HttpResponse) -> str:
    """The error's `message`, `detail`, `error` or `error.message` string, else the (redacted) body."""
    try:
        data = response.json()
    except ValueError:
        data = None
    if isinstance(data, dict):
        nested = data.get("error")
        candidates = [data.get("message"), data.get("detail"), nested]
        if isinstance(nested, dict):
            candidates.append(nested.get("message"))
        for value in candidates:
            if isinstance(value, str) and value.strip():
                return redact_detail(response, value)  # folded, cut, redacted
    return response.safe_text()


def _source(result: object, now: datetime) -> SearchSource | None:
    if not isinstance(result, dict):
        return None
    url = as_str(result.get("url"))
    if url is None:
        return None
    excerpts = result.get("excerpts")
    texts = [e for e in (excerpts if isinstance(excerpts, list) else []) if isinstance(e, str) and e]
    published = as_str(result.get("publish_date"))
    return SearchSource(
        title=as_str(result.get("title")) or url,
        url=url,
        snippet="\n\n".join(texts) or None,
        published_date=published,
        age_seconds=age_seconds(published, now),
    )


PROVIDER: Final = Parallel()
