"""Fan-out over any providers, and `public` over the keyless engines: the parallel walk, the soft
deadline, partial success, fusion, answers, caching, and the library/CLI/MCP faces."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import TAVILY_KEY, FakeClock, make_client, messages, run_cli
from websearch import WebSearch, render
from websearch._state import MemoryStore
from websearch.errors import InvalidSearchParams
from websearch.testing import FakeBrave, FakeDuckDuckGo, FakeTavily, Reply
from websearch.testing.brave import brave_results_body, rate_limited_reply

BRAVE_KEY = "BSA-fanout-secret-0b9d4e"


@pytest.fixture
def brave() -> Iterator[FakeBrave]:
    with FakeBrave() as fake:
        yield fake


@pytest.fixture
def tavily() -> Iterator[FakeTavily]:
    with FakeTavily() as fake:
        yield fake


@pytest.fixture
def fenv(config_dir: Path, brave: FakeBrave, tavily: FakeTavily, ddg: FakeDuckDuckGo) -> dict[str, str]:
    return {
        "WEBSEARCH_CONFIG_DIR": str(config_dir),
        "BRAVE_API_KEY": BRAVE_KEY,
        "TAVILY_API_KEY": TAVILY_KEY,
        **brave.env,
        **tavily.env,
        **ddg.env,
    }


def settings(config_dir: Path, text: str) -> None:
    (config_dir / "settings.toml").write_text(text, encoding="utf-8")


def engine_client(env: dict[str, str], clock: FakeClock | None = None, **kw: Any) -> WebSearch:
    clock = clock or FakeClock()
    return make_client(env=env, clock=clock, engine=True, store=MemoryStore(clock), **kw)


async def test_a_fanout_asks_every_provider_and_fuses_their_results(fenv: dict[str, str]) -> None:
    async with make_client(env=fenv) as ws:
        response = await ws.asearch("rust async book", fanout=["brave", "tavily", "duckduckgo"], limit=8)
    assert response.ok and response.provider == "fanout"
    assert [a.provider for a in response.attempts] == ["brave", "tavily", "duckduckgo"]
    assert all(a.error is None for a in response.attempts)
    assert 0 < len(response.sources) <= 8
    assert all(s.engines for s in response.sources)
    engines = {e.provider for s in response.sources for e in s.engines}
    assert engines == {"brave", "tavily", "duckduckgo"}
    counts = [len(s.engines) for s in response.sources]
    assert counts == sorted(counts, reverse=True)  # agreement first
    blocks = render(response, "blocks")
    assert "[served by: fanout (brave, tavily, duckduckgo)]" in blocks
    first = response.sources[0]
    assert "[" + ", ".join(f"{e.provider} #{e.rank}" for e in first.engines) + "]" in blocks
    data = json.loads(render(response, "json"))["response"]["sources"][0]["engines"]
    assert data == [{"provider": e.provider, "rank": e.rank} for e in first.engines]


async def test_the_first_answer_in_fanout_order_is_the_answer_and_all_are_kept(fenv: dict[str, str]) -> None:
    async with make_client(env=fenv) as ws:
        response = await ws.asearch("quic vs tcp", fanout=["brave", "tavily"])
    assert [a.provider for a in response.answers] == ["tavily"]
    assert response.answer == response.answers[0].answer and response.answer


async def test_a_partial_fanout_says_who_failed_and_why(fenv: dict[str, str], brave: FakeBrave) -> None:
    brave.enqueue(Reply(503, "Service Unavailable"))
    async with make_client(env=fenv) as ws:
        response = await ws.asearch("partial", fanout=["brave", "tavily", "duckduckgo"])
    assert response.ok
    assert response.attempts[0].error_kind == "unavailable"
    assert "1 of 3 providers failed: brave (unavailable)" in messages(response)
    assert {e.provider for s in response.sources for e in s.engines} == {"tavily", "duckduckgo"}


async def test_the_notice_tells_providers_that_found_nothing_from_those_that_failed(
    fenv: dict[str, str], brave: FakeBrave, tavily: FakeTavily
) -> None:
    """A provider that failed did not "give no results": the notice said so of both kinds alike
    (`2 of 3 providers gave no results: brave (unavailable), tavily (no_results)`)."""
    from websearch.testing.tavily import tavily_results_body

    brave.enqueue(Reply(503, "Service Unavailable"))
    tavily.enqueue(Reply(200, tavily_results_body("nothing", 0)))
    async with make_client(env=fenv) as ws:
        response = await ws.asearch("nothing", fanout=["brave", "tavily", "duckduckgo"])
    assert response.ok and [a.error_kind for a in response.attempts] == ["unavailable", "no_results", None]
    (notice,) = [n for n in response.notices if n.kind == "partial"]
    assert str(notice) == "1 of 3 providers gave no results: tavily; 1 failed: brave (unavailable)"


async def test_a_fanout_fails_only_when_every_provider_failed(fenv: dict[str, str], brave: FakeBrave) -> None:
    brave.enqueue(Reply(503, "down"))
    with FakeTavily() as down:
        down.enqueue(Reply(500, {"detail": {"error": "boom"}}))
        env = {**fenv, **down.env}
        async with make_client(env=env) as ws:
            response = await ws.asearch("nothing", fanout=["brave", "tavily"])
    assert response.error is not None and response.error.startswith("All web search providers failed: brave: ")
    assert response.provider == "fanout" and len(response.attempts) == 2


async def test_the_soft_deadline_cuts_off_stragglers_once_one_answered(
    fenv: dict[str, str], brave: FakeBrave, config_dir: Path
) -> None:
    settings(config_dir, "[fanout]\nsoft_deadline = 0.3\n")
    brave.enqueue(Reply(200, brave_results_body("slow", 5), delay=5.0))
    async with make_client(env=fenv) as ws:
        started = time.monotonic()
        response = await ws.asearch("straggler", fanout=["brave", "tavily"])
        elapsed = time.monotonic() - started
    assert elapsed < 2.0, elapsed
    assert response.ok and response.attempts[0].error_kind == "cancelled"
    assert "soft deadline (0.3 s)" in (response.attempts[0].error or "")
    assert "1 of 2 providers was cancelled at the soft deadline: brave" in messages(response)


async def test_past_the_soft_deadline_the_fanout_waits_for_a_first_answer(
    fenv: dict[str, str], brave: FakeBrave, tavily: FakeTavily, config_dir: Path
) -> None:
    settings(config_dir, "[fanout]\nsoft_deadline = 0.2\n")
    brave.enqueue(Reply(200, brave_results_body("late", 5), delay=0.8))
    tavily.enqueue(Reply(hang=True))
    async with make_client(env=fenv) as ws:
        started = time.monotonic()
        response = await ws.asearch("late", fanout=["brave", "tavily"], deadline=5)
        elapsed = time.monotonic() - started
    assert 0.7 < elapsed < 2.0, elapsed  # the first answer (0.8 s), not the soft deadline, not the hard one
    assert response.ok and response.attempts[0].error is None
    assert response.attempts[1].error_kind == "cancelled"


async def test_the_search_deadline_bounds_a_fanout_of_hung_providers(
    fenv: dict[str, str], brave: FakeBrave, tavily: FakeTavily
) -> None:
    brave.enqueue(Reply(hang=True))
    tavily.enqueue(Reply(hang=True))
    async with make_client(env=fenv) as ws:
        started = time.monotonic()
        response = await ws.asearch("hung", fanout=["brave", "tavily"], deadline=1)
        elapsed = time.monotonic() - started
    assert elapsed <= 1.1, elapsed
    assert response.error is not None
    assert [a.error_kind for a in response.attempts] == ["timeout", "timeout"]


async def test_the_list_is_cut_to_max_providers_and_unavailable_ones_are_left_out(
    fenv: dict[str, str], config_dir: Path
) -> None:
    settings(config_dir, "[fanout]\nmax_providers = 1\n")
    async with make_client(env={k: v for k, v in fenv.items() if k != "TAVILY_API_KEY"}) as ws:
        response = await ws.asearch("cut", fanout=["tavily", "brave", "duckduckgo", "tavily"])
    assert [a.provider for a in response.attempts] == ["brave"]
    kinds = {n.kind: n.message for n in response.notices if n.param == "fanout"}
    assert set(kinds) == {"dropped", "clamped"}
    assert "not available here (tavily: " in kinds["dropped"]
    assert "clamped to the first 1: the setting fanout.max_providers" in kinds["clamped"]


async def test_a_fanout_argument_is_checked(fenv: dict[str, str]) -> None:
    async with make_client(env=fenv) as ws:
        with pytest.raises(InvalidSearchParams) as chosen:  # the conflict names provider, which is what to drop
            await ws.asearch("x", provider="brave", fanout=["tavily"])
        assert chosen.value.param == "provider"
        assert chosen.value.message.startswith("provider must be auto or left out when fanout is given")
        with pytest.raises(InvalidSearchParams) as caught:  # it named `provider`, and offered auto
            await ws.asearch("x", fanout=["brave", "nonesuch"])
        assert (caught.value.param, caught.value.message) == (
            "fanout",
            'fanout must be one of: tavily, brave, duckduckgo; got "nonesuch"',
        )


async def test_an_excluded_provider_is_left_out_of_a_fanout_and_said(fenv: dict[str, str], config_dir: Path) -> None:
    # It was asked anyway, without a word, though `providers=` and public honour the setting.
    settings(config_dir, '[providers]\nwebSearchExclude = ["duckduckgo"]\n')
    async with make_client(env=fenv) as ws:
        response = await ws.asearch("excluded", fanout=["duckduckgo", "brave"])
        by_call = await ws.asearch("excluded too", fanout=["tavily", "brave"], exclude=["tavily"])
    assert [a.provider for a in response.attempts] == ["brave"]
    assert [a.provider for a in by_call.attempts] == ["brave"]
    (said,) = [n.message for n in response.notices if n.param == "fanout"]
    assert said == (
        'fanout=["duckduckgo", "brave"] dropped: duckduckgo excluded (by the setting providers.webSearchExclude or '
        "exclude=)"
    )


async def test_the_setting_makes_every_search_a_fanout(fenv: dict[str, str], config_dir: Path) -> None:
    settings(config_dir, '[providers]\nwebSearchFanout = ["brave", "duckduckgo"]\n')
    async with make_client(env=fenv) as ws:
        fanned = await ws.asearch("default fanout")
        single = await ws.asearch("one provider", provider="tavily")
    assert fanned.provider == "fanout" and [a.provider for a in fanned.attempts] == ["brave", "duckduckgo"]
    assert single.provider == "tavily"


async def test_cooldowns_apply_per_provider_inside_a_fanout(fenv: dict[str, str], brave: FakeBrave) -> None:
    brave.enqueue(rate_limited_reply(reset="120, 1419704"))
    async with engine_client(fenv) as ws:
        await ws.asearch("first", fanout=["brave", "tavily"], cache="off")
        second = await ws.asearch("second", fanout=["brave", "tavily"], cache="off")
    assert (second.attempts[0].skipped, second.attempts[0].error_kind) == ("cooldown", "rate_limited")
    assert second.ok and len(brave.requests) == 1


async def test_a_fanout_is_cached_only_at_its_quorum(
    fenv: dict[str, str], brave: FakeBrave, tavily: FakeTavily
) -> None:
    async with engine_client(fenv) as ws:
        await ws.asearch("whole", fanout=["brave", "tavily"])
        assert (await ws.asearch("whole", fanout=["brave", "tavily"])).cached
        brave.enqueue(Reply(503, "down"), Reply(503, "down"))
        tavily.enqueue(Reply(500, {"detail": {"error": "boom"}}), Reply(500, {"detail": {"error": "boom"}}))
        await ws.asearch("thin", fanout=["brave", "tavily", "duckduckgo"])  # 1 of 3 answered: below the quorum
        again = await ws.asearch("thin", fanout=["brave", "tavily", "duckduckgo"])
        assert not again.cached
        assert (await ws.asearch("whole", fanout=["tavily", "brave"])).cached is False  # another order, another key


async def test_fused_answers_are_cleared_by_the_name_that_served_them(
    fenv: dict[str, str], brave: FakeBrave, tavily: FakeTavily, ddg: FakeDuckDuckGo
) -> None:
    # `cache clear --provider` took provider ids only: a fused answer could be cleared only with
    # everything else.
    async with engine_client(fenv) as ws:
        await ws.asearch("fused", fanout=["brave", "tavily"])
        await ws.asearch("fused", provider="public")
        await ws.asearch("single", provider="brave")
        assert await ws.clear_cache("brave") == 1  # what brave served alone
        assert await ws.clear_cache("fanout") == 1
        assert await ws.clear_cache("public") == 1
        with pytest.raises(InvalidSearchParams) as caught:
            await ws.clear_cache("altavista")
        assert caught.value.message.startswith("provider must be one of: public, fanout, tavily, brave,")


async def test_public_fans_out_over_the_available_keyless_engines(fenv: dict[str, str], ddg: FakeDuckDuckGo) -> None:
    async with make_client(env=fenv) as ws:
        response = await ws.asearch("keyless", provider="public")
        rows = {row.id: row for row in ws.provider_status()}
    assert response.provider == "public"
    assert [a.provider for a in response.attempts] == ["duckduckgo"]  # the only keyless fake running here
    assert rows["public"].available and "duckduckgo" in rows["public"].reason


async def test_public_as_the_preference(fenv: dict[str, str], config_dir: Path) -> None:
    settings(config_dir, '[providers]\nwebSearch = "public"\n')
    async with make_client(env=fenv) as ws:
        assert (await ws.asearch("preferred public")).provider == "public"
        assert (await ws.asearch("one", provider="brave")).provider == "brave"


def test_cli_fanout_and_public(fenv: dict[str, str]) -> None:
    done = run_cli(["search", "cli fanout", "--fanout", "brave,duckduckgo", "--format", "json"], fenv)
    assert done.returncode == 0, done.stderr
    response = json.loads(done.stdout)["response"]
    assert response["provider"] == "fanout" and response["sources"][0]["engines"]
    public = run_cli(["search", "cli public", "--provider", "public", "--format", "blocks"], fenv)
    assert public.returncode == 0 and "[served by: public (duckduckgo)]" in public.stdout
    listing = run_cli(["providers"], fenv).stdout.splitlines()
    assert listing[-1].split()[:3] == ["public", "Public", "available"]


async def test_mcp_fanout_argument(fenv: dict[str, str]) -> None:
    from websearch._faces._mcp_server import WebSearchTool

    async with make_client(env=fenv) as ws:
        tool = WebSearchTool(ws)
        prop = tool.schema["properties"]["fanout"]
        assert prop["type"] == "array" and "brave" in prop["items"]["enum"] and "public" not in prop["items"]["enum"]
        assert "public" in tool.schema["properties"]["provider"]["enum"]
        result = await tool.call({"query": "mcp fanout", "fanout": ["brave", "tavily"]})
        assert not result.is_error and result.structured_content is not None
        assert result.structured_content["provider"] == "fanout"
        bad = await tool.call({"query": "x", "fanout": ["nonesuch"]})
        assert bad.is_error
        text = bad.content[0].text  # type: ignore[union-attr]
        assert text.startswith("Invalid argument `fanout`: fanout must be a list of: ")


async def test_an_engine_whose_page_gap_outlasts_the_soft_deadline_serves_its_first_page(
    fenv: dict[str, str], config_dir: Path
) -> None:
    """Ecosia waits 5 s between its pages: in `public --limit 20` it waited for page 2 past the
    soft deadline and was cancelled, its page 1 thrown away. It stops paging there now."""
    from websearch.testing.ecosia import FakeEcosia

    settings(config_dir, "[fanout]\nsoft_deadline = 0.5\n")
    with FakeEcosia() as eco:
        async with make_client(env={**fenv, **eco.env}) as ws:  # the real clock: the gap is 5 s of it
            started = time.monotonic()
            response = await ws.asearch("rust", provider="public", limit=20)
            elapsed = time.monotonic() - started
    assert elapsed < 4.0, elapsed  # not the gap
    assert [(a.provider, a.error) for a in response.attempts] == [("duckduckgo", None), ("ecosia", None)]
    assert len(eco.requests) == 1
    assert "ecosia" in {engine.provider for s in response.sources for engine in s.engines}
    said = (
        "Ecosia page 2 was not asked, so the results stop at page 1: the fan-out's soft deadline leaves it no "
        "time after waiting 5 s between Ecosia's pages"
    )
    (notice,) = [n for n in response.notices if str(n) == said]
    assert notice.kind == "partial"


async def test_an_engine_paging_at_the_soft_deadline_keeps_the_pages_it_has(
    fenv: dict[str, str], config_dir: Path
) -> None:
    """Yahoo's page 2 (asked after its 2 s gap) does not answer: it is given up as the soft
    deadline comes (less the chain's margin), and page 1 is served; it was cancelled with it."""
    from websearch.testing.yahoo import FakeYahoo, results_page, sample_results

    settings(config_dir, "[fanout]\nsoft_deadline = 3.6\n")  # page 2 gets 3.6 - 2 - 0.5 = 1.1 s
    with FakeYahoo() as yahoo:
        yahoo.enqueue(Reply(200, results_page("q", sample_results("q", 7), more=True), content_type="text/html"))
        yahoo.enqueue(Reply(hang=True))
        async with make_client(env={**fenv, **yahoo.env}, clock=FakeClock()) as ws:  # the 2 s gap passes at once
            response = await ws.asearch("q", provider="public", limit=20)
    assert [(a.provider, a.error) for a in response.attempts] == [("duckduckgo", None), ("yahoo", None)]
    assert len(yahoo.requests) == 2
    assert "Yahoo page 2 did not answer in time, so the results stop at page 1" in messages(response)
    assert sum(1 for s in response.sources if "yahoo" in {e.provider for e in s.engines}) == 7
