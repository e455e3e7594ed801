"""attnviz.teaching.token_text: a token's whitespace made visible, its raw form (issue 47)."""

from __future__ import annotations

import json

import pytest

from attnviz.teaching.token_text import (
    EMPTY,
    NEWLINE,
    SPACE,
    TAB,
    numbered,
    raw,
    visible,
    visible_all,
)

CASES = [
    ("\n", "↵"),
    ("\n\n", "↵↵"),
    (".\n", ".↵"),
    ("\t", "⇥"),
    ("\r\n", "␍↵"),
    (" the", "␣the"),
    ("the ", "the␣"),
    (" ", "␣"),
    ("   ", "␣␣␣"),
    ("\n       ", "↵␣␣␣␣␣␣␣"),  # SmolLM2's newline and indent after "def f():"
    (" \n", "␣↵"),
    ("\u00a0x", "␣x"),  # a no-break space at the start is a space too
    ("", "∅"),
    ("\x00", "␀"),
    ("a\x7fb", "a␡b"),
    ("New York", "New York"),  # a space between characters stays
    ("the", "the"),
    ("##ing", "##ing"),  # MiniLM's word pieces keep their mark
    ("▁cat", "▁cat"),  # SentencePiece's (T5, Marian)
    ("[CLS]", "[CLS]"),
    ("é", "é"),
]


@pytest.mark.parametrize(("token", "shown"), CASES)
def test_visible_shows_whitespace_and_keeps_the_rest(token, shown):
    assert visible(token) == shown
    assert visible(shown) == shown  # idempotent: a label may go through twice


@pytest.mark.parametrize(("token", "shown"), CASES)
def test_nothing_is_blank(token, shown):
    assert visible(token).strip() == visible(token)
    assert visible(token) and not visible(token).isspace()


def test_the_marks_are_the_documented_ones():
    assert (NEWLINE, TAB, SPACE, EMPTY) == ("↵", "⇥", "␣", "∅")
    assert visible_all(["a", "\n", " b"]) == ["a", NEWLINE, SPACE + "b"]
    assert visible(3) == "3"  # whatever a caller passes becomes text


@pytest.mark.parametrize(
    ("token", "written"),
    [("\n", '"\\n"'), (" the", '" the"'), ("\t", '"\\t"'), ("", '""'), ('"', '"\\""'),
     ("▁cat", '"▁cat"'), ("\x00", '"\\u0000"')],
)  # fmt: skip
def test_raw_writes_the_token_as_code_does(token, written):
    assert raw(token) == written
    assert json.loads(raw(token)) == token  # nothing lost


def test_numbered_labels_stay_distinct_where_tokens_repeat_or_look_alike():
    tokens = ["the", "\n", "the", "↵"]
    assert numbered(tokens) == ["0: the", "1: ↵", "2: the", "3: ↵"]
    assert len(set(numbered(tokens))) == len(tokens)
