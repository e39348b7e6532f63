"""`websearch serve`: one search service for many agents (REST, SearXNG's API, MCP over HTTP,
health, readiness, Prometheus metrics), on one client, scaled out by replicas sharing Redis.

Light on purpose: this package's `__init__` and `_config` import neither Starlette nor uvicorn
(`websearch._core._settings` checks `[serve]` values through `_config`, and `websearch --help` must stay
cheap); the app (`_app`), its faces (`_api`, `_searxng`), gates (`_auth`), metrics (`_metrics`),
logs (`_logging`), the connection guard (`_connections`) and the uvicorn runner (`_run`) load
when a server is built. They need the `serve` extra: `pip install 'websearch-hub[serve]'`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._config import Limits, RateLimit, ServeConfig

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from ..._client._client import WebSearch

__all__ = ["Limits", "RateLimit", "ServeConfig", "cannot_listen", "check_installed", "create_app", "run"]


def create_app(client: WebSearch, config: ServeConfig, *, close_client: bool = False) -> Starlette:
    """The server's ASGI app on `client` (see `websearch._faces._serve._app.create_app`)."""
    from ._app import create_app as build

    return build(client, config, close_client=close_client)


def run(config: ServeConfig) -> None:
    """Serve with uvicorn until stopped (see `websearch._faces._serve._run.run`)."""
    from ._run import run as serve

    serve(config)


def cannot_listen(host: str, port: int) -> str | None:
    """Why a server (this one, or `websearch mcp --http`) could not listen on `host`:`port` (in
    use, not this machine's address), or None. Asked before the banner: the server said it was
    serving, then stopped with uvicorn's own error and exit status."""
    import socket

    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind((host, port))
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def check_installed() -> None:
    """Raise ModuleNotFoundError (naming the package) unless the `serve` extra is installed."""
    import mcp  # noqa: F401
    import prometheus_client  # noqa: F401
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
