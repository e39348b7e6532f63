"""The one ASGI app `websearch serve` runs: every face of the search on one client.

Routes: `POST /v1/search`, `/v1/fetch` and `/v1/research` (REST), `GET|POST /search`, `GET /config` and `/autocompleter`
(SearXNG's API), `/mcp` (the `web_search`, `web_fetch` and `web_research` tools over streamable HTTP: the same server as
`websearch mcp --http`, stateless and answering in JSON, so any replica can take any request
behind a load balancer), `GET /healthz` (the process is up), `GET /readyz` (the state store:
ready, or degraded and why; 503 only while draining), `GET /metrics`, `GET /openapi.json`, and
`/` (SearXNG's index: a search redirects to /search).

Middleware, outermost first: the front door (in-flight count, the drain's 503, request metrics,
the access log), the loopback Host/Origin checks, CORS (only with `[serve] cors_origins`), then
the gate (token, body size, rate limit). The MCP tool's searches pass the same limits as the
other faces: it is given the client behind a thin guard.

Draining: on SIGTERM (or Ctrl-C) the server keeps listening but answers new requests 503 and
`/readyz` 503, waits until the requests in flight are done (at most `[serve] grace_period`
seconds; those still running then are cancelled and answer 503 too), then lets uvicorn stop. A
second signal stops it at once.
"""

from __future__ import annotations

import asyncio
import importlib
import signal
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import anyio.to_thread
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from ..._client._client import DEFAULT_MAX_PROVIDERS
from .._mcp_server import build_server
from .._tool import DEFAULT_NUM_RESULTS, offered_providers
from ._api import SearchApi, json_response, openapi_document, prepared
from ._auth import Gate, HostCheck
from ._config import STATE_KEY
from ._lifecycle import Lifecycle
from ._logging import FrontDoor
from ._metrics import CONTENT_TYPE, Metrics
from ._read_api import ReadApi, read_paths
from ._searxng import SearxngApi

if TYPE_CHECKING:
    from starlette.requests import Request

    from ..._client._client import WebSearch
    from ..._core._pages import FetchResponse, ResearchResponse
    from ..._core._types import SearchResponse
    from ._config import Limits, ServeConfig

__all__ = ["Lifecycle", "create_app"]


class _Guarded:
    """The client as the MCP tool sees it: each search passes the server's limits first (a
    refusal is the tool's `Invalid argument` error result, naming the argument)."""

    def __init__(self, client: WebSearch, limits: Limits) -> None:
        self._client = client
        self._limits = limits

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    async def asearch(self, query: str, **kwargs: Any) -> SearchResponse:
        if kwargs.get("limit") == DEFAULT_NUM_RESULTS and self._limits.max_limit < DEFAULT_NUM_RESULTS:
            kwargs["limit"] = self._limits.max_limit  # the tool's default, within the limit
        return await self._client.asearch(query, **prepared(self._client, self._limits, query, kwargs))

    async def afetch(self, url: str, **kwargs: Any) -> FetchResponse:
        default = float(self._client.settings.get("fetch.deadline", 30.0))
        kwargs.setdefault("deadline", min(default, self._limits.max_deadline))
        return await self._client.afetch(url, **kwargs)

    async def aresearch(self, query: str, **kwargs: Any) -> ResearchResponse:
        self._limits.check(query, kwargs.get("search") or {})
        default = float(self._client.settings.get("research.deadline", 60.0))
        kwargs.setdefault("deadline", min(default, self._limits.max_deadline))
        return await self._client.aresearch(query, **kwargs)


def create_app(client: WebSearch, config: ServeConfig, *, close_client: bool = False) -> Starlette:
    """The server's app on `client` (closed when the app stops if `close_client`). Sets the
    client's engine observer to the app's metrics. `app.state.lifecycle` drains it."""
    config = _within_settings(client, config)
    metrics = Metrics()
    client.engine.observer = metrics
    lifecycle = Lifecycle(config.grace_period)
    statuses = client.provider_status()
    providers = offered_providers(statuses)
    unavailable = {
        s.id: s.reason if not s.available else "excluded by the setting providers.webSearchExclude"
        for s in statuses
        if s.id not in providers
    }
    api = SearchApi(client, config, providers, unavailable)
    reads = ReadApi(client, config, providers, unavailable)
    searx = SearxngApi(client, config, providers)
    openapi = openapi_document(providers, client.lineup.ids, config.limits, config.auth)
    openapi["paths"].update(read_paths(providers, config.limits.max_deadline))
    mcp_app = build_server(cast("WebSearch", _Guarded(client, config.limits))).streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),  # HostCheck does it
        max_request_body_size=config.limits.max_body_bytes,
    )

    async def healthz(request: Request) -> Response:
        return json_response(200, {"status": "ok"})

    async def readyz(request: Request) -> Response:
        if not client.engine.enabled:
            return json_response(200, {"status": "ready", "store": "off"})
        store = client.engine.state()
        await store.ping()
        if store.degraded:
            return json_response(200, {"status": "degraded", "store": store.kind, "reason": store.degraded})
        return json_response(200, {"status": "ready", "store": store.kind})

    async def metrics_page(request: Request) -> Response:
        cooling = await client.provider_health() if client.engine.enabled else {}
        metrics.set_cooling(client.lineup.ids, cooling)
        return Response(metrics.exposition(), media_type=CONTENT_TYPE)

    async def openapi_page(request: Request) -> Response:
        return json_response(200, openapi)

    async def mcp_stream(request: Request) -> Response:
        # Stateless and answering in JSON, the server never has anything to send on its own: the
        # SDK's GET stream stayed open and silent, and held every drain for the grace period.
        message = "GET is not allowed on /mcp: this server sends nothing unasked (POST each message)"
        return json_response(405, {"error": message}, {"Allow": "POST"})

    routes: list[BaseRoute] = [
        Route("/", searx.index, methods=["GET", "POST"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics_page, methods=["GET"]),
        Route("/openapi.json", openapi_page, methods=["GET"]),
        Route("/v1/search", api.search, methods=["POST"]),
        Route("/v1/fetch", reads.fetch, methods=["POST"]),
        Route("/v1/research", reads.research, methods=["POST"]),
        Route("/search", searx.search, methods=["GET", "POST"]),
        Route("/config", searx.config, methods=["GET"]),
        Route("/autocompleter", searx.autocompleter, methods=["GET", "POST"]),
        Route("/mcp", mcp_stream, methods=["GET"]),  # before the MCP app's route, which takes every method
        *mcp_app.routes,
    ]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        # aiohttp's import takes half a second: off the event loop, before the first request
        await anyio.to_thread.run_sync(importlib.import_module, "websearch._http._transport")
        if client.engine.enabled:
            await client.engine.state().ping()  # open the store now, not in the first search
        restore = _watch_signals(lifecycle)
        try:
            async with mcp_app.router.lifespan_context(mcp_app):
                yield {STATE_KEY: config.connections.resolved()}  # read by the protocol (`_connections`)
        finally:
            restore()
            metrics.process_exited()
            if close_client:
                await client.aclose()

    middleware = [
        Middleware(FrontDoor, lifecycle=lifecycle, metrics=metrics, log_queries=config.log_queries),
        Middleware(HostCheck, config=config),
    ]
    if config.cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(config.cors_origins),
                allow_methods=["GET", "POST", "OPTIONS"],
                allow_headers=["authorization", "content-type", "mcp-protocol-version", "mcp-session-id"],
                expose_headers=["retry-after"],
                max_age=600,
            )
        )
    middleware.append(Middleware(Gate, config=config, store=client.engine.state))
    paths = tuple(dict.fromkeys(getattr(route, "path", "") for route in routes if getattr(route, "path", "")))
    app = Starlette(
        routes=routes,
        middleware=middleware,
        lifespan=lifespan,
        exception_handlers={HTTPException: _routing_error(paths)},
    )
    app.state.lifecycle = lifecycle
    app.state.metrics = metrics
    return app


def _within_settings(client: WebSearch, config: ServeConfig) -> ServeConfig:
    """`config` with `max_fanout` no larger than the client's `fanout.max_providers`: a longer
    fan-out the library cuts (with a notice) is refused on the server (422 naming `fanout`), the
    way every other limit is, and the OpenAPI document says so."""
    cap = int(client.settings.get_number("fanout.max_providers", DEFAULT_MAX_PROVIDERS))
    if cap >= config.limits.max_fanout:
        return config
    return replace(config, limits=replace(config.limits, max_fanout=cap))


def _routing_error(paths: tuple[str, ...]) -> Callable[[Request, Exception], Response]:
    """Starlette's 404 and 405 as the JSON error every other answer of the server is (a client
    reads `error` whatever went wrong), naming the routes or the methods there are."""

    def answer(request: Request, exc: Exception) -> Response:
        http = exc if isinstance(exc, HTTPException) else HTTPException(500)
        headers, path = dict(http.headers or {}), request.url.path
        message = http.detail
        if http.status_code == 404:
            message = f"there is no route {path} (the routes are: {', '.join(paths)})"
        elif http.status_code == 405:
            message = f"{request.method} is not allowed on {path} (allowed: {headers.get('Allow', '')})"
        return json_response(http.status_code, {"error": message}, headers)

    return answer


def _watch_signals(lifecycle: Lifecycle) -> Callable[[], None]:
    """Make the first SIGTERM or SIGINT drain before the server's own handler (uvicorn's) stops
    it; a second one goes straight to that handler. Only in the main thread, and only over a
    handler that is a function (never over the default action, which would stop working)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    loop = asyncio.get_running_loop()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    watched = {sig: handler for sig, handler in previous.items() if callable(handler)}

    async def finish(signum: int, handler: Callable[[int, Any], Any]) -> None:
        if not await lifecycle.drained():
            await lifecycle.cut()
        handler(signum, None)

    def on_signal(signum: int, frame: Any) -> None:
        handler = watched[signal.Signals(signum)]
        if lifecycle.draining:
            handler(signum, frame)
            return
        lifecycle.drain()

        def start() -> None:
            task = loop.create_task(finish(signum, handler))
            lifecycle._tasks.add(task)
            task.add_done_callback(lifecycle._tasks.discard)

        loop.call_soon_threadsafe(start)

    for sig in watched:
        signal.signal(sig, on_signal)

    def restore() -> None:
        for sig, handler in watched.items():
            signal.signal(sig, handler)

    return restore
