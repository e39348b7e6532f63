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
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal

from ..chain import is_available
from ..errors import MissingCredentialError, SearchProviderError
from ..filters import recency_start
from ..prompts import SYSTEM_PROMPT
from ..registry import PROVIDERS
from ..sse import SseEvent, aiter_sse
from ..types import SearchCitation, SearchParams, SearchResponse, SearchSource, SearchUsage
from ..wire import HttpRequest, HttpResponse
from ._base import Provider, Support, age_seconds, as_list, as_str, classify_http_error, json_body, retry_after_seconds

if TYPE_CHECKING:
    from ..context import ProviderContext

ID: Final = "perplexity"
API_URL: Final = "https://api.perplexity.ai/chat/completions"
OPENROUTER_URL: Final = "https://openrouter.ai/api/v1/chat/completions"
ASK_URL: Final = "https://www.perplexity.ai/rest/sse/perplexity_ask"
COOKIES_ENV: Final = "PERPLEXITY_COOKIES"
ENV_KEYS: Final = ("PERPLEXITY_API_KEY", "PPLX_API_KEY")
OPENROUTER_ENV: Final = "OPENROUTER_API_KEY"
MODEL: Final = "sonar-pro"
DEFAULT_MAX_TOKENS: Final = 8192
DEFAULT_TEMPERATURE: Final = 0.2
DEFAULT_NUM_SEARCH_RESULTS: Final = 20
SESSION_MARGIN: Final = 300.0  # seconds before expiry at which a session is no longer used
ASK_VERSION: Final = "2.18"
APP_USER_AGENT: Final = "Perplexity/641 CFNetwork/1568 Darwin/25.2.0"
BROWSER_USER_AGENT: Final = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/149.0.0.0 Safari/537.36"
)
APP_HEADERS: Final = {
    "X-App-ApiClient": "default",
    "X-App-ApiVersion": ASK_VERSION,
    "X-Perplexity-Request-Reason": "submit",
}
#: What the API modes honour and the ask endpoint does not.
ASK_IGNORED: Final = ("num_search_results", "max_tokens", "temperature", "recency_days", "recency_hours",
                      "start_published_date", "end_published_date", "category", "include_domains",
                      "exclude_domains")  # fmt: skip
#: `category` values with a Perplexity `search_mode` of their own.
SEARCH_MODES: Final = {"publication": "academic", "financial report": "sec"}

AuthKind = Literal["cookies", "session", "api_key", "openrouter", "anonymous"]
AUTH_NAMES: Final[Mapping[str, str]] = {
    "cookies": "PERPLEXITY_COOKIES", "session": "the stored session", "api_key": "the API key",
    "openrouter": "the OpenRouter key", "anonymous": "no login",
}  # fmt: skip


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
        secrets = tuple(dict.fromkeys(s for m in methods for s in m.secrets))  # every method's, in every error
        for auth in methods:
            try:
                response = await self._attempt(auth, params, ctx, secrets)
            except SearchProviderError as exc:
                failed.append((auth, exc))
                continue
            notes = [f"Perplexity with {AUTH_NAMES[a.kind]} failed: {e.message}; fell through to the next auth method"
                     for a, e in failed]  # fmt: skip
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
    expired = False
    if stored is not None and stored.kind == "oauth" and stored.api_key:
        expiry = _number(stored.data.get("expires_at")) or _jwt_expiry(stored.api_key)
        expired = expiry is not None and expiry - SESSION_MARGIN <= ctx.clock.now().timestamp()
        if not expired:
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
    notices: list[str] = []
    if f.start_source is not None and params.recency:
        notices.append(f"recency={params.recency!r} not applied: {f.start_source} takes precedence")
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


def build_ask_request(params: SearchParams, ctx: ProviderContext, auth: Auth) -> HttpRequest:
    """The ask endpoint: the bare query (it has no slot for a system prompt), cookie auth or none."""
    anonymous = auth.kind == "anonymous"
    headers = {
        "Content-Type": "application/json", "Accept": "text/event-stream", "Origin": "https://www.perplexity.ai",
        "Referer": "https://www.perplexity.ai/", "User-Agent": BROWSER_USER_AGENT if anonymous else APP_USER_AGENT,
        "X-Request-ID": str(uuid.uuid4()),
    }  # fmt: skip
    if auth.kind == "session":
        headers["Cookie"] = f"__Secure-next-auth.session-token={auth.secret}"
    elif auth.kind == "cookies":
        headers["Cookie"] = auth.secret
    if not anonymous:
        headers.update(APP_HEADERS)
    ask: dict[str, Any] = {
        "query_str": params.query, "search_focus": "internet", "mode": "copilot", "model_preference": "experimental",
        "sources": ["web"], "attachments": [], "frontend_uuid": str(uuid.uuid4()),
        "frontend_context_uuid": str(uuid.uuid4()), "version": ASK_VERSION, "language": "en-US",
        "timezone": _timezone(ctx.env), "search_recency_filter": params.recency, "is_incognito": True,
        "use_schematized_api": True, "skip_search_enabled": True,
    }  # fmt: skip
    if anonymous:
        ask.update({"send_back_text_in_streaming_api": True, "source": "default"})
    body = {"query_str": params.query, "params": ask}
    return HttpRequest("POST", ctx.endpoint(ID, ASK_URL), headers=headers, json=body, secrets=auth.secrets)


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


class _Stream:
    """Events in, one SearchResponse out; `done` once the stream's last event was seen."""

    def __init__(self, auth: Auth, request: HttpRequest, now: datetime) -> None:
        self.auth, self.now, self.secrets = auth, now, request.secrets
        self.done = False

    def feed(self, event: SseEvent) -> bool:
        """Take one event; True when it was the last one."""
        data = event.data.strip()
        if not data:
            return self.done
        try:
            value = json.loads(data)
        except ValueError:
            raise SearchProviderError(ID, "Perplexity sent a stream event that is not JSON", 502) from None
        if event.event == "error":
            raise self.error(value)
        self.take(value)
        return self.done

    def take(self, value: Any) -> None:
        raise NotImplementedError

    def error(self, value: Any) -> SearchProviderError:
        raise NotImplementedError

    def result(self, params: SearchParams) -> SearchResponse:
        if not self.done:
            message = "Perplexity stream ended before its last event; the partial answer was discarded"
            raise SearchProviderError(ID, message, 502)
        return self.build(params)

    def build(self, params: SearchParams) -> SearchResponse:
        raise NotImplementedError

    def redact(self, text: str) -> str:
        return HttpResponse(0, {}, text.encode(), secrets=self.secrets).safe_text()


def _open(auth: Auth, request: HttpRequest, now: datetime) -> _Stream:
    return (ChatStream if auth.kind in ("api_key", "openrouter") else AskStream)(auth, request, now)


class ChatStream(_Stream):
    """An OpenAI-style chat-completions stream, ended by `[DONE]` (or a finish_reason)."""

    def __init__(self, auth: Auth, request: HttpRequest, now: datetime) -> None:
        super().__init__(auth, request, now)
        self.parts: list[str] = []
        self.meta: dict[str, Any] = {"model": (request.json or {}).get("model")}
        self.usage: Mapping[str, Any] = {}

    def feed(self, event: SseEvent) -> bool:
        if event.data.strip() == "[DONE]":
            self.done = True
            return True
        super().feed(event)
        return False  # after a finish_reason, read on for the usage and [DONE]

    def take(self, value: Any) -> None:
        if not isinstance(value, dict):
            return
        if value.get("error"):
            raise self.error(value)
        _collect(self.meta, value)
        for choice in as_list(value.get("choices")):
            for part in (choice.get("delta"), choice.get("message")) if isinstance(choice, dict) else ():
                if isinstance(part, dict) and isinstance(part.get("content"), str):
                    self.parts.append(part["content"])
            self.done = self.done or bool(isinstance(choice, dict) and choice.get("finish_reason"))
        if isinstance(value.get("usage"), dict):
            self.usage = value["usage"]

    def error(self, value: Any) -> SearchProviderError:
        inner = value.get("error") if isinstance(value, dict) else None
        code = inner.get("code") if isinstance(inner, dict) else None
        status = code if isinstance(code, int) and 400 <= code < 600 else 500
        return http_error(HttpResponse(status, {}, json.dumps(value).encode(), secrets=self.secrets))

    def build(self, params: SearchParams) -> SearchResponse:
        results = [r for r in as_list(self.meta.get("search_results")) if isinstance(r, dict) and as_str(r.get("url"))]
        urls = [u for u in as_list(self.meta.get("citations")) if as_str(u)]
        citations: list[SearchCitation] = []
        if urls:
            by_url: dict[str, dict[str, Any]] = {}
            for result in results:
                by_url.setdefault(result["url"], result)
            sources = [_source(by_url.get(url, {"url": url}), "title", "date", self.now) for url in urls]
            citations = [SearchCitation(s.url, s.title) for s in sources]
        else:
            sources = [_source(result, "title", "date", self.now) for result in results]
        related = (q for q in as_list(self.meta.get("related_questions")) if isinstance(q, str) and q.strip())
        tokens = [_int(self.usage.get(k)) for k in ("prompt_tokens", "completion_tokens", "total_tokens")]
        return SearchResponse(
            provider=ID, answer="".join(self.parts) or None, sources=tuple(sources[: params.limit]),
            citations=tuple(citations), related_questions=tuple(related),
            usage=SearchUsage(*tokens) if any(tokens) else None, model=as_str(self.meta.get("model")),
            request_id=as_str(self.meta.get("id")), auth_mode="api_key",
        )  # fmt: skip


class AskStream(_Stream):
    """The ask endpoint's snapshots: merged, answer and sources re-read after each one."""

    def __init__(self, auth: Auth, request: HttpRequest, now: datetime) -> None:
        super().__init__(auth, request, now)
        self.snapshot: dict[str, Any] = {"blocks": []}
        self.answer = ""
        self.sources: dict[str, SearchSource] = {}
        self.model: str | None = None
        self.request_id = as_str(request.headers.get("X-Request-ID"))

    def take(self, value: Any) -> None:
        if not isinstance(value, dict):
            return
        if value.get("error_code"):
            raise self.error(value)
        snap = self.snapshot = merge_snapshot(self.snapshot, value)
        self.answer = snapshot_answer(snap) or self.answer
        for source in snapshot_sources(snap, self.now):
            self.sources[source.url] = source  # a later entry wins but keeps the first one's place
        self.model = as_str(snap.get("display_model")) or self.model
        self.request_id = as_str(snap.get("uuid")) or self.request_id
        self.done = snap.get("final") is True or snap.get("status") == "COMPLETED"

    def error(self, value: Any) -> SearchProviderError:
        data = value if isinstance(value, dict) else {}
        message = as_str(data.get("error_message")) or as_str(data.get("error_code")) or str(value)
        return SearchProviderError(ID, f"Perplexity ask stream error: {self.redact(message)}", 400)

    def build(self, params: SearchParams) -> SearchResponse:
        notices = tuple(
            f"{name}={value!r} not applied: Perplexity's ask endpoint (used with {AUTH_NAMES[self.auth.kind]}) "
            "does not support it"
            for name, value in params.given().items()
            if name in ASK_IGNORED
        )
        return SearchResponse(
            provider=ID, answer=self.answer or None, sources=tuple(list(self.sources.values())[: params.limit]),
            model=self.model, request_id=self.request_id,
            auth_mode="anonymous" if self.auth.kind == "anonymous" else "oauth", notices=notices,
        )  # fmt: skip


def merge_snapshot(existing: Mapping[str, Any], incoming: Mapping[str, Any]) -> dict[str, Any]:
    """Top-level fields replaced; blocks merged by `intended_usage`; `sources_list` kept when absent."""
    merged = {**existing, **incoming}
    old_blocks = as_list(existing.get("blocks"))
    new_blocks = as_list(incoming.get("blocks"))
    merged["blocks"] = _merge_blocks(old_blocks, new_blocks) if new_blocks else old_blocks
    if merged.get("sources_list") is None and existing.get("sources_list") is not None:
        merged["sources_list"] = existing["sources_list"]
    return merged


def _merge_blocks(existing: list[Any], incoming: list[Any]) -> list[Any]:
    blocks = {b["intended_usage"]: b for b in existing if isinstance(b, dict) and as_str(b.get("intended_usage"))}
    for block in incoming:
        usage = as_str(block.get("intended_usage")) if isinstance(block, dict) else None
        if usage is None:
            continue
        prev = blocks.get(usage, {})
        blocks[usage] = {**prev, **block}
        if isinstance(block.get("markdown_block"), dict):
            old, new = prev.get("markdown_block"), block["markdown_block"]
            markdown = {**old, **new} if isinstance(old, dict) else dict(new)
            chunks, offset = as_list(new.get("chunks")), _int(new.get("chunk_starting_offset")) or 0
            if chunks and isinstance(old, dict):
                markdown["chunks"] = chunks if offset == 0 else as_list(old.get("chunks"))[:offset] + chunks
            blocks[usage]["markdown_block"] = markdown
    return list(blocks.values())


def snapshot_answer(snap: Mapping[str, Any]) -> str:
    """The first markdown block's chunks (else answer), then `ask_text`'s, then the `text` payload."""
    blocks = [
        b for b in as_list(snap.get("blocks")) if isinstance(b, dict) and isinstance(b.get("markdown_block"), dict)
    ]
    text = snap.get("text") if isinstance(snap.get("text"), str) else ""
    if not as_list(snap.get("blocks")):
        return text_answer(text) if text else ""
    for wanted in (lambda u: "markdown" in u, lambda u: u == "ask_text"):
        block = next((b["markdown_block"] for b in blocks if wanted(as_str(b.get("intended_usage")) or "")), None)
        if block is not None and (found := _chunks(block.get("chunks")) or as_str(block.get("answer"))):
            return found
    return text_answer(text) if text else ""


def snapshot_sources(snap: Mapping[str, Any], now: datetime) -> list[SearchSource]:
    """The `web_results` block, else `sources_list`, else the `web_results` of the text payload."""
    blocks = [
        b for b in as_list(snap.get("blocks")) if isinstance(b, dict) and b.get("intended_usage") == "web_results"
    ]
    inner = blocks[0].get("web_result_block") if blocks else None
    web = as_list(inner.get("web_results")) if isinstance(inner, dict) else []
    if web:
        return [_source(r, "name", "timestamp", now) for r in web if isinstance(r, dict) and as_str(r.get("url"))]
    listed = [r for r in as_list(snap.get("sources_list")) if isinstance(r, dict) and as_str(r.get("url"))]
    if listed:
        return [_source(r, "title", "date", now) for r in listed]
    payload = _text_payload(snap["text"]) if isinstance(snap.get("text"), str) else None
    results = [r for r in as_list((payload or {}).get("web_results")) if isinstance(r, dict) and as_str(r.get("url"))]
    return [_source({**r, "name": r.get("name") or r.get("title")}, "name", "timestamp", now) for r in results]


def text_answer(text: str) -> str:
    """The answer of a `text` field: a JSON payload (or a FINAL step holding one), else raw."""
    payload = _text_payload(text)
    if payload is not None:
        for item in as_list(payload.get("structured_answer")):
            if isinstance(item, dict) and (found := as_str(item.get("text")) or _chunks(item.get("chunks"))):
                return found
        if found := _chunks(payload.get("chunks")) or as_str(payload.get("answer")):
            return found
    steps = _loads(text)
    for step in steps if isinstance(steps, list) else []:
        content = step.get("content") if isinstance(step, dict) else None
        if isinstance(content, dict) and (found := as_str(content.get("answer"))):
            return found
    return text


def _text_payload(text: str) -> dict[str, Any] | None:
    parsed = _loads(text)
    if isinstance(parsed, dict):
        return parsed
    for step in parsed if isinstance(parsed, list) else []:
        content = step.get("content") if isinstance(step, dict) else None
        answer = as_str(content.get("answer")) if isinstance(content, dict) else None
        if answer and isinstance(payload := _loads(answer), dict):
            return payload
    return None


# -- helpers -----------------------------------------------------------------------------------


def http_error(response: HttpResponse, prefix: str = "Perplexity API error") -> SearchProviderError:
    """A non-2xx answer: the shared classification, else `<prefix> (<status>): <detail>`."""
    shared = classify_http_error(ID, response)
    if shared is not None:
        return shared
    retry = retry_after_seconds(response.headers)
    data = _loads(response.text())
    error = data.get("error", data.get("detail", data.get("message"))) if isinstance(data, dict) else None
    detail = as_str(error.get("message")) if isinstance(error, dict) else as_str(error)
    if detail is not None:
        detail = HttpResponse(response.status, {}, detail.encode(), secrets=response.secrets).safe_text()
    message = f"{prefix} ({response.status}): {detail or response.safe_text() or _phrase(response.status)}"
    if retry is not None:
        message += f"; retry after {retry:g} s"
    return SearchProviderError(ID, message, response.status, retry_after=retry)


def _collect(meta: dict[str, Any], record: Mapping[str, Any]) -> None:
    """Metadata of one event, top level, in `output[]` items (and their `content`), and in `response`."""
    for key in ("id", "model"):
        if as_str(record.get(key)):
            meta[key] = record[key]
    _collect_lists(meta, record)
    response = record.get("response")
    for item in _walk(record.get("output")) + _walk(response.get("output") if isinstance(response, dict) else None):
        _collect_lists(meta, item)
    if isinstance(response, dict):
        _collect(meta, response)


def _collect_lists(meta: dict[str, Any], record: Mapping[str, Any]) -> None:
    for key in ("citations", "search_results", "results", "related_questions"):
        if as_list(record.get(key)):
            meta["search_results" if key == "results" else key] = record[key]


def _walk(output: object) -> list[Mapping[str, Any]]:
    items = [item for item in as_list(output) if isinstance(item, dict)]
    return [x for item in items for x in (item, *_walk(item.get("content")))]


def _source(result: Mapping[str, Any], title_key: str, date_key: str, now: datetime) -> SearchSource:
    url = result["url"]
    published = as_str(result.get(date_key))
    return SearchSource(
        title=as_str(result.get(title_key)) or url, url=url, snippet=as_str(result.get("snippet")),
        published_date=published, age_seconds=age_seconds(published, now),
    )  # fmt: skip


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


def _timezone(env: Mapping[str, str]) -> str:
    """The IANA zone the ask endpoint wants: `TZ` when it names one, else UTC."""
    zone = env.get("TZ", "").lstrip(":")
    return zone if re.fullmatch(r"[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)+|UTC", zone) else "UTC"


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _chunks(value: object) -> str | None:
    chunks = as_list(value)
    return "".join(chunks) or None if chunks and all(isinstance(c, str) for c in chunks) else None


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "no body"


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


PROVIDER: Final = Perplexity()
