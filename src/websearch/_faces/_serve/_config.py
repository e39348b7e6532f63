"""`ServeConfig`: what `websearch serve` was told, from settings.toml's `[serve]` table, the
environment (`WEBSEARCH_SERVE_TOKENS`) and its flags, checked once at start.

Light on purpose (no Starlette, no uvicorn). The checks of the `[serve]` values live in the leaf
`websearch._core._checks`, which `websearch._core._settings` runs while it reads settings.toml (a bad
`[serve]` value fails when the file is read, like every other setting); `load` reads the values
so checked, and parses them with the same functions. The defaults are the settings table's
(`websearch._core._settings.SETTINGS`).

The limits live here too (`Limits.check`): query length, `limit`, fan-out size and deadline are
refused the same way whichever face asked (REST, SearXNG, MCP), as an `InvalidSearchParams`
naming the parameter, in the words of every other refusal (`<name> must be ...; got ...`).
"""

from __future__ import annotations

import stat
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..._core._checks import MIN_TOKEN_CHARS, RateLimit, is_loopback, origins, rate_limit, setting_tokens, whole_number
from ..._core._checks import check_token as _check_token
from ..._core._settings import DEFAULTS
from ...errors import ConfigError, InsecureConfigWarning, InvalidSearchParams

if TYPE_CHECKING:
    from ..._core._settings import Settings

__all__ = [
    "DEFAULT_PORT",
    "MIN_TOKEN_CHARS",
    "STATE_KEY",
    "ConnectionLimits",
    "Limits",
    "RateLimit",
    "ServeConfig",
    "accept_burst",
    "default_max_connections",
    "is_loopback",
    "raise_files_limit",
]

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8000


#: Where the app's lifespan state gives the server's `ConnectionLimits` to the protocol.
STATE_KEY: Final = "websearch.connections"
#: The soft descriptor limit `raise_files_limit` asks for at most.
_FILES_WANTED: Final = 65536


def _files_limit() -> int | None:
    """The process's soft descriptor limit (None where there is none to read, or no limit)."""
    try:
        import resource
    except ImportError:  # not on this platform
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def raise_files_limit() -> None:
    """Lift the soft descriptor limit to the hard one (at most 65,536), as Go and nginx do: a
    server's connections each take one, and a soft limit of 1,024 is a shell's default, not a
    decision. A hard limit of 1,024 (`ulimit -n 1024`) stays: the guards below work within it."""
    try:
        import resource
    except ImportError:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = _FILES_WANTED if hard == resource.RLIM_INFINITY else min(hard, _FILES_WANTED)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def accept_burst() -> int:
    """Connections asyncio accepts in one go, before any protocol runs (uvicorn's `backlog`, also
    the kernel's queue): uvicorn's 2,048, or an eighth of a lower descriptor limit, so that one
    burst cannot exhaust it (at 1,024: 128, and a burst beyond waits for the kernel's retry)."""
    files = _files_limit()
    return 2048 if files is None else max(16, min(2048, files // 8))


def default_max_connections() -> int:
    """`[serve] max_connections` when unset: what the process's descriptor limit leaves beside
    the transport's pool of provider connections (100), two accept bursts not yet counted, and
    the store, logs and pipes (64); at least 64, at most 10,000."""
    files = _files_limit()
    if files is None:
        return 10_000
    return max(64, min(10_000, files - (100 + 2 * accept_burst() + 64)))


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """How long a request may take to arrive (its head and body), and how many connections may
    be open at once (None: `default_max_connections()` where the server runs; see
    `websearch._faces._serve._connections`)."""

    request_timeout: float = DEFAULTS["serve.request_timeout"]
    max_connections: int | None = None

    def resolved(self) -> ConnectionLimits:
        """These limits with the cap decided (in the serving process, after `raise_files_limit`)."""
        if self.max_connections is not None:
            return self
        return replace(self, max_connections=default_max_connections())


@dataclass(frozen=True, slots=True)
class Limits:
    """What one request may ask for; beyond each, a 4xx naming the parameter."""

    max_query_chars: int = DEFAULTS["serve.max_query_chars"]
    max_body_bytes: int = int(DEFAULTS["serve.max_body_kb"] * 1024)
    max_limit: int = DEFAULTS["serve.max_limit"]
    max_fanout: int = DEFAULTS["serve.max_fanout"]
    max_deadline: float = DEFAULTS["serve.max_deadline"]

    def check(self, query: str, params: Mapping[str, Any]) -> None:
        """Raise InvalidSearchParams for the first limit `query` or `params` (the keyword
        arguments of `WebSearch.asearch`) passes."""
        if isinstance(query, str) and len(query) > self.max_query_chars:
            raise InvalidSearchParams(
                "query", f"query must be at most {self.max_query_chars} characters on this server; got {len(query)}"
            )
        for name in ("num_results", "limit", "num_search_results"):
            value = params.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value > self.max_limit:
                raise InvalidSearchParams(name, f"{name} must be at most {self.max_limit} on this server; got {value}")
        fanout = params.get("fanout")
        if isinstance(fanout, (list, tuple)) and len(fanout) > self.max_fanout:
            raise InvalidSearchParams(
                "fanout", f"fanout must name at most {self.max_fanout} providers on this server; got {len(fanout)}"
            )
        deadline = params.get("deadline")
        if isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and deadline > self.max_deadline:
            raise InvalidSearchParams(
                "deadline", f"deadline must be at most {self.max_deadline:g} seconds on this server; got {deadline:g}"
            )


_LIMITS: Final = Limits()


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """Everything the server needs to know besides the client. Tokens never show in its repr."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    workers: int = 1
    tokens: tuple[str, ...] = field(default=(), repr=False)
    no_auth: bool = False
    rate_limit: RateLimit | None = None
    log_queries: bool = DEFAULTS["serve.log_queries"]
    cors_origins: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    grace_period: float = DEFAULTS["serve.grace_period"]
    connections: ConnectionLimits = field(default_factory=ConnectionLimits)
    token_file: str | None = None  # where tokens were read from, so --workers can read it again

    @property
    def loopback(self) -> bool:
        """Whether the server listens on this machine only."""
        return is_loopback(self.host)

    @property
    def auth(self) -> bool:
        """Whether every route but /healthz asks for a bearer token."""
        return bool(self.tokens) and not self.no_auth

    @classmethod
    def load(
        cls,
        settings: Settings,
        env: Mapping[str, str],
        *,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        workers: int = 1,
        token_file: str | None = None,
        no_auth: bool = False,
    ) -> ServeConfig:
        """The configuration from `[serve]`, the environment and the flags; ConfigError (one
        line, never a token) for anything unusable, including a server that would listen
        beyond loopback with nobody checking who calls (unless `no_auth` says so)."""
        tokens = list(setting_tokens(settings.get("serve.tokens")))
        if token_file is not None:
            tokens += read_token_file(token_file)
        config = cls(
            host=host,
            port=port,
            workers=workers,
            tokens=tuple(dict.fromkeys(tokens)),
            no_auth=no_auth,
            rate_limit=rate_limit(settings.get("serve.rate_limit")),
            log_queries=settings.get_bool("serve.log_queries", DEFAULTS["serve.log_queries"]),
            cors_origins=tuple(origins("serve.cors_origins", settings.get("serve.cors_origins") or [])),
            limits=Limits(
                max_query_chars=_whole(settings, "serve.max_query_chars", _LIMITS.max_query_chars),
                max_body_bytes=int(settings.get_number("serve.max_body_kb", _LIMITS.max_body_bytes / 1024) * 1024),
                max_limit=_whole(settings, "serve.max_limit", _LIMITS.max_limit),
                max_fanout=_whole(settings, "serve.max_fanout", _LIMITS.max_fanout),
                max_deadline=settings.get_number("serve.max_deadline", _LIMITS.max_deadline),
            ),
            grace_period=settings.get_number("serve.grace_period", DEFAULTS["serve.grace_period"]),
            connections=ConnectionLimits(
                request_timeout=settings.get_number("serve.request_timeout", DEFAULTS["serve.request_timeout"]),
                max_connections=_whole_or_none(settings, "serve.max_connections"),
            ),
            token_file=token_file,
        )
        if not config.tokens and not no_auth and not config.loopback:
            raise ConfigError(
                f"refusing to listen on {host} without a token: set [serve] tokens, WEBSEARCH_SERVE_TOKENS or "
                "--token-file (or pass --no-auth to serve anyone who can reach it)"
            )
        return config

    def with_tokens(self, *tokens: str) -> ServeConfig:
        """A copy accepting exactly these tokens (tests, embedding)."""
        for i, token in enumerate(tokens, 1):
            _check_token(token, f"token {i}")
        return replace(self, tokens=tuple(tokens))


def read_token_file(path: str) -> list[str]:
    """The tokens of a file, one per line (blank lines and `#` comments skipped). A file other
    users can read gets an InsecureConfigWarning: a token is a password."""
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
        mode = file.stat().st_mode
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise ConfigError(f"cannot read the token file {path}: {why}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        warnings.warn(
            InsecureConfigWarning(f"the token file {path} can be read by other users; chmod 600 it"), stacklevel=2
        )
    tokens = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    if not tokens:
        raise ConfigError(f"the token file {path} holds no token (one per line)")
    for i, token in enumerate(tokens, 1):
        _check_token(token, f"line {i} of {path}")
    return tokens


def _whole(settings: Settings, key: str, default: int) -> int:
    value = settings.get(key, default)
    whole_number(key, value)
    return int(value)


def _whole_or_none(settings: Settings, key: str) -> int | None:
    value = settings.get(key)
    if value is None:
        return None
    whole_number(key, value)
    return int(value)
