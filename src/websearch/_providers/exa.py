"""Exa: neural web search through its REST API, or keyless through Exa's public MCP server.

With a key (explicit, `EXA_API_KEY` or agent.db), POST https://api.exa.ai/search with `x-api-key`,
asking for a per-result summary; the answer is the first three summaries. A call that uses the
richer parameters (`params.rich`) sends `rich_body` instead: mode as `type`, text + highlights
sized by text_chars (or summaries), dates, category and domains; the deep modes also ask for a
synthesized answer (`outputSchema`, read with its grounding) and get a longer timeout.
Without a key, an explicit `provider="exa"` calls the `web_search_exa` tool of
https://mcp.exa.ai/mcp (JSON-RPC `tools/call`, answered as SSE or JSON; only the query and
numResults are sent, the rest is disclosed) and reads either an Exa JSON response or its
plain-text `Title:` listing. Every Exa request, REST or MCP, starts at least `exa.searchDelayMs`
(default 1000 ms) after the previous one on the same clock; the wait is `ctx.clock.sleep`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
import weakref
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import urlsplit

from .._clock import SystemClock
from .._filters import Filters, recency_start
from .._params import DEFAULT_TEXT_CHARS
from .._types import SearchCitation, SearchParams, SearchResponse, SearchSource
from .._wire import HttpRequest, HttpResponse
from ..errors import ConfigError, SearchProviderError
from ._legacy import (
    HttpProvider,
    Support,
    age_seconds,
    api_error,
    as_dict,
    as_list,
    clamp_count,
    classify_http_error,
    json_object,
    redact_detail,
)

if TYPE_CHECKING:
    from .._context import ProviderContext

API_URL: Final = "https://api.exa.ai/search"
MCP_URL: Final = "https://mcp.exa.ai/mcp"
MCP_TOOL: Final = "web_search_exa"
MCP_HEADERS: Final = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
ENV_KEYS: Final = ("EXA_API_KEY",)
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 100  # the API refuses numResults above 100
DEFAULT_DELAY_MS: Final = 1000
ANSWER_SUMMARIES: Final = 3
UNEXPECTED_SHAPE: Final = "Exa MCP search returned unexpected response shape."
_EXA_KEYS: Final = ("results", "statuses", "costDollars", "searchTime")  # what marks an Exa response object
_TEXT_FIELDS: Final = {"Title:": "title", "URL:": "url", "Author:": "author", "Published Date:": "publishedDate"}
_SECTION_RE: Final = re.compile(r"(?m)^(?=Title:)")
#: The deep modes ask for a synthesized answer and get this per-request timeout (or the client's, if longer).
DEEP_TIMEOUTS: Final = {"deep-lite": 90.0, "deep": 90.0, "deep-reasoning": 180.0}
ANSWER_SCHEMA: Final = {
    "type": "text",
    "description": "A concise answer to the query, synthesized from the search results and grounded in them.",
}
_ENTITY_CATEGORIES: Final = frozenset({"company", "people"})
_MCP_HONOURS: Final = frozenset({"limit", "num_search_results", "text_chars"})  # text_chars: cut when rendered
PEOPLE_HINT: Final = "category=people accepts only Exa's supported profile domains in include_domains"


class Exa(HttpProvider):
    id = "exa"
    # recency is applied (as startPublishedDate) only in a call with richer parameters; see `_dates`.
    # sort_by_date is absent: Exa has no equivalent. The keyless MCP path honours only the count.
    supports: ClassVar[dict[str, Support]] = {
        "limit": "native",
        "num_search_results": "native",
        "recency": "approximate",
        **dict.fromkeys(
            ("mode", "text_chars", "recency_days", "recency_hours", "start_published_date", "end_published_date"),
            "native",
        ),
        **dict.fromkeys(("category", "include_domains", "exclude_domains", "summary"), "native"),
    }

    def __init__(self) -> None:
        self._rpc_ids = itertools.count(1)
        self._lock = threading.Lock()  # clients on different threads share this instance
        self._next_start: weakref.WeakKeyDictionary[object, float] = weakref.WeakKeyDictionary()

    async def search(self, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        now = ctx.clock.now()  # the instant build_request dates from (the pacing wait moves the clock)
        request = self.build_request(params, ctx)
        await self._pace(ctx)
        response = await ctx.send(self.id, request)
        result = self.parse_response(response, params, ctx)
        if params.rich and params.recency is not None and ctx.secret(self.id, ENV_KEYS):
            recency_notices = _dates(params, ctx.filters(params), now)[1]
            result = replace(result, notices=(*result.notices, *recency_notices))
        return result

    def build_request(self, params: SearchParams, ctx: ProviderContext) -> HttpRequest:
        count = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0]
        key = ctx.secret(self.id, ENV_KEYS)
        if key:
            headers = {"Content-Type": "application/json", "x-api-key": key}
            url = ctx.endpoint(self.id, API_URL)
            if not params.rich:  # exactly web_search.md's request
                return HttpRequest("POST", url, headers=headers, json=search_body(params.query, count), secrets=(key,))
            filters = ctx.filters(params)
            body = rich_body(params.query, count, filters, _dates(params, filters, ctx.clock.now())[0])
            timeout = deep_timeout(filters.mode, ctx)
            return HttpRequest("POST", url, headers=headers, json=body, secrets=(key,), timeout=timeout)
        arguments: dict[str, Any] = {"query": params.query}
        if params.count is not None:  # the tool's own default (8) applies otherwise
            arguments["numResults"] = count
        call = {"name": MCP_TOOL, "arguments": arguments}
        rpc = {"jsonrpc": "2.0", "id": next(self._rpc_ids), "method": "tools/call", "params": call}
        url = ctx.endpoint(self.id, MCP_URL)
        return HttpRequest("POST", url, headers=MCP_HEADERS, params=[("tools", MCP_TOOL)], json=rpc)

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        notices = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[1]
        keyed = bool(ctx.secret(self.id, ENV_KEYS))
        if params.recency is not None and not (keyed and params.rich):
            notices.append(f"recency={params.recency!r} not applied: Exa does not support it")
        if not keyed:  # the MCP tool takes only the query and the count
            notices.extend(
                f"{name}={value!r} not applied: Exa's keyless MCP search does not support it (set EXA_API_KEY)"
                for name, value in params.given().items()
                if name in self.supports
                and name not in _MCP_HONOURS
                and name != "recency"
                and not (name == "mode" and value == "auto")
            )
        elif params.rich and ctx.filters(params).include_domains and ctx.filters(params).exclude_domains:
            notices.append(
                "exclude_domains applied by dropping matching results after the search: "
                "Exa does not accept include_domains and exclude_domains together"
            )
        return notices  # a rich call's recency notices are added by `search`, dated like the request

    def parse_response(self, response: HttpResponse, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        now = ctx.clock.now()
        if not ctx.secret(self.id, ENV_KEYS):
            return parse_mcp_response(response, params, now)
        if not params.rich:
            return parse_api_response(response, params, now)
        filters = ctx.filters(params)
        try:
            result = parse_api_response(response, params, now)
        except SearchProviderError as exc:
            if exc.status == 400 and filters.category == "people" and filters.include_domains:
                raise SearchProviderError(self.id, f"{exc.message}; {PEOPLE_HINT}", exc.status) from None
            raise
        if filters.include_domains and filters.exclude_domains:
            kept = tuple(s for s in result.sources if not _on_domains(s.url, filters.exclude_domains))
            result = replace(result, sources=kept)
        return result

    async def _pace(self, ctx: ProviderContext) -> None:
        """Reserve the next start slot, then sleep until it. Slots are kept per clock, because
        monotonic readings of different clocks cannot be compared; all SystemClocks share one."""
        delay = _delay_seconds(ctx)
        if delay <= 0:
            return
        clock = ctx.clock
        timeline: object = SystemClock if type(clock) is SystemClock else clock
        with self._lock:
            now = clock.monotonic()
            previous = self._next_start.get(timeline, now)
            start = max(now, previous)
            self._next_start[timeline] = start + delay
        if start <= now:
            return
        try:
            await clock.sleep(start - now)
        except asyncio.CancelledError:
            with self._lock:  # give the slot back unless a later request queued behind it
                if self._next_start.get(timeline) == start + delay:
                    self._next_start[timeline] = previous
            raise


def search_body(query: str, num_results: int) -> dict[str, Any]:
    """The /search body (camelCase) of a call with only web_search.md's parameters."""
    return {"query": query, "numResults": num_results, "type": "auto", "contents": {"summary": {"query": query}}}


def rich_body(query: str, num_results: int, filters: Filters, dates: dict[str, str]) -> dict[str, Any]:
    """The /search body of a call with richer parameters (mcp-web_search-tool.md).

    Text sized by text_chars (default 1200, what the blocks renderer shows) plus highlights, or
    summaries alone; includeDomains wins over excludeDomains, which Exa refuses alongside it (the
    exclusion is then applied to the results); a deep mode asks for a synthesized answer.
    """
    mode = filters.mode or "auto"
    body: dict[str, Any] = {"query": query, "numResults": num_results, "type": mode}
    if filters.summary:
        body["contents"] = {"summary": {"query": query}}
    else:
        body["contents"] = {"text": {"maxCharacters": filters.text_chars or DEFAULT_TEXT_CHARS}, "highlights": True}
    if filters.category:
        body["category"] = filters.category
    if filters.include_domains:
        body["includeDomains"] = list(filters.include_domains)
    elif filters.exclude_domains:
        body["excludeDomains"] = list(filters.exclude_domains)
    body.update(dates)
    if mode in DEEP_TIMEOUTS:
        body["outputSchema"] = dict(ANSWER_SCHEMA)
    return body


def deep_timeout(mode: str | None, ctx: ProviderContext) -> float | None:
    """The per-request timeout of a deep mode, never shorter than the client's; None otherwise."""
    budget = DEEP_TIMEOUTS.get(mode or "")
    client = getattr(ctx.transport, "timeout", None)
    if budget is None or isinstance(client, bool) or not isinstance(client, (int, float)):
        return budget
    return max(budget, float(client))


def _dates(params: SearchParams, filters: Filters, now: datetime) -> tuple[dict[str, str], list[str]]:
    """startPublishedDate / endPublishedDate from the ladder, `recency` folded in below it; the
    notices for recency (the ladder's own notices come from the chain)."""
    notices: list[str] = []
    start, start_time = filters.start, filters.start_has_time
    end, end_time = filters.end, filters.end_has_time
    recency = params.recency
    if recency is not None:
        name = f"recency={recency!r}"
        if filters.start_source is not None:
            notices.append(f"{name} not applied: {filters.start_source} takes precedence")
        elif filters.category in _ENTITY_CATEGORIES:
            notices.append(f"{name} not applied: category={filters.category} does not allow date filters")
        elif (start := recency_start(recency, now)) is not None:
            notices.append(f"{name} applied as startPublishedDate={_iso(start, False)}")
            if end is not None and end < start:
                notices.append(f"end_published_date={params.end_published_date} is before the start; end dropped")
                end = None
    dates = {}
    if start is not None:
        dates["startPublishedDate"] = _iso(start, start_time)
    if end is not None:
        dates["endPublishedDate"] = _iso(end, end_time)
    return dates, notices


def _iso(when: datetime, with_time: bool) -> str:
    """`2026-11-30T09:00:00.000Z` for a timestamp, `2026-11-30` for a date (all UTC)."""
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z") if with_time else when.date().isoformat()


def _on_domains(url: str, domains: tuple[str, ...]) -> bool:
    """Is the host of `url` one of `domains` or below one of them?"""
    host = (urlsplit(url).hostname or "").lower()
    names = (d.lower().split("//")[-1].split("/")[0].removeprefix("www.") for d in domains)
    return any(host == name or host.endswith("." + name) for name in names if name)


def parse_api_response(response: HttpResponse, params: SearchParams, now: datetime) -> SearchResponse:
    """A REST /search response: results, the three-summary answer, requestId; errors classified."""
    if not response.ok:
        raise _api_error(response)
    data = json_object("exa", response)
    return _exa_response(data, params, now, "api_key")


def parse_mcp_response(response: HttpResponse, params: SearchParams, now: datetime) -> SearchResponse:
    """A `web_search_exa` tools/call answer (SSE or JSON): an Exa JSON object or the plain-text listing."""
    if not response.ok:
        raise api_error("exa", response, detail=f"MCP request failed: {response.safe_text()}")
    message = _rpc_message(response)
    error = message.get("error")
    if error is not None:
        detail = error.get("message") if isinstance(error, dict) else error
        raise SearchProviderError("exa", f"Exa MCP error: {redact_detail(response, str(detail))}")
    result = message.get("result")
    if not isinstance(result, dict):
        raise SearchProviderError("exa", UNEXPECTED_SHAPE)
    texts = [
        b["text"] for b in as_list(result.get("content")) if isinstance(b, dict) and isinstance(b.get("text"), str)
    ]
    if result.get("isError"):
        raise SearchProviderError(
            "exa", f"Exa MCP tool error: {redact_detail(response, ' '.join(texts)) or 'no detail'}"
        )
    data = _exa_object(result, texts)
    if data is None:
        data = {"results": _listing("\n".join(texts))}
        if not data["results"]:
            raise SearchProviderError("exa", f"{UNEXPECTED_SHAPE} {redact_detail(response, ' '.join(texts))}".rstrip())
    return _exa_response(data, params, now, "anonymous")


def _exa_response(data: dict[str, Any], params: SearchParams, now: datetime, auth_mode: str) -> SearchResponse:
    """The answer is a deep mode's synthesized output, else (only for a call without richer
    parameters, whose results come one block each) the first three summaries."""
    results = [r for r in as_list(data.get("results")) if isinstance(r, dict) and _text(r.get("url"))]
    if params.count is not None:
        results = results[: clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, "Exa")[0]]
    summaries = [
        f"**{_text(r.get('title')) or _text(r.get('url')) or 'Untitled'}**: {summary}"
        for r in results
        if (summary := _text(r.get("summary")))
    ]
    answer, citations = _output(as_dict(data.get("output")))
    if answer is None and not params.rich:
        answer = "\n\n".join(summaries[:ANSWER_SUMMARIES]) or None
    return SearchResponse(
        provider="exa",
        answer=answer,
        sources=tuple(_source(r, now) for r in results),
        citations=citations,
        request_id=_text(data.get("requestId")),
        auth_mode=auth_mode,
    )


def _output(output: dict[str, Any]) -> tuple[str | None, tuple[SearchCitation, ...]]:
    """The synthesized answer of an `outputSchema` search (`output.content`: a string, or an
    object rendered as JSON) and its grounding citations, one per URL."""
    content = output.get("content")
    if isinstance(content, (dict, list)):
        answer = json.dumps(content, ensure_ascii=False, indent=2) if content else None
    else:
        answer = _text(content)
    cited: dict[str, SearchCitation] = {}
    for grounding in as_list(output.get("grounding")):
        for citation in as_list(as_dict(grounding).get("citations")):
            url = _text(as_dict(citation).get("url"))
            if url and url not in cited:
                cited[url] = SearchCitation(url=url, title=_text(citation.get("title")) or url)
    return answer, tuple(cited.values())


def _source(result: dict[str, Any], now: datetime) -> SearchSource:
    url = str(result["url"]).strip()
    highlights = tuple(h.strip() for h in as_list(result.get("highlights")) if _text(h))
    published = _text(result.get("publishedDate"))
    return SearchSource(
        title=_text(result.get("title")) or url,
        url=url,
        snippet=_text(result.get("summary")) or _text(result.get("text")) or " ".join(highlights) or None,
        published_date=published,
        age_seconds=age_seconds(published, now),
        author=_text(result.get("author")),
        highlights=highlights,
    )


def _api_error(response: HttpResponse) -> SearchProviderError:
    """Exa's error envelope is `{"requestId", "error", "tag"}`; the tag names the cause
    (NO_MORE_CREDITS vs API_KEY_BUDGET_EXCEEDED on 402, INVALID_NUM_RESULTS on 400, ...)."""
    data = _loads(response.text())
    envelope: dict[str, Any] = data if isinstance(data, dict) else {}
    message, tag = _text(envelope.get("error")), _text(envelope.get("tag"))
    classified = classify_http_error("exa", response)
    if classified is None and message is not None:
        return api_error("exa", response, detail=redact_detail(response, f"{message} ({tag})" if tag else message))
    if classified is not None and tag:
        text = f"{classified.message} ({redact_detail(response, tag)})"
        return SearchProviderError("exa", text, classified.status, retry_after=classified.retry_after)
    return classified or api_error("exa", response)


def _rpc_message(response: HttpResponse) -> dict[str, Any]:
    """The JSON-RPC message: the first SSE `data:` line holding JSON, else the whole body."""
    text = response.text()
    events = (_loads(line[5:]) for line in text.splitlines() if line.startswith("data:"))
    payload = next((event for event in events if event), None) or _loads(text)
    if payload is None:
        raise SearchProviderError("exa", "Exa MCP returned a body that is neither JSON nor SSE", response.status)
    return payload if isinstance(payload, dict) else {}


def _exa_object(result: dict[str, Any], texts: list[str]) -> dict[str, Any] | None:
    """The first of structuredContent, data, result, itself, JSON text blocks that is an Exa response."""
    candidates = [result.get("structuredContent"), result.get("data"), result.get("result"), result]
    candidates.extend(_loads(text) for text in texts)
    return next((c for c in candidates if isinstance(c, dict) and any(k in c for k in _EXA_KEYS)), None)


def _listing(text: str) -> list[dict[str, str]]:
    """The plain-text result listing: sections starting `Title:`; `Text:` runs to the section's end."""
    results = []
    for section in _SECTION_RE.split(text):
        if section.startswith("Title:"):
            head, _, body = section.partition("\nText:")
            lines = [(line, prefix, name) for line in head.splitlines() for prefix, name in _TEXT_FIELDS.items()]
            fields = {name: line[len(prefix) :].strip() for line, prefix, name in lines if line.startswith(prefix)}
            results.append({**fields, "text": body.strip()})
    return results


def _delay_seconds(ctx: ProviderContext) -> float:
    value = ctx.settings.get("exa.searchDelayMs", DEFAULT_DELAY_MS)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"setting exa.searchDelayMs must be a number of milliseconds, got {value!r}")
    return max(0.0, float(value)) / 1000


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


PROVIDER: Final = Exa()
