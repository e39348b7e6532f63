"""The faces of reading: rendering of `FetchResponse`/`ResearchResponse`, `websearch fetch` and
`websearch research`, the `web_fetch` and `web_research` MCP tools (in memory, stdio, HTTP),
`POST /v1/fetch` and `/v1/research`, and `websearch.testing.FakeSite`. Pages come from a
`FakeSite` on 127.0.0.1, searches from the DuckDuckGo fake."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from conftest import TESTS, FakeClock, cli_env, make_client, run_cli
from serve_helper import TOKEN, InProcess, async_http, http
from websearch import FetchResponse, PageOutcome, ResearchResponse, ResearchSource, WebSearch
from websearch._core._clock import SystemClock
from websearch._core._notices import suspicious
from websearch._core._types import ProviderAnswer, SearchCitation
from websearch._faces._mcp_server import build_server, output_schema
from websearch._faces._read_tools import (
    FETCH_ARGUMENTS,
    fetch_description,
    fetch_input_schema,
    parse_fetch,
    parse_research,
    research_description,
    research_input_schema,
)
from websearch._faces._render_pages import render_fetch, render_research
from websearch._state import MemoryStore
from websearch.errors import InvalidSearchParams
from websearch.testing import DdgResult, FakeDuckDuckGo, FakeSite, Reply


def article(title: str, paragraphs: list[str]) -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>{body}</article></body></html>"


LONG = article("Otters", [f"Paragraph {i}: sea otters hold hands while they sleep in kelp beds." for i in range(120)])
QUIC = article(
    "QUIC explained",
    [
        "QUIC is a transport protocol built on UDP that carries HTTP/3.",
        "QUIC combines the handshake of TLS 1.3 with the transport handshake, saving a round trip.",
        "Streams in QUIC are independent, so a lost packet stalls only its own stream.",
    ],
)
TCP = article(
    "TCP and QUIC",
    [
        "TCP delivers bytes in order, so one lost segment holds up everything behind it.",
        "QUIC avoids head-of-line blocking across streams, which TCP cannot.",
    ],
)


@pytest.fixture
def site() -> Iterator[FakeSite]:
    pages: dict[str, Any] = {"/otters": LONG, "/quic": QUIC, "/tcp": TCP, "/gone": Reply(410, "gone")}
    with FakeSite(pages, hosts=("site.test", "a.test", "b.test"), robots="User-agent: *\nDisallow: /private\n") as s:
        s.pages["/private"] = QUIC
        yield s


def reader(site: FakeSite, env: dict[str, str] | None = None, **kw: Any) -> WebSearch:
    env = env if env is not None else {"WEBSEARCH_CONFIG_DIR": "/nonexistent", **site.env}
    return make_client(env=env, settings=site.settings(env), resolver=site.resolver, **kw)


# -- rendering -----------------------------------------------------------------------------------


def test_a_cut_page_says_which_characters_and_where_to_continue() -> None:
    page = FetchResponse(
        "http://a.test/x",
        final_url="http://a.test/y",
        kind="html",
        title="A  title",
        text="Hello",
        total_chars=50,
        start=10,
        next_start=15,
        truncated=True,
        notices=(suspicious([(0, 5, "instructions")], "text"),),
    )
    assert render_fetch(page) == (
        "# A title\n"
        "URL: http://a.test/y (asked for http://a.test/x)\n"
        "[html · markdown · 5 of 50 characters (10–15); continue with start=15]\n"
        f"note: {suspicious([(0, 5, 'instructions')], 'text').message}\n"
        "\n"
        "Hello"
    )


def test_a_whole_page_says_so_and_a_cached_one_its_age() -> None:
    page = FetchResponse("http://a.test/", kind="text", format="text", text="abc", total_chars=3, cached=True)
    page.cached_age_s = 125.0
    page.whole_page = True
    lines = render_fetch(page).splitlines()
    assert lines[2] == "[text · text · the whole page (3 characters)]"
    assert lines[3:5] == [
        "note: no main content was found; this is the whole page's text",
        "note: served from the cache (2 min old)",
    ]


def test_a_page_not_read_is_one_fetch_failed_line() -> None:
    page = FetchResponse("http://a.test/", error="robots.txt of a.test disallows /\n", error_kind="robots")
    assert render_fetch(page) == "FETCH_FAILED (robots): robots.txt of a.test disallows /"


def test_a_research_renders_context_answers_and_pages_not_used() -> None:
    response = ResearchResponse(
        "what is quic",
        context="QUIC runs on UDP [1].\n\nSources:\n[1] http://a.test/quic",
        sources=(ResearchSource(1, "http://a.test/quic", "QUIC", 20),),
        answers=(ProviderAnswer("perplexity", "QUIC is a protocol.", (SearchCitation("http://c.test/", "C"),)),),
        pages=(
            PageOutcome("http://a.test/quic", True, "used", number=1),
            PageOutcome("http://b.test/", False, "fetch_failed", "HTTP 404", "http_status"),
            PageOutcome("http://d.test/", False, "duplicate"),
        ),
        chars=52,
        budget_chars=1000,
        provider="duckduckgo",
    )
    assert render_research(response) == (
        "# Research: what is quic\n"
        "[served by: duckduckgo · 1 of 3 pages used · 52 characters · budget 1000 characters]\n"
        "\n"
        "QUIC runs on UDP [1].\n\nSources:\n[1] http://a.test/quic\n"
        "\n"
        "## Answer from perplexity\n"
        "QUIC is a protocol.\n"
        "Cites: http://c.test/\n"
        "\n"
        "Pages not used:\n"
        "- http://b.test/ — not read (http_status): HTTP 404\n"
        "- http://d.test/ — repeats another page"
    )


def test_a_research_with_nothing_is_research_failed() -> None:
    response = ResearchResponse("q", error="the search found no page to read")
    assert render_research(response) == "RESEARCH_FAILED: q — the search found no page to read"


# -- the tools' arguments ------------------------------------------------------------------------


def test_fetch_arguments_take_defaults_and_nulls_as_not_given() -> None:
    assert parse_fetch({"url": " http://a.test/ ", "max_chars": 0, "start": None, "format": ""}) == parse_fetch(
        {"url": "http://a.test/"}
    )
    call = parse_fetch({"url": "http://a.test/", "max_chars": 500.0, "start": 3, "format": "text"})
    assert (call.max_chars, call.start, call.format) == (500, 3, "text")


@pytest.mark.parametrize(
    ("arguments", "param", "message"),
    [
        ({}, "url", "url must be a non-empty string; got nothing"),
        ({"url": "http://a.test/", "max_chars": -1}, "max_chars", "max_chars must be a whole number of at least 1"),
        ({"url": "http://a.test/", "format": "pdf"}, "format", "format must be one of: markdown, text, html"),
        ({"url": "http://a.test/", "lenght": 3}, "lenght", "lenght must be left out"),
    ],
)
def test_bad_fetch_arguments_name_the_argument(arguments: dict[str, Any], param: str, message: str) -> None:
    with pytest.raises(InvalidSearchParams) as info:
        parse_fetch(arguments)
    assert info.value.param == param and info.value.message.startswith(message)


def test_research_arguments() -> None:
    call = parse_research(
        {"query": "q", "budget_chars": 0, "pages": 3, "provider": "auto", "fanout": []}, ["duckduckgo"]
    )
    assert (call.query, call.budget_chars, call.pages, call.search) == ("q", None, 3, {"provider": "auto"})
    fan = parse_research({"query": "q", "provider": "auto", "fanout": ["duckduckgo"]}, ["duckduckgo", "public"])
    assert fan.search == {"fanout": ["duckduckgo"]}
    with pytest.raises(InvalidSearchParams) as both:
        parse_research({"query": "q", "budget_chars": 10, "budget_tokens": 10}, ["duckduckgo"])
    assert both.value.param == "budget_tokens"
    with pytest.raises(InvalidSearchParams) as unknown:
        parse_research({"query": "q", "provider": "brave"}, ["duckduckgo"], {"brave": "needs BRAVE_API_KEY"})
    assert (
        unknown.value.message
        == 'provider must be one of: auto, duckduckgo; got "brave" (not available here: needs BRAVE_API_KEY)'
    )


def test_the_descriptions_fit_openai_s_limit_and_the_schemas_are_valid() -> None:
    for text in (fetch_description(), research_description()):
        assert len(text) <= 1024
    for schema in (fetch_input_schema(), research_input_schema(), fetch_input_schema(strict=True)):
        Draft202012Validator.check_schema(schema)
    assert fetch_input_schema()["required"] == ["url"] and research_input_schema()["required"] == ["query"]
    assert [arg.name for arg in FETCH_ARGUMENTS] == ["url", "max_chars", "start", "format"]


# -- the library on FakeSite ---------------------------------------------------------------------


async def test_fake_site_serves_pages_robots_and_refuses_unknown_names(site: FakeSite) -> None:
    async with reader(site) as client:
        page = await client.afetch(site.url("/otters", host="a.test"), max_chars=300)
        robots = await client.afetch(site.url("/private"))
        missing = await client.afetch(site.url("/nowhere"))
        stranger = await client.afetch(f"http://elsewhere.test:{site.port}/quic")
    assert page.ok and page.next_start is not None and "sea otters" in page.text
    assert robots.error_kind == "robots"
    assert missing.error_kind == "http_status" and missing.status == 404
    assert stranger.error is not None  # the name leads nowhere (robots.txt is looked for first)
    assert "elsewhere.test" in site.resolver.calls


# -- the CLI -------------------------------------------------------------------------------------


@pytest.fixture
def cli(site: FakeSite, env: dict[str, str], config_dir: Path) -> dict[str, str]:
    site.write_settings(config_dir)
    return env


def test_cli_fetch_prints_the_header_and_the_window(site: FakeSite, cli: dict[str, str]) -> None:
    proc = run_cli(["fetch", site.url("/otters", host="127.0.0.1"), "--max-chars", "400"], cli)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "# Otters"
    assert lines[1] == f"URL: {site.url('/otters', host='127.0.0.1')}"
    assert "continue with start=" in lines[2]
    start = int(lines[2].rsplit("start=", 1)[1].rstrip("]"))
    again = run_cli(["fetch", site.url("/otters", host="127.0.0.1"), "--start", str(start), "--json"], cli)
    assert again.returncode == 0, again.stderr
    payload = json.loads(again.stdout)
    assert payload["error"] is None and payload["response"]["start"] == start
    assert payload["text"].startswith("# Otters")


def test_cli_fetch_failure_is_exit_1_with_fetch_failed(site: FakeSite, cli: dict[str, str]) -> None:
    proc = run_cli(["fetch", site.url("/gone", host="127.0.0.1")], cli)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.startswith("FETCH_FAILED (http_status): ")
    as_json = run_cli(["fetch", site.url("/gone", host="127.0.0.1"), "--json"], cli)
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["response"]["error_kind"] == "http_status"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["fetch", "http://a.test/", "--max-chars", "0"], "--max-chars: must be a whole number of at least 1; got 0"),
        (["fetch", "http://a.test/", "--format", "pdf"], "argument --format: invalid choice: 'pdf'"),
        (["research", "q", "--budget-chars", "5", "--budget-tokens", "5"], "not allowed with argument"),
        (["research", "q", "--deadline", "0"], "must be a number of seconds greater than 0"),
    ],
)
def test_cli_reading_usage_errors_exit_2(env: dict[str, str], args: list[str], said: str) -> None:
    proc = run_cli(args, env)
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr


def test_cli_fetch_refuses_a_bad_url_as_a_usage_error(env: dict[str, str]) -> None:
    proc = run_cli(["fetch", "  "], env)
    assert (proc.returncode, proc.stderr) == (2, "websearch: error: url must be a non-empty string; got '  '\n")


def test_cli_fetch_of_a_private_address_without_leave_fails(env: dict[str, str], site: FakeSite) -> None:
    proc = run_cli(["fetch", site.url("/quic", host="127.0.0.1")], env)  # no allow_hosts written
    assert proc.returncode == 1 and proc.stderr.startswith("FETCH_FAILED (not_allowed): ")


def test_cli_research_prints_cited_context(site: FakeSite, ddg: FakeDuckDuckGo, cli: dict[str, str]) -> None:
    ddg.results = [
        DdgResult("QUIC explained", site.url("/quic", host="127.0.0.1"), "QUIC"),
        DdgResult("Gone", site.url("/gone", host="127.0.0.1"), "gone"),
    ]
    proc = run_cli(["research", "how", "does", "quic", "avoid", "head-of-line", "blocking", "--pages", "2"], cli)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("# Research: how does quic avoid head-of-line blocking\n")
    assert "[1]" in out and f"[1] {site.url('/quic', host='127.0.0.1')}" in out
    assert "Pages not used:" in out and "(http_status)" in out
    as_json = run_cli(["research", "quic", "--json", "--budget-chars", "300"], cli)
    payload = json.loads(as_json.stdout)
    assert payload["response"]["chars"] <= 300 and payload["response"]["budget_chars"] == 300


def test_cli_research_with_nothing_found_is_exit_1(ddg: FakeDuckDuckGo, cli: dict[str, str]) -> None:
    ddg.results = []
    proc = run_cli(["research", "nothing at all"], cli)
    assert proc.returncode == 1 and proc.stderr.startswith("RESEARCH_FAILED: nothing at all — "), proc.stderr


def test_help_of_the_reading_commands_stays_light(env: dict[str, str]) -> None:
    code = (
        "import sys\nfrom websearch._faces._cli import main\n"
        "try:\n    main(['fetch', '--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in sys.modules if m.startswith(('aiohttp', 'websearch._providers', 'trafilatura'))]\n"
        "print(heavy)\n"
    )
    import subprocess

    proc = subprocess.run([sys.executable, "-c", code], env=cli_env(env), capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout + proc.stderr


# -- MCP -----------------------------------------------------------------------------------------


def text_of(result: Any) -> str:
    assert len(result.content) == 1
    return str(result.content[0].text)


@asynccontextmanager
async def connect(site: FakeSite, env: dict[str, str]) -> AsyncIterator[Client]:
    async with reader(site, env, clock=FakeClock()) as ws, Client(build_server(ws)) as client:
        yield client


async def test_mcp_lists_three_tools_with_output_schemas(site: FakeSite, env: dict[str, str]) -> None:
    async with connect(site, env) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert list(tools) == ["web_search", "web_fetch", "web_research"]
    assert tools["web_fetch"].input_schema == fetch_input_schema()
    assert tools["web_research"].input_schema == research_input_schema(["duckduckgo", "public"])
    assert tools["web_fetch"].output_schema == output_schema(FetchResponse)
    assert tools["web_research"].output_schema == output_schema(ResearchResponse)


async def test_mcp_web_fetch_reads_on_with_start(site: FakeSite, env: dict[str, str]) -> None:
    async with connect(site, env) as client:
        first = await client.call_tool("web_fetch", {"url": site.url("/otters"), "max_chars": 500})
        text = text_of(first)
        start = int(text.splitlines()[2].rsplit("start=", 1)[1].rstrip("]"))
        second = await client.call_tool("web_fetch", {"url": site.url("/otters"), "max_chars": 500, "start": start})
        failed = await client.call_tool("web_fetch", {"url": site.url("/private")})
        bad = await client.call_tool("web_fetch", {"url": site.url("/otters"), "format": "pdf"})
    assert (
        first.is_error is False
        and f"of {first.structured_content['total_chars']} characters" in text
        and "; continue with start=" in text
    )
    Draft202012Validator(output_schema(FetchResponse)).validate(first.structured_content)
    assert second.structured_content is not None and second.structured_content["start"] == start
    assert text_of(failed).startswith("FETCH_FAILED (robots): ")
    assert failed.structured_content is not None and failed.structured_content["error_kind"] == "robots"
    assert (bad.is_error, text_of(bad)) == (
        True,
        'Invalid argument `format`: format must be one of: markdown, text, html; got "pdf"',
    )


async def test_mcp_web_research_gives_cited_context(site: FakeSite, ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.results = [
        DdgResult("QUIC explained", site.url("/quic", host="a.test"), "QUIC"),
        DdgResult("TCP and QUIC", site.url("/tcp", host="b.test"), "TCP"),
    ]
    async with connect(site, env) as client:
        result = await client.call_tool("web_research", {"query": "quic head-of-line blocking", "budget_chars": 2000})
        bad = await client.call_tool("web_research", {"query": "q", "budget_chars": 10, "budget_tokens": 10})
    assert result.is_error is False
    text = text_of(result)
    assert text.startswith("# Research: quic head-of-line blocking\n") and "Sources:" in text
    content = result.structured_content
    assert content is not None and content["chars"] <= 2000 and content["sources"]
    Draft202012Validator(output_schema(ResearchResponse)).validate(content)
    assert bad.is_error is True and text_of(bad).startswith("Invalid argument `budget_tokens`: ")


def server_env(env: dict[str, str]) -> dict[str, str]:
    return cli_env(env)


async def test_mcp_reading_tools_over_stdio(
    site: FakeSite, ddg: FakeDuckDuckGo, cli: dict[str, str], tmp_path: Path
) -> None:
    ddg.results = [DdgResult("QUIC explained", site.url("/quic", host="127.0.0.1"), "QUIC")]
    params = StdioServerParameters(
        command=sys.executable, args=[str(TESTS / "guarded_cli.py"), "mcp"], env=cli_env(cli)
    )
    with (tmp_path / "stderr.txt").open("w") as err:
        async with Client(stdio_client(params, errlog=err)) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            page = await client.call_tool("web_fetch", {"url": site.url("/quic", host="127.0.0.1")})
            research = await client.call_tool("web_research", {"query": "quic streams"})
    assert names == ["web_search", "web_fetch", "web_research"]
    assert text_of(page).startswith("# QUIC explained\n")
    assert "[1]" in text_of(research)
    assert "NETGUARD" not in (tmp_path / "stderr.txt").read_text()


async def test_mcp_reading_tools_over_the_servers_http(
    site: FakeSite, ddg: FakeDuckDuckGo, env: dict[str, str]
) -> None:
    ddg.results = [DdgResult("QUIC explained", site.url("/quic", host="a.test"), "QUIC")]
    with InProcess(reader(site, env, store=MemoryStore(SystemClock()))) as server:
        async with (
            async_http(server.url, TOKEN) as client_http,
            Client(streamable_http_client(f"{server.url}/mcp", http_client=client_http)) as client,
        ):
            page = await client.call_tool("web_fetch", {"url": site.url("/quic", host="a.test")})
            research = await client.call_tool("web_research", {"query": "quic streams", "pages": 1})
    assert page.is_error is False and text_of(page).startswith("# QUIC explained\n")
    assert research.is_error is False and "[1]" in text_of(research)


# -- REST ----------------------------------------------------------------------------------------


def test_rest_fetch_and_research(site: FakeSite, ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    ddg.results = [DdgResult("QUIC explained", site.url("/quic", host="a.test"), "QUIC")]
    with InProcess(reader(site, env, store=MemoryStore(SystemClock()))) as server, http(server.url) as api:
        page = api.post("/v1/fetch", json={"url": site.url("/otters"), "max_chars": 300})
        robots = api.post("/v1/fetch", json={"url": site.url("/private"), "cache": "off"})
        research = api.post("/v1/research", json={"query": "quic streams", "budget_chars": 800, "deadline": 20})
        bad = api.post("/v1/fetch", json={"url": site.url("/otters"), "max_chars": "many"})
        bad_research = api.post("/v1/research", json={"query": "q", "pages": 99})
        not_json = api.post("/v1/fetch", content=b"[")
        with http(server.url, token=None) as anonymous:
            refused = anonymous.post("/v1/fetch", json={"url": site.url("/otters")})
        openapi = api.get("/openapi.json").json()
    assert page.status_code == 200 and page.json()["next_start"] is not None
    assert page.json() == {**page.json(), "url": site.url("/otters"), "error": None}
    assert robots.status_code == 200 and robots.json()["error_kind"] == "robots"
    assert research.status_code == 200, research.text
    assert research.json()["chars"] <= 800 and research.json()["sources"][0]["number"] == 1
    assert (bad.status_code, bad.json()["param"]) == (422, "max_chars")
    assert (bad_research.status_code, bad_research.json()["param"]) == (422, "pages")
    assert (not_json.status_code, not_json.json()["param"]) == (400, "body")
    assert refused.status_code == 401
    assert {"/v1/search", "/v1/fetch", "/v1/research"} <= set(openapi["paths"])
    fetch_body = openapi["paths"]["/v1/fetch"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert {"url", "max_chars", "start", "format", "cache", "deadline"} == set(fetch_body["properties"])


def test_rest_deadline_beyond_the_server_limit_is_422(site: FakeSite, env: dict[str, str]) -> None:
    with InProcess(reader(site, env, store=MemoryStore(SystemClock()))) as server, http(server.url) as api:
        late = api.post("/v1/fetch", json={"url": site.url("/otters"), "deadline": 10_000})
    assert late.status_code == 422 and late.json()["param"] == "deadline"


def test_rest_reading_costs_a_rate_limit_token_and_is_counted(site: FakeSite, env: dict[str, str]) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    from websearch._faces._serve import RateLimit, ServeConfig

    config = ServeConfig(rate_limit=RateLimit("1/h", 1 / 3600, 1)).with_tokens(TOKEN)
    with InProcess(reader(site, env, store=MemoryStore(SystemClock())), config) as server, http(server.url) as api:
        first = api.post("/v1/fetch", json={"url": site.url("/quic")})
        limited = api.post("/v1/research", json={"query": "quic"})
        text = api.get("/metrics").text
    assert (first.status_code, limited.status_code) == (200, 429)
    counted = {
        (sample.labels.get("route"), sample.labels.get("status")): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "websearch_http_requests_total"
    }
    assert counted[("/v1/fetch", "200")] == 1 and counted[("/v1/research", "429")] == 1


def test_fake_site_settings_are_read_without_a_warning(site: FakeSite, tmp_path: Path) -> None:
    import warnings

    from websearch._core._settings import Settings

    (tmp_path / "settings.toml").write_text("[http]\ntimeout = 5\n", encoding="utf-8")
    path = site.write_settings(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        settings = Settings.load(tmp_path, {})
    assert settings.get("fetch.allow_hosts") == ["site.test", "a.test", "b.test", "127.0.0.1"]
    assert settings.get("http.timeout") == 5
    with pytest.raises(ValueError, match=r"has a \[fetch\] table already"):
        site.write_settings(tmp_path)
    assert path == tmp_path / "settings.toml"
