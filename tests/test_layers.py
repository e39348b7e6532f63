"""Layers: no import cycles (type-only and function-level imports counted), settings checked by
leaves below what reads them, and one declared table of settings."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from websearch._serve._config import ConnectionLimits, Limits, ServeConfig
from websearch._settings import DEFAULT_TIMEOUT, ENV_TWINS, SETTINGS, Settings
from websearch.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"


@pytest.fixture(scope="module")
def finder() -> ModuleType:
    """tools/import_cycles.py, the hand-run tool, loaded from its file."""
    spec = importlib.util.spec_from_file_location("import_cycles", ROOT / "tools" / "import_cycles.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["import_cycles"] = module
    spec.loader.exec_module(module)
    return module


def reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for child in graph[todo.pop()] - seen:
            seen.add(child)
            todo.append(child)
    return seen


def test_the_finder_counts_type_only_function_level_and_relative_imports(finder: ModuleType, tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.sub import c\n")
    (pkg / "sub" / "c.py").write_text("from .. import a\n")
    (pkg / "d.py").write_text("import pkg.a\n")  # into the cycle, not part of it
    assert finder.graph(tmp_path, "pkg")["pkg.sub.c"] == {"pkg.a"}
    assert finder.cycles(tmp_path, "pkg") == [frozenset({"pkg.a", "pkg.b", "pkg.sub.c"})]
    (pkg / "b.py").write_text("")
    assert finder.cycles(tmp_path, "pkg") == []


def test_websearch_has_no_import_cycle(finder: ModuleType) -> None:
    assert finder.cycles(SRC, "websearch") == []


def test_settings_import_nothing_that_reads_them(finder: ModuleType) -> None:
    graph = finder.graph(SRC, "websearch")
    below = reach(graph, "websearch._settings")
    assert {"websearch._checks", "websearch._registry"} <= below
    assert not [m for m in below if m.startswith(("websearch._pacing", "websearch._serve", "websearch._providers"))]
    assert "websearch._health" not in reach(graph, "websearch._pacing")
    for leaf in ("websearch._checks", "websearch._skip", "websearch._providers._perplexity_auth"):
        assert graph[leaf] <= {"websearch.errors"}, leaf
    assert graph["websearch._registry"] == set()


def test_the_environment_twins_are_the_tables_rows_of_the_spec() -> None:
    keys = [row.key for row in SETTINGS]
    assert len(keys) == len(set(keys))
    assert dict(ENV_TWINS) == {
        "providers.webSearch": "WEB_SEARCH_PROVIDER",
        "providers.list": "WEBSEARCH_PROVIDERS",
        "providers.webSearchGeminiModel": "GEMINI_SEARCH_MODEL",
        "searxng.endpoint": "SEARXNG_ENDPOINT",
        "searxng.basicUsername": "SEARXNG_BASIC_USERNAME",
        "searxng.basicPassword": "SEARXNG_BASIC_PASSWORD",
        "searxng.token": "SEARXNG_TOKEN",
        "state.url": "WEBSEARCH_REDIS_URL",
        "serve.tokens": "WEBSEARCH_SERVE_TOKENS",
    }
    settings = Settings({"searxng.endpoint": "http://file.example"}, {"SEARXNG_ENDPOINT": "http://env.example"})
    assert settings.get("searxng.endpoint") == "http://env.example"


def test_the_tables_defaults_are_what_the_readers_use() -> None:
    default = {row.key: row.default for row in SETTINGS}
    assert [row.key for row in SETTINGS if row.default is not None and not isinstance(row.default, row.type)] == []
    config = ServeConfig.load(Settings({}, {}), {})
    limits, connections = config.limits, config.connections
    assert (limits, connections) == (Limits(), ConnectionLimits()) and config == ServeConfig()
    assert default["serve.max_query_chars"] == limits.max_query_chars
    assert default["serve.max_body_kb"] * 1024 == limits.max_body_bytes
    assert default["serve.max_limit"] == limits.max_limit
    assert default["serve.max_fanout"] == limits.max_fanout
    assert default["serve.max_deadline"] == limits.max_deadline
    assert default["serve.grace_period"] == config.grace_period
    assert default["serve.request_timeout"] == connections.request_timeout
    assert default["serve.max_connections"] is connections.max_connections is None
    assert default["serve.log_queries"] is config.log_queries is False
    settings = Settings({}, {})
    assert settings.http_timeout == default["http.timeout"] == DEFAULT_TIMEOUT
    assert settings.stream_limits == (
        int(default["http.max_stream_mb"] * 1024 * 1024),
        int(default["http.max_event_kb"] * 1024),
    )
    assert settings.preferred_provider == default["providers.webSearch"]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("pacing.brave", "fast", 'setting pacing.brave: a pacing rate must read like "1/s", "30/min" or "100/h"; got'),
        ("serve.rate_limit", "lots", 'setting serve.rate_limit must read like "60/min", "5/s" or "1000/h"; got'),
        ("serve.tokens", ["short"], "token 1 of setting serve.tokens is too short"),
        ("serve.max_limit", 0, "setting serve.max_limit must be a whole number of at least 1; got 0"),
        ("serve.grace_period", -1, "setting serve.grace_period must be a positive number; got -1"),
        ("searxng.endpoint", "ftp://x", "setting searxng.endpoint must be an http:// or https:// URL with a host"),
    ],
)
def test_each_kind_of_setting_is_checked_when_read(key: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings({key: value}, {})
    assert str(caught.value).startswith(message)
