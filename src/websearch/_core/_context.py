"""What a provider may use: environment, settings, credentials, transport and clock.

Providers receive everything through a `ProviderContext`; none of them reads `os.environ`,
builds an HTTP client or calls `time.time()` itself.
"""

from __future__ import annotations

import asyncio
import functools
import math
from collections.abc import AsyncIterator, Awaitable, Coroutine, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from urllib.parse import urlsplit, urlunsplit

from ..errors import ProviderTimeoutError
from ._budget import NO_DEADLINE, Budget
from ._checks import check_http_url
from ._clock import Clock
from ._credentials import CredentialStore
from ._settings import Settings
from ._types import SearchParams
from ._wire import HttpRequest, HttpResponse

if TYPE_CHECKING:
    from ._filters import Filters
    from ._notices import Notice

__all__ = [
    "BaseTransport",
    "ClosedUnder",
    "DeadlineReached",
    "ProviderContext",
    "Sends",
    "SendsRequests",
    "base_url_env",
    "complete",
    "env_url",
    "too_late",
]


class Sends(Protocol):
    """What a transport must have: `WebSearch(transport=...)` takes any object with these three
    (`SendsRequests` says what they do, and what else the client reads)."""

    async def send(self, provider: str, request: HttpRequest) -> HttpResponse: ...

    def stream(
        self, provider: str, request: HttpRequest
    ) -> AbstractAsyncContextManager[tuple[HttpResponse, AsyncIterator[bytes]]]: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class SendsRequests(Sends, Protocol):
    """The transport seam: the aiohttp transport, `websearch.testing.MockTransport`, or yours.

    `send` reads a whole response; `stream` yields the head and the body's lines and closes the
    connection when the block is left. Both honour `request.timeout` (else `timeout`) and raise
    only `SearchProviderError`s (timeouts and broken connections included); `provider` is the id
    the request is for, for error messages. `aclose` releases pooled connections.

    The client reads the rest, and nothing else. A transport given to `WebSearch` that lacks
    any of it gets the defaults of `BaseTransport` for all of it (subclass that to change one).
    """

    @property
    def timeout(self) -> float | None:
        """Seconds a request without a timeout of its own may take (None: no bound of its own)."""
        ...

    @property
    def bounds_each_request(self) -> bool:
        """True when the transport itself ends each request within its timeout (with a
        `ProviderTimeoutError`): a search made only of requests then keeps its deadline without
        a timer of the chain's (each request is cut to what remains of it)."""
        ...

    @property
    def in_process(self) -> bool:
        """True when it reaches no real provider: a client on it with no store of its own keeps
        its state (cache, cooldowns, pacing) in memory."""
        ...

    async def ready(self, within: float | None) -> None:
        """Return when the transport can send at once (`within` seconds at most); raise nothing.
        The built-in one of a fresh process is loading aiohttp: the engine waits for it before
        it takes a pacing slot, which is a time to send at."""
        ...


class BaseTransport:
    """A transport of your own (`WebSearch(transport=...)`): subclass this, write `send`,
    `stream` and `aclose`, and set what differs from the defaults of `SendsRequests` here
    (no timeout of its own, no request bounded by itself, real providers reached, always ready)."""

    timeout: float | None = None
    bounds_each_request: bool = False
    in_process: bool = False

    async def ready(self, within: float | None) -> None:
        """Ready at once."""

    async def send(self, provider: str, request: HttpRequest) -> HttpResponse:
        raise NotImplementedError

    def stream(
        self, provider: str, request: HttpRequest
    ) -> AbstractAsyncContextManager[tuple[HttpResponse, AsyncIterator[bytes]]]:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Nothing to release."""


class _Bare(BaseTransport):
    """A caller's transport that is no `BaseTransport`, with the defaults of one: what it does
    not declare is read nowhere (it once was probed at each use, and silently went without)."""

    def __init__(self, inner: Sends) -> None:
        self._inner = inner

    def send(self, provider: str, request: HttpRequest) -> Coroutine[Any, Any, HttpResponse]:
        return self._inner.send(provider, request)

    def stream(
        self, provider: str, request: HttpRequest
    ) -> AbstractAsyncContextManager[tuple[HttpResponse, AsyncIterator[bytes]]]:
        return self._inner.stream(provider, request)

    def aclose(self) -> Coroutine[Any, Any, None]:
        return self._inner.aclose()

    def __repr__(self) -> str:
        return repr(self._inner)


def complete(transport: Sends) -> SendsRequests:
    """`transport` as the client uses it, checked once when the client is made: one with all
    of `SendsRequests` (a `BaseTransport`, the built-in ones) as it is, any other one with
    the defaults of `BaseTransport`."""
    return transport if isinstance(transport, SendsRequests) else _Bare(transport)


@functools.cache
def base_url_env(provider_id: str) -> str:
    """The variable that redirects every endpoint of a provider: `WEBSEARCH_<ID>_BASE_URL`."""
    return f"WEBSEARCH_{provider_id.upper()}_BASE_URL"


def env_url(env: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    """The first of the variables `names` set to more than blanks, trimmed; ConfigError naming it
    when it is no http(s) URL with a host."""
    for name in names:
        value = (env.get(name) or "").strip()
        if value:
            check_http_url(name, value)
            return value
    return None


@functools.lru_cache(maxsize=256)
def _redirect(base_url: str, url: str, name: str) -> str:
    """`url` moved onto `base_url`, set in the variable `name` (pure and asked on every search,
    so cached: the URL is checked once)."""
    check_http_url(name, base_url)
    base = urlsplit(base_url)
    real = urlsplit(url)
    return urlunsplit((base.scheme, base.netloc, base.path + real.path, real.query, real.fragment))


@dataclass(slots=True)
class ProviderContext:
    """The injected world of one search. `api_keys` are explicit keys passed by the caller."""

    env: Mapping[str, str] = field(repr=False)  # holds every key of the environment
    settings: Settings
    credentials: CredentialStore
    transport: SendsRequests | None  # None for availability checks, which never send
    clock: Clock
    api_keys: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: True in an attempt at a provider chosen explicitly (`provider=`, the preference, a fan-out).
    explicit: bool = False
    #: The time of the search this context's attempt belongs to (`Budget.ends`: when it must be
    #: over; `soft_ends`: when a fan-out's pages stop). The walk gives each attempt its own
    #: context (`for_attempt`); nothing assigns a budget onto a shared one.
    budget: Budget = NO_DEADLINE
    #: The client's per-request timeout (None: the setting `http.timeout`), for a provider whose
    #: own budget is reckoned from it (a turn of several requests, a slow mode's longer one).
    timeout: float | None = None
    #: The richer parameters normalised once per search, shared by its attempts' contexts.
    _filters: list[tuple[SearchParams, Filters, list[Notice]]] = field(default_factory=list, repr=False)

    @property
    def deadline(self) -> float | None:
        """When the search must be over, on `clock.monotonic()` (None: no deadline)."""
        return self.budget.ends

    def for_attempt(self, budget: Budget, *, explicit: bool) -> ProviderContext:
        """This search's context for one attempt: the same world, with the attempt's budget and
        whether its provider was chosen explicitly (a new value; this one is not changed)."""
        return ProviderContext(
            self.env,
            self.settings,
            self.credentials,
            self.transport,
            self.clock,
            self.api_keys,
            explicit,
            budget,
            self.timeout,
            self._filters,
        )

    def filters(self, params: SearchParams) -> Filters:
        """The normalised richer parameters and query operators (`websearch._core._filters`),
        computed once per search."""
        if not params.rich and ":" not in params.query:  # `_operators.may_have_operators`, inlined
            return _no_filters()
        return self._resolve(params)[1]

    def filter_notices(self, params: SearchParams) -> list[Notice]:
        """What normalising the richer parameters and the query's operators changed or dropped."""
        return list(self._resolve(params)[2]) if params.rich or ":" in params.query else []

    def _resolve(self, params: SearchParams) -> tuple[SearchParams, Filters, list[Notice]]:
        """One slot: a context serves one search, so it sees one `SearchParams`."""
        slot = self._filters
        if not slot or slot[0][0] is not params:
            from ._filters import resolve_filters

            slot[:] = [(params, *resolve_filters(params, self.clock.now()))]
        return slot[0]

    def endpoint(self, provider_id: str, url: str) -> str:
        """`url` with scheme, host and port replaced by `WEBSEARCH_<ID>_BASE_URL` when set.

        The real path is kept; a path in the override is put in front of it (for gateways).
        """
        name = base_url_env(provider_id)
        override = self.env.get(name)
        return _redirect(override.strip().rstrip("/"), url, name) if override else url

    def secret(
        self, provider_id: str, env_keys: tuple[str, ...] = (), credential_ids: tuple[str, ...] = ()
    ) -> str | None:
        """Resolve a key in the one documented order: explicit argument, environment, agent.db."""
        explicit = self.api_keys.get(provider_id)
        if explicit:
            return explicit
        for name in env_keys:
            value = self.env.get(name)
            if value:
                return value
        for cred_id in credential_ids or (provider_id,):
            if cred_id in self.credentials.ids():
                cred = self.credentials.get(cred_id)
                if cred is not None and cred.api_key:
                    return cred.api_key
        return None

    def send(self, provider_id: str, request: HttpRequest) -> Awaitable[HttpResponse]:
        """Send a request and read the whole response (the transport's own coroutine).

        A request whose timeout (its own, else the transport's) would outlast the search's
        `deadline` is cut to what remains of it, whatever the transport, and raises
        `DeadlineReached` when that runs out. Over a transport that bounds each request
        (`bounds_each_request`), a search made only of requests then keeps its deadline without
        a timer of its own (a timer costs about 10 us a search)."""
        transport = self._transport()
        ends = self.budget.ends
        if ends is None:
            return transport.send(provider_id, request)
        remaining = ends - self.clock.monotonic()
        own = request.timeout if request.timeout is not None else transport.timeout
        if own is not None and own <= remaining:
            return transport.send(provider_id, request)
        # Down to a whole millisecond: never past the deadline, and the transport makes one
        # timer setting per value, which the searches that follow ask for again.
        cut = max(math.floor(remaining * 1000) / 1000, 0.001)
        return _cut(transport.send(provider_id, request.with_timeout(cut)), cut)

    def stream(
        self, provider_id: str, request: HttpRequest
    ) -> AbstractAsyncContextManager[tuple[HttpResponse, AsyncIterator[bytes]]]:
        """Open a streamed response: `async with ctx.stream(id, req) as (head, lines): ...`.

        Leaving the block (normally, on error or on cancellation) closes the connection.
        """
        return self._transport().stream(provider_id, request)

    def _transport(self) -> SendsRequests:
        if self.transport is None:
            raise RuntimeError("this ProviderContext has no transport")
        return self.transport


class ClosedUnder(asyncio.CancelledError):
    """A request whose session the client closed under it (`close` with searches in flight):
    its search ends cancelled, blaming no provider, and so do the searches sharing its flight."""


class DeadlineReached(ProviderTimeoutError):
    """An attempt (or one of its requests) cut to what remained of the search's deadline ran
    out of it (`given`: the seconds the attempt had, when known)."""


def too_late(label: str) -> str:
    """What a provider that ran out of the search's deadline is said to have done."""
    return f"{label} did not answer before the search's deadline"


async def _cut(sending: Awaitable[HttpResponse], seconds: float) -> HttpResponse:
    """A request cut to the `seconds` left of its search's deadline: running out of them (a
    timeout error giving them) is reaching the deadline. Another timeout (a handler's own, a
    transport's that does not say what it was given) is the provider's, as without the cut."""
    try:
        return await sending
    except ProviderTimeoutError as exc:
        if exc.given != seconds:
            raise
        from ._registry import PROVIDERS

        info = PROVIDERS.get(exc.provider)
        raise DeadlineReached(exc.provider, too_late(info.label if info else exc.provider), exc.status) from None


_NO_FILTERS: list[Filters] = []


def _no_filters() -> Filters:
    """The shared empty `Filters` of a call without richer parameters."""
    if not _NO_FILTERS:
        from ._filters import Filters

        _NO_FILTERS.append(Filters())
    return _NO_FILTERS[0]
