"""Z.AI: the `web_search_prime` tool of Z.AI's remote MCP server (Streamable HTTP, JSON-RPC).

Each attempt is a three-request MCP session against https://api.z.ai/api/mcp/web_search_prime/mcp
with `Authorization: Bearer <ZAI_API_KEY or stored key>`: `initialize` (the answer's
`Mcp-Session-Id` header is echoed from then on), `notifications/initialized`, then `tools/call`.
Answers are JSON or SSE (the last `data:` event is the message). The tool's argument names have
changed over time, so three shapes are tried in order: `{query, count}`, `{search_query, count}`,
`{search_query, search_engine: "search-prime", count}`; the next one only after an error marked
`retry_variant` (a 400, JSON-RPC -32602 invalid params, or a Zhipu bad-parameter code). The
answer is the tool's raw text (usually the result JSON itself); sources come from its
`search_result`/`results` array (`link` → url, `media` → author). The richer parameters: one
include domain is `search_domain_filter` (it takes a single domain), and the ladder's start becomes
the narrowest `search_recency_filter` (oneDay, oneWeek, oneMonth, oneYear) covering it.

Errors come as HTTP statuses with Zhipu's `{"error": {"code", "message"}}`, flat
`{"success": false, "code", "msg"}` objects, JSON-RPC `error` objects or `isError` tool results
("MCP error -429: ..."); one `read` function describes them all. Zhipu's codes say the class
(1113 is quota, 1302-1305 rate limits) and, inside a 200, the status; a refused key keeps Zhipu's
own words after the usual authorization message.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._core._notices import not_applied
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchParams, SearchSource
from .._core._version import __version__
from .._core._wire import HttpRequest, HttpResponse, loads_or_none
from .._http._sse import iter_sse
from ..errors import InvalidResponse, SearchProviderError
from ._base import (
    Plan,
    Provider,
    Support,
    as_dict,
    as_list,
    bucket_notices,
    count,
    honours,
    recency_bucket,
    require_key,
)
from ._errors import ErrorEnvelope, class_for_status

if TYPE_CHECKING:
    from .._core._context import ProviderContext

URL: Final = "https://api.z.ai/api/mcp/web_search_prime/mcp"
TOOL: Final = "web_search_prime"
PROTOCOL_VERSION: Final = "2025-03-26"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 50  # the tool's documented `count` range is 1..50
PARSE_FAILED: Final = "Failed to parse Z.AI MCP response"
INITIALIZED: Final = {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}
#: Zhipu and JSON-RPC codes and the status they amount to (the class follows from it).
CODE_STATUS: Final = {
    "1000": 401,
    "1001": 401,
    "1002": 401,
    "1003": 401,
    "1004": 401,
    "1113": 402,
    "1220": 403,
    "1302": 429,
    "1303": 429,
    "1304": 429,
    "1305": 429,
    "-32601": 404,
    "-32603": 500,
}
#: Codes after which the next argument shape may work: JSON-RPC invalid params, Zhipu's bad parameters.
VARIANT_CODES: Final = frozenset({"-32602", "1210", "1213", "1214"})
_MCP_CODE_RE: Final = re.compile(r"MCP error\s*(-?\d+):?\s*")
_SSE_RE: Final = re.compile(r"^data:", re.MULTILINE)
_RECENCY: Final = {"day": "oneDay", "week": "oneWeek", "month": "oneMonth", "year": "oneYear"}


@dataclass(frozen=True, slots=True)
class Session:
    """What every MCP session of the plan sends: the URL, the key, the argument shapes in order."""

    url: str
    key: str = field(repr=False)
    variants: tuple[dict[str, Any], ...]


def read_error(data: Any) -> tuple[str | None, str | None]:
    """(code, detail) of any Z.AI error envelope: `{"error": {code, message}}` (HTTP and JSON-RPC),
    a flat `{code, msg}` object, or an `isError` tool result whose text starts "MCP error <code>:"."""
    data = as_dict(data)
    result = as_dict(data.get("result"))
    if result.get("isError") is True:
        texts = (c["text"] for c in as_list(result.get("content")) if isinstance(as_dict(c).get("text"), str))
        text = "\n".join(texts).strip()
        match = _MCP_CODE_RE.match(text)
        return (match.group(1) if match else None), (text[match.end() :] if match else text) or "no detail"
    error = data.get("error")
    if isinstance(error, str):
        return _code(data.get("code")), error.strip() or None
    body = as_dict(error) or data
    found = (v.strip() for k in ("message", "msg", "error_message") if isinstance(v := body.get(k), str))
    return _code(body.get("code")), next(found, None) or None


class ZAI(Provider):
    info = PROVIDERS["zai"]
    #: Query operators: One `site:` is its domain filter, the start a recency window; the others stay in the question as
    #: instructions.
    operators = honours(approximate="-site before filetype intitle inurl")
    supports: ClassVar[dict[str, Support]] = {
        "limit": "native",
        "num_search_results": "native",
        "recency_days": "approximate",
        "recency_hours": "approximate",
        "start_published_date": "approximate",
        "include_domains": "native",
    }
    envelope = ErrorEnvelope(
        read=read_error,
        codes={code: class_for_status(status) for code, status in CODE_STATUS.items()},
        code_status=CODE_STATUS,
        embedded_status=400,
        variant_codes=VARIANT_CODES,
        variant_statuses=frozenset({400}),  # any 400 may be the arguments' shape
        prefix="Z.AI MCP error",
        auth_detail=True,
    )

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        key = require_key(ctx, self.info)
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        f = plan.filters
        extra: dict[str, Any] = {}
        if len(f.include_domains) == 1:
            extra["search_domain_filter"] = f.include_domains[0]
        bucket = recency_bucket(f.start, plan.now) if f.start is not None else None
        if bucket is not None:
            extra["search_recency_filter"] = _RECENCY[bucket]
        applied = f"search_recency_filter={_RECENCY[bucket]} (the past {bucket})" if bucket else None
        only = "Z.AI only filters by the past day, week, month or year"
        plan.notices += bucket_notices(plan, applied, "Z.AI's longest (a year)", only)
        if len(f.include_domains) > 1:
            why = "Z.AI's search_domain_filter takes a single domain"
            plan.notices.append(not_applied(*f.domains_given(params, "include_domains"), why))
        variants = argument_variants(self.query_text(plan), plan.limit, extra)
        plan.state = Session(ctx.endpoint(self.id, URL), key, tuple(variants))
        return plan

    async def search(self, plan: Plan, ctx: ProviderContext) -> ProviderResult:
        error: SearchProviderError | None = None
        for arguments in plan.state.variants:
            try:
                return await self._session(plan, ctx, arguments)
            except SearchProviderError as exc:
                if not exc.retry_variant:
                    raise
                error = exc
        assert error is not None
        raise error

    def read_message(self, response: HttpResponse, plan: Plan) -> dict[str, Any]:
        """The JSON-RPC message of a response (JSON, or the last SSE event), or the error it carries."""
        if not response.ok:
            raise self.error(response, plan)
        text = response.text()
        if _SSE_RE.search(text):
            payloads = [loads_or_none(e.data) for e in iter_sse(text + "\n\n") if e.data.strip()]
            answers = [p for p in payloads if isinstance(p, dict) and not p.get("method")]
            message = answers[-1] if payloads and payloads[-1] is not None and answers else None
        else:
            message = loads_or_none(text)
        if not isinstance(message, dict):
            raise InvalidResponse(self.id, PARSE_FAILED, 500)
        failed = message.get("success") is False or as_dict(message.get("result")).get("isError") is True
        if failed or message.get("error"):
            code, _ = read_error(message)
            raise self.error(response, plan, status=_status(code), body=message)
        return message

    async def _session(self, plan: Plan, ctx: ProviderContext, arguments: dict[str, Any]) -> ProviderResult:
        """initialize → notifications/initialized → tools/call, echoing the session id."""
        state: Session = plan.state
        init = await ctx.send(self.id, _request(state, initialize_message()))
        self.read_message(init, plan)
        session = init.headers.get("mcp-session-id")
        await ctx.send(self.id, _request(state, INITIALIZED, session))
        call = {"name": TOOL, "arguments": arguments}
        message = {"jsonrpc": "2.0", "method": "tools/call", "params": call, "id": str(uuid.uuid4())}
        reply = await ctx.send(self.id, _request(state, message, session))
        return parse_result(self.read_message(reply, plan), plan.limit or DEFAULT_RESULTS)


def argument_variants(query: str, count: int, extra: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The argument shapes of `web_search_prime`, in the order they are tried (`extra`: the filters)."""
    return [
        {"query": query, "count": count, **(extra or {})},
        {"search_query": query, "count": count, **(extra or {})},
        {"search_query": query, "search_engine": "search-prime", "count": count, **(extra or {})},
    ]


def initialize_message() -> dict[str, Any]:
    client = {"name": "websearch", "version": __version__}
    params = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": client}
    return {"jsonrpc": "2.0", "method": "initialize", "params": params, "id": str(uuid.uuid4())}


def _request(state: Session, message: dict[str, Any], session_id: str | None = None) -> HttpRequest:
    headers = {
        "Authorization": f"Bearer {state.key}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if session_id:
        headers["Mcp-Session-Id"] = session_id
    return HttpRequest("POST", state.url, headers=headers, json=message, secrets=(state.key,))


def parse_result(message: dict[str, Any], limit: int) -> ProviderResult:
    """Sources from the first candidate holding a result array; the answer is the raw tool text."""
    result = message.get("result")
    if not isinstance(result, dict):
        raise InvalidResponse("zai", f"{PARSE_FAILED}: no result", 500)
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
    return ProviderResult(answer=answer, sources=tuple(sources[:limit]), request_id=request_id)


def _status(code: str | None) -> int:
    """The HTTP-like status of an error inside a 200: the code's (`CODE_STATUS`), else the code
    itself when it is one (MCP's "-429"), else 400."""
    if code in CODE_STATUS:
        return CODE_STATUS[code]
    try:
        number = abs(int(code or ""))
    except ValueError:
        return 400
    return number if 400 <= number < 600 else 400


def _code(value: object) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    return value.strip() or None if isinstance(value, str) else None


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


def _items(value: object) -> list[Any] | None:
    data = as_dict(value)
    return next((v for k in ("search_result", "results") if isinstance(v := data.get(k), list)), None)


def _decode(text: str) -> Any:
    value = loads_or_none(text)
    return loads_or_none(value) if isinstance(value, str) else value  # the text is sometimes double-encoded


def _str(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


PROVIDER: Final = ZAI()
