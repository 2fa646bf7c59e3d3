"""The think-block filter: split tags, case variants, unterminated blocks, any chunking."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from appliance.llm.think import ThinkFilter, filter_stream, strip_think


def run(chunks: list[str]) -> str:
    return "".join(filter_stream(chunks))


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        (["Hello"], "Hello"),
        (["<think>plan</think>I added milk."], "I added milk."),
        (["<th", "ink>plan</th", "ink>I added milk."], "I added milk."),
        (["<", "t", "h", "i", "n", "k", ">", "x", "<", "/", "think", ">", "ok"], "ok"),
        (["<THINK>plan</Think>Done."], "Done."),
        (["Before <think>never closed, dropped to the end"], "Before "),
        (["Before <think>never closed", " still inside </thi"], "Before "),
        (["A</think>B"], "AB"),
        (["a <b>bold</b> <thinker>"], "a <b>bold</b> <thinker>"),
        (["1 < 2 and <th"], "1 < 2 and <th"),
        (["x<think>a</think>y<think>b</think>z"], "xyz"),
        (["<think><think>nested</think>after</think>end"], "afterend"),
        ([""], ""),
        ([], ""),
    ],
)
def test_filter(chunks: list[str], expected: str) -> None:
    assert run(chunks) == expected
    assert strip_think("".join(chunks)) == expected


def test_partial_tag_is_held_back_until_known() -> None:
    think = ThinkFilter()
    assert think.feed("Hi <thi") == "Hi "
    assert think.feed("s is text") == "<this is text"
    assert think.feed(" <think>") == " "
    assert think.inside
    assert think.feed("secret</thi") == ""
    assert think.feed("nk> bye") == " bye"
    assert think.flush() == ""


def test_flush_returns_a_held_back_prefix_outside_blocks() -> None:
    think = ThinkFilter()
    assert think.feed("ends with <") == "ends with "
    assert think.flush() == "<"
    inside = ThinkFilter()
    inside.feed("<think>abc</th")
    assert inside.flush() == ""


_ALPHABET = st.sampled_from(
    ["<think>", "</think>", "<THINK>", "</Think>", "<", ">", "/", "t", "h", "i", "n", "k",
     "a", " ", ".", "İ", "K", "\n"]
)  # fmt: skip


@st.composite
def chunked(draw: st.DrawFn) -> tuple[str, list[str]]:
    text = "".join(draw(st.lists(_ALPHABET, max_size=40)))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    bounds = [0, *cuts, len(text)]
    return text, [text[a:b] for a, b in itertools.pairwise(bounds)]


@settings(max_examples=400, deadline=None)
@given(chunked())
def test_any_chunking_gives_the_unchunked_result(case: tuple[str, list[str]]) -> None:
    text, chunks = case
    assert run(chunks) == strip_think(text)
    assert run([text]) == strip_think(text)
    assert run(list(text)) == strip_think(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.text(max_size=30), st.text(max_size=60))
def test_blocks_are_removed_from_random_text(before: str, inside: str, after: str) -> None:
    text = f"{before}<think>{inside.replace('</think>', '')}</think>{after}"
    assert run(list(text)) == strip_think(text)
    if "<think>" not in before.lower() and "</think>" not in before.lower():
        assert run([text]).startswith(strip_think(before))
