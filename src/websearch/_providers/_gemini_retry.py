"""Gemini's retries: the server's delay hints and the retry loop of `Gemini.search`.

Which failures are retried is decided by the error's class, never by its text: `RateLimited`
(a 429 that no code calls quota), `UpstreamUnavailable` (408, 5xx) and a connection that failed
before any answer. An earlier endpoint gets a single try (a timeout there moves on to the next);
the last one gets 3 retries, waiting the error's `retry_after` (the server's hint, read by
`retry_hint` against the plan's instant) or 1, 2, 4 s, all inside a 5-minute budget on the
injected clock. Anything else (a refused login, a spent quota, a rejected request, a timeout on
the last endpoint) is raised at once, for `Gemini.search` to handle.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Final

from .._types import ProviderResult
from ..errors import (
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimited,
    SearchProviderError,
    UpstreamUnavailable,
)
from ._errors import retry_after_seconds

if TYPE_CHECKING:
    from datetime import datetime

    from .._context import ProviderContext
    from .._wire import HttpRequest, HttpResponse

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
            await ctx.clock.sleep(delay)
    assert error is not None
    raise error


def retry_hint(response: HttpResponse, now: datetime) -> float | None:
    """Seconds the server asks us to wait: `retry-after-ms`, `Retry-After` (read against `now`),
    else the longest hint in the body (RetryInfo `retryDelay`, "Please retry in 12s")."""
    millis = response.headers.get("retry-after-ms", "").strip()
    if _MILLIS_RE.fullmatch(millis):
        return float(millis) / 1000
    after = retry_after_seconds(response.headers, now)
    if after is not None:
        return after
    hints = [float(value) / (1000 if unit.lower() == "ms" else 1) for value, unit in _HINT_RE.findall(response.text())]
    return max(hints) if hints else None
