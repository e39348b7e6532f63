"""The provider registry: one table row per provider, modules imported on first use.

Availability is declared here (env vars, stored credential ids, settings), so that the chain,
`websearch providers` and the MCP tool's enum can decide it without importing a provider module.
Adding a provider means adding its module and one row below.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ._types import SEARCH_PROVIDER_ORDER

if TYPE_CHECKING:
    from ._providers._base import Provider

__all__ = ["PROVIDERS", "ProviderInfo", "load_provider"]


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    """What the chain knows about a provider before importing it."""

    id: str
    label: str
    env_keys: tuple[str, ...] = ()  # any one of these set makes it available
    credential_ids: tuple[str, ...] = ()  # a stored credential under any of these ids does too
    settings_keys: tuple[str, ...] = ()  # a non-empty setting (or its env twin) does too
    keyless: bool = False  # available with nothing configured
    explicit_keyless: bool = False  # reachable without credentials when chosen explicitly
    disabled_by: tuple[str, ...] = ()  # boolean settings that, when false, remove it entirely
    implemented: bool = True

    @property
    def module(self) -> str:
        """The provider module's import path."""
        return f"websearch._providers.{self.id}"


def _row(id: str, label: str, *env: str, **kw: object) -> ProviderInfo:
    kw.setdefault("credential_ids", (id,))
    return ProviderInfo(id, label, tuple(env), **kw)  # type: ignore[arg-type]


PROVIDERS: Final[Mapping[str, ProviderInfo]] = {
    p.id: p
    for p in (
        _row(
            "perplexity",
            "Perplexity",
            "PERPLEXITY_COOKIES",
            "PERPLEXITY_API_KEY",
            "PPLX_API_KEY",
            explicit_keyless=True,
        ),
        _row(
            "gemini", "Gemini", "GEMINI_API_KEY", credential_ids=("gemini", "google-gemini-cli", "google-antigravity")
        ),
        _row("anthropic", "Anthropic", "ANTHROPIC_SEARCH_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"),
        _row("codex", "OpenAI", credential_ids=("codex", "openai-codex")),
        _row("xai", "xAI", "XAI_API_KEY"),
        _row("zai", "Z.AI", "ZAI_API_KEY"),
        _row("exa", "Exa", "EXA_API_KEY", explicit_keyless=True, disabled_by=("exa.enabled", "exa.enableSearch")),
        _row("tinyfish", "TinyFish", "TINYFISH_API_KEY"),
        _row("jina", "Jina", "JINA_API_KEY"),
        _row("kagi", "Kagi", "KAGI_API_KEY"),
        _row("tavily", "Tavily", "TAVILY_API_KEY"),
        _row("firecrawl", "Firecrawl", "FIRECRAWL_API_KEY"),
        _row("brave", "Brave", "BRAVE_API_KEY"),
        _row(
            "kimi",
            "Kimi",
            "MOONSHOT_SEARCH_API_KEY",
            "KIMI_SEARCH_API_KEY",
            "MOONSHOT_API_KEY",
            "KIMI_API_KEY",
            credential_ids=("kimi", "moonshot", "kimi-code"),
        ),
        _row("parallel", "Parallel", "PARALLEL_API_KEY"),
        _row("synthetic", "Synthetic", "SYNTHETIC_API_KEY"),
        _row("searxng", "SearXNG", credential_ids=(), settings_keys=("searxng.endpoint",)),
        _row("duckduckgo", "DuckDuckGo", credential_ids=(), keyless=True, explicit_keyless=True),
    )
}
assert tuple(PROVIDERS) == SEARCH_PROVIDER_ORDER, "registry order must match SEARCH_PROVIDER_ORDER"

_loaded: dict[str, Provider] = {}


def load_provider(provider_id: str) -> Provider:
    """Import the provider's module on first use and return its `PROVIDER` singleton."""
    provider = _loaded.get(provider_id)
    if provider is None:
        info = PROVIDERS[provider_id]
        if not info.implemented:
            raise LookupError(f"{info.label} is not implemented yet")
        provider = importlib.import_module(info.module).PROVIDER
        _loaded[provider_id] = provider
    return provider
