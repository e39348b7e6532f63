"""Gemini: Google Search grounding, through the Developer API (key) or Cloud Code (OAuth login).

Credentials, in order: a key passed to the client; an OAuth login stored under `gemini`,
`google-gemini-cli` or `google-antigravity`; `GEMINI_API_KEY`; a stored API key. `plan` picks one
(and with it the API), the model, the body, and for a key the whole request.

* Developer API: POST https://generativelanguage.googleapis.com/v1beta/models/<model>:streamGenerateContent?alt=sse
  with `x-goog-api-key`. The body is `contents`, `tools: [{googleSearch: {}}]`, `systemInstruction`
  and, only when max_tokens or temperature is given, `generationConfig`.
* Cloud Code (OAuth): the same body wrapped for a Gemini CLI or Antigravity login, with its
  endpoints, token refresh and project lookup, lives in `_gemini_oauth`; `search` builds those
  requests once the token and project are known. A refused login (`AuthenticationFailed`) forces
  one refresh and one more try.

Errors are Google's envelope, `{"error": {"code", "message", "status", "details": [...]}}` (Cloud
Code may wrap it in a list). The code is an ErrorInfo `reason` when a detail has one, else the
`status`: `API_KEY_INVALID` (the Developer API's 400 for a bad key), `UNAUTHENTICATED` and
`PERMISSION_DENIED` are a refused login; `RESOURCE_EXHAUSTED` is a rate limit (Google sends it for
per-minute limits and spent quotas alike) unless a reason says `QUOTA_EXHAUSTED` or
`INSUFFICIENT_G1_CREDITS_BALANCE`. The server's delay hints (`retry-after-ms`, `Retry-After`,
RetryInfo `retryDelay`, "Please retry in 12s") are read against the plan's instant; retries
(rate limits, 408, 5xx, failed connections, inside a 5-minute budget) live in `_gemini_retry`.

The stream has no terminator: it is complete once a candidate carries `finishReason`. Chunks (wrapped
in `response` by Cloud Code) add answer text, grounding chunks (sources, deduped by URI, kept as
Google's redirect URLs), supports (citations, not deduped), `webSearchQueries`, usage and the model.
Recency is not sent; `limit` / `num_search_results` cut the sources locally. The richer date
parameters are the search tool's `timeRangeFilter` {startTime, endTime} (the ladder's start, up to
the end date or the plan's instant), which only the Developer API takes: through Cloud Code a
notice says so.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._core._notices import Notice, not_applied
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchCitation, SearchParams, SearchSource, SearchUsage
from .._core._wire import HttpRequest, HttpResponse, loads
from .._http._oauth import OAuthToken, oauth_token
from .._http._sse import SseEvent, aiter_sse
from ..errors import (
    AuthenticationFailed,
    InvalidResponse,
    MissingCredentialError,
    ProviderConnectionError,
    ProviderTimeoutError,
    QuotaExhausted,
    RateLimited,
    RequestRejected,
    SearchProviderError,
    UpstreamUnavailable,
)
from ._base import Plan, Provider, Support, as_dict, as_list, as_str, count, honours, redact_detail
from ._errors import ErrorEnvelope, dig
from ._gemini_oauth import (
    ANTIGRAVITY_CLIENT,
    ANTIGRAVITY_ENDPOINTS,
    ANTIGRAVITY_SYSTEM,
    ANTIGRAVITY_USER_AGENT,
    CLIENT_METADATA,
    GEMINI_CLI_CLIENT,
    GEMINI_CLI_USER_AGENT,
    AuthKind,
    GeminiAuth,
    cloud_body,
    cloud_requests,
    cloud_route,
    discover_project,
    import_credentials,
    refreshed,
    refresher,
)
from ._gemini_retry import Outcome, envelope_hint, retry_hint, send_with_retries
from ._prompts import SYSTEM_PROMPT

if TYPE_CHECKING:
    from .._core._context import ProviderContext

__all__ = [
    "ANTIGRAVITY_CLIENT",
    "ANTIGRAVITY_ENDPOINTS",
    "ANTIGRAVITY_SYSTEM",
    "ANTIGRAVITY_USER_AGENT",
    "CLIENT_METADATA",
    "GEMINI_CLI_CLIENT",
    "GEMINI_CLI_USER_AGENT",
    "NO_CREDENTIALS",
    "PROVIDER",
    "Gemini",
    "GeminiAuth",
    "GeminiStream",
    "Route",
    "import_credentials",
    "request_body",
    "retry_hint",
]

DEVELOPER_URL: Final = "https://generativelanguage.googleapis.com/v1beta/models/{model}:streamGenerateContent?alt=sse"
DEFAULT_MODEL: Final = "gemini-2.5-flash"
NO_CREDENTIALS: Final = (
    f"Gemini needs a login or an API key: set {' or '.join(PROVIDERS['gemini'].env_keys)}, run "
    "`websearch auth set gemini` (a key, or an OAuth JSON with project_id), or `websearch auth import gemini` "
    "to reuse the Gemini CLI's Google login"
)
DATED: Final = ("recency_days", "recency_hours", "start_published_date", "end_published_date")


def _google_error(data: Any) -> tuple[str | None, str | None]:
    """(code, message) of Google's envelope: the first ErrorInfo `reason`, else the `status`."""
    error = as_dict(dig(data, ("error",)))
    reasons = (as_str(as_dict(detail).get("reason")) for detail in as_list(error.get("details")))
    code = next((r for r in reasons if r), None) or as_str(error.get("status"))
    message = as_str(error.get("message"))
    return code, message.strip() if message else None


@dataclass(frozen=True, slots=True)
class Route:
    """How `plan` chose to reach Gemini: a key (`plan.request` is the whole Developer API request)
    or a stored login (Cloud Code, whose requests need the token and project first)."""

    kind: AuthKind
    model: str
    body: dict[str, Any] = field(repr=False)  # the Developer API body; Cloud Code wraps it
    login: str | None = None  # the stored login's credential id
    endpoints: tuple[str, ...] = ()  # Cloud Code's, in the order they are tried
    request_id: str = ""

    @property
    def api(self) -> str:
        return "Developer API" if self.kind == "api_key" else "Cloud Code API"


class Gemini(Provider):
    info = PROVIDERS["gemini"]
    #: Query operators: No domain filter: `site:` and the others stay in the question as instructions; dates are
    #: `timeRangeFilter`.
    operators = honours(approximate="site -site filetype intitle inurl")
    supports: ClassVar[dict[str, Support]] = {
        "limit": "native",
        "num_search_results": "native",
        "max_tokens": "native",
        "temperature": "native",
        "recency_days": "native",
        "recency_hours": "native",
        "start_published_date": "native",
        "end_published_date": "native",
    }
    envelope = ErrorEnvelope(
        codes={
            "API_KEY_INVALID": AuthenticationFailed,
            "UNAUTHENTICATED": AuthenticationFailed,
            "PERMISSION_DENIED": AuthenticationFailed,
            "RESOURCE_EXHAUSTED": RateLimited,
            "RATE_LIMIT_EXCEEDED": RateLimited,
            "MODEL_CAPACITY_EXHAUSTED": UpstreamUnavailable,
            "QUOTA_EXHAUSTED": QuotaExhausted,
            "INSUFFICIENT_G1_CREDITS_BALANCE": QuotaExhausted,
        },
        prefix="Gemini Developer API error",
        auth_detail=True,
        retry_hint=envelope_hint,
        read=_google_error,
    )
    cloud_envelope: ClassVar[ErrorEnvelope] = dataclasses.replace(envelope, prefix="Gemini Cloud Code API error")

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, None, None, self.label)  # a cut of what grounding found
        kind, login, key = self._credential(ctx)
        model = search_model(ctx)
        body = request_body(params, kind, time_range(plan) if kind == "api_key" else None, self.query_text(plan))
        plan.notices += time_range_notices(plan, kind)
        if key is not None:
            url = ctx.endpoint(self.id, DEVELOPER_URL.format(model=model))
            headers = {"Content-Type": "application/json", "Accept": "text/event-stream", "x-goog-api-key": key}
            plan.request = HttpRequest("POST", url, headers=headers, json=body, secrets=(key,))
            plan.state = Route(kind, model, body)
        else:
            endpoints, request_id = cloud_route(kind, plan.now)
            plan.state = Route(kind, model, body, login, endpoints, request_id)
        return plan

    async def search(self, plan: Plan, ctx: ProviderContext) -> ProviderResult:
        if plan.request is not None:  # a key: one Developer API request
            return await self._send(plan, ctx, [plan.request])
        auth = await self.authenticate(plan, ctx)
        try:
            return await self._send(plan, ctx, self.cloud_requests(plan, ctx, auth))
        except AuthenticationFailed:  # a refused login: refresh it once and try again
            if auth.token is None or not auth.token.refresh_token:
                raise
        auth = await refreshed(ctx, auth)
        return await self._send(plan, ctx, self.cloud_requests(plan, ctx, auth))

    def error(
        self,
        response: HttpResponse,
        plan: Plan,
        *,
        status: int | None = None,
        body: Any = None,
        envelope: ErrorEnvelope | None = None,
    ) -> SearchProviderError:
        """The envelope of the API the plan uses (its messages name it)."""
        cloud = isinstance(plan.state, Route) and plan.state.kind != "api_key"
        envelope = envelope or (self.cloud_envelope if cloud else self.envelope)
        return super().error(response, plan, status=status, body=body, envelope=envelope)

    def parse(self, events: Iterable[SseEvent], plan: Plan) -> ProviderResult:
        """A whole stream's events as the result (pure; `iter_sse(text)` gives the events)."""
        stream = GeminiStream(plan, HttpResponse(200, {}, b""), lambda r: self.error(r, plan))
        for event in events:
            stream.feed(event)
        return stream.result()

    def import_login(self, home: Path) -> OAuthToken:
        """The Gemini CLI's Google login under `home`, for `WebSearch.import_login`."""
        return import_credentials(home)

    async def authenticate(self, plan: Plan, ctx: ProviderContext) -> GeminiAuth:
        """The planned login's token (refreshed when it expires) and its Cloud Code project."""
        route: Route = plan.state
        assert route.login is not None and route.kind != "api_key"
        token = await oauth_token(ctx, self.id, refresher(ctx, route.kind), credential_id=route.login)
        project = token.project_id
        if not project and route.kind == "gemini-cli":
            project = await discover_project(ctx, token, route.login, lambda r: self.error(r, plan))
        if not project:
            raise MissingCredentialError(self.id, _no_project(route.login))
        return GeminiAuth(route.kind, token.access_token, project, route.login, token)

    def _credential(self, ctx: ProviderContext) -> tuple[AuthKind, str | None, str | None]:
        """(kind, stored login, key): an explicit key, else the first stored login, else the
        environment's key, else a stored key."""
        explicit = ctx.api_keys.get(self.id)
        if explicit:
            return "api_key", None, explicit
        for cred_id in self.info.credential_ids:
            cred = ctx.credentials.get(cred_id)
            if cred is None or cred.kind != "oauth":
                continue
            antigravity = cred_id == "google-antigravity" or cred.data.get("client") == "antigravity"
            if antigravity and not cred.data.get("project_id"):  # only a Gemini CLI login can look it up
                raise MissingCredentialError(self.id, _no_project(cred_id))
            return ("antigravity" if antigravity else "gemini-cli"), cred_id, None
        key = ctx.secret(self.id, self.info.env_keys, self.info.credential_ids)
        if not key:
            raise MissingCredentialError(self.id, NO_CREDENTIALS)
        return "api_key", None, key

    def cloud_requests(self, plan: Plan, ctx: ProviderContext, auth: GeminiAuth) -> list[HttpRequest]:
        """The planned Cloud Code requests for `auth`'s token and project, one per endpoint, in order."""
        route: Route = plan.state
        body = cloud_body(route.body, auth, route.model, route.request_id)
        return cloud_requests(ctx, auth, route.endpoints, body)

    async def _send(self, plan: Plan, ctx: ProviderContext, requests: list[HttpRequest]) -> ProviderResult:
        return await send_with_retries(ctx, requests, lambda request: self._exchange(request, plan, ctx))

    async def _exchange(self, request: HttpRequest, plan: Plan, ctx: ProviderContext) -> Outcome:
        """One request: the answer, the error of a failed response, or the connection failure that
        left no response. Failures after a 2xx head (an error event, a cut stream) raise: they are
        never retried."""
        opened = False
        try:
            async with ctx.stream(self.id, request) as (head, lines):
                opened = True
                if not head.ok:
                    return self.error(dataclasses.replace(head, body=b"".join([line async for line in lines])), plan)
                stream = GeminiStream(plan, head, lambda r: self.error(r, plan))
                async for event in aiter_sse(lines):
                    stream.feed(event)
                return stream.result()
        except (ProviderConnectionError, ProviderTimeoutError) as exc:
            if opened:
                raise
            return exc


def _no_project(cred_id: str) -> str:
    return f"the Gemini login `{cred_id}` has no project_id; store it again with one: `websearch auth set gemini`"


# -- the request ------------------------------------------------------------------------------


def search_model(ctx: ProviderContext) -> str:
    """`GEMINI_SEARCH_MODEL`, else the setting `providers.webSearchGeminiModel`, else the default."""
    model = (ctx.settings.get_str("providers.webSearchGeminiModel") or "").strip().removeprefix("models/")
    return model or DEFAULT_MODEL


def time_range(plan: Plan) -> dict[str, str] | None:
    """`timeRangeFilter` for the ladder's start (RFC 3339, UTC) up to the end date, else the plan's instant."""
    f = plan.filters
    if f.start is None:
        return None
    end = f.end or plan.now
    return {"startTime": f"{f.start:%Y-%m-%dT%H:%M:%SZ}", "endTime": f"{end.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}"}


def time_range_notices(plan: Plan, kind: AuthKind) -> list[Notice]:
    """The date parameters Gemini could not apply: all of them through Cloud Code; an end alone."""
    given = plan.params.given()
    if kind != "api_key":
        why = "Gemini through Cloud Code (OAuth) has no time range filter"
        return [not_applied(name, given[name], why) for name in DATED if name in given]
    if plan.filters.start is None and plan.filters.end is not None:
        why = "Gemini's time range needs a start (give a start date, recency_days or recency_hours)"
        return [not_applied(*plan.filters.end_given(plan.params), why)]
    return []


def request_body(
    params: SearchParams, kind: AuthKind, window: dict[str, str] | None = None, query: str | None = None
) -> dict[str, Any]:
    """The Developer API body, with `window` as the search tool's `timeRangeFilter` (Cloud Code
    wraps this body with `cloud_body`)."""
    system: dict[str, Any] = {"parts": [{"text": SYSTEM_PROMPT}]}
    if kind == "antigravity":
        system = {"role": "user", "parts": [{"text": ANTIGRAVITY_SYSTEM}, {"text": SYSTEM_PROMPT}]}
    search: dict[str, Any] = {"timeRangeFilter": window} if window else {}
    body: dict[str, Any] = {
        "contents": [{"role": "user", "parts": [{"text": params.query if query is None else query}]}],
        "tools": [{"googleSearch": search}],
        "systemInstruction": system,
    }
    config: dict[str, float] = {}
    if params.max_tokens is not None:
        config["maxOutputTokens"] = params.max_tokens
    if params.temperature is not None:
        config["temperature"] = params.temperature
    if config:
        body["generationConfig"] = config
    return body


# -- the stream -------------------------------------------------------------------------------


class GeminiStream:
    """The answer as the chunks of one SSE stream build it; `result` checks that it finished.

    `head` is the stream's 2xx head and `error` the provider's mapping: an error event becomes
    the head with that event as its body and the event's `code` as its status.
    """

    def __init__(self, plan: Plan, head: HttpResponse, error: Callable[[HttpResponse], SearchProviderError]) -> None:
        self.plan, self.head, self.error = plan, head, error
        route: Route = plan.state
        self.api, self.model = route.api, route.model
        self.events = self.chunks = 0
        self.finished = False
        self.text: list[str] = []
        self.sources: dict[str, SearchSource] = {}
        self.citations: list[SearchCitation] = []
        self.queries: list[str] = []
        self.usage: SearchUsage | None = None
        self.request_id: str | None = None

    def feed(self, event: SseEvent) -> None:
        self.events += 1
        try:
            chunk = loads(event.data)
        except ValueError:
            return  # as upstream: a line that is not JSON is skipped
        if not isinstance(chunk, dict):
            return
        self.chunks += 1
        data = chunk["response"] if isinstance(chunk.get("response"), dict) else chunk
        error = data.get("error", chunk.get("error"))
        if isinstance(error, dict):
            code = error.get("code")
            status = code if isinstance(code, int) and not isinstance(code, bool) else 500
            raise self.error(dataclasses.replace(self.head, status=status, body=json.dumps({"error": error}).encode()))
        blocked = as_dict(data.get("promptFeedback")).get("blockReason")
        if blocked:
            reason = redact_detail(self.head, str(blocked), 80)
            raise RequestRejected("gemini", f"Gemini blocked the query (blockReason {reason})", 400)
        self.request_id = as_str(data.get("responseId")) or as_str(chunk.get("traceId")) or self.request_id
        self.model = as_str(data.get("modelVersion")) or self.model
        candidates = data.get("candidates")
        candidate = as_dict(candidates[0]) if isinstance(candidates, list) and candidates else {}
        self.finished = self.finished or bool(candidate.get("finishReason"))
        for part in as_list(as_dict(candidate.get("content")).get("parts")):
            if isinstance(part, dict) and as_str(part.get("text")) and not part.get("thought"):
                self.text.append(part["text"])
        meta = as_dict(candidate.get("groundingMetadata"))
        webs = [as_dict(as_dict(c).get("web")) for c in as_list(meta.get("groundingChunks"))]
        for web in webs:
            url = as_str(web.get("uri"))
            if url and url not in self.sources:
                self.sources[url] = SearchSource(title=as_str(web.get("title")) or url, url=url)
        for support in as_list(meta.get("groundingSupports")):
            cited = as_str(as_dict(as_dict(support).get("segment")).get("text"))
            for i in as_list(as_dict(support).get("groundingChunkIndices")):
                url = as_str(webs[i].get("uri")) if isinstance(i, int) and 0 <= i < len(webs) else None
                if url:
                    self.citations.append(SearchCitation(url, as_str(webs[i].get("title")) or url, cited))
        for query in as_list(meta.get("webSearchQueries")):
            if as_str(query) and query not in self.queries:
                self.queries.append(query)
        usage = data.get("usageMetadata")
        if isinstance(usage, dict):
            counts = [usage.get(k) for k in ("promptTokenCount", "candidatesTokenCount", "totalTokenCount")]
            self.usage = SearchUsage(*(c if isinstance(c, int) else 0 for c in counts))

    def result(self) -> ProviderResult:
        if not self.chunks:
            what = "no response body" if not self.events else "a stream whose events are not JSON"
            raise InvalidResponse("gemini", f"Gemini {self.api} returned {what}", 500)
        if not self.finished:
            raise InvalidResponse(
                "gemini", f"Gemini {self.api} stream ended early (no chunk with a finishReason); answer discarded"
            )
        route: Route = self.plan.state
        return ProviderResult(
            answer="".join(self.text) or None,
            sources=tuple(list(self.sources.values())[: self.plan.limit]),
            citations=tuple(self.citations),
            search_queries=tuple(self.queries),
            usage=self.usage,
            model=self.model,
            request_id=self.request_id,
            auth_mode="api_key" if route.kind == "api_key" else "oauth",
        )


PROVIDER: Final = Gemini()
