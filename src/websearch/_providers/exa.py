"""Exa: neural web search through its REST API, or keyless through Exa's public MCP server.

With a key (explicit, `EXA_API_KEY` or agent.db), POST https://api.exa.ai/search with `x-api-key`,
asking for a per-result summary; the answer is the first three summaries. A call that uses the
richer parameters (`params.rich`) sends `rich_body` instead: mode as `type`, text + highlights
sized by text_chars (or summaries), dates (`recency` too, as a start date), category and domains;
the deep modes also ask for a synthesized answer (`outputSchema`, read with its grounding) and get
a longer timeout. Without a key, and only when Exa was chosen explicitly, the `web_search_exa`
tool of https://mcp.exa.ai/mcp is called (JSON-RPC `tools/call`, answered as SSE or JSON; only the
query and numResults are sent, the rest is disclosed) and either an Exa JSON response or its
plain-text `Title:` listing is read. Which of the two is decided once, in `plan` (`ExaState`).
With `exa.searchDelayMs` set, every Exa request, REST or MCP, starts at least that long after the
previous one: that is Exa's rate in the engine's pacing (`websearch._engine._pacing`), shared by every
process on one state store. Unset, Exa is not paced (its limit is the key's plan's).

REST errors are `{"requestId", "error", "tag"}`: the tag is the code (NO_MORE_CREDITS and
API_KEY_BUDGET_EXCEEDED are quota, INVALID_API_KEY a refused key, RATE_LIMIT_EXCEEDED a rate
limit). MCP errors are JSON-RPC `{"error": {"code", "message"}}`, or a tool result with `isError`.
"""

from __future__ import annotations

import itertools
import json
import re
import reprlib
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._core._filters import Filters, recency_start
from .._core._notices import Notice, approximated, dropped, not_applied, not_supported, overridden
from .._core._params import DEFAULT_TEXT_CHARS
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchCitation, SearchParams, SearchSource
from .._core._wire import HttpRequest, HttpResponse, loads_or_none
from ..errors import (
    AuthenticationFailed,
    InvalidResponse,
    QuotaExhausted,
    RateLimited,
    RequestRejected,
    UpstreamUnavailable,
)
from ._base import HttpProvider, Plan, Support, age_seconds, as_dict, as_list, count, redact_detail, require_key
from ._errors import ErrorEnvelope

if TYPE_CHECKING:
    from .._core._context import ProviderContext

API_URL: Final = "https://api.exa.ai/search"
MCP_URL: Final = "https://mcp.exa.ai/mcp"
MCP_TOOL: Final = "web_search_exa"
MCP_HEADERS: Final = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 100  # the API refuses numResults above 100
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


@dataclass(frozen=True, slots=True)
class ExaState:
    """`plan.state`: keyed (REST) or keyless (MCP), and what the REST parser must still apply."""

    keyed: bool
    people_hint: bool = False  # a 400 gets PEOPLE_HINT (category=people with include_domains)


class Exa(HttpProvider):
    info = PROVIDERS["exa"]
    # recency is applied (as startPublishedDate) only in a keyed call with richer parameters.
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
        "country": "native",  # userLocation, keyed calls only
    }
    envelope = ErrorEnvelope(
        message=(("error",),),
        code=(("tag",),),
        codes={
            "INVALID_API_KEY": AuthenticationFailed,
            "NO_MORE_CREDITS": QuotaExhausted,
            "API_KEY_BUDGET_EXCEEDED": QuotaExhausted,
            "RATE_LIMIT_EXCEEDED": RateLimited,
        },
    )
    #: The keyless MCP server's errors: JSON-RPC envelopes (or plain text) under their own prefix.
    mcp_envelope: ClassVar[ErrorEnvelope] = ErrorEnvelope(
        message=(("error", "message"),), code=(("error", "code"),), prefix="Exa MCP error"
    )

    def __init__(self) -> None:
        self._rpc_ids = itertools.count(1)

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        """Keyed (REST) with a key; keyless (MCP) only when chosen explicitly, else the key is missing."""
        if ctx.explicit and self.info.explicit_keyless:
            key = ctx.secret(self.id, self.info.env_keys, self.info.credential_ids)
        else:
            key = require_key(ctx, self.info)
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)
        if params.recency is not None and not (key and (params.rich or plan.filters.operators is not None)):
            plan.notices.append(not_supported("recency", params.recency, self.label))
        if key:
            self._plan_api(plan, key, ctx)
        else:
            self._plan_mcp(plan, ctx)
        return plan

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        state: ExaState = plan.state
        if not state.keyed:
            return self._parse_mcp(response, plan)
        if not response.ok:
            error = self.error(response, plan)
            if state.people_hint and error.status == 400:
                message = f"{error.message}; {PEOPLE_HINT}"
                error = type(error)(self.id, message, error.status, retry_after=error.retry_after)
            raise error
        result = _result(self.json_object(response), plan, "api_key")
        return result

    def _plan_api(self, plan: Plan, key: str, ctx: ProviderContext) -> None:
        params, f = plan.params, plan.filters
        assert plan.limit is not None
        if not params.rich and f.operators is None:  # exactly web_search.md's request
            body, timeout = search_body(params.query, plan.limit), None  # no operator: the query as given
            plan.state = ExaState(keyed=True)
        else:
            plan.notices += _entity_rules(plan)
            f = plan.filters
            dates, notices = _dates(plan)
            plan.notices += notices
            if f.include_domains and f.exclude_domains:  # the chain drops the excluded results
                how, why = "a filter on the results", "Exa does not accept include_domains and exclude_domains together"
                plan.notices.append(approximated(*f.domains_given(params, "exclude_domains"), how, why))
            body, timeout = rich_body(self.query_text(plan), plan.limit, f, dates), deep_timeout(f.mode, ctx)
            plan.state = ExaState(True, f.category == "people" and bool(f.include_domains))
        if params.country:
            body["userLocation"] = params.country  # the searcher's country, ISO 3166-1 alpha-2
        headers = {"Content-Type": "application/json", "x-api-key": key}
        url = ctx.endpoint(self.id, API_URL)
        plan.request = HttpRequest("POST", url, headers=headers, json=body, secrets=(key,), timeout=timeout)

    def _plan_mcp(self, plan: Plan, ctx: ProviderContext) -> None:
        params = plan.params
        arguments: dict[str, Any] = {"query": self.query_text(plan)}
        if params.count is not None:  # the tool's own default (8) applies otherwise
            arguments["numResults"] = plan.limit
        why = f"Exa's keyless MCP search does not support it (set {' or '.join(self.info.env_keys)})"
        plan.notices += [
            not_applied(name, getattr(params, name), why)
            for name in params.given()
            if name in self.supports and name not in _MCP_HONOURS and name != "recency"
        ]
        call = {"name": MCP_TOOL, "arguments": arguments}
        rpc = {"jsonrpc": "2.0", "id": next(self._rpc_ids), "method": "tools/call", "params": call}
        url = ctx.endpoint(self.id, MCP_URL)
        plan.request = HttpRequest("POST", url, headers=MCP_HEADERS, params=[("tools", MCP_TOOL)], json=rpc)
        plan.state = ExaState(keyed=False)

    def _parse_mcp(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        """A `web_search_exa` tools/call answer (SSE or JSON): an Exa JSON object or the plain-text listing."""
        if not response.ok:
            raise self.error(response, plan, envelope=self.mcp_envelope)
        message = _rpc_message(response)
        if message is None:
            raise InvalidResponse(self.id, "Exa MCP returned a body that is neither JSON nor SSE", response.status)
        error = message.get("error")
        if error is not None:
            detail = error.get("message") if isinstance(error, dict) else error
            text = detail if isinstance(detail, str) else reprlib.repr(detail)  # bounded depth, unlike str()
            raise RequestRejected(self.id, f"Exa MCP error: {redact_detail(response, text)}")
        result = message.get("result")
        if not isinstance(result, dict):
            raise InvalidResponse(self.id, UNEXPECTED_SHAPE)
        texts = [
            b["text"] for b in as_list(result.get("content")) if isinstance(b, dict) and isinstance(b.get("text"), str)
        ]
        if result.get("isError"):
            detail = redact_detail(response, " ".join(texts)) or "no detail"
            raise UpstreamUnavailable(self.id, f"Exa MCP tool error: {detail}")
        data = _exa_object(result, texts)
        if data is None:
            data = {"results": _listing("\n".join(texts))}
            if not data["results"]:
                raise InvalidResponse(
                    self.id, f"{UNEXPECTED_SHAPE} {redact_detail(response, ' '.join(texts))}".rstrip()
                )
        return _result(data, plan, "anonymous")


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
    elif filters.exclude_domains and filters.category not in _ENTITY_CATEGORIES:
        body["excludeDomains"] = list(filters.exclude_domains)
    body.update(dates)
    if mode in DEEP_TIMEOUTS:
        body["outputSchema"] = dict(ANSWER_SCHEMA)
    return body


def deep_timeout(mode: str | None, ctx: ProviderContext) -> float | None:
    """The per-request timeout of a deep mode, never shorter than the client's; None otherwise."""
    budget = DEEP_TIMEOUTS.get(mode or "")
    if budget is None or ctx.timeout is None:
        return budget
    return max(budget, ctx.timeout)


def _entity_rules(plan: Plan) -> list[Notice]:
    """Exa's company and people categories take no date filter and no excludeDomains: the dates
    are dropped (`plan.filters` loses them), the exclusion is made on the results instead. Exa's
    rule alone: another provider serving the same search keeps both."""
    f, params = plan.filters, plan.params
    if f.category not in _ENTITY_CATEGORIES:
        return []
    why = f'category="{f.category}" does not allow it'
    notices = [
        dropped(*given, why)
        for given, used in ((f.start_given(params), f.start), (f.end_given(params), f.end))
        if used is not None
    ]
    if f.start is not None or f.end is not None:
        plan.filters = replace(f, start=None, end=None, start_source=None, start_has_time=False, end_has_time=False)
    if f.exclude_domains and not f.include_domains:
        how = "a filter on the results"
        exa_why = f'Exa takes no excludeDomains with category="{f.category}"'
        notices.append(approximated(*f.domains_given(params, "exclude_domains"), how, exa_why))
    return notices


def _dates(plan: Plan) -> tuple[dict[str, str], list[Notice]]:
    """startPublishedDate / endPublishedDate from the ladder, `recency` folded in below it, and the
    notices for recency (the ladder's own notices come from the chain)."""
    params, f = plan.params, plan.filters
    notices: list[Notice] = []
    start, start_time = f.start, f.start_has_time
    end, end_time = f.end, f.end_has_time
    recency = params.recency
    if recency is not None:
        if f.start_source is not None:
            notices.append(overridden("recency", recency, f.start_source))
        elif f.category in _ENTITY_CATEGORIES:
            notices.append(dropped("recency", recency, f'category="{f.category}" does not allow it'))
        elif (start := recency_start(recency, plan.now)) is not None:
            how, why = f"startPublishedDate={_iso(start, False)}", "Exa has no recency window, only a start date"
            notices.append(approximated("recency", recency, how, why))
            if end is not None and end < start:
                notices.append(dropped(*f.end_given(params), "it is before the start"))
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


def _result(data: dict[str, Any], plan: Plan, auth_mode: str) -> ProviderResult:
    """Results cut to the count. The answer is a deep mode's synthesized output, else (only for a
    call without richer parameters, whose results come one block each) the first three summaries."""
    results = [r for r in as_list(data.get("results")) if isinstance(r, dict) and _text(r.get("url"))]
    results = results[: plan.limit]
    summaries = [
        f"**{_text(r.get('title')) or _text(r.get('url')) or 'Untitled'}**: {summary}"
        for r in results
        if (summary := _text(r.get("summary")))
    ]
    answer, citations = _output(as_dict(data.get("output")))
    if answer is None and not plan.params.rich:
        answer = "\n\n".join(summaries[:ANSWER_SUMMARIES]) or None
    return ProviderResult(
        answer=answer,
        sources=tuple(_source(r, plan.now) for r in results),
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


def _rpc_message(response: HttpResponse) -> dict[str, Any] | None:
    """The JSON-RPC response: the first SSE `data:` line holding a JSON object that is no
    notification (MCP lets a server send `notifications/...` before it; the first event was
    taken, and the search failed on its shape), else the whole body (None when it is neither)."""
    text = response.text()
    events = (loads_or_none(line[5:]) for line in text.splitlines() if line.startswith("data:"))
    answers = (e for e in events if e and not (isinstance(e, dict) and "method" in e and "id" not in e))
    payload = next(answers, None) or loads_or_none(text)
    if payload is None:
        return None
    return payload if isinstance(payload, dict) else {}


def _exa_object(result: dict[str, Any], texts: list[str]) -> dict[str, Any] | None:
    """The first of structuredContent, data, result, itself, JSON text blocks that is an Exa response."""
    candidates = [result.get("structuredContent"), result.get("data"), result.get("result"), result]
    candidates.extend(loads_or_none(text) for text in texts)
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


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


PROVIDER: Final = Exa()
