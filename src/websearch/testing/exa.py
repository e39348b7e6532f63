"""A fake Exa: POST /search like api.exa.ai and POST /mcp like the public mcp.exa.ai server.

/search speaks Exa's camelCase JSON: `x-api-key` (or a bearer token) required, `numResults`
1..100 (default 10), `contents.summary` / `text` (cut to `maxCharacters`) / `highlights` deciding
which fields each result carries, and the `{requestId, error, tag}` error envelope. It refuses
what Exa refuses: an unknown `type` or `category` (`tweet` is gone), includeDomains together with
excludeDomains, dates that are not ISO, date filters or excludeDomains with `company` / `people`,
and `people` includeDomains outside its profile domains (assumed here: `PEOPLE_DOMAINS`). An
`outputSchema` adds `output` (a synthesized answer and its grounding citations). /mcp answers a JSON-RPC `tools/call` of
`web_search_exa` as one SSE `message` event, the way Exa's streamable-HTTP server does; the tool
result is the plain-text `Title:/URL:/Published Date:/Author:/Text:` listing (`mcp_shape="text"`,
the current server) or the Exa search JSON serialised into the text block (`mcp_shape="json"`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from ._server import FakeServer, RecordedRequest, Reply, honour_domains

__all__ = [
    "FakeExa",
    "exa_error",
    "exa_output",
    "exa_result",
    "exa_search_body",
    "mcp_listing",
    "mcp_reply",
    "mcp_result",
]

SEARCH_TYPES = ("auto", "fast", "instant", "neural", "keyword", "deep-lite", "deep", "deep-reasoning")
CATEGORIES = (
    "company",
    "people",
    "publication",
    "research paper",
    "news",
    "pdf",
    "github",
    "personal site",
    "financial report",
)
PEOPLE_DOMAINS = ("linkedin.com",)
MCP_DEFAULT_RESULTS = 8
_PUBLISHED = ("2026-11-27T00:00:00.000Z", "2026-10-02T08:30:00.000Z", None, "2025-06-15", None)


def request_id(seed: str) -> str:
    """A 32-hex request id like Exa's, stable for a given seed."""
    return hashlib.md5(seed.encode()).hexdigest()  # an id, not a secret


def exa_result(
    i: int,
    query: str,
    *,
    summary: bool = True,
    text: bool = False,
    highlights: bool = False,
    max_characters: int | None = None,
) -> dict[str, Any]:
    """Result `i` (1-based) as Exa returns it; optional fields vary with `i` as they do upstream."""
    slug = query.lower().replace(" ", "-")
    url = f"https://www.example{i % 4}.com/articles/{slug}-{i}"
    result: dict[str, Any] = {"id": url, "url": url, "title": f"{query.title()}: part {i}", "score": 0.4 - i / 100}
    if i % 5 == 4:
        result["title"] = ""  # Exa sends "" for pages without a title
    published = _PUBLISHED[(i - 1) % len(_PUBLISHED)]
    if published is not None:
        result["publishedDate"] = published
    if i % 2 == 1:
        result["author"] = f"Author {i}"
    result["favicon"] = f"https://www.example{i % 4}.com/favicon.ico"
    if text:
        result["text"] = f"{query} — part {i}. Full page text with details, examples and caveats."[:max_characters]
    if highlights:
        result["highlights"] = [f"{query} highlight {i}a.", f"{query} highlight {i}b."]
        result["highlightScores"] = [0.5, 0.4]
    if summary:
        result["summary"] = f"Part {i} explains how {query} works and when to use it."
    return result


def exa_search_body(query: str, n: int = 10, *, search_type: str = "auto", **contents: Any) -> dict[str, Any]:
    """A 200 /search body with `n` results (`contents` options as in `exa_result`)."""
    return {
        "requestId": request_id(f"{query}/{n}"),
        "resolvedSearchType": "neural" if search_type == "auto" else search_type,
        "searchType": search_type,
        "results": [exa_result(i, query, **contents) for i in range(1, n + 1)],
        "costDollars": {"total": 0.005 + 0.001 * n, "search": {"neural": 0.005}, "contents": {"summary": 0.001 * n}},
        "searchTime": 412.7,
    }


def exa_output(query: str, results: list[dict[str, Any]], schema_type: str = "text") -> dict[str, Any]:
    """The `output` of an `outputSchema` search: an answer (a string, or an object for an object
    schema) grounded in the first two results."""
    citations = [{"url": r["url"], "title": r.get("title") or r["url"]} for r in results[:2]]
    answer = f"{query.capitalize()} is covered by {len(results)} sources; the first two agree."
    if schema_type == "object":
        return {
            "content": {"answer_text": answer},
            "grounding": [{"field": "answer_text", "citations": citations, "confidence": "high"}],
        }
    return {"content": answer, "grounding": [{"field": "content", "citations": citations, "confidence": "high"}]}


def exa_error(status: int, tag: str, message: str, *, headers: Mapping[str, str] | None = None) -> Reply:
    """An error in Exa's envelope, e.g. `exa_error(402, "NO_MORE_CREDITS", "...")`."""
    body = {"requestId": request_id(f"{status}/{tag}"), "error": message, "tag": tag}
    return Reply(status, body, headers=dict(headers or {}))


def mcp_listing(results: list[dict[str, Any]]) -> str:
    """The plain-text listing the MCP tool returns (Exa's `context` string)."""
    blocks = []
    for r in results:
        lines = [f"Title: {r.get('title', '')}", f"URL: {r['url']}"]
        if r.get("publishedDate"):
            lines.append(f"Published Date: {r['publishedDate']}")
        if r.get("author"):
            lines.append(f"Author: {r['author']}")
        lines.append(f"Text: {r.get('text') or r.get('summary') or ''}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def mcp_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    """A tools/call result with one text block."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


def mcp_reply(rpc_id: Any, result: Any = None, *, error: Mapping[str, Any] | None = None, sse: bool = True) -> Reply:
    """A JSON-RPC answer, as an SSE `message` event (default) or plain JSON."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rpc_id}
    if error is not None:
        message["error"] = dict(error)
    else:
        message["result"] = result
    if not sse:
        return Reply(200, message)
    return Reply(200, f"event: message\ndata: {json.dumps(message)}\n\n", content_type="text/event-stream")


def _refused_filters(body: dict[str, Any]) -> Reply | None:
    """Exa's 400 for a category, domain or date filter it does not accept; None when all are fine."""
    category = body.get("category")
    if category is not None and category not in CATEGORIES:
        return exa_error(400, "INVALID_REQUEST_BODY", f"category: Invalid enum value '{category}'")
    include, exclude = body.get("includeDomains"), body.get("excludeDomains")
    if include and exclude:
        return exa_error(400, "INVALID_REQUEST", "includeDomains and excludeDomains cannot be used together")
    for name in ("startPublishedDate", "endPublishedDate"):
        value = body.get(name)
        if value is not None and not _iso(value):
            return exa_error(400, "INVALID_REQUEST_BODY", f"{name}: Invalid ISO 8601 date {value!r}")
    if category in ("company", "people"):
        if body.get("startPublishedDate") or body.get("endPublishedDate") or exclude:
            message = f"category {category} does not support date filters or excludeDomains"
            return exa_error(400, "INVALID_REQUEST", message)
        if category == "people" and include and not set(include) <= set(PEOPLE_DOMAINS):
            message = f"includeDomains for category people must be among: {', '.join(PEOPLE_DOMAINS)}"
            return exa_error(400, "INVALID_REQUEST", message)
    return None


def _iso(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


class FakeExa(FakeServer):
    """api.exa.ai/search and mcp.exa.ai/mcp on one loopback port (both hosts share one base URL).

    `api_key`, when set, is the only key /search accepts; `available` caps how many results exist.
    """

    provider_id = "exa"

    def __init__(
        self, *, api_key: str | None = None, mcp_shape: Literal["text", "json"] = "text", available: int = 40
    ) -> None:
        super().__init__()
        self.api_key = api_key
        self.mcp_shape = mcp_shape
        self.available = available

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.path == "/search":
            return self._search(request)
        if request.path == "/mcp":
            return self._mcp(request)
        return exa_error(404, "NOT_FOUND", f"Cannot {request.method} {request.path}")

    def _search(self, request: RecordedRequest) -> Reply:
        if request.method != "POST":
            return exa_error(405, "METHOD_NOT_ALLOWED", "Use POST for /search")
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        key = request.headers.get("x-api-key") or bearer
        if not key or (self.api_key is not None and key != self.api_key):
            return exa_error(401, "INVALID_API_KEY", "Invalid or missing API key")
        try:
            body = request.json()
        except ValueError:
            return exa_error(400, "INVALID_REQUEST_BODY", "Request body is not valid JSON")
        query = body.get("query") if isinstance(body, dict) else None
        if not isinstance(query, str) or not query.strip():
            return exa_error(400, "INVALID_REQUEST_BODY", "query: Required")
        n = body.get("numResults", 10)
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 100:
            return exa_error(400, "INVALID_NUM_RESULTS", f"numResults must be between 1 and 100, got {n!r}")
        search_type = body.get("type", "auto")
        if search_type not in SEARCH_TYPES:
            return exa_error(400, "INVALID_REQUEST_BODY", f"type: Invalid enum value '{search_type}'")
        refused = _refused_filters(body)
        if refused is not None:
            return refused
        contents = body.get("contents") or {}
        flags: dict[str, Any] = {name: bool(contents.get(name)) for name in ("summary", "text", "highlights")}
        if isinstance(contents.get("text"), dict):
            flags["max_characters"] = contents["text"].get("maxCharacters")
        reply = exa_search_body(query, min(n, self.available), search_type=search_type, **flags)
        reply = honour_domains(reply, body.get("includeDomains") or (), body.get("excludeDomains") or ())
        schema = body.get("outputSchema")
        if schema is not None:
            if not isinstance(schema, dict) or schema.get("type") not in ("text", "object"):
                return exa_error(400, "INVALID_JSON_SCHEMA", "outputSchema.type must be text or object")
            reply["output"] = exa_output(query, reply["results"], schema["type"])
        return Reply(200, reply)

    def _mcp(self, request: RecordedRequest) -> Reply:
        accept = request.headers.get("accept", "")
        if "application/json" not in accept or "text/event-stream" not in accept:
            message = "Not Acceptable: Client must accept both application/json and text/event-stream"
            return Reply(406, {"jsonrpc": "2.0", "error": {"code": -32000, "message": message}, "id": None})
        try:
            rpc = request.json()
        except ValueError:
            return Reply(400, {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": None})
        rpc_id = rpc.get("id")
        if rpc.get("method") != "tools/call":
            return mcp_reply(rpc_id, error={"code": -32601, "message": f"Method not found: {rpc.get('method')}"})
        params = rpc.get("params") or {}
        if params.get("name") != "web_search_exa":
            return mcp_reply(rpc_id, error={"code": -32602, "message": f"Tool {params.get('name')} not found"})
        arguments = params.get("arguments") or {}
        query = arguments.get("query")
        if not isinstance(query, str) or not query:
            return mcp_reply(rpc_id, error={"code": -32602, "message": "Invalid arguments for tool web_search_exa"})
        n = min(int(arguments.get("numResults") or MCP_DEFAULT_RESULTS), self.available)
        body = exa_search_body(query, n, text=True, summary=False)
        text = json.dumps(body) if self.mcp_shape == "json" else mcp_listing(body["results"])
        return mcp_reply(rpc_id, mcp_result(text))
