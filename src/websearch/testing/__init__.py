"""Fake provider servers on 127.0.0.1, shipped for your own tests.

    from websearch import WebSearch
    from websearch.testing import FakeDuckDuckGo

    with FakeDuckDuckGo() as fake:
        with WebSearch(env={**fake.env, "WEBSEARCH_CONFIG_DIR": "/tmp/ws"}) as client:
            client.search("anything")
        assert fake.last.form()[0] == ("q", "anything")

Each fake speaks its provider's real wire format over real HTTP, records every request, and can
be scripted (`enqueue(Reply(...))`) to fail: error statuses, slow, hung, truncated or cut answers.
`FAKES` maps every provider id to its fake (each also exported by its class name, from the
registry's rows); `running_providers()` names the providers whose fakes
are serving now (give that to `WebSearch(providers=...)` and a test can reach nothing else).
`MockTransport(handler)` answers in-process instead, from a function.

`FakeSite(pages)` is a web site for `fetch` and `research`: pages by path, robots.txt, an
imitation DNS (`site.resolver`, a `FakeResolver`, which also serves names of your own, and
names that rebind) and the settings that let a client reach it:

    from websearch.testing import FakeSite

    with FakeSite({"/doc": "<html><title>Doc</title><body><p>Some text.</p></body></html>"}) as site:
        with WebSearch(settings=site.settings(), resolver=site.resolver) as client:
            page = client.fetch(site.url("/doc"))
"""

from __future__ import annotations

from typing import Any, Final

from .._core._registry import PROVIDERS, load_object
from ._mock import MockTransport
from ._server import FakeServer, RecordedRequest, Reply, honour_domains, running_providers, site_domains
from ._site import FakeResolver, FakeSite
from .duckduckgo import DdgResult

#: The fake of every provider, in chain order, from the registry's rows (their `fake=` field).
FAKES: Final[dict[str, type[FakeServer]]] = {row.id: load_object(row.fake) for row in PROVIDERS.values()}
globals().update({fake.__name__: fake for fake in FAKES.values()})

#: The helpers, then every provider's fake by its class name (`FakeBrave`, ...), from the rows:
#: a provider added to the registry is exported here without editing this module.
__all__ = [
    "FAKES",
    "DdgResult",
    "FakeServer",
    "FakeResolver",
    "FakeSite",
    "MockTransport",
    "RecordedRequest",
    "Reply",
    "honour_domains",
    "running_providers",
    "site_domains",
    *sorted(fake.__name__ for fake in FAKES.values()),
]


def __getattr__(name: str) -> Any:
    """A fake named in `__all__` is a module attribute already; this only tells type checkers
    that the fakes, set from the registry at import, exist."""
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
