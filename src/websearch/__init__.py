"""websearch: one dependable `web_search` tool over many search providers.

    import websearch
    response = websearch.search("rust async book")          # blocking
    response = await websearch.asearch("rust async book")   # async
    print(websearch.render(response, "summary"))

For many searches, reuse a `WebSearch` client (one pooled HTTP session). Provider failures come
back as a response whose `error` is set; `response.raise_for_error()` turns that into an
exception. Every name but the errors loads on first use: `import websearch` alone costs a
third of what the data model's imports (dataclasses above all) would, and `--help` a sixth less.

This module's `__all__` is the API, with `websearch.errors` and `websearch.testing`; every module
whose name starts with an underscore is internal. To write a provider of your own, subclass
`HttpProvider` (plan the request, parse the response) and pass it in `WebSearch(providers=[...])`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import (
    AuthenticationFailed,
    Blocked,
    ConfigError,
    InvalidResponse,
    InvalidSearchParams,
    MissingCredentialError,
    NetworkUnreachable,
    NoResults,
    ProviderConnectionError,
    ProviderTimeoutError,
    QuotaExhausted,
    RateLimited,
    RequestRejected,
    SearchFailedError,
    SearchProviderError,
    UpstreamUnavailable,
    WebSearchError,
)

if TYPE_CHECKING:
    from ._client import ProviderStatus, WebSearch, asearch, search
    from ._clock import Clock, SystemClock
    from ._context import BaseTransport, ProviderContext, SendsRequests
    from ._notices import NOTICE_KINDS, Notice, NoticeKind
    from ._params import MODE_VALUES, RECENCY_VALUES, Mode, Recency
    from ._providers._base import HttpProvider, Plan, Provider
    from ._providers._errors import ErrorEnvelope
    from ._registry import PROVIDERS, SEARCH_PROVIDER_ORDER, ProviderId, ProviderInfo
    from ._rendering import render
    from ._state import MemoryStore, SqliteStore, Store, StoreUnavailable
    from ._state.redis import RedisStore
    from ._tool import tool_schema
    from ._types import (
        Attempt,
        EngineRank,
        ProviderAnswer,
        ProviderResult,
        SearchCitation,
        SearchParams,
        SearchResponse,
        SearchSource,
        SearchUsage,
    )
    from ._wire import HttpRequest, HttpResponse

__version__ = "0.1.0"

__all__ = [
    "MODE_VALUES",
    "NOTICE_KINDS",
    "PROVIDERS",
    "RECENCY_VALUES",
    "SEARCH_PROVIDER_ORDER",
    "Attempt",
    "AuthenticationFailed",
    "BaseTransport",
    "Blocked",
    "Clock",
    "ConfigError",
    "EngineRank",
    "ErrorEnvelope",
    "HttpProvider",
    "HttpRequest",
    "HttpResponse",
    "InvalidResponse",
    "InvalidSearchParams",
    "MemoryStore",
    "MissingCredentialError",
    "Mode",
    "NetworkUnreachable",
    "NoResults",
    "Notice",
    "NoticeKind",
    "Plan",
    "Provider",
    "ProviderAnswer",
    "ProviderConnectionError",
    "ProviderContext",
    "ProviderId",
    "ProviderInfo",
    "ProviderResult",
    "ProviderStatus",
    "ProviderTimeoutError",
    "QuotaExhausted",
    "RateLimited",
    "Recency",
    "RedisStore",
    "RequestRejected",
    "SearchCitation",
    "SearchFailedError",
    "SearchParams",
    "SearchProviderError",
    "SearchResponse",
    "SearchSource",
    "SearchUsage",
    "SendsRequests",
    "SqliteStore",
    "Store",
    "StoreUnavailable",
    "SystemClock",
    "UpstreamUnavailable",
    "WebSearch",
    "WebSearchError",
    "asearch",
    "render",
    "search",
    "tool_schema",
]

_LAZY = {  # name -> the module that defines it, imported on first use (PEP 562)
    "NOTICE_KINDS": "_notices",
    "Notice": "_notices",
    "NoticeKind": "_notices",
    "MODE_VALUES": "_params",
    "RECENCY_VALUES": "_params",
    "Mode": "_params",
    "Recency": "_params",
    "PROVIDERS": "_registry",
    "SEARCH_PROVIDER_ORDER": "_registry",
    "ProviderId": "_registry",
    "ProviderInfo": "_registry",
    "Attempt": "_types",
    "EngineRank": "_types",
    "ProviderAnswer": "_types",
    "ProviderResult": "_types",
    "SearchCitation": "_types",
    "SearchParams": "_types",
    "SearchResponse": "_types",
    "SearchSource": "_types",
    "SearchUsage": "_types",
    "HttpRequest": "_wire",
    "HttpResponse": "_wire",
    "WebSearch": "_client",
    "ProviderStatus": "_client",
    "asearch": "_client",
    "search": "_client",
    "render": "_rendering",
    "tool_schema": "_tool",
    "Clock": "_clock",
    "SystemClock": "_clock",
    "ProviderContext": "_context",
    "SendsRequests": "_context",
    "BaseTransport": "_context",
    "HttpProvider": "_providers._base",
    "Plan": "_providers._base",
    "Provider": "_providers._base",
    "ErrorEnvelope": "_providers._errors",
    "MemoryStore": "_state",
    "SqliteStore": "_state",
    "Store": "_state",
    "StoreUnavailable": "_state",
    "RedisStore": "_state.redis",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'websearch' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
