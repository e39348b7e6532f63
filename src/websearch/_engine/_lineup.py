"""The providers a client may use, in chain order, and which of them are available right now.

A `Lineup` is the registry's rows (the default) or a list the caller gives (`WebSearch(providers=
[...])`: built-in ids, or provider objects for engines of their own).

The automatic chain's order (`auto_ids`) is the lineup's, unless the settings give one:
`providers.webSearchOrder = ["brave", "exa"]` puts those first, in that order, and the
providers it does not name after them in the lineup's order, or leaves them out of the
automatic chain with `providers.webSearchOrderOnly = true` (they can still be chosen with
`provider=`). The upstream tool's facts at hand define no such setting, so these semantics are
this project's: an order names what comes first and leaves nothing out unless told. How it
composes with the other settings (`_chain.resolve_chain`): the preferred provider
(`providers.webSearch`) is tried first whether or not the order names it, then the order;
excluded providers (`providers.webSearchExclude`, `exclude=`) never; ids the order names that
the lineup does not hold (`providers.list` narrower than it) are passed over. The order applies
to the lineup the settings make (the registry's, or `providers.list`'s); a list given in code
(`WebSearch(providers=...)`, a search's `providers=`) keeps its own order. Availability is decided from
declarations alone (no provider module is imported) and computed once per client: the scan is
kept until the environment values it read, the settings or agent.db's stamp change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._core._environ import Environ
from .._core._registry import PROVIDERS, ProviderInfo, load_object
from .._core._settings import ENV_TWINS
from ..errors import ConfigError, InvalidSearchParams
from ._availability import is_available, is_explicitly_available, unavailable_reason

if TYPE_CHECKING:
    from .._core._context import ProviderContext
    from .._providers._base import Provider

__all__ = ["Lineup", "Scan", "load_provider"]

_loaded: dict[str, Provider] = {}


def load_provider(provider_id: str) -> Provider:
    """Import a built-in provider's module on first use and return its provider object (here,
    not in the registry: the registry is a leaf every module reads, and typing this needs
    `Provider`, whose module reads the registry)."""
    provider = _loaded.get(provider_id)
    if provider is None:
        provider = load_object(PROVIDERS[provider_id].module)
        _loaded[provider_id] = provider
    return provider


@dataclass(frozen=True, slots=True)
class Scan:
    """Which providers of a lineup the automatic chain may use, and which may run when chosen.

    `store_error` says why agent.db could not be read, when it could not; `left_out` are then the
    providers that stored credentials could have made available.
    """

    available: frozenset[str]
    explicit: frozenset[str]
    store_error: str | None = None
    left_out: tuple[str, ...] = ()


class Lineup:
    """An ordered set of providers: ids of built-in ones and provider objects of the caller's.

    `order` and `only` are the settings `providers.webSearchOrder` and `webSearchOrderOnly`:
    the automatic chain (`auto_ids`) takes the ids `order` names first, in its order, then the
    others in the lineup's order, or (`only`) not at all; `ids` stay every provider, in the
    lineup's order, any of which may still be chosen explicitly.
    """

    def __init__(
        self, providers: Iterable[str | Provider] | None = None, *, order: Sequence[str] = (), only: bool = False
    ) -> None:
        self._infos: dict[str, ProviderInfo] = {}
        self._objects: dict[str, Provider] = {}
        for item in PROVIDERS if providers is None else providers:
            if isinstance(item, str):
                if item not in PROVIDERS:
                    raise InvalidSearchParams(
                        "providers", f"unknown provider {item!r}; use one of: {', '.join(PROVIDERS)}"
                    )
                info = PROVIDERS[item]
            else:
                info = item.info
                self._objects[info.id] = item
            if info.id in self._infos:
                raise InvalidSearchParams("providers", f"provider {info.id!r} is listed twice")
            self._infos[info.id] = info
        names = {n for info in self._infos.values() for n in info.env_keys}
        names.update(ENV_TWINS[k] for info in self._infos.values() for k in info.settings_keys if k in ENV_TWINS)
        self._env_names = tuple(sorted(names))
        self._scan: tuple[Any, Scan] | None = None
        self._readable: tuple[object, Any] | None = None  # (credential store, its stamp) last read well
        self._ids = tuple(self._infos)
        first = tuple(dict.fromkeys(p for p in order if p in self._infos))
        rest = () if only else tuple(p for p in self._ids if p not in first)
        self._auto = (*first, *rest) if order or only else self._ids
        self._left_out = frozenset(self._ids) - frozenset(self._auto)

    @property
    def ids(self) -> tuple[str, ...]:
        """The provider ids, in chain order."""
        return self._ids

    @property
    def auto_ids(self) -> tuple[str, ...]:
        """The provider ids the automatic chain walks, in its order (`order`, then the rest
        unless `only`)."""
        return self._auto

    def left_out(self, provider_id: str) -> bool:
        """Whether `only` leaves this provider out of the automatic chain (it may still be chosen)."""
        return provider_id in self._left_out

    def __contains__(self, provider_id: object) -> bool:
        return provider_id in self._infos

    def info(self, provider_id: str) -> ProviderInfo:
        """The row of a provider in this lineup."""
        return self._infos[provider_id]

    def infos(self) -> Sequence[ProviderInfo]:
        """Every row, in chain order."""
        return tuple(self._infos.values())

    def load(self, provider_id: str) -> Provider:
        """The provider object (a built-in one is imported on first use)."""
        return self._objects.get(provider_id) or load_provider(provider_id)

    def narrowed(self, ids: Iterable[str]) -> Lineup:
        """A lineup of exactly `ids` (each one of this lineup's), in that order: its automatic
        chain is theirs too (a search's own list is not reordered by the settings)."""
        items: list[str | Provider] = []
        for provider_id in ids:
            if provider_id not in self._infos:
                raise InvalidSearchParams(
                    "providers", f"unknown provider {provider_id!r}; use one of: {', '.join(self._infos)}"
                )
            items.append(self._objects.get(provider_id, provider_id))
        return Lineup(items)

    def scan(self, ctx: ProviderContext) -> Scan:
        """Availability of every provider, recomputed only when what it was decided from changed."""
        env = ctx.env
        try:
            store: Any = ctx.credentials.stamp()
        except ConfigError as exc:
            store = exc
        values = env.stamp(self._env_names) if isinstance(env, Environ) else tuple(map(env.get, self._env_names))
        stamp = (values, store, id(ctx.settings), tuple(sorted(ctx.api_keys)))
        cached = self._scan
        if cached is not None and cached[0] == stamp:
            return cached[1]
        infos = self._infos.values()
        available = frozenset(i.id for i in infos if is_available(i, ctx))
        explicit = frozenset(i.id for i in infos if is_explicitly_available(i, ctx))
        error = _store_error(ctx) if not isinstance(store, ConfigError) else str(store)
        left_out = tuple(i.id for i in infos if error and i.credential_ids and i.id not in available)
        scan = Scan(available, explicit, error, left_out)
        self._scan = (stamp, scan)
        return scan

    def unreadable_store(self, ctx: ProviderContext) -> Scan | None:
        """The scan, when agent.db could not be read (its notice names what that leaves out);
        else None. Every search asks, so a store found readable is not asked again, nor the whole
        scan made, until its stamp changes; a store that does not exist is readable."""
        store = ctx.credentials
        try:
            stamp = store.stamp()
        except ConfigError:
            return self.scan(ctx)
        readable = self._readable
        if stamp is None or (readable is not None and readable[0] is store and readable[1] == stamp):
            return None
        scan = self.scan(ctx)
        if scan.store_error is None:
            self._readable = (store, stamp)
            return None
        return scan

    def may_run(self, provider_id: str, ctx: ProviderContext) -> bool:
        """May this provider run when chosen explicitly? (One row checked, not the whole scan.)"""
        return is_explicitly_available(self._infos[provider_id], ctx)

    def reason(self, provider_id: str, ctx: ProviderContext) -> str:
        """What would make a provider available (for `websearch providers` and notices)."""
        return unavailable_reason(self._infos[provider_id], ctx)


def _store_error(ctx: ProviderContext) -> str | None:
    """Why agent.db cannot be read, or None when it can (or does not exist)."""
    try:
        ctx.credentials.ids()
    except ConfigError as exc:
        return str(exc)
    return None
