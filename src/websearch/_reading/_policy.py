"""What a fetch may reach: the URL and address checks that keep `fetch` out of private networks.

A URL from a search result, a page or an agent is untrusted. Fetching it must not reach this
machine, the local network or a cloud's metadata service (SSRF). The checks here are pure: the
scheme and host of a URL (`check_url`), each address a name resolves to (`check_address`), and
a resolution in which every address must pass (`vetted`). The fetcher connects only to the
addresses `vetted` returned, so a name that answers differently on the next lookup (DNS
rebinding) gains nothing. Two settings relax the rules: `allow_private` lets every host reach
loopback and private ranges (a lab, an intranet), `allow_hosts` lets the hosts it names reach
anything (self-hosted docs). Link-local, metadata, multicast and the like stay closed to all
other hosts whatever `allow_private` says.

No message holds a URL's user or password: every one shows it as `***@`
(`without_userinfo`, the one the rest of the package uses).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Protocol
from urllib.parse import SplitResult, urlsplit

from .._core._checks import without_userinfo
from .._core._version import __version__
from ..errors import FetchConnectionError, UrlNotAllowed

__all__ = [
    "DEFAULT_USER_AGENT",
    "FetchPolicy",
    "Resolver",
    "SystemResolver",
    "check_address",
    "check_url",
    "refusal",
    "vetted",
]

DEFAULT_USER_AGENT: Final = f"websearch/{__version__} (+https://github.com/websearch-hub/websearch)"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

#: Names refused before any lookup: this machine, and the cloud metadata service's names.
_REFUSED_NAMES: Final = frozenset({"localhost", "localhost.localdomain", "metadata", "metadata.google.internal"})

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

#: (network, what it is, whether `allow_private` opens it), first match wins. Ranges not listed
#: that Python does not count as global (documentation, benchmarking, protocol assignments) are
#: refused too, and open with `allow_private`.
_V4_RANGES: Final[tuple[tuple[ipaddress.IPv4Network, str, bool], ...]] = (
    (_V4("0.0.0.0/8"), "a 'this network' address", False),
    (_V4("169.254.169.254/32"), "the cloud metadata address", False),
    (_V4("169.254.0.0/16"), "a link-local address", False),
    (_V4("224.0.0.0/4"), "a multicast address", False),
    (_V4("255.255.255.255/32"), "the broadcast address", False),
    (_V4("240.0.0.0/4"), "a reserved address", False),
    (_V4("127.0.0.0/8"), "a loopback address", True),
    (_V4("10.0.0.0/8"), "a private address", True),
    (_V4("172.16.0.0/12"), "a private address", True),
    (_V4("192.168.0.0/16"), "a private address", True),
    (_V4("100.64.0.0/10"), "a shared (carrier-grade NAT) address", True),
)
_V6_RANGES: Final[tuple[tuple[ipaddress.IPv6Network, str, bool], ...]] = (
    (_V6("::/128"), "the unspecified address", False),
    (_V6("fd00:ec2::254/128"), "the cloud metadata address", False),
    (_V6("fe80::/10"), "a link-local address", False),
    (_V6("ff00::/8"), "a multicast address", False),
    (_V6("::1/128"), "a loopback address", True),
    (_V6("fc00::/7"), "a unique local (private) address", True),
    (_V6("fec0::/10"), "a site-local (private) address", True),
)
#: IPv6 forms that carry an IPv4 address in their last 32 bits: the address reached is the IPv4 one.
_V4_COMPATIBLE: Final = _V6("::/96")  # deprecated IPv4-compatible (::a.b.c.d)
_V4_TRANSLATED: Final = _V6("::ffff:0:0:0/96")  # SIIT (::ffff:0:a.b.c.d)
_NAT64: Final = _V6("64:ff9b::/96")  # well-known NAT64 prefix: the gateway connects to the IPv4 address

_HEX_PART: Final = re.compile(r"0[xX][0-9a-fA-F]*")


@dataclass(frozen=True)
class FetchPolicy:
    """What `fetch` may reach and how much it reads (the `[fetch]` settings).

    `allow_hosts`: hosts (exact, or `*.suffix` for every name under suffix) that may reach any
    address, private or not (self-hosted docs). `allow_private`: every host may reach loopback,
    RFC 1918, CGNAT and unique-local addresses; never link-local, metadata, multicast, 0.0.0.0/8,
    broadcast or reserved ones. `max_bytes`: the body's cap after decompression.
    `max_redirects`: hops followed. `robots`: whether robots.txt is honoured. `user_agent`: the
    User-Agent every request sends."""

    allow_hosts: frozenset[str] = frozenset()
    allow_private: bool = False
    max_bytes: int = 10 * 2**20
    max_redirects: int = 10
    robots: bool = True
    user_agent: str = DEFAULT_USER_AGENT

    def __post_init__(self) -> None:
        hosts: Iterable[str] = self.allow_hosts
        object.__setattr__(self, "allow_hosts", frozenset(_normal_host(h) for h in hosts if _normal_host(h)))
        if self.max_bytes <= 0:
            raise ValueError(f"max_bytes must be positive, not {self.max_bytes!r}")
        if self.max_redirects < 0:
            raise ValueError(f"max_redirects must be 0 or more, not {self.max_redirects!r}")

    def host_allowed(self, host: str) -> bool:
        """Whether `host` is in `allow_hosts` (exactly, or under a `*.suffix` entry)."""
        if not self.allow_hosts:
            return False
        name = _normal_host(host)
        if name in self.allow_hosts:
            return True
        labels = name.split(".")
        return any("*." + ".".join(labels[i:]) in self.allow_hosts for i in range(1, len(labels)))


def _normal_host(host: str) -> str:
    """A host as the checks compare it: lower-case, no brackets, no trailing dot."""
    host = host.strip().lower().removeprefix("[").removesuffix("]").rstrip(".")
    try:
        return str(ipaddress.ip_address(host))  # one spelling per IPv6 address
    except ValueError:
        return host


def check_url(url: str, policy: FetchPolicy) -> SplitResult:
    """`url` split, if websearch may fetch it: http or https, a host, no name of this machine or
    of a metadata service, and a literal address that `check_address` passes. The result has no
    user or password (they are never sent), and an IPv4 address written as a number
    (`2130706433`, `0x7f.1`) in its dotted form, as browsers read it. Raises UrlNotAllowed."""
    shown = without_userinfo(url.strip())
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        raise UrlNotAllowed(shown, f"{shown} is not a valid URL; check how it is written") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise UrlNotAllowed(shown, f"{shown} is not an http or https URL; websearch fetches only web pages")
    if not host or port == 0 or any(c.isspace() or ord(c) < 0x20 for c in host):
        raise UrlNotAllowed(shown, f"{shown} has no valid host to fetch from; check how the URL is written")
    netloc = parts.netloc.rpartition("@")[2]
    if not host.isascii():  # checked as the connection will read it: IDNA maps "１２７.０.０.１" to 127.0.0.1
        ascii_host = _idna(host)
        if ascii_host is None:
            raise UrlNotAllowed(shown, f"{shown} has a host name that cannot be encoded; check how the URL is written")
        host = ascii_host
        netloc = host if port is None else f"{host}:{port}"
    address = _literal_address(host)
    if address is None:
        numeric = _numeric_ipv4(host.rstrip("."))
        if numeric is False:
            raise UrlNotAllowed(
                shown, f"{shown} has a host that is neither a name nor an IPv4 address; check how the URL is written"
            )
        if isinstance(numeric, ipaddress.IPv4Address):
            address = numeric
            netloc = str(numeric) if port is None else f"{numeric}:{port}"
    clean = SplitResult(scheme, netloc, parts.path, parts.query, parts.fragment)
    if address is not None:
        check_address(str(address), str(address), policy, url=shown)
    else:
        _check_name(host, policy, shown)
    return clean


def _idna(host: str) -> str | None:
    """`host` in ASCII as the HTTP stack encodes it (IDNA with UTS 46 mapping, else IDNA 2003)."""
    import idna  # a dependency of yarl; loaded only for a name that is not ASCII

    try:
        return idna.encode(host, uts46=True).decode("ascii").lower()
    except UnicodeError:
        try:
            return host.encode("idna").decode("ascii").lower()
        except UnicodeError:
            return None


def _literal_address(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return None


def _numeric_ipv4(host: str) -> ipaddress.IPv4Address | bool:
    """A host ending in a number read as an IPv4 address the way browsers and `inet_aton` read
    it (decimal, 0x hex or 0-octal parts, the last filling the remaining bytes); True when the
    host is a name, False when it ends in a number but is no valid address."""
    labels = host.split(".")
    last = labels[-1]
    if not (last.isascii() and (last.isdigit() or _HEX_PART.fullmatch(last))):
        return True
    if len(labels) > 4:
        return False
    numbers = [_ipv4_part(label) for label in labels]
    if any(n is None for n in numbers):
        return False
    values = [n for n in numbers if n is not None]
    if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return False
    total = values[-1]
    for i, n in enumerate(values[:-1]):
        total += n << (8 * (3 - i))
    return ipaddress.IPv4Address(total)


def _ipv4_part(label: str) -> int | None:
    if not label.isascii():
        return None
    if _HEX_PART.fullmatch(label):
        return int(label[2:] or "0", 16)
    if label.isdigit():
        if len(label) > 1 and label.startswith("0"):
            return int(label, 8) if set(label) <= set("01234567") else None
        return int(label)
    return None


def _check_name(host: str, policy: FetchPolicy, shown: str) -> None:
    name = _normal_host(host)
    if policy.host_allowed(name):
        return
    if name.endswith(".localhost") or name in ("localhost", "localhost.localdomain"):
        if not policy.allow_private:  # loopback, which allow_private opens (its addresses are checked still)
            raise UrlNotAllowed(
                shown,
                f"{shown} names this machine; add the host to [fetch] allow_hosts, or set [fetch] allow_private "
                "to fetch private addresses",
            )
    elif name in _REFUSED_NAMES:
        raise UrlNotAllowed(
            shown,
            f"{shown} names a cloud metadata service; websearch never fetches it unless the host is in "
            "[fetch] allow_hosts",
        )


def refusal(ip: str, policy: FetchPolicy) -> tuple[str, bool] | None:
    """Why websearch does not connect to `ip` under `policy` (ignoring `allow_hosts`): what the
    address is ("a loopback address") and whether `allow_private` would open it; None if it may.
    IPv6 forms that carry an IPv4 address (mapped, compatible, SIIT, NAT64, 6to4, Teredo) are
    judged by that address too."""
    try:
        address = ipaddress.ip_address(ip.partition("%")[0])
    except ValueError:
        return ("not an IP address", False)
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_ipv4(address)
        if inner is not None and (
            address.ipv4_mapped is not None or address in _V4_COMPATIBLE or address in _V4_TRANSLATED
        ):
            return _judge(inner, policy)  # only the IPv4 address is reached
        outer = _judge(address, policy)
        if outer is not None or inner is None:
            return outer
        return _judge(inner, policy)
    return _judge(address, policy)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    low = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _V4_TRANSLATED or address in _NAT64:
        return low
    if address in _V4_COMPATIBLE:
        return low if int(address) > 1 else None  # :: and ::1 are themselves
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    return None


def _judge(address: IPAddress, policy: FetchPolicy) -> tuple[str, bool] | None:
    ranges = _V4_RANGES if isinstance(address, ipaddress.IPv4Address) else _V6_RANGES
    for network, what, relaxable in ranges:
        if address in network:
            return None if relaxable and policy.allow_private else (what, relaxable)
    if address.is_multicast:
        return ("a multicast address", False)
    if address.is_global:
        return None
    return None if policy.allow_private else ("a special-purpose address", True)


def check_address(ip: str, host: str, policy: FetchPolicy, *, url: str | None = None) -> None:
    """Raise UrlNotAllowed unless websearch may connect to `ip` for `host`: any address when
    the host is in `allow_hosts`, else not one `refusal` names. `url` (redacted) is what the
    message names; by default the host."""
    if policy.host_allowed(host):
        return
    why = refusal(ip, policy)
    if why is None:
        return
    what, relaxable = why
    shown = url or host
    if relaxable:
        advice = "add the host to [fetch] allow_hosts, or set [fetch] allow_private to fetch private addresses"
    else:
        advice = "websearch never fetches such addresses unless the host is in [fetch] allow_hosts"
    raise UrlNotAllowed(shown, f"{shown} leads to {what} ({ip}); {advice}")


class Resolver(Protocol):
    """Turns a host name into the IP addresses it connects to (IPv4 and IPv6)."""

    async def resolve(self, host: str, port: int) -> list[str]:
        """The addresses of `host`, as strings; FetchConnectionError if it does not resolve."""
        ...


class SystemResolver:
    """The operating system's resolver (`getaddrinfo`, run off the event loop)."""

    async def resolve(self, host: str, port: int) -> list[str]:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:  # gaierror; UnicodeError: a label IDNA cannot encode
            reason = getattr(exc, "strerror", None) or type(exc).__name__
            raise FetchConnectionError(
                host, f"the name {host} does not resolve ({reason}); check the URL, or this machine's DNS"
            ) from None
        found = [str(info[4][0]) for info in infos if info[0] in (socket.AF_INET, socket.AF_INET6)]
        return list(dict.fromkeys(found))


async def vetted(resolver: Resolver, host: str, port: int, policy: FetchPolicy, *, url: str | None = None) -> list[str]:
    """The addresses of `host`, every one of them checked (one refused address refuses the name:
    the connection could go to any). A literal address is not looked up. `url` (redacted) is
    what messages name. Raises UrlNotAllowed or FetchConnectionError."""
    shown = url or host
    literal = _literal_address(host.removeprefix("[").removesuffix("]"))
    if literal is not None:
        addresses = [host.removeprefix("[").removesuffix("]")]
    else:
        _check_name(host, policy, shown)
        try:
            addresses = list(await resolver.resolve(host, port))
        except FetchConnectionError as exc:
            raise FetchConnectionError(shown, exc.message) from None
        if not addresses:
            raise FetchConnectionError(shown, f"the name {host} has no address; check the URL, or this machine's DNS")
    for address in addresses:
        check_address(address, host, policy, url=shown)
    return addresses
