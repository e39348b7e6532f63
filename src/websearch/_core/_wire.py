"""The request and response values that providers build and parse, free of any HTTP library.

Providers turn `SearchParams` into an `HttpRequest` and an `HttpResponse` into a
`SearchResponse` as pure functions; only `transport.py` moves bytes. Both are plain slots
dataclasses (one of each per request: a frozen one costs several times as much to build); treat
them as values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["HttpRequest", "HttpResponse", "loads", "loads_or_none"]


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

    def with_timeout(self, timeout: float) -> HttpRequest:
        """This request with another timeout (made for every search that has a deadline, so
        built directly: `dataclasses.replace` costs four times as much)."""
        return HttpRequest(
            self.method, self.url, self.headers, self.params, self.json, self.form, self.secrets, timeout
        )


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
        """The body as JSON; raises ValueError when it is not (see `loads`)."""
        return loads(self.body)


def loads(data: bytes | str) -> Any:
    """Upstream JSON (a body, a stream event's data); raises ValueError, and only ValueError,
    when it is not JSON.

    orjson decodes it, three times faster than the json module on a 3 KB answer; what orjson
    refuses (NaN, a BOM, UTF-16/32, lone surrogates, nesting past 1024 levels) the json module
    decides, so every document the json module accepts is still accepted, with each lone
    surrogate replaced by U+FFFD (no text that reaches a renderer fails to encode). One
    difference remains: an integer beyond 64 bits comes back as a float, as JavaScript reads it.
    """
    import orjson  # here, not at the top: `websearch providers` imports this module

    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        if isinstance(data, str):
            return _whole_characters(json.loads(data))
        try:
            text = data.decode("utf-8")  # what RFC 8259 requires, and cheaper than sniffing
        except UnicodeDecodeError:
            return _whole_characters(json.loads(data))  # UTF-16/32 with a BOM, or not JSON at all
        return _whole_characters(json.loads(text[1:] if text.startswith("\ufeff") else text))
    except RecursionError:  # nested deeper than the json module recurses
        raise ValueError("JSON nested too deeply") from None


def loads_or_none(data: bytes | str) -> Any:
    """`loads`, or None when `data` is not JSON."""
    try:
        return loads(data)
    except ValueError:
        return None


_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _whole_characters(value: Any) -> Any:
    """`value` with every lone surrogate replaced by U+FFFD (a loop, not recursion: the value
    may be nested deeply)."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if not isinstance(value, (list, dict)):
        return value
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, item in list(items):
            if isinstance(item, str):
                node[key] = _LONE_SURROGATE.sub("\ufffd", item)
            elif isinstance(item, (list, dict)):
                stack.append(item)
        if isinstance(node, dict) and any(isinstance(k, str) and _LONE_SURROGATE.search(k) for k in node):
            fixed = {_LONE_SURROGATE.sub("\ufffd", k): v for k, v in node.items()}
            node.clear()
            node.update(fixed)
    return value
