"""Kagi: the v1 Search API (beta access), reached with KAGI_API_KEY or a stored `kagi` credential.

POST https://kagi.com/api/v1/search with `Authorization: Bearer <key>` and the JSON body
`{query, workflow: "search", limit, filters?: {after, before}}`; `recency` becomes `filters.after`, a
UTC `YYYY-MM-DD` date one day, week, month or year before now. The richer parameters: the ladder's
start (which wins over `recency`) is `filters.after` and `end_published_date` is `filters.before`,
as whole days; Kagi has no domain filter, so domains become `site:` / `-site:` operators in the
query. The answer is a set of typed arrays: `search`, `video`, `news` and `infobox` become sources
(the last three tagged in the title), `adjacent_question` and `related_search` become related
questions, `direct_answer` the answer.

Kagi reports failures as `{"error": [{"code", "message" | "msg"}]}`, also inside a 200 (legacy
numeric codes: 2 unauthorized, 100 no billing information, 101 insufficient credit); those are
errors, never "no results". https://help.kagi.com/kagi/api/search.html
"""

from __future__ import annotations

import calendar
import dataclasses
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._types import Recency, SearchParams, SearchResponse, SearchSource
from .._wire import HttpRequest, HttpResponse
from ..errors import SearchProviderError
from ._legacy import (
    HttpProvider,
    Support,
    age_seconds,
    as_dict,
    as_list,
    as_str,
    clamp_count,
    classify_http_error,
    json_object,
    recency_overridden,
    redact_detail,
    require_key,
    retry_after_seconds,
    site_operator_notices,
    with_site_operators,
)

if TYPE_CHECKING:
    from .._context import ProviderContext

URL: Final = "https://kagi.com/api/v1/search"
ENV_KEYS: Final = ("KAGI_API_KEY",)
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 40
#: Result arrays that become sources, in this order, with the tag put before their titles.
SOURCE_SECTIONS: Final = (("search", ""), ("video", "[Video] "), ("news", "[News] "), ("infobox", "[Info] "))
RELATED_SECTIONS: Final = ("adjacent_question", "related_search")
#: Kagi's numeric error codes (in a 200 body) as the HTTP statuses they amount to.
_CODE_STATUS: Final = {0: 500, 1: 400, 2: 401, 100: 402, 101: 402}


class Kagi(HttpProvider):
    id = "kagi"
    supports: ClassVar[dict[str, Support]] = {
        "recency": "native",
        "limit": "native",
        "num_search_results": "native",
        "recency_days": "native",
        "recency_hours": "approximate",
        "start_published_date": "native",
        "end_published_date": "native",
        "include_domains": "approximate",
        "exclude_domains": "approximate",
    }

    def build_request(self, params: SearchParams, ctx: ProviderContext) -> HttpRequest:
        key = require_key(ctx, self.id, ENV_KEYS, self.info.credential_ids)
        f = ctx.filters(params)
        body: dict[str, Any] = {
            "query": with_site_operators(params.query, f.include_domains, f.exclude_domains),
            "workflow": "search",
            "limit": clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0],
        }
        filters: dict[str, str] = {}
        if f.start is not None:
            filters["after"] = f.start.date().isoformat()
        elif params.recency:
            filters["after"] = after_date(params.recency, ctx.clock.now()).isoformat()
        if f.end is not None:
            filters["before"] = f.end.date().isoformat()
        if filters:
            body["filters"] = filters
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Accept": "application/json"}
        return HttpRequest("POST", ctx.endpoint(self.id, URL), headers=headers, json=body, secrets=(key,))

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        notices = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[1]
        f = ctx.filters(params)
        notices.extend(recency_overridden(params, f))
        if f.start_source is not None and f.start is not None and f.start_has_time:
            notices.append(
                f"{f.start_source}={getattr(params, f.start_source)!r} applied as whole days "
                f"(filters.after={f.start.date()}): Kagi's date filters take dates only"
            )
        if f.end is not None and f.end_has_time:
            notices.append(
                f"end_published_date={params.end_published_date!r} applied as whole days "
                f"(filters.before={f.end.date()}): Kagi's date filters take dates only"
            )
        notices.extend(site_operator_notices(params, f, self.label))
        return notices

    def parse_response(self, response: HttpResponse, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        if not response.ok:
            raise kagi_error(response, response.status)
        data = json_object(self.id, response)
        errors = [e for e in as_list(data.get("error")) if e]
        if errors:  # a failure reported inside a 2xx
            code = errors[0].get("code") if isinstance(errors[0], dict) else None
            raise kagi_error(response, _CODE_STATUS.get(code, 502) if isinstance(code, int) else 502, code)
        results = as_dict(data.get("data"))
        limit = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0]
        now = ctx.clock.now()
        sources = [
            _source(item, tag, now)
            for section, tag in SOURCE_SECTIONS
            for item in as_list(results.get(section))
            if isinstance(item, dict) and as_str(item.get("url"))
        ]
        meta = as_dict(data.get("meta"))
        return SearchResponse(
            provider=self.id,
            answer=_answer(results),
            sources=tuple(sources[:limit]),
            related_questions=tuple(_related(results)),
            request_id=as_str(meta.get("trace")) or as_str(meta.get("id")),
        )


def after_date(recency: Recency, now: datetime) -> date:
    """The UTC date one day, week, month or year before `now` (month ends clamp: Mar 31 → Feb 28)."""
    today = (now if now.tzinfo else now.replace(tzinfo=UTC)).astimezone(UTC).date()
    if recency in ("day", "week"):
        return today - timedelta(days=1 if recency == "day" else 7)
    months = today.year * 12 + today.month - 1 - (1 if recency == "month" else 12)
    year, month = divmod(months, 12)
    return date(year, month + 1, min(today.day, calendar.monthrange(year, month + 1)[1]))


def kagi_error(response: HttpResponse, status: int, code: object = None) -> SearchProviderError:
    """`Kagi API error (<status>): <detail>` after the shared classification (which sees `status`,
    the HTTP status or the one a Kagi error code amounts to). 401/403 keep Kagi's words as a hint."""
    detail = _error_detail(response)
    if detail and code is not None:
        detail = f"{detail} (Kagi error code {code})"
    error = classify_http_error("kagi", dataclasses.replace(response, status=status))
    if error is None:
        message = f"Kagi API error ({status}): {detail}" if detail else f"Kagi API error ({status})"
        return SearchProviderError("kagi", message, status, retry_after=retry_after_seconds(response.headers))
    if status in (401, 403) and detail:
        error.hint = f"Kagi said: {detail}"
    return error


def _error_detail(response: HttpResponse) -> str:
    """The first message in Kagi's envelope, else the body: folded, cut, with secrets redacted."""
    try:
        data = response.json()
    except ValueError:
        data = None
    candidates: list[object] = []
    if isinstance(data, dict):
        candidates = [data.get("message"), data.get("detail"), data.get("error")]
        for item in as_list(data.get("error")):
            if isinstance(item, dict):
                candidates += [item.get("message"), item.get("msg")]
    found = next((c for c in candidates if isinstance(c, str) and c.strip()), None)
    if found is None:
        return response.safe_text()
    return redact_detail(response, found)


def _source(item: dict[str, Any], tag: str, now: datetime) -> SearchSource:
    url = item["url"]
    published = as_str(item.get("time"))
    snippet = as_str(item.get("snippet"))
    return SearchSource(
        title=tag + (as_str(item.get("title")) or url),
        url=url,
        snippet=snippet.strip() or None if snippet else None,
        published_date=published,
        age_seconds=age_seconds(published, now),
    )


def _related(results: dict[str, Any]) -> list[str]:
    questions: list[str] = []
    for section in RELATED_SECTIONS:
        for item in as_list(results.get(section)):
            if not isinstance(item, dict):
                continue
            props = as_dict(item.get("props"))
            text = as_str(props.get("question")) or as_str(props.get("query")) or as_str(item.get("title"))
            if text and text.strip():
                questions.append(text.strip())
    return questions


def _answer(results: dict[str, Any]) -> str | None:
    direct = as_list(results.get("direct_answer"))
    if not direct or not isinstance(direct[0], dict):
        return None
    text = as_str(direct[0].get("snippet")) or as_str(direct[0].get("title"))
    return text.strip() or None if text else None


PROVIDER: Final = Kagi()
