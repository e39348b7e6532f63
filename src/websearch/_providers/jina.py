"""Jina: the Reader search endpoint s.jina.ai, reached with JINA_API_KEY or a stored `jina` credential.

GET https://s.jina.ai/<query, encoded like encodeURIComponent> with `Authorization: Bearer <key>`
and `Accept: application/json` (without it Jina answers markdown). Nothing else is sent: no count,
no recency, no token caps. The richer parameters: `include_domains` is Jina's own `?site=` filter
(repeated per domain); `exclude_domains` has no filter and becomes `-site:` operators in the query.
The answer is `{"data": [{title, url, description, content}]}`; the sources are sliced locally to
`num_search_results`, else `limit`, when one is given.

Errors come as `{"code", "name", "status", "message", "readableMessage"}` (e.g. 401
AuthenticationRequiredError, 402 InsufficientBalanceError, 429 RateLimitTriggeredError).
https://jina.ai/reader/#apiform
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import quote

from .._types import SearchParams, SearchResponse, SearchSource
from .._wire import HttpRequest, HttpResponse
from ._legacy import (
    HttpProvider,
    Support,
    api_error,
    as_str,
    json_object,
    redact_detail,
    require_key,
    with_site_operators,
)

if TYPE_CHECKING:
    from .._context import ProviderContext

URL: Final = "https://s.jina.ai/"
ENV_KEYS: Final = ("JINA_API_KEY",)
#: What encodeURIComponent leaves as is, besides letters, digits and `-_.~` (quote's own safe set).
_URI_COMPONENT_SAFE: Final = "!*'()"


class Jina(HttpProvider):
    id = "jina"
    supports: ClassVar[dict[str, Support]] = {
        "limit": "native",
        "num_search_results": "native",
        "include_domains": "native",
        "exclude_domains": "approximate",
    }

    def build_request(self, params: SearchParams, ctx: ProviderContext) -> HttpRequest:
        key = require_key(ctx, self.id, ENV_KEYS, self.info.credential_ids)
        f = ctx.filters(params)
        query = with_site_operators(params.query, (), f.exclude_domains)
        url = ctx.endpoint(self.id, URL + quote(query, safe=_URI_COMPONENT_SAFE))
        headers = {"Accept": "application/json", "Authorization": f"Bearer {key}"}
        sites = tuple(("site", domain) for domain in f.include_domains)
        return HttpRequest("GET", url, headers=headers, params=sites, secrets=(key,))

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        notices: list[str] = []
        if params.num_search_results is not None and params.limit not in (None, params.num_search_results):
            notices.append(
                f"limit={params.limit} not applied separately: Jina uses num_search_results="
                f"{params.num_search_results} as its result count"
            )
        if ctx.filters(params).exclude_domains:
            notices.append(
                f"exclude_domains={params.exclude_domains!r} applied as -site: operators in the query: Jina can "
                "only restrict to sites, not exclude them"
            )
        return notices

    def parse_response(self, response: HttpResponse, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        if not response.ok:
            raise api_error(self.id, response, detail=_error_detail(response) or response.safe_text() or "empty body")
        data = json_object(self.id, response)
        items = data.get("data")
        sources = [
            _source(item)
            for item in (items if isinstance(items, list) else [])
            if isinstance(item, dict) and as_str(item.get("url"))
        ]
        n = params.count
        return SearchResponse(provider=self.id, sources=tuple(sources[:n] if n else sources))


def _error_detail(response: HttpResponse) -> str | None:
    """Jina's `readableMessage` (else `message`) from its error envelope, redacted; else None (the body)."""
    try:
        data = response.json()
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    text = as_str(data.get("readableMessage")) or as_str(data.get("message"))
    return redact_detail(response, text) if text else None


def _source(item: dict[str, Any]) -> SearchSource:
    url = item["url"]
    snippet = as_str(item.get("content")) or as_str(item.get("description"))
    return SearchSource(
        title=as_str(item.get("title")) or url, url=url, snippet=snippet.strip() or None if snippet else None
    )


PROVIDER: Final = Jina()
