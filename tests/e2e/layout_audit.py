"""The layout audit's measuring (issue 47): one JavaScript function run in a view of the app
(or any page with plotly charts) that reads the DOM, plotly's ``_fullLayout`` and the SVG
text elements' boxes, and returns, per check, what breaches it.

The checks (:data:`CHECKS`), each asked for by the kind of view (:data:`KINDS`):

- ``fold`` (a slide): no scrolling on a slide: the page no taller than the screen, and
  the main chart (the largest by area) within the screen, from its top to its bottom.
- ``overlap``: no two texts of one chart overlapping (tick labels, axis titles, the
  chart's and its subplots' titles, colour bars' ticks and titles, legends, cell values),
  and no slider's value (drawn above its thumb) on its label's words.
  A text's box is its SVG box (``getBBox``) mapped to the screen (``getScreenCTM``), so a
  rotated tick label is a rotated rectangle, not its upright bounding box; the box is
  trimmed by 20% of its height at the top and the bottom (the font's line box is taller
  than its ink) and 1 px at each side, so labels that merely touch do not count.
- ``cell``: a value written in a heatmap cell only where it fits that cell (its width
  within the cell's width, its font size within the cell's height).
- ``type`` (a slide): no chart text under :data:`SLIDE_CHART_PX` and no body text (the
  page outside the charts) under :data:`SLIDE_BODY_PX`, in CSS pixels as drawn.
- ``width`` (a phone): nothing wider than the screen: the page does not scroll sideways
  and no visible element reaches past the screen's edges, except inside a box that
  clips it (an equation's card that scrolls sideways), which must itself fit; and no
  equation (MathML, KaTeX) wider than the box it sits in (a card's paragraph), unless it
  scrolls there.
- ``target`` (a phone): every control (button, text and number box, select, slider
  thumb (the box around its hidden range input), check box and radio option by its
  label, link styled as a button) at least
  :data:`TARGET_PX` wide and tall (WCAG 2.5.5's 44 px).
- ``cut``: no text cut short: no box that ends its text in an ellipsis, or hides what
  does not fit on its one line, holds more than it shows (a button's label in a column
  of a fixed share: "Reveal the answer" in Arabic, "Siguiente pregunta" on a projector).

Hover labels (``.hoverlayer``) and the collapsed sidebar are not part of a view.
:func:`audit` runs the function in a playwright page; tests/e2e/test_layout_audit_e2e.py
walks the app with it, and shows each check failing on a page made to breach it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from e2e_app import BrowserSession

from attnviz.ui import pages as ui_pages

#: The checks, in the order of the printed table.
CHECKS = ("fold", "overlap", "cell", "type", "width", "target", "cut")
#: Which checks apply to which kind of view: a slide (1920x1080, ``present=1``, or a
#: projector's screen), a laptop (1440x900) and a phone (390x844, a touch screen).
KINDS = {
    "slide": ("fold", "overlap", "cell", "type", "cut"),
    "laptop": ("overlap", "cell", "cut"),
    "phone": ("overlap", "cell", "width", "target", "cut"),
}
#: A slide's smallest chart text and body text (CSS px): the back row of a 150-seat hall.
SLIDE_CHART_PX = 20
SLIDE_BODY_PX = 24
#: A touch screen's smallest control, both ways (CSS px).
TARGET_PX = 44

AUDIT_JS = r"""(o) => {
  const H = window.innerHeight, W = window.innerWidth;
  const main = document.querySelector('[data-testid="stMain"]');
  const root = main || document.body;
  if (main) main.scrollTop = 0;
  window.scrollTo(0, 0);
  const shown = (el) => (el.checkVisibility
    ? el.checkVisibility({opacityProperty: true, visibilityProperty: true}) : true);
  const inSidebar = (el) => !!el.closest('[data-testid="stSidebar"]');
  const short = (s) => { s = String(s || '').replace(/\s+/g, ' ').trim();
                         return s.length > 40 ? s.slice(0, 39) + '…' : s; };
  const px = (v) => Math.round(v * 10) / 10;
  const out = {};
  const want = new Set(o.checks);

  // ------------------------------------------------------------------ the charts
  const charts = Array.from(root.querySelectorAll('.js-plotly-plot'))
    .filter(gd => gd._fullLayout && shown(gd) && !inSidebar(gd)
                  && gd.getBoundingClientRect().width > 0);
  const chartName = (gd, i) => {
    const c = gd.closest('[data-key]');
    return c ? c.dataset.key : 'chart ' + i;
  };
  const role = (t) => {
    if (t.closest('.hoverlayer')) return null;
    if (t.closest('.heatmaplayer')) return 'cell';
    if (t.closest('.colorbar')) return 'colour bar';
    if (t.closest('.xaxislayer-above, .yaxislayer-above')) return 'tick';
    if (t.closest('.g-xtitle, .g-ytitle')) return 'axis title';
    if (t.closest('.gtitle')) return 'title';
    if (t.closest('.annotation')) return 'annotation';
    if (t.closest('.legend')) return 'legend';
    return 'text';
  };
  // a text's box on the screen: its SVG box's four corners through its screen matrix
  const quad = (t) => {
    const b = t.getBBox(), m = t.getScreenCTM();
    if (!m || b.width <= 0 || b.height <= 0) return null;
    const dy = 0.2 * b.height, dx = Math.min(1, b.width / 4);
    const x0 = b.x + dx, x1 = b.x + b.width - dx, y0 = b.y + dy, y1 = b.y + b.height - dy;
    const p = (x, y) => new DOMPoint(x, y).matrixTransform(m);
    const pts = [p(x0, y0), p(x1, y0), p(x1, y1), p(x0, y1)].map(q => [q.x, q.y]);
    const xs = pts.map(q => q[0]), ys = pts.map(q => q[1]);
    return {pts, left: Math.min(...xs), right: Math.max(...xs),
            top: Math.min(...ys), bottom: Math.max(...ys),
            w: b.width * Math.hypot(m.a, m.b), h: b.height * Math.hypot(m.c, m.d),
            rotated: Math.abs(m.b) > 1e-3 || Math.abs(m.c) > 1e-3};
  };
  // two convex quads overlap: no separating axis among their edges' normals
  const apart = (a, b) => {
    for (const poly of [a, b]) for (let i = 0; i < 4; i++) {
      const [x1, y1] = poly[i], [x2, y2] = poly[(i + 1) % 4];
      const nx = y2 - y1, ny = x1 - x2;
      const pa = a.map(([x, y]) => x * nx + y * ny), pb = b.map(([x, y]) => x * nx + y * ny);
      if (Math.max(...pa) <= Math.min(...pb) || Math.max(...pb) <= Math.min(...pa)) return true;
    }
    return false;
  };
  const texts = (gd) => Array.from(gd.querySelectorAll('svg text'))
    .filter(t => t.textContent.trim() && shown(t))
    .map(t => ({el: t, role: role(t), q: quad(t), text: t.textContent}))
    .filter(t => t.role && t.q);
  let main_ = null, area = 0;
  const overlap = [], cell = [], small = [];
  charts.forEach((gd, i) => {
    const name = chartName(gd, i);
    const r = (gd.querySelector('.main-svg') || gd).getBoundingClientRect();
    if (r.width * r.height > area) { area = r.width * r.height; main_ = {name, r}; }
    const ts = texts(gd);
    if (want.has('overlap')) {
      const byLeft = ts.slice().sort((a, b) => a.q.left - b.q.left);
      const active = [];
      for (const t of byLeft) {
        for (let k = active.length - 1; k >= 0; k--)
          if (active[k].q.right <= t.q.left) active.splice(k, 1);
        for (const u of active) {
          if (u.q.bottom <= t.q.top || t.q.bottom <= u.q.top) continue;
          if (u.q.rotated || t.q.rotated ? apart(u.q.pts, t.q.pts) : false) continue;
          overlap.push(`${name}: ${u.role} '${short(u.text)}' on ${t.role} '${short(t.text)}'`);
        }
        active.push(t);
      }
    }
    if (want.has('cell')) {
      const fl = gd._fullLayout;
      for (const t of ts.filter(t => t.role === 'cell')) {
        const g = t.el.closest('g.hm'), cd = g && g.__data__;
        const s = cd && cd[0];
        if (!s || !s.trace) continue;
        const ax = (id) => fl[id.charAt(0) + 'axis' + id.slice(1)];
        const xa = ax(s.trace.xaxis || 'x'), ya = ax(s.trace.yaxis || 'y');
        if (!xa || !ya || !s.x || !s.y || s.x.length < 2 || s.y.length < 2) continue;
        const cw = Math.abs(xa.c2p(s.x[1]) - xa.c2p(s.x[0])) - (s.trace.xgap || 0);
        const ch = Math.abs(ya.c2p(s.y[1]) - ya.c2p(s.y[0])) - (s.trace.ygap || 0);
        const size = parseFloat(getComputedStyle(t.el).fontSize);
        const b = t.el.getBBox();
        if (b.width > cw + 0.5 || size > ch + 0.5)
          cell.push(`${name}: '${short(t.text)}' ${px(b.width)}x${px(size)} px in a `
                    + `${px(cw)}x${px(ch)} px cell`);
      }
    }
    if (want.has('type')) {
      const seen = new Map();
      for (const t of ts) {
        const m = t.el.getScreenCTM();
        const size = parseFloat(getComputedStyle(t.el).fontSize) * (m ? Math.hypot(m.c, m.d) : 1);
        if (size < o.chartPx - 0.05) {
          const key = `${t.role} ${px(size)} px`;
          seen.set(key, (seen.get(key) || []).concat([t.text]));
        }
      }
      for (const [key, words] of seen)
        small.push(`${name}: ${words.length} ${key} ('${short(words[0])}')`);
    }
  });
  if (want.has('fold')) {
    out.fold = [];
    const scroller = main || document.documentElement;
    const below = scroller.scrollHeight - scroller.clientHeight;
    if (below > 1) out.fold.push(`the slide scrolls: ${below} px below the screen`);
    if (main_ && (main_.r.top < -0.5 || main_.r.bottom > H + 0.5))
      out.fold.push(`${main_.name}: ${px(main_.r.top)}..${px(main_.r.bottom)} px `
                    + `on a ${H}-px screen`);
  }
  // a slider's value (drawn above its thumb) on its label's words: text boxes as the
  // charts' (20% of a line's height off its top and bottom, 1 px off each side)
  const lines = (el) => { const r = document.createRange(); r.selectNodeContents(el);
    return Array.from(r.getClientRects()).filter(b => b.width > 0 && b.height > 0)
      .map(b => ({left: b.left + 1, right: b.right - 1,
                  top: b.top + 0.2 * b.height, bottom: b.bottom - 0.2 * b.height})); };
  if (want.has('overlap')) root.querySelectorAll('[data-testid="stSlider"]').forEach((s) => {
    const label = s.querySelector('[data-testid="stWidgetLabel"]');
    const value = s.querySelector('[data-testid="stSliderThumbValue"]');
    if (!label || !value || inSidebar(s) || !shown(value)) return;
    const words = lines(label);
    const hit = lines(value).some(v => words.some(l =>
      v.left < l.right && l.left < v.right && v.top < l.bottom && l.top < v.bottom));
    if (hit) overlap.push(`slider '${short(label.innerText)}': its value `
                          + `'${short(value.innerText)}' on its label`);
  });
  if (want.has('overlap')) out.overlap = overlap;
  if (want.has('cell')) out.cell = cell;

  // ------------------------------------------------------------------ the body's text
  if (want.has('type')) {
    const seen = new Map();
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!/[^\s\u200b-\u200f\u2060\ufeff]/.test(n.nodeValue)) continue;  // nothing drawn
      const el = n.parentElement;
      if (!el || el.closest('svg, .js-plotly-plot, [data-testid="stSidebar"], style, script,'
                           + ' noscript, .katex-mathml, [aria-hidden="true"] .katex-mathml')
          || !shown(el)) continue;
      const r = el.getBoundingClientRect();
      if (r.width < 1 || r.height < 1) continue;
      const style = getComputedStyle(el);
      if (style.fontFamily.includes('Material')) continue;  // an icon's name, drawn as one
      const size = parseFloat(style.fontSize);
      if (size < o.bodyPx - 0.05) {
        const key = `${px(size)} px`;
        seen.set(key, (seen.get(key) || []).concat([n.nodeValue]));
      }
    }
    for (const [key, words] of seen)
      small.push(`body: ${words.length} texts in ${key} ('${short(words[0])}')`);
    out.type = small;
  }

  // ------------------------------------------------------------------ a phone's width
  if (want.has('width')) {
    const wide = [];
    const doc = document.documentElement;
    if (doc.scrollWidth > doc.clientWidth + 1)
      wide.push(`the page scrolls sideways: ${doc.scrollWidth} px on ${doc.clientWidth}`);
    if (main && main.scrollWidth > main.clientWidth + 1)
      wide.push(`the main column scrolls sideways: ${main.scrollWidth} px on ${main.clientWidth}`);
    const past = new Set();
    const all = Array.from(root.querySelectorAll('*'))
      .filter(el => !inSidebar(el) && !el.closest('svg *, .hoverlayer, [data-baseweb="popover"]'));
    // boxes that clip what is wider than them (an equation's card that scrolls, a table
    // kept for screen readers in a 1-px box): what is inside them is not on the screen
    // past its edge, and the box itself is measured
    const clips = all.filter(el => getComputedStyle(el).overflowX !== 'visible');
    for (const el of all) {
      if (clips.some(c => c !== el && c.contains(el))) continue;
      const r = el.getBoundingClientRect();
      if (r.width < 2 || r.height < 2 || !shown(el)) continue;
      // wholly off the screen: hidden on purpose (plotly's text tester at -10000 px); if
      // it made the page scroll, the page's own width says so
      if (r.right <= 0 || r.left >= W) continue;
      if (r.left < -1 || r.right > W + 1) past.add(el);
    }
    // an equation wider than its box (a card's paragraph) runs off the card even on the
    // screen: it must fit, or scroll (be, or be inside, a box that clips)
    for (const eq of root.querySelectorAll('math, .katex-display, mjx-container')) {
      if (clips.some(c => c !== eq && c.contains(eq)) || !shown(eq)) continue;
      let box = eq.parentElement;
      while (box && box !== root && getComputedStyle(box).display.startsWith('inline'))
        box = box.parentElement;
      if (!box) continue;
      const r = eq.getBoundingClientRect(), b = box.getBoundingClientRect();
      const s = getComputedStyle(box);
      const left = b.left + parseFloat(s.borderLeftWidth) + parseFloat(s.paddingLeft);
      const right = b.right - parseFloat(s.borderRightWidth) - parseFloat(s.paddingRight);
      if (r.width > 1 && (r.right > right + 1 || r.left < left - 1))
        wide.push(`an equation runs ${px(Math.max(r.right - right, left - r.left))} px past `
                  + `its box ('${short(eq.textContent)}')`);
    }
    // the outermost of them: an element past the edge, not inside one that is
    for (const el of past) {
      let p = el.parentElement, outer = true;
      while (p) { if (past.has(p)) { outer = false; break; } p = p.parentElement; }
      if (!outer) continue;
      const r = el.getBoundingClientRect();
      const cls = typeof el.className === 'string' ? el.className : '';
      const what = (el.dataset && el.dataset.testid) || cls.split(' ')[0] || el.tagName;
      wide.push(`${el.tagName.toLowerCase()}.${short(what)} at ${px(r.left)}..${px(r.right)} px`
                + ` ('${short(el.textContent)}')`);
    }
    out.width = wide;
  }

  // ------------------------------------------------------------------ a phone's controls
  if (want.has('target')) {
    const few = [];
    const sel = 'button, input:not([type=hidden]), select, textarea, [role=slider], '
      + '[role=button], [role=tab], [role=switch], [role=combobox], [role=spinbutton], a.btn';
    const seen = new Set();
    for (let el of root.querySelectorAll(sel)) {
      if (inSidebar(el) || el.closest('.modebar, [aria-hidden="true"]')) continue;
      // a check box or a radio option is tapped on its label; a text box inside its frame
      const type = (el.getAttribute('type') || '').toLowerCase();
      if (el.tagName === 'INPUT' && ['checkbox', 'radio'].includes(type))
        el = el.closest('label') || el;
      else if (el.tagName === 'INPUT' && type === 'range') {
        // a slider's range input is hidden in a 1-px box inside its thumb: the thumb
        let p = el.parentElement;
        while (p && p !== root && p.getBoundingClientRect().width < 2) p = p.parentElement;
        if (p && p !== root && p !== el.parentElement) el = p;
      }
      else if (['INPUT', 'TEXTAREA'].includes(el.tagName)
               || el.getAttribute('role') === 'combobox') {
        // a text box or a select: its frame, the boxes just around it (not its widget's
        // own box, with the label, nor a box much larger than it)
        const r0 = el.getBoundingClientRect();
        for (let k = 0; k < 3; k++) {
          const p = el.parentElement;
          if (!p || p === root || p.dataset.testid) break;
          const r = p.getBoundingClientRect();
          if (r.height > r0.height + 16 || r.width > r0.width + 80) break;
          el = p;
        }
      }
      if (seen.has(el)) continue;
      seen.add(el);
      const r = el.getBoundingClientRect();
      if (r.width < 1 || r.height < 1 || !shown(el)) continue;
      if (r.width < o.targetPx - 0.5 || r.height < o.targetPx - 0.5) {
        const what = el.getAttribute('aria-label') || el.textContent || el.getAttribute('role')
          || el.tagName;
        few.push(`${el.tagName.toLowerCase()} '${short(what)}' ${px(r.width)}x${px(r.height)} px`);
      }
    }
    out.target = few;
  }

  // ------------------------------------------------------------------ a text cut short
  if (want.has('cut')) {
    const cut = [];
    for (const el of root.querySelectorAll('*')) {
      if (el.closest('svg, .js-plotly-plot')) continue;
      const s = getComputedStyle(el);
      if (s.textOverflow !== 'ellipsis' && !(s.overflowX === 'hidden' && s.whiteSpace === 'nowrap'))
        continue;
      // a box kept for screen readers (1 px wide) is not drawn: not cut
      if (el.clientWidth <= 4 || !el.textContent.trim() || !shown(el)) continue;
      if (el.scrollWidth > el.clientWidth + 1)
        cut.push(`'${short(el.textContent)}' ${el.scrollWidth} px wide in ${el.clientWidth} px`);
    }
    out.cut = cut;
  }
  return out;
}"""


def audit(page, kind: str) -> dict[str, list[str]]:
    """The view in ``page`` (a playwright page) measured for the checks of ``kind`` (a key
    of :data:`KINDS`): check -> what breaches it (empty: it passes). Scrolls the page to its
    top first (a slide is read as it opens)."""
    opts = {
        "checks": list(KINDS[kind]),
        "chartPx": SLIDE_CHART_PX,
        "bodyPx": SLIDE_BODY_PX,
        "targetPx": TARGET_PX,
    }
    return page.evaluate(AUDIT_JS, opts)


def table(results: dict[str, dict[str, list[str]]]) -> str:
    """The views x checks table: "pass", the number of breaches, or "-" (not checked)."""
    width = max([len("view"), *map(len, results)])
    lines = ["view".ljust(width) + "".join(c.rjust(9) for c in CHECKS)]
    for view, got in results.items():
        cells = [
            "-" if c not in got else ("pass" if not got[c] else str(len(got[c]))) for c in CHECKS
        ]
        lines.append(view.ljust(width) + "".join(c.rjust(9) for c in cells))
    return "\n".join(lines)


# --------------------------------------------------------------------------- the walk

SIZES = {"slide": (1920, 1080), "laptop": (1440, 900), "phone": (390, 844)}
#: page slug -> its URL path (the first page is the home, "/")
PATHS = {p.slug: "/" if i == 0 else f"/{p.slug}" for i, p in enumerate(ui_pages.PAGES)}
#: The walks' tables, printed at the end of the run (conftest.py's pytest_terminal_summary).
REPORTS = pytest.StashKey[list]()


#: Where every chart of the page is and how large (a signature of the page's layout).
CHARTS_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot .main-svg'))
  .map(e => { const r = e.getBoundingClientRect();
              return [r.top, r.left, r.width, r.height].map(Math.round).join(','); })
  .join(';')"""


def settle(page, step_ms: int = 150, tries: int = 20) -> None:
    """Wait until the charts stop moving: two looks ``step_ms`` apart see the same boxes
    (once, on a cold server, the playground's slide was measured with its output chart
    where no later run found it: a board's late redraw is the likely cause)."""
    before = page.evaluate(CHARTS_JS)
    for _ in range(tries):
        page.wait_for_timeout(step_ms)
        now = page.evaluate(CHARTS_JS)
        if now == before:
            return
        before = now


def known(views: str, check: str, reason: str) -> dict[tuple[str, str], str]:
    """KNOWN entries: ``check`` breached on each of ``views`` (names split by commas)."""
    return {(v.strip(), check): reason for v in views.split(",") if v.strip()}


def shots_dir() -> Path:
    """Where the screenshots and the table go: ``$ATTNVIZ_AUDIT_SHOTS``, or a new
    temporary folder."""
    where = os.environ.get("ATTNVIZ_AUDIT_SHOTS")
    path = Path(where) if where else Path(tempfile.mkdtemp(prefix="attnviz-audit-"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def cpu_seconds() -> float:
    """CPU seconds of this process and every process under it (the app server this
    session started, the browser)."""
    me = psutil.Process()
    total = 0.0
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


class Walk:
    """The audit's tabs (one per size, made on first use), what each view measured and
    what each group of views cost."""

    def __init__(self, browser, server) -> None:
        self.browser, self.server = browser, server
        self.tabs: dict[str, BrowserSession] = {}
        self.results: dict[str, dict[str, list[str]]] = {}
        self.costs: dict[str, tuple[int, float, float]] = {}
        self.shots = shots_dir()

    def tab(self, size: str) -> BrowserSession:
        if size not in self.tabs:
            touch = size == "phone"
            self.tabs[size] = BrowserSession(self.browser, self.server, SIZES[size], touch=touch)
        return self.tabs[size]

    def measure(self, view: str, page, kind: str, checks=None) -> dict[str, list[str]]:
        """Audit the view in ``page`` (``checks``: only these), keep it, screenshot it."""
        settle(page)
        got = audit(page, kind)
        if checks is not None:
            got = {c: v for c, v in got.items() if c in checks}
        self.results[view] = got
        page.screenshot(path=str(self.shots / f"{view.replace(' ', '_')}.png"))
        return got

    def visit(self, view: str, size: str, path: str, checks=None) -> dict[str, list[str]]:
        """Go to ``path`` in the tab of ``size`` and measure it as a view of that kind."""
        s = self.tab(size)
        s.errors.clear()
        s.visit(path)
        s.assert_healthy(view)
        return self.measure(view, s.page, size, checks)

    @contextlib.contextmanager
    def group(self, name: str):
        """Time a group of views: wall seconds and CPU seconds (:func:`cpu_seconds`)."""
        views, wall, cpu = len(self.results), time.monotonic(), cpu_seconds()
        try:
            yield
        finally:
            n = len(self.results) - views
            self.costs[name] = (n, time.monotonic() - wall, cpu_seconds() - cpu)

    def close(self) -> None:
        for s in self.tabs.values():
            s.close()

    def report(self, title: str) -> str:
        costs = "; ".join(
            f"{name}: {n} views, {wall:.0f} s wall, {cpu:.0f} CPU-s"
            for name, (n, wall, cpu) in self.costs.items()
        )
        kinds = ", ".join(f"{k} {'/'.join(v)}" for k, v in KINDS.items())
        return (
            f"{title}: {len(self.results)} views (cost {costs}); the checks per kind of "
            f"view: {kinds}; screenshots and this table with every breach in {self.shots}\n"
            f"{table(self.results)}"
        )


def module_walk(browser, app_server, request):
    """A module's walk (conftest.py's ``walk`` fixture); its table is written to its
    folder and printed after the run."""
    w = Walk(browser, app_server)
    yield w
    w.close()
    if not w.results:
        return
    name = request.module.__name__
    text = w.report(f"layout audit, {name}")
    (w.shots / f"{name}.txt").write_text(text + "\n\n" + details(w.results) + "\n")
    request.config.stash.setdefault(REPORTS, []).append(text)


def details(results: dict[str, dict[str, list[str]]]) -> str:
    """Every breach, a line each: view | check | what."""
    return "\n".join(
        f"{view} | {check} | {breach}"
        for view, got in results.items()
        for check in CHECKS
        for breach in got.get(check) or []
    )


def verdict(walk: Walk, group: str, known_breaches: dict[tuple[str, str], str]) -> None:
    """Fail on the breaches of the group's views (named "<group> ...") that
    ``known_breaches`` does not list, and on its entries for the group that no longer
    occur (the view passes that check, or is no longer walked)."""
    mine = {v: got for v, got in walk.results.items() if v.split(" ")[0] == group}
    found = {(v, c) for v, got in mine.items() for c, breaches in got.items() if breaches}
    new = sorted(found - known_breaches.keys())
    gone = sorted(k for k in known_breaches if k[0].split(" ")[0] == group and k not in found)
    lines = [f"{v} | {c} | {b}" for v, c in new for b in mine[v][c][:6]]
    assert not new and not gone, (
        f"{table(mine)}\n\nbreaches not in KNOWN ({len(new)}):\n"
        + "\n".join(lines)
        + f"\n\nKNOWN entries that no longer occur (delete them): {gone}"
    )


# --------------------------------------------------------------------------- touch screens

# Every chart of the page: its box, its title's extent, whether a mode bar is drawn, the
# widest value written in a heatmap cell against the cell's width, a legend's box against
# the plot area's; and how far the page reaches past the window sideways.
LAYOUT_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const charts = [];
  for (const cell of document.querySelectorAll('.attnviz-board .cell[data-key]')) {
    const gd = cell.querySelector('.js-plotly-plot');
    if (!gd || !gd._fullLayout || cell.offsetParent === null) continue;
    const box = gd.querySelector('.main-svg').getBoundingClientRect();
    const title = gd.querySelector('.gtitle');
    const t = title ? title.getBoundingClientRect() : null;
    const fl = gd._fullLayout;
    let widest = 0, cellW = null;
    const heat = (gd._fullData || []).find(d => d.type === 'heatmap' && d.texttemplate);
    if (heat && fl.xaxis) {
      const texts = Array.from(gd.querySelectorAll('.heatmaplayer text'))
        .filter(e => e.textContent.trim());
      widest = Math.max(0, ...texts.map(e => e.getBoundingClientRect().width));
      const n = heat.z && heat.z[0] ? heat.z[0].length : 1;
      cellW = texts.length ? fl.xaxis._length / n : null;
    }
    const legend = gd.querySelector('.legend');
    const drag = gd.querySelector('.nsewdrag');
    let legendOverPlot = false;
    if (legend && drag && legend.getBoundingClientRect().width > 0) {
      const a = legend.getBoundingClientRect(), b = drag.getBoundingClientRect();
      const inside = fl.legend && fl.legend.x < 1 && fl.legend.orientation !== 'h';
      legendOverPlot = !inside && a.left < b.right - 1 && a.right > b.left + 1
        && a.top < b.bottom - 1 && a.bottom > b.top + 1;
    }
    charts.push({key: cell.dataset.key, width: Math.round(box.width),
      left: box.left, right: box.right, top: Math.round(box.top),
      title: t && t.width ? {left: t.left, right: t.right, text: title.textContent} : null,
      modebar: !!gd.querySelector('.modebar-container .modebar'),
      widest, cellW, legendOverPlot});
  }
  return {doc: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          main: main ? main.scrollWidth - main.clientWidth : 0,
          width: window.innerWidth, charts};
}"""


def layout_problems(layout: dict) -> list[str]:
    """What the page shows cut, overlapping or past the window's edge."""
    out = []
    if layout["doc"] > 0 or layout["main"] > 0:
        out.append(f"overflows sideways by {max(layout['doc'], layout['main'])} px")
    for c in layout["charts"]:
        t = c["title"]
        if t and (t["left"] < c["left"] - 1 or t["right"] > c["right"] + 1):
            out.append(f"{c['key']}: title {t['text']!r} cut ({t} in {c['left']}..{c['right']})")
        if c["modebar"]:
            out.append(f"{c['key']}: a mode bar on a touch screen")
        if c["cellW"] is not None and c["widest"] > c["cellW"]:
            out.append(f"{c['key']}: cell values {c['widest']:.0f} px in {c['cellW']:.0f} px cells")
        if c["legendOverPlot"]:
            out.append(f"{c['key']}: its legend lies over the plot")
    return out
