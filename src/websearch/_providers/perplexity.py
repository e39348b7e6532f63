"""Perplexity: Sonar chat completions with an API key, or the perplexity.ai ask endpoint with a session.

Auth methods, in this order; `plan` builds each one's request, and `search` tries them until one
answers (each failure becomes a `partial` notice of the result):
1. `PERPLEXITY_COOKIES` (a browser Cookie header) and 2. a stored session token (`websearch auth set
   perplexity` fed `{"access_token": <__Secure-next-auth.session-token>}`) POST the bare query to
   https://www.perplexity.ai/rest/sse/perplexity_ask with the cookie and no Authorization. Its SSE
   events are snapshots, merged block by block until `final` or `COMPLETED`. Sessions cannot be
   refreshed: one within 5 minutes of its `expires_at` (or JWT `exp`) is skipped, with a notice.
3. `PERPLEXITY_API_KEY` / `PPLX_API_KEY` / a stored key, then 4. `OPENROUTER_API_KEY` (model
   `perplexity/sonar-pro`), stream https://api.perplexity.ai/chat/completions: the answer is the
   deltas; id, model, citations, search_results, related_questions and usage come from whichever
   events carry them (the last non-empty value wins).
5. Anonymous ask, only when none of the above is configured and Perplexity was chosen explicitly
   (`ctx.explicit`). `limit` slices the sources; `num_search_results` is the API's search breadth.
   The Responses mode (`PI_PERPLEXITY_RESPONSES`) is not implemented.

The richer parameters, in the API modes only (the ask endpoint has no slot for them: notices say
so): the date window is `search_after_date_filter` / `search_before_date_filter` (`%m/%d/%Y`, in
place of `search_recency_filter`), domains are `search_domain_filter` (an allow list, else `-`
prefixed denials: the two cannot be mixed), and `category` publication / financial report picks
`search_mode` academic / sec, `country` is `web_search_options.user_location.country` and `language`
`search_language_filter` (a list of ISO 639-1 codes). Each method's notices are decided in `plan`;
the result carries the serving method's.

Errors read `Perplexity API error` (chat completions) or `Perplexity ask API error` (the ask
endpoint), each mode's envelope being its stream's (`ChatStream.envelope`, `AskStream.envelope`).
The ask endpoint (request, snapshot merging, answer and sources) is in `_perplexity_ask`; parsing
the chat-completions stream, and the stream and error plumbing both modes share, in `_perplexity_api`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._core._filters import recency_start
from .._core._notices import Notice, approximated, dropped, not_applied, partial
from .._core._types import ProviderResult, SearchParams
from .._core._wire import HttpRequest
from .._http._sse import SseEvent, aiter_sse
from ..errors import MissingCredentialError, SearchProviderError
from ._base import Plan, Provider, Support, honours, recency_overridden
from ._perplexity_api import AUTH_NAMES, CHAT_ENVELOPE, ID, INFO, ChatStream, EventStream
from ._perplexity_ask import (
    APP_USER_AGENT,
    BROWSER_USER_AGENT,
    AskStream,
    ask_notices,
    build_ask_request,
    merge_snapshot,
    snapshot_answer,
    snapshot_sources,
    text_answer,
)
from ._perplexity_auth import Auth
from ._prompts import SYSTEM_PROMPT

if TYPE_CHECKING:
    from .._core._context import ProviderContext
    from .._core._credentials import Credential

__all__ = [
    "APP_USER_AGENT",
    "BROWSER_USER_AGENT",
    "ID",
    "PROVIDER",
    "Auth",
    "Method",
    "Methods",
    "Perplexity",
    "ask_notices",
    "auth_methods",
    "build_ask_request",
    "build_chat_request",
    "chat_notices",
    "merge_snapshot",
    "parse_events",
    "snapshot_answer",
    "snapshot_sources",
    "text_answer",
]

API_URL: Final = "https://api.perplexity.ai/chat/completions"
OPENROUTER_URL: Final = "https://openrouter.ai/api/v1/chat/completions"
#: The registry row lists the cookie header's variable first, then the API key's.
COOKIES_ENV: Final = INFO.env_keys[0]
KEY_ENVS: Final = INFO.env_keys[1:]
#: Not an availability key: OpenRouter alone admits Perplexity only when chosen explicitly.
OPENROUTER_ENV: Final = "OPENROUTER_API_KEY"
MODEL: Final = "sonar-pro"
DEFAULT_MAX_TOKENS: Final = 8192
DEFAULT_TEMPERATURE: Final = 0.2
DEFAULT_NUM_SEARCH_RESULTS: Final = 20
SESSION_MARGIN: Final = 300.0  # seconds before expiry at which a session is no longer used
#: `category` values with a Perplexity `search_mode` of their own.
SEARCH_MODES: Final = {"publication": "academic", "financial report": "sec"}
WHOLE_DAYS: Final = "Perplexity's date filters take dates only"
_KEY_AUTH: Final = Auth("api_key")  # `parse_events`' default


@dataclass(frozen=True, slots=True)
class Method:
    """One auth method as planned: its request and the notices of its mode."""

    auth: Auth
    request: HttpRequest
    notices: tuple[Notice, ...] = ()


@dataclass(frozen=True, slots=True)
class Methods:
    """`plan.state`: the methods to try in order; whether a stored session was skipped as expired."""

    methods: tuple[Method, ...]
    session_expired: bool = False


class Perplexity(Provider):
    info = INFO
    #: Query operators: Domains and dates go in its filter fields; the other operators stay in the question as
    #: instructions.
    operators = honours(approximate="filetype intitle inurl")
    supports: ClassVar[dict[str, Support]] = {
        **dict.fromkeys(("recency", "limit", "num_search_results", "max_tokens", "temperature"), "native"),
        **dict.fromkeys(("recency_days", "start_published_date", "end_published_date"), "native"),
        **dict.fromkeys(("include_domains", "exclude_domains"), "native"),
        "recency_hours": "approximate",
        "category": "approximate",
        **dict.fromkeys(("country", "language"), "native"),  # the API modes' user_location and language filter
    }
    envelope = CHAT_ENVELOPE  # the ask endpoint's is AskStream.envelope

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        plan = self.new_plan(params, ctx, limit=params.limit)  # `limit` only slices the sources
        auths, expired = auth_methods(ctx, plan.now)
        secrets = tuple(dict.fromkeys(s for a in auths for s in a.secrets))  # every method's, in every error
        chat = tuple(chat_notices(plan))  # the same for both key methods
        methods: list[Method] = []
        for auth in auths:
            if auth.chat:
                request, notices = build_chat_request(plan, ctx, auth), chat
            else:
                request, notices = build_ask_request(params, ctx, auth), ask_notices(params, auth)
            methods.append(Method(auth, replace(request, secrets=secrets), notices))
        plan.state = Methods(tuple(methods), expired)
        return plan

    async def search(self, plan: Plan, ctx: ProviderContext) -> ProviderResult:
        state: Methods = plan.state
        failed: list[Notice] = []
        for method in state.methods:
            try:
                result = await self._search_with(method, plan, ctx)
            except SearchProviderError as exc:
                if method is state.methods[-1]:
                    raise  # the last method's error is the search's
                failed.append(_fell_through(method.auth, exc))
                continue
            notices = [*failed, *method.notices, *result.notices]
            if state.session_expired:
                notices.insert(0, _expired_notice(method.auth))
            return replace(result, notices=tuple(notices))
        raise AssertionError("plan() gives at least one auth method")

    async def _search_with(self, method: Method, plan: Plan, ctx: ProviderContext) -> ProviderResult:
        stream = _open(method.auth, method.request, plan)
        async with ctx.stream(self.id, method.request) as (head, lines):
            if head.ok and "text/event-stream" in head.headers.get("content-type", ""):
                async for event in aiter_sse(lines):
                    if stream.feed(event):
                        break  # leaving the block closes the connection
            else:
                whole = replace(head, body=b"".join([line async for line in lines]))
                if not whole.ok:
                    raise stream.error(whole)
                stream.take(self.json_object(whole))
                stream.done = True
        return stream.result()


def auth_methods(ctx: ProviderContext, now: datetime) -> tuple[list[Auth], bool]:
    """The configured methods in order, and whether a stored session was skipped as expired.

    With none, anonymous when Perplexity was chosen explicitly (`ctx.explicit`), else
    MissingCredentialError (also when the only login is an expired session).
    """
    methods: list[Auth] = []
    if cookies := ctx.env.get(COOKIES_ENV, "").strip():
        methods.append(Auth("cookies", cookies))
    stored = ctx.credentials.get(ID)
    expired = _session_expired(stored, now)
    if stored is not None and stored.kind == "oauth" and stored.api_key and not expired:
        methods.append(Auth("session", stored.api_key))
    key = ctx.api_keys.get(ID) or next((ctx.env[name] for name in KEY_ENVS if ctx.env.get(name)), None)
    if not key and stored is not None and stored.kind == "api_key":
        key = stored.api_key
    if key:
        methods.append(Auth("api_key", key))
    if ctx.env.get(OPENROUTER_ENV):
        methods.append(Auth("openrouter", ctx.env[OPENROUTER_ENV]))
    if methods:
        return methods, expired
    ways = f"set {COOKIES_ENV}, {' or '.join(KEY_ENVS)}, or run `websearch auth set {ID}`"
    if expired:
        raise MissingCredentialError(ID, f"Perplexity session expired; log in again: {ways}")
    if ctx.explicit:
        return [Auth("anonymous")], False
    raise MissingCredentialError(ID, f"Perplexity needs a login or an API key: {ways}")


def _session_expired(stored: Credential | None, now: datetime) -> bool:
    """A stored login session past its `expires_at` (or JWT `exp`), or within the margin of it."""
    if stored is None or stored.kind != "oauth" or not stored.api_key:
        return False
    expiry = _number(stored.data.get("expires_at")) or _jwt_expiry(stored.api_key)
    return expiry is not None and expiry - SESSION_MARGIN <= now.timestamp()


def _fell_through(auth: Auth, error: SearchProviderError) -> Notice:
    name = AUTH_NAMES[auth.kind]
    return partial(f"Perplexity with {name} failed; fell through to the next auth method: {error.message}")


def _expired_notice(served: Auth) -> Notice:
    return partial(
        f"the stored Perplexity session has expired; searched with {AUTH_NAMES[served.kind]} instead "
        f"(log in again with `websearch auth set {ID}`)"
    )


# -- requests ----------------------------------------------------------------------------------


def build_chat_request(plan: Plan, ctx: ProviderContext, auth: Auth) -> HttpRequest:
    """The streamed chat completion, for a Perplexity key or (prefixed model) an OpenRouter key."""
    params = plan.params
    openrouter = auth.kind == "openrouter"
    body: dict[str, Any] = {
        "model": f"perplexity/{MODEL}" if openrouter else MODEL,
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": Perplexity.query_text(plan)},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": params.max_tokens if params.max_tokens is not None else DEFAULT_MAX_TOKENS,
        "temperature": params.temperature if params.temperature is not None else DEFAULT_TEMPERATURE,
        "search_mode": "web",
        "num_search_results": params.num_search_results or DEFAULT_NUM_SEARCH_RESULTS,
        "web_search_options": dict(_SEARCH_OPTIONS),
        "enable_search_classifier": True,
        "reasoning_effort": "medium",
        "language_preference": "en",
        "return_related_questions": True,
    }
    body.update(_rich_fields(plan))
    if params.recency and not any(k.endswith("_date_filter") for k in body):
        body["search_recency_filter"] = params.recency
    headers = {
        "Authorization": f"Bearer {auth.secret}",
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
    }
    url = ctx.endpoint(ID, OPENROUTER_URL if openrouter else API_URL)
    return HttpRequest("POST", url, headers=headers, json=body, secrets=auth.secrets)


_SEARCH_OPTIONS: Final = {"search_type": "pro", "search_context_size": "high"}


def _date_window(plan: Plan) -> tuple[datetime | None, datetime | None]:
    """(after, before) when the ladder or an end date asks for one; `recency` starts a window that
    has only an end."""
    f = plan.filters
    start = f.start or (recency_start(plan.params.recency, plan.now) if f.end is not None else None)
    return start, f.end


def _rich_fields(plan: Plan) -> dict[str, Any]:
    """The chat body's fields for the richer parameters (none when they are not given)."""
    f = plan.filters
    fields: dict[str, Any] = {}
    after, before = _date_window(plan)
    if after is not None:
        fields["search_after_date_filter"] = _mdy(after)
    if before is not None:
        fields["search_before_date_filter"] = _mdy(before)
    if f.include_domains:
        fields["search_domain_filter"] = list(f.include_domains)
    elif f.exclude_domains:
        fields["search_domain_filter"] = [f"-{domain}" for domain in f.exclude_domains]
    if f.category in SEARCH_MODES:
        fields["search_mode"] = SEARCH_MODES[f.category]
    if plan.params.country:
        location = {"country": plan.params.country}  # ISO 3166-1 alpha-2
        fields["web_search_options"] = {**_SEARCH_OPTIONS, "user_location": location}
    if plan.params.language:
        fields["search_language_filter"] = [plan.params.language]  # ISO 639-1 codes
    return fields


def chat_notices(plan: Plan) -> list[Notice]:
    """How the API modes approximated the richer parameters."""
    f, params = plan.filters, plan.params
    notices = recency_overridden(params, f)
    after, before = _date_window(plan)
    if after is not None and f.start_source is not None and f.start_has_time:
        how = f"whole days (search_after_date_filter={_mdy(after)})"
        notices.append(approximated(*f.start_given(params), how, WHOLE_DAYS))
    if before is not None and f.end_has_time:
        how = f"whole days (search_before_date_filter={_mdy(before)})"
        notices.append(approximated(*f.end_given(params), how, WHOLE_DAYS))
    inside = [d for d in f.exclude_domains if any(d == a or d.endswith("." + a) for a in f.include_domains)]
    if f.include_domains and inside:
        why = (
            "Perplexity's search_domain_filter cannot mix allowed and denied domains, so only the allow list is "
            f"sent, which does not exclude {', '.join(inside)}"
        )
        notices.append(dropped(*f.domains_given(params, "exclude_domains"), why))
    if f.category in SEARCH_MODES:
        how = f"search_mode={SEARCH_MODES[f.category]}"
        notices.append(approximated("category", params.category, how, "Perplexity has search modes, not categories"))
    elif f.category is not None:
        why = "Perplexity's search modes only cover publication (academic) and financial report (sec)"
        notices.append(not_applied("category", params.category, why))
    return notices


# -- responses ---------------------------------------------------------------------------------


def parse_events(
    events: Iterable[SseEvent], plan: Plan, auth: Auth = _KEY_AUTH, request_id: str = ""
) -> ProviderResult:
    """A whole stream (e.g. `iter_sse(body)`) as the provider would parse it, for tests."""
    request = HttpRequest("POST", "", headers={"X-Request-ID": request_id}, json={"model": MODEL})
    stream = _open(auth, request, plan)
    for event in events:
        if stream.feed(event):
            break
    return stream.result()


def _open(auth: Auth, request: HttpRequest, plan: Plan) -> EventStream:
    return (ChatStream if auth.chat else AskStream)(auth, request, plan)


# -- helpers -----------------------------------------------------------------------------------


def _mdy(when: datetime) -> str:
    """A date as Perplexity's date filters take it: `%m/%d/%Y`."""
    return when.strftime("%m/%d/%Y")


def _jwt_expiry(token: str) -> float | None:
    """The `exp` claim of a JWT session token (unverified), or None."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None
    return _number(claims.get("exp")) if isinstance(claims, dict) else None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


PROVIDER: Final = Perplexity()
