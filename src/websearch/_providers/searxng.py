"""SearXNG: a self-hosted metasearch instance, reached at `searxng.endpoint` / `SEARXNG_ENDPOINT`.

GET <endpoint>/search?q=...&format=json, with Basic auth (validated per RFC 7617) or a bearer
token. SearXNG has no `week` time range, so `week` is widened to `month` (with a notice). An
instance whose settings.yml lacks `json` in `search.formats` answers 403: the error says so.
The richer parameters are approximated: the ladder's start (which wins over `recency`) becomes the
narrowest `time_range` covering it (none past a year), and domains `site:` / `-site:` operators in
`q`, which most engines honour.
"""

from __future__ import annotations

import base64
import re
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._types import SearchParams, SearchResponse, SearchSource
from .._wire import HttpRequest, HttpResponse
from ..errors import SearchProviderError
from ._legacy import (
    HttpProvider,
    Support,
    api_error,
    as_list,
    as_str,
    clamp_count,
    json_object,
    ladder_bucket,
    ladder_bucket_notices,
    make_source,
    site_operator_notices,
    with_site_operators,
)

if TYPE_CHECKING:
    from .._context import ProviderContext

DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 20
_TIME_RANGE: Final = {"day": "day", "week": "month", "month": "month", "year": "year"}
_CONTROL_RE: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
NOT_CONFIGURED: Final = (
    "SearXNG endpoint not configured. Set searxng.endpoint in settings or SEARXNG_ENDPOINT in environment."
)
JSON_DISABLED_HINT: Final = (
    "If the instance has JSON output disabled, add `json` to `search.formats` in its settings.yml."
)


class SearXNG(HttpProvider):
    id = "searxng"
    supports: ClassVar[dict[str, Support]] = {
        "recency": "approximate",
        "limit": "native",
        "num_search_results": "native",
        "recency_days": "approximate",
        "recency_hours": "approximate",
        "start_published_date": "approximate",
        "include_domains": "approximate",
        "exclude_domains": "approximate",
    }

    def build_request(self, params: SearchParams, ctx: ProviderContext) -> HttpRequest:
        endpoint = ctx.settings.get_str("searxng.endpoint")
        if not endpoint:
            raise SearchProviderError(self.id, NOT_CONFIGURED)
        headers = {"Accept": "application/json"}
        secrets: tuple[str, ...] = ()
        auth = _authorization(ctx)
        if auth is not None:
            headers["Authorization"], secrets = auth
        f = ctx.filters(params)
        query = [("q", with_site_operators(params.query, f.include_domains, f.exclude_domains)), ("format", "json")]
        if params.count:
            query.append(("pageno", "1"))
        if f.start is not None:
            if time_range := ladder_time_range(params, ctx):
                query.append(("time_range", time_range))
        elif params.recency:
            query.append(("time_range", _TIME_RANGE[params.recency]))
        for key in ("categories", "language"):
            value = ctx.settings.get_str(f"searxng.{key}")
            if value:
                query.append((key, value))
        url = ctx.endpoint(self.id, endpoint.rstrip("/") + "/search")
        return HttpRequest("GET", url, headers=headers, params=query, secrets=secrets)

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        notices = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[1]
        f = ctx.filters(params)
        if f.start_source is not None:
            time_range = ladder_time_range(params, ctx)
            applied = f"time_range={time_range}" if time_range else None
            only = "SearXNG only filters by the past day, month or year"
            longest = "SearXNG's longest time_range (year)"
            notices.extend(ladder_bucket_notices(params, f, applied, longest, only))
        elif params.recency == "week":
            notices.append("recency='week' widened to 'month': SearXNG has no week time range")
        notices.extend(site_operator_notices(params, f, self.label, " (most of its engines honour the operators)"))
        return notices

    def parse_response(self, response: HttpResponse, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        if not response.ok:
            raise _http_error(response)
        data = json_object(self.id, response)
        limit = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0]
        now = ctx.clock.now()
        sources = [
            _source(r, now) for r in as_list(data.get("results")) if isinstance(r, dict) and as_str(r.get("url"))
        ]
        sources = sources[:limit]
        failed = [e for e in as_list(data.get("unresponsive_engines")) if isinstance(e, (list, tuple)) and e]
        if not sources and failed:
            detail = "; ".join(": ".join(str(part) for part in engine[:2]) for engine in failed)
            raise SearchProviderError(
                self.id, f"SearXNG returned no usable results; upstream engines failed: {detail}", 503
            )
        suggestions = tuple(s for s in as_list(data.get("suggestions")) if isinstance(s, str))
        return SearchResponse(provider=self.id, sources=tuple(sources), related_questions=suggestions)


def ladder_time_range(params: SearchParams, ctx: ProviderContext) -> str | None:
    """The narrowest `time_range` covering the ladder's start .. now (`week` widened to `month`)."""
    bucket = ladder_bucket(params, ctx)
    return _TIME_RANGE[bucket] if bucket else None


def _authorization(ctx: ProviderContext) -> tuple[str, tuple[str, ...]] | None:
    """The Authorization header and the secrets in it: Basic wins over bearer."""
    user = ctx.settings.get_str("searxng.basicUsername")
    password = ctx.settings.get_str("searxng.basicPassword")
    if user is not None or password is not None:
        if user is None or password is None:
            raise SearchProviderError(
                "searxng",
                "SearXNG Basic auth needs both searxng.basicUsername and searxng.basicPassword "
                "(or SEARXNG_BASIC_USERNAME and SEARXNG_BASIC_PASSWORD)",
            )
        if ":" in user:
            raise SearchProviderError("searxng", "SearXNG Basic auth username must not contain ':' (RFC 7617)")
        if _CONTROL_RE.search(user) or _CONTROL_RE.search(password):
            raise SearchProviderError("searxng", "SearXNG Basic auth credentials must not contain control characters")
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        return f"Basic {token}", (password, token)
    bearer = ctx.settings.get_str("searxng.token")
    if bearer:
        return f"Bearer {bearer}", (bearer,)
    return None


def _http_error(response: HttpResponse) -> SearchProviderError:
    error = api_error("searxng", response)
    if response.status == 403:
        error.hint = JSON_DISABLED_HINT
    return error


def _source(result: dict[str, Any], now: datetime) -> SearchSource:
    published = result.get("publishedDate") or result.get("published_date")
    return make_source(result["url"], result.get("title"), result.get("content"), published, now)


PROVIDER: Final = SearXNG()
