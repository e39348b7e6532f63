"""Upstream redirection, proxies and redaction at the transport boundary."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from conftest import make_client
from websearch._http._transport import Transport, redact
from websearch.errors import NetworkUnreachable, ProviderConnectionError
from websearch.providers import HttpRequest, ProviderContext
from websearch.testing import FakeDuckDuckGo, FakeServer, RecordedRequest, Reply


def ctx_for(env: dict[str, str], tmp_path: Path) -> ProviderContext:
    return make_client(env={"WEBSEARCH_CONFIG_DIR": str(tmp_path), **env})._context(with_transport=False)


def test_base_url_replaces_scheme_host_port_and_keeps_the_path(tmp_path: Path) -> None:
    ctx = ctx_for({"WEBSEARCH_BRAVE_BASE_URL": "http://127.0.0.1:8123"}, tmp_path)
    assert ctx.endpoint("brave", "https://api.search.brave.com/res/v1/web/search?x=1") == (
        "http://127.0.0.1:8123/res/v1/web/search?x=1"
    )
    assert ctx.endpoint("tavily", "https://api.tavily.com/search") == "https://api.tavily.com/search"
    gateway = ctx_for({"WEBSEARCH_EXA_BASE_URL": "https://gw.corp.example/exa/"}, tmp_path)
    assert gateway.endpoint("exa", "https://mcp.exa.ai/mcp") == "https://gw.corp.example/exa/mcp"


class FakeProxy(FakeServer):
    """A forward proxy that answers every absolute-form request itself."""

    provider_id = "proxy"

    def default_reply(self, request: RecordedRequest) -> Reply:
        return Reply(200, "<html></html>", content_type="text/html")


async def test_http_proxy_is_honoured_and_no_proxy_bypasses_it(tmp_path: Path) -> None:
    with FakeProxy() as proxy, FakeDuckDuckGo() as ddg:
        env = {
            "WEBSEARCH_CONFIG_DIR": str(tmp_path),
            "HTTP_PROXY": proxy.base_url,
            "WEBSEARCH_DUCKDUCKGO_BASE_URL": "http://ddg.invalid",
        }
        async with make_client(env=env, providers=["duckduckgo"]) as ws:
            await ws.asearch("via proxy")
        assert proxy.requests, "the request did not go through the proxy"
        assert proxy.last.headers["host"] == "ddg.invalid"
        assert ddg.requests == []
        async with make_client(env={**env, **ddg.env, "no_proxy": "localhost,127.0.0.1"}) as ws:
            response = await ws.asearch("direct")
        assert response.ok
        assert len(ddg.requests) == 1
        assert len(proxy.requests) == 1


@pytest.mark.parametrize(
    ("proxy", "shown"),
    [
        ("http://user:secret@127.0.0.1:1", r"127\.0\.0\.1:1"),
        ("http://[::1%25nosuchif]:3128", r"::1%(25)?nosuchif:3128"),
    ],
)
async def test_a_proxy_that_cannot_be_reached_is_named_and_is_this_machines_network(
    tmp_path: Path, proxy: str, shown: str
) -> None:
    """Refused, or its name not resolving: the message names the proxy (it named only a host and
    port, which read as the provider's), and no provider's circuit counts it."""
    env = {
        "WEBSEARCH_CONFIG_DIR": str(tmp_path),
        "HTTP_PROXY": proxy,
        "WEBSEARCH_DUCKDUCKGO_BASE_URL": "http://ddg.invalid",
    }
    async with make_client(env=env, providers=["duckduckgo"]) as ws:
        response = await ws.asearch("q")
    (attempt,) = response.attempts
    assert attempt.error_kind == "connection"
    assert attempt.error is not None
    assert re.match(rf"DuckDuckGo request failed: could not connect to the proxy {shown} \(", attempt.error)
    assert "secret" not in attempt.error
    transport = Transport(timeout=2, env={"HTTP_PROXY": proxy}, labels={"duckduckgo": "DuckDuckGo"})
    try:
        with pytest.raises(NetworkUnreachable):
            await transport.send("duckduckgo", HttpRequest("GET", "http://ddg.invalid/html/"))
    finally:
        await transport.aclose()


async def test_proxy_credentials_become_proxy_authorization(tmp_path: Path) -> None:
    with FakeProxy() as proxy:
        url = proxy.base_url.replace("http://", "http://user:p%40ss@")
        env = {
            "WEBSEARCH_CONFIG_DIR": str(tmp_path),
            "http_proxy": url,
            "WEBSEARCH_DUCKDUCKGO_BASE_URL": "http://ddg.invalid",
        }
        async with make_client(env=env, providers=["duckduckgo"]) as ws:
            await ws.asearch("q")
        assert proxy.last.headers["proxy-authorization"] == "Basic dXNlcjpwQHNz"


async def test_secrets_are_redacted_from_wire_errors() -> None:
    transport = Transport(timeout=2, labels={"brave": "Brave"})
    request = HttpRequest("GET", "http://127.0.0.1:1/search?key=sk-SECRET-999", secrets=("sk-SECRET-999",))
    try:
        with pytest.raises(ProviderConnectionError) as caught:
            await transport.send("brave", request)
    finally:
        await transport.aclose()
    assert "sk-SECRET-999" not in str(caught.value) + repr(caught.value)
    assert "Brave request failed: could not connect to 127.0.0.1:1" in str(caught.value)
    assert redact("token abcd and abcdef", ("abcdef", "ab")) == "token abcd and [redacted]"


async def test_a_name_that_does_not_resolve_is_network_unreachable_and_a_refusal_is_not() -> None:
    """This machine's network (no name lookup, no route) is a class of its own: it opens no
    circuit. `::1` with a zone no interface has fails in getaddrinfo, without a lookup leaving."""
    transport = Transport(timeout=2, labels={"brave": "Brave"})
    try:
        with pytest.raises(NetworkUnreachable) as unresolved:
            await transport.send("brave", HttpRequest("GET", "http://[::1%25nosuchif]:9/search"))
        with pytest.raises(ProviderConnectionError) as refused:
            await transport.send("brave", HttpRequest("GET", "http://127.0.0.1:1/search"))
    finally:
        await transport.aclose()
    assert unresolved.value.kind == "connection"
    assert re.match(r"Brave request failed: could not connect to ::1%(25)?nosuchif:9 \(", str(unresolved.value))
    assert type(refused.value) is ProviderConnectionError


async def test_one_pooled_session_is_reused(tmp_path: Path) -> None:
    with FakeDuckDuckGo() as ddg:
        async with make_client(env={"WEBSEARCH_CONFIG_DIR": str(tmp_path), **ddg.env}) as ws:
            for _ in range(3):
                await ws.asearch("q")
            transport = ws._transport
            assert isinstance(transport, Transport)
            session = transport._session
            assert session is not None
            connector = session.connector
            assert connector is not None
            assert sum(len(v) for v in connector._conns.values()) == 1  # one keep-alive connection, reused
        assert ws._transport._session is None  # type: ignore[union-attr]


async def test_a_client_used_from_two_loops_keeps_a_pooled_session_on_each_and_closes_both(tmp_path: Path) -> None:
    # `search` runs on the client's private loop, `asearch` on the caller's: taking turns, each
    # loop keeps its own session (before, every turn made a new one and left the last unclosed).
    loop = asyncio.get_running_loop()
    with FakeDuckDuckGo() as ddg:
        ws = make_client(env={"WEBSEARCH_CONFIG_DIR": str(tmp_path), **ddg.env})
        turns = []
        for i in range(3):
            await ws.asearch(f"async {i}")
            transport = ws._transport
            assert isinstance(transport, Transport)
            mine = transport._session
            await loop.run_in_executor(None, ws.search, f"sync {i}")
            turns.append((mine, transport._session))
        await ws.aclose()  # the private loop's session too
        await loop.run_in_executor(None, ws.close)
    assert len({id(mine) for mine, _ in turns}) == 1 and len({id(private) for _, private in turns}) == 1
    mine, private = turns[0]
    assert mine is not None and private is not None and mine is not private
    assert mine.closed and private.closed


def test_a_session_left_on_a_closed_loop_is_closed_from_the_next(tmp_path: Path) -> None:
    with FakeDuckDuckGo() as ddg:
        ws = make_client(env={"WEBSEARCH_CONFIG_DIR": str(tmp_path), **ddg.env})
        asyncio.run(ws.asearch("first"))
        transport = ws._transport
        assert isinstance(transport, Transport)
        first = transport._session
        asyncio.run(ws.asearch("second"))  # its loop's session replaces it, and closes the first
        second = transport._session
        asyncio.run(ws.aclose())
    assert first is not None and second is not None and first is not second
    assert first.closed and second.closed and transport._session is None


class RedirectingFake(FakeServer):
    """Answers the first request with a redirect to `target` (another origin, or the same)."""

    provider_id = "brave"

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.path == "/res/v1/web/search":
            return Reply(302, b"", headers={"Location": self.target})
        return Reply(200, {"web": {"results": [{"title": "T", "url": "https://t.example"}]}})


async def test_a_redirect_to_another_origin_loses_the_key(tmp_path: Path) -> None:
    with FakeProxy() as elsewhere:
        with RedirectingFake(f"{elsewhere.base_url}/stolen") as brave:
            env = {"WEBSEARCH_CONFIG_DIR": str(tmp_path), "BRAVE_API_KEY": "brave-secret-xyz-123", **brave.env}
            async with make_client(env=env) as ws:
                await ws.asearch("q", provider="brave")
        assert elsewhere.requests, "the redirect was not followed"
        assert all("brave-secret-xyz-123" not in v for v in elsewhere.last.headers.values())
        assert "x-subscription-token" not in elsewhere.last.headers


async def test_a_redirect_on_the_same_origin_keeps_the_key(tmp_path: Path) -> None:
    with RedirectingFake("/moved") as brave:
        env = {"WEBSEARCH_CONFIG_DIR": str(tmp_path), "BRAVE_API_KEY": "brave-secret-xyz-123", **brave.env}
        async with make_client(env=env) as ws:
            response = await ws.asearch("q", provider="brave")
        assert response.ok, response.error
        assert brave.last.path == "/moved"
        assert brave.last.headers["x-subscription-token"] == "brave-secret-xyz-123"


def test_a_client_works_across_event_loops(tmp_path: Path) -> None:
    import asyncio

    with FakeDuckDuckGo() as ddg:
        ws = make_client(env={"WEBSEARCH_CONFIG_DIR": str(tmp_path), **ddg.env})
        first = asyncio.run(ws.asearch("one"))
        second = asyncio.run(ws.asearch("two"))
        third = ws.search("three")
        ws.close()
    assert [r.ok for r in (first, second, third)] == [True, True, True]


async def test_compressed_bodies_count_toward_the_cap(tmp_path: Path) -> None:
    import gzip

    with FakeDuckDuckGo() as ddg:
        huge = gzip.compress(b"<html>" + b"a" * (10 * 1024 * 1024))
        ddg.enqueue(Reply(200, huge, headers={"Content-Encoding": "gzip"}, content_type="text/html"))
        async with make_client(env={"WEBSEARCH_CONFIG_DIR": str(tmp_path), **ddg.env}) as ws:
            response = await ws.asearch("q")
    assert len(huge) < 100_000
    assert response.error == "DuckDuckGo sent a response larger than 8 MB; refused"


class SlowRedirects(FakeServer):
    """Every hop a redirect to the next path, each after `delay` seconds."""

    provider_id = "brave"

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    def default_reply(self, request: RecordedRequest) -> Reply:
        return Reply(302, b"", headers={"Location": f"/hop{len(self.requests)}"}, delay=self.delay)


async def test_the_hops_of_a_redirect_chain_share_the_requests_timeout(tmp_path: Path) -> None:
    import time

    from websearch.errors import ProviderTimeoutError

    with SlowRedirects(delay=0.2) as fake:
        transport = Transport(timeout=0.5, labels={"brave": "Brave"})
        started = time.monotonic()
        with pytest.raises(ProviderTimeoutError, match=r"did not answer within 0\.5 s"):
            await transport.send("brave", HttpRequest("GET", f"{fake.base_url}/res/v1/web/search"))
        assert time.monotonic() - started < 0.7  # not 0.5 s per hop
        assert 2 <= len(fake.requests) <= 3
        await transport.aclose()


async def test_a_timeout_over_five_seconds_ends_on_time_not_at_the_next_whole_second() -> None:
    # aiohttp rounds a timer of more than 5 s up to the next whole second unless told not to;
    # a request cut to a search's deadline must end at the deadline, not up to a second later.
    import asyncio
    import time

    from websearch.errors import ProviderTimeoutError

    with FakeServer() as fake:
        fake.enqueue(Reply(hang=True))
        transport = Transport(labels={"brave": "Brave"})
        loop = asyncio.get_running_loop()
        await asyncio.sleep(1.02 - loop.time() % 1)  # just past a whole second: rounded up, 5.05 s would be 5.9
        started = time.monotonic()
        with pytest.raises(ProviderTimeoutError, match=r"did not answer within 5\.05 s"):
            await transport.send("brave", HttpRequest("GET", f"{fake.base_url}/res/v1/web/search", timeout=5.05))
        assert time.monotonic() - started < 5.35
        await transport.aclose()
