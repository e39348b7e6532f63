"""The server-sent-events decoder, pure and over a real streamed response."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from conftest import make_client
from websearch._http._sse import SseEvent, aiter_sse, iter_sse
from websearch.errors import ProviderConnectionError
from websearch.providers import HttpRequest
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


def test_cr_only_line_ends_and_a_leading_bom() -> None:
    assert iter_sse("data: a\rdata: b\r\rdata: c\r\n\r\n") == [SseEvent("message", "a\nb"), SseEvent("message", "c")]
    assert iter_sse("\ufeffdata: first\n\n") == [SseEvent("message", "first")]
    assert iter_sse("\ufeff: comment\n\ndata: x\n\n") == [SseEvent("message", "x")]


class CrStream(FakeServer):
    """A stream whose lines end with CR only, split mid-line and between CR and LF, behind a BOM."""

    provider_id = "perplexity"

    def default_reply(self, request: RecordedRequest) -> Reply:
        chunks = [b"\xef\xbb\xbfdata: o", b"ne\r\r", b"data: two\r", b"\ndata: 2b\r\n\r", b"\ndata: three\r\r"]
        return Reply(200, chunks=chunks)


async def test_a_cr_only_stream_over_loopback_gives_every_event(tmp_path: Path) -> None:
    with CrStream() as fake:
        async with make_client(env={"WEBSEARCH_CONFIG_DIR": str(tmp_path), **fake.env}) as ws:
            ctx = ws._context()
            request = HttpRequest("POST", ctx.endpoint("perplexity", "https://api.perplexity.ai/chat/completions"))
            async with ctx.stream("perplexity", request) as (_, lines):
                events = [e async for e in aiter_sse(lines)]
    assert events == [SseEvent("message", "one"), SseEvent("message", "two\n2b"), SseEvent("message", "three")]


class EndlessEvent(FakeServer):
    """`data:` lines that never end an event, gzip-compressed (the fault that reached 1.2 GB)."""

    provider_id = "perplexity"

    def __init__(self, lines: int, line: bytes = b"data: " + b"x" * 1000 + b"\n", blank_every: int = 0) -> None:
        super().__init__()
        self.lines, self.line, self.blank_every = lines, line, blank_every

    def default_reply(self, request: RecordedRequest) -> Reply:
        import zlib

        packer = zlib.compressobj(wbits=31)  # gzip
        body = b"".join(
            self.line + (b"\n" if self.blank_every and (i + 1) % self.blank_every == 0 else b"")
            for i in range(self.lines)
        )
        return Reply(200, chunks=[packer.compress(body) + packer.flush()], headers={"Content-Encoding": "gzip"})


async def stream_events(fake: FakeServer, tmp_path: Path, **transport: int) -> list[SseEvent]:
    from websearch._http._transport import Transport

    async with make_client(
        env={"WEBSEARCH_CONFIG_DIR": str(tmp_path), **fake.env},
        transport=Transport(labels={"perplexity": "Perplexity"}, **transport),  # type: ignore[arg-type]
    ) as ws:
        ctx = ws._context()
        request = HttpRequest("POST", ctx.endpoint("perplexity", "https://api.perplexity.ai/chat/completions"))
        try:
            async with ctx.stream("perplexity", request) as (_, lines):
                return [e async for e in aiter_sse(lines)]
        finally:
            await ctx.transport.aclose()  # type: ignore[union-attr]


async def test_an_event_that_never_ends_is_refused_at_the_event_cap(tmp_path: Path) -> None:
    from websearch.errors import InvalidResponse

    with EndlessEvent(lines=5000) as fake, pytest.raises(InvalidResponse) as caught:
        await stream_events(fake, tmp_path, max_event_bytes=1024 * 1024)
    assert str(caught.value) == "Perplexity sent a stream event larger than 1024 KB; refused"
    assert caught.value.provider == "perplexity"


async def test_a_stream_over_the_whole_stream_cap_is_refused(tmp_path: Path) -> None:
    from websearch.errors import InvalidResponse

    with EndlessEvent(lines=3000, blank_every=10) as fake, pytest.raises(InvalidResponse) as caught:
        await stream_events(fake, tmp_path, max_stream_bytes=2 * 1024 * 1024)
    assert str(caught.value) == "Perplexity sent a stream larger than 2 MB; refused"


async def test_a_legitimate_600_kb_event_passes_the_default_caps(tmp_path: Path) -> None:
    with EndlessEvent(lines=600, blank_every=600) as fake:
        events = await stream_events(fake, tmp_path)
    assert len(events) == 1 and len(events[0].data) == 600 * 1000 + 599 + 600 * 6 - 6 * 600  # 600 data lines joined
