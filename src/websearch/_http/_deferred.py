"""The built-in transport before aiohttp is imported: the import runs in a thread, not on the
event loop.

Importing aiohttp takes about 200 ms. Done on the loop, in a client's first search, it held up
every other task of the application for that long and made a search with a short deadline
answer late (a 50 ms deadline answered after 190 ms). Here the first request waits for the
import without blocking the loop, within its own timeout (so within the search's deadline),
and the client uses the real transport directly once it is loaded. The servers load it at
start-up the same way; a process that has imported it already never sees this class.

A `fork` while the import runs waits for it to end (`FORK_WAIT` seconds at most): a child made
in the middle of it inherits modules half made, which the importing thread, not copied into the
child, never finishes, and every search of the child failed on them.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import threading
import time
from collections.abc import AsyncIterator
from concurrent.futures import Future
from contextlib import asynccontextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

from .._core._context import BaseTransport
from .._core._fork import before_fork
from ..errors import ProviderTimeoutError

if TYPE_CHECKING:
    import aiohttp

    from .._core._wire import HttpRequest, HttpResponse
    from ._transport import Transport

__all__ = ["DeferredTransport", "loaded", "preload"]

MODULE: Final = "websearch._http._transport"
FORK_WAIT: Final = 10.0  # seconds a fork waits for the import under way (it takes about 0.2)
_loading: Future[ModuleType] | None = None
_lock = threading.Lock()


def loaded() -> ModuleType | None:
    """The transport module if it is imported already, else None. While the thread imports it,
    it is in `sys.modules` half made (no `Transport` yet): not loaded until the import ends."""
    import sys

    loading = _loading
    if loading is not None and not (loading.done() and loading.exception() is None):
        return None
    return sys.modules.get(MODULE)


def _load() -> Future[ModuleType]:
    """The import, started once per process in a thread of its own."""
    global _loading
    with _lock:
        if _loading is None:
            future: Future[ModuleType] = Future()

            def run() -> None:
                try:
                    future.set_result(importlib.import_module(MODULE))
                except BaseException as exc:  # an import error reaches every waiting search
                    future.set_exception(exc)

            threading.Thread(target=run, name="websearch-import", daemon=True).start()
            _loading = future
        return _loading


def preload() -> None:
    """Start the import in its thread, if no one has yet, and return at once."""
    _load()


def _import_done() -> None:
    """Before a fork: the import under way, if any, ended (or given up on after `FORK_WAIT`)."""
    loading = _loading
    if loading is not None and not loading.done():
        with contextlib.suppress(Exception):  # failed or too slow: the fork goes on regardless
            loading.result(FORK_WAIT)


before_fork(_import_done)


class DeferredTransport(BaseTransport):
    """A `Transport` made with `options` once its module is imported (in a thread); until then
    each request waits for the import within its own timeout. It has all of the real one's
    seam (`SendsRequests`), and forwards `close_soon` and `abandon`, which the client uses on
    the transport it made."""

    bounds_each_request = True

    def __init__(self, **options: Any) -> None:
        self.timeout: float = options["timeout"]
        self._options = options
        self.real: Transport | None = None

    async def _transport(self, provider: str, wait: float | None) -> Transport:
        if self.real is None:
            try:
                module = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(_load())), wait)
            except TimeoutError:
                raise self._too_slow(provider, wait) from None
            if self.real is None:
                self.real = module.Transport(**self._options)
        return self.real

    async def ready(self, within: float | None) -> None:
        """Wait (`within` seconds at most) until the real transport is made. The engine waits
        before it takes a pacing slot: a slot is a time to send at, and a cold process that
        took one, then loaded aiohttp, sent up to 0.4 s late, close behind the next slot's
        request from another process. An import that failed is not raised here: it fails each
        request, as it would without this wait."""
        if self.real is None:
            with contextlib.suppress(Exception):
                await self._transport("", within)

    async def send(self, provider: str, request: HttpRequest) -> HttpResponse:
        """The real transport's `send`, after the import; the wait counts in the request's
        timeout, which a timeout error still names as given."""
        if self.real is not None:
            return await self.real.send(provider, request)
        bound = request.timeout if request.timeout is not None else self.timeout
        started = time.monotonic()
        transport = await self._transport(provider, bound)
        left = bound - (time.monotonic() - started)
        try:
            return await transport.send(provider, request.with_timeout(max(left, 0.001)))
        except ProviderTimeoutError as exc:
            if exc.status is not None:  # not the request's own timeout
                raise
            raise self._too_slow(provider, bound) from None

    def _too_slow(self, provider: str, seconds: float | None) -> ProviderTimeoutError:
        """The built-in transport's timeout error, naming the timeout as the caller gave it."""
        label = (self._options.get("labels") or {}).get(provider, provider)
        error = ProviderTimeoutError(provider, f"{label} did not answer within {seconds:g} s")
        error.given = seconds
        return error

    @asynccontextmanager
    async def stream(
        self, provider: str, request: HttpRequest
    ) -> AsyncIterator[tuple[HttpResponse, AsyncIterator[bytes]]]:
        """The real transport's `stream`, after the import (a stream's attempt runs under a timer)."""
        transport = await self._transport(provider, None)
        async with transport.stream(provider, request) as opened:
            yield opened

    async def aclose(self) -> None:
        if self.real is not None:
            await self.real.aclose()

    def close_soon(self) -> None:
        """The real transport's `close_soon`, when it was made."""
        if self.real is not None:
            self.real.close_soon()

    def abandon(self) -> None:
        """The real transport's `abandon` (in a child made by `fork`), when it was made."""
        if self.real is not None:
            self.real.abandon()

    @property
    def _session(self) -> aiohttp.ClientSession | None:
        """The real transport's session of the loop used last (for tests)."""
        return None if self.real is None else self.real._session
