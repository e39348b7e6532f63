"""Two real proxies on 127.0.0.1 for the proxy tests: an HTTP proxy (CONNECT, and absolute-form
requests for http:// URLs) and a SOCKS5 proxy (CONNECT; no authentication, or a user name and
password, RFC 1929). Each records what passed through it (`passed`) and resolves the names it is
given through `names` (a test's own names, e.g. `fake.test` → 127.0.0.1), else takes the host as an
address: no lookup leaves the machine.

They run on a background event loop of their own, so they serve sync and async tests alike.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ipaddress
import socket
import struct
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self

_LOCK = threading.Lock()
_LOOP: list[asyncio.AbstractEventLoop] = []


def _loop() -> asyncio.AbstractEventLoop:
    with _LOCK:
        if not _LOOP:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="test-proxies", daemon=True).start()
            _LOOP.append(loop)
        return _LOOP[0]


@dataclass(frozen=True)
class Passed:
    """One connection or request the proxy carried: how (`CONNECT`, `GET`, `POST`, `socks`),
    the host and port asked for as the client gave them (a name, or an address), the kind of
    address a SOCKS client sent (`name`, `ipv4`, `ipv6`), and the user it authenticated as."""

    how: str
    host: str
    port: int
    address_kind: str = "name"
    user: str | None = None


class _Proxy:
    """What both proxies share: start, stop, the record, and the name map."""

    def __init__(
        self, *, user: str | None = None, password: str | None = None, names: Mapping[str, str] | None = None
    ) -> None:
        self.user = user
        self.password = password
        self.names = dict(names or {})
        self.passed: list[Passed] = []
        self.refused = 0  # connections refused for their credentials
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def scheme(self) -> str:
        raise NotImplementedError

    def url(self, scheme: str | None = None, *, user: str | None = None, password: str | None = None) -> str:
        """This proxy's URL, with credentials when given."""
        creds = f"{user}:{password}@" if user is not None else ""
        return f"{scheme or self.scheme}://{creds}127.0.0.1:{self.port}"

    def start(self) -> Self:
        asyncio.run_coroutine_threadsafe(self._start(), _loop()).result(10)
        return self

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), _loop()).result(10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError, OSError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    def _address(self, host: str) -> str:
        return self.names.get(host.lower(), host)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        if writer.can_write_eof():
            with contextlib.suppress(OSError):
                writer.write_eof()


async def _splice(
    a: tuple[asyncio.StreamReader, asyncio.StreamWriter], b: tuple[asyncio.StreamReader, asyncio.StreamWriter]
) -> None:
    """Carry bytes both ways until both sides have ended."""
    try:
        await asyncio.gather(_pipe(a[0], b[1]), _pipe(b[0], a[1]))
    finally:
        b[1].close()


class HttpProxy(_Proxy):
    """An HTTP forward proxy: `CONNECT host:port` tunnels, and `GET http://host:port/path` (any
    method) is sent on as an origin-form request on a connection of its own, closed after the
    answer. With `user`, a request without the right `Proxy-Authorization` gets 407."""

    @property
    def scheme(self) -> str:
        return "http"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            line, *header_lines = head.decode("latin-1").split("\r\n")
            method, target, version = line.split(" ", 2)
            headers = [h.split(":", 1) for h in header_lines if h]
            user = self._authorised(headers)
            if user is False:
                self.refused += 1
                writer.write(
                    b'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\n'
                    b"Content-Length: 0\r\nConnection: close\r\n\r\n"
                )
                await writer.drain()
                return
            who = user if isinstance(user, str) else None
            if method == "CONNECT":
                host, _, port = target.rpartition(":")
                self.passed.append(Passed("CONNECT", host.strip("[]"), int(port), user=who))
                upstream = await asyncio.open_connection(self._address(host.strip("[]")), int(port))
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await writer.drain()
                await _splice((reader, writer), upstream)
                return
            await self._forward(method, target, version, headers, who, reader, writer)
            return  # the answer said Connection: close

    def _authorised(self, headers: list[list[str]]) -> str | bool:
        """True without a required login, the user when the login is right, False otherwise."""
        if self.user is None:
            return True
        expected = base64.b64encode(f"{self.user}:{self.password or ''}".encode()).decode()
        for name, value in headers:
            if name.strip().lower() == "proxy-authorization" and value.strip() == f"Basic {expected}":
                return self.user
        return False

    async def _forward(
        self,
        method: str,
        target: str,
        version: str,
        headers: list[list[str]],
        user: str | None,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        from urllib.parse import urlsplit

        parts = urlsplit(target)
        host, port = parts.hostname or "", parts.port or 80
        self.passed.append(Passed(method, host, port, user=user))
        path = parts.path or "/"
        if parts.query:
            path += f"?{parts.query}"
        kept = [
            f"{name}:{value}"
            for name, value in headers
            if name.strip().lower() not in ("proxy-authorization", "proxy-connection", "connection", "keep-alive")
        ]
        up_reader, up_writer = await asyncio.open_connection(self._address(host), port)
        up_writer.write(
            "\r\n".join([f"{method} {path} {version}", *kept, "Connection: close", "", ""]).encode("latin-1")
        )
        await up_writer.drain()
        sending = asyncio.ensure_future(_pipe(reader, up_writer))  # the body, however it is framed
        try:
            answer = await up_reader.readuntil(b"\r\n\r\n")
            status, *lines = answer.decode("latin-1").split("\r\n")
            lines = [h for h in lines if h and h.split(":", 1)[0].strip().lower() not in ("connection", "keep-alive")]
            writer.write("\r\n".join([status, *lines, "Connection: close", "", ""]).encode("latin-1"))
            while data := await up_reader.read(65536):
                writer.write(data)
                await writer.drain()
        finally:
            sending.cancel()
            up_writer.close()


class Socks5Proxy(_Proxy):
    """A SOCKS5 proxy (RFC 1928): the CONNECT command only (others get "command not supported"),
    no authentication, or with `user` a user name and password (RFC 1929). A name it is given is
    looked up in `names` only; one it does not know gets "host unreachable"."""

    @property
    def scheme(self) -> str:
        return "socks5"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        version, count = await reader.readexactly(2)
        methods = await reader.readexactly(count)
        if version != 5:
            return
        wanted = 2 if self.user is not None else 0
        if wanted not in methods:
            writer.write(b"\x05\xff")
            await writer.drain()
            return
        writer.write(bytes([5, wanted]))
        await writer.drain()
        user = None
        if wanted == 2:
            _, size = await reader.readexactly(2)
            name = (await reader.readexactly(size)).decode()
            (size,) = await reader.readexactly(1)
            password = (await reader.readexactly(size)).decode()
            if (name, password) != (self.user, self.password):
                self.refused += 1
                writer.write(b"\x01\x01")
                await writer.drain()
                return
            writer.write(b"\x01\x00")
            await writer.drain()
            user = name
        _, command, _, kind = await reader.readexactly(4)
        if kind == 1:
            host, address_kind = socket.inet_ntop(socket.AF_INET, await reader.readexactly(4)), "ipv4"
        elif kind == 4:
            host, address_kind = socket.inet_ntop(socket.AF_INET6, await reader.readexactly(16)), "ipv6"
        else:
            (size,) = await reader.readexactly(1)
            host, address_kind = (await reader.readexactly(size)).decode(), "name"
        (port,) = struct.unpack("!H", await reader.readexactly(2))
        if command != 1:
            writer.write(b"\x05\x07\x00\x01" + bytes(6))  # command not supported
            await writer.drain()
            return
        self.passed.append(Passed("socks", host, port, address_kind, user))
        address = self._address(host) if address_kind == "name" else host
        try:
            ipaddress.ip_address(address)
            upstream = await asyncio.open_connection(address, port)
        except ValueError:  # a name it was not given: nothing is looked up
            writer.write(b"\x05\x04\x00\x01" + bytes(6))
            await writer.drain()
            return
        except OSError:
            writer.write(b"\x05\x05\x00\x01" + bytes(6))  # connection refused
            await writer.drain()
            return
        writer.write(b"\x05\x00\x00\x01" + socket.inet_aton("127.0.0.1") + struct.pack("!H", port))
        await writer.drain()
        await _splice((reader, writer), upstream)
