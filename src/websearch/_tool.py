"""The `web_search` tool an agent sees: its JSON schema, its description, and argument checking.

Shared by the MCP server and `websearch schema`. Light on purpose: no MCP SDK, no HTTP stack, no
provider module is imported here, so printing the schema stays as cheap as `websearch --help`.

Everything about a parameter (type, bounds, help, default, its MCP names) comes from the one
parameter table, `websearch._params.PARAMS`; `parse_arguments` checks with the same validator
as `SearchParams`. The date-ladder arguments are checked leniently: an unusable value falls
through the ladder with a notice (see `websearch._filters`), never an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from ._params import PARAMS, TEXT_CHARS_RANGE, Param, check, got
from ._registry import SEARCH_PROVIDER_ORDER
from .errors import InvalidSearchParams

if TYPE_CHECKING:
    from ._client import ProviderStatus

__all__ = [
    "ARGUMENTS",
    "DEFAULT_NUM_RESULTS",
    "SCHEMA_FORMATS",
    "TOOL_NAME",
    "Argument",
    "SchemaFormat",
    "ToolCall",
    "description",
    "failure_text",
    "input_schema",
    "offered_providers",
    "parse_arguments",
    "tool_definition",
]

TOOL_NAME: Final = "web_search"
DEFAULT_NUM_RESULTS: Final = 8
SchemaFormat = Literal["mcp", "openai", "anthropic"]
SCHEMA_FORMATS: Final[tuple[str, ...]] = get_args(SchemaFormat)


@dataclass(frozen=True, slots=True)
class Argument:
    """One tool argument: its name as the agent writes it, the parameter it sets, its help and default."""

    name: str
    param: Param
    description: str
    default: Any = None


_QUERY: Final = Param("query", "string", "What to search for.")
_PROVIDER: Final = Param(
    "provider",
    "enum",
    "Which search provider to use: auto (the automatic chain) or one listed. When omitted, the configured "
    "preference is used. A chosen provider that fails is followed by the fallback tier (Firecrawl by default, "
    "when configured).",
)
#: The MCP tool's own defaults where the library has none (the library returns what the provider gives).
_TOOL_DEFAULTS: Final = {"num_results": DEFAULT_NUM_RESULTS}


def _arguments() -> tuple[Argument, ...]:
    args = [Argument("query", _QUERY, _QUERY.help)]
    for param in PARAMS:
        for i, name in enumerate(param.mcp):
            help = param.help if i == 0 else f"Another name for {param.mcp[0]}; give one of the two."
            args.append(Argument(name, param, help, _TOOL_DEFAULTS.get(name, param.default if i == 0 else None)))
    args.append(Argument("provider", _PROVIDER, _PROVIDER.help))
    return tuple(args)


#: Every argument of the tool, in schema order.
ARGUMENTS: Final[tuple[Argument, ...]] = _arguments()
_BY_NAME: Final = {arg.name: arg for arg in ARGUMENTS}


def offered_providers(statuses: Iterable[ProviderStatus]) -> tuple[str, ...]:
    """The ids the `provider` argument offers: available here and not in `providers.webSearchExclude`."""
    return tuple(s.id for s in statuses if s.available and not s.excluded)


def _property(arg: Argument, providers: Sequence[str]) -> dict[str, Any]:
    param = arg.param
    prop: dict[str, Any] = {"type": param.json_type}
    if param.kind == "domains":
        prop["items"] = {"type": "string"}
    enum = ("auto", *providers) if arg.name == "provider" else param.choices
    if enum:
        prop["enum"] = list(enum)
    if param.minimum is not None:
        prop["minimum"] = int(param.minimum) if param.kind == "integer" else param.minimum
    if param.maximum is not None:
        prop["maximum"] = param.maximum
    if arg.default is not None:
        prop["default"] = arg.default
    prop["description"] = arg.description
    return prop


def input_schema(providers: Sequence[str] = SEARCH_PROVIDER_ORDER) -> dict[str, Any]:
    """The tool's JSON schema; the `provider` enum is `auto` plus `providers`."""
    properties = {arg.name: _property(arg, providers) for arg in ARGUMENTS}
    return {"type": "object", "properties": properties, "required": ["query"], "additionalProperties": False}


def description() -> str:
    """The tool description: what it is for, how to cite, and every parameter with its default.

    Each parameter's full explanation is in the schema; the description names them all with
    their defaults, so a client that shows only the description still tells the model enough.
    """
    names = []
    for arg in ARGUMENTS:
        if arg.name == "query":
            names.append("query (required)")
        elif arg.param.mcp and arg.name != arg.param.mcp[0]:
            names.append(f"{arg.name} (same as {arg.param.mcp[0]})")
        elif arg.default is not None:
            names.append(f"{arg.name} (default {str(arg.default).lower()})")
        else:
            names.append(arg.name)
    return (
        f"{_INTRO}\n\nParameters: {', '.join(names)}; provider defaults to the configured preference. "
        "Date filters, most specific first: a valid start_published_date wins over recency_hours, which wins "
        "over recency_days, which wins over recency. The deep modes (deep-lite, deep, deep-reasoning) add a "
        "synthesized answer with a 'Grounding:' line of URLs and take longer."
    )


_INTRO: Final = (
    "Search the web for current information. Returns one block per result, each with its own title, URL, "
    "publication date, highlights and text (never a merged summary), then a 'Sources:' list numbering the "
    "URLs. Cite what you use with the result's URL (or its [n] from Sources), and only claim what a block "
    "actually says. Lines in "
    "[brackets] at the top name the provider that served the search and every parameter that was not applied "
    "or only approximated. 'SEARCH_FAILED: <query> — <provider>: <reason> | ...' means every provider failed: "
    "retry later, rephrase, or pick another provider.\n\n"
    "In clients with their own web search, use this as an independent, complementary lane; where built-in "
    "search is off or missing, use it as the primary one."
)


def tool_definition(format: SchemaFormat = "mcp", providers: Sequence[str] = SEARCH_PROVIDER_ORDER) -> dict[str, Any]:
    """The tool in the envelope of OpenAI function calling, Anthropic tool use, or MCP `tools/list`."""
    schema = input_schema(providers)
    if format == "openai":
        return {"type": "function", "function": {"name": TOOL_NAME, "description": description(), "parameters": schema}}
    if format == "anthropic":
        return {"name": TOOL_NAME, "description": description(), "input_schema": schema}
    if format == "mcp":
        return {"name": TOOL_NAME, "description": description(), "inputSchema": schema}
    raise ValueError(f"unknown schema format {format!r}; use one of {', '.join(SCHEMA_FORMATS)}")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """Checked arguments: what to pass to `WebSearch.asearch` and the body length to render."""

    query: str
    provider: str | None
    params: dict[str, Any]
    text_chars: int


def parse_arguments(
    arguments: Mapping[str, Any], providers: Sequence[str], unavailable: Mapping[str, str] | None = None
) -> ToolCall:
    """Check a call's arguments; raise `InvalidSearchParams` naming the argument and what is allowed.

    `providers` are the ids the `provider` argument may name (besides auto); `unavailable` maps the
    others to what would make them available, for the error message. Null means "not given". The
    MCP defaults (num_results 8, text_chars 1200) are filled in.
    """
    given = {name: value for name, value in arguments.items() if value is not None}
    unknown = sorted(set(given) - set(_BY_NAME))
    if unknown:
        raise InvalidSearchParams(
            unknown[0], f"unknown argument {unknown[0]!r}; the arguments are: {', '.join(_BY_NAME)}"
        )
    if "query" not in given:
        raise InvalidSearchParams("query", "query is required: a non-empty string; got nothing")
    query = check(_QUERY, given.pop("query"))
    provider = given.pop("provider", None)
    if provider is not None and provider != "auto" and provider not in providers:
        why = (unavailable or {}).get(provider)
        raise InvalidSearchParams(
            "provider",
            f"provider must be one of: auto, {', '.join(providers)}; got {got(provider)}"
            + (f" (not available here: {why})" if why else ""),
        )
    params: dict[str, Any] = {}
    for name, value in given.items():
        arg = _BY_NAME[name]
        param = arg.param
        if param.kind == "integer" and isinstance(value, float) and value.is_integer():
            value = int(value)  # JSON has one number type: 3.0 is 3
        value = check(param, value, name)
        if param.name in params and params[param.name] != value:
            both = f"got {got(params[param.name])} and {got(value)}"
            raise InvalidSearchParams(name, f"{name} is another name for {param.mcp[0]}; give one of them; {both}")
        params[param.name] = value
    params.setdefault("limit", DEFAULT_NUM_RESULTS)
    text_chars = params.setdefault("text_chars", _BY_NAME["text_chars"].default)
    low, high = TEXT_CHARS_RANGE
    return ToolCall(query, provider, params, min(high, max(low, text_chars)))


def failure_text(query: str, attempts: Sequence[tuple[str, str | None]], error: str) -> str:
    """`SEARCH_FAILED: <query> — <provider>: <reason> | ...`, one entry per failed attempt.

    `attempts` are (provider, error) pairs; with none failed (no provider configured), the
    chain's `error` stands in.
    """
    reasons = " | ".join(f"{provider}: {reason}" for provider, reason in attempts if reason)
    return f"SEARCH_FAILED: {query} — {reasons or error}"
