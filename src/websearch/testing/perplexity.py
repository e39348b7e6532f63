"""A fake Perplexity: Sonar chat completions (streamed or whole) and the perplexity.ai ask endpoint.

One server answers the three hosts the provider talks to (they share `WEBSEARCH_PERPLEXITY_BASE_URL`):
`POST /chat/completions` (api.perplexity.ai), `POST /api/v1/chat/completions` (OpenRouter, model
`perplexity/sonar-pro`) and `POST /rest/sse/perplexity_ask`. Chat streams are OpenAI-style chunks with
`citations` / `search_results` / `related_questions` / `usage` on the last one, then `data: [DONE]`;
errors use the OpenAI-like `{"error": {"message", "type", "code"}}` envelope. The ask endpoint is
undocumented: its snapshots follow the shapes the upstream client parses (blocks with
`markdown_block` chunks and offsets, a `web_results` block, `final` / `COMPLETED`), and anonymous
requests get the `text` payload form. `disconnects` counts streams the client closed early.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from ._server import FakeServer, RecordedRequest, Reply, honour_domains

__all__ = [
    "ANSWER",
    "RELATED",
    "FakePerplexity",
    "anonymous_chunks",
    "api_error",
    "ask_chunks",
    "chat_chunks",
    "search_results",
    "sse",
]

ANSWER = "QUIC is a UDP-based transport [1] that folds the TLS 1.3 handshake into its own [2]."
RELATED = ["What is 0-RTT in QUIC?", "How does HTTP/3 use QUIC?", "Is QUIC faster than TCP?"]
_MODELS = {"sonar", "sonar-pro", "sonar-reasoning", "sonar-reasoning-pro", "sonar-deep-research"}
_RECENCY = {"hour", "day", "week", "month", "year"}
_DATES = ("2021-05-27", "2026-11-02", None, "2025-03-14T09:30:00Z")


def sse(*events: Any) -> list[bytes]:
    """Each event (a JSON value, or a raw string such as "[DONE]") as one `data:` frame."""
    return [f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n".encode() for e in events]


def search_results(n: int, query: str = "quic") -> list[dict[str, Any]]:
    """`search_results` entries as Sonar sends them (`date` may be null)."""
    return [
        {
            "title": f"{query.title()} explained, part {i}",
            "url": f"https://docs{i}.example.org/{query}/{i}",
            "date": _DATES[(i - 1) % len(_DATES)],
            "last_updated": "2026-11-20",
            "snippet": f"Snippet {i} about {query}.",
            "source": "web",
        }
        for i in range(1, n + 1)
    ]


def api_error(status: int, message: str, type_: str) -> Reply:
    """The OpenAI-like error envelope Perplexity uses."""
    return Reply(status, {"error": {"message": message, "type": type_, "code": status}})


def chat_chunks(
    answer: str = ANSWER,
    results: Sequence[dict[str, Any]] = (),
    *,
    model: str = "sonar-pro",
    request_id: str = "3c2a8f1e-7d1b-4c0e-9f44-5a2b8e61d0c9",
    related: Sequence[str] = RELATED,
) -> list[bytes]:
    """A streamed chat completion: the answer in three deltas, metadata on the finishing chunk, then usage."""
    base = {"id": request_id, "model": model, "created": 1796040000, "object": "chat.completion.chunk"}
    thirds = [
        answer[: len(answer) // 3],
        answer[len(answer) // 3 : 2 * len(answer) // 3],
        answer[2 * len(answer) // 3 :],
    ]
    deltas = [{"role": "assistant", "content": thirds[0]}, {"content": thirds[1]}, {"content": thirds[2]}]
    chunks: list[Any] = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    final = {
        **base,
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "citations": [r["url"] for r in results],
        "search_results": list(results),
    }
    if related:
        final["related_questions"] = list(related)
    usage = {
        "prompt_tokens": 12,
        "completion_tokens": 80,
        "total_tokens": 92,
        "search_context_size": "high",
        "citation_tokens": 1500,
        "num_search_queries": 1,
    }
    return sse(*chunks, final, {**base, "choices": [], "usage": usage}, "[DONE]")


def ask_chunks(
    answer: str = ANSWER,
    results: Sequence[dict[str, Any]] = (),
    *,
    request_id: str = "req-ask-1",
    model: str = "pplx_pro",
) -> list[bytes]:
    """A logged-in ask stream: web results, the answer in chunks (the second event resumes at offset 1),
    then the final COMPLETED snapshot."""
    words = answer.split(" ")
    first, rest = words[0] + " ", [w + " " for w in words[1:-1]] + words[-1:]
    web_results = [
        {"name": r["title"], "url": r["url"], "snippet": r.get("snippet"), "timestamp": r.get("date")} for r in results
    ]
    return sse(
        {
            "status": "PENDING",
            "uuid": request_id,
            "display_model": model,
            "final": False,
            "blocks": [{"intended_usage": "web_results", "web_result_block": {"web_results": web_results}}],
        },
        {
            "status": "PENDING",
            "blocks": [
                {"intended_usage": "ask_text", "markdown_block": {"chunks": [first, "XX"], "chunk_starting_offset": 0}}
            ],
        },
        {
            "status": "PENDING",
            "blocks": [{"intended_usage": "ask_text", "markdown_block": {"chunks": rest, "chunk_starting_offset": 1}}],
        },
        {
            "status": "COMPLETED",
            "final": True,
            "uuid": request_id,
            "display_model": model,
            "blocks": [{"intended_usage": "ask_text", "markdown_block": {"progress": "DONE"}}],
        },
    )


def anonymous_chunks(answer: str = ANSWER, results: Sequence[dict[str, Any]] = ()) -> list[bytes]:
    """An anonymous ask stream: the steps JSON in `text`, the answer payload JSON inside its FINAL step."""
    web_results = [
        {"name": r["title"], "url": r["url"], "snippet": r.get("snippet"), "timestamp": r.get("date")} for r in results
    ]
    payload = {
        "answer": answer,
        "web_results": web_results,
        "chunks": [],
        "structured_answer": [{"type": "markdown", "text": answer}],
    }
    steps = [
        {"step_type": "INITIAL_QUERY", "content": {"query": "q"}},
        {"step_type": "SEARCH_RESULTS", "content": {"web_results": web_results}},
        {"step_type": "FINAL", "content": {"answer": json.dumps(payload)}},
    ]
    return sse(
        {"status": "PENDING", "text": json.dumps(steps[:1]), "display_model": "turbo", "uuid": "req-anon"},
        {"status": "COMPLETED", "final": True, "text": json.dumps(steps), "display_model": "turbo", "uuid": "req-anon"},
    )


class FakePerplexity(FakeServer):
    """Answers like api.perplexity.ai, OpenRouter's chat endpoint and perplexity.ai's ask endpoint.

    `api_keys`, when given, are the only bearer keys accepted (401 otherwise). `n_results` caps the
    search results served (the request's `num_search_results` caps them too).
    """

    provider_id = "perplexity"

    def __init__(self, api_keys: Collection[str] | None = None, n_results: int = 30) -> None:
        super().__init__()
        self.api_keys = api_keys
        self.n_results = n_results

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method != "POST":
            return api_error(405, "Method Not Allowed", "invalid_request_error")
        if request.path in ("/chat/completions", "/api/v1/chat/completions"):
            return self._chat(request, openrouter=request.path.startswith("/api/"))
        if request.path == "/rest/sse/perplexity_ask":
            return self._ask(request)
        return api_error(404, "Not Found", "not_found")

    def _chat(self, request: RecordedRequest, *, openrouter: bool) -> Reply:
        auth = request.headers.get("authorization", "")
        if not auth.startswith("Bearer ") or (self.api_keys is not None and auth[7:] not in self.api_keys):
            return api_error(401, "Invalid API key provided.", "invalid_api_key")
        try:
            body = request.json()
        except ValueError:
            return api_error(400, "Invalid JSON body", "invalid_request_error")
        model = str(body.get("model", ""))
        if model.removeprefix("perplexity/" if openrouter else "") not in _MODELS:
            return api_error(
                400, f"Invalid model '{model}'. Permitted models can be found in the documentation.", "invalid_model"
            )
        if body.get("search_recency_filter", "day") not in _RECENCY:
            return api_error(
                400, "search_recency_filter must be one of hour, day, week, month, year", "invalid_parameter"
            )
        user = [m["content"] for m in body.get("messages", []) if m.get("role") == "user"]
        query = user[-1] if user else ""
        results = search_results(min(int(body.get("num_search_results", 10)), self.n_results), query.split(" ")[0])
        domains = body.get("search_domain_filter") or []
        allow = [d for d in domains if not d.startswith("-")]
        results = honour_domains(results, allow, [d[1:] for d in domains if d.startswith("-")])
        rid = f"gen-{len(self.requests):04d}" if openrouter else f"pplx-{len(self.requests):04d}"
        if body.get("stream"):
            return Reply(200, chunks=chat_chunks(ANSWER, results, model=model, request_id=rid))
        message = {"role": "assistant", "content": ANSWER}
        return Reply(
            200,
            {
                "id": rid,
                "model": model,
                "object": "chat.completion",
                "created": 1796040000,
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                "citations": [r["url"] for r in results],
                "search_results": results,
                "related_questions": RELATED,
                "usage": {"prompt_tokens": 12, "completion_tokens": 80, "total_tokens": 92},
            },
        )

    def _ask(self, request: RecordedRequest) -> Reply:
        try:
            body = request.json()
        except ValueError:
            return Reply(400, {"detail": "Invalid JSON"})
        if not body.get("query_str") or body.get("params", {}).get("query_str") != body["query_str"]:
            return Reply(400, {"detail": "query_str is required"})
        results = search_results(min(8, self.n_results), body["query_str"].split(" ")[0])
        if "cookie" in request.headers:
            return Reply(200, chunks=ask_chunks(ANSWER, results, request_id=f"ask-{len(self.requests):04d}"))
        return Reply(200, chunks=anonymous_chunks(ANSWER, results))
