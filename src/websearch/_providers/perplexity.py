"""Perplexity: Sonar chat completions with an API key, or the perplexity.ai ask endpoint with a session.

Auth methods, in this order; when one fails the next is tried (its failure becomes a notice):
1. `PERPLEXITY_COOKIES` (a browser Cookie header) and 2. a stored session token (`websearch auth set
   perplexity` fed `{"access_token": <__Secure-next-auth.session-token>}`) POST the bare query to
   https://www.perplexity.ai/rest/sse/perplexity_ask with the cookie and no Authorization. Its SSE
   events are snapshots, merged block by block until `final` or `COMPLETED`. Sessions cannot be
   refreshed: one within 5 minutes of its `expires_at` (or JWT `exp`) is skipped.
3. `PERPLEXITY_API_KEY` / `PPLX_API_KEY` / a stored key, then 4. `OPENROUTER_API_KEY` (model
   `perplexity/sonar-pro`), stream https://api.perplexity.ai/chat/completions: the answer is the
   deltas; id, model, citations, search_results, related_questions and usage come from whichever
   events carry them (the last non-empty value wins).
5. Anonymous ask, only when none of the above is configured, which the chain allows only when
   Perplexity is chosen explicitly. `limit` slices the sources; `num_search_results` is the API's
   search breadth. The Responses mode (`PI_PERPLEXITY_RESPONSES`) is not implemented.

The richer parameters, in the API modes only (the ask endpoint has no slot for them: notices say
so): the date window is `search_after_date_filter` / `search_before_date_filter` (`%m/%d/%Y`, in
place of `search_recency_filter`), domains are `search_domain_filter` (an allow list, else `-`
prefixed denials: the two cannot be mixed), and `category` publication / financial report picks
`search_mode` academic / sec.

The ask endpoint (request, snapshot merging, answer and sources) is in `_perplexity_ask`; parsing
the chat-completions stream, and the stream and error plumbing both modes share, in `_perplexity_api`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal

from .._availability import is_available
from .._filters import recency_start
from .._prompts import SYSTEM_PROMPT
from .._registry import PROVIDERS
from .._sse import SseEvent, aiter_sse
from .._types import SearchParams, SearchResponse
from .._wire import HttpRequest
from ..errors import MissingCredentialError, SearchProviderError
from ._legacy import Provider, Support, json_body, recency_overridden
from ._perplexity_api import AUTH_NAMES, ID, ChatStream, EventStream, http_error
from ._perplexity_ask import (
    APP_USER_AGENT,
    BROWSER_USER_AGENT,
    AskStream,
    build_ask_request,
    merge_snapshot,
    snapshot_answer,
    snapshot_sources,
    text_answer,
)

if TYPE_CHECKING:
    from .._context import ProviderContext
    from .._credentials import Credential

__all__ = [
    "APP_USER_AGENT",
    "BROWSER_USER_AGENT",
    "ID",
    "PROVIDER",
    "Auth",
    "Perplexity",
    "auth_methods",
    "build_ask_request",
    "build_chat_request",
    "chat_notices",
    "http_error",
    "merge_snapshot",
    "parse_events",
    "snapshot_answer",
    "snapshot_sources",
    "text_answer",
]

API_URL: Final = "https://api.perplexity.ai/chat/completions"
OPENROUTER_URL: Final = "https://openrouter.ai/api/v1/chat/completions"
COOKIES_ENV: Final = "PERPLEXITY_COOKIES"
ENV_KEYS: Final = ("PERPLEXITY_API_KEY", "PPLX_API_KEY")
OPENROUTER_ENV: Final = "OPENROUTER_API_KEY"
MODEL: Final = "sonar-pro"
DEFAULT_MAX_TOKENS: Final = 8192
DEFAULT_TEMPERATURE: Final = 0.2
DEFAULT_NUM_SEARCH_RESULTS: Final = 20
SESSION_MARGIN: Final = 300.0  # seconds before expiry at which a session is no longer used
#: `category` values with a Perplexity `search_mode` of their own.
SEARCH_MODES: Final = {"publication": "academic", "financial report": "sec"}

AuthKind = Literal["cookies", "session", "api_key", "openrouter", "anonymous"]


@dataclass(frozen=True, slots=True)
class Auth:
    """One way to reach Perplexity; the secret stays out of the repr."""

    kind: AuthKind
    secret: str = field(default="", repr=False)

    @property
    def secrets(self) -> tuple[str, ...]:
        """What the transport must redact: the secret, and each value of a cookie header."""
        values = [part.partition("=")[2].strip() for part in self.secret.split(";")] if self.kind == "cookies" else []
        return tuple(s for s in (self.secret, *values) if len(s) >= 8)


class Perplexity(Provider):
    id = ID
    supports: ClassVar[dict[str, Support]] = {
        **dict.fromkeys(("recency", "limit", "num_search_results", "max_tokens", "temperature"), "native"),
        **dict.fromkeys(("recency_days", "start_published_date", "end_published_date"), "native"),
        **dict.fromkeys(("include_domains", "exclude_domains"), "native"),
        "recency_hours": "approximate",
        "category": "approximate",
    }

    async def search(self, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        failed: list[tuple[Auth, SearchProviderError]] = []
        methods = auth_methods(ctx)
        expired = _session_expired(ctx.credentials.get(ID), ctx.clock.now())
        secrets = tuple(dict.fromkeys(s for m in methods for s in m.secrets))  # every method's, in every error
        for auth in methods:
            try:
                response = await self._attempt(auth, params, ctx, secrets)
            except SearchProviderError as exc:
                failed.append((auth, exc))
                continue
            notes = [
                f"Perplexity with {AUTH_NAMES[a.kind]} failed: {e.message}; fell through to the next auth method"
                for a, e in failed
            ]
            if expired:
                notes.insert(
                    0,
                    f"the stored Perplexity session has expired; searched with {AUTH_NAMES[auth.kind]} "
                    f"instead (log in again with `websearch auth set {ID}`)",
                )
            return replace(response, notices=(*notes, *response.notices))
        raise failed[-1][1]

    async def _attempt(
        self, auth: Auth, params: SearchParams, ctx: ProviderContext, secrets: tuple[str, ...]
    ) -> SearchResponse:
        chat = auth.kind in ("api_key", "openrouter")
        request = build_chat_request(params, ctx, auth) if chat else build_ask_request(params, ctx, auth)
        notices = chat_notices(params, ctx) if chat else []
        request = replace(request, secrets=secrets)
        stream = _open(auth, request, ctx.clock.now())
        async with ctx.stream(self.id, request) as (head, lines):
            if not head.ok or "text/event-stream" not in head.headers.get("content-type", ""):
                whole = replace(head, body=b"".join([line async for line in lines]))
                if not whole.ok:
                    raise http_error(whole, "Perplexity API error" if chat else "Perplexity ask API error")
                stream.take(json_body(self.id, whole))
                stream.done = True
            else:
                async for event in aiter_sse(lines):
                    if stream.feed(event):
                        break  # leaving the block closes the connection
        response = stream.result(params)
        return replace(response, notices=(*notices, *response.notices)) if notices else response


def auth_methods(ctx: ProviderContext) -> list[Auth]:
    """The configured methods in order; anonymous only when Perplexity is not configured at all."""
    methods: list[Auth] = []
    if cookies := ctx.env.get(COOKIES_ENV, "").strip():
        methods.append(Auth("cookies", cookies))
    stored = ctx.credentials.get(ID)
    expired = _session_expired(stored, ctx.clock.now())
    if stored is not None and stored.kind == "oauth" and stored.api_key and not expired:
        methods.append(Auth("session", stored.api_key))
    key = ctx.api_keys.get(ID) or next((ctx.env[name] for name in ENV_KEYS if ctx.env.get(name)), None)
    if not key and stored is not None and stored.kind == "api_key":
        key = stored.api_key
    if key:
        methods.append(Auth("api_key", key))
    if ctx.env.get(OPENROUTER_ENV):
        methods.append(Auth("openrouter", ctx.env[OPENROUTER_ENV]))
    if methods:
        return methods
    if not is_available(PROVIDERS[ID], ctx):  # so the chain can only have reached us by explicit choice
        return [Auth("anonymous")]
    ways = f"set {COOKIES_ENV}, {' or '.join(ENV_KEYS)}, or run `websearch auth set {ID}`"
    if expired:
        raise MissingCredentialError(ID, f"Perplexity session expired; log in again: {ways}")
    raise MissingCredentialError(ID, f"Perplexity needs a login or an API key: {ways}")


def _session_expired(stored: Credential | None, now: datetime) -> bool:
    """A stored login session past its `expires_at` (or JWT `exp`), or within the margin of it."""
    if stored is None or stored.kind != "oauth" or not stored.api_key:
        return False
    expiry = _number(stored.data.get("expires_at")) or _jwt_expiry(stored.api_key)
    return expiry is not None and expiry - SESSION_MARGIN <= now.timestamp()


# -- requests ----------------------------------------------------------------------------------


def build_chat_request(params: SearchParams, ctx: ProviderContext, auth: Auth) -> HttpRequest:
    """The streamed chat completion, for a Perplexity key or (prefixed model) an OpenRouter key."""
    openrouter = auth.kind == "openrouter"
    body: dict[str, Any] = {
        "model": f"perplexity/{MODEL}" if openrouter else MODEL,
        "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": params.query}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": params.max_tokens if params.max_tokens is not None else DEFAULT_MAX_TOKENS,
        "temperature": params.temperature if params.temperature is not None else DEFAULT_TEMPERATURE,
        "search_mode": "web",
        "num_search_results": params.num_search_results or DEFAULT_NUM_SEARCH_RESULTS,
        "web_search_options": {"search_type": "pro", "search_context_size": "high"},
        "enable_search_classifier": True,
        "reasoning_effort": "medium",
        "language_preference": "en",
        "return_related_questions": True,
    }
    body.update(_rich_fields(params, ctx))
    if params.recency and not any(k.endswith("_date_filter") for k in body):
        body["search_recency_filter"] = params.recency
    headers = {
        "Authorization": f"Bearer {auth.secret}",
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
    }
    url = ctx.endpoint(ID, OPENROUTER_URL if openrouter else API_URL)
    return HttpRequest("POST", url, headers=headers, json=body, secrets=auth.secrets)


def _date_window(params: SearchParams, ctx: ProviderContext) -> tuple[datetime | None, datetime | None]:
    """(after, before) when the ladder or an end date asks for one; `recency` starts a window that
    has only an end."""
    f = ctx.filters(params)
    start = f.start or (recency_start(params.recency, ctx.clock.now()) if f.end is not None else None)
    return start, f.end


def _rich_fields(params: SearchParams, ctx: ProviderContext) -> dict[str, Any]:
    """The chat body's fields for the richer parameters (none when they are not given)."""
    f = ctx.filters(params)
    fields: dict[str, Any] = {}
    after, before = _date_window(params, ctx)
    if after is not None:
        fields["search_after_date_filter"] = after.strftime("%m/%d/%Y")
    if before is not None:
        fields["search_before_date_filter"] = before.strftime("%m/%d/%Y")
    if f.include_domains:
        fields["search_domain_filter"] = list(f.include_domains)
    elif f.exclude_domains:
        fields["search_domain_filter"] = [f"-{domain}" for domain in f.exclude_domains]
    if f.category in SEARCH_MODES:
        fields["search_mode"] = SEARCH_MODES[f.category]
    return fields


def chat_notices(params: SearchParams, ctx: ProviderContext) -> list[str]:
    """How the API modes approximated the richer parameters."""
    f = ctx.filters(params)
    notices = recency_overridden(params, f)
    after, before = _date_window(params, ctx)
    whole = "applied as whole days: Perplexity's date filters take dates only"
    if after is not None and f.start_source is not None and f.start_has_time:
        notices.append(f"{f.start_source}={getattr(params, f.start_source)!r} {whole}")
    if before is not None and f.end_has_time:
        notices.append(f"end_published_date={params.end_published_date!r} {whole}")
    inside = [d for d in f.exclude_domains if any(d == a or d.endswith("." + a) for a in f.include_domains)]
    if f.include_domains and inside:
        notices.append(
            f"exclude_domains={params.exclude_domains!r} not applied to {', '.join(inside)}: Perplexity's "
            "search_domain_filter cannot mix allowed and denied domains (the others are outside the allowed ones)"
        )
    if f.category in SEARCH_MODES:
        notices.append(f"category={params.category!r} approximated as search_mode={SEARCH_MODES[f.category]}")
    elif f.category is not None:
        notices.append(
            f"category={params.category!r} not applied: Perplexity's search modes only cover publication "
            "(academic) and financial report (sec)"
        )
    return notices


# -- responses ---------------------------------------------------------------------------------


def parse_events(
    events: Iterable[SseEvent], params: SearchParams, now: datetime, auth: Auth = Auth("api_key"), request_id: str = ""
) -> SearchResponse:
    """A whole stream (e.g. `iter_sse(body)`) as the provider would parse it, for tests."""
    stream = _open(auth, HttpRequest("POST", "", headers={"X-Request-ID": request_id}, json={"model": MODEL}), now)
    for event in events:
        if stream.feed(event):
            break
    return stream.result(params)


def _open(auth: Auth, request: HttpRequest, now: datetime) -> EventStream:
    return (ChatStream if auth.kind in ("api_key", "openrouter") else AskStream)(auth, request, now)


# -- helpers -----------------------------------------------------------------------------------


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
