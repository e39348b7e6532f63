"""The README's examples run as written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from websearch.testing import FakeDuckDuckGo, FakeServer, RecordedRequest, Reply

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


class FakeWiki(FakeServer):
    provider_id = "wiki"

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.path != "/api/search":
            return Reply(404, {"error": "not found"})
        q, n = request.args["q"], int(request.args["n"])
        hits = [{"title": f"Hit {i}", "url": f"https://wiki.example.com/{i}", "text": f"about {q}"} for i in range(n)]
        return Reply(200, {"hits": hits})


def test_the_provider_of_your_own_runs_against_a_fake(config_dir: Path) -> None:
    block = re.search(r"tested: tests/test_readme.py.*?```python\n(.*?)```", README, re.S)
    assert block is not None, "the README lost its provider example"
    code = block.group(1)
    with FakeWiki() as wiki, FakeDuckDuckGo() as ddg:
        env = {"WEBSEARCH_CONFIG_DIR": str(config_dir), **wiki.env, **ddg.env}
        # the example as written, with the client given this test's environment
        code = code.replace("WebSearch(providers=", "WebSearch(engine=False, env=env, providers=")
        scope: dict[str, Any] = {"env": env}
        exec(compile(code, "README.md", "exec"), scope)
        response = scope["response"]
        assert response.provider == "wiki", response.attempts
        assert [s.title for s in response.sources] == [f"Hit {i}" for i in range(10)]
        assert wiki.last.args == {"q": "vacation policy", "n": "10"}
        assert ddg.requests == []
        ws = scope["WebSearch"](env=env, engine=False, providers=[scope["Wiki"](), "duckduckgo"])
        with ws:
            wiki.enqueue(Reply(503, "down"))
            fell_through = ws.search("q", max_tokens=5)
        assert fell_through.provider == "duckduckgo"
        first = fell_through.attempts[0]
        assert (first.provider, first.error_kind, first.error) == ("wiki", "unavailable", "Wiki API error (503): down")
        assert [n.message for n in first.notices] == ["max_tokens=5 not applied: Wiki does not support it"]
