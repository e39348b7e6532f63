"""`/metrics`: the server's Prometheus series, through `prometheus-client`, and the engine
observer that feeds them.

The engine tells its observer of each search (`searched`), cache lookup (`looked_up`) and joined
flight (`joined`); requests are counted by the front door (`request`). Labels are only ever
provider ids, error kinds, skip reasons, route templates, methods and status codes: never a
query, a key or a token, and never a raw path (an unknown path is `other`), so no caller can
grow the series without bound.

Each registry is private to its app (tests build many apps in one process). Under `--workers`,
`PROMETHEUS_MULTIPROC_DIR` is set by `websearch serve` before the workers start, the values go
to its files, and a scrape of any worker sums them all (prometheus-client's multiprocess mode).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics, generate_latest
from prometheus_client import multiprocess as _multiprocess
from prometheus_client.exposition import CONTENT_TYPE_LATEST

if TYPE_CHECKING:
    from ..._core._types import SearchResponse

__all__ = ["CONTENT_TYPE", "ROUTES", "Metrics"]

CONTENT_TYPE: Final = CONTENT_TYPE_LATEST
#: Route labels: the server's paths; anything else is counted as `other`.
ROUTES: Final = frozenset(
    {
        "/",
        "/healthz",
        "/readyz",
        "/metrics",
        "/openapi.json",
        "/v1/search",
        "/v1/fetch",
        "/v1/research",
        "/search",
        "/config",
        "/autocompleter",
        "/mcp",
    }
)
_METHODS: Final = frozenset({"GET", "POST", "OPTIONS", "HEAD", "DELETE"})
_ATTEMPT_BUCKETS: Final = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0)
_REQUEST_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0)


def route_label(path: str) -> str:
    """The route a path is counted under."""
    return path if path in ROUTES else "other"


class Metrics:
    """One app's series, and the engine `Observer` that feeds them (`client.engine.observer`)."""

    def __init__(self) -> None:
        disable_created_metrics()  # type: ignore[no-untyped-call]  # no `_created` twin of each series
        self.multiprocess = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
        registry = self.registry = CollectorRegistry(auto_describe=True)
        self.searches = Counter(
            "websearch_searches",
            "Searches by outcome: ok (a provider answered), cached (served from the cache), failed (every "
            "provider failed).",
            ["outcome"],
            registry=registry,
        )
        self.attempts = Counter(
            "websearch_provider_attempts",
            "Requests to a provider, by provider and error kind (none: it answered).",
            ["provider", "error_kind"],
            registry=registry,
        )
        self.skips = Counter(
            "websearch_provider_skips",
            "Providers passed over without a request, by reason (cooldown, circuit_open, paced, deadline).",
            ["provider", "reason"],
            registry=registry,
        )
        self.latency = Histogram(
            "websearch_provider_attempt_duration_seconds",
            "How long each request to a provider took, by provider.",
            ["provider"],
            buckets=_ATTEMPT_BUCKETS,
            registry=registry,
        )
        self.cache_hits = Counter("websearch_cache_hits", "Searches answered from the cache.", registry=registry)
        self.cache_misses = Counter(
            "websearch_cache_misses", "Cache lookups that found no fresh answer.", registry=registry
        )
        self.joins = Counter(
            "websearch_singleflight_joins",
            "Searches that waited for an identical search in flight (in this process or another) instead of "
            "going upstream.",
            registry=registry,
        )
        self.cooling = Gauge(
            "websearch_provider_cooling_down",
            "1 while a provider is cooling down or its circuit is open (read from the state store at each scrape).",
            ["provider"],
            multiprocess_mode="mostrecent",
            registry=registry,
        )
        self.cooling_total = Gauge(
            "websearch_providers_cooling_down",
            "How many providers are cooling down or have their circuit open.",
            multiprocess_mode="mostrecent",
            registry=registry,
        )
        self.in_flight = Gauge(
            "websearch_http_requests_in_flight",
            "HTTP requests being served now.",
            multiprocess_mode="livesum",
            registry=registry,
        )
        self.requests = Counter(
            "websearch_http_requests",
            "HTTP requests served, by route, method and status.",
            ["route", "method", "status"],
            registry=registry,
        )
        self.request_latency = Histogram(
            "websearch_http_request_duration_seconds",
            "Time to serve an HTTP request, by route.",
            ["route"],
            buckets=_REQUEST_BUCKETS,
            registry=registry,
        )

    # -- the engine's Observer -----------------------------------------------------------------

    def searched(self, response: SearchResponse, *, joined: bool) -> None:
        """One search done. A cached answer's attempts are the original ones, and a search that
        joined a flight has the leader's: neither counts them again."""
        if response.cached:
            self.searches.labels("cached").inc()
            return
        self.searches.labels("ok" if response.error is None else "failed").inc()
        attempts = response.attempts
        if not attempts or joined:
            return
        for attempt in attempts:
            if attempt.skipped is not None:
                self.skips.labels(attempt.provider, attempt.skipped).inc()
                continue
            kind = "none" if attempt.error is None else (attempt.error_kind or "error")
            self.attempts.labels(attempt.provider, kind).inc()
            self.latency.labels(attempt.provider).observe(max(0.0, attempt.duration_ms) / 1000)

    def looked_up(self, hit: bool) -> None:
        (self.cache_hits if hit else self.cache_misses).inc()

    def joined(self) -> None:
        self.joins.inc()

    # -- requests and scrapes ------------------------------------------------------------------

    def request(self, path: str, method: str, status: int, seconds: float) -> None:
        """One HTTP request served."""
        route = route_label(path)
        self.requests.labels(route, method if method in _METHODS else "other", str(status)).inc()
        self.request_latency.labels(route).observe(seconds)

    def set_cooling(self, providers: Iterable[str], cooling: Iterable[str]) -> None:
        """Which providers cool down now (`WebSearch.provider_health()`'s keys)."""
        down = set(cooling)
        for provider in providers:
            self.cooling.labels(provider).set(1 if provider in down else 0)
        self.cooling_total.set(len(down))

    def exposition(self) -> bytes:
        """The text format of every series (all workers' under `--workers`)."""
        if self.multiprocess:
            registry = CollectorRegistry()
            _multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
            return generate_latest(registry)
        return generate_latest(self.registry)

    def process_exited(self) -> None:
        """A worker stops: its live gauges leave the sums (multiprocess mode only)."""
        if self.multiprocess:
            _multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]
