"""Is the test suite hermetic by construction, and is a provider only its row? Add two stub
keyless providers and run the suite.

    python tools/stub_provider_experiment.py [first|middle|last ...]

For each position, a copy of this checkout gets what adding a provider takes and nothing else:
a keyless JSON engine (its module, its loopback fake, one registry row) and a keyless HTML engine
built on the keyless-engine kit (`_providers/_kit.py`: its module, its fake, its test file, one
row), plus the regenerated pages (docs/parameters.md and the README's provider list, both
generated from the rows). The copy is installed into its own virtual environment, and the whole
suite runs there; the script prints the failures per position. The stubs are keyless and answer
every search, so wherever a test could reach a provider it was not given, or a list of providers
is kept by hand (`websearch.testing`'s exports, a count in the docs), it would show. Nothing is
changed in this checkout.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MODULE = '''"""Stub: a keyless JSON engine, added only by tools/stub_provider_experiment.py."""

from __future__ import annotations

from typing import Any, ClassVar, Final

from .._core._registry import PROVIDERS
from .._core._types import ProviderResult, SearchParams
from .._core._wire import HttpRequest, HttpResponse
from ._base import HttpProvider, Plan, Support, as_list, as_str, count, make_source

URL: Final = "https://stub.invalid/search"


class Stub(HttpProvider):
    info = PROVIDERS["stubsearch"]
    supports: ClassVar[dict[str, Support]] = {"limit": "native", "num_search_results": "native"}

    def plan(self, params: SearchParams, ctx: Any) -> Plan:
        plan = self.new_plan(params, ctx)
        plan.limit, plan.notices = count(params, 10, 20, self.label)
        query = [("q", params.query), ("n", str(plan.limit))]
        plan.request = HttpRequest("GET", ctx.endpoint(self.id, URL), params=query)
        return plan

    def parse(self, response: HttpResponse, plan: Plan) -> ProviderResult:
        if not response.ok:
            raise self.error(response, plan)
        items = [r for r in as_list(self.json_object(response).get("results")) if isinstance(r, dict)]
        sources = [
            make_source(url, r.get("title"), r.get("snippet"), None, plan.now)
            for r in items
            if (url := as_str(r.get("url")))
        ]
        return ProviderResult(sources=tuple(sources[: plan.limit]))


PROVIDER: Final = Stub()
'''

FAKE = '''"""A fake of the stub engine (tools/stub_provider_experiment.py)."""

from __future__ import annotations

from ._server import FakeServer, RecordedRequest, Reply


class FakeStub(FakeServer):
    """The stub engine's JSON API: `n` results for `q`."""

    provider_id = "stubsearch"

    def default_reply(self, request: RecordedRequest) -> Reply:
        n = int(request.args.get("n", "10"))
        q = request.args.get("q", "")
        results = [{"title": f"{q} {i}", "url": f"https://stub.example/{i}", "snippet": q} for i in range(n)]
        return Reply(200, {"results": results})
'''

HTML_MODULE = '''"""Stub: a keyless HTML engine on the kit, added only by tools/stub_provider_experiment.py."""

from __future__ import annotations

from typing import Final

from selectolax.lexbor import LexborHTMLParser

from .._core._registry import PROVIDERS
from .._core._types import SearchSource
from .._core._wire import HttpResponse
from ._base import Plan
from ._html import browser_headers, keep, node_text, web_url
from ._kit import QUERY, Challenge, KeylessEngine, Params
from ._paging import Page

URL: Final = "https://stubhtml.invalid/search"
HEADERS: Final = browser_headers("none")
WINDOWS: Final = {"day": "d", "week": "w", "month": "m"}
CAPTCHA_MESSAGE: Final = "StubHtml blocked the request with a CAPTCHA."
PAGE_SIZE: Final = 10


class StubHtml(KeylessEngine[Page]):
    info = PROVIDERS["stubhtml"]
    url = URL
    headers = HEADERS
    params = (("q", QUERY), ("hl", "en"))
    max_results = 20
    max_pages = 2
    windows = WINDOWS
    window_param = "t"
    challenges = (Challenge(CAPTCHA_MESSAGE, "form#captcha", hints=(b"captcha",), results=(b'<ol id="results"',)),)

    def page_params(self, n: int) -> Params:
        return [("page", str(n))] if n > 1 else []

    def read(self, response: HttpResponse, plan: Plan, n: int) -> Page:
        items = LexborHTMLParser(response.body).css("ol#results > li")
        sources: list[SearchSource] = []
        seen: set[str] = set()
        for item in items:
            link, text = item.css_first("a.title"), item.css_first("p")
            url = web_url(link.attrs.get("href") or "") if link is not None else None
            if link is not None and keep(url, seen):
                sources.append(SearchSource(node_text(link), url, node_text(text) if text is not None else None))
        return Page(sources, more=len(items) >= PAGE_SIZE)


PROVIDER: Final = StubHtml()
'''

HTML_FAKE = '''"""A fake of the stub HTML engine (tools/stub_provider_experiment.py): 15 results, 10 a page."""

from __future__ import annotations

from html import escape

from ._server import FakeServer, RecordedRequest, Reply

CAPTCHA = "<html><body><form id=captcha action=/verify><input name=answer></form></body></html>"


class FakeStubHtml(FakeServer):
    """The stub HTML engine's result pages, 10 results a page, and a captcha for "captcha"."""

    provider_id = "stubhtml"

    def default_reply(self, request: RecordedRequest) -> Reply:
        q = request.args.get("q", "")
        if "captcha" in q:
            return Reply(200, CAPTCHA, content_type="text/html")
        first = 10 * (int(request.args.get("page", "1")) - 1)
        items = "".join(
            f'<li><a class="title" href="https://stubhtml.example/{i}">{escape(q)} {i}</a><p>about {escape(q)}</p></li>'
            for i in range(first, min(first + 10, 15))
        )
        page = f'<html><body><form><input name=q value="{escape(q)}"></form><ol id="results">{items}</ol></body></html>'
        return Reply(200, page, content_type="text/html")
'''

HTML_TEST = '''"""The stub HTML engine on the kit (added only by tools/stub_provider_experiment.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import FakeClock, make_client
from websearch.testing.stubhtml import FakeStubHtml


@pytest.fixture
def stub() -> Iterator[FakeStubHtml]:
    with FakeStubHtml() as fake:
        yield fake


async def test_a_search_reads_the_page_and_asks_the_next_for_a_count(config_dir: Path, stub: FakeStubHtml) -> None:
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **stub.env}
    async with make_client(env=env, clock=FakeClock()) as ws:
        one = await ws.asearch("kit", provider="stubhtml", recency="week")
        more = await ws.asearch("kit", provider="stubhtml", limit=15)
    assert one.ok and [s.title for s in one.sources][:2] == ["kit 0", "kit 1"] and len(one.sources) == 10
    assert stub.requests[0].query == (("q", "kit"), ("hl", "en"), ("t", "w"))
    assert more.ok and len(more.sources) == 15
    assert [r.args.get("page") for r in stub.requests[1:]] == [None, "2"]


async def test_the_captcha_is_blocked(config_dir: Path, stub: FakeStubHtml) -> None:
    env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **stub.env}
    async with make_client(env=env, clock=FakeClock()) as ws:
        response = await ws.asearch("captcha", provider="stubhtml")
    assert not response.ok and response.attempts[0].error_kind == "blocked"
'''

ROW = (
    '    _row("stubsearch", "Stub", credential_ids=(), keyless=True, explicit_keyless=True, tier="keyless", '
    'fake="FakeStub"),\n'
    '    _row("stubhtml", "StubHtml", credential_ids=(), keyless=True, tier="keyless", fake="FakeStubHtml"),\n'
)
ANCHORS = {
    "first": '    _row(\n        "perplexity",',
    "middle": '    _row("tinyfish",',
    "last": "\n)\n\n#: Every built-in",
}


def place(registry: str, position: str) -> str:
    """The registry source with the stubs' rows first, in the middle or last of the rows."""
    anchor = ANCHORS[position]
    at = registry.index(anchor)
    if position == "last":
        return registry[:at] + "\n" + ROW.rstrip("\n") + registry[at:]
    return registry[:at] + ROW + registry[at:]


def run(copy: Path, python: Path, position: str, registry: str) -> list[str]:
    (copy / "src/websearch/_core/_registry.py").write_text(place(registry, position))
    (copy / "README.md").write_bytes((ROOT / "README.md").read_bytes())  # the list of the previous position
    generate = [str(python), "-m", "websearch._engine._capabilities", "docs/parameters.md", "--readme", "README.md"]
    generated = subprocess.run(generate, cwd=copy, capture_output=True, text=True)
    if generated.returncode:
        raise SystemExit(f"generating the provider lists failed:\n{generated.stderr[-2000:]}")
    order = subprocess.run(
        [str(python), "-c", "import websearch.providers as p; print(p.SEARCH_PROVIDER_ORDER.index('stubsearch'))"],
        cwd=copy,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    proc = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider", "-rfE"],
        cwd=copy,
        capture_output=True,
        text=True,
    )
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", proc.stdout, re.M)
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-500:]
    print(f"stub {position} (chain index {order}): {summary}")
    for name in failed:
        print(f"  {name}")
    return failed


def main(positions: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="stub-provider-") as tmp:
        copy = Path(tmp) / "websearch"
        tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        for name in tracked.splitlines():
            target = copy / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target)
        (copy / "src/websearch/_providers/stubsearch.py").write_text(MODULE)
        (copy / "src/websearch/testing/stubsearch.py").write_text(FAKE)
        (copy / "src/websearch/_providers/stubhtml.py").write_text(HTML_MODULE)
        (copy / "src/websearch/testing/stubhtml.py").write_text(HTML_FAKE)
        (copy / "tests/test_stubhtml.py").write_text(HTML_TEST)
        registry = (copy / "src/websearch/_core/_registry.py").read_text()
        subprocess.run([sys.executable, "-m", "venv", str(copy / ".venv")], check=True)
        python = copy / ".venv/bin/python"
        pip = [str(python), "-m", "pip", "install", "--quiet", "-e", ".[test]"]
        subprocess.run(pip, cwd=copy, check=True)
        failures = {position: run(copy, python, position, registry) for position in positions}
    return 1 if any(failures.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:] or ["first", "middle", "last"]))
