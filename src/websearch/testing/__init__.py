"""Fake provider servers on 127.0.0.1, shipped for your own tests.

    from websearch.testing import FakeDuckDuckGo
    with FakeDuckDuckGo() as fake:
        client = WebSearch(env={**fake.env})
        client.search("anything")
        assert fake.last.form()[0] == ("q", "anything")

Each fake speaks its provider's real wire format over real HTTP, records every request, and can
be scripted (`enqueue(Reply(...))`) to fail: error statuses, slow, hung or truncated answers.
"""

from ._server import FakeServer, RecordedRequest, Reply
from .duckduckgo import DdgResult, FakeDuckDuckGo
from .searxng import FakeSearXNG

__all__ = ["DdgResult", "FakeDuckDuckGo", "FakeSearXNG", "FakeServer", "RecordedRequest", "Reply"]
