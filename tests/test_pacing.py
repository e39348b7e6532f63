"""Pacing (`_pacing.Pacer`) on a memory store and a frozen clock: a provider's requests spaced
by its rate, and a slot not waited for given back."""

from __future__ import annotations

from conftest import NOW, FakeClock
from websearch._core._budget import NO_DEADLINE, Budget
from websearch._engine._pacing import Pacer
from websearch._state import MemoryStore


async def test_a_provider_skipped_for_its_slot_gives_the_slot_back() -> None:
    # A search that may not wait for the slot does not keep it: kept, every skipped search
    # pushed the next slot one more interval out, so searches in a hurry starved the patient.
    clock = FakeClock()
    pacer = Pacer(MemoryStore(clock), clock, {"mojeek": 0.1})  # a slot every 10 s
    assert await pacer.wait("mojeek", "Mojeek", NO_DEADLINE) is None and clock.sleeps == []
    skips = [await pacer.wait("mojeek", "Mojeek", Budget.start(clock, 1.0)) for _ in range(3)]
    assert all(s is not None and s.reason == "paced" for s in skips)
    assert [s.until for s in skips if s is not None] == [NOW.timestamp() + 10.0] * 3
    assert await pacer.wait("mojeek", "Mojeek", NO_DEADLINE) is None
    assert clock.sleeps == [10.0]  # the slot after the first search's, not after the skipped ones'


async def test_an_unpaced_provider_never_waits() -> None:
    clock = FakeClock()
    pacer = Pacer(MemoryStore(clock), clock, {"mojeek": 0.1})
    assert [await pacer.wait("brave", "Brave", Budget.start(clock, 0.0)) for _ in range(3)] == [None] * 3
    assert clock.sleeps == []
