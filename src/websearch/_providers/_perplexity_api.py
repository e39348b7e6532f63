"""Perplexity's API-key mode: its streamed chat completions (Sonar, or through OpenRouter), parsed.

`ChatStream` joins the answer deltas (a chunk's `message`, the text so far, is the answer only
when no delta came: a whole JSON completion) and keeps the last non-empty id, model, citations,
search_results, related_questions and usage of any event (`_collect`). Its errors, as an HTTP body
or as an event inside a 200 stream, are the OpenAI-like `{"error": {"message", "type", "code"}}`:
`type` is the code (`insufficient_quota` is a quota error whatever the status) and, in a stream,
the numeric `code` is the status (else 500). Also here, because the ask endpoint
(`_perplexity_ask`) builds on them: the provider id, the auth methods' names in notices,
`EventStream` (SSE JSON events in, one ProviderResult out, errors mapped through the mode's
envelope) and source building. The provider, its auth methods and the chat request itself are in
`perplexity`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchCitation, SearchSource, SearchUsage
from .._core._wire import HttpRequest, HttpResponse, loads, loads_or_none
from .._http._sse import SseEvent
from ..errors import InvalidResponse, QuotaExhausted, SearchProviderError
from ._base import Plan, age_seconds, as_dict, as_list, as_str
from ._errors import ErrorEnvelope, http_error

if TYPE_CHECKING:
    from ._perplexity_auth import Auth

ID: Final = "perplexity"
INFO: Final = PROVIDERS[ID]
AUTH_NAMES: Final[Mapping[str, str]] = {
    "cookies": "PERPLEXITY_COOKIES",
    "session": "the stored session",
    "api_key": "the API key",
    "openrouter": "the OpenRouter key",
    "anonymous": "no login",
}
CHAT_ENVELOPE: Final = ErrorEnvelope(
    message=(("error", "message"), ("error",), ("detail",), ("message",)),
    code=(("error", "type"),),
    codes={"insufficient_quota": QuotaExhausted},
    prefix="Perplexity API error",
)


class EventStream:
    """Events in, one ProviderResult out; `done` once the stream's last event was seen.

    `envelope` maps this mode's errors: a failed response (`error`) and an error event inside a
    200 stream (`error_in_stream`), both with every secret of the plan's requests redacted.
    """

    envelope: ClassVar[ErrorEnvelope]

    def __init__(self, auth: Auth, request: HttpRequest, plan: Plan) -> None:
        self.auth, self.plan, self.secrets = auth, plan, request.secrets
        self.done = False

    def feed(self, event: SseEvent) -> bool:
        """Take one event; True when it was the last one."""
        data = event.data.strip()
        if not data:
            return self.done
        try:
            value = loads(data)
        except ValueError:
            raise InvalidResponse(ID, "Perplexity sent a stream event that is not JSON", 502) from None
        if event.event == "error":
            raise self.event_error(value)
        self.take(value)
        return self.done

    def take(self, value: Any) -> None:
        raise NotImplementedError

    def event_error(self, value: Any) -> SearchProviderError:
        """The error an error event stands for."""
        raise NotImplementedError

    def error(self, response: HttpResponse, body: Any = None, status: int | None = None) -> SearchProviderError:
        """A failed response (`body` when already decoded), mapped through this mode's envelope."""
        return http_error(INFO, self.envelope, response, self.plan.now, body=body, status=status)

    def error_in_stream(self, value: Any, status: int | None = None) -> SearchProviderError:
        """An error event inside a 200 stream: `status` if given, else what its code amounts to."""
        try:
            text = json.dumps(value).encode()
        except RecursionError:  # nested deeper than the json module writes: the mapper reads `value`
            text = b""
        return self.error(HttpResponse(200, {}, text, secrets=self.secrets), value, status)

    def result(self) -> ProviderResult:
        if not self.done:
            message = "Perplexity stream ended before its last event; the partial answer was discarded"
            raise InvalidResponse(ID, message, 502)
        return self.build()

    def build(self) -> ProviderResult:
        raise NotImplementedError


class ChatStream(EventStream):
    """An OpenAI-style chat-completions stream, ended by `[DONE]` (or a finish_reason)."""

    envelope = CHAT_ENVELOPE

    def __init__(self, auth: Auth, request: HttpRequest, plan: Plan) -> None:
        super().__init__(auth, request, plan)
        self.parts: list[str] = []  # the deltas: the answer
        self.whole: str | None = None  # the last `message`: the answer only when no delta came
        self.meta: dict[str, Any] = {"model": (request.json or {}).get("model")}
        self.usage: Mapping[str, Any] = {}

    def feed(self, event: SseEvent) -> bool:
        if event.data.strip() == "[DONE]":
            self.done = True
            return True
        super().feed(event)
        return False  # after a finish_reason, read on for the usage and [DONE]

    def take(self, value: Any) -> None:
        if not isinstance(value, dict):
            return
        if value.get("error"):
            raise self.event_error(value)
        _collect(self.meta, value)
        for choice in as_list(value.get("choices")):
            if not isinstance(choice, dict):
                continue
            # Live chunks carry `message` (the text so far) beside `delta`: both read doubled it.
            delta, message = as_dict(choice.get("delta")), as_dict(choice.get("message"))
            if isinstance(delta.get("content"), str):
                self.parts.append(delta["content"])
            if isinstance(message.get("content"), str):
                self.whole = message["content"]
            self.done = self.done or bool(choice.get("finish_reason"))
        if isinstance(value.get("usage"), dict):
            self.usage = value["usage"]

    def event_error(self, value: Any) -> SearchProviderError:
        inner = value.get("error") if isinstance(value, dict) else None
        code = inner.get("code") if isinstance(inner, dict) else None
        return self.error_in_stream(value, code if isinstance(code, int) and 400 <= code < 600 else 500)

    def build(self) -> ProviderResult:
        now = self.plan.now
        results = [r for r in as_list(self.meta.get("search_results")) if isinstance(r, dict) and as_str(r.get("url"))]
        urls = [u for u in as_list(self.meta.get("citations")) if as_str(u)]
        citations: list[SearchCitation] = []
        if urls:
            by_url: dict[str, dict[str, Any]] = {}
            for result in results:
                by_url.setdefault(result["url"], result)
            sources = [to_source(by_url.get(url, {"url": url}), "title", "date", now) for url in urls]
            citations = [SearchCitation(s.url, s.title) for s in sources]
        else:
            sources = [to_source(result, "title", "date", now) for result in results]
        related = (q for q in as_list(self.meta.get("related_questions")) if isinstance(q, str) and q.strip())
        tokens = [int_or_none(self.usage.get(k)) for k in ("prompt_tokens", "completion_tokens", "total_tokens")]
        return ProviderResult(
            answer="".join(self.parts) or self.whole or None,
            sources=tuple(sources[: self.plan.limit]),
            citations=tuple(citations),
            related_questions=tuple(related),
            usage=SearchUsage(*tokens) if any(tokens) else None,
            model=as_str(self.meta.get("model")),
            request_id=as_str(self.meta.get("id")),
            auth_mode="api_key",
        )


def _collect(meta: dict[str, Any], record: Mapping[str, Any]) -> None:
    """Metadata of one event, top level, in `output[]` items (and their `content`), and in `response`
    (and its own `response`, and so on: a loop, since a hostile body nests them past any recursion limit)."""
    while True:
        for key in ("id", "model"):
            if as_str(record.get(key)):
                meta[key] = record[key]
        _collect_lists(meta, record)
        response = record.get("response")
        inner = _walk(response.get("output") if isinstance(response, dict) else None)
        for item in _walk(record.get("output")) + inner:
            _collect_lists(meta, item)
        if not isinstance(response, dict):
            return
        record = response


def _collect_lists(meta: dict[str, Any], record: Mapping[str, Any]) -> None:
    for key in ("citations", "search_results", "results", "related_questions"):
        if as_list(record.get(key)):
            meta["search_results" if key == "results" else key] = record[key]


def _walk(output: object) -> list[Mapping[str, Any]]:
    items = [item for item in as_list(output) if isinstance(item, dict)]
    return [x for item in items for x in (item, *_walk(item.get("content")))]


def to_source(result: Mapping[str, Any], title_key: str, date_key: str, now: datetime) -> SearchSource:
    """A source from a result carrying `url`, its title and date under the given keys."""
    url = result["url"]
    published = as_str(result.get(date_key))
    return SearchSource(
        title=as_str(result.get(title_key)) or url,
        url=url,
        snippet=as_str(result.get("snippet")),
        published_date=published,
        age_seconds=age_seconds(published, now),
    )


def json_or_none(text: str) -> Any:
    """`text` parsed as JSON, or None when it is not JSON."""
    return loads_or_none(text)


def int_or_none(value: object) -> int | None:
    """`value` when it is an int (not a boolean), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
