"""Who may call, from where, how much and how often: the server's gates, as plain ASGI
middleware (no per-request task or body copy beyond the one read).

- `HostCheck`: on a loopback server, the `Host` header must name this machine and an `Origin`,
  when sent, must be a local page or one of `[serve] cors_origins`: the DNS-rebinding defence
  `websearch mcp --http` has (421 / 403, as the MCP SDK answers), on every route.
- `Gate`: the token, as a bearer token or as the password of Basic credentials (any user
  name), compared in constant time (every known token's SHA-256 against the offered one's, all
  of them each time), with a 401 worded for the scheme the caller sent; the body size cap (413);
  and the per-token rate limit (429 with `Retry-After`), whose token buckets live in the state
  store under `serve:rate:<first 16 hex digits of the token's SHA-256>`, so a limit holds across
  replicas sharing Redis. `/healthz` is open to all; a 401 never says which tokens exist.

A search costs one token of the bucket: `POST /v1/search`, `/search`, `POST /v1/fetch` and
`POST /v1/research` (one token each), and a `tools/call` in a
`POST /mcp` (listing tools or initializing a session costs nothing, and so does a message the
MCP transport refuses with 400, such as a JSON-RPC batch).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

import pydantic_core
from mcp_types import JSONRPCRequest, jsonrpc_message_adapter

from ._config import is_loopback
from ._logging import client_gone, reply, request_info

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from ..._state import ResilientStore
    from ._config import ServeConfig

__all__ = ["Gate", "HostCheck", "token_id"]

_OPEN: Final = frozenset({"/healthz"})
_BODY_METHODS: Final = frozenset({"POST", "PUT", "PATCH"})
RATE_PREFIX: Final = "serve:rate:"


def token_id(token: str) -> str:
    """What names a token in logs and store keys: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(token.encode()).hexdigest()[:16]


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _host_name(host: str) -> str | None:
    """The host part of a whole Host header (`[::1]:8000` → `::1`, `localhost:8000` →
    `localhost`), or None when what follows the name is not a port: `127.0.0.1:evil` and
    `127.0.0.1:80@evil.example` name no host of this machine."""
    if host.startswith("["):
        name, closed, rest = host[1:].partition("]")
        if not closed or (rest and not rest.startswith(":")):
            return None
        port = rest[1:]
    elif host.count(":") > 1:
        return host  # an IPv6 address without brackets (and without a port)
    else:
        name, _, port = host.partition(":")
        if "%" in name:
            return None  # a zone belongs to a bracketed IPv6 address only
    if port and not (port.isascii() and port.isdigit()):
        return None
    return name


class HostCheck:
    """The loopback server's Host and Origin checks (off on any other interface)."""

    def __init__(self, app: ASGIApp, config: ServeConfig) -> None:
        self.app = app
        self.on = config.loopback
        self.origins = frozenset(config.cors_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.on:
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host")
        name = _host_name(host) if host is not None else None
        if name is None or not is_loopback(name):
            await reply(send, 421, {"error": "the Host header must name this machine (localhost, 127.0.0.1, [::1])"})
            return
        origin = _header(scope, b"origin")
        if origin is not None and not self._allowed(origin):
            await reply(send, 403, {"error": "this Origin may not call the server (see [serve] cors_origins)"})
            return
        await self.app(scope, receive, send)

    def _allowed(self, origin: str) -> bool:
        if origin in self.origins or "*" in self.origins:
            return True
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and is_loopback(parts.hostname or "")


class Gate:
    """Bearer token, body size, per-token rate limit; `store` gives the engine's state store."""

    def __init__(self, app: ASGIApp, config: ServeConfig, store: Callable[[], ResilientStore]) -> None:
        self.app = app
        self.auth = config.auth
        self._digests = tuple(hashlib.sha256(t.encode()).digest() for t in config.tokens)
        self.max_body = config.limits.max_body_bytes
        self.rate = config.rate_limit
        self.store = store

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in _OPEN:
            await self.app(scope, receive, send)
            return
        who = "anonymous"
        if self.auth:
            scheme, checked = self._token(scope)
            if checked is None:
                await _unauthorized(send, scheme)
                return
            who = checked
            request_info(scope)["token"] = who
        body: bytes | None = None
        if scope["method"] in _BODY_METHODS:
            body = await self._body(scope, receive, send)
            if body is None:
                return
            receive = _replay(body, receive)
        if self.rate is not None:
            cost = _cost(scope, body)
            if cost and not await self._allow(who, cost, send):
                return
        await self.app(scope, receive, send)

    def _token(self, scope: Scope) -> tuple[str, str | None]:
        """(the Authorization scheme, lower case: "" without the header; the caller's token id,
        None unless the credentials carry one of our tokens). Basic credentials carry it as the
        password, whatever the user name: SearXNG instances sit behind Basic auth, and SearXNG
        clients send that."""
        header = _header(scope, b"authorization")
        if header is None:
            return "", None
        scheme, _, given = header.strip().partition(" ")
        scheme, given = scheme.lower(), given.strip()
        if scheme == "basic":
            try:
                given = base64.b64decode(given, validate=True).decode("utf-8").partition(":")[2]
            except ValueError:  # not base64, or not UTF-8 (binascii.Error and UnicodeDecodeError are)
                return scheme, None
        elif scheme != "bearer":
            return scheme, None
        if not given:
            return scheme, None
        digest = hashlib.sha256(given.encode("utf-8", "surrogateescape")).digest()
        match = False
        for known in self._digests:  # every one, every time: no early exit to time
            match |= hmac.compare_digest(digest, known)
        return scheme, digest.hex()[:16] if match else None

    async def _body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole body, or None after answering 413 when it is larger than allowed, or when
        the client went away before sending all of it."""
        limit = self.max_body
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._too_large(send, int(declared))
            return None
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                client_gone(scope)  # the client left (or was cut for sending too slowly): nothing to answer
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await self._too_large(send, size)
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def _too_large(self, send: Send, size: int) -> None:
        limit_kb = self.max_body / 1024
        error = f"the request body must be at most {limit_kb:g} KB on this server; got {size} bytes or more"
        await reply(send, 413, {"error": error, "param": "body"}, {"connection": "close"})

    async def _allow(self, who: str, cost: int, send: Send) -> bool:
        """Take `cost` tokens of the caller's bucket, or answer 429 (giving back the one refused)."""
        rate = self.rate
        assert rate is not None
        store, key = self.store(), RATE_PREFIX + who
        for _ in range(cost):
            wait = await store.take(key, rate.rate, rate.burst)
            if wait > 0:
                await store.untake(key, rate.rate, rate.burst)
                seconds = max(1, math.ceil(wait))
                error = f"rate limit reached ({rate.text} per token); retry in {seconds} s"
                await reply(send, 429, {"error": error, "retry_after": seconds}, {"retry-after": str(seconds)})
                return False
        return True


async def _unauthorized(send: Send, scheme: str) -> None:
    """The 401 in the words of the scheme the caller used (never saying which tokens exist)."""
    challenge = 'Bearer realm="websearch"'
    if scheme == "":
        error = "a bearer token is required: Authorization: Bearer <token>"
    elif scheme == "basic":
        error = "the Basic credentials' password is not a valid token (send the token as the password)"
        challenge = 'Basic realm="websearch", charset="UTF-8"'
    elif scheme == "bearer":
        error, challenge = "the bearer token is not valid", challenge + ', error="invalid_token"'
    else:
        error = "the Authorization scheme must be Bearer (or Basic, with the token as the password)"
    await reply(send, 401, {"error": error}, {"www-authenticate": challenge})


def _cost(scope: Scope, body: bytes | None) -> int:
    """How many searches the request makes (each takes one token of the rate limit)."""
    path, method = scope["path"], scope["method"]
    if path == "/search" or (path in ("/v1/search", "/v1/fetch", "/v1/research") and method == "POST"):
        return 1
    if path == "/mcp" and method == "POST" and body:
        try:
            # The MCP transport's own parser and validator: orjson refuses what it takes (NaN,
            # Infinity), and a call carrying one ran free of the rate limit; what it refuses (a
            # JSON-RPC batch, a message of no known shape: 400) searches nothing and costs nothing.
            message = jsonrpc_message_adapter.validate_python(pydantic_core.from_json(body), by_name=False)
        except ValueError:  # pydantic's ValidationError is one
            return 0
        return int(isinstance(message, JSONRPCRequest) and message.method == "tools/call")
    return 0


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the body read already to the app, then listens for a disconnect."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
