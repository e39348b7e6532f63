"""The progress line of `websearch search`: on a terminal only, after a short delay, wiped before the answer."""

from __future__ import annotations

import asyncio
import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TESTS, cli_env
from websearch._faces._spinner import Spinner
from websearch.testing import FakeBrave, Reply
from websearch.testing.brave import brave_results_body

WIPE = "\r\x1b[K"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_a_slow_body_shows_the_turning_bar_then_wipes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")
    stream = Terminal()
    async with Spinner(stream, "searching", delay=0.05, every=0.02) as spinner:
        await asyncio.sleep(0.2)
    frames = [part for part in stream.getvalue().split(WIPE) if part]
    assert spinner.shown and len(frames) >= 3
    assert [frame[0] for frame in frames[:4]] == list("|/-\\")[: len(frames[:4])]
    assert all(frame[1:].startswith(" searching ") and frame.endswith(" s") for frame in frames)
    assert stream.getvalue().endswith(WIPE)  # the line is gone before the answer is printed


@pytest.mark.parametrize("term", ["xterm", "dumb"])
async def test_nothing_is_written_off_a_terminal_on_a_dumb_one_or_before_the_delay(
    monkeypatch: pytest.MonkeyPatch, term: str
) -> None:
    monkeypatch.setenv("TERM", term)
    piped, fast = io.StringIO(), Terminal()
    async with Spinner(piped, "searching", delay=0.0, every=0.01):
        await asyncio.sleep(0.05)
    async with Spinner(fast, "searching", delay=5.0):
        await asyncio.sleep(0.01)
    assert piped.getvalue() == "" and fast.getvalue() == ""
    dumb = Terminal()
    async with Spinner(dumb, "searching", delay=0.0, every=0.01):
        await asyncio.sleep(0.05)
    assert (dumb.getvalue() == "") is (term == "dumb")


async def test_a_broken_terminal_fails_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken(Terminal):
        tries = 0

        def write(self, text: str) -> int:
            self.tries += 1
            raise OSError("EIO")

    monkeypatch.setenv("TERM", "xterm")
    broken = Broken()
    async with Spinner(broken, "searching", delay=0.0, every=0.01):  # raises nothing out of the body
        await asyncio.sleep(0.05)
    assert broken.tries >= 2  # it kept trying to draw, and each failure stayed inside


def test_the_cli_spins_on_a_terminal_and_keeps_stdout_clean(tmp_path: Path) -> None:
    with FakeBrave() as brave:
        brave.enqueue(Reply(200, brave_results_body("slow one", 1), delay=1.0))
        env = cli_env({**brave.env, "BRAVE_API_KEY": "k", "WEBSEARCH_CONFIG_DIR": str(tmp_path), "TERM": "xterm"})
        leader, follower = pty.openpty()
        proc = subprocess.Popen(
            [sys.executable, str(TESTS / "guarded_cli.py"), "search", "slow one"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=follower,
        )
        os.close(follower)
        stdout, _ = proc.communicate(timeout=30)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the other end closed
                break
            if not chunk:
                break
            shown += chunk
        os.close(leader)
    assert proc.returncode == 0
    assert stdout.decode().startswith("[1] Slow One - part 1")
    assert b"searching 0." in shown and shown.endswith(WIPE.encode())
    assert b"searching" not in stdout
