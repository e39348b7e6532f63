"""The safe fetcher: one URL to raw bytes, never reaching what the fetch policy bars.

Every connection goes to an address the policy checked: aiohttp resolves names through
`_PinnedResolver`, which asks `vetted` (every address must pass) and hands aiohttp only those
addresses, with no DNS cache, so a name that answers a public address to one lookup and a
private one to the next (DNS rebinding) is checked again on each connection. The Host header
and the TLS name stay the URL's. Redirects are followed here, hop by hop, each hop's URL checked
again. The body is read in pieces and decompressed (`_body`), counted after decompression, so a
compression bomb ends at the cap; the whole fetch, every hop and the body, ends at the budget.

Through a proxy the proxy resolves the name (or, through socks5://, aiohttp-socks does), so
pinning cannot hold: the name's own resolution is still vetted before each hop and the page says
`proxied` (the caller tells the user). Which proxy, if any, is decided per URL by `Proxies`
(`[proxy] fetch`, `[http] proxy`, the environment); each proxy gets a session of its own, and
direct requests keep the pinned one.

This module imports aiohttp: it is loaded when a fetch runs, never by `import websearch`.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import ipaddress
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Self
from urllib.parse import urljoin, urlsplit, urlunsplit

import aiohttp
import yarl
from aiohttp.abc import AbstractResolver, ResolveResult

from .._core._checks import without_userinfo
from .._http._proxies import FETCH, Proxies, Proxy, socks_connector, socks_errors
from ..errors import (
    FetchConnectionError,
    FetchError,
    FetchHttpError,
    FetchTimeout,
    PageBlocked,
    TooManyRedirects,
    UrlNotAllowed,
)
from ._body import read_capped, too_large
from ._policy import FetchPolicy, Resolver, SystemResolver, check_url, vetted

if TYPE_CHECKING:
    from .._core._budget import Budget

__all__ = ["DEFAULT_ACCEPT", "Fetcher", "RawPage"]

#: Markdown first (sites that serve it give the cleanest text), then HTML, then PDF, then anything.
DEFAULT_ACCEPT: Final = (
    "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, application/pdf;q=0.8, text/plain;q=0.7, */*;q=0.5"
)
#: How much of an error page is read (enough to recognise a challenge page).
ERROR_BODY_BYTES: Final = 256 * 1024
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_CREDENTIAL_HEADERS: Final = frozenset({"authorization", "cookie", "proxy-authorization"})
_NUMERIC_FLAGS: Final = socket.AI_NUMERICHOST | socket.AI_NUMERICSERV
#: The redacted URL of the hop being connected, for the messages of the pinned resolver.
_HOP: contextvars.ContextVar[str | None] = contextvars.ContextVar("websearch_fetch_hop", default=None)


@dataclass(frozen=True)
class RawPage:
    """A page as the server sent it, decompressed. `url` is the final URL (after redirects),
    `redirects` the URLs that redirected, in order (the first is the one asked for),
    `headers` the response's headers with lower-case names, `content_type` the media type alone
    (lower-case) and `charset` its parameter, `proxied` whether it came through a proxy (whose
    resolution websearch could not pin) and `proxy_source` the setting or variable that chose it."""

    url: str
    status: int
    headers: Mapping[str, str] = field(repr=False)
    body: bytes = field(repr=False)
    redirects: tuple[str, ...] = ()
    content_type: str | None = None
    charset: str | None = None
    proxied: bool = False
    proxy_source: str | None = None


class _PinnedResolver(AbstractResolver):
    """aiohttp's resolver, answering only with addresses `vetted` passed."""

    def __init__(self, resolver: Resolver, policy: FetchPolicy) -> None:
        self._resolver = resolver
        self._policy = policy

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        addresses = await vetted(self._resolver, host, port, self._policy, url=_HOP.get())
        results: list[ResolveResult] = []
        for address in addresses:
            found = socket.AF_INET if ipaddress.ip_address(address.partition("%")[0]).version == 4 else socket.AF_INET6
            if family in (socket.AF_UNSPEC, found):
                results.append(
                    {
                        "hostname": host,
                        "host": address,
                        "port": port,
                        "family": found,
                        "proto": 0,
                        "flags": _NUMERIC_FLAGS,
                    }
                )
        if not results:
            raise OSError(f"{host} has no address of the family asked for")
        return results

    async def close(self) -> None:
        return None


class Fetcher:
    """Fetches URLs under a `FetchPolicy`: checked addresses only, redirects re-checked, the body
    capped after decompression, everything within the caller's budget (and `timeout`, seconds,
    when given). `proxies` chooses each URL's proxy (`[proxy] fetch`, `[http] proxy`, the
    environment); without it, no proxy (environment variables are not read here). No cookies are kept between fetches.
    Use as `async with`, or call `aclose`."""

    def __init__(
        self,
        policy: FetchPolicy,
        *,
        resolver: Resolver | None = None,
        proxies: Proxies | None = None,
        timeout: float | None = None,
    ) -> None:
        self.policy = policy
        self._resolver: Resolver = resolver or SystemResolver()
        self._proxies = proxies or Proxies()
        self._timeout = timeout
        #: A session per proxy (None: direct, on the pinned resolver).
        self._sessions: dict[Proxy | None, aiohttp.ClientSession] = {}

    def _client(self, proxy: Proxy | None) -> aiohttp.ClientSession:
        session = self._sessions.get(proxy)
        if session is None or session.closed:
            connector: aiohttp.TCPConnector
            if proxy is None:
                resolver = _PinnedResolver(self._resolver, self.policy)
                connector = aiohttp.TCPConnector(resolver=resolver, use_dns_cache=False, ttl_dns_cache=0)
            elif proxy.socks:
                connector = socks_connector(proxy, use_dns_cache=False, ttl_dns_cache=0)
            else:  # the connector resolves only the proxy's own host
                connector = aiohttp.TCPConnector(use_dns_cache=False, ttl_dns_cache=0)
            session = self._sessions[proxy] = aiohttp.ClientSession(
                connector=connector,
                cookie_jar=aiohttp.DummyCookieJar(),
                trust_env=False,
                auto_decompress=False,  # decompressed here, counted against the cap
                timeout=aiohttp.ClientTimeout(total=None),
            )
        return session

    async def aclose(self) -> None:
        """Close the connections."""
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def fetch(
        self,
        url: str,
        budget: Budget,
        *,
        accept: str = DEFAULT_ACCEPT,
        headers: Mapping[str, str] | None = None,
        max_bytes: int | None = None,
        truncate: bool = False,
    ) -> RawPage:
        """GET `url` within `budget`. `max_bytes` narrows the policy's cap for this fetch;
        `truncate` keeps the first `max_bytes` of a longer body instead of failing (robots.txt).
        Raises UrlNotAllowed, TooManyRedirects, FetchTooLarge, FetchHttpError, PageBlocked,
        FetchTimeout, FetchConnectionError or UnsupportedContent (an encoding not asked for)."""
        hop = [without_userinfo(url)]
        cap = self.policy.max_bytes if max_bytes is None else min(max_bytes, self.policy.max_bytes)
        left = budget.remaining()
        if self._timeout is not None:
            left = self._timeout if left is None else min(left, self._timeout)
        if left is not None and left <= 0:
            raise FetchTimeout(hop[0], f"no time was left to fetch {hop[0]}; allow the fetch a longer deadline")
        try:
            async with asyncio.timeout(left):
                return await self._follow(
                    url, budget, hop, _request_headers(self.policy, accept, headers), cap, truncate
                )
        except TimeoutError:
            raise FetchTimeout(
                hop[0], f"{hop[0]} was not read before the deadline; try again, or allow a longer deadline"
            ) from None

    async def _follow(
        self, url: str, budget: Budget, hop: list[str], headers: dict[str, str], cap: int, truncate: bool
    ) -> RawPage:
        redirects: list[str] = []
        current = url
        origin = _origin_of(url)
        while True:
            if redirects and _origin_of(current) != origin:  # the caller's credentials stay with its origin
                headers = {k: v for k, v in headers.items() if k.lower() not in _CREDENTIAL_HEADERS}
            try:
                answer = await self._hop(current, budget, hop, headers, cap, truncate, redirects)
            except UrlNotAllowed as exc:
                if not redirects:
                    raise
                raise UrlNotAllowed(exc.url, f"{exc.message} (a redirect from {redirects[-1]})") from None
            if isinstance(answer, RawPage):
                return answer
            current = answer

    async def _hop(
        self,
        url: str,
        budget: Budget,
        hop: list[str],
        headers: dict[str, str],
        cap: int,
        truncate: bool,
        redirects: list[str],
    ) -> RawPage | str:
        """One request: the page, or the URL its redirect leads to (`redirects` gains this one)."""
        parts = check_url(url, self.policy)
        target = urlunsplit(parts._replace(fragment=""))
        hop[0] = target
        wire = _as_requested(target, parts.hostname or "")
        proxy = self._proxies.for_url(FETCH, target)
        if proxy is not None and parts.hostname is not None:  # not pinned: the name's own addresses checked
            port = parts.port or (443 if parts.scheme == "https" else 80)
            await vetted(self._resolver, parts.hostname, port, self.policy, url=target)
        token = _HOP.set(target)
        through = _through(proxy, parts.scheme, headers)
        try:
            async with self._client(proxy).get(wire, allow_redirects=False, **through) as resp:
                if resp.status == 407 and proxy is not None:  # the proxy's own answer, not the page's
                    message = (
                        f"the proxy {proxy.shown} asked for a login (HTTP 407); check the user and password in its URL"
                    )
                    raise FetchConnectionError(target, message)
                location = resp.headers.get("Location") if resp.status in _REDIRECTS else None
                if location is None:
                    page = await self._page(resp, target, tuple(redirects), budget, cap, truncate)
                    return page if proxy is None else dataclasses.replace(page, proxied=True, proxy_source=proxy.source)
                if len(redirects) >= self.policy.max_redirects:
                    raise TooManyRedirects(
                        target,
                        f"{redirects[0] if redirects else target} redirected more than "
                        f"{self.policy.max_redirects} times; the site's redirects go in circles or on and on",
                    )
                redirects.append(target)
                return urljoin(target, location.strip())
        except FetchError:
            raise
        except aiohttp.ClientError as exc:
            raise _connection_error(exc, target, proxy) from None
        except socks_errors():
            shown = proxy.shown if proxy is not None else "the SOCKS proxy"
            message = f"could not read {target} through the proxy {shown}; check the proxy setting"
            raise FetchConnectionError(target, message) from None
        except OSError as exc:
            raise FetchConnectionError(target, f"could not read {target} ({_reason(exc)}); try again later") from None
        except ValueError:
            raise UrlNotAllowed(target, f"{target} cannot be requested; check how the URL is written") from None
        finally:
            _HOP.reset(token)

    async def _page(
        self,
        resp: aiohttp.ClientResponse,
        url: str,
        redirects: tuple[str, ...],
        budget: Budget,
        cap: int,
        truncate: bool,
    ) -> RawPage:
        headers = _lower_headers(resp)
        media, charset = _media_type(headers.get("content-type"))
        if resp.status >= 400 or resp.status < 200:
            body = await read_capped(
                resp.content.iter_any(), _encoding(resp), url, min(cap, ERROR_BODY_BYTES), truncate=True
            )
            if _is_challenge(headers, body, media):
                raise PageBlocked(
                    url,
                    f"{url} answered with a bot challenge instead of the page; open it in a browser, "
                    "or use a provider that reads pages for you",
                    resp.status,
                    content_type=media,
                )
            retry = _retry_after(headers.get("retry-after"), budget)
            message = _status_message(url, resp.status, resp.reason, redirects)
            raise FetchHttpError(url, message, resp.status, content_type=media, retry_after=retry)
        if _is_challenge(headers, b"", media):
            raise PageBlocked(url, f"{url} answered with a bot challenge instead of the page", resp.status)
        if not truncate and resp.content_length is not None and resp.content_length > cap:
            raise too_large(url, cap)
        body = await read_capped(resp.content.iter_any(), _encoding(resp), url, cap, truncate=truncate)
        return RawPage(url, resp.status, headers, body, redirects, media, charset)


def _origin_of(url: str) -> tuple[str, str | None, int | None]:
    try:
        parts = urlsplit(url)
        return parts.scheme.lower(), parts.hostname, parts.port
    except ValueError:
        return ("", None, None)


def _as_requested(target: str, host: str) -> yarl.URL:
    """`target` as aiohttp will request it, refused if the HTTP stack reads its host otherwise
    than the checks did (an address where they saw a name would be connected to unchecked)."""
    try:
        url = yarl.URL(target)
    except ValueError:
        raise UrlNotAllowed(target, f"{target} cannot be requested; check how the URL is written") from None
    seen = (url.raw_host or "").rstrip(".").lower()
    if seen != host.rstrip(".").lower():
        try:
            same = ipaddress.ip_address(seen) == ipaddress.ip_address(host)
        except ValueError:
            same = False
        if not same:
            raise UrlNotAllowed(target, f"{target} has a host websearch cannot read unambiguously; check the URL")
    return url


def _request_headers(policy: FetchPolicy, accept: str, extra: Mapping[str, str] | None) -> dict[str, str]:
    headers = {"User-Agent": policy.user_agent, "Accept": accept}
    for name, value in (extra or {}).items():
        if name.lower() in ("host", "accept-encoding"):
            continue  # the name's own Host; only encodings this module decodes
        for old in [k for k in headers if k.lower() == name.lower()]:
            del headers[old]
        headers[name] = value
    headers["Accept-Encoding"] = "gzip, deflate"
    return headers


def _lower_headers(resp: aiohttp.ClientResponse) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in resp.headers.items():
        key = name.lower()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return headers


def _media_type(value: str | None) -> tuple[str | None, str | None]:
    if not value:
        return None, None
    media, *params = value.split(";")
    charset = None
    for param in params:
        name, _, val = param.partition("=")
        if name.strip().lower() == "charset":
            charset = val.strip().strip("\"'").lower() or None
    return (media.strip().lower() or None), charset


def _encoding(resp: aiohttp.ClientResponse) -> str:
    return resp.headers.get("Content-Encoding", "")


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _through(proxy: Proxy | None, scheme: str, headers: dict[str, str]) -> dict[str, Any]:
    """aiohttp's arguments for a request through `proxy`: its URL without credentials, and its
    credentials as `Proxy-Authorization` (on the request itself for http://, on the CONNECT for
    https://). A SOCKS proxy is its session's connector and needs none."""
    if proxy is None or proxy.socks:
        return {"headers": headers}
    authorization = proxy.authorization() or {}
    if scheme == "http":
        return {"headers": {**headers, **authorization}, "proxy": proxy.shown}
    return {"headers": headers, "proxy": proxy.shown, "proxy_headers": authorization or None}


def _connection_error(exc: aiohttp.ClientError, url: str, proxy: Proxy | None) -> FetchError:
    if isinstance(exc, aiohttp.InvalidURL):
        return UrlNotAllowed(url, f"{url} cannot be requested; check how the URL is written")
    if isinstance(exc, aiohttp.ClientHttpProxyError) and proxy is not None:  # its answer to the CONNECT
        return FetchConnectionError(url, f"the proxy {proxy.shown} refused the tunnel to {url} (HTTP {exc.status})")
    if isinstance(exc, aiohttp.ClientProxyConnectionError) and proxy is not None:
        return FetchConnectionError(url, f"the proxy {proxy.shown} could not be reached; check the proxy setting")
    if isinstance(exc, aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError):
        return FetchConnectionError(url, f"{url} has no valid TLS certificate for its name; websearch did not read it")
    if isinstance(exc, aiohttp.ClientConnectorError):
        return FetchConnectionError(url, f"could not connect to {url} ({_reason(exc.os_error)}); try again later")
    if isinstance(exc, aiohttp.ClientResponseError):
        return FetchConnectionError(url, f"{url} did not answer in HTTP websearch can read; try again later")
    return FetchConnectionError(url, f"the connection to {url} broke ({type(exc).__name__}); try again later")


def _status_message(url: str, status: int, reason: str | None, redirects: tuple[str, ...]) -> str:
    said = f"HTTP {status}" + (f" {reason}" if reason else "")
    if status in (401, 403, 407):
        advice = "the page needs a login or refuses websearch"
    elif status in (404, 410):
        advice = "check the URL" + (f" (reached by a redirect from {redirects[0]})" if redirects else "")
    elif status == 429 or status >= 500:
        advice = "try again later"
    else:
        advice = "the server did not give the page"
    return f"{url} answered {said}; {advice}"


def _retry_after(value: str | None, budget: Budget) -> float | None:
    """Retry-After in seconds from now: a number of seconds, or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    now = budget.clock.now() if budget.clock is not None else datetime.now(UTC)
    return max(0.0, (when - now).total_seconds())


#: Markup of challenge and CAPTCHA pages (Cloudflare, reCAPTCHA, hCaptcha, Turnstile, DataDome,
#: PerimeterX, a CAPTCHA form): elements and script sources, never words of the text.
_CHALLENGE_SELECTORS: Final = ", ".join(
    (
        'script[src*="/cdn-cgi/challenge-platform/"]',
        "#challenge-form",
        "#cf-challenge-running",
        ".g-recaptcha",
        ".h-captcha",
        ".cf-turnstile",
        'script[src*="recaptcha/api"]',
        'script[src*="hcaptcha.com"]',
        'script[src*="challenges.cloudflare.com"]',
        'script[src*="captcha-delivery.com"]',
        'iframe[src*="captcha-delivery.com"]',
        "#px-captcha",
        'form[action*="captcha" i]',
    )
)
_CHALLENGE_SCRIPT_MARKS: Final = ("_cf_chl_opt", "/cdn-cgi/challenge-platform/")


def _is_challenge(headers: Mapping[str, str], body: bytes, media: str | None) -> bool:
    """Whether a response is a bot challenge: Cloudflare's `cf-mitigated: challenge` header, or
    an HTML body whose markup holds a challenge script or a CAPTCHA widget or form."""
    if headers.get("cf-mitigated", "").strip().lower() == "challenge":
        return True
    if not body or (media is not None and "html" not in media):
        return False
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(body.decode("utf-8", errors="replace"))
    if tree.css_first(_CHALLENGE_SELECTORS) is not None:
        return True
    return any(
        mark in (script.text() or "") for script in tree.css("script:not([src])") for mark in _CHALLENGE_SCRIPT_MARKS
    )
