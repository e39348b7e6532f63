"""`MockTransport`: answer a client's requests in-process, from a function of your own.

    from websearch import WebSearch
    from websearch.providers import HttpResponse
    from websearch.testing import MockTransport

    def handler(provider, request):
        assert provider == "brave"
        return HttpResponse(200, {"content-type": "application/json"}, b'{"web": {"results": []}}')

    with WebSearch(transport=MockTransport(handler), api_keys={"brave": "k"}) as ws:
        ws.search("q", provider="brave")

The handler gets the provider id and the `HttpRequest` and returns an `HttpResponse` (or an
awaitable of one); it may raise a `SearchProviderError` (for instance `ProviderTimeoutError`) to
stand for a failure of the wire. A JSON body is written as the real transport writes it, so a
body it could not send fails the same way. Every call is kept in `calls`. For end-to-end tests over real
HTTP, use the loopback fakes (`FAKES`) instead.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import replace

from .._core._context import BaseTransport
from .._core._wire import HttpRequest, HttpResponse
from ..errors import ProviderConnectionError, ProviderTimeoutError

__all__ = ["Handler", "MockTransport"]

Handler = Callable[[str, HttpRequest], HttpResponse | Awaitable[HttpResponse]]


class MockTransport(BaseTransport):
    """A transport (the `SendsRequests` seam) whose answers come from `handler`. It reaches no
    real provider, so a client on it keeps its state in memory (`in_process`): a test's cached
    answers and cooldowns never reach the machine's real store, nor the next run.

    As the built-in transport, it bounds each request (`bounds_each_request`): a handler still
    answering after the request's timeout (else `timeout`, None: no bound) is cancelled, and the
    request fails with a `ProviderTimeoutError`; a request cut to a search's deadline fails at
    the deadline, as over HTTP."""

    in_process = True
    bounds_each_request = True

    def __init__(self, handler: Handler, *, timeout: float | None = None) -> None:
        self.handler = handler
        self.timeout = timeout
        self.calls: list[tuple[str, HttpRequest]] = []
        self.closed = False

    async def send(self, provider: str, request: HttpRequest) -> HttpResponse:
        """The handler's answer to `request`, with the request's secrets attached for redaction."""
        self.calls.append((provider, request))
        if request.json is not None:
            from .._http._transport import json_text

            try:
                json_text(request.json)
            except ValueError as exc:  # as `Transport.send` says it
                raise ProviderConnectionError(provider, f"{provider} request could not be sent: {exc}") from None
        bound = request.timeout if request.timeout is not None else self.timeout
        try:
            async with asyncio.timeout(bound):
                answer = self.handler(provider, request)
                response = await answer if inspect.isawaitable(answer) else answer
        except TimeoutError:
            raise _timed_out(provider, bound) from None
        return replace(response, url=response.url or request.url, secrets=request.secrets)

    @asynccontextmanager
    async def stream(
        self, provider: str, request: HttpRequest
    ) -> AsyncIterator[tuple[HttpResponse, AsyncIterator[bytes]]]:
        """The handler's answer as a head and its body's lines (as a streamed response reads)."""
        response = await self.send(provider, request)

        async def lines() -> AsyncIterator[bytes]:
            for line in response.body.splitlines(keepends=True):
                yield line

        yield replace(response, body=b""), lines()

    async def aclose(self) -> None:
        """Nothing to release; recorded for tests that check the client closed its transport."""
        self.closed = True


def _timed_out(provider: str, seconds: float | None) -> ProviderTimeoutError:
    """What the built-in transport raises for a request that ran out of its timeout."""
    from .._core._registry import PROVIDERS

    info = PROVIDERS.get(provider)
    error = ProviderTimeoutError(provider, f"{info.label if info else provider} did not answer within {seconds:g} s")
    error.given = seconds
    return error
