"""Gemini's retries: the server's delay hints and the retry loop of `Gemini.search`.

Which failures are retried is decided by the error's class, never by its text: `RateLimited`
(a 429 that no code calls quota), `UpstreamUnavailable` (408, 5xx) and a connection that failed
before any answer. An earlier endpoint gets a single try (a timeout there moves on to the next);
the last one gets 3 retries, waiting the error's `retry_after` (the server's hint, read by
`retry_hint` against the plan's instant) or 1, 2, 4 s, all inside a 5-minute budget on the
injected clock and never past the search's deadline (a wait that would pass it raises the error
at once: a `RateLimited` then becomes a cooldown, and the walk moves on). Anything else (a
refused login, a spent quota, a rejected request, a timeout on the last endpoint) is raised at
once, for `Gemini.search` to handle.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from .._core._types import ProviderResult
from ..errors import (
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimited,
    SearchProviderError,
    UpstreamUnavailable,
)
from ._errors import MAX_RETRY_AFTER, retry_after_seconds

if TYPE_CHECKING:
    from datetime import datetime

    from .._core._context import ProviderContext
    from .._core._wire import HttpRequest, HttpResponse

MAX_RETRIES: Final = 3
BASE_DELAY: Final = 1.0  # seconds, doubled on each retry
RATE_LIMIT_BUDGET: Final = 300.0  # seconds of waiting per search, on the injected clock
#: The errors worth another try of the same request.
RETRIED: Final = (RateLimited, UpstreamUnavailable, ProviderConnectionError)
_HINT_RE: Final = re.compile(r'(?:Please retry in |"retryDelay":\s*")([0-9]+(?:\.[0-9]+)?)(ms|s)\b', re.IGNORECASE)
_MILLIS_RE: Final = re.compile(r"[0-9]+(?:\.[0-9]+)?")

#: What one request came to: the answer, or the error it failed with (a failed response, mapped,
#: or a connection that left no response).
Outcome = ProviderResult | SearchProviderError


async def send_with_retries(
    ctx: ProviderContext,
    requests: Sequence[HttpRequest],
    exchange: Callable[[HttpRequest], Awaitable[Outcome]],
) -> ProviderResult:
    """Try each endpoint's request in order with retries; the first answer wins."""
    started = ctx.clock.monotonic()
    error: SearchProviderError | None = None
    for index, request in enumerate(requests):
        last = index == len(requests) - 1
        tries = MAX_RETRIES + 1 if last else 1
        for attempt in range(tries):
            outcome = await exchange(request)
            if isinstance(outcome, ProviderResult):
                return outcome
            error = outcome
            moves_on = isinstance(error, ProviderTimeoutError) and not last  # a 60 s silence is not retried
            if not isinstance(error, RETRIED) and not moves_on:
                raise error
            if attempt + 1 >= tries:
                break  # on to the next endpoint, or out of retries
            delay = error.retry_after if error.retry_after is not None else BASE_DELAY * 2**attempt
            if ctx.clock.monotonic() - started + delay > RATE_LIMIT_BUDGET:
                raise error
            if ctx.budget.ends is not None and ctx.clock.monotonic() + delay >= ctx.budget.ends:
                raise error  # the wait would pass the search's deadline: the engine cools Gemini down instead
            await ctx.clock.sleep(delay)
    assert error is not None
    raise error


def retry_hint(response: HttpResponse, now: datetime) -> float | None:
    """Seconds the server asks us to wait: `retry-after-ms`, `Retry-After` (read against `now`),
    else the longest hint in the body (RetryInfo `retryDelay`, "Please retry in 12s")."""
    millis = _millis(response.headers)
    if millis is not None:
        return millis
    after = retry_after_seconds(response.headers, now)
    return after if after is not None else _body_hint(response.text())


def envelope_hint(headers: Mapping[str, str], code: str | None, body: Any) -> float | None:
    """The envelope's `retry_hint`: `retry-after-ms`, else the body's hints (the mapper has
    already tried `Retry-After`)."""
    millis = _millis(headers)
    if millis is not None:
        return millis
    try:
        return _body_hint(json.dumps(body) if body is not None else "")
    except RecursionError:  # nested deeper than the json module writes (orjson read it): no hint
        return None


def _millis(headers: Mapping[str, str]) -> float | None:
    millis = headers.get("retry-after-ms", "").strip()
    return _sane(float(millis) / 1000) if _MILLIS_RE.fullmatch(millis) else None


def _body_hint(text: str) -> float | None:
    hints = [float(value) / (1000 if unit.lower() == "ms" else 1) for value, unit in _HINT_RE.findall(text)]
    return _sane(max(hints)) if hints else None


def _sane(seconds: float) -> float | None:
    """A hint longer than `MAX_RETRY_AFTER` (or infinite: a few hundred digits) is junk, as for Retry-After."""
    return seconds if seconds <= MAX_RETRY_AFTER else None
