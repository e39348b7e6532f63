"""Synthetic: the synthetic.new search API, a query in and a list of pages out.

POST https://api.synthetic.new/v2/search with a bearer SYNTHETIC_API_KEY and the body
`{"query": ...}`; nothing else can be asked of it (no count, recency or token caps). Results
are cut locally to `num_search_results`, else `limit`, else all of them. The `published` value is
kept raw as the published date and no age is computed from it, so renderers show it as sent.
Errors are `{"error": "<text>"}` (any other body is shown as it came); their class comes from the status
alone, as the API sends no codes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Final

from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchParams, SearchSource
from .._core._wire import HttpRequest, HttpResponse
from ._base import HttpProvider, Plan, Support, as_list, as_str, count, require_key
from ._errors import ErrorEnvelope

if TYPE_CHECKING:
    from .._core._context import ProviderContext

URL: Final = "https://api.synthetic.new/v2/search"


class Synthetic(HttpProvider):
    info = PROVIDERS["synthetic"]
    supports: ClassVar[dict[str, Support]] = {"limit": "native", "num_search_results": "native"}
    envelope = ErrorEnvelope(message=(("error",),), code=())

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        key = require_key(ctx, self.info)
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, None, None, self.label)  # no count is sent: all kept
        headers = {"Accept": "application/json", "Content-Type": "application/json", "Authorization": f"Bearer {key}"}
        plan.request = HttpRequest(
            "POST", ctx.endpoint(self.id, URL), headers=headers, json={"query": self.query_text(plan)}, secrets=(key,)
        )
        return plan

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        data = self.answer_object(response, plan)
        sources = [s for r in as_list(data.get("results")) if (s := _source(r)) is not None]
        return ProviderResult(sources=tuple(sources[: plan.limit]))


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
