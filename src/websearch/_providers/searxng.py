"""SearXNG: a self-hosted metasearch instance, reached at `searxng.endpoint` / `SEARXNG_ENDPOINT`.

GET <endpoint>/search?q=...&format=json[&pageno=1][&time_range=...][&categories=...][&language=...],
with Basic auth (`searxng.basicUsername` / `basicPassword`, validated per RFC 7617) or a bearer
token (`searxng.token`). SearXNG has no `week` time range, so `week` is widened to `month`. The
richer parameters are approximated: the ladder's start (which wins over `recency`) becomes the
narrowest `time_range` covering it (none past a year), and domains `site:` / `-site:` operators in
`q`, which most engines honour. Sources are `results[]` (`publishedDate` or `published_date` as
the date), related questions the `suggestions`.

Errors: the instance answers `{"error": "..."}`; an instance whose settings.yml lacks `json` in
`search.formats` answers 403, and the auth hint says so. An answer with no results whose
`unresponsive_engines` lists failures is UpstreamUnavailable (503): every engine behind it failed.
"""

from __future__ import annotations

import base64
import re
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._notices import widened
from .._registry import PROVIDERS
from .._types import ProviderResult, SearchParams, SearchSource
from .._wire import HttpRequest, HttpResponse
from ..errors import ConfigError, MissingCredentialError, UpstreamUnavailable
from ._base import (
    HttpProvider,
    Plan,
    Support,
    as_list,
    as_str,
    bucket_notices,
    count,
    make_source,
    recency_bucket,
    site_operator_notices,
    with_site_operators,
)
from ._errors import ErrorEnvelope

if TYPE_CHECKING:
    from .._context import ProviderContext

DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 20
_TIME_RANGE: Final = {"day": "day", "week": "month", "month": "month", "year": "year"}
_CONTROL_RE: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
NOT_CONFIGURED: Final = (
    "SearXNG endpoint not configured. Set searxng.endpoint in settings or SEARXNG_ENDPOINT in environment."
)
AUTH_HINT: Final = (
    "Check searxng.basicUsername/basicPassword or searxng.token. If the instance has JSON output disabled, "
    "add `json` to `search.formats` in its settings.yml."
)


class SearXNG(HttpProvider):
    info = PROVIDERS["searxng"]
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
    envelope = ErrorEnvelope(message=(("error",),), code=(), auth_hint=AUTH_HINT)

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        endpoint = ctx.settings.get_str("searxng.endpoint")
        if not endpoint:
            raise MissingCredentialError(self.id, NOT_CONFIGURED)
        headers = {"Accept": "application/json"}
        secrets: tuple[str, ...] = ()
        auth = _authorization(ctx)
        if auth is not None:
            headers["Authorization"], secrets = auth
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        f = plan.filters
        query = [("q", with_site_operators(params.query, f.include_domains, f.exclude_domains)), ("format", "json")]
        if params.count:
            query.append(("pageno", "1"))
        if f.start is not None:
            bucket = recency_bucket(f.start, plan.now)
            if bucket is not None:
                query.append(("time_range", _TIME_RANGE[bucket]))
            applied = f"time_range={_TIME_RANGE[bucket]} (the past {_TIME_RANGE[bucket]})" if bucket else None
            only = "SearXNG only filters by the past day, month or year"
            plan.notices += bucket_notices(plan, applied, "SearXNG's longest (a year)", only)
        elif params.recency:
            query.append(("time_range", _TIME_RANGE[params.recency]))
            if params.recency == "week":
                plan.notices.append(widened("recency", "week", "time_range=month", "SearXNG has no week time range"))
        plan.notices += site_operator_notices(plan, self.label, " (most of its engines honour the operators)")
        for key in ("categories", "language"):
            value = ctx.settings.get_str(f"searxng.{key}")
            if value:
                query.append((key, value))
        url = ctx.endpoint(self.id, endpoint.rstrip("/") + "/search")
        plan.request = HttpRequest("GET", url, headers=headers, params=query, secrets=secrets)
        return plan

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        data = self.answer_object(response, plan)
        results = [r for r in as_list(data.get("results")) if isinstance(r, dict) and as_str(r.get("url"))]
        sources = [_source(r, plan.now) for r in results[: plan.limit]]
        failed = [e for e in as_list(data.get("unresponsive_engines")) if isinstance(e, (list, tuple)) and e]
        if not sources and failed:
            detail = "; ".join(": ".join(str(part) for part in engine[:2]) for engine in failed)
            message = f"SearXNG returned no usable results; upstream engines failed: {detail}"
            raise UpstreamUnavailable(self.id, message, 503)
        suggestions = tuple(s for s in as_list(data.get("suggestions")) if isinstance(s, str))
        return ProviderResult(sources=tuple(sources), related_questions=suggestions)


def _authorization(ctx: ProviderContext) -> tuple[str, tuple[str, ...]] | None:
    """The Authorization header and the secrets in it: Basic wins over bearer."""
    user = ctx.settings.get_str("searxng.basicUsername")
    password = ctx.settings.get_str("searxng.basicPassword")
    if user is not None or password is not None:
        if user is None or password is None:
            raise ConfigError(
                "SearXNG Basic auth needs both searxng.basicUsername and searxng.basicPassword "
                "(or SEARXNG_BASIC_USERNAME and SEARXNG_BASIC_PASSWORD)"
            )
        if ":" in user:
            raise ConfigError("SearXNG Basic auth username must not contain ':' (RFC 7617)")
        if _CONTROL_RE.search(user) or _CONTROL_RE.search(password):
            raise ConfigError("SearXNG Basic auth credentials must not contain control characters")
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        return f"Basic {token}", (password, token)
    bearer = ctx.settings.get_str("searxng.token")
    if bearer:
        return f"Bearer {bearer}", (bearer,)
    return None


def _source(result: dict[str, Any], now: datetime) -> SearchSource:
    published = result.get("publishedDate") or result.get("published_date")
    return make_source(result["url"], result.get("title"), result.get("content"), published, now)


PROVIDER: Final = SearXNG()
