"""Cold start: `websearch --help` and a cold search against a fake, over bare interpreter start-ups.

Run by hand: `python -m bench.bench_cold_start`. Each command runs in a fresh interpreter, rounds
interleaved after one warm-up round, medians compared against `python -c pass` and
`python -c "import aiohttp"`. Bytecode is written and used (PYTHONDONTWRITEBYTECODE is dropped):
otherwise every run would compile the package again, which no installed copy does.
Goal: `websearch --help` (the console script) <= 3x `python -c pass`.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._rounds import interleaved, medians
from websearch.testing import FakeDuckDuckGo

ROUNDS = 15


def run(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    py = sys.executable
    with FakeDuckDuckGo() as fake, tempfile.TemporaryDirectory() as config:
        # Its own cache directory (never the user's); a search goes upstream (`--no-cache`) or is
        # served from the cache, which then needs no HTTP stack at all.
        env = {**os.environ, **fake.env, "WEBSEARCH_CONFIG_DIR": config, "WEBSEARCH_CACHE_DIR": f"{config}/cache"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        commands = {
            "python -c pass": [py, "-c", "pass"],
            "python -c 'import aiohttp'": [py, "-c", "import aiohttp"],
            # the standard library `websearch --help` needs: the floor under its time
            "its stdlib (argparse, dataclasses...)": [
                py,
                "-c",
                "import argparse, dataclasses, json, shutil, textwrap, typing",
            ],
            "import websearch": [py, "-c", "import websearch"],
            "websearch --help": [str(Path(py).with_name("websearch")), "--help"],
            "python -m websearch --help": [py, "-m", "websearch", "--help"],
            "websearch providers": [py, "-m", "websearch", "providers"],
            "websearch search (fake DDG)": [py, "-m", "websearch", "search", "rust async", "--no-cache"],
            "websearch search (cached)": [py, "-m", "websearch", "search", "rust async"],
        }
        times = interleaved({name: functools.partial(run, argv, env) for name, argv in commands.items()}, ROUNDS)
    took = medians(times)
    bare, aio = took["python -c pass"], took["python -c 'import aiohttp'"]
    for name, median in took.items():
        print(f"{name:38} {median * 1000:7.1f} ms   {median / bare:5.2f}x bare   {median / aio:5.2f}x import aiohttp")


if __name__ == "__main__":
    main()
