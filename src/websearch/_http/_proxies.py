"""Which proxy, if any, a request goes through: per provider, then `[http] proxy`, then the environment.

One decision for every consumer of the network: a provider (by its id) and the page reader
(`fetch`). `[proxy] <id>` wins, then `[http] proxy`, then the standard variables
(`https_proxy`/`http_proxy` by the request's scheme, else `all_proxy`, either case, the lower-case
one first) unless `[http] trust_env = false`. `no_proxy` exempts hosts from the environment's
proxies only: a proxy written in the settings is meant, and applies to every request of its
consumer. A proxy's user and password are kept apart from everything that is shown (`shown`, the
repr, every message), and SOCKS needs the `socks` extra, which is checked when the settings are
read, so that a missing package is a ConfigError naming the extra, not an ImportError later.

Light on purpose (no aiohttp, no yarl): the client builds this when it is made.
"""

from __future__ import annotations

import base64
import importlib.util
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit
from urllib.request import proxy_bypass_environment  # type: ignore[attr-defined]

from .._core._checks import split_proxy_url
from ..errors import ConfigError

if TYPE_CHECKING:
    from .._core._settings import Settings

__all__ = [
    "FETCH",
    "SOCKS_HINT",
    "Proxies",
    "Proxy",
    "missing_socks",
    "socks_available",
    "socks_connector",
    "socks_errors",
]

#: The consumer id of the page reader's fetches (`[proxy] fetch`).
FETCH: Final = "fetch"
#: What to install for SOCKS proxies.
SOCKS_HINT: Final = "pip install 'websearch-hub[socks]'"
_SOCKS: Final = frozenset({"socks5", "socks5h"})


@dataclass(frozen=True)
class Proxy:
    """One proxy. `source` names where it was set (`proxy.brave`, `http.proxy`, `HTTPS_PROXY`);
    `user` and `password` are secrets and stay out of the repr and of `shown`."""

    scheme: str
    host: str
    port: int
    source: str
    user: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, text: str, source: str) -> Proxy:
        """A proxy URL as written in `source`; ConfigError naming `source` when malformed."""
        name = f"setting {source}" if "." in source else source  # a setting's key, or a variable's name
        scheme, host, port, user, password = split_proxy_url(name, text)
        return cls(scheme, host, port, source, user, password)

    @property
    def socks(self) -> bool:
        """Whether it is a SOCKS proxy (the `socks` extra's connector carries its connections)."""
        return self.scheme in _SOCKS

    @property
    def remote_names(self) -> bool:
        """Whether the proxy resolves the names asked for (socks5h, and HTTP proxies)."""
        return self.scheme != "socks5"

    @property
    def shown(self) -> str:
        """The URL without its credentials: what messages and notices name."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    @property
    def secrets(self) -> tuple[str, ...]:
        """The user and password, for redaction of any text that might echo them."""
        return tuple(s for s in (self.password, self.user) if s)

    def authorization(self) -> dict[str, str] | None:
        """The `Proxy-Authorization` header of an HTTP proxy with credentials, else None."""
        if self.user is None or self.socks:
            return None
        token = base64.b64encode(f"{self.user}:{self.password or ''}".encode()).decode()
        return {"Proxy-Authorization": f"Basic {token}"}

    def __str__(self) -> str:
        return self.shown


def socks_available() -> bool:
    """Whether aiohttp-socks can be imported (found, not hidden), without importing it."""
    if "aiohttp_socks" in sys.modules:
        return sys.modules["aiohttp_socks"] is not None
    try:
        return importlib.util.find_spec("aiohttp_socks") is not None
    except (ImportError, ValueError):
        return False


def missing_socks(proxy: Proxy) -> ConfigError:
    """The error of a SOCKS proxy without the `socks` extra."""
    return ConfigError(f"{proxy.source} names a SOCKS proxy ({proxy.shown}), which needs aiohttp-socks: {SOCKS_HINT}")


def socks_connector(proxy: Proxy, **options: Any) -> Any:
    """aiohttp-socks's connector for `proxy` (`options` go to it: `limit`, DNS caching); a
    ConfigError naming the extra when aiohttp-socks is missing."""
    try:
        from aiohttp_socks import ProxyConnector, ProxyType
    except ImportError:
        raise missing_socks(proxy) from None
    return ProxyConnector(
        proxy_type=ProxyType.SOCKS5,
        host=proxy.host,
        port=proxy.port,
        username=proxy.user,
        password=proxy.password,
        rdns=proxy.remote_names,
        **options,
    )


def socks_errors() -> tuple[type[Exception], ...]:
    """aiohttp-socks's errors (plain Exceptions, not aiohttp's) once it is loaded; none before."""
    module = sys.modules.get("aiohttp_socks")
    if module is None:
        return ()
    return (module.ProxyConnectionError, module.ProxyError, module.ProxyTimeoutError)


class Proxies:
    """The proxy of each request: `for_url(consumer, url)`. `configured` maps consumer ids to
    their own proxy, `default` is `[http] proxy`, `env` the environment whose standard variables
    are read (None: not read). Decisions are kept per (consumer, scheme, host)."""

    def __init__(
        self,
        configured: Mapping[str, Proxy] | None = None,
        default: Proxy | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.configured = dict(configured or {})
        self.default = default
        self._by_scheme: dict[str, Proxy] = {}
        self._no_proxy = ""
        if env is not None:
            self._read_env(env)
        self._cache: dict[tuple[str, str, str], Proxy | None] = {}
        if not socks_available():
            for proxy in self.all():
                if proxy.socks:
                    raise missing_socks(proxy)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Proxies:
        """The environment's proxies alone (`os.environ` when `env` is None)."""
        return cls(env=os.environ if env is None else env)

    @classmethod
    def from_settings(cls, settings: Settings, env: Mapping[str, str]) -> Proxies:
        """`[proxy] <id>` (and `[fetch] proxy`, the older spelling of `[proxy] fetch`),
        `[http] proxy`, and `env` unless `[http] trust_env = false`."""
        from .._core._settings import DEFAULTS

        configured: dict[str, Proxy] = {}
        for key, value in settings.items("proxy.").items():
            if key in DEFAULTS and isinstance(value, str) and value.strip():  # another key was warned of, ignored
                configured[key.removeprefix("proxy.")] = Proxy.parse(value, key)
        older = settings.get("fetch.proxy")
        if FETCH not in configured and isinstance(older, str) and older.strip():
            configured[FETCH] = Proxy.parse(older, "fetch.proxy")
        default_text = settings.get("http.proxy")
        default = Proxy.parse(default_text, "http.proxy") if isinstance(default_text, str) and default_text else None
        trust = settings.get_bool("http.trust_env", True)
        return cls(configured, default, env if trust else None)

    def _read_env(self, env: Mapping[str, str]) -> None:
        def get(name: str) -> tuple[str, str] | None:
            for variable in (name, name.upper()):
                value = env.get(variable, "").strip()
                if value:
                    return variable, value
            return None

        fallback = get("all_proxy")
        for scheme in ("http", "https"):
            found = get(f"{scheme}_proxy") or fallback
            if found is not None:
                self._by_scheme[scheme] = Proxy.parse(found[1], found[0])
        no_proxy = get("no_proxy")
        self._no_proxy = no_proxy[1] if no_proxy is not None else ""

    def all(self) -> list[Proxy]:
        """Every proxy these settings may use."""
        found = [*self.configured.values(), *([self.default] if self.default else []), *self._by_scheme.values()]
        return list(dict.fromkeys(found))

    def secrets(self) -> tuple[str, ...]:
        """Every proxy user and password, for redaction."""
        return tuple(dict.fromkeys(s for proxy in self.all() for s in proxy.secrets))

    def for_url(self, consumer: str, url: str) -> Proxy | None:
        """The proxy a request of `consumer` (a provider id, or `fetch`) to `url` goes through."""
        try:
            parts = urlsplit(url)
            scheme, host = parts.scheme.lower(), parts.hostname or ""
        except ValueError:
            scheme, host = "", ""
        key = (consumer, scheme, host)
        if key in self._cache:
            return self._cache[key]
        found = self._resolve(consumer, scheme, host)
        if len(self._cache) < 4096:  # a reader's hosts are many: the cache stays bounded
            self._cache[key] = found
        return found

    def _resolve(self, consumer: str, scheme: str, host: str) -> Proxy | None:
        own = self.configured.get(consumer)
        if own is not None:
            return own
        if self.default is not None:
            return self.default
        proxy = self._by_scheme.get(scheme)
        if proxy is None or (self._no_proxy and proxy_bypass_environment(host, {"no": self._no_proxy})):
            return None
        return proxy

    def __repr__(self) -> str:
        return f"Proxies(configured={self.configured!r}, default={self.default!r}, env={self._by_scheme!r})"
