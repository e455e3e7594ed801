"""The presenter view (``?present=1``) through AppTest: one step per screen, navigation by
the on_click callbacks, the link for the class, warnings for invalid values."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from board_view import board_args, board_entries, figures_of, prefetched

from attnviz.ui import present
from tests.test_app import (  # noqa: F401
    assert_clean,
    open_exports,
    run_app,
    server_like_navigation,
    view_of,
    z_of,
)

SB = "pages/step_by_step.py"
MH = "pages/multi_head.py"


def headings(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("## ")]


def step_line(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Step "))


def test_step_by_step_shows_one_step_at_a_time_and_navigates():
    at = run_app({"present": "1"}, SB)
    assert_clean(at)
    assert headings(at) == ["## 1. The input: one vector per token"]
    assert step_line(at).startswith("**Step 1 of 7**")
    assert at.button(key="present_prev").disabled
    at.button(key="present_next").click().run()
    assert_clean(at)
    assert at.query_params["step"] == "2"
    assert headings(at) == ["## 2. Queries, keys and values: three linear maps of X"]
    for _ in range(5):
        at.button(key="present_next").click().run()
    assert at.query_params["step"] == "7"
    assert headings(at) == ["## 7. Weighted sum of the values"]
    assert at.button(key="present_next").disabled
    at.button(key="present_prev").click().run()
    assert headings(at)[0].startswith("## 6. Softmax")
    # the normal page's extras (loop form, exports, code) are not on the projector
    assert not at.get("download_button")


def test_step_in_the_url_opens_that_step():
    at = run_app({"present": "1", "step": "4"}, SB)
    assert_clean(at)
    assert headings(at) == ["## 4. Scale"]


@pytest.mark.parametrize(("step", "shown"), [("99", "7"), ("0", "1"), ("abc", "1")])
def test_invalid_step_is_warned_and_clamped(step, shown):
    at = run_app({"present": "1", "step": step}, SB)
    assert_clean(at)
    assert any("?step=" in w.value for w in at.warning)
    assert headings(at)[0].startswith(f"## {shown}.")


def test_invalid_present_value_is_warned_and_the_page_is_normal():
    at = run_app({"present": "banana"}, SB)
    assert_clean(at)
    assert any("?present=" in w.value for w in at.warning)
    assert len(headings(at)) == 7  # every step, as without present
    assert not at.get("button") or not any(b.key == "present_next" for b in at.button)


def test_without_present_every_step_is_shown_and_nothing_changes():
    at = run_app({}, SB)
    assert_clean(at)
    assert len(headings(at)) == 7
    assert not any(w.value and "present" in w.value for w in at.warning)
    assert at.session_state["board_text_scale"] == 1.0


def test_presenter_view_settings_link_and_qr():
    at = run_app({"present": "1", "step": "3", "N": "5", "mask": "causal"}, SB)
    assert_clean(at)
    assert at.session_state["board_text_scale"] == present.CHART_TEXT_SCALE
    css = [h for h in at.get("html") if "font-size" in str(h.proto)]
    assert css, "the presenter type is injected"
    codes = [c.value for c in at.code]
    link = next(c for c in codes if "N=5" in c)
    assert "mask=causal" in link
    assert "present" not in link and "step=" not in link
    assert at.get("image"), "the QR code is drawn"


def test_multi_head_steps_all_heads_then_per_head_then_concat():
    at = run_app({"present": "1", "heads": "2", "D": "4"}, MH)
    assert_clean(at)
    assert step_line(at).startswith("**Step 1 of 4**: All heads side by side")
    assert not any("Concatenate" in s.value for s in at.header)
    at.button(key="present_next").click().run()
    assert step_line(at).startswith("**Step 2 of 4**: Head 0")
    at.button(key="present_next").click().run()
    assert step_line(at).startswith("**Step 3 of 4**: Head 1")
    at.button(key="present_next").click().run()
    assert_clean(at)
    assert step_line(at).startswith("**Step 4 of 4**")
    assert any("Concatenate" in s.value for s in at.header)


def test_class_link_drops_presenter_params():
    link = present.class_link({"present": "1", "step": "2", "N": "4"}, "http://h:1/multi_head")
    assert link == "http://h:1/multi_head?N=4"
    assert present.class_link({"present": "1"}, "http://h:1/") == "http://h:1/"


def test_qr_svg_is_an_svg_that_encodes_the_link():
    svg = present.qr_svg("http://127.0.0.1:1/?N=4")
    assert svg.lstrip().startswith("<svg") and "</svg>" in svg
    assert present.qr_svg("http://127.0.0.1:1/?N=5") != svg


def test_export_section_copies_small_matrices_as_latex_and_the_worked_example():
    from attnviz.teaching import latex

    at = run_app({"N": "4", "D": "4", "heads": "1"}, SB)
    assert_clean(at)
    open_exports(at)  # the LaTeX box is written while open
    assert_clean(at)
    view = at.session_state["_attnviz"]["view"]
    boxes = [c.value for c in at.code if c.language == "latex" and "bmatrix" in c.value]
    weights = next(b for b in boxes if b.startswith(r"\text{A} ="))
    (back,) = latex.parse_bmatrix(weights)
    assert np.abs(back - view.result.weights[0]).max() <= 0.005 + 1e-12
    assert any(b.key == "dl_step_by_step_worked" for b in at.get("download_button"))


def test_the_worked_example_box_is_drawn_only_while_open_and_keeps_its_query():
    """Issue 46: a closed worked example box sends nothing (its picker, button and code
    changed with every N move); opened, it draws them; the query picked survives closing
    it, and an N move that drops that query picks the last one left."""
    at = run_app({"N": "6", "D": "4", "heads": "1"}, SB)
    assert_clean(at)

    def worked() -> list:
        return [b for b in at.get("download_button") if b.key == "dl_step_by_step_worked"]

    assert not worked() and "step_by_step_we_query" not in [s.key for s in at.selectbox]
    at.session_state["worked_box_step_by_step"] = True
    at.run()
    assert worked() and "query 0" in worked()[0].proto.label
    at.selectbox(key="step_by_step_we_query").set_value(4).run()
    assert "query 4" in worked()[0].proto.label
    at.session_state["worked_box_step_by_step"] = False
    at.run()
    assert not worked()
    at.session_state["worked_box_step_by_step"] = True
    at.run()
    assert at.selectbox(key="step_by_step_we_query").value == 4
    at.slider(key="N").set_value(3).run()
    assert_clean(at)
    assert at.selectbox(key="step_by_step_we_query").value == 2
    assert "query 2" in worked()[0].proto.label


def test_large_matrices_get_no_latex():
    at = run_app({"N": "12", "D": "4", "heads": "1"}, SB)
    assert_clean(at)
    open_exports(at)
    names = [
        c.value.split(" =")[0] for c in at.code if c.language == "latex" and "= \\begin" in c.value
    ]
    assert names and all("{A}" not in n and "{X}" not in n for n in names)


#: The controls a slide of Masking, Why √d_k, Cross-attention or the playground may show.
SLIDE_CONTROLS = ("head", "query", "mk_pad", "sc_factor")


def shown_controls(at) -> list[str]:
    """The keys of the slide controls drawn outside the slide's hidden box, in order."""
    out: list[str] = []

    def walk(node, hidden: bool) -> None:
        for child in getattr(node, "children", {}).values():
            key = getattr(child, "key", None)
            if key in SLIDE_CONTROLS and not hidden:
                out.append(key)
            walk(child, hidden or key == "slide_hidden_controls")

    walk(at.main, False)
    return out


def chart_keys(at) -> list[str]:
    return list(board_entries(at))


def step_title(at) -> str:
    return step_line(at).split(": ", 1)[1]


@pytest.mark.parametrize(
    ("link", "step", "title", "charts", "controls"),
    [
        ({"N": "5"}, 1, "No mask: every query sees every key", ["mk_s_none", "mk_w_none"],
         ["head"]),
        ({"N": "5"}, 2, "Causal mask", ["mk_s_causal", "mk_w_causal"], ["head"]),
        ({"N": "5"}, 3, "Padding mask", ["mk_s_padding", "mk_w_padding"], ["head", "mk_pad"]),
        ({"N": "5", "mask": "window"}, 4, "The sidebar's mask: window",
         ["mk_s_window", "mk_w_window"], ["head"]),
        ({"N": "5", "heads": "1", "D": "8"}, 3, "Padding mask", ["mk_s_padding", "mk_w_padding"],
         ["mk_pad"]),  # one head: no head picker
    ],
)  # fmt: skip
def test_masking_step_k_shows_its_mask_and_only_its_controls(link, step, title, charts, controls):
    """Issue 47: ``step=k`` shows mask k's scores and weights (the mask is their grey ×
    cells), the padding box only on the padding step, the head picker only with heads to
    pick; the other controls keep their values in the hidden box."""
    at = run_app({"present": "1", "step": str(step), **link}, "pages/masking.py")
    assert_clean(at)
    assert step_title(at).startswith(title)
    assert chart_keys(at) == charts
    assert shown_controls(at) == controls
    assert at.number_input(key="mk_pad").value == 1  # drawn, hidden or not: its value kept


def test_masking_keeps_the_padding_of_the_link_on_every_step():
    at = run_app({"present": "1", "N": "5", "mk_pad": "2", "step": "2"}, "pages/masking.py")
    assert_clean(at)
    assert at.number_input(key="mk_pad").value == 2 and at.query_params["mk_pad"] == "2"
    at.button(key="present_next").click().run()  # the padding step: the last 2 keys masked
    z = z_of(figures_of(at)["mk_w_padding"])
    assert np.isnan(z[:, -2:]).all() and not np.isnan(z[:, :-2]).any()


def test_masking_normal_page_shows_causal_and_padding_side_by_side():
    at = run_app({"N": "5"}, "pages/masking.py")
    assert_clean(at)
    assert [m.value for m in at.main.markdown if m.value.startswith("## ")][:2] == [
        "## causal",
        "## padding (k = 1)",
    ]
    assert {"mk_mask_causal", "mk_s_padding", "mk_w_padding"} <= set(chart_keys(at))


@pytest.mark.parametrize(
    ("step", "charts", "controls"),
    [
        (1, ["sc_var"], []),
        (2, ["sc_factor_fig"], ["sc_factor"]),
        (3, ["sc_un", "sc_sc"], ["head"]),
        (4, ["sc_ent"], []),
        (5, ["sc_sat"], []),
    ],
)
def test_scaling_step_k_is_one_slide(step, charts, controls):
    """Issue 47: Why √d_k in five steps, each its own chart and only its own control."""
    at = run_app({"present": "1", "step": str(step), "sc_factor": "4"}, "pages/scaling.py")
    assert_clean(at)
    assert step_line(at).startswith(f"**Step {step} of 5**")
    assert chart_keys(at) == charts
    assert shown_controls(at) == controls
    assert at.number_input(key="sc_factor").value == 4.0  # hidden or not: from the link
    if step == 2:  # the factor's weights: softmax(4 × logits), and its formula whole
        assert "softmax(4 × logits)" in str(figures_of(at)["sc_factor_fig"]["data"])
        assert any("gathered" in e.body for e in at.latex)
    assert not at.get("download_button")  # the normal page's exports are not on a slide


def test_scaling_normal_page_shows_every_step():
    at = run_app({}, "pages/scaling.py")
    assert_clean(at)
    assert set(chart_keys(at)) >= {"sc_var", "sc_factor_fig", "sc_un", "sc_sc", "sc_ent", "sc_sat"}
    headers = [h.value for h in at.header]
    assert headers[:3] == [
        "1. Variance of q·k grows with d_k; q·k / √d_k stays near 1",
        "2. The same logits, multiplied by a factor",
        "3. Your current attention: scaled vs not scaled",
    ]


@pytest.mark.parametrize(
    ("step", "charts", "controls"),
    [
        (1, ["cx_qkv_q", "cx_qkv_k", "cx_qkv_v"], ["head"]),
        (2, ["cx_top_scores"], ["head"]),
        (3, ["cx_top_weights"], ["head"]),
        (4, ["cx_top_out"], ["head"]),
        (5, ["cx_heads_grid"], []),
    ],
)
def test_cross_step_k_is_one_slide(step, charts, controls):
    """Issue 47: Cross-attention in five steps, one chart (or Q, K and V) a slide; the
    head picker where one head is shown; the real encoder-decoder only in the normal view."""
    at = run_app({"present": "1", "step": str(step), "head": "1"}, "pages/cross.py")
    assert_clean(at)
    assert step_line(at).startswith(f"**Step {step} of 5**")
    assert chart_keys(at) == charts
    assert shown_controls(at) == controls
    assert at.selectbox(key="head").value == 1
    assert not [h for h in at.header if "encoder-decoder" in h.value]


def test_cross_normal_page_shows_every_step():
    at = run_app({}, "pages/cross.py")
    assert_clean(at)
    keys = set(chart_keys(at))
    assert {"cx_top_scores", "cx_top_weights", "cx_top_out", "cx_qkv_q", "cx_heads_grid"} <= keys
    assert not any(m.value.startswith("**Step ") for m in at.markdown)


@pytest.mark.parametrize(
    ("step", "charts", "controls"),
    [
        (1, ["pg_scores", "pg_weights"], ["head"]),
        (2, ["pg_weights", "pg_v", "pg_out"], ["head"]),
        (3, ["pg_x", "pg_q", "pg_k", "pg_v"], ["head"]),
        (4, ["pg_qbars", "pg_qsum"], ["head", "query"]),
    ],
)
def test_playground_step_k_is_one_slide(step, charts, controls):
    """Issue 47: the playground in four steps (scores and weights; A, V and out = A V; X, Q,
    K, V; one query), each one board of the picked head; the query picker only on the
    query's step, its value (from the link) kept in the hidden box on the others."""
    at = run_app({"present": "1", "step": str(step), "head": "1", "query": "2"})
    assert_clean(at)
    assert step_line(at).startswith(f"**Step {step} of 4**")
    assert chart_keys(at) == charts
    assert shown_controls(at) == controls
    assert at.selectbox(key="head").value == 1 and at.selectbox(key="query").value == 2
    figs, r = figures_of(at), view_of(at).result
    if step < 4:  # the picked head's matrix (scores or weights, V, Q)
        shown = {1: ("pg_scores", r.scores), 2: ("pg_v", r.values), 3: ("pg_q", r.queries)}
        key, want = shown[step]
        np.testing.assert_allclose(z_of(figs[key]), want[1], rtol=1e-6, atol=1e-7)
    else:  # the bars of the linked query in head 1, as tall as the slide leaves them
        bars = figs["pg_qbars"]
        y = bars["data"][0]["y"]  # the bars' heights (plotly's base64 typed array)
        y = np.frombuffer(base64.b64decode(y["bdata"]), y["dtype"]) if "bdata" in y else y
        np.testing.assert_allclose(y, r.weights[1, 2], atol=1e-6)
        assert bars["layout"]["meta"]["fill"] == "height"
    assert not at.get("download_button") and not at.main.get("expander")  # no exports, code


def test_playground_slide_sends_the_other_heads_of_its_board():
    """A head change on a slide sends the other heads' charts of the slide's one board
    (the hidden prefetch board), as the normal page does for its three."""
    at = run_app({"present": "1", "step": "2", "N": "5", "D": "8", "heads": "4"})
    at.selectbox(key="head").set_value(1).run()
    assert_clean(at)
    pre = prefetched(at)
    assert set(pre) == {"pg_mix"} and set(pre["pg_mix"]["values"]) == {"0", "2", "3"}
    assert board_args(at)["pg_mix"]["rev"] == pre["pg_mix"]["current_rev"]


def test_playground_normal_page_has_no_steps():
    at = run_app({})
    assert_clean(at)
    keys = set(chart_keys(at))
    assert {"pg_scores", "pg_weights", "pg_out", "pg_x", "pg_q", "pg_qbars", "pg_qsum"} <= keys
    assert not any(m.value.startswith("**Step ") for m in at.markdown)


@pytest.mark.parametrize(
    ("step", "charts"),
    [(1, ["cmp_a", "cmp_b", "cmp_diff"]), (2, []), (3, ["cmp_entropy"])],
)
def test_compare_step_k_is_one_slide(step, charts):
    """Issue 47: Compare in three steps (A, B and B − A; the largest changes; entropy),
    each under A's and B's heads and B's settings in a popover (drawn every run: their
    values and the link kept); the changes as a table in slide type."""
    link = {"present": "1", "step": str(step), "N": "5", "b_mask": "causal"}
    at = run_app(link, "pages/compare.py")
    assert_clean(at)
    assert step_line(at).startswith(f"**Step {step} of 3**")
    assert chart_keys(at) == charts
    assert at.selectbox(key="b_mask").value == "causal"  # B's control, in the popover
    assert at.query_params["b_mask"] == "causal"
    tables = [m.value for m in at.main.markdown if m.value.startswith("| ")]
    if step == 2:  # the largest change: query 0 keeps all its weight on key 0 under causal
        (table,) = tables
        first = table.splitlines()[2]
        assert first.startswith("| 0 (") and "| 1.0000 |" in first
        assert len(table.splitlines()) == 12
    else:
        assert not tables
    if step == 3:
        assert figures_of(at)["cmp_entropy"]["layout"]["meta"]["fill"] == "height"
    assert not at.get("download_button")  # the normal page's exports are not on a slide


def test_compare_slide_offers_the_presets_in_a_popover():
    """Issue 47: on a slide the presets are buttons in a popover beside the heads (a row of
    them above took the height the matrices need); a click sets A (the sidebar) and B, the
    whole page rerun (they change the sidebar, outside the slide's fragment)."""
    at = run_app({"present": "1", "step": "1", "N": "5", "mask": "causal"}, "pages/compare.py")
    assert_clean(at)
    keys = [b.key for b in at.main.button if b.key.startswith("cmp_preset_")]
    assert len(keys) == 6, keys
    at.button(key="cmp_preset_Causal vs none").click().run()
    assert_clean(at)
    assert at.session_state["mask"] == "none" and at.query_params["b_mask"] == "causal"
    assert chart_keys(at) == ["cmp_a", "cmp_b", "cmp_diff"]


def test_compare_normal_page_has_no_steps():
    at = run_app({"N": "5", "b_mask": "causal"}, "pages/compare.py")
    assert_clean(at)
    assert {"cmp_a", "cmp_b", "cmp_diff", "cmp_entropy"} <= set(chart_keys(at))
    assert not any(m.value.startswith("**Step ") for m in at.markdown)
    assert at.dataframe  # the largest changes as a data grid


@pytest.mark.parametrize("step", [1, 5, 9])
def test_exercises_step_k_is_one_question(step):
    """Issue 47: the exercises on the projector, one question a slide (the step bar names
    it), under the score, New exercises and Start a class; the question and its answer
    box on the left, the verdict and the worked answer on the right after Check."""
    at = run_app({"present": "1", "step": str(step)}, "pages/exercises.py")
    assert_clean(at)
    assert step_line(at).startswith(f"**Step {step} of 9**")
    i = step - 1
    cards = [m.value for m in at.main.markdown if m.value.startswith("### ")]
    assert len(cards) == 1 and cards[0].startswith(f"### {step}. ")
    assert step_title(at) == cards[0].split(". ", 1)[1]
    assert {"ex_new", f"ex{i}_check"} <= {b.key for b in at.main.button}
    assert not any("attnviz-join" in h.proto.body for h in at.main.get("html"))  # the room's
    boxes = [t for t in at.main.text_input if t.key == f"ex{i}"]
    assert boxes or step != 1  # question 1 asks for a number
    if boxes:  # a wrong answer, then the answer shown: its card's right column
        boxes[0].set_value("-99").run()
        at.button(key=f"ex{i}_check").click().run()
        at.button(key=f"ex{i}_show").click().run()
        assert_clean(at)
        assert any("Answer:" in m.value for m in at.main.info)


def test_an_answer_typed_on_a_slide_is_kept_while_other_slides_show():
    """A lecturer types an answer on question 2's slide, goes on to question 3 and back
    without pressing Check: the answer is still in its box (Streamlit drops the state of
    a widget it does not draw; the quiz keeps it)."""
    at = run_app({"present": "1", "step": "2"}, "pages/exercises.py")
    (box,) = [t for t in at.main.text_input if t.key == "ex1"]
    box.set_value("42").run()
    at.button(key="present_next").click().run()
    assert step_line(at).startswith("**Step 3 of 9**")
    assert not [t for t in at.main.text_input if t.key == "ex1"]  # not drawn on this slide
    at.button(key="present_prev").click().run()
    assert step_line(at).startswith("**Step 2 of 9**")
    (box,) = [t for t in at.main.text_input if t.key == "ex1"]
    assert box.value == "42"
    assert_clean(at)


def test_exercises_normal_page_shows_every_question():
    at = run_app({}, "pages/exercises.py")
    assert_clean(at)
    cards = [m.value for m in at.main.markdown if m.value.startswith("### ")]
    assert len(cards) == 9 and not any(m.value.startswith("**Step ") for m in at.markdown)


def test_notebooks_one_preset_a_slide_its_checks_in_slide_type():
    """Issue 47: the notebooks on the projector, a preset a slide (its checks at most nine
    a slide, a longer list split evenly: UDL 12.1's 17 in two), the checks as a Markdown
    table in slide type; every check on some slide, once."""
    from attnviz.teaching import presets

    counts = {n: len(presets.get(n).check()) for n in presets.names()}
    slides = sum(-(-c // 9) for c in counts.values())
    seen: list[str] = []
    for step in range(1, slides + 1):
        at = run_app({"present": "1", "step": str(step)}, "pages/notebooks.py")
        assert_clean(at)
        assert step_line(at).startswith(f"**Step {step} of {slides}**")
        (table,) = [m.value for m in at.main.markdown if m.value.startswith("| ")]
        rows = table.splitlines()[2:]
        assert 1 <= len(rows) <= 9 and all(r.startswith("| ✓ pass |") for r in rows)
        seen += rows
        assert not at.get("dataframe") and not at.get("download_button")
    assert len(seen) == sum(counts.values())


def test_notebooks_normal_page_keeps_its_data_grids():
    at = run_app({}, "pages/notebooks.py")
    assert_clean(at)
    assert len(at.dataframe) == 5 and not any(m.value.startswith("| ") for m in at.main.markdown)
    assert any("printed values reproduced" in m.value for m in at.main.markdown)
