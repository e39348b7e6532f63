"""The typed vocabulary of a search: parameters in, one response out.

Plain dataclasses (not pydantic) so that importing websearch, `websearch --help` and argument
errors stay cheap. The per-search values are not frozen (a frozen dataclass costs several times
as much to build; see `SearchSource`); treat them as values all the same. Every field name is
snake_case, in Python and in JSON.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

from .errors import InvalidSearchParams, SearchFailedError

__all__ = [
    "MODE_VALUES",
    "RECENCY_VALUES",
    "SEARCH_PROVIDER_ORDER",
    "Attempt",
    "Mode",
    "ProviderId",
    "Recency",
    "SearchCitation",
    "SearchParams",
    "SearchResponse",
    "SearchSource",
    "SearchUsage",
]

Recency = Literal["day", "week", "month", "year"]
RECENCY_VALUES: Final[tuple[str, ...]] = get_args(Recency)

Mode = Literal["auto", "fast", "instant", "deep-lite", "deep", "deep-reasoning"]
MODE_VALUES: Final[tuple[str, ...]] = get_args(Mode)
#: Older Exa search types, accepted and searched as `auto` (with a notice).
LEGACY_MODES: Final = {"neural": "auto", "keyword": "auto"}

ProviderId = Literal[
    "perplexity",
    "gemini",
    "anthropic",
    "codex",
    "xai",
    "zai",
    "exa",
    "tinyfish",
    "jina",
    "kagi",
    "tavily",
    "firecrawl",
    "brave",
    "kimi",
    "parallel",
    "synthetic",
    "searxng",
    "duckduckgo",
]
#: The automatic chain's priority: answer engines first, keyed search APIs next, keyless last.
SEARCH_PROVIDER_ORDER: Final[tuple[str, ...]] = get_args(ProviderId)


@dataclass(slots=True)
class SearchSource:
    """One result: where it is, what it says, and when it was published.

    Not frozen on purpose: providers build dozens per search and a frozen dataclass costs five
    times as much to construct. Treat it as a value all the same.
    """

    title: str
    url: str
    snippet: str | None = None
    published_date: str | None = None  # raw provider value: ISO date, "2 days ago", free text
    age_seconds: int | None = None  # seconds since published_date, when it could be parsed
    author: str | None = None
    highlights: tuple[str, ...] = ()  # short extracts, shown by the `blocks` renderer


@dataclass(slots=True)
class SearchCitation:
    """A passage of the answer attributed to a URL (answer engines only)."""

    url: str
    title: str
    cited_text: str | None = None


@dataclass(frozen=True, slots=True)
class SearchUsage:
    """Token and search counts reported by the provider."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    search_requests: int | None = None


@dataclass(frozen=True, slots=True)
class Attempt:
    """One provider tried by the chain: its HTTP status (or None) and error (None on success)."""

    provider: str
    status: int | None
    error: str | None
    duration_ms: float


@dataclass(slots=True)
class SearchResponse:
    """What one search produced: the serving provider's answer, or the chain's error.

    Not frozen, like `SearchSource`: every search builds two (the provider's, then the chain's
    with attempts and notices), and a frozen one costs seven times as much. Treat it as a value.

    `attempts` lists every provider tried, the serving one last. `notices` lists every
    parameter the serving provider could not honour, or honoured only approximately.
    `error` is set (and `provider` is the last one tried, or "none") when the search failed.
    """

    provider: str
    query: str = ""
    answer: str | None = None
    sources: tuple[SearchSource, ...] = ()
    citations: tuple[SearchCitation, ...] = ()
    related_questions: tuple[str, ...] = ()
    search_queries: tuple[str, ...] = ()
    usage: SearchUsage | None = None
    model: str | None = None
    request_id: str | None = None
    auth_mode: str | None = None
    attempts: tuple[Attempt, ...] = ()
    notices: tuple[str, ...] = ()
    error: str | None = None
    fallback: str | None = None  # "<provider> unavailable: <reason>" when a fallback-tier provider served

    @property
    def ok(self) -> bool:
        """True when a provider answered."""
        return self.error is None

    def raise_for_error(self) -> SearchResponse:
        """Raise `SearchFailedError` if the search failed; return self otherwise."""
        if self.error is not None:
            raise SearchFailedError(self.error, self.provider)
        return self

    def has_renderable_content(self) -> bool:
        """The chain's acceptance rule: some answer, source, citation, question or query."""
        return bool(
            (self.answer and self.answer.strip())
            or self.sources
            or self.citations
            or any(q.strip() for q in self.related_questions)
            or any(q.strip() for q in self.search_queries)
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with snake_case keys."""
        return dataclasses.asdict(self)


def _check_int(name: str, value: object, minimum: int = 1) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidSearchParams(name, f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        raise InvalidSearchParams(name, f"{name} must be at least {minimum}, got {value}")


def _domains(name: str, value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(d, str) for d in value):
        raise InvalidSearchParams(name, f"{name} must be a list of domain names, got {value!r}")
    return tuple(d.strip() for d in value if d.strip())


@dataclass(slots=True)
class SearchParams:
    """What the caller asked for; validated on construction.

    Not frozen either: a frozen dataclass of 18 fields costs 2.5 us to build against 0.4 us, which
    was 4% of the throughput of 500 searches in flight. Nothing in the public API takes a
    `SearchParams` back from the caller, and no provider assigns to one; treat it as a value.
    (Assigning to a field skips the validation and leaves `given()` stale.)

    `limit` caps the results returned; `num_search_results` is the search breadth asked of the
    provider. Most providers use `num_search_results`, else `limit` (see `count`).

    The richer parameters (mode ... sort_by_date) follow mcp-web_search-tool.md. Date rungs that
    cannot be used (an unparseable date, a non-positive number of days) are not errors: they fall
    through the precedence ladder with a notice (see `websearch._filters`).
    """

    query: str
    recency: Recency | None = None
    limit: int | None = None
    num_search_results: int | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    mode: str | None = None
    text_chars: int | None = None
    recency_days: Any = None
    recency_hours: Any = None
    start_published_date: Any = None
    end_published_date: Any = None
    category: str | None = None
    include_domains: tuple[str, ...] | None = None
    exclude_domains: tuple[str, ...] | None = None
    summary: bool | None = None
    sort_by_date: bool | None = None
    _given: tuple[tuple[str, Any], ...] = field(default=(), init=False, repr=False, compare=False)
    _rich: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.query, str) or not self.query.strip():
            raise InvalidSearchParams("query", "query must be a non-empty string")
        values = _param_values(self)
        if values.count(None) == len(values):  # the common plain call: nothing else to check
            return
        if self.recency is not None and self.recency not in RECENCY_VALUES:
            raise InvalidSearchParams(
                "recency", f"recency must be one of {', '.join(RECENCY_VALUES)}; got {self.recency!r}"
            )
        _check_int("limit", self.limit)
        _check_int("num_search_results", self.num_search_results)
        _check_int("max_tokens", self.max_tokens)
        t = self.temperature
        if t is not None:
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
                raise InvalidSearchParams("temperature", f"temperature must be a number, got {t!r}")
            if not 0 <= t <= 2:
                raise InvalidSearchParams("temperature", f"temperature must be between 0 and 2, got {t}")
        if self.mode is not None and self.mode not in MODE_VALUES and self.mode not in LEGACY_MODES:
            raise InvalidSearchParams(
                "mode", f"mode must be one of {', '.join(MODE_VALUES)} (or legacy neural, keyword); got {self.mode!r}"
            )
        _check_int("text_chars", self.text_chars)
        if self.category is not None and (not isinstance(self.category, str) or not self.category.strip()):
            raise InvalidSearchParams("category", f"category must be a non-empty string, got {self.category!r}")
        for name in ("summary", "sort_by_date"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), bool):
                raise InvalidSearchParams(name, f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.include_domains is not None:
            self.include_domains = _domains("include_domains", self.include_domains)
        if self.exclude_domains is not None:
            self.exclude_domains = _domains("exclude_domains", self.exclude_domains)
        given = tuple(
            (name, value)
            for name, value in zip(PARAM_NAMES, _param_values(self), strict=True)
            if value is not None and value is not False and value != ()
        )
        self._given = given
        self._rich = any(name in RICH_PARAMS for name, _ in given)

    @property
    def count(self) -> int | None:
        """The collapsed result count most providers use: `num_search_results`, else `limit`."""
        return self.num_search_results if self.num_search_results is not None else self.limit

    def given(self) -> dict[str, Any]:
        """The optional parameters the caller actually set (query excluded; false switches and
        empty domain lists count as not set)."""
        return dict(self._given)

    @property
    def rich(self) -> bool:
        """True when any parameter beyond web_search.md's is set (richer request shapes apply)."""
        return self._rich


#: Every optional search parameter, in declaration order.
PARAM_NAMES: Final = tuple(f.name for f in dataclasses.fields(SearchParams) if f.init and f.name != "query")
_param_values: Final = operator.attrgetter(*PARAM_NAMES)
#: The parameters of mcp-web_search-tool.md that web_search.md does not have.
RICH_PARAMS: Final = frozenset(PARAM_NAMES[PARAM_NAMES.index("mode") :])
