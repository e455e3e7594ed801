"""Cell arithmetic and the Compare page in a real browser: a click on a weights cell shows
its worked computation at once (the board's cell.js, before the rerun), whose weight is the
cell's hover value, then the server's equations; the difference board's hover outlines the
same cell in A and B, and a click there works the cell out in A and in B."""

from __future__ import annotations

import re

import pytest
from axe import BLOCKING, WCAG_AA, axe_source, scan
from e2e_app import BrowserSession
from e2e_helpers import HEADINGS_JS, skipped_levels
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


# axe-core on the cell panels only, the browser's and the server's (its equations once needed
# scroll regions a keyboard cannot reach): the serious and critical WCAG 2.1 A/AA violations.
AXE_PANELS_JS = """async (tags) => {
  const r = await axe.run({include: [['.attnviz-arith'], ['[class*="_cell"][class*="st-key-"]']]},
                          {runOnly: {type: 'tag', values: tags},
                          resultTypes: ['violations']});
  return r.violations.map(v => `[${v.impact}] ${v.id}: ${v.nodes.map(n => n.target).join()}`);
}"""

# The browser's panels (cell.js) shown now: [{heading, its level, weight line, cell}], in page
# order.
CLIENT_JS = """() => Array.from(document.querySelectorAll('.attnviz-arith:not([hidden])'))
  .map(p => ({heading: p.querySelector('.attnviz-arith-title').textContent,
              level: +p.querySelector('.attnviz-arith-title').tagName[1],
              live: p.getAttribute('aria-live'),
              step5: p.querySelectorAll('li')[4].textContent, cell: p.dataset.cell}))"""


def _click_now(session, key: str, x: int, y: int) -> list[dict]:
    """Click cell (x, y) of chart ``key``; the browser's panels read right after the click
    (before the rerun it causes has come back), then the rerun is waited for."""
    cell = _cell(session, key, x, y)
    now: list[dict] = []

    def click() -> None:
        session.page.mouse.click(cell["pageX"], cell["pageY"])
        now.extend(session.page.evaluate(CLIENT_JS))

    session.rerun_after(click)
    return now


def _panel_boxes(session):
    """The server's part of a cell panel: its closed box of the same steps as equations and
    LaTeX (the browser wrote the steps as text), one per view."""
    return session.page.locator("[data-testid='stExpander'] summary").filter(
        has_text="as equations"
    )


def _panel_headings(session) -> list[str]:
    """The boxes' labels (without the expander's icon)."""
    return _panel_boxes(session).locator("[data-testid='stMarkdownContainer']").all_inner_texts()


def test_a_click_on_a_weights_cell_shows_its_arithmetic(session):
    session.open("/?N=6&mask=causal")
    i, j = 4, 1  # query 4, key 1 (row layout: x = key, y = query)
    hover = _hover(session, "pg_weights", j, i)
    shown = re.search(r"= (-?\d+\.\d{4})$", hover.strip())
    assert shown, hover
    # at once, in the browser: the steps as text, under the board, named by the cell
    (now,) = _click_now(session, "pg_weights", j, i)
    assert now["heading"].startswith(f"Weight a_{i},{j} = {shown.group(1)}, head 0"), (now, hover)
    assert now["live"] == "polite" and now["cell"] == f"0,{i},{j}"
    # its heading one level below the page's heading before it: no level skipped
    found = session.page.evaluate(HEADINGS_JS)
    assert found[0][0] == 1 and not skipped_levels(found), found
    assert now["step5"].startswith(f"5. Weight a_{i},{j} = {shown.group(1)}."), now
    headings = _panel_headings(session)  # then the server's part: one closed box
    assert len(headings) == 1, headings
    assert f"Weight a_{i},{j} of head 0 as equations" in headings[0], (headings, hover)
    # the cell is explained once: the browser's steps, which the rerun left in place; the
    # same steps as equations (KaTeX, with MathML for screen readers) and the LaTeX only
    # when the box is opened; no heading and no tabs of the server's own
    assert not session.page.get_by_text("came about").count()
    assert session.page.get_by_role("tab", name="Plain text").count() == 0
    assert session.page.evaluate(CLIENT_JS) == [now]
    _panel_boxes(session).first.click()
    session.page.wait_for_timeout(500)
    assert session.page.locator(".katex-mathml").count() >= 6
    assert session.page.get_by_text("Copy with the button at the top right").is_visible()
    session.screenshot("cell-panel")
    # axe-core: no serious or critical WCAG 2.1 A/AA violation in the two panels
    session.page.evaluate(axe_source() + "\n;undefined")
    found = session.page.evaluate(AXE_PANELS_JS, WCAG_AA)
    assert not [f for f in found if f[1:].split("]")[0] in BLOCKING], found
    # opened, the box of equations and LaTeX and the page's code box (syntax colours, long
    # lines): nothing serious or critical in the whole page
    # the box's code is drawn by the rerun its opening causes (ui.code.code_box)
    box = session.page.locator('[data-testid="stExpander"]').filter(
        has_text="NumPy code that reproduces this view"
    )
    session.rerun_after(lambda: box.get_by_text("NumPy code that reproduces this view").click())
    box.locator('[data-testid="stCode"]').wait_for()
    session.page.wait_for_timeout(800)
    blocking = [str(v) for v in scan(session.page) if v.impact in BLOCKING]
    assert not blocking, blocking
    # from the keyboard: Enter on a cell of the weights works it out as a click does; the
    # keyboard goes on from the clicked cell (query 4, key 1; issue 35: a click moves the
    # chart's outline there)
    session.page.locator('.attnviz-board .cell[data-key="pg_weights"] .attnviz-kbd').focus()
    session.page.keyboard.press("ArrowDown")
    session.rerun_after(lambda: session.page.keyboard.press("Enter"))
    assert [p["cell"] for p in session.page.evaluate(CLIENT_JS)] == [f"0,{i + 1},{j}"]
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
    # a click works the cell out in A and in B: at once under A's and B's boards (their
    # weights are the difference's hover values), then the server's equations of both
    hover = _hover(session, "cmp_diff", j, i)
    ab = re.search(r"A = (-?\d+\.\d{4}), B = (-?\d+\.\d{4})", hover)
    assert ab, hover
    now = _click_now(session, "cmp_diff", j, i)
    assert [p["heading"][:2] for p in now] == ["A:", "B:"], now
    assert now[0]["level"] == now[1]["level"] == 3, now  # side by side, in the h2 section
    for p, w in zip(now, ab.groups(), strict=True):
        assert p["heading"].startswith(f"{p['heading'][:2]} Weight a_{i},{j} = {w}, "), (p, hover)
    headings = _panel_headings(session)
    assert [h[:2] for h in headings] == ["A:", "B:"], headings
    assert all(f"Weight a_{i},{j} of head" in h for h in headings)
    session.screenshot("compare-cell")
    assert_no_board_errors(session)


def test_step_by_step_and_masking_work_a_clicked_weight_out_without_a_rerun(session):
    """Pages whose charts do not select a query (step by step, masking) still work a
    clicked weight out, in the browser only: the panel names the cell with its hover value
    and no script run follows. On Masking each mask's weights get their own panel."""
    session.open("/step_by_step?N=6&mask=causal")
    i, j = 4, 1
    shown = re.search(r"= (-?\d+\.\d{4})$", _hover(session, "sb_w", j, i).strip())
    cell = _cell(session, "sb_w", j, i)
    runs = session.runs()
    session.page.mouse.click(cell["pageX"], cell["pageY"])
    (now,) = session.page.evaluate(CLIENT_JS)
    assert now["heading"].startswith(f"Weight a_{i},{j} = {shown.group(1)}, head 0"), now
    session.page.wait_for_timeout(800)
    assert session.runs() == runs, "a click on step by step's weights started a rerun"
    # from the keyboard: Enter on a weight works it out too (still no rerun)
    session.page.locator('.attnviz-board .cell[data-key="sb_w"] .attnviz-kbd').focus()
    session.page.keyboard.press("ArrowDown")  # from the clicked cell (query 4, key 1)
    session.page.keyboard.press("Enter")
    assert [p["cell"] for p in session.page.evaluate(CLIENT_JS)] == [f"0,{i + 1},{j}"]
    session.page.wait_for_timeout(500)
    assert session.runs() == runs
    session.open("/masking?N=6")
    hovers = [_hover(session, f"mk_w_{t}", 0, 3).strip() for t in ("padding", "causal")]
    cell = _cell(session, "mk_w_causal", 0, 3)  # query 3, key 0
    runs = session.runs()
    session.page.mouse.click(cell["pageX"], cell["pageY"])
    panels = session.page.evaluate(CLIENT_JS)
    assert len(panels) == 2 and all(p["cell"] == "0,3,0" for p in panels), panels
    for p, hover in zip(panels, reversed(hovers), strict=True):  # causal, then padding
        weight = re.search(r"= (-?\d+\.\d{4})$", hover).group(1)
        assert p["heading"].startswith(f"Weight a_3,0 = {weight}"), (panels, hovers)
    session.page.wait_for_timeout(800)
    assert session.runs() == runs
    assert_no_board_errors(session)


def test_a_classic_comparison_on_the_slide_changes_the_sidebars_view_a(browser, app_server):
    """Compare's first slide: "Causal vs none" in the presets' popover sets the sidebar's
    mask (view A: none) and B's (causal). The click is inside the slide's fragment, which
    then reruns the whole page (AppTest reruns everything on a click and cannot tell): the
    sidebar's mask and the link follow it."""
    s = BrowserSession(browser, app_server, (1920, 1080))
    try:
        s.open("/compare?present=1&mask=causal")
        s.page.get_by_role("button", name="Classic comparisons").click()
        preset = s.page.get_by_role("button", name="Causal vs none")
        s.rerun_after(preset.click)
        assert "mask=causal" not in s.page.url.replace("b_mask=causal", ""), s.page.url
        assert "b_mask=causal" in s.page.url, s.page.url
        mask = s.page.locator('[data-testid="stSidebar"] .st-key-mask')
        assert "none" in mask.inner_text().lower(), mask.inner_text()
        s.assert_healthy("a preset on Compare's slide")
    finally:
        s.close()


# Each classic comparison's button: its label, whether its text is cut (Streamlit writes a
# button's label on one line and ends what does not fit with "…"), and its box.
PRESETS_JS = """() => Array.from(document.querySelectorAll('[class*="st-key-cmp_preset_"] button'))
  .filter(b => b.offsetWidth > 0).map(b => { const t = b.querySelector('.stMarkdownEllipsis') || b;
    const r = b.getBoundingClientRect();
    return {label: t.innerText, cut: t.scrollWidth > t.clientWidth + 1, right: r.right}; })"""


@pytest.mark.parametrize("lang", ["es", "ar"])
def test_the_classic_comparisons_are_whole_in_a_longer_language_on_a_small_laptop(
    new_session, lang
):
    """Spanish and Arabic name the comparisons in more letters than English: in six equal
    columns at 1280x720, "1 frente a 4 cabezas" showed as "1 frente a…". The buttons wrap
    onto a second row instead: every label whole, every button inside the window."""
    s = new_session((1280, 720))
    s.open(f"/compare?lang={lang}")
    buttons = s.page.evaluate(PRESETS_JS)
    assert len(buttons) == 6, buttons
    assert not [b["label"] for b in buttons if b["cut"]], buttons
    assert max(b["right"] for b in buttons) <= 1280, buttons
