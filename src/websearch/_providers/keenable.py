"""Keenable: its own web index, keyed (`KEENABLE_API_KEY`) or through its keyless public endpoint.

One module, two registry rows. `keenable` is a keyed search API among the others: POST
https://api.keenable.ai/v1/search with the key in `X-API-Key` (chosen explicitly without a key it
uses the public endpoint, as upstream does). `keenable_public` (`KeenablePublic`, `PUBLIC` here)
is the keyless endpoint POST https://api.keenable.ai/v1/search/public, never sent a key,
placed after the other keyless engines and paced politely (the endpoint allows about 1,000
requests an hour per IP). They are two rows, not one, because a row has one chain position, one
pace, one tier and one health record: a key deserves the keyed tier's place and no keyless
pacing, and a per-IP 429 of the public endpoint must not cool down a paid key (or the reverse).

Both send `X-Keenable-Title: websearch` (the public endpoint refuses a request without it; the
keyed one accepts it as attribution) and the JSON body `{query, max_results}` (the collapsed
count, 1..50, default 10), plus, when given:
- `site`: the one host of `include_domains` (Keenable's filter takes one domain); several hosts,
  and `exclude_domains`, are enforced on the results by the chain (a notice says so);
- `published_after` / `published_before`: the date ladder's start and the end, a date as
  YYYY-MM-DD and a time as an ISO 8601 UTC timestamp (a bare `published_before` date covers that
  whole day); `recency` is a relative window (`1d`, `7d`, `30d`, `365d`);
- `mode`: `realtime` for the fast modes (fast, instant); the deep modes are Keenable's default
  `pro` retrieval (a notice).
Publish-date filters leave out the pages whose date Keenable does not know, so a dated search
that finds nothing is sent once more without its dates (a second request of the same search),
and a notice says the results are undated.

The answer is `{results: [{title, url, snippet, description, published_at, acquired_at}]}`:
`snippet` is page text extracted for the query (the source's text; `description`, the page's
meta description, when it is empty), `published_at` the published date.

Errors: 401 a missing or invalid key, 403 a disabled key or suspended workspace (both auth), 402
out of credits (quota), 422 a refused request, 429 rate limited, its body `{"error": ...,
"retryAfter": seconds}` (a Retry-After header wins).

Where these facts come from (facts only; no code copied):
- the two endpoints, `X-API-Key`, `X-Keenable-Title` (required on the public one), the body
  fields `query`, `mode` (pro | realtime), `site`, `max_results` (default 10),
  `published_after`/`published_before` (YYYY-MM-DD, ISO 8601 or relative like "7d"; a bare
  before-date includes the whole day), `acquired_*`, `snippet_max_length`: Keenable's OpenAPI
  description of POST /v1/search/public (as republished by an MCP connector catalogue), the
  Python SDK (keenableai/keenable-sdk: keyless means the same path with `/public`; result fields;
  401/403 auth, 402 "insufficient credits", 429), and docs.keenable.ai (authentication: 401,
  403, 429);
- the upstream tool's provider module (oh-my-pi, providers/keenable.ts): one `site:` host to
  `site`, `after:`/`before:` to the date fields, recency as relative deltas, at most 50 results,
  the retry without dates when they empty the result, `x-request-id`;
- the 429 body `{"error", "retryAfter"}` and `X-RateLimit-Limit`/`-Reset` headers, and the 422
  body `{"error"}`: Keenable's own MCP server (keenableai/keenable-mcp-ts, src/api.ts);
- the public endpoint's 1,000 requests an hour per IP: Keenable's MCP readme and a connector's
  design notes (an older readme said 30 per 15 minutes).
Guessed: the most results Keenable returns (50 is upstream's bound), that `30d`/`365d` are read
as days (the documented example is `7d`), and the 401/403 body wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._core._notices import Notice, approximated, not_applied
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchParams
from .._core._wire import HttpRequest, HttpResponse
from ._base import (
    HttpProvider,
    Plan,
    Support,
    Unfiltered,
    as_list,
    as_str,
    count,
    make_source,
    recency_overridden,
    require_key,
)
from ._errors import ErrorEnvelope

if TYPE_CHECKING:
    from .._core._context import ProviderContext

__all__ = ["PROVIDER", "PUBLIC", "Keenable", "KeenablePublic"]

URL: Final = "https://api.keenable.ai/v1/search"
PUBLIC_URL: Final = "https://api.keenable.ai/v1/search/public"
#: The application name the public endpoint requires (and the keyed one records).
TITLE: Final = "websearch"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 50
#: `recency` as Keenable's relative windows (the same days as `recency_start`).
RECENCY: Final = {"day": "1d", "week": "7d", "month": "30d", "year": "365d"}
_FAST: Final = frozenset({"fast", "instant"})
_DEEP: Final = frozenset({"deep-lite", "deep", "deep-reasoning"})


class Keenable(HttpProvider):
    info = PROVIDERS["keenable"]
    supports: ClassVar[dict[str, Support]] = {
        "recency": "native",
        "limit": "native",
        "num_search_results": "native",
        "mode": "approximate",  # realtime for the fast modes; the deep modes are its default pro
        "recency_days": "native",
        "recency_hours": "native",
        "start_published_date": "native",
        "end_published_date": "native",
        "include_domains": "native",  # one host; several are enforced on the results (a notice)
        "exclude_domains": "approximate",  # enforced on the results (a notice)
    }
    envelope = ErrorEnvelope(
        message=(("error",), ("message",), ("detail",), ("error", "message"), ("detail", 0, "msg")),
        code=(),
        retry_after=(("retryAfter",),),
    )

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        key = self._key(ctx)
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        f = plan.filters
        body: dict[str, Any] = {"query": self.query_text(plan), "max_results": plan.limit}
        if f.mode in _FAST:
            body["mode"] = "realtime"
        if len(f.include_domains) == 1:
            body["site"] = f.include_domains[0]
        dates = _dates(plan)
        body.update(dates)
        plan.notices += _notices(plan, self.label)
        headers = {"Content-Type": "application/json", "Accept": "application/json", "X-Keenable-Title": TITLE}
        if key:
            headers["X-API-Key"] = key
        url = ctx.endpoint(self.id, URL if key else PUBLIC_URL)
        plan.request = HttpRequest("POST", url, headers=headers, json=body, secrets=(key,) if key else ())
        if dates:  # its date filters leave out undated pages: asked again without them if nothing is left
            undated = {name: value for name, value in body.items() if name not in dates}
            plan.unfiltered = Unfiltered(replace(plan.request, json=undated), _retry_notices(plan, dates))
        plan.state = bool(key)  # keyed, else the public endpoint
        return plan

    def _key(self, ctx: ProviderContext) -> str | None:
        """The key: none for the keyless row; maybe none when the keyed row is chosen explicitly
        (its public endpoint then); else required."""
        if self.info.keyless:
            return None
        if ctx.explicit and self.info.explicit_keyless:
            return ctx.secret(self.id, self.info.env_keys, self.info.credential_ids)
        return require_key(ctx, self.info)

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        data = self.answer_object(response, plan)
        sources = [
            make_source(url, r.get("title"), _text(r), r.get("published_at"), plan.now)
            for r in as_list(data.get("results"))
            if isinstance(r, dict) and (url := as_str(r.get("url")))
        ]
        return ProviderResult(
            sources=tuple(sources[: plan.limit]),
            request_id=response.headers.get("x-request-id") or None,
            auth_mode="api_key" if plan.state else "keyless",
        )


def _text(result: dict[str, Any]) -> object:
    """The page text Keenable extracted for the query, else the page's meta description."""
    snippet = as_str(result.get("snippet"))
    return snippet if snippet and snippet.strip() else result.get("description")


def _stamp(when: datetime, has_time: bool) -> str:
    """A date as Keenable takes it: YYYY-MM-DD, or an ISO 8601 UTC timestamp when it has a time."""
    return when.strftime("%Y-%m-%dT%H:%M:%SZ") if has_time else when.date().isoformat()


def _dates(plan: Plan) -> dict[str, str]:
    """`published_after` / `published_before`: the ladder's start (else `recency` as a relative
    window) and the end."""
    f, recency = plan.filters, plan.params.recency
    fields: dict[str, str] = {}
    if f.start is not None:
        # a relative rung is an instant: sent with its time (recency_days too, though it is whole days)
        fields["published_after"] = _stamp(f.start, f.start_has_time or f.start_source != "start_published_date")
    elif recency in RECENCY:
        fields["published_after"] = RECENCY[recency]
    if f.end is not None:
        fields["published_before"] = _stamp(f.end, f.end_has_time)
    return fields


def _notices(plan: Plan, label: str) -> list[Notice]:
    """What the plan approximated: `recency` under the ladder, a mode, domains enforced locally."""
    f, params = plan.filters, plan.params
    notices = recency_overridden(params, f)
    if f.mode in _DEEP:
        notices.append(approximated("mode", params.mode, "Keenable's pro retrieval", f"{label} has no deeper mode"))
    if len(f.include_domains) > 1:
        why = f"{label}'s site filter takes one domain"
        notices.append(approximated(*f.domains_given(params, "include_domains"), "a filter on the results", why))
    if f.exclude_domains:
        why = f"{label} has no domain exclusion"
        notices.append(approximated(*f.domains_given(params, "exclude_domains"), "a filter on the results", why))
    return notices


def _retry_notices(plan: Plan, dates: Mapping[str, str]) -> tuple[Notice, ...]:
    """The notices of a retry without dates: one per date parameter that shaped them."""
    f, params = plan.filters, plan.params
    sent = ", ".join(f"{name}={value}" for name, value in dates.items())
    why = (
        f"Keenable found nothing with {sent} (its date filters leave out undated pages), "
        "so these results come from a search without them"
    )
    given: list[tuple[str, object]] = []
    if f.start_source is not None:
        given.append(f.start_given(params))
    elif params.recency and "published_after" in dates:
        given.append(("recency", params.recency))
    if f.end is not None:
        given.append(f.end_given(params))
    return tuple(not_applied(name, value, why) for name, value in given)


PROVIDER: Final = Keenable()


class KeenablePublic(Keenable):
    """Keenable through POST /v1/search/public on its own row (`keenable_public`: after the other
    keyless engines, paced), whatever keys are configured."""

    info = PROVIDERS["keenable_public"]


PUBLIC: Final = KeenablePublic()
