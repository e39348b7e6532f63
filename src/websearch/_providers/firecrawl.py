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
of last resort. Web results carry no dates. Errors come in an envelope `{"success": false,
"error": "..."}` whose text is the error detail: 402 means out of credits, and a 429 states its
retry delay only inside the text ("... retry after 12s ..."), which becomes `retry_after`.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._filters import Filters, recency_start
from .._types import SearchParams, SearchResponse, SearchSource
from .._wire import HttpRequest, HttpResponse
from ..errors import SearchProviderError
from ._legacy import (
    HttpProvider,
    Support,
    api_error,
    clamp_count,
    json_object,
    redact_detail,
    require_key,
    with_site_operators,
)

if TYPE_CHECKING:
    from .._context import ProviderContext

URL: Final = "https://api.firecrawl.dev/v2/search"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 100
_TBS: Final = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}
_CATEGORIES: Final = {"github": "github", "publication": "research", "pdf": "pdf"}
_RETRY_IN_TEXT_RE: Final = re.compile(r"retry after (\d+(?:\.\d+)?)\s*s\b", re.IGNORECASE)


class Firecrawl(HttpProvider):
    id = "firecrawl"
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

    def build_request(self, params: SearchParams, ctx: ProviderContext) -> HttpRequest:
        key = require_key(ctx, self.id, self.info.env_keys, self.info.credential_ids)
        f = ctx.filters(params)
        query = params.query
        if f.include_domains or f.exclude_domains:
            query = with_site_operators(query, f.include_domains, f.exclude_domains)
        body: dict[str, Any] = {
            "query": query,
            "limit": clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0],
            "sources": [{"type": "web"}],
        }
        if f.category in _CATEGORIES:
            body["categories"] = [{"type": _CATEGORIES[f.category]}]
        tbs = _tbs(params, f, ctx.clock.now())[0]
        if tbs:
            body["tbs"] = tbs
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        return HttpRequest("POST", ctx.endpoint(self.id, URL), headers=headers, json=body, secrets=(key,))

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        notices = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[1]
        f = ctx.filters(params)
        notices += _tbs(params, f, ctx.clock.now())[1]
        if f.include_domains:
            notices.append("include_domains approximated: Firecrawl has no domain filter; sent as site: operators")
        if f.exclude_domains:
            notices.append("exclude_domains approximated: Firecrawl has no domain filter; sent as -site: operators")
        if f.category is not None and f.category not in _CATEGORIES:
            notices.append(
                f"category={f.category!r} not applied: Firecrawl does not support it "
                "(its categories are github, research for publication, and pdf)"
            )
        return notices

    def parse_response(self, response: HttpResponse, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        if not response.ok:
            raise http_error(response)
        data = json_object(self.id, response)
        if data.get("success") is False:  # a failure envelope served with 2xx
            reason = _envelope_text(data, response) or "no reason given"
            raise SearchProviderError(self.id, f"Firecrawl search failed: {reason}", 502)
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


def _tbs(params: SearchParams, f: Filters, now: datetime) -> tuple[str | None, list[str]]:
    """Google's `tbs` for the date ladder, `recency` and `sort_by_date`, and notices for what it
    expresses only approximately."""
    notices: list[str] = []
    parts: list[str] = []
    source: str | None = f.start_source
    raw: Any = getattr(params, f.start_source) if f.start_source else None
    if params.recency and source:
        notices.append(f"recency={params.recency!r} not applied: {source} takes precedence")
    if f.end is not None or source == "start_published_date":  # only a custom range has an end
        start = f.start
        if start is None and params.recency:
            start, source, raw = recency_start(params.recency, now), "recency", params.recency
        parts.append("cdr:1")
        if start is not None:
            parts.append(f"cd_min:{_mdy(start)}")
            if source != "start_published_date":
                notices.append(
                    f"{source}={raw!r} approximated: with end_published_date Firecrawl needs a date range "
                    f"of whole days; sent cd_min:{_mdy(start)}"
                )
            elif f.start_has_time:
                notices.append(
                    f"{source}={raw!r} approximated: Firecrawl's date range is whole days; sent cd_min:{_mdy(start)}"
                )
        if f.end is not None:
            parts.append(f"cd_max:{_mdy(f.end)}")
            if f.end_has_time:
                notices.append(
                    f"end_published_date={params.end_published_date!r} approximated: Firecrawl's date range is "
                    f"whole days; sent cd_max:{_mdy(f.end)}"
                )
    elif source is not None:  # recency_hours or recency_days, relative to now
        amount = float(raw)  # usable: the ladder chose it
        if source == "recency_days" and amount.is_integer():
            parts.append(_qdr("d", int(amount)))
        else:
            hours = amount * 24 if source == "recency_days" else amount
            whole = max(1, math.ceil(round(hours, 6)))
            parts.append(_qdr("h", whole))
            if whole != hours:
                notices.append(f"{source}={raw!r} approximated: Firecrawl filters by whole hours; sent {parts[-1]}")
    elif params.recency:
        parts.append(_TBS[params.recency])
    if f.sort_by_date:
        parts.append("sbd:1")
    return ",".join(parts) or None, notices


def _qdr(unit: str, n: int) -> str:
    return f"qdr:{unit}" if n == 1 else f"qdr:{unit}{n}"


def _mdy(when: datetime) -> str:
    return when.strftime("%m/%d/%Y")


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
