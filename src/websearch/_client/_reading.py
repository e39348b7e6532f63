"""The client's reading calls: `fetch` a page and `research` a question (and their async twins),
on the client's engine, clock and settings; `WebSearch` has them from `Reads`.

What they do lives below, in `websearch._reading`: this module only checks the arguments the
client adds, makes one `Reader` per engine, and runs the sync twins on the client's private loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

from .._core._budget import Budget
from .._core._pages import FetchFormat, FetchResponse, ResearchResponse
from .._core._params import CacheMode, check_engine_args
from ..errors import InvalidSearchParams
from ._recording import INSIDE, fetch_key, fetch_request, research_key, research_request

if TYPE_CHECKING:
    from .._core._types import SearchResponse
    from .._engine._engine import Engine
    from .._http._proxies import Proxies
    from .._reading._policy import Resolver
    from .._reading._reader import Reader
    from ._recording import Recording

__all__ = ["Reads"]

T = TypeVar("T")


class Reads:
    """`fetch`, `research` and their async twins, for `WebSearch`."""

    engine: Engine
    _resolver: Resolver | None
    _proxies: Proxies
    _recording: Recording | None
    _reader_of: tuple[Engine, Reader] | None = None

    if TYPE_CHECKING:  # WebSearch's own

        async def asearch(self, query: str, **params: Any) -> SearchResponse: ...

        def _search_key(self, query: str, options: Mapping[str, Any]) -> str: ...

        def _private_loop(self) -> asyncio.AbstractEventLoop: ...

    def _reader(self) -> Reader:
        """This client's reader, on its engine (made again when the engine is, after a fork)."""
        made = self._reader_of
        if made is None or made[0] is not self.engine:
            from .._reading._reader import Reader

            made = self._reader_of = (self.engine, Reader(self.engine, resolver=self._resolver, proxies=self._proxies))
        return made[1]

    async def afetch(
        self,
        url: str,
        *,
        max_chars: int = 20000,
        start: int = 0,
        format: FetchFormat = "markdown",
        cache: CacheMode = "use",
        deadline: float | None = None,
    ) -> FetchResponse:
        """Read `url` as clean text: `format` "markdown" (the main content), "text" or "html";
        the window of `max_chars` characters from `start` (`next_start` continues it); `cache`
        "use", "refresh" or "off"; `deadline` in seconds (default `fetch.deadline`, 30). A page
        that cannot be read comes back with `error` and `error_kind`, not raised."""
        check_engine_args(cache, deadline)
        recording = self._recording
        if recording is None:
            reader = self._reader()
            return await reader.fetch(url, max_chars=max_chars, start=start, fmt=format, cache=cache, deadline=deadline)
        from .._core._checks import without_userinfo
        from .._reading._reader import check_fetch_args

        check_fetch_args(url, max_chars, start, format, cache)
        url = url.strip()
        key = fetch_key(url, format, start, max_chars)
        found = recording.lookup(FetchResponse, key, without_userinfo(url))
        if found is not None:
            return found
        reader = self._reader()
        page = await reader.fetch(url, max_chars=max_chars, start=start, fmt=format, cache=cache, deadline=deadline)
        recording.add(key, fetch_request(url, format, start, max_chars), page)
        return page

    async def aresearch(
        self,
        query: str,
        *,
        budget_chars: int | None = None,
        budget_tokens: int | None = None,
        pages: int | None = None,
        search: Mapping[str, Any] | None = None,
        deadline: float | None = None,
    ) -> ResearchResponse:
        """Search for `query`, read the top `pages` (default `research.pages`, 5) at once, and
        give the passages that answer it as cited context within `budget_chars` (default
        `research.budget_chars`, 12000) or `budget_tokens`; `search` holds `asearch`'s options
        (provider, fanout, recency, ...); `deadline` bounds the whole research (default
        `research.deadline`, 60 s)."""
        from .._reading._researcher import reranker_for, research, search_arguments

        settings = self.engine.settings
        check_engine_args("use", deadline)
        if not isinstance(query, str) or not query.strip():
            raise InvalidSearchParams("query", f"query must be a non-empty string; got {query!r}")
        if budget_chars is not None and budget_tokens is not None:
            raise InvalidSearchParams("budget_tokens", "give budget_chars or budget_tokens, not both")
        for name, value in (("budget_chars", budget_chars), ("budget_tokens", budget_tokens), ("pages", pages)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise InvalidSearchParams(name, f"{name} must be a whole number of at least 1; got {value!r}")
        options = search_arguments(search)
        if budget_tokens is None and budget_chars is None:
            budget_chars = int(settings.get("research.budget_chars", 12000))
        pages = pages if pages is not None else int(settings.get("research.pages", 5))
        recording = self._recording
        if recording is not None:
            key = research_key(self._search_key(query, options), pages, budget_chars, budget_tokens)
            found = recording.lookup(ResearchResponse, key, query)
            if found is not None:
                return found
        seconds = deadline if deadline is not None else float(settings.get("research.deadline", 60.0))
        budget = Budget.start(self.engine.clock, seconds)
        reader = self._reader()

        async def searched(within: float) -> SearchResponse:
            inside = INSIDE.set(True)
            try:
                return await self.asearch(query, **options, deadline=within)
            finally:
                INSIDE.reset(inside)

        async def read(url: str, page_budget: Budget) -> FetchResponse:
            return await reader.page(url, "markdown", "use", page_budget)

        response = await research(
            query,
            search=searched,
            read=read,
            pages=pages,
            budget_chars=budget_chars,
            budget_tokens=budget_tokens,
            budget=budget,
            reranker=reranker_for(str(settings.get("research.reranker", "auto"))),
        )
        if recording is not None:
            recording.add(key, research_request(query, options, pages, budget_chars, budget_tokens), response)
        return response

    def fetch(self, url: str, **options: Any) -> FetchResponse:
        """Blocking `afetch`, run on this client's private event loop."""
        return self._blocking(self.afetch(url, **options))

    def research(self, query: str, **options: Any) -> ResearchResponse:
        """Blocking `aresearch`, run on this client's private event loop."""
        return self._blocking(self.aresearch(query, **options))

    def _blocking(self, call: Coroutine[Any, Any, T]) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(call, self._private_loop())
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            raise

    async def _close_reader(self) -> None:
        """Close this loop's fetcher of the reader, if one was made."""
        if self._reader_of is not None:
            await self._reader_of[1].aclose()
