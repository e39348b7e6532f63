"""Firecrawl: SERP-backed web search at POST https://api.firecrawl.dev/v2/search.

One JSON request with a Bearer key: `query`, `limit` (the collapsed count, 1..100, default 10),
`sources: [{"type": "web"}]` (web results only and no scraping, so one credit per result) and,
for recency, Google's `tbs` (`qdr:d` / `qdr:w` / `qdr:m` / `qdr:y`). The server's schema is
strict, so nothing else is sent.

The answer is `data.web[]` (v1's flat `data[]` is read too), each `{url, title, description,
position}`; an item gains `markdown` only when scraping was asked for, and that is the snippet
of last resort. Web results carry no dates. Errors come in an envelope `{"success": false,
"error": "..."}` whose text is the error detail: 402 means out of credits, and a 429 states its
retry delay only inside the text ("... retry after 12s ..."), which becomes `retry_after`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar, Final

from ..errors import SearchProviderError
from ..types import SearchParams, SearchResponse, SearchSource
from ..wire import HttpRequest, HttpResponse
from ._base import HttpProvider, Support, api_error, clamp_count, json_body, redact_detail, require_key

if TYPE_CHECKING:
    from ..context import ProviderContext

URL: Final = "https://api.firecrawl.dev/v2/search"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 100
_TBS: Final = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}
_RETRY_IN_TEXT_RE: Final = re.compile(r"retry after (\d+(?:\.\d+)?)\s*s\b", re.IGNORECASE)


class Firecrawl(HttpProvider):
    id = "firecrawl"
    supports: ClassVar[dict[str, Support]] = {"recency": "native", "limit": "native", "num_search_results": "native"}

    def build_request(self, params: SearchParams, ctx: ProviderContext) -> HttpRequest:
        key = require_key(ctx, self.id, self.info.env_keys, self.info.credential_ids)
        body: dict[str, Any] = {
            "query": params.query,
            "limit": clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0],
            "sources": [{"type": "web"}],
        }
        if params.recency:
            body["tbs"] = _TBS[params.recency]
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        return HttpRequest("POST", ctx.endpoint(self.id, URL), headers=headers, json=body, secrets=(key,))

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        return clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[1]

    def parse_response(self, response: HttpResponse, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        if not response.ok:
            raise http_error(response)
        data = json_body(self.id, response)
        if not isinstance(data, dict):
            raise SearchProviderError(self.id, "Firecrawl returned JSON that is not an object", response.status)
        if data.get("success") is False:  # a failure envelope served with 2xx
            reason = _envelope_text(data, response) or "no reason given"
            raise SearchProviderError(self.id, f"Firecrawl search failed: {reason}", response.status)
        limit = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0]
        sources = [s for s in map(_source, _web_results(data)) if s is not None][:limit]
        warning = _str(data.get("warning"))
        return SearchResponse(
            provider=self.id,
            sources=tuple(sources),
            request_id=_str(data.get("id")),
            auth_mode="api_key",
            notices=(f"Firecrawl warning: {warning}",) if warning else (),
        )


def http_error(response: HttpResponse) -> SearchProviderError:
    """A non-2xx answer: the shared classification, else `Firecrawl API error (<status>): <error>`."""
    try:
        data = response.json()
    except ValueError:
        data = None
    detail = _envelope_text(data, response) if isinstance(data, dict) else None
    error = api_error("firecrawl", response, detail=detail)
    if error.retry_after is None:
        match = _RETRY_IN_TEXT_RE.search(response.text())
        if match:
            error.retry_after = float(match.group(1))
    return error


def _envelope_text(data: dict[str, Any], response: HttpResponse) -> str | None:
    """The envelope's `error` (plus any validation `details`), folded and redacted like a body."""
    parts = [text for text in (_str(data.get("error")),) if text]
    details = data.get("details")
    if isinstance(details, list):
        parts += [d["message"] for d in details if isinstance(d, dict) and _str(d.get("message"))]
    if not parts:
        return None
    return redact_detail(response, ": ".join(parts))


def _web_results(data: dict[str, Any]) -> list[Any]:
    payload = data.get("data")
    if isinstance(payload, list):  # v1 shape
        return payload
    if isinstance(payload, dict) and isinstance(payload.get("web"), list):
        return list(payload["web"])
    return []


def _source(item: object) -> SearchSource | None:
    if not isinstance(item, dict):
        return None
    url = _str(item.get("url"))
    if url is None:
        return None
    snippet = _str(item.get("description")) or _str(item.get("snippet")) or _str(item.get("markdown"))
    return SearchSource(title=_str(item.get("title")) or url, url=url, snippet=snippet)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


PROVIDER: Final = Firecrawl()
