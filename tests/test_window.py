"""Windows on a long text: cut where a reader pauses, and tiling the text exactly."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from websearch._reading._window import Window, window
from websearch.errors import InvalidSearchParams

TEXT = (
    "The first paragraph has two sentences. This is the second one.\n\n"
    "The second paragraph is here, and it runs on for a while. It also ends.\n\n"
    "A third paragraph closes the text."
)


def windows(text: str, size: int) -> list[Window]:
    found = [window(text, 0, size)]
    while found[-1].next_start is not None:
        found.append(window(text, found[-1].next_start, size))
    return found


def test_a_text_that_fits_is_one_window() -> None:
    assert window("short", 0, 100) == Window(text="short", start=0, next_start=None, total_chars=5, truncated=False)


def test_the_cut_prefers_a_paragraph_break() -> None:
    first = window(TEXT, 0, 70)
    assert first.text == "The first paragraph has two sentences. This is the second one.\n\n"
    assert (first.next_start, first.truncated, first.total_chars) == (len(first.text), True, len(TEXT))


def test_the_cut_falls_back_to_a_sentence_end_then_a_space() -> None:
    second = window(TEXT, 64, 62)
    assert second.text == "The second paragraph is here, and it runs on for a while. "
    text = "word " * 40
    assert window(text, 0, 52).text == "word " * 10


def test_a_text_without_any_break_is_cut_at_the_limit() -> None:
    assert window("x" * 30, 0, 10).text == "x" * 10
    assert window("x" * 30, 10, 10).next_start == 20


def test_the_cut_is_only_looked_for_in_the_last_fifth() -> None:
    text = "Early. " + "y" * 100
    assert len(window(text, 0, 50).text) == 50


def test_start_at_the_end_is_an_empty_final_window() -> None:
    assert window(TEXT, len(TEXT), 10) == Window(
        text="", start=len(TEXT), next_start=None, total_chars=len(TEXT), truncated=False
    )


@pytest.mark.parametrize(
    ("start", "size", "param"), [(-1, 10, "start"), (len(TEXT) + 1, 10, "start"), (0, 0, "max_chars")]
)
def test_out_of_range_arguments_are_parameter_errors(start: int, size: int, param: str) -> None:
    with pytest.raises(InvalidSearchParams) as caught:
        window(TEXT, start, size)
    assert caught.value.param == param


PIECES = st.lists(
    st.one_of(
        st.text(alphabet="abcdefghé漢😀", min_size=1, max_size=12),
        st.sampled_from([" ", "  ", "\n", "\n\n", ". ", "! ", "? ", ".\n\n", "\t", "\n \n"]),
    ),
    max_size=80,
).map("".join)


@settings(deadline=None, max_examples=300)
@given(text=PIECES, size=st.integers(min_value=1, max_value=60))
def test_windows_tile_the_text_exactly(text: str, size: int) -> None:
    found = windows(text, size)
    assert "".join(w.text for w in found) == text
    for previous, current in itertools.pairwise(found):
        assert previous.next_start == current.start == previous.start + len(previous.text)
    for w in found:
        assert len(w.text) <= size
        assert w.text or w.start == len(text)
        assert w.truncated == (w.next_start is not None)
        assert w.total_chars == len(text)


@settings(deadline=None, max_examples=200)
@given(text=PIECES, size=st.integers(min_value=5, max_value=60), data=st.data())
def test_any_start_gives_a_window_within_the_limit_at_that_start(text: str, size: int, data: st.DataObject) -> None:
    start = data.draw(st.integers(min_value=0, max_value=len(text)))
    w = window(text, start, size)
    assert text[start:].startswith(w.text)
    assert 0 < len(w.text) <= size or start == len(text)
    if w.next_start is not None:
        assert len(w.text) >= size - size // 5 - 1
