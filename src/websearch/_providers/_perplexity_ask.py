"""The perplexity.ai ask endpoint, reached with a browser cookie, a stored session or no login.

`build_ask_request` POSTs the bare query. Its SSE events are snapshots: `AskStream` merges each into
the last (`merge_snapshot`, blocks by `intended_usage`) and re-reads the answer (`snapshot_answer`,
`text_answer`) and the sources (`snapshot_sources`) after each one, until `final` or `COMPLETED`.
The endpoint has no slot for the API modes' parameters: `ask_notices` says which were left out.
Errors, as an HTTP body (`{"detail": ...}`, or an HTML page) or as a snapshot with an `error_code`
inside a 200 stream (status 400, or 429 for `RATE_LIMITED`), read `Perplexity ask API error`.
The stream plumbing is `_perplexity_api`'s; the provider (`perplexity`) decides when to ask.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from .._core._notices import Notice, not_applied
from .._core._types import ProviderResult, SearchParams, SearchSource
from .._core._wire import HttpRequest
from ..errors import SearchProviderError
from ._base import Plan, as_list, as_str
from ._errors import ErrorEnvelope
from ._perplexity_api import AUTH_NAMES, ID, EventStream, int_or_none, json_or_none, to_source

if TYPE_CHECKING:
    from .._core._context import ProviderContext
    from ._perplexity_auth import Auth

ASK_URL: Final = "https://www.perplexity.ai/rest/sse/perplexity_ask"
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
ASK_IGNORED: Final = (
    "num_search_results",
    "max_tokens",
    "temperature",
    "recency_days",
    "recency_hours",
    "start_published_date",
    "end_published_date",
    "category",
    "country",
    "language",
    "include_domains",
    "exclude_domains",
)
#: The status of an error snapshot whose code names none.
STREAM_ERROR_STATUS: Final = 400
ASK_ENVELOPE: Final = ErrorEnvelope(
    message=(("error_message",), ("detail",), ("error", "message"), ("message",), ("error",)),
    code=(("error_code",),),
    code_status={"RATE_LIMITED": 429},
    embedded_status=STREAM_ERROR_STATUS,
    prefix="Perplexity ask API error",
)


def ask_notices(params: SearchParams, auth: Auth) -> tuple[Notice, ...]:
    """The parameters given that the ask endpoint has no slot for."""
    why = f"Perplexity's ask endpoint (used with {AUTH_NAMES[auth.kind]}) does not support it"
    return tuple(not_applied(name, getattr(params, name), why) for name in params.given() if name in ASK_IGNORED)


def build_ask_request(params: SearchParams, ctx: ProviderContext, auth: Auth) -> HttpRequest:
    """The ask endpoint: the bare query (it has no slot for a system prompt), cookie auth or none."""
    anonymous = auth.kind == "anonymous"
    headers = {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "Origin": "https://www.perplexity.ai",
        "Referer": "https://www.perplexity.ai/",
        "User-Agent": BROWSER_USER_AGENT if anonymous else APP_USER_AGENT,
        "X-Request-ID": str(uuid.uuid4()),
    }
    if auth.kind == "session":
        headers["Cookie"] = f"__Secure-next-auth.session-token={auth.secret}"
    elif auth.kind == "cookies":
        headers["Cookie"] = auth.secret
    if not anonymous:
        headers.update(APP_HEADERS)
    ask: dict[str, Any] = {
        "query_str": params.query,
        "search_focus": "internet",
        "mode": "copilot",
        "model_preference": "experimental",
        "sources": ["web"],
        "attachments": [],
        "frontend_uuid": str(uuid.uuid4()),
        "frontend_context_uuid": str(uuid.uuid4()),
        "version": ASK_VERSION,
        "language": "en-US",
        "timezone": _timezone(ctx.env),
        "search_recency_filter": params.recency,
        "is_incognito": True,
        "use_schematized_api": True,
        "skip_search_enabled": True,
    }
    if anonymous:
        ask.update({"send_back_text_in_streaming_api": True, "source": "default"})
    body = {"query_str": params.query, "params": ask}
    return HttpRequest("POST", ctx.endpoint(ID, ASK_URL), headers=headers, json=body, secrets=auth.secrets)


class AskStream(EventStream):
    """The ask endpoint's snapshots: merged, answer and sources re-read after each one."""

    envelope = ASK_ENVELOPE

    def __init__(self, auth: Auth, request: HttpRequest, plan: Plan) -> None:
        super().__init__(auth, request, plan)
        self.snapshot: dict[str, Any] = {"blocks": []}
        self.answer = ""
        self.sources: dict[str, SearchSource] = {}
        self.model: str | None = None
        self.request_id = as_str(request.headers.get("X-Request-ID"))

    def take(self, value: Any) -> None:
        if not isinstance(value, dict):
            return
        if value.get("error_code"):
            raise self.event_error(value)
        snap = self.snapshot = merge_snapshot(self.snapshot, value)
        self.answer = snapshot_answer(snap) or self.answer
        for source in snapshot_sources(snap, self.plan.now):
            self.sources[source.url] = source  # a later entry wins but keeps the first one's place
        self.model = as_str(snap.get("display_model")) or self.model
        self.request_id = as_str(snap.get("uuid")) or self.request_id
        self.done = snap.get("final") is True or snap.get("status") == "COMPLETED"

    def event_error(self, value: Any) -> SearchProviderError:
        return self.error_in_stream(value)

    def build(self) -> ProviderResult:
        return ProviderResult(
            answer=self.answer or None,
            sources=tuple(list(self.sources.values())[: self.plan.limit]),
            model=self.model,
            request_id=self.request_id,
            auth_mode="anonymous" if self.auth.kind == "anonymous" else "oauth",
        )


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
            chunks, offset = as_list(new.get("chunks")), int_or_none(new.get("chunk_starting_offset")) or 0
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
        return [to_source(r, "name", "timestamp", now) for r in web if isinstance(r, dict) and as_str(r.get("url"))]
    listed = [r for r in as_list(snap.get("sources_list")) if isinstance(r, dict) and as_str(r.get("url"))]
    if listed:
        return [to_source(r, "title", "date", now) for r in listed]
    payload = _text_payload(snap["text"]) if isinstance(snap.get("text"), str) else None
    results = [r for r in as_list((payload or {}).get("web_results")) if isinstance(r, dict) and as_str(r.get("url"))]
    return [to_source({**r, "name": r.get("name") or r.get("title")}, "name", "timestamp", now) for r in results]


def text_answer(text: str) -> str:
    """The answer of a `text` field: a JSON payload (or a FINAL step holding one), else raw."""
    payload = _text_payload(text)
    if payload is not None:
        for item in as_list(payload.get("structured_answer")):
            if isinstance(item, dict) and (found := as_str(item.get("text")) or _chunks(item.get("chunks"))):
                return found
        if found := _chunks(payload.get("chunks")) or as_str(payload.get("answer")):
            return found
    steps = json_or_none(text)
    for step in steps if isinstance(steps, list) else []:
        content = step.get("content") if isinstance(step, dict) else None
        if isinstance(content, dict) and (found := as_str(content.get("answer"))):
            return found
    return text


def _text_payload(text: str) -> dict[str, Any] | None:
    parsed = json_or_none(text)
    if isinstance(parsed, dict):
        return parsed
    for step in parsed if isinstance(parsed, list) else []:
        content = step.get("content") if isinstance(step, dict) else None
        answer = as_str(content.get("answer")) if isinstance(content, dict) else None
        if answer and isinstance(payload := json_or_none(answer), dict):
            return payload
    return None


def _timezone(env: Mapping[str, str]) -> str:
    """The IANA zone the ask endpoint wants: `TZ` when it names one, else UTC."""
    zone = env.get("TZ", "").lstrip(":")
    return zone if re.fullmatch(r"[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)+|UTC", zone) else "UTC"


def _chunks(value: object) -> str | None:
    chunks = as_list(value)
    return "".join(chunks) or None if chunks and all(isinstance(c, str) for c in chunks) else None
