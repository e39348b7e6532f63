"""The parameter table: every search parameter once, with its type, bounds, default and help.

`SearchParams` validation, the MCP tool's schema, the `search` command's options and the
README's command-line block are all derived from `PARAMS`, so a parameter is added (or its
bounds changed) in one place. `check` is the one validator; every refusal reads
`<name> must be <requirement>; got <value>`.

The date-ladder parameters are `lenient`: an unusable value is not an error but falls through
the ladder with a notice (see `websearch._core._filters`), so agents that guess a format still search.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from ..errors import InvalidSearchParams

__all__ = [
    "CACHE_MODES",
    "DEEP_MODES",
    "DEFAULT_TEXT_CHARS",
    "LEGACY_MODES",
    "LOCALE_PARAMS",
    "MODE_VALUES",
    "PARAMS",
    "PARAMS_BY_NAME",
    "RECENCY_VALUES",
    "SAFESEARCH_VALUES",
    "TEXT_CHARS_RANGE",
    "CacheMode",
    "Mode",
    "Param",
    "ParamKind",
    "Recency",
    "SafeSearch",
    "check",
    "check_engine_args",
    "got",
    "provider_with_fanout",
]

#: How a search or a fetch uses the cache: read and write it, write it only, or neither.
CacheMode = Literal["use", "refresh", "off"]
CACHE_MODES: Final[tuple[str, ...]] = get_args(CacheMode)
Recency = Literal["day", "week", "month", "year"]
RECENCY_VALUES: Final[tuple[str, ...]] = get_args(Recency)
Mode = Literal["auto", "fast", "instant", "deep-lite", "deep", "deep-reasoning"]
MODE_VALUES: Final[tuple[str, ...]] = get_args(Mode)
#: The modes that ask Exa to research: searches of these get longer deadlines and timeouts.
DEEP_MODES: Final = frozenset({"deep-lite", "deep", "deep-reasoning"})
#: Moderate first: a converter that fills an enum with its first value asks for the usual filter.
SafeSearch = Literal["moderate", "off", "strict"]
SAFESEARCH_VALUES: Final[tuple[str, ...]] = get_args(SafeSearch)
#: The locale parameters, whose defaults may come from settings (`[search] country` ...).
LOCALE_PARAMS: Final = ("country", "language", "safesearch")
#: Older Exa search types, accepted and searched as `auto` (with a notice).
LEGACY_MODES: Final = {"neural": "auto", "keyword": "auto"}
TEXT_CHARS_RANGE: Final = (200, 8000)
#: The largest whole number a parameter takes (JSON's exact integers, 2**53 - 1): a larger one
#: (`10**30`) reached the cache key's encoder and failed the search with its TypeError.
MAX_INTEGER: Final = 2**53 - 1
DEFAULT_TEXT_CHARS: Final = 1200

ParamKind = Literal[
    "string",
    "integer",
    "number",
    "boolean",
    "domains",
    "ids",
    "enum",
    "lenient_number",
    "lenient_date",
    "country",
    "language",
]
_JSON_TYPE: Final = {
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "domains": "array",
    "ids": "array",
    "enum": "string",
    "lenient_number": "number",
    "lenient_date": "string",
    "country": "string",
    "language": "string",
}


@dataclass(frozen=True, slots=True)
class Param:
    """One search parameter.

    `default` is the documented default (a value equal to it changes nothing and is never
    reported in a notice); `cli` the command-line flags (first one shown); `mcp` the names the
    MCP tool offers for it (empty: not offered); `rich` marks the parameters of
    mcp-web_search-tool.md beyond web_search.md's.
    """

    name: str
    kind: ParamKind
    help: str
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    cli: tuple[str, ...] = ()
    metavar: str | None = None
    mcp: tuple[str, ...] = ()
    rich: bool = False
    cli_help: str = ""

    @property
    def short_help(self) -> str:
        """The one-line help of the command line (`cli_help`, else `help`)."""
        return self.cli_help or self.help

    @property
    def json_type(self) -> str:
        """The JSON Schema type of the value."""
        return _JSON_TYPE[self.kind]

    def requirement(self) -> str:
        """What an acceptable value is, as the `must be ...` part of a refusal."""
        if self.kind == "enum":
            return "one of: " + ", ".join(self.choices)
        if self.kind == "boolean":
            return "true or false"
        if self.kind == "domains":
            return "a list of domain names (non-blank strings)"
        if self.kind == "ids":
            return "a list of provider ids (strings)"
        if self.kind == "string":
            return "a non-empty string"
        if self.kind == "integer":
            return f"a whole number of at least {self.minimum:g}" if self.minimum is not None else "a whole number"
        if self.kind == "number" and self.minimum is not None and self.maximum is not None:
            return f"a number from {self.minimum:g} to {self.maximum:g}"
        if self.kind == "lenient_date":
            return "an ISO date or timestamp (a string)"
        if self.kind == "country":
            return "two letters, an ISO 3166-1 alpha-2 country code such as DE or us"
        if self.kind == "language":
            return "two letters, an ISO 639-1 language code such as de or EN"
        return "a number"


_MODE_HELP = (
    "Search mode: auto, fast, instant, or the deep family deep-lite, deep, deep-reasoning, which ask Exa "
    "for a synthesized answer (a '## Synthesized answer' block with a 'Grounding:' line of URLs, above the "
    "per-result blocks) and take seconds longer. Legacy neural and keyword search as auto. Providers without "
    "search modes say so in a header line."
)

#: Every search parameter but the query, in `SearchParams` field order.
PARAMS: Final[tuple[Param, ...]] = (
    Param(
        "recency",
        "enum",
        "Only results from the last day, week, month or year.",
        choices=RECENCY_VALUES,
        cli=("--recency",),
        mcp=("recency",),
    ),
    Param(
        "limit",
        "integer",
        "How many results to return.",
        minimum=1,
        cli=("--limit", "--num-results"),
        metavar="N",
        mcp=("num_results", "limit"),
    ),
    Param(
        "num_search_results",
        "integer",
        "Search breadth asked of the provider, when it differs.",
        minimum=1,
        cli=("--num-search-results",),
        metavar="N",
        mcp=("num_search_results",),
    ),
    Param(
        "max_tokens",
        "integer",
        "Answer length cap for answer-engine providers.",
        minimum=1,
        cli=("--max-tokens",),
        metavar="N",
        mcp=("max_tokens",),
    ),
    Param(
        "temperature",
        "number",
        "Sampling temperature for answer-engine providers.",
        minimum=0,
        maximum=2,
        cli=("--temperature",),
        metavar="F",
        mcp=("temperature",),
    ),
    Param(
        "mode",
        "enum",
        _MODE_HELP,
        default="auto",
        choices=(*MODE_VALUES, *LEGACY_MODES),
        cli=("--mode",),
        mcp=("mode",),
        rich=True,
        cli_help="search mode (Exa search types; deep-* add a synthesized answer)",
    ),
    Param(
        "text_chars",
        "integer",
        f"Characters of body text per result, both requested upstream and shown (clamped to "
        f"{TEXT_CHARS_RANGE[0]}-{TEXT_CHARS_RANGE[1]}). Raise it to read more of each page.",
        default=DEFAULT_TEXT_CHARS,
        minimum=1,
        cli=("--text-chars",),
        metavar="N",
        mcp=("text_chars",),
        rich=True,
        cli_help=f"body text per result ({TEXT_CHARS_RANGE[0]}-{TEXT_CHARS_RANGE[1]}; default {DEFAULT_TEXT_CHARS})",
    ),
    Param(
        "recency_days",
        "lenient_number",
        "Only results published in the last N days. Pass it for time-sensitive or 'latest' questions: "
        "the tool never narrows dates on its own.",
        cli=("--recency-days",),
        metavar="N",
        mcp=("recency_days",),
        rich=True,
        cli_help="only results published in the last N days",
    ),
    Param(
        "recency_hours",
        "lenient_number",
        "Like recency_days, in hours; wins over recency_days.",
        cli=("--recency-hours",),
        metavar="N",
        mcp=("recency_hours",),
        rich=True,
    ),
    Param(
        "start_published_date",
        "lenient_date",
        "Earliest publication date, ISO date or timestamp ('2026-01-15', '2026-01-15T08:00:00Z'). A valid one "
        "wins over recency_hours, which wins over recency_days. Unparseable dates are ignored with a note.",
        cli=("--start-published-date",),
        metavar="DATE",
        mcp=("start_published_date",),
        rich=True,
        cli_help="earliest publication date (ISO date or timestamp)",
    ),
    Param(
        "end_published_date",
        "lenient_date",
        "Latest publication date, ISO date or timestamp.",
        cli=("--end-published-date",),
        metavar="DATE",
        mcp=("end_published_date",),
        rich=True,
    ),
    Param(
        "category",
        "string",
        "Kind of result: news, publication, company, people, financial report, personal site, or another "
        "string. company and people drop date filters and exclude_domains; 'research paper' is searched as "
        "publication, 'tweet' is dropped (unscoped search); each change is noted in the header.",
        cli=("--category",),
        mcp=("category",),
        rich=True,
        cli_help="news, publication, company, people, financial report, personal site, ...",
    ),
    Param(
        "include_domains",
        "domains",
        "Only results from these hosts (at most 20 used).",
        cli=("--include-domain",),
        metavar="DOMAIN",
        mcp=("include_domains",),
        rich=True,
        cli_help="only results from this domain (repeatable, at most 20)",
    ),
    Param(
        "exclude_domains",
        "domains",
        "No results from these hosts (at most 20 used).",
        cli=("--exclude-domain",),
        metavar="DOMAIN",
        mcp=("exclude_domains",),
        rich=True,
        cli_help="no results from this domain (repeatable, at most 20)",
    ),
    Param(
        "summary",
        "boolean",
        "Ask for a short generated summary per result instead of raw text and highlights (fewer tokens).",
        default=False,
        cli=("--summary",),
        mcp=("summary",),
        rich=True,
        cli_help="a generated summary per result instead of text",
    ),
    Param(
        "sort_by_date",
        "boolean",
        "Newest first instead of most relevant, where the provider can (Firecrawl); elsewhere the header says "
        "it was not applied.",
        default=False,
        cli=("--sort-by-date",),
        mcp=("sort_by_date",),
        rich=True,
        cli_help="newest first (where the provider can)",
    ),
    Param(
        "country",
        "country",
        "Country of the results, ISO 3166-1 alpha-2 (DE, us).",
        cli=("--country",),
        metavar="CC",
        mcp=("country",),
        cli_help="country of the results (ISO 3166-1 alpha-2: DE, US)",
    ),
    Param(
        "language",
        "language",
        "Language of the results, ISO 639-1 (de, en). Never sets a country.",
        cli=("--language",),
        metavar="LL",
        mcp=("language",),
        cli_help="language of the results (ISO 639-1: de, en)",
    ),
    Param(
        "safesearch",
        "enum",
        "Adult-content filter.",
        choices=SAFESEARCH_VALUES,
        cli=("--safesearch",),
        mcp=("safesearch",),
    ),
)
PARAMS_BY_NAME: Final = {p.name: p for p in PARAMS}


def got(value: Any) -> str:
    """A refused value as the caller wrote it: JSON where it is JSON, else its repr."""
    try:
        return json.dumps(list(value) if isinstance(value, tuple) else value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)


def provider_with_fanout(provider: Any, fanout: Any) -> InvalidSearchParams:
    """The refusal of a chosen provider beside a fanout, naming `provider` (auto is no choice:
    beside a fanout it is the fanout, as a strict model that must send both sends it)."""
    return InvalidSearchParams(
        "provider",
        "provider must be auto or left out when fanout is given (fanout asks several providers at once, "
        f"provider one: give one of them); got {got(provider)} with fanout={got(fanout)}",
    )


def check(param: Param, value: Any, name: str | None = None) -> Any:
    """`value` if it fits `param` (domains as a tuple of stripped names); InvalidSearchParams
    otherwise. `name` is the name the caller used (an alias such as `num_results`)."""
    shown = name or param.name
    kind = param.kind
    # Past JSON's exact integers (a lenient number's too: no encoder takes such an int).
    if (type(value) is int or (kind == "integer" and type(value) is float)) and abs(value) > MAX_INTEGER:
        least = f"{param.minimum:g}" if kind == "integer" and param.minimum is not None else f"-{MAX_INTEGER}"
        what = "a whole number" if kind == "integer" else "a number"
        raise InvalidSearchParams(shown, f"{shown} must be {what} from {least} to {MAX_INTEGER}; got {got(value)}")
    if kind in ("lenient_number", "lenient_date"):
        return value
    if kind == "enum":
        if isinstance(value, str) and value in param.choices:
            return value
    elif kind == "boolean":
        if isinstance(value, bool):
            return value
    elif kind == "string":
        if isinstance(value, str) and value.strip():
            return value
    elif kind in ("country", "language"):
        # Country codes are kept upper case (ISO 3166's own spelling, DE), language codes lower (de).
        code = value.strip() if isinstance(value, str) else ""
        if len(code) == 2 and code.isascii() and code.isalpha():
            return code.upper() if kind == "country" else code.lower()
    elif kind in ("domains", "ids"):
        names = [value] if isinstance(value, str) else value
        # A blank domain was left out without a word (`--include-domain ''`): it is refused.
        strings = isinstance(names, (list, tuple)) and all(isinstance(d, str) for d in names)
        if strings and (kind == "ids" or all(d.strip() for d in names)):
            return tuple(d.strip() for d in names if d.strip())
    elif not isinstance(value, bool) and isinstance(value, (int, float)):
        if kind == "integer" and isinstance(value, int) and (param.minimum is None or value >= param.minimum):
            return value
        low = param.minimum if param.minimum is not None else -math.inf
        high = param.maximum if param.maximum is not None else math.inf
        if kind == "number" and math.isfinite(value) and low <= value <= high:
            return value
    raise InvalidSearchParams(shown, f"{shown} must be {param.requirement()}; got {got(value)}")


def check_engine_args(cache: object, deadline: object, hedge: object = None) -> None:
    """InvalidSearchParams naming `cache` unless it is a cache mode, or `deadline` or `hedge`
    unless each is unset or a positive number of seconds (what search, fetch and research take)."""
    if cache not in CACHE_MODES:
        shown = json.dumps(cache, default=str)
        raise InvalidSearchParams("cache", f"cache must be one of: {', '.join(CACHE_MODES)}; got {shown}")
    for name, value in (("deadline", deadline), ("hedge", hedge)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
            shown = json.dumps(value, default=str)  # NaN as JSON's readers write it
            raise InvalidSearchParams(name, f"{name} must be a positive number of seconds; got {shown}")
