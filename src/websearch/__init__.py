"""websearch: one dependable `web_search` tool over eighteen search providers.

    import websearch
    response = websearch.search("rust async book")          # blocking
    response = await websearch.asearch("rust async book")   # async
    print(websearch.render(response, "summary"))

For many searches, reuse a `WebSearch` client (one pooled HTTP session). Provider failures come
back as a response whose `error` is set; `response.raise_for_error()` turns that into an
exception. Heavy parts (the HTTP stack, provider modules) load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._types import (
    RECENCY_VALUES,
    SEARCH_PROVIDER_ORDER,
    Attempt,
    ProviderId,
    Recency,
    SearchCitation,
    SearchParams,
    SearchResponse,
    SearchSource,
    SearchUsage,
)
from .errors import (
    ConfigError,
    InvalidSearchParams,
    MissingCredentialError,
    ProviderConnectionError,
    ProviderTimeoutError,
    SearchFailedError,
    SearchProviderError,
    WebSearchError,
)

if TYPE_CHECKING:
    from ._client import WebSearch, asearch, search
    from ._rendering import render

__version__ = "0.1.0"

__all__ = [
    "RECENCY_VALUES",
    "SEARCH_PROVIDER_ORDER",
    "Attempt",
    "ConfigError",
    "InvalidSearchParams",
    "MissingCredentialError",
    "ProviderConnectionError",
    "ProviderId",
    "ProviderTimeoutError",
    "Recency",
    "SearchCitation",
    "SearchFailedError",
    "SearchParams",
    "SearchProviderError",
    "SearchResponse",
    "SearchSource",
    "SearchUsage",
    "WebSearch",
    "WebSearchError",
    "asearch",
    "render",
    "search",
]

_LAZY = {"WebSearch": "_client", "asearch": "_client", "search": "_client", "render": "_rendering"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'websearch' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
