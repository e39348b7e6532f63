"""TinyFish: GET https://api.search.tinyfish.ai with an `X-API-Key`, at most ten results a page.

The count N (`num_search_results`, else `limit`) is clamped to 1..20, default 10. Every page asks
for `num_results = min(N, 10)`, and pages `page=0, 1, ...` (at most up to page 10) are fetched
until N URL-bearing results are in hand or a page comes back with fewer raw results than it was
asked for; the results are then cut to N. The plan holds page 0's request and the page size; page
n is the same request with `page=n`. An error on any page fails the search. Recency is
`recency_minutes` (a day is 1440 minutes); the ladder's start (which wins over `recency`) is the
minutes from it to the plan's instant. TinyFish has no domain filter, so domains become `site:` /
`-site:` operators in the query. Results carry no dates; `site_name` is the author and the title's
fallback. Error bodies keep their message in `detail`; no code is read, so the class comes from the
status.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchParams, SearchSource
from .._core._wire import HttpRequest, HttpResponse
from ._base import (
    HttpProvider,
    Plan,
    Support,
    as_list,
    count,
    recency_overridden,
    require_key,
    site_operator_notices,
    with_site_operators,
)
from ._errors import ErrorEnvelope

if TYPE_CHECKING:
    from .._core._context import ProviderContext

URL: Final = "https://api.search.tinyfish.ai/"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 20
PAGE_SIZE: Final = 10  # the most results TinyFish returns for one page
LAST_PAGE: Final = 10  # pages 0..10 at most, as upstream: a guard against pages without URLs
RECENCY_MINUTES: Final = {"day": 1440, "week": 10080, "month": 43200, "year": 525600}


class TinyFish(HttpProvider):
    info = PROVIDERS["tinyfish"]
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
    envelope = ErrorEnvelope(message=(("detail",),), code=())

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        """Page 0's request; `state` is the page size (`search` asks for the next pages)."""
        key = require_key(ctx, self.info)
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        plan.state = min(plan.limit, PAGE_SIZE)
        f = plan.filters
        query = [("query", with_site_operators(self.query_text(plan), f.include_domains, f.exclude_domains))]
        if f.start is not None:
            minutes = math.ceil((plan.now - f.start).total_seconds() / 60)
            query.append(("recency_minutes", str(max(1, minutes))))
        elif params.recency:
            query.append(("recency_minutes", str(RECENCY_MINUTES[params.recency])))
        query += [("num_results", str(plan.state)), ("page", "0")]
        plan.notices += recency_overridden(params, f)
        plan.notices += site_operator_notices(plan, self.label)
        headers = {"Accept": "application/json", "X-API-Key": key}
        plan.request = HttpRequest("GET", ctx.endpoint(self.id, URL), headers=headers, params=query, secrets=(key,))
        return plan

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        """One page's URL-bearing results (`search` pages and cuts to N)."""
        return ProviderResult(sources=tuple(_sources(self.page_results(response, plan))), auth_mode="api_key")

    def requests_only(self) -> bool:
        return True  # its pages, one request after another

    async def search(self, plan: Plan, ctx: ProviderContext) -> ProviderResult:
        assert plan.request is not None and plan.limit is not None, "tinyfish: plan() made no request"
        sources: list[SearchSource] = []
        for page in range(LAST_PAGE + 1):
            response = await ctx.send(self.id, page_request(plan.request, page))
            results = self.page_results(response, plan)
            sources += _sources(results)
            if len(sources) >= plan.limit or len(results) < plan.state:
                break
        return ProviderResult(sources=tuple(sources[: plan.limit]), auth_mode="api_key")

    def page_results(self, response: HttpResponse, plan: Plan) -> list[Any]:
        """The raw `results` of one page; a non-2xx answer or a malformed body raises."""
        if not response.ok:
            raise self.error(response, plan)
        return as_list(self.json_object(response).get("results"))


def page_request(first: HttpRequest, page: int) -> HttpRequest:
    """Page `page` (0-based): page 0's request with its `page` parameter replaced."""
    params = [(name, str(page) if name == "page" else value) for name, value in first.params]
    return dataclasses.replace(first, params=params)


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
