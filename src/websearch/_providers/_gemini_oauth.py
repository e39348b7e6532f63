"""Gemini through Cloud Code: the Google OAuth logins of the Gemini CLI and Antigravity.

POST <endpoint>/v1internal:streamGenerateContent?alt=sse with a Bearer token and the Developer API
request wrapped as `{project, model, request, userAgent, requestId}`. Gemini CLI logins use
cloudcode-pa; Antigravity logins (id `google-antigravity`, or `"client": "antigravity"` in the login
JSON) try daily-cloudcode-pa, then its sandbox. A Gemini CLI login without `project_id` (the CLI's
own file has none) learns it from `loadCodeAssist` and keeps it. Expired tokens are refreshed at
https://oauth2.googleapis.com/token with the OAuth client that issued them (a refused refresh quotes
the endpoint's words, with the login's tokens redacted). `import_credentials`
reads the Gemini CLI's own login file. Failed answers are mapped by the provider's envelope (the
`error` callables passed in).
"""

from __future__ import annotations

import dataclasses
import json
import platform
import random
import string
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from .._core._wire import HttpRequest
from .._http._oauth import OAuthToken, Refresh, oauth_token
from ..errors import ConfigError, InvalidResponse
from ._base import as_dict, as_str
from ._errors import class_for_status, redact_detail

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from .._core._context import ProviderContext
    from .._core._wire import HttpResponse
    from ..errors import SearchProviderError

GEMINI_CLI_ENDPOINT: Final = "https://cloudcode-pa.googleapis.com"
ANTIGRAVITY_ENDPOINTS: Final = (
    "https://daily-cloudcode-pa.googleapis.com",
    "https://daily-cloudcode-pa.sandbox.googleapis.com",
)
STREAM_PATH: Final = "/v1internal:streamGenerateContent?alt=sse"
LOAD_PATH: Final = "/v1internal:loadCodeAssist"
TOKEN_URL: Final = "https://oauth2.googleapis.com/token"
#: The public "installed app" OAuth clients of the Gemini CLI and Antigravity (RFC 8252: not secrets).
GEMINI_CLI_CLIENT: Final = (
    "681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com",
    "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",
)
ANTIGRAVITY_CLIENT: Final = (
    "1071006060591-tmhssin2h21lcre235vtolojh4g403ep.apps.googleusercontent.com",
    "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",
)
ANTIGRAVITY_SYSTEM: Final = (
    "You are Antigravity, a powerful agentic AI coding assistant designed by the Google Deepmind team working on "
    "Advanced Agentic Coding.You are pair programming with a USER to solve their coding task. The task may require "
    "creating a new codebase, modifying or debugging an existing codebase, or simply answering a question."
    "**Absolute paths only****Proactiveness**"
)
CLIENT_METADATA: Final = "ideType=IDE_UNSPECIFIED,platform=PLATFORM_UNSPECIFIED,pluginType=GEMINI"
_ARCH: Final = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64", "i386": "ia32", "i686": "ia32"}
_NODE_ARCH: Final = _ARCH.get(platform.machine().lower(), platform.machine().lower())  # what Node's process.arch says
GEMINI_CLI_USER_AGENT: Final = f"GeminiCLI/0.46.0/gemini-3.1-pro-preview ({sys.platform}; {_NODE_ARCH}; terminal)"
ANTIGRAVITY_USER_AGENT: Final = "antigravity/hub/2.1.4 {}/{}".format(
    "windows" if sys.platform == "win32" else sys.platform, {"x64": "amd64", "ia32": "386"}.get(_NODE_ARCH, _NODE_ARCH)
)

AuthKind = Literal["api_key", "gemini-cli", "antigravity"]


@dataclass(frozen=True, slots=True)
class GeminiAuth:
    """How one search authenticates: a Developer API key, or a Cloud Code login and its project."""

    kind: AuthKind
    secret: str = field(repr=False)
    project_id: str | None = None
    credential_id: str | None = None
    token: OAuthToken | None = None


# -- the request ------------------------------------------------------------------------------


def cloud_body(inner: dict[str, Any], auth: GeminiAuth, model: str, request_id: str) -> dict[str, Any]:
    """The Cloud Code envelope around a Developer API body."""
    body: dict[str, Any] = {"project": auth.project_id, "model": model, "request": inner}
    if auth.kind == "antigravity":
        return {**body, "requestType": "agent", "userAgent": "antigravity", "requestId": request_id}
    return {**body, "userAgent": "pi-coding-agent", "requestId": request_id}


def cloud_route(kind: AuthKind, now: datetime) -> tuple[tuple[str, ...], str]:
    """The endpoints a login of `kind` tries, in order, and the request id it sends (dated `now`)."""
    endpoints: tuple[str, ...] = ANTIGRAVITY_ENDPOINTS
    request_id = f"agent-{uuid.uuid4()}"
    if kind == "gemini-cli":
        suffix = "".join(random.choices(string.ascii_lowercase + string.digits, k=9))
        endpoints, request_id = (GEMINI_CLI_ENDPOINT,), f"pi-{int(now.timestamp() * 1000)}-{suffix}"
    return endpoints, request_id


def cloud_requests(
    ctx: ProviderContext, auth: GeminiAuth, endpoints: tuple[str, ...], body: dict[str, Any]
) -> list[HttpRequest]:
    """One streaming request per endpoint, in the order they are tried."""
    headers = cloud_headers(auth.kind, auth.secret)
    return [
        HttpRequest(
            "POST", ctx.endpoint("gemini", endpoint + STREAM_PATH), headers=headers, json=body, secrets=(auth.secret,)
        )
        for endpoint in endpoints
    ]


def cloud_headers(kind: AuthKind, token: str) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", "Accept": "text/event-stream"}
    if kind == "antigravity":
        return {**headers, "User-Agent": ANTIGRAVITY_USER_AGENT}
    return {**headers, "User-Agent": GEMINI_CLI_USER_AGENT, "Client-Metadata": CLIENT_METADATA}


# -- the login --------------------------------------------------------------------------------


async def refreshed(ctx: ProviderContext, auth: GeminiAuth) -> GeminiAuth:
    """The login refreshed once although it had not expired (the server rejected it)."""
    assert auth.credential_id is not None and auth.token is not None and auth.kind != "api_key"
    stored = ctx.credentials.get(auth.credential_id)
    if stored is not None and stored.data.get("access_token") == auth.token.access_token:
        # mark it expired, so that oauth_token refreshes it under its lock (once, however many ask)
        ctx.credentials.set(auth.credential_id, "oauth", {**stored.data, "expires_at": 0})
    token = await oauth_token(ctx, "gemini", refresher(ctx, auth.kind), credential_id=auth.credential_id)
    return dataclasses.replace(auth, secret=token.access_token, token=token)


async def discover_project(
    ctx: ProviderContext, token: OAuthToken, cred_id: str, error: Callable[[HttpResponse], SearchProviderError]
) -> str | None:
    """The account's Cloud Code project, as the Gemini CLI finds it; stored with the login.
    `error` maps a failed answer."""
    metadata = {"ideType": "IDE_UNSPECIFIED", "platform": "PLATFORM_UNSPECIFIED", "pluginType": "GEMINI"}
    headers = {**cloud_headers("gemini-cli", token.access_token), "Accept": "application/json"}
    url = ctx.endpoint("gemini", GEMINI_CLI_ENDPOINT + LOAD_PATH)
    request = HttpRequest("POST", url, headers=headers, json={"metadata": metadata}, secrets=(token.access_token,))
    response = await ctx.send("gemini", request)
    if not response.ok:
        raise error(response)
    try:
        data = response.json()
    except ValueError:
        raise InvalidResponse("gemini", "Gemini returned a body that is not JSON", response.status) from None
    project = data.get("cloudaicompanionProject") if isinstance(data, dict) else None
    project = project.get("id") if isinstance(project, dict) else project
    if not isinstance(project, str) or not project:
        return None
    ctx.credentials.set(cred_id, "oauth", {**token.to_dict(), "project_id": project})
    return project


def refresher(ctx: ProviderContext, kind: AuthKind) -> Refresh:
    """Refresh a login at Google's token endpoint, with the OAuth client that issued it."""

    async def refresh(token: OAuthToken) -> OAuthToken:
        client_id, client_secret = ANTIGRAVITY_CLIENT if kind == "antigravity" else GEMINI_CLI_CLIENT
        refresh_token = token.refresh_token or ""
        form = [
            ("client_id", client_id),
            ("client_secret", client_secret),
            ("refresh_token", refresh_token),
            ("grant_type", "refresh_token"),
        ]
        request = HttpRequest(
            "POST",
            ctx.endpoint("gemini", TOKEN_URL),
            headers={"Accept": "application/json"},
            form=form,
            secrets=(refresh_token, token.access_token),
        )
        response = await ctx.send("gemini", request)
        try:
            data = as_dict(response.json())
        except ValueError:
            data = {}
        access, expires_in = data.get("access_token"), data.get("expires_in")
        if not response.ok or not isinstance(access, str) or not access:
            detail = ": ".join(str(data[k]) for k in ("error", "error_description") if data.get(k))
            detail = redact_detail(response, detail) or response.safe_text() or "no body"
            cls = InvalidResponse if response.ok else class_for_status(response.status)
            raise cls("gemini", f"the token endpoint answered {response.status}: {detail}", response.status)
        expires_at = ctx.clock.now().timestamp() + expires_in if isinstance(expires_in, (int, float)) else None
        return dataclasses.replace(
            token,
            access_token=access,
            expires_at=expires_at,
            refresh_token=as_str(data.get("refresh_token")) or token.refresh_token,
        )

    return refresh


def import_credentials(home: Path) -> OAuthToken:
    """The Gemini CLI's Google login (`~/.gemini/oauth_creds.json`) as an OAuth credential."""
    path = home / ".gemini" / "oauth_creds.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"no Gemini CLI login at {path}: run `gemini` and sign in with Google first") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    except ValueError:
        raise ConfigError(f"{path} is not valid JSON") from None
    access, refresh, expiry = (as_dict(data).get(k) for k in ("access_token", "refresh_token", "expiry_date"))
    if not isinstance(access, str) or not access:
        raise ConfigError(f"{path} has no access_token: sign in with Google in the Gemini CLI again")
    if refresh is not None and not isinstance(refresh, str):
        raise ConfigError(f"{path} has a refresh_token that is not a string")
    if expiry is not None and (isinstance(expiry, bool) or not isinstance(expiry, (int, float))):
        raise ConfigError(f"{path} has an expiry_date that is not a number of milliseconds")
    return OAuthToken(access, refresh or None, expiry / 1000 if expiry is not None else None)
