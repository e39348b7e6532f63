"""Record and replay (issue 33): a search, a fetch and a research recorded as JSON lines keyed by
the cache's own keys, replayed strictly without the network (`ReplayMiss` on a miss), or with
live fallback that appends; no secret in the file; the same replayed JSON from the library, the
CLI, MCP and `serve`."""

from __future__ import annotations

import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client

from conftest import TAVILY_KEY, FakeClock, run_cli
from serve_helper import TOKEN, ServeProcess, http
from websearch import FetchResponse, ResearchResponse, SearchResponse, WebSearch, render
from websearch._client._recording import Recording
from websearch._core._json import response_from
from websearch._core._registry import PROVIDERS
from websearch._engine._cache import cache_key
from websearch._engine._engine import search_key
from websearch._faces._mcp_server import build_server, structured_content
from websearch._faces._render_pages import render_fetch_json, render_research_json
from websearch._reading._page_cache import page_key
from websearch._state import MemoryStore
from websearch.errors import ConfigError, ReplayMiss
from websearch.testing import (
    DdgResult,
    FakeBrave,
    FakeCodex,
    FakeDuckDuckGo,
    FakeExa,
    FakeSearXNG,
    FakeSite,
    FakeTavily,
)

QUERY = "quic head-of-line blocking"
QUIC = (
    "<html><head><title>QUIC explained</title></head><body><article><h1>QUIC explained</h1>"
    "<p>QUIC is a transport protocol built on UDP that carries HTTP/3.</p>"
    "<p>Streams in QUIC are independent, so a lost packet stalls only its own stream.</p>"
    "<p>QUIC avoids head-of-line blocking across streams, which TCP cannot.</p></article></body></html>"
)
TCP = (
    "<html><head><title>TCP and QUIC</title></head><body><article><h1>TCP and QUIC</h1>"
    "<p>TCP delivers bytes in order, so one lost segment holds up everything behind it: head-of-line blocking.</p>"
    "</article></body></html>"
)


@pytest.fixture
def site() -> Iterator[FakeSite]:
    with FakeSite({"/quic": QUIC, "/tcp": TCP}) as s:
        yield s


def session_env(config_dir: Path, ddg: FakeDuckDuckGo, site: FakeSite) -> dict[str, str]:
    """One configuration for every face: the settings file (the site's `[fetch]` table), the
    DuckDuckGo fake as the only provider, no engine state between calls."""
    site.write_settings(config_dir)
    ddg.results = [
        DdgResult("QUIC explained", site.url("/quic", host="127.0.0.1"), "QUIC over UDP"),
        DdgResult("TCP and QUIC", site.url("/tcp", host="127.0.0.1"), "TCP in order"),
    ]
    return {
        "WEBSEARCH_CONFIG_DIR": str(config_dir),
        **ddg.env,
        "WEBSEARCH_PROVIDERS": "duckduckgo",
        "WEBSEARCH_ENGINE": "off",
    }


def record_session(path: Path, env: dict[str, str], site: FakeSite) -> tuple[Any, Any, Any]:
    with WebSearch(env=env, record=path) as ws:
        return (
            ws.search(QUERY, limit=5),
            ws.fetch(site.url("/quic", host="127.0.0.1"), max_chars=500),
            ws.research(QUERY, pages=2, budget_chars=800),
        )


def lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


# -- the file ------------------------------------------------------------------------------------


def test_a_recording_holds_one_line_per_call_keyed_as_the_cache_keys_it(tmp_path: Path, config_dir: Path) -> None:
    path = tmp_path / "runs" / "session.jsonl"
    with FakeDuckDuckGo() as ddg, FakeSite({"/quic": QUIC, "/tcp": TCP}) as site:
        env = session_env(config_dir, ddg, site)
        search, page, research = record_session(path, env, site)
        store = MemoryStore(FakeClock())
        with WebSearch(env={**env, "WEBSEARCH_ENGINE": "on"}, store=store, record=tmp_path / "cached.jsonl") as ws:
            ws.search(QUERY, limit=5)  # the engine caches it under the key the recording writes
            cached_key = lines(tmp_path / "cached.jsonl")[0]["key"]
            held = ws._blocking(store.get(cached_key))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    written = lines(path)
    assert [line["kind"] for line in written] == ["search", "fetch", "research"]
    for line in written:
        assert list(line) == ["kind", "key", "request", "response", "provider", "recorded_at", "websearch_version"]
        assert line["recorded_at"].endswith("Z") and line["websearch_version"]
    assert written[0]["request"] == {"query": QUERY, "limit": 5}
    assert written[0]["provider"] == "duckduckgo" and written[0]["key"].startswith("cache:")
    assert held is not None and cached_key == written[0]["key"]
    url = site.url("/quic", host="127.0.0.1")
    assert written[1]["key"] == f"{page_key(url, 'markdown')}:0:500"
    assert written[1]["request"] == {"url": url, "format": "markdown", "start": 0, "max_chars": 500}
    assert written[2]["key"].startswith("research:")
    assert written[2]["request"] == {"query": QUERY, "pages": 2, "budget_chars": 800}
    # the response is the one JSON form of the typed response, and reads back as it
    for line, response in zip(written, (search, page, research), strict=True):
        assert orjson.dumps(line["response"]).decode() == response.to_json()
        assert response_from(type(response), line["response"]) == response
    assert search.ok and page.ok and research.ok and not search.replayed


def test_the_search_key_is_the_engines_cache_key() -> None:
    from websearch._core._settings import Settings
    from websearch._core._types import SearchParams

    ws = WebSearch(env={}, settings=Settings({}, {}), providers=["duckduckgo"], engine=False)
    params = SearchParams("rust  async", limit=3)
    ctx = ws._context(with_transport=False)
    key = search_key(ws.engine, params, ctx, ws.lineup, provider=None, preferred="auto", excluded=frozenset())
    expected = cache_key(
        params,
        provider=None,
        preferred="auto",
        excluded=(),
        fallback=["firecrawl"],
        lineup=["duckduckgo"],
        config=Settings({}, {}).answer_print(),
    )
    assert key == expected


# -- replay --------------------------------------------------------------------------------------


def test_replay_answers_without_the_network_and_a_miss_is_replay_miss(tmp_path: Path, config_dir: Path) -> None:
    path = tmp_path / "session.jsonl"
    with FakeDuckDuckGo() as ddg, FakeSite({"/quic": QUIC, "/tcp": TCP}) as site:
        env = session_env(config_dir, ddg, site)
        search, page, research = record_session(path, env, site)
        url = site.url("/quic", host="127.0.0.1")
        asked = (len(ddg.requests), len(site.requests))
        with WebSearch(env=env, replay=path) as ws:
            with pytest.raises(ReplayMiss) as missed:
                ws.search("an unrecorded question")
            with pytest.raises(ReplayMiss) as missed_page:
                ws.fetch(url, max_chars=501)
            with pytest.raises(ReplayMiss) as missed_research:
                ws.research(QUERY, pages=3, budget_chars=800)
        assert (len(ddg.requests), len(site.requests)) == asked  # a miss makes no connection
    assert missed.value.kind == "search" and "'an unrecorded question'" in str(missed.value)
    assert str(path) in str(missed.value) and missed.value.key.startswith("cache:")
    assert missed_page.value.kind == "fetch" and url in str(missed_page.value)
    assert missed_research.value.kind == "research" and QUERY in str(missed_research.value)
    assert isinstance(missed.value, ConfigError)
    # the fakes are gone: replay still answers, word for word, marked replayed
    with WebSearch(env=env, replay=path) as ws:
        again = ws.search(" quic   head-of-line blocking ", limit=5)  # the cache's normalisation
        page_again = ws.fetch(url, max_chars=500)
        research_again = ws.research(QUERY, pages=2, budget_chars=800)
    for live, replayed in ((search, again), (page, page_again), (research, research_again)):
        assert replayed.replayed is True and orjson.loads(replayed.to_json())["replayed"] is True
        assert replayed.to_json() == live.to_json().replace('"replayed":false', '"replayed":true')
    assert "[served by: duckduckgo, replayed]" in render(again, "blocks")


def test_replay_or_live_answers_live_once_and_appends(tmp_path: Path, config_dir: Path) -> None:
    path = tmp_path / "session.jsonl"
    with FakeDuckDuckGo() as ddg, FakeSite({"/quic": QUIC, "/tcp": TCP}) as site:
        env = session_env(config_dir, ddg, site)
        with WebSearch(env=env, record=path, replay=path) as ws:  # one path: replay_or_live
            first = ws.search(QUERY, limit=5)
            asked = len(ddg.requests)
            second = ws.search(QUERY, limit=5)
            other = ws.search("another question")
        assert len(ddg.requests) > asked  # the other question went out; the second did not
        with WebSearch(env={**env, "WEBSEARCH_REPLAY": str(path)}) as ws:  # the env: strict replay
            third = ws.search("another question")
    assert (first.replayed, second.replayed, other.replayed, third.replayed) == (False, True, False, True)
    assert [line["request"]["query"] for line in lines(path)] == [QUERY, "another question"]


def test_the_settings_choose_the_file_and_the_mode(tmp_path: Path, config_dir: Path) -> None:
    path = tmp_path / "s.jsonl"
    (config_dir / "settings.toml").write_text(f'[replay]\npath = "{path}"\nmode = "record"\n')
    with FakeDuckDuckGo() as ddg:
        env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **ddg.env, "WEBSEARCH_PROVIDERS": "duckduckgo"}
        with WebSearch(env=env, engine=False) as ws:
            assert not ws.search("otters").replayed
            assert not ws.search("otters").replayed  # recording: every call live
    assert len(lines(path)) == 2
    (config_dir / "settings.toml").write_text('[replay]\nmode = "sometimes"\n')
    with pytest.raises(ConfigError, match=r"replay\.mode"):
        WebSearch(env={"WEBSEARCH_CONFIG_DIR": str(config_dir)})
    with pytest.raises(ConfigError, match="two files"):
        WebSearch(env={}, config_dir=tmp_path, record=tmp_path / "a.jsonl", replay=tmp_path / "b.jsonl")


def test_a_missing_or_broken_recording_is_a_config_error(tmp_path: Path) -> None:
    missing = WebSearch(env={}, config_dir=tmp_path, providers=["duckduckgo"], replay=tmp_path / "none.jsonl")
    with missing as ws, pytest.raises(ConfigError, match="does not exist"):
        ws.search("q")
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not json\n")
    with (
        WebSearch(env={}, config_dir=tmp_path, providers=["duckduckgo"], replay=broken) as ws,
        pytest.raises(ConfigError, match="not a recorded call"),
    ):
        ws.search("q")


def test_two_processes_append_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "shared.jsonl"
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from websearch._client._recording import Recording\n"
        "from websearch._core._clock import SystemClock\n"
        "from websearch import SearchResponse\n"
        "rec = Recording(Path(sys.argv[1]), 'record', SystemClock(), lambda: [])\n"
        "answer = sys.argv[2] * 200_000\n"
        "for i in range(40):\n"
        "    rec.add(f'cache:{sys.argv[2]}{i}', {'query': str(i)}, SearchResponse('p', str(i), answer=answer))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), tag]) for tag in "ab"]
    assert [p.wait(120) for p in procs] == [0, 0]
    written = lines(path)
    assert sorted(line["key"] for line in written) == sorted(f"cache:{t}{i}" for t in "ab" for i in range(40))
    assert all(line["response"]["answer"] == line["key"][6] * 200_000 for line in written)


# -- secrets -------------------------------------------------------------------------------------

ENV_KEY = "brave-env-key-5d8e1f2a9c"
ARG_KEY = "tvly-arg-key-9e2b7c1d4a"
STORED_KEY = "exa-stored-key-3c7a9e1b5d"
SEARX_PASSWORD = "searx-pass-8f2c4e6a1b"
SEARX_TOKEN = "searx-token-2a4c6e8f0b"
SERVE_TOKEN = "serve-token-7b9d1f3a5c7e9b1d"
ACCESS_TOKEN = "codex-access-6c8e0a2b4d"
REFRESH_TOKEN = "codex-refresh-1d3f5b7c9e"
PROXY_USER, PROXY_PASSWORD = "proxy-user", "proxy-pass-4e6a8c0b2d"


def test_no_configured_secret_reaches_the_file(tmp_path: Path, config_dir: Path) -> None:
    path = tmp_path / "secret.jsonl"
    leaky = f"<html><body><article><p>The key {ENV_KEY} and https://bob:{SEARX_PASSWORD}@host.test/x leak here.</p>"
    leaky += "<p>More text to read so the page is an article with content worth keeping.</p></article></body></html>"
    with (
        FakeBrave() as brave,
        FakeTavily(valid_keys={TAVILY_KEY}) as tavily,
        FakeExa() as exa,
        FakeSearXNG() as searx,
        FakeCodex(access_tokens={ACCESS_TOKEN}, refresh_tokens={REFRESH_TOKEN}, account_id="acct-1") as codex,
        FakeSite({"/leak": leaky}) as site,
    ):
        site.write_settings(config_dir)
        env = {
            **brave.env,
            **tavily.env,
            **exa.env,
            **searx.env,
            **codex.env,
            "WEBSEARCH_CONFIG_DIR": str(config_dir),
            "BRAVE_API_KEY": ENV_KEY,
            "SEARXNG_ENDPOINT": "https://searx.example.org",
            "SEARXNG_BASIC_USERNAME": "team",
            "SEARXNG_BASIC_PASSWORD": SEARX_PASSWORD,
            "SEARXNG_TOKEN": SEARX_TOKEN,
            "WEBSEARCH_SERVE_TOKENS": SERVE_TOKEN,
            "HTTPS_PROXY": f"http://{PROXY_USER}:{PROXY_PASSWORD}@127.0.0.1:9",
            "NO_PROXY": "127.0.0.1,localhost",
        }
        providers = ["brave", "tavily", "exa", "searxng", "codex"]
        with WebSearch(env=env, api_keys={"tavily": ARG_KEY}, providers=providers, engine=False, record=path) as ws:
            ws.store_credential("exa", STORED_KEY)
            login = {"access_token": ACCESS_TOKEN, "refresh_token": REFRESH_TOKEN, "account_id": "acct-1"}
            ws.credentials.set(PROVIDERS["codex"].credential_ids[0], "oauth", {**login, "expires_at": 4e9})
            for provider in providers:
                ws.search(f"q {PROXY_USER}", provider=provider)
            page = ws.fetch(site.url("/leak", host="127.0.0.1"))
    assert ENV_KEY in page.text  # the page did carry the secret: the file holds it redacted
    data = path.read_bytes()
    assert data.count(b"\n") == len(providers) + 1 and b"[redacted]" in data
    for secret in (ENV_KEY, ARG_KEY, STORED_KEY, SEARX_PASSWORD, SEARX_TOKEN, SERVE_TOKEN, ACCESS_TOKEN):
        assert secret.encode() not in data, secret
    for secret in (REFRESH_TOKEN, PROXY_PASSWORD, f"{PROXY_USER}:{PROXY_PASSWORD}", f"bob:{SEARX_PASSWORD}"):
        assert secret.encode() not in data, secret


# -- the faces -----------------------------------------------------------------------------------


async def test_a_replayed_session_reads_the_same_through_every_face(tmp_path: Path, config_dir: Path) -> None:
    """Recorded through the library, replayed with no fake running: the library's JSON, the
    CLI's, MCP's and serve's are the same bytes for the same request."""
    path = tmp_path / "session.jsonl"
    with FakeDuckDuckGo() as ddg, FakeSite({"/quic": QUIC, "/tcp": TCP}) as site:
        env = session_env(config_dir, ddg, site)
        url = site.url("/quic", host="127.0.0.1")
        record_session(path, env, site)
    with WebSearch(env=env, replay=path) as ws:
        search = await ws.asearch(QUERY, limit=5)
        page = await ws.afetch(url, max_chars=500)
        research = await ws.aresearch(QUERY, pages=2, budget_chars=800)
    assert search.replayed and page.replayed and research.replayed
    search_json, page_json, research_json = render(search, "json"), page.to_json(), research.to_json()
    assert search.to_json() in search_json  # the `--format json` object holds the one JSON form

    # the CLI
    flags = ["--replay", str(path)]
    cli_search = run_cli(["search", QUERY, "--limit", "5", "--format", "json", *flags], env)
    cli_fetch = run_cli(["fetch", url, "--max-chars", "500", "--json", *flags], env)
    cli_research = run_cli(["research", QUERY, "--pages", "2", "--budget-chars", "800", "--json", *flags], env)
    assert cli_search.stdout == search_json + "\n", cli_search.stderr
    assert cli_fetch.stdout == render_fetch_json(page) + "\n" and page_json in cli_fetch.stdout
    assert cli_research.stdout == render_research_json(research) + "\n" and research_json in cli_research.stdout
    missed = run_cli(["search", "never recorded", "--format", "json", *flags], env)
    assert missed.returncode == 2 and "no recorded search of 'never recorded'" in missed.stderr

    # MCP: the structured content is the lean form of the same JSON (null, empty and false left out)
    async with WebSearch(env={**env, "WEBSEARCH_REPLAY": str(path)}) as mcp_ws, Client(build_server(mcp_ws)) as mcp:
        tool_search = await mcp.call_tool("web_search", {"query": QUERY, "num_results": 5})
        tool_fetch = await mcp.call_tool("web_fetch", {"url": url, "max_chars": 500})
        tool_research = await mcp.call_tool("web_research", {"query": QUERY, "pages": 2, "budget_chars": 800})
        tool_missed = await mcp.call_tool("web_search", {"query": "never recorded"})
    for result, response in ((tool_search, search), (tool_fetch, page), (tool_research, research)):
        assert result.is_error is False
        assert orjson.dumps(result.structured_content) == orjson.dumps(structured_content(response))
        assert result.structured_content is not None and result.structured_content["replayed"] is True
    assert tool_missed.is_error is True and "no recorded search" in tool_missed.content[0].text

    # serve, started with WEBSEARCH_REPLAY and no provider running
    server = ServeProcess({**env, "WEBSEARCH_REPLAY": str(path), "WEBSEARCH_SERVE_TOKENS": TOKEN}).wait_ready()
    try:
        with http(server.url) as api:
            rest_search = api.post("/v1/search", json={"query": QUERY, "num_results": 5})
            rest_fetch = api.post("/v1/fetch", json={"url": url, "max_chars": 500})
            rest_research = api.post("/v1/research", json={"query": QUERY, "pages": 2, "budget_chars": 800})
            rest_missed = api.post("/v1/fetch", json={"url": url, "max_chars": 42})
    finally:
        server.stop()
    assert rest_search.content == search_json.encode(), rest_search.text
    assert rest_fetch.content == page_json.encode(), rest_fetch.text
    assert rest_research.content == research_json.encode(), rest_research.text
    assert rest_missed.status_code == 404 and f"no recorded fetch of '{url}'" in rest_missed.json()["error"]
    assert str(path) not in rest_missed.text  # the server's file is not the caller's business


def test_a_response_reads_back_from_its_json() -> None:
    from test_cache_codec import full_response

    response = full_response()
    assert response_from(SearchResponse, orjson.loads(response.to_json())) == response
    assert response_from(FetchResponse, {"url": "u", "unknown_later_field": 1}) == FetchResponse("u")
    assert response_from(ResearchResponse, {"query": "q"}) == ResearchResponse("q")
    with pytest.raises(ValueError, match="SearchResponse"):
        response_from(SearchResponse, {"query": "no provider"})
    assert repr(Recording(Path("x.jsonl"), "replay", FakeClock(), list)) == "Recording('x.jsonl', mode='replay')"
