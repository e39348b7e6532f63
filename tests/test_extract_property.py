"""Whatever the bytes and whatever the declared type, `extract` answers with an Extracted or a
FetchError subclass, nothing else. `read` (extract without its last guard) is held to the same, so
a reader letting a library's exception slip is found rather than hidden by the guard."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from websearch._reading._extract import Extracted, extract, read
from websearch._reading._suspicious import find_suspicious, hidden_html_text
from websearch._reading._window import window
from websearch.errors import FetchError

CONTENT_TYPES = [
    None,
    "text/html",
    "text/html; charset=shift_jis",
    "text/html; charset=no-such-charset",
    "application/xhtml+xml",
    "application/pdf",
    "application/json",
    "application/rss+xml",
    "application/atom+xml",
    "application/xml",
    "text/xml",
    "text/plain",
    "text/plain; charset=utf-16",
    "text/markdown",
    "text/csv",
    "image/png",
    "audio/mpeg",
    "video/mp4",
    "application/zip",
    "application/octet-stream",
    "application/x-unknown",
    "",
    ";;;",
]
PREFIXES = [b"", b"%PDF-1.4\n", b"<html>", b"{", b"<?xml version='1.0'?><rss><channel>", b"\xef\xbb\xbf", b"\xff\xfe"]
MARKUP = st.lists(
    st.sampled_from(
        [
            b"<p>",
            b"</p>",
            b"<div id=root>",
            b"</div>",
            b"<script>",
            b"<noscript>",
            b"<item>",
            b"<title>",
            b"obj\n",
            b"stream\n",
            b"endstream",
            b"trailer<<>>",
            b"xref\n0 1\n",
            b'"a":',
            b"[",
            b"]",
            b"\x00",
            b"\xe9",
            b"text ",
        ]
    ),
    max_size=40,
).map(b"".join)
SETTINGS = settings(deadline=None, max_examples=120, suppress_health_check=[HealthCheck.too_slow])


def outcome(fn: object, body: bytes, content_type: str | None, fmt: str) -> None:
    try:
        result = fn(body, url="https://x.example/p", content_type=content_type, charset=None, fmt=fmt)  # type: ignore[operator]
    except FetchError as exc:
        failed: FetchError = exc
    else:
        assert isinstance(result, Extracted)
        assert isinstance(result.text, str) and result.text
        return
    assert failed.url == "https://x.example/p"


@pytest.mark.parametrize("fn", [extract, read], ids=["extract", "read"])
@SETTINGS
@given(
    prefix=st.sampled_from(PREFIXES),
    body=st.one_of(st.binary(max_size=600), MARKUP),
    content_type=st.sampled_from(CONTENT_TYPES),
    fmt=st.sampled_from(["markdown", "text", "html"]),
)
def test_only_fetch_errors_come_out(fn: object, prefix: bytes, body: bytes, content_type: str | None, fmt: str) -> None:
    outcome(fn, prefix + body, content_type, fmt)


@SETTINGS
@given(body=st.binary(max_size=600), start=st.integers(min_value=0, max_value=700))
def test_the_other_readers_take_any_input(body: bytes, start: int) -> None:
    text = body.decode("utf-8", "replace")
    find_suspicious(text)
    hidden_html_text(body)
    if start <= len(text):
        window(text, start, 50)
