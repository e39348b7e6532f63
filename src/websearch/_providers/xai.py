"""xAI: Grok's server-side `web_search` tool over the Responses API, keyed by `XAI_API_KEY`.

POST https://api.x.ai/v1/responses with `{input, model: grok-4.3, tools: [{type: web_search}]}`
(plus `max_output_tokens` / `temperature` when asked), answered as one JSON document. The body has
no `search_parameters`: that was the retired Live Search API (now 410 Gone), so recency is not
sent and the count is only a local cap (default 10, max 30) on sources and citations, because xAI
lists every URL it met. `url_citation` annotations are read top level first, then per output
item, then per content part, then the bare top-level `citations` URLs, deduplicated by URL.
Domains go on the tool as `allowed_domains`, else `excluded_domains` (at most 5 each, and not both:
the allow list already leaves out every excluded domain outside it).

Errors come as xAI's `{"code": <a gRPC status description>, "error": <message>}` or OpenAI's
`{"error": {"message", "code", "type"}}`. xAI's own `code` is the same text for every 400, so only
the OpenAI-style code or type is read (`insufficient_quota` is quota). A wrong key is a 400 that
says so only in words: a message starting "Incorrect API key provided" stands for OpenAI's code
`invalid_api_key`. Nothing is retried, a 410 included.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._core._notices import Notice, approximated, dropped
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchCitation, SearchParams, SearchSource, SearchUsage
from .._core._wire import HttpRequest, HttpResponse
from ..errors import AuthenticationFailed, QuotaExhausted
from ._base import HttpProvider, Plan, Support, as_dict, as_int, as_list, as_str, count, honours, require_key
from ._errors import ErrorEnvelope, dig
from ._prompts import SYSTEM_PROMPT

if TYPE_CHECKING:
    from .._core._context import ProviderContext

URL: Final = "https://api.x.ai/v1/responses"
MODEL: Final = "grok-4.3"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 30
MAX_DOMAINS: Final = 5  # per list, on the web_search tool
#: How api.x.ai words a wrong key (its 400 carries no code of its own); anchored, xAI's exact phrase.
BAD_KEY: Final = re.compile(r"^Incorrect API key provided\b")
_MESSAGE: Final = (("error", "message"), ("error",), ("message",))
_CODE: Final = (("error", "code"), ("error", "type"))


def _read_error(data: Any) -> tuple[str | None, str | None]:
    """(code, message) of an xAI error body; the `BAD_KEY` message reads as `invalid_api_key`."""
    message = next((v.strip() for p in _MESSAGE if isinstance(v := dig(data, p), str) and v.strip()), None)
    code = next((v.strip() for p in _CODE if isinstance(v := dig(data, p), str) and v.strip()), None)
    if code is None and message is not None and BAD_KEY.match(message):
        code = "invalid_api_key"
    return code, message


class XAI(HttpProvider):
    info = PROVIDERS["xai"]
    #: Query operators: Domains go in its search filters; dates and the others stay in the question as instructions.
    operators = honours(approximate="after before filetype intitle inurl")
    supports: ClassVar[dict[str, Support]] = {
        "limit": "approximate",
        "num_search_results": "approximate",
        "max_tokens": "native",
        "temperature": "native",
        "include_domains": "native",
        "exclude_domains": "native",
    }
    envelope = ErrorEnvelope(
        codes={"invalid_api_key": AuthenticationFailed, "insufficient_quota": QuotaExhausted},
        prefix="xAI Responses API error",
        auth_detail=True,
        read=_read_error,
    )

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        key = require_key(ctx, self.info)
        plan = self.new_plan(params, ctx)
        plan.limit, counted = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        plan.notices = [*_local_cap(params, self.label), *counted, *domain_notices(plan)]
        f = plan.filters
        body: dict[str, Any] = {
            "model": MODEL,
            "input": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": self.query_text(plan)}],
            "tools": [_tool(f.include_domains, f.exclude_domains)],
        }
        if params.max_tokens is not None:
            body["max_output_tokens"] = params.max_tokens
        if params.temperature is not None:
            body["temperature"] = params.temperature
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Accept": "application/json"}
        plan.request = HttpRequest("POST", ctx.endpoint(self.id, URL), headers=headers, json=body, secrets=(key,))
        return plan

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        data = self.answer_object(response, plan)
        sources, citations = collect_citations(data)
        return ProviderResult(
            answer=answer_text(data),
            sources=tuple(sources[: plan.limit]),
            citations=tuple(citations[: plan.limit]),
            usage=_usage(as_dict(data.get("usage"))),
            model=as_str(data.get("model")),
            request_id=as_str(data.get("id")),
            auth_mode="api_key",
        )


def _local_cap(params: SearchParams, label: str) -> list[Notice]:
    """The count is not sent: say it only cuts what xAI returns."""
    if params.count is None:
        return []
    name = "num_search_results" if params.num_search_results is not None else "limit"
    return [
        approximated(
            name, params.count, "a local cap on sources and citations", f"{label} has no result-count parameter"
        )
    ]


def _tool(include: tuple[str, ...], exclude: tuple[str, ...]) -> dict[str, Any]:
    """The web_search tool, with the allow list, else the exclusion list (5 entries at most)."""
    if include:
        return {"type": "web_search", "allowed_domains": list(include[:MAX_DOMAINS])}
    if exclude:
        return {"type": "web_search", "excluded_domains": list(exclude[:MAX_DOMAINS])}
    return {"type": "web_search"}


def domain_notices(plan: Plan) -> list[Notice]:
    """What the tool's 5-entry lists (and their exclusivity) left out."""
    f, params = plan.filters, plan.params
    notices: list[Notice] = []
    sent = "include_domains" if f.include_domains else "exclude_domains"
    domains = getattr(f, sent)
    if len(domains) > MAX_DOMAINS:
        left_out = ", ".join(domains[MAX_DOMAINS:])
        why = f"xAI's web_search takes at most {MAX_DOMAINS} domains, so {left_out} were left out"
        notices.append(dropped(*f.domains_given(params, sent), why))
    allowed = f.include_domains[:MAX_DOMAINS]
    inside = [d for d in f.exclude_domains if any(d == a or d.endswith("." + a) for a in allowed)]
    if allowed and inside:
        why = (
            "xAI's web_search takes allowed_domains or excluded_domains, not both, and the allowed domains "
            f"include {', '.join(inside)}"
        )
        notices.append(dropped(*f.domains_given(params, "exclude_domains"), why))
    return notices


def answer_text(data: dict[str, Any]) -> str | None:
    """The top-level `output_text`, else the message parts' text joined by newlines."""
    top = as_str(data.get("output_text"))
    if top and top.strip():
        return top.strip()
    texts = [
        text
        for item in as_list(data.get("output"))
        for part in as_list(as_dict(item).get("content"))
        if as_dict(part).get("type") in ("output_text", "text")
        and (text := as_str(part.get("output_text") or part.get("text")))
    ]
    return "\n".join(texts).strip() or None


def collect_citations(data: dict[str, Any]) -> tuple[list[SearchSource], list[SearchCitation]]:
    """Sources and citations from every `url_citation`, in the documented order, one per URL."""
    notes = list(as_list(data.get("annotations")))
    items = [as_dict(item) for item in as_list(data.get("output"))]
    notes += [note for item in items for note in as_list(item.get("annotations"))]
    notes += [
        note
        for item in items
        for part in as_list(item.get("content"))
        for note in as_list(as_dict(part).get("annotations"))
    ]
    notes += [{"type": "url_citation", "url": url} for url in as_list(data.get("citations")) if isinstance(url, str)]
    sources: list[SearchSource] = []
    citations: list[SearchCitation] = []
    seen: set[str] = set()
    for note in map(as_dict, notes):
        url = (as_str(note.get("url")) or "").strip()
        if note.get("type") != "url_citation" or not url or url in seen:
            continue
        seen.add(url)
        title = (as_str(note.get("title")) or "").strip() or url
        quoted = note.get("cited_text") if note.get("cited_text") is not None else note.get("text")
        cited = quoted.strip() or None if isinstance(quoted, str) else None
        sources.append(SearchSource(title=title, url=url, snippet=cited))
        citations.append(SearchCitation(url=url, title=title, cited_text=cited))
    return sources, citations


def _usage(usage: dict[str, Any]) -> SearchUsage | None:
    def pick(snake: str, camel: str) -> int | None:
        return as_int(usage.get(snake, usage.get(camel)))  # NaN and infinities are not counts

    fields = (
        pick("input_tokens", "inputTokens"),
        pick("output_tokens", "outputTokens"),
        pick("total_tokens", "totalTokens"),
    )
    return SearchUsage(*fields) if any(f is not None for f in fields) else None


PROVIDER: Final = XAI()
