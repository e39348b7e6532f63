"""A response body read under a cap, decompressed here in bounded steps.

The cap counts the body after decompression (a compression bomb of a few KB stops at it) and
the bytes as they came too (a stream that inflates to nothing stops as well); decompression makes
at most `_PIECE` bytes a step, so memory stays bounded whatever the ratio. Only gzip and deflate
are asked for and read. Pure: the chunks come from the caller (the fetcher's aiohttp response).
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Final

from ..errors import FetchConnectionError, FetchTooLarge, UnsupportedContent

__all__ = ["read_capped", "too_large"]

_PIECE: Final = 64 * 1024  # decompressed bytes made per step


class _Decoder:
    """Undoes one Content-Encoding (gzip or deflate) in bounded steps."""

    def __init__(self, encoding: str, url: str) -> None:
        self._kind = encoding.strip().lower()
        if self._kind in ("", "identity"):
            self._kind = ""
        elif self._kind == "x-gzip":
            self._kind = "gzip"
        elif self._kind not in ("gzip", "deflate"):
            raise UnsupportedContent(
                url, f"{url} came encoded as '{encoding}', which websearch did not ask for and cannot read"
            )
        self._url = url
        self._inflater: zlib._Decompress | None = None
        self._head = b""

    def feed(self, data: bytes) -> Iterator[bytes]:
        if not self._kind:
            yield data
            return
        if self._inflater is None:
            self._head += data
            if self._kind == "deflate" and len(self._head) < 2:
                return
            data, self._head = self._head, b""
            self._inflater = zlib.decompressobj(self._wbits(data))
        try:
            yield from self._inflate(data)
        except zlib.error:
            raise FetchConnectionError(
                self._url, f"{self._url} sent a compressed body that is corrupt; try again later"
            ) from None

    def _wbits(self, head: bytes) -> int:
        if self._kind == "gzip":
            return 16 + zlib.MAX_WBITS
        zlib_header = len(head) >= 2 and head[0] & 0x0F == 8 and ((head[0] << 8) | head[1]) % 31 == 0
        return zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS  # servers send either for "deflate"

    def _inflate(self, data: bytes) -> Iterator[bytes]:
        inflater = self._inflater
        assert inflater is not None
        while True:
            out = inflater.decompress(data, _PIECE)
            data = inflater.unconsumed_tail
            if out:
                yield out
            if inflater.eof:
                rest = inflater.unused_data
                if self._kind != "gzip" or not rest.startswith(b"\x1f\x8b"):
                    return  # trailing bytes after the stream are ignored
                inflater = self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)  # the next gzip member
                data = rest + data
                continue
            if not data and len(out) < _PIECE:
                return

    def finish(self) -> Iterator[bytes]:
        if self._head:  # a deflate body of one byte
            data, self._head = self._head, b""
            self._inflater = zlib.decompressobj(self._wbits(data))
            yield from self.feed(data)
        if self._inflater is not None and not self._inflater.eof:
            with contextlib.suppress(zlib.error):  # a cut stream: what came is kept
                tail = self._inflater.flush()
                if tail:
                    yield tail


async def read_capped(chunks: AsyncIterator[bytes], encoding: str, url: str, cap: int, *, truncate: bool) -> bytes:
    """The body of `chunks` (sent with Content-Encoding `encoding`), decompressed, at most `cap`
    bytes: past it, FetchTooLarge (or the first `cap` bytes when `truncate`). Raw bytes count
    too, so a stream that inflates to nothing ends."""
    decoder = _Decoder(encoding, url)
    pieces: list[bytes] = []
    total = raw = 0

    def take(piece: bytes) -> bool:
        nonlocal total
        room = cap - total
        if len(piece) > room:
            if not truncate:
                raise too_large(url, cap)
            pieces.append(piece[:room])
            total = cap
            return False
        pieces.append(piece)
        total += len(piece)
        return True

    async for chunk in chunks:
        raw += len(chunk)
        if raw > cap and not truncate:
            raise too_large(url, cap)
        for piece in decoder.feed(chunk):
            if not take(piece):
                return b"".join(pieces)
        if raw > cap:
            return b"".join(pieces)
    for piece in decoder.finish():
        if not take(piece):
            break
    return b"".join(pieces)


def too_large(url: str, cap: int) -> FetchTooLarge:
    """The error of a body past the cap."""
    return FetchTooLarge(url, f"{url} is larger than the {_size(cap)} limit; raise [fetch] max_mb to read it")


def _size(n: int) -> str:
    if n >= 2**20:
        return f"{n / 2**20:g} MB"
    if n >= 1024:
        return f"{n / 1024:g} KB"
    return f"{n} bytes"
