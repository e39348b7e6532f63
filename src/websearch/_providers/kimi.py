"""Kimi: the Kimi Code search service (the engine behind Kimi CLI's SearchWeb tool).

POST a JSON body `{text_query, limit, enable_page_crawling: false, timeout_seconds: 30}` with a
bearer key to the full URL in `MOONSHOT_SEARCH_BASE_URL`, else `KIMI_SEARCH_BASE_URL`, else
https://api.kimi.com/coding/v1/search (`WEBSEARCH_KIMI_BASE_URL` still redirects scheme, host and
port of whichever is used). The key is the first of MOONSHOT_SEARCH_API_KEY, KIMI_SEARCH_API_KEY,
MOONSHOT_API_KEY, KIMI_API_KEY (whitespace trimmed), else a stored credential under `kimi`,
`moonshot` or `kimi-code`. Every field of `search_results[]` is trimmed; `site_name` is the author.
The request id comes from the `x-request-id` or `x-msh-request-id` response header. The service has
no domain filter, so domains become `site:` / `-site:` operators in `text_query`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._types import SearchParams, SearchResponse, SearchSource
from .._wire import HttpRequest, HttpResponse
from ..errors import SearchProviderError
from ._legacy import (
    HttpProvider,
    Support,
    age_seconds,
    clamp_count,
    classify_http_error,
    json_object,
    require_key,
    retry_after_seconds,
    site_operator_notices,
    with_site_operators,
)

if TYPE_CHECKING:
    from datetime import datetime

    from .._context import ProviderContext

URL: Final = "https://api.kimi.com/coding/v1/search"
URL_ENV_KEYS: Final = ("MOONSHOT_SEARCH_BASE_URL", "KIMI_SEARCH_BASE_URL")
ENV_KEYS: Final = ("MOONSHOT_SEARCH_API_KEY", "KIMI_SEARCH_API_KEY", "MOONSHOT_API_KEY", "KIMI_API_KEY")
CREDENTIAL_IDS: Final = ("kimi", "moonshot", "kimi-code")
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 20
TIMEOUT_SECONDS: Final = 30
_REQUEST_ID_HEADERS: Final = ("x-request-id", "x-msh-request-id")


class Kimi(HttpProvider):
    id = "kimi"
    supports: ClassVar[dict[str, Support]] = {
        "limit": "native",
        "num_search_results": "native",
        "include_domains": "approximate",
        "exclude_domains": "approximate",
    }

    def build_request(self, params: SearchParams, ctx: ProviderContext) -> HttpRequest:
        key = _api_key(ctx)
        limit = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0]
        f = ctx.filters(params)
        body = {
            "text_query": with_site_operators(params.query, f.include_domains, f.exclude_domains),
            "limit": limit,
            "enable_page_crawling": False,
            "timeout_seconds": TIMEOUT_SECONDS,
        }
        headers = {
            "Accept": "application/json",
            "Content-Type": "application/json",
            "Authorization": f"Bearer {key}",
        }
        return HttpRequest("POST", ctx.endpoint(self.id, search_url(ctx)), headers=headers, json=body, secrets=(key,))

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        notices = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[1]
        f = ctx.filters(params)
        notices.extend(site_operator_notices(params, f, self.label))
        return notices

    def parse_response(self, response: HttpResponse, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        if not response.ok:
            raise _http_error(response)
        data = json_object(self.id, response, "Kimi search")
        limit = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0]
        now = ctx.clock.now()
        results = data.get("search_results")
        sources = [s for r in (results if isinstance(results, list) else []) if (s := _source(r, now)) is not None]
        request_id = next((v for h in _REQUEST_ID_HEADERS if (v := response.headers.get(h))), None)
        return SearchResponse(provider=self.id, sources=tuple(sources[:limit]), request_id=request_id)


def search_url(ctx: ProviderContext) -> str:
    """The full search URL: MOONSHOT_SEARCH_BASE_URL, else KIMI_SEARCH_BASE_URL, else the default."""
    for name in URL_ENV_KEYS:
        value = (ctx.env.get(name) or "").strip()
        if value:
            return value
    return URL


def _api_key(ctx: ProviderContext) -> str:
    """The key in the shared order (explicit, env, agent.db), with the env values trimmed."""
    trimmed = {name: ctx.env[name].strip() for name in ENV_KEYS if name in ctx.env}
    return require_key(replace(ctx, env={**ctx.env, **trimmed}), "kimi", ENV_KEYS, CREDENTIAL_IDS).strip()


def _http_error(response: HttpResponse) -> SearchProviderError:
    """The shared classification, else `Kimi search API error (<status>): <body>`."""
    error = classify_http_error("kimi", response)
    if error is not None:
        return error
    return SearchProviderError(
        "kimi",
        f"Kimi search API error ({response.status}): {response.safe_text()}",
        response.status,
        retry_after=retry_after_seconds(response.headers),
    )


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
