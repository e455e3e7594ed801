"""The cell panel (attnviz.ui.cell) in the app: a click on a cell (the board's value) shows
that cell's arithmetic with the view's numbers; a click outside the view shows the hint."""

from __future__ import annotations

import re

import numpy as np
import pytest
from board_view import board_entries
from test_app import assert_clean, run_app, view_of

from attnviz import engine
from attnviz.teaching import explain, latex
from attnviz.ui import cell as ui_cell
from attnviz.ui import compare as ui_compare


def _equations(at) -> list[str]:
    """The panel's equations: inline KaTeX in display style, one Markdown element each
    (they wrap at their + signs; no scroll region)."""
    pre = "$\\displaystyle "
    return [el.value[len(pre) : -1] for el in at.markdown if el.value.startswith(pre)]


def _click(at, board: str, **value) -> None:
    """What the board's click does: its state's selection becomes {query, key, head, ...}."""
    at.session_state[board] = {"selection": value}
    at.run()
    assert_clean(at)


def _panel_heading(at) -> str:
    """The server panel's one line naming the cell: its heading when it writes the steps
    (N above the browser's bound), else the label of its closed "as equations" box (the
    browser wrote the heading and the steps)."""
    found = [m.value for m in at.markdown if "came about" in m.value]
    found += [e.label for e in at.expander if "as equations" in e.label]
    assert len(found) == 1, found
    return found[0]


def _explanations(at) -> int:
    """How many times the page writes a cell's steps as text on the server (step 5's line)."""
    return len([m.value for m in at.markdown if m.value.startswith("**5\\. Weight")])


def test_no_click_shows_the_hint():
    at = run_app({"N": "5"})
    assert_clean(at)
    assert ui_cell.HINT in [c.value for c in at.caption]
    assert not [m.value for m in at.markdown if "came about" in m.value]


def test_a_click_on_the_playground_shows_that_cells_arithmetic():
    at = run_app({"N": "5", "mask": "causal", "D": "8", "heads": "2"})
    _click(at, "pg_top", query=3, key=1, head=1, chart="weights")
    r = view_of(at).result
    heading = _panel_heading(at)
    assert "a\\_3,1" in heading and "head 1" in heading
    tex = at.get("code")[0].proto.code_text  # the LaTeX box comes before the code box
    assert tex.startswith("% weight a_{3,1} of head 1")
    q, k, exps, *_ = latex.parse_bmatrix(tex)
    np.testing.assert_allclose(q[0], r.queries[1, 3], atol=5e-5)
    np.testing.assert_allclose(k[0], r.keys[1, 1], atol=5e-5)
    np.testing.assert_allclose(exps[0], explain.cell(r, 1, 3, 1).row_exps, atol=5e-5)
    assert len(_equations(at)) == 6  # one equation per step, in the closed box
    # the plain text is the browser's (board module cell.js, tests/ui/test_cell_js.py): the
    # weights chart carries the drawn head's Q, K, V and the server does not write it twice
    # nor a heading of its own: its box of equations is closed, for slides
    assert _explanations(at) == 0
    assert not [m.value for m in at.markdown if "came about" in m.value]
    (box,) = [e for e in at.expander if "as equations" in e.label]
    assert box.proto.expanded is False
    data = board_entries(at)["pg_weights"]["link"]["arithmetic"]
    assert list(data["heads"]) == ["0"] and data["mask"][3] == "11110"  # the head drawn
    assert "arithmetic" not in (board_entries(at)["pg_scores"]["link"] or {})  # one copy


def test_above_the_browsers_bound_the_server_writes_the_plain_text():
    n = ui_cell.CLIENT_MAX_N + 1
    at = run_app({"N": str(n), "D": "8", "heads": "2"})
    _click(at, "pg_top", query=3, key=1, head=1, chart="weights")
    r = view_of(at).result
    assert "arithmetic" not in board_entries(at)["pg_weights"]["link"]
    texts = [m.value for m in at.markdown if m.value.startswith("**5\\. Weight")]
    assert texts and f"{r.weights[1, 3, 1]:.4f}" in texts[0]  # the plain-text tab
    heading = _panel_heading(at)
    w = float(re.search(r"a\\_3,1 = (-?\d+\.\d+)", heading).group(1))
    assert w == pytest.approx(r.weights[1, 3, 1], abs=5e-5)
    assert "head 1" in heading and "`t3`" in heading


def test_a_masked_cell_says_so():
    at = run_app({"N": "4", "mask": "causal"})
    _click(at, "pg_top", query=0, key=3, head=0)
    assert any(r"s_{0,3} = -\infty" in tex for tex in _equations(at))
    at = run_app({"N": str(ui_cell.CLIENT_MAX_N + 1), "mask": "causal"})
    _click(at, "pg_top", query=0, key=3, head=0)
    assert "masked" in _panel_heading(at)  # the server's heading (the browser's: cell.js)


def test_a_click_outside_the_view_shows_the_hint():
    at = run_app({"N": "6"})
    _click(at, "pg_top", query=5, key=5, head=0)
    _panel_heading(at)
    at.slider(key="N").set_value(3).run()
    assert_clean(at)
    assert ui_cell.HINT in [c.value for c in at.caption]
    for bad in ({"query": "x", "key": 0}, {"query": 0.5, "key": 0}, {"query": True, "key": 0}):
        _click(at, "pg_top", **bad)
        assert ui_cell.HINT in [c.value for c in at.caption], bad


def test_multi_head_small_multiples_panel_uses_the_clicked_head():
    at = run_app({"N": "5", "D": "8", "heads": "4"}, "pages/multi_head.py")
    _click(at, "board_mh_small", query=2, key=4, head=3)
    r = view_of(at).result
    heading = _panel_heading(at)
    assert "a\\_2,4 of head 3" in heading
    assert f"{r.weights[3, 2, 4]:.4f}" in latex.cell_latex(explain.cell(r, 3, 2, 4))
    assert ui_cell.HINT not in [c.value for c in at.caption]  # no hint about a scores chart


def test_the_hint_names_only_charts_the_page_has():
    """Multi-head has no scores chart and Compare none either: their hints say which
    charts to click."""
    at = run_app({"N": "5"}, "pages/multi_head.py")
    captions = [c.value for c in at.caption]
    assert ui_cell.HINT_WEIGHTS in captions and ui_cell.HINT not in captions
    at = run_app({"N": "5"}, "pages/compare.py")
    captions = [c.value for c in at.caption]
    assert ui_compare.HINT in captions and ui_cell.HINT not in captions
    assert "scores" not in ui_compare.HINT and "scores" not in ui_cell.HINT_WEIGHTS


def test_plain_text_is_shown_as_written():
    """The steps' text holds q_4, d_k, [..]: Markdown would make italics and links of them."""
    assert ui_cell.md_plain("1. q_4 = [0.1, -0.2]; $x$ a*b") == (
        "1\\. q\\_4 = \\[0.1, -0.2\\]; \\$x\\$ a\\*b"
    )
    assert ui_cell.md_plain("q_3 · k_1 = 2.5") == "q\\_3 · k\\_1 = 2.5"


@pytest.mark.parametrize(
    ("page", "charts"),
    [("pages/step_by_step.py", ["sb_w"]), ("pages/masking.py", ["mk_w_causal", "mk_w_padding"])],
)
def test_pages_without_a_query_picker_send_the_weights_arithmetic(page, charts):
    """Step by step and Masking: their weights charts carry the arithmetic (worked out in
    the browser, a local selection: no rerun), each of its own result; no other chart."""
    at = run_app({"N": "5", "D": "8", "heads": "2", "mask": "causal"}, page)
    entries = board_entries(at)
    sent = {k for k, e in entries.items() if "arithmetic" in (e["link"] or {})}
    assert sent == set(charts), sent
    for key in charts:
        link = entries[key]["link"]
        assert link["select"] is False and list(link["arithmetic"]["heads"]) == ["0"]
    if page.endswith("masking.py"):  # each mask's own: causal hides key 4 from query 3
        masks = {k: entries[k]["link"]["arithmetic"]["mask"] for k in charts}
        assert masks["mk_w_causal"][3] == "11110" and masks["mk_w_causal"] != masks["mk_w_padding"]


def test_a_cross_attention_click_is_bounded_by_the_source_not_the_target():
    """T = 2 target rows, S = 5 source columns: key 4 is a cell, key 5 is not."""
    rng = np.random.default_rng(0)
    res = engine.cross_attention(rng.standard_normal((2, 4)), rng.standard_normal((5, 4)),
                                 engine.AttentionParams.random(4, seed=1))  # fmt: skip
    c = ui_cell.picked_cell(res, {"query": 1, "key": 4, "head": 0}, 0)
    assert c is not None and c.key == 4 and c.n_tokens == 5
    assert ui_cell.picked_cell(res, {"query": 1, "key": 5, "head": 0}, 0) is None
    assert ui_cell.picked_cell(res, {"query": 2, "key": 0, "head": 0}, 0) is None


def test_the_browsers_panel_gets_whitespace_tokens_visible():
    """cell.js names the query and key by these labels: a newline is "↵", not a blank."""
    x = np.random.default_rng(0).normal(size=(3, 4))
    r = engine.multi_head_attention(x, engine.AttentionParams.random(4), num_heads=1)
    data = ui_cell.cell_data(r, 0, ["\n", " x", "\t"], key_labels=["", " y", "z"])
    assert data["labels"] == ["↵", "␣x", "⇥"] and data["key_labels"] == ["∅", "␣y", "z"]
