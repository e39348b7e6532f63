"""The MCP server and `websearch schema`: an in-memory client, a stdio subprocess, streamable HTTP."""

from __future__ import annotations

import dataclasses
import json
import re
import signal
import socket
import subprocess
import sys
import time
import typing
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import httpx2
import pytest
from jsonschema import Draft202012Validator
from mcp import Client, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from conftest import TESTS, FakeClock, cli_env, make_client, run_cli
from websearch import Attempt, ConfigError, InvalidSearchParams, SearchResponse, SearchSource
from websearch._core._notices import Notice, not_supported
from websearch._core._types import SearchCitation, SearchUsage
from websearch._faces._mcp_server import build_server, output_schema, structured_content, tool_text
from websearch._faces._rendering import render
from websearch._faces._tool import ARGUMENTS, description, input_schema, parse_arguments, tool_definition
from websearch.providers import SEARCH_PROVIDER_ORDER
from websearch.testing import DdgResult, FakeBrave, FakeDuckDuckGo, FakeFirecrawl, Reply
from websearch.testing.firecrawl import firecrawl_error

BRAVE_500 = Reply(500, "upstream   exploded\n")
BRAVE_FAILURE = "Brave API error (500): upstream exploded"
FIRECRAWL_500 = Reply(500, firecrawl_error("An unexpected error occurred. Your exception ID is 7e1f"))
FIRECRAWL_FAILURE = "Firecrawl API error (500): An unexpected error occurred. Your exception ID is 7e1f"
BLOCKS = "# Web search: q\n[served by: duckduckgo]\n\n## 1. T\nURL: https://t.example/\ns\n\nSources:\n[1] https://t.example/"
PARAMETERS = [
    "query",
    "recency",
    "num_results",
    "limit",
    "num_search_results",
    "max_tokens",
    "temperature",
    "mode",
    "text_chars",
    "recency_days",
    "recency_hours",
    "start_published_date",
    "end_published_date",
    "category",
    "include_domains",
    "exclude_domains",
    "summary",
    "sort_by_date",
    "country",
    "language",
    "safesearch",
    "provider",
    "fanout",
    "deadline",
]


@pytest.fixture
def brave() -> Iterator[FakeBrave]:
    with FakeBrave() as fake:
        yield fake


@pytest.fixture
def firecrawl() -> Iterator[FakeFirecrawl]:
    with FakeFirecrawl() as fake:
        yield fake


@pytest.fixture
def keyed_env(env: dict[str, str], brave: FakeBrave, firecrawl: FakeFirecrawl) -> dict[str, str]:
    """DuckDuckGo plus Brave and Firecrawl with keys: the fallback tier is reachable."""
    return {**env, **brave.env, **firecrawl.env, "BRAVE_API_KEY": "bk-test", "FIRECRAWL_API_KEY": "fc-test"}


@asynccontextmanager
async def connect(env: dict[str, str], clock: FakeClock, mode: str = "auto", **kw: Any) -> AsyncIterator[Client]:
    """An in-memory MCP client on a server whose WebSearch client sees exactly `env`."""
    async with make_client(env=env, clock=clock, **kw) as ws, Client(build_server(ws), mode=mode) as client:
        yield client


def text_of(result: Any) -> str:
    assert len(result.content) == 1
    return str(result.content[0].text)


# -- the tool listing ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # the 2026 per-request era and the initialize handshake
async def test_listing_names_web_search_first_with_the_full_parameter_surface(
    env: dict[str, str], clock: FakeClock, mode: str
) -> None:
    async with connect(env, clock, mode) as client:
        tools = (await client.list_tools()).tools
    tool = tools[0]
    assert [t.name for t in tools] == ["web_search", "web_fetch", "web_research"]
    assert tool.name == "web_search"
    assert tool.description == description()
    assert tool.annotations is not None and tool.annotations.read_only_hint is True
    schema = tool.input_schema
    assert list(schema["properties"]) == PARAMETERS
    assert schema["required"] == ["query"]
    assert schema["properties"]["provider"]["enum"] == ["auto", "duckduckgo", "public"]  # only what this machine has
    assert schema["properties"]["num_results"]["default"] == 8
    assert schema["properties"]["text_chars"]["default"] == 1200


async def test_provider_enum_lists_available_providers_in_chain_order_without_excluded_ones(
    keyed_env: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    async with connect(keyed_env, clock) as client:
        (tool, *_) = (await client.list_tools()).tools
    assert tool.input_schema["properties"]["provider"]["enum"] == ["auto", "firecrawl", "brave", "duckduckgo", "public"]
    (config_dir / "settings.toml").write_text('[providers]\nwebSearchExclude = ["brave"]\n')
    async with connect(keyed_env, clock) as client:
        (tool, *_) = (await client.list_tools()).tools
    assert tool.input_schema["properties"]["provider"]["enum"] == ["auto", "firecrawl", "duckduckgo", "public"]


def test_description_says_how_to_cite_and_names_every_parameter_with_its_default() -> None:
    text = description()
    assert "one block per result" in text and "'Sources:'" in text and "Cite" in text and "SEARCH_FAILED" in text
    words = set(re.findall(r"\w+", text))
    assert [name for name in PARAMETERS if name not in words] == ["limit"]  # the alias is not advertised
    assert "num_results (default 8)" in text and "text_chars (default 1200)" in text and "mode (default auto)" in text


def test_the_output_schema_is_every_field_of_the_response() -> None:
    def fields_of(schema: dict[str, Any], cls: type) -> None:
        names = [f.name for f in dataclasses.fields(cls)]
        assert list(schema["properties"]) == names, cls
        hints = typing.get_type_hints(cls)
        # Required: what is never null, empty or false (the lean structured content keeps it).
        always = [
            name for name in names if hints[name] in (str, int, float) or typing.get_origin(hints[name]) is Literal
        ]
        assert schema["required"] == always, cls
        for name, prop in schema["properties"].items():
            for nested in (SearchSource, SearchCitation, SearchUsage, Attempt, Notice):
                if re.search(rf"\b{nested.__name__}\b", str(hints[name])):
                    inner = prop.get("items") or next(v for v in prop.get("anyOf", [prop]) if v.get("type") == "object")
                    fields_of(inner, nested)

    schema = output_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    fields_of(schema, SearchResponse)
    assert schema["required"] == ["provider", "query"]
    assert schema["properties"]["answer"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}


def test_the_output_schema_has_no_list_of_types_and_no_empty_schema() -> None:
    """What MCP Inspector's --strict warned of 27 times (25 lists of types, 2 empty schemas for a
    notice's value): a nullable field is `anyOf` with null, a value of any type names the types."""

    def walk(node: Any) -> Iterator[Any]:
        yield node
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for child in children:
            yield from walk(child)

    schemas = [node for node in walk(output_schema()) if isinstance(node, dict)]
    assert [s for s in schemas if isinstance(s.get("type"), list)] == []
    assert [s for s in schemas if s == {}] == []


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_tool_returns_the_response_as_structured_content_beside_the_text(
    ddg: FakeDuckDuckGo, env: dict[str, str], clock: FakeClock, mode: str
) -> None:
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    async with connect(env, clock, mode) as client:
        (tool, *_) = (await client.list_tools()).tools
        result = await client.call_tool("web_search", {"query": "q", "max_tokens": 9})
        ddg.enqueue(Reply(503, "down"))
        failed = await client.call_tool("web_search", {"query": "x"})
        bad = await client.call_tool("web_search", {"query": ""})
    assert tool.output_schema == output_schema()
    validator = Draft202012Validator(tool.output_schema)
    text = text_of(result)
    assert text.startswith("# Web search: q\n[max_tokens=9 not applied: DuckDuckGo does not support it]\n")
    data = result.structured_content
    assert data is not None and validator.is_valid(data), list(validator.iter_errors(data))
    assert list(data) == ["provider", "query", "sources", "attempts", "notices"]  # lean: nothing null or empty
    assert (data["provider"], data["query"]) == ("duckduckgo", "q")
    assert data["sources"] == [{"title": "T", "url": "https://t.example/", "snippet": "s"}]
    assert data["notices"] == [
        {
            "param": "max_tokens",
            "value": 9,
            "kind": "not_applied",
            "message": "max_tokens=9 not applied: DuckDuckGo does not support it",
        }
    ]
    assert [a["provider"] for a in data["attempts"]] == ["duckduckgo"]
    assert text_of(failed) == "SEARCH_FAILED: x — duckduckgo: DuckDuckGo HTML error (503)"
    assert failed.structured_content is not None and validator.is_valid(failed.structured_content)
    assert isinstance(failed.structured_content["error"], str) and failed.structured_content["error"]
    (attempt,) = failed.structured_content["attempts"]
    assert (attempt["provider"], attempt["status"], attempt["error"]) == (
        "duckduckgo",
        503,
        "DuckDuckGo HTML error (503)",
    )
    assert (bad.is_error, bad.structured_content) == (True, None)  # an error result is text only


def test_structured_content_is_the_response_without_null_empty_or_false_fields() -> None:
    response = SearchResponse(
        provider="brave",
        query="q",
        sources=(
            SearchSource("T", "https://t.example/", highlights=("a", "b")),
            SearchSource("U", "https://u.example/"),
        ),
        attempts=(Attempt("brave", 200, None, 1.5, notices=(not_supported("mode", "deep", "Brave"),)),),
        notices=(not_supported("include_domains", [], "Brave"), not_supported("summary", False, "Brave")),
    )
    data = structured_content(response)
    assert data == {
        "provider": "brave",
        "query": "q",
        "sources": [
            {"title": "T", "url": "https://t.example/", "highlights": ["a", "b"]},
            {"title": "U", "url": "https://u.example/"},
        ],
        "attempts": [
            {
                "provider": "brave",
                "status": 200,
                "duration_ms": 1.5,
                "notices": [
                    {
                        "param": "mode",
                        "value": "deep",
                        "kind": "not_applied",
                        "message": response.attempts[0].notices[0].message,
                    }
                ],
            }
        ],
        "notices": [  # a notice's value is what the caller sent, [] and false included
            {"param": "include_domains", "value": [], "kind": "not_applied", "message": response.notices[0].message},
            {"param": "summary", "value": False, "kind": "not_applied", "message": response.notices[1].message},
        ],
    }
    validator = Draft202012Validator(output_schema())
    whole = json.loads(render(response, "json"))["response"]  # every field, null when unset
    assert validator.is_valid(data) and validator.is_valid(whole)


# -- the transport is loaded when the server starts, or first lists its tools ---------------------


@pytest.mark.parametrize(
    ("load_at_start", "expected"), [(True, "False True True [False]"), (False, "False False True [False]")]
)
def test_the_server_loads_the_http_stack_off_the_event_loop_when_it_starts_or_first_lists_its_tools(
    tmp_path: Path, load_at_start: bool, expected: str
) -> None:
    # stdio's server (load_at_start=False) answers its handshake first: an import beside it slowed it
    code = (
        "import asyncio, sys, threading\n"
        "from mcp import Client\n"
        "import websearch\n"
        "from websearch._http import _deferred\n"
        "from websearch._faces._mcp_server import build_server\n"
        "seen = []\n"
        "def hook(event, args):\n"
        "    if event == 'import' and args[0] == 'aiohttp':\n"
        "        seen.append(threading.current_thread() is threading.main_thread())\n"
        "sys.addaudithook(hook)\n"
        "async def main():\n"
        f"    async with websearch.WebSearch(env={{'WEBSEARCH_CONFIG_DIR': {str(tmp_path)!r}}}) as ws:\n"
        f"        server = build_server(ws, load_at_start={load_at_start})\n"
        "        built = _deferred._loading is not None or 'aiohttp' in sys.modules\n"
        "        async with Client(server) as client:\n"
        "            started = _deferred._loading is not None\n"
        "            await client.list_tools()\n"
        "            listed = _deferred._loading is not None\n"
        "            await asyncio.wrap_future(_deferred._loading)\n"
        "    print(built, started, listed, seen)\n"
        "asyncio.run(main())\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PATH": ""}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    # building loads nothing; the import begins in a worker thread, and the server serves meanwhile
    assert proc.stdout == expected + "\n"


# -- searching -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_search_against_the_duckduckgo_fake_returns_blocks(
    ddg: FakeDuckDuckGo, env: dict[str, str], clock: FakeClock, mode: str
) -> None:
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    async with connect(env, clock, mode) as client:
        result = await client.call_tool("web_search", {"query": "q"})
    assert result.is_error is False
    assert text_of(result) == BLOCKS
    assert ddg.last.form()[0] == ("q", "q")


async def test_text_chars_is_clamped_for_the_rendered_body_and_disclosed(
    ddg: FakeDuckDuckGo, env: dict[str, str], clock: FakeClock
) -> None:
    ddg.results = [DdgResult("T", "https://t.example/", "x" * 500)]
    async with connect(env, clock) as client:
        text = text_of(await client.call_tool("web_search", {"query": "q", "text_chars": 50}))
    assert text.startswith("# Web search: q\n[text_chars=50 clamped to 200: allowed 200-8000]\n")
    assert "\n" + "x" * 199 + "…\n" in text


async def test_an_unusable_date_is_a_notice_not_an_error(
    ddg: FakeDuckDuckGo, env: dict[str, str], clock: FakeClock
) -> None:
    async with connect(env, clock) as client:
        result = await client.call_tool("web_search", {"query": "q", "recency_days": "soon"})
    assert result.is_error is False
    assert '[recency_days="soon" dropped: it is not a positive number]' in text_of(result).splitlines()


async def test_summary_format_from_the_setting_puts_notices_above(
    ddg: FakeDuckDuckGo, env: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    (config_dir / "settings.toml").write_text('[mcp]\nformat = "summary"\n')
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    async with connect(env, clock) as client:
        plain = text_of(await client.call_tool("web_search", {"query": "q"}))
        noted = text_of(await client.call_tool("web_search", {"query": "q", "max_tokens": 9}))
    assert plain == "[1] T\n    https://t.example/\n    s"
    assert noted == "[max_tokens=9 not applied: DuckDuckGo does not support it]\n[1] T\n    https://t.example/\n    s"


async def test_structured_output_off_from_the_setting_returns_the_text_alone(
    ddg: FakeDuckDuckGo, env: dict[str, str], clock: FakeClock, config_dir: Path
) -> None:
    (config_dir / "settings.toml").write_text("[mcp]\nstructured_output = false\n")
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    async with connect(env, clock) as client:
        (tool, *_) = (await client.list_tools()).tools
        result = await client.call_tool("web_search", {"query": "q"})
    assert (tool.output_schema, result.structured_content) == (None, None)  # no schema promising what is not sent
    assert (result.is_error, text_of(result)) == (False, BLOCKS)


def test_a_bad_structured_output_setting_is_refused(env: dict[str, str], config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text('[mcp]\nstructured_output = "no"\n')
    with pytest.raises(ConfigError, match=r"setting mcp\.structured_output must be true or false; got 'no'"):
        make_client(env=env)


def test_a_bad_mcp_format_setting_stops_the_server(env: dict[str, str], config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text('[mcp]\nformat = "json"\n')
    with pytest.raises(ConfigError, match=r"mcp.format is 'json'; use one of: blocks, summary"):
        make_client(env=env)  # refused when the settings are read, before any server is built
    proc = run_cli(["mcp"], env)
    assert proc.returncode == 2
    assert proc.stderr == "websearch: error: setting mcp.format is 'json'; use one of: blocks, summary\n"


async def test_a_failing_explicit_provider_falls_to_the_firecrawl_tier(
    brave: FakeBrave, firecrawl: FakeFirecrawl, keyed_env: dict[str, str], clock: FakeClock
) -> None:
    brave.enqueue(BRAVE_500)
    async with connect(keyed_env, clock) as client:
        result = await client.call_tool("web_search", {"query": "q", "provider": "brave"})
    assert result.is_error is False
    lines = text_of(result).splitlines()
    assert lines[:2] == ["# Web search: q", f"[served by: firecrawl search — brave unavailable: {BRAVE_FAILURE}]"]
    assert "Sources:" in lines
    assert (len(brave.requests), len(firecrawl.requests)) == (1, 1)


async def test_every_provider_failing_is_search_failed_text_not_an_error(
    brave: FakeBrave, firecrawl: FakeFirecrawl, keyed_env: dict[str, str], clock: FakeClock
) -> None:
    brave.enqueue(BRAVE_500)
    firecrawl.enqueue(FIRECRAWL_500)
    async with connect(keyed_env, clock) as client:
        result = await client.call_tool("web_search", {"query": "q", "provider": "brave"})
    assert result.is_error is False
    assert text_of(result) == f"SEARCH_FAILED: q — brave: {BRAVE_FAILURE} | firecrawl: {FIRECRAWL_FAILURE}"


async def test_search_failed_through_the_automatic_chain(
    ddg: FakeDuckDuckGo, env: dict[str, str], clock: FakeClock
) -> None:
    ddg.enqueue(Reply(503, "down"))
    async with connect(env, clock) as client:
        result = await client.call_tool("web_search", {"query": "x y"})
    assert (result.is_error, text_of(result)) == (False, "SEARCH_FAILED: x y — duckduckgo: DuckDuckGo HTML error (503)")


async def test_no_provider_at_all_is_search_failed_with_the_chain_message(config_dir: Path, clock: FakeClock) -> None:
    (config_dir / "settings.toml").write_text('[providers]\nwebSearchExclude = ["duckduckgo"]\n')
    async with connect({"WEBSEARCH_CONFIG_DIR": str(config_dir)}, clock) as client:
        result = await client.call_tool("web_search", {"query": "q"})
    assert text_of(result) == "SEARCH_FAILED: q — No web search provider configured."


def test_search_failed_keeps_the_notices_on_the_lines_below() -> None:
    response = SearchResponse(
        provider="brave",
        query="q",
        attempts=(Attempt("brave", 500, BRAVE_FAILURE, 1.0),),
        notices=(not_supported("mode", "deep", "Brave"),),
        error=BRAVE_FAILURE,
    )
    assert tool_text(response, "summary") == (
        f'SEARCH_FAILED: q — brave: {BRAVE_FAILURE}\n[mode="deep" not applied: Brave does not support it]'
    )


# -- bad arguments -------------------------------------------------------------------------------

BAD_ARGUMENTS = [
    ({}, "query", "query must be a non-empty string; got nothing"),
    ({"query": None}, "query", "query must be a non-empty string; got nothing"),
    ({"query": ""}, "query", 'query must be a non-empty string; got ""'),
    ({"query": "  "}, "query", 'query must be a non-empty string; got "  "'),
    ({"query": 7}, "query", "query must be a non-empty string; got 7"),
    ({"query": "q", "num_results": 0}, "num_results", "num_results must be a whole number of at least 1; got 0"),
    ({"query": "q", "limit": "ten"}, "limit", 'limit must be a whole number of at least 1; got "ten"'),
    (
        {"query": "q", "num_results": 3, "limit": 4},
        "limit",
        "limit must be equal to num_results or left out (they name one parameter); got 4 and num_results=3",
    ),
    (
        {"query": "q", "limit": 4, "num_results": 3},
        "num_results",
        "num_results must be equal to limit or left out (they name one parameter); got 3 and limit=4",
    ),
    (
        {"query": "q", "mode": "turbo"},
        "mode",
        'mode must be one of: auto, fast, instant, deep-lite, deep, deep-reasoning, neural, keyword; got "turbo"',
    ),
    ({"query": "q", "recency": "hour"}, "recency", 'recency must be one of: day, week, month, year; got "hour"'),
    ({"query": "q", "text_chars": 1.5}, "text_chars", "text_chars must be a whole number of at least 1; got 1.5"),
    ({"query": "q", "category": 7}, "category", "category must be a non-empty string; got 7"),
    (
        {"query": "q", "include_domains": ["a.com", 3]},
        "include_domains",
        'include_domains must be a list of domain names (non-blank strings); got ["a.com", 3]',
    ),
    (  # it was left out without a word
        {"query": "q", "exclude_domains": ["a.com", " "]},
        "exclude_domains",
        'exclude_domains must be a list of domain names (non-blank strings); got ["a.com", " "]',
    ),
    ({"query": "q", "summary": "yes"}, "summary", 'summary must be true or false; got "yes"'),
    ({"query": "q", "temperature": 3}, "temperature", "temperature must be a number from 0 to 2; got 3"),
    (
        {"query": "q", "provider": "brave"},
        "provider",
        'provider must be one of: auto, duckduckgo, public; got "brave" (not available here: set BRAVE_API_KEY or run '
        "`websearch auth set brave`)",
    ),
    (
        {"query": "q", "provider": "altavista"},
        "provider",
        'provider must be one of: auto, duckduckgo, public; got "altavista"',
    ),
    (
        {"query": "q", "colour": "red"},
        "colour",
        "colour must be left out (web_search's arguments are: " + ", ".join(PARAMETERS) + '); got "red"',
    ),
    (
        {"query": "q", "recency_day": 3},
        "recency_day",
        "recency_day must be left out (did you mean recency_days?) (web_search's arguments are: "
        + ", ".join(PARAMETERS)
        + "); got 3",
    ),
]
#: Numbers past JSON's exact integers (one failed the search in the cache key's encoder): refused
#: by the checks, not by the schema, which would tell every model a ceiling no search comes near.
HUGE = [
    (
        {"query": "q", "num_results": 10**30},
        "num_results",
        f"num_results must be a whole number from 1 to {2**53 - 1}; got {10**30}",
    ),
    (
        {"query": "q", "recency_days": -(10**30)},
        "recency_days",
        f"recency_days must be a number from -{2**53 - 1} to {2**53 - 1}; got {-(10**30)}",
    ),
]
ALIAS_PAIRS = [args for args, _, _ in BAD_ARGUMENTS if "num_results" in args and "limit" in args]
BAD_ARGUMENTS += HUGE


@pytest.mark.parametrize(("arguments", "param", "message"), BAD_ARGUMENTS)
async def test_bad_arguments_are_an_error_result_naming_the_argument(
    ddg: FakeDuckDuckGo, env: dict[str, str], clock: FakeClock, arguments: dict[str, Any], param: str, message: str
) -> None:
    async with connect(env, clock, providers=["brave", "duckduckgo"]) as client:  # brave: no key, never asked
        result = await client.call_tool("web_search", arguments)
    assert result.is_error is True
    assert text_of(result) == f"Invalid argument `{param}`: {message}"
    assert ddg.requests == []


@pytest.mark.parametrize(("arguments", "param", "message"), BAD_ARGUMENTS)
def test_every_argument_error_reads_name_must_be_requirement_got_value(
    arguments: dict[str, Any], param: str, message: str
) -> None:
    with pytest.raises(InvalidSearchParams) as info:
        parse_arguments(arguments, ["duckduckgo", "public"])  # what the tool offers here
    assert (info.value.param, info.value.message) == (param, message.split(" (not available here")[0])
    assert re.fullmatch(rf"{param} must be [^;]+; got .+", info.value.message)


@pytest.mark.parametrize(("arguments", "param", "message"), BAD_ARGUMENTS)
def test_the_schema_refuses_what_the_checks_refuse(arguments: dict[str, Any], param: str, message: str) -> None:
    valid = Draft202012Validator(input_schema(["duckduckgo", "public"])).is_valid(arguments)
    # One parameter under two names is past what a schema can say; HUGE, past what it need say.
    assert valid is (arguments in ALIAS_PAIRS or any(arguments == huge for huge, _, _ in HUGE))


async def test_an_unknown_tool_is_an_error_result(env: dict[str, str], clock: FakeClock) -> None:
    async with connect(env, clock) as client:
        result = await client.call_tool("web_crawl", {"url": "https://x.example/"})
    assert (result.is_error, text_of(result)) == (
        True,
        "Unknown tool 'web_crawl'; this server's tools are: web_search, web_fetch, web_research",
    )


def test_arguments_get_the_mcp_defaults_and_nulls_count_as_not_given() -> None:
    call = parse_arguments({"query": "q", "mode": None, "provider": None}, ["duckduckgo"])
    assert (call.query, call.provider, call.params, call.text_chars) == (
        "q",
        None,
        {"limit": 8, "text_chars": 1200},
        1200,
    )
    call = parse_arguments({"query": "q", "limit": 3.0, "text_chars": 9000, "recency_days": "7"}, [])
    assert call.params == {"limit": 3, "text_chars": 9000, "recency_days": "7"}  # the filters clamp (with a notice)
    assert call.text_chars == 8000  # what the renderer cuts at
    assert parse_arguments({"query": "q", "num_results": 5, "limit": 5}, []).params["limit"] == 5
    assert parse_arguments({"query": "q", "include_domains": "a.com"}, []).params["include_domains"] == ("a.com",)
    with pytest.raises(InvalidSearchParams) as info:
        parse_arguments({"query": "q", "max_tokens": True}, [])
    assert info.value.param == "max_tokens"


# -- a real stdio subprocess ---------------------------------------------------------------------


def server_env(env: dict[str, str]) -> dict[str, str]:
    """What the server subprocess sees: `env`, our tests on its path (for the network guard)."""
    return cli_env(env)


def test_a_stdio_client_gone_ends_the_server_quietly(env: dict[str, str]) -> None:
    """The client stopped reading (it went away): the server's next answer meets a broken pipe,
    and the server ends with 141 and no traceback, as `websearch search q | head -1` does."""
    proc = subprocess.Popen(
        [sys.executable, str(TESTS / "guarded_cli.py"), "mcp"],
        env=server_env(env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        proc.stdin.flush()

    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    send({"id": 1, "method": "initialize", "params": hello})
    assert json.loads(proc.stdout.readline())["id"] == 1  # up and answering
    send({"method": "notifications/initialized"})
    proc.stdout.close()  # gone: the next answer fails
    send({"id": 2, "method": "tools/list"})
    time.sleep(1.0)  # the answer is written within milliseconds of the request
    proc.stdin.close()
    proc.wait(timeout=20)
    assert (proc.returncode, proc.stderr.read().decode()) == (141, "")


async def test_stdio_subprocess_lists_searches_falls_back_and_rejects_bad_arguments(
    ddg: FakeDuckDuckGo, brave: FakeBrave, firecrawl: FakeFirecrawl, keyed_env: dict[str, str], tmp_path: Path
) -> None:
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    brave.enqueue(BRAVE_500, BRAVE_500)
    params = StdioServerParameters(
        command=sys.executable, args=[str(TESTS / "guarded_cli.py"), "mcp"], env=server_env(keyed_env)
    )
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as err:
        async with Client(stdio_client(params, errlog=err)) as client:
            (tool, *_) = (await client.list_tools()).tools
            blocks = await client.call_tool("web_search", {"query": "q", "provider": "duckduckgo"})
            fallback = await client.call_tool("web_search", {"query": "q", "provider": "brave"})
            firecrawl.enqueue(FIRECRAWL_500)  # the first fallback got the fake's default answer; now it fails too
            failed = await client.call_tool("web_search", {"query": "q", "provider": "brave"})
            bad = await client.call_tool("web_search", {"query": "q", "num_results": -1})
    assert tool.name == "web_search"
    assert tool.input_schema["properties"]["provider"]["enum"] == ["auto", "firecrawl", "brave", "duckduckgo", "public"]
    assert (blocks.is_error, text_of(blocks)) == (False, BLOCKS)
    assert tool.output_schema == output_schema()
    assert blocks.structured_content is not None and blocks.structured_content["provider"] == "duckduckgo"
    assert text_of(fallback).splitlines()[1] == f"[served by: firecrawl search — brave unavailable: {BRAVE_FAILURE}]"
    assert text_of(failed) == f"SEARCH_FAILED: q — brave: {BRAVE_FAILURE} | firecrawl: {FIRECRAWL_FAILURE}"
    assert (bad.is_error, text_of(bad)) == (
        True,
        "Invalid argument `num_results`: num_results must be a whole number of at least 1; got -1",
    )
    assert "NETGUARD" not in errlog.read_text()


# -- streamable HTTP -----------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_port(env: dict[str, str]) -> Iterator[int]:
    """`websearch mcp --http` on a free loopback port, under the network guard; stopped with Ctrl-C."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(TESTS / "guarded_cli.py"), "mcp", "--http", "--port", str(port)],
        env=server_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        assert proc.stderr.readline() == f"websearch MCP server on http://127.0.0.1:{port}/mcp\n"
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "the server did not start listening"
                time.sleep(0.05)
        yield port
    finally:
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=20)
    assert (proc.returncode, stderr) == (130, "websearch: interrupted\n")  # Ctrl-C: the CLI's exit status, no traceback


async def test_streamable_http_server_on_loopback(ddg: FakeDuckDuckGo, http_port: int) -> None:
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    async with (
        httpx2.AsyncClient(trust_env=False, timeout=30) as http,
        Client(streamable_http_client(f"http://127.0.0.1:{http_port}/mcp", http_client=http)) as client,
    ):
        (tool, *_) = (await client.list_tools()).tools
        result = await client.call_tool("web_search", {"query": "q"})
    assert tool.input_schema["properties"]["provider"]["enum"] == ["auto", "duckduckgo", "public"]
    assert (result.is_error, text_of(result)) == (False, BLOCKS)


# -- websearch schema ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "key", "schema_key"),
    [("openai", "function", "parameters"), ("anthropic", None, "input_schema"), ("mcp", None, "inputSchema")],
)
def test_schema_command_prints_each_envelope(env: dict[str, str], fmt: str, key: str | None, schema_key: str) -> None:
    proc = run_cli(["schema", "--format", fmt], env)
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    assert printed == tool_definition(fmt)
    body = printed[key] if key else printed
    if fmt == "openai":
        assert printed["type"] == "function"
    assert set(body) == {"name", "description", schema_key}
    assert body["name"] == "web_search" and body["description"] == description()
    assert body[schema_key] == input_schema()
    assert body[schema_key]["properties"]["provider"]["enum"] == ["auto", *SEARCH_PROVIDER_ORDER]


def test_schema_available_restricts_the_provider_enum(env: dict[str, str]) -> None:
    proc = run_cli(
        ["schema", "--available"], {**env, "BRAVE_API_KEY": "k", "WEBSEARCH_PROVIDERS": "tavily,brave,duckduckgo"}
    )
    assert json.loads(proc.stdout)["inputSchema"]["properties"]["provider"]["enum"] == [
        "auto",
        "brave",
        "duckduckgo",
        "public",
    ]


def test_every_schema_property_comes_from_the_argument_table() -> None:
    assert [arg.name for arg in ARGUMENTS] == PARAMETERS
    assert input_schema(["x"])["additionalProperties"] is False


# -- cold paths ----------------------------------------------------------------------------------

HEAVY = (
    "mcp",
    "mcp_types",
    "pydantic",
    "aiohttp",
    "uvicorn",
    "starlette",
    "websearch._providers",
    "websearch._http._transport",
)


@pytest.mark.parametrize("argv", [["--help"], ["mcp", "--help"], ["schema"], ["schema", "--available"]])
def test_schema_and_help_import_nothing_heavy(tmp_path: Path, argv: list[str]) -> None:
    code = (
        "import sys, io, contextlib\n"
        "from websearch._faces._cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    try: main({argv!r})\n"
        "    except SystemExit: pass\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"WEBSEARCH_CONFIG_DIR": str(tmp_path), "PATH": ""},
    )
    assert proc.returncode == 0, proc.stderr
    loaded = proc.stdout.split()
    assert [m for m in loaded if m.split(".")[0] in HEAVY or m.startswith(HEAVY[-2:])] == []


def test_mcp_without_the_extra_says_how_to_install_it(tmp_path: Path) -> None:
    code = "import sys\nsys.modules['mcp'] = None\nfrom websearch._faces._cli import main\nraise SystemExit(main(['mcp']))\n"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"WEBSEARCH_CONFIG_DIR": str(tmp_path), "PATH": ""},
    )
    assert proc.returncode == 2
    assert proc.stderr == "websearch: error: the MCP server needs the mcp extra: pip install 'websearch-hub[mcp]'\n"
