"""Server-sent events: decode `text/event-stream` lines into events (pure; no I/O).

Follows the WHATWG rules: lines end at CR LF, LF or CR alone; a byte-order mark at the start of
the stream is ignored; `event:`, `data:` (several joined with newlines), `id:`, comment lines
starting with ":", an event dispatched at each blank line, and an unfinished event at the end of
the stream discarded (a stream cut off mid-event therefore never yields half an event). Body
lines arrive already split at those line ends (`Transport.stream` splits and caps them).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Final

__all__ = ["SseEvent", "aiter_sse", "iter_sse"]

#: SSE lines end at CR LF, CR or LF only (str.splitlines would also split at U+2028 and others).
_LINE_RE: Final = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event; `event` defaults to "message"."""

    event: str
    data: str
    id: str | None = None


class _Decoder:
    def __init__(self) -> None:
        self.event = ""
        self.data: list[str] = []
        self.id: str | None = None
        self.first = True

    def feed(self, raw: bytes | str) -> SseEvent | None:
        line = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        if self.first:
            self.first = False
            line = line.removeprefix("\ufeff")
        line = line.rstrip("\r\n")
        if not line:
            if not self.data:  # WHATWG: an event with no data lines is not dispatched
                self.event = ""
                return None
            event = SseEvent(self.event or "message", "\n".join(self.data), self.id)
            self.event, self.data = "", []
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self.data.append(value)
        elif name == "event":
            self.event = value
        elif name == "id" and "\0" not in value:
            self.id = value
        return None


async def aiter_sse(lines: AsyncIterator[bytes]) -> AsyncIterator[SseEvent]:
    """Events from an async iterator of body lines (as `Transport.stream` yields them)."""
    decoder = _Decoder()
    async for raw in lines:
        event = decoder.feed(raw)
        if event is not None:
            yield event


def iter_sse(text: str | Iterable[str]) -> list[SseEvent]:
    """Events from a whole stream body (for pure parser tests)."""
    decoder = _Decoder()
    lines = _LINE_RE.findall(text) if isinstance(text, str) else text
    return [event for raw in lines if (event := decoder.feed(raw)) is not None]
