"""Property tests (hypothesis): any body in, a result or one of websearch's own errors out.

- Every registry provider (`websearch.providers.PROVIDERS`: a new one is covered as it is registered; one
  that is not an HttpProvider needs an adapter in `ADAPTERS`, or its tests fail) gets, in its parser
  (`parse`, or its stream parser) and in its whole `search` (over a MockTransport that answers every
  request with the drawn response): arbitrary bytes, arbitrary JSON (a document, or SSE events),
  and mutations of the realistic bodies its fake and its error builders give (keys dropped, types
  swapped, lone surrogates, huge strings, control characters, events reordered, bytes cut), with
  status 200 or an error status and junk headers. It must return a well-typed ProviderResult or
  raise a SearchProviderError (its message printable, without the request's secrets, its
  retry_after finite); anything else (AttributeError, TypeError, KeyError, UnicodeError,
  RecursionError, a ValueError that is not ours) is a bug.
- The SSE decoder: random streams with LF, CR and CR LF line ends (alone and mixed), a leading BOM,
  unfinished events, cut into random chunks, give the events a reference WHATWG decoder gives.
- The DuckDuckGo parser: damaged result pages never make it raise, and every URL it returns is http(s).
- What the properties found, pinned; JSON nested past the recursion limits; lone surrogates.

Examples are few per test, so the file takes about 12 s; WEBSEARCH_PROPERTY_SCALE=20 runs twenty
times as many. No example database is written.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import itertools
import json
import math
import os
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import CODEX_ACCOUNT, FakeClock, key_env, provider_context
from websearch import SearchCitation, SearchParams, SearchSource
from websearch._core._context import ProviderContext
from websearch._engine._lineup import load_provider
from websearch._http._sse import SseEvent, aiter_sse, iter_sse
from websearch._http._transport import Transport
from websearch._providers._base import HttpProvider, Plan
from websearch.errors import SearchProviderError
from websearch.providers import PROVIDERS, HttpRequest, HttpResponse, ProviderResult
from websearch.testing import FAKES, FakeServer, MockTransport, RecordedRequest, Reply
from websearch.testing.duckduckgo import DdgResult, results_page, sample_results

KEY: Final = "fuzz-key-3b9d7c1e5a"
QUERY: Final = "rust async book"
PARAMS: Final = SearchParams(QUERY)
ERROR_STATUSES: Final = (400, 401, 402, 403, 404, 429, 500, 503)
#: Multiplies every test's number of examples: WEBSEARCH_PROPERTY_SCALE=50 hunts for rarer bugs.
SCALE: Final = float(os.environ.get("WEBSEARCH_PROPERTY_SCALE", "1"))
PROPERTY: Final = settings(
    deadline=None,
    database=None,  # nothing written into the checkout; a failure prints its example
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)


def examples(n: int) -> int:
    return max(1, round(n * SCALE))


# -- scenarios: a planned search, how to parse one response for it, realistic responses ------------


@dataclass(repr=False)
class Scenario:
    """One way a provider is planned (a key, a login, keyless), its parser and realistic answers."""

    name: str
    provider: str
    plan: Plan
    ctx: ProviderContext
    parse: Callable[[HttpResponse], ProviderResult]
    samples: list[HttpResponse]
    secrets: tuple[str, ...]
    models: list[Model] = field(default_factory=list)  # the samples taken apart, for mutating
    keys: tuple[str, ...] = ()  # every object key in the samples, for arbitrary JSON

    def __repr__(self) -> str:  # what a failing example shows
        return f"<scenario {self.name}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # hypothesis's printer
        printer.text(repr(self))


class Lab:
    """Contexts (each with its own config dir), scenarios per provider, one event loop."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.loop = asyncio.new_event_loop()
        self._made = 0
        self._scenarios: dict[str, list[Scenario]] = {}

    def ctx(self, provider: str, env: dict[str, str] | None = None, *, explicit: bool = False) -> ProviderContext:
        """A context with `provider` configured with KEY (its registry row decides how), or with `env`."""
        self._made += 1
        config = self.root / f"{provider}-{self._made}"
        config.mkdir(mode=0o700)
        base = key_env(provider, config, KEY) if env is None else {"WEBSEARCH_CONFIG_DIR": str(config), **env}
        ctx: ProviderContext = provider_context(config, base, FakeClock())
        return ctx.for_attempt(ctx.budget, explicit=explicit)

    def scenarios(self, provider: str) -> list[Scenario]:
        found = self._scenarios.get(provider)
        if found is None:
            adapter = ADAPTERS.get(provider, http_scenarios)
            found = adapter(self, provider)
            extra = [as_response(reply) for reply in _extra_replies(provider)]
            for scenario in found:
                scenario.samples += extra
                _prepared(scenario)
            self._scenarios[provider] = found
        return found


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    made = Lab(tmp_path_factory.mktemp("properties"))
    yield made
    made.loop.close()


def recorded(request: HttpRequest) -> RecordedRequest:
    """`request` as a fake would see it arrive."""
    parts = urlsplit(request.url)
    if request.json is not None:
        body = json.dumps(request.json).encode()
    elif request.form is not None:
        body = urlencode(list(request.form)).encode()
    else:
        body = b""
    query = (*parse_qsl(parts.query), *request.params)
    headers = {k.lower(): v for k, v in request.headers.items()}
    return RecordedRequest(request.method, unquote(parts.path) or "/", tuple(query), headers, body)


def as_response(reply: Reply) -> HttpResponse:
    """A fake's reply as the complete response a transport would read."""
    if reply.chunks is not None:
        body, content_type = b"".join(reply.chunks), reply.content_type or "text/event-stream"
    else:
        body, content_type = reply.encoded()
    return HttpResponse(
        reply.status, {"content-type": content_type, **{k.lower(): v for k, v in reply.headers.items()}}, body
    )


def fake_sample(provider: str, request: HttpRequest | None, fake: FakeServer | None = None) -> HttpResponse:
    """The fake's default answer to the planned request; it must be a success."""
    assert request is not None, f"{provider}: the plan made no request; give it an adapter in ADAPTERS"
    response = as_response((fake or FAKES[provider]()).default_reply(recorded(request)))
    if not response.ok:
        pytest.fail(f"{provider}'s fake answered the planned request with {response.status}: {response.text()[:200]}")
    return response


def http_scenarios(lab: Lab, provider: str) -> list[Scenario]:
    """Any HttpProvider: its plan with a key, its own `parse`, its fake's answer. A provider that
    parses elsewhere (a stream) must have an adapter: without one, this fails loudly."""
    impl = load_provider(provider)
    if not isinstance(impl, HttpProvider):
        pytest.fail(
            f"{provider} is not an HttpProvider and has no adapter in ADAPTERS: add one so its parser is fuzzed"
        )
    ctx = lab.ctx(provider)
    plan = impl.plan(PARAMS, ctx)
    assert plan.request is not None
    return [
        Scenario(
            provider,
            provider,
            plan,
            ctx,
            lambda r: impl.parse(r, plan),
            [fake_sample(provider, plan.request)],
            plan.request.secrets,
        )
    ]


def _extra_replies(provider: str) -> list[Reply]:
    """Realistic answers besides the fake's default one: errors as each API words them (with
    their headers), errors inside a 200 or inside a stream, paused turns."""
    from websearch.testing import (
        anthropic,
        brave,
        codex,
        exa,
        firecrawl,
        gemini,
        jina,
        kagi,
        kimi,
        parallel,
        perplexity,
        searxng,
        tavily,
        xai,
        zai,
    )
    from websearch.testing.duckduckgo import challenge_page, no_results_page

    if provider == "anthropic":
        failed = anthropic.anthropic_message(QUERY, n=0)
        error = {"type": "web_search_tool_result_error", "error_code": "too_many_requests"}
        failed["content"].append({"type": "web_search_tool_result", "tool_use_id": "s9", "content": error})
        overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        turn = [Reply(200, body) for body in anthropic.anthropic_turn(QUERY, 1)]
        return [
            *turn,
            Reply(200, failed),
            Reply(200, overloaded),
            anthropic.anthropic_error(529, "overloaded_error", "x", {"retry-after": "3"}),
        ]
    if provider == "brave":
        return [brave.rate_limited_reply(), brave.quota_limited_reply(), brave.invalid_token_reply(plural=True)]
    if provider == "codex":
        usage_limit = {"error": {"type": "usage_limit_reached", "message": "limit reached", "resets_in_seconds": 120}}
        response_failed: dict[str, Any] = {
            "type": "response.failed",
            "response": {"error": {"code": "rate_limit_exceeded", "message": "slow"}},
        }
        error_event: dict[str, Any] = {
            "type": "error",
            "error": {"code": "insufficient_quota", "message": "no credits"},
        }
        return [Reply(429, usage_limit), codex.stream_reply([response_failed]), codex.stream_reply([error_event])]
    if provider == "gemini":
        in_stream = {"error": {"code": 429, "message": "Please retry in 12s", "status": "RESOURCE_EXHAUSTED"}}
        blocked = {"promptFeedback": {"blockReason": "SAFETY"}}
        return [
            gemini.api_key_invalid(),
            gemini.quota_exhausted(),
            gemini.stream_reply([in_stream]),
            gemini.stream_reply([blocked]),
        ]
    if provider == "perplexity":
        chat_error = {"error": {"message": "rate limited", "type": "rate_limit_exceeded", "code": 429}}
        ask_error = {"error_code": "RATE_LIMITED", "error_message": "slow down", "status": "FAILED"}
        stream = [
            Reply(200, chunks=perplexity.sse(event), content_type="text/event-stream")
            for event in (chat_error, ask_error)
        ]
        return [perplexity.api_error(429, "Too many requests", "rate_limit_exceeded"), *stream]
    if provider == "exa":
        return [
            exa.exa_error(402, "NO_MORE_CREDITS", "You have run out of credits", headers={"retry-after": "60"}),
            exa.mcp_reply(1, error={"code": -32602, "message": "Invalid params"}),
            exa.mcp_reply(1, exa.mcp_result("upstream failed", is_error=True)),
        ]
    if provider == "firecrawl":
        return [
            Reply(429, firecrawl.rate_limited()),
            Reply(200, firecrawl.firecrawl_error("failed", code="X", details=[{"message": "m"}])),
        ]
    if provider == "jina":
        return [Reply(402, jina.jina_error_body(402)), Reply(429, jina.jina_error_body(429))]
    if provider == "kagi":
        return [
            Reply(200, kagi.kagi_error_body("2", "Unauthorized")),
            Reply(200, kagi.kagi_legacy_error_body(101, "Insufficient credit")),
        ]
    if provider == "kimi":
        return [Reply(429, kimi.kimi_error("suspended", "exceeded_current_quota_error"))]
    if provider == "parallel":
        return [Reply(422, parallel.validation_error("body.objective", "field required"))]
    if provider == "searxng":
        return [
            searxng.invalid_value("time_range", "x"),
            Reply(403, searxng.json_disabled_page(), content_type="text/html"),
        ]
    if provider == "tavily":
        keyless = {"error": {"code": "rate_limited", "message": "slow", "retry_after_seconds": 30}}
        return [tavily.usage_limit_reply(), Reply(429, keyless)]
    if provider == "tinyfish":
        return [Reply(401, {"detail": "Missing API key"})]
    if provider == "xai":
        return [xai.bad_key_reply(KEY), Reply(429, {"error": {"message": "quota", "code": "insufficient_quota"}})]
    if provider == "zai":
        return [
            zai.zai_error(429, "1302", "rate limited", {"retry-after": "5"}),
            zai.zai_reply({"success": False, "code": 1113, "msg": "no balance"}, sse=False),
        ]
    if provider == "synthetic":
        return [Reply(429, {"error": "Too many requests"})]
    if provider == "duckduckgo":
        return [
            Reply(202, challenge_page(), content_type="text/html"),
            Reply(200, no_results_page(QUERY), content_type="text/html"),
        ]
    return []


# -- adapters: providers whose parsing is not `parse(response, plan)` ------------------------------


def codex_scenarios(lab: Lab, provider: str) -> list[Scenario]:
    from websearch._providers import codex

    ctx = lab.ctx(provider)
    plan = codex.PROVIDER.plan(PARAMS, ctx)
    request = codex._request(plan.state, KEY, CODEX_ACCOUNT, plan.state.models[0])

    def parse(response: HttpResponse) -> ProviderResult:
        if not response.ok:
            raise codex.PROVIDER.error(response, plan)
        return codex.parse_events(iter_sse(response.text()), plan, response)

    return [Scenario("codex", provider, plan, ctx, parse, [fake_sample(provider, request)], request.secrets)]


def perplexity_scenarios(lab: Lab, provider: str) -> list[Scenario]:
    from websearch._providers import perplexity
    from websearch._providers._perplexity_api import ChatStream
    from websearch._providers._perplexity_ask import AskStream

    ways: list[tuple[str, dict[str, str] | None, bool]] = [
        ("api key", None, False),
        ("cookies", {"PERPLEXITY_COOKIES": f"__Secure-next-auth.session-token={KEY}"}, False),
        ("anonymous", {}, True),
    ]
    scenarios = []
    for name, env, explicit in ways:
        ctx = lab.ctx(provider, env, explicit=explicit)
        plan = perplexity.PROVIDER.plan(PARAMS, ctx)
        method = plan.state.methods[0]

        def parse(response: HttpResponse, plan: Plan = plan, method: Any = method) -> ProviderResult:
            """What `Perplexity._search_with` does with one response."""
            stream = (ChatStream if method.auth.chat else AskStream)(method.auth, method.request, plan)
            if response.ok and "text/event-stream" in response.headers.get("content-type", ""):
                for event in iter_sse(response.text()):
                    if stream.feed(event):
                        break
            else:
                if not response.ok:
                    raise stream.error(response)
                stream.take(perplexity.PROVIDER.json_object(response))
                stream.done = True
            return stream.result()

        sample = fake_sample(provider, method.request)
        scenarios.append(Scenario(f"perplexity {name}", provider, plan, ctx, parse, [sample], method.request.secrets))
    return scenarios


def gemini_scenarios(lab: Lab, provider: str) -> list[Scenario]:
    from websearch._providers import gemini
    from websearch.testing.gemini import FakeGemini, grounded_chunks, stream_reply

    ctx = lab.ctx(provider)
    plan = gemini.PROVIDER.plan(PARAMS, ctx)
    assert plan.request is not None

    def parse(response: HttpResponse) -> ProviderResult:
        if not response.ok:
            raise gemini.PROVIDER.error(response, plan)
        return gemini.PROVIDER.parse(iter_sse(response.text()), plan)

    samples = [
        fake_sample(provider, plan.request, FakeGemini(api_keys=[KEY])),
        as_response(stream_reply(grounded_chunks(QUERY), wrap=True)),  # Cloud Code's wrapped chunks
    ]
    return [Scenario("gemini", provider, plan, ctx, parse, samples, plan.request.secrets)]


def zai_scenarios(lab: Lab, provider: str) -> list[Scenario]:
    from websearch._providers import zai
    from websearch.testing.zai import zai_reply, zai_tool_result

    ctx = lab.ctx(provider)
    plan = zai.PROVIDER.plan(PARAMS, ctx)

    def parse(response: HttpResponse) -> ProviderResult:
        return zai.parse_result(zai.PROVIDER.read_message(response, plan), plan.limit or zai.DEFAULT_RESULTS)

    tool_error = {"content": [{"type": "text", "text": "MCP error -429: too many requests"}], "isError": True}
    results = [zai_tool_result(QUERY, 5, shape) for shape in ("array", "double", "object")] + [tool_error]
    samples = [
        as_response(zai_reply({"jsonrpc": "2.0", "id": "1", "result": result}, sse=sse))
        for result in results
        for sse in (True, False)
    ]
    return [Scenario("zai", provider, plan, ctx, parse, samples, (KEY,))]


def exa_scenarios(lab: Lab, provider: str) -> list[Scenario]:
    """The keyed REST API, and the keyless MCP server (chosen explicitly, no key)."""
    from websearch._providers import exa
    from websearch.testing.exa import FakeExa

    keyed = http_scenarios(lab, provider)
    ctx = lab.ctx(provider, {}, explicit=True)
    plan = exa.PROVIDER.plan(PARAMS, ctx)
    samples = [fake_sample(provider, plan.request, FakeExa(mcp_shape=shape)) for shape in ("text", "json")]
    keyless = Scenario("exa keyless", provider, plan, ctx, lambda r: exa.PROVIDER.parse(r, plan), samples, ())
    return [*keyed, keyless]


#: Providers whose parsing needs more than `parse(response, plan)` (or more than one plan).
ADAPTERS: Final[dict[str, Callable[[Lab, str], list[Scenario]]]] = {
    "codex": codex_scenarios,
    "perplexity": perplexity_scenarios,
    "gemini": gemini_scenarios,
    "zai": zai_scenarios,
    "exa": exa_scenarios,
}


# -- bodies: taken apart, mutated, put back together -----------------------------------------------


@dataclass
class Model:
    """A body taken apart: a JSON document, SSE events (name, data: JSON or text), or raw bytes."""

    kind: str  # "json", "sse" or "raw"
    doc: Any = None
    events: list[tuple[str, bool, Any]] = field(default_factory=list)  # (event, data is JSON, data)
    raw: bytes = b""


def _loads(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except ValueError:
        return False, text


def take_apart(response: HttpResponse) -> Model:
    text = response.body.decode("utf-8", "replace")
    if "event-stream" in response.headers.get("content-type", "") or text.lstrip().startswith(("data:", "event:")):
        return Model("sse", events=[(e.event, *_loads(e.data)) for e in iter_sse(text)])
    is_json, doc = _loads(text)
    return Model("json", doc=doc) if is_json else Model("raw", raw=response.body)


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


def _prepared(scenario: Scenario) -> Scenario:
    scenario.models = [take_apart(sample) for sample in scenario.samples]
    docs = [m.doc for m in scenario.models] + [d for m in scenario.models for _, is_json, d in m.events if is_json]
    scenario.keys = tuple(sorted({key for doc in docs for key in _keys(doc)}))
    return scenario


#: Strings that have broken parsers: lone surrogates, control and format characters, digits that
#: are not ASCII, junk URLs and dates, the key itself (it must be redacted), words parsers look for.
NASTY_STRINGS: Final = (
    "",
    " ",
    "\t\n ",
    "\x00",
    "\x1b[31mred\x1b[0m",
    "\r",
    "\u2028\u2029\x85",
    "\ufeff",
    "\u202e",
    "\ud800",
    "\udfff",
    "a\ud83d",
    "\udcff\udc80",
    "²",
    "١٢٣",
    "NaN",
    "-1",
    "1e400",
    "9" * 40,
    "[DONE]",
    "null",
    '{"a":',
    "[]",
    "http://",
    "https://",
    "//example.com/x",
    "javascript:alert(1)",
    "http://[::1",
    "https://exa mple.com/ x",
    "http://a.example/%zz",
    "ftp://files.example/x",
    "2 days ago",
    "99999999999999999999 days ago",
    "9" * 4400 + " days ago",  # int() refuses more than 4300 digits
    "2026-11-30T12:00:00Z",
    "9999-12-31T23:59:59+23:59",
    "0001-01-01T00:00:00-23:59",
    "Mon, 01 Jan 0000 00:00:00 +9999",
    "January 32, 2025",
    KEY,
    f"Bearer {KEY}",
    "MCP error -429: slow down",
    "MCP error 99999999999999999999999: x",
    "see attached image",
    "insufficient_quota",
    "RESOURCE_EXHAUSTED",
    "message",
    "url_citation",
    "web_search_result",
)
SURROGATES: Final = st.text(st.characters(categories=["Cs"]), min_size=1, max_size=3)
TEXT: Final = st.one_of(st.text(max_size=12), st.sampled_from(NASTY_STRINGS), SURROGATES)
NUMBERS: Final = st.one_of(
    st.sampled_from([0, -1, 1, 2**31, 2**63, 2**64 + 1, -(10**30), 1.5, -0.0, 1e308, True, False]),
    st.sampled_from([float("nan"), float("inf"), float("-inf")]),
    st.integers(-(10**30), 10**30),
    st.floats(),
)
SCALARS: Final = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT)
COMMON_KEYS: Final = (
    "error",
    "code",
    "message",
    "type",
    "status",
    "detail",
    "data",
    "results",
    "result",
    "url",
    "title",
    "text",
    "content",
    "choices",
    "delta",
    "candidates",
    "response",
    "output",
    "usage",
    "id",
)


@functools.cache
def json_values(keys: tuple[str, ...] = ()) -> st.SearchStrategy[Any]:
    names = st.one_of(st.sampled_from(COMMON_KEYS + keys), st.text(max_size=8))
    return st.recursive(
        SCALARS, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(names, kids, max_size=5), max_leaves=15
    )


def dump_json(value: Any, ascii_only: bool) -> bytes:
    """JSON text; with `ascii_only` False a lone surrogate becomes bytes that are not UTF-8."""
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


ENDINGS: Final = ("\n", "\r", "\r\n")


def dump_sse(events: list[tuple[str, bool, Any]], endings: list[str], ascii_only: bool) -> bytes:
    lines: list[str] = []
    for name, is_json, data in events:
        if name != "message":
            lines.append(f"event: {name}")
        text = json.dumps(data, ensure_ascii=ascii_only) if is_json else str(data)
        lines += [f"data: {part}" for part in text.split("\n")]
        lines.append("")
    text = "".join(line + endings[i % len(endings)] for i, line in enumerate(lines))
    return text.encode("utf-8", "surrogatepass")


@st.composite
def json_bodies(draw: st.DrawFn, keys: tuple[str, ...] = ()) -> bytes:
    """An arbitrary JSON document, or arbitrary JSON values as the data of SSE events."""
    values = json_values(keys)
    ascii_only = draw(st.booleans())
    if draw(st.booleans()):
        return dump_json(draw(values), ascii_only)
    names = st.sampled_from(("message", "error", "delta", "response.completed", "[DONE]"))
    events = draw(st.lists(st.tuples(names, st.just(True), values), max_size=5))
    return dump_sse(events, [draw(st.sampled_from(ENDINGS))], ascii_only)


@st.composite
def arbitrary_bytes(draw: st.DrawFn) -> bytes:
    """Noise: random bytes, or random text over JSON's and SSE's own characters."""
    if draw(st.booleans()):
        return draw(st.binary(max_size=400))
    return draw(st.text('{}[]":,0123456789.-eE tnulrfasdt\\\r\n:', max_size=200)).encode()


_DROP: Final = object()


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _nodes(item, (*path, i))


def _replace(doc: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return None if new is _DROP else new
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    if new is _DROP:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return doc


def _kind(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return "null or bool"
    if isinstance(value, (int, float)):
        return "number"
    return "str" if isinstance(value, str) else "list" if isinstance(value, list) else "dict"


_OF_KIND: Final = {
    "null or bool": st.one_of(st.none(), st.booleans()),
    "number": NUMBERS,
    "str": TEXT,
    "list": st.one_of(st.just([]), st.lists(SCALARS, max_size=3)),
    "dict": st.one_of(st.just({}), st.dictionaries(st.sampled_from(COMMON_KEYS), SCALARS, max_size=3)),
}
#: For each kind of JSON value, values of every other kind (built once: a strategy built per draw,
#: a filtered one above all, costs more than the parsers under test).
OTHER_THAN: Final = {kind: st.one_of([s for k, s in _OF_KIND.items() if k != kind]) for kind in _OF_KIND}


def _mutant(draw: st.DrawFn, node: Any, keys: tuple[str, ...]) -> Any:
    """Something in the place of `node`: nothing, another type, a nastier value of its own type."""
    ops = ["drop", "other type", "other type"]
    if isinstance(node, str):
        ops += ["nasty", "nasty", "surrogate", "huge", "control", "cut"]
        inner_json, inner = _loads(node)
        if inner_json and isinstance(inner, (dict, list)):
            ops += ["inner", "inner"]
    elif isinstance(node, bool) or node is None:
        ops += ["other type"]
    elif isinstance(node, (int, float)):
        ops += ["number", "number"]
    elif isinstance(node, list):
        ops += ["empty", "double", "reverse", "wrap", "nest"]
    elif isinstance(node, dict):
        ops += ["empty", "wrap", "extra key", "few keys"]
    op = draw(st.sampled_from(ops))
    if op == "drop":
        return _DROP
    if op == "other type":
        return draw(OTHER_THAN[_kind(node)])
    if op == "nasty":
        return draw(TEXT)
    if op == "surrogate":
        at = draw(st.integers(0, len(node)))
        return node[:at] + draw(SURROGATES) + node[at:]
    if op == "huge":
        return (node or "x") * (100_000 // max(1, len(node)))
    if op == "control":
        at = draw(st.integers(0, len(node)))
        return (
            node[:at]
            + draw(st.sampled_from(["\x00", "\r\n", "\x1b", "\x7f", "\u2028", "\ufeff", "\n\ndata: x"]))
            + node[at:]
        )
    if op == "cut":
        return node[: draw(st.integers(0, len(node)))]
    if op == "inner":
        return json.dumps(mutate_doc(draw, inner, keys), ensure_ascii=draw(st.booleans()))
    if op == "number":
        return draw(NUMBERS)
    if op == "empty":
        return type(node)()
    if op == "double":
        return node + node
    if op == "reverse":
        return node[::-1]
    if op == "wrap":
        return [node]
    if op == "nest":
        return [node, node[0] if node else None]
    if op == "extra key":
        return {**node, draw(st.sampled_from(COMMON_KEYS + keys)): draw(SCALARS)}
    assert op == "few keys"
    names = draw(st.lists(st.sampled_from(sorted(node)), unique=True)) if node else []
    return {name: node[name] for name in names}


def mutate_doc(draw: st.DrawFn, doc: Any, keys: tuple[str, ...]) -> Any:
    """`doc` with one to three of its nodes (the whole document included) mutated."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        path, node = draw(st.sampled_from(list(_nodes(doc))))
        doc = _replace(doc, path, _mutant(draw, node, keys))
    return doc


def mutate_events(draw: st.DrawFn, events: list[tuple[str, bool, Any]], keys: tuple[str, ...]) -> list[Any]:
    events = list(events)
    for _ in range(draw(st.integers(1, 3))):
        ops = ["data", "data", "data", "drop", "duplicate", "swap", "rename", "text", "append"]
        op = draw(st.sampled_from(ops if events else ["append"]))
        i = draw(st.integers(0, max(0, len(events) - 1)))
        if op == "data":
            name, is_json, data = events[i]
            events[i] = (name, True, mutate_doc(draw, data, keys)) if is_json else (name, False, draw(TEXT))
        elif op == "drop":
            del events[i]
        elif op == "duplicate":
            events.insert(i, events[i])
        elif op == "swap":
            j = draw(st.integers(0, len(events) - 1))
            events[i], events[j] = events[j], events[i]
        elif op == "rename":
            name = draw(st.one_of(st.sampled_from(["error", "message", "[DONE]", "done"]), st.text(max_size=8)))
            events[i] = (name.replace("\r", "").replace("\n", ""), *events[i][1:])
        elif op == "text":
            events[i] = (events[i][0], False, draw(st.sampled_from(["[DONE]", "", "not json", "{", " "])))
        else:
            events.insert(i, (draw(st.sampled_from(["message", "error"])), True, draw(json_values(keys))))
    return events


JUNK_BYTES: Final = (b"\xff", b"\xed\xa0\x80", b"\x00", b"\r", b"\n\n", b"\xef\xbb\xbf", b"\xc3", b"\\", b'"', b"}")


def mutate_bytes(draw: Callable[..., Any], body: bytes) -> bytes:
    """Byte-level damage: cut off, a slice lost or doubled, junk bytes in, a BOM in front."""
    op = draw(st.sampled_from(["cut", "cut", "lose", "double", "junk", "bom"]))
    at = draw(st.integers(0, len(body)))
    if op == "cut":
        return body[:at]
    if op == "lose":
        return body[:at] + body[at + draw(st.integers(1, 64)) :]
    if op == "double":
        return body[:at] + body[at : at + draw(st.integers(1, 64))] + body[at:]
    if op == "junk":
        junk: bytes = draw(st.sampled_from(JUNK_BYTES))
        return body[:at] + junk + body[at:]
    return b"\xef\xbb\xbf" + body


@st.composite
def mutated_bodies(draw: st.DrawFn, model: Model, keys: tuple[str, ...] = ()) -> bytes:
    """A realistic body, mutated: its values (JSON, or each SSE event's), its events, its bytes."""
    ascii_only = draw(st.booleans())
    if model.kind == "json":
        body = dump_json(mutate_doc(draw, model.doc, keys), ascii_only)
    elif model.kind == "sse":
        events = mutate_events(draw, model.events, keys)
        style = draw(st.sampled_from(["\n", "\n", "\r", "\r\n", "mixed"]))
        endings = draw(st.lists(st.sampled_from(ENDINGS), min_size=1, max_size=5)) if style == "mixed" else [style]
        body = dump_sse(events, endings, ascii_only)
    else:
        body = model.raw
    if model.kind == "raw" or draw(st.integers(0, 3)) == 0:
        body = mutate_bytes(draw, body)
    return body


# -- responses and the outcome check -----------------------------------------------------------------

HEADER_JUNK: Final = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        ["²", "1, ²", "١", "NaN", "inf", "-1", "1e400", "9" * 400, "", " , ,", "Wed, 21 Oct 2015 07:28:00 GMT"]
    ),
    st.integers(-5, 10**12).map(str),
    st.text(st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF), min_size=1, max_size=3),  # surrogateescape
)
HEADERS: Final = st.dictionaries(
    st.sampled_from(
        ["retry-after", "retry-after-ms", "x-ratelimit-reset", "request-id", "x-request-id", "mcp-session-id"]
    ),
    HEADER_JUNK,
    max_size=3,
)
CONTENT_TYPES: Final = st.sampled_from(["application/json", "text/event-stream", "text/html; charset=utf-8", ""])
STATUSES: Final = st.one_of(st.just(200), st.sampled_from(ERROR_STATUSES))
KINDS: Final = ("bytes", "json", "mutated")


@st.composite
def responses(draw: st.DrawFn, scenario: Scenario, kind: str) -> HttpResponse:
    """A body of `kind` with the headers of a realistic answer (some of them junk), and that
    answer's status or a drawn one."""
    i = draw(st.integers(0, len(scenario.samples) - 1))
    sample = scenario.samples[i]
    headers = dict(sample.headers)
    if kind == "bytes":
        body = draw(arbitrary_bytes())
    elif kind == "json":
        body = draw(json_bodies(scenario.keys))
    else:
        body = draw(mutated_bodies(scenario.models[i], scenario.keys))
    if kind != "mutated" or draw(st.integers(0, 4)) == 0:
        headers["content-type"] = draw(CONTENT_TYPES)
    junk_one = draw(st.booleans())
    if headers and junk_one:
        headers[draw(st.sampled_from(sorted(headers)))] = draw(HEADER_JUNK)
    headers |= draw(HEADERS)
    status = sample.status if kind == "mutated" and draw(st.booleans()) else draw(STATUSES)
    return HttpResponse(status, headers, body, secrets=scenario.secrets)


def check_outcome(
    call: Callable[[], ProviderResult], secrets: tuple[str, ...] = ()
) -> ProviderResult | SearchProviderError:
    """Run `call`: it returns a well-typed result or raises a SearchProviderError whose message is
    printable text without the request's secrets. Anything else it raises is the bug this file hunts."""
    try:
        result = call()
    except SearchProviderError as exc:
        error = exc
    else:
        return _checked(result)
    assert isinstance(error.message, str) and isinstance(error.provider, str)
    error.message.encode("utf-8")  # a lone surrogate here breaks every renderer and the CLI
    assert not any(secret in error.message for secret in secrets), f"a secret leaked into {error!r}"
    retry = error.retry_after
    assert retry is None or (isinstance(retry, (int, float)) and 0 <= retry < math.inf), f"retry_after={retry!r}"
    return error


def _checked(result: ProviderResult) -> ProviderResult:
    assert isinstance(result, ProviderResult), f"not a ProviderResult: {result!r}"
    assert result.answer is None or isinstance(result.answer, str)
    for source in result.sources:
        assert isinstance(source, SearchSource) and isinstance(source.url, str) and isinstance(source.title, str)
        assert source.snippet is None or isinstance(source.snippet, str)
        age = source.age_seconds
        assert age is None or (isinstance(age, int) and abs(age) < 2**63), f"age_seconds={age!r}"
    for citation in result.citations:
        assert isinstance(citation, SearchCitation) and isinstance(citation.url, str)
    return result


# -- every provider's parser and search ---------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("provider", list(PROVIDERS))
@settings(PROPERTY, max_examples=examples(20))
@given(data=st.data())
def test_a_parser_takes_any_body(lab: Lab, provider: str, kind: str, data: st.DataObject) -> None:
    scenario = data.draw(st.sampled_from(lab.scenarios(provider)), label="scenario")
    response = data.draw(responses(scenario, kind), label="response")
    check_outcome(lambda: scenario.parse(response), scenario.secrets)


@pytest.mark.parametrize("provider", list(PROVIDERS))
@settings(PROPERTY, max_examples=examples(15))
@given(data=st.data())
def test_a_search_takes_any_reply(lab: Lab, provider: str, data: st.DataObject) -> None:
    """The provider's whole `search` (sessions, pages, continuations, retries, model and auth
    fallbacks) with every request answered by the drawn response."""
    scenario = data.draw(st.sampled_from(lab.scenarios(provider)), label="scenario")
    response = data.draw(responses(scenario, data.draw(st.sampled_from(KINDS))), label="response")
    check_outcome(lambda: search_with(lab, scenario, response), scenario.secrets)


def search_with(lab: Lab, scenario: Scenario, response: HttpResponse) -> ProviderResult:
    """`search` for the scenario's plan, every request answered with `response`. MockTransport writes
    each request body as the transport does: a provider may echo what it was sent (Anthropic
    continues a paused turn with the reply's content)."""

    def answer(_provider: str, request: HttpRequest) -> HttpResponse:
        return response

    ctx = dataclasses.replace(scenario.ctx, transport=MockTransport(answer))
    return lab.loop.run_until_complete(load_provider(scenario.provider).search(scenario.plan, ctx))


def test_every_provider_is_covered(lab: Lab) -> None:
    """Each registry provider has scenarios, and each scenario's first realistic sample parses to a
    result (the mutations start from working bodies): a provider is fuzzed once it is registered."""
    for provider in PROVIDERS:
        scenarios = lab.scenarios(provider)
        assert scenarios, provider
        for scenario in scenarios:
            first = scenario.samples[0]
            outcome = check_outcome(lambda: scenario.parse(first))  # noqa: B023 - called at once
            assert isinstance(outcome, ProviderResult), f"{scenario.name}: {outcome!r}"
            assert outcome.answer or outcome.sources, f"{scenario.name}: the sample found nothing"


#: Deeper than the json module recurses (about 1000 levels); orjson takes up to 1024.
TOO_DEEP: Final = (b"[" * 5000, b'{"a":' * 5000)
VALID_DEPTH: Final = 1010


def deep_bodies(keys: tuple[str, ...]) -> Iterator[tuple[str, bytes]]:
    """(content type, body): JSON too deep to parse, and valid JSON that orjson parses but that is
    deeper than the json module (or a recursive walk) goes, under every key a parser looks for."""
    for body in TOO_DEEP:
        yield "application/json", body
        yield "text/event-stream", b"data: " + body + b"\n\n"
    yield "application/json", b"[" * VALID_DEPTH + b"]" * VALID_DEPTH
    for key in dict.fromkeys(COMMON_KEYS + keys):
        name = json.dumps(key).encode()
        in_objects = b"{" + name + b":"
        in_lists = b"{" + name + b":["  # two levels a step: objects in lists, as in `output[].content[]`
        half = VALID_DEPTH // 2
        for body in (in_objects * VALID_DEPTH + b"1" + b"}" * VALID_DEPTH, in_lists * half + b"1" + b"]}" * half):
            yield "application/json", body  # as an SSE event, json.loads refuses it like TOO_DEEP


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_deeply_nested_json(lab: Lab, provider: str) -> None:
    """JSON nested deeper than the json module recurses (orjson refuses depth > 1024; the
    json-module fallback of `HttpResponse.json` then says "not JSON" instead of recursing)."""
    for scenario in lab.scenarios(provider):
        for content_type, body in deep_bodies(scenario.keys):
            for status in (200, 429):
                response = HttpResponse(status, {"content-type": content_type}, body, secrets=scenario.secrets)
                check_outcome(lambda: scenario.parse(response))  # noqa: B023 - called at once


def test_continuing_a_deep_paused_turn(lab: Lab) -> None:
    """Anthropic sends a paused reply's content back as it came: content nested 1010 levels deep
    (orjson reads up to 1024) is more than a request body can be written with (orjson stops at
    255 levels, the json module recurses): the request is refused as unsendable, a typed error."""
    deep = b"[" * VALID_DEPTH + b"]" * VALID_DEPTH
    body = b'{"stop_reason": "pause_turn", "content": [{"type": "text", "text": "x", "deep": ' + deep + b"}]}"
    scenario = lab.scenarios("anthropic")[0]
    response = HttpResponse(200, {"content-type": "application/json"}, body, secrets=scenario.secrets)
    check_outcome(lambda: search_with(lab, scenario, response), scenario.secrets)


def test_lone_surrogates_never_reach_a_renderer() -> None:
    """The json module decodes a lone `\\ud800` escape that orjson refuses; the body's text
    comes back with U+FFFD in its place (keys too), pairs intact, so every rendering encodes."""
    body = b'{"t": "a\\ud800b", "k\\udc00": ["\\ud83d\\ude00", {"x": "\\udfff"}]}'
    assert HttpResponse(200, {}, body).json() == {"t": "a\ufffdb", "k\ufffd": ["\U0001f600", {"x": "\ufffd"}]}


# -- what the properties found, pinned --------------------------------------------------------------

FOUND: Final = {
    "xai usage NaN (int(nan): ValueError)": (
        "xai",
        200,
        {},
        b'{"output": [], "usage": {"input_tokens": NaN, "output_tokens": Infinity}}',
    ),
    "brave reset window in non-ASCII digits (float('\u00b2'): ValueError)": (
        "brave",
        429,
        {"x-ratelimit-reset": "1, \u00b2"},
        b'{"type": "ErrorResponse", "error": {"status": 429, "code": "RATE_LIMITED", "detail": "slow down"}}',
    ),
    "anthropic page_age of 4400 digits (int(): ValueError)": (
        "anthropic",
        200,
        {},
        json.dumps(
            {
                "content": [
                    {
                        "type": "web_search_tool_result",
                        "content": [
                            {
                                "type": "web_search_result",
                                "url": "https://a.example/",
                                "page_age": "9" * 4400 + " days ago",
                            }
                        ],
                    }
                ]
            }
        ).encode(),
    ),
    "gemini retry-after-ms of 400 digits (retry_after=inf)": (
        "gemini",
        429,
        {"retry-after-ms": "9" * 400},
        b'{"error": {"code": 429, "message": "slow", "status": "RESOURCE_EXHAUSTED"}}',
    ),
    "firecrawl retry delay of 400 digits in the text (retry_after=inf)": (
        "firecrawl",
        429,
        {},
        b'{"success": false, "error": "please retry after ' + b"9" * 400 + b's"}',
    ),
    "firecrawl error body 1010 levels deep (json.dumps: RecursionError)": (
        "firecrawl",
        429,
        {},
        b'{"error":' * 1010 + b"1" + b"}" * 1010,
    ),
    "gemini error body 1010 levels deep (json.dumps: RecursionError)": (
        "gemini",
        429,
        {},
        b'{"error":' * 1010 + b"1" + b"}" * 1010,
    ),
    "perplexity error answer 1010 levels deep (json.dumps: RecursionError)": (
        "perplexity",
        200,
        {"content-type": "application/json"},
        b'{"error":' * 1010 + b"1" + b"}" * 1010,
    ),
    "perplexity response nested 1010 levels deep (_collect: RecursionError)": (
        "perplexity",
        200,
        {"content-type": "application/json"},
        b'{"response":' * 1010 + b"1" + b"}" * 1010,
    ),
    "codex event data 5000 levels deep (json.loads: RecursionError)": (
        "codex",
        200,
        {"content-type": "text/event-stream"},
        b"data: " + b"[" * 5000 + b"\n\n",
    ),
    "gemini event data 5000 levels deep (json.loads: RecursionError)": (
        "gemini",
        200,
        {"content-type": "text/event-stream"},
        b"data: " + b"[" * 5000 + b"\n\n",
    ),
    "perplexity event data 5000 levels deep (json.loads: RecursionError)": (
        "perplexity",
        200,
        {"content-type": "text/event-stream"},
        b"data: " + b"[" * 5000 + b"\n\n",
    ),
    "zai event data 5000 levels deep (json.loads: RecursionError)": (
        "zai",
        200,
        {"content-type": "text/event-stream"},
        b"data: " + b"[" * 5000 + b"\n\n",
    ),
    "exa keyless event data 5000 levels deep (json.loads: RecursionError)": (
        "exa",
        200,
        {"content-type": "text/event-stream"},
        b"data: " + b"[" * 5000 + b"\n\n",
    ),
}


@pytest.mark.parametrize("case", list(FOUND))
def test_what_the_properties_found(lab: Lab, case: str) -> None:
    provider, status, headers, body = FOUND[case]
    scenario = lab.scenarios(provider)[-1 if provider == "exa" else 0]  # exa: the keyless MCP parser
    response = HttpResponse(status, headers, body, secrets=scenario.secrets)
    check_outcome(lambda: scenario.parse(response), scenario.secrets)


def test_codex_link_scraping_is_linear() -> None:
    """`[](` repeated: each link start scanned to the end of the answer took minutes for 30 KB."""
    from websearch._providers.codex import scrape_links

    started = time.perf_counter()
    assert scrape_links("[](" * 30_000) == []
    assert time.perf_counter() - started < 2.0  # 0.02 s now; minutes before


# -- the SSE decoder -----------------------------------------------------------------------------------


def whatwg_events(stream: bytes) -> list[SseEvent]:
    """A reference decoder, written from the WHATWG rules: UTF-8 (a leading BOM dropped); lines
    end at CR LF, LF or CR; a blank line dispatches the event when it has data; what follows the
    last line end is never a complete line, so an unfinished event is dropped."""
    text = stream.decode("utf-8", "replace").removeprefix("\ufeff")
    *lines, _unfinished = re.split(r"\r\n|\r|\n", text)
    events: list[SseEvent] = []
    data: list[str] = []
    kind, last_id = "", None
    for line in lines:
        if not line:
            if data:
                events.append(SseEvent(kind or "message", "\n".join(data), last_id))
            data, kind = [], ""
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        elif name == "event":
            kind = value
        elif name == "id" and "\0" not in value:
            last_id = value
    return events


FIELD_TEXT: Final = st.one_of(
    st.text(st.characters(exclude_characters="\r\n", exclude_categories=["Cs"]), max_size=10),
    st.sampled_from(["", " ", "\u2028", "\x85", "\ufeff", "\x00", "{}", "[DONE]", ": x"]),
)
SSE_LINES: Final = st.lists(
    st.one_of(
        st.just(""),
        st.builds("data:{}".format, FIELD_TEXT),
        st.builds("data: {}".format, FIELD_TEXT),
        st.builds("event: {}".format, FIELD_TEXT),
        st.builds("id: {}".format, FIELD_TEXT),
        st.builds(":{}".format, FIELD_TEXT),
        st.sampled_from(["data", "data:", "event:", "id", "retry: 10", ": keep-alive"]),
        FIELD_TEXT,
    ),
    max_size=16,
)
SSE: Final = settings(PROPERTY, max_examples=examples(100))


def joined(lines: list[str], endings: list[str]) -> str:
    return "".join(line + endings[i % len(endings)] for i, line in enumerate(lines))


class _Body:
    """Just enough of an aiohttp response for `Transport._lines`: its body in these chunks (and
    of the session it came on: one still open)."""

    closed = False

    def __init__(self, chunks: list[bytes]) -> None:
        self.content = self
        self._chunks = chunks

    async def iter_any(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


def streamed(loop: asyncio.AbstractEventLoop, stream: bytes, cuts: list[int]) -> list[SseEvent]:
    """The events `aiter_sse` gives for `stream` arriving in chunks cut at `cuts`, split into
    lines by the transport (`Transport.stream`'s own line splitter)."""
    bounds = [0, *sorted(set(cuts)), len(stream)]
    chunks = [stream[a:b] for a, b in itertools.pairwise(bounds) if b > a]

    async def run() -> list[SseEvent]:
        body = _Body(chunks)
        lines = Transport()._lines("test", HttpRequest("GET", "http://test.invalid/"), body, body)  # type: ignore[arg-type]
        return [event async for event in aiter_sse(lines)]

    return loop.run_until_complete(run())


def spliced(loop: asyncio.AbstractEventLoop, stream: bytes) -> list[SseEvent]:
    """The events `aiter_sse` gives for `stream` split as `MockTransport.stream` splits it."""

    async def lines() -> AsyncIterator[bytes]:
        for line in stream.splitlines(keepends=True):
            yield line

    async def run() -> list[SseEvent]:
        return [event async for event in aiter_sse(lines())]

    return loop.run_until_complete(run())


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    made = asyncio.new_event_loop()
    yield made
    made.close()


@SSE
@given(lines=SSE_LINES)
def test_sse_cr_lf_and_crlf_line_ends_are_alike(lines: list[str]) -> None:
    by_ending = {ending: iter_sse(joined(lines, [ending])) for ending in ENDINGS}
    assert by_ending["\r"] == by_ending["\n"] == by_ending["\r\n"] == whatwg_events(joined(lines, ["\n"]).encode())


@SSE
@given(lines=SSE_LINES, endings=st.lists(st.sampled_from(ENDINGS), min_size=1, max_size=6))
def test_sse_mixed_line_ends_follow_whatwg(
    loop: asyncio.AbstractEventLoop, lines: list[str], endings: list[str]
) -> None:
    text = joined(lines, endings)
    expected = whatwg_events(text.encode())
    assert iter_sse(text) == expected
    assert spliced(loop, text.encode()) == expected


@SSE
@given(lines=SSE_LINES, ending=st.sampled_from(ENDINGS))
def test_sse_leading_bom_is_ignored(loop: asyncio.AbstractEventLoop, lines: list[str], ending: str) -> None:
    text = joined(lines, [ending])
    if text.startswith("\ufeff"):  # a second BOM is content, not a BOM
        text = " " + text
    expected = iter_sse(text)
    assert expected == whatwg_events(text.encode())
    assert iter_sse("\ufeff" + text) == expected
    assert streamed(loop, b"\xef\xbb\xbf" + text.encode(), []) == expected


@SSE
@given(lines=SSE_LINES, ending=st.sampled_from(ENDINGS), tail=FIELD_TEXT)
def test_sse_unfinished_event_is_not_dispatched(lines: list[str], ending: str, tail: str) -> None:
    text = joined(lines, [ending])
    assert iter_sse(text + "data: " + tail) == iter_sse(text) == whatwg_events(text.encode())


@SSE
@given(data=st.data())
def test_sse_same_events_whatever_the_chunking(loop: asyncio.AbstractEventLoop, data: st.DataObject) -> None:
    lines = data.draw(SSE_LINES, label="lines")
    endings = data.draw(st.lists(st.sampled_from(ENDINGS), min_size=1, max_size=6), label="endings")
    stream = (data.draw(st.sampled_from(["", "\ufeff"]), label="bom") + joined(lines, endings)).encode()
    if data.draw(st.booleans(), label="noise"):
        stream = mutate_bytes(data.draw, stream)
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=8), label="cuts")
    expected = whatwg_events(stream)
    assert streamed(loop, stream, cuts) == expected
    assert streamed(loop, stream, list(range(len(stream)))) == expected  # one byte at a time
    assert iter_sse(stream.decode("utf-8", "replace")) == expected


@SSE
@given(stream=st.binary(max_size=300), cuts=st.lists(st.integers(0, 300), max_size=6), text=st.text(max_size=100))
def test_sse_never_crashes_on_noise(loop: asyncio.AbstractEventLoop, stream: bytes, cuts: list[int], text: str) -> None:
    assert streamed(loop, stream, [c for c in cuts if c <= len(stream)]) == whatwg_events(stream)
    iter_sse(text)
    iter_sse(text.splitlines(keepends=True))
    iter_sse(stream.decode("utf-8", "surrogateescape"))


# -- the DuckDuckGo parser -------------------------------------------------------------------------------

HREFS: Final = st.one_of(
    st.sampled_from(
        [
            "https://docs.example.org/a?b=c&d=e",
            "http://example.com/",
            "https://",
            "//example.com/x",
            "javascript:alert(1)",
            "data:text/html,hi",
            "mailto:a@example.com",
            "ftp://files.example.com/x",
            "https://duckduckgo.com/y.js?ad_domain=x",
            "https://www.google.com/search?q=x",
            "http://[::1",
            "https://example.com/%zz%",
            "https://example.com/\u00e9\u2028",
            "/relative/path",
            "",
        ]
    ),
    st.text(max_size=30),
)
HTML_TEXT: Final = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["EOF", "<b>bold</b>", "&amp;&#0;&#xD800;&bogus;", "</a></div>", "<!--", "\x00", "<script>x", ""]),
)
DDG_SNIPPETS: Final = (
    '<div class="result"><a class="result__a" href="javascript:alert(1)">js</a></div>',
    '<div class="result"><a class="result__a">no href</a><a class="result__snippet">s</a></div>',
    '<div class="result"><a class="result__a" href="//duckduckgo.com/l/?uddg=%ZZ%E2%82">bad</a></div>',
    '<div class="result"><a class="result__a" href="/l/?x=1&amp;uddg=https%3A%2F%2Fok.example%2F">ok</a></div>',
    '<div class="result"><a class="result__a" href="//duckduckgo.com/l/?uddg=ftp%3A%2F%2Fx">ftp</a></div>',
    '<div class="result"><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2F">empty</a></div>',
    '<div class="result"><a class="result__a" href="?uddg=http%3A%2F%2Fa.example%2F%2B%23x">plus</a></div>',
    '<div class="result"><a class="result__a" href="https://www.google.com/search?q=x">EOF</a></div>',
    '<span class="result__snippet">span snippet</span>',
    '<a class="result__a result__a--x" href="http://a.example/">x</a>',
    '<form id="challenge-form"></form><div class="anomaly-modal__modal"></div>',
    '<div id="links" class="results">',
    "</div></div></body>",
    "<!--",
    "<script>",
    "\x00",
)


@st.composite
def ddg_pages(draw: st.DrawFn) -> bytes:
    """A results page with random results (URLs, titles and snippets inserted as HTML), then
    damaged: tags and junk bytes inserted, slices lost or doubled, cut off."""
    if draw(st.booleans()):
        results = sample_results(QUERY, draw(st.integers(0, 12)))
    else:
        result = st.builds(
            DdgResult, title=HTML_TEXT, url=HREFS, snippet=HTML_TEXT, ad=st.booleans(), direct_href=st.booleans()
        )
        results = draw(st.lists(result, max_size=8))
    page = results_page(draw(st.text(max_size=10)), results).encode("utf-8", "surrogatepass")
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            at = draw(st.integers(0, len(page)))
            page = page[:at] + draw(st.sampled_from(DDG_SNIPPETS)).encode() + page[at:]
        else:
            page = mutate_bytes(draw, page)
    return page


def _check_ddg_sources(sources: list[SearchSource], limit: int) -> None:
    assert len(sources) <= limit
    assert len({s.url for s in sources}) == len(sources)
    for source in sources:
        assert source.url.startswith(("http://", "https://")), source.url
        assert isinstance(source.title, str) and source.title


@settings(PROPERTY, max_examples=examples(100))
@given(page=ddg_pages(), limit=st.integers(1, 30), status=st.sampled_from((200, 202, *ERROR_STATUSES)))
def test_duckduckgo_parser_on_damaged_pages(lab: Lab, page: bytes, limit: int, status: int) -> None:
    from websearch._providers.duckduckgo import parse_results

    _check_ddg_sources(parse_results(page, limit), limit)
    scenario = lab.scenarios("duckduckgo")[0]
    outcome = check_outcome(lambda: scenario.parse(HttpResponse(status, {"content-type": "text/html"}, page)))
    if isinstance(outcome, ProviderResult):
        _check_ddg_sources(list(outcome.sources), 30)


@settings(PROPERTY, max_examples=examples(50))
@given(
    parts=st.lists(st.one_of(st.sampled_from(DDG_SNIPPETS), HTML_TEXT), max_size=12),
    as_text=st.booleans(),
    limit=st.integers(1, 30),
)
def test_duckduckgo_parser_on_random_html(parts: list[str], as_text: bool, limit: int) -> None:
    from websearch._providers.duckduckgo import parse_results

    page = "".join(parts)
    _check_ddg_sources(parse_results(page if as_text else page.encode("utf-8", "surrogatepass"), limit), limit)
