"""The provider contract (plan once, send, parse) and the helpers every provider shares.

A provider module reads top to bottom:

1. its class, with `info` (its registry row), `supports` (the parameters it honours natively or
   approximately; the chain reports every other parameter the caller set as not applied),
   `operators` (the query operators its engine honours, see below) and `envelope` (where its
   error bodies keep their message and code; see `_errors`);
2. `plan(params, ctx) -> Plan`: every decision, made once and purely: the request, the notices
   of what it changed or left out, and what the parser needs (`limit`, `state`);
3. `parse(response, plan) -> ProviderResult`: bytes to results, pure, with errors mapped by
   `self.error(response, plan)` through the envelope;
4. private helpers.

Query operators (`_core._operators`) reach a provider two ways. `site:`, `-site:`, `after:` and
`before:` are merged into the normalised filters (domains and dates), so the provider's own
mapping of `include_domains`, `exclude_domains` and the dates applies to them. The query text it
sends is `query_text(plan)`: the words, with the operators it declares in `operators` left as
written, except those its filters already carry (a kept `site:` beside `include_domains` would
double it). `"phrase"`, `-term` and `OR` always stay. Whatever it does not honour, the chain's
lenient pass enforces on the sources.

Providers that stream or take several requests (Perplexity, Gemini, Codex, Z.AI, TinyFish's
pages) override `search(plan, ctx)`, and still take their notices from `plan`. One that may ask
again without a filter that emptied the answer (Tavily's time range, Keenable's dates) says so
in `plan.unfiltered`, and the shared `search` does it. A provider knows
nothing of the chain: the context says what it needs (for example `ctx.explicit`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, overload

from .._core._dates import age_seconds, parse_date
from .._core._filters import Filters
from .._core._notices import Notice, approximated, clamped, not_applied, overridden, widened
from .._core._operators import OPERATORS, TEXT_OPERATORS, Operator
from .._core._registry import ProviderInfo
from .._core._types import ProviderResult, SearchParams, SearchSource
from .._core._wire import HttpRequest, HttpResponse
from ..errors import InvalidResponse, MissingCredentialError, SearchProviderError
from ._errors import DEFAULT_ENVELOPE, ErrorEnvelope, http_error, redact_detail, retry_after_seconds, status_phrase

if TYPE_CHECKING:
    from .._core._context import ProviderContext

__all__ = [
    "HttpProvider",
    "Plan",
    "Provider",
    "ProviderResult",
    "Support",
    "Unfiltered",
    "age_seconds",
    "as_dict",
    "as_int",
    "as_list",
    "as_str",
    "bucket_notices",
    "count",
    "honours",
    "local_cap",
    "make_source",
    "parse_date",
    "recency_bucket",
    "recency_overridden",
    "redact_detail",
    "require_key",
    "retry_after_seconds",
    "site_operator_notices",
    "status_phrase",
    "with_site_operators",
]

Support = Literal["native", "approximate"]

#: The filter each merged operator is carried by: a provider that maps that filter gets the
#: operator through it, never also in its query text.
OPERATOR_FILTERS: Final[Mapping[str, str]] = {
    "site": "include_domains",
    "-site": "exclude_domains",
    "after": "start_published_date",
    "before": "end_published_date",
}


@dataclass(slots=True)
class Plan:
    """What a provider decided for one search before anything is sent.

    `request` is what `HttpProvider.search` sends (providers with their own `search` may leave it
    None and keep their requests in `state`); `notices` say what the plan changed or left out;
    `limit` is how many sources the parser keeps; `now` is the instant the plan was made (dates,
    windows and ages all read it, so a plan is reproducible); `state` is anything else the
    parser needs; `unfiltered`, the request again without a filter that can empty the answer
    (a date window some indexes apply strictly), sent once by `HttpProvider.search` when the
    first found nothing.
    """

    params: SearchParams
    filters: Filters
    now: datetime
    request: HttpRequest | None = None
    notices: list[Notice] = field(default_factory=list)
    limit: int | None = None
    state: Any = None
    unfiltered: Unfiltered | None = None


@dataclass(frozen=True, slots=True)
class Unfiltered:
    """`Plan.unfiltered`: the request without the filter, and the notices that say its results
    are not filtered (added to the answer only when it is the one given)."""

    request: HttpRequest
    notices: tuple[Notice, ...]


class Provider:
    """Base of every provider: its row, what it supports, its error envelope, `plan` and `search`."""

    info: ClassVar[ProviderInfo]
    #: Parameters honoured: "native" (sent upstream as asked) or "approximate" (mapped with a notice).
    supports: ClassVar[Mapping[str, Support]] = {}
    #: Query operators its engine honours when they are left in the query text, "native" (as
    #: documented) or "approximate" (loosely, or an answer engine reading them as an instruction).
    #: One not declared is taken out of the query and left to the chain's lenient pass.
    operators: ClassVar[Mapping[Operator, Support]] = {}
    envelope: ClassVar[ErrorEnvelope] = DEFAULT_ENVELOPE

    @property
    def id(self) -> str:
        """The provider id ("brave", ...)."""
        return self.info.id

    @property
    def label(self) -> str:
        """The display name ("Brave", "OpenAI", ...)."""
        return self.info.label

    def new_plan(self, params: SearchParams, ctx: ProviderContext, **fields: Any) -> Plan:
        """A plan dated now, with the search's normalised filters."""
        return Plan(params, ctx.filters(params), ctx.clock.now(), **fields)

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        """Decide the search (pure: no I/O). Raise MissingCredentialError when a key is needed."""
        raise NotImplementedError

    @classmethod
    def query_text(cls, plan: Plan) -> str:
        """The query as this provider sends it: unchanged when it holds no constraining operator,
        else the words with the operators of `operators` as written (those its filters carry
        taken out: `site:` comes back from `include_domains` where the provider adds it)."""
        ops = plan.filters.operators
        if ops is None:
            return plan.params.query
        return ops.render(_kept(cls))

    async def search(self, plan: Plan, ctx: ProviderContext) -> ProviderResult:
        """Run the planned search; raise a SearchProviderError (never return an error)."""
        raise NotImplementedError

    def requests_only(self) -> bool:
        """Whether `search` is nothing but whole requests sent through `ctx.send`, one after
        another (no stream, no wait): each request, cut to what remains of the search's
        deadline, then bounds the search without a timer."""
        return False

    def error(
        self,
        response: HttpResponse,
        plan: Plan,
        *,
        status: int | None = None,
        body: Any = None,
        envelope: ErrorEnvelope | None = None,
    ) -> SearchProviderError:
        """The error for a failed response, mapped through this provider's envelope (or another
        one it declares, for a second wire format)."""
        return http_error(self.info, envelope or self.envelope, response, plan.now, status=status, body=body)

    def answer_object(self, response: HttpResponse, plan: Plan) -> dict[str, Any]:
        """The JSON object of a 2xx answer; the mapped error of any other (see `error`)."""
        if not response.ok:
            raise self.error(response, plan)
        return self.json_object(response)

    def json_object(self, response: HttpResponse) -> dict[str, Any]:
        """The body as a JSON object, or InvalidResponse saying it was not JSON or not an object."""
        try:
            data = response.json()
        except ValueError:
            raise InvalidResponse(self.id, f"{self.label} returned a body that is not JSON", response.status) from None
        if not isinstance(data, dict):
            raise InvalidResponse(self.id, f"{self.label} returned JSON that is not an object", response.status)
        return data


class HttpProvider(Provider):
    """A provider that sends one request and parses one complete response."""

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        """The response as results, or a SearchProviderError for an error status or body (pure)."""
        raise NotImplementedError

    async def search(self, plan: Plan, ctx: ProviderContext) -> ProviderResult:
        """Send the plan's request and parse it; when it found nothing and the plan has an
        `unfiltered` request, send that once and give its answer with its notices."""
        assert plan.request is not None, f"{self.id}: plan() made no request"
        result = self.parse(await ctx.send(self.id, plan.request), plan)
        again = plan.unfiltered
        if again is None or result.answer or result.sources:
            return result
        result = self.parse(await ctx.send(self.id, again.request), plan)
        return replace(result, notices=(*result.notices, *again.notices))

    def requests_only(self) -> bool:
        return type(self).search is HttpProvider.search


def _kept(cls: type[Provider]) -> frozenset[str]:
    """The operator kinds `cls` keeps in its query text (computed once per class)."""
    kept = _KEPT.get(cls)
    if kept is None:
        kept = _KEPT[cls] = TEXT_OPERATORS | {
            op for op in cls.operators if OPERATOR_FILTERS.get(op) not in cls.supports
        }
    return kept


_KEPT: dict[type[Provider], frozenset[str]] = {}


def honours(native: str = "", approximate: str = "") -> Mapping[Operator, Support]:
    """An `operators` declaration from space-separated kinds: `honours(native="site -site filetype")`."""
    table: dict[Operator, Support] = {}
    pairs: tuple[tuple[Support, str], ...] = (("native", native), ("approximate", approximate))
    for support, names in pairs:
        for name in names.split():
            kind = next((op for op in OPERATORS if op == name), None)
            if kind is None:
                raise ValueError(f"unknown query operator {name!r}")
            table[kind] = support
    return table


def require_key(ctx: ProviderContext, info: ProviderInfo) -> str:
    """The provider's key (explicit, then its env vars, then agent.db), or an error saying how to set one."""
    key = ctx.secret(info.id, info.env_keys, info.credential_ids)
    if key:
        return key
    where = " or ".join(info.env_keys) if info.env_keys else "a key"
    raise MissingCredentialError(
        info.id, f"{info.label} needs an API key: set {where} or run `websearch auth set {info.id}`"
    )


# -- counts ------------------------------------------------------------------------------------


@overload
def count(params: SearchParams, default: int, maximum: int | None, label: str) -> tuple[int, list[Notice]]: ...


@overload
def count(params: SearchParams, default: None, maximum: int | None, label: str) -> tuple[int | None, list[Notice]]: ...


def count(
    params: SearchParams, default: int | None, maximum: int | None, label: str
) -> tuple[int | None, list[Notice]]:
    """The result count (`num_search_results`, else `limit`) clamped to 1..maximum, and its notices.

    A provider with no default count keeps everything when none is asked (`default=None`); one
    with no upper bound passes `maximum=None`.
    """
    notices: list[Notice] = []
    if params.num_search_results is not None and params.limit is not None and params.limit != params.num_search_results:
        notices.append(overridden("limit", params.limit, f"num_search_results={params.num_search_results}"))
    n = params.count
    if n is None:
        return default, notices
    if maximum is not None and n > maximum:
        name = "num_search_results" if params.num_search_results is not None else "limit"
        notices.append(clamped(name, n, maximum, f"{label} returns at most {maximum} results"))
        return maximum, notices
    return max(1, n), notices


def local_cap(plan: Plan, label: str, what: str = "sources") -> None:
    """For a provider with no result-count parameter: the count is only a cap applied here.

    Sets `plan.limit` (None when no count was asked) and adds the notices: `limit` overridden by
    `num_search_results`, then `<name>=<n> applied as a local cap on <what>`.
    """
    plan.limit, notices = count(plan.params, None, None, label)
    if plan.limit is not None:
        name = "num_search_results" if plan.params.num_search_results is not None else "limit"
        why = f"{label} has no result-count parameter"
        notices.append(approximated(name, plan.limit, f"a local cap on {what}", why))
    plan.notices += notices


# -- reading loosely-typed JSON ----------------------------------------------------------------


def make_source(url: str, title: object, text: object, published: object, now: datetime) -> SearchSource:
    """A result from loosely-typed JSON values: the title falls back to the URL, the text is
    trimmed (blank becomes None), a non-string or empty date is dropped, the age comes from `now`."""
    date = published if isinstance(published, str) and published else None
    snippet = text.strip() if isinstance(text, str) else ""
    return SearchSource(
        title if isinstance(title, str) and title else url,
        url,
        snippet or None,
        date,
        age_seconds(date, now) if date else None,
    )


def as_dict(value: object) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """`value` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def as_str(value: object) -> str | None:
    """`value` if it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def as_int(value: object) -> int | None:
    """`value` as an int if it is a finite JSON number (not a boolean), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if math.isfinite(value) else None


# -- richer parameters, approximated -----------------------------------------------------------

_BUCKETS: Final = (("day", 1), ("week", 7), ("month", 31), ("year", 366))


def recency_bucket(start: datetime, now: datetime) -> str | None:
    """The narrowest of day/week/month/year that still covers `start`..`now`, or None when the
    window is longer than a year (for providers that only know those four windows)."""
    days = (now - start).total_seconds() / 86400
    return next((name for name, limit in _BUCKETS if days <= limit), None)


def recency_overridden(params: SearchParams, filters: Filters) -> list[Notice]:
    """The notice that `recency` lost to a date-ladder rung, when both were given."""
    if params.recency and filters.start_source is not None:
        return [overridden("recency", params.recency, filters.start_source)]
    return []


def day_range_notices(plan: Plan, window: object | None, range_name: str, how: str, whole_days: str) -> list[Notice]:
    """The notices of a ladder sent as a range of whole days (`window`, None when none was
    sent): `recency` overridden; an end without a start not applied (`range_name`, say "Brave's
    freshness range", needs one); a start or end with a time of day approximated (`how`: the
    range as sent, `whole_days`: why)."""
    f, params = plan.filters, plan.params
    notices = recency_overridden(params, f)
    if window is None and f.end is not None:
        why = f"{range_name} needs a start (give a start date, recency_days, recency_hours or recency)"
        notices.append(not_applied(*f.end_given(params), why))
    elif window is not None:
        if f.start_has_time and f.start_source is not None:
            notices.append(approximated(f.start_source, getattr(params, f.start_source), how, whole_days))
        if f.end_has_time:
            notices.append(approximated("end_published_date", params.end_published_date, how, whole_days))
    return notices


def bucket_notices(plan: Plan, applied: str | None, longest: str, only: str) -> list[Notice]:
    """The notices of a ladder start mapped onto a provider's coarse windows: `recency`
    overridden, then "widened to <applied>: <only>", or "not applied" when even `longest` is too
    short. `applied` is how the window was sent (`df=w (the past week)`)."""
    f = plan.filters
    if f.start_source is None:
        return []
    notices = recency_overridden(plan.params, f)
    name, value = f.start_given(plan.params)
    if applied is None:
        notices.append(not_applied(name, value, f"the window is longer than {longest}"))
    else:
        notices.append(widened(name, value, applied, only))
    return notices


def site_operator_notices(plan: Plan, label: str, why: str = "") -> list[Notice]:
    """The notices of `with_site_operators`: domains applied as query operators, not a filter."""
    return [
        approximated(
            name, getattr(plan.params, name), f"{op} operators in the query", f"{label} has no domain filter{why}"
        )
        for name, op, given in (
            ("include_domains", "site:", plan.filters.explicit_include),
            ("exclude_domains", "-site:", plan.filters.explicit_exclude),
        )
        if given
    ]


def with_site_operators(query: str, include: tuple[str, ...], exclude: tuple[str, ...]) -> str:
    """`query` with `site:` / `-site:` operators, for providers whose only domain filter is the query."""
    parts = [query]
    if len(include) == 1:
        parts.append(f"site:{include[0]}")
    elif include:
        parts.append("(" + " OR ".join(f"site:{d}" for d in include) + ")")
    parts.extend(f"-site:{d}" for d in exclude)
    return " ".join(parts)
