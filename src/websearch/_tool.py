"""The `web_search` tool an agent sees: its JSON schema, its description, and argument checking.

Shared by the MCP server and `websearch schema`. Light on purpose: no MCP SDK, no HTTP stack, no
provider module is imported here, so printing the schema stays as cheap as `websearch --help`.

One table (`ARGUMENTS`) is the source of the schema's properties, the parameter list in the
description and the checks in `parse_arguments`. The date-ladder arguments are checked leniently:
an unusable value falls through the ladder with a notice (see `websearch._filters`), never an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from ._params import LEGACY_MODES, MODE_VALUES, RECENCY_VALUES, TEXT_CHARS_RANGE
from ._registry import SEARCH_PROVIDER_ORDER
from .errors import InvalidSearchParams

if TYPE_CHECKING:
    from ._client import ProviderStatus

__all__ = [
    "ARGUMENTS",
    "DEFAULT_NUM_RESULTS",
    "DEFAULT_TEXT_CHARS",
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
DEFAULT_TEXT_CHARS: Final = 1200
SchemaFormat = Literal["mcp", "openai", "anthropic"]
SCHEMA_FORMATS: Final[tuple[str, ...]] = get_args(SchemaFormat)

Kind = Literal["string", "integer", "number", "boolean", "domains", "enum", "lenient"]


@dataclass(frozen=True, slots=True)
class Argument:
    """One tool argument: its JSON type, what it means, and the bounds `parse_arguments` enforces."""

    name: str
    kind: Kind
    description: str
    json_type: str = ""  # the schema's "type" when it differs from `kind` (enum, lenient)
    enum: tuple[str, ...] = ()
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None


_MODE_HELP = (
    "Search mode: auto, fast, instant, or the deep family deep-lite, deep, deep-reasoning, which ask Exa "
    "for a synthesized answer (a '## Synthesized answer' block with a 'Grounding:' line of URLs, above the "
    "per-result blocks) and take seconds longer. Legacy neural and keyword search as auto. Providers without "
    "search modes say so in a header line."
)

ARGUMENTS: Final[tuple[Argument, ...]] = (
    Argument("query", "string", "What to search for."),
    Argument("num_results", "integer", "How many results to return.", default=DEFAULT_NUM_RESULTS, minimum=1),
    Argument("limit", "integer", "Another name for num_results; give one of the two.", minimum=1),
    Argument("mode", "enum", _MODE_HELP, "string", (*MODE_VALUES, *LEGACY_MODES), default="auto"),
    Argument(
        "text_chars",
        "integer",
        f"Characters of body text per result, both requested upstream and shown "
        f"(clamped to {TEXT_CHARS_RANGE[0]}-{TEXT_CHARS_RANGE[1]}). Raise it to read more of each page.",
        default=DEFAULT_TEXT_CHARS,
        minimum=1,
    ),
    Argument("recency", "enum", "Only results from the last day, week, month or year.", "string", RECENCY_VALUES),
    Argument(
        "recency_days",
        "lenient",
        "Only results published in the last N days. Pass it for time-sensitive or 'latest' questions: "
        "the tool never narrows dates on its own.",
        "number",
    ),
    Argument("recency_hours", "lenient", "Like recency_days, in hours; wins over recency_days.", "number"),
    Argument(
        "start_published_date",
        "lenient",
        "Earliest publication date, ISO date or timestamp ('2026-01-15', '2026-01-15T08:00:00Z'). A valid one "
        "wins over recency_hours, which wins over recency_days. Unparseable dates are ignored with a note.",
        "string",
    ),
    Argument("end_published_date", "lenient", "Latest publication date, ISO date or timestamp.", "string"),
    Argument(
        "category",
        "string",
        "Kind of result: news, publication, company, people, financial report, personal site, or another "
        "string. company and people drop date filters and exclude_domains; 'research paper' is searched as "
        "publication, 'tweet' is dropped (unscoped search); each change is noted in the header.",
    ),
    Argument("include_domains", "domains", "Only results from these hosts (at most 20 used)."),
    Argument("exclude_domains", "domains", "No results from these hosts (at most 20 used)."),
    Argument(
        "summary",
        "boolean",
        "Ask for a short generated summary per result instead of raw text and highlights (fewer tokens).",
        default=False,
    ),
    Argument(
        "sort_by_date",
        "boolean",
        "Newest first instead of most relevant, where the provider can (Firecrawl); elsewhere the header says "
        "it was not applied.",
        default=False,
    ),
    Argument("num_search_results", "integer", "Search breadth asked of the provider, when it differs.", minimum=1),
    Argument("max_tokens", "integer", "Answer length cap for answer-engine providers.", minimum=1),
    Argument("temperature", "number", "Sampling temperature for answer-engine providers.", minimum=0, maximum=2),
    Argument(
        "provider",
        "enum",
        "Which search provider to use: auto (the automatic chain) or one listed. When omitted, the configured "
        "preference is used. A chosen provider that fails is followed by the fallback tier (Firecrawl by default, "
        "when configured).",
        "string",
    ),
)
_BY_NAME: Final = {arg.name: arg for arg in ARGUMENTS}
_JSON_TYPES: Final = {
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "domains": "array",
}
#: Arguments of the date ladder: any value is accepted; an unusable one becomes a notice.
_PASS_THROUGH: Final = ("recency_days", "recency_hours", "start_published_date", "end_published_date")

_INTRO = (
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


def offered_providers(statuses: Iterable[ProviderStatus]) -> tuple[str, ...]:
    """The ids the `provider` argument offers: available here and not in `providers.webSearchExclude`."""
    return tuple(s.id for s in statuses if s.available and not s.excluded)


def input_schema(providers: Sequence[str] = SEARCH_PROVIDER_ORDER) -> dict[str, Any]:
    """The tool's JSON schema; the `provider` enum is `auto` plus `providers`."""
    properties: dict[str, Any] = {}
    for arg in ARGUMENTS:
        prop: dict[str, Any] = {"type": arg.json_type or _JSON_TYPES[arg.kind]}
        if arg.kind == "domains":
            prop["items"] = {"type": "string"}
        enum = ("auto", *providers) if arg.name == "provider" else arg.enum
        if enum:
            prop["enum"] = list(enum)
        if arg.minimum is not None:
            prop["minimum"] = arg.minimum if arg.kind != "integer" else int(arg.minimum)
        if arg.maximum is not None:
            prop["maximum"] = arg.maximum
        if arg.default is not None:
            prop["default"] = arg.default
        prop["description"] = arg.description
        properties[arg.name] = prop
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
        elif arg.name == "limit":
            names.append("limit (same as num_results)")
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
        raise InvalidSearchParams("query", "query is required: a non-empty string")
    for name, value in given.items():
        if name not in _PASS_THROUGH:
            given[name] = _check(_BY_NAME[name], value)
    if not given["query"].strip():
        raise InvalidSearchParams("query", "query must be a non-empty string")
    if "num_results" in given and "limit" in given and given["num_results"] != given["limit"]:
        raise InvalidSearchParams("limit", "limit is another name for num_results; give one of them")
    provider = given.pop("provider", None)
    if provider is not None and provider != "auto" and provider not in providers:
        why = (unavailable or {}).get(provider)
        raise InvalidSearchParams(
            "provider",
            f"provider must be one of: auto, {', '.join(providers)}; got {provider!r}"
            + (f" (not available here: {why})" if why else ""),
        )
    query = given.pop("query")
    alias = given.pop("limit", DEFAULT_NUM_RESULTS)
    limit = given.pop("num_results", alias)
    text_chars = given.setdefault("text_chars", DEFAULT_TEXT_CHARS)
    low, high = TEXT_CHARS_RANGE
    return ToolCall(query, provider, {"limit": limit, **given}, min(high, max(low, text_chars)))


def _check(arg: Argument, value: Any) -> Any:
    """`value` if it fits `arg` (integral floats become ints); InvalidSearchParams otherwise."""
    name = arg.name
    if arg.kind == "enum":
        allowed = arg.enum if name != "provider" else None
        if not isinstance(value, str) or (allowed is not None and value not in allowed):
            shown = ", ".join(allowed) if allowed else "auto or a provider id"
            raise InvalidSearchParams(name, f"{name} must be one of: {shown}; got {value!r}")
        return value
    if arg.kind == "string":
        if not isinstance(value, str):
            raise InvalidSearchParams(name, f"{name} must be a string; got {value!r}")
        return value
    if arg.kind == "boolean":
        if not isinstance(value, bool):
            raise InvalidSearchParams(name, f"{name} must be true or false; got {value!r}")
        return value
    if arg.kind == "domains":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(d, str) for d in value):
            raise InvalidSearchParams(name, f"{name} must be a list of domain names (strings); got {value!r}")
        return value
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if arg.kind == "integer":
        if isinstance(number, float) and number.is_integer():
            number = int(number)
        if not isinstance(number, int) or (arg.minimum is not None and number < arg.minimum):
            raise InvalidSearchParams(name, f"{name} must be a whole number of at least {arg.minimum:g}; got {value!r}")
        return number
    low = arg.minimum if arg.minimum is not None else float("-inf")
    high = arg.maximum if arg.maximum is not None else float("inf")
    if number is None or not low <= number <= high:  # NaN fails every comparison
        raise InvalidSearchParams(name, f"{name} must be a number from {low:g} to {high:g}; got {value!r}")
    return number


def failure_text(query: str, attempts: Sequence[tuple[str, str | None]], error: str) -> str:
    """`SEARCH_FAILED: <query> — <provider>: <reason> | ...`, one entry per failed attempt.

    `attempts` are (provider, error) pairs; with none failed (no provider configured), the
    chain's `error` stands in.
    """
    reasons = " | ".join(f"{provider}: {reason}" for provider, reason in attempts if reason)
    return f"SEARCH_FAILED: {query} — {reasons or error}"
