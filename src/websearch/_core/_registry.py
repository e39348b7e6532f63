"""The provider registry: one row per provider, the only list of them.

A row says everything known about a provider before its module is imported: its chain position
(the row order), label, the environment variables, stored credential ids and settings that make
it available, whether it needs nothing (keyless) or nothing when chosen explicitly, whether it
streams, and where its module and its loopback fake live. `SEARCH_PROVIDER_ORDER`, the CLI's
choices, the MCP tool's enum, `websearch.testing.FAKES` and the settings checks all read these rows.
Adding a provider means adding its module, its fake and one row below.

A leaf: it imports nothing of websearch, so every module may read the rows. The provider
objects are loaded by `websearch._engine._lineup.load_provider`, which knows their type.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = ["PROVIDERS", "SEARCH_PROVIDER_ORDER", "ProviderId", "ProviderInfo", "Tier", "load_object"]

#: Provider ids are open: the registry's rows, plus whatever a caller injects (`WebSearch(providers=...)`).
ProviderId = str
Tier = Literal["answer", "search", "keyless"]


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    """What the chain knows about a provider before importing it.

    For a provider of your own, give at least `id` and `label` (and `keyless=True` if it needs no
    key, or the `env_keys` whose presence makes it available); `module` and `fake` are only for
    the built-in rows.
    """

    id: str
    label: str
    env_keys: tuple[str, ...] = ()  # any one of these set makes it available
    credential_ids: tuple[str, ...] = ()  # a stored credential under any of these ids does too
    settings_keys: tuple[str, ...] = ()  # a non-empty setting (or its env twin) does too
    keyless: bool = False  # available with nothing configured
    explicit_keyless: bool = False  # reachable without credentials when chosen explicitly
    disabled_by: tuple[str, ...] = ()  # boolean settings that, when false, remove it entirely
    streaming: bool = False  # answers as a stream of events (SSE)
    tier: Tier = "search"  # answer engine, keyed search API, or keyless engine
    pace: float | None = None  # polite default request rate (per second) across processes; `[pacing]` overrides
    login_import: str = ""  # where `websearch auth import <id>` copies an official CLI's login from
    module: str = ""  # "package.module:NAME" of the provider object (built-in rows)
    fake: str = ""  # "package.module:NAME" of its loopback fake in websearch.testing (built-in rows)
    #: Its answers report the key's plan's per-second limit (`ProviderResult.plan_rate`), which
    #: becomes its pace unless `[pacing]` names it.
    plan_pace: bool = False


def _row(
    id: str, label: str, *env: str, fake: str = "", home: str = "", name: str = "PROVIDER", **kw: Any
) -> ProviderInfo:
    """A built-in row: its provider is `name` in `websearch._providers.<home>` and its fake `fake`
    in `websearch.testing.<home>` (`home` is the id unless one module serves two rows)."""
    kw.setdefault("credential_ids", (id,))
    home = home or id
    module = f"websearch._providers.{home}:{name}"
    return ProviderInfo(id, label, tuple(env), module=module, fake=f"websearch.testing.{home}:{fake}", **kw)


_ROWS: Final = (
    _row(
        "perplexity",
        "Perplexity",
        "PERPLEXITY_COOKIES",
        "PERPLEXITY_API_KEY",
        "PPLX_API_KEY",
        explicit_keyless=True,
        streaming=True,
        tier="answer",
        fake="FakePerplexity",
    ),
    _row(
        "gemini",
        "Gemini",
        "GEMINI_API_KEY",
        credential_ids=("gemini", "google-gemini-cli", "google-antigravity"),
        streaming=True,
        tier="answer",
        login_import="the Gemini CLI's ~/.gemini/",
        fake="FakeGemini",
    ),
    _row(
        "anthropic",
        "Anthropic",
        "ANTHROPIC_SEARCH_API_KEY",
        "ANTHROPIC_OAUTH_TOKEN",
        "ANTHROPIC_API_KEY",
        tier="answer",
        fake="FakeAnthropic",
    ),
    _row(
        "codex",
        "OpenAI",
        credential_ids=("codex", "openai-codex"),
        streaming=True,
        tier="answer",
        login_import="the Codex CLI's ~/.codex/auth.json",
        fake="FakeCodex",
    ),
    _row("xai", "xAI", "XAI_API_KEY", tier="answer", fake="FakeXAI"),
    _row("zai", "Z.AI", "ZAI_API_KEY", tier="answer", fake="FakeZai"),
    _row(
        "exa",
        "Exa",
        "EXA_API_KEY",
        explicit_keyless=True,
        disabled_by=("exa.enabled", "exa.enableSearch"),
        fake="FakeExa",
    ),
    _row("tinyfish", "TinyFish", "TINYFISH_API_KEY", fake="FakeTinyFish"),
    _row("jina", "Jina", "JINA_API_KEY", fake="FakeJina"),
    _row("kagi", "Kagi", "KAGI_API_KEY", fake="FakeKagi"),
    _row("tavily", "Tavily", "TAVILY_API_KEY", fake="FakeTavily"),
    _row("firecrawl", "Firecrawl", "FIRECRAWL_API_KEY", fake="FakeFirecrawl"),
    _row("brave", "Brave", "BRAVE_API_KEY", plan_pace=True, fake="FakeBrave"),
    _row(
        "kimi",
        "Kimi",
        "MOONSHOT_SEARCH_API_KEY",
        "KIMI_SEARCH_API_KEY",
        "MOONSHOT_API_KEY",
        "KIMI_API_KEY",
        credential_ids=("kimi", "moonshot", "kimi-code"),
        fake="FakeKimi",
    ),
    _row("parallel", "Parallel", "PARALLEL_API_KEY", fake="FakeParallel"),
    _row("synthetic", "Synthetic", "SYNTHETIC_API_KEY", fake="FakeSynthetic"),
    _row("serper", "Serper", "SERPER_API_KEY", fake="FakeSerper"),
    _row("keenable", "Keenable", "KEENABLE_API_KEY", explicit_keyless=True, fake="FakeKeenable"),
    _row(
        "searxng", "SearXNG", credential_ids=(), settings_keys=("searxng.endpoint",), tier="keyless", fake="FakeSearXNG"
    ),
    _row(
        "duckduckgo",
        "DuckDuckGo",
        credential_ids=(),
        keyless=True,
        explicit_keyless=True,
        tier="keyless",
        pace=1.0,
        fake="FakeDuckDuckGo",
    ),
    _row("bing", "Bing", credential_ids=(), keyless=True, tier="keyless", pace=0.5, fake="FakeBing"),
    _row("yahoo", "Yahoo", credential_ids=(), keyless=True, tier="keyless", pace=0.5, fake="FakeYahoo"),
    _row("startpage", "Startpage", credential_ids=(), keyless=True, tier="keyless", pace=0.5, fake="FakeStartpage"),
    _row("mojeek", "Mojeek", credential_ids=(), keyless=True, tier="keyless", pace=0.5, fake="FakeMojeek"),
    _row("google", "Google", credential_ids=(), keyless=True, tier="keyless", pace=0.2, fake="FakeGoogle"),
    _row("ecosia", "Ecosia", credential_ids=(), keyless=True, tier="keyless", pace=0.2, fake="FakeEcosia"),
    _row(
        "keenable_public",
        "Keenable Public",
        credential_ids=(),
        keyless=True,
        tier="keyless",
        pace=0.25,
        home="keenable",
        name="PUBLIC",
        fake="FakeKeenablePublic",
    ),
)

#: Every built-in provider by id, in the automatic chain's order.
PROVIDERS: Final[Mapping[str, ProviderInfo]] = {row.id: row for row in _ROWS}
#: The automatic chain's priority: answer engines first, keyed search APIs next, keyless last.
SEARCH_PROVIDER_ORDER: Final[tuple[str, ...]] = tuple(PROVIDERS)


def load_object(path: str) -> Any:
    """The object a `package.module:NAME` path names (imported on first use)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)
