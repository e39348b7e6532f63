"""Anthropic: Claude answers through the Messages API with its server-side `web_search` tool.

POST <base>/v1/messages?beta=true with the `web_search_20250305` tool, SYSTEM_PROMPT as system and
`max_tokens` (default 4096; `temperature` when given; the model is ANTHROPIC_SEARCH_MODEL, else
claude-haiku-4-5). Key: explicit, the registry's env keys (ANTHROPIC_SEARCH_API_KEY,
ANTHROPIC_OAUTH_TOKEN, ANTHROPIC_API_KEY), else the stored `anthropic` credential (an API key, or
an OAuth login refreshed at console.anthropic.com when expired, when searching). The official
host takes `X-Api-Key`; ANTHROPIC_SEARCH_BASE_URL (else ANTHROPIC_BASE_URL) names a gateway,
which takes `Authorization: Bearer`; WEBSEARCH_ANTHROPIC_BASE_URL transparently redirects the
official request (X-Api-Key kept) and wins over both; OAuth tokens (`sk-ant-oat…`) are always
Bearer, with Claude Code's betas and identity. The tool's own `allowed_domains` /
`blocked_domains` carry the domain lists; they cannot be combined, so with both the allow list is
sent (it already leaves out every excluded domain outside it). The count is a local cap only.

The reply is one JSON message: `server_tool_use` blocks give the search queries,
`web_search_tool_result` blocks the sources (relative `page_age` read as an age), text blocks the
answer and its citations. A citation's `cited_text` comes as the page's HTML text, entities and all
(real replies carry "Today&#x27;s sunrise"); its entities are decoded. A tool error
(`web_search_tool_result_error`) with no sources fails the search as its code says
(too_many_requests: rate limited, unavailable: unavailable, a bad query: rejected); alongside
sources it is a `partial` notice (the code redacted like every upstream text). Errors come as
`{"type": "error", "error": {"type", "message"}}`, also inside a 200; a 404 means the model or the
endpoint is wrong.

A long turn may stop with `stop_reason: "pause_turn"`: it is continued as the Messages API
documents, by sending the conversation back with the paused content appended as the assistant's
message (`[user query, {role: assistant, content: <every paused reply's blocks, as returned>}]`),
up to MAX_CONTINUATIONS times, all inside one request timeout (each continuation gets what is left
of it). The answer is the last reply's text; sources, citations, queries and usage are gathered
across every reply. A turn still paused (continuations or time used up, or a continuation that
failed) is served as it stands, with a `partial` notice that the answer may be incomplete.
"""

from __future__ import annotations

import html
import re
import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import urlsplit

from .._core._context import base_url_env, env_url
from .._core._notices import cut_short, dropped, partial
from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchCitation, SearchParams, SearchSource, SearchUsage
from .._core._wire import HttpRequest, HttpResponse
from .._http._oauth import OAuthToken, oauth_token
from ..errors import (
    AuthenticationFailed,
    InvalidResponse,
    RateLimited,
    RequestRejected,
    SearchProviderError,
    UpstreamUnavailable,
)
from ._base import (
    HttpProvider,
    Plan,
    Support,
    as_dict,
    as_int,
    as_list,
    as_str,
    honours,
    local_cap,
    redact_detail,
    require_key,
)
from ._errors import ErrorEnvelope
from ._prompts import SYSTEM_PROMPT

if TYPE_CHECKING:
    from .._core._context import ProviderContext

OFFICIAL_BASE: Final = "https://api.anthropic.com"
MESSAGES_PATH: Final = "/v1/messages"
TOKEN_URL: Final = "https://console.anthropic.com/v1/oauth/token"
OAUTH_CLIENT_ID: Final = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"  # Claude Code's public client
OAUTH_MARK: Final = "sk-ant-oat"  # what an OAuth access token contains
BASE_URL_ENV_KEYS: Final = ("ANTHROPIC_SEARCH_BASE_URL", "ANTHROPIC_BASE_URL")
DEFAULT_MODEL: Final = "claude-haiku-4-5"
DEFAULT_MAX_TOKENS: Final = 4096
API_VERSION: Final = "2023-06-01"
WEB_SEARCH_BETA: Final = "web-search-2025-03-05"
OAUTH_BETAS: Final = "claude-code-20250219,oauth-2025-04-20"
CLAUDE_CODE_UA: Final = "claude-cli/2.0.14 (external, cli)"
OAUTH_SYSTEM: Final = (  # OAuth tokens are only accepted behind Claude Code's identity
    "You are Claude Code, Anthropic's official CLI for Claude.",
    "You are a helpful AI assistant with web search capabilities.",
)
TOOL: Final = {"type": "web_search_20250305", "name": "web_search"}
NOT_FOUND: Final = "Anthropic web search returned 404 (model or endpoint not found)."
#: The status each documented error type stands for (for an error reported inside a 200).
ERROR_STATUS: Final = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
#: The web_search tool's error codes: the class and HTTP-like status a failed search gets.
TOOL_ERRORS: Final[dict[str, tuple[type[SearchProviderError], int]]] = {
    "too_many_requests": (RateLimited, 429),
    "unavailable": (UpstreamUnavailable, 503),
    "invalid_tool_input": (RequestRejected, 400),
    "query_too_long": (RequestRejected, 400),
}
_PAGE_AGE_RE: Final = re.compile(
    r"^(\d{1,9})\s*(s|sec|second|m|min|minute|h|hour|d|day|w|week|mo|month|y|year)s?\s*(ago)?$", re.I
)  # at most 9 digits: int() refuses 4300 of them, and rendering a huge age as JSON fails
_UNIT_SECONDS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "mo": 2592000, "y": 31536000}
_JSON: Final = {"Content-Type": "application/json"}
#: How many times a turn stopped with `pause_turn` is continued before it is served as it stands.
MAX_CONTINUATIONS: Final = 3
_INCOMPLETE: Final = "the answer may be incomplete"


@dataclass(frozen=True, slots=True)
class Auth:
    """How the plan authenticates: `oauth` (Bearer with Claude Code's identity), and `login` when
    the token is agent.db's OAuth login, fetched (and refreshed if expired) when searching."""

    oauth: bool
    login: bool


class Anthropic(HttpProvider):
    info = PROVIDERS["anthropic"]
    #: Query operators: Domains go in the tool's allowed/blocked lists; dates and the others stay in the question as
    #: instructions.
    operators = honours(approximate="after before filetype intitle inurl")
    supports: ClassVar[dict[str, Support]] = {
        "limit": "approximate",
        "num_search_results": "approximate",
        "max_tokens": "native",
        "temperature": "native",
        "include_domains": "native",
        "exclude_domains": "native",
    }
    envelope = ErrorEnvelope(message=(("error", "message"),), code=(("error", "type"),), statuses={404: NOT_FOUND})

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        key = self._key(ctx)
        plan = self.new_plan(params, ctx, state=Auth(oauth=key is None or OAUTH_MARK in key, login=key is None))
        local_cap(plan, self.label)
        f = plan.filters
        inside = [d for d in f.exclude_domains if any(d == a or d.endswith("." + a) for a in f.include_domains)]
        if f.include_domains and inside:
            why = (
                f"Anthropic's web_search takes allowed_domains or blocked_domains, not both, so {', '.join(inside)} "
                "(inside the allowed ones) stays searchable; the others are outside them"
            )
            plan.notices.append(dropped(*f.domains_given(params, "exclude_domains"), why))
        plan.request = _request(plan, ctx, key)
        return plan

    async def search(self, plan: Plan, ctx: ProviderContext) -> ProviderResult:
        request = plan.request
        assert request is not None
        started, budget = ctx.clock.monotonic(), _budget(request, ctx)
        if plan.state.login:
            token = (await oauth_token(ctx, self.id, lambda t: refresh_token(ctx, t))).access_token
            request = replace(
                request, headers={**request.headers, "Authorization": f"Bearer {token}"}, secrets=(token,)
            )
        replies = [self.reply(await ctx.send(self.id, request), plan)]
        why = None
        while replies[-1].paused and why is None:
            left = budget - (ctx.clock.monotonic() - started)
            if len(replies) > MAX_CONTINUATIONS:
                why = f"it was still paused after {MAX_CONTINUATIONS} continuations"
            elif left <= 0:
                why = "the time allowed for the search ran out before it finished"
            else:
                try:
                    replies.append(self.reply(await ctx.send(self.id, _continued(request, replies, left)), plan))
                except SearchProviderError as exc:  # already mapped and redacted
                    why = f"continuing it failed ({exc.message})"
        return self.result(replies, plan, why)

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        return self.result([self.reply(response, plan)], plan)

    def reply(self, response: HttpResponse, plan: Plan) -> Answer:
        """One Messages API answer, or the error it stands for (a 2xx error envelope included)."""
        data = self.answer_object(response, plan)
        if data.get("type") == "error":
            kind = as_str(as_dict(data.get("error")).get("type")) or ""
            raise self.error(response, plan, status=ERROR_STATUS.get(kind, 502), body=data)
        return Answer(response, data)

    def result(self, replies: list[Answer], plan: Plan, why: str | None = None) -> ProviderResult:
        """The turn's result: the last reply's answer, and what every reply found. A turn that
        is still paused gets a `partial` notice (`why` it was not continued)."""
        last = replies[-1]
        turn = parse_message({"content": [b for r in replies for b in as_list(r.data.get("content"))]})
        codes = [redact_detail(last.response, code, 80) for code in turn.tool_errors]
        if codes and not turn.sources:
            cls, status = TOOL_ERRORS.get(turn.tool_errors[0], (UpstreamUnavailable, 502))
            raise cls(self.id, f"Anthropic web search failed: {codes[0]}", status)
        notices = [
            (cut_short if _passing(code) else partial)(f"Anthropic web search tool reported an error: {c}")
            for code, c in zip(turn.tool_errors, codes, strict=True)
        ]
        if last.paused:
            why = f" and {why}" if why else ""
            notices.append(cut_short(f"Anthropic paused the turn{why}: {_INCOMPLETE}"))
        return ProviderResult(
            answer=parse_message(last.data).answer or None,
            sources=tuple(turn.sources[: plan.limit]),
            citations=tuple(turn.citations),
            search_queries=tuple(turn.queries),
            usage=_usage(replies),
            model=_str(last.data.get("model")),
            request_id=last.response.headers.get("request-id") or _str(last.data.get("id")),
            auth_mode="oauth" if plan.state.oauth else "api_key",
            notices=tuple(notices),
        )

    def _key(self, ctx: ProviderContext) -> str | None:
        """The key to send (explicit, env, then agent.db), or None for a stored OAuth login."""
        static = ctx.api_keys.get(self.id) or next((v for n in self.info.env_keys if (v := ctx.env.get(n))), None)
        stored = None if static else ctx.credentials.get(self.id)
        if stored is not None and stored.kind == "oauth":
            return None
        return static or require_key(ctx, self.info)


@dataclass(frozen=True, slots=True)
class Answer:
    """One Messages API answer of a turn: the response (for its headers and secrets) and its body."""

    response: HttpResponse
    data: dict[str, Any]

    @property
    def paused(self) -> bool:
        return self.data.get("stop_reason") == "pause_turn"


@dataclass
class Message:
    """What `parse_message` reads out of a Messages API reply."""

    answer: str = ""
    sources: list[SearchSource] = field(default_factory=list)
    citations: list[SearchCitation] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    tool_errors: list[str] = field(default_factory=list)


def parse_message(data: dict[str, Any]) -> Message:
    """Walk `content[]`. Consecutive text blocks are one passage (Anthropic splits text at each
    citation); passages separated by tool blocks are joined with a blank line."""
    out, passages, current = Message(), [], []
    for block in (b for b in as_list(data.get("content")) if isinstance(b, dict)):
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            current.append(block["text"])
            for cite in (c for c in as_list(block.get("citations")) if isinstance(c, dict)):
                if url := _str(cite.get("url")):
                    out.citations.append(
                        SearchCitation(url, _str(cite.get("title")) or url, _decoded(_str(cite.get("cited_text"))))
                    )
            continue
        passages.append("".join(current).strip())
        current = []
        query = _str(as_dict(block.get("input")).get("query"))
        if kind == "server_tool_use" and str(block.get("name")).endswith("web_search") and query:
            out.queries.append(query)
        content = block.get("content") if kind == "web_search_tool_result" else None
        if isinstance(content, dict) and content.get("type") == "web_search_tool_result_error":
            out.tool_errors.append(str(content.get("error_code") or "unknown"))
        for item in (i for i in as_list(content) if isinstance(i, dict) and i.get("type") == "web_search_result"):
            url = _str(item.get("url"))
            if url and all(s.url != url for s in out.sources):
                title, age = _str(item.get("title")) or url, _str(item.get("page_age"))
                out.sources.append(SearchSource(title, url, published_date=age, age_seconds=parse_page_age(age)))
    out.answer = "\n\n".join(p for p in [*passages, "".join(current).strip()] if p)
    return out


def parse_page_age(value: str | None) -> int | None:
    """Seconds for a relative `page_age` ("2 days ago", "3h"); None for anything else."""
    match = _PAGE_AGE_RE.match(value.strip()) if value else None
    if match is None:
        return None
    unit = match.group(2).lower()
    return int(match.group(1)) * _UNIT_SECONDS["mo" if unit.startswith("mo") else unit[0]]


async def refresh_token(ctx: ProviderContext, token: OAuthToken) -> OAuthToken:
    """Trade the refresh token for a new access token at Anthropic's OAuth token endpoint."""
    refresh = token.refresh_token or ""
    body = {"grant_type": "refresh_token", "refresh_token": refresh, "client_id": OAUTH_CLIENT_ID}
    url, secrets = ctx.endpoint("anthropic", TOKEN_URL), (refresh, token.access_token)
    response = await ctx.send("anthropic", HttpRequest("POST", url, _JSON, json=body, secrets=secrets))
    message = f"token endpoint answered {response.status}"
    if not response.ok:  # a refused refresh (400 invalid_grant, 401) is a refused login
        cls = AuthenticationFailed if response.status < 500 else UpstreamUnavailable
        raise cls("anthropic", message, response.status)
    try:
        data = response.json()
    except ValueError:
        data = None
    access = as_str(data.get("access_token")) if isinstance(data, dict) else None
    if not isinstance(data, dict) or access is None:
        raise InvalidResponse("anthropic", message, response.status)
    expires_in = data.get("expires_in")
    expires = ctx.clock.now().timestamp() + expires_in if isinstance(expires_in, (int, float)) else None
    return OAuthToken(access, _str(data.get("refresh_token")) or refresh, expires, extra=token.extra)


def _continued(request: HttpRequest, replies: list[Answer], timeout: float) -> HttpRequest:
    """The request that continues a paused turn: the user's query, then every paused reply's
    content, as returned, as the assistant's message; with what is left of the time allowed."""
    content = [b for r in replies for b in as_list(r.data.get("content"))]
    messages = [*request.json["messages"][:1], {"role": "assistant", "content": content}]
    return replace(request, json={**request.json, "messages": messages}, timeout=timeout)


def _budget(request: HttpRequest, ctx: ProviderContext) -> float:
    """The seconds a whole turn may take: one request timeout (the request's, else the client's)."""
    timeout = request.timeout if request.timeout is not None else ctx.timeout
    return float(timeout) if timeout is not None and 0 < timeout < float("inf") else ctx.settings.http_timeout


def _passing(code: str) -> bool:
    """Whether a tool error is of a passing kind (`too_many_requests`, `unavailable`): the
    answer beside it may be whole if asked again. A code the table does not name (such as
    `max_uses_exceeded`, the turn's own limit) is not."""
    known = TOOL_ERRORS.get(code)
    return known is not None and issubclass(known[0], (RateLimited, UpstreamUnavailable))


def _usage(replies: list[Answer]) -> SearchUsage | None:
    """Tokens and searches, summed over the turn's replies (None where no reply gave a count)."""
    totals: list[int | None] = [None, None, None]
    for usage in (as_dict(r.data.get("usage")) for r in replies):
        searches = as_dict(usage.get("server_tool_use")).get("web_search_requests")
        for i, raw in enumerate((usage.get("input_tokens"), usage.get("output_tokens"), searches)):
            if (value := as_int(raw)) is not None:
                totals[i] = (totals[i] or 0) + value
    return SearchUsage(totals[0], totals[1], search_requests=totals[2]) if any(totals) else None


def _request(plan: Plan, ctx: ProviderContext, key: str | None) -> HttpRequest:
    """The Messages request; without `key` (a stored login) it carries no credential yet."""
    params, oauth = plan.params, plan.state.oauth
    base, gateway = _base_url(ctx)
    headers = {**_JSON, "Accept": "application/json", "anthropic-version": API_VERSION}
    headers["anthropic-beta"] = f"{OAUTH_BETAS},{WEB_SEARCH_BETA}" if oauth else WEB_SEARCH_BETA
    if key is not None:
        headers |= {"Authorization": f"Bearer {key}"} if oauth or gateway else {"X-Api-Key": key}
    if oauth:
        headers |= {"User-Agent": CLAUDE_CODE_UA, "x-app": "cli", "x-client-request-id": str(uuid.uuid4())}
    system: list[dict[str, Any]] = [{"type": "text", "text": t} for t in OAUTH_SYSTEM if oauth]
    system.append({"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}})
    f = plan.filters
    body: dict[str, Any] = {
        "model": (ctx.env.get("ANTHROPIC_SEARCH_MODEL") or "").strip() or DEFAULT_MODEL,
        "max_tokens": params.max_tokens or DEFAULT_MAX_TOKENS,
        "messages": [{"role": "user", "content": Anthropic.query_text(plan)}],
        "tools": [_tool(f.include_domains, f.exclude_domains)],
        "system": system,
    }
    if params.temperature is not None:
        body["temperature"] = params.temperature
    url = ctx.endpoint("anthropic", base + MESSAGES_PATH)
    secrets = (key,) if key else ()
    return HttpRequest("POST", url, headers=headers, params=[("beta", "true")], json=body, secrets=secrets)


def _tool(include: tuple[str, ...], exclude: tuple[str, ...]) -> dict[str, Any]:
    """The web_search tool, with the allow list, else the block list."""
    if include:
        return {**TOOL, "allowed_domains": list(include)}
    if exclude:
        return {**TOOL, "blocked_domains": list(exclude)}
    return dict(TOOL)


def _base_url(ctx: ProviderContext) -> tuple[str, bool]:
    """(base URL, is a gateway). WEBSEARCH_ANTHROPIC_BASE_URL redirects the official request."""
    if ctx.env.get(base_url_env("anthropic")):
        return OFFICIAL_BASE, False
    base = (env_url(ctx.env, BASE_URL_ENV_KEYS) or OFFICIAL_BASE).rstrip("/")
    return base, urlsplit(base).hostname != urlsplit(OFFICIAL_BASE).hostname


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _decoded(text: str | None) -> str | None:
    """A cited text with its HTML entities decoded (`&#x27;` as `'`)."""
    return html.unescape(text) if text is not None and "&" in text else text


PROVIDER: Final = Anthropic()
