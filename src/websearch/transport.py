"""The only module that touches aiohttp: one pooled session, timeouts, proxies, redaction.

Every failure of the wire (refused, reset, timed out, truncated, oversized) becomes a
`SearchProviderError` subclass here, named for the provider and stripped of every secret the
request carried, so no other module needs to know aiohttp's exception tree.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

import aiohttp

from .errors import ProviderConnectionError, ProviderTimeoutError, SearchProviderError
from .registry import PROVIDERS
from .settings import DEFAULT_TIMEOUT
from .wire import HttpRequest, HttpResponse

__all__ = ["MAX_BODY_BYTES", "Transport", "redact"]

#: Larger bodies are refused: no search answer is this big, and parsing one would stall the loop.
MAX_BODY_BYTES: Final = 8 * 1024 * 1024
_CHUNK: Final = 64 * 1024


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """Replace every secret (of four characters or more) in `text` with `[redacted]`."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return text


def _label(provider: str) -> str:
    info = PROVIDERS.get(provider)
    return info.label if info else provider


class Transport:
    """An aiohttp `ClientSession`, created lazily inside the running loop and reused.

    `timeout` bounds each request, connect to last byte. Proxies come from the standard
    `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` variables.
    """

    def __init__(
        self, *, timeout: float = DEFAULT_TIMEOUT, max_body_bytes: int = MAX_BODY_BYTES, max_connections: int = 100
    ) -> None:
        self.timeout = timeout
        self.max_body_bytes = max_body_bytes
        self.max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None

    def _get_session(self) -> aiohttp.ClientSession:
        session = self._session
        if session is None or session.closed:
            session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.max_connections),
                trust_env=True,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
            )
            self._session = session
        return session

    async def aclose(self) -> None:
        """Close the pooled session; the transport can be used again afterwards."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def send(self, provider: str, request: HttpRequest) -> HttpResponse:
        """Send `request` and read the whole body; any wire failure raises SearchProviderError."""
        async with self._exchange(provider, request) as resp:
            body = await self._read_body(provider, resp)
            return HttpResponse(resp.status, _headers(resp), body, str(resp.url), request.secrets)

    @asynccontextmanager
    async def stream(
        self, provider: str, request: HttpRequest
    ) -> AsyncIterator[tuple[HttpResponse, AsyncIterator[bytes]]]:
        """Open `request` and yield (head, lines): the response without body and its body lines.

        The head's `body` is empty; read the lines until they end. Leaving the block closes the
        connection, which is how a cancelled stream is torn down.
        """
        async with self._exchange(provider, request) as resp:
            head = HttpResponse(resp.status, _headers(resp), b"", str(resp.url), request.secrets)
            yield head, self._lines(provider, request, resp)

    async def read_error_body(self, provider: str, lines: AsyncIterator[bytes]) -> bytes:
        """Drain a streamed response into bytes (for error statuses), up to the body cap."""
        chunks: list[bytes] = []
        size = 0
        async for line in lines:
            size += len(line)
            if size > self.max_body_bytes:
                break
            chunks.append(line)
        return b"".join(chunks)

    # -- internals -----------------------------------------------------------------------------

    @asynccontextmanager
    async def _exchange(self, provider: str, request: HttpRequest) -> AsyncIterator[aiohttp.ClientResponse]:
        session = self._get_session()
        timeout = request.timeout if request.timeout is not None else self.timeout
        kwargs: dict[str, object] = {"headers": dict(request.headers), "allow_redirects": True}
        if request.params:
            kwargs["params"] = list(request.params)
        if request.json is not None:
            kwargs["json"] = request.json
        elif request.form is not None:
            kwargs["data"] = list(request.form)
        if request.timeout is not None:
            kwargs["timeout"] = aiohttp.ClientTimeout(total=request.timeout)
        try:
            async with session.request(request.method, request.url, **kwargs) as resp:  # type: ignore[arg-type]
                yield resp
        except SearchProviderError:
            raise
        except TimeoutError:
            raise ProviderTimeoutError(provider, f"{_label(provider)} did not answer within {timeout:g} s") from None
        except aiohttp.ClientError as exc:
            raise self._wire_error(provider, request, exc) from None
        except ValueError as exc:  # e.g. a malformed URL from a bad base-URL override
            msg = redact(str(exc), request.secrets)
            raise SearchProviderError(provider, f"{_label(provider)} request could not be sent: {msg}") from None

    async def _read_body(self, provider: str, resp: aiohttp.ClientResponse) -> bytes:
        declared = resp.content_length
        if declared is not None and declared > self.max_body_bytes:
            raise self._too_large(provider, resp.status)
        chunks: list[bytes] = []
        size = 0
        async for chunk in resp.content.iter_chunked(_CHUNK):
            size += len(chunk)
            if size > self.max_body_bytes:
                raise self._too_large(provider, resp.status)
            chunks.append(chunk)
        return b"".join(chunks)

    async def _lines(self, provider: str, request: HttpRequest, resp: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
        timeout = request.timeout if request.timeout is not None else self.timeout
        try:
            while True:
                line = await resp.content.readline()
                if not line:
                    return
                yield line
        except TimeoutError:
            raise ProviderTimeoutError(provider, f"{_label(provider)} did not answer within {timeout:g} s") from None
        except aiohttp.ClientError as exc:
            raise self._wire_error(provider, request, exc) from None

    def _too_large(self, provider: str, status: int) -> SearchProviderError:
        limit_mb = self.max_body_bytes / (1024 * 1024)
        return SearchProviderError(
            provider, f"{_label(provider)} sent a response larger than {limit_mb:g} MB; refused", status
        )

    @staticmethod
    def _wire_error(provider: str, request: HttpRequest, exc: aiohttp.ClientError) -> SearchProviderError:
        label = _label(provider)
        if isinstance(exc, aiohttp.ClientConnectorError):
            reason = exc.os_error.strerror or type(exc.os_error).__name__
            what = f"could not connect to {exc.host}:{exc.port} ({reason})"
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
        return ProviderConnectionError(provider, redact(f"{label} request failed: {what}", request.secrets))


def _headers(resp: aiohttp.ClientResponse) -> dict[str, str]:
    return {k.lower(): v for k, v in resp.headers.items()}
