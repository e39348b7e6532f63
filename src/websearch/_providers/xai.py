"""xAI: Grok's server-side `web_search` tool over the Responses API, keyed by `XAI_API_KEY`.

POST https://api.x.ai/v1/responses with `{input, model: grok-4.3, tools: [{type: web_search}]}`
(plus `max_output_tokens` / `temperature` when asked), answered as one JSON document. The body has
no `search_parameters`: that was the retired Live Search API (now 410 Gone), so recency is not
sent and the count is only a local cap (default 10, max 30) on sources and citations, because xAI
lists every URL it met. `url_citation` annotations are read top level first, then per output
item, then per content part, then the bare top-level `citations` URLs, deduplicated by URL.
Domains go on the tool as `allowed_domains`, else `excluded_domains` (at most 5 each, and not both:
the allow list already leaves out every excluded domain outside it).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._prompts import SYSTEM_PROMPT
from .._types import SearchCitation, SearchParams, SearchResponse, SearchSource, SearchUsage
from .._wire import HttpRequest, HttpResponse
from ..errors import SearchProviderError
from ._legacy import (
    HttpProvider,
    Support,
    as_dict,
    as_list,
    as_str,
    clamp_count,
    classify_http_error,
    json_object,
    redact_detail,
    require_key,
    retry_after_seconds,
)

if TYPE_CHECKING:
    from .._context import ProviderContext

URL: Final = "https://api.x.ai/v1/responses"
ENV_KEYS: Final = ("XAI_API_KEY",)
MODEL: Final = "grok-4.3"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 30
MAX_DOMAINS: Final = 5  # per list, on the web_search tool
_BAD_KEY_RE: Final = re.compile(r"incorrect api key|invalid api key|api key.*(?:invalid|incorrect)", re.IGNORECASE)


class XAI(HttpProvider):
    id = "xai"
    supports: ClassVar[dict[str, Support]] = {
        "limit": "approximate",
        "num_search_results": "approximate",
        "max_tokens": "native",
        "temperature": "native",
        "include_domains": "native",
        "exclude_domains": "native",
    }

    def build_request(self, params: SearchParams, ctx: ProviderContext) -> HttpRequest:
        key = require_key(ctx, self.id, ENV_KEYS, self.info.credential_ids)
        f = ctx.filters(params)
        body: dict[str, Any] = {
            "model": MODEL,
            "input": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": params.query}],
            "tools": [_tool(f.include_domains, f.exclude_domains)],
        }
        if params.max_tokens is not None:
            body["max_output_tokens"] = params.max_tokens
        if params.temperature is not None:
            body["temperature"] = params.temperature
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Accept": "application/json"}
        return HttpRequest("POST", ctx.endpoint(self.id, URL), headers=headers, json=body, secrets=(key,))

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        clamp = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[1]
        name = "num_search_results" if params.num_search_results is not None else "limit"
        if params.count is None:
            return [*clamp, *domain_notices(params, ctx)]
        sent = f"{name}={params.count} not sent upstream: xAI's web_search tool has no result-count parameter; "
        return [sent + "applied locally as a cap on sources and citations", *clamp, *domain_notices(params, ctx)]

    def parse_response(self, response: HttpResponse, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        if not response.ok:
            raise http_error(response)
        data = json_object(self.id, response)
        cap = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0]
        sources, citations = collect_citations(data)
        return SearchResponse(
            provider=self.id,
            answer=answer_text(data),
            sources=tuple(sources[:cap]),
            citations=tuple(citations[:cap]),
            usage=_usage(as_dict(data.get("usage"))),
            model=as_str(data.get("model")),
            request_id=as_str(data.get("id")),
            auth_mode="api_key",
        )


def _tool(include: tuple[str, ...], exclude: tuple[str, ...]) -> dict[str, Any]:
    """The web_search tool, with the allow list, else the exclusion list (5 entries at most)."""
    if include:
        return {"type": "web_search", "allowed_domains": list(include[:MAX_DOMAINS])}
    if exclude:
        return {"type": "web_search", "excluded_domains": list(exclude[:MAX_DOMAINS])}
    return {"type": "web_search"}


def domain_notices(params: SearchParams, ctx: ProviderContext) -> list[str]:
    """What the tool's 5-entry lists (and their exclusivity) left out."""
    f = ctx.filters(params)
    notices: list[str] = []
    sent = "include_domains" if f.include_domains else "exclude_domains"
    domains = getattr(f, sent)
    if len(domains) > MAX_DOMAINS:
        notices.append(
            f"{sent} has {len(domains)} entries; xAI's web_search takes at most {MAX_DOMAINS}, only "
            f"{', '.join(domains[:MAX_DOMAINS])} were used"
        )
    allowed = f.include_domains[:MAX_DOMAINS]
    inside = [d for d in f.exclude_domains if any(d == a or d.endswith("." + a) for a in allowed)]
    if allowed and inside:
        notices.append(
            f"exclude_domains={params.exclude_domains!r} not applied to {', '.join(inside)}: xAI's web_search "
            "takes allowed_domains or excluded_domains, not both (the others are outside the allowed ones)"
        )
    return notices


def http_error(response: HttpResponse) -> SearchProviderError:
    """A non-2xx answer: the shared classification, a rejected key (xAI says 400), else
    `xAI Responses API error (<status>): <detail>`. Nothing is retried, a 410 included."""
    detail = _envelope(response)
    status, retry = response.status, retry_after_seconds(response.headers)
    error = classify_http_error("xai", response)
    if error is not None:
        if status == 403 and detail:
            error.hint = detail  # e.g. the team has no credits or lacks permission
        return error
    if status == 400 and _BAD_KEY_RE.search(detail or ""):
        return SearchProviderError("xai", f"xAI rejected the API key (400): {detail} Check XAI_API_KEY.", status)
    text = detail or response.safe_text() or "empty body"
    return SearchProviderError("xai", f"xAI Responses API error ({status}): {text}", status, retry_after=retry)


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


def _envelope(response: HttpResponse) -> str | None:
    """The message of `{"error": {"message": ...}}` or `{"code": ..., "error": "..."}`, redacted."""
    try:
        data = as_dict(response.json())
    except ValueError:
        return None
    error = data.get("error")
    message = as_str(as_dict(error).get("message")) or as_str(error) or as_str(data.get("message"))
    if message is None:
        return None
    return redact_detail(response, message) or None


def _usage(usage: dict[str, Any]) -> SearchUsage | None:
    def pick(snake: str, camel: str) -> int | None:
        value = usage.get(snake, usage.get(camel))
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    fields = (
        pick("input_tokens", "inputTokens"),
        pick("output_tokens", "outputTokens"),
        pick("total_tokens", "totalTokens"),
    )
    return SearchUsage(*fields) if any(f is not None for f in fields) else None


PROVIDER: Final = XAI()
