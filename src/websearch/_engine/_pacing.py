"""Pacing: per-provider request rates, as token buckets in the state store.

`[pacing] brave = "1/s"` (or `"30/min"`, `"100/h"`) spaces a provider's requests across every
process sharing the store; Exa's `exa.searchDelayMs`, when set, is its pacing, and the keyless
scrapers get the polite defaults their registry rows declare (`pace`). A keyed API gets no
default: its limit is its plan's, which the key's owner knows (Exa's documented default of one
request a second held `websearch serve`'s first minute behind it, p99 3-4 s). A provider that
reports the key's plan in its answers (`plan_pace`: Brave's `X-RateLimit-Limit`, 1/s on the
free plan) is paced at that rate once it has answered: the rate goes into the store, so every
process sharing it paces the key alike, and is replaced when an answer reports another (the key
was upgraded). A `[pacing]` entry for the provider, "off" included, wins. Each bucket holds one
token, so requests are spaced evenly.

A search waits for its provider's next slot, never in a queue behind other searches: a wait
longer than one interval (others took the slots before it) or past the search's deadline skips
the provider at once (the attempt is recorded as paced), its slot given back, and the walk moves
on. Queued searches waited their deadline away, and those past a fan-out's soft deadline were
cancelled having asked nobody. Identical searches in flight share one walk, so they wait once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Final

from .._core._checks import parse_rate
from .._core._skip import Skip

if TYPE_CHECKING:
    from .._core._budget import Budget
    from .._core._clock import Clock
    from .._core._settings import Settings
    from .._state._store import Store

__all__ = ["Pacer", "default_rates", "learners", "rates_from"]

PREFIX: Final = "pace:"
#: Where a provider's reported plan rate is kept, and for how long after it last changed.
PLAN: Final = "plan-pace:"
PLAN_TTL: Final = 86400.0
#: A wait longer than one interval and this many seconds is a queue (the bucket's debt is other
#: searches'). Absolute: the stores count in microseconds of wall time (datetimes, Redis TIME),
#: which at 50/s (Brave's paid plan) put a search that had waited its slot 1e-6 s "behind" others.
_SLACK: Final = 1e-3


def default_rates() -> dict[str, float]:
    """The registry's polite defaults (requests per second), by provider id."""
    from .._core._registry import PROVIDERS

    return {info.id: info.pace for info in PROVIDERS.values() if info.pace}


def rates_from(settings: Settings) -> dict[str, float]:
    """Every provider's rate: the defaults, Exa's delay (when set), then the `[pacing]` table."""
    rates = default_rates()
    delay = settings.get("exa.searchDelayMs")  # unset: no pace (the upstream tool's 1000 ms default is not Exa's limit)
    if isinstance(delay, (int, float)) and not isinstance(delay, bool) and delay > 0:
        rates["exa"] = 1000.0 / float(delay)
    table = {key.removeprefix("pacing."): value for key, value in settings.items("pacing.").items()}
    for provider, value in table.items():
        if value in (0, "0", "off", None):
            rates.pop(provider, None)
        else:
            rates[provider] = parse_rate(value)
    return rates


def learners(settings: Settings) -> frozenset[str]:
    """The providers paced at the plan rate their answers report: those whose registry row says
    they report one, less those the `[pacing]` table names (a rate or "off")."""
    from .._core._registry import PROVIDERS

    named = {key.removeprefix("pacing.") for key in settings.items("pacing.")}
    return frozenset(info.id for info in PROVIDERS.values() if info.plan_pace and info.id not in named)


class Pacer:
    """Waits for a provider's next slot, or says it would take too long."""

    def __init__(
        self, store: Store, clock: Clock, rates: Mapping[str, float], learns: Collection[str] = frozenset()
    ) -> None:
        self.store = store
        self.clock = clock
        self.rates = dict(rates)
        #: Providers paced at the rate their answers report (none set by the settings).
        self.learns = frozenset(learns) - self.rates.keys()
        self._known: dict[str, float | None] = {}  # the reported rates this process last read or wrote

    def paces(self, provider: str) -> bool:
        """Whether the provider may be paced (its rate set, or to be read from the store)."""
        return provider in self.rates or provider in self.learns

    async def rate(self, provider: str) -> float | None:
        """The provider's requests per second: the settings', else the reported one in the store."""
        rate = self.rates.get(provider)
        if rate is None and provider in self.learns:
            rate = _as_rate(await self.store.get(PLAN + provider))
            self._known[provider] = rate
        return rate

    async def learn(self, provider: str, rate: float) -> None:
        """Note the plan rate an answer reported: written to the store when it differs from what
        this process last saw there, and the request that brought it charged to the bucket (the
        first answer's request took no slot, and the next may not follow it at once)."""
        if provider in self.learns and self._known.get(provider) != rate:
            self._known[provider] = rate
            await self.store.set(PLAN + provider, repr(rate).encode(), PLAN_TTL)
            await self.store.take(PREFIX + provider, rate, 1.0)

    async def wait(self, provider: str, label: str, budget: Budget) -> Skip | None:
        """Take the provider's next slot, sleeping until it comes; a Skip instead when that is
        further than one interval away (other searches are queued for the slots before it) or
        after the search's `budget` ends (its slot is given back)."""
        rate = await self.rate(provider)
        if rate is None:
            return None
        wait = await self.store.take(PREFIX + provider, rate, 1.0)
        if wait <= 0:
            return None
        remaining = budget.remaining()
        late = remaining is not None and wait > remaining
        if late or wait > 1.0 / rate + _SLACK:
            await self.store.untake(PREFIX + provider, rate, 1.0)
            until = self.clock.now().timestamp() + wait
            why = "after the search's deadline" if late else "taken by other searches queued before this one"
            message = f"{label} is skipped: its next request slot ({rate:g}/s) is {why}"
            return Skip("paced", "paced", until, message)
        try:
            await self.clock.sleep(wait)
        except asyncio.CancelledError:  # a cancelled search gives its slot back
            await asyncio.shield(self.store.untake(PREFIX + provider, rate, 1.0))
            raise
        return None


def _as_rate(value: bytes | None) -> float | None:
    """A stored plan rate, or None (absent, or not a positive finite number)."""
    try:
        rate = float(value) if value is not None else 0.0
    except ValueError:
        return None
    return rate if 0 < rate < float("inf") else None
