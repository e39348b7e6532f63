"""OpenAI Codex: the Responses API's `web_search` tool behind a ChatGPT subscription login (OAuth).

POST https://chatgpt.com/backend-api/codex/responses, streamed as SSE, with the stored ChatGPT
access token (`Authorization: Bearer`) and account (`chatgpt-account-id`); an expired token is
refreshed at https://auth.openai.com/oauth/token first. The backend insists on `stream: true`,
`store: false` and non-empty `instructions`; the tool is forced (`tool_choice`). Models are tried in
order (`PI_CODEX_WEB_SEARCH_MODEL` pins one), moving on only after an error the envelope marks as
`retry_variant`: the upstream's detail says the model is not supported for ChatGPT accounts (a 400). Sources
are the `url_citation` annotations (else links scraped from the answer), then the pages the search
consulted (a `web_search_call` item's `action.sources`, `{"type": "url", "url"}` entries, when the
stream carries them), de-duplicated (a cited link's `utm_source=openai` ignored); the count is a
local cap. Entries that are not objects are skipped wherever the stream has a list.
An answer that is only "see attached image" is not an answer. `include_domains` is the tool's
`filters.allowed_domains`; the tool has no block list or dates.

Errors: `{"error": {"message", "code", "type"}}` or `{"detail": ...}`; `insufficient_quota` is
quota, and a refused login says how to log in again. `resets_in_seconds` in the body is the retry
hint when `Retry-After` is absent. The stream's `error` and `response.failed` events fail the
search as their code says (else UpstreamUnavailable), their words redacted of the request's
secrets. `import_login(home)` reads the Codex CLI's `~/.codex/auth.json`.
"""

from __future__ import annotations

import base64
import json
import platform
import re
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import urlsplit, urlunsplit

from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchParams, SearchSource, SearchUsage
from .._core._version import __version__
from .._core._wire import HttpRequest, HttpResponse, loads_or_none
from .._http._oauth import OAuthToken, oauth_token
from .._http._sse import SseEvent, aiter_sse
from ..errors import (
    AuthenticationFailed,
    ConfigError,
    InvalidResponse,
    MissingCredentialError,
    NoResults,
    QuotaExhausted,
    RateLimited,
    RequestRejected,
    SearchProviderError,
    UpstreamUnavailable,
)
from ._base import Plan, Provider, Support, as_dict, as_int, as_list, as_str, honours, local_cap, redact_detail
from ._errors import ErrorClass, ErrorEnvelope, dig
from ._prompts import SYSTEM_PROMPT

if TYPE_CHECKING:
    from .._core._context import ProviderContext

URL: Final = "https://chatgpt.com/backend-api/codex/responses"
TOKEN_URL: Final = "https://auth.openai.com/oauth/token"
CLIENT_ID: Final = "app_EMoamEEZ73f0CkXaXp7hrann"  # the Codex CLI's public OAuth client
MODEL_ENV: Final = "PI_CODEX_WEB_SEARCH_MODEL"
MODELS: Final = (
    "gpt-5.5",
    "gpt-5.4",
    "gpt-5-codex",
    "gpt-5",
    "gpt-5.3-codex",
    "gpt-5.2-codex",
    "gpt-5.1-codex",
    "gpt-5-codex-mini",
)
USER_AGENT: Final = f"websearch/{__version__} ({platform.system()} {platform.release()}; {platform.machine()})"
AUTH_HINT: Final = "Log in again with `websearch auth import codex` or `websearch auth set codex`."
#: Error codes (or types) and the class they stand for, in HTTP bodies and in stream events alike.
CODES: Final[dict[str, ErrorClass]] = {
    "insufficient_quota": QuotaExhausted,
    "rate_limit_exceeded": RateLimited,
    "context_length_exceeded": RequestRejected,
}
_AUTH_CLAIM: Final = "https://api.openai.com/auth"
_SCOPE: Final = "openid profile email"
_UNSUPPORTED_RE: Final = re.compile(
    r"model is not supported|requested model is not supported|not supported when using codex with a chatgpt account",
    re.IGNORECASE,
)
_PLACEHOLDERS: Final = frozenset(
    {
        "see attached image",
        "attached image",
        "see the attached image",
        "see image",
        "see image above",
        "image above",
        "see image below",
        "image below",
    }
)
_DONE: Final = ("response.completed", "response.done", "response.incomplete")
_STOP: Final = frozenset({*_DONE, "[DONE]", "error", "response.failed"})
_LINK_START_RE: Final = re.compile(r"\[([^\[\]\n]*)\]\(")
_BARE_URL_RE: Final = re.compile(r"https?://\S+")
_CLOSERS: Final = {")": "(", "]": "[", "}": "{"}


@dataclass(frozen=True, slots=True)
class Shape:
    """What the plan decided: the stored login to use, the models in order, the URL and the body
    (everything but the model); the token is only known once the login is read (or refreshed)."""

    credential_id: str
    models: tuple[str, ...]
    url: str
    body: dict[str, Any]


class Codex(Provider):
    info = PROVIDERS["codex"]
    #: Query operators: `site:` is the tool's allowed domains; the others stay in the question as instructions.
    operators = honours(approximate="-site after before filetype intitle inurl")
    supports: ClassVar[dict[str, Support]] = {
        "limit": "approximate",
        "num_search_results": "approximate",
        "include_domains": "native",
    }
    envelope = ErrorEnvelope(
        message=(("error", "message"), ("detail",), ("error",)),
        code=(("error", "code"), ("error", "type")),
        codes=CODES,
        variant_pattern=_UNSUPPORTED_RE,
        prefix="Codex API error",
        auth_hint=AUTH_HINT,
        retry_after=(("error", "resets_in_seconds"),),  # its usage limit's reset
    )

    def plan(self, params: SearchParams, ctx: ProviderContext) -> Plan:
        plan = self.new_plan(params, ctx)
        local_cap(plan, self.label)
        logins = (c for c in self.info.credential_ids if (cred := ctx.credentials.get(c)) and cred.kind == "oauth")
        pinned = ctx.env.get(MODEL_ENV, "").strip()
        body = {
            "stream": True,
            "store": False,
            "input": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": self.query_text(plan)}]}
            ],
            "tools": [_tool(plan.filters.include_domains)],
            "tool_choice": {"type": "web_search"},
            "instructions": SYSTEM_PROMPT,
        }
        url = ctx.endpoint(self.id, URL)
        plan.state = Shape(next(logins, self.id), (pinned,) if pinned else MODELS, url, body)
        return plan

    async def search(self, plan: Plan, ctx: ProviderContext) -> ProviderResult:
        shape: Shape = plan.state
        token = await oauth_token(ctx, self.id, partial(refresh_token, ctx), credential_id=shape.credential_id)
        account = token.account_id or _account_id(token.access_token, None)
        if not account:
            raise MissingCredentialError(
                self.id,
                "No Codex OAuth credentials found (the login has no ChatGPT account id): run `websearch auth "
                "import codex` or pipe an OAuth JSON object with account_id to `websearch auth set codex`",
            )
        for i, model in enumerate(shape.models):
            async with ctx.stream(self.id, _request(shape, token.access_token, account, model)) as (head, lines):
                if not head.ok:
                    error = self.error(replace(head, body=b"".join([line async for line in lines])), plan)
                    if error.retry_variant and i + 1 < len(shape.models):
                        continue
                    raise error
                events: list[SseEvent] = []
                async for event in aiter_sse(lines):
                    events.append(event)
                    if _event(event)[0] in _STOP:
                        break
            return parse_events(events, plan, head)
        raise AssertionError("unreachable: the last model's error is raised")

    def import_login(self, home: Path) -> OAuthToken:
        """The ChatGPT login of the official Codex CLI (`~/.codex/auth.json` under `home`)."""
        return import_credentials(home)


def _request(shape: Shape, access_token: str, account_id: str, model: str) -> HttpRequest:
    headers = {
        "Authorization": f"Bearer {access_token}",
        "chatgpt-account-id": account_id,
        "OpenAI-Beta": "responses=experimental",
        "originator": "websearch",
        "User-Agent": USER_AGENT,
        "Accept": "text/event-stream",
        "Content-Type": "application/json",
    }
    body = {"model": model, **shape.body}
    return HttpRequest("POST", shape.url, headers=headers, json=body, secrets=(access_token,))


def _tool(include: tuple[str, ...]) -> dict[str, Any]:
    tool: dict[str, Any] = {"type": "web_search", "search_context_size": "high"}
    if include:
        tool["filters"] = {"allowed_domains": list(include)}
    return tool


def parse_events(events: list[SseEvent], plan: Plan, head: HttpResponse | None = None) -> ProviderResult:
    """The result of a whole event stream; raises on error events, a cut stream or an image-only
    answer. `head` is the stream's response: its request's secrets are redacted from error events."""
    head = head if head is not None else HttpResponse(200, {}, b"")
    deltas: list[str] = []
    parts: list[str] = []
    cited: dict[str, SearchSource] = {}
    consulted: dict[str, SearchSource] = {}
    done: dict[str, Any] | None = None
    for event in events:
        kind, data = _event(event)
        if kind == "[DONE]":
            done = done or {}
            break
        if kind == "response.output_text.delta" and isinstance(data.get("delta"), str):
            deltas.append(data["delta"])
        elif kind == "response.output_item.done":
            _read_item(as_dict(data.get("item")), parts, cited, consulted)
        elif kind in _DONE:
            done = as_dict(data.get("response"))
        elif kind == "error":
            err = as_dict(data.get("error")) or data
            code, text = (redact_detail(head, str(err.get(k)), n) for k, n in (("code", 80), ("message", 300)))
            raise _stream_error(err, f"Codex error ({code}): {text}")
        elif kind == "response.failed":
            err = as_dict(as_dict(data.get("response")).get("error"))
            raise _stream_error(err, f"Codex request failed: {redact_detail(head, str(err.get('message')))}")
    if done is None:
        raise InvalidResponse("codex", "Codex stream ended before the response was complete", 500)
    final, streamed = "\n\n".join(parts).strip(), "".join(deltas).strip()
    real = [text for text in (final, streamed) if text and not is_image_placeholder(text)]
    if not real and not cited and not consulted and (final or streamed):
        raise NoResults("codex", "Codex returned image-only response", 502)
    answer = real[0] if real else ""
    found = {_same(s.url): s for s in list(cited.values()) or scrape_links(answer)}
    found |= {key: s for key, s in consulted.items() if key not in found}
    return ProviderResult(
        answer=answer or None,
        sources=tuple(list(found.values())[: plan.limit]),
        usage=_usage(as_dict(done.get("usage"))),
        model=as_str(done.get("model")),
        request_id=as_str(done.get("id")),
        auth_mode="oauth",
    )


def _stream_error(err: dict[str, Any], message: str) -> SearchProviderError:
    """An `error` / `response.failed` event: the class its code says, else UpstreamUnavailable."""
    code = err.get("code")
    cls = CODES.get(code, UpstreamUnavailable) if isinstance(code, str) else UpstreamUnavailable
    return cls("codex", message, 500)


def is_image_placeholder(text: str) -> bool:
    return text.strip().lstrip("[(\"'`*_").rstrip("])\"'`*_.!?").lower() in _PLACEHOLDERS


def scrape_links(text: str) -> list[SearchSource]:
    """Sources from `[title](url)` links (balanced parentheses), then bare http(s) URLs."""
    found: dict[str, SearchSource] = {}
    rest: list[str] = []
    pos = 0
    closing: dict[int, int] | None = None
    for match in _LINK_START_RE.finditer(text):
        if match.start() < pos:
            continue
        closing = _closing_parens(text) if closing is None else closing
        end = closing.get(match.end() - 1)
        if end is None:
            continue
        url = _clean_url(text[match.end() : end])
        if url and url not in found:
            found[url] = SearchSource(title=match.group(1).strip() or url, url=url)
        rest.append(text[pos : match.start()])
        pos = end + 1
    rest.append(text[pos:])
    for match in _BARE_URL_RE.finditer(" ".join(rest)):
        url = _clean_url(match.group(0))
        if url and url not in found:
            found[url] = SearchSource(title=url, url=url)
    return list(found.values())


def _closing_parens(text: str) -> dict[int, int]:
    """Where each "(" is closed, within its run of non-space characters (one pass: scanning ahead
    from every link start took quadratic time: about a minute for 30 KB of `[](` repeated)."""
    closing: dict[int, int] = {}
    open_at: list[int] = []
    for i, char in enumerate(text):
        if char == "(":
            open_at.append(i)
        elif char == ")":
            if open_at:
                closing[open_at.pop()] = i
        elif char.isspace():
            open_at.clear()
    return closing


# -- credentials -------------------------------------------------------------------------------


async def refresh_token(ctx: ProviderContext, token: OAuthToken) -> OAuthToken:
    """Trade the refresh token for a new access token, as the Codex CLI does."""
    refresh = token.refresh_token or ""
    body = {"client_id": CLIENT_ID, "grant_type": "refresh_token", "refresh_token": refresh, "scope": _SCOPE}
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    url = ctx.endpoint("codex", TOKEN_URL)
    request = HttpRequest("POST", url, headers=headers, json=body, secrets=(refresh, token.access_token))
    response = await ctx.send("codex", request)
    data = _json(response.body)
    if not response.ok:  # a refused refresh (400 invalid_grant, 401 refresh_token_reused) is a refused login
        cls = AuthenticationFailed if response.status < 500 else UpstreamUnavailable
        raise cls("codex", f"the token endpoint answered {response.status}: {_detail(response, data)}", response.status)
    access = as_str(data.get("access_token"))
    if access is None:
        raise InvalidResponse("codex", "the token endpoint's answer has no access_token", response.status)
    expires_in = as_int(data.get("expires_in"))
    expires = ctx.clock.now().timestamp() + expires_in if expires_in is not None else as_int(_jwt(access).get("exp"))
    account = token.account_id or _account_id(access, as_str(data.get("id_token")))
    return OAuthToken(
        access, as_str(data.get("refresh_token")) or token.refresh_token, expires, account, None, token.extra
    )


def import_credentials(home: Path) -> OAuthToken:
    """The ChatGPT login the official Codex CLI keeps in `~/.codex/auth.json`."""
    path = home / ".codex" / "auth.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"no Codex login found at {path}: run `codex login` (with ChatGPT) first") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path} is not readable JSON ({type(exc).__name__})") from None
    tokens = as_dict(data.get("tokens")) if isinstance(data, dict) else {}
    access, refresh = as_str(tokens.get("access_token")), as_str(tokens.get("refresh_token"))
    if access is None or refresh is None:
        raise ConfigError(f"{path} holds no ChatGPT login (tokens.access_token and tokens.refresh_token)")
    account = as_str(tokens.get("account_id")) or _account_id(access, as_str(tokens.get("id_token")))
    return OAuthToken(access, refresh, as_int(_jwt(access).get("exp")), account)


def _account_id(access: str, id_token: str | None) -> str | None:
    for jwt in (access, id_token or ""):
        account = as_dict(_jwt(jwt).get(_AUTH_CLAIM)).get("chatgpt_account_id")
        if isinstance(account, str) and account:
            return account
    return None


def _jwt(token: str) -> dict[str, Any]:
    """The claims of a JWT (unverified: only `exp` and the account id are read)."""
    parts = token.split(".")
    try:
        return _json(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))) if len(parts) == 3 else {}
    except ValueError:
        return {}


# -- parsing helpers ---------------------------------------------------------------------------


def _event(event: SseEvent) -> tuple[str, dict[str, Any]]:
    """(type, data): the type from the JSON data, else the `event:` name; `[DONE]` ends a stream."""
    if event.data.strip() == "[DONE]":
        return "[DONE]", {}
    data = _json(event.data)
    return as_str(data.get("type")) or event.event, data


def _read_item(
    item: dict[str, Any], parts: list[str], cited: dict[str, SearchSource], consulted: dict[str, SearchSource]
) -> None:
    """A finished output item: a message's text and `url_citation`s, a reasoning summary, or the
    pages a `web_search_call` consulted (`action.sources`). Sources are keyed by `_same`."""
    kind = item.get("type")
    if kind == "message":
        for part in map(as_dict, as_list(item.get("content"))):
            if part.get("type") != "output_text":
                continue
            if as_str(part.get("text")):
                parts.append(part["text"])
            for note in map(as_dict, as_list(part.get("annotations"))):
                if note.get("type") == "url_citation":
                    _add(cited, note.get("url"), note.get("title"))
    elif kind == "reasoning":
        parts.extend(
            s["text"]
            for s in map(as_dict, as_list(item.get("summary")))
            if s.get("type") == "summary_text" and as_str(s.get("text"))
        )
    elif kind == "web_search_call":
        for source in map(as_dict, as_list(as_dict(item.get("action")).get("sources"))):
            if source.get("type") == "url":
                _add(consulted, source.get("url"), None)


def _add(sources: dict[str, SearchSource], url: object, title: object) -> None:
    if (link := as_str(url)) and (key := _same(link)) not in sources:
        sources[key] = SearchSource(title=as_str(title) or link, url=link)


def _same(url: str) -> str:
    """What two links to one page share: the URL without the `utm_source=openai` that OpenAI
    appends to the links it cites (the pages a search consulted come without it)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    query = "&".join(p for p in parts.query.split("&") if p and p != "utm_source=openai")
    return urlunsplit(parts._replace(query=query))


def _usage(usage: dict[str, Any]) -> SearchUsage | None:
    if not usage:
        return None
    given, cached = (
        as_int(usage.get("input_tokens")),
        as_int(as_dict(usage.get("input_tokens_details")).get("cached_tokens")),
    )
    inputs = given - (cached or 0) if given is not None else None
    return SearchUsage(inputs, as_int(usage.get("output_tokens")), as_int(usage.get("total_tokens")))


def _detail(response: HttpResponse, data: dict[str, Any]) -> str:
    """The token endpoint's own words (by the envelope's message paths), redacted; else its body."""
    text = next((t for path in Codex.envelope.message if (t := as_str(dig(data, path)))), None)
    return (redact_detail(response, text) if text else "") or response.safe_text() or "empty body"


def _clean_url(raw: str) -> str | None:
    url = raw
    while url and (
        url[-1] in ".,!?;:'\"" or (url[-1] in _CLOSERS and url.count(_CLOSERS[url[-1]]) < url.count(url[-1]))
    ):
        url = url[:-1]
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    userinfo, at, hostport = parts.netloc.rpartition("@")
    netloc = userinfo + at + hostport.lower()
    return urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query, parts.fragment))


def _json(text: str | bytes) -> dict[str, Any]:
    return as_dict(loads_or_none(text))


PROVIDER: Final = Codex()
