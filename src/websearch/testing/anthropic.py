"""A fake api.anthropic.com: POST /v1/messages with the `web_search` server tool, and the OAuth
token endpoint (POST /v1/oauth/token, console.anthropic.com's path).

Messages are answered the way the real API answers a web-search turn: a short text preamble, a
`server_tool_use` block, a `web_search_tool_result` with `n` results (`page_age` relative, absolute
or null), then the answer split into text blocks at each `web_search_result_location` citation,
usage with `server_tool_use.web_search_requests`, and a `request-id` header. Errors use the
`{"type":"error","error":{"type","message"},"request_id"}` envelope.
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Mapping
from typing import Any

from ._server import FakeServer, RecordedRequest, Reply, honour_domains

__all__ = ["FakeAnthropic", "anthropic_error", "anthropic_message", "anthropic_result", "anthropic_turn"]

PAGE_AGES = ("2 days ago", "April 30, 2025", None, "3 weeks ago", "5 hours ago")


def _id(prefix: str, seed: str) -> str:
    return prefix + hashlib.sha256(seed.encode()).hexdigest()[:24]


def anthropic_result(i: int, query: str) -> dict[str, Any]:
    """Search result `i` (1-based) as a `web_search_result` block."""
    slug = query.lower().replace(" ", "-")
    return {
        "type": "web_search_result",
        "url": f"https://www.example{i % 3}.org/{slug}/{i}",
        "title": f"{query.title()} — source {i}",
        "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1m" + "x" * 40,
        "page_age": PAGE_AGES[(i - 1) % len(PAGE_AGES)],
    }


def anthropic_message(query: str, model: str = "claude-haiku-4-5", n: int = 5) -> dict[str, Any]:
    """A 200 Messages API body for one web-search turn with `n` results and two cited passages."""
    tool_id = _id("srvtoolu_01", query)
    results = [anthropic_result(i, query) for i in range(1, n + 1)]
    content: list[dict[str, Any]] = [
        {"type": "text", "text": f"I'll search for {query}."},
        {"type": "server_tool_use", "id": tool_id, "name": "web_search", "input": {"query": query}},
        {"type": "web_search_tool_result", "tool_use_id": tool_id, "content": results},
        {"type": "text", "text": "Based on the search results, "},
    ]
    for r in results[:2]:
        cite = _citation(r, query)
        content.append({"type": "text", "text": f"{r['title']} covers {query}.", "citations": [cite]})
        content.append({"type": "text", "text": " "})
    content.append({"type": "text", "text": "Check the release notes for details."})
    return {
        "id": _id("msg_01", query),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 6039,
            "output_tokens": 931,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "server_tool_use": {"web_search_requests": 1, "web_fetch_requests": 0},
        },
    }


def anthropic_turn(query: str, pauses: int, model: str = "claude-haiku-4-5", n: int = 3) -> list[dict[str, Any]]:
    """The replies of one turn that pauses `pauses` times, then finishes.

    Paused reply `k` opens with the results of the search the previous one left pending, says
    what it does, runs search `2k` (with results) and starts search `2k+1`, whose results open the
    next reply; it stops with `pause_turn`. Search `j` returns results `2j+1 .. 2j+n`, so
    consecutive searches share a URL. The finished reply cites the first result of the first and
    of the last search. With no pause this is `[anthropic_message(query, model, n)]`.
    """
    if pauses <= 0:
        return [anthropic_message(query, model, n)]
    searches = [
        (
            _id("srvtoolu_01", f"{query}/{j}"),
            f"{query} part {j + 1}",
            [anthropic_result(i, query) for i in range(2 * j + 1, 2 * j + 1 + n)],
        )
        for j in range(2 * pauses)
    ]

    def call(j: int) -> dict[str, Any]:
        tool_id, search, _ = searches[j]
        return {"type": "server_tool_use", "id": tool_id, "name": "web_search", "input": {"query": search}}

    def results(j: int) -> dict[str, Any]:
        return {"type": "web_search_tool_result", "tool_use_id": searches[j][0], "content": searches[j][2]}

    replies: list[dict[str, Any]] = []
    for k in range(pauses):
        opening = [results(2 * k - 1)] if k else []
        content = [*opening, {"type": "text", "text": f"Searching for {query}, step {k + 1}."}]
        content += [call(2 * k), results(2 * k), {"type": "text", "text": "Searching further."}, call(2 * k + 1)]
        replies.append(_message(f"{query}/pause/{k}", model, content, "pause_turn", searches=2))
    content = [results(2 * pauses - 1), {"type": "text", "text": "Based on the search results, "}]
    for r in (searches[0][2][0], searches[-1][2][0]):
        cite = _citation(r, query)
        content += [
            {"type": "text", "text": f"{r['title']} covers {query}.", "citations": [cite]},
            {"type": "text", "text": " "},
        ]
    content.append({"type": "text", "text": "Check the release notes for details."})
    replies.append(_message(f"{query}/final", model, content, "end_turn", searches=0))
    return replies


def _message(seed: str, model: str, content: list[dict[str, Any]], stop: str, searches: int) -> dict[str, Any]:
    return {
        "id": _id("msg_01", seed),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 2000,
            "output_tokens": 150,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "server_tool_use": {"web_search_requests": searches, "web_fetch_requests": 0},
        },
    }


def anthropic_error(status: int, kind: str, message: str, headers: Mapping[str, str] | None = None) -> Reply:
    """An error in Anthropic's envelope, e.g. `anthropic_error(429, "rate_limit_error", "...")`."""
    request_id = _id("req_011", message)
    body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": request_id}
    return Reply(status, body, headers={"request-id": request_id, **(headers or {})})


class FakeAnthropic(FakeServer):
    """Answers /v1/messages (any path prefix, for gateways) and /v1/oauth/token.

    `refresh_tokens` are the refresh tokens the token endpoint accepts; each refresh issues
    `sk-ant-oat01-fresh-<n>` and rotates the refresh token to `sk-ant-ort01-next-<n>`.
    """

    provider_id = "anthropic"

    def __init__(
        self, n: int = 5, refresh_tokens: tuple[str, ...] = ("sk-ant-ort01-refresh-1",), pauses: int = 0
    ) -> None:
        super().__init__()
        self.n = n
        self.pauses = pauses
        self.refresh_tokens = set(refresh_tokens)
        self.refreshes = 0

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method == "POST" and request.path.endswith("/v1/oauth/token"):
            return self._token(request)
        if request.method != "POST" or not request.path.endswith("/v1/messages"):
            return anthropic_error(404, "not_found_error", "Not found")
        auth = request.headers.get("authorization", "")
        if not request.headers.get("x-api-key") and not auth.startswith("Bearer "):
            return anthropic_error(401, "authentication_error", "x-api-key header is required")
        if "anthropic-version" not in request.headers:
            return anthropic_error(400, "invalid_request_error", "anthropic-version: header is required")
        try:
            body = request.json()
            model, messages = str(body["model"]), list(body["messages"])
            query = str(messages[0]["content"])
            int(body["max_tokens"])
        except (ValueError, KeyError, IndexError, TypeError):
            return anthropic_error(400, "invalid_request_error", "messages: field required")
        if not model.startswith("claude-"):
            return anthropic_error(404, "not_found_error", f"model: {model}")
        turn = anthropic_turn(query, self.pauses, model, self.n) if self.pauses else None
        step = self._step(messages, turn or [])
        if step is None:
            return anthropic_error(
                400, "invalid_request_error", "messages: the assistant's content does not continue the turn"
            )
        message = turn[step] if turn else anthropic_message(query, model, self.n)
        tool = next((t for t in body.get("tools", []) if isinstance(t, dict) and t.get("name") == "web_search"), {})
        message = honour_domains(message, tool.get("allowed_domains", ()), tool.get("blocked_domains", ()))
        return Reply(200, message, headers={"request-id": _id("req_011", request.body.decode())})

    def _step(self, messages: list[Any], turn: list[dict[str, Any]]) -> int | None:
        """Which reply of the turn the conversation asks for: 0 for the query alone, `k` when the
        assistant's message is the content of the first `k` paused replies, as returned."""
        if len(messages) == 1:
            return 0
        last = messages[-1] if len(messages) == 2 and isinstance(messages[-1], dict) else {}
        if last.get("role") != "assistant":
            return None
        paused: list[Any] = []
        for k, reply in enumerate(turn[:-1], start=1):
            paused += reply["content"]
            if last.get("content") == paused:
                return k
        return None

    def _token(self, request: RecordedRequest) -> Reply:
        try:
            body = request.json()
        except ValueError:
            return Reply(400, {"error": "invalid_request", "error_description": "Invalid request format"})
        if body.get("grant_type") != "refresh_token" or not body.get("client_id"):
            return Reply(400, {"error": "invalid_request", "error_description": "Invalid request format"})
        if body.get("refresh_token") not in self.refresh_tokens:
            return Reply(400, {"error": "invalid_grant", "error_description": "Refresh token not found or invalid"})
        self.refreshes += 1
        n = self.refreshes
        self.refresh_tokens.add(f"sk-ant-ort01-next-{n}")
        return Reply(
            200,
            {
                "token_type": "Bearer",
                "access_token": f"sk-ant-oat01-fresh-{n}",
                "expires_in": 28800,
                "refresh_token": f"sk-ant-ort01-next-{n}",
                "scope": "user:inference user:profile",
            },
        )


def _citation(result: Mapping[str, Any], query: str) -> dict[str, Any]:
    """A text block's citation of `result`, its `cited_text` HTML-escaped as Anthropic's are."""
    return {
        "type": "web_search_result_location",
        "url": result["url"],
        "title": result["title"],
        "encrypted_index": "Eo8BCioIAhgBIiQy",
        "cited_text": html.escape(f"{result['title']} explains {query} in detail."),
    }
