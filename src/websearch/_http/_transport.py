"""The only module that touches aiohttp: pooled sessions, timeouts, proxies, redaction.

Proxies are chosen per request by `Proxies` (per provider, `[http] proxy`, the environment): an
HTTP(S) proxy rides on the loop's pooled session (aiohttp's `proxy=`, its credentials as a
`Proxy-Authorization` header, never in the URL aiohttp keeps); a SOCKS proxy needs a connector of
its own (aiohttp-socks), so each SOCKS proxy gets a pooled session per loop beside it.

Every failure of the wire (refused, reset, timed out, truncated, oversized) becomes a
`SearchProviderError` subclass here, named for the provider and stripped of every secret the
request carried, so no other module needs to know aiohttp's exception tree. A request whose
session the client closed under it is no failure of the provider's: it ends cancelled.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import json
import os
import re
import socket
import threading
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final

import aiohttp
import orjson
from yarl import URL

from .._core._context import BaseTransport, ClosedUnder
from .._core._settings import DEFAULT_TIMEOUT
from .._core._wire import HttpRequest, HttpResponse
from ..errors import (
    ConfigError,
    InvalidResponse,
    NetworkUnreachable,
    ProviderConnectionError,
    ProviderTimeoutError,
    SearchProviderError,
)
from ._proxies import Proxies, Proxy, socks_connector, socks_errors

__all__ = ["MAX_BODY_BYTES", "Transport", "redact"]

#: Larger bodies are refused: no search answer is this big, and parsing one would stall the loop.
MAX_BODY_BYTES: Final = 8 * 1024 * 1024
#: A streamed answer larger than this, or one event (the lines up to a blank one) larger than
#: that, is refused: a stream that never ends an event would otherwise grow without bound.
MAX_STREAM_BYTES: Final = 32 * 1024 * 1024
MAX_EVENT_BYTES: Final = 4 * 1024 * 1024
_CHUNK: Final = 64 * 1024
_LINE_END: Final = re.compile(rb"\r\n|\r|\n")
MAX_REDIRECTS: Final = 5
_REDIRECT_STATUSES: Final = frozenset({301, 302, 303, 307, 308})
_SECRET_HEADERS: Final = frozenset({"authorization", "cookie", "proxy-authorization"})
#: A failed name lookup, whatever the resolver (aiodns's is an OSError, not a gaierror); aiohttp
#: before 3.10 has no class for it, and its lookups fail with a gaierror.
_DNS_ERRORS: Final[tuple[type[Exception], ...]] = tuple(
    cls for cls in (getattr(aiohttp, "ClientConnectorDNSError", None),) if cls is not None
)


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """Replace every secret (of four characters or more) in `text` with `[redacted]`."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return text


@functools.lru_cache(maxsize=256)
def _timeout(seconds: float) -> aiohttp.ClientTimeout:
    """A request's whole timeout, kept to the millisecond: aiohttp rounds a timer of more than
    5 s up to the next whole second, which would let a request cut to a search's deadline end
    up to a second after it. Made once per value (2 us each): a request cut to its search's
    deadline is cut to a whole millisecond, so searches in a row ask for the same few."""
    return aiohttp.ClientTimeout(total=seconds, ceil_threshold=float("inf"))


def json_text(value: Any) -> str:
    """A request body as JSON text. orjson writes it about ten times faster than the json module;
    what orjson refuses (keys that are not strings, integers beyond 64 bits) the json module writes."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError
        pass
    try:
        return json.dumps(value)
    except RecursionError:  # nested past the interpreter's limit: a body no API would take either
        raise ValueError("the request body is nested too deeply to write as JSON") from None


class Transport(BaseTransport):
    """An aiohttp `ClientSession` per event loop it is used from, created lazily and reused.

    `timeout` bounds each request, connect to last byte, redirects included (each hop gets
    what is left of it): `bounds_each_request` says so to the chain, which then needs no timer
    of its own to keep a search's deadline. `proxies` chooses each request's proxy (the client
    builds it from the settings); without it, the standard `HTTPS_PROXY` / `HTTP_PROXY` /
    `ALL_PROXY` / `NO_PROXY` variables of `env` (default `os.environ`) are read.
    `labels` maps provider ids to the names its error messages use ("Brave" for "brave").
    """

    bounds_each_request = True

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_body_bytes: int = MAX_BODY_BYTES,
        max_stream_bytes: int = MAX_STREAM_BYTES,
        max_event_bytes: int = MAX_EVENT_BYTES,
        max_connections: int = 100,
        env: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
        proxies: Proxies | None = None,
    ) -> None:
        self.timeout: float = timeout
        self._labels = dict(labels or {})
        self.max_body_bytes = max_body_bytes
        self.max_stream_bytes = max_stream_bytes
        self.max_event_bytes = max_event_bytes
        self.max_connections = max_connections
        self._proxies = proxies if proxies is not None else Proxies.from_env(env)
        self._proxy_secrets = self._proxies.secrets()
        #: The pooled session of each SOCKS proxy, per loop (a SOCKS proxy is its session's connector).
        self._socks: dict[tuple[asyncio.AbstractEventLoop, Proxy], aiohttp.ClientSession] = {}
        #: What a failed request raises that the transport translates (aiohttp-socks's own
        #: errors join once a SOCKS session is made).
        self._failures: tuple[type[Exception], ...] = (TimeoutError, aiohttp.ClientError, ValueError)
        #: The pooled session of the loop used last, with its loop (one tuple: read in one go).
        self._current: tuple[asyncio.AbstractEventLoop, aiohttp.ClientSession] | None = None
        #: The sessions of the other loops the client is used from (its sync `search`'s loop
        #: beside the caller's): a session cannot change its loop, and one per loop keeps each pooled.
        self._others: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession] = {}
        self._switching = threading.Lock()
        self._closing: set[asyncio.Task[None]] = set()

    @property
    def _session(self) -> aiohttp.ClientSession | None:
        """The session of the loop used last, if still open."""
        current = self._current
        return None if current is None or current[1].closed else current[1]

    def _get_session(self) -> aiohttp.ClientSession:
        """The pooled session of the running loop."""
        current, loop = self._current, asyncio.get_running_loop()
        if current is not None and current[0] is loop and not current[1].closed:
            return current[1]
        with self._switching:  # two loops in two threads may switch at once
            current = self._current
            if current is not None and not current[1].closed:
                self._others[current[0]] = current[1]
            for gone in [other for other in self._others if other.is_closed()]:
                self._close_later(loop, self._others.pop(gone))  # its loop is closed: close it here
            session = self._others.pop(loop, None)
            if session is None or session.closed:
                session = aiohttp.ClientSession(
                    connector=aiohttp.TCPConnector(limit=self.max_connections),
                    timeout=_timeout(self.timeout),
                    json_serialize=json_text,
                )
            self._current = (loop, session)
            return session

    def _session_for(self, proxy: Proxy | None) -> aiohttp.ClientSession:
        """The pooled session a request through `proxy` goes out on: the loop's own, or a SOCKS
        proxy's (made on first use; ConfigError naming the extra when aiohttp-socks is missing)."""
        if proxy is None or not proxy.socks:
            return self._get_session()
        loop = asyncio.get_running_loop()
        session = self._socks.get((loop, proxy))
        if session is not None and not session.closed:
            return session
        connector = socks_connector(proxy, limit=self.max_connections)
        self._failures = (TimeoutError, aiohttp.ClientError, ValueError, *socks_errors())
        session = aiohttp.ClientSession(connector=connector, timeout=_timeout(self.timeout), json_serialize=json_text)
        with self._switching:
            self._socks[(loop, proxy)] = session
        return session

    def _close_later(self, loop: asyncio.AbstractEventLoop, session: aiohttp.ClientSession) -> None:
        """Close the session of a closed loop on `loop` (its connections would be reported
        unclosed when collected); the task is kept until it is done."""
        task = loop.create_task(session.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def close_soon(self) -> None:
        """Close the running loop's session without awaiting it, for a sync `close()` called in
        code that loop runs: its connections are closed at the task's first step, which comes
        before the loop can stop (an `asyncio.run` whose main returns after it included)."""
        loop = asyncio.get_running_loop()
        with self._switching:
            session = self._others.pop(loop, None)
            if self._current is not None and self._current[0] is loop:
                session, self._current = self._current[1], None
            socks = [self._socks.pop(key) for key in [key for key in self._socks if key[0] is loop]]
        for each in [session, *socks]:
            if each is not None and not each.closed:
                self._close_later(loop, each)

    def abandon(self) -> None:
        """Let go of every session without closing one: in a child made by `fork`, their
        sockets and their loops' selectors are the parent's, and closing would act on those.
        Marked closed (aiohttp's own flag), they are not reported unclosed when collected."""
        sessions = list(self._others.values()) + ([self._current[1]] if self._current is not None else [])
        sessions += self._socks.values()
        self._current, self._others, self._socks = None, {}, {}
        self._switching = threading.Lock()  # another thread may have held it at the fork
        for session in sessions:
            if session.connector is not None:
                session.connector._closed = True

    async def aclose(self) -> None:
        """Close the pooled session of the running loop, and those of loops already closed (a
        running loop's closes on that loop); the transport can be used again afterwards."""
        loop = asyncio.get_running_loop()
        with self._switching:
            sessions = dict(self._others)
            if self._current is not None:
                sessions[self._current[0]] = self._current[1]
            closing = [session for owner, session in sessions.items() if owner is loop or owner.is_closed()]
            self._others = {owner: s for owner, s in sessions.items() if not (owner is loop or owner.is_closed())}
            self._current = None
            done = [key for key in self._socks if key[0] is loop or key[0].is_closed()]
            closing += [self._socks.pop(key) for key in done]
        for session in closing:
            await session.close()

    async def send(self, provider: str, request: HttpRequest) -> HttpResponse:
        """Send `request` and read the whole body; any wire failure raises SearchProviderError,
        and one because the client closed the session under the request, CancelledError."""
        url, kwargs, session = self._request_args(provider, request)
        try:
            resp = await self._open(provider, request, url, kwargs, session)
            try:
                declared = resp.content_length
                if declared is None or "content-encoding" in resp.headers:  # count decoded bytes
                    body = await self._read_chunked(provider, resp)
                elif declared > self.max_body_bytes:
                    raise self._too_large(provider, resp.status)
                else:
                    body = await resp.read()
            finally:
                resp.release()
        except self._failures as exc:
            raise self._failed(provider, request, exc, session) from None
        return HttpResponse(resp.status, _headers(resp), body, str(resp.url), request.secrets)

    @asynccontextmanager
    async def stream(
        self, provider: str, request: HttpRequest
    ) -> AsyncIterator[tuple[HttpResponse, AsyncIterator[bytes]]]:
        """Open `request` and yield (head, lines): the response without body and its body lines.

        The head's `body` is empty; read the lines until they end. Leaving the block closes the
        connection unless the body was read to its end, which is how a cancelled stream is torn
        down. Errors raised by the caller inside the block pass through untouched.
        """
        url, kwargs, session = self._request_args(provider, request)
        try:
            resp = await self._open(provider, request, url, kwargs, session)
        except self._failures as exc:
            raise self._failed(provider, request, exc, session) from None
        try:
            head = HttpResponse(resp.status, _headers(resp), b"", str(resp.url), request.secrets)
            yield head, self._lines(provider, request, resp, session)
        finally:
            resp.release()

    # -- internals -----------------------------------------------------------------------------

    async def _open(
        self, provider: str, request: HttpRequest, url: URL, kwargs: dict[str, Any], session: aiohttp.ClientSession
    ) -> aiohttp.ClientResponse:
        """The response to `request` once its redirects are followed (its body not read); a
        proxy's own 407 is this machine's error, not the provider's."""
        started = time.monotonic()
        resp = await session.request(request.method, url, **kwargs)
        if resp.status in _REDIRECT_STATUSES:
            resp = await self._follow(provider, request, url, kwargs, resp, started)
        if resp.status == 407 and "proxy" in kwargs:
            resp.release()
            raise self._proxy_refused(provider, request)
        return resp

    def _label(self, provider: str) -> str:
        return self._labels.get(provider, provider)

    def _request_args(self, provider: str, request: HttpRequest) -> tuple[URL, dict[str, Any], aiohttp.ClientSession]:
        """The URL (parsed once, for aiohttp), aiohttp's arguments and the session to send on.

        Redirects are followed by `_follow`, not by aiohttp: aiohttp would carry API-key headers
        such as `X-Subscription-Token` to whatever host a redirect names.
        """
        url = URL(request.url)
        kwargs: dict[str, Any] = {"headers": request.headers, "allow_redirects": False}
        if request.params:
            kwargs["params"] = request.params
        if request.json is not None:
            kwargs["json"] = request.json
        elif request.form is not None:
            kwargs["data"] = list(request.form)
        if request.timeout is not None:
            kwargs["timeout"] = _timeout(request.timeout)
        try:
            session = self._proxy_args(provider, url, kwargs)
        except ConfigError as exc:  # a SOCKS proxy without its extra: the provider cannot be reached
            raise NetworkUnreachable(provider, f"{self._label(provider)} request not sent: {exc}") from None
        return url, kwargs, session

    def _proxy_args(self, provider: str, url: URL, kwargs: dict[str, Any]) -> aiohttp.ClientSession:
        """Set `kwargs`' proxy for a request of `provider` to `url`; the session it goes out on."""
        kwargs.pop("proxy", None)
        kwargs.pop("proxy_headers", None)
        if kwargs["headers"] and any(k.lower() == "proxy-authorization" for k in kwargs["headers"]):
            kwargs["headers"] = {k: v for k, v in kwargs["headers"].items() if k.lower() != "proxy-authorization"}
        proxy = self._proxies.for_url(provider, str(url))
        if proxy is not None and not proxy.socks:
            kwargs["proxy"] = proxy.shown
            authorization = proxy.authorization()
            if authorization and url.scheme == "http":  # absolute-form request: the header rides on it
                kwargs["headers"] = {**kwargs["headers"], **authorization}
            elif authorization:  # https: the header goes on the CONNECT
                kwargs["proxy_headers"] = authorization
        return self._session_for(proxy)

    async def _follow(
        self,
        provider: str,
        request: HttpRequest,
        url: URL,
        kwargs: dict[str, Any],
        resp: aiohttp.ClientResponse,
        started: float,
    ) -> aiohttp.ClientResponse:
        """Follow a redirect chain by hand; a hop to another origin loses every secret-bearing
        header; the hops share the request's timeout, counted from `started`."""
        method = request.method
        ends = started + (request.timeout if request.timeout is not None else self.timeout)
        for _ in range(MAX_REDIRECTS):
            location = resp.headers.get("Location")
            if resp.status not in _REDIRECT_STATUSES or not location:
                return resp
            status = resp.status
            resp.release()
            target = url.join(URL(location))
            if target.origin() != url.origin():
                kwargs["headers"] = {
                    k: v for k, v in kwargs["headers"].items() if not _carries_secret(k, v, request.secrets)
                }
            if status == 303 or (status in (301, 302) and method == "POST"):
                method = "GET"
                kwargs.pop("json", None)
                kwargs.pop("data", None)
            kwargs.pop("params", None)  # they are part of the Location already
            session = self._proxy_args(provider, target, kwargs)
            kwargs["timeout"] = _timeout(max(ends - time.monotonic(), 0.001))  # one budget for all hops
            url = target
            resp = await session.request(method, url, **kwargs)
        resp.release()
        raise ProviderConnectionError(provider, f"{self._label(provider)} request failed: too many redirects")

    async def _read_chunked(self, provider: str, resp: aiohttp.ClientResponse) -> bytes:
        """A body without Content-Length, read up to the cap."""
        chunks: list[bytes] = []
        size = 0
        async for chunk in resp.content.iter_chunked(_CHUNK):
            size += len(chunk)
            if size > self.max_body_bytes:
                raise self._too_large(provider, resp.status)
            chunks.append(chunk)
        return b"".join(chunks)

    async def _lines(
        self, provider: str, request: HttpRequest, resp: aiohttp.ClientResponse, session: aiohttp.ClientSession
    ) -> AsyncIterator[bytes]:
        """The body's lines, each with its line end: split at CR LF, LF or CR alone (the SSE
        rules), a CR at a chunk's end held until the next chunk shows whether LF follows. The
        whole stream and each event (the lines up to a blank one) are capped."""
        pending, total, event = b"", 0, 0
        try:
            async for chunk in resp.content.iter_any():
                total += len(chunk)
                if total > self.max_stream_bytes:
                    raise self._stream_too_large(provider, "stream", self.max_stream_bytes)
                pending += chunk
                start = 0
                while (match := _LINE_END.search(pending, start)) is not None:
                    if match.group() == b"\r" and match.end() == len(pending):
                        break  # a CR LF may be split across chunks
                    line = pending[start : match.end()]
                    event = 0 if match.start() == start else event + len(line)
                    start = match.end()
                    yield line
                pending = pending[start:]
                if event + len(pending) > self.max_event_bytes:
                    raise self._stream_too_large(provider, "stream event", self.max_event_bytes)
        except self._failures as exc:
            raise self._failed(provider, request, exc, session) from None
        if pending:
            yield pending

    def _failed(
        self, provider: str, request: HttpRequest, exc: Exception, session: aiohttp.ClientSession
    ) -> BaseException:
        """What a request that failed raises: CancelledError when the session it went out on
        was closed under it (the client closed with searches in flight: they end as cancelled,
        the provider is not blamed, and no cooldown or open circuit is recorded against it),
        else the provider's error (`_translate`)."""
        if session.closed:
            return ClosedUnder(f"{self._label(provider)} request cut: the client was closed")
        return self._translate(provider, request, exc)

    def _translate(self, provider: str, request: HttpRequest, exc: Exception) -> SearchProviderError:
        """The one place where aiohttp's (and asyncio's) exceptions become ours."""
        label = self._label(provider)
        if isinstance(exc, TimeoutError):
            timeout = request.timeout if request.timeout is not None else self.timeout
            error = ProviderTimeoutError(provider, f"{label} did not answer within {timeout:g} s")
            error.given = timeout
            return error
        if isinstance(exc, aiohttp.ClientError):
            return self._wire_error(provider, request, exc)
        if not isinstance(exc, ValueError):  # aiohttp-socks's: the SOCKS proxy failed
            return self._socks_error(provider, request, exc)
        msg = redact(str(exc), request.secrets)  # ValueError: e.g. a malformed base-URL override
        return ProviderConnectionError(provider, f"{label} request could not be sent: {msg}")

    def _stream_too_large(self, provider: str, what: str, limit: int) -> SearchProviderError:
        size = f"{limit / (1024 * 1024):g} MB" if what == "stream" else f"{limit / 1024:g} KB"
        return InvalidResponse(provider, f"{self._label(provider)} sent a {what} larger than {size}; refused")

    def _too_large(self, provider: str, status: int) -> SearchProviderError:
        limit_mb = self.max_body_bytes / (1024 * 1024)
        return InvalidResponse(
            provider, f"{self._label(provider)} sent a response larger than {limit_mb:g} MB; refused", status
        )

    def _socks_error(self, provider: str, request: HttpRequest, exc: Exception) -> SearchProviderError:
        """An aiohttp-socks error: the proxy was out of reach or refused us (this machine's way
        out: NetworkUnreachable), or said it could not reach the provider (its reply code)."""
        label = self._label(provider)
        via = self._proxies.for_url(provider, request.url)
        shown = via.shown if via is not None else "the SOCKS proxy"
        cause = exc.__cause__  # python-socks's error: an OSError when the proxy was out of reach
        number = cause.errno if isinstance(cause, OSError) else None
        said = os.strerror(number) if number else str(exc) or type(exc).__name__
        reason = redact(said, request.secrets + self._proxy_secrets)
        code = getattr(exc, "error_code", None)
        if isinstance(code, int) and code not in (1, 2):  # not "general failure" nor "not allowed by ruleset"
            message = f"{label} request failed: the proxy {shown} could not reach it ({reason})"
            return ProviderConnectionError(provider, message)
        message = f"{label} request failed: could not connect through the proxy {shown} ({reason})"
        return NetworkUnreachable(provider, message)

    def _proxy_refused(self, provider: str, request: HttpRequest) -> SearchProviderError:
        """An HTTP proxy's own 407 to a request it carried (no provider answers 407): this
        machine's way out refused it, so no provider is blamed."""
        via = self._proxies.for_url(provider, request.url)
        shown = via.shown if via is not None else "the proxy"
        message = f"{self._label(provider)} request failed: the proxy {shown} asked for a login (HTTP 407)"
        return NetworkUnreachable(provider, f"{message}; check the user and password in its URL")

    def _wire_error(self, provider: str, request: HttpRequest, exc: aiohttp.ClientError) -> SearchProviderError:
        label = self._label(provider)
        secrets = request.secrets + self._proxy_secrets
        if isinstance(exc, aiohttp.ClientHttpProxyError):  # the proxy answered the CONNECT with an error
            via = self._proxies.for_url(provider, request.url)
            shown = via.shown if via is not None else "the proxy"
            what = f"the proxy {shown} refused the tunnel (HTTP {exc.status})"
            if exc.status == 407:
                what += "; check the user and password in its URL"
            return NetworkUnreachable(provider, redact(f"{label} request failed: {what}", secrets))
        if isinstance(exc, aiohttp.ClientConnectorError):
            reason = exc.os_error.strerror or type(exc.os_error).__name__
            via = self._proxies.for_url(provider, request.url)  # a proxy's failed lookup is no proxy error
            proxy = isinstance(exc, aiohttp.ClientProxyConnectionError) or (via is not None and via.host == exc.host)
            what = f"could not connect to {'the proxy ' if proxy else ''}{exc.host}:{exc.port} ({reason})"
            if (
                proxy  # this machine's way out, not the provider
                or isinstance(exc, _DNS_ERRORS)
                or isinstance(exc.os_error, socket.gaierror)
                or exc.os_error.errno == errno.ENETUNREACH
            ):
                return NetworkUnreachable(provider, redact(f"{label} request failed: {what}", secrets))
        elif isinstance(exc, aiohttp.ServerDisconnectedError):
            what = "the server closed the connection without a complete response"
        elif isinstance(exc, aiohttp.ClientPayloadError):
            what = "the connection broke before the response body was complete"
        elif isinstance(exc, aiohttp.ClientOSError):
            what = f"connection error ({exc.strerror or exc})"
        elif isinstance(exc, aiohttp.TooManyRedirects):
            what = "too many redirects"
        else:
            what = f"{type(exc).__name__}: {exc}"
        return ProviderConnectionError(provider, redact(f"{label} request failed: {what}", secrets))


def _carries_secret(name: str, value: str, secrets: tuple[str, ...]) -> bool:
    return name.lower() in _SECRET_HEADERS or any(len(s) >= 4 and s in value for s in secrets)


def _headers(resp: aiohttp.ClientResponse) -> dict[str, str]:
    return {k.lower(): v for k, v in resp.headers.items()}
