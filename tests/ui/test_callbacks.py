"""The number boxes beside the N and D sliders (issue 25, item 8): a typed value moves the
slider and the link (``?N=12``: one URL key for both), the slider and the link move the box,
and a value out of range gets the same warning as the slider's link check."""

from __future__ import annotations

import pytest
from test_app import assert_clean, run_app, view_of

from attnviz import ui
from attnviz.ui import callbacks, controls


def _box(at, key: str = "N"):
    return at.number_input(key=callbacks.box_key(key))


def test_the_table_declares_the_boxes_and_the_readme_says_so():
    assert [c.key for c in controls.CONTROLS if c.box] == ["N", "D"]
    table = controls.markdown_table()
    assert "| `N` | slider + number box |" in table and "| `D` | slider + number box |" in table


def test_a_link_sets_the_slider_and_the_box():
    at = run_app({"N": "12"})
    assert_clean(at)
    assert at.slider(key="N").value == 12 and _box(at).value == 12
    assert not at.warning
    assert view_of(at).settings.n == 12
    assert "N_box" not in at.query_params  # the box is not in the link: N is


@pytest.mark.parametrize("key", ["N", "D"])
def test_typing_in_the_box_moves_the_slider_and_the_link(key):
    at = run_app()
    _box(at, key).set_value(12).run()
    assert_clean(at)
    assert at.slider(key=key).value == 12 and _box(at, key).value == 12
    assert getattr(view_of(at).settings, key.lower()) == 12
    assert at.query_params[key] == "12"
    assert not at.warning, [w.value for w in at.warning]


def test_moving_the_slider_moves_the_box():
    at = run_app()
    at.slider(key="N").set_value(40).run()
    assert_clean(at)
    assert _box(at).value == 40 and view_of(at).settings.n == 40
    # (the link follows a dragged slider in the browser: tests/e2e/test_links.py)


@pytest.mark.parametrize(("typed", "used"), [(999, 512), (0, 1), (-5, 1)])
def test_a_value_out_of_range_is_clamped_with_the_links_warning(typed, used):
    at = run_app()
    _box(at).set_value(typed).run()
    assert_clean(at)
    assert at.slider(key="N").value == used and _box(at).value == used
    assert view_of(at).settings.n == used
    (warning,) = [w.value for w in at.warning]
    assert warning == (
        f"The box beside the N slider set `N={typed}`, which is not valid (N must be an "
        f"integer from 1 to 512); using `N={used}`."
    )
    # the link check words it the same way
    link = run_app({"N": str(typed)})
    assert any("(N must be an integer from 1 to 512)" in w.value for w in link.warning)
    # said once: the next run does not repeat it
    at.run()
    assert not at.warning


def test_d_typed_keeps_heads_a_divisor():
    at = run_app({"D": "16", "heads": "8"})
    _box(at, "D").set_value(12).run()
    assert_clean(at)
    s = view_of(at).settings
    assert s.d == 12 and s.heads in ui.divisors(12) and s.heads == 6  # nearest to 8


def test_a_derived_n_disables_the_box_too():
    at = run_app({"source": "text", "text": "the cat and the hat"})
    assert_clean(at)
    assert at.slider(key="N").value == 5 and _box(at).value == 5
    assert at.slider(key="N").disabled and _box(at).disabled
