"""`Skip`: why a provider is not asked now (a cooldown, an open circuit, its pace).

A leaf: both `_health` (cooldowns, the circuit) and `_pacing` (request slots) answer with one,
and the chain shows it; neither needs the other to say so.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Skip"]


@dataclass(frozen=True, slots=True)
class Skip:
    """Why a provider is not asked now: `reason` ("cooldown", "circuit_open", "paced"), the
    error kind behind it, until when (wall time; None: until the credential changes), and the
    sentence an attempt shows."""

    reason: str
    kind: str
    until: float | None
    message: str
