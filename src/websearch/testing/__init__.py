"""Fake provider servers on 127.0.0.1, shipped for your own tests.

    from websearch import WebSearch
    from websearch.testing import FakeDuckDuckGo

    with FakeDuckDuckGo() as fake:
        with WebSearch(env={**fake.env, "WEBSEARCH_CONFIG_DIR": "/tmp/ws"}) as client:
            client.search("anything")
        assert fake.last.form()[0] == ("q", "anything")

Each fake speaks its provider's real wire format over real HTTP, records every request, and can
be scripted (`enqueue(Reply(...))`) to fail: error statuses, slow, hung, truncated or cut answers.
`FAKES` maps every provider id to its fake; `running_providers()` names the providers whose fakes
are serving now (give that to `WebSearch(providers=...)` and a test can reach nothing else).
`MockTransport(handler)` answers in-process instead, from a function.
"""

from __future__ import annotations

from typing import Final

from .._registry import PROVIDERS, load_object
from ._mock import MockTransport
from ._server import FakeServer, RecordedRequest, Reply, honour_domains, running_providers, site_domains
from .anthropic import FakeAnthropic
from .brave import FakeBrave
from .codex import FakeCodex
from .duckduckgo import DdgResult, FakeDuckDuckGo
from .exa import FakeExa
from .firecrawl import FakeFirecrawl
from .gemini import FakeGemini
from .jina import FakeJina
from .kagi import FakeKagi
from .kimi import FakeKimi
from .parallel import FakeParallel
from .perplexity import FakePerplexity
from .searxng import FakeSearXNG
from .synthetic import FakeSynthetic
from .tavily import FakeTavily
from .tinyfish import FakeTinyFish
from .xai import FakeXAI
from .zai import FakeZai

__all__ = [
    "FAKES",
    "DdgResult",
    "FakeAnthropic",
    "FakeBrave",
    "FakeCodex",
    "FakeDuckDuckGo",
    "FakeExa",
    "FakeFirecrawl",
    "FakeGemini",
    "FakeJina",
    "FakeKagi",
    "FakeKimi",
    "FakeParallel",
    "FakePerplexity",
    "FakeSearXNG",
    "FakeServer",
    "FakeSynthetic",
    "FakeTavily",
    "FakeTinyFish",
    "FakeXAI",
    "FakeZai",
    "MockTransport",
    "RecordedRequest",
    "Reply",
    "honour_domains",
    "running_providers",
    "site_domains",
]

#: The fake of every provider, in chain order, from the registry's rows.
FAKES: Final[dict[str, type[FakeServer]]] = {row.id: load_object(row.fake) for row in PROVIDERS.values()}
