"""The `web_search` tool an agent sees: its JSON schema, its description, and argument checking.

Shared by the MCP server and `websearch schema`. Light on purpose: no MCP SDK, no HTTP stack, no
provider module is imported here, so printing the schema stays as cheap as `websearch --help`.

Everything about a parameter (type, bounds, help, default, its MCP names) comes from the one
parameter table, `websearch._core._params.PARAMS`; `parse_arguments` checks with the same validator
as `SearchParams`, and every refusal reads `<name> must be <requirement>; got <value>`. The
date-ladder arguments are checked leniently: an unusable value falls through the ladder with a
notice (see `websearch._core._filters`), never an error.

The strict schema (`strict=True`) is the one OpenAI's strict mode takes as it is: every property
required and nullable (null is "not given", here as everywhere), no `default`, no alias.

Strict agents often convert the plain schema themselves (openai-agents' `convert_schemas_to_strict`,
LangChain's `convert_to_openai_tool(strict=True)`): every property becomes required and non-null,
so the model sends each one at its default or at some plain value. So, for every argument but
`query`, "not given" is null, a blank string, an empty list, a value equal to the argument's
default, and 0 where the schema says so (`Argument.zero_unset`: the numbers with no default of
their own, where 0 means nothing); `provider: "auto"` beside a fanout is the fanout.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from .._core._params import MAX_INTEGER, PARAMS, TEXT_CHARS_RANGE, Param, check, got, provider_with_fanout
from .._core._registry import SEARCH_PROVIDER_ORDER
from ..errors import InvalidSearchParams

if TYPE_CHECKING:
    from .._client._client import ProviderStatus

__all__ = [
    "ARGUMENTS",
    "DEFAULT_NUM_RESULTS",
    "SCHEMA_FORMATS",
    "STRICT_FORMATS",
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
    "tool_schema",
]

TOOL_NAME: Final = "web_search"
DEFAULT_NUM_RESULTS: Final = 8
SchemaFormat = Literal["mcp", "openai", "openai-responses", "anthropic"]
SCHEMA_FORMATS: Final[tuple[str, ...]] = get_args(SchemaFormat)
#: The formats with a strict variant (OpenAI's strict mode: Chat Completions and the Responses API).
STRICT_FORMATS: Final = ("openai", "openai-responses")


@dataclass(frozen=True, slots=True)
class Argument:
    """One tool argument: its name as the agent writes it, the parameter it sets, its help and
    default; `alias` marks a second name for a parameter (left out of the strict schema);
    `zero_unset` a number with no default, whose 0 means "not given" (a strict model must send
    some number: 0 asks for nothing, where the minimum, 1, would ask for one result or one second)."""

    name: str
    param: Param
    description: str
    default: Any = None
    alias: bool = False
    zero_unset: bool = False

    def unset(self, value: Any) -> bool:
        """Whether `value` says "not given": null, blank, empty, the default, or a 0 that means nothing."""
        if value is None or self.name == "query":
            return value is None
        if (isinstance(value, str) and not value.strip()) or (isinstance(value, (list, tuple)) and not value):
            return True
        if isinstance(value, bool) is not isinstance(self.default, bool):  # 0 is not false, nor true 1
            return False
        return value == self.default or (self.zero_unset and value == 0)


_QUERY: Final = Param("query", "string", "What to search for.")
_PROVIDER: Final = Param(
    "provider",
    "enum",
    "Which search provider to use: auto (the automatic chain) or one listed. When omitted, the configured "
    "preference is used. A chosen provider that fails is followed by the fallback tier (Firecrawl by default, "
    "when configured).",
)
_DEADLINE: Final = Param(
    "deadline",
    "number",
    "The most seconds the whole search may take, fallbacks included (default 30, 120 for the deep modes).",
    minimum=1,
    maximum=600,
)
_FANOUT: Final = Param(
    "fanout",
    "ids",
    "Ask these providers at once and fuse their results (agreement first; each result says which engines "
    "returned it and at which rank). Leave out to use one provider at a time.",
)
#: The MCP tool's own defaults where the library has none (the library returns what the provider gives).
_TOOL_DEFAULTS: Final = {"num_results": DEFAULT_NUM_RESULTS}


def _arguments() -> tuple[Argument, ...]:
    args = [Argument("query", _QUERY, _QUERY.help)]
    for param in PARAMS:
        for i, name in enumerate(param.mcp):
            help = param.help if i == 0 else f"Another name for {param.mcp[0]}; give one of the two."
            # The alias has its parameter's default: a strict model sends both names, one at the default.
            default = _TOOL_DEFAULTS.get(param.mcp[0], param.default)
            zero = default is None and param.kind in _NUMBERS and param.minimum != 0
            args.append(Argument(name, param, help, default, alias=i > 0, zero_unset=zero))
    args.append(Argument("provider", _PROVIDER, _PROVIDER.help))
    args.append(Argument("fanout", _FANOUT, _FANOUT.help))
    args.append(Argument("deadline", _DEADLINE, _DEADLINE.help, zero_unset=True))
    return tuple(args)


#: The kinds a number is sent for; 0 means "not given" for those with no default and no 0 of their own.
_NUMBERS: Final = ("integer", "number", "lenient_number")


#: Every argument of the tool, in schema order.
ARGUMENTS: Final[tuple[Argument, ...]] = _arguments()
_BY_NAME: Final = {arg.name: arg for arg in ARGUMENTS}
#: The arguments without the aliases: the strict schema's, and the ones the description names.
_UNALIASED: Final = tuple(arg for arg in ARGUMENTS if not arg.alias)


def offered_providers(statuses: Iterable[ProviderStatus]) -> tuple[str, ...]:
    """The ids the `provider` argument offers: available here and not in `providers.webSearchExclude`."""
    return tuple(s.id for s in statuses if s.available and not s.excluded)


def _shown_default(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _property(arg: Argument, providers: Sequence[str], strict: bool) -> dict[str, Any]:
    param = arg.param
    nullable = strict and arg.name != "query"  # strict: every property is sent, null when not set
    prop: dict[str, Any] = {"type": [param.json_type, "null"] if nullable else param.json_type}
    if param.kind == "domains":
        prop["items"] = {"type": "string", "pattern": r"\S"}  # a blank name is refused
    if param.kind == "ids":
        prop["items"] = {"type": "string", "enum": [p for p in providers if p != "public"]}
    enum: Sequence[Any] = ("auto", *providers) if arg.name == "provider" else param.choices
    if enum:
        prop["enum"] = [*enum, None] if nullable else list(enum)
    if arg.name == "query":  # what `check` refuses, the schema refuses: an empty or blank query
        if not strict:  # OpenAI's strict mode takes `pattern` but not `minLength`
            prop["minLength"] = 1
        prop["pattern"] = r"\S"
    if param.minimum is not None:
        least = 0 if arg.zero_unset else param.minimum
        prop["minimum"] = int(least) if param.kind == "integer" else least
    if param.maximum is not None:
        prop["maximum"] = param.maximum
    text = arg.description
    if arg.zero_unset:
        text = f"{text} 0: not given."
    if arg.default is not None:
        if strict:  # no `default` in a strict schema: say it
            text = f"{text} Null: {_shown_default(arg.default)}."
        else:
            prop["default"] = arg.default
    prop["description"] = text
    return prop


def input_schema(providers: Sequence[str] = SEARCH_PROVIDER_ORDER, *, strict: bool = False) -> dict[str, Any]:
    """The tool's JSON schema; the `provider` enum is `auto` plus `providers`.

    `strict`: the schema of OpenAI's strict mode, every property required and all but `query`
    nullable (null is "not given"), without `default` and without the `limit` alias.
    """
    properties = {arg.name: _property(arg, providers, strict) for arg in (_UNALIASED if strict else ARGUMENTS)}
    required = list(properties) if strict else ["query"]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def description(*, strict: bool = False) -> str:
    """The tool description (at most 1,024 characters, OpenAI's limit): what it is for, how to
    cite, and every parameter.

    Each parameter's full explanation is in the schema; the description names them all (but the
    `limit` alias, there for callers who guess it) with the defaults that are not "off", so a
    client that shows only the description still tells the model enough. `strict` adds that
    null means "not given".
    """
    names = []
    for arg in _UNALIASED:
        if arg.name == "query":
            names.append("query (required)")
        elif arg.name == "provider":
            names.append("provider (default: configured)")
        elif arg.name == "deadline":
            names.append("deadline (s)")
        elif arg.default is not None and arg.default is not False:  # switches are off unless given
            names.append(f"{arg.name} (default {_shown_default(arg.default)})")
        else:
            names.append(arg.name)
    nulls = " Null means not given." if strict else ""
    return (
        f"{_INTRO}\n\nParameters: {', '.join(names)}.{nulls} Date precedence: "
        "start_published_date > recency_hours > recency_days > recency."
    )


_INTRO: Final = (
    "Search the web for current information. Returns one block per result (title, URL, date, text; never a "
    "merged summary), then a 'Sources:' list numbering the URLs. Cite by URL (or [n] from Sources); claim only "
    "what a block says. [Bracketed] header lines name the provider and what was not applied or approximated. "
    "'SEARCH_FAILED: ...' means every provider failed: retry, rephrase or pick another provider.\n\n"
    "Every provider honours these in the query: site:, -site:, after:/before: (YYYY-MM-DD), filetype:, "
    "intitle:, inurl:."
)


def tool_definition(
    format: SchemaFormat = "mcp", providers: Sequence[str] = SEARCH_PROVIDER_ORDER, *, strict: bool = False
) -> dict[str, Any]:
    """The tool in the envelope of OpenAI function calling (Chat Completions `openai`, Responses API
    `openai-responses`), Anthropic tool use, or MCP `tools/list`.

    `strict` (OpenAI formats only) gives the strict schema and says `"strict": true`.
    """
    if format not in SCHEMA_FORMATS:
        raise ValueError(f"unknown schema format {format!r}; use one of {', '.join(SCHEMA_FORMATS)}")
    if strict and format not in STRICT_FORMATS:
        raise ValueError(f"a strict schema is for the formats {' and '.join(STRICT_FORMATS)}; got {format!r}")
    schema = input_schema(providers, strict=strict)
    text = description(strict=strict)
    if format == "openai":
        function = {"name": TOOL_NAME, "description": text, "parameters": schema}
        return {"type": "function", "function": {**function, "strict": True} if strict else function}
    if format == "openai-responses":  # `strict` said either way: the Responses API's default is not ours
        return {"type": "function", "name": TOOL_NAME, "description": text, "parameters": schema, "strict": strict}
    if format == "anthropic":
        return {"name": TOOL_NAME, "description": text, "input_schema": schema}
    return {"name": TOOL_NAME, "description": text, "inputSchema": schema}


def tool_schema(
    format: SchemaFormat = "mcp", *, strict: bool = False, providers: Iterable[str] | None = None
) -> dict[str, Any]:
    """The `web_search` tool definition for an agent framework: what `websearch schema` prints.

    `format` is the envelope: `mcp` (a `tools/list` entry), `openai` (Chat Completions),
    `openai-responses` (the Responses API) or `anthropic`. `strict` (the OpenAI formats only)
    gives the schema OpenAI's strict mode takes as it is: every property required, null for "not
    given". `providers` are the ids the `provider` argument offers besides `auto` (default: all;
    `offered_providers(client.provider_status())` gives the ones available here). ValueError for
    an unknown format or provider id, or `strict` with another format.
    """
    if isinstance(providers, str):
        raise ValueError(f"providers must be a list of provider ids; got the string {providers!r}")
    ids = SEARCH_PROVIDER_ORDER if providers is None else tuple(providers)
    unknown = [i for i in ids if i not in SEARCH_PROVIDER_ORDER and i != "public"]
    if unknown:
        raise ValueError(f"unknown provider {unknown[0]!r}; use ids of: {', '.join(SEARCH_PROVIDER_ORDER)}, public")
    return tool_definition(format, ids, strict=strict)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """Checked arguments: what to pass to `WebSearch.asearch` and the body length to render."""

    query: str
    provider: str | None
    params: dict[str, Any]
    text_chars: int
    #: The argument name that set each parameter, where it is not the parameter's (num_results).
    names: dict[str, str] = field(default_factory=dict)

    def as_called(self, exc: InvalidSearchParams) -> InvalidSearchParams:
        """`exc` (a refusal past the checks here: a server's limits) naming the argument the
        caller used: `num_results must be at most 50`, not `limit must be ...`."""
        used = self.names.get(exc.param)
        if used is None or not exc.message.startswith(f"{exc.param} "):
            return exc
        return InvalidSearchParams(used, used + exc.message.removeprefix(exc.param))


def parse_arguments(
    arguments: Mapping[str, Any], providers: Sequence[str], unavailable: Mapping[str, str] | None = None
) -> ToolCall:
    """Check a call's arguments; raise `InvalidSearchParams` naming the argument and what is allowed.

    `providers` are the ids the `provider` argument may name (besides auto); `unavailable` maps the
    others to what would make them available, for the error message. Null, blank, empty, the
    default and a 0 of `zero_unset` mean "not given" (`Argument.unset`). The MCP defaults
    (num_results 8, text_chars 1200) are filled in.
    """
    given = {name: value for name, value in arguments.items() if not (name in _BY_NAME and _BY_NAME[name].unset(value))}
    unknown = sorted(set(given) - set(_BY_NAME))
    if unknown:
        from .._core._closest import meant

        name = unknown[0]
        known = ", ".join(_BY_NAME)
        raise InvalidSearchParams(
            name,
            f"{name} must be left out{meant(name, _BY_NAME)} ({TOOL_NAME}'s arguments are: {known}); "
            f"got {got(given[name])}",
        )
    if "query" not in given:
        raise InvalidSearchParams("query", f"query must be {_QUERY.requirement()}; got nothing")
    query = check(_QUERY, given.pop("query"))
    provider = given.pop("provider", None)
    check_provider(provider, providers, unavailable)
    fanout = given.pop("fanout", None)
    if fanout is not None:
        ids = check(_FANOUT, fanout)
        offered = [p for p in providers if p != "public"]
        if any(i not in offered for i in ids):
            raise InvalidSearchParams("fanout", f"fanout must be a list of: {', '.join(offered)}; got {got(fanout)}")
        if provider not in (None, "auto"):  # auto beside a fanout: the fanout (a strict model sends both)
            raise provider_with_fanout(provider, fanout)
        provider = None
    params: dict[str, Any] = {} if fanout is None else {"fanout": ids}
    named: dict[str, str] = {}  # parameter -> the argument name that set it
    for name, value in given.items():
        arg = _BY_NAME[name]
        param = arg.param
        if param.kind == "integer" and isinstance(value, float) and value.is_integer() and abs(value) <= MAX_INTEGER:
            value = int(value)  # JSON has one number type: 3.0 is 3
        value = check(param, value, name)
        if param.name in params and params[param.name] != value:
            other = named[param.name]
            raise InvalidSearchParams(
                name,
                f"{name} must be equal to {other} or left out (they name one parameter); "
                f"got {got(value)} and {other}={got(params[param.name])}",
            )
        params[param.name] = value
        named.setdefault(param.name, name)
    params.setdefault("limit", DEFAULT_NUM_RESULTS)
    text_chars = params.setdefault("text_chars", _BY_NAME["text_chars"].default)
    low, high = TEXT_CHARS_RANGE
    names = {param: name for param, name in named.items() if name != param}
    return ToolCall(query, provider, params, min(high, max(low, text_chars)), names)


def failure_text(query: str, attempts: Sequence[tuple[str, str | None]], error: str) -> str:
    """`SEARCH_FAILED: <query> — <provider>: <reason> | ...`, one entry per failed attempt.

    `attempts` are (provider, error) pairs; with none failed (no provider configured), the
    chain's `error` stands in.
    """
    reasons = " | ".join(f"{provider}: {reason}" for provider, reason in attempts if reason)
    return f"SEARCH_FAILED: {query} — {reasons or error}"


def check_provider(provider: Any, providers: Sequence[str], unavailable: Mapping[str, str] | None) -> None:
    """InvalidSearchParams unless `provider` is unset, "auto" or one of `providers` (saying why
    a known one is not available here, from `unavailable`)."""
    if provider is not None and provider != "auto" and provider not in providers:
        why = (unavailable or {}).get(provider)
        raise InvalidSearchParams(
            "provider",
            f"provider must be one of: auto, {', '.join(providers)}; got {got(provider)}"
            + (f" (not available here: {why})" if why else ""),
        )
