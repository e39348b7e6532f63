"""Gemini: Google Search grounding, through the Developer API (key) or Cloud Code (OAuth login).

Credentials, in order: a key passed to the client; an OAuth login stored under `gemini`,
`google-gemini-cli` or `google-antigravity`; `GEMINI_API_KEY`; a stored API key.

* Developer API: POST https://generativelanguage.googleapis.com/v1beta/models/<model>:streamGenerateContent?alt=sse
  with `x-goog-api-key`. The body is `contents`, `tools: [{googleSearch: {}}]`, `systemInstruction`
  and, only when max_tokens or temperature is given, `generationConfig`.
* Cloud Code (OAuth): the same request wrapped for a Gemini CLI or Antigravity login, with its
  endpoints, token refresh and project lookup, lives in `_gemini_oauth`; a 401, 403 or "invalid
  auth" 400 forces one refresh and one retry.

Retries (408, 429, 5xx, failed connections; the server's delay hints inside a 5-minute budget on the
injected clock) and Google's error envelope live in `_gemini_retry`.
The stream has no terminator: it is complete once a candidate carries `finishReason`. Chunks (wrapped
in `response` by Cloud Code) add answer text, grounding chunks (sources, deduped by URI, kept as
Google's redirect URLs), supports (citations, not deduped), `webSearchQueries`, usage and the model.
Recency is not sent; `limit` / `num_search_results` cut the sources locally. The richer date
parameters are the search tool's `timeRangeFilter` {startTime, endTime} (the ladder's start, up to
the end date or now), which only the Developer API takes: through Cloud Code a notice says so.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from datetime import UTC
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._oauth import oauth_token
from .._prompts import SYSTEM_PROMPT
from .._sse import SseEvent, aiter_sse
from .._types import SearchCitation, SearchParams, SearchResponse, SearchSource, SearchUsage
from .._wire import HttpRequest, HttpResponse
from ..errors import MissingCredentialError, ProviderConnectionError, ProviderTimeoutError, SearchProviderError
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
from ._gemini_retry import AuthRejected, Outcome, http_error, retry_hint, send_with_retries
from ._legacy import Provider, Support, as_dict, as_list, as_str

if TYPE_CHECKING:
    from .._context import ProviderContext

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
    "build_requests",
    "http_error",
    "import_credentials",
    "parse_events",
    "request_body",
    "retry_hint",
]

DEVELOPER_URL: Final = "https://generativelanguage.googleapis.com/v1beta/models/{model}:streamGenerateContent?alt=sse"
ENV_KEYS: Final = ("GEMINI_API_KEY",)
LOGIN_IDS: Final = ("gemini", "google-gemini-cli", "google-antigravity")
DEFAULT_MODEL: Final = "gemini-2.5-flash"
NO_CREDENTIALS: Final = (
    "Gemini needs a login or an API key: set GEMINI_API_KEY, run `websearch auth set gemini` (a key, or an OAuth "
    "JSON with project_id), or `websearch auth import gemini` to reuse the Gemini CLI's Google login"
)


class Gemini(Provider):
    id = "gemini"
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

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        if params.num_search_results is not None and params.limit not in (None, params.num_search_results):
            return [
                f"limit={params.limit} not applied separately: Gemini uses num_search_results="
                f"{params.num_search_results} as its result count"
            ]
        return []

    async def search(self, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        model = search_model(ctx)
        auth = await self.authenticate(ctx)
        try:
            return await self._send(params, ctx, auth, model)
        except AuthRejected as rejected:
            if auth.token is None or not auth.token.refresh_token:
                raise rejected.error from None
        auth = await refreshed(ctx, auth)
        try:
            return await self._send(params, ctx, auth, model)
        except AuthRejected as rejected:
            raise rejected.error from None

    async def authenticate(self, ctx: ProviderContext) -> GeminiAuth:
        """An explicit key, else the first stored login, else `GEMINI_API_KEY`, else a stored key."""
        explicit = ctx.api_keys.get(self.id)
        if explicit:
            return GeminiAuth("api_key", explicit)
        for cred_id in LOGIN_IDS:
            cred = ctx.credentials.get(cred_id)
            if cred is None or cred.kind != "oauth":
                continue
            antigravity = cred_id == "google-antigravity" or cred.data.get("client") == "antigravity"
            kind: AuthKind = "antigravity" if antigravity else "gemini-cli"
            token = await oauth_token(ctx, self.id, refresher(ctx, kind), credential_id=cred_id)
            project = token.project_id
            if not project and kind == "gemini-cli":
                project = await discover_project(ctx, token, cred_id)
            if not project:
                raise SearchProviderError(
                    self.id,
                    f"the Gemini login `{cred_id}` has no project_id; store it again "
                    f"with one: `websearch auth set gemini`",
                )
            return GeminiAuth(kind, token.access_token, project, cred_id, token)
        key = next((ctx.env[name] for name in ENV_KEYS if ctx.env.get(name)), None)
        if not key:
            stored = (ctx.credentials.get(cred_id) for cred_id in LOGIN_IDS)
            key = next((c.api_key for c in stored if c is not None and c.kind == "api_key" and c.api_key), None)
        if not key:
            raise MissingCredentialError(self.id, NO_CREDENTIALS)
        return GeminiAuth("api_key", key)

    async def _send(self, params: SearchParams, ctx: ProviderContext, auth: GeminiAuth, model: str) -> SearchResponse:
        """Try each endpoint in order with retries; the first 2xx stream is the answer."""
        requests = build_requests(params, ctx, auth, model)
        exchange = partial(self._exchange, params, ctx, auth=auth, model=model)
        response = await send_with_retries(ctx, requests, exchange, _api(auth), oauth=auth.kind != "api_key")
        notices = (*time_range_notices(params, ctx, auth), *response.notices)
        return dataclasses.replace(response, notices=notices)

    async def _exchange(
        self, params: SearchParams, ctx: ProviderContext, request: HttpRequest, auth: GeminiAuth, model: str
    ) -> Outcome:
        """One request: the answer (2xx), the whole error response, or the failure that left no
        response. Failures after a 2xx head (a stream cut off) raise: they are never retried."""
        opened = False
        try:
            async with ctx.stream(self.id, request) as (head, lines):
                opened = True
                if not head.ok:
                    return dataclasses.replace(head, body=b"".join([line async for line in lines]))
                stream = GeminiStream(model, _api(auth), request.secrets)
                async for event in aiter_sse(lines):
                    stream.feed(event)
                return stream.result(params, auth_mode="api_key" if auth.kind == "api_key" else "oauth")
        except (ProviderConnectionError, ProviderTimeoutError) as exc:
            if opened:
                raise
            return exc


# -- the request ------------------------------------------------------------------------------


def search_model(ctx: ProviderContext) -> str:
    """`GEMINI_SEARCH_MODEL`, else the setting `providers.webSearchGeminiModel`, else the default."""
    model = (ctx.settings.get_str("providers.webSearchGeminiModel") or "").strip().removeprefix("models/")
    return model or DEFAULT_MODEL


def time_range(params: SearchParams, ctx: ProviderContext) -> dict[str, str] | None:
    """`timeRangeFilter` for the ladder's start (RFC 3339, UTC) up to the end date, else now."""
    f = ctx.filters(params)
    if f.start is None:
        return None
    end = f.end or ctx.clock.now()
    return {"startTime": f"{f.start:%Y-%m-%dT%H:%M:%SZ}", "endTime": f"{end.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}"}


def time_range_notices(params: SearchParams, ctx: ProviderContext, auth: GeminiAuth) -> list[str]:
    """The date parameters Gemini could not apply: all of them through Cloud Code; an end alone."""
    given = params.given()
    dated = [n for n in ("recency_days", "recency_hours", "start_published_date", "end_published_date") if n in given]
    if auth.kind != "api_key":
        return [
            f"{n}={given[n]!r} not applied: Gemini through Cloud Code (OAuth) has no time range filter" for n in dated
        ]
    f = ctx.filters(params)
    if f.start is None and f.end is not None:
        return [
            f"end_published_date={params.end_published_date!r} not applied: Gemini's time range needs a start "
            "(give a start date, recency_days or recency_hours)"
        ]
    return []


def request_body(
    params: SearchParams, auth: GeminiAuth, model: str, request_id: str, window: dict[str, str] | None = None
) -> dict[str, Any]:
    """The Developer API body (with `window` as the search tool's `timeRangeFilter`), or the Cloud
    Code envelope around it."""
    system: dict[str, Any] = {"parts": [{"text": SYSTEM_PROMPT}]}
    if auth.kind == "antigravity":
        system = {"role": "user", "parts": [{"text": ANTIGRAVITY_SYSTEM}, {"text": SYSTEM_PROMPT}]}
    search: dict[str, Any] = {"timeRangeFilter": window} if window and auth.kind == "api_key" else {}
    inner: dict[str, Any] = {
        "contents": [{"role": "user", "parts": [{"text": params.query}]}],
        "tools": [{"googleSearch": search}],
        "systemInstruction": system,
    }
    config: dict[str, float] = {}
    if params.max_tokens is not None:
        config["maxOutputTokens"] = params.max_tokens
    if params.temperature is not None:
        config["temperature"] = params.temperature
    if config:
        inner["generationConfig"] = config
    return inner if auth.kind == "api_key" else cloud_body(inner, auth, model, request_id)


def build_requests(params: SearchParams, ctx: ProviderContext, auth: GeminiAuth, model: str) -> list[HttpRequest]:
    """One request per endpoint, in the order they are tried."""
    if auth.kind == "api_key":
        url = ctx.endpoint("gemini", DEVELOPER_URL.format(model=model))
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream", "x-goog-api-key": auth.secret}
        body = request_body(params, auth, model, "", time_range(params, ctx))
        return [HttpRequest("POST", url, headers=headers, json=body, secrets=(auth.secret,))]
    endpoints, request_id = cloud_route(ctx, auth.kind)
    return cloud_requests(ctx, auth, endpoints, request_body(params, auth, model, request_id))


def _api(auth: GeminiAuth) -> str:
    return "Developer API" if auth.kind == "api_key" else "Cloud Code API"


# -- the stream -------------------------------------------------------------------------------


class GeminiStream:
    """The answer as the chunks of one SSE stream build it; `result` checks that it finished."""

    def __init__(self, model: str, api: str = "Developer API", secrets: tuple[str, ...] = ()) -> None:
        self.model, self.api, self.secrets = model, api, secrets
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
            chunk = json.loads(event.data)
        except ValueError:
            return  # as upstream: a line that is not JSON is skipped
        if not isinstance(chunk, dict):
            return
        self.chunks += 1
        data = chunk["response"] if isinstance(chunk.get("response"), dict) else chunk
        error = data.get("error", chunk.get("error"))
        if isinstance(error, dict):
            code = error.get("code")
            body = json.dumps({"error": error}).encode()
            raise http_error(
                HttpResponse(code if isinstance(code, int) else 500, {}, body, secrets=self.secrets), self.api
            )
        blocked = as_dict(data.get("promptFeedback")).get("blockReason")
        if blocked:
            raise SearchProviderError("gemini", f"Gemini blocked the query (blockReason {blocked})", 400)
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

    def result(self, params: SearchParams, auth_mode: str = "api_key") -> SearchResponse:
        if not self.chunks:
            what = "no response body" if not self.events else "a stream whose events are not JSON"
            raise SearchProviderError("gemini", f"Gemini {self.api} returned {what}", 500)
        if not self.finished:
            raise SearchProviderError(
                "gemini", f"Gemini {self.api} stream ended early (no chunk with a finishReason); answer discarded"
            )
        sources = list(self.sources.values())
        n = params.count
        return SearchResponse(
            provider="gemini",
            answer="".join(self.text) or None,
            sources=tuple(sources[:n] if n else sources),
            citations=tuple(self.citations),
            search_queries=tuple(self.queries),
            usage=self.usage,
            model=self.model,
            request_id=self.request_id,
            auth_mode=auth_mode,
        )


def parse_events(events: Iterable[SseEvent], params: SearchParams, model: str = DEFAULT_MODEL) -> SearchResponse:
    """A whole stream's events as a response (pure; `iter_sse(text)` gives the events)."""
    stream = GeminiStream(model)
    for event in events:
        stream.feed(event)
    return stream.result(params)


PROVIDER: Final = Gemini()
