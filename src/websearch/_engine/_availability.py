"""Is a provider available? Decided from declarations alone: no provider module is imported.

The registry row says which environment variables, stored credential ids and settings make a
provider available; this module reads them through a `ProviderContext` (environment, settings,
agent.db). The chain, `websearch providers`, the MCP tool's enum and providers themselves ask here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core._registry import ProviderInfo
from .._core._settings import ENV_TWINS
from ..errors import ConfigError

if TYPE_CHECKING:
    from .._core._context import ProviderContext

__all__ = ["is_available", "is_explicitly_available", "unavailable_reason"]


def _disabled(info: ProviderInfo, ctx: ProviderContext) -> bool:
    for key in info.disabled_by:  # noqa: SIM110 - a loop, not any(<generator>): it runs on every search
        if not ctx.settings.get_bool(key, True):
            return True
    return False


def is_available(info: ProviderInfo, ctx: ProviderContext) -> bool:
    """May the automatic chain use this provider? Cheap: env, settings, stored credential ids."""
    if _disabled(info, ctx):
        return False
    if info.keyless or info.id in ctx.api_keys:
        return True
    env = ctx.env
    for name in info.env_keys:
        if env.get(name):
            return True
    for key in info.settings_keys:
        if ctx.settings.get(key):
            return True
    if not info.credential_ids:
        return False
    try:
        return not ctx.credentials.ids().isdisjoint(info.credential_ids)
    except ConfigError:  # a damaged agent.db makes no provider available, and fails no search
        return False


def is_explicitly_available(info: ProviderInfo, ctx: ProviderContext) -> bool:
    """May this provider run when chosen explicitly (preferred or `provider=`)?"""
    if info.explicit_keyless and not _disabled(info, ctx):
        return True
    return is_available(info, ctx)


def unavailable_reason(info: ProviderInfo, ctx: ProviderContext) -> str:
    """What would make the provider available, for `websearch providers` and notices."""
    off = [key for key in info.disabled_by if not ctx.settings.get_bool(key, True)]
    if off:
        return f"disabled by the setting {' and '.join(off)}"
    ways = [f"set {name}" for name in info.env_keys]
    for key in info.settings_keys:
        twin = ENV_TWINS.get(key)
        ways.append(f"set {key} in settings.toml" + (f" or {twin}" if twin else ""))
    if info.credential_ids:
        ways.append(f"run `websearch auth set {info.credential_ids[0]}`")
    return " or ".join(ways) if ways else "not configured"
