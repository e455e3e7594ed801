"""Cell arithmetic and the Compare page in a real browser: a click on a weights cell shows
its worked computation, whose weight is the cell's hover value; the difference board's
hover outlines the same cell in A and B."""

from __future__ import annotations

import re

import pytest
from test_board_e2e import CELL_JS, assert_no_board_errors, charts

pytestmark = pytest.mark.e2e

# The text of the hover label plotly shows on chart `key` (a board's .cell, no iframe).
HOVER_JS = """(key) => {
    const cell = document.querySelector(`.attnviz-board .cell[data-key="${key}"]`);
    const t = cell && cell.querySelector('.hoverlayer .hovertext');
    return t ? t.textContent : null; }"""


# Scroll chart `key` to the middle of the window.
SCROLL_JS = """(key) => {
    const cell = document.querySelector(`.attnviz-board .cell[data-key="${key}"]`);
    if (cell) cell.scrollIntoView({block: 'center'}); }"""


def _cell(session, key: str, x: int, y: int) -> dict:
    """Page coordinates of cell (x, y) of chart ``key``, scrolled into view."""
    session.page.evaluate(SCROLL_JS, key)
    session.page.wait_for_timeout(200)
    return session.page.evaluate(CELL_JS, [key, x, y])


def _hover(session, key: str, x: int, y: int) -> str:
    cell = _cell(session, key, x, y)
    session.page.mouse.move(cell["pageX"], cell["pageY"])
    found = session.page.wait_for_function(f"() => ({HOVER_JS})('{key}')")
    return found.json_value()


def _panel_headings(session) -> list[str]:
    return (
        session.page.locator("[data-testid='stMarkdownContainer'] strong")
        .filter(has_text="came about")
        .all_inner_texts()
    )


def test_a_click_on_a_weights_cell_shows_its_arithmetic(session):
    session.open("/?N=6&mask=causal")
    i, j = 4, 1  # query 4, key 1 (row layout: x = key, y = query)
    hover = _hover(session, "pg_weights", j, i)
    shown = re.search(r"= (-?\d+\.\d{4})$", hover.strip())
    assert shown, hover
    cell = session.page.evaluate(CELL_JS, ["pg_weights", j, i])
    session.rerun_after(lambda: session.page.mouse.click(cell["pageX"], cell["pageY"]))
    headings = _panel_headings(session)
    assert len(headings) == 1, headings
    assert f"a{i},{j} = {shown.group(1)}" in headings[0], (headings, hover)
    # the steps: equations (KaTeX, with MathML for screen readers), then the plain text
    assert session.page.locator(".katex-mathml").count() >= 6
    text = session.page.get_by_role("tab", name="Plain text")
    text.click()
    step5 = session.page.get_by_text(re.compile(r"^5\. Weight a")).filter(visible=True).first
    step5.wait_for()
    assert shown.group(1) in step5.inner_text()
    session.screenshot("cell-panel")
    assert_no_board_errors(session)


def test_the_difference_board_links_hover_with_a_and_b(session):
    session.open("/compare?N=6&b_scale=none")
    assert {"cmp_a", "cmp_b", "cmp_diff"} <= set(charts(session))
    i, j = 3, 5
    hover = _hover(session, "cmp_diff", j, i)
    assert "B − A" in hover and "A = " in hover and "B = " in hover, hover
    session.page.wait_for_timeout(300)
    c = charts(session)
    for key in ("cmp_a", "cmp_b"):
        ref = session.page.evaluate(CELL_JS, [key, j, i])
        assert any(
            abs(h["top"] - ref["rowTop"]) < 1.5 and abs(h["left"] - ref["colLeft"]) < 1.5
            for h in c[key]["hl"]
        ), (key, c[key]["hl"], ref)
    # and back: hovering B outlines the cell in B − A
    _hover(session, "cmp_b", 0, 2)
    session.page.wait_for_timeout(300)
    ref = session.page.evaluate(CELL_JS, ["cmp_diff", 0, 2])
    assert any(
        abs(h["top"] - ref["rowTop"]) < 1.5 and abs(h["left"] - ref["colLeft"]) < 1.5
        for h in charts(session)["cmp_diff"]["hl"]
    )
    # a click works the cell out in A and in B
    cell = _cell(session, "cmp_diff", j, i)
    session.rerun_after(lambda: session.page.mouse.click(cell["pageX"], cell["pageY"]))
    headings = _panel_headings(session)
    assert [h[:2] for h in headings] == ["A:", "B:"], headings
    assert all(f"a{i},{j} = " in h for h in headings)
    session.screenshot("compare-cell")
    assert_no_board_errors(session)
