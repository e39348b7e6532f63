"""The typed vocabulary of a search: parameters in, one response out.

Plain dataclasses (not pydantic) so that importing websearch, `websearch --help` and argument
errors stay cheap. The per-search values are not frozen (a frozen dataclass costs several times
as much to build; see `SearchSource`); treat them as values all the same. Every field name is
snake_case, in Python and in JSON.
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ..errors import InvalidSearchParams, SearchFailedError
from ._notices import Notice
from ._params import LEGACY_MODES, MODE_VALUES, PARAMS, RECENCY_VALUES, Mode, Recency, check, got

__all__ = [
    "LEGACY_MODES",
    "MODE_VALUES",
    "PARAM_NAMES",
    "RECENCY_VALUES",
    "RICH_PARAMS",
    "Attempt",
    "EngineRank",
    "JsonForm",
    "Locale",
    "LocaleValue",
    "Mode",
    "ProviderAnswer",
    "ProviderResult",
    "Recency",
    "SearchCitation",
    "SearchParams",
    "SearchResponse",
    "SearchSource",
    "SearchUsage",
]


@dataclass(frozen=True, slots=True)
class EngineRank:
    """Where one engine of a fan-out ranked a fused source (1 is its first result)."""

    provider: str
    rank: int


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
    engines: tuple[EngineRank, ...] = ()  # fan-out only: every engine that returned it, with its rank


@dataclass(slots=True)
class SearchCitation:
    """A passage of the answer attributed to a URL (answer engines only)."""

    url: str
    title: str
    cited_text: str | None = None


@dataclass(frozen=True, slots=True)
class ProviderAnswer:
    """One answer engine's answer in a fan-out, with the passages it cites."""

    provider: str
    answer: str
    citations: tuple[SearchCitation, ...] = ()


@dataclass(frozen=True, slots=True)
class SearchUsage:
    """Token and search counts reported by the provider."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    search_requests: int | None = None


@dataclass(frozen=True, slots=True)
class Attempt:
    """One provider tried by the chain.

    `status` is the HTTP status (or an HTTP-like code, or None), `error` the message (None on
    success), `error_kind` the error class's kind (`auth`, `quota`, `rate_limited`, ...; see
    `websearch.errors`; `cancelled` when another provider answered first), `retry_after_s` the
    upstream's hint when it gave one, and `notices` what this provider's plan changed or left
    out (kept also when the attempt failed).
    `skipped` says why a provider was not asked at all ("cooldown", "circuit_open", "paced",
    "deadline"; None when it was asked), with `until` (ISO 8601 UTC) when that ends.
    """

    provider: str
    status: int | None
    error: str | None
    duration_ms: float
    error_kind: str | None = None
    retry_after_s: float | None = None
    notices: tuple[Notice, ...] = ()
    skipped: str | None = None
    until: str | None = None


def _renderable(
    answer: str | None,
    sources: tuple[SearchSource, ...],
    citations: tuple[SearchCitation, ...],
    related: tuple[str, ...],
    queries: tuple[str, ...],
) -> bool:
    return bool(
        (answer and answer.strip())
        or sources
        or citations
        or any(q.strip() for q in related)
        or any(q.strip() for q in queries)
    )


@dataclass(slots=True)
class ProviderResult:
    """What a provider may say about one search: only the fields a provider sets.

    The chain wraps it into a `SearchResponse`, adding the query, the attempts and the notices of
    the plan and of the search; `notices` here are what the provider found while answering (a
    tool that failed quietly, an auth method that fell through).
    """

    answer: str | None = None
    sources: tuple[SearchSource, ...] = ()
    citations: tuple[SearchCitation, ...] = ()
    related_questions: tuple[str, ...] = ()
    search_queries: tuple[str, ...] = ()
    usage: SearchUsage | None = None
    model: str | None = None
    request_id: str | None = None
    auth_mode: str | None = None
    notices: tuple[Notice, ...] = ()
    #: Requests a second the key's plan allows, as the provider reported it (Brave's
    #: `X-RateLimit-Limit`): the engine paces the provider at it (see `ProviderInfo.plan_pace`).
    plan_rate: float | None = None

    def has_renderable_content(self) -> bool:
        """The chain's acceptance rule: some answer, source, citation, question or query."""
        return _renderable(self.answer, self.sources, self.citations, self.related_questions, self.search_queries)


#: Where a locale value came from: the call's argument, a setting (`[search] country` ...), or
#: neither (nothing is sent: the provider's own default).
LocaleSource = Literal["argument", "setting", "default"]


@dataclass(frozen=True, slots=True)
class LocaleValue:
    """One locale parameter of a search: its value (None: not set), where it came from, and
    whether the serving provider applied it (natively or approximately; False when it is not set)."""

    value: str | None
    source: LocaleSource
    applied: bool = False


@dataclass(frozen=True, slots=True)
class Locale:
    """The locale a search ran with (`SearchResponse.locale`): country (ISO 3166-1 alpha-2, upper
    case), language (ISO 639-1, lower case) and safesearch, each with where it came from."""

    country: LocaleValue
    language: LocaleValue
    safesearch: LocaleValue


class JsonForm:
    """What the three responses (`SearchResponse`, `FetchResponse`, `ResearchResponse`) share:
    their JSON forms. Slot-less, so the dataclasses built on it keep their slots."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with snake_case keys (what `dataclasses.asdict` gives)."""
        plain: dict[str, Any] = _plain(self)
        return plain

    def to_json(self) -> str:
        """The response as JSON: the same text every face writes for it (`websearch._core._json`)."""
        from ._json import response_json

        return response_json(self).decode()


@dataclass(slots=True)
class SearchResponse(JsonForm):
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
    notices: tuple[Notice, ...] = ()
    error: str | None = None
    fallback: str | None = None  # "<provider> unavailable: <reason>" when a fallback-tier provider served
    cached: bool = False  # served from the cache (its attempts are the original ones)
    cached_age_s: float | None = None  # how old the cached answer is, when it is one
    answers: tuple[ProviderAnswer, ...] = ()  # fan-out only: every answer, in fan-out order (the first is `answer`)
    locale: Locale | None = None  # set when a country, language or safesearch was given or configured
    replayed: bool = False  # read back from a recording (`WebSearch(replay=...)`), not searched now

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
        return _renderable(self.answer, self.sources, self.citations, self.related_questions, self.search_queries)


@dataclass(slots=True)
class SearchParams:
    """What the caller asked for; validated on construction against the parameter table
    (`websearch._core._params.PARAMS`), which also documents each field.

    Not frozen: a frozen dataclass of 18 fields costs 2.5 us to build against 0.4 us. Nothing in
    the public API takes a `SearchParams` back from the caller, and no provider assigns to one;
    treat it as a value. (Assigning to a field skips the validation and leaves `given()` stale.)

    `limit` caps the results returned; `num_search_results` is the search breadth asked of the
    provider. Most providers use `num_search_results`, else `limit` (see `count`). Date rungs that
    cannot be used (an unparseable date, a non-positive number of days) are not errors: they fall
    through the precedence ladder with a notice (see `websearch._core._filters`).
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
    country: str | None = None
    language: str | None = None
    safesearch: str | None = None
    _given: tuple[tuple[str, Any], ...] = field(default=(), init=False, repr=False, compare=False)
    _rich: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.query, str) or not self.query.strip():
            raise InvalidSearchParams("query", f"query must be a non-empty string; got {got(self.query)}")
        values = _param_values(self)
        if values.count(None) == len(values):  # the common plain call: nothing else to check
            return
        given = []
        rich = False
        for param, value in zip(PARAMS, values, strict=True):
            if value is None:
                continue
            value = check(param, value)
            if param.kind in _NORMALISED:
                setattr(self, param.name, value)
            if value is False or value == ():
                continue
            rich = rich or param.rich
            if value != param.default:
                given.append((param.name, value))
        self._given = tuple(given)
        self._rich = rich

    @property
    def count(self) -> int | None:
        """The collapsed result count most providers use: `num_search_results`, else `limit`."""
        return self.num_search_results if self.num_search_results is not None else self.limit

    @property
    def has_given(self) -> bool:
        """Whether any optional parameter is set to something other than its default."""
        return bool(self._given)

    @property
    def given_items(self) -> tuple[tuple[str, Any], ...]:
        """`given()` as the pairs it is made of, in declaration order (hashable when the
        values are; the cache remembers its keys by them)."""
        return self._given

    def given(self) -> dict[str, Any]:
        """The optional parameters the caller set to something other than their documented
        default (query excluded; false switches and empty domain lists count as not set)."""
        return dict(self._given)

    @property
    def rich(self) -> bool:
        """True when any parameter beyond web_search.md's is set (richer request shapes apply)."""
        return self._rich


def _plain(value: Any) -> Any:
    """`dataclasses.asdict` for the response's values, at a fifth of its cost: a response holds
    only dataclasses, tuples, lists, dicts and immutable leaves, so nothing needs a deep copy
    (asdict's was most of a cache write)."""
    cls = type(value)
    names = _FIELD_NAMES.get(cls, _UNSEEN)
    if names is _UNSEEN:
        names = _FIELD_NAMES[cls] = (
            tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else None
        )
    if names is not None:
        return {name: _plain(getattr(value, name)) for name in names}
    if cls is tuple or cls is list:
        return cls(_plain(item) for item in value)
    if cls is dict:
        return {key: _plain(item) for key, item in value.items()}
    return value


_NORMALISED: Final = frozenset({"domains", "country", "language"})  # kinds whose checked value is rewritten
_FIELD_NAMES: Final[dict[type, tuple[str, ...] | None]] = {}  # None: not a dataclass
_UNSEEN: Final[tuple[str, ...]] = ("",)

#: Every optional search parameter, in declaration order.
PARAM_NAMES: Final = tuple(f.name for f in dataclasses.fields(SearchParams) if f.init and f.name != "query")
_param_values: Final = operator.attrgetter(*PARAM_NAMES)
assert tuple(p.name for p in PARAMS) == PARAM_NAMES, "the parameter table must follow SearchParams' fields"
#: The parameters of mcp-web_search-tool.md that web_search.md does not have.
RICH_PARAMS: Final = frozenset(p.name for p in PARAMS if p.rich)
