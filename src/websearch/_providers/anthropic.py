"""Anthropic: Claude answers through the Messages API with its server-side `web_search` tool.

POST <base>/v1/messages?beta=true with the `web_search_20250305` tool, SYSTEM_PROMPT as system and
`max_tokens` (default 4096). Key: explicit, ANTHROPIC_SEARCH_API_KEY, ANTHROPIC_OAUTH_TOKEN,
ANTHROPIC_API_KEY, else the stored `anthropic` credential (an API key, or an OAuth login refreshed
at console.anthropic.com when expired). The official host takes `X-Api-Key`; ANTHROPIC_SEARCH_BASE_URL
(else ANTHROPIC_BASE_URL) names a gateway, which takes `Authorization: Bearer`; WEBSEARCH_ANTHROPIC_BASE_URL
transparently redirects the official request (X-Api-Key kept) and wins over both; OAuth tokens
(`sk-ant-oat…`) are always Bearer, with Claude Code's betas. The reply is one JSON message:
`server_tool_use` blocks give the search queries, `web_search_tool_result` blocks the sources
(relative `page_age` read as an age), text blocks the answer and its citations. The tool's own
`allowed_domains` / `blocked_domains` carry the domain lists; they cannot be combined, so with both
the allow list is sent (it already leaves out every excluded domain outside it).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import urlsplit

from .._context import base_url_env
from .._oauth import OAuthToken, oauth_token
from .._prompts import SYSTEM_PROMPT
from .._types import SearchCitation, SearchParams, SearchResponse, SearchSource, SearchUsage
from .._wire import HttpRequest, HttpResponse
from ..errors import SearchProviderError
from ._legacy import (
    Provider,
    Support,
    api_error,
    as_dict,
    as_list,
    clamp_count,
    json_object,
    redact_detail,
    require_key,
)

if TYPE_CHECKING:
    from .._context import ProviderContext

OFFICIAL_BASE: Final = "https://api.anthropic.com"
MESSAGES_PATH: Final = "/v1/messages"
TOKEN_URL: Final = "https://console.anthropic.com/v1/oauth/token"
OAUTH_CLIENT_ID: Final = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"  # Claude Code's public client
OAUTH_MARK: Final = "sk-ant-oat"  # what an OAuth access token contains
ENV_KEYS: Final = ("ANTHROPIC_SEARCH_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY")
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
_PAGE_AGE_RE: Final = re.compile(
    r"^(\d+)\s*(s|sec|second|m|min|minute|h|hour|d|day|w|week|mo|month|y|year)s?\s*(ago)?$", re.I
)
_UNIT_SECONDS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "mo": 2592000, "y": 31536000}
_LOCAL: Final = "Anthropic's web_search tool takes no result count, so at most {} of the sources it found are returned"
_JSON: Final = {"Content-Type": "application/json"}
_TOOL_STATUS: Final = {"too_many_requests": 429, "unavailable": 503}


class Anthropic(Provider):
    id = "anthropic"
    supports: ClassVar[dict[str, Support]] = {
        "limit": "approximate",
        "num_search_results": "approximate",
        "max_tokens": "native",
        "temperature": "native",
        "include_domains": "native",
        "exclude_domains": "native",
    }

    async def search(self, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        key, oauth = await self._credential(ctx)
        response = await ctx.send(self.id, self.build_request(params, ctx, key, oauth=oauth))
        return self.parse_response(response, params, ctx, oauth=oauth or OAUTH_MARK in key)

    def build_request(
        self, params: SearchParams, ctx: ProviderContext, key: str, *, oauth: bool = False
    ) -> HttpRequest:
        oauth = oauth or OAUTH_MARK in key
        base, gateway = _base_url(ctx)
        headers = {**_JSON, "Accept": "application/json", "anthropic-version": API_VERSION}
        headers["anthropic-beta"] = f"{OAUTH_BETAS},{WEB_SEARCH_BETA}" if oauth else WEB_SEARCH_BETA
        headers |= {"Authorization": f"Bearer {key}"} if oauth or gateway else {"X-Api-Key": key}
        if oauth:
            headers |= {"User-Agent": CLAUDE_CODE_UA, "x-app": "cli", "x-client-request-id": str(uuid.uuid4())}
        system: list[dict[str, Any]] = [{"type": "text", "text": t} for t in OAUTH_SYSTEM if oauth]
        system.append({"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}})
        f = ctx.filters(params)
        body: dict[str, Any] = {
            "model": (ctx.env.get("ANTHROPIC_SEARCH_MODEL") or "").strip() or DEFAULT_MODEL,
            "max_tokens": params.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": [{"role": "user", "content": params.query}],
            "tools": [_tool(f.include_domains, f.exclude_domains)],
            "system": system,
        }
        if params.temperature is not None:
            body["temperature"] = params.temperature
        url = ctx.endpoint(self.id, base + MESSAGES_PATH)
        return HttpRequest("POST", url, headers=headers, params=[("beta", "true")], json=body, secrets=(key,))

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        notices = clamp_count(params, 1, params.count or 1, self.label)[1]  # "limit not applied separately"
        if (n := params.count) is not None:
            name = "num_search_results" if params.num_search_results is not None else "limit"
            notices.append(f"{name}={n} applied locally: {_LOCAL.format(n)}")
        f = ctx.filters(params)
        inside = [d for d in f.exclude_domains if any(d == a or d.endswith("." + a) for a in f.include_domains)]
        if f.include_domains and inside:
            notices.append(
                f"exclude_domains={params.exclude_domains!r} not applied to {', '.join(inside)}: Anthropic's "
                "web_search takes allowed_domains or blocked_domains, not both (the others are outside the "
                "allowed ones)"
            )
        return notices

    def parse_response(
        self, response: HttpResponse, params: SearchParams, ctx: ProviderContext, *, oauth: bool = False
    ) -> SearchResponse:
        if not response.ok:
            raise api_error(self.id, response, detail=_error_detail(response))
        data = json_object(self.id, response)
        if data.get("type") == "error":
            raise SearchProviderError(self.id, f"Anthropic API error: {_error_detail(response)}", response.status)
        parsed = parse_message(data)
        if parsed.tool_errors and not parsed.sources:
            code = parsed.tool_errors[0]
            raise SearchProviderError(self.id, f"Anthropic web search failed: {code}", _TOOL_STATUS.get(code, 502))
        usage = as_dict(data.get("usage"))
        sources = parsed.sources[: params.count] if params.count else parsed.sources
        usage_values = (_int(usage.get("input_tokens")), _int(usage.get("output_tokens")))
        searches = _int(as_dict(usage.get("server_tool_use")).get("web_search_requests"))
        return SearchResponse(
            provider=self.id,
            answer=parsed.answer or None,
            sources=tuple(sources),
            citations=tuple(parsed.citations),
            search_queries=tuple(parsed.queries),
            usage=SearchUsage(*usage_values, search_requests=searches) if any((*usage_values, searches)) else None,
            model=_str(data.get("model")),
            request_id=response.headers.get("request-id") or _str(data.get("id")),
            auth_mode="oauth" if oauth else "api_key",
            notices=tuple(f"Anthropic web search tool reported an error: {code}" for code in parsed.tool_errors),
        )

    async def _credential(self, ctx: ProviderContext) -> tuple[str, bool]:
        """(key, is a stored OAuth login): explicit, env, then agent.db (OAuth refreshed when expired)."""
        static = ctx.api_keys.get(self.id) or next((v for n in ENV_KEYS if (v := ctx.env.get(n))), None)
        stored = None if static else ctx.credentials.get(self.id)
        if stored is not None and stored.kind == "oauth":
            return (await oauth_token(ctx, self.id, lambda t: refresh_token(ctx, t))).access_token, True
        return static or require_key(ctx, self.id, ENV_KEYS), False


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
                        SearchCitation(url, _str(cite.get("title")) or url, _str(cite.get("cited_text")))
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
    data = _loads(response) if response.ok else None
    if not isinstance(data, dict) or not _str(data.get("access_token")):
        raise SearchProviderError("anthropic", f"token endpoint answered {response.status}", response.status)
    expires_in = data.get("expires_in")
    expires = ctx.clock.now().timestamp() + expires_in if isinstance(expires_in, (int, float)) else None
    return OAuthToken(data["access_token"], _str(data.get("refresh_token")) or refresh, expires, extra=token.extra)


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
    base = next((v.strip().rstrip("/") for n in BASE_URL_ENV_KEYS if (v := ctx.env.get(n, "")).strip()), OFFICIAL_BASE)
    return base, urlsplit(base).hostname != urlsplit(OFFICIAL_BASE).hostname


def _error_detail(response: HttpResponse) -> str:
    """`<type>: <message>` from `{"type":"error","error":{...}}`, else the body."""
    error = as_dict(_loads(response)).get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        detail = f"{error.get('type') or 'error'}: {error['message']}"
        return redact_detail(response, detail)
    return response.safe_text()


def _loads(response: HttpResponse) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


PROVIDER: Final = Anthropic()
