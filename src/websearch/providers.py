"""The provider author's door: what a provider of your own is written against.

    from websearch import SearchSource, WebSearch
    from websearch.providers import HttpProvider, HttpRequest, ProviderInfo, ProviderResult

A provider plans a search, then parses the answer (README, "A provider of your own");
`WebSearch(providers=[...])` puts it in the chain. The response types it fills
(`SearchSource`, `SearchCitation`, ...) are the user's, in `websearch`; the errors it raises,
one class per kind of failure, are in `websearch.errors`.

- `Provider`: the base class: `plan(params, ctx)`, then `search` (or `HttpProvider`'s parse).
- `HttpProvider`: a provider of one HTTP request: `plan` builds it, `parse` reads the answer.
- `Plan`: what a provider will do for one search: the request, the limit and its notices.
- `ProviderContext`: what a provider reads and sends through: env, keys, clock, endpoints.
- `ProviderInfo`: a provider's registry row: id, label, the env names of its key, keyless.
- `ProviderId`: a provider's id (`"brave"`), a `str`.
- `ProviderResult`: what `parse` returns: answer, sources, citations, usage, notices.
- `ErrorEnvelope`: where a provider's API puts its error code and message in a body.
- `HttpRequest`, `HttpResponse`: one request and its answer, as the transport sees them (also
  what a `websearch.testing.MockTransport` handler takes and returns).
- `SendsRequests`: the transport's protocol (`WebSearch(transport=...)`).
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
    from ._clock import Clock, SystemClock
    from ._context import ProviderContext, SendsRequests
    from ._providers._base import HttpProvider, Plan, Provider
    from ._providers._errors import ErrorEnvelope
    from ._registry import PROVIDERS, SEARCH_PROVIDER_ORDER, ProviderId, ProviderInfo
    from ._types import ProviderResult
    from ._wire import HttpRequest, HttpResponse

__all__ = [
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
]

_LAZY = {  # name -> the module of websearch that defines it
    "Clock": "_clock",
    "SystemClock": "_clock",
    "ProviderContext": "_context",
    "SendsRequests": "_context",
    "HttpProvider": "_providers._base",
    "Plan": "_providers._base",
    "Provider": "_providers._base",
    "ErrorEnvelope": "_providers._errors",
    "PROVIDERS": "_registry",
    "SEARCH_PROVIDER_ORDER": "_registry",
    "ProviderId": "_registry",
    "ProviderInfo": "_registry",
    "ProviderResult": "_types",
    "HttpRequest": "_wire",
    "HttpResponse": "_wire",
}


def __getattr__(name: str) -> Any:
    return _load(__name__, _LAZY, name)
