"""JSON in and out of the wire values: orjson first, the json module for what orjson refuses."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from websearch._core._budget import Budget
from websearch._http._transport import json_text
from websearch.providers import HttpRequest, HttpResponse


def body(data: bytes) -> HttpResponse:
    return HttpResponse(200, {"content-type": "application/json"}, data)


def test_plain_json_is_decoded() -> None:
    assert body(b'{"a": [1, 2.5, "\xc3\xa9", null, true]}').json() == {"a": [1, 2.5, "é", None, True]}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ('\ufeff{"a": 1}'.encode(), {"a": 1}),  # a UTF-8 byte order mark
        ('{"a": "é"}'.encode("utf-16"), {"a": "é"}),  # UTF-16 with its BOM
        ('{"a": "é"}'.encode("utf-32"), {"a": "é"}),
        (b'"\\ud800"', "\ufffd"),  # a lone surrogate escape: read, and replaced by U+FFFD
    ],
)
def test_what_orjson_refuses_the_json_module_still_reads(data: bytes, expected: object) -> None:
    assert body(data).json() == expected


def test_nan_and_infinity_are_read_as_the_json_module_reads_them() -> None:
    value = body(b'{"a": NaN, "b": Infinity, "c": 1e400}').json()
    assert math.isnan(value["a"]) and value["b"] == math.inf and value["c"] == math.inf


@pytest.mark.parametrize("data", [b"", b"not json", b'{"a": ', b"\xff\xfe\x00"])
def test_not_json_is_a_value_error(data: bytes) -> None:
    with pytest.raises(ValueError, match=r"Expecting value|can't decode"):  # json_body's contract
        body(data).json()


def test_request_json_is_compact_utf8_text() -> None:
    text = json_text({"query": "café", "max_results": 5, "include_raw_content": False, "domains": ("a.com",)})
    assert text == '{"query":"café","max_results":5,"include_raw_content":false,"domains":["a.com"]}'


@pytest.mark.parametrize("value", [{1: "a"}, {"n": 2**70}])
def test_what_orjson_cannot_write_the_json_module_writes(value: object) -> None:
    assert json.loads(json_text(value)) == json.loads(json.dumps(value))


def test_the_repr_of_a_response_shows_no_body_or_headers() -> None:
    response = HttpResponse(401, {"set-cookie": "session=sk-SECRET-0001"}, b'{"error": "bad key sk-SECRET-0001"}')
    assert "sk-SECRET-0001" not in repr(response)
    assert repr(response) == "HttpResponse(status=401, url='')"


def test_a_request_with_another_timeout_keeps_every_other_field() -> None:
    import dataclasses

    from websearch.providers import HttpRequest

    values = {"method": "POST", "url": "https://api.example/search", "headers": {"X-Key": "k"}, "params": (("q", "a"),)}
    values |= {"json": {"q": "a"}, "form": (("f", "1"),), "secrets": ("k",), "timeout": 60.0}
    assert set(values) == {f.name for f in dataclasses.fields(HttpRequest)}  # a new field must be added here
    request = HttpRequest(**values)
    assert request.with_timeout(1.5) == dataclasses.replace(request, timeout=1.5)
    assert request.timeout == 60.0


async def test_a_request_is_cut_to_the_whole_millisecond_below_what_remains_of_the_deadline(tmp_path: Path) -> None:
    """Never past the deadline; and the timer setting of a cut value is made once, as the
    searches in a row that ask for the same one share it."""
    from conftest import FakeClock
    from websearch._core._credentials import CredentialStore
    from websearch._core._settings import Settings
    from websearch._http._transport import _timeout
    from websearch.providers import ProviderContext

    sent: list[HttpRequest] = []

    class Bounding:
        bounds_each_request = True
        timeout = 60.0

        async def send(self, provider: str, request: HttpRequest) -> HttpResponse:
            sent.append(request)
            return body(b"{}")

    clock = FakeClock()
    ctx = ProviderContext({}, Settings.load(tmp_path, {}), CredentialStore(tmp_path / "agent.db"), Bounding(), clock)  # type: ignore[arg-type]
    request = HttpRequest("GET", "http://127.0.0.1/search", {})
    for remaining, cut in [(2.5009, 2.5), (2.5001, 2.5), (0.0004, 0.001), (90.0, None)]:
        ctx = ctx.for_attempt(Budget.start(clock, remaining), explicit=False)
        await ctx.send("brave", request)
        assert sent[-1].timeout == cut
    assert _timeout(2.5) is _timeout(2.5)
