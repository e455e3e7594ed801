"""The in-browser checks themselves can fail: they flag what they should."""

from __future__ import annotations

import plotly.colors
import pytest
from e2e_helpers import UNLABELLED_CONTROLS_JS, axis_tick_problems, colorscale_name


@pytest.mark.parametrize("name", ["Viridis", "Cividis", "RdBu", "RdBu_r", "PuOr"])
def test_safe_scales_are_recognised_as_names_and_as_colour_lists(name):
    assert colorscale_name(name) is not None
    scale = [list(pair) for pair in plotly.colors.get_colorscale(name)]
    assert colorscale_name(scale) == name


@pytest.mark.parametrize("name", ["Jet", "Rainbow", "Hot", "Picnic", "Portland"])
def test_rainbow_like_scales_are_rejected(name):
    assert colorscale_name(name) is None
    assert colorscale_name(plotly.colors.get_colorscale(name)) is None


def test_a_flat_single_colour_scale_is_accepted():
    assert colorscale_name([[0, "#a6dba0"], [1, "#a6dba0"]]) == "constant"
    assert colorscale_name([[0, "#a6dba0"], [1, "#ff0000"]]) is None


@pytest.mark.e2e
def test_unlabelled_controls_are_found(browser):
    page = browser.new_page()
    try:
        page.set_content(
            """
            <label for="a">N</label><input id="a">
            <label>D <input id="b"></label>
            <input id="c" aria-label="heads">
            <span id="lab">seed</span><input id="d" aria-labelledby="lab">
            <button>Load</button>
            <input id="bad1" placeholder="only a placeholder">
            <div role="slider" id="bad2"></div>
            <button id="bad3"><svg></svg></button>
            """
        )
        found = page.evaluate(UNLABELLED_CONTROLS_JS)
    finally:
        page.close()
    assert len(found) == 3
    assert all(any(f'id="{i}"' in html for html in found) for i in ("bad1", "bad2", "bad3"))


def test_axis_tick_check_flags_log_minor_labels_and_half_cells():
    log_axis = ["1", "2", "5", "10", "2", "5", "100"]
    half = ["\u22120.5", "0", "0.5", "1"]
    charts = [
        {"chart": 0, "title": "var", "heatmap": False, "axes": [log_axis, ["0", "0.5", "1"]]},
        {"chart": 1, "title": "out", "heatmap": True, "axes": [half, ["t0", "t1", "t0"]]},
        {"chart": 2, "title": "ok", "heatmap": True, "axes": [["0", "1", "2"], ["the", "the"]]},
    ]
    problems = axis_tick_problems(charts)
    assert len(problems) == 2
    assert "repeated" in problems[0] and "'var'" in problems[0]
    assert "half-cells" in problems[1] and "'out'" in problems[1]


def test_missing_browser_skips_locally_but_fails_in_ci(monkeypatch):
    from e2e_app import unavailable

    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception):
        unavailable("chromium is not installed")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        unavailable("chromium is not installed")
