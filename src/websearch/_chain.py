"""The provider chain: which providers, in what order, tried one by one until one answers.

This is the one place where every attempt is recorded (provider, status, error, its kind,
duration, the notices of its plan), where an answer with nothing renderable becomes `NoResults`,
and where failures are summed up as `All web search providers failed: ...`. Errors are
reported as their own messages (written where they were built); the chain never looks at a
provider's id or an error's text. Cancellation is never swallowed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Final

from ._lineup import Lineup
from ._notices import Notice, fallback, not_supported, partial, results_dropped
from ._types import Attempt, ProviderResult, SearchParams, SearchResponse
from .errors import ConfigError, NoResults, SearchProviderError

if TYPE_CHECKING:
    from ._context import ProviderContext
    from ._providers._base import Plan
    from ._registry import ProviderInfo

__all__ = ["DEFAULT_FALLBACK", "NO_PROVIDER_MESSAGE", "RENDER_SIDE", "resolve_chain", "run_search"]

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
    lineup's order, each gated by availability; excluded ids never appear."""
    excluded = frozenset(excluded)
    scan = lineup.scan(ctx)
    chain = [preferred] if preferred in scan.explicit and preferred not in excluded else []
    chain += [p for p in lineup.ids if p in scan.available and p not in excluded and p != preferred]
    return chain


def fallback_tier(ctx: ProviderContext, lineup: Lineup, explicit: str, excluded: frozenset[str]) -> list[str]:
    """`providers.webSearchFallback` (default firecrawl): tried after an explicit provider fails."""
    names = ctx.settings.get("providers.webSearchFallback", list(DEFAULT_FALLBACK))
    available = lineup.scan(ctx).available
    return [name for name in names if name != explicit and name not in excluded and name in available]


async def run_search(
    params: SearchParams,
    ctx: ProviderContext,
    lineup: Lineup,
    *,
    provider: str | None = None,
    preferred: str = "auto",
    excluded: Iterable[str] = (),
) -> SearchResponse:
    """Choose the provider list and walk it; never raises for provider failures.

    An explicitly chosen provider that fails is followed by the fallback tier; a response it
    serves says why (`fallback`).
    """
    excluded = frozenset(excluded)
    notices: list[Notice] = list(ctx.filter_notices(params))
    scan = lineup.scan(ctx)
    if scan.store_error is not None:
        notices.append(_store_notice(scan.store_error, scan.left_out))
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
    failures: list[str] = []
    served_by_fallback: str | None = None
    walked = chain
    while True:  # the chain, then (after a failed explicit provider) the fallback tier
        for provider_id in walked:
            ctx.explicit = provider_id == chosen  # one attempt at a time: the context is this search's own
            result, attempt = await _attempt(lineup, lineup.info(provider_id), params, ctx)
            attempts.append(attempt)
            if result is not None:
                return _served(provider_id, params, result, attempts, notices, served_by_fallback)
            failures.append(f"{provider_id}: {attempt.error}")
        tier = fallback_tier(ctx, lineup, chain[0], excluded) if provider == chosen and chosen else []
        if not tier or served_by_fallback is not None:
            break
        served_by_fallback = f"{chain[0]} unavailable: {attempts[-1].error}"
        walked = tier
    tried = len(attempts)
    error = "All web search providers failed: " + "; ".join(failures) if tried > 1 else attempts[-1].error
    return SearchResponse(
        provider=attempts[-1].provider,
        query=params.query,
        attempts=tuple(attempts),
        notices=tuple(notices),
        error=error,
    )


async def _attempt(
    lineup: Lineup, info: ProviderInfo, params: SearchParams, ctx: ProviderContext
) -> tuple[ProviderResult | None, Attempt]:
    """One provider: plan, search, check; the result (or None) and the attempt's record."""
    clock = ctx.clock
    started = clock.monotonic()
    notices: list[Notice] = []
    try:
        impl = lineup.load(info.id)
        plan = impl.plan(params, ctx)
        notices = [*plan.notices, *_unsupported(info.label, impl.supports, params)]
        result = await impl.search(plan, ctx)
        notices += result.notices
        if plan.filters.include_domains or plan.filters.exclude_domains:
            notices += _enforce_domains(result, plan)
        if not result.has_renderable_content():
            raise NoResults(info.id, f"{info.label} returned no renderable search content.", 204)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        if not isinstance(exc, SearchProviderError):
            log.debug("provider %s raised", info.id, exc_info=True)
        status = exc.status if isinstance(exc, SearchProviderError) else None
        retry = exc.retry_after if isinstance(exc, SearchProviderError) else None
        return None, Attempt(
            info.id, status, _message(info, exc), _ms(clock.monotonic() - started), _kind(exc), retry, tuple(notices)
        )
    return result, Attempt(info.id, None, None, _ms(clock.monotonic() - started), notices=tuple(notices))


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
    only redirects (Gemini's grounding links), the host its title names."""
    from ._filters import source_on_domains

    f, notices = plan.filters, list[Notice]()
    lists = (("include_domains", f.include_domains, True), ("exclude_domains", f.exclude_domains, False))
    for name, domains, keep in lists:
        if not domains:
            continue
        kept = tuple(s for s in result.sources if source_on_domains(s, domains) is keep)
        if len(kept) < len(result.sources):
            where = "outside these hosts" if keep else "on these hosts"
            notices.append(results_dropped(name, getattr(plan.params, name), len(result.sources) - len(kept), where))
            result.sources = kept
    return notices


def _store_notice(error: str, left_out: tuple[str, ...]) -> Notice:
    """Said once per search: agent.db could not be read, and what that leaves out."""
    which = (
        f"providers configured only there are left out ({', '.join(left_out)})" if left_out else "nothing is left out"
    )
    return partial(f"stored credentials could not be read, so {which}: {error}")


def _unsupported(label: str, supports: Mapping[str, str], params: SearchParams) -> list[Notice]:
    if not params.has_given:
        return []
    return [
        not_supported(name, value, label)
        for name, value in params.given().items()
        if name not in supports and name not in RENDER_SIDE
    ]


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
