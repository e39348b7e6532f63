"""A fake Gemini: the Developer API and Cloud Code `streamGenerateContent` over SSE, `loadCodeAssist`
and Google's OAuth token endpoint, with Google's error envelopes.

Streams are shaped like the real ones: `data: {GenerateContentResponse}\\r\\n\\r\\n` with no terminator,
text spread over several chunks, and `groundingMetadata`, full `usageMetadata` and `finishReason` on
the last chunk only. Cloud Code wraps each chunk as `{"response": ..., "traceId": ...}`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from ._server import FakeServer, RecordedRequest, Reply

__all__ = [
    "FakeGemini",
    "api_key_invalid",
    "google_error",
    "grounded_chunks",
    "grounding_uri",
    "quota_exhausted",
    "sse_body",
    "stream_reply",
]

RESPONSE_ID = "t1xKaOGgCpWJ1dkP7bWj0Q0"
TRACE_ID = "5c1f0b9a2e7d4c38"
SITES = ("uefa.com", "aljazeera.com", "en.wikipedia.org", "bbc.com", "espn.com", "reuters.com")


def grounding_uri(query: str, i: int) -> str:
    """The vertexaisearch redirect URL the fake gives source `i` of `query` (real ones look alike)."""
    digest = hashlib.sha256(f"{query}/{i}".encode()).hexdigest()
    return f"https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQ{digest[:48]}"


def grounded_chunks(query: str, *, model: str = "gemini-2.5-flash", n_sources: int = 4) -> list[dict[str, Any]]:
    """Three chunks answering `query`: text, text, then text with grounding, usage and finishReason.

    The grounding chunks name `n_sources` sites and repeat the first one (so sources dedupe to
    `n_sources`); the two supports cite chunks [0, 1] and [2, 0].
    """
    parts = [
        f"Here is what current sources say about {query}: ",
        "the official documentation covers it in depth. ",
        "Independent coverage confirms the key points and adds recent figures.",
    ]
    webs = [{"web": {"uri": grounding_uri(query, i), "title": SITES[i % len(SITES)]}} for i in range(n_sources)]
    webs.append({"web": {"uri": grounding_uri(query, 0), "title": SITES[0]}})
    start = len(parts[0].encode())
    supports = [
        {
            "segment": {"startIndex": start, "endIndex": start + len(parts[1].encode()), "text": parts[1].strip()},
            "groundingChunkIndices": [0, 1],
            "confidenceScores": [0.93, 0.81],
        },
        {
            "segment": {
                "startIndex": start + len(parts[1].encode()),
                "endIndex": len("".join(parts).encode()),
                "text": parts[2],
            },
            "groundingChunkIndices": [2, 0],
            "confidenceScores": [0.88, 0.7],
        },
    ]
    prompt = {
        "promptTokenCount": 412,
        "totalTokenCount": 412,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 412}],
    }

    def chunk(text: str, **candidate: Any) -> dict[str, Any]:
        return {
            "candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, "index": 0, **candidate}],
            "usageMetadata": prompt,
            "modelVersion": model,
            "responseId": RESPONSE_ID,
        }

    last = chunk(
        parts[2],
        finishReason="STOP",
        groundingMetadata={
            "searchEntryPoint": {
                "renderedContent": '<style>.container{align-items:center}</style><div class="container">…</div>'
            },
            "groundingChunks": webs,
            "groundingSupports": supports,
            "webSearchQueries": [query, f"{query} latest", query],
        },
    )
    last["usageMetadata"] = {
        "promptTokenCount": 412,
        "candidatesTokenCount": 57,
        "totalTokenCount": 689,
        "toolUsePromptTokenCount": 96,
        "thoughtsTokenCount": 124,
    }
    return [chunk(parts[0]), chunk(parts[1]), last]


def sse_body(chunks: Iterable[dict[str, Any]], *, wrap: bool = False) -> list[bytes]:
    """Each chunk as one SSE event; `wrap` puts it in Cloud Code's `{"response", "traceId"}` envelope."""
    return [
        b"data: " + json.dumps({"response": c, "traceId": TRACE_ID} if wrap else c).encode() + b"\r\n\r\n"
        for c in chunks
    ]


def stream_reply(chunks: Iterable[dict[str, Any]], *, wrap: bool = False, **kwargs: Any) -> Reply:
    return Reply(200, chunks=sse_body(chunks, wrap=wrap), content_type="text/event-stream", **kwargs)


def google_error(code: int, status: str, message: str, *details: dict[str, Any]) -> dict[str, Any]:
    """Google's RPC error envelope."""
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = list(details)
    return {"error": error}


def api_key_invalid() -> Reply:
    """What the Developer API answers to a bad key: 400, not 401."""
    return Reply(
        400,
        google_error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.",
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            },
        ),
    )


def quota_exhausted(retry_delay: str = "37s") -> Reply:
    """429 RESOURCE_EXHAUSTED with QuotaFailure and RetryInfo, as the free tier sends it."""
    message = (
        f"You exceeded your current quota, please check your plan and billing details. Please retry in "
        f"{retry_delay[:-1]}.2{retry_delay[-1]}."
    )
    return Reply(
        429,
        google_error(
            429,
            "RESOURCE_EXHAUSTED",
            message,
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                        "quotaDimensions": {"location": "global", "model": "gemini-2.5-flash"},
                        "quotaValue": "10",
                    }
                ],
            },
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay},
        ),
    )


class FakeGemini(FakeServer):
    """Google's hosts behind one loopback port (`WEBSEARCH_GEMINI_BASE_URL` redirects them all).

    Keys in `api_keys`, tokens in `access_tokens` and `refresh_tokens` are accepted; a refresh
    issues `ya29.fresh-<n>` (accepted from then on). `disconnects` counts streams the client
    closed before their end.
    """

    provider_id = "gemini"

    def __init__(
        self,
        *,
        api_keys: Sequence[str] = (),
        access_tokens: Sequence[str] = (),
        refresh_tokens: Sequence[str] = (),
        project: str = "fluent-cosmos-4kq2p",
    ) -> None:
        super().__init__()
        self.api_keys, self.access_tokens = set(api_keys), set(access_tokens)
        self.refresh_tokens, self.project = set(refresh_tokens), project
        self.issued = 0

    def default_reply(self, request: RecordedRequest) -> Reply:
        path = request.path
        if request.method == "POST" and path.startswith("/v1beta/models/") and path.endswith(":streamGenerateContent"):
            key = request.headers.get("x-goog-api-key")
            if not key:
                return Reply(
                    403,
                    google_error(
                        403,
                        "PERMISSION_DENIED",
                        "Method doesn't allow unregistered callers "
                        "(callers without established identity). Please use API Key or other form of API consumer "
                        "identity to call this API.",
                    ),
                )
            if key not in self.api_keys:
                return api_key_invalid()
            model = path.removeprefix("/v1beta/models/").removesuffix(":streamGenerateContent")
            return self._answer(request.json(), model, wrap=False, sse=request.args.get("alt") == "sse")
        if request.method == "POST" and path in ("/v1internal:streamGenerateContent", "/v1internal:loadCodeAssist"):
            auth = request.headers.get("authorization", "")
            if auth.removeprefix("Bearer ") not in self.access_tokens:
                return Reply(
                    401,
                    google_error(
                        401,
                        "UNAUTHENTICATED",
                        "Request had invalid authentication "
                        "credentials. Expected OAuth 2 access token, login cookie or other valid authentication "
                        "credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
                    ),
                )
            body = request.json()
            if path.endswith("loadCodeAssist"):
                return Reply(
                    200,
                    {
                        "currentTier": {"id": "free-tier", "name": "Gemini Code Assist for individuals"},
                        "allowedTiers": [{"id": "free-tier", "isDefault": True}],
                        "cloudaicompanionProject": self.project,
                        "gcpManaged": False,
                    },
                )
            if body.get("project") != self.project:
                return Reply(
                    403,
                    google_error(
                        403, "PERMISSION_DENIED", f"Permission denied on resource project {body.get('project')}."
                    ),
                )
            return self._answer(body["request"], body["model"], wrap=True, sse=request.args.get("alt") == "sse")
        if request.method == "POST" and path == "/token":
            form = dict(request.form())
            if form.get("grant_type") != "refresh_token":
                return Reply(400, {"error": "unsupported_grant_type", "error_description": "Invalid grant_type: "})
            if form.get("refresh_token") not in self.refresh_tokens:
                return Reply(400, {"error": "invalid_grant", "error_description": "Token has been expired or revoked."})
            self.issued += 1
            token = f"ya29.fresh-{self.issued}"
            self.access_tokens.add(token)
            return Reply(
                200,
                {
                    "access_token": token,
                    "expires_in": 3599,
                    "token_type": "Bearer",
                    "scope": "https://www.googleapis.com/auth/cloud-platform openid",
                },
            )
        return Reply(404, google_error(404, "NOT_FOUND", f"Requested entity was not found: {path}"))

    def _answer(self, inner: dict[str, Any], model: str, *, wrap: bool, sse: bool) -> Reply:
        if not inner.get("contents"):
            return Reply(
                400,
                google_error(400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified"),
            )
        chunks = grounded_chunks(inner["contents"][0]["parts"][0]["text"], model=model)
        if not sse:  # without alt=sse the stream is one JSON array
            return Reply(200, [{"response": c, "traceId": TRACE_ID} if wrap else c for c in chunks])
        return stream_reply(chunks, wrap=wrap)
