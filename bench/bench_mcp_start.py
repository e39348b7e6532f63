"""MCP start-up: spawn -> `tools/list` answered, `websearch mcp` against the SDK's minimal server,
and how long the first `tools/call` stalls the event loop.

Run by hand: `python -m bench.bench_mcp_start` (needs the mcp extra). Both servers speak stdio
and are driven the same way over pipes (initialize, initialized, tools/list), rounds
interleaved after one warm-up round; bytecode is written and used. The minimal server is the
SDK's low-level `Server` with one tool, what `websearch mcp` is built on.
Goals: `websearch mcp` <= 1.1x the minimal server; the first call stalls the loop <= 50 ms.

The stall: in a fresh interpreter (aiohttp not imported), the server runs in process with the
SDK's in-memory client and a task that sleeps 1 ms at a time records how late it wakes; the
client sends `tools/call` right after `tools/list` (the worst case: the HTTP stack is not yet
loaded), against a DuckDuckGo fake in this process. The client's own check of the result against
the output schema (jsonschema, 20-60 ms on this loop) is left out: a real client runs elsewhere.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._rounds import interleaved, medians
from websearch.testing import DdgResult, FakeDuckDuckGo

ROUNDS = 15
PROTOCOL = "2025-06-18"
MINIMAL = """
import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

TOOL = types.Tool(name="echo", description="Say it back.", input_schema={"type": "object", "properties": {}})

async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[TOOL])

async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(text="echo")])

async def main():
    server = Server("minimal", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""
STALL = """
import asyncio, json, sys, time
from mcp import Client
from mcp.client.session import ClientSession

async def trusted(self, name, result):  # the client's check of the result (jsonschema): not the server's time
    pass

ClientSession.validate_tool_result = trusted
import websearch
from websearch._http._deferred import loaded
from websearch._faces._mcp_server import build_server

async def main():
    loop = asyncio.get_running_loop()
    worst = 0.0
    async def watch():
        nonlocal worst
        while True:
            before = loop.time()
            await asyncio.sleep(0.001)
            worst = max(worst, loop.time() - before - 0.001)
    watcher = asyncio.create_task(watch())
    async with websearch.WebSearch() as ws:
        async with Client(build_server(ws)) as client:
            await client.list_tools()
            started, worst = worst, 0.0
            ready = loaded() is not None
            start = time.perf_counter()
            result = await client.call_tool("web_search", {"query": f"bench mcp {sys.argv[1]}"})  # a miss
            took = time.perf_counter() - start
    watcher.cancel()
    print(json.dumps({"start": started, "stall": worst, "call": took, "loaded": ready, "error": result.is_error}))

asyncio.run(main())
"""


def send(proc: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
    proc.stdin.flush()


def answer(proc: subprocess.Popen[bytes], request_id: int) -> dict[str, object]:
    """The response to `request_id` (notifications and log lines before it are skipped)."""
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the server closed stdout before answering request {request_id}")
        message: dict[str, object] = json.loads(line)
        if message.get("id") == request_id:
            return message


def to_tools_list(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from spawning `argv` to its `tools/list` answer."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        hello = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
        send(proc, {"id": 1, "method": "initialize", "params": hello})
        answer(proc, 1)
        send(proc, {"method": "notifications/initialized"})
        send(proc, {"id": 2, "method": "tools/list"})
        tools = answer(proc, 2)
        took = time.perf_counter() - start
        assert "result" in tools, tools
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(10)
    return took


def main() -> None:
    py = sys.executable
    with FakeDuckDuckGo() as fake, tempfile.TemporaryDirectory() as config:
        fake.results = [DdgResult("T", "https://t.example/", "s")]
        env = {**os.environ, **fake.env, "WEBSEARCH_CONFIG_DIR": config, "WEBSEARCH_CACHE_DIR": f"{config}/cache"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        servers = {
            "SDK minimal server": [py, "-c", MINIMAL],
            "websearch mcp": [str(Path(py).with_name("websearch")), "mcp"],
        }
        times = interleaved(
            {name: functools.partial(to_tools_list, argv, env) for name, argv in servers.items()}, ROUNDS
        )
        took = medians(times)
        minimal = took["SDK minimal server"]
        print(f"spawn -> tools/list over stdio; medians of {ROUNDS} interleaved rounds (goal: <= 1.1x minimal)")
        for name, median in took.items():
            print(f"  {name:20} {median * 1e3:7.1f} ms   {median / minimal:5.2f}x minimal")

        stalls = []
        for i in range(5):
            argv = [py, "-c", STALL, f"{time.time()} {i}"]
            proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
            stalls.append(json.loads(proc.stdout))
        print("first tools/call right after tools/list, in a fresh process; 5 runs (goal: stall <= 50 ms)")
        for run in stalls:
            print(
                f"  loop stalled at most {run['stall'] * 1e3:5.1f} ms in the call"
                f" ({run['start'] * 1e3:5.1f} ms before it); the call took {run['call'] * 1e3:6.1f} ms"
                f" (the HTTP stack loaded before it: {run['loaded']}, error: {run['error']})"
            )


if __name__ == "__main__":
    main()
