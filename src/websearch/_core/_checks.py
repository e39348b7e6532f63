"""The leaf checkers of settings: each takes a key (or the name a message gives the value) and a
value, and raises ConfigError in the words every refusal uses (`<name> must be ...; got ...`).

A leaf on purpose: it imports nothing of websearch but its errors, so `_settings` can check every
key as it reads the file without importing what reads them (`_pacing`, `_serve._config`), and
those modules take their parsers (`parse_rate`, `check_http_url`, `is_loopback`, the `[serve]`
checks) from here.
"""

from __future__ import annotations

import ipaddress
import math
import re
import warnings
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from ..errors import ConfigError, ConfigWarning

__all__ = [
    "MAX_ATTEMPT_SECONDS",
    "MAX_DELAY_MS",
    "MIN_TOKEN_CHARS",
    "RateLimit",
    "attempt_limit",
    "attempt_seconds",
    "boolean",
    "check_http_url",
    "check_serve_setting",
    "check_token",
    "delay_ms",
    "endpoint",
    "is_loopback",
    "mcp_format",
    "non_negative",
    "origins",
    "pacing_rate",
    "parse_rate",
    "positive",
    "proxy_url",
    "rate_limit",
    "replay_mode",
    "setting_tokens",
    "split_proxy_url",
    "state_backend",
    "string",
    "whole_number",
    "without_userinfo",
]

#: Longest Exa pacing delay accepted: an hour (1e12 ms would stall every search for ever).
MAX_DELAY_MS: Final = 3_600_000
MIN_TOKEN_CHARS: Final = 16
#: Longest time one provider attempt may be given (`providers.webSearchTimeoutSeconds`, `[timeout]`).
MAX_ATTEMPT_SECONDS: Final = 300.0
#: RFC 6750's b64token: what may follow "Bearer " in an Authorization header.
_TOKEN_RE: Final = re.compile(r"[A-Za-z0-9._~+/-]+=*")
_LOOPBACK_NAMES: Final = frozenset({"localhost", "ip6-localhost"})
_RATE_RE: Final = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*/\s*(s|sec|second|m|min|minute|h|hour)\s*")
_UNITS: Final = {"s": 1.0, "m": 60.0, "h": 3600.0}
_USERINFO: Final = re.compile(r"^(\s*(?:[A-Za-z][A-Za-z0-9+.-]*:)?//)[^/?#]*@")  # scheme-relative too


def string(key: str, value: Any) -> None:
    """A string."""
    if not isinstance(value, str):
        raise ConfigError(f"setting {key} must be a string; got {value!r}")


def boolean(key: str, value: Any) -> None:
    """true or false (a TOML boolean)."""
    if not isinstance(value, bool):
        raise ConfigError(f"setting {key} must be true or false; got {value!r}")


def positive(key: str, value: Any) -> None:
    """A finite number above 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise ConfigError(f"setting {key} must be a positive number; got {value!r}")


def non_negative(key: str, value: Any) -> None:
    """A finite number, 0 or more."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
        raise ConfigError(f"setting {key} must be a number, 0 or more; got {value!r}")


def whole_number(key: str, value: Any) -> None:
    """A whole number, 1 or more."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"setting {key} must be a whole number of at least 1; got {value!r}")


def delay_ms(key: str, value: Any) -> None:
    """Milliseconds, from 0 to an hour."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_DELAY_MS:
        raise ConfigError(f"setting {key} must be a number of milliseconds from 0 to {MAX_DELAY_MS}; got {value!r}")


def attempt_seconds(key: str, value: Any) -> None:
    """Seconds one provider attempt may take: a positive number; above `MAX_ATTEMPT_SECONDS` it
    is cut to it with a ConfigWarning (a longer wait is what was meant, so the nearest one is
    kept rather than the whole file refused)."""
    positive(key, value)
    if value > MAX_ATTEMPT_SECONDS:
        message = f"setting {key} is {value!r}; an attempt may take at most {MAX_ATTEMPT_SECONDS:g} s, so it is"
        warnings.warn(ConfigWarning(f"{message} {MAX_ATTEMPT_SECONDS:g}"), stacklevel=4)


def attempt_limit(value: Any) -> float:
    """A checked `attempt_seconds` value as the seconds used: cut to `MAX_ATTEMPT_SECONDS`."""
    return min(float(value), MAX_ATTEMPT_SECONDS)


_HOST_PATTERN: Final = re.compile(r"(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?|\[[0-9a-f:.]+\]|[0-9.]+", re.IGNORECASE)


def host_patterns(key: str, value: Any) -> None:
    """A list of host names (`docs.internal`), `*.suffix` patterns or IP literals."""
    if not isinstance(value, list) or not all(isinstance(v, str) and _HOST_PATTERN.fullmatch(v) for v in value):
        raise ConfigError(
            f'setting {key} must be a list of host names, "*.suffix" patterns or IP addresses; got {value!r}'
        )


def state_backend(key: str, value: Any) -> None:
    """One of the state stores."""
    if value not in ("memory", "sqlite", "redis"):
        raise ConfigError(f"setting {key} is {value!r}; use one of: memory, sqlite, redis")


def reranker_name(key: str, value: Any) -> None:
    """How research ranks passages: "auto" (WordLlama when installed, else BM25), "bm25", "wordllama"."""
    if value not in ("auto", "bm25", "wordllama"):
        raise ConfigError(f"setting {key} is {value!r}; use one of: auto, bm25, wordllama")


def replay_mode(key: str, value: Any) -> None:
    """How a recording is used: "record", "replay" or "replay_or_live"."""
    if value not in ("record", "replay", "replay_or_live"):
        raise ConfigError(f"setting {key} is {value!r}; use one of: record, replay, replay_or_live")


def mcp_format(key: str, value: Any) -> None:
    """One of the MCP tool's output formats."""
    if value not in ("blocks", "summary"):
        raise ConfigError(f"setting {key} is {value!r}; use one of: blocks, summary")


def endpoint(key: str, value: Any) -> None:
    """A string that is an http(s) URL with a host."""
    string(key, value)
    check_http_url(f"setting {key}", value)


def check_http_url(name: str, value: str) -> None:
    """ConfigError unless `value` is an http(s) URL with a host (`name` says where it was set):
    anything else fails at every search, in aiohttp's words."""
    try:
        parts = urlsplit(value.strip())
        fine = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - a port that is no number raises here
    except ValueError:
        fine = False
    if not fine:
        raise ConfigError(f"{name} must be an http:// or https:// URL with a host; got {without_userinfo(value)!r}")


#: The schemes a proxy URL may have, and the port each means when the URL gives none.
PROXY_PORTS: Final = {"http": 80, "https": 443, "socks5": 1080, "socks5h": 1080}


def split_proxy_url(name: str, value: str) -> tuple[str, str, int, str | None, str | None]:
    """(scheme, host, port, user, password) of a proxy URL (`http://`, `https://`, `socks5://`,
    `socks5h://`; a bare `host:port` is http, as curl reads it), the user and password
    percent-decoded; ConfigError naming `name` otherwise, the URL quoted without its credentials."""
    from urllib.parse import unquote

    text = value.strip()
    if "://" not in text:
        text = f"http://{text}"
    try:
        parts = urlsplit(text)
        scheme = parts.scheme.lower()
        port = parts.port or PROXY_PORTS.get(scheme)
        host = parts.hostname
        fine = scheme in PROXY_PORTS and bool(host) and parts.path in ("", "/") and not parts.query
    except ValueError:
        fine, scheme, host, port = False, "", None, None
    if not fine or host is None or port is None:
        raise ConfigError(
            f"{name} must be a proxy URL (http://, https://, socks5:// or socks5h:// and a host); "
            f"got {without_userinfo(value)!r}"
        )
    user = unquote(parts.username) if parts.username is not None else None
    password = unquote(parts.password) if parts.password is not None else None
    return scheme, host, port, user, password


def proxy_url(key: str, value: Any) -> None:
    """A proxy URL (`split_proxy_url`)."""
    string(key, value)
    split_proxy_url(f"setting {key}", value)


def without_userinfo(url: str) -> str:
    """`url` with any `user:password@` before its host shown as `***@`: a gateway's or a proxy's
    URL may carry credentials, and a message quoting the URL must not carry them on. Textual,
    so a URL too broken to parse is covered too."""
    return _USERINFO.sub(r"\1***@", url)


def is_loopback(host: str) -> bool:
    """`localhost` or a loopback address (127.0.0.0/8, ::1), with or without IPv6 brackets."""
    name = host.strip().lower().removeprefix("[").removesuffix("]")
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name.split("%")[0]).is_loopback
    except ValueError:
        return False


def parse_rate(text: str) -> float:
    """Requests per second from "1/s", "30/min", "100/h"; ConfigError otherwise."""
    match = _RATE_RE.fullmatch(text) if isinstance(text, str) else None
    if match is None or float(match.group(1)) <= 0:
        raise ConfigError(f'a pacing rate must read like "1/s", "30/min" or "100/h"; got {text!r}')
    return float(match.group(1)) / _UNITS[match.group(2)[0]]


def pacing_rate(key: str, value: Any) -> None:
    """A `[pacing]` entry: a rate, or 0 / "0" / "off"."""
    if value not in (0, "0", "off"):
        try:
            parse_rate(value)
        except ConfigError as exc:
            raise ConfigError(f"setting {key}: {exc}") from None


@dataclass(frozen=True, slots=True)
class RateLimit:
    """A per-token request budget: `burst` requests at once, refilled at `rate` per second
    ("60/min" is 60 at once, then one a second)."""

    text: str
    rate: float
    burst: float


def rate_limit(value: Any) -> RateLimit | None:
    """`serve.rate_limit` parsed: None when unset or off."""
    if value is None or value in (0, "0", "off", ""):
        return None
    try:
        rate = parse_rate(value)
    except ConfigError:
        raise ConfigError(
            f'setting serve.rate_limit must read like "60/min", "5/s" or "1000/h"; got {value!r}'
        ) from None
    burst = float(str(value).split("/")[0])
    return RateLimit(str(value).strip(), rate, max(1.0, burst))


def check_token(token: str, where: str) -> None:
    """A token fit to be a password and to travel in a header; the message never shows it."""
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(f"{where} is too short: a token must have at least {MIN_TOKEN_CHARS} characters")
    if not _TOKEN_RE.fullmatch(token):
        raise ConfigError(f"{where} has characters a bearer token cannot carry (use letters, digits and -._~+/)")


def setting_tokens(value: Any) -> list[str]:
    """`serve.tokens`: a list from settings.toml, or `WEBSEARCH_SERVE_TOKENS`, comma-separated."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        tokens = [t.strip() for t in value.split(",") if t.strip()]
        where = "WEBSEARCH_SERVE_TOKENS"
    elif isinstance(value, list) and all(isinstance(t, str) for t in value):
        tokens, where = value, "setting serve.tokens"
    else:
        raise ConfigError("setting serve.tokens must be a list of strings")
    for i, token in enumerate(tokens, 1):
        check_token(token, f"token {i} of {where}")
    return tokens


def origins(key: str, value: Any) -> list[str]:
    """`serve.cors_origins`: "*" or origins (scheme://host[:port]), without a trailing slash."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"setting {key} must be a list of origins such as 'https://chat.example.org'")
    for origin in value:
        if origin == "*":
            continue
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query:
            raise ConfigError(
                f"setting {key}: {origin!r} is not an origin (scheme://host[:port], no path), such as "
                "'https://chat.example.org'"
            )
    return [origin.rstrip("/") for origin in value]


def check_serve_setting(key: str, value: Any) -> None:
    """Check one `[serve]` value of settings.toml."""
    name = key.removeprefix("serve.")
    if name == "tokens":
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            raise ConfigError(f"setting {key} must be a list of strings")
        setting_tokens(value)
    elif name == "rate_limit":
        rate_limit(value)
    elif name == "log_queries":
        boolean(key, value)
    elif name == "cors_origins":
        origins(key, value)
    elif name in ("max_query_chars", "max_limit", "max_fanout", "max_connections"):
        whole_number(key, value)
    elif name in ("max_body_kb", "max_deadline", "grace_period", "request_timeout"):
        positive(key, value)
