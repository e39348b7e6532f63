"""Is the test suite hermetic by construction? Add a stub keyless provider and run it.

    python tools/stub_provider_experiment.py [first|middle|last ...]

For each position, a copy of this checkout gets what adding a provider takes (its module, its
loopback fake, one registry row) and nothing else, plus the regenerated docs/parameters.md (a
generated page). The copy is installed into its own virtual environment, and the whole suite runs
there; the script prints the failures per position. The stub is keyless and answers every
search, so wherever a test could reach a provider it was not given, it would show. Nothing is
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

from .._registry import PROVIDERS
from .._types import ProviderResult, SearchParams
from .._wire import HttpRequest, HttpResponse
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
    provider_id = "stubsearch"

    def default_reply(self, request: RecordedRequest) -> Reply:
        n = int(request.args.get("n", "10"))
        q = request.args.get("q", "")
        results = [{"title": f"{q} {i}", "url": f"https://stub.example/{i}", "snippet": q} for i in range(n)]
        return Reply(200, {"results": results})
'''

ROW = (
    '    _row("stubsearch", "Stub", credential_ids=(), keyless=True, explicit_keyless=True, tier="keyless", '
    'fake="FakeStub"),\n'
)
ANCHORS = {
    "first": '    _row(\n        "perplexity",',
    "middle": '    _row("tinyfish",',
    "last": "\n)\n\n#: Every built-in",
}


def place(registry: str, position: str) -> str:
    """The registry source with the stub's row first, in the middle or last of the rows."""
    anchor = ANCHORS[position]
    at = registry.index(anchor)
    if position == "last":
        return registry[:at] + "\n" + ROW.rstrip("\n") + registry[at:]
    return registry[:at] + ROW + registry[at:]


def run(copy: Path, python: Path, position: str, registry: str) -> list[str]:
    (copy / "src/websearch/_registry.py").write_text(place(registry, position))
    docs = subprocess.run([str(python), "-m", "websearch._capabilities"], cwd=copy, capture_output=True, check=True)
    (copy / "docs/parameters.md").write_bytes(docs.stdout)
    order = subprocess.run(
        [str(python), "-c", "import websearch.providers as p; print(p.SEARCH_PROVIDER_ORDER.index('stubsearch'))"],
        cwd=copy,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    proc = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE"], cwd=copy, capture_output=True, text=True
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
        registry = (copy / "src/websearch/_registry.py").read_text()
        subprocess.run([sys.executable, "-m", "venv", str(copy / ".venv")], check=True)
        python = copy / ".venv/bin/python"
        pip = [str(python), "-m", "pip", "install", "--quiet", "-e", ".[test]"]
        subprocess.run(pip, cwd=copy, check=True)
        failures = {position: run(copy, python, position, registry) for position in positions}
    return 1 if any(failures.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:] or ["first", "middle", "last"]))
