"""No object of the package shows a secret in its repr.

A client is built the way a user builds one, with a recognisable secret in every place a secret
can come from (`api_keys=`, the environment, agent.db's keys and OAuth logins, SearXNG's basic
auth and token, a Redis URL's password, `websearch serve`'s tokens from the environment and from
a token file), made to search (an answer, a refused key, a stored key), serve a request, and plan
a search for every provider; then every object of the package reachable from it, from the public
names of `websearch`, `websearch.errors` and `websearch.testing`, and from what the searches
returned, is walked (attributes, slots and containers, to a bounded depth) and its repr (and, for
an exception, its text) is checked for the secrets. A repr goes to logs, tracebacks and a
debugger's variables pane: it is output like any other. (The mappings a caller hands in, `env=`
and `api_keys=`, stay the caller's own dicts, and show what they hold as any dict does.)
"""

from __future__ import annotations

import contextlib
import types
from collections import deque
from collections.abc import Iterator
from pathlib import Path

import pytest

import websearch
import websearch.errors
import websearch.testing
from conftest import FakeClock, key_env, make_client, provider_context
from serve_helper import InProcess, http
from websearch import SearchFailedError, SearchParams
from websearch._core._settings import Settings
from websearch._engine._lineup import load_provider
from websearch._faces._serve import ServeConfig
from websearch._state import open_store
from websearch.providers import PROVIDERS
from websearch.state import MemoryStore
from websearch.testing import FakeBrave, FakeCodex, FakeExa, FakeSearXNG, FakeTavily, MockTransport, Reply

MARK = "REPRLEAK"  # in every secret below: no repr may hold it
ENV_KEY = f"sk-{MARK}-env-5d1c9e7a3b2f"
ARG_KEY = f"tvly-{MARK}-arg-8c2e4a6f0b1d"
STORED_KEY = f"exa-{MARK}-stored-3f7b9d1c5e"
ACCESS_TOKEN = f"ya29.{MARK}-access-6e0a2c4f"
REFRESH_TOKEN = f"1//{MARK}-refresh-9b1d3f5a"
SEARX_PASSWORD = f"pw-{MARK}-basic-7a9c1e3b"
SEARX_TOKEN = f"searx-{MARK}-token-2d4f6a8c"
REDIS_PASSWORD = f"redis-{MARK}-pw-4c6e8a0b"
SERVE_TOKEN = f"tok-{MARK}-serve-1a3c5e7b9d"
FILE_TOKEN = f"tok-{MARK}-file-0b2d4f6a8c"

#: Objects whose insides are not the package's and hold nothing of it worth the walk.
_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.CodeType, types.FrameType)
_MAX_DEPTH = 8
_MAX_OBJECTS = 200_000


#: What the walk must reach (else it checked less than it claims): one of each kind of object
#: that holds a secret or sits next to one.
REACHED = {
    "WebSearch", "Engine", "ProviderContext", "Lineup", "Transport", "CredentialStore", "Credential", "Settings",
    "MemoryStore", "RedisStore", "ResilientStore", "Health", "Pacer", "SearchResponse", "Attempt", "HttpRequest",
    "Plan", "SearchFailedError", "ServeConfig", "Gate", "HostCheck", "RecordedRequest", "MockTransport", "FakeBrave",
    "Brave", "Codex", "Gemini", "Perplexity", "ZAI", "Session",
}  # fmt: skip


def _ours(obj: object) -> bool:
    """An instance of a class of this package (whose repr is ours to get right)."""
    return type(obj).__module__.split(".")[0] == "websearch"


def _children(obj: object) -> Iterator[object]:
    """What an object holds: a container's items, an instance's attributes and slots."""
    if isinstance(obj, dict):
        yield from obj.keys()
        yield from obj.values()
        return
    if isinstance(obj, (list, tuple, set, frozenset)):
        yield from obj
        return
    if isinstance(obj, types.MethodType):
        yield obj.__self__
        return
    if isinstance(obj, (types.MappingProxyType,)):
        yield from obj.values()
        return
    attributes = getattr(obj, "__dict__", None)
    if isinstance(attributes, dict):
        yield from attributes.values()
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__dict__", {}).get("__slots__", ()):
            if name not in ("__dict__", "__weakref__"):
                with contextlib.suppress(AttributeError):  # a slot never set
                    yield getattr(obj, name)
    if isinstance(obj, BaseException):
        yield from obj.args
        yield obj.__cause__
        yield obj.__context__


def leaks(*roots: object) -> tuple[list[str], set[str]]:
    """Every repr (or exception text) of the package's objects reachable from `roots` that holds
    a secret, and the names of the package's classes whose objects were checked."""
    found: list[str] = []
    seen: set[int] = set()
    checked: set[str] = set()
    queue = deque((root, 0, f"root {i}") for i, root in enumerate(roots))  # breadth first: each at its least depth
    while queue and len(seen) < _MAX_OBJECTS:
        obj, depth, path = queue.popleft()
        if id(obj) in seen or obj is None or isinstance(obj, (str, bytes, int, float, complex)):
            continue
        seen.add(id(obj))
        if isinstance(obj, _OPAQUE) and not _ours(obj):
            continue
        if _ours(obj):
            checked.add(type(obj).__qualname__)
            texts = [repr(obj)] + ([str(obj)] if isinstance(obj, BaseException) else [])
            found += [f"{path}: {type(obj).__qualname__}: {text}" for text in texts if MARK in text]
        if depth < _MAX_DEPTH:
            kind = type(obj).__qualname__
            queue.extend((child, depth + 1, f"{path} > {kind}") for child in _children(obj))
    return found, checked


def _public(module: types.ModuleType) -> list[object]:
    return [getattr(module, name) for name in module.__all__]


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "tokens"
    path.write_text(f"# the team's tokens\n{FILE_TOKEN}\n")
    path.chmod(0o600)
    return path


def test_no_repr_of_the_package_shows_a_secret(config_dir: Path, token_file: Path, tmp_path: Path) -> None:
    (config_dir / "settings.toml").write_text(f'[serve]\ntokens = ["{SERVE_TOKEN}"]\n')
    roots: list[object] = [*_public(websearch), *_public(websearch.errors), *_public(websearch.testing)]
    with (
        FakeBrave() as brave,
        FakeTavily(valid_keys={"tvly-the-only-key-it-takes"}) as tavily,
        FakeExa() as exa,
        FakeSearXNG() as searx,
        FakeCodex(access_tokens={ACCESS_TOKEN}, refresh_tokens={REFRESH_TOKEN}, account_id="acct-1") as codex,
    ):
        env = {
            **brave.env,
            **tavily.env,
            **exa.env,
            **searx.env,
            **codex.env,
            "WEBSEARCH_CONFIG_DIR": str(config_dir),
            "BRAVE_API_KEY": ENV_KEY,
            "SEARXNG_ENDPOINT": "https://searx.example.org",
            "SEARXNG_BASIC_USERNAME": "team",
            "SEARXNG_BASIC_PASSWORD": SEARX_PASSWORD,
            "SEARXNG_TOKEN": SEARX_TOKEN,
            "WEBSEARCH_SERVE_TOKENS": SERVE_TOKEN,
        }
        ws = make_client(env=env, api_keys={"tavily": ARG_KEY}, engine=True, store=MemoryStore(FakeClock()))
        ws.store_credential("exa", STORED_KEY)
        login = {
            "access_token": ACCESS_TOKEN,
            "refresh_token": REFRESH_TOKEN,
            "account_id": "acct-1",
            "expires_at": 4e9,
        }
        ws.credentials.set(PROVIDERS["codex"].credential_ids[0], "oauth", login)
        responses = [ws.search("q", provider=p) for p in ("brave", "tavily", "exa", "searxng", "codex")]
        answered = [r.provider for r in responses if r.ok]
        assert answered == ["brave", "exa", "searxng", "codex"], [r.error for r in responses]
        assert responses[1].attempts[0].error_kind == "auth"  # the refused key went through an error path
        with pytest.raises(SearchFailedError) as failed:
            responses[1].raise_for_error()
        config = ServeConfig.load(ws.settings, env, token_file=str(token_file))
        with InProcess(ws, config) as server, http(server.url, token=FILE_TOKEN) as caller:
            assert caller.post("/v1/search", json={"query": "q", "providers": ["brave"]}).status_code == 200
            roots += [server.app, server.server.config]
        requests = [*brave.requests, *tavily.requests, *exa.requests, *searx.requests, *codex.requests]
        assert any(ENV_KEY in str(r.headers) for r in requests)  # the fakes saw the keys they must not show
        plans = []
        for provider, info in PROVIDERS.items():  # every provider's plan, with each secret it takes
            (plan_dir := tmp_path / provider).mkdir(mode=0o700)
            secret = f"{MARK}-{provider}-0f1e2d3c4b5a"
            for penv in [key_env(provider, plan_dir, secret), *({name: secret} for name in info.env_keys)]:
                ctx = provider_context(plan_dir, {**env, **penv})
                plans.append(load_provider(provider).plan(SearchParams("q"), ctx))
        roots += [
            ws,
            ws.engine,
            ws._context(with_transport=False),
            ws.stored_credentials(),
            ws.provider_status(),
            *responses,
        ]
        roots += [failed.value, config, requests, plans, [load_provider(p) for p in PROVIDERS]]
        roots += [brave, tavily, exa, searx, codex]
    redis_env = {"WEBSEARCH_REDIS_URL": f"redis://:{REDIS_PASSWORD}@127.0.0.1:1/0"}
    roots += [open_store(Settings({}, redis_env), redis_env, FakeClock())]
    roots += [MockTransport(lambda provider, request: Reply(200))]
    found, checked = leaks(*roots)
    assert checked >= REACHED, f"the walk lost its way: it never reached {REACHED - checked}"
    assert found == []
