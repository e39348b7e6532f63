"""Refuse any connection or name lookup that is not loopback, so no test reaches the internet."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

_LOOPBACK_NAMES = {"localhost", "ip6-localhost"}
blocked: list[str] = []


class NonLoopbackConnection(OSError):
    """A test tried to reach a host that is not on this machine's loopback."""


def _is_loopback(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if not isinstance(host, str):
        return False
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def install() -> None:
    """Patch socket lookups and connects; idempotent."""
    if getattr(socket, "_websearch_guard", False):
        return
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and not _is_loopback(host):
            blocked.append(str(host))
            raise NonLoopbackConnection(f"test tried to resolve non-loopback host {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
            blocked.append(str(address[0]))
            raise NonLoopbackConnection(f"test tried to connect to non-loopback address {address[0]!r}")

    def connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return real_connect_ex(self, address)

    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket._websearch_guard = True  # type: ignore[attr-defined]
