"""Firecrawl: SERP-backed web search at POST https://api.firecrawl.dev/v2/search.

One JSON request with a Bearer key: `query`, `limit` (the collapsed count, 1..100, default 10),
`sources: [{"type": "web"}]` (web results only and no scraping, so one credit per result) and,
for recency, Google's `tbs` (`qdr:d` / `qdr:w` / `qdr:m` / `qdr:y`). The server's schema is
strict, so nothing else is sent.

The richer parameters (mcp-web_search-tool.md; Firecrawl is also the fallback tier) add fields
only when given. The date ladder, `recency` and the sort all go into the one `tbs` string:
- a date range (an explicit start, or any end) is Google's custom range
  `cdr:1,cd_min:MM/DD/YYYY,cd_max:MM/DD/YYYY` in whole UTC days: a time of day is dropped, and
  a relative rung (or `recency`) under an end becomes its start day, each with a notice;
- `recency_hours` N is `qdr:h` (N=1) or `qdr:hN`, a fraction rounded up (a notice);
  `recency_days` N is `qdr:d` or `qdr:dN` (a fraction of a day goes as hours);
- `sort_by_date` appends `sbd:1` (`qdr:w,sbd:1`, or `sbd:1` alone): the one provider that sorts.
`include_domains` / `exclude_domains` have no field, so they become `site:` / `-site:` operators
in the query (a notice). category: github, publication (Firecrawl's `research`) and pdf go into
`categories`; the others have no counterpart (a notice). `mode` and `summary` are not supported.

The answer is `data.web[]` (v1's flat `data[]` is read too), each `{url, title, description,
position}`; an item gains `markdown` only when scraping was asked for, and that is the snippet
of last resort. Web results carry no dates; a `warning` becomes a notice. Errors come in an
envelope `{"success": false, "error": "...", "code"?, "details"?: [{"message"}]}`; the error and
the details' messages are the detail, the status the class (402 is out of credits). A failure
envelope served with 2xx is Firecrawl failing (502, unavailable unless its code says otherwise).
A 429 states its retry delay only inside the text ("... retry after 12s ..."): that is its
Retry-After.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._core._notices import Notice, not_applied, partial
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchParams, SearchSource
from .._core._wire import HttpRequest, HttpResponse
from ._base import (
    HttpProvider,
    Plan,
    Support,
    as_dict,
    as_list,
    count,
    honours,
    redact_detail,
    require_key,
    site_operator_notices,
    with_site_operators,
)
from ._errors import MAX_RETRY_AFTER, ErrorEnvelope
from ._tbs import TbsWords, tbs_parts

if TYPE_CHECKING:
    from .._core._context import ProviderContext

URL: Final = "https://api.firecrawl.dev/v2/search"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 100
#: The status of a failure envelope served with 2xx.
FAILED_IN_2XX: Final = 502
_CATEGORIES: Final = {"github": "github", "publication": "research", "pdf": "pdf"}
_RETRY_IN_TEXT_RE: Final = re.compile(r"retry after (\d+(?:\.\d+)?)\s*s\b", re.IGNORECASE)
WHOLE_DAYS: Final = "Firecrawl's date range takes dates only"
RANGE_FOR_END: Final = "with end_published_date Firecrawl needs a date range, which takes dates only"
_TBS_WORDS: Final = TbsWords(WHOLE_DAYS, RANGE_FOR_END, "Firecrawl's relative windows count whole hours", padded=True)


def _read_error(data: Any) -> tuple[str | None, str | None]:
    """The envelope's `code`, and its `error` followed by each validation detail's message."""
    body = as_dict(data)
    parts = [text for text in (_str(body.get("error")),) if text]
    parts += [m for d in as_list(body.get("details")) if (m := _str(as_dict(d).get("message")))]
    return _str(body.get("code")), ": ".join(parts) or None


def _retry_in_text(headers: Mapping[str, str], code: str | None, body: Any) -> float | None:
    """The delay Firecrawl states only in its message ("... retry after 30s"), for the mapper."""
    try:
        text = json.dumps(body) if body is not None else ""
    except RecursionError:  # nested deeper than the json module writes (orjson read it): no hint
        return None
    match = _RETRY_IN_TEXT_RE.search(text)
    seconds = float(match.group(1)) if match else None
    return seconds if seconds is not None and seconds <= MAX_RETRY_AFTER else None  # junk (inf) ignored


class Firecrawl(HttpProvider):
    info = PROVIDERS["firecrawl"]
    #: Query operators: Firecrawl's search passes the operators to its engine, loosely.
    operators = honours(approximate="site -site filetype intitle inurl")
    supports: ClassVar[dict[str, Support]] = {
        "recency": "native",
        "limit": "native",
        "num_search_results": "native",
        "recency_days": "native",
        "recency_hours": "native",  # a fraction of an hour is rounded up (a notice)
        "start_published_date": "native",  # whole days: a timestamp loses its time (a notice)
        "end_published_date": "native",
        "sort_by_date": "native",
        "category": "approximate",  # github, publication (as research) and pdf only
        "include_domains": "approximate",  # site: operators in the query
        "exclude_domains": "approximate",  # -site: operators in the query
    }
    envelope = ErrorEnvelope(read=_read_error, retry_hint=_retry_in_text)

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        key = require_key(ctx, self.info)
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        f = plan.filters
        body: dict[str, Any] = {
            "query": with_site_operators(self.query_text(plan), f.include_domains, f.exclude_domains),
            "limit": plan.limit,
            "sources": [{"type": "web"}],
        }
        if f.category in _CATEGORIES:
            body["categories"] = [{"type": _CATEGORIES[f.category]}]
        tbs, notices = _tbs(plan)
        if tbs:
            body["tbs"] = tbs
        plan.notices += notices
        plan.notices += site_operator_notices(plan, self.label)
        if f.category is not None and f.category not in _CATEGORIES:
            why = "Firecrawl does not support it (its categories are github, research for publication, and pdf)"
            plan.notices.append(not_applied("category", params.category, why))
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        plan.request = HttpRequest("POST", ctx.endpoint(self.id, URL), headers=headers, json=body, secrets=(key,))
        return plan

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        data = self.answer_object(response, plan)
        if data.get("success") is False:  # a failure envelope served with 2xx
            raise self.error(response, plan, status=FAILED_IN_2XX, body=data)
        sources = [s for s in map(_source, _web_results(data)) if s is not None][: plan.limit]
        warning = _str(data.get("warning"))
        return ProviderResult(
            sources=tuple(sources),
            request_id=_str(data.get("id")),
            auth_mode="api_key",
            notices=(partial(f"Firecrawl warning: {redact_detail(response, warning)}"),) if warning else (),
        )


def _tbs(plan: Plan) -> tuple[str | None, list[Notice]]:
    """Google's `tbs` for the date ladder, `recency` and `sort_by_date`, and the notices of what
    it expresses only approximately."""
    parts, notices = tbs_parts(plan, _TBS_WORDS)
    if plan.filters.sort_by_date:
        parts.append("sbd:1")
    return ",".join(parts) or None, notices


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
