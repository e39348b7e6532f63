"""The server-sent-events decoder, pure and over a real streamed response."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from conftest import make_client
from websearch import HttpRequest
from websearch._sse import SseEvent, aiter_sse, iter_sse
from websearch.errors import ProviderConnectionError
from websearch.testing import FakeServer, RecordedRequest, Reply


def test_decoder_rules() -> None:
    text = ': comment\r\nevent: delta\r\ndata: {"a":\r\ndata: 1}\r\nid: 7\r\n\r\ndata:no-space\n\nevent: done\n\ndata: cut off'
    assert iter_sse(text) == [
        SseEvent("delta", '{"a":\n1}', "7"),
        SseEvent("message", "no-space", "7"),
    ]  # "event: done" with no data line is not dispatched (WHATWG)
    assert iter_sse("data: a\u2028b\n\n") == [SseEvent("message", "a\u2028b")]  # U+2028 is not a line end


class FakeStream(FakeServer):
    provider_id = "perplexity"

    def default_reply(self, request: RecordedRequest) -> Reply:
        return Reply(200, chunks=[b"data: one\n\n", b"data: tw", b"o\n\nevent: end\ndata: x\n\n"])


async def test_stream_over_loopback_and_cut_mid_event(tmp_path: Path) -> None:
    with FakeStream() as fake:
        async with make_client(env={"WEBSEARCH_CONFIG_DIR": str(tmp_path), **fake.env}) as ws:
            ctx = ws._context()
            request = HttpRequest("POST", ctx.endpoint("perplexity", "https://api.perplexity.ai/chat/completions"))
            async with ctx.stream("perplexity", request) as (head, lines):
                events = [e async for e in aiter_sse(lines)]
            assert head.status == 200
            assert head.headers["content-type"] == "text/event-stream"
            assert events == [SseEvent("message", "one"), SseEvent("message", "two"), SseEvent("end", "x")]

            fake.enqueue(Reply(200, chunks=[b"data: first\n\n", b"data: half"], cut=True))
            got: list[SseEvent] = []
            with pytest.raises(ProviderConnectionError, match="Perplexity request failed"):  # noqa: PT012
                async with ctx.stream("perplexity", request) as (_, lines):
                    async for event in aiter_sse(lines):
                        got.append(event)
            assert got == [SseEvent("message", "first")]


async def test_cancelling_a_stream_closes_it_promptly(tmp_path: Path) -> None:
    with FakeStream() as fake:
        fake.enqueue(Reply(200, chunks=[b"data: a\n\n"] + [b": keep-alive\n\n"] * 1000, chunk_delay=0.05))
        async with make_client(env={"WEBSEARCH_CONFIG_DIR": str(tmp_path), **fake.env}) as ws:
            ctx = ws._context()
            first = asyncio.Event()

            async def consume() -> None:
                request = HttpRequest("GET", ctx.endpoint("perplexity", "https://www.perplexity.ai/x"))
                async with ctx.stream("perplexity", request) as (_, lines):
                    async for _event in aiter_sse(lines):
                        first.set()

            task = asyncio.create_task(consume())
            await asyncio.wait_for(first.wait(), 5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, 1)
