"""`WebSearch`: the client that owns settings, credentials, one HTTP session and the clock.

Async first (`asearch`); `search` runs the same coroutine on a private event loop in a
background thread, so it also works where a loop is already running (notebooks, servers).
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Self

from ._availability import is_available, unavailable_reason
from ._chain import run_search
from ._clock import Clock, SystemClock
from ._context import ProviderContext, SendsRequests
from ._credentials import CredentialStore
from ._registry import PROVIDERS
from ._settings import Settings
from ._settings import config_dir as default_config_dir
from ._types import SEARCH_PROVIDER_ORDER, SearchParams, SearchResponse
from .errors import InvalidSearchParams

__all__ = ["ProviderStatus", "WebSearch", "asearch", "search"]


@dataclass(frozen=True, slots=True)
class ProviderStatus:
    """One row of `websearch providers`."""

    id: str
    label: str
    available: bool
    reason: str  # what would make it available (meaningful when it is not)
    preferred: bool
    excluded: bool

    def to_dict(self) -> dict[str, Any]:
        """The row as a JSON-ready dict."""
        return asdict(self)


class WebSearch:
    """A reusable search client. Use one per application; close it when done.

    `env` defaults to `os.environ`; `config_dir` to `$WEBSEARCH_CONFIG_DIR` or the user config
    directory; `timeout` (seconds per HTTP request) to the setting `http.timeout`, else 60.
    `api_keys` maps provider ids to keys that win over the environment and agent.db.
    """

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        config_dir: Path | str | None = None,
        settings: Settings | None = None,
        credentials: CredentialStore | None = None,
        api_keys: Mapping[str, str] | None = None,
        timeout: float | None = None,
        clock: Clock | None = None,
        transport: SendsRequests | None = None,
    ) -> None:
        import os

        self.env: Mapping[str, str] = os.environ if env is None else env
        directory = Path(config_dir) if config_dir is not None else default_config_dir(self.env)
        self.settings = settings if settings is not None else Settings.load(directory, self.env)
        self.credentials = credentials if credentials is not None else CredentialStore(directory / "agent.db")
        self.clock: Clock = clock or SystemClock()
        self.timeout = timeout if timeout is not None else self.settings.http_timeout
        if self.timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {self.timeout}")
        self._api_keys = dict(api_keys or {})
        self._transport = transport
        self._owns_transport = transport is None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._loop_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"WebSearch(config={self.settings.path}, timeout={self.timeout:g})"

    # -- async ---------------------------------------------------------------------------------

    def _context(self, *, with_transport: bool = True) -> ProviderContext:
        if self._transport is None and with_transport:
            from ._transport import Transport

            self._transport = Transport(timeout=self.timeout, env=self.env)
        return ProviderContext(self.env, self.settings, self.credentials, self._transport, self.clock, self._api_keys)

    def provider_status(self) -> list[ProviderStatus]:
        """Every provider in chain order: available or not, and what would make it so."""
        ctx = self._context(with_transport=False)
        preferred, excluded = self.settings.preferred_provider, self.settings.excluded_providers
        return [
            ProviderStatus(
                info.id,
                info.label,
                is_available(info, ctx),
                unavailable_reason(info, ctx),
                info.id == preferred,
                info.id in excluded,
            )
            for info in PROVIDERS.values()
        ]

    async def asearch(
        self, query: str, *, provider: str | None = None, exclude: Iterable[str] = (), **params: Any
    ) -> SearchResponse:
        """Search once. Provider failures come back as a response with `error` set; invalid
        parameters raise `InvalidSearchParams`; cancellation raises `asyncio.CancelledError`.

        `provider` forces one provider ("auto" walks the automatic chain, ignoring the
        `providers.webSearch` preference; a forced provider that fails is followed by the
        `providers.webSearchFallback` tier); `exclude` adds ids the automatic chain must skip.
        `params` are the fields of `SearchParams`; `num_results` is accepted for `limit`.
        """
        if "num_results" in params:  # the MCP tool's name for limit
            alias = params.pop("num_results")
            if params.get("limit") is not None and alias is not None and params["limit"] != alias:
                raise InvalidSearchParams("num_results", "num_results is another name for limit; give one of them")
            params["limit"] = params.get("limit") if params.get("limit") is not None else alias
        try:
            search_params = SearchParams(query, **params)
        except TypeError as exc:  # an unknown keyword
            raise InvalidSearchParams("params", f"unknown search parameter: {exc}") from None
        excluded = self.settings.excluded_providers
        if exclude:
            names = [exclude] if isinstance(exclude, str) else exclude
            excluded = excluded | frozenset(_known_provider(name) for name in names)
        if provider is not None and provider != "auto":
            _known_provider(provider)
        return await run_search(
            search_params,
            self._context(),
            provider=provider,
            preferred=self.settings.preferred_provider,
            excluded=excluded,
        )

    async def aclose(self) -> None:
        """Close the HTTP session (only one this client created)."""
        if self._owns_transport and self._transport is not None:
            await self._transport.aclose()  # type: ignore[attr-defined]

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- sync ----------------------------------------------------------------------------------

    def search(self, query: str, **params: Any) -> SearchResponse:
        """Blocking `asearch`, run on this client's private event loop."""
        future: Future[SearchResponse] = asyncio.run_coroutine_threadsafe(
            self.asearch(query, **params), self._private_loop()
        )
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            raise

    def close(self) -> None:
        """Close the session and stop the private loop, if one was started."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self.aclose(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
        self._loop = self._thread = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _private_loop(self) -> asyncio.AbstractEventLoop:
        with self._loop_lock:  # several threads may make their first search at once
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="websearch-loop", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop


def _known_provider(name: str) -> str:
    if name not in PROVIDERS:
        raise InvalidSearchParams(
            "provider", f"unknown provider {name!r}; use auto or one of: {', '.join(SEARCH_PROVIDER_ORDER)}"
        )
    return name


async def asearch(query: str, **params: Any) -> SearchResponse:
    """Search with a short-lived client. For many searches, reuse a `WebSearch`."""
    async with WebSearch() as client:
        return await client.asearch(query, **params)


_default: WebSearch | None = None
_default_lock = threading.Lock()


def search(query: str, **params: Any) -> SearchResponse:
    """Blocking search through a process-wide client (closed at exit)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = WebSearch()
            atexit.register(_default.close)
    return _default.search(query, **params)
