"""Settings: `settings.toml` in the config directory, with environment variables winning.

The config directory is `$WEBSEARCH_CONFIG_DIR`, else the platform's user config directory
(`~/.config/websearch` on Linux). Keys are the spec's dotted names, written either as TOML
tables (`[searxng]` / `endpoint = "..."`) or as dotted keys (`searxng.endpoint = "..."`).
Where the spec names an environment variable for a setting (`ENV_TWINS`), the variable wins.

Every setting is one row of `SETTINGS` (key, type, default, environment twin, checker), checked
when the file is read. The checkers are leaves (`websearch._core._checks`): this module imports
neither `_pacing` nor `_serve`, which read the values so checked.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Final

from ..errors import ConfigError, ConfigWarning
from ._checks import (
    attempt_limit,
    attempt_seconds,
    boolean,
    check_http_url,
    check_serve_setting,
    delay_ms,
    endpoint,
    host_patterns,
    mcp_format,
    non_negative,
    pacing_rate,
    positive,
    proxy_url,
    replay_mode,
    reranker_name,
    state_backend,
    string,
    whole_number,
)
from ._registry import SEARCH_PROVIDER_ORDER

__all__ = [
    "DEFAULTS",
    "DEFAULT_ATTEMPT_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "ENV_TWINS",
    "SETTINGS",
    "Setting",
    "Settings",
    "config_dir",
]

DEFAULT_TIMEOUT: Final = 60.0  # seconds per HTTP request, as upstream
DEFAULT_ATTEMPT_TIMEOUT: Final = 60.0  # seconds per provider attempt (`providers.webSearchTimeoutSeconds`)
DEFAULT_STREAM_MB: Final = 32.0  # a streamed answer larger than this is refused
DEFAULT_EVENT_KB: Final = 4096.0  # so is one event of it larger than this

#: Settings whose values are secrets, or say where state lives: never part of a cache key.
_NOT_IN_ANSWERS: Final = frozenset(
    {"searxng.basicUsername", "searxng.basicPassword", "searxng.token", "state.url", "serve.tokens", "fetch.proxy"}
)
#: The tables of settings that run a search without changing what it answers.
_RUN_ONLY: Final = (
    "cache.",
    "state.",
    "pacing.",
    "http.",
    "mcp.",
    "serve.",
    "search.",
    "fanout.soft",
    "timeout.",
    "providers.webSearchTimeoutSeconds",
    "proxy.",
    "replay.",
)
#: Environment variables, by how their names end, that move a provider or choose its model.
_ANSWER_ENV: Final = ("_BASE_URL", "_MODEL", "_ENDPOINT")


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
        self._timeouts: dict[str, tuple[float, str] | None] = {}  # `attempt_timeout`'s answers, by provider
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

    @cached_property
    def search_order(self) -> tuple[str, ...]:
        """`providers.webSearchOrder`: the ids the automatic chain tries first, in this order
        (each once); empty when unset."""
        return tuple(dict.fromkeys(self.get("providers.webSearchOrder") or ()))

    @cached_property
    def search_order_only(self) -> bool:
        """`providers.webSearchOrderOnly`: the automatic chain is `search_order` alone (the
        providers it does not name are left out of it, not put after it)."""
        return self.get_bool("providers.webSearchOrderOnly", False)

    @cached_property
    def shortest_attempt_timeout(self) -> float:
        """The shortest timeout any attempt may have (`[timeout]`, `webSearchTimeoutSeconds`, the
        default): a search with less time left than this needs no attempt's own timeout looked up."""
        keys = [key for key in self._values if key.startswith("timeout.")] + ["providers.webSearchTimeoutSeconds"]
        limits = [attempt_limit(self._values[key]) for key in keys if self._values.get(key) is not None]
        return min([*limits, DEFAULT_ATTEMPT_TIMEOUT])

    def attempt_timeout(self, provider_id: str) -> tuple[float, str] | None:
        """Seconds one attempt at `provider_id` may take, and the setting that says so:
        `timeout.<id>`, else `providers.webSearchTimeoutSeconds`; None when neither is set
        (the caller then uses `DEFAULT_ATTEMPT_TIMEOUT`). At most 300 s (`_checks.MAX_ATTEMPT_SECONDS`)."""
        if provider_id in self._timeouts:
            return self._timeouts[provider_id]
        found = None
        for key in (f"timeout.{provider_id}", "providers.webSearchTimeoutSeconds"):
            value = self._values.get(key)
            if value is not None:
                found = attempt_limit(value), f"setting {key}"
                break
        self._timeouts[provider_id] = found
        return found

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
            table, dot, _ = key.partition(".")
            check = _CHECKS.get(key) or (_TABLES.get(table) if dot else None)
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


def _locale(key: str, value: Any) -> None:
    """`[search] country`, `language` or `safesearch`: what the parameter of that name takes."""
    from ..errors import InvalidSearchParams
    from ._params import PARAMS_BY_NAME, check

    name = key.rpartition(".")[2]
    try:
        check(PARAMS_BY_NAME[name], value, f"setting {key}")
    except InvalidSearchParams as exc:
        raise ConfigError(exc.message) from None


def _shown(value: Any) -> str:
    return repr(value)


#: The environment variables checked when the settings are read, by the setting they stand for;
#: each check names the variable, which is what the user set.
_ENV_CHECKS: Final[Mapping[str, Callable[[str, str], None]]] = {
    "searxng.endpoint": check_http_url,
    "providers.webSearch": _provider_named,
}


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting: its dotted key, the type its value has in settings.toml, its default (None:
    unset, or a default its reader keeps beside the code it tunes), the environment variable
    that wins over the file (the spec's twin), and the check its value passes when read."""

    key: str
    type: type
    default: Any
    env: str | None
    check: Callable[[str, Any], None]


def _row(
    key: str, kind: type, check: Callable[[str, Any], None], default: Any = None, env: str | None = None
) -> Setting:
    return Setting(key, kind, default, env, check)


_SERVE_NUMBERS: Final = {
    "max_query_chars": (int, 2000),
    "max_body_kb": (float, 64.0),
    "max_limit": (int, 50),
    "max_fanout": (int, 6),
    "max_deadline": (float, 120.0),
    "grace_period": (float, 30.0),
    "request_timeout": (float, 10.0),
    "max_connections": (int, None),  # None: what the descriptor limit leaves (`default_max_connections`)
}

#: Every known setting; any other key (but a `pacing.` or `timeout.` one, which may name a provider
#: of the caller's own, checked by its table's check, `_TABLES`) gets a ConfigWarning and is
#: otherwise left alone.
SETTINGS: Final[tuple[Setting, ...]] = (
    _row("providers.webSearch", str, _provider, "auto", "WEB_SEARCH_PROVIDER"),  # the MCP tool's twin
    _row("providers.webSearchExclude", list, _providers),
    _row("providers.webSearchFallback", list, _providers),
    _row("providers.list", list, _providers, None, "WEBSEARCH_PROVIDERS"),
    _row("providers.webSearchGeminiModel", str, string, None, "GEMINI_SEARCH_MODEL"),
    _row("providers.webSearchOrder", list, _providers),
    _row("providers.webSearchOrderOnly", bool, boolean, False),
    _row("providers.webSearchTimeoutSeconds", float, attempt_seconds, DEFAULT_ATTEMPT_TIMEOUT),
    _row("searxng.endpoint", str, endpoint, None, "SEARXNG_ENDPOINT"),
    _row("searxng.categories", str, string),
    _row("searxng.language", str, string),
    _row("searxng.basicUsername", str, string, None, "SEARXNG_BASIC_USERNAME"),
    _row("searxng.basicPassword", str, string, None, "SEARXNG_BASIC_PASSWORD"),
    _row("searxng.token", str, string, None, "SEARXNG_TOKEN"),
    _row("exa.enabled", bool, boolean, True),
    _row("exa.enableSearch", bool, boolean, True),
    _row("exa.searchDelayMs", float, delay_ms),  # unset: no pace (see `_pacing.rates_from`)
    # Settings the original tool reads for other tools than web_search: a settings file written
    # for it may hold them, and they do nothing here, as there.
    _row("exa.enableResearcher", bool, boolean),
    _row("exa.enableWebsets", bool, boolean),
    _row("providers.antigravityEndpoint", str, string),
    _row("http.timeout", float, positive, DEFAULT_TIMEOUT),
    _row("http.max_stream_mb", float, positive, DEFAULT_STREAM_MB),
    _row("http.max_event_kb", float, positive, DEFAULT_EVENT_KB),
    _row("http.proxy", str, proxy_url),
    _row("http.trust_env", bool, boolean, True),
    *(_row(f"proxy.{name}", str, proxy_url) for name in (*SEARCH_PROVIDER_ORDER, "fetch")),
    _row("mcp.format", str, mcp_format, "blocks"),
    _row("mcp.structured_output", bool, boolean, True),
    _row("state.url", str, string, None, "WEBSEARCH_REDIS_URL"),
    _row("state.backend", str, state_backend),
    _row("state.path", str, string),
    _row("state.redis_local_copy", bool, boolean, True),
    _row("state.max_wait", float, positive),
    _row("cache.max_mb", float, positive),
    _row("cache.ttl", float, non_negative),
    _row("providers.webSearchFanout", list, _providers),
    _row("fanout.max_providers", float, positive),
    _row("fanout.soft_deadline", float, positive),
    _row("search.deadline", float, positive),
    _row("search.deep_deadline", float, positive),
    _row("search.hedge", float, positive),
    _row("search.country", str, _locale),
    _row("search.language", str, _locale),
    _row("search.safesearch", str, _locale),
    _row("fetch.allow_hosts", list, host_patterns, []),
    _row("fetch.allow_private", bool, boolean, False),
    _row("fetch.max_mb", float, positive, 10.0),
    _row("fetch.robots", bool, boolean, True),
    _row("fetch.host_rate", str, pacing_rate, "1/s"),
    _row("fetch.deadline", float, positive, 30.0),
    _row("fetch.proxy", str, proxy_url),  # the older spelling of proxy.fetch
    _row("fetch.ttl", float, non_negative),
    _row("research.pages", int, whole_number, 5),
    _row("research.budget_chars", int, whole_number, 12000),
    _row("research.deadline", float, positive, 60.0),
    _row("research.reranker", str, reranker_name, "auto"),
    _row("replay.path", str, string),  # `WEBSEARCH_REPLAY` (a path: replay mode) wins, read by the client
    _row("replay.mode", str, replay_mode, "replay"),
    _row("serve.tokens", list, check_serve_setting, None, "WEBSEARCH_SERVE_TOKENS"),
    _row("serve.rate_limit", str, check_serve_setting),
    _row("serve.log_queries", bool, check_serve_setting, False),
    _row("serve.cors_origins", list, check_serve_setting),
    *(_row(f"serve.{name}", kind, check_serve_setting, default) for name, (kind, default) in _SERVE_NUMBERS.items()),
)
#: The tables whose keys are provider ids, a caller's own providers' too (`[pacing] brave = "1/s"`,
#: `[timeout] gemini = 120`), by table: each key is checked by its table's check.
_TABLES: Final[Mapping[str, Callable[[str, Any], None]]] = {"pacing": pacing_rate, "timeout": attempt_seconds}
#: Every known setting's default, by key (None: unset, or kept by its reader).
DEFAULTS: Final[Mapping[str, Any]] = {row.key: row.default for row in SETTINGS}
#: Every known setting's check, by key.
_CHECKS: Final[Mapping[str, Callable[[str, Any], None]]] = {row.key: row.check for row in SETTINGS}
#: Settings whose environment variable, when set, wins over the file.
ENV_TWINS: Final[Mapping[str, str]] = {row.key: row.env for row in SETTINGS if row.env is not None}
_TWIN_NAMES: Final = frozenset(ENV_TWINS.values())
