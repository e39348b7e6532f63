"""websearch: one dependable `web_search` tool over many search providers.

    import websearch
    response = websearch.search("rust async book")          # blocking
    response = await websearch.asearch("rust async book")   # async
    print(websearch.render(response, "summary"))
    page = websearch.fetch("https://example.com/")          # one page as clean text
    context = websearch.research("what is QUIC?")           # cited passages from several pages

For many searches, reuse a `WebSearch` client (one pooled HTTP session). Provider failures come
back as a response whose `error` is set; `response.raise_for_error()` turns that into an
exception. Every name but the errors loads on first use: `import websearch` alone costs a
third of what the data model's imports (dataclasses above all) would, and `--help` a sixth less.

The API has five doors, one per audience; every module whose name starts with an underscore is
internal:

- `websearch` (this module), for whoever searches: `WebSearch`, `search`, `asearch`, `render`,
  `tool_schema`; the response (`SearchResponse`, `SearchSource`, `SearchCitation`,
  `SearchUsage`, `Attempt`, `EngineRank`, `ProviderAnswer`, `Locale`, `LocaleValue`) and
  `ProviderStatus`; reading
  (`fetch`, `afetch`, `research`, `aresearch`; their answers `FetchResponse`, `ResearchResponse`,
  `ResearchSource`, `PageOutcome`); the notices
  (`Notice`, `NoticeKind`, `NOTICE_KINDS`); the parameters (`SearchParams`, `Mode`, `Recency`,
  `MODE_VALUES`, `RECENCY_VALUES`); the errors a caller catches (`WebSearchError`,
  `InvalidSearchParams`, `ConfigError`, `SearchFailedError`, `StoreUnavailable`).
- `websearch.providers`, for whoever writes a provider: `Provider`, `HttpProvider`, `Plan`, ...
  and the registry of the built-in ones (`PROVIDERS`, `SEARCH_PROVIDER_ORDER`).
- `websearch.state`, for whoever picks or writes a state store: `Store`, `MemoryStore`, ...
- `websearch.errors`: the whole exception tree (one class per kind of provider failure).
- `websearch.testing`: fake providers on 127.0.0.1 and `MockTransport`, for tests.

A name that moved from here to another door still imports from here until the next release,
with a `DeprecationWarning` naming its new home.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._core._version import __version__ as __version__
from .errors import ConfigError, InvalidSearchParams, SearchFailedError, StoreUnavailable, WebSearchError

if TYPE_CHECKING:
    from ._client._client import ProviderStatus, WebSearch, afetch, aresearch, asearch, fetch, research, search
    from ._core._notices import NOTICE_KINDS, Notice, NoticeKind
    from ._core._pages import FetchResponse, PageOutcome, ResearchResponse, ResearchSource
    from ._core._params import MODE_VALUES, RECENCY_VALUES, Mode, Recency
    from ._core._types import (
        Attempt,
        EngineRank,
        Locale,
        LocaleValue,
        ProviderAnswer,
        SearchCitation,
        SearchParams,
        SearchResponse,
        SearchSource,
        SearchUsage,
    )
    from ._faces._rendering import render
    from ._faces._tool import tool_schema


__all__ = [
    "MODE_VALUES",
    "NOTICE_KINDS",
    "RECENCY_VALUES",
    "Attempt",
    "ConfigError",
    "EngineRank",
    "FetchResponse",
    "InvalidSearchParams",
    "Locale",
    "LocaleValue",
    "Mode",
    "Notice",
    "NoticeKind",
    "PageOutcome",
    "ProviderAnswer",
    "ProviderStatus",
    "Recency",
    "ResearchResponse",
    "ResearchSource",
    "SearchCitation",
    "SearchFailedError",
    "SearchParams",
    "SearchResponse",
    "SearchSource",
    "SearchUsage",
    "StoreUnavailable",
    "WebSearch",
    "WebSearchError",
    "afetch",
    "aresearch",
    "asearch",
    "fetch",
    "render",
    "research",
    "search",
    "tool_schema",
]

_LAZY = {  # name -> the module that defines it, imported on first use (PEP 562)
    "NOTICE_KINDS": "_core._notices",
    "Notice": "_core._notices",
    "NoticeKind": "_core._notices",
    "MODE_VALUES": "_core._params",
    "RECENCY_VALUES": "_core._params",
    "Mode": "_core._params",
    "Recency": "_core._params",
    "Attempt": "_core._types",
    "EngineRank": "_core._types",
    "Locale": "_core._types",
    "LocaleValue": "_core._types",
    "ProviderAnswer": "_core._types",
    "SearchCitation": "_core._types",
    "SearchParams": "_core._types",
    "SearchResponse": "_core._types",
    "SearchSource": "_core._types",
    "SearchUsage": "_core._types",
    "FetchResponse": "_core._pages",
    "PageOutcome": "_core._pages",
    "ResearchResponse": "_core._pages",
    "ResearchSource": "_core._pages",
    "WebSearch": "_client._client",
    "ProviderStatus": "_client._client",
    "asearch": "_client._client",
    "search": "_client._client",
    "fetch": "_client._client",
    "afetch": "_client._client",
    "research": "_client._client",
    "aresearch": "_client._client",
    "render": "_faces._rendering",
    "tool_schema": "_faces._tool",
}

_PROVIDERS = "websearch.providers"
_STATE = "websearch.state"
_ERRORS = "websearch.errors"

# Names this module's `__all__` held before the doors, now behind the door of their audience: still
# importable from here, with a DeprecationWarning, until the next release.
_MOVED: Mapping[str, str] = {
    **dict.fromkeys(
        (
            "PROVIDERS",
            "SEARCH_PROVIDER_ORDER",
            "Clock",
            "ErrorEnvelope",
            "HttpProvider",
            "HttpRequest",
            "HttpResponse",
            "Plan",
            "Provider",
            "ProviderContext",
            "ProviderId",
            "ProviderInfo",
            "ProviderResult",
            "SendsRequests",
            "SystemClock",
        ),
        _PROVIDERS,
    ),
    **dict.fromkeys(("MemoryStore", "RedisStore", "SqliteStore", "Store"), _STATE),
    **dict.fromkeys(
        (
            "AuthenticationFailed",
            "Blocked",
            "InvalidResponse",
            "MissingCredentialError",
            "NetworkUnreachable",
            "NoResults",
            "ProviderConnectionError",
            "ProviderTimeoutError",
            "QuotaExhausted",
            "RateLimited",
            "RequestRejected",
            "SearchProviderError",
            "UpstreamUnavailable",
        ),
        _ERRORS,
    ),
}


def _load(door: str, lazy: Mapping[str, str], name: str) -> Any:
    """`name` of the door module `door`, imported from `websearch.<lazy[name]>` on first use
    and kept in the door's namespace (PEP 562: the doors share this one loader)."""
    module = lazy.get(name)
    if module is None:
        raise AttributeError(f"module {door!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    setattr(sys.modules[door], name, value)
    return value


def __getattr__(name: str) -> Any:
    home = _MOVED.get(name)
    if home is not None:  # not kept here: every use warns (the warnings filter shows each place once)
        warnings.warn(
            f"websearch.{name} moved to {home}.{name}; import it from there "
            f"(websearch.{name} goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home), name)
    return _load(__name__, _LAZY, name)
