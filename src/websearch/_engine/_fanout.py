"""Fan-out: several providers asked at once, their results fused into one response.

Every provider starts together, each inside the engine's guards (cooldowns, pacing) and the
search's deadline, as in the chain. The walk ends when every provider has ended, or when at
least one has answered and the soft deadline (default 5 s) has passed; the stragglers are then
cancelled and their attempts say so. An engine that pages stops paging at the soft deadline and
serves the pages it has (`Budget.soft_ends`, in each attempt's `ctx.budget`), so a polite gap between its pages
does not cost it the first ones. Sources are fused (`websearch._engine._fusion`: reciprocal-rank
fusion, agreement first); the first answer in fan-out order is the response's answer and every
answer is kept in `answers`. A fan-out fails only when every provider failed; a partial one
says which served nothing and why, in its attempts and one notice (which found nothing, which
failed and by what kind, which were not asked or were cancelled). `public` is a fan-out over every
available keyless engine.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from .._core._notices import Notice, partial
from .._core._types import Attempt, ProviderAnswer, ProviderResult, SearchResponse
from ._chain import Walk, guarded, search_notices, transport_ready
from ._fusion import fuse

if TYPE_CHECKING:
    from .._core._context import ProviderContext
    from .._core._types import SearchParams
    from ._lineup import Lineup

__all__ = ["DEFAULT_LIMIT", "DEFAULT_SOFT_DEADLINE", "FUSED", "PUBLIC", "Fanout", "run_fanout"]

PUBLIC: Final = "public"
#: What serves a fused answer (its `provider`, and the tag of its cache entry): `public`, or
#: `fanout` for a fan-out over providers the caller named.
FUSED: Final = (PUBLIC, "fanout")
DEFAULT_SOFT_DEADLINE: Final = 5.0
DEFAULT_LIMIT: Final = 10  # fused results when the caller gives no `limit`


@dataclass(frozen=True, slots=True)
class Fanout:
    """A fan-out as the client decided it: the providers (`ids`, in fan-out order), the name
    that serves the response ("public" or "fanout"), the soft deadline, and the notices of the
    decision (providers left out, the list cut to `fanout.max_providers`)."""

    ids: tuple[str, ...]
    name: str = FUSED[1]
    soft_deadline: float = DEFAULT_SOFT_DEADLINE
    notices: tuple[Notice, ...] = ()

    @property
    def key(self) -> str:
        """The provider selection, as the cache key holds it."""
        return f"{self.name}:{','.join(self.ids)}"

    def cacheable(self, response: SearchResponse) -> bool:
        """A success that at least half of the providers answered (a fan-out below its quorum
        is served, never kept)."""
        answered = sum(1 for a in response.attempts if a.error is None)
        return response.ok and answered * 2 >= len(self.ids)


async def run_fanout(
    params: SearchParams, ctx: ProviderContext, lineup: Lineup, fanout: Fanout, walk: Walk
) -> SearchResponse:
    """Ask the fan-out's providers at once and fuse what they return."""
    ids, name, soft_deadline = fanout.ids, fanout.name, fanout.soft_deadline
    said = [*search_notices(params, ctx, lineup), *fanout.notices]
    if not ids:
        error = f"{name}: no provider to fan out over is available"
        return SearchResponse(provider=name, query=params.query, notices=tuple(said), error=error)
    await transport_ready(ctx, walk.budget)  # the soft deadline counts from the requests, not the import
    loop = asyncio.get_running_loop()
    soft_end = loop.time() + soft_deadline
    budget = walk.budget.with_soft_end(ctx.clock.monotonic() + soft_deadline)
    tasks = {
        asyncio.ensure_future(guarded(lineup, lineup.info(i), params, ctx.for_attempt(budget, explicit=True), walk)): i
        for i in ids
    }
    started = ctx.clock.monotonic()
    ended: dict[str, tuple[ProviderResult | None, Attempt]] = {}
    pending = set(tasks)
    try:
        while pending:
            answered = any(result is not None for result, _ in ended.values())
            now = loop.time()
            if answered and now >= soft_end:
                break
            timeout = soft_end - now if now < soft_end else None  # past it with no answer: wait for one
            done, pending = await asyncio.wait(pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                ended[tasks[task]] = task.result()
    finally:
        for task in pending:
            task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
        took = round((ctx.clock.monotonic() - started) * 1000, 3)
        for task in pending:
            message = f"cancelled: the fan-out's soft deadline ({soft_deadline:g} s) passed with answers in hand"
            ended[tasks[task]] = (None, Attempt(tasks[task], None, message, took, "cancelled"))
    return _fused(params, ids, ended, said, name)


def _fused(
    params: SearchParams,
    ids: tuple[str, ...],
    ended: dict[str, tuple[ProviderResult | None, Attempt]],
    notices: list[Notice],
    name: str,
) -> SearchResponse:
    attempts = tuple(ended[i][1] for i in ids)
    served = [(i, result) for i in ids if (result := ended[i][0]) is not None]
    failed = [a for a in attempts if a.error is not None]
    if not served:
        error = "All web search providers failed: " + "; ".join(f"{a.provider}: {a.error}" for a in attempts)
        return SearchResponse(provider=name, query=params.query, attempts=attempts, notices=tuple(notices), error=error)
    if failed:
        notices.append(partial(_unserved(failed, len(ids))))
    for i, _ in served:
        notices.extend(ended[i][1].notices)
    answers = tuple(ProviderAnswer(i, r.answer, r.citations) for i, r in served if r.answer and r.answer.strip())
    limit = params.limit or DEFAULT_LIMIT
    return SearchResponse(
        provider=name,
        query=params.query,
        answer=answers[0].answer if answers else None,
        sources=fuse([(i, r.sources) for i, r in served], limit),
        citations=answers[0].citations if answers else (),
        related_questions=tuple(dict.fromkeys(q for _, r in served for q in r.related_questions)),
        search_queries=tuple(dict.fromkeys(q for _, r in served for q in r.search_queries)),
        attempts=attempts,
        notices=tuple(notices),
        answers=answers,
    )


#: How a fan-out says why providers served nothing, in this order: (what they did, one, several).
_GROUPS: Final = (
    ("no_results", "gave no results", "gave no results"),
    ("failed", "failed", "failed"),
    ("skipped", "was not asked", "were not asked"),
    ("cancelled", "was cancelled at the soft deadline", "were cancelled at the soft deadline"),
)


def _unserved(failed: list[Attempt], total: int) -> str:
    """The notice's words for the providers that served nothing, by what became of them:
    `2 of 7 providers gave no results: a, b; 1 failed: bing (connection)`. A provider that
    failed is not one that found nothing (its kind says how it failed), nor one not asked (a
    cooldown), nor one cancelled at the soft deadline."""
    grouped: dict[str, list[str]] = {}
    for a in failed:
        if a.skipped:
            grouped.setdefault("skipped", []).append(f"{a.provider} ({a.skipped})")
        elif a.error_kind in ("no_results", "cancelled"):
            grouped.setdefault(a.error_kind, []).append(a.provider)
        else:
            grouped.setdefault("failed", []).append(f"{a.provider} ({a.error_kind})")
    parts = [
        (len(names), f"{one if len(names) == 1 else several}: {', '.join(names)}")
        for group, one, several in _GROUPS
        if (names := grouped.get(group))
    ]
    (count, said), *rest = parts
    return "; ".join([f"{count} of {total} providers {said}", *(f"{n} {words}" for n, words in rest)])
