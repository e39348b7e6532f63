"""A fake api.x.ai Responses endpoint: web-search answers with annotations, and xAI's error bodies.

`POST /v1/responses` answers like Grok with the server-side `web_search` tool: `web_search_call`
items, a `message` whose `output_text` carries `url_citation` annotations, the top-level
`output_text` and `citations` (every URL met) that xAI adds, and `usage`. A bad key is 400 with
xAI's `{"code", "error"}` envelope, as the real API answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ._server import FakeServer, RecordedRequest, Reply, honour_domains

__all__ = ["RESPONSES_PATH", "FakeXAI", "bad_key_reply", "xai_body", "xai_error"]

RESPONSES_PATH = "/v1/responses"


def xai_body(
    answer: str,
    cited: Sequence[tuple[str, str, str]] = (),
    *,
    extra_urls: Sequence[str] = (),
    query: str = "query",
    model: str = "grok-4.3",
    response_id: str = "resp_0d8c1f6e-3b2a-4c5d-9e8f-7a6b5c4d3e2f",
    top_level_text: bool = True,
) -> dict[str, Any]:
    """A Responses body: `cited` are (url, title, quoted text) annotations on the answer, and the
    top-level `citations` lists them plus `extra_urls` (pages searched but not cited)."""
    annotations = [
        {
            "type": "url_citation",
            "url": url,
            "title": title,
            "start_index": 0,
            "end_index": len(answer),
            "cited_text": text,
        }
        for url, title, text in cited
    ]
    output: list[dict[str, Any]] = [
        {
            "type": "web_search_call",
            "id": "ws_4f2a9c1e",
            "status": "completed",
            "action": {"type": "search", "query": query, "sources": [{"type": "url", "url": u} for u, _, _ in cited]},
        },
        {
            "type": "message",
            "id": "msg_7b3e8d2a",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": answer, "annotations": annotations, "logprobs": []}],
        },
    ]
    body: dict[str, Any] = {
        "id": response_id,
        "object": "response",
        "created_at": 1764504000,
        "status": "completed",
        "model": model,
        "output": output,
        "citations": [u for u, _, _ in cited] + list(extra_urls),
        "usage": {
            "input_tokens": 2104,
            "output_tokens": 388,
            "total_tokens": 2492,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 120},
            "num_sources_used": len(cited) + len(extra_urls),
            "num_server_side_tools_used": 1,
        },
        "tools": [{"type": "web_search"}],
        "temperature": None,
        "max_output_tokens": None,
    }
    if top_level_text:
        body["output_text"] = answer
    return body


def xai_error(status: int, message: str, code: str = "Client specified an invalid argument", **kw: Any) -> Reply:
    """An error in xAI's own envelope `{"code": ..., "error": ...}`."""
    return Reply(status, {"code": code, "error": message}, **kw)


def bad_key_reply(key: str) -> Reply:
    """What api.x.ai answers for a wrong key: 400, with the key partly masked in the message."""
    masked = f"{key[:4]}***{key[-2:]}" if len(key) > 6 else "***"
    return xai_error(400, f"Incorrect API key provided: {masked}. You can obtain an API key from https://console.x.ai.")


class FakeXAI(FakeServer):
    """Answers POST /v1/responses with a cited answer for the posted query; checks the Bearer key."""

    provider_id = "xai"

    def __init__(self, *, keys: Iterable[str] | None = None, cited: int = 3, extra_urls: int = 2) -> None:
        super().__init__()
        self.keys = set(keys) if keys is not None else None
        self.cited = cited
        self.extra_urls = extra_urls

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method != "POST" or request.path != RESPONSES_PATH:
            return xai_error(
                404, f"No handler found for route {request.path}", code="Some requested entity was not found"
            )
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        if self.keys is not None and key not in self.keys:
            return bad_key_reply(key)
        body = request.json()
        query = next((m["content"] for m in body.get("input", []) if m.get("role") == "user"), "")
        cited = [
            (f"https://news.example{i}.com/{i}", f"Report {i} on {query}", f"Quoted passage {i}.")
            for i in range(1, self.cited + 1)
        ]
        extra = [f"https://more.example.org/page-{i}" for i in range(1, self.extra_urls + 1)]
        answer = f"Grok's answer about {query}, citing {self.cited} sources."
        reply = xai_body(answer, cited, extra_urls=extra, query=query, model=body.get("model", "grok-4.3"))
        tool: dict[str, Any] = next((t for t in body.get("tools", []) if t.get("type") == "web_search"), {})
        return Reply(200, honour_domains(reply, tool.get("allowed_domains", ()), tool.get("excluded_domains", ())))
