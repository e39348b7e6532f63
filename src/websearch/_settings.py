"""Settings: `settings.toml` in the config directory, with environment variables winning.

The config directory is `$WEBSEARCH_CONFIG_DIR`, else the platform's user config directory
(`~/.config/websearch` on Linux). Keys are the spec's dotted names, written either as TOML
tables (`[searxng]` / `endpoint = "..."`) or as dotted keys (`searxng.endpoint = "..."`).
Where the spec names an environment variable for a setting (`ENV_TWINS`), the variable wins.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any, Final

from ._registry import SEARCH_PROVIDER_ORDER
from .errors import ConfigError, ConfigWarning

__all__ = ["DEFAULT_TIMEOUT", "ENV_TWINS", "MAX_DELAY_MS", "Settings", "check_http_url", "config_dir"]

DEFAULT_TIMEOUT: Final = 60.0  # seconds per HTTP request, as upstream
DEFAULT_STREAM_MB: Final = 32.0  # a streamed answer larger than this is refused
DEFAULT_EVENT_KB: Final = 4096.0  # so is one event of it larger than this

#: Settings whose environment variable, when set, wins over the file.
ENV_TWINS: Final[Mapping[str, str]] = {
    "providers.webSearch": "WEB_SEARCH_PROVIDER",  # the MCP tool's (mcp-web_search-tool.md)
    "searxng.endpoint": "SEARXNG_ENDPOINT",
    "searxng.basicUsername": "SEARXNG_BASIC_USERNAME",
    "searxng.basicPassword": "SEARXNG_BASIC_PASSWORD",
    "searxng.token": "SEARXNG_TOKEN",
    "providers.webSearchGeminiModel": "GEMINI_SEARCH_MODEL",
    "providers.list": "WEBSEARCH_PROVIDERS",
    "state.url": "WEBSEARCH_REDIS_URL",
    "serve.tokens": "WEBSEARCH_SERVE_TOKENS",
}


#: Settings whose values are secrets, or say where state lives: never part of a cache key.
_NOT_IN_ANSWERS: Final = frozenset(
    {"searxng.basicUsername", "searxng.basicPassword", "searxng.token", "state.url", "serve.tokens"}
)
#: The tables of settings that run a search without changing what it answers.
_RUN_ONLY: Final = ("cache.", "state.", "pacing.", "http.", "mcp.", "serve.", "search.", "fanout.soft")
#: Environment variables, by how their names end, that move a provider or choose its model.
_ANSWER_ENV: Final = ("_BASE_URL", "_MODEL", "_ENDPOINT")
_TWIN_NAMES: Final = frozenset(ENV_TWINS.values())


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

    def source(self, key: str) -> str:
        """Where `key`'s value comes from, as an error names it: its environment variable when
        that is set (it wins), else `setting <key>`."""
        twin = ENV_TWINS.get(key)
        return twin if twin is not None and self._env.get(twin) is not None else f"setting {key}"

    def answer_print(self) -> str:
        """A hash of every setting and environment value that can change an answer (a SearXNG
        instance or its language, a model, a base URL), for the cache key: clients configured
        apart on one store were served each other's answers. No secret goes in (keys, tokens,
        passwords, the Redis URL), nor what only runs the search (cache, state, pacing, http,
        mcp, serve, search); a setting the file and its variable both give counts as it reads."""
        import hashlib
        import json

        keys = sorted({*self._values, *ENV_TWINS} - _NOT_IN_ANSWERS)
        chosen = {key: self.get(key) for key in keys if not key.startswith(_RUN_ONLY)}
        env = {
            name: value for name, value in self._env.items() if name.endswith(_ANSWER_ENV) and name not in _TWIN_NAMES
        }
        text = json.dumps([chosen, sorted(env.items())], sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def items(self, prefix: str) -> dict[str, Any]:
        """Every setting of the file whose key starts with `prefix` (a table such as `pacing.`)."""
        return {key: value for key, value in self._values.items() if key.startswith(prefix)}

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
        """`providers.webSearch` (env `WEB_SEARCH_PROVIDER`, unless blank): `auto` or a provider
        id tried first."""
        twin = self._env.get(ENV_TWINS["providers.webSearch"], "").strip()
        if twin:
            return twin
        value = self._values.get("providers.webSearch")
        return value if isinstance(value, str) and value else "auto"

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
            raise ConfigError(f"{self.source('providers.list')} must be a list of provider ids")
        unknown = [x for x in names if x and x not in SEARCH_PROVIDER_ORDER]
        if unknown:
            raise ConfigError(f"{self.source('providers.list')} names unknown providers: {', '.join(unknown)}")
        return tuple(dict.fromkeys(x for x in names if x))

    @property
    def stream_limits(self) -> tuple[int, int]:
        """(`http.max_stream_mb`, `http.max_event_kb`) in bytes: the caps of a streamed answer
        and of one event in it (defaults 32 MB and 4096 KB)."""
        stream = self.get_number("http.max_stream_mb", DEFAULT_STREAM_MB)
        event = self.get_number("http.max_event_kb", DEFAULT_EVENT_KB)
        return int(stream * 1024 * 1024), int(event * 1024)

    @property
    def http_timeout(self) -> float:
        """`http.timeout`: seconds allowed for each HTTP request."""
        return self.get_number("http.timeout", DEFAULT_TIMEOUT)

    def _validate(self) -> None:
        """Check every known setting's type and range now, so a bad value fails when the file
        is read (exit 2 from the command line), not in the middle of a search."""
        unknown = []
        for key, value in self._values.items():
            check = _CHECKS.get(key) or (_pacing_rate if key.startswith("pacing.") else None)
            if check is not None:
                check(key, value)
            else:
                unknown.append(key)
        if unknown:
            _warn_unknown(self.path, unknown)
        if self._env.get(ENV_TWINS["providers.list"]):
            self.provider_list  # noqa: B018 - parsed (and checked) once, here
        for key, check in _ENV_CHECKS.items():
            twin = ENV_TWINS[key]
            value = (self._env.get(twin) or "").strip()
            if value:
                check(twin, value)


def _warn_unknown(path: Path | None, keys: list[str]) -> None:
    """One ConfigWarning naming the keys no setting has (a typo, or a setting of a newer version),
    with the known key each is closest to: left alone, they would do nothing and say nothing."""
    import warnings

    from ._closest import meant

    named = [key + meant(key, _CHECKS, cutoff=0.75) for key in keys]
    where = path if path is not None else "the settings"
    noun = "is not a setting" if len(keys) == 1 else "are not settings"
    warnings.warn(ConfigWarning(f"{where}: {', '.join(named)} {noun} websearch knows; ignored"), stacklevel=4)


def _string(key: str, value: Any) -> None:
    if not isinstance(value, str):
        raise ConfigError(f"setting {key} must be a string; got {_shown(value)}")


def _endpoint(key: str, value: Any) -> None:
    _string(key, value)
    check_http_url(f"setting {key}", value)


def check_http_url(name: str, value: str) -> None:
    """ConfigError unless `value` is an http(s) URL with a host (`name` says where it was set):
    anything else fails at every search, in aiohttp's words."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value.strip())
        fine = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - a port that is no number raises here
    except ValueError:
        fine = False
    if not fine:
        raise ConfigError(
            f"{name} must be an http:// or https:// URL with a host; got {_shown(without_userinfo(value))}"
        )


def without_userinfo(url: str) -> str:
    """`url` with any `user:password@` before its host shown as `***@`: a gateway's or a proxy's
    URL may carry credentials, and a message quoting the URL must not carry them on. Textual,
    so a URL too broken to parse is covered too."""
    return _USERINFO.sub(r"\1***@", url)


_USERINFO: Final = re.compile(r"^(\s*[A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")


def _boolean(key: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ConfigError(f"setting {key} must be true or false; got {_shown(value)}")


def _positive(key: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise ConfigError(f"setting {key} must be a positive number; got {_shown(value)}")


def _non_negative(key: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
        raise ConfigError(f"setting {key} must be a number, 0 or more; got {_shown(value)}")


def _state_backend(key: str, value: Any) -> None:
    if value not in ("memory", "sqlite", "redis"):
        raise ConfigError(f"setting {key} is {_shown(value)}; use one of: memory, sqlite, redis")


def _delay_ms(key: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_DELAY_MS:
        raise ConfigError(
            f"setting {key} must be a number of milliseconds from 0 to {MAX_DELAY_MS}; got {_shown(value)}"
        )


def _provider(key: str, value: Any) -> None:
    _provider_named(f"setting {key}", value)


def _provider_named(name: str, value: Any) -> None:
    if value not in ("auto", "public") and value not in SEARCH_PROVIDER_ORDER:
        names = ", ".join(SEARCH_PROVIDER_ORDER)
        raise ConfigError(f"{name} is {_shown(value)}; use auto, public or one of: {names}")


def _providers(key: str, value: Any) -> None:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise ConfigError(f"setting {key} must be a list of provider ids; got {_shown(value)}")
    unknown = [x for x in value if x not in SEARCH_PROVIDER_ORDER]
    if unknown:
        raise ConfigError(f"setting {key} names unknown providers: {', '.join(unknown)}")


def _mcp_format(key: str, value: Any) -> None:
    if value not in ("blocks", "summary"):
        raise ConfigError(f"setting {key} is {_shown(value)}; use one of: blocks, summary")


def _pacing_rate(key: str, value: Any) -> None:
    from ._pacing import parse_rate

    if value not in (0, "0", "off"):
        try:
            parse_rate(value)
        except ConfigError as exc:
            raise ConfigError(f"setting {key}: {exc}") from None


def _serve_setting(key: str, value: Any) -> None:
    from ._serve._config import check_setting  # light: no HTTP stack

    check_setting(key, value)


def _shown(value: Any) -> str:
    return repr(value)


#: The environment variables checked when the settings are read, by the setting they stand for;
#: each check names the variable, which is what the user set.
_ENV_CHECKS: Final[Mapping[str, Callable[[str, str], None]]] = {
    "searxng.endpoint": check_http_url,
    "providers.webSearch": _provider_named,
}
#: Longest Exa pacing delay accepted: an hour (1e12 ms would stall every search for ever).
MAX_DELAY_MS: Final = 3_600_000
#: Every known setting and its check; any other key (but a `pacing.` one, which may name a
#: provider of the caller's own) gets a ConfigWarning and is otherwise left alone.
_CHECKS: Final[Mapping[str, Any]] = {
    "providers.webSearch": _provider,
    "providers.webSearchExclude": _providers,
    "providers.webSearchFallback": _providers,
    "providers.list": _providers,
    "providers.webSearchGeminiModel": _string,
    "searxng.endpoint": _endpoint,
    "searxng.categories": _string,
    "searxng.language": _string,
    "searxng.basicUsername": _string,
    "searxng.basicPassword": _string,
    "searxng.token": _string,
    "exa.enabled": _boolean,
    "exa.enableSearch": _boolean,
    "exa.searchDelayMs": _delay_ms,
    # Settings the original tool reads for other tools than web_search: a settings file written
    # for it may hold them, and they do nothing here, as there.
    "exa.enableResearcher": _boolean,
    "exa.enableWebsets": _boolean,
    "providers.antigravityEndpoint": _string,
    "http.timeout": _positive,
    "http.max_stream_mb": _positive,
    "http.max_event_kb": _positive,
    "mcp.format": _mcp_format,
    "mcp.structured_output": _boolean,
    "state.url": _string,
    "state.backend": _state_backend,
    "state.path": _string,
    "state.redis_local_copy": _boolean,
    "state.max_wait": _positive,
    "cache.max_mb": _positive,
    "cache.ttl": _non_negative,
    "providers.webSearchFanout": _providers,
    "fanout.max_providers": _positive,
    "fanout.soft_deadline": _positive,
    "search.deadline": _positive,
    "search.deep_deadline": _positive,
    "search.hedge": _positive,
    **{
        f"serve.{name}": _serve_setting
        for name in (
            "tokens",
            "rate_limit",
            "log_queries",
            "cors_origins",
            "max_query_chars",
            "max_body_kb",
            "max_limit",
            "max_fanout",
            "max_deadline",
            "grace_period",
            "request_timeout",
            "max_connections",
        )
    },
}
