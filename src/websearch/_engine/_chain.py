"""The provider chain: which providers, in what order, tried one by one until one answers.

This is the one place where every attempt is recorded (provider, status, error, its kind,
duration, the notices of its plan), where an answer with nothing renderable becomes `NoResults`,
and where failures are summed up as `All web search providers failed: ...`. Errors are
reported as their own messages (written where they were built); the chain never looks at a
provider's id or an error's text. Cancellation is never swallowed.

Which providers, in what order: the preferred one, then the automatic chain's order
(`providers.webSearchOrder`, see `_lineup`), never the excluded. How long each attempt may take:
what remains of the search's one deadline (`Budget`), cut to the attempt's own timeout
(`[timeout] <id>`, else `providers.webSearchTimeoutSeconds`, default 60 s, at most 300 s), which
counts from when the provider is asked (after pacing). The cut is the same budget `capped`, not a
second timer: running out of it is a timeout of that provider (`AttemptTimedOut`, kind `timeout`,
its message naming the setting), and the walk moves on as for any timeout; running out of the
search's deadline says the deadline did (`DeadlineReached`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from .._core._budget import NO_DEADLINE, Budget
from .._core._context import DeadlineReached, too_late
from .._core._notices import Notice, fallback, not_supported, partial, results_dropped
from .._core._params import DEEP_MODES
from .._core._settings import DEFAULT_ATTEMPT_TIMEOUT
from .._core._skip import Skip
from .._core._types import Attempt, ProviderResult, SearchParams, SearchResponse
from ..errors import ConfigError, NoResults, ProviderTimeoutError, SearchProviderError
from ._health import iso
from ._lineup import Lineup
from ._postfilter import enforce_operators

if TYPE_CHECKING:
    from .._core._context import ProviderContext
    from .._core._registry import ProviderInfo
    from .._providers._base import Plan, Provider

__all__ = [
    "DEFAULT_FALLBACK",
    "NO_PROVIDER_MESSAGE",
    "RENDER_SIDE",
    "AttemptTimedOut",
    "Guards",
    "Walk",
    "attempt_timeout",
    "guarded",
    "out_of_time",
    "resolve_chain",
    "run_search",
    "search_notices",
    "transport_ready",
]

log = logging.getLogger("websearch")

NO_PROVIDER_MESSAGE: Final = "No web search provider configured."
#: `providers.webSearchFallback` when the setting is absent.
DEFAULT_FALLBACK: Final = ("firecrawl",)
#: Parameters every provider honours because the renderer applies them (body length in `blocks`).
RENDER_SIDE: Final = frozenset({"text_chars"})


def resolve_chain(
    ctx: ProviderContext, lineup: Lineup, preferred: str = "auto", excluded: Iterable[str] = ()
) -> list[str]:
    """The ordered provider ids: the preferred one (if it may run when chosen) then the
    automatic chain's order (`Lineup.auto_ids`: `providers.webSearchOrder`, then the rest
    unless `webSearchOrderOnly`), each gated by availability; excluded ids never appear."""
    excluded = frozenset(excluded)
    scan = lineup.scan(ctx)
    chain = [preferred] if preferred in scan.explicit and preferred not in excluded else []
    chain += [p for p in lineup.auto_ids if p in scan.available and p not in excluded and p != preferred]
    return chain


def fallback_tier_ids(ctx: ProviderContext) -> list[str]:
    """`providers.webSearchFallback` as configured (default firecrawl)."""
    return list(ctx.settings.get("providers.webSearchFallback", list(DEFAULT_FALLBACK)))


def fallback_tier(ctx: ProviderContext, lineup: Lineup, explicit: str, excluded: frozenset[str]) -> list[str]:
    """`providers.webSearchFallback` (default firecrawl): tried after an explicit provider fails."""
    names = fallback_tier_ids(ctx)
    available = lineup.scan(ctx).available
    return [name for name in names if name != explicit and name not in excluded and name in available]


class Guards(Protocol):
    """What the engine checks around each attempt: health and pacing before, health and the plan
    rate the answer reported (`ProviderResult.plan_rate`, the provider's pace from then on) after."""

    async def before(self, info: ProviderInfo, ctx: ProviderContext, budget: Budget) -> Skip | None: ...

    async def after(
        self, info: ProviderInfo, ctx: ProviderContext, error: BaseException | None, plan_rate: float | None
    ) -> None: ...


@dataclass(slots=True)
class Walk:
    """How to walk: the engine's `guards`, the search's `budget` (each attempt's context is given
    it, `ProviderContext.for_attempt`), and `hedge`: seconds after which the next provider starts alongside.
    Read only; not frozen, because one is made per search and a frozen one costs three times as much."""

    guards: Guards | None = None
    budget: Budget = NO_DEADLINE
    hedge: float | None = None


async def run_search(
    params: SearchParams,
    ctx: ProviderContext,
    lineup: Lineup,
    *,
    provider: str | None = None,
    preferred: str = "auto",
    excluded: Iterable[str] = (),
    walk: Walk | None = None,
) -> SearchResponse:
    """Choose the provider list and walk it; never raises for provider failures.

    An explicitly chosen provider that fails (or is skipped) is followed by the fallback tier; a
    response it serves says why (`fallback`).
    """
    excluded = frozenset(excluded)
    walk = walk if walk is not None else Walk()
    notices = search_notices(params, ctx, lineup)
    chosen: str | None = None
    if provider is not None and provider != "auto":
        if lineup.may_run(provider, ctx):
            chain, chosen = [provider], provider
        else:
            chain = resolve_chain(ctx, lineup, "auto", excluded)
            why = lineup.reason(provider, ctx)
            message = (
                f"provider {provider} was requested but is not available ({why}); used the automatic chain instead"
            )
            notices.append(fallback("provider", provider, message))
    else:
        chain = resolve_chain(ctx, lineup, "auto" if provider == "auto" else preferred, excluded)
        chosen = chain[0] if chain and chain[0] == preferred else None
    if not chain:
        return SearchResponse(provider="none", query=params.query, notices=tuple(notices), error=NO_PROVIDER_MESSAGE)

    attempts: list[Attempt] = []
    served_by_fallback: str | None = None
    walked = chain
    while True:  # the chain, then (after a failed explicit provider) the fallback tier
        served = await _walk(walked, chosen, lineup, params, ctx, walk, attempts)
        if served is not None:
            return _served(served[0], params, served[1], attempts, notices, served_by_fallback)
        tier = fallback_tier(ctx, lineup, chain[0], excluded) if provider == chosen and chosen else []
        if not tier or served_by_fallback is not None:
            break
        served_by_fallback = f"{chain[0]} unavailable: {attempts[-1].error}"
        walked = tier
    failures = [f"{a.provider}: {a.error}" for a in attempts]
    error = "All web search providers failed: " + "; ".join(failures) if len(attempts) > 1 else attempts[-1].error
    return SearchResponse(
        provider=attempts[-1].provider,
        query=params.query,
        attempts=tuple(attempts),
        notices=tuple(notices),
        error=error,
    )


async def _walk(
    ids: list[str],
    chosen: str | None,
    lineup: Lineup,
    params: SearchParams,
    ctx: ProviderContext,
    walk: Walk,
    attempts: list[Attempt],
) -> tuple[str, ProviderResult] | None:
    """Try `ids` in order until one answers, recording every attempt; with `walk.hedge`, a
    provider that has not answered within it gets the next one started beside it, the first
    answer winning and the others cancelled (their attempts say so)."""
    if walk.hedge is None:
        for provider_id in ids:
            own = ctx.for_attempt(walk.budget, explicit=provider_id == chosen)
            result, attempt = await guarded(lineup, lineup.info(provider_id), params, own, walk)
            attempts.append(attempt)
            if result is not None:
                return provider_id, result
        return None
    await transport_ready(ctx, walk.budget)  # the hedge counts from the first request, not from the import
    clock, waiting = ctx.clock, list(ids)
    running: dict[asyncio.Task[tuple[ProviderResult | None, Attempt]], tuple[int, str, float]] = {}
    ended: list[tuple[int, Attempt]] = []  # (start order, attempt): recorded in the order they started

    def start() -> None:
        provider_id = waiting.pop(0)
        own = ctx.for_attempt(walk.budget, explicit=provider_id == chosen)
        task = asyncio.ensure_future(guarded(lineup, lineup.info(provider_id), params, own, walk))
        running[task] = (len(ids) - len(waiting) - 1, provider_id, clock.monotonic())

    start()
    try:
        while running:
            timeout = walk.hedge if waiting else None
            done, _ = await asyncio.wait(running, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if not done:  # the hedge elapsed with no answer: start the next one beside it
                start()
                continue
            for task in done:
                order, provider_id, _ = running.pop(task)
                result, attempt = task.result()
                ended.append((order, attempt))
                if result is not None:
                    for other, (other_order, other_id, started) in running.items():
                        other.cancel()
                        message = f"cancelled: {provider_id} answered first"
                        duration = _ms(clock.monotonic() - started)
                        ended.append((other_order, Attempt(other_id, None, message, duration, "cancelled")))
                    running.clear()
                    return provider_id, result
            if waiting:
                start()  # a failure: the next one goes now, as in a plain walk
        return None
    finally:
        for task in running:
            task.cancel()
        attempts.extend(attempt for _, attempt in sorted(ended, key=lambda pair: pair[0]))


async def transport_ready(ctx: ProviderContext, budget: Budget) -> None:
    """The built-in transport of a fresh process loaded (aiohttp's import, about 0.2 s), waiting
    until the `budget`'s end at most. A walk whose clock counts from its first attempt (the hedge, the
    fan-out's soft deadline) waits for it first: counted in the first attempt, it started the
    hedge's second provider beside a first one that answered at once."""
    if ctx.transport is not None:
        await ctx.transport.ready(budget.remaining())


async def guarded(
    lineup: Lineup, info: ProviderInfo, params: SearchParams, ctx: ProviderContext, walk: Walk
) -> tuple[ProviderResult | None, Attempt]:
    """One attempt inside the engine's checks, the search's deadline and the attempt's own
    timeout (`attempt_timeout`), which counts from when the provider is asked (after pacing)."""
    budget = walk.budget
    remaining = budget.remaining()
    if remaining is not None and remaining <= 0:
        message = f"{info.label} was not asked: the search's deadline had passed"
        return None, Attempt(info.id, None, message, 0.0, "timeout", skipped="deadline")
    if walk.guards is not None:
        skip = await walk.guards.before(info, ctx, budget)
        if skip is not None:
            return None, Attempt(
                info.id, None, skip.message, 0.0, skip.kind, skipped=skip.reason, until=iso(skip.until)
            )
        remaining = budget.remaining()
    own: _Limit | None = None
    # With less time left than any attempt's own timeout, the search's deadline comes first.
    short = remaining is not None and remaining <= ctx.settings.shortest_attempt_timeout
    limit = None if short else attempt_timeout(ctx, info.id, params)
    if limit is not None and (remaining is None or remaining > limit[0]):
        capped = ctx.budget.capped(ctx.clock, limit[0])
        if capped is not ctx.budget:  # the attempt's timeout ends it before the search's deadline
            own, remaining = _Limit(*limit), limit[0]
            ctx = ctx.for_attempt(capped, explicit=ctx.explicit)
    result, attempt, error = await _attempt(lineup, info, params, ctx, remaining, own)
    if walk.guards is not None:
        await walk.guards.after(info, ctx, error, None if result is None else result.plan_rate)
    return result, attempt


def attempt_timeout(ctx: ProviderContext, provider_id: str, params: SearchParams) -> tuple[float, str] | None:
    """Seconds one attempt at `provider_id` may take, and what says so: `[timeout] <id>`, else
    `providers.webSearchTimeoutSeconds`, else its default (60 s), which a deep mode's search goes
    without (its attempts have the deep deadline, 120 s: Exa's research takes longer than 60 s)."""
    configured = ctx.settings.attempt_timeout(provider_id)
    if configured is not None:
        return configured
    if params.mode in DEEP_MODES:
        return None
    return DEFAULT_ATTEMPT_TIMEOUT, "the default of providers.webSearchTimeoutSeconds"


@dataclass(frozen=True, slots=True)
class _Limit:
    """An attempt's own timeout, when it ends the attempt before the search's deadline."""

    seconds: float
    source: str


class AttemptTimedOut(ProviderTimeoutError):
    """An attempt that ran out of its own timeout (`providers.webSearchTimeoutSeconds`, `[timeout]`)
    before the search's deadline; `given` holds the seconds. The chain moves on, as for any timeout."""


async def _attempt(
    lineup: Lineup,
    info: ProviderInfo,
    params: SearchParams,
    ctx: ProviderContext,
    remaining: float | None = None,
    own: _Limit | None = None,
) -> tuple[ProviderResult | None, Attempt, BaseException | None]:
    """One provider: plan, search, check, within `remaining` seconds (`own`: the attempt's
    timeout, when that is what they end at); the result (or None), the attempt's record and
    the error it failed with."""
    clock = ctx.clock
    started = clock.monotonic()
    notices: list[Notice] = []
    try:
        impl = lineup.load(info.id)
        plan = impl.plan(params, ctx)
        notices = [*plan.notices, *_unsupported(info.label, impl.supports, params, plan, ctx)]
        result = await _within(impl, plan, ctx, info, remaining, own)
        notices += result.notices
        if plan.filters.include_domains or plan.filters.exclude_domains:
            notices += _enforce_domains(result, plan)
        if plan.filters.operators is not None:
            notices += enforce_operators(result, plan)
        if not result.has_renderable_content():
            raise NoResults(info.id, f"{info.label} returned no renderable search content.", 204)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        if not isinstance(exc, SearchProviderError):
            log.debug("provider %s raised", info.id, exc_info=True)
        status = exc.status if isinstance(exc, SearchProviderError) else None
        retry = exc.retry_after if isinstance(exc, SearchProviderError) else None
        duration = _ms(clock.monotonic() - started)
        return None, Attempt(info.id, status, _message(info, exc), duration, _kind(exc), retry, tuple(notices)), exc
    return result, Attempt(info.id, None, None, _ms(clock.monotonic() - started), notices=tuple(notices)), None


async def _within(
    impl: Provider,
    plan: Plan,
    ctx: ProviderContext,
    info: ProviderInfo,
    remaining: float | None,
    own: _Limit | None = None,
) -> ProviderResult:
    """`impl.search` within `remaining` seconds. A search made only of requests, over a
    transport that bounds each request, needs no timer of its own: `ctx.send` cuts each request
    to what remains. Anything else (a stream, a wait, a transport of the caller's) runs under
    `asyncio.timeout`. Running out is reaching the search's deadline, or, with `own`, the
    attempt's own timeout: the error says which."""
    if remaining is None:
        return await impl.search(plan, ctx)
    try:
        if (
            ctx.budget.ends is not None
            and ctx.transport is not None
            and ctx.transport.bounds_each_request
            and impl.requests_only()
        ):
            return await impl.search(plan, ctx)
        async with asyncio.timeout(remaining):
            return await impl.search(plan, ctx)
    except (TimeoutError, DeadlineReached):
        if own is not None:
            timed_out = AttemptTimedOut(info.id, out_of_time(info.label, own.seconds, own.source))
            timed_out.given = own.seconds
            raise timed_out from None
        reached = DeadlineReached(info.id, too_late(info.label))
        reached.given = remaining
        raise reached from None


def out_of_time(label: str, seconds: float, source: str) -> str:
    """What a provider that ran out of its own attempt timeout is said to have done."""
    return f"{label} did not answer within its attempt timeout of {seconds:g} s ({source})"


def _served(
    provider_id: str,
    params: SearchParams,
    result: ProviderResult,
    attempts: list[Attempt],
    notices: list[Notice],
    served_by_fallback: str | None,
) -> SearchResponse:
    return SearchResponse(
        provider=provider_id,
        query=params.query,
        answer=result.answer,
        sources=result.sources,
        citations=result.citations,
        related_questions=result.related_questions,
        search_queries=result.search_queries,
        usage=result.usage,
        model=result.model,
        request_id=result.request_id,
        auth_mode=result.auth_mode,
        attempts=tuple(attempts),
        notices=(*notices, *attempts[-1].notices),
        fallback=served_by_fallback,
    )


def _enforce_domains(result: ProviderResult, plan: Plan) -> list[Notice]:
    """Domain filters are a promise, whatever the provider did with them (a native filter,
    `site:` operators, nothing): sources outside the included hosts or inside the excluded ones
    are removed here, and a notice counts them. A source's host is its URL's, or, for a URL that
    only redirects (Gemini's grounding links), the host its title names. Only the lists the
    caller gave: those taken from `site:` / `-site:` in the query are the lenient pass's
    (`_postfilter`), which relaxes a constraint rather than leave nothing."""
    from .._core._filters import source_on_domains

    f, notices = plan.filters, list[Notice]()
    lists = (("include_domains", f.explicit_include, True), ("exclude_domains", f.explicit_exclude, False))
    for name, domains, keep in lists:
        if not domains:
            continue
        kept = tuple(s for s in result.sources if source_on_domains(s, domains) is keep)
        if len(kept) < len(result.sources):
            where = "outside these hosts" if keep else "on these hosts"
            notices.append(results_dropped(name, getattr(plan.params, name), len(result.sources) - len(kept), where))
            result.sources = kept
    return notices


def search_notices(params: SearchParams, ctx: ProviderContext, lineup: Lineup) -> list[Notice]:
    """What a search says whoever serves it: the date ladder's notices, and (once) that
    agent.db could not be read."""
    notices: list[Notice] = list(ctx.filter_notices(params))
    unreadable = lineup.unreadable_store(ctx)
    if unreadable is not None and unreadable.store_error is not None:
        notices.append(_store_notice(unreadable.store_error, unreadable.left_out))
    return notices


def _store_notice(error: str, left_out: tuple[str, ...]) -> Notice:
    """Said once per search: agent.db could not be read, and what that leaves out."""
    which = (
        f"providers configured only there are left out ({', '.join(left_out)})" if left_out else "nothing is left out"
    )
    return partial(f"stored credentials could not be read, so {which}: {error}")


def _unsupported(
    label: str, supports: Mapping[str, str], params: SearchParams, plan: Plan, ctx: ProviderContext
) -> list[Notice]:
    if not params.has_given:
        return []
    settled = _settled(params, plan, ctx) if params.rich else frozenset()
    return [
        not_supported(name, value, label)
        for name, value in params.given().items()
        if name not in supports and name not in RENDER_SIDE and name not in settled
    ]


def _settled(params: SearchParams, plan: Plan, ctx: ProviderContext) -> frozenset[str]:
    """The parameters normalising already dropped (a date that is none, an end before the start)
    or turned into their default (a legacy mode, searched as auto): their notice said so, and a
    provider's "not applied" after it contradicted it."""
    from .._core._params import PARAMS_BY_NAME

    dropped = {n.param for n in ctx.filter_notices(params) if n.kind == "dropped" and n.param is not None}
    defaulted = {
        name for name in params.given() if getattr(plan.filters, name, _ABSENT) == PARAMS_BY_NAME[name].default
    }
    return frozenset(dropped | defaulted)


_ABSENT: Final = object()


def _message(info: ProviderInfo, exc: BaseException) -> str:
    if isinstance(exc, SearchProviderError):
        return exc.message
    return str(exc) or f"Unknown error from {info.label}"


def _kind(exc: BaseException) -> str:
    if isinstance(exc, SearchProviderError):
        return exc.kind
    return "config" if isinstance(exc, ConfigError) else "internal"


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)
