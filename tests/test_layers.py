"""Layers: the package's folders are its layers and imports only point down them; no import
cycles (type-only and function-level imports counted); settings checked by leaves below what
reads them; one declared table of settings."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from websearch._core._settings import DEFAULT_TIMEOUT, ENV_TWINS, SETTINGS, Settings
from websearch._faces._serve._config import ConnectionLimits, Limits, ServeConfig
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


#: The layers, bottom first: a module may import its own layer and those before it, never one after.
LAYERS = ("_core", "_http", "_state", "_providers", "_engine", "_reading", "_client", "_faces")
#: The doors at the top of the package (they may import any layer; no layer imports them), and
#: `websearch.errors`, the public exception tree: a door, but a leaf every layer may import.
DOORS = ("websearch", "websearch.__main__", "websearch.providers", "websearch.state", "websearch.testing")
LEAF_DOOR = "websearch.errors"


def layer_of(module: str) -> int | None:
    """The rank of `module`'s layer, or None for a door (or the errors leaf)."""
    parts = module.split(".")
    if module == LEAF_DOOR:
        return -1
    if len(parts) > 1 and parts[1] in LAYERS:
        return LAYERS.index(parts[1])
    assert module in DOORS or module.startswith("websearch.testing."), f"{module} is in no layer"
    return None


def test_the_top_of_the_package_holds_the_doors_and_the_layers() -> None:
    top = sorted(p.name for p in (SRC / "websearch").iterdir() if p.name != "__pycache__")
    modules = [name for name in top if name.endswith(".py")]
    assert modules == ["__init__.py", "__main__.py", "errors.py", "providers.py", "state.py"]
    assert sorted(set(top) - set(modules) - {"py.typed"}) == sorted([*LAYERS, "testing"])


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import from a layer to a layer above it, or to a door."""
    upward = []
    for module, imported in sorted(graph.items()):
        rank = layer_of(module)
        if rank is None:  # a door: may open any layer
            continue
        for target in sorted(imported):
            target_rank = layer_of(target)
            if target_rank is None or target_rank > rank:
                upward.append(f"{module} -> {target}")
    return upward


def test_imports_only_point_down_the_layers(finder: ModuleType) -> None:
    graph = finder.graph(SRC, "websearch")
    assert graph[LEAF_DOOR] == set()
    assert upward_imports(graph) == []


def test_the_layer_check_sees_an_upward_type_only_import(finder: ModuleType, tmp_path: Path) -> None:
    pkg = SRC / "websearch"
    for path in pkg.rglob("*.py"):
        target = tmp_path / "websearch" / path.relative_to(pkg)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    types = tmp_path / "websearch" / "_core" / "_types.py"
    upward = "\nif TYPE_CHECKING:\n    from .._engine._engine import Engine\n"
    types.write_text(types.read_text(encoding="utf-8") + upward, encoding="utf-8")
    assert upward_imports(finder.graph(tmp_path, "websearch")) == [
        "websearch._core._types -> websearch._engine._engine"
    ]


def test_settings_import_nothing_that_reads_them(finder: ModuleType) -> None:
    graph = finder.graph(SRC, "websearch")
    below = reach(graph, "websearch._core._settings")
    assert {"websearch._core._checks", "websearch._core._registry"} <= below
    assert not [
        m
        for m in below
        if m.startswith(("websearch._engine._pacing", "websearch._faces._serve", "websearch._providers"))
    ]
    assert "websearch._engine._health" not in reach(graph, "websearch._engine._pacing")
    for leaf in ("websearch._core._checks", "websearch._core._skip", "websearch._providers._perplexity_auth"):
        assert graph[leaf] <= {"websearch.errors"}, leaf
    assert graph["websearch._core._registry"] == set()


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


def test_nothing_writes_a_deadline_or_a_choice_onto_a_context() -> None:
    # One Budget per search, passed down as an argument; each attempt gets a context of its own
    # (`ProviderContext.for_attempt`). Written onto the search's shared context, a hedged
    # attempt's `explicit` and a fan-out's soft deadline leaked into the other attempts.
    pattern = re.compile(r"\bctx\.(deadline|soft_deadline|explicit|budget)\s*=(?!=)")
    found = [
        f"{path.relative_to(SRC)}:{number}"
        for path in sorted((SRC / "websearch").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
