"""TinyFish: GET https://api.search.tinyfish.ai with an `X-API-Key`, at most ten results a page.

The count N (`num_search_results`, else `limit`) is clamped to 1..20, default 10. Every page asks
for `num_results = min(N, 10)`, and pages `page=0, 1, ...` (at most up to page 10) are fetched
until N URL-bearing results are in hand or a page comes back with fewer raw results than it was
asked for; the results are then cut to N. An error on any page fails the search. Recency is
`recency_minutes` (a day is 1440 minutes); the ladder's start (which wins over `recency`) is the
minutes from it to now. TinyFish has no domain filter, so domains become `site:` / `-site:`
operators in the query. Results carry no dates; `site_name` is the author and the title's fallback.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._types import SearchParams, SearchResponse, SearchSource
from .._wire import HttpRequest, HttpResponse
from ._legacy import (
    HttpProvider,
    Support,
    api_error,
    clamp_count,
    json_object,
    recency_overridden,
    require_key,
    site_operator_notices,
    with_site_operators,
)

if TYPE_CHECKING:
    from .._context import ProviderContext

URL: Final = "https://api.search.tinyfish.ai/"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 20
PAGE_SIZE: Final = 10  # the most results TinyFish returns for one page
LAST_PAGE: Final = 10  # pages 0..10 at most, as upstream: a guard against pages without URLs
RECENCY_MINUTES: Final = {"day": 1440, "week": 10080, "month": 43200, "year": 525600}


class TinyFish(HttpProvider):
    id = "tinyfish"
    supports: ClassVar[dict[str, Support]] = {
        "recency": "native",
        "limit": "native",
        "num_search_results": "native",
        "recency_days": "native",
        "recency_hours": "native",
        "start_published_date": "native",
        "include_domains": "approximate",
        "exclude_domains": "approximate",
    }

    def build_request(self, params: SearchParams, ctx: ProviderContext, page: int = 0) -> HttpRequest:
        """The request for one page (0-based)."""
        key = require_key(ctx, self.id, self.info.env_keys, self.info.credential_ids)
        f = ctx.filters(params)
        query = [("query", with_site_operators(params.query, f.include_domains, f.exclude_domains))]
        if f.start is not None:
            minutes = math.ceil((ctx.clock.now() - f.start).total_seconds() / 60)
            query.append(("recency_minutes", str(max(1, minutes))))
        elif params.recency:
            query.append(("recency_minutes", str(RECENCY_MINUTES[params.recency])))
        query += [("num_results", str(self.page_size(params))), ("page", str(page))]
        headers = {"Accept": "application/json", "X-API-Key": key}
        return HttpRequest("GET", ctx.endpoint(self.id, URL), headers=headers, params=query, secrets=(key,))

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        notices = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[1]
        f = ctx.filters(params)
        notices.extend(recency_overridden(params, f))
        notices.extend(site_operator_notices(params, f, self.label))
        return notices

    def parse_response(self, response: HttpResponse, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        """One page's URL-bearing results (`search` pages and cuts to N)."""
        return SearchResponse(provider=self.id, sources=tuple(_sources(page_results(response))), auth_mode="api_key")

    async def search(self, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        wanted = self.count(params)
        page_size = self.page_size(params)
        sources: list[SearchSource] = []
        for page in range(LAST_PAGE + 1):
            response = await ctx.send(self.id, self.build_request(params, ctx, page))
            results = page_results(response)
            sources += _sources(results)
            if len(sources) >= wanted or len(results) < page_size:
                break
        return SearchResponse(provider=self.id, sources=tuple(sources[:wanted]), auth_mode="api_key")

    def count(self, params: SearchParams) -> int:
        """N: the collapsed count clamped to 1..20, default 10."""
        return clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0]

    def page_size(self, params: SearchParams) -> int:
        return min(self.count(params), PAGE_SIZE)


def page_results(response: HttpResponse) -> list[Any]:
    """The raw `results` of one page; a non-2xx answer or a malformed body raises."""
    if not response.ok:
        raise api_error("tinyfish", response)
    data = json_object("tinyfish", response)
    results = data.get("results")
    return results if isinstance(results, list) else []


def _sources(results: list[Any]) -> list[SearchSource]:
    sources = []
    for item in results:
        url = _str(item.get("url")) if isinstance(item, dict) else None
        if url is None:
            continue
        site = _str(item.get("site_name"))
        sources.append(
            SearchSource(
                title=_str(item.get("title")) or site or url, url=url, snippet=_str(item.get("snippet")), author=site
            )
        )
    return sources


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


PROVIDER: Final = TinyFish()
