"""The typed answers of reading: `FetchResponse` (one page as text) and `ResearchResponse` (a
question answered with cited context from several pages).

Like `SearchResponse`, they carry an `error` instead of raising (a failed page is an answer an
agent reasons about), with `error_kind` the kind of the `websearch.errors.FetchError` class
behind it; `raise_for_error()` raises that class. Field names are snake_case in Python and JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from ..errors import (
    FetchConnectionError,
    FetchError,
    FetchHttpError,
    FetchTimeout,
    FetchTooLarge,
    NeedsJavascript,
    NoText,
    PageBlocked,
    RobotsDisallowed,
    SearchFailedError,
    TooManyRedirects,
    UnsupportedContent,
    UrlNotAllowed,
)
from ._notices import Notice
from ._types import Attempt, JsonForm, ProviderAnswer

__all__ = [
    "FETCH_ERRORS",
    "FORMATS",
    "FetchFormat",
    "FetchResponse",
    "PageOutcome",
    "ResearchResponse",
    "ResearchSource",
]

FetchFormat = Literal["markdown", "text", "html"]
FORMATS: Final[tuple[str, ...]] = ("markdown", "text", "html")

#: Each `FetchError` class by its kind: what `raise_for_error` raises for an `error_kind`.
FETCH_ERRORS: Final[dict[str, type[FetchError]]] = {
    cls.kind: cls
    for cls in (
        UrlNotAllowed,
        RobotsDisallowed,
        TooManyRedirects,
        FetchHttpError,
        PageBlocked,
        FetchTooLarge,
        UnsupportedContent,
        NeedsJavascript,
        NoText,
        FetchTimeout,
        FetchConnectionError,
    )
}


@dataclass(slots=True)
class FetchResponse(JsonForm):
    """One page read as text.

    `url` is the address asked for, `final_url` where the redirects ended. `text` is the window
    `[start, next_start)` of the page's whole text (`total_chars` long): `next_start` is where
    the next call continues (None at the end) and `truncated` says the window stopped short of
    the end. `kind` is what was read ("html", "pdf", "markdown", "text", "json", "xml");
    `whole_page` is True when no main content was found and the whole page's text was given.
    `error` (with `error_kind`, `status`) is set instead of the text when the page could not be
    read. `cached`/`cached_age_s` say the text came from the cache."""

    url: str
    final_url: str | None = None
    status: int | None = None
    content_type: str | None = None
    format: str = "markdown"
    kind: str | None = None
    title: str | None = None
    byline: str | None = None
    published: str | None = None
    language: str | None = None
    text: str = ""
    total_chars: int = 0
    start: int = 0
    next_start: int | None = None
    truncated: bool = False
    whole_page: bool = False
    pages: int | None = None
    attempts: tuple[Attempt, ...] = ()
    notices: tuple[Notice, ...] = ()
    error: str | None = None
    error_kind: str | None = None
    retry_after_s: float | None = None
    cached: bool = False
    cached_age_s: float | None = None
    replayed: bool = False  # read back from a recording (`WebSearch(replay=...)`), not fetched now

    @property
    def ok(self) -> bool:
        """True when the page was read."""
        return self.error is None

    def raise_for_error(self) -> FetchResponse:
        """Raise the `FetchError` subclass of `error_kind` if the page was not read; else self."""
        if self.error is not None:
            cls = FETCH_ERRORS.get(self.error_kind or "", FetchError)
            raise cls(self.url, self.error, self.status, content_type=self.content_type, retry_after=self.retry_after_s)
        return self


@dataclass(slots=True)
class ResearchSource:
    """One numbered source of a research context: `[number]` in the text is `url`."""

    number: int
    url: str
    title: str | None = None
    chars: int = 0
    published: str | None = None


@dataclass(slots=True)
class PageOutcome:
    """What became of one page a research considered: `used`, or why not (`reason`: "fetch_failed"
    with the fetch's `error_kind`, "robots", "duplicate", "over_budget", "no_relevant_passage",
    "not_fetched", ...), and the `message` a person reads."""

    url: str
    used: bool
    reason: str
    message: str | None = None
    error_kind: str | None = None
    number: int | None = None


@dataclass(slots=True)
class ResearchResponse(JsonForm):
    """A question answered with cited context, within a budget.

    `context` holds passages from the pages (in document order within each source, a gap marker
    where passages were left out) citing `[1]`, `[2]`... which `sources` maps 1:1 to URLs; the
    answer engines' own answers, with their citations, are in `answers`. `pages` says what
    became of every page considered. `chars` and `tokens` measure `context` (`token_counter`:
    "tiktoken:<encoding>" or "estimate"); it never exceeds the budget asked for. `search` is the
    search that found the pages. `error` is set when there is no context at all."""

    query: str
    context: str = ""
    sources: tuple[ResearchSource, ...] = ()
    answers: tuple[ProviderAnswer, ...] = ()
    pages: tuple[PageOutcome, ...] = ()
    chars: int = 0
    tokens: int = 0
    token_counter: str = "estimate"
    budget_chars: int | None = None
    budget_tokens: int | None = None
    provider: str | None = None
    attempts: tuple[Attempt, ...] = ()
    notices: tuple[Notice, ...] = ()
    error: str | None = None
    replayed: bool = False  # read back from a recording (`WebSearch(replay=...)`), not researched now

    @property
    def ok(self) -> bool:
        """True when there is context to read."""
        return self.error is None

    def raise_for_error(self) -> ResearchResponse:
        """Raise `SearchFailedError` if the research found nothing to give; else self."""
        if self.error is not None:
            raise SearchFailedError(self.error, self.provider or "none")
        return self
