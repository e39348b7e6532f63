"""The progress line `websearch search` shows on a terminal while a person waits.

A search can take its whole deadline (30 s, 120 s in the deep modes) when providers are slow or
fail over; a silent terminal looks hung. So when stderr is a terminal (and not `TERM=dumb`), a
search that has not answered within `delay` seconds shows a turning bar and the seconds spent,
on stderr, and wipes it before the answer is printed. Piped or redirected output never sees it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from typing import TYPE_CHECKING, Final, TextIO

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["Spinner"]

_FRAMES: Final = "|/-\\"
_WIPE: Final = "\r\x1b[K"  # back to the line's start, erase to its end


class Spinner:
    """`async with Spinner(sys.stderr, "searching"):` shows `| searching 2.3 s` while the body runs."""

    def __init__(self, stream: TextIO, label: str, *, delay: float = 0.4, every: float = 0.1) -> None:
        self.stream = stream
        self.label = label
        self.delay = delay
        self.every = every
        self.enabled = _is_terminal(stream) and os.environ.get("TERM") != "dumb"
        self.shown = False
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Spinner:
        if self.enabled:
            self._task = asyncio.get_running_loop().create_task(self._spin())
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.shown:
            self._write(_WIPE)

    async def _spin(self) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.sleep(self.delay)
        for frame in itertools.cycle(_FRAMES):
            self._write(f"{_WIPE}{frame} {self.label} {loop.time() - start:.1f} s")
            self.shown = True
            await asyncio.sleep(self.every)

    def _write(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # a closed or broken terminal: no line, no failure
            self.stream.write(text)
            self.stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False
