"""attnviz.ui.page's helpers in a small script run by AppTest: the shapes line, the pooled
note (only above the full-heatmap limit), a real-model page's prompt when the weights are
missing or the model refuses the text (no traceback), the head picker."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attnviz import i18n, viz
from attnviz.ui import page


def _script():
    import numpy as np
    import streamlit as st

    from attnviz.ui import page

    mode = st.query_params.get("mode", "")
    page.shapes({"X": np.zeros((3, 4)), "A": np.zeros((2, 3, 3))}, note="per head")
    st.text(f"pooled {page.pooled_note(int(st.query_params.get('n', '3')))}")

    class _Run:
        tokens = ("a", "*b*") if mode != "ws" else ("a", "\n", "\t", " b")

    def load():
        if mode == "missing":
            raise ImportError("the weights are not installed")
        return "model"

    def run(text):
        if mode == "refuse":
            raise ValueError("the text is empty")
        return _Run()

    out = page.model_prompt("Real model page", "pip install x", load, run, label="Text", key="t")
    st.text(f"prompt {out is not None}")
    st.text(f"head {page.head_picker(4)}")


def _run(**query: str) -> AppTest:
    at = AppTest.from_function(_script, default_timeout=60)
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def test_shapes_line_names_every_matrix():
    assert page.shape_text(np.zeros((2, 3, 4))) == "2×3×4"
    with i18n.use("ar"):  # an isolate: in right-to-left prose "2×3×4" showed as "4×3×2"
        assert page.shape_text(np.zeros((2, 3, 4))) == i18n.FSI + "2×3×4" + i18n.PDI
    at = _run()
    assert at.caption[0].value == "Shapes: **X** 3×4 · **A** 2×3×3 — per head"


@pytest.mark.parametrize("n", [3, viz.style.MAX_FULL_HEATMAP_N + 1])
def test_the_pooled_note_shows_only_above_the_limit(n):
    at = _run(n=str(n))
    pooled = n > viz.style.MAX_FULL_HEATMAP_N
    assert at.text[0].value == f"pooled {pooled}"
    assert bool([i for i in at.info if "blocks of" in i.value]) == pooled


def test_the_model_prompt_says_why_it_cannot_go_on():
    at = _run()
    assert "prompt True" in [t.value for t in at.text]
    assert at.caption[-1].value == "**2 tokens:** `a` · `*b*`"  # tokens shown literally
    at = _run(mode="missing")
    assert "prompt False" in [t.value for t in at.text]
    assert "cannot load the model: the weights are not installed" in at.error[0].value
    assert at.code[0].value == "pip install x"
    at = _run(mode="refuse")
    assert (
        "prompt False" in [t.value for t in at.text] and at.warning[0].value == "the text is empty"
    )


def test_the_head_picker_returns_the_chosen_head():
    at = _run()
    assert at.selectbox(key="head").options == ["0", "1", "2", "3"]
    at.selectbox(key="head").set_value(2).run()
    assert "head 2" in [t.value for t in at.text]


def test_the_model_prompt_shows_whitespace_tokens_and_keeps_line_breaks():
    """A newline token was a blank in the tokens line, and a one-line box hid the prompt's
    newlines (issue 47): a multi-line prompt gets a text area, bound to the same link key."""
    at = _run(mode="ws", t="a\n\t b")
    assert at.caption[-1].value == "**4 tokens:** `a` · `↵` · `⇥` · `␣b`"
    assert not at.text_input and at.text_area[0].key == "t"
    assert at.text_area[0].value == "a\n\t b"  # the link's text, newline and tab kept
    at.text_area[0].set_value("one line").run()
    assert not at.exception
    assert [w.key for w in at.text_input] == ["t"] and not at.text_area
    assert at.text_input[0].value == "one line" and at.query_params["t"] == "one line"
    at.text_input[0].set_value("two\nlines").run()  # a pasted newline: the box grows
    assert [w.key for w in at.text_area] == ["t"] and at.text_area[0].value == "two\nlines"
    assert at.query_params["t"] == "two\nlines"  # the link says the text, newline and all


def test_follow_token_keeps_the_chosen_token_or_says_it_is_gone():
    from attnviz.ui.page import follow_token

    old = ("[CLS]", "the", "cat", "it", "sat", "[SEP]")
    # nothing chosen yet, or the same tokens: the index stands (in range), nothing gone
    assert follow_token(None, 3, old, 1) == (3, None)
    assert follow_token(old, 3, old, 1) == (3, None)
    assert follow_token(old, 9, old, 1) == (1, None)
    # the token elsewhere in the new text: its nearest occurrence
    new = ("[CLS]", "it", "rained", "so", "it", "was", "[SEP]")
    assert follow_token(old, 3, new, 2) == (4, None)
    # gone: the default, and which token went
    assert follow_token(old, 2, new, 1) == (1, "cat")
