"""Settings: `settings.toml` in the config directory, with environment variables winning.

The config directory is `$WEBSEARCH_CONFIG_DIR`, else the platform's user config directory
(`~/.config/websearch` on Linux). Keys are the spec's dotted names, written either as TOML
tables (`[searxng]` / `endpoint = "..."`) or as dotted keys (`searxng.endpoint = "..."`).
Where the spec names an environment variable for a setting (`ENV_TWINS`), the variable wins.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any, Final

from ._registry import SEARCH_PROVIDER_ORDER
from .errors import ConfigError

__all__ = ["DEFAULT_TIMEOUT", "ENV_TWINS", "Settings", "config_dir"]

DEFAULT_TIMEOUT: Final = 60.0  # seconds per HTTP request, as upstream

#: Settings whose environment variable, when set, wins over the file.
ENV_TWINS: Final[Mapping[str, str]] = {
    "searxng.endpoint": "SEARXNG_ENDPOINT",
    "searxng.basicUsername": "SEARXNG_BASIC_USERNAME",
    "searxng.basicPassword": "SEARXNG_BASIC_PASSWORD",
    "searxng.token": "SEARXNG_TOKEN",
    "providers.webSearchGeminiModel": "GEMINI_SEARCH_MODEL",
    "providers.list": "WEBSEARCH_PROVIDERS",
}


#: Boolean settings, checked when the file is read so that a bad value fails early, not mid-search.
BOOL_SETTINGS: Final = ("exa.enabled", "exa.enableSearch")


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where settings.toml and agent.db live."""
    env = os.environ if env is None else env
    override = env.get("WEBSEARCH_CONFIG_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("websearch", appauthor=False))


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


class Settings:
    """Read-only view of settings.toml plus the environment."""

    def __init__(
        self,
        values: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        path: Path | None = None,
    ) -> None:
        self._values = dict(values or {})
        self._env: Mapping[str, str] = os.environ if env is None else env
        self.path = path
        self._validate()

    @classmethod
    def load(cls, directory: Path, env: Mapping[str, str] | None = None) -> Settings:
        """Read `<directory>/settings.toml`; a missing file means defaults."""
        path = directory / "settings.toml"
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return cls({}, env, path)
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
        try:
            table = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path} is not valid TOML: {exc}") from None
        return cls(_flatten(table), env, path)

    def get(self, key: str, default: Any = None) -> Any:
        """The value of a dotted key: its env twin if set, else the file, else `default`."""
        twin = ENV_TWINS.get(key)
        if twin is not None:
            value = self._env.get(twin)
            if value is not None:  # set, even empty: an empty SearXNG Basic password is valid
                return value
        return self._values.get(key, default)

    def get_str(self, key: str) -> str | None:
        """A string setting, or None; ConfigError if it is set to something else."""
        value = self.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise ConfigError(f"setting {key} must be a string, got {value!r}")
        return value

    def get_bool(self, key: str, default: bool) -> bool:
        """A boolean setting (true/false, or "true"/"false"/"1"/"0" from the environment)."""
        value = self.get(key, default)
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
            return value.lower() in ("true", "1")
        if not isinstance(value, bool):
            raise ConfigError(f"setting {key} must be true or false, got {value!r}")
        return value

    def get_number(self, key: str, default: float) -> float:
        """A positive number setting; ConfigError otherwise."""
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
            raise ConfigError(f"setting {key} must be a positive number, got {value!r}")
        return float(value)

    @cached_property
    def preferred_provider(self) -> str:
        """`providers.webSearch`: `auto` or a provider id tried first."""
        return self.get_str("providers.webSearch") or "auto"

    @cached_property
    def excluded_providers(self) -> frozenset[str]:
        """`providers.webSearchExclude`: ids the automatic chain never uses."""
        return frozenset(self.get("providers.webSearchExclude") or ())

    @cached_property
    def provider_list(self) -> tuple[str, ...] | None:
        """`providers.list` (env `WEBSEARCH_PROVIDERS`, comma-separated, or `none`): the only
        providers to use, in this order; None for all of them."""
        value = self.get("providers.list")
        if value is None or value == "":
            return None
        if isinstance(value, str) and value.strip().lower() == "none":
            return ()
        names = [v.strip() for v in value.split(",")] if isinstance(value, str) else value
        if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
            raise ConfigError("setting providers.list must be a list of provider ids")
        unknown = [x for x in names if x and x not in SEARCH_PROVIDER_ORDER]
        if unknown:
            raise ConfigError(f"setting providers.list names unknown providers: {', '.join(unknown)}")
        return tuple(dict.fromkeys(x for x in names if x))

    @property
    def http_timeout(self) -> float:
        """`http.timeout`: seconds allowed for each HTTP request."""
        return self.get_number("http.timeout", DEFAULT_TIMEOUT)

    def _validate(self) -> None:
        preferred = self._values.get("providers.webSearch")
        if preferred is not None and preferred != "auto" and preferred not in SEARCH_PROVIDER_ORDER:
            raise ConfigError(
                f"setting providers.webSearch is {preferred!r}; use auto or one of: {', '.join(SEARCH_PROVIDER_ORDER)}"
            )
        excluded = self._values.get("providers.webSearchExclude")
        if excluded is not None:
            if not isinstance(excluded, list) or not all(isinstance(x, str) for x in excluded):
                raise ConfigError("setting providers.webSearchExclude must be a list of provider ids")
            unknown = [x for x in excluded if x not in SEARCH_PROVIDER_ORDER]
            if unknown:
                raise ConfigError(f"setting providers.webSearchExclude names unknown providers: {', '.join(unknown)}")
        fallback = self._values.get("providers.webSearchFallback")
        if fallback is not None:
            if not isinstance(fallback, list) or not all(isinstance(x, str) for x in fallback):
                raise ConfigError("setting providers.webSearchFallback must be a list of provider ids")
            unknown = [x for x in fallback if x not in SEARCH_PROVIDER_ORDER]
            if unknown:
                raise ConfigError(f"setting providers.webSearchFallback names unknown providers: {', '.join(unknown)}")
        for key in BOOL_SETTINGS:
            if key in self._values:
                self.get_bool(key, True)
        if "exa.searchDelayMs" in self._values:
            delay = self._values["exa.searchDelayMs"]
            if isinstance(delay, bool) or not isinstance(delay, (int, float)):
                raise ConfigError(f"setting exa.searchDelayMs must be a number of milliseconds, got {delay!r}")
        if "http.timeout" in self._values:
            self.get_number("http.timeout", DEFAULT_TIMEOUT)
