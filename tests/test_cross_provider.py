"""Properties that hold across providers: keys never leak, the chain falls through real failures,
and the summary layout of a keyed provider through the CLI."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import FakeClock, key_env, make_client, run_cli
from websearch import render
from websearch._core._credentials import CredentialStore
from websearch.providers import PROVIDERS
from websearch.testing import FAKES, FakeBrave, FakeDuckDuckGo, Reply
from websearch.testing.anthropic import anthropic_message, anthropic_turn
from websearch.testing.codex import codex_events
from websearch.testing.codex import stream_reply as codex_stream
from websearch.testing.gemini import stream_reply as gemini_stream

LEAK = "sk-LEAKCHECK-7f3a9c1e5b2d4f6a"
#: Every provider that needs a key or login (the keyless ones have no secret to leak).
KEYED = [p for p, info in PROVIDERS.items() if not info.keyless and not info.settings_keys]


def leak_env(provider: str, config_dir: Path) -> dict[str, str]:
    """Configure `provider` with the recognisable key."""
    return key_env(provider, config_dir, LEAK)


FAILURES = {
    "401 echoing the key": Reply(401, {"error": {"message": f"Invalid API key: {LEAK}", "type": "auth"}}),
    "500 echoing the key in text": Reply(500, f"internal error for key {LEAK}", content_type="text/plain"),
    "200 that is not JSON": Reply(200, f"<html>{LEAK}</html>", content_type="text/html"),
    "truncated body": Reply(200, json.dumps({"key": LEAK, "pad": "x" * 5000}).encode(), truncate=True),
    "hung": Reply(hang=True),
}


@pytest.mark.parametrize("failure", list(FAILURES))
@pytest.mark.parametrize("provider", KEYED)
async def test_a_key_never_appears_in_any_output(
    provider: str, failure: str, config_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with FAKES[provider]() as fake:
        fake.enqueue(*[FAILURES[failure]] * 12)  # enough for providers that retry or try several shapes
        env = {**leak_env(provider, config_dir), **fake.env}
        async with make_client(env=env, clock=FakeClock(), timeout=0.5) as ws:
            response = await ws.asearch("leak check", provider=provider)
    assert response.error is not None, f"{provider} did not fail on {failure}"
    captured = "\n".join(
        [response.error, repr(response), render(response, "json"), render(response, "blocks"), caplog.text]
        + [repr(a) for a in response.attempts]
    )
    assert LEAK not in captured
    assert LEAK[:-4] not in captured  # not even most of it


def _tool_error(code: str, with_results: bool) -> dict[str, object]:
    """An Anthropic reply whose web_search tool failed with `code`, after results or alone."""
    body = anthropic_message("leak check", n=2 if with_results else 0)
    error = {"type": "web_search_tool_result_error", "error_code": code}
    body["content"].insert(3, {"type": "web_search_tool_result", "tool_use_id": "s2", "content": error})
    return body


#: A stored Gemini CLI login whose tokens are the key, expired so that it is refreshed first.
GEMINI_LOGIN = {"access_token": LEAK, "refresh_token": LEAK + "-r", "expires_at": 1.0, "project_id": "leak-project"}
#: Upstream words that reach an error or a notice, each echoing the key: (provider, a stored
#: login to use instead of the key, the replies, whether the search fails).
ECHOES = {
    "gemini refresh error body": (
        "gemini",
        GEMINI_LOGIN,
        [Reply(400, {"error": "invalid_grant", "error_description": f"token {LEAK}-r for {LEAK} revoked"})],
        True,
    ),
    "gemini blockReason": ("gemini", None, [gemini_stream([{"promptFeedback": {"blockReason": f"X {LEAK}"}}])], True),
    "codex error event": (
        "codex",
        None,
        [codex_stream([*codex_events("a")[:8], {"type": "error", "code": f"c-{LEAK}", "message": f"bad {LEAK}"}])],
        True,
    ),
    "codex response.failed event": (
        "codex",
        None,
        [
            codex_stream(
                [
                    *codex_events("a")[:8],
                    {"type": "response.failed", "response": {"error": {"code": "server_error", "message": LEAK}}},
                ]
            )
        ],
        True,
    ),
    "anthropic tool error_code": ("anthropic", None, [Reply(200, _tool_error(f"bad {LEAK}", False))], True),
    "anthropic tool error_code beside results": (
        "anthropic",
        None,
        [Reply(200, _tool_error(f"bad {LEAK}", True))],
        False,
    ),
    "anthropic failed continuation": (
        "anthropic",
        None,
        [
            Reply(200, anthropic_turn("leak check", 1)[0]),
            Reply(500, {"type": "error", "error": {"type": "api_error", "message": f"key {LEAK}"}}),
        ],
        False,
    ),
}


@pytest.mark.parametrize("case", list(ECHOES))
async def test_upstream_words_echoing_a_key_never_reach_any_output(
    case: str, config_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    provider, login, replies, fails = ECHOES[case]
    if login is None:
        env = leak_env(provider, config_dir)
    else:
        env = {"WEBSEARCH_CONFIG_DIR": str(config_dir)}
        CredentialStore(config_dir / "agent.db").set(provider, "oauth", login)
    with FAKES[provider]() as fake:
        fake.enqueue(*replies)
        async with make_client(env={**env, **fake.env}, clock=FakeClock(), timeout=5) as ws:
            response = await ws.asearch("leak check", provider=provider)
        assert len(fake.requests) == len(replies), f"{case}: not every scripted reply was asked for"
    assert (response.error is not None) is fails, f"{case}: {response.error}"
    assert response.provider == provider
    captured = "\n".join(
        [response.error or "", repr(response), render(response, "json"), render(response, "blocks"), caplog.text]
        + [repr(a) for a in response.attempts]
        + [n.message for n in response.notices]
    )
    assert "[redacted]" in captured, f"{case}: the echo did not reach the output, so nothing was checked"
    assert LEAK not in captured
    assert LEAK[:-4] not in captured  # not even most of it


@pytest.mark.parametrize("provider", ["brave", "tavily", "anthropic", "perplexity", "codex"])
def test_a_key_never_appears_in_cli_output(provider: str, config_dir: Path) -> None:
    with FAKES[provider]() as fake:
        fake.enqueue(*[FAILURES["401 echoing the key"]] * 12)
        env = {**leak_env(provider, config_dir), **fake.env}
        for fmt in ("summary", "json"):
            proc = run_cli(["search", "q", "--provider", provider, "--format", fmt], env)
            assert proc.returncode == 1
            assert LEAK not in proc.stdout + proc.stderr
        listed = run_cli(["auth", "list"], env)
        assert LEAK not in listed.stdout + listed.stderr


def test_chain_falls_through_a_failing_keyed_provider(config_dir: Path) -> None:
    with FakeBrave() as brave, FakeDuckDuckGo() as ddg:
        brave.enqueue(Reply(401, {"type": "ErrorResponse", "error": {"code": "UNAUTHORIZED", "detail": "bad"}}))
        env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), "BRAVE_API_KEY": "brave-key-123456", **brave.env, **ddg.env}
        proc = run_cli(["search", "q", "--format", "json"], env)
    assert proc.returncode == 0, proc.stderr
    response = json.loads(proc.stdout)["response"]
    assert response["provider"] == "duckduckgo"
    assert [(a["provider"], a["status"], a["error"]) for a in response["attempts"]] == [
        ("brave", 401, "Brave authorization failed (401 UNAUTHORIZED). Check API key or base URL. Brave said: bad"),
        ("duckduckgo", None, None),
    ]
    assert len(brave.requests) == len(ddg.requests) == 1


def test_brave_with_a_stored_key_renders_the_summary_layout(config_dir: Path) -> None:
    three_days_ago = (datetime.now(UTC) - timedelta(days=3)).strftime("%B %-d, %Y")
    long_text = "Tokio is an asynchronous runtime for Rust. " * 10
    body = {
        "type": "search",
        "web": {
            "type": "search",
            "results": [
                {
                    "title": "Tokio docs",
                    "url": "https://tokio.rs/tokio/tutorial",
                    "description": long_text.strip(),
                    "age": three_days_ago,
                },
                {
                    "title": "async-std",
                    "url": "https://async.rs/",
                    "description": "Async version of std.",
                    "extra_snippets": ["Stable since 2019."],
                },
            ],
        },
    }
    run_cli(["auth", "set", "brave"], {"WEBSEARCH_CONFIG_DIR": str(config_dir)}, stdin="brave-stored-key-0001\n")
    with FakeBrave(valid_keys={"brave-stored-key-0001"}) as brave:
        brave.enqueue(Reply(200, body, headers={"X-Request-Id": "req-1"}))
        proc = run_cli(
            ["search", "tokio", "--provider", "brave"], {"WEBSEARCH_CONFIG_DIR": str(config_dir), **brave.env}
        )
    assert proc.returncode == 0, proc.stderr
    assert brave.last.headers["x-subscription-token"] == "brave-stored-key-0001"
    snippet = long_text.strip()[:239] + "…"
    assert proc.stdout == (
        "[1] Tokio docs (3d ago)\n"
        "    https://tokio.rs/tokio/tutorial\n"
        f"    {snippet}\n"
        "[2] async-std\n"
        "    https://async.rs/\n"
        "    Async version of std.\n"
        "    Stable since 2019.\n"
    )


@pytest.mark.parametrize(
    "given",
    [
        {"end_published_date": "garbage"},  # dropped: not a date
        {"start_published_date": "2026-01-01", "end_published_date": "2025-01-01"},  # the end, before the start
        {"recency_days": 0},  # dropped: no window
        {"mode": "neural"},  # searched as auto, the default
    ],
)
async def test_a_parameter_dropped_or_defaulted_is_not_also_said_not_to_apply(
    env: dict[str, str], ddg: FakeDuckDuckGo, given: dict[str, object]
) -> None:
    # Each got two notices that contradicted each other: "dropped: it is not an ISO date", then
    # "not applied: DuckDuckGo does not support it".
    async with make_client(env=env) as ws:
        response = await ws.asearch("q", provider="duckduckgo", **given)
    said = {(n.param, n.kind) for n in response.notices}
    assert len(said) == len(response.notices)  # one notice per parameter and kind
    for name in given:
        kinds = {kind for param, kind in said if param == name}
        assert "not_applied" not in kinds or len(kinds) == 1, response.notices
