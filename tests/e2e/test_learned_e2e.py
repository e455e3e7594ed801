"""The Learned attention page in a real browser: the step slider redraws the charts in place
(the same plot divs: no remount), the heads' small multiples carry their tables and their
keyboard (every weight in the accessibility tree, the announced cell checked against
attnviz.toys, Enter works out the cell), and axe finds no serious or critical violation."""

from __future__ import annotations

import re

import pytest
from axe import blocking, scan
from e2e_app import BrowserSession
from e2e_helpers import query
from test_a11y_e2e import Keys
from test_board_e2e import MARK_JS, assert_no_board_errors, charts

from attnviz import toys

pytestmark = pytest.mark.e2e

TASK = "previous"  # T = 16: every cell of its 2 heads fits the tables (no top-3 rows)
BOARD = '[data-board="lr_heads"]'
CHARTS = ("lr_curves_loss", "lr_curves_jobs", "lr_heads_all")


def step_thumb(session):
    return session.page.locator(".st-key-lr_step input[type='range']").first


def test_the_step_slider_redraws_in_place(session):
    run = toys.load(TASK)
    first, second = int(run.steps[10]), int(run.steps[11])
    session.open(f"/learned?task={TASK}&checkpoint={first}")
    before = charts(session)
    assert set(CHARTS) <= set(before)
    assert f"step {first}" in before["lr_heads_all"]["title"]
    assert session.page.evaluate(MARK_JS) == len(before)
    marks = {k: c["mark"] for k, c in charts(session).items()}
    step_thumb(session).focus()
    session.rerun_after(lambda: session.page.keyboard.press("ArrowRight"))
    after = charts(session)
    assert f"step {second}" in after["lr_heads_all"]["title"]
    assert query(session).get("checkpoint") == [str(second)], session.page.url
    # the same plot divs (the same JS objects) drew the new checkpoint: no remount
    assert {k: c["mark"] for k, c in after.items()} == marks
    assert_no_board_errors(session)


def test_the_heads_have_tables_and_a_keyboard(new_session):
    s = new_session((1280, 900))
    run = toys.load(TASK)
    c = 12
    s.open(f"/learned?task={TASK}&checkpoint={int(run.steps[c])}")
    w = toys.example_attentions(TASK, run.checkpoints[c])[0]  # (H, T, T): one layer
    labels = toys.example(TASK).labels
    chart = s.page.locator(f"{BOARD} [role='application']").first
    chart.wait_for(timeout=30_000)
    snap = s.page.locator(BOARD).aria_snapshot()
    for h in range(w.shape[0]):
        assert f"head {h}" in snap
    values = set(re.findall(r"cell \"(\d\.\d{4})\"", snap))
    missing = [
        (h, i, j)
        for h in range(w.shape[0])
        for i in range(w.shape[1])
        for j in range(i + 1)  # the causal cells (the others: "masked")
        if f"{w[h, i, j]:.4f}" not in values
    ]
    assert not missing, f"weights not in the accessibility tree: {missing[:10]}"

    k = Keys(s)
    chart.focus()
    live = lambda: s.page.evaluate(  # noqa: E731
        "() => document.activeElement.parentElement.querySelector('[aria-live]').textContent"
    )
    k.press("ArrowDown", 3)
    k.press("ArrowRight", 2)
    said = live()
    want = f"head 0: query {labels[3]}, key {labels[2]}, weight {w[0, 3, 2]:.2f}"
    assert said.startswith(want), said
    k.press("]")
    said = live()
    assert said.startswith(f"head 1: query {labels[3]}, key {labels[2]}, weight {w[1, 3, 2]:.2f}")
    k.rerun("Enter")  # a click on the cell: the cell panel works it out
    panel = s.page.locator(".st-key-lr_heads_cell")
    assert "a_3,2 of head 1" in panel.inner_text(), panel.inner_text()
    s.assert_healthy("keyboard in the learned heads")


def test_axe_finds_nothing_serious(new_session):
    s = new_session((1280, 900))
    s.open(f"/learned?task=induction&checkpoint={int(toys.load('induction').steps[-1])}")
    s.assert_healthy("learned page")
    found = blocking(scan(s.page))
    assert not found, "serious/critical WCAG 2.1 A/AA violations:\n" + "\n".join(map(str, found))


def test_train_it_yourself_shows_progress_then_offers_the_run(new_session):
    s = new_session((1280, 1000))
    s.open(f"/learned?task={TASK}")
    box = s.page.locator(".st-key-lr_steps input").first
    s.rerun_after(lambda: (box.fill("1000"), box.press("Enter")))
    s.page.locator(".st-key-lr_train button").click()
    # the bar, as the page polls the run (waited for with its text: each poll redraws it)
    said = re.compile(rf"Training {TASK}, seed 1: step [\d,]+ of 1,000")
    s.page.locator('[data-testid="stProgress"]', has_text=said).first.wait_for(timeout=30_000)
    done = s.page.locator('[data-testid="stAlert"]', has_text=f"Trained {TASK}")
    done.wait_for(timeout=120_000)  # the run polls its way to the end (a limit, not a timing)
    source = s.page.locator(".st-key-lr_source")
    source.wait_for(timeout=30_000)
    assert "your run (seed 1, 1000 steps)" in source.inner_text()
    assert set(CHARTS) | {"lr_live_loss", "lr_live_jobs", "lr_live_all"} <= set(charts(s))
    assert_no_board_errors(s)


def test_align_shows_the_cross_attention_redrawn_in_place(session):
    """?task=align: the cross-attention heads (French rows, English columns) and each
    head's alignment accuracy; the step slider redraws them in place."""
    run = toys.load("align")
    first, second = int(run.steps[0]), int(run.steps[1])
    session.open(f"/learned?task=align&checkpoint={first}")
    before = charts(session)
    assert set(CHARTS) <= set(before)
    assert f"step {first}" in before["lr_heads_all"]["title"]
    assert "cross-attention" in before["lr_heads_all"]["title"]
    session.page.evaluate(MARK_JS)
    marks = {k: c["mark"] for k, c in charts(session).items()}
    step_thumb(session).focus()
    session.rerun_after(lambda: session.page.keyboard.press("ArrowRight"))
    after = charts(session)
    assert f"step {second}" in after["lr_heads_all"]["title"]
    assert {k: c["mark"] for k, c in after.items()} == marks  # no remount
    assert_no_board_errors(session)


# Issue 47: the heads chart on a 1080p slide and on a phone, measured from the DOM and
# plotly's _fullLayout: the chart's box, each head's plot, every text of the chart (its
# size, and the boxes of the titles: the figure's, each head's, the axes'), the colour bar.
HEADS_JS = """() => {
  const gd = document.querySelector('[data-key="lr_heads_all"] .js-plotly-plot');
  const fl = gd._fullLayout, r = gd.getBoundingClientRect();
  const box = (e) => { const b = e.getBoundingClientRect();
    return {text: e.textContent, left: b.left, right: b.right, top: b.top, bottom: b.bottom}; };
  const texts = Array.from(gd.querySelectorAll('text')).filter(e => e.textContent.trim()
    && e.getBoundingClientRect().width > 0);
  const titles = texts.filter(e => e.matches('.annotation-text, [class$="title"]')).map(box);
  const heads = Object.keys(fl).filter(k => /^yaxis\\d*$/.test(k)).map(k => {
    const y = fl[k], x = fl['x' + k.slice(1)];
    return {left: r.left + x._offset, right: r.left + x._offset + x._length,
            top: r.top + y._offset, bottom: r.top + y._offset + y._length}; });
  const bars = Array.from(gd.querySelectorAll('.colorbar')).map(box);
  const slider = document.querySelector('.st-key-lr_step').getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, height: r.height, right: r.right,
          screen: [innerWidth, innerHeight], slider: slider.bottom, sliderRight: slider.right,
          sliderTop: slider.top, heads, titles, bars,
          sizes: texts.map(e => parseFloat(getComputedStyle(e).fontSize)),
          scrolled: document.querySelector('[data-testid="stMain"]').scrollTop,
          wide: document.documentElement.scrollWidth}; }"""


def overlapping(boxes: list[dict]) -> list[tuple[str, str]]:
    """The pairs of text boxes that overlap (by more than a pixel each way)."""
    return [
        (a["text"], b["text"])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a["left"] < b["right"] - 1 and b["left"] < a["right"] - 1
        and a["top"] < b["bottom"] - 1 and b["top"] < a["bottom"] - 1
    ]  # fmt: skip


@pytest.fixture(scope="module")
def projector(browser, app_server):
    """One 1080p tab for the module's slides (each test goes to its link in it)."""
    s = BrowserSession(browser, app_server, (1920, 1080))
    yield s
    s.close()


@pytest.mark.parametrize("task", ["induction", "align"])
def test_the_heads_are_one_slide(projector, task):
    """Issue 47: at 1920x1080 ?present=1, unscrolled, every head on the screen beside the
    step slider (right of it, the slider within the screen), a layer a row, the grid's
    plots from the first's top to the last's bottom at least 45% of the screen's height
    (every head in one row under the slider was 32-33%: the slide's width bound it), no two
    titles overlapping ("key" sat on "head 2 (layer 1)"), no chart text under 20 px."""
    s = projector
    s.visit(f"/learned?task={task}&present=1")
    s.assert_healthy(f"learned slide, {task}")
    m = s.page.evaluate(HEADS_JS)
    width, screen = m["screen"]
    t = toys.get_task(task)
    heads = m["heads"]
    assert m["scrolled"] == 0 and len(heads) == t.layers * t.heads, m
    assert m["bottom"] <= screen and m["slider"] <= screen, m
    span = max(h["bottom"] for h in heads) - min(h["top"] for h in heads)
    assert span >= 0.45 * screen, (span, m)
    rows = sorted({round(h["top"]) for h in heads})
    assert len(rows) == t.layers, heads  # a layer a row
    assert all(h["left"] >= m["sliderRight"] and h["bottom"] <= screen for h in heads), m
    square = [(h["right"] - h["left"]) / (h["bottom"] - h["top"]) for h in heads]
    assert all(abs(r - 1) < 0.02 for r in square), square  # T x T or 8 x 8 cells: square
    assert not overlapping(m["titles"]), overlapping(m["titles"])
    assert min(m["sizes"]) >= 20, sorted(set(m["sizes"]))
    s.screenshot(f"learned_slide_{task}", full=False)


def test_a_phone_has_one_colour_bar_across_the_top(new_session):
    """Issue 47: on a phone the heads are stacked; their shared colour bar lies across the
    top, above the first head, within the screen (it stretched beside all four)."""
    s = new_session((390, 844))
    s.open("/learned?task=induction")
    m = s.page.evaluate(HEADS_JS)
    (bar,) = m["bars"]
    first = m["heads"][0]
    assert bar["bottom"] <= first["top"] and bar["right"] <= m["screen"][0], (bar, first)
    assert bar["right"] - bar["left"] > 3 * (bar["bottom"] - bar["top"]), bar  # lying flat
    assert m["wide"] <= m["screen"][0] and m["right"] <= m["screen"][0], m
    assert not overlapping(m["titles"]), overlapping(m["titles"])


#: The first heads chart's drawing (plotly's svg container) and its cell, the plot area of
#: its first head and the keyboard's outline, as [left, right, top, bottom] in px.
SIDES_JS = """() => {
  const side = (e) => { if (!e) return null; const r = e.getBoundingClientRect();
    return [r.left, r.right, r.top, r.bottom].map(Math.round); };
  const gd = document.querySelector('[data-board="lr_heads"] .js-plotly-plot');
  return { drawing: side(gd.querySelector('.svg-container')), cell: side(gd.closest('.cell')),
    area: side(gd.querySelector('.nsewdrag')),
    outline: side(document.querySelector('.attnviz-focus')) };
}"""


@pytest.mark.parametrize("lang", ["ar", "en"])
def test_the_heads_grid_stands_where_the_line_starts(new_session, lang):
    """The heads grid is drawn at a fixed width narrower than a laptop's column: at the left
    in English, at the right in Arabic (where the prose starts; it stood at the left). The
    keyboard's outline of a cell and a hovered cell's row and column are drawn on the heads
    either way (keys.js and link.js place their boxes from the chart's own corner)."""
    s = new_session((1440, 900))
    s.open(f"/learned?task=induction&lang={lang}")
    chart = s.page.locator(f"{BOARD} [role='application']").first
    chart.wait_for(timeout=30_000)
    chart.focus()
    s.page.keyboard.press("ArrowRight")
    s.page.keyboard.press("ArrowDown")
    s.page.locator(".attnviz-focus").wait_for(timeout=5_000)
    m = s.page.evaluate(SIDES_JS)
    drawing, cell, area, outline = m["drawing"], m["cell"], m["area"], m["outline"]
    assert drawing[1] - drawing[0] < (cell[1] - cell[0]) * 0.9, m  # narrower than its line
    start = 1 if lang == "ar" else 0
    assert abs(drawing[start] - cell[start]) <= 1, m
    # the outline lies on the first head's plot area, one cell in from its top left
    assert area[0] < outline[0] < outline[1] < area[1], m
    assert area[2] < outline[2] < outline[3] < area[3], m
    # a hovered cell's row and column are outlined in the heads' own plot areas
    s.page.mouse.move(area[0] + 30, area[2] + 30)
    s.page.locator(f"{BOARD} .hl").first.wait_for(timeout=5_000)
    boxes = s.page.evaluate(HL_JS)
    assert boxes and all(drawing[0] <= b[0] < b[1] <= drawing[1] for b in boxes), (boxes, m)
    assert_no_board_errors(s)


HL_JS = f"""() => [...document.querySelectorAll('{BOARD} .hl')].map(e => {{
  const r = e.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.right)]; }})"""
