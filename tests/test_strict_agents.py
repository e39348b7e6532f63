"""Strict-mode agents: the served `tools/list` schema made strict by openai-agents' and LangChain's
converters (every property required, none nullable), and the call a strict model then sends,
every property present at its default or a plain value, through MCP stdio and HTTP."""

from __future__ import annotations

import copy
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from conftest import TESTS, cli_env, make_client
from serve_helper import TOKEN, InProcess, async_http
from websearch import InvalidSearchParams, SearchResponse
from websearch._core._clock import SystemClock
from websearch._faces._tool import ARGUMENTS, parse_arguments
from websearch._state import MemoryStore
from websearch.testing import DdgResult, FakeDuckDuckGo


def openai_agents_strict(tool: Any) -> dict[str, Any]:
    """What openai-agents' `convert_schemas_to_strict` makes of an MCP tool's input schema."""
    from agents.strict_schema import ensure_strict_json_schema

    return ensure_strict_json_schema(copy.deepcopy(tool.input_schema))


def langchain_strict(tool: Any) -> dict[str, Any]:
    """What LangChain's `convert_to_openai_tool(strict=True)` makes of it."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    shape = {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
    converted = convert_to_openai_tool(shape, strict=True)
    assert converted["function"]["strict"] is True
    parameters: dict[str, Any] = converted["function"]["parameters"]
    return parameters


CONVERTERS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "openai-agents": openai_agents_strict,
    "langchain": langchain_strict,
}


def plain_value(prop: dict[str, Any]) -> Any:
    """A property's default, else the plainest value its schema admits (what a strict model fills in)."""
    if "default" in prop:
        return prop["default"]
    if "enum" in prop:
        return prop["enum"][0]
    kind = prop["type"]
    if kind in ("integer", "number"):
        return prop.get("minimum", 0)
    return {"string": "", "boolean": False, "array": []}[kind]


def strict_call(schema: dict[str, Any], **chosen: Any) -> dict[str, Any]:
    """The instance a strict model sends: every property, at its plain value unless `chosen`;
    checked against the strict schema (a strict model can send nothing else)."""
    assert schema["required"] == list(schema["properties"]) and schema["additionalProperties"] is False
    call = {name: plain_value(prop) for name, prop in schema["properties"].items()}
    call.update(query="strict q", **chosen)
    validator = Draft202012Validator(schema)
    assert validator.is_valid(call), [e.message for e in validator.iter_errors(call)]
    return call


def calls_of(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls a strict model makes: the plain one, a fanout (provider auto beside it), a provider."""
    return [
        strict_call(schema),
        strict_call(schema, provider="auto", fanout=["duckduckgo"]),
        strict_call(schema, provider="duckduckgo", num_results=3),
    ]


def check_results(results: list[Any]) -> None:
    plain, fanout, chosen = results
    for result in results:
        assert result.is_error is False, result.content[0].text
        assert result.content[0].text.startswith("# Web search: strict q\n")
    assert plain.structured_content["provider"] == "duckduckgo"
    assert fanout.structured_content["provider"] == "fanout"
    assert chosen.structured_content["provider"] == "duckduckgo"


@pytest.fixture
def one_result(ddg: FakeDuckDuckGo) -> FakeDuckDuckGo:
    ddg.results = [DdgResult("T", "https://t.example/", "s")]
    return ddg


@asynccontextmanager
async def over_stdio(env: dict[str, str], tmp_path: Path) -> AsyncIterator[Client]:
    """`websearch mcp` as a subprocess under the network guard."""
    params = StdioServerParameters(
        command=sys.executable, args=[str(TESTS / "guarded_cli.py"), "mcp"], env=cli_env(env)
    )
    with (tmp_path / "stderr.txt").open("w") as err:
        async with Client(stdio_client(params, errlog=err)) as client:
            yield client
    assert "NETGUARD" not in (tmp_path / "stderr.txt").read_text()


@asynccontextmanager
async def over_http(env: dict[str, str], tmp_path: Path) -> AsyncIterator[Client]:
    """The `/mcp` of `websearch serve` (streamable HTTP), on a loopback port."""
    with InProcess(make_client(env=env, store=MemoryStore(SystemClock()))) as server:
        async with (
            async_http(server.url, TOKEN) as http,
            Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client,
        ):
            yield client


@pytest.mark.parametrize("converter", CONVERTERS)
@pytest.mark.parametrize("transport", [over_stdio, over_http], ids=["stdio", "http"])
async def test_a_strict_model_calls_the_tool_through_mcp(
    one_result: FakeDuckDuckGo,
    env: dict[str, str],
    tmp_path: Path,
    converter: str,
    transport: Callable[[dict[str, str], Path], Any],
) -> None:
    async with transport(env, tmp_path) as client:
        (tool, *_) = (await client.list_tools()).tools
        schema = CONVERTERS[converter](tool)
        results = [await client.call_tool("web_search", call) for call in calls_of(schema)]
    check_results(results)


@pytest.mark.parametrize("converter", CONVERTERS)
async def test_a_strict_call_at_plain_values_is_the_plain_call(converter: str) -> None:
    """Each property at its default or plain value asks for nothing: null, empty, the default and
    a 0 that means nothing are "not given"; only what has no such value (recency's enum, a
    temperature) stays, and provider auto (the automatic chain, the first of its enum)."""
    from types import SimpleNamespace

    from websearch._faces._tool import tool_definition

    served = tool_definition("mcp", ["duckduckgo", "public"])
    tool = SimpleNamespace(name=served["name"], description=served["description"], input_schema=served["inputSchema"])
    schema = CONVERTERS[converter](tool)
    call = strict_call(schema)
    # no value of theirs says nothing (safesearch's enum, like recency's, has no "not given")
    neutral = {name: call[name] for name in ("recency", "temperature", "safesearch", "provider")}
    assert parse_arguments(call, ["duckduckgo", "public"]) == parse_arguments(
        {"query": "strict q", **neutral}, ["duckduckgo", "public"]
    )
    chosen = parse_arguments({**call, "provider": "auto", "fanout": ["duckduckgo"]}, ["duckduckgo", "public"])
    assert (chosen.provider, chosen.params["fanout"]) == (None, ("duckduckgo",))


NOT_GIVEN = [
    *[(arg.name, "") for arg in ARGUMENTS if arg.name != "query" and arg.param.json_type == "string"],
    *[(arg.name, "  ") for arg in ARGUMENTS if arg.name != "query" and arg.param.json_type == "string"],
    *[(arg.name, []) for arg in ARGUMENTS if arg.param.json_type == "array"],
    *[(arg.name, arg.default) for arg in ARGUMENTS if arg.default is not None],
    *[(arg.name, 0) for arg in ARGUMENTS if arg.zero_unset],
]


@pytest.mark.parametrize(("name", "value"), NOT_GIVEN)
def test_empty_and_default_values_are_not_given(name: str, value: Any) -> None:
    assert parse_arguments({"query": "q", name: value}, ["duckduckgo"]) == parse_arguments(
        {"query": "q"}, ["duckduckgo"]
    )


def test_zero_is_not_false_nor_a_default_of_another_type() -> None:
    with pytest.raises(InvalidSearchParams) as info:
        parse_arguments({"query": "q", "summary": 0}, [])
    assert info.value.message == "summary must be true or false; got 0"
    assert parse_arguments({"query": "q", "temperature": 0}, []).params["temperature"] == 0  # a temperature of its own


def test_a_chosen_provider_beside_a_fanout_is_refused_naming_provider() -> None:
    with pytest.raises(InvalidSearchParams) as info:
        parse_arguments({"query": "q", "provider": "duckduckgo", "fanout": ["duckduckgo"]}, ["duckduckgo"])
    assert (info.value.param, info.value.message) == (
        "provider",
        "provider must be auto or left out when fanout is given (fanout asks several providers at once, provider "
        'one: give one of them); got "duckduckgo" with fanout=["duckduckgo"]',
    )
    with pytest.raises(InvalidSearchParams) as unknown:
        parse_arguments({"query": "q", "fanout": ["altavista"]}, ["duckduckgo", "public"])
    assert (unknown.value.param, unknown.value.message) == (
        "fanout",
        'fanout must be a list of: duckduckgo; got ["altavista"]',
    )


async def test_the_library_takes_auto_beside_a_fanout_and_names_provider_in_a_conflict(
    one_result: FakeDuckDuckGo, env: dict[str, str]
) -> None:
    async with make_client(env=env, store=MemoryStore(SystemClock())) as ws:
        response: SearchResponse = await ws.asearch("q", provider="auto", fanout=["duckduckgo"])
        with pytest.raises(InvalidSearchParams) as info:
            await ws.asearch("q", provider="duckduckgo", fanout=["duckduckgo"])
    assert (response.error, response.provider) == (None, "fanout")
    assert info.value.param == "provider"


# -- the reading tools ---------------------------------------------------------------------------

QUIC_PAGE = "<html><head><title>QUIC</title></head><body><article><h1>QUIC</h1><p>QUIC streams are independent of each other, so one lost packet stalls one stream.</p></article></body></html>"


def reading_call(schema: dict[str, Any], **chosen: Any) -> dict[str, Any]:
    """A strict model's call of a reading tool: every property at its plain value unless `chosen`."""
    assert schema["required"] == list(schema["properties"]) and schema["additionalProperties"] is False
    call = {name: plain_value(prop) for name, prop in schema["properties"].items()}
    call.update(chosen)
    validator = Draft202012Validator(schema)
    assert validator.is_valid(call), [e.message for e in validator.iter_errors(call)]
    return call


@pytest.mark.parametrize("converter", CONVERTERS)
def test_a_strict_reading_call_at_plain_values_is_the_plain_call(converter: str) -> None:
    from types import SimpleNamespace

    from websearch._faces._read_tools import (
        fetch_description,
        fetch_input_schema,
        parse_fetch,
        parse_research,
        research_description,
        research_input_schema,
    )

    fetch = SimpleNamespace(name="web_fetch", description=fetch_description(), input_schema=fetch_input_schema())
    research_schema = research_input_schema(["duckduckgo", "public"])
    research = SimpleNamespace(name="web_research", description=research_description(), input_schema=research_schema)
    fetch_call = reading_call(CONVERTERS[converter](fetch), url="http://a.test/")
    assert parse_fetch(fetch_call) == parse_fetch({"url": "http://a.test/"})
    research_call = reading_call(CONVERTERS[converter](research), query="strict q")
    assert parse_research(research_call, ["duckduckgo", "public"]) == parse_research(
        {"query": "strict q", "provider": "auto"}, ["duckduckgo", "public"]
    )
    fanout = {**research_call, "provider": "auto", "fanout": ["duckduckgo"]}
    assert parse_research(fanout, ["duckduckgo", "public"]).search == {"fanout": ["duckduckgo"]}


@pytest.mark.parametrize("converter", CONVERTERS)
@pytest.mark.parametrize("transport", [over_stdio, over_http], ids=["stdio", "http"])
async def test_a_strict_model_calls_the_reading_tools_through_mcp(
    ddg: FakeDuckDuckGo,
    env: dict[str, str],
    config_dir: Path,
    tmp_path: Path,
    converter: str,
    transport: Callable[[dict[str, str], Path], Any],
) -> None:
    from websearch.testing import FakeSite

    with FakeSite({"/quic": QUIC_PAGE}) as site:
        site.write_settings(config_dir)
        url = site.url("/quic", host="127.0.0.1")
        ddg.results = [DdgResult("QUIC", url, "QUIC streams")]
        async with transport(env, tmp_path) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            fetch_schema = CONVERTERS[converter](tools["web_fetch"])
            research_schema = CONVERTERS[converter](tools["web_research"])
            page = await client.call_tool("web_fetch", reading_call(fetch_schema, url=url))
            research = await client.call_tool("web_research", reading_call(research_schema, query="quic streams"))
    assert page.is_error is False, page.content[0].text
    assert page.content[0].text.startswith("# QUIC\n")
    assert research.is_error is False, research.content[0].text
    assert research.structured_content["sources"][0]["url"] == url
