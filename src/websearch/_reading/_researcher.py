"""`research`: a question to cited context, within a budget and a deadline.

Search (any provider, a fan-out or `public`), then read the top pages at once (each through
`fetch`: cache, flights, robots, pace, the address checks), then rank their passages against the
question, drop near-duplicates and assemble the context within the budget (`_assemble`). Answer
engines' answers are kept beside the context, with their citations.

Time: the search may take a share of the deadline (`SEARCH_SHARE`), the pages what is left but
a margin for the assembly; at the deadline the pages still being read are cancelled and the
context is made of those read (a `partial` notice says which were not). The answer comes by the
deadline plus the assembly's few milliseconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from .._core._budget import Budget
from .._core._notices import Notice, partial
from .._core._pages import FetchResponse, PageOutcome, ResearchResponse, ResearchSource
from .._core._types import ProviderAnswer, SearchResponse
from ..errors import InvalidSearchParams
from ._page_cache import normalised_url

if TYPE_CHECKING:
    from ._assemble import Answer, Context
    from ._rank import Reranker

__all__ = ["SEARCH_SHARE", "reranker_for", "research", "search_arguments"]

#: The most of the deadline the search may take (its own deadline is cut to it).
SEARCH_SHARE: Final = 0.4
#: Seconds kept back from the pages for ranking and assembly.
ASSEMBLY_MARGIN: Final = 0.05

#: Page reads cancelled at the deadline, until they have ended.
_ENDING: set[asyncio.Future[FetchResponse]] = set()

Search = Callable[[float], Awaitable[SearchResponse]]
Read = Callable[[str, Budget], Awaitable[FetchResponse]]


async def research(
    query: str,
    *,
    search: Search,
    read: Read,
    pages: int,
    budget_chars: int | None,
    budget_tokens: int | None,
    budget: Budget,
    reranker: Reranker | None = None,
) -> ResearchResponse:
    """Cited context for `query` (see the module docstring). `search(seconds)` runs the search
    within `seconds`; `read(url, budget)` gives a page's whole text; `reranker` ranks the
    passages (None: BM25)."""
    remaining = budget.remaining()
    found = await search(SEARCH_SHARE * remaining if remaining is not None else 30.0)
    notices: list[Notice] = list(found.notices)
    answers = _answers(found)
    urls = _candidates(found, pages)
    if not urls and not answers:
        error = found.error or "the search found no page to read"
        return ResearchResponse(
            query, provider=found.provider, attempts=found.attempts, notices=tuple(notices), error=error
        )
    read_pages, outcomes = await _read_all(urls, read, budget)
    if len(read_pages) < len(urls):
        missing = [o.url for o in outcomes if o.reason == "not_fetched"]
        if missing:
            notices.append(partial(f"{len(missing)} page(s) were not read before the deadline: {', '.join(missing)}"))
    # In a thread: ranking is CPU work (tens of ms over five long pages; a model's first load, a second).
    context = await asyncio.to_thread(_assembled, query, read_pages, budget_chars, budget_tokens, answers, reranker)
    return _response(query, found, urls, context, read_pages, outcomes, answers, notices, budget_chars, budget_tokens)


def _candidates(found: SearchResponse, pages: int) -> list[str]:
    """The first `pages` distinct http(s) URLs of the search's sources (then its citations)."""
    seen: set[str] = set()
    urls: list[str] = []
    for url in [s.url for s in found.sources] + [c.url for c in found.citations]:
        if not url.startswith(("http://", "https://")):
            continue
        key = normalised_url(url)
        if key not in seen:
            seen.add(key)
            urls.append(url)
        if len(urls) >= pages:
            break
    return urls


async def _read_all(
    urls: Sequence[str], read: Read, budget: Budget
) -> tuple[list[tuple[str, FetchResponse]], list[PageOutcome]]:
    """Read `urls` at once until the deadline (less the assembly's margin); the pages read, in
    search order, and what became of each that was not."""
    ends = None if budget.ends is None else budget.ends - ASSEMBLY_MARGIN
    pages_budget = Budget(budget.clock, ends)
    tasks = [asyncio.ensure_future(read(url, pages_budget)) for url in urls]
    left = pages_budget.remaining()
    if tasks:
        await asyncio.wait(tasks, timeout=None if left is None else max(0.0, left))
    read_pages: list[tuple[str, FetchResponse]] = []
    outcomes: list[PageOutcome] = []
    for url, task in zip(urls, tasks, strict=True):
        if not task.done():
            task.cancel()  # it ends on its own; held until then (the loop keeps tasks only weakly)
            _ENDING.add(task)
            task.add_done_callback(_ENDING.discard)
            outcomes.append(PageOutcome(url, False, "not_fetched", "not read before the research's deadline"))
            continue
        page = task.result()
        if page.ok and page.text.strip():
            read_pages.append((url, page))
        elif page.ok:
            outcomes.append(PageOutcome(url, False, "empty", "the page has no text"))
        else:
            reason = "robots" if page.error_kind == "robots" else "fetch_failed"
            outcomes.append(PageOutcome(url, False, reason, page.error, page.error_kind))
    return read_pages, outcomes


def _answers(found: SearchResponse) -> list[ProviderAnswer]:
    """The answer engines' answers of the search (a fan-out's every one)."""
    if found.answers:
        return list(found.answers)
    if found.answer:
        return [ProviderAnswer(found.provider, found.answer, found.citations)]
    return []


def _assembled(
    query: str,
    read_pages: Sequence[tuple[str, FetchResponse]],
    budget_chars: int | None,
    budget_tokens: int | None,
    answers: Sequence[ProviderAnswer],
    reranker: Reranker | None,
) -> Context:
    from ._assemble import Answer, assemble
    from ._passages import PageText

    texts = [
        PageText(url=url, title=page.title, text=page.text, published=page.published, rank=rank)
        for rank, (url, page) in enumerate(read_pages)
    ]
    given: list[Answer] = [Answer(a.provider, a.answer, tuple(c.url for c in a.citations)) for a in answers]
    return assemble(
        query, texts, budget_chars=budget_chars, budget_tokens=budget_tokens, answers=given, reranker=reranker
    )


def _response(
    query: str,
    found: SearchResponse,
    urls: Sequence[str],
    context: Context,
    read_pages: Sequence[tuple[str, FetchResponse]],
    outcomes: list[PageOutcome],
    answers: Sequence[ProviderAnswer],
    notices: list[Notice],
    budget_chars: int | None,
    budget_tokens: int | None,
) -> ResearchResponse:
    published = {url: page.published for url, page in read_pages}
    sources = tuple(
        ResearchSource(s.number, s.url, s.title, s.chars_used, published.get(s.url)) for s in context.sources
    )
    numbers = {s.url: s.number for s in context.sources}
    for use in (*context.used, *context.skipped):
        used = use.reason == "used"
        copied = f"the same as {use.duplicate_of}" if use.duplicate_of else None  # which page it repeats
        outcomes.append(PageOutcome(use.url, used, use.reason, copied, None, numbers.get(use.url) if used else None))
    order = {url: i for i, url in enumerate(urls)}  # the search's order
    outcomes.sort(key=lambda o: order.get(o.url, len(order)))
    for _, page in read_pages:
        notices.extend(n for n in page.notices if n.kind == "suspicious" and n not in notices)
    error = None if context.text.strip() or answers else "no page could be read for this question"
    return ResearchResponse(
        query,
        context=context.text,
        sources=sources,
        answers=tuple(answers),
        pages=tuple(outcomes),
        chars=context.chars,
        tokens=context.tokens,
        token_counter=context.token_counter,
        budget_chars=budget_chars,
        budget_tokens=budget_tokens,
        provider=found.provider,
        attempts=found.attempts,
        notices=tuple(notices),
        error=error,
    )


def search_arguments(given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The `search=` options of a research as `asearch` keywords. The research's own deadline
    bounds its search, so a `deadline` among them is refused rather than overridden."""
    options = dict(given or {})
    if "deadline" in options:
        raise InvalidSearchParams(
            "search", "search= takes no deadline: give research(deadline=...), which bounds its search"
        )
    if "query" in options:
        raise InvalidSearchParams("search", "search= takes no query: the research's question is the search's query")
    return options


_WORDLLAMA: list[Reranker] = []  # one model a process: it loads in about a second


def reranker_for(setting: str) -> Reranker | None:
    """The reranker `research.reranker` names: "bm25" (None: assemble's default), "wordllama",
    or "auto", WordLlama when its extra is installed, else BM25."""
    import importlib.util

    if setting == "bm25" or (setting == "auto" and importlib.util.find_spec("wordllama") is None):
        return None
    if not _WORDLLAMA:
        from ._rank import WordLlamaReranker

        _WORDLLAMA.append(WordLlamaReranker())
    return _WORDLLAMA[0]
