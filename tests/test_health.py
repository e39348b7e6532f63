"""The health book's cooldowns (`_health.Health`), on a memory store and a frozen clock: how long
a provider is skipped after each kind of failure. The engine's use of it is in test_engine.py."""

from __future__ import annotations

from conftest import NOW, FakeClock
from websearch._engine._health import Health
from websearch._state import MemoryStore
from websearch.errors import Blocked


async def skipped_for(health: Health, clock: FakeClock) -> float:
    """Seconds from now until the book asks the provider again."""
    skip, _ = await health.check("bing", "Bing", lambda: "fp")
    assert skip is not None and skip.until is not None
    return skip.until - clock.now().timestamp()


async def test_a_blocked_providers_backoff_doubles_up_to_an_hour() -> None:
    # A challenge page comes back for a while: asking every 5 min kept hitting it.
    clock = FakeClock()
    health = Health(MemoryStore(clock), clock)
    waits = []
    for _ in range(6):
        await health.failed("bing", Blocked("bing", "a challenge page", 429), lambda: "fp")
        waits.append(await skipped_for(health, clock))
        await clock.sleep(waits[-1])  # asked again once the cooldown is over: blocked again
    assert waits == [300.0, 600.0, 1200.0, 2400.0, 3600.0, 3600.0]
    assert clock.now().timestamp() - NOW.timestamp() == sum(waits)


async def test_a_block_that_names_its_wait_is_skipped_for_that() -> None:
    clock = FakeClock()
    health = Health(MemoryStore(clock), clock)
    await health.failed("bing", Blocked("bing", "a challenge page", 429), lambda: "fp")
    await health.failed("bing", Blocked("bing", "a challenge page", 429, retry_after=90), lambda: "fp")
    assert await skipped_for(health, clock) == 90.0
