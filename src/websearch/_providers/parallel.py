"""Parallel: the Parallel Search API (v1beta), one objective and one search query per call.

POST https://api.parallel.ai/v1beta/search with `x-api-key` and the beta header
`parallel-beta: search-extract-2025-10-10`; the body is the query as both `objective` and the
single entry of `search_queries`, `mode: "fast"` and excerpts capped at 10 000 characters per
result. No count or recency is sent: results are cut locally to 1..40 (default 10). A result's
excerpts, joined by blank lines, are its snippet; `search_id` is the request id. The richer
parameters go in `source_policy`: `include_domains`, `exclude_domains` and `after_date` (the
ladder's start, as a date).

Errors may be plain text or JSON with the message in `message`, `detail`, `error` or
`error.message` (in that order); no code is read, so the class comes from the status.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._core._notices import approximated
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchParams, SearchSource
from .._core._wire import HttpRequest, HttpResponse
from ._base import HttpProvider, Plan, Support, age_seconds, as_list, as_str, count, require_key
from ._errors import ErrorEnvelope

if TYPE_CHECKING:
    from datetime import datetime

    from .._core._context import ProviderContext

URL: Final = "https://api.parallel.ai/v1beta/search"
BETA_HEADER: Final = "search-extract-2025-10-10"
MODE: Final = "fast"
MAX_CHARS_PER_RESULT: Final = 10_000
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 40


class Parallel(HttpProvider):
    info = PROVIDERS["parallel"]
    supports: ClassVar[dict[str, Support]] = {
        "limit": "native",
        "num_search_results": "native",
        "recency_days": "native",
        "recency_hours": "approximate",
        "start_published_date": "native",
        "include_domains": "native",
        "exclude_domains": "native",
    }
    envelope = ErrorEnvelope(message=(("message",), ("detail",), ("error",), ("error", "message")), code=())

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        key = require_key(ctx, self.info)
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        body: dict[str, Any] = {
            "objective": self.query_text(plan),
            "search_queries": [self.query_text(plan)],
            "mode": MODE,
            "excerpts": {"max_chars_per_result": MAX_CHARS_PER_RESULT},
        }
        f = plan.filters
        policy: dict[str, Any] = {}
        if f.include_domains:
            policy["include_domains"] = list(f.include_domains)
        if f.exclude_domains:
            policy["exclude_domains"] = list(f.exclude_domains)
        if f.start is not None:
            policy["after_date"] = after = f.start.date().isoformat()
            if f.start_has_time and f.start_source is not None:
                how = f"whole days (source_policy.after_date={after})"
                value = getattr(params, f.start_source)
                plan.notices.append(approximated(f.start_source, value, how, "Parallel's date filters take dates only"))
        if policy:
            body["source_policy"] = policy
        headers = {
            "Accept": "application/json",
            "Content-Type": "application/json",
            "x-api-key": key,
            "parallel-beta": BETA_HEADER,
        }
        plan.request = HttpRequest("POST", ctx.endpoint(self.id, URL), headers=headers, json=body, secrets=(key,))
        return plan

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        data = self.answer_object(response, plan)
        sources = [s for r in as_list(data.get("results")) if (s := _source(r, plan.now)) is not None]
        return ProviderResult(sources=tuple(sources[: plan.limit]), request_id=as_str(data.get("search_id")))


def _source(result: object, now: datetime) -> SearchSource | None:
    if not isinstance(result, dict):
        return None
    url = as_str(result.get("url"))
    if url is None:
        return None
    texts = [e for e in as_list(result.get("excerpts")) if isinstance(e, str) and e]
    published = as_str(result.get("publish_date"))
    return SearchSource(
        title=as_str(result.get("title")) or url,
        url=url,
        snippet="\n\n".join(texts) or None,
        published_date=published,
        age_seconds=age_seconds(published, now),
    )


PROVIDER: Final = Parallel()
