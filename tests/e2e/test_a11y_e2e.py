"""Accessibility of the app in a real browser (issue 18, WCAG 2.1 AA).

- axe-core (pinned in tests/e2e/package-lock.json), WCAG 2.0/2.1 A and AA rules, on the
  presenter view, a masked and a 16-token view: no serious or critical violation in the
  app's markup (``test_axe_app_markup``) and its boards (``test_axe_boards``). Every page
  is scanned where it is already open, in test_pages.py's laptop walk (one visit per page),
  and in test_devices_e2e.py's phone walk. The per-view counts are written to
  artifacts/a11y/axe.json (docs/accessibility.md).
- A planted violation (a chart with role="img" around a button) makes the check fail.
- A keyboard-only walk from page load: change N, change the head, answer and check an
  exercise, go to the next presenter step; the key presses are counted (and printed).
- Every focusable control shows its focus at >= 3:1; no motion under reduced motion.

- In the weights chart of the playground: the keyboard reads query 2 / key 4 (the announced
  text checked) and Enter selects query 2; Playwright's aria snapshot holds every weight.
- On the multi-head page (N=6, 2 heads): the aria snapshot holds every weight of every head;
  the keyboard walks the small multiples across heads (`]` / `[`), each announcement checked
  against the engine, and Enter selects a query and head.

The board's modules (attnviz/ui/board/js/table.js, keys.js, tools.js, CHART_MODULES) are also
tested alone, through the per-chart hook, in test_a11y_harness_e2e.py.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from axe import Violation, assert_no_blocking, contrast, in_board, record, scan
from e2e_app import ROOT, BrowserSession
from e2e_helpers import query, selectbox_input, slider_value

from attnviz import engine
from attnviz.teaching import inputs

pytestmark = pytest.mark.e2e

ARTIFACTS = ROOT / "artifacts" / "a11y"
#: Three views of note that no page walk opens (every page is scanned in test_pages.py).
VIEWS = {
    "presenter view (step by step)": "/step_by_step?present=1",
    "masked view (playground, causal)": "/?mask=causal",
    "16 tokens (playground)": "/?N=16",
}


class AxeResults(dict):
    """View name -> its violations, scanned once on first use (one visit per view, so that
    each test stays within the per-test timeout: the first view opened, the others reached
    in the same tab); the per-view counts go to artifacts/a11y/axe.json as they come."""

    def __init__(self, session: BrowserSession):
        super().__init__()
        self.session = session

    def __missing__(self, view: str) -> list[Violation]:
        s = self.session
        s.errors.clear()
        s.visit(VIEWS[view])
        s.assert_healthy(view)
        found = self[view] = scan(self.session.page)
        record(view, found)
        return found


@pytest.fixture(scope="module")
def axe_results(browser, app_server):
    session = BrowserSession(browser, app_server, (1280, 900))
    yield AxeResults(session)
    session.close()


@pytest.mark.parametrize("view", list(VIEWS))
def test_axe_app_markup(axe_results, view):
    assert_no_blocking([v for v in axe_results[view] if not in_board(v)], view)


@pytest.mark.parametrize("view", list(VIEWS))
def test_axe_boards(axe_results, view):
    assert_no_blocking([v for v in axe_results[view] if in_board(v)], view)


def test_a_planted_violation_fails_the_check(session):
    """A chart with role="img" around a button (what plotly's mode bar was) is flagged."""
    session.open("/")
    assert_no_blocking([v for v in scan(session.page, frames=False) if not in_board(v)], "/")
    session.page.evaluate(
        """() => { const d = document.createElement('div'); d.setAttribute('role', 'img');
          d.setAttribute('aria-label', 'Chart: planted');
          d.innerHTML = '<button type="button">Download plot as a PNG</button>';
          document.querySelector('[data-testid="stMain"]').appendChild(d); }"""
    )
    found = scan(session.page, frames=False)
    with pytest.raises(AssertionError, match="nested-interactive"):
        assert_no_blocking(found, "planted")


# --------------------------------------------------------------------------- keyboard

ACTIVE_JS = """() => { const e = document.activeElement; if (!e) return '';
  const key = e.closest('[class*="st-key-"]');
  const k = key ? Array.from(key.classList).find(c => c.startsWith('st-key-')) : '';
  return [k, e.tagName, e.getAttribute('role') || '', (e.innerText || e.value || '').slice(0, 40)]
    .join('|'); }"""


class Keys:
    """Key presses in the page, counted."""

    def __init__(self, session: BrowserSession):
        self.s = session
        self.count = 0

    def press(self, key: str, times: int = 1) -> None:
        for _ in range(times):
            self.s.page.keyboard.press(key)
            self.count += 1

    def type(self, text: str) -> None:
        self.s.page.keyboard.type(text)
        self.count += len(text)

    def tab_to(self, pattern: str, limit: int = 80, back: bool = False) -> int:
        """Tab (Shift+Tab with ``back``) until the focused element's description (its
        st-key class, tag, role, text) matches ``pattern``; returns the presses."""
        for i in range(1, limit + 1):
            self.press("Shift+Tab" if back else "Tab")
            if re.search(pattern, self.s.page.evaluate(ACTIVE_JS), re.S):
                return i
        raise AssertionError(f"no focus on {pattern!r} after {limit} Tab presses")

    def rerun(self, key: str) -> None:
        self.count += 1
        self.s.rerun_after(lambda: self.s.page.keyboard.press(key))


def test_keyboard_walk(new_session, capsys):
    """From page load, keyboard only: N 6 -> 7, head 0 -> 1 (playground); answer and check
    the first exercise; the next presenter step. Key presses are counted per task."""
    s = new_session((1280, 900))
    counts = {}
    s.open("/")
    k = Keys(s)
    k.tab_to(r"st-key-N\|INPUT")
    k.rerun("ArrowRight")
    assert slider_value(s, "N") == 7
    counts["change N (6 -> 7)"] = k.count

    k = Keys(s)
    k.tab_to(r"st-key-head\|INPUT")
    k.type("1")
    s.page.wait_for_timeout(300)
    k.rerun("Enter")
    assert selectbox_input(s, "head").input_value() == "1"
    counts["change the head (0 -> 1)"] = k.count

    # the sidebar's page links come before the main area: back to "Exercises"
    k = Keys(s)
    k.tab_to(r"\|A\|.*Exercises", back=True, limit=120)
    k.rerun("Enter")
    assert "/exercises" in s.page.url
    counts["go to the exercises page (from the head picker)"] = k.count

    from attnviz.classroom import exercises

    seed = int(re.search(r"seed=(\d+)", s.page.url).group(1)) if "seed=" in s.page.url else 0
    first = exercises.generate(seed=seed, count=8)[0]
    k = Keys(s)
    k.tab_to(r"st-key-ex0\|INPUT", limit=120)
    k.type(first.answer_text)
    k.tab_to(r"st-key-ex0_check\|BUTTON")
    k.rerun("Enter")
    s.page.get_by_text(f"Right: {first.answer_text}.").wait_for(timeout=20_000)
    counts["answer and check exercise 1"] = k.count

    s.open("/step_by_step?present=1&N=5")
    k = Keys(s)
    k.rerun("PageDown")  # the presenter view's Next, from page load
    assert "step=2" in s.page.url
    counts["next presenter step (PageDown)"] = k.count
    k = Keys(s)
    k.tab_to(r"st-key-present_next\|BUTTON")
    k.rerun("Enter")
    assert "step=3" in s.page.url
    counts["next presenter step (Tab to Next, Enter)"] = k.count
    s.assert_healthy("keyboard walk")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "keyboard_walk.json").write_text(json.dumps(counts, indent=1))
    with capsys.disabled():
        print("\nkey presses:", counts)


def test_keyboard_reads_and_selects_in_the_weights_chart(new_session, capsys):
    """Playground at N=6: Tab to the weights chart, arrows to query 2 / key 4, the announced
    text; Enter selects query 2 (the query picker follows)."""
    s = new_session((1280, 900))
    s.open("/")
    w = _playground_weights()
    k = Keys(s)
    k.tab_to(r"\|DIV\|application\|", limit=120)
    for _ in range(10):  # the first chart stop is the scores; Escape moves on
        label = s.page.evaluate("() => document.activeElement.getAttribute('aria-label')")
        if label.startswith("Chart: Weights"):
            break
        k.press("Escape")
        k.tab_to(r"\|DIV\|application\|")
    k.press("ArrowDown", 2)
    k.press("ArrowRight", 4)
    live = s.page.evaluate(
        "() => document.activeElement.parentElement.querySelector('[aria-live]').textContent"
    )
    assert live == f"query t2, key t4, weight {w[2, 4]:.2f}, row sums to 1"
    k.rerun("Enter")  # selects query 2, as a click does: the query picker and the link follow
    assert query(s).get("query") == ["2"], s.page.url
    assert s.page.locator(".st-key-query input").first.input_value() == "2"
    s.assert_healthy("keyboard in the weights chart")
    with capsys.disabled():
        print(f"\nread query 2 / key 4 and select it, from page load: {k.count} key presses")


def _default_weights() -> np.ndarray:
    """Every head's weights (2, 6, 6) at the defaults (random X, N=6, D=8, seed 0, 2 heads,
    xavier, biases, 1/√d_k), from the engine: the playground and the multi-head page."""
    ti = inputs.random_input(6, 8, 0)
    params = engine.AttentionParams.random(8, seed=1, init="xavier", bias=True)
    res = engine.multi_head_attention(ti.x, params, num_heads=2, scale=True, mask=None)
    return np.asarray(res.weights)


def _playground_weights() -> np.ndarray:
    """Head 0's weights of the playground at its defaults."""
    return _default_weights()[0]


OUTLINE_JS = """() => { const gd = document.activeElement;
  const o = gd.parentElement.querySelector('.attnviz-focus');
  const box = (ax) => [ax._offset, ax._offset + ax._length];
  const fl = gd._fullLayout;
  return o && {left: o.offsetLeft - gd.offsetLeft, top: o.offsetTop - gd.offsetTop,
               width: o.offsetWidth, x: box(fl.xaxis), x2: box(fl.xaxis2)}; }"""


def test_multi_head_page_every_head_by_keyboard_and_in_the_tree(new_session, capsys):
    """Multi-head page at N=6, 2 heads: the accessibility tree holds every weight of every
    head; the keyboard reads query 2 / key 4 in head 0, `]` moves to the same cell of head 1
    (announced with the engine's weight, outlined on head 1's subplot), `[` back, and Enter
    selects that query and head."""
    s = new_session((1280, 900))
    s.open("/multi_head")
    w = _default_weights()
    chart = s.page.locator('[data-board="board_mh_small"] [role="application"]').first
    chart.wait_for(timeout=30_000)
    snap = s.page.locator('[data-board="board_mh_small"]').aria_snapshot()
    for h in range(2):
        assert f'table "Weights of every head — rows = queries (PyTorch), head {h}"' in snap
    values = set(re.findall(r"cell \"(\d\.\d{4})\"", snap))
    missing = [
        (h, i, j)
        for h in range(2)
        for i in range(6)
        for j in range(6)
        if f"{w[h, i, j]:.4f}" not in values
    ]
    assert not missing, f"weights not in the accessibility tree: {missing}"
    assert 'rowheader "query t2"' in snap and 'columnheader "key t4"' in snap

    k = Keys(s)
    tabs = k.tab_to(r"\|DIV\|application\|", limit=120)  # the first chart stop of the page
    label = s.page.evaluate("() => document.activeElement.getAttribute('aria-label')")
    assert label.startswith("Chart: Weights of every head") and "] and [" in label, label
    live = lambda: s.page.evaluate(  # noqa: E731
        "() => document.activeElement.parentElement.querySelector('[aria-live]').textContent"
    )
    k.press("ArrowDown", 2)
    k.press("ArrowRight", 4)
    assert live() == f"head 0: query t2, key t4, weight {w[0, 2, 4]:.2f}, row sums to 1"
    k.press("]")
    assert live() == f"head 1: query t2, key t4, weight {w[1, 2, 4]:.2f}, row sums to 1"
    o = s.page.evaluate(OUTLINE_JS)
    assert o["x2"][0] - 2 <= o["left"] and o["left"] + o["width"] <= o["x2"][1] + 2, o
    k.press("]")  # the last head: stays
    assert live().startswith("head 1: query t2, key t4")
    k.press("[")
    assert live() == f"head 0: query t2, key t4, weight {w[0, 2, 4]:.2f}, row sums to 1"
    o = s.page.evaluate(OUTLINE_JS)
    assert o["x"][0] - 2 <= o["left"] and o["left"] + o["width"] <= o["x"][1] + 2, o
    k.press("]")
    k.rerun("Enter")  # selects query 2 of head 1: the pickers below follow
    assert query(s).get("query") == ["2"] and query(s).get("head") == ["1"], s.page.url
    assert s.page.locator(".st-key-query input").first.input_value() == "2"
    s.assert_healthy("keyboard across the heads of the multi-head page")
    with capsys.disabled():
        print(
            f"\nmulti-head: Tab x{tabs} to the heads, query 2 / key 4 of head 1 and select it "
            f"(down x2, right x4, ], Enter): {tabs + 8} key presses from page load"
        )


def test_aria_snapshot_of_the_playground_holds_every_weight(session):
    session.open("/")
    w = _playground_weights()
    snap = session.page.locator('[data-testid="stMain"]').aria_snapshot()
    missing = [(i, j) for i in range(6) for j in range(6) if f"{w[i, j]:.4f}" not in snap]
    assert not missing, f"weights not in the accessibility tree: {missing}"
    assert 'rowheader "query t2"' in snap and 'columnheader "key t4"' in snap


# --------------------------------------------------------------------------- focus, motion

FOCUS_JS = """() => { let e = document.activeElement;
  if (!e || e === document.body) return null;
  // a visually hidden input (a slider's, inside its thumb): the ring is its thumb's
  const hidden = e.parentElement && getComputedStyle(e.parentElement).clipPath === 'inset(50%)';
  const what = e.outerHTML.slice(0, 120);
  if (hidden) e = e.parentElement.parentElement;
  const s = getComputedStyle(e);
  // the ring is drawn outside the control, over its halo if it has one, else on the parents'
  let bg = null;
  for (let p = e.parentElement; p && !bg; p = p.parentElement) {
    const c = getComputedStyle(p).backgroundColor;
    if (c && c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') bg = c;
  }
  const halo = /rgb\\(255, 255, 255\\) 0px 0px 0px (\\d+)px/.exec(s.boxShadow);
  const offset = parseFloat(s.outlineOffset) || 0, width = parseFloat(s.outlineWidth) || 0;
  const under = halo && Number(halo[1]) >= offset + width ? 'rgb(255, 255, 255)' : null;
  return {what, style: s.outlineStyle, width, color: s.outlineColor,
          bg: under || bg || 'rgb(255, 255, 255)', halo: !!under}; }"""


def _rgb(css: str) -> tuple[int, int, int]:
    return tuple(int(float(v)) for v in re.findall(r"[\d.]+", css)[:3])


@pytest.mark.parametrize("path", ["/", "/exercises", "/step_by_step?present=1"])
def test_every_focus_stop_shows_a_ring_at_3_to_1(session, path):
    session.open(path)
    seen, bad = 0, []
    for _ in range(60):
        session.page.keyboard.press("Tab")
        f = session.page.evaluate(FOCUS_JS)
        if f is None:
            continue
        if session.page.evaluate("() => !!document.activeElement.closest('iframe')"):
            continue
        seen += 1
        ratio = contrast(_rgb(f["color"]), _rgb(f["bg"]))
        if not (f["style"] != "none" and f["width"] >= 2 and ratio >= 3):
            bad.append({**f, "contrast": round(ratio, 2)})
    assert seen >= 10, f"only {seen} focus stops"
    assert not bad, json.dumps(bad, indent=1, ensure_ascii=False)


MOTION_JS = """() => Array.from(document.querySelectorAll(
    '[data-testid="stMain"] *, [data-testid="stSidebar"] *'))
  .map(e => getComputedStyle(e))
  .filter(s => s.transitionDuration.split(',').some(d => parseFloat(d) > 0)
            || s.animationName !== 'none' && parseFloat(s.animationDuration) > 0).length"""


def test_no_motion_when_reduced_motion_is_asked(browser, app_server):
    counts = {}
    for motion in ("no-preference", "reduce"):
        s = BrowserSession(browser, app_server, (1280, 900))
        try:
            s.page.emulate_media(reduced_motion=motion)
            s.open("/")
            counts[motion] = s.page.evaluate(MOTION_JS)
        finally:
            s.close()
    assert counts["no-preference"] > 0, counts  # the check can see motion
    assert counts["reduce"] == 0, counts
