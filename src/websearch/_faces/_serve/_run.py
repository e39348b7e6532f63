"""Running the app under uvicorn: one process, or `--workers N` processes on one socket.

One worker: the app is built here and served on this process's event loop. Several: uvicorn's
supervisor starts N fresh processes, each of which builds its own client and app from the same
settings, environment and flags (passed in `WEBSEARCH_SERVE_FLAGS`; tokens are read again from
their sources, never put in the environment), and Prometheus' multiprocess directory is set up so
that a scrape of any worker shows the sums of all. Workers share the state store like replicas.

Connections go through `_connections.GuardedH11Protocol` (a deadline for each request to arrive,
a cap on open connections) and asyncio accepts them in bursts the descriptor limit can hold
(`_config.accept_burst`), so slow clients cannot lock others out. The soft descriptor limit is
raised to the hard one first (`_config.raise_files_limit`).

uvicorn's access log is off (it would print query strings, and SearXNG's carry the query); the
JSON access log of `websearch._faces._serve._logging` replaces it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import warnings
from typing import TYPE_CHECKING, Any, Final

from ._config import ServeConfig, accept_burst, raise_files_limit

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ["banner", "run", "worker_app"]

FLAGS_ENV: Final = "WEBSEARCH_SERVE_FLAGS"
#: Seconds uvicorn waits for connections after the drain (which waited for the requests already).
_AFTER_DRAIN: Final = 2


def banner(config: ServeConfig) -> str:
    """The line `websearch serve` prints as it starts."""
    host = f"[{config.host}]" if ":" in config.host else config.host
    if config.auth:
        who = f"{len(config.tokens)} token{'s' * (len(config.tokens) != 1)}"
    else:
        who = "no authentication" + (" (loopback only)" if config.loopback and not config.no_auth else "")
    workers = f", {config.workers} workers" if config.workers > 1 else ""
    return f"websearch serve on http://{host}:{config.port} (/v1/search, /search, /mcp; {who}{workers})"


def _uvicorn_options(config: ServeConfig) -> dict[str, Any]:
    from ._connections import GuardedH11Protocol

    return {
        "http": GuardedH11Protocol,  # the request deadline and the connection cap
        "backlog": accept_burst(),
        "host": config.host,
        "port": config.port,
        "log_level": "warning",
        "access_log": False,
        "lifespan": "on",
        "server_header": False,
        "timeout_graceful_shutdown": _AFTER_DRAIN,
    }


def run(config: ServeConfig) -> None:
    """Serve until SIGTERM or Ctrl-C (drained first); returns after a clean stop."""
    import uvicorn

    raise_files_limit()  # before the workers start: they inherit it
    if config.workers > 1:
        _run_workers(config)
        return
    from ..._client._client import WebSearch
    from ._app import create_app
    from ._logging import configure

    client = WebSearch()
    app = create_app(client, config, close_client=True)
    server = uvicorn.Server(uvicorn.Config(app, **_uvicorn_options(config)))
    configure()  # after uvicorn's logging configuration
    # uvicorn raises the signal it stopped for again once it is done, and before it listens, a
    # SIGTERM must stop the start: either way a clean exit (0), not the default action's kill.
    signal.signal(signal.SIGTERM, _exit_cleanly)
    print(banner(config), file=sys.stderr, flush=True)
    try:
        server.run()
    except SystemExit as exc:  # ours, above; uvicorn's own (a port in use: 1) goes on
        if exc.code not in (0, None):
            raise


def _exit_cleanly(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def _run_workers(config: ServeConfig) -> None:
    import uvicorn

    directory = tempfile.mkdtemp(prefix="websearch-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
    flags = {
        "host": config.host,
        "port": config.port,
        "workers": config.workers,
        "token_file": config.token_file,
        "no_auth": config.no_auth,
    }
    os.environ[FLAGS_ENV] = json.dumps(flags)
    print(banner(config), file=sys.stderr, flush=True)
    try:
        uvicorn.run(
            "websearch._faces._serve._run:worker_app", factory=True, workers=config.workers, **_uvicorn_options(config)
        )
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def worker_app() -> Starlette:
    """One worker's app (uvicorn's factory under `--workers`), configured as its parent was."""
    from ..._client._client import WebSearch
    from ._app import create_app
    from ._logging import configure

    flags = json.loads(os.environ[FLAGS_ENV])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the parent warned already (an unknown setting, a token file)
        client = WebSearch()
        config = ServeConfig.load(client.settings, client.env, **flags)
    configure()
    return create_app(client, config, close_client=True)
