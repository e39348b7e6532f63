"""MIGRATION ONLY: the old provider contract, kept until every provider is on `_base`'s.

Delete this module once no provider imports it.

The old provider contract and the helpers every provider shared.

A provider module reads top to bottom: metadata and `supports` (which parameters it honours
natively or approximately; anything else it is handed becomes an "ignored" notice), then
`build_request` and `parse_response` as pure functions, then private helpers.
"""

from __future__ import annotations

import email.utils
import functools
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal

from .._dates import age_seconds, parse_date
from .._registry import PROVIDERS, ProviderInfo
from .._types import SearchParams, SearchResponse, SearchSource
from .._wire import HttpRequest, HttpResponse
from ..errors import MissingCredentialError, SearchProviderError

if TYPE_CHECKING:
    from .._context import ProviderContext
    from .._filters import Filters

__all__ = [
    "HttpProvider",
    "Provider",
    "Support",
    "age_seconds",
    "api_error",
    "as_dict",
    "as_int",
    "as_list",
    "as_str",
    "clamp_count",
    "classify_http_error",
    "json_body",
    "ladder_bucket",
    "ladder_bucket_notices",
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


class Provider:
    """Base of every provider: an id, what it supports, and `search`."""

    id: ClassVar[str]
    #: Parameters honoured: "native" (sent upstream as asked) or "approximate" (mapped with a notice).
    supports: ClassVar[Mapping[str, Support]] = {}

    @property
    def info(self) -> ProviderInfo:
        """This provider's registry row."""
        return PROVIDERS[self.id]

    @functools.cached_property
    def label(self) -> str:
        """The display name ("Brave", "OpenAI", ...)."""
        return self.info.label

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        """Notices for parameters honoured only approximately (clamps, downgrades)."""
        return []

    async def search(self, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        """Run one search; raise a SearchProviderError (never return an error response)."""
        raise NotImplementedError


class HttpProvider(Provider):
    """A provider that needs one request and one complete response."""

    def build_request(self, params: SearchParams, ctx: ProviderContext) -> HttpRequest:
        """The request for `params` (pure: no I/O)."""
        raise NotImplementedError

    def parse_response(self, response: HttpResponse, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        """The response parsed, or a SearchProviderError for an error status or body (pure)."""
        raise NotImplementedError

    async def search(self, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        request = self.build_request(params, ctx)
        response = await ctx.send(self.id, request)
        return self.parse_response(response, params, ctx)


# -- counts ------------------------------------------------------------------------------------


def clamp_count(params: SearchParams, default: int, maximum: int, label: str) -> tuple[int, list[str]]:
    """The collapsed count (`num_search_results`, else `limit`) clamped to 1..maximum, with notices."""
    notices: list[str] = []
    if params.num_search_results is not None and params.limit is not None and params.limit != params.num_search_results:
        notices.append(
            f"limit={params.limit} not applied separately: {label} uses num_search_results="
            f"{params.num_search_results} as its result count"
        )
    n = params.count
    if n is None:
        return default, notices
    if n > maximum:
        name = "num_search_results" if params.num_search_results is not None else "limit"
        notices.append(f"{name}={n} exceeds {label}'s maximum of {maximum}; at most {maximum} results returned")
        return maximum, notices
    return max(1, n), notices


# -- errors ------------------------------------------------------------------------------------

_QUOTA_RE: Final = re.compile(r"credits?\s*(?:exhausted|exceeded)|quota|insufficient", re.IGNORECASE)


def retry_after_seconds(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The `Retry-After` header as seconds (delta-seconds or an HTTP date), or None."""
    value = headers.get("retry-after")
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    now = now or datetime.now(UTC)
    return max(0.0, (when - now).total_seconds())


def classify_http_error(provider: str, response: HttpResponse) -> SearchProviderError | None:
    """The shared classification of a non-2xx response (quota wording, 402, 401, 403), or None."""
    status = response.status
    retry = retry_after_seconds(response.headers)
    if _QUOTA_RE.search(response.text()):
        return SearchProviderError(provider, f"{provider}: credits exhausted", status, retry_after=retry)
    message = {402: "402 credits exhausted", 401: "401 unauthorized", 403: "403 forbidden"}.get(status)
    if message is None:
        return None
    return SearchProviderError(provider, f"{provider}: {message}", status, retry_after=retry)


def api_error(provider: str, response: HttpResponse, *, detail: str | None = None) -> SearchProviderError:
    """The error for a non-2xx response: the shared classification, else
    `<Label> API error (<status>): <detail>` (detail defaults to the body, folded and redacted)."""
    error = classify_http_error(provider, response)
    if error is not None:
        return error
    if detail is None:
        detail = response.safe_text() or status_phrase(response.status)
    label = PROVIDERS[provider].label
    return SearchProviderError(
        provider,
        f"{label} API error ({response.status}): {detail}",
        response.status,
        retry_after=retry_after_seconds(response.headers),
    )


def json_body(provider: str, response: HttpResponse) -> Any:
    """The body as JSON, or a provider error that says it was not JSON."""
    try:
        return response.json()
    except ValueError:
        label = PROVIDERS[provider].label
        raise SearchProviderError(provider, f"{label} returned a body that is not JSON", response.status) from None


def json_object(provider: str, response: HttpResponse, label: str | None = None) -> dict[str, Any]:
    """The body as a JSON object, or a provider error that says it was not JSON or not an object."""
    data = json_body(provider, response)
    if not isinstance(data, dict):
        name = label or PROVIDERS[provider].label
        raise SearchProviderError(provider, f"{name} returned JSON that is not an object", response.status)
    return data


def require_key(
    ctx: ProviderContext, provider: str, env_keys: tuple[str, ...], credential_ids: tuple[str, ...] = ()
) -> str:
    """The provider's key (explicit, then env, then agent.db), or an error that says how to set one."""
    key = ctx.secret(provider, env_keys, credential_ids)
    if key:
        return key
    label = PROVIDERS[provider].label
    where = " or ".join(env_keys) if env_keys else "a key"
    raise MissingCredentialError(
        provider, f"{label} needs an API key: set {where} or run `websearch auth set {provider}`"
    )


# -- reading loosely-typed JSON ----------------------------------------------------------------


def make_source(url: str, title: object, text: object, published: object, now: datetime) -> SearchSource:
    """A result from loosely-typed JSON values: the title falls back to the URL, the text is
    trimmed (blank becomes None), a non-string or empty date is dropped, the age comes from `now`.
    Written for the hot path: providers build dozens of these per search."""
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


def redact_detail(response: HttpResponse, text: str, limit: int = 300) -> str:
    """`text` taken from an error response, folded, cut and with the request's secrets redacted."""
    return HttpResponse(response.status, {}, text.encode(), secrets=response.secrets).safe_text(limit)


def status_phrase(status: int) -> str:
    """ "Service Unavailable" for 503; for an error whose body says nothing."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "no body"


# -- richer parameters, approximated -----------------------------------------------------------

_BUCKETS: Final = (("day", 1), ("week", 7), ("month", 31), ("year", 366))


def recency_bucket(start: datetime, now: datetime) -> str | None:
    """The narrowest of day/week/month/year that still covers `start`..`now`, or None when the
    window is longer than a year (for providers that only know those four windows)."""
    days = (now - start).total_seconds() / 86400
    return next((name for name, limit in _BUCKETS if days <= limit), None)


def ladder_bucket(params: SearchParams, ctx: ProviderContext) -> str | None:
    """The narrowest of day/week/month/year covering the date ladder's start .. now, or None."""
    start = ctx.filters(params).start
    return recency_bucket(start, ctx.clock.now()) if start is not None else None


def recency_overridden(params: SearchParams, filters: Filters) -> list[str]:
    """The notice that `recency` lost to a date-ladder rung, when both were given."""
    if params.recency and filters.start_source is not None:
        return [f"recency={params.recency!r} not applied: {filters.start_source} takes precedence"]
    return []


def ladder_bucket_notices(
    params: SearchParams, filters: Filters, applied: str | None, longest: str, only: str
) -> list[str]:
    """The notices of a ladder start mapped onto a provider's coarse windows: `recency` overridden,
    then "approximated as <applied>: <only>", or "not applied" when even `longest` is too short."""
    if filters.start_source is None:
        return []
    notices = recency_overridden(params, filters)
    rung = f"{filters.start_source}={getattr(params, filters.start_source)!r}"
    if applied is None:
        notices.append(f"{rung} not applied: the window is longer than {longest}")
    else:
        notices.append(f"{rung} approximated as {applied}: {only}")
    return notices


def site_operator_notices(params: SearchParams, filters: Filters, label: str, why: str = "") -> list[str]:
    """The notices of `with_site_operators`: domains applied as query operators, not a filter."""
    return [
        f"{name}={getattr(params, name)!r} applied as {op} operators in the query: {label} has no domain filter{why}"
        for name, op in (("include_domains", "site:"), ("exclude_domains", "-site:"))
        if getattr(filters, name)
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
