"""Jina: the Reader search endpoint s.jina.ai, reached with JINA_API_KEY or a stored `jina` credential.

GET https://s.jina.ai/<query, encoded like encodeURIComponent> with `Authorization: Bearer <key>`
and `Accept: application/json` (without it Jina answers markdown). Nothing else is sent: no count,
no recency, no token caps. The richer parameters: `include_domains` is Jina's own `?site=` filter
(repeated per domain); `exclude_domains` has no filter and becomes `-site:` operators in the query.
The answer is `{"data": [{title, url, description, content}]}`; the sources are sliced locally to
`num_search_results`, else `limit`, when one is given.

Errors come as `{"code", "name", "status", "message", "readableMessage"}` (e.g. 401
AuthenticationRequiredError, 402 InsufficientBalanceError, 429 RateLimitTriggeredError): `message` is
the detail and `name` the code. InsufficientBalanceError is a quota error whatever its status;
SecurityCompromiseError (a 403 for a blocked domain or abuse) refuses the request, not the key.
https://jina.ai/reader/#apiform
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import quote

from .._core._notices import approximated
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchParams, SearchSource
from .._core._wire import HttpRequest, HttpResponse
from ..errors import QuotaExhausted, RequestRejected
from ._base import HttpProvider, Plan, Support, as_list, as_str, count, require_key, with_site_operators
from ._errors import ErrorEnvelope

if TYPE_CHECKING:
    from .._core._context import ProviderContext

URL: Final = "https://s.jina.ai/"
#: What encodeURIComponent leaves as is, besides letters, digits and `-_.~` (quote's own safe set).
_URI_COMPONENT_SAFE: Final = "!*'()"


class Jina(HttpProvider):
    info = PROVIDERS["jina"]
    supports: ClassVar[dict[str, Support]] = {
        "limit": "native",
        "num_search_results": "native",
        "include_domains": "native",
        "exclude_domains": "approximate",
    }
    envelope = ErrorEnvelope(
        message=(("message",), ("readableMessage",)),
        code=(("name",),),
        codes={"InsufficientBalanceError": QuotaExhausted, "SecurityCompromiseError": RequestRejected},
    )

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        key = require_key(ctx, self.info)
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, None, None, self.label)  # no count is sent: all kept
        f = plan.filters
        if f.explicit_exclude:
            how, why = "-site: operators in the query", "Jina can only restrict to sites, not exclude them"
            plan.notices.append(approximated("exclude_domains", params.exclude_domains, how, why))
        query = with_site_operators(self.query_text(plan), (), f.exclude_domains)
        url = ctx.endpoint(self.id, URL + quote(query, safe=_URI_COMPONENT_SAFE))
        headers = {"Accept": "application/json", "Authorization": f"Bearer {key}"}
        sites = tuple(("site", domain) for domain in f.include_domains)
        plan.request = HttpRequest("GET", url, headers=headers, params=sites, secrets=(key,))
        return plan

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        data = self.answer_object(response, plan)
        sources = [
            _source(item) for item in as_list(data.get("data")) if isinstance(item, dict) and as_str(item.get("url"))
        ]
        return ProviderResult(sources=tuple(sources[: plan.limit]))


def _source(item: dict[str, Any]) -> SearchSource:
    url = item["url"]
    snippet = as_str(item.get("content")) or as_str(item.get("description"))
    return SearchSource(
        title=as_str(item.get("title")) or url, url=url, snippet=snippet.strip() or None if snippet else None
    )


PROVIDER: Final = Jina()
