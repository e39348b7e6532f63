"""Gemini: Google Search grounding, through the Developer API (key) or Cloud Code (OAuth login).

Credentials, in order: a key passed to the client; an OAuth login stored under `gemini`,
`google-gemini-cli` or `google-antigravity`; `GEMINI_API_KEY`; a stored API key.

* Developer API: POST https://generativelanguage.googleapis.com/v1beta/models/<model>:streamGenerateContent?alt=sse
  with `x-goog-api-key`. The body is `contents`, `tools: [{googleSearch: {}}]`, `systemInstruction`
  and, only when max_tokens or temperature is given, `generationConfig`.
* Cloud Code (OAuth): POST <endpoint>/v1internal:streamGenerateContent?alt=sse with a Bearer token and
  that request wrapped as `{project, model, request, userAgent, requestId}`. Gemini CLI logins use
  cloudcode-pa; Antigravity logins (id `google-antigravity`, or `"client": "antigravity"` in the login
  JSON) try daily-cloudcode-pa, then its sandbox. A Gemini CLI login without `project_id` (the CLI's
  own file has none) learns it from `loadCodeAssist` and keeps it. Expired tokens are refreshed at
  https://oauth2.googleapis.com/token; a 401, 403 or "invalid auth" 400 forces one refresh and one retry.

Retries: 408, 429, 5xx and failed connections; 3 retries on the last endpoint (an earlier one gets a
single try), waiting the server's hint (`retry-after-ms`, `Retry-After`, RetryInfo `retryDelay`,
"Please retry in 12s") or 1, 2, 4 s, all inside a 5-minute budget on the injected clock.
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
import platform
import random
import re
import string
import sys
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal

from ..errors import (
    ConfigError,
    MissingCredentialError,
    ProviderConnectionError,
    ProviderTimeoutError,
    SearchProviderError,
)
from ..oauth import OAuthToken, Refresh, oauth_token
from ..prompts import SYSTEM_PROMPT
from ..sse import SseEvent, aiter_sse
from ..types import SearchCitation, SearchParams, SearchResponse, SearchSource, SearchUsage
from ..wire import HttpRequest, HttpResponse
from ._base import (
    Provider,
    Support,
    as_dict,
    as_list,
    as_str,
    classify_http_error,
    json_body,
    redact_detail,
    retry_after_seconds,
)

if TYPE_CHECKING:
    from ..context import ProviderContext

DEVELOPER_URL: Final = "https://generativelanguage.googleapis.com/v1beta/models/{model}:streamGenerateContent?alt=sse"
GEMINI_CLI_ENDPOINT: Final = "https://cloudcode-pa.googleapis.com"
ANTIGRAVITY_ENDPOINTS: Final = (
    "https://daily-cloudcode-pa.googleapis.com",
    "https://daily-cloudcode-pa.sandbox.googleapis.com",
)
STREAM_PATH: Final = "/v1internal:streamGenerateContent?alt=sse"
LOAD_PATH: Final = "/v1internal:loadCodeAssist"
TOKEN_URL: Final = "https://oauth2.googleapis.com/token"
ENV_KEYS: Final = ("GEMINI_API_KEY",)
LOGIN_IDS: Final = ("gemini", "google-gemini-cli", "google-antigravity")
DEFAULT_MODEL: Final = "gemini-2.5-flash"
MAX_RETRIES: Final = 3
BASE_DELAY: Final = 1.0  # seconds, doubled on each retry
RATE_LIMIT_BUDGET: Final = 300.0  # seconds of waiting per search, on the injected clock
#: The public "installed app" OAuth clients of the Gemini CLI and Antigravity (RFC 8252: not secrets).
GEMINI_CLI_CLIENT: Final = ("681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com",
                            "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")  # fmt: skip
ANTIGRAVITY_CLIENT: Final = ("1071006060591-tmhssin2h21lcre235vtolojh4g403ep.apps.googleusercontent.com",
                             "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")  # fmt: skip
ANTIGRAVITY_SYSTEM: Final = (
    "You are Antigravity, a powerful agentic AI coding assistant designed by the Google Deepmind team working on "
    "Advanced Agentic Coding.You are pair programming with a USER to solve their coding task. The task may require "
    "creating a new codebase, modifying or debugging an existing codebase, or simply answering a question."
    "**Absolute paths only****Proactiveness**"
)
CLIENT_METADATA: Final = "ideType=IDE_UNSPECIFIED,platform=PLATFORM_UNSPECIFIED,pluginType=GEMINI"
_ARCH: Final = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64", "i386": "ia32", "i686": "ia32"}
_NODE_ARCH: Final = _ARCH.get(platform.machine().lower(), platform.machine().lower())  # what Node's process.arch says
GEMINI_CLI_USER_AGENT: Final = f"GeminiCLI/0.46.0/gemini-3.1-pro-preview ({sys.platform}; {_NODE_ARCH}; terminal)"
ANTIGRAVITY_USER_AGENT: Final = "antigravity/hub/2.1.4 {}/{}".format(
    "windows" if sys.platform == "win32" else sys.platform, {"x64": "amd64", "ia32": "386"}.get(_NODE_ARCH, _NODE_ARCH)
)
_HINT_RE: Final = re.compile(r'(?:Please retry in |"retryDelay":\s*")(\d+(?:\.\d+)?)(ms|s)\b', re.IGNORECASE)
_INVALID_AUTH_RE: Final = re.compile(r"UNAUTHENTICATED|invalid (?:auth|credential)", re.IGNORECASE)
NO_CREDENTIALS: Final = (
    "Gemini needs a login or an API key: set GEMINI_API_KEY, run `websearch auth set gemini` (a key, or an OAuth "
    "JSON with project_id), or `websearch auth import gemini` to reuse the Gemini CLI's Google login"
)

AuthKind = Literal["api_key", "gemini-cli", "antigravity"]


@dataclass(frozen=True, slots=True)
class GeminiAuth:
    """How one search authenticates: a Developer API key, or a Cloud Code login and its project."""

    kind: AuthKind
    secret: str = field(repr=False)
    project_id: str | None = None
    credential_id: str | None = None
    token: OAuthToken | None = None


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
        except _AuthRejected as rejected:
            if auth.token is None or not auth.token.refresh_token:
                raise rejected.error from None
        auth = await self._refreshed(ctx, auth)
        try:
            return await self._send(params, ctx, auth, model)
        except _AuthRejected as rejected:
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
            token = await oauth_token(ctx, self.id, _refresher(ctx, kind), credential_id=cred_id)
            project = token.project_id
            if not project and kind == "gemini-cli":
                project = await self._discover_project(ctx, token, cred_id)
            if not project:
                raise SearchProviderError(self.id, f"the Gemini login `{cred_id}` has no project_id; store it again "
                                                   f"with one: `websearch auth set gemini`")  # fmt: skip
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
        api = _api(auth)
        started = ctx.clock.monotonic()
        error: SearchProviderError | None = None
        for index, request in enumerate(requests):
            last = index == len(requests) - 1
            tries = MAX_RETRIES + 1 if last else 1
            for attempt in range(tries):
                outcome = await self._exchange(params, ctx, request, auth, model)
                hint = None
                if isinstance(outcome, SearchResponse):
                    notices = (*time_range_notices(params, ctx, auth), *outcome.notices)
                    return dataclasses.replace(outcome, notices=notices)
                if isinstance(outcome, HttpResponse):
                    error = http_error(outcome, api, ctx.clock.now())
                    if auth.kind != "api_key" and _auth_rejected(outcome):
                        raise _AuthRejected(error)
                    if not _retryable(outcome.status):
                        raise error
                    hint = retry_hint(outcome, ctx.clock.now())
                else:  # no response at all: a refused or reset connection, or a timeout
                    error = outcome
                    if isinstance(outcome, ProviderTimeoutError) and last:
                        raise outcome  # a 60 s silence is not retried (an earlier endpoint moves on)
                if attempt + 1 >= tries:
                    break  # on to the next endpoint, or out of retries
                delay = hint if hint is not None else BASE_DELAY * 2**attempt
                if ctx.clock.monotonic() - started + delay > RATE_LIMIT_BUDGET:
                    raise error
                await ctx.clock.sleep(delay)
        assert error is not None
        raise error

    async def _exchange(
        self, params: SearchParams, ctx: ProviderContext, request: HttpRequest, auth: GeminiAuth, model: str
    ) -> SearchResponse | HttpResponse | SearchProviderError:
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

    async def _refreshed(self, ctx: ProviderContext, auth: GeminiAuth) -> GeminiAuth:
        """The login refreshed once although it had not expired (the server rejected it)."""
        assert auth.credential_id is not None and auth.token is not None and auth.kind != "api_key"
        stored = ctx.credentials.get(auth.credential_id)
        if stored is not None and stored.data.get("access_token") == auth.token.access_token:
            # mark it expired, so that oauth_token refreshes it under its lock (once, however many ask)
            ctx.credentials.set(auth.credential_id, "oauth", {**stored.data, "expires_at": 0})
        token = await oauth_token(ctx, self.id, _refresher(ctx, auth.kind), credential_id=auth.credential_id)
        return dataclasses.replace(auth, secret=token.access_token, token=token)

    async def _discover_project(self, ctx: ProviderContext, token: OAuthToken, cred_id: str) -> str | None:
        """The account's Cloud Code project, as the Gemini CLI finds it; stored with the login."""
        metadata = {"ideType": "IDE_UNSPECIFIED", "platform": "PLATFORM_UNSPECIFIED", "pluginType": "GEMINI"}
        headers = {**_cloud_headers("gemini-cli", token.access_token), "Accept": "application/json"}
        url = ctx.endpoint(self.id, GEMINI_CLI_ENDPOINT + LOAD_PATH)
        request = HttpRequest("POST", url, headers=headers, json={"metadata": metadata}, secrets=(token.access_token,))
        response = await ctx.send(self.id, request)
        if not response.ok:
            raise http_error(response, "Cloud Code API", ctx.clock.now())
        data = json_body(self.id, response)
        project = data.get("cloudaicompanionProject") if isinstance(data, dict) else None
        project = project.get("id") if isinstance(project, dict) else project
        if not isinstance(project, str) or not project:
            return None
        ctx.credentials.set(cred_id, "oauth", {**token.to_dict(), "project_id": project})
        return project


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
        return [f"{n}={given[n]!r} not applied: Gemini through Cloud Code (OAuth) has no time range filter"
                for n in dated]  # fmt: skip
    f = ctx.filters(params)
    if f.start is None and f.end is not None:
        return [f"end_published_date={params.end_published_date!r} not applied: Gemini's time range needs a start "
                "(give a start date, recency_days or recency_hours)"]  # fmt: skip
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
    if auth.kind == "api_key":
        return inner
    body: dict[str, Any] = {"project": auth.project_id, "model": model, "request": inner}
    if auth.kind == "antigravity":
        return {**body, "requestType": "agent", "userAgent": "antigravity", "requestId": request_id}
    return {**body, "userAgent": "pi-coding-agent", "requestId": request_id}


def build_requests(params: SearchParams, ctx: ProviderContext, auth: GeminiAuth, model: str) -> list[HttpRequest]:
    """One request per endpoint, in the order they are tried."""
    if auth.kind == "api_key":
        url = ctx.endpoint("gemini", DEVELOPER_URL.format(model=model))
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream", "x-goog-api-key": auth.secret}
        body = request_body(params, auth, model, "", time_range(params, ctx))
        return [HttpRequest("POST", url, headers=headers, json=body, secrets=(auth.secret,))]
    endpoints: tuple[str, ...] = ANTIGRAVITY_ENDPOINTS
    request_id = f"agent-{uuid.uuid4()}"
    if auth.kind == "gemini-cli":
        suffix = "".join(random.choices(string.ascii_lowercase + string.digits, k=9))
        endpoints, request_id = (GEMINI_CLI_ENDPOINT,), f"pi-{int(ctx.clock.now().timestamp() * 1000)}-{suffix}"
    body = request_body(params, auth, model, request_id)
    headers = _cloud_headers(auth.kind, auth.secret)
    return [HttpRequest("POST", ctx.endpoint("gemini", endpoint + STREAM_PATH), headers=headers, json=body,
                        secrets=(auth.secret,)) for endpoint in endpoints]  # fmt: skip


def _cloud_headers(kind: AuthKind, token: str) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", "Accept": "text/event-stream"}
    if kind == "antigravity":
        return {**headers, "User-Agent": ANTIGRAVITY_USER_AGENT}
    return {**headers, "User-Agent": GEMINI_CLI_USER_AGENT, "Client-Metadata": CLIENT_METADATA}


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


# -- errors and retries -----------------------------------------------------------------------


class _AuthRejected(Exception):
    """Cloud Code refused the login: worth one forced refresh."""

    def __init__(self, error: SearchProviderError) -> None:
        super().__init__(error.message)
        self.error = error


def http_error(response: HttpResponse, api: str, now: datetime | None = None) -> SearchProviderError:
    """A non-2xx answer (or an error chunk): the shared classification, else Google's envelope."""
    message, status_name, reason = _envelope(response)
    retry = retry_hint(response, now)
    shared = classify_http_error("gemini", response)
    if shared is not None:
        shared.retry_after = retry
        return shared
    status = response.status
    if reason == "API_KEY_INVALID":
        return SearchProviderError(
            "gemini", f"Gemini authorization failed ({status} API_KEY_INVALID): {message} Check GEMINI_API_KEY "
            "or base URL.", status)  # fmt: skip
    detail = f"{message} ({status_name})" if message and status_name else message or response.safe_text()
    return SearchProviderError("gemini", f"Gemini {api} error ({status}): {detail or 'empty body'}", status,
                               retry_after=retry)  # fmt: skip


def _envelope(response: HttpResponse) -> tuple[str | None, str | None, str | None]:
    """(message, status, ErrorInfo reason) of `{"error": {...}}` (Cloud Code may wrap it in a list)."""
    try:
        data = response.json()
    except ValueError:
        return None, None, None
    data = data[0] if isinstance(data, list) and data else data
    error = as_dict(as_dict(data).get("error"))
    message = as_str(error.get("message"))
    if message:
        message = redact_detail(response, message) or None
    reasons = [as_str(as_dict(d).get("reason")) for d in as_list(error.get("details"))]
    return message, as_str(error.get("status")), next((r for r in reasons if r), None)


def retry_hint(response: HttpResponse, now: datetime | None = None) -> float | None:
    """Seconds the server asks us to wait: headers first, else the longest hint in the body."""
    millis = response.headers.get("retry-after-ms", "")
    if millis.replace(".", "", 1).isdigit():
        return float(millis) / 1000
    after = retry_after_seconds(response.headers, now)
    if after is not None:
        return after
    hints = [float(value) / (1000 if unit.lower() == "ms" else 1) for value, unit in _HINT_RE.findall(response.text())]
    return max(hints) if hints else None


def _retryable(status: int) -> bool:
    return status in (408, 429) or status >= 500


def _auth_rejected(response: HttpResponse) -> bool:
    status = response.status
    return status in (401, 403) or (status == 400 and bool(_INVALID_AUTH_RE.search(response.text())))


# -- OAuth ------------------------------------------------------------------------------------


def _refresher(ctx: ProviderContext, kind: AuthKind) -> Refresh:
    """Refresh a login at Google's token endpoint, with the OAuth client that issued it."""

    async def refresh(token: OAuthToken) -> OAuthToken:
        client_id, client_secret = ANTIGRAVITY_CLIENT if kind == "antigravity" else GEMINI_CLI_CLIENT
        refresh_token = token.refresh_token or ""
        form = [("client_id", client_id), ("client_secret", client_secret), ("refresh_token", refresh_token),
                ("grant_type", "refresh_token")]  # fmt: skip
        request = HttpRequest("POST", ctx.endpoint("gemini", TOKEN_URL), headers={"Accept": "application/json"},
                              form=form, secrets=(refresh_token, token.access_token))  # fmt: skip
        response = await ctx.send("gemini", request)
        try:
            data = as_dict(response.json())
        except ValueError:
            data = {}
        access, expires_in = data.get("access_token"), data.get("expires_in")
        if not response.ok or not isinstance(access, str) or not access:
            detail = ": ".join(str(data[k]) for k in ("error", "error_description") if data.get(k))
            detail = detail or response.safe_text() or "no body"
            raise SearchProviderError(
                "gemini", f"the token endpoint answered {response.status}: {detail}", response.status
            )
        expires_at = ctx.clock.now().timestamp() + expires_in if isinstance(expires_in, (int, float)) else None
        return dataclasses.replace(token, access_token=access, expires_at=expires_at,
                                   refresh_token=as_str(data.get("refresh_token")) or token.refresh_token)  # fmt: skip

    return refresh


def import_credentials(home: Path) -> OAuthToken:
    """The Gemini CLI's Google login (`~/.gemini/oauth_creds.json`) as an OAuth credential."""
    path = home / ".gemini" / "oauth_creds.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"no Gemini CLI login at {path}: run `gemini` and sign in with Google first") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    except ValueError:
        raise ConfigError(f"{path} is not valid JSON") from None
    access, refresh, expiry = (as_dict(data).get(k) for k in ("access_token", "refresh_token", "expiry_date"))
    if not isinstance(access, str) or not access:
        raise ConfigError(f"{path} has no access_token: sign in with Google in the Gemini CLI again")
    if refresh is not None and not isinstance(refresh, str):
        raise ConfigError(f"{path} has a refresh_token that is not a string")
    if expiry is not None and (isinstance(expiry, bool) or not isinstance(expiry, (int, float))):
        raise ConfigError(f"{path} has an expiry_date that is not a number of milliseconds")
    return OAuthToken(access, refresh or None, expiry / 1000 if expiry is not None else None)


PROVIDER: Final = Gemini()
