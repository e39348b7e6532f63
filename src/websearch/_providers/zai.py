"""Z.AI: the `web_search_prime` tool of Z.AI's remote MCP server (Streamable HTTP, JSON-RPC).

Each attempt is a three-request MCP session against https://api.z.ai/api/mcp/web_search_prime/mcp
with `Authorization: Bearer <ZAI_API_KEY or stored key>`: `initialize` (the answer's
`Mcp-Session-Id` header is echoed from then on), `notifications/initialized`, then `tools/call`.
Answers are JSON or SSE (the last `data:` event is the message). The tool's argument names have
changed over time, so three shapes are tried in order, the next one only after an argument-shape
error: `{query, count}`, `{search_query, count}`, `{search_query, search_engine: "search-prime",
count}`. Errors come as HTTP statuses with Zhipu's `{"error": {"code", "message"}}`, flat
`{"success": false, "code", "msg"}` objects, JSON-RPC `error` objects or `isError` tool results.
The answer is the tool's raw text (usually the result JSON itself); sources come from its
`search_result`/`results` array (`link` → url, `media` → author). The richer parameters: one
include domain is `search_domain_filter` (it takes a single domain), and the ladder's start becomes
the narrowest `search_recency_filter` (oneDay, oneWeek, oneMonth, oneYear) covering it.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .. import __version__
from .._sse import iter_sse
from .._types import SearchParams, SearchResponse, SearchSource
from .._wire import HttpRequest, HttpResponse
from ..errors import ProviderConnectionError, ProviderTimeoutError, SearchProviderError
from ._legacy import (
    Provider,
    Support,
    as_dict,
    as_list,
    clamp_count,
    classify_http_error,
    recency_bucket,
    redact_detail,
    require_key,
    retry_after_seconds,
    status_phrase,
)

if TYPE_CHECKING:
    from .._context import ProviderContext

URL: Final = "https://api.z.ai/api/mcp/web_search_prime/mcp"
TOOL: Final = "web_search_prime"
ENV_KEYS: Final = ("ZAI_API_KEY",)
PROTOCOL_VERSION: Final = "2025-03-26"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 50  # the tool's documented `count` range is 1..50
PARSE_FAILED: Final = "Failed to parse Z.AI MCP response"
_ARGUMENT_RE: Final = re.compile(r"invalid|argument|search_query|query", re.IGNORECASE)
_MCP_CODE_RE: Final = re.compile(r"MCP error\s*(-?\d+)")
_SSE_RE: Final = re.compile(r"^data:", re.MULTILINE)
_RECENCY: Final = {"day": "oneDay", "week": "oneWeek", "month": "oneMonth", "year": "oneYear"}
_STATUS: Final = {
    1000: 401,
    1001: 401,
    1002: 401,
    1003: 401,
    1004: 401,
    1113: 402,
    1220: 403,
    1302: 429,
    1303: 429,
    1304: 429,
    1305: 429,
    -32601: 404,
    -32603: 500,
}


class ZAI(Provider):
    id = "zai"
    supports: ClassVar[dict[str, Support]] = {
        "limit": "native",
        "num_search_results": "native",
        "recency_days": "approximate",
        "recency_hours": "approximate",
        "start_published_date": "approximate",
        "include_domains": "native",
    }

    async def search(self, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        key = require_key(ctx, self.id, ENV_KEYS)
        count = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0]
        error: SearchProviderError | None = None
        for arguments in argument_variants(params.query, count, filter_arguments(params, ctx)):
            try:
                return await self._session(ctx, key, arguments, count)
            except SearchProviderError as exc:
                if not is_argument_error(exc):
                    raise
                error = exc
        assert error is not None
        raise error

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        notices = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[1]
        f = ctx.filters(params)
        if f.start_source is not None:
            rung = f"{f.start_source}={getattr(params, f.start_source)!r}"
            recency = filter_arguments(params, ctx).get("search_recency_filter")
            if recency is None:
                notices.append(f"{rung} not applied: the window is longer than Z.AI's longest recency filter (a year)")
            else:
                notices.append(
                    f"{rung} approximated as search_recency_filter={recency}: Z.AI only filters by the "
                    "past day, week, month or year"
                )
        if len(f.include_domains) > 1:
            notices.append(
                f"include_domains={params.include_domains!r} not applied: Z.AI's search_domain_filter "
                "takes a single domain"
            )
        return notices

    async def _session(self, ctx: ProviderContext, key: str, arguments: dict[str, Any], count: int) -> SearchResponse:
        """initialize → notifications/initialized → tools/call, echoing the session id."""
        init = await ctx.send(self.id, build_request(ctx, key, initialize_message()))
        read_message(init)
        session = init.headers.get("mcp-session-id")
        await ctx.send(
            self.id,
            build_request(ctx, key, {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}, session),
        )
        call = {"name": TOOL, "arguments": arguments}
        message = {"jsonrpc": "2.0", "method": "tools/call", "params": call, "id": str(uuid.uuid4())}
        return parse_result(read_message(await ctx.send(self.id, build_request(ctx, key, message, session))), count)


def argument_variants(query: str, count: int, extra: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The argument shapes of `web_search_prime`, in the order they are tried (`extra`: the filters)."""
    return [
        {"query": query, "count": count, **(extra or {})},
        {"search_query": query, "count": count, **(extra or {})},
        {"search_query": query, "search_engine": "search-prime", "count": count, **(extra or {})},
    ]


def filter_arguments(params: SearchParams, ctx: ProviderContext) -> dict[str, Any]:
    """`search_domain_filter` (one include domain) and `search_recency_filter` (the ladder's start)."""
    f = ctx.filters(params)
    extra: dict[str, Any] = {}
    if len(f.include_domains) == 1:
        extra["search_domain_filter"] = f.include_domains[0]
    bucket = recency_bucket(f.start, ctx.clock.now()) if f.start is not None else None
    if bucket is not None:
        extra["search_recency_filter"] = _RECENCY[bucket]
    return extra


def is_argument_error(exc: SearchProviderError) -> bool:
    """Would another argument shape help? Not for wire, auth, quota, rate-limit or server errors."""
    if isinstance(exc, (ProviderConnectionError, ProviderTimeoutError)):
        return False
    if exc.status is not None and (exc.status in (401, 402, 403, 429) or exc.status >= 500):
        return False
    return exc.status == 400 or bool(_ARGUMENT_RE.search(exc.message))


def initialize_message() -> dict[str, Any]:
    client = {"name": "websearch", "version": __version__}
    params = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": client}
    return {"jsonrpc": "2.0", "method": "initialize", "params": params, "id": str(uuid.uuid4())}


def build_request(
    ctx: ProviderContext, key: str, message: dict[str, Any], session_id: str | None = None
) -> HttpRequest:
    headers = {
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if session_id:
        headers["Mcp-Session-Id"] = session_id
    return HttpRequest("POST", ctx.endpoint("zai", URL), headers=headers, json=message, secrets=(key,))


def read_message(response: HttpResponse) -> dict[str, Any]:
    """The JSON-RPC message of a response (JSON, or the last SSE event), or the error it carries."""
    if not response.ok:
        raise _http_error(response)
    text = response.text()
    if _SSE_RE.search(text):
        payloads = [_loads(e.data) for e in iter_sse(text + "\n\n") if e.data.strip()]
        answers = [p for p in payloads if isinstance(p, dict) and not p.get("method")]
        message = answers[-1] if payloads and payloads[-1] is not None and answers else None
    else:
        message = _loads(text)
    if not isinstance(message, dict):
        raise SearchProviderError("zai", PARSE_FAILED, 500)
    _raise_for_error(message, response)
    return message


def parse_result(message: dict[str, Any], count: int) -> SearchResponse:
    """Sources from the first candidate holding a result array; the answer is the raw tool text."""
    result = message.get("result")
    if not isinstance(result, dict):
        raise SearchProviderError("zai", f"{PARSE_FAILED}: no result", 500)
    texts = [
        c["text"] for c in as_list(result.get("content")) if isinstance(c, dict) and isinstance(c.get("text"), str)
    ]
    candidates = [result, result.get("structuredContent"), result.get("data"), result.get("result")]
    candidates += [_decode(text) for text in texts]
    payload = next((c for c in candidates if isinstance(c, list) or _items(c) is not None), None)
    items = payload if isinstance(payload, list) else _items(payload) or []
    request_id = next(
        (v for k in ("request_id", "requestId", "id") if isinstance(v := as_dict(payload).get(k), str)), None
    )
    sources = [s for item in items if (s := _source(item)) is not None]
    # the raw text is the answer (usually the result JSON itself), unless it is an empty result set
    answer = None if payload is not None and not items else "\n\n".join(texts).strip() or None
    return SearchResponse(provider="zai", answer=answer, sources=tuple(sources[:count]), request_id=request_id)


def _raise_for_error(message: dict[str, Any], response: HttpResponse) -> None:
    if message.get("success") is False:
        code = message.get("code")
        text = next((v for k in ("msg", "message", "error_message") if isinstance(v := message.get(k), str)), "")
        raise SearchProviderError("zai", redact_detail(response, f"Z.AI API error ({code}): {text}"), _status(code))
    error = message.get("error")
    if error:
        code, detail = (error.get("code"), error.get("message")) if isinstance(error, dict) else (None, error)
        raise SearchProviderError("zai", redact_detail(response, f"Z.AI MCP error ({code}): {detail}"), _status(code))
    result = as_dict(message.get("result"))
    if result.get("isError") is True:
        text = "\n".join(c["text"] for c in as_list(result.get("content")) if isinstance(as_dict(c).get("text"), str))
        match = _MCP_CODE_RE.search(text)
        status = _status(match.group(1) if match else None)
        raise SearchProviderError("zai", redact_detail(response, f"Z.AI MCP tool error: {text or 'no detail'}"), status)


def _http_error(response: HttpResponse) -> SearchProviderError:
    """The shared classification (kept with Z.AI's own detail), else `Z.AI MCP error (<status>): ...`."""
    data = as_dict(_loads(response.text()))
    error = as_dict(data.get("error")) or data
    text = next((v for k in ("message", "msg", "error_message") if isinstance(v := error.get(k), str)), None)
    code = error.get("code")
    text = f"{code}: {text}" if text and code is not None else text or response.text() or status_phrase(response.status)
    detail = redact_detail(response, text)
    classified = classify_http_error("zai", response)
    message = f"{classified.message} ({detail})" if classified else f"Z.AI MCP error ({response.status}): {detail}"
    return SearchProviderError("zai", message, response.status, retry_after=retry_after_seconds(response.headers))


def _source(item: object) -> SearchSource | None:
    data = as_dict(item)
    url = _str(data.get("link")) or _str(data.get("url"))
    if url is None:
        return None
    return SearchSource(
        title=_str(data.get("title")) or url,
        url=url,
        snippet=_str(data.get("content")),
        published_date=_str(data.get("publish_date")) or _str(data.get("publishedDate")),
        author=_str(data.get("media")),
    )


def _status(code: object) -> int:
    """An HTTP-like status for a Zhipu or JSON-RPC error code (400 when unknown)."""
    try:
        number = int(str(code))
    except ValueError:
        return 400
    number = _STATUS.get(number, abs(number))
    return number if 400 <= number < 600 else 400


def _items(value: object) -> list[Any] | None:
    data = as_dict(value)
    return next((v for k in ("search_result", "results") if isinstance(v := data.get(k), list)), None)


def _decode(text: str) -> Any:
    value = _loads(text)
    return _loads(value) if isinstance(value, str) else value  # the text is sometimes double-encoded


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _str(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


PROVIDER: Final = ZAI()
