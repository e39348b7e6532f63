"""Kimi: the Kimi Code search service (the engine behind Kimi CLI's SearchWeb tool).

POST a JSON body `{text_query, limit, enable_page_crawling: false, timeout_seconds: 30}` with a
bearer key to the full URL in `MOONSHOT_SEARCH_BASE_URL`, else `KIMI_SEARCH_BASE_URL`, else
https://api.kimi.com/coding/v1/search (`WEBSEARCH_KIMI_BASE_URL` still redirects scheme, host and
port of whichever is used). The key is the first of MOONSHOT_SEARCH_API_KEY, KIMI_SEARCH_API_KEY,
MOONSHOT_API_KEY, KIMI_API_KEY (whitespace trimmed), else a stored credential under `kimi`,
`moonshot` or `kimi-code`. Every field of `search_results[]` is trimmed; `site_name` is the author.
The request id comes from the `x-request-id` or `x-msh-request-id` response header. The service has
no domain filter, so domains become `site:` / `-site:` operators in `text_query`.

Errors are Moonshot's `{"error": {"message", "type"}}`; the type is the code, and
`exceeded_current_quota_error` (a 429 for a suspended, unpaid account) is a quota error.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._core._context import env_url
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchParams, SearchSource
from .._core._wire import HttpRequest, HttpResponse
from ..errors import QuotaExhausted
from ._base import (
    HttpProvider,
    Plan,
    Support,
    age_seconds,
    as_list,
    count,
    require_key,
    site_operator_notices,
    with_site_operators,
)
from ._errors import ErrorEnvelope

if TYPE_CHECKING:
    from datetime import datetime

    from .._core._context import ProviderContext

URL: Final = "https://api.kimi.com/coding/v1/search"
#: Variables holding the whole search URL (not a base URL, and not keys), the first set one wins.
URL_ENV_KEYS: Final = ("MOONSHOT_SEARCH_BASE_URL", "KIMI_SEARCH_BASE_URL")
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 20
TIMEOUT_SECONDS: Final = 30
_REQUEST_ID_HEADERS: Final = ("x-request-id", "x-msh-request-id")


class Kimi(HttpProvider):
    info = PROVIDERS["kimi"]
    supports: ClassVar[dict[str, Support]] = {
        "limit": "native",
        "num_search_results": "native",
        "include_domains": "approximate",
        "exclude_domains": "approximate",
    }
    envelope = ErrorEnvelope(
        message=(("error", "message"),),
        code=(("error", "type"),),
        codes={"exceeded_current_quota_error": QuotaExhausted},
        prefix="Kimi search API error",
    )

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        key = self._api_key(ctx)
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        plan.notices += site_operator_notices(plan, self.label)
        f = plan.filters
        body = {
            "text_query": with_site_operators(self.query_text(plan), f.include_domains, f.exclude_domains),
            "limit": plan.limit,
            "enable_page_crawling": False,
            "timeout_seconds": TIMEOUT_SECONDS,
        }
        headers = {
            "Accept": "application/json",
            "Content-Type": "application/json",
            "Authorization": f"Bearer {key}",
        }
        url = ctx.endpoint(self.id, search_url(ctx))
        plan.request = HttpRequest("POST", url, headers=headers, json=body, secrets=(key,))
        return plan

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        data = self.answer_object(response, plan)
        sources = [s for r in as_list(data.get("search_results")) if (s := _source(r, plan.now)) is not None]
        request_id = next((v for h in _REQUEST_ID_HEADERS if (v := response.headers.get(h))), None)
        return ProviderResult(sources=tuple(sources[: plan.limit]), request_id=request_id)

    def _api_key(self, ctx: ProviderContext) -> str:
        """The key in the shared order (explicit, env, agent.db), with the env values trimmed
        (a blank one is skipped)."""
        trimmed = {name: ctx.env[name].strip() for name in self.info.env_keys if name in ctx.env}
        return require_key(replace(ctx, env={**ctx.env, **trimmed}), self.info).strip()


def search_url(ctx: ProviderContext) -> str:
    """The full search URL: MOONSHOT_SEARCH_BASE_URL, else KIMI_SEARCH_BASE_URL, else the default."""
    return env_url(ctx.env, URL_ENV_KEYS) or URL


def _source(result: object, now: datetime) -> SearchSource | None:
    if not isinstance(result, dict):
        return None
    url = _trimmed(result, "url")
    if url is None:
        return None
    published = _trimmed(result, "date")
    return SearchSource(
        title=_trimmed(result, "title") or url,
        url=url,
        snippet=_trimmed(result, "snippet") or _trimmed(result, "content"),
        published_date=published,
        age_seconds=age_seconds(published, now),
        author=_trimmed(result, "site_name"),
    )


def _trimmed(result: dict[str, Any], key: str) -> str | None:
    value = result.get(key)
    return value.strip() or None if isinstance(value, str) else None


PROVIDER: Final = Kimi()
