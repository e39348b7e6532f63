"""HTTP errors, mapped in one place: each provider declares its envelope, `http_error` applies it.

An `ErrorEnvelope` says where a provider's error body keeps its message and its code, what its
codes mean (a code → class table: Brave's `QUOTA_LIMITED`, Exa's tags, Kagi's and Z.AI's numbers),
and how to phrase a refused login. `http_error` then picks the class from the code, else from the
status (401/403 auth, 402 quota, 429 rate limited, 408 and 5xx unavailable, other 4xx rejected),
and writes the message the same way for every provider:

- auth:    `<Label> authorization failed (<status>[ <code>]). <auth_hint>` (the spec's wording)
- quota:   `<id>: [<status> ]credits exhausted[ (<code>)][: <detail>]` (the status when it, not a
           code, said quota: 402, Tavily's 432)
- others:  `<prefix> (<status>): <detail>[ (<code>)]`, and `; retry after <n> s` when rate limited

Quota comes only from a status or a code, never from the body's prose. `Retry-After` is read
against the injected clock, as seconds or an HTTP date; junk (Unicode digits, NaN, negative,
absurdly large) is ignored. Every upstream text is folded, cut and stripped of the request's
secrets before it reaches a message.
"""

from __future__ import annotations

import email.utils
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any, Final

from .._core._registry import ProviderInfo
from .._core._wire import HttpResponse
from ..errors import (
    AuthenticationFailed,
    QuotaExhausted,
    RateLimited,
    RequestRejected,
    SearchProviderError,
    UpstreamUnavailable,
)

__all__ = [
    "DEFAULT_ENVELOPE",
    "ErrorClass",
    "ErrorEnvelope",
    "class_for_status",
    "dig",
    "http_error",
    "redact_detail",
    "retry_after_seconds",
    "status_phrase",
]

ErrorClass = type[SearchProviderError]
#: A path into a JSON body: keys and list indexes, e.g. ("error", "message") or ("errors", 0, "detail").
Path = tuple[str | int, ...]
#: Longest Retry-After honoured (a week): anything longer is junk, not a plan.
MAX_RETRY_AFTER: Final = 7 * 86400.0
_SECONDS_RE: Final = re.compile(r"[0-9]+(?:\.[0-9]+)?")


@dataclass(frozen=True, slots=True)
class ErrorEnvelope:
    """Where a provider's error body keeps its message and code, and what the codes mean.

    `message` and `code` are paths tried in order (the first non-empty string, or number for a
    code, wins). `codes` maps a code (compared as text) to an error class and `status_classes` a
    status (Tavily's 432); otherwise the status decides (`class_for_status`). For an error
    reported inside a 2xx, `code_status` maps its code to the HTTP-like status it amounts to, else
    `embedded_status`. `variant_codes`, `variant_statuses` and `variant_pattern` (matched against
    the upstream's own detail) mark errors after which the provider may try its next request
    shape. `prefix` leads other messages (default `<Label> API error`); `auth_hint` follows a
    refused login; `auth_detail` adds the provider's own words to it; `statuses` gives a fixed
    message for a status; `retry_after` are paths to a delay in seconds in the body (the first
    number from 0 to `MAX_RETRY_AFTER` wins) and `retry_hint(headers, code, body)` reads what no
    path can (a reset header, a delay in words), both only when `Retry-After` is absent; `read`
    replaces the paths for envelopes they cannot describe; `body_in_message=False` keeps a body the
    envelope does not describe (an HTML page) out of the message.
    """

    message: tuple[Path, ...] = (("error", "message"), ("message",), ("detail",), ("error",))
    code: tuple[Path, ...] = (("error", "code"), ("code",))
    codes: Mapping[str, ErrorClass] = field(default_factory=dict)
    status_classes: Mapping[int, ErrorClass] = field(default_factory=dict)
    code_status: Mapping[str, int] = field(default_factory=dict)
    embedded_status: int = 502
    variant_codes: frozenset[str] = frozenset()
    variant_statuses: frozenset[int] = frozenset()
    variant_pattern: re.Pattern[str] | None = None
    prefix: str | None = None
    auth_hint: str = "Check API key or base URL."
    auth_detail: bool = False
    statuses: Mapping[int, str] = field(default_factory=dict)
    retry_after: tuple[Path, ...] = ()
    retry_hint: Callable[[Mapping[str, str], str | None, Any], float | None] | None = None
    read: Callable[[Any], tuple[str | None, str | None]] | None = None
    body_in_message: bool = True


DEFAULT_ENVELOPE: Final = ErrorEnvelope()


def class_for_status(status: int) -> ErrorClass:
    """The error class an HTTP status means when no code says otherwise."""
    if status in (401, 403):
        return AuthenticationFailed
    if status == 402:
        return QuotaExhausted
    if status == 429:
        return RateLimited
    if status in (408, 529) or 500 <= status < 600:
        return UpstreamUnavailable
    if 400 <= status < 500:
        return RequestRejected
    return SearchProviderError


def http_error(
    info: ProviderInfo,
    envelope: ErrorEnvelope,
    response: HttpResponse,
    now: datetime,
    *,
    status: int | None = None,
    body: Any = None,
) -> SearchProviderError:
    """The error for a failed response: its class, message and retry hint, per `envelope`.

    A non-2xx response keeps its status. For an error inside a 2xx (Kagi's, Z.AI's), the status
    is `status` when given, else what the code amounts to (`code_status`), else
    `embedded_status`. `body` is the decoded JSON when the caller already has it.
    """
    data = body if body is not None else _json(response)
    code, detail = envelope.read(data) if envelope.read is not None else _read(envelope, data)
    if detail is not None:
        detail = redact_detail(response, detail) or None
    if code is not None:
        code = redact_detail(response, code, 80) or None
    if status is None:
        embedded = envelope.code_status.get(code or "", envelope.embedded_status)
        status = embedded if response.ok else response.status
    by_code = envelope.codes.get(code or "")
    cls = by_code or envelope.status_classes.get(status) or class_for_status(status)
    retry = retry_after_seconds(response.headers, now)
    if retry is None:
        retry = next((r for path in envelope.retry_after if (r := _delay(dig(data, path))) is not None), None)
    if retry is None and envelope.retry_hint is not None:
        retry = envelope.retry_hint(response.headers, code, data)
    variant = (
        (code is not None and code in envelope.variant_codes)
        or status in envelope.variant_statuses
        or bool(envelope.variant_pattern and detail and envelope.variant_pattern.search(detail))
    )
    message = envelope.statuses.get(status) or _message(
        info, envelope, cls, status, by_code is not None, code, detail, response, retry
    )
    return cls(info.id, message, status, retry_after=retry, retry_variant=variant)


def _message(
    info: ProviderInfo,
    envelope: ErrorEnvelope,
    cls: ErrorClass,
    status: int,
    by_code: bool,
    code: str | None,
    detail: str | None,
    response: HttpResponse,
    retry: float | None,
) -> str:
    """The message for `cls`; `by_code` says a code, not the status, chose the class."""
    if cls is AuthenticationFailed:
        where = f"{status} {code}" if code else str(status)
        text = f"{info.label} authorization failed ({where}). {envelope.auth_hint}".rstrip()
        return f"{text} {info.label} said: {detail}" if envelope.auth_detail and detail else text
    if cls is QuotaExhausted:
        shown = f"{status} " if status == 402 or (not by_code and status not in (200, 429)) else ""
        text = f"{info.id}: {shown}credits exhausted"
        text += f" ({code})" if code else ""
        return f"{text}: {detail}" if detail else text
    body = response.safe_text() if envelope.body_in_message else ""
    shown = f"{detail} ({code})" if detail and code else detail or body or status_phrase(status)
    text = f"{envelope.prefix or info.label + ' API error'} ({status})"
    if envelope.body_in_message or detail:
        text += f": {shown}"
    if cls is RateLimited and retry is not None:
        text += f"; retry after {retry:g} s"
    return text


def _read(envelope: ErrorEnvelope, data: Any) -> tuple[str | None, str | None]:
    code = next((c for path in envelope.code if (c := _code(dig(data, path))) is not None), None)
    detail = next((d for path in envelope.message if (d := _text(dig(data, path))) is not None), None)
    return code, detail


def dig(data: Any, path: Path) -> Any:
    """The value at `path` in decoded JSON, or None; a list met on the way yields its first item."""
    for step in path:
        if isinstance(data, list) and isinstance(step, str):
            data = data[0] if data else None
        if isinstance(step, int):
            data = data[step] if isinstance(data, list) and -len(data) <= step < len(data) else None
        elif isinstance(data, dict):
            data = data.get(step)
        else:
            return None
    if isinstance(data, list):
        return data[0] if data else None
    return data


def _delay(value: Any) -> float | None:
    """Seconds from a JSON number in a body, or None for anything else (a boolean, a negative or
    endless delay)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_RETRY_AFTER:
        return None
    return float(value)


def _code(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    return value.strip() or None if isinstance(value, str) else None


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _json(response: HttpResponse) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def retry_after_seconds(headers: Mapping[str, str], now: datetime) -> float | None:
    """`Retry-After` as seconds from `now` (delta-seconds or an HTTP date), or None for junk."""
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    if _SECONDS_RE.fullmatch(value):
        seconds = float(value)
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = max(0.0, (when - now).total_seconds())
    return seconds if seconds <= MAX_RETRY_AFTER else None


def redact_detail(response: HttpResponse, text: str, limit: int = 300) -> str:
    """`text` taken from an upstream answer, folded, cut and with the request's secrets redacted."""
    return HttpResponse(response.status, {}, text.encode("utf-8", "replace"), secrets=response.secrets).safe_text(limit)


def status_phrase(status: int) -> str:
    """ "Service Unavailable" for 503; for an error whose body says nothing."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "no body"
