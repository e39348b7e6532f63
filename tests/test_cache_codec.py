"""The cache's entries: a response written as arrays of field values and read back exactly,
anything else read as a miss, and hits that never share a mutable object with each other."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from typing import Any, get_type_hints

import orjson
import pytest

from conftest import held_at_fork
from websearch import (
    Attempt,
    EngineRank,
    ProviderAnswer,
    SearchCitation,
    SearchResponse,
    SearchSource,
    SearchUsage,
)
from websearch._core._notices import Notice
from websearch._core._types import Locale, LocaleValue
from websearch._engine._cache import decode, encode


def full_response() -> SearchResponse:
    """A response with every field away from its default, nested ones included."""
    notice = Notice("include_domains", ["a.example", "b.example"], "approximated", "sent as site: operators")
    return SearchResponse(
        provider="brave",
        query="rust async runtimes",
        answer="Tokio is the most used.",
        sources=(
            SearchSource(
                "Tokio",
                "https://a.example/tokio",
                "A runtime.",
                "2026-11-30",
                3600,
                "Ann",
                ("work-stealing", "timers"),
                (EngineRank("brave", 1), EngineRank("mojeek", 3)),
            ),
            SearchSource("smol", "https://b.example/smol"),
        ),
        citations=(SearchCitation("https://a.example/tokio", "Tokio", "the most used"),),
        related_questions=("what is tokio?",),
        search_queries=("tokio vs smol",),
        usage=SearchUsage(10, 20, 30, 1),
        model="m-1",
        request_id="req-1",
        auth_mode="api_key",
        attempts=(
            Attempt("exa", 429, "Exa is rate limited", 12.5, "rate_limited", 30.0, (notice,), None, None),
            Attempt("brave", None, None, 80.0, notices=(notice,)),
        ),
        notices=(notice,),
        error=None,
        fallback="exa unavailable: rate limited",
        cached=False,
        cached_age_s=None,
        answers=(ProviderAnswer("perplexity", "Tokio.", (SearchCitation("https://a.example", "A"),)),),
        locale=Locale(
            LocaleValue("DE", "argument", True), LocaleValue("de", "setting", False), LocaleValue(None, "default")
        ),
        replayed=True,
    )


KEY = "cache:test"


def same_types(a: Any, b: Any) -> None:
    """`a` and `b` hold the same types all the way down (a tuple is not read back as a list)."""
    assert type(a) is type(b)
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            same_types(getattr(a, f.name), getattr(b, f.name))
    elif isinstance(a, (tuple, list)):
        for x, y in zip(a, b, strict=True):
            same_types(x, y)


def test_every_field_is_read_back_as_it_was_written() -> None:
    response = full_response()
    for f in dataclasses.fields(SearchResponse):
        if f.name not in ("error", "cached", "cached_age_s"):
            assert getattr(response, f.name) != f.default, f"{f.name} is left at its default in this test"
    data = encode(KEY, response, 1000.0)
    cached = decode(KEY, data, 1090.25)
    assert cached is not None
    assert (cached.cached, cached.cached_age_s) == (True, 90.25)
    assert dataclasses.replace(cached, cached=False, cached_age_s=None) == response
    same_types(dataclasses.replace(cached, cached=False, cached_age_s=None), response)


def test_a_response_read_back_cold_is_the_same_as_one_remembered() -> None:
    from websearch._engine._cache import _decoded

    data = encode(KEY, full_response(), 1000.0)
    cold = _decoded(data)
    assert cold is not None
    assert cold[0] == 1000.0
    assert cold[1] == full_response()
    same_types(cold[1], full_response())


def test_the_response_classes_have_no_field_the_reader_would_leave_as_a_list() -> None:
    """Every tuple field of the response's classes is built back as a tuple (the round trip
    above would miss a field added later and left at its default there)."""
    for cls in (SearchResponse, SearchSource, Attempt, ProviderAnswer):
        hints = get_type_hints(cls)
        for f in dataclasses.fields(cls):
            if str(hints[f.name]).startswith("tuple"):
                value = getattr(full_response() if cls is SearchResponse else _example(cls), f.name)
                assert value, f"{cls.__name__}.{f.name} is empty in this test's response"


def _example(cls: type) -> Any:
    response = full_response()
    return {SearchSource: response.sources[0], Attempt: response.attempts[0], ProviderAnswer: response.answers[0]}[cls]


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not json",
        b"{}",
        b"[]",
        orjson.dumps(["v1", 1.0, {}]),  # another version
        orjson.dumps(["v3-000000000000", 1.0, ["brave"]]),
    ],
)
def test_anything_else_is_a_miss(data: bytes) -> None:
    assert decode(KEY, data, 0.0) is None


def test_an_entry_cut_short_or_of_another_shape_is_a_miss() -> None:
    version, at, raw = orjson.loads(encode(KEY, full_response(), 1.0))
    shapes = [
        raw[:-1],  # a field fewer
        [*raw, None],  # a field more
        [*raw[:3], "not sources", *raw[4:]],
        [*raw[:3], [["title only"]], *raw[4:]],
    ]
    for shape in shapes:
        assert decode(KEY, orjson.dumps([version, at, shape]), 2.0) is None


def test_a_well_formed_entry_of_another_version_is_a_miss() -> None:
    # The version names the classes' fields: an entry written before a field changed meaning
    # (not only its count) may fit the arrays exactly, and is still not to be read.
    version, at, raw = orjson.loads(encode(KEY, full_response(), 1.0))
    assert decode(KEY, orjson.dumps([version, at, raw]), 2.0) is not None
    assert decode(KEY, orjson.dumps(["v3-000000000000", at, raw]), 2.0) is None


def test_hits_share_no_mutable_object_with_each_other_or_the_original() -> None:
    response = full_response()
    data = encode(KEY, response, 1.0)
    response.sources[0].title = "changed after it was cached"
    response.answer = "changed too"
    first = decode(KEY, data, 2.0)
    assert first is not None
    assert first.sources[0].title == "Tokio" and first.answer == "Tokio is the most used."
    first.sources[0].snippet = "a caller's edit"
    first.citations[0].cited_text = "another"
    second = decode(KEY, data, 3.0)
    assert second is not None
    assert second.sources[0].snippet == "A runtime." and second.citations[0].cited_text == "the most used"
    assert second.cached_age_s == 2.0


def test_a_hit_is_served_from_the_bytes_the_store_handed_back_not_from_what_was_remembered() -> None:
    """Another process may rewrite an entry: the remembered response is for the bytes written
    here, and other bytes under the same key are read as what they say."""
    ours = encode(KEY, full_response(), 1.0)
    theirs = orjson.loads(ours)
    theirs[2][2] = "another process's answer"
    other = decode(KEY, orjson.dumps(theirs), 2.0)
    assert other is not None and other.answer == "another process's answer"
    again = decode(KEY, ours, 3.0)
    assert again is not None and again.answer == "Tokio is the most used."


def test_the_bounded_lru_drops_the_least_recently_used_by_count_and_by_bytes() -> None:
    from websearch._core._lru import BoundedLRU

    lru: BoundedLRU[str, bytes] = BoundedLRU(3, 10, lambda key, value: len(value))
    for key in "abc":
        lru.put(key, b"xx")
    assert lru.get("a") == b"xx"  # now the most recently used
    lru.put("d", b"xx")  # a fourth: the oldest unused ("b") goes
    assert (lru.peek("b"), len(lru)) == (None, 3)
    lru.put("e", b"x" * 8)  # 2 + 2 + 2 + 8 > 10 bytes: the least recently used go until it fits
    assert [k for k in "acde" if lru.peek(k) is not None] == ["d", "e"]
    lru.put("e", b"y")  # replaced: its old size no longer counts
    lru.put("f", b"z" * 9)
    assert lru.peek("e") == b"y" and lru.peek("f") == b"z" * 9
    assert lru.pop("f") == b"z" * 9 and lru.pop("f") is None
    lru.clear()
    assert len(lru) == 0


MEMO_FORKED = (
    "from websearch._engine import _cache\n"
    + held_at_fork("_cache._MEMO._lock")
    + """\
if pid == 0:
    print(_cache._MEMO.get("k"), flush=True)  # once waited forever for the parent's thread
    os._exit(0)
os.waitpid(pid, 0)
done.set()
"""
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_the_memo_is_usable_in_a_child_forked_while_another_thread_held_it() -> None:
    command = [sys.executable, "-W", "ignore::DeprecationWarning", "-c", MEMO_FORKED]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (0, "None\n", "")
