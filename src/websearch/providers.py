"""The provider author's door: what a provider of your own is written against.

    from websearch import SearchSource, WebSearch
    from websearch.providers import HttpProvider, HttpRequest, ProviderInfo, ProviderResult

A provider plans a search, then parses the answer (docs/providers.md, "A provider of your own");
`WebSearch(providers=[...])` puts it in the chain. The response types it fills
(`SearchSource`, `SearchCitation`, ...) are the user's, in `websearch`; the errors it raises,
one class per kind of failure, are in `websearch.errors`.

- `Provider`: the base of every provider: its `info` row, what it `supports`, its error
  `envelope`, `plan` and `search`.
- `HttpProvider`: a provider of one request and one complete response: `plan` builds the
  request, `parse` reads the answer (purely).
- `Plan`: what a provider decided for one search before anything is sent: the request, the
  notices of what it changed, the limit, the instant it was made.
- `ProviderContext`: the injected world of one search: env, settings, credentials, transport,
  clock, the attempt's `budget` (when the search must be over; `ctx.deadline` reads its end) and
  whether the provider was chosen `explicit`ly (`ctx.endpoint(...)` honours `WEBSEARCH_<ID>_BASE_URL`).
- `ProviderInfo`: what the chain knows of a provider before importing it: `id`, `label`, and
  `keyless=True` or the `env_keys` whose presence makes it available.
- `ProviderId`: a provider's id (`"brave"`), a `str`.
- `ProviderResult`: what `parse` returns (answer, sources, citations, usage, ...); the chain
  makes it a `SearchResponse`.
- `ErrorEnvelope`: where a provider's error body keeps its message and code, and what the codes
  mean (which error class each one raises).
- `HttpRequest`, `HttpResponse`: one request and its answer, as the transport sees them (also
  what a `websearch.testing.MockTransport` handler takes and returns).
- `SendsRequests`: the transport's protocol (`WebSearch(transport=...)`); `BaseTransport`, a base
  for a transport of your own with the protocol's defaults (not in-process, no timeout of its own).
- `Clock`, `SystemClock`: the time a provider reads (`ctx.clock`), and the real one.
- `PROVIDERS`, `SEARCH_PROVIDER_ORDER`: the built-in providers' rows by id, and the automatic
  chain's order. A user's view of providers is `WebSearch.provider_status()` instead (what is
  available here and why not), which is why these two left `websearch`.

Every name loads on first use: importing this module loads no provider and no HTTP stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _load

if TYPE_CHECKING:
    from ._core._clock import Clock, SystemClock
    from ._core._context import BaseTransport, ProviderContext, SendsRequests
    from ._core._registry import PROVIDERS, SEARCH_PROVIDER_ORDER, ProviderId, ProviderInfo
    from ._core._types import ProviderResult
    from ._core._wire import HttpRequest, HttpResponse
    from ._providers._base import HttpProvider, Plan, Provider
    from ._providers._errors import ErrorEnvelope

__all__ = [
    "PROVIDERS",
    "SEARCH_PROVIDER_ORDER",
    "BaseTransport",
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
]

_LAZY = {  # name -> the module of websearch that defines it
    "Clock": "_core._clock",
    "SystemClock": "_core._clock",
    "ProviderContext": "_core._context",
    "SendsRequests": "_core._context",
    "BaseTransport": "_core._context",
    "HttpProvider": "_providers._base",
    "Plan": "_providers._base",
    "Provider": "_providers._base",
    "ErrorEnvelope": "_providers._errors",
    "PROVIDERS": "_core._registry",
    "SEARCH_PROVIDER_ORDER": "_core._registry",
    "ProviderId": "_core._registry",
    "ProviderInfo": "_core._registry",
    "ProviderResult": "_core._types",
    "HttpRequest": "_core._wire",
    "HttpResponse": "_core._wire",
}


def __getattr__(name: str) -> Any:
    return _load(__name__, _LAZY, name)
