"""The request and response values that providers build and parse, free of any HTTP library.

Providers turn `SearchParams` into an `HttpRequest` and an `HttpResponse` into a
`SearchResponse` as pure functions; only `transport.py` moves bytes. Both are plain slots
dataclasses (one of each per request: a frozen one costs several times as much to build); treat
them as values.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HttpRequest", "HttpResponse"]


@dataclass(slots=True)
class HttpRequest:
    """One outbound request. `secrets` are values the transport redacts from any error text."""

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)  # may carry a key
    params: Sequence[tuple[str, str]] = ()
    json: Any = field(default=None, repr=False)
    form: Sequence[tuple[str, str]] | None = field(default=None, repr=False)
    secrets: tuple[str, ...] = field(default=(), repr=False)
    timeout: float | None = None  # overrides the client's per-request timeout


@dataclass(slots=True)
class HttpResponse:
    """A complete response: status, headers (lower-case names) and the body bytes."""

    status: int
    headers: Mapping[str, str] = field(repr=False)  # may carry a session cookie
    body: bytes = field(repr=False)  # may echo a key; a repr goes to logs and tracebacks
    url: str = ""
    secrets: tuple[str, ...] = field(default=(), repr=False)  # the request's, for redacting error text

    @property
    def ok(self) -> bool:
        """A 2xx status."""
        return 200 <= self.status < 300

    def text(self) -> str:
        """The body decoded as UTF-8 (undecodable bytes replaced)."""
        return self.body.decode("utf-8", errors="replace")

    def safe_text(self, limit: int = 300) -> str:
        """The body for an error message: whitespace folded, cut to `limit`, secrets redacted."""
        text = " ".join(self.text().split())
        for secret in self.secrets:
            if len(secret) >= 4:
                text = text.replace(secret, "[redacted]")
        return text[:limit]

    def json(self) -> Any:
        """The body as JSON; raises ValueError when it is not.

        orjson decodes it, three times faster than the json module on a 3 KB answer; what orjson
        refuses (NaN, a BOM, UTF-16/32, lone surrogates) the json module decides, so every
        document the json module accepts is still accepted. One difference remains: an integer
        beyond 64 bits comes back as a float, as JavaScript would read it.
        """
        import orjson  # here, not at the top: `websearch providers` imports this module

        try:
            return orjson.loads(self.body)
        except orjson.JSONDecodeError:
            pass
        try:
            text = self.body.decode("utf-8")  # what RFC 8259 requires, and cheaper than sniffing
        except UnicodeDecodeError:
            return json.loads(self.body)  # UTF-16/32 with a BOM, or not JSON at all
        return json.loads(text[1:] if text.startswith("\ufeff") else text)
