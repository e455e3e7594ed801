"""The presenter view (``?present=1``) through AppTest: one step per screen, navigation by
the on_click callbacks, the link for the class, warnings for invalid values."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.ui import present
from tests.test_app import (  # noqa: F401
    assert_clean,
    open_exports,
    run_app,
    server_like_navigation,
)

SB = "pages/step_by_step.py"
MH = "pages/multi_head.py"


def headings(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("#### ")]


def step_line(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Step "))


def test_step_by_step_shows_one_step_at_a_time_and_navigates():
    at = run_app({"present": "1"}, SB)
    assert_clean(at)
    assert headings(at) == ["#### 1. The input: one vector per token"]
    assert step_line(at).startswith("**Step 1 of 7**")
    assert at.button(key="present_prev").disabled
    at.button(key="present_next").click().run()
    assert_clean(at)
    assert at.query_params["step"] == "2"
    assert headings(at) == ["#### 2. Queries, keys and values: three linear maps of X"]
    for _ in range(5):
        at.button(key="present_next").click().run()
    assert at.query_params["step"] == "7"
    assert headings(at) == ["#### 7. Weighted sum of the values"]
    assert at.button(key="present_next").disabled
    at.button(key="present_prev").click().run()
    assert headings(at)[0].startswith("#### 6. Softmax")
    # the normal page's extras (loop form, exports, code) are not on the projector
    assert not at.get("download_button")


def test_step_in_the_url_opens_that_step():
    at = run_app({"present": "1", "step": "4"}, SB)
    assert_clean(at)
    assert headings(at) == ["#### 4. Scale"]


@pytest.mark.parametrize(("step", "shown"), [("99", "7"), ("0", "1"), ("abc", "1")])
def test_invalid_step_is_warned_and_clamped(step, shown):
    at = run_app({"present": "1", "step": step}, SB)
    assert_clean(at)
    assert any("?step=" in w.value for w in at.warning)
    assert headings(at)[0].startswith(f"#### {shown}.")


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
    assert not any("Concatenate" in s.value for s in at.subheader)
    at.button(key="present_next").click().run()
    assert step_line(at).startswith("**Step 2 of 4**: Head 0")
    at.button(key="present_next").click().run()
    assert step_line(at).startswith("**Step 3 of 4**: Head 1")
    at.button(key="present_next").click().run()
    assert_clean(at)
    assert step_line(at).startswith("**Step 4 of 4**")
    assert any("Concatenate" in s.value for s in at.subheader)


def test_class_link_drops_presenter_params():
    link = present.class_link({"present": "1", "step": "2", "N": "4"}, "http://h:1/multi_head")
    assert link == "http://h:1/multi_head?N=4"
    assert present.class_link({"present": "1"}, "http://h:1/") == "http://h:1/"


def test_qr_svg_is_an_svg_that_encodes_the_link():
    svg = present.qr_svg("http://127.0.0.1:1/?N=4")
    assert svg.lstrip().startswith("<svg") and "</svg>" in svg
    assert present.qr_svg("http://127.0.0.1:1/?N=5") != svg


def test_export_section_copies_small_matrices_as_latex_and_the_worked_example():
    from attnviz import latex

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


def test_large_matrices_get_no_latex():
    at = run_app({"N": "12", "D": "4", "heads": "1"}, SB)
    assert_clean(at)
    open_exports(at)
    names = [
        c.value.split(" =")[0] for c in at.code if c.language == "latex" and "= \\begin" in c.value
    ]
    assert names and all("{A}" not in n and "{X}" not in n for n in names)


def test_masking_steps_none_causal_padding():
    at = run_app({"present": "1", "N": "5"}, "pages/masking.py")
    assert_clean(at)
    titles = [m.value for m in at.main.markdown if m.value.startswith("### ")]
    assert titles == ["### no mask"]
    at.button(key="present_next").click().run()
    assert [m.value for m in at.main.markdown if m.value.startswith("### ")] == ["### causal"]
    at.button(key="present_next").click().run()
    assert_clean(at)
    shown = [m.value for m in at.main.markdown if m.value.startswith("### ")]
    assert shown[0].startswith("### padding")
    at = run_app({"N": "5"}, "pages/masking.py")  # the normal page: causal and padding
    assert [m.value for m in at.main.markdown if m.value.startswith("### ")][:2] == [
        "### causal",
        "### padding (k = 1)",
    ]
