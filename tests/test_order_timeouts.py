"""The automatic chain's order (`providers.webSearchOrder`, `webSearchOrderOnly`) and each
attempt's own timeout (`providers.webSearchTimeoutSeconds`, `[timeout] <id>`), against the
loopback fakes of Brave, Exa and Tavily.

The lineup is the settings' (`WEBSEARCH_PROVIDERS`, the fakes' ids), as a user's would be: the
order applies to it. A stalled provider is a fake that never answers (`Reply(hang=True)`) under
a timeout of half a second and a search deadline of 30 s: the assertions are on who served and
the attempts' kinds and words, never on how long anything took.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock, key_env, run_cli
from websearch import SearchParams, WebSearch
from websearch._core._budget import NO_DEADLINE, Budget
from websearch._core._context import too_late
from websearch._core._settings import Settings
from websearch._engine._chain import attempt_timeout, out_of_time
from websearch._engine._lineup import Lineup
from websearch.errors import ConfigError, ConfigWarning
from websearch.providers import SEARCH_PROVIDER_ORDER
from websearch.testing import FakeBrave, FakeExa, FakeTavily, Reply

IDS = ("brave", "exa", "tavily")
#: A reply each of the three fakes turns into a failed attempt (kind `rejected`), none retried.
REFUSED = Reply(status=400, body={"error": "refused"})


class Fakes:
    """The three fakes, an environment that configures them, and the settings file."""

    def __init__(self, config_dir: Path, fakes: dict[str, Any]) -> None:
        self.config_dir = config_dir
        self.fakes = fakes
        self.env: dict[str, str] = {"WEBSEARCH_PROVIDERS": ",".join(IDS)}
        for provider_id, fake in fakes.items():
            self.env.update(key_env(provider_id, config_dir, f"{provider_id}-key-0123456789"))
            self.env.update(fake.env)

    def settings(self, text: str) -> None:
        (self.config_dir / "settings.toml").write_text(text)

    def refuse(self, *ids: str) -> None:
        for provider_id in ids:
            self.fakes[provider_id].enqueue(REFUSED)

    def client(self, **kw: Any) -> WebSearch:
        return WebSearch(env=self.env, engine=False, **kw)


@pytest.fixture
def fakes(config_dir: Path) -> Iterator[Fakes]:
    with FakeBrave() as brave, FakeExa() as exa, FakeTavily() as tavily:
        yield Fakes(config_dir, {"brave": brave, "exa": exa, "tavily": tavily})


async def tried(fakes: Fakes, **kw: Any) -> list[str]:
    """The providers a search tried, in order, when every one of them refuses."""
    fakes.refuse(*IDS)
    async with fakes.client() as ws:
        response = await ws.asearch("q", **kw)
    assert not response.ok
    return [a.provider for a in response.attempts]


async def test_without_an_order_the_chain_keeps_the_lineups(fakes: Fakes) -> None:
    assert await tried(fakes) == ["brave", "exa", "tavily"]  # `WEBSEARCH_PROVIDERS`' order


async def test_the_order_comes_first_and_the_unlisted_follow_in_the_lineups_order(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearchOrder = ["tavily"]\n')
    assert await tried(fakes) == ["tavily", "brave", "exa"]


def test_without_a_provider_list_the_unlisted_follow_in_the_registrys_order() -> None:
    lineup = Lineup(None, order=["duckduckgo", "brave"])
    rest = [p for p in SEARCH_PROVIDER_ORDER if p not in ("duckduckgo", "brave")]
    assert lineup.auto_ids == ("duckduckgo", "brave", *rest)
    assert lineup.ids == SEARCH_PROVIDER_ORDER  # every provider may still be chosen
    only = Lineup(None, order=["duckduckgo", "brave"], only=True)
    assert only.auto_ids == ("duckduckgo", "brave")
    assert only.left_out("exa") and not only.left_out("brave")


async def test_order_only_leaves_the_unlisted_out_of_the_automatic_chain(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearchOrder = ["brave", "tavily"]\nwebSearchOrderOnly = true\n')
    assert await tried(fakes) == ["brave", "tavily"]


async def test_a_provider_left_out_may_still_be_chosen(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearchOrder = ["brave"]\nwebSearchOrderOnly = true\n')
    async with fakes.client() as ws:
        response = await ws.asearch("q", provider="exa")
        rows = {row.id: row for row in ws.provider_status()}
    assert response.ok and response.provider == "exa"
    assert rows["exa"].left_out and rows["tavily"].left_out and not rows["brave"].left_out


async def test_the_order_serves_with_its_first_provider_that_answers(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearchOrder = ["tavily", "brave"]\n')
    fakes.refuse("tavily")
    async with fakes.client() as ws:
        response = await ws.asearch("q")
    assert response.provider == "brave"
    assert [(a.provider, a.error_kind) for a in response.attempts] == [("tavily", "rejected"), ("brave", None)]


async def test_the_preferred_provider_comes_before_the_order(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearch = "exa"\nwebSearchOrder = ["tavily", "brave"]\n')
    assert await tried(fakes) == ["exa", "tavily", "brave"]


async def test_the_preferred_provider_comes_first_even_when_only_leaves_it_out(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearch = "exa"\nwebSearchOrder = ["brave"]\nwebSearchOrderOnly = true\n')
    assert await tried(fakes) == ["exa", "brave"]


async def test_the_preference_named_in_the_order_is_tried_once(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearch = "tavily"\nwebSearchOrder = ["brave", "tavily"]\n')
    assert await tried(fakes) == ["tavily", "brave", "exa"]


async def test_auto_bypasses_the_preference_but_keeps_the_order(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearch = "exa"\nwebSearchOrder = ["tavily", "brave"]\n')
    assert await tried(fakes, provider="auto") == ["tavily", "brave", "exa"]


async def test_excluded_providers_never_appear_whatever_the_order(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearchOrder = ["tavily", "brave"]\nwebSearchExclude = ["tavily"]\n')
    assert await tried(fakes) == ["brave", "exa"]
    assert await tried(fakes, exclude=["brave"]) == ["exa"]


async def test_a_searchs_own_list_keeps_its_order(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearchOrder = ["brave", "tavily"]\nwebSearchOrderOnly = true\n')
    assert await tried(fakes, providers=["exa", "tavily", "brave"]) == ["exa", "tavily", "brave"]


async def test_a_list_given_in_code_keeps_its_order(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearchOrder = ["brave"]\nwebSearchOrderOnly = true\n')
    fakes.refuse(*IDS)
    async with WebSearch(env=fakes.env, engine=False, providers=["tavily", "exa", "brave"]) as ws:
        response = await ws.asearch("q")
    assert [a.provider for a in response.attempts] == ["tavily", "exa", "brave"]


async def test_the_order_ranks_within_the_provider_list(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearchOrder = ["brave", "perplexity", "exa"]\n')
    fakes.env["WEBSEARCH_PROVIDERS"] = "exa,brave"  # perplexity is not in the lineup: passed over
    assert await tried(fakes) == ["brave", "exa"]


def test_the_order_names_known_providers(config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text('[providers]\nwebSearchOrder = ["brave", "bravo"]\n')
    with pytest.raises(ConfigError, match=r"setting providers\.webSearchOrder names unknown providers: bravo"):
        Settings.load(config_dir, {})
    (config_dir / "settings.toml").write_text('[providers]\nwebSearchOrder = "brave"\n')
    with pytest.raises(ConfigError, match="must be a list of provider ids"):
        Settings.load(config_dir, {})
    (config_dir / "settings.toml").write_text('[providers]\nwebSearchOrderOnly = "yes"\n')
    with pytest.raises(ConfigError, match="webSearchOrderOnly must be true or false"):
        Settings.load(config_dir, {})


def test_the_order_is_read_once_without_repeats() -> None:
    settings = Settings({"providers.webSearchOrder": ["brave", "exa", "brave"]}, {})
    assert settings.search_order == ("brave", "exa")
    assert settings.search_order_only is False
    assert Settings({}, {}).search_order == ()


# -- each attempt's own timeout -------------------------------------------------------------------


async def test_a_providers_own_timeout_ends_its_attempt_and_the_next_serves(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearchOrder = ["brave", "exa"]\n\n[timeout]\nbrave = 0.5\n')
    fakes.fakes["brave"].enqueue(Reply(hang=True))
    async with fakes.client() as ws:
        response = await ws.asearch("q", deadline=30)
    assert response.ok and response.provider == "exa"
    first = response.attempts[0]
    assert (first.provider, first.error_kind) == ("brave", "timeout")
    assert first.error == out_of_time("Brave", 0.5, "setting timeout.brave")


async def test_the_timeout_of_every_provider_ends_a_stalled_attempt(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearchOrder = ["tavily", "brave"]\nwebSearchTimeoutSeconds = 0.5\n')
    fakes.fakes["tavily"].enqueue(Reply(hang=True))
    async with fakes.client() as ws:
        response = await ws.asearch("q", deadline=30)
    assert response.provider == "brave"
    first = response.attempts[0]
    assert (first.provider, first.error_kind) == ("tavily", "timeout")
    assert first.error == out_of_time("Tavily", 0.5, "setting providers.webSearchTimeoutSeconds")


async def test_a_providers_timeout_wins_over_the_general_one(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearchOrder = ["exa"]\nwebSearchTimeoutSeconds = 200\n[timeout]\nexa = 0.5\n')
    fakes.fakes["exa"].enqueue(Reply(hang=True))
    async with fakes.client() as ws:
        response = await ws.asearch("q", deadline=30)
    assert response.provider == "brave"  # the next in the lineup's order
    assert response.attempts[0].error == out_of_time("Exa", 0.5, "setting timeout.exa")


async def test_the_searchs_deadline_ends_an_attempt_first_when_it_comes_first(fakes: Fakes) -> None:
    fakes.settings('[providers]\nwebSearchOrder = ["brave"]\nwebSearchOrderOnly = true\n[timeout]\nbrave = 300\n')
    fakes.fakes["brave"].enqueue(Reply(hang=True))
    async with fakes.client() as ws:
        response = await ws.asearch("q", deadline=1)
    attempt = response.attempts[0]
    assert (attempt.provider, attempt.error_kind, attempt.error) == ("brave", "timeout", too_late("Brave"))


async def test_a_fanouts_attempts_keep_their_own_timeout(fakes: Fakes) -> None:
    fakes.settings("[timeout]\nbrave = 0.5\n")
    fakes.fakes["brave"].enqueue(Reply(hang=True))
    async with fakes.client() as ws:
        response = await ws.asearch("q", fanout=["brave", "exa"], deadline=30)
    assert response.ok
    by_id = {a.provider: a for a in response.attempts}
    assert by_id["brave"].error_kind == "timeout"  # its own timeout, not the soft deadline's cancel
    assert by_id["brave"].error == out_of_time("Brave", 0.5, "setting timeout.brave")
    assert by_id["exa"].error is None


def test_attempt_timeouts_default_to_60_seconds_but_deep_modes(config_dir: Path) -> None:
    from conftest import provider_context

    ctx = provider_context(config_dir, {})
    assert attempt_timeout(ctx, "brave", SearchParams("q")) == (
        60.0,
        "the default of providers.webSearchTimeoutSeconds",
    )
    assert attempt_timeout(ctx, "exa", SearchParams("q", mode="deep")) is None  # the deep deadline bounds it
    (config_dir / "settings.toml").write_text("[providers]\nwebSearchTimeoutSeconds = 90\n")
    ctx = provider_context(config_dir, {})
    assert attempt_timeout(ctx, "exa", SearchParams("q", mode="deep")) == (
        90.0,
        "setting providers.webSearchTimeoutSeconds",
    )


def test_a_timeout_above_300_seconds_is_cut_to_300_with_a_warning(config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text("[providers]\nwebSearchTimeoutSeconds = 1000\n[timeout]\ngemini = 301\n")
    with pytest.warns(ConfigWarning) as caught:
        settings = Settings.load(config_dir, {})
    words = sorted(str(w.message) for w in caught)
    assert words == [
        "setting providers.webSearchTimeoutSeconds is 1000; an attempt may take at most 300 s, so it is 300",
        "setting timeout.gemini is 301; an attempt may take at most 300 s, so it is 300",
    ]
    assert settings.attempt_timeout("gemini") == (300.0, "setting timeout.gemini")
    assert settings.attempt_timeout("brave") == (300.0, "setting providers.webSearchTimeoutSeconds")


def test_timeouts_must_be_positive_numbers_and_may_name_a_callers_own_provider(config_dir: Path) -> None:
    for text in (
        "[timeout]\nbrave = 0\n",
        '[timeout]\nbrave = "slow"\n',
        "[providers]\nwebSearchTimeoutSeconds = -1\n",
    ):
        (config_dir / "settings.toml").write_text(text)
        with pytest.raises(ConfigError, match="must be a positive number"):
            Settings.load(config_dir, {})
    (config_dir / "settings.toml").write_text("[timeout]\nmy_engine = 5\nbrave = 300\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither unknown nor clamped
        settings = Settings.load(config_dir, {})
    assert settings.attempt_timeout("my_engine") == (5.0, "setting timeout.my_engine")


def test_timeouts_do_not_change_the_cache_key() -> None:
    plain = Settings({"providers.webSearchOrder": ["brave"]}, {})
    timed = Settings({"providers.webSearchOrder": ["brave"], "providers.webSearchTimeoutSeconds": 5}, {})
    assert plain.answer_print() == Settings({**timed._values, "timeout.brave": 9}, {}).answer_print()
    assert plain.answer_print() != Settings({"providers.webSearchOrder": ["exa"]}, {}).answer_print()


def test_a_budget_capped_ends_at_the_earlier_of_the_two() -> None:
    clock = FakeClock()
    search = Budget.start(clock, 30)
    assert search.capped(clock, 60) is search  # the search's deadline comes first
    capped = search.with_soft_end(clock.monotonic() + 5).capped(clock, 0.5)
    assert capped.ends == clock.monotonic() + 0.5 and capped.soft_ends == clock.monotonic() + 5
    unbounded = NO_DEADLINE.capped(clock, 2)
    assert unbounded.clock is clock and unbounded.remaining() == 2


# -- the command line ------------------------------------------------------------------------------


def test_websearch_providers_lists_the_chain_in_its_order_with_each_timeout(fakes: Fakes) -> None:
    fakes.settings(
        '[providers]\nwebSearchOrder = ["brave", "tavily"]\nwebSearchOrderOnly = true\n[timeout]\nbrave = 5\n'
    )
    rows = json.loads(run_cli(["providers", "--format", "json"], fakes.env).stdout)
    assert [(r["id"], r["left_out"], r["timeout"]) for r in rows] == [
        ("brave", False, 5.0),
        ("tavily", False, 60.0),
        ("exa", True, 60.0),
        ("public", False, None),
    ]
    text = run_cli(["providers"], fakes.env).stdout.splitlines()
    assert text[0].startswith(" 1. brave") and text[1].startswith(" 2. tavily")
    assert text[2].startswith("    exa") and text[2].endswith("[not in webSearchOrder]")
