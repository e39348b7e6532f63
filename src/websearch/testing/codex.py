"""A fake chatgpt.com Codex backend and auth.openai.com token endpoint, on one loopback port.

`POST /backend-api/codex/responses` streams the Responses API's SSE events for a web-search turn
(created, web_search_call progress, message deltas, annotations, completed), as the real backend
does for `stream: true` (with `consulted`, the finished web_search_call item lists the pages the
search read in `action.sources`, `{"type": "url", "url"}` entries, as the Responses API sends
them); `POST /oauth/token` trades a refresh token for a new JWT access token.
Access tokens are JWTs carrying `exp` and the ChatGPT account claim, like the real ones.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._server import FakeServer, RecordedRequest, Reply, honour_domains

__all__ = [
    "CODEX_PATH",
    "TOKEN_PATH",
    "FakeCodex",
    "codex_events",
    "make_jwt",
    "sse_chunks",
    "stream_reply",
]

CODEX_PATH = "/backend-api/codex/responses"
TOKEN_PATH = "/oauth/token"
AUTH_CLAIM = "https://api.openai.com/auth"
NOT_SUPPORTED = "The '{model}' model is not supported when using Codex with a ChatGPT account."


def make_jwt(claims: Mapping[str, Any]) -> str:
    """An unsigned JWT with these claims (enough for clients that only read `exp` and claims)."""

    def part(value: Mapping[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


def sse_chunks(events: Iterable[Mapping[str, Any]]) -> list[bytes]:
    """`event: <type>` / `data: <json>` frames, numbered with `sequence_number` as the backend does."""
    return [
        f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': n})}\n\n".encode()
        for n, event in enumerate(events)
    ]


def codex_events(
    answer: str,
    citations: Sequence[tuple[str, str]] = (),
    *,
    query: str = "query",
    model: str = "gpt-5.5",
    response_id: str = "resp_68a1f0c2b7e48190a3c1d2e3f4a5b6c7",
    usage: Mapping[str, Any] | None = None,
    reasoning: Sequence[str] = (),
    deltas: Sequence[str] | None = None,
    consulted: Sequence[str | Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """The event sequence of one web-search turn: `citations` are (url, title) url_citation
    annotations; `consulted` the search's `action.sources` (a URL becomes `{"type": "url", "url"}`,
    anything else is sent as given)."""
    usage = usage or {
        "input_tokens": 8123,
        "input_tokens_details": {"cached_tokens": 1024},
        "output_tokens": 512,
        "output_tokens_details": {"reasoning_tokens": 128},
        "total_tokens": 8635,
    }
    annotations = [
        {"type": "url_citation", "start_index": 0, "end_index": len(answer), "url": url, "title": title}
        for url, title in citations
    ]
    action: dict[str, Any] = {"type": "search", "query": query, "queries": [query]}
    if consulted:
        action["sources"] = [{"type": "url", "url": s} if isinstance(s, str) else s for s in consulted]
    search = {"type": "web_search_call", "id": "ws_68a1f0c3d9f08190b1", "status": "completed", "action": action}
    message = {
        "type": "message",
        "id": "msg_68a1f0c5e2a88190c2",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": answer, "annotations": annotations, "logprobs": []}],
    }
    output: list[dict[str, Any]] = [search, message]
    if reasoning:
        summary = [{"type": "summary_text", "text": text} for text in reasoning]
        output.insert(0, {"type": "reasoning", "id": "rs_68a1f0c2f0b48190d3", "summary": summary})
    pieces = deltas if deltas is not None else [answer[i : i + 24] for i in range(0, len(answer), 24)]
    base = {
        "id": response_id,
        "object": "response",
        "created_at": 1764504000,
        "model": model,
        "output": [],
        "tool_choice": {"type": "web_search"},
        "tools": [{"type": "web_search", "search_context_size": "high"}],
    }
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**base, "status": "in_progress"}},
        {"type": "response.in_progress", "response": {**base, "status": "in_progress"}},
    ]
    for index, item in enumerate(output):
        if item["type"] == "reasoning":
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": {**item, "summary": []}}
            )
        elif item["type"] == "web_search_call":
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {"type": "web_search_call", "id": item["id"], "status": "in_progress"},
                }
            )
            for stage in ("in_progress", "searching", "completed"):
                events.append(
                    {"type": f"response.web_search_call.{stage}", "output_index": index, "item_id": item["id"]}
                )
        else:
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "content": []},
                }
            )
            events.append(
                {
                    "type": "response.content_part.added",
                    **where,
                    "part": {"type": "output_text", "text": "", "annotations": []},
                }
            )
            events += [{"type": "response.output_text.delta", **where, "delta": piece} for piece in pieces]
            events += [
                {"type": "response.output_text.annotation.added", **where, "annotation_index": i, "annotation": note}
                for i, note in enumerate(annotations)
            ]
            events.append({"type": "response.output_text.done", **where, "text": answer})
            events.append({"type": "response.content_part.done", **where, "part": item["content"][0]})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    done = {**base, "status": "completed", "output": output, "usage": dict(usage)}
    events.append({"type": "response.completed", "response": done})
    return events


def stream_reply(events: Iterable[Mapping[str, Any]], **kwargs: Any) -> Reply:
    """A 200 `text/event-stream` reply streaming these events (kwargs: chunk_delay, cut...)."""
    return Reply(200, chunks=sse_chunks(events), content_type="text/event-stream; charset=utf-8", **kwargs)


class FakeCodex(FakeServer):
    """Serves the Codex responses endpoint and the OAuth token endpoint.

    `access_tokens` are accepted (any token when None), `refresh_tokens` may be traded once each
    for a fresh access token, and only `models` are supported for the ChatGPT account. Answers
    cite `citations` and list `consulted` as the pages the search read.
    """

    provider_id = "codex"

    def __init__(
        self,
        *,
        access_tokens: Iterable[str] | None = None,
        refresh_tokens: Iterable[str] = (),
        account_id: str = "acct-7d1f2c3b",
        models: Iterable[str] = ("gpt-5.5", "gpt-5.4", "gpt-5-codex", "gpt-5"),
        answer: str = "",
        citations: Sequence[tuple[str, str]] = (),
        consulted: Sequence[str | Mapping[str, Any]] = (),
        now: float = 1796040000.0,
    ) -> None:
        super().__init__()
        self.access_tokens = set(access_tokens) if access_tokens is not None else None
        self.refresh_tokens = set(refresh_tokens)
        self.account_id = account_id
        self.models = set(models)
        self.answer = answer
        self.citations = list(citations)
        self.consulted = list(consulted)
        self.now = now
        self.issued: list[str] = []

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method == "POST" and request.path == TOKEN_PATH:
            return self._token(request)
        if request.method != "POST" or request.path != CODEX_PATH:
            return Reply(404, {"detail": "Not Found"})
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        if self.access_tokens is not None and token not in self.access_tokens:
            return Reply(
                401,
                {
                    "error": {
                        "message": "Your authentication token has expired. Please try signing in again.",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "token_expired",
                    }
                },
            )
        if request.headers.get("chatgpt-account-id") != self.account_id:
            return Reply(403, {"detail": "You do not have access to this workspace."})
        body = request.json()
        if body.get("model") not in self.models:
            return Reply(400, {"detail": NOT_SUPPORTED.format(model=body.get("model"))})
        query = body["input"][0]["content"][0]["text"]
        answer = self.answer or f"Here is what the web says about {query}, with sources."
        events = codex_events(answer, self.citations, query=query, model=body["model"], consulted=self.consulted)
        tool = next((t for t in body.get("tools", []) if isinstance(t, dict) and t.get("type") == "web_search"), {})
        return stream_reply(honour_domains(events, (tool.get("filters") or {}).get("allowed_domains", ())))

    def _token(self, request: RecordedRequest) -> Reply:
        body = request.json()
        if body.get("grant_type") != "refresh_token" or body.get("refresh_token") not in self.refresh_tokens:
            return Reply(
                401,
                {
                    "error": {
                        "message": "Your refresh token has already been used to generate a new access token. Please try signing in again.",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "refresh_token_reused",
                    }
                },
            )
        self.refresh_tokens.discard(body["refresh_token"])
        access = make_jwt(
            {
                "exp": int(self.now) + 864000,
                "iat": int(self.now),
                "n": len(self.issued) + 1,
                AUTH_CLAIM: {"chatgpt_account_id": self.account_id, "chatgpt_plan_type": "plus"},
            }
        )
        self.issued.append(access)
        if self.access_tokens is not None:
            self.access_tokens.add(access)
        id_token = make_jwt({"email": "user@example.com", AUTH_CLAIM: {"chatgpt_account_id": self.account_id}})
        refresh = f"rt-rotated-{len(self.issued)}"
        self.refresh_tokens.add(refresh)
        return Reply(
            200,
            {
                "id_token": id_token,
                "access_token": access,
                "refresh_token": refresh,
                "expires_in": 864000,
                "token_type": "Bearer",
                "scope": "openid profile email offline_access",
            },
        )
