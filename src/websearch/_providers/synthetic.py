"""Synthetic: the synthetic.new search API, a query in and a list of pages out.

POST https://api.synthetic.new/v2/search with a bearer SYNTHETIC_API_KEY and the body
`{"query": ...}`; nothing else can be asked of it (no count, recency or token caps). Results
are cut locally to `num_search_results`, else `limit`, else all of them. The `published` value is
kept raw as the published date and no age is computed from it, so renderers show it as sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Final

from .._types import SearchParams, SearchResponse, SearchSource
from .._wire import HttpRequest, HttpResponse
from ._legacy import HttpProvider, Support, api_error, as_str, json_object, require_key

if TYPE_CHECKING:
    from .._context import ProviderContext

URL: Final = "https://api.synthetic.new/v2/search"
ENV_KEYS: Final = ("SYNTHETIC_API_KEY",)


class Synthetic(HttpProvider):
    id = "synthetic"
    supports: ClassVar[dict[str, Support]] = {"limit": "native", "num_search_results": "native"}

    def build_request(self, params: SearchParams, ctx: ProviderContext) -> HttpRequest:
        key = require_key(ctx, self.id, ENV_KEYS)
        headers = {"Accept": "application/json", "Content-Type": "application/json", "Authorization": f"Bearer {key}"}
        return HttpRequest(
            "POST", ctx.endpoint(self.id, URL), headers=headers, json={"query": params.query}, secrets=(key,)
        )

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        # No clamp and no default: only the collapse of the two counts into one needs saying.
        if params.num_search_results is not None and params.limit not in (None, params.num_search_results):
            return [
                f"limit={params.limit} not applied separately: {self.label} uses num_search_results="
                f"{params.num_search_results} as its result count"
            ]
        return []

    def parse_response(self, response: HttpResponse, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        if not response.ok:
            raise api_error(self.id, response)
        data = json_object(self.id, response)
        results = data.get("results")
        sources = [s for r in (results if isinstance(results, list) else []) if (s := _source(r)) is not None]
        n = params.count
        return SearchResponse(provider=self.id, sources=tuple(sources[:n] if n else sources))


def _source(result: object) -> SearchSource | None:
    if not isinstance(result, dict):
        return None
    url = as_str(result.get("url"))
    if url is None:
        return None
    return SearchSource(
        title=as_str(result.get("title")) or url,
        url=url,
        snippet=as_str(result.get("text")),
        published_date=as_str(result.get("published")),  # raw; deliberately no age_seconds
    )


PROVIDER: Final = Synthetic()
