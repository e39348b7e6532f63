"""The provider chain: which providers, in what order, run one by one until one answers.

This is the one place where every attempt is recorded (provider, status, error, duration), where
an empty answer becomes a status-204 failure, and where failures are normalised into the
`All web search providers failed: ...` summary. Cancellation is never swallowed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from ._availability import is_available, is_explicitly_available, unavailable_reason
from ._context import ProviderContext
from ._registry import PROVIDERS, ProviderInfo, load_provider
from ._types import SEARCH_PROVIDER_ORDER, Attempt, SearchParams, SearchResponse
from .errors import SearchProviderError

__all__ = [
    "DEFAULT_FALLBACK",
    "NO_PROVIDER_MESSAGE",
    "Failure",
    "fallback_tier",
    "format_failure",
    "is_available",
    "is_explicitly_available",
    "resolve_chain",
    "run_search",
    "unavailable_reason",
]

log = logging.getLogger("websearch")

NO_PROVIDER_MESSAGE = "No web search provider configured."
#: `providers.webSearchFallback` when the setting is absent.
DEFAULT_FALLBACK: Final = ("firecrawl",)


def resolve_chain(ctx: ProviderContext, preferred: str = "auto", excluded: Iterable[str] = ()) -> list[ProviderInfo]:
    """The ordered fallback list: the preferred provider (if explicitly available) then the
    automatic order, each gated by availability; excluded ids never appear."""
    excluded = frozenset(excluded)
    chain: list[ProviderInfo] = []
    if preferred != "auto" and preferred not in excluded:
        info = PROVIDERS[preferred]
        if is_explicitly_available(info, ctx):
            chain.append(info)
    for provider_id in SEARCH_PROVIDER_ORDER:
        if provider_id == preferred or provider_id in excluded:
            continue
        info = PROVIDERS[provider_id]
        if is_available(info, ctx):
            chain.append(info)
    return chain


# -- failures ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Failure:
    provider: str
    error: BaseException


def format_failure(failure: Failure) -> str:
    """One failure as the spec words it (401/403 and Anthropic 404 are rewritten)."""
    info = PROVIDERS.get(failure.provider)
    label = info.label if info else failure.provider
    err = failure.error
    if isinstance(err, SearchProviderError):
        if err.provider == "anthropic" and err.status == 404:
            return "Anthropic web search returned 404 (model or endpoint not found)."
        if err.status in (401, 403) and err.provider != "zai":
            text = f"{label} authorization failed ({err.status}). Check API key or base URL."
            return f"{text} {err.hint}" if err.hint else text
        return err.message
    text = str(err)
    return text if text else f"Unknown error from {label}"


def _summary(chain_length: int, failures: list[Failure]) -> str:
    if chain_length > 1:
        return "All web search providers failed: " + "; ".join(f"{f.provider}: {format_failure(f)}" for f in failures)
    return format_failure(failures[-1])


# -- the walk ----------------------------------------------------------------------------------


#: Parameters every provider honours because the renderer applies them (body length in `blocks`).
RENDER_SIDE: Final = frozenset({"text_chars"})


def _ignored_notices(label: str, supports: Mapping[str, str], params: SearchParams) -> list[str]:
    return [
        f"{name}={value!r} not applied: {label} does not support it"
        for name, value in params.given().items()
        if name not in supports and name not in RENDER_SIDE
    ]


def fallback_tier(ctx: ProviderContext, explicit: str, excluded: Iterable[str] = ()) -> list[ProviderInfo]:
    """`providers.webSearchFallback` (default firecrawl): tried after an explicit provider fails."""
    names = ctx.settings.get("providers.webSearchFallback", list(DEFAULT_FALLBACK))
    excluded = frozenset(excluded)
    return [
        PROVIDERS[name]
        for name in names
        if name != explicit and name not in excluded and is_available(PROVIDERS[name], ctx)
    ]


async def run_search(
    params: SearchParams,
    ctx: ProviderContext,
    *,
    provider: str | None = None,
    preferred: str = "auto",
    excluded: Iterable[str] = (),
) -> SearchResponse:
    """Choose the provider list and walk it; never raises for provider failures.

    An explicitly chosen provider that fails is followed by the fallback tier; a response it
    serves says why (`fallback`).
    """
    notices: list[str] = []
    explicit = False
    if provider is not None and provider != "auto":
        info = PROVIDERS[provider]
        explicit = is_explicitly_available(info, ctx)
        if explicit:
            chain = [info]
        else:
            chain = resolve_chain(ctx, "auto", excluded)
            notices.append(
                f"provider {provider} was requested but is not available ({unavailable_reason(info, ctx)}); "
                "used the automatic chain instead"
            )
    elif provider == "auto":
        chain = resolve_chain(ctx, "auto", excluded)
    else:
        chain = resolve_chain(ctx, preferred, excluded)

    if not chain:
        return SearchResponse(provider="none", query=params.query, notices=tuple(notices), error=NO_PROVIDER_MESSAGE)

    attempts: list[Attempt] = []
    failures: list[Failure] = []
    walked = chain
    fallback: str | None = None
    clock = ctx.clock
    while True:  # the chain, then (after a failed explicit provider) the fallback tier
        for info in walked:  # inline rather than a helper coroutine: one frame less per search
            started = clock.monotonic()
            try:
                impl = load_provider(info.id)
                response = await impl.search(params, ctx)
                if not response.has_renderable_content():
                    raise SearchProviderError(info.id, f"{info.label} returned no renderable search content.", 204)
                provider_notices = impl.param_notices(params, ctx)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not isinstance(exc, SearchProviderError):
                    log.debug("provider %s raised", info.id, exc_info=True)
                failure = Failure(info.id, exc)
                failures.append(failure)
                status = exc.status if isinstance(exc, SearchProviderError) else None
                attempts.append(Attempt(info.id, status, format_failure(failure), _ms(clock.monotonic() - started)))
                continue
            attempts.append(Attempt(info.id, None, None, _ms(clock.monotonic() - started)))
            notices.extend(ctx.filter_notices(params))
            notices.extend(provider_notices)
            notices.extend(_ignored_notices(info.label, impl.supports, params))
            notices.extend(response.notices)
            return SearchResponse(  # positional, in field order (cheaper than dataclasses.replace)
                info.id,
                params.query,
                response.answer,
                response.sources,
                response.citations,
                response.related_questions,
                response.search_queries,
                response.usage,
                response.model,
                response.request_id,
                response.auth_mode,
                tuple(attempts),
                tuple(notices),
                None,
                fallback,
            )
        tier = fallback_tier(ctx, chain[0].id, excluded) if explicit and fallback is None else []
        if not tier:
            break
        fallback = f"{chain[0].id} unavailable: {format_failure(failures[-1])}"
        walked = tier
    tried = chain + walked if fallback is not None else chain
    return SearchResponse(
        provider=tried[-1].id,
        query=params.query,
        attempts=tuple(attempts),
        notices=tuple(notices),
        error=_summary(len(tried), failures),
    )


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)
