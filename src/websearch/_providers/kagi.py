"""Kagi: the v1 Search API (beta access), reached with KAGI_API_KEY or a stored `kagi` credential.

POST https://kagi.com/api/v1/search with `Authorization: Bearer <key>` and the JSON body
`{query, workflow: "search", limit, filters?: {after, before}}`; `recency` becomes `filters.after`, a
UTC `YYYY-MM-DD` date one day, week, month or year before now. The richer parameters: the ladder's
start (which wins over `recency`) is `filters.after` and `end_published_date` is `filters.before`,
as whole days; Kagi has no domain filter, so domains become `site:` / `-site:` operators in the
query. The answer is a set of typed arrays: `search`, `video`, `news` and `infobox` become sources
(the last three tagged in the title), `adjacent_question` and `related_search` become related
questions, `direct_answer` the answer.

Kagi reports failures as `{"error": [{"code", "message" | "msg"}]}`, also inside a 200, where they
are errors, never "no results". Its legacy numeric codes stand for a status (0 internal 500,
1 malformed request 400, 2 unauthorized 401, 100 no billing information and 101 insufficient
credit, both 402 and quota); any other code inside a 200 is Kagi failing (502). A refused login
keeps Kagi's own words. https://help.kagi.com/kagi/api/search.html
"""

from __future__ import annotations

import calendar
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._core._notices import Notice, approximated
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, Recency, SearchParams, SearchSource
from .._core._wire import HttpRequest, HttpResponse
from ..errors import AuthenticationFailed, QuotaExhausted
from ._base import (
    HttpProvider,
    Plan,
    Support,
    age_seconds,
    as_dict,
    as_list,
    as_str,
    count,
    honours,
    recency_overridden,
    require_key,
    site_operator_notices,
    with_site_operators,
)
from ._errors import ErrorEnvelope

if TYPE_CHECKING:
    from .._core._context import ProviderContext

URL: Final = "https://kagi.com/api/v1/search"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 40
#: Result arrays that become sources, in this order, with the tag put before their titles.
SOURCE_SECTIONS: Final = (("search", ""), ("video", "[Video] "), ("news", "[News] "), ("infobox", "[Info] "))
RELATED_SECTIONS: Final = ("adjacent_question", "related_search")
#: Kagi's legacy numeric error codes as the HTTP statuses they amount to.
CODE_STATUS: Final = {"0": 500, "1": 400, "2": 401, "100": 402, "101": 402}
#: The status of an error inside a 200 whose code is not a legacy one: Kagi failed.
FAILED_IN_200: Final = 502
WHOLE_DAYS: Final = "Kagi's date filters take dates only"


class Kagi(HttpProvider):
    info = PROVIDERS["kagi"]
    #: Query operators: Kagi's search honours `site:`, `-site:`, `filetype:`, `intitle:` and `inurl:` in the query;
    #: dates are its own fields.
    operators = honours(native="site -site filetype intitle inurl")
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
    envelope = ErrorEnvelope(
        message=(("error", "message"), ("error", "msg"), ("message",), ("detail",), ("error",)),
        code=(("error", "code"),),
        codes={"2": AuthenticationFailed, "100": QuotaExhausted, "101": QuotaExhausted},
        code_status=CODE_STATUS,
        auth_detail=True,
    )

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        key = require_key(ctx, self.info)
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        f = plan.filters
        body: dict[str, Any] = {
            "query": with_site_operators(self.query_text(plan), f.include_domains, f.exclude_domains),
            "workflow": "search",
            "limit": plan.limit,
        }
        filters: dict[str, str] = {}
        if f.start is not None:
            filters["after"] = f.start.date().isoformat()
        elif params.recency:
            filters["after"] = after_date(params.recency, plan.now).isoformat()
        if f.end is not None:
            filters["before"] = f.end.date().isoformat()
        if filters:
            body["filters"] = filters
        plan.notices += _date_notices(plan, filters)
        plan.notices += site_operator_notices(plan, self.label)
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Accept": "application/json"}
        plan.request = HttpRequest("POST", ctx.endpoint(self.id, URL), headers=headers, json=body, secrets=(key,))
        return plan

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        data = self.answer_object(response, plan)
        errors = [e for e in as_list(data.get("error")) if e]
        if errors:  # a failure reported inside a 2xx
            code = as_dict(errors[0]).get("code")
            status = CODE_STATUS.get(str(code), FAILED_IN_200) if isinstance(code, (int, str)) else FAILED_IN_200
            raise self.error(response, plan, status=status, body=data)
        results = as_dict(data.get("data"))
        sources = [
            _source(item, tag, plan.now)
            for section, tag in SOURCE_SECTIONS
            for item in as_list(results.get(section))
            if isinstance(item, dict) and as_str(item.get("url"))
        ]
        meta = as_dict(data.get("meta"))
        return ProviderResult(
            answer=_answer(results),
            sources=tuple(sources[: plan.limit]),
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


def _date_notices(plan: Plan, filters: dict[str, str]) -> list[Notice]:
    """`recency` lost to a ladder rung; a start or end with a time of day sent as its day."""
    f, params = plan.filters, plan.params
    notices = recency_overridden(params, f)
    if f.start_source is not None and f.start_has_time:
        how = f"whole days (filters.after={filters['after']})"
        notices.append(approximated(f.start_source, getattr(params, f.start_source), how, WHOLE_DAYS))
    if f.end is not None and f.end_has_time:
        how = f"whole days (filters.before={filters['before']})"
        notices.append(approximated("end_published_date", params.end_published_date, how, WHOLE_DAYS))
    return notices


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
