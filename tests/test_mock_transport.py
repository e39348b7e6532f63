"""`websearch.testing.MockTransport`: a client's requests answered in-process by a function."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FakeClock
from websearch import WebSearch
from websearch.errors import ProviderTimeoutError
from websearch.providers import HttpRequest, HttpResponse
from websearch.testing import MockTransport


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


async def test_an_async_handler_and_a_raised_failure(config_dir: Path) -> None:
    async def timeout(provider: str, request: HttpRequest) -> HttpResponse:
        raise ProviderTimeoutError(provider, "Brave did not answer within 1 s")

    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir)}
    transport = MockTransport(timeout)
    async with WebSearch(
        engine=False, env=env, transport=transport, api_keys={"brave": "k" * 12}, providers=["brave"]
    ) as ws:
        response = await ws.asearch("q")
    (attempt,) = response.attempts
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
