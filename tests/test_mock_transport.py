"""`websearch.testing.MockTransport`: a client's requests answered in-process by a function."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

import websearch
from conftest import FakeClock
from websearch import Attempt, WebSearch
from websearch.errors import ProviderTimeoutError
from websearch.providers import HttpRequest, HttpResponse
from websearch.testing import MockTransport, Reply


def brave_answer(provider: str, request: HttpRequest) -> HttpResponse:
    assert provider == "brave"
    body = {"web": {"results": [{"title": "T", "url": "https://t.example/", "description": "d"}]}}
    return HttpResponse(200, {"content-type": "application/json"}, json.dumps(body).encode())


async def test_the_handler_answers_and_sees_every_request(config_dir: Path) -> None:
    transport = MockTransport(brave_answer)
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir)}
    async with WebSearch(
        engine=False, env=env, transport=transport, api_keys={"brave": "k" * 12}, clock=FakeClock()
    ) as ws:
        response = await ws.asearch("q", provider="brave", limit=3)
    assert response.ok and [s.url for s in response.sources] == ["https://t.example/"]
    ((provider, request),) = transport.calls
    assert (provider, request.method, dict(request.params)["count"]) == ("brave", "GET", "3")
    assert transport.closed is False  # the caller's transport is the caller's to close


async def brave_attempt(config_dir: Path, transport: MockTransport) -> Attempt:
    """The one attempt of a search of Brave's over `transport`."""
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir)}
    async with WebSearch(
        engine=False, env=env, transport=transport, api_keys={"brave": "k" * 12}, providers=["brave"]
    ) as ws:
        response = await ws.asearch("q")
    (attempt,) = response.attempts
    return attempt


async def test_an_async_handler_and_a_raised_failure(config_dir: Path) -> None:
    async def timeout(provider: str, request: HttpRequest) -> HttpResponse:
        raise ProviderTimeoutError(provider, "Brave did not answer within 1 s")

    transport = MockTransport(timeout)
    attempt = await brave_attempt(config_dir, transport)
    assert (attempt.error, attempt.error_kind) == ("Brave did not answer within 1 s", "timeout")
    await transport.aclose()
    assert transport.closed is True


async def test_streamed_providers_read_the_handlers_body_as_lines(config_dir: Path) -> None:
    events = [
        {
            "type": "response.output_item.done",
            "item": {
                "type": "message",
                "content": [
                    {
                        "type": "output_text",
                        "text": "Answer.",
                        "annotations": [{"type": "url_citation", "url": "https://a.example/", "title": "A"}],
                    }
                ],
            },
        },
        {"type": "response.completed", "response": {"id": "r1", "model": "gpt-5"}},
    ]
    stream = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()

    def handler(provider: str, request: HttpRequest) -> HttpResponse:
        return HttpResponse(200, {"content-type": "text/event-stream"}, stream)

    login = {"access_token": "tok-0123456789", "refresh_token": "r", "account_id": "acct", "expires_at": 4e9}
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir)}
    async with WebSearch(engine=False, env=env, transport=MockTransport(handler), providers=["codex"]) as ws:
        ws.store_credential("codex", json.dumps(login))
        response = await ws.asearch("q")
    assert (response.provider, response.answer, [s.url for s in response.sources]) == (
        "codex",
        "Answer.",
        ["https://a.example/"],
    )


def test_a_fakes_env_keeps_the_tests_state_to_itself(config_dir: Path) -> None:
    """The README's pattern, `WebSearch(env={**fake.env, ...}, providers=running_providers())`
    with the engine on: each run of a test meets a store of its own, so the second run still
    reaches its fake (it was once served the first run's answer from the machine's cache, and a
    scripted 429 cooled the provider down in the user's real store), and the store goes with the
    fake. (Without `providers`, a keyless engine before DuckDuckGo in the chain would be asked.)"""
    from websearch.testing import DdgResult, FakeDuckDuckGo, running_providers

    states = []
    for _ in range(2):  # the same test, run twice
        with FakeDuckDuckGo() as fake:
            fake.results = [DdgResult("T", "https://t.example/", "s")]
            env = {**fake.env, "WEBSEARCH_CONFIG_DIR": str(config_dir)}
            with WebSearch(env=env, engine=True, providers=running_providers()) as ws:
                response = ws.search("the same question")
            assert (response.cached, len(fake.requests)) == (False, 1)
            states.append(Path(fake.env["WEBSEARCH_CACHE_DIR"]))
            assert (states[-1] / "state.db").exists()
        assert not states[-1].exists()
    assert states[0] != states[1]
    with pytest.raises(RuntimeError, match="FakeDuckDuckGo is not started"):
        FakeDuckDuckGo().env  # noqa: B018 (the property is what is tested)


def test_a_client_on_a_mock_transport_keeps_its_state_in_memory(config_dir: Path) -> None:
    """A mock reaches no real provider: its client's cache and cooldowns stay in memory (they
    once went to the machine's SQLite store, and the next run was served this one's answer)."""
    from websearch._state import MemoryStore

    def answer(provider: str, request: HttpRequest) -> HttpResponse:
        body = {"results": [{"title": "T", "url": "https://t.example/", "content": "s"}]}
        return HttpResponse(200, {"content-type": "application/json"}, json.dumps(body).encode())

    for _ in range(2):  # the same test, run twice
        mock = MockTransport(answer)
        env = {"TAVILY_API_KEY": "tvly-test", "WEBSEARCH_CONFIG_DIR": str(config_dir)}
        with WebSearch(transport=mock, env=env, providers=["tavily"], engine=True) as ws:
            assert ws.search("the same question").cached is False
            assert isinstance(ws.engine.state().primary, MemoryStore)
        assert len(mock.calls) == 1


# -- the transport seam: what the client reads of a transport, and what one of yours gets ------


class Bare:
    """A caller's transport with only what `Sends` asks: `send`, `stream`, `aclose`. Its
    handler never answers (it ends only when cancelled)."""

    def __init__(self) -> None:
        self.calls: list[HttpRequest] = []

    async def send(self, provider: str, request: HttpRequest) -> HttpResponse:
        self.calls.append(request)
        await asyncio.Event().wait()
        raise AssertionError("never answered")

    def stream(self, provider: str, request: HttpRequest) -> Any:
        raise NotImplementedError

    async def aclose(self) -> None:
        pass


async def never(provider: str, request: HttpRequest) -> HttpResponse:
    await asyncio.Event().wait()
    raise AssertionError("never answered")


@pytest.mark.parametrize("kind", ["built-in", "mock", "bare"])
async def test_every_transport_keeps_the_search_deadline_as_the_built_in_one(config_dir: Path, kind: str) -> None:
    """A provider that never answers, a search with a deadline: over the built-in transport, a
    `MockTransport` and a bare transport of the caller's alike, the attempt ends at the deadline
    as reaching it, and the request the transport is handed is cut to what remained of it (a
    mock, and a bare transport, once got the request uncut: only the built-in one knew)."""
    from websearch.testing import FakeBrave

    with FakeBrave() as fake:
        fake.enqueue(Reply(hang=True))
        env = {**fake.env, "WEBSEARCH_CONFIG_DIR": str(config_dir), "BRAVE_API_KEY": "k" * 12}
        transport: Any = {"built-in": None, "mock": MockTransport(never), "bare": Bare()}[kind]
        async with WebSearch(engine=False, env=env, transport=transport, providers=["brave"], timeout=30) as ws:
            response = await ws.asearch("q", deadline=0.5)
        (attempt,) = response.attempts
        assert (attempt.error, attempt.error_kind) == ("Brave did not answer before the search's deadline", "timeout")
        if kind == "built-in":
            assert len(fake.requests) == 1
            return
    seen = [request for _, request in transport.calls] if kind == "mock" else transport.calls
    (request,) = seen
    assert request.timeout is not None and 0 < request.timeout <= 0.5


async def test_a_mock_transport_bounds_each_request_by_its_timeout(config_dir: Path) -> None:
    """As the built-in transport: a request longer than its timeout (the request's, else the
    transport's) fails as a timeout of the provider's, saying the time it had."""
    attempt = await brave_attempt(config_dir, MockTransport(never, timeout=0.05))
    assert (attempt.error, attempt.error_kind) == ("Brave did not answer within 0.05 s", "timeout")


async def test_a_providers_budget_is_the_clients_timeout_whatever_the_transport(config_dir: Path) -> None:
    """Exa's deep modes ask for a longer timeout, never shorter than the client's: a client on
    a transport of the caller's gets its own `timeout` counted (it was read off the transport,
    and a mock, having none, got the 90 s of the mode)."""
    seen: list[float | None] = []

    def answer(provider: str, request: HttpRequest) -> HttpResponse:
        seen.append(request.timeout)
        body = {"results": [{"title": "T", "url": "https://t.example/", "text": "t"}], "output": {"content": "A."}}
        return HttpResponse(200, {"content-type": "application/json"}, json.dumps(body).encode())

    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), "EXA_API_KEY": "exa-" + "k" * 12}
    async with WebSearch(engine=False, env=env, transport=MockTransport(answer), providers=["exa"], timeout=150) as ws:
        response = await ws.asearch("q", mode="deep", deadline=1000)
    assert response.provider == "exa"
    assert seen == [150]


def test_a_client_on_a_bare_transport_reads_only_what_it_has(config_dir: Path) -> None:
    """A transport with only `send`, `stream` and `aclose` gets the defaults of `BaseTransport`
    once, when the client is made (it reaches real providers: the store is the configured one);
    one with all of `SendsRequests`, a subclass or not, is used as it is."""
    from websearch._state import MemoryStore
    from websearch.providers import BaseTransport, SendsRequests

    class Complete:  # every member of SendsRequests, no subclass of BaseTransport
        timeout = 5.0
        bounds_each_request = False
        in_process = True

        async def ready(self, within: float | None) -> None:
            pass

        send, stream, aclose = Bare.send, Bare.stream, Bare.aclose

    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), "WEBSEARCH_CACHE_DIR": str(config_dir / "cache")}
    bare = WebSearch(env=env, transport=Bare(), engine=True)
    assert isinstance(bare._transport, BaseTransport) and isinstance(bare._transport, SendsRequests)
    assert (bare._transport.timeout, bare._transport.bounds_each_request, bare._transport.in_process) == (
        None,
        False,
        False,
    )
    assert not isinstance(bare.engine.state().primary, MemoryStore)
    bare.close()
    complete = Complete()
    with WebSearch(env=env, transport=complete, engine=True) as ws:
        assert ws._transport is complete
        assert isinstance(ws.engine.state().primary, MemoryStore)


def test_no_transport_is_probed_for_what_it_may_lack() -> None:
    """Everything the package reads of a transport is declared by `SendsRequests`: no
    `getattr`/`hasattr` on one anywhere (a probe let a caller's transport silently go without)."""
    src = Path(websearch.__file__).parent
    probes = [
        f"{path.relative_to(src)}:{n}"
        for path in sorted(src.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\b(getattr|hasattr)\([^,]*transport", line)
    ]
    assert probes == []
