"""The Cross-attention page in a real browser (the walks of test_pages.py, test_devices_e2e.py
and test_a11y_e2e.py take it from the pages table; here what only it has):

- a slider move (N_src) redraws the charts in place, T × S and not square;
- the weights chart's table names the target's tokens as rows and the source's as columns,
  its keyboard cells announce both, a click works the cell out with the source's token;
- a phone (390x844): the three attention charts one a row, each at least 300 px wide,
  no title cut;
- a projector (1920x1080, ``present=1``): the weights' cells square (7 × 4).

Screenshots (``ATTNVIZ_SHOTS=1``): artifacts/screenshots/cross_*.png (1440x900, 390x844, 1920x1080).
"""

from __future__ import annotations

import pytest
from e2e_app import BrowserSession
from test_board_e2e import CELL_JS, MARK_JS, assert_no_board_errors, charts
from test_devices_e2e import (
    LAYOUT_JS,
    PHONE,
    PROJECTOR,
    SQUARE_JS,
    layout_problems,
)

from attnviz.teaching import cross

pytestmark = pytest.mark.e2e

LAPTOP = (1440, 900)
TOP = ("cx_top_scores", "cx_top_weights", "cx_top_out")


def test_slider_redraws_in_place_and_the_weights_read_as_a_table_and_by_keys(new_session):
    s = new_session(LAPTOP)
    s.open("/cross")
    s.assert_healthy("cross")
    before = charts(s)
    assert set(TOP) | {"cx_qkv_q", "cx_qkv_k", "cx_qkv_v", "cx_heads_grid"} == set(before)
    assert (before["cx_top_weights"]["rows"], before["cx_top_weights"]["cols"]) == (4, 6)
    s.page.evaluate(MARK_JS)
    marks = {k: c["mark"] for k, c in charts(s).items()}
    thumb = s.page.locator(".st-key-N_src input[type='range']").first
    thumb.focus()
    s.rerun_after(lambda: s.page.keyboard.press("ArrowRight"))
    after = charts(s)
    assert (after["cx_top_weights"]["rows"], after["cx_top_weights"]["cols"]) == (4, 7)
    assert (after["cx_qkv_k"]["rows"], after["cx_qkv_q"]["rows"]) == (7, 4)
    assert {k: c["mark"] for k, c in after.items()} == marks  # the same plot divs
    assert "N_src=7" in s.page.url
    s.screenshot("cross_laptop_random", full=True)
    assert_no_board_errors(s)


TABLE_JS = """(key) => {
  const cell = document.querySelector(`.attnviz-board .cell[data-key="${key}"]`);
  const t = cell.closest('.attnviz-board').querySelector(`table[data-key="${key}"]`)
    || cell.parentElement.querySelector('table');
  if (!t) return null;
  return {cols: Array.from(t.querySelectorAll('thead th')).map(th => th.textContent.trim()),
          rows: Array.from(t.querySelectorAll('tbody th')).map(th => th.textContent.trim())}; }"""
LIVE_JS = "() => document.activeElement.parentElement.querySelector('[aria-live]').textContent"


def test_tables_keys_and_the_cell_panel_name_both_sequences(new_session):
    s = new_session(LAPTOP)
    s.open("/cross?input=text")
    s.assert_healthy("cross text")
    toggle = s.page.locator('[data-key="cx_top_weights"] ~ .attnviz-bar .attnviz-table-toggle')
    if not toggle.count():
        toggle = s.page.locator(".attnviz-table-toggle").nth(1)
    toggle.first.click()
    s.page.wait_for_timeout(300)
    tables = s.page.evaluate(
        """() => Array.from(document.querySelectorAll('.attnviz-board table')).map(t => ({
          cols: Array.from(t.querySelectorAll('thead th')).map(th => th.textContent.trim()),
          rows: Array.from(t.querySelectorAll('tbody th')).map(th => th.textContent.trim())}))"""
    )
    shown = [t for t in tables if t["rows"]]
    assert shown, tables
    text = " ".join(" ".join(t["cols"] + t["rows"]) for t in shown)
    assert "le" in text and "assis" in text and "black" in text, shown
    # keyboard: the weights chart's cells, query (target) 6, key (source) 3
    chart = s.page.locator('[data-key="cx_top_weights"] [aria-label^="Chart:"]').first
    chart.focus()
    for key, times in (("ArrowDown", 6), ("ArrowRight", 3)):
        for _ in range(times):
            s.page.keyboard.press(key)
    live = s.page.evaluate(LIVE_JS)
    assert live.startswith("query assis, key sat, weight "), live
    # a click on cell (target 6, source 3) works it out in the browser
    box = s.page.evaluate(CELL_JS, ["cx_top_weights", 3, 6])
    s.rerun_after(lambda: s.page.mouse.click(box["pageX"], box["pageY"]))
    heading = s.page.locator(".attnviz-arith-title").first.text_content()
    assert "query 6 (assis), key 3 (sat)" in heading, heading
    s.screenshot("cross_laptop_text", full=True)
    assert_no_board_errors(s)


def test_phone_three_charts_a_row_each_wide_enough(browser, app_server):
    s = BrowserSession(browser, app_server, PHONE, touch=True)
    try:
        s.open("/cross?input=text")
        s.assert_healthy("cross on a phone")
        layout = s.page.evaluate(LAYOUT_JS)
        assert not layout_problems(layout), layout_problems(layout)
        top = {c["key"]: c for c in layout["charts"] if c["key"] in TOP}
        assert set(top) == set(TOP)
        assert all(c["width"] >= 300 for c in top.values()), top
        tops = sorted(c["top"] for c in top.values())
        assert tops[0] < tops[1] < tops[2]  # one a row
        s.screenshot("cross_phone", full=False)
        s.page.locator('[data-key="cx_top_weights"]').first.scroll_into_view_if_needed()
        s.screenshot("cross_phone_weights", full=False)
    finally:
        s.close()


def test_projector_weights_cells_are_square(new_session):
    s = new_session(PROJECTOR)
    s.open("/cross?present=1&input=text&step=3")  # the weights step
    s.assert_healthy("cross on a slide")
    m = s.page.evaluate(SQUARE_JS, "cx_top_weights")
    assert 0.95 <= m["w"] / m["h"] <= 1.05, m
    n_tgt = len(cross.sequences("text", d=8).target.labels)
    assert n_tgt == 7
    s.page.locator('[data-key="cx_top_weights"]').first.scroll_into_view_if_needed()
    s.screenshot("cross_projector", full=False)
