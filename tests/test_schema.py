"""The tool as agents see it: strict schemas, the description's length, schema and checks agreeing, help text."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import FunctionToolParam
from openai.types.shared_params import FunctionDefinition
from pydantic import TypeAdapter

from conftest import run_cli
from websearch._faces._cli import build_parser
from websearch._faces._tool import SCHEMA_FORMATS, description, input_schema, parse_arguments, tool_definition

OPENAI_DESCRIPTION_LIMIT = 1024  # what the OpenAI API accepts for a function's description


def strict_parameters(fmt: str) -> dict[str, Any]:
    definition = tool_definition(fmt, strict=True)
    return definition["function"]["parameters"] if fmt == "openai" else definition["parameters"]


def every_key(schema: Any) -> set[str]:
    if isinstance(schema, dict):
        return set(schema).union(*(every_key(v) for v in schema.values()))
    if isinstance(schema, list):
        return set().union(*(every_key(v) for v in schema))
    return set()


def keys_of(typed_dict: Any) -> tuple[frozenset[str], frozenset[str]]:
    return typed_dict.__required_keys__, typed_dict.__required_keys__ | typed_dict.__optional_keys__


# -- strict schemas ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["openai", "openai-responses"])
def test_strict_schema_is_left_as_it_is_by_the_openai_strict_converters(fmt: str) -> None:
    from agents.strict_schema import ensure_strict_json_schema
    from openai.lib._pydantic import _ensure_strict_json_schema

    schema = strict_parameters(fmt)
    assert ensure_strict_json_schema(copy.deepcopy(schema)) == schema  # openai-agents' convert_schemas_to_strict
    mine = copy.deepcopy(schema)
    assert _ensure_strict_json_schema(mine, path=(), root=mine) == schema  # the openai SDK's own
    Draft202012Validator.check_schema(schema)


def test_strict_schema_requires_every_property_admits_null_and_has_no_default_and_no_alias() -> None:
    schema = input_schema(strict=True)
    properties = schema["properties"]
    assert schema["required"] == list(properties)
    assert schema["additionalProperties"] is False
    assert "limit" not in properties and "num_results" in properties
    assert "default" not in every_key(schema)
    validator = Draft202012Validator(schema)
    every_null = {name: None for name in properties}
    for name in properties:
        if name != "query":
            assert validator.is_valid({**every_null, "query": "q", name: None}), name
    assert not validator.is_valid({**every_null, "query": None})  # the query is the one thing never null
    assert not validator.is_valid({**every_null, "query": "q", "limit": 3})
    assert not validator.is_valid({"query": "q"})  # strict: every property is sent


def test_strict_defaults_are_said_in_the_descriptions_now_that_default_is_gone() -> None:
    properties = input_schema(strict=True)["properties"]
    assert properties["num_results"]["description"].endswith("Null: 8.")
    assert properties["text_chars"]["description"].endswith("Null: 1200.")
    assert "num_results (default 8)" in description(strict=True)
    assert "limit" not in re.findall(r"\w+", description(strict=True))


def test_envelopes_are_the_openai_sdks_own_types() -> None:
    for strict in (False, True):
        chat = tool_definition("openai", strict=strict)
        TypeAdapter(ChatCompletionToolParam).validate_python(chat)
        required, allowed = keys_of(ChatCompletionToolParam)
        assert required <= set(chat) <= allowed
        required, allowed = keys_of(FunctionDefinition)
        assert required <= set(chat["function"]) <= allowed
        assert chat["function"].get("strict", False) is strict

        responses = tool_definition("openai-responses", strict=strict)
        TypeAdapter(FunctionToolParam).validate_python(responses)
        required, allowed = keys_of(FunctionToolParam)
        assert required <= set(responses) <= allowed
        assert responses["type"] == "function" and responses["name"] == "web_search"
        assert responses["strict"] is strict  # said either way: the Responses API needs the key
        assert responses["parameters"] == input_schema(strict=strict)


def test_strict_is_only_for_the_openai_formats() -> None:
    for fmt in SCHEMA_FORMATS:
        if fmt.startswith("openai"):
            continue
        with pytest.raises(ValueError, match="strict"):
            tool_definition(fmt, strict=True)


@pytest.mark.parametrize("fmt", ["openai", "openai-responses"])
def test_schema_command_prints_the_strict_definition(env: dict[str, str], fmt: str) -> None:
    proc = run_cli(["schema", "--format", fmt, "--strict"], env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == tool_definition(fmt, strict=True)
    plain = run_cli(["schema", "--format", fmt], env)
    assert json.loads(plain.stdout) == tool_definition(fmt)


def test_schema_command_refuses_strict_for_other_formats(env: dict[str, str]) -> None:
    proc = run_cli(["schema", "--format", "anthropic", "--strict"], env)
    assert proc.returncode == 2
    assert proc.stderr == "websearch: error: --strict needs --format openai or openai-responses\n"


def test_a_strict_call_sending_every_property_mostly_null_is_the_plain_call() -> None:
    schema = input_schema(["duckduckgo"], strict=True)
    every_null: dict[str, Any] = {name: None for name in schema["properties"]}
    call = {**every_null, "query": "q"}
    assert Draft202012Validator(schema).is_valid(call)
    assert parse_arguments(call, ["duckduckgo"]) == parse_arguments({"query": "q"}, ["duckduckgo"])
    chosen = {**call, "num_results": 3, "recency": "week", "provider": "duckduckgo"}
    assert Draft202012Validator(schema).is_valid(chosen)
    parsed = parse_arguments(chosen, ["duckduckgo"])
    assert (parsed.provider, parsed.params) == ("duckduckgo", {"limit": 3, "recency": "week", "text_chars": 1200})


# -- the description -----------------------------------------------------------------------------


@pytest.mark.parametrize("strict", [False, True])
def test_the_description_fits_1024_characters(strict: bool) -> None:
    assert len(description(strict=strict)) <= OPENAI_DESCRIPTION_LIMIT
    for fmt in SCHEMA_FORMATS:
        if strict and not fmt.startswith("openai"):
            continue
        text = json.dumps(tool_definition(fmt, strict=strict))
        assert json.dumps(description(strict=strict)) in text
    long_help = input_schema()["properties"]["start_published_date"]["description"]
    assert "wins over recency_hours" in long_help  # the per-parameter detail stays in the properties


# -- schema and checks agree ---------------------------------------------------------------------


@pytest.mark.parametrize("strict", [False, True])
def test_the_schema_refuses_an_empty_or_blank_query(strict: bool) -> None:
    schema = input_schema(strict=strict)
    rest: dict[str, Any] = {name: None for name in schema["properties"]} if strict else {}
    validator = Draft202012Validator(schema)
    assert not validator.is_valid({**rest, "query": ""})
    assert not validator.is_valid({**rest, "query": "   "})
    assert not validator.is_valid({**rest, "query": "\t\n"})
    assert validator.is_valid({**rest, "query": "q"})
    assert validator.is_valid({**rest, "query": "  q  "})
    assert validator.is_valid({**rest, "query": "q", "category": " "})  # a blank category is not given
    query = schema["properties"]["query"]
    assert query["pattern"] == "\\S"
    if not strict:
        assert query["minLength"] == 1


# -- help text -----------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["--help"], ["search", "--help"], ["schema", "--help"], ["mcp", "--help"]])
def test_help_names_no_document_the_package_does_not_ship(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(argv)
    text = capsys.readouterr().out
    assert "usage: websearch" in text
    assert re.findall(r"[\w./-]+\.md\b", text) == []


# -- from the library ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "strict"), [*((fmt, False) for fmt in SCHEMA_FORMATS), ("openai", True), ("openai-responses", True)]
)
def test_the_library_gives_what_the_schema_command_prints(env: dict[str, str], fmt: str, strict: bool) -> None:
    import websearch

    proc = run_cli(["schema", "--format", fmt, *(["--strict"] if strict else [])], env)
    assert proc.returncode == 0, proc.stderr
    assert websearch.tool_schema(fmt, strict=strict) == json.loads(proc.stdout)  # type: ignore[arg-type]
    available = run_cli(["schema", "--format", fmt, "--available"], env)
    assert websearch.tool_schema(fmt, providers=["duckduckgo", "public"]) == json.loads(available.stdout)  # type: ignore[arg-type]


def test_the_library_schema_refuses_an_unknown_format_provider_or_strictness() -> None:
    import websearch

    with pytest.raises(ValueError, match="unknown schema format 'gemini'"):
        websearch.tool_schema("gemini")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown provider 'altavista'"):
        websearch.tool_schema(providers=["brave", "altavista"])
    with pytest.raises(ValueError, match="providers must be a list of provider ids; got the string 'brave'"):
        websearch.tool_schema(providers="brave")
    with pytest.raises(ValueError, match="strict"):
        websearch.tool_schema("anthropic", strict=True)
    assert "tool_schema" in websearch.__all__


def test_tool_schema_is_loaded_lazily(tmp_path: Path) -> None:
    code = "import sys, websearch\nbefore = 'websearch._faces._tool' in sys.modules\nwebsearch.tool_schema\nprint(before)\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PATH": ""}, timeout=60)
    assert (proc.returncode, proc.stdout) == (0, "False\n"), proc.stderr
