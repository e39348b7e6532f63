"""The client's view of os.environ: live, read-only, the same answers as os.environ itself."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from websearch import WebSearch
from websearch._core._environ import Environ


def test_it_answers_as_os_environ_does_and_sees_every_change(monkeypatch: pytest.MonkeyPatch) -> None:
    env = Environ()
    monkeypatch.delenv("WEBSEARCH_ENVIRON_TEST", raising=False)
    assert env.get("WEBSEARCH_ENVIRON_TEST") is None and "WEBSEARCH_ENVIRON_TEST" not in env
    assert env.get("WEBSEARCH_ENVIRON_TEST", "fallback") == "fallback"
    monkeypatch.setenv("WEBSEARCH_ENVIRON_TEST", "café ☕")  # asked before: the remembered name still reads anew
    assert env.get("WEBSEARCH_ENVIRON_TEST") == env["WEBSEARCH_ENVIRON_TEST"] == "café ☕"
    assert "WEBSEARCH_ENVIRON_TEST" in env
    assert dict(env) == dict(os.environ) and len(env) == len(os.environ)
    monkeypatch.delenv("WEBSEARCH_ENVIRON_TEST")
    assert env.get("WEBSEARCH_ENVIRON_TEST") is None
    with pytest.raises(KeyError):
        env["WEBSEARCH_ENVIRON_TEST"]
    with pytest.raises(TypeError):  # as os.environ.get(42) does
        env.get(42)  # type: ignore[call-overload]


def test_its_stamp_changes_exactly_when_one_of_the_variables_does(monkeypatch: pytest.MonkeyPatch) -> None:
    names = ("WEBSEARCH_STAMP_A", "WEBSEARCH_STAMP_B")
    for name in names:
        monkeypatch.delenv(name, raising=False)
    env = Environ()
    first = env.stamp(names)
    assert env.stamp(names) == first
    monkeypatch.setenv("WEBSEARCH_STAMP_B", "1")
    second = env.stamp(names)
    assert second != first and env.stamp(names) == second
    monkeypatch.setenv("WEBSEARCH_STAMP_B", "2")
    assert env.stamp(names) != second
    monkeypatch.delenv("WEBSEARCH_STAMP_B")
    assert env.stamp(names) == first


def test_its_repr_shows_no_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "brave-secret-value")
    assert "brave-secret-value" not in repr(Environ())


def test_without_os_environs_internals_it_asks_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "environ", {"ONLY_HERE": "1"})
    env = Environ()
    assert (env.get("ONLY_HERE"), env.get("ABSENT"), "ONLY_HERE" in env, dict(env)) == (
        "1",
        None,
        True,
        {"ONLY_HERE": "1"},
    )


def test_a_client_on_the_environment_sees_a_key_set_after_it_was_made(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_TOKEN", "_ENDPOINT")) or name.startswith("WEBSEARCH_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("WEBSEARCH_CONFIG_DIR", str(tmp_path))
    ws = WebSearch()
    assert isinstance(ws.env, Environ)
    assert not next(s for s in ws.provider_status() if s.id == "brave").available
    monkeypatch.setenv("BRAVE_API_KEY", "brave-key")
    assert next(s for s in ws.provider_status() if s.id == "brave").available
