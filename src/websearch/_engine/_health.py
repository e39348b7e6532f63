"""Provider health: cooldowns and a circuit breaker, decided by the error's class alone.

Recorded in the state store (`health:<id>`), so every process that shares it sees the same
view of which providers are down:

- `RateLimited`: skipped until its `Retry-After` (or the provider's reset header), else for a
  backoff of 60 s doubling up to 15 min;
- `QuotaExhausted`: skipped for an hour, or until the reset the provider names, for the
  credential that spent it (a quota is an account's: another key, or the key changed to one
  with credits, is asked at once);
- `AuthenticationFailed`: skipped until the credential changes (a fingerprint of it is kept,
  never the key). Refusals and spent quotas are kept per credential (`refused`, `spent`),
  beside the provider's own state: processes sharing a store with other keys neither clear a
  refused key's record by succeeding, nor lose a rate limit of the provider's when a key of
  theirs is refused or spent;
- `Blocked` (a challenge page): a backoff from 5 min doubling up to an hour;
- `UpstreamUnavailable`, timeouts and broken connections: after 5 in a row the circuit opens
  for 60 s, then one search (one process, through a short lease) probes it. A timeout counts
  only when the attempt had a fair time to answer in (`PATIENCE`: 5 s, 30 s for an answer
  engine): a search whose own deadline or request timeout cut it shorter (an agent allowing
  0.5 s) tells nothing about the provider, and must not open its circuit for every agent
  sharing the store.
  `NetworkUnreachable` (a name that does not resolve, no route, a proxy out of reach) is this
  machine's network, not the provider: it counts for nothing, or one offline machine would open
  every circuit for all the machines sharing the store.

A reader trusts a record's `until` (wall time) no further than the cooldown it stands for, from
its own clock: a record keeps its cooldown's length (`for`), and an `until` further away than
that (written by a process whose clock runs ahead: one an hour ahead turned a 30 s `Retry-After`
into an hour's cooldown for every process sharing the store) is brought back to now + `for` and
written so (once, not again at each read). A record of an earlier version, without `for`, is
held to the longest cooldown of its kind.

A success clears the provider's state (the refusals and spent quotas of other credentials
stay). Other failures (a rejected request, no results, a bad body) say nothing about the
provider's health and leave it alone.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from .._core._clock import wall_seconds
from .._core._skip import Skip
from ..errors import (
    AuthenticationFailed,
    Blocked,
    NetworkUnreachable,
    ProviderConnectionError,
    ProviderTimeoutError,
    QuotaExhausted,
    RateLimited,
    UpstreamUnavailable,
)

if TYPE_CHECKING:
    from .._core._clock import Clock
    from .._state import MemoryStore
    from .._state._store import Store

__all__ = ["CIRCUIT_AFTER", "PATIENCE", "Health", "Skip", "describe", "iso"]

PREFIX: Final = "health:"
CIRCUIT_AFTER: Final = 5  # failures in a row that open the circuit
CIRCUIT_OPEN: Final = 60.0  # seconds the circuit stays open before one probe
#: Seconds an attempt cut by its search's deadline must have had for the timeout to count, by
#: registry tier (an answer engine, an LLM reading the web, takes longer than a search API).
PATIENCE: Final = {"answer": 30.0, "search": 5.0, "keyless": 5.0}
_RATE: Final = (60.0, 900.0)  # first backoff, longest
_BLOCKED: Final = (300.0, 3600.0)
_QUOTA: Final = 3600.0
_AUTH_MEMORY: Final = 86400.0  # how long a refused credential is remembered
_KEEP: Final = 3600.0  # a record outlives its cooldown this long, to keep its backoff streak
_FLAKY: Final = (UpstreamUnavailable, ProviderTimeoutError, ProviderConnectionError)
_REASON_CHARS: Final = 300  # of the error's message kept in a record, to be shown with the skip
_REFUSALS: Final = 8  # refused credentials remembered per provider (the latest)
#: What a cooled-down provider did, by error kind, as a skipped attempt says it.
_WHAT: Final = {"rate_limited": "was rate limited", "quota": "ran out of quota", "blocked": "was blocked"}


def iso(when: float | None) -> str | None:
    """Wall time as ISO 8601 UTC, to the second."""
    if when is None:
        return None
    return datetime.fromtimestamp(when, UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class Health:
    """The health book of one client, on its state store and clock."""

    def __init__(self, store: Store, clock: Clock, *, direct: MemoryStore | None = None) -> None:
        self.store = store
        self.clock = clock
        #: `store` itself, or its primary, when it is in process: read there without awaiting.
        self.direct = direct
        self._owner = uuid.uuid4().hex

    def unrecorded(self, provider: str) -> bool:
        """Whether the in-process store holds no record of `provider` (known without awaiting):
        then `check` has nothing to say, and an attempt skips it. False when not known so."""
        return self.direct is not None and self.direct.read(PREFIX + provider) is None

    async def record(self, provider: str) -> dict[str, Any] | None:
        """The stored record of a provider, or None (healthy)."""
        raw = await self.store.get(PREFIX + provider)
        if raw is None:
            return None
        try:
            record = json.loads(raw)
        except ValueError:
            return None
        return record if isinstance(record, dict) else None

    async def check(
        self, provider: str, label: str, fingerprint: Callable[[], str], owner: str | None = None
    ) -> tuple[Skip | None, bool]:
        """(why to skip the provider now or None, whether state exists that a success clears).
        `owner` is the search asking (default: this book's own): when the circuit half-opens,
        the probe's lease is that search's, so one search probes, not every search of the
        process that shares this book."""
        record = await self.record(provider)
        if record is None:
            return None, False
        now = wall_seconds(self.clock)
        refused, spent = _refusals(record, now), _spent(record, now)
        fp = fingerprint() if refused or spent else None
        if fp in refused:
            message = f"{label} is skipped: its credential was refused; it is asked again once the key changes"
            return Skip("cooldown", "auth", None, message), True
        if fp in spent:
            until, said = spent[fp]
            message = f"{label} is skipped until {iso(until)}: it {_WHAT['quota']}" + (f": {said}" if said else "")
            return Skip("cooldown", "quota", float(until), message), True
        kind, until = record.get("kind"), record.get("until")
        if kind is None or kind == "auth":  # only other credentials' refusals or quotas: nothing to clear
            return None, False
        if isinstance(until, (int, float)) and until - now > (longest := _longest(record)):
            until = record["until"] = now + longest  # a writer's clock ran ahead: held to this one's
            await self.store.set(PREFIX + provider, json.dumps(record).encode(), _ttl(record, now))
        if isinstance(until, (int, float)) and now < until:
            reason = "circuit_open" if record.get("circuit") else "cooldown"
            what = "keeps failing" if reason == "circuit_open" else _WHAT.get(kind, f"failed ({kind})")
            said = record.get("reason")
            message = f"{label} is skipped until {iso(until)}: it {what}" + (f": {said}" if said else "")
            return Skip(reason, kind, float(until), message), True
        probe, who = f"{PREFIX}probe:{provider}", owner or self._owner
        if record.get("circuit") and not await self.store.try_lease(probe, who, 30.0):
            message = f"{label} is skipped: another search is probing it after its circuit opened"
            return Skip("circuit_open", kind, None, message), True
        return None, True

    async def failed(
        self,
        provider: str,
        error: BaseException,
        fingerprint: Callable[[], str],
        *,
        patience: float = 5.0,
        owner: str | None = None,
    ) -> None:
        """Record a failure; only the classes the module docstring names change anything, and
        a timeout only when the attempt had `patience` seconds or more (a search's deadline, or
        a request timeout the caller set, may have given it less)."""
        if isinstance(error, NetworkUnreachable) or (
            isinstance(error, ProviderTimeoutError) and error.given is not None and error.given < patience
        ):
            await self.store.release(f"{PREFIX}probe:{provider}", owner or self._owner)  # a probe cut short
            return
        record = await self.record(provider) or {}
        now = wall_seconds(self.clock)
        refused, spent = _refusals(record, now), _spent(record, now)
        streak = int(record.get("streak", 0)) if record.get("kind") == _kind(error) else 0
        hint = getattr(error, "retry_after", None)
        message = str(getattr(error, "message", "") or error)
        if len(message) > _REASON_CHARS:  # a record stays small; the cut is marked
            message = message[: _REASON_CHARS - 1] + "…"
        if isinstance(error, RateLimited):
            wait = hint if hint else min(_RATE[0] * 2**streak, _RATE[1])
            record = {"kind": error.kind, "until": now + wait, "for": wait, "streak": streak + 1, "reason": message}
        elif isinstance(error, (QuotaExhausted, AuthenticationFailed)):  # the provider's own state stays
            if isinstance(error, QuotaExhausted):
                spent = {**spent, fingerprint(): [now + (hint or _QUOTA), message]}
            else:
                refused = {**refused, fingerprint(): [now, message]}
            own = {} if record.get("kind") in ("auth", "quota") else record  # an earlier version's
            record = {k: v for k, v in own.items() if k not in ("refused", "spent", "fp")}
        elif isinstance(error, Blocked):
            wait = hint if hint else min(_BLOCKED[0] * 2**streak, _BLOCKED[1])
            record = {"kind": error.kind, "until": now + wait, "for": wait, "streak": streak + 1, "reason": message}
        elif isinstance(error, _FLAKY):
            fails = int(record.get("fails", 0)) + 1  # a failed probe reopens the circuit at once
            record = {"kind": getattr(error, "kind", "error"), "fails": fails, "reason": message}
            if fails >= CIRCUIT_AFTER:
                record |= {"circuit": True, "until": now + CIRCUIT_OPEN, "for": CIRCUIT_OPEN}
        else:
            return
        if refused:
            record["refused"] = dict(sorted(refused.items(), key=lambda item: item[1][0])[-_REFUSALS:])
        if spent:
            record["spent"] = dict(sorted(spent.items(), key=lambda item: item[1][0])[-_REFUSALS:])
        await self.store.set(PREFIX + provider, json.dumps(record).encode(), _ttl(record, now))
        if record.get("circuit"):
            await self.store.release(f"{PREFIX}probe:{provider}", owner or self._owner)

    async def succeeded(self, provider: str, owner: str | None = None) -> None:
        """A success clears the provider's state (called only when `check` said some exists);
        other credentials' refusals and spent quotas stay: this credential's success says
        nothing of theirs."""
        record = await self.record(provider)
        now = wall_seconds(self.clock)
        refused = _refusals(record, now) if record is not None else {}
        spent = _spent(record, now) if record is not None else {}
        if refused or spent:
            ends = [at + _AUTH_MEMORY for at, _ in refused.values()] + [until for until, _ in spent.values()]
            kept = {name: held for name, held in (("refused", refused), ("spent", spent)) if held}
            await self.store.set(PREFIX + provider, json.dumps(kept).encode(), max(max(ends) - now, 1.0))
        else:
            await self.store.delete(PREFIX + provider)
        await self.store.release(f"{PREFIX}probe:{provider}", owner or self._owner)

    async def reset(self, provider: str) -> None:
        """Forget everything about a provider (`websearch providers --reset ID`), refused
        credentials and spent quotas included."""
        await self.store.delete(PREFIX + provider)
        await self.store.delete(f"{PREFIX}probe:{provider}")  # whichever search held it


def describe(record: dict[str, Any], fingerprint: str | None = None, now: float | None = None) -> str | None:
    """A record as `websearch providers` shows it at wall time `now`, for the credential
    `fingerprint` names; None when nothing in it concerns that credential (only other keys
    were refused or ran out of quota)."""
    kind = record.get("kind")
    refused = fingerprint is not None and fingerprint in _refusals(record, now)
    spent = _spent(record, now).get(fingerprint) if fingerprint is not None else None
    notes = "; its key was refused" if refused else ""
    if kind is None or kind == "auth":  # nothing of the provider's own: this credential's, if any
        if spent is not None:
            return f"cooling down until {iso(spent[0])} (quota)" + notes
        return "skipped until its key changes (the credential was refused)" if refused else None
    if spent is not None:
        notes += f"; its key ran out of quota until {iso(spent[0])}"
    if record.get("circuit"):
        state = f"circuit open until {iso(record.get('until'))}"
    elif isinstance(until := record.get("until"), (int, float)):
        state = f"cooling down until {iso(until)} ({kind})"
    else:
        fails = record.get("fails", 0)
        state = f"{fails} failure{'s' * (fails != 1)} in a row ({kind})"
    return state + notes


def _refusals(record: dict[str, Any], now: float | None) -> dict[str, list[Any]]:
    """The credentials a record says were refused (fingerprint: [when, why]), those older than
    a day dropped when `now` is given. A record of an earlier version holds one, as `fp`."""
    refused = record.get("refused")
    if not isinstance(refused, dict):
        refused = {}
    if record.get("kind") == "auth" and isinstance(record.get("fp"), str):
        refused = {**refused, record["fp"]: [now or 0.0, str(record.get("reason", ""))]}
    return _by_credential(refused, lambda at: now is None or now - at < _AUTH_MEMORY)


def _spent(record: dict[str, Any], now: float | None) -> dict[str, list[Any]]:
    """The credentials a record says ran out of quota (fingerprint: [until, why]), those whose
    reset has come by `now` dropped (when it is given)."""
    return _by_credential(record.get("spent"), lambda until: now is None or now < until)


def _by_credential(entries: object, live: Callable[[float], bool]) -> dict[str, list[Any]]:
    """The well-formed `[time, why]` entries of a per-credential map whose time `live` keeps."""
    if not isinstance(entries, dict):
        return {}
    return {
        fp: entry
        for fp, entry in entries.items()
        if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], (int, float)) and live(entry[0])
    }


def _ttl(record: dict[str, Any], now: float) -> float:
    """How long a record is kept: past its cooldown by `_KEEP` (its backoff streak), and as long
    as a refused credential is remembered or a spent quota lasts."""
    until = record.get("until")
    ttl = (until - now if isinstance(until, (int, float)) else 0.0) + _KEEP if record else 0.0
    refused, spent = _by_credential(record.get("refused"), _any), _by_credential(record.get("spent"), _any)
    if refused:
        ttl = max(ttl, max(at for at, _ in refused.values()) + _AUTH_MEMORY - now)
    if spent:
        ttl = max(ttl, max(end for end, _ in spent.values()) - now)
    return max(ttl, 1.0)


def _any(_: float) -> bool:
    return True


def _longest(record: dict[str, Any]) -> float:
    """The longest a record's cooldown may last from now: its own length (`for`), else the
    longest of its kind."""
    span = record.get("for")
    if isinstance(span, (int, float)) and not isinstance(span, bool) and span > 0:
        return float(span)
    if record.get("circuit"):
        return CIRCUIT_OPEN
    return _BLOCKED[1] if record.get("kind") == "blocked" else _RATE[1]


def _kind(error: BaseException) -> str:
    return str(getattr(error, "kind", "error"))
