"""Gemini's errors and retries: Google's error envelope, the server's delay hints, the retry loop.

Retries: 408, 429, 5xx and failed connections; 3 retries on the last endpoint (an earlier one gets a
single try), waiting the server's hint (`retry-after-ms`, `Retry-After`, RetryInfo `retryDelay`,
"Please retry in 12s") or 1, 2, 4 s, all inside a 5-minute budget on the injected clock. Through
Cloud Code a 401, 403 or "invalid auth" 400 raises `AuthRejected`, for the provider to refresh the
login once and try again.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Final

from .._types import SearchResponse
from .._wire import HttpRequest, HttpResponse
from ..errors import ProviderTimeoutError, SearchProviderError
from ._legacy import as_dict, as_list, as_str, classify_http_error, redact_detail, retry_after_seconds

if TYPE_CHECKING:
    from .._context import ProviderContext

MAX_RETRIES: Final = 3
BASE_DELAY: Final = 1.0  # seconds, doubled on each retry
RATE_LIMIT_BUDGET: Final = 300.0  # seconds of waiting per search, on the injected clock
_HINT_RE: Final = re.compile(r'(?:Please retry in |"retryDelay":\s*")(\d+(?:\.\d+)?)(ms|s)\b', re.IGNORECASE)
_INVALID_AUTH_RE: Final = re.compile(r"UNAUTHENTICATED|invalid (?:auth|credential)", re.IGNORECASE)

#: What one request came to: the answer (2xx), the whole error response, or the failure that left no response.
Outcome = SearchResponse | HttpResponse | SearchProviderError


class AuthRejected(Exception):
    """Cloud Code refused the login: worth one forced refresh."""

    def __init__(self, error: SearchProviderError) -> None:
        super().__init__(error.message)
        self.error = error


async def send_with_retries(
    ctx: ProviderContext,
    requests: Sequence[HttpRequest],
    exchange: Callable[[HttpRequest], Awaitable[Outcome]],
    api: str,
    *,
    oauth: bool,
) -> SearchResponse:
    """Try each endpoint's request in order with retries; the first 2xx stream is the answer."""
    started = ctx.clock.monotonic()
    error: SearchProviderError | None = None
    for index, request in enumerate(requests):
        last = index == len(requests) - 1
        tries = MAX_RETRIES + 1 if last else 1
        for attempt in range(tries):
            outcome = await exchange(request)
            hint = None
            if isinstance(outcome, SearchResponse):
                return outcome
            if isinstance(outcome, HttpResponse):
                error = http_error(outcome, api, ctx.clock.now())
                if oauth and _auth_rejected(outcome):
                    raise AuthRejected(error)
                if not _retryable(outcome.status):
                    raise error
                hint = retry_hint(outcome, ctx.clock.now())
            else:  # no response at all: a refused or reset connection, or a timeout
                error = outcome
                if isinstance(outcome, ProviderTimeoutError) and last:
                    raise outcome  # a 60 s silence is not retried (an earlier endpoint moves on)
            if attempt + 1 >= tries:
                break  # on to the next endpoint, or out of retries
            delay = hint if hint is not None else BASE_DELAY * 2**attempt
            if ctx.clock.monotonic() - started + delay > RATE_LIMIT_BUDGET:
                raise error
            await ctx.clock.sleep(delay)
    assert error is not None
    raise error


def http_error(response: HttpResponse, api: str, now: datetime | None = None) -> SearchProviderError:
    """A non-2xx answer (or an error chunk): the shared classification, else Google's envelope."""
    message, status_name, reason = _envelope(response)
    retry = retry_hint(response, now)
    shared = classify_http_error("gemini", response)
    if shared is not None:
        shared.retry_after = retry
        return shared
    status = response.status
    if reason == "API_KEY_INVALID":
        return SearchProviderError(
            "gemini",
            f"Gemini authorization failed ({status} API_KEY_INVALID): {message} Check GEMINI_API_KEY or base URL.",
            status,
        )
    detail = f"{message} ({status_name})" if message and status_name else message or response.safe_text()
    return SearchProviderError(
        "gemini", f"Gemini {api} error ({status}): {detail or 'empty body'}", status, retry_after=retry
    )


def retry_hint(response: HttpResponse, now: datetime | None = None) -> float | None:
    """Seconds the server asks us to wait: headers first, else the longest hint in the body."""
    millis = response.headers.get("retry-after-ms", "")
    if millis.replace(".", "", 1).isdigit():
        return float(millis) / 1000
    after = retry_after_seconds(response.headers, now)
    if after is not None:
        return after
    hints = [float(value) / (1000 if unit.lower() == "ms" else 1) for value, unit in _HINT_RE.findall(response.text())]
    return max(hints) if hints else None


def _envelope(response: HttpResponse) -> tuple[str | None, str | None, str | None]:
    """(message, status, ErrorInfo reason) of `{"error": {...}}` (Cloud Code may wrap it in a list)."""
    try:
        data = response.json()
    except ValueError:
        return None, None, None
    data = data[0] if isinstance(data, list) and data else data
    error = as_dict(as_dict(data).get("error"))
    message = as_str(error.get("message"))
    if message:
        message = redact_detail(response, message) or None
    reasons = [as_str(as_dict(d).get("reason")) for d in as_list(error.get("details"))]
    return message, as_str(error.get("status")), next((r for r in reasons if r), None)


def _retryable(status: int) -> bool:
    return status in (408, 429) or status >= 500


def _auth_rejected(response: HttpResponse) -> bool:
    status = response.status
    return status in (401, 403) or (status == 400 and bool(_INVALID_AUTH_RE.search(response.text())))
