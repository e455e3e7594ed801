"""The board's accessibility modules in a real browser (attnviz/ui/board/js/table.js, keys.js),
attached through the per-chart hook to charts drawn by plotly.js as the board draws them
(tests/e2e/a11y_harness.py): the keyboard walk inside a heatmap with the announced text, the
tables in the accessibility tree (Playwright's aria snapshot) equal to the engine's weights,
and axe-core on the result (the mode bar inside a role="img" plot is what it flags)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from a11y_harness import open_harness
from axe import blocking, contrast, scan
from e2e_app import SCREENSHOTS

from attnviz import engine, viz
from attnviz.teaching.inputs import default_labels

pytestmark = pytest.mark.e2e

N = 6
LIVE_JS = """(key) => {
  const gd = document.querySelector(`[data-key="${key}"]`);
  const live = gd.parentElement.querySelector('[aria-live]');
  return live ? live.textContent : null;
}"""
ACTIVE_JS = """() => { const e = document.activeElement;
  return (e && (e.dataset.key || e.id)) || null; }"""
TABLE_JS = """(key) => Array.from(document.querySelectorAll(
    `[data-key="${key}"] ~ .attnviz-bar tbody tr`))
  .map(tr => Array.from(tr.querySelectorAll('td')).map(td => td.textContent.replace('−', '-')))"""


def _attention(n: int = N, seed: int = 0):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((n, 4)) for _ in range(3))
    scores = engine.attention_scores(q, k)
    w, out = engine.scaled_dot_product_attention(q, k, v)
    return scores, w, out


@pytest.fixture
def harness(browser):
    ctx = browser.new_context(
        viewport={"width": 1280, "height": 900}, device_scale_factor=1, accept_downloads=True
    )
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    scores, w, out = _attention()
    labels = default_labels(N)
    charts = [
        ("weights", viz.heatmaps.attention_figure(w, what="weights", labels=labels), True),
        ("scores", viz.heatmaps.attention_figure(scores, what="scores", labels=labels), True),
        ("bars", viz.attention.query_weights_figure(w[0], query=0, labels=labels), False),
        ("out", viz.heatmaps.token_matrix_figure(out, name="out", labels=labels), False),
        # no table and no keys (a line): role="img" as drawn, with plotly's mode bar inside
        ("line", go.Figure(go.Scatter(x=[0, 1, 2], y=[1.0, 0.5, 2.0]), {"title": "A line"}), False),
    ]
    open_harness(page, charts)
    yield page, w, scores
    assert not errors, errors
    ctx.close()


def _live(page, key: str) -> str:
    return page.evaluate(LIVE_JS, key)


def test_keyboard_reads_query_2_key_4_and_selects_it(harness):
    page, w, _ = harness
    presses = 0

    def press(key: str, times: int = 1) -> None:
        nonlocal presses
        for _ in range(times):
            page.keyboard.press(key)
            presses += 1

    page.focus("#before")
    press("Tab")  # the weights chart takes focus: its first cell is announced
    assert page.evaluate(ACTIVE_JS) == "weights"
    assert _live(page, "weights") == f"query t0, key t0, weight {w[0, 0]:.2f}, row sums to 1"
    press("ArrowDown", 2)
    press("ArrowRight", 4)
    want = f"query t2, key t4, weight {w[2, 4]:.2f}, row sums to 1"
    assert _live(page, "weights") == want
    calls = page.evaluate("() => window.__calls")
    assert ["hover", "weights", 2, 4] in calls  # the linked views follow the focused cell
    # the outline sits on cell (2, 4): its centre maps back to x=4, y=2 on the chart's axes
    centre = page.evaluate(
        """() => { const gd = document.querySelector('[data-key="weights"]');
          const o = gd.parentElement.querySelector('.attnviz-focus');
          if (!o) return null;
          const fl = gd._fullLayout;
          const x = o.offsetLeft - gd.offsetLeft + o.offsetWidth / 2 - fl.xaxis._offset;
          const y = o.offsetTop - gd.offsetTop + o.offsetHeight / 2 - fl.yaxis._offset;
          return [fl.xaxis.p2l(x), fl.yaxis.p2l(y)]; }"""
    )
    assert centre is not None and round(centre[0]) == 4 and round(centre[1]) == 2, centre
    press("Enter")  # selects query 2, as a click does
    assert page.evaluate("() => window.__calls").count(["select", "weights", 2, 4]) == 1
    assert _live(page, "weights") == "selected query t2"
    assert presses == 8
    # jumps
    press("End")
    assert _live(page, "weights").startswith("query t2, key t5,")
    press("Home")
    assert _live(page, "weights").startswith("query t2, key t0,")
    press("PageDown")
    assert _live(page, "weights").startswith("query t5, key t0,")
    press("PageUp")
    assert _live(page, "weights").startswith("query t0, key t0,")
    page.keyboard.press("Control+End")
    assert _live(page, "weights").startswith("query t5, key t5,")
    # Escape leaves the chart for the next stop under it, its Table button; the outline goes
    press("Escape")
    assert page.evaluate("() => document.activeElement.className") == "attnviz-table-toggle"
    assert page.locator('[data-key="weights"] ~ .attnviz-focus').count() == 0
    # then the downloads, then the next chart (the mode bar is not a stop)
    press("Tab")
    assert page.evaluate("() => document.activeElement.getAttribute('aria-label')") == (
        "Download Weights A = softmax(S) as PNG"
    )
    press("Tab", 2)
    assert page.evaluate(ACTIVE_JS) == "scores"


def test_bars_and_token_matrices_are_read_too(harness):
    page, w, _ = harness
    page.focus('[data-key="bars"]')
    page.keyboard.press("ArrowRight")
    assert _live(page, "bars") == f"query t0, key t1, weight {w[0, 1]:.2f}"
    page.keyboard.press("Enter")  # the bars select nothing
    assert not [c for c in page.evaluate("() => window.__calls") if c[0] == "select"]
    page.focus('[data-key="out"]')
    assert _live(page, "out").startswith("token t0, feature 0, value ")


def test_tables_hold_the_engines_weights_in_the_accessibility_tree(harness):
    page, w, scores = harness
    snap = page.locator("#root").aria_snapshot()
    # every weight at 4 decimals, in a row headed by its query, under columns named by keys
    for i in range(N):
        assert f'rowheader "query t{i}"' in snap
        for j in range(N):
            assert f"{w[i, j]:.4f}" in snap, (i, j)
    assert 'columnheader "key t4"' in snap
    rows = page.evaluate(TABLE_JS, "weights")
    np.testing.assert_allclose(np.array(rows, dtype=float), w, atol=5e-5)
    scores_rows = page.evaluate(TABLE_JS, "scores")
    np.testing.assert_allclose(np.array(scores_rows, dtype=float), scores, atol=5e-5)


def test_table_toggle_shows_the_table_to_everyone(harness):
    page, w, _ = harness
    holder = page.locator('[data-key="weights"] ~ .attnviz-bar .attnviz-table-holder')
    assert holder.bounding_box()["width"] <= 1  # visually hidden, but in the tree
    button = page.locator('[data-key="weights"] ~ .attnviz-bar .attnviz-table-toggle')
    assert button.get_attribute("aria-label") == "Table: Weights A = softmax(S)"
    button.focus()
    page.keyboard.press("Enter")
    assert button.get_attribute("aria-expanded") == "true"
    assert holder.bounding_box()["width"] > 200
    page.focus('[data-key="weights"]')
    for _ in range(2):
        page.keyboard.press("ArrowDown")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "a11y_harness_table.png"), full_page=True)


def test_download_buttons_under_the_chart(harness):
    page, _, _ = harness
    png = page.get_by_role("button", name="Download Weights A = softmax(S) as PNG")
    with page.expect_download(timeout=30_000) as d:
        png.focus()
        page.keyboard.press("Enter")
    assert d.value.suggested_filename == "weights.png"
    path = d.value.path()
    width = int.from_bytes(Path(path).read_bytes()[16:20], "big")  # the PNG's IHDR width
    assert width >= 1900, width
    svg = page.get_by_role("button", name="Download Weights A = softmax(S) as SVG")
    with page.expect_download(timeout=30_000) as d:
        svg.click()
    assert d.value.suggested_filename == "weights.svg"


def test_axe_finds_no_serious_violation_with_the_modules(harness):
    page, _, _ = harness
    # a chart without keys (a line) is a named figure; the mode bar stays, out of the Tab order
    assert page.get_attribute('[data-key="line"]', "role") == "figure"
    assert page.get_attribute('[data-key="line"]', "aria-label") == "Chart: A line"
    assert page.locator('[data-key="line"] .modebar-btn').count() > 0
    assert page.locator('[data-key="line"] .modebar-btn:not([tabindex="-1"])').count() == 0
    found = blocking(scan(page, frames=False))
    assert not found, "\n".join(map(str, found))


def test_axe_flags_a_planted_mode_bar_in_an_image(harness):
    """The check can fail: a focusable button inside a role="img" chart (what every chart
    was before tools.js) is a serious nested-interactive violation."""
    page, _, _ = harness
    page.evaluate(
        """() => { const d = document.createElement('div'); d.setAttribute('role', 'img');
          d.setAttribute('aria-label', 'Chart: planted');
          d.innerHTML = '<button type="button">Download plot as a PNG</button>';
          document.getElementById('root').appendChild(d); }"""
    )
    found = blocking(scan(page, frames=False))
    assert [v.id for v in found] == ["nested-interactive"], "\n".join(map(str, found))


def test_the_focus_is_visible_on_a_chart(harness):
    page, _, _ = harness
    page.focus("#before")
    page.keyboard.press("Tab")
    ring = page.evaluate(
        """() => { const s = getComputedStyle(document.activeElement);
          return [s.outlineStyle, parseFloat(s.outlineWidth), s.outlineColor]; }"""
    )
    assert ring[0] == "solid" and ring[1] >= 3, ring
    rgb = [int(v) for v in re.findall(r"\d+", ring[2])[:3]]
    assert contrast(rgb, [255, 255, 255]) >= 3, ring
