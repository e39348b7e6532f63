"""The error mapping every provider shares: classes from statuses and codes (never prose), the
message shapes, Retry-After against the injected clock, and junk hints ignored."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from websearch._providers._errors import (
    DEFAULT_ENVELOPE,
    ErrorEnvelope,
    class_for_status,
    http_error,
    retry_after_seconds,
)
from websearch.errors import (
    AuthenticationFailed,
    QuotaExhausted,
    RateLimited,
    RequestRejected,
    SearchProviderError,
    UpstreamUnavailable,
)
from websearch.providers import HttpResponse, ProviderInfo

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
INFO = ProviderInfo("acme", "Acme")
ENVELOPE = ErrorEnvelope(codes={"OUT_OF_CREDIT": QuotaExhausted, "SLOW_DOWN": RateLimited})


def response(status: int, body: object = b"", **headers: str) -> HttpResponse:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return HttpResponse(status, {k.lower().replace("_", "-"): v for k, v in headers.items()}, raw)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("30", 30.0),
        ("1.5", 1.5),
        ("  7 ", 7.0),
        ("Mon, 30 Nov 2026 12:00:45 GMT", 45.0),
        ("Mon, 30 Nov 2026 11:00:00 GMT", 0.0),  # a date in the past: retry now
        ("٣٠", None),  # Unicode digits are not delta-seconds
        ("NaN", None),
        ("-5", None),
        ("inf", None),
        ("1e9", None),
        ("99999999999", None),  # longer than a week: junk, not a plan
        ("soon", None),
        ("", None),
    ],
)
def test_retry_after_is_read_against_the_injected_clock_and_junk_is_ignored(value: str, seconds: float | None) -> None:
    assert retry_after_seconds({"retry-after": value}, NOW) == seconds


@pytest.mark.parametrize(
    ("status", "body", "cls", "message"),
    [
        (
            401,
            {"error": {"message": "bad key"}},
            AuthenticationFailed,
            "Acme authorization failed (401). Check API key or base URL.",
        ),
        (402, {}, QuotaExhausted, "acme: 402 credits exhausted"),
        (
            429,
            {"error": {"code": "OUT_OF_CREDIT", "message": "no credit"}},
            QuotaExhausted,
            "acme: credits exhausted (OUT_OF_CREDIT): no credit",
        ),
        (400, {"error": {"code": "SLOW_DOWN"}}, RateLimited, 'Acme API error (400): {"error": {"code": "SLOW_DOWN"}}'),
        (503, b"", UpstreamUnavailable, "Acme API error (503): Service Unavailable"),
        (529, {"message": "overloaded"}, UpstreamUnavailable, "Acme API error (529): overloaded"),
        (422, {"detail": "Insufficient parameters"}, RequestRejected, "Acme API error (422): Insufficient parameters"),
        (418, b"teapot", RequestRejected, "Acme API error (418): teapot"),
    ],
)
def test_the_class_comes_from_a_code_or_the_status(status: int, body: object, cls: type, message: str) -> None:
    error = http_error(INFO, ENVELOPE, response(status, body), NOW)
    assert (type(error), error.message, error.status, error.provider) == (cls, message, status, "acme")


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, RequestRejected),
        (401, AuthenticationFailed),
        (402, QuotaExhausted),
        (403, AuthenticationFailed),  # a refused key, as often as a 401
        (404, RequestRejected),
        (408, UpstreamUnavailable),  # the upstream timed out waiting: passing, not the request's fault
        (409, RequestRejected),
        (429, RateLimited),
        (499, RequestRejected),
        (500, UpstreamUnavailable),
        (529, UpstreamUnavailable),
        (599, UpstreamUnavailable),
        (600, SearchProviderError),
        (302, SearchProviderError),
    ],
)
def test_the_status_alone_decides_the_class(status: int, cls: type) -> None:
    assert class_for_status(status) is cls
    assert type(http_error(INFO, DEFAULT_ENVELOPE, response(status), NOW)) is cls


@pytest.mark.parametrize(
    ("status", "text"),
    [(500, "quota service unavailable"), (400, "insufficient query"), (422, "Insufficient parameters"), (429, "quota")],
)
def test_quota_never_comes_from_prose(status: int, text: str) -> None:
    error = http_error(INFO, ENVELOPE, response(status, {"message": text}), NOW)
    assert not isinstance(error, QuotaExhausted)
    assert "credits exhausted" not in error.message


def test_a_rate_limit_says_when_to_retry_and_keeps_the_hint() -> None:
    error = http_error(INFO, ENVELOPE, response(429, {"message": "slow"}, Retry_After="12"), NOW)
    assert (type(error), error.retry_after, error.message) == (
        RateLimited,
        12.0,
        "Acme API error (429): slow; retry after 12 s",
    )


@pytest.mark.parametrize(
    ("body", "headers", "seconds"),
    [
        ({"error": {"wait": 40}}, {}, 40.0),
        ({"error": {"wait": 2.5}, "later": 9}, {}, 2.5),  # the first path that holds a delay
        ({"error": {"wait": True}, "later": 9}, {}, 9.0),  # a boolean is no delay
        ({"error": {"wait": -1}}, {}, None),
        ({"error": {"wait": 1e12}}, {}, None),  # longer than a week: junk
        ({"error": {"wait": "40"}}, {}, None),  # words are `retry_hint`'s
        ({"error": {"wait": 40}}, {"Retry_After": "3"}, 3.0),  # the header wins
    ],
)
def test_a_delay_in_the_body_is_read_from_the_envelopes_paths(
    body: object, headers: dict[str, str], seconds: float | None
) -> None:
    envelope = ErrorEnvelope(retry_after=(("error", "wait"), ("later",)))
    assert http_error(INFO, envelope, response(429, body, **headers), NOW).retry_after == seconds


def test_errors_inside_a_2xx_take_the_status_their_code_means() -> None:
    envelope = ErrorEnvelope(code_status={"2": 401, "101": 402}, codes={"101": QuotaExhausted}, embedded_status=502)
    auth = http_error(INFO, envelope, response(200, {"error": [{"code": 2, "message": "no"}]}), NOW)
    quota = http_error(INFO, envelope, response(200, {"error": [{"code": 101, "message": "pay"}]}), NOW)
    other = http_error(INFO, envelope, response(200, {"error": [{"code": 7, "message": "odd"}]}), NOW)
    assert (type(auth), auth.status) == (AuthenticationFailed, 401)
    assert (type(quota), quota.status, quota.message) == (QuotaExhausted, 402, "acme: 402 credits exhausted (101): pay")
    assert (type(other), other.status, other.message) == (UpstreamUnavailable, 502, "Acme API error (502): odd (7)")


def test_variants_are_a_flag_set_from_the_upstreams_code_or_status() -> None:
    envelope = ErrorEnvelope(variant_codes=frozenset({"BAD_SHAPE"}), variant_statuses=frozenset({422}))
    assert http_error(INFO, envelope, response(400, {"code": "BAD_SHAPE"}), NOW).retry_variant is True
    assert http_error(INFO, envelope, response(422, {}), NOW).retry_variant is True
    assert http_error(INFO, envelope, response(400, {"message": "try another shape"}), NOW).retry_variant is False


def test_upstream_text_is_redacted_and_a_lone_surrogate_does_not_crash() -> None:
    secret = "sk-acme-0123456789abcdef"
    raw = HttpResponse(
        500, {}, json.dumps({"message": f"bad key {secret}", "code": secret}).encode(), secrets=(secret,)
    )
    error = http_error(INFO, ENVELOPE, raw, NOW)
    assert secret not in error.message and "[redacted]" in error.message
    lone = HttpResponse(500, {}, b'{"message": "broken \\ud800 text"}')
    assert isinstance(http_error(INFO, ENVELOPE, lone, NOW), SearchProviderError)
