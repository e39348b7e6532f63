"""A fake Z.AI `web_search_prime` MCP server (POST /api/mcp/web_search_prime/mcp, Streamable HTTP).

It keeps MCP sessions the way the real server does: `initialize` answers with a `Mcp-Session-Id`
header, `notifications/initialized` gets 202, and `tools/call` needs a known session id. Answers
are one SSE `message` event (or plain JSON with `sse=False`). The tool requires `search_query`
(not `query`; `query_key` changes that) as the live server does, and answers a missing argument
with an `isError` result like the TypeScript MCP SDK's validation error; `require_engine=True`
also requires `search_engine: "search-prime"`. The tool text is the result array as JSON
(`shape="array"`), double-encoded (`"double"`), or a Zhipu REST object with `search_result` and
`request_id` (`"object"`). A bad key is HTTP 401 with Zhipu's `{"error": {"code", "message"}}`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from ._server import FakeServer, RecordedRequest, Reply, honour_domains

__all__ = ["FakeZai", "zai_error", "zai_reply", "zai_result", "zai_tool_result"]

MCP_PATH = "/api/mcp/web_search_prime/mcp"
_DATES = ("2025-09-18", "", "2026-11-27", "2024-02-29 10:00:00")


def zai_result(i: int, query: str) -> dict[str, Any]:
    """Result `i` (1-based) as web_search_prime returns it; `media` and `publish_date` may be ""."""
    slug = query.lower().replace(" ", "-")
    return {
        "title": f"{query.title()} — report {i}",
        "content": f"Report {i} on {query}: what changed and why it matters.",
        "link": f"https://news{i % 3}.example.cn/{slug}/{i}.html",
        "media": f"Example News {i}" if i % 2 else "",
        "icon": f"https://news{i % 3}.example.cn/favicon.ico",
        "refer": f"ref_{i}",
        "publish_date": _DATES[(i - 1) % len(_DATES)],
    }


def zai_tool_result(
    query: str, n: int, shape: Literal["array", "double", "object"] = "array", domain: str | None = None
) -> dict[str, Any]:
    """A successful `tools/call` result with `n` results serialised in the tool's text block
    (on `domain` when the call's `search_domain_filter` names one)."""
    results = honour_domains([zai_result(i, query) for i in range(1, n + 1)], (domain,) if domain else ())
    if shape == "object":
        seed = hashlib.sha256(query.encode()).hexdigest()
        text = json.dumps(
            {"id": seed[:20], "created": 1764500000, "request_id": "req-" + seed[:16], "search_result": results},
            ensure_ascii=False,
        )
    else:
        text = json.dumps(results, ensure_ascii=False)
        text = json.dumps(text) if shape == "double" else text
    return {"content": [{"type": "text", "text": text}]}


def zai_reply(
    message: dict[str, Any], *, sse: bool = True, status: int = 200, headers: dict[str, str] | None = None
) -> Reply:
    """A JSON-RPC message as one SSE `message` event, or as a JSON body."""
    if not sse:
        return Reply(status, message, headers=headers or {})
    body = f"event: message\ndata: {json.dumps(message, ensure_ascii=False)}\n\n"
    return Reply(status, body, headers=headers or {}, content_type="text/event-stream")


def zai_error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Reply:
    """Zhipu's HTTP error envelope, e.g. `zai_error(401, "1001", "Authorization Token missing")`."""
    return Reply(status, {"error": {"code": code, "message": message}}, headers=headers or {})


class FakeZai(FakeServer):
    """Z.AI's `web_search_prime` MCP server: sessions, SSE or JSON answers, the tool's own errors."""

    provider_id = "zai"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        query_key: str = "search_query",
        sse: bool = True,
        require_engine: bool = False,
        shape: Literal["array", "double", "object"] = "array",
    ) -> None:
        super().__init__()
        self.api_key, self.query_key, self.sse, self.require_engine = api_key, query_key, sse, require_engine
        self.shape = shape
        self.sessions: dict[str, bool] = {}  # session id -> initialized notification seen

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method != "POST" or request.path != MCP_PATH:
            return Reply(404, {"error": {"code": "404", "message": "Not Found"}})
        auth = request.headers.get("authorization", "")
        if not auth.startswith("Bearer ") or (self.api_key is not None and auth != f"Bearer {self.api_key}"):
            return zai_error(401, "1001", "Authorization Token missing or invalid")
        try:
            message = request.json()
        except ValueError:
            return self._rpc(None, error=(-32700, "Parse error"), status=400)
        method, rpc_id = message.get("method"), message.get("id")
        if method == "initialize":
            session = hashlib.sha256(request.body).hexdigest()[:32]
            self.sessions[session] = False
            result = {
                "protocolVersion": "2025-03-26",
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "web-search-prime", "version": "1.0.0"},
            }
            return self._rpc(rpc_id, result=result, headers={"Mcp-Session-Id": session})
        session = request.headers.get("mcp-session-id", "")
        if session not in self.sessions:
            return self._rpc(None, error=(-32000, "Bad Request: No valid session ID provided"), status=400)
        if method == "notifications/initialized":
            self.sessions[session] = True
            return Reply(202, b"")
        if method != "tools/call":
            return self._rpc(rpc_id, error=(-32601, f"Method not found: {method}"))
        return self._rpc(rpc_id, result=self._call(message.get("params") or {}))

    def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("name") != "web_search_prime":
            return _tool_error(f"MCP error -32602: Tool {params.get('name')} not found")
        args = params.get("arguments") or {}
        missing = [k for k in (self.query_key,) + (("search_engine",) * self.require_engine) if not args.get(k)]
        if missing:
            issues = [
                {
                    "code": "invalid_type",
                    "expected": "string",
                    "received": "undefined",
                    "path": [k],
                    "message": "Required",
                }
                for k in missing
            ]
            return _tool_error(f"MCP error -32602: Invalid arguments for tool web_search_prime: {json.dumps(issues)}")
        count = args.get("count", 10)
        if not isinstance(count, int) or not 1 <= count <= 50:
            return _tool_error("MCP error -32602: count must be between 1 and 50")
        domain = args.get("search_domain_filter")
        return zai_tool_result(
            str(args[self.query_key]), count, self.shape, domain if isinstance(domain, str) else None
        )

    def _rpc(
        self,
        rpc_id: Any,
        *,
        result: Any = None,
        error: tuple[int, str] | None = None,
        status: int = 200,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rpc_id}
        message |= {"error": {"code": error[0], "message": error[1]}} if error else {"result": result}
        return zai_reply(message, sse=self.sse and status == 200, status=status, headers=headers)


def _tool_error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}
