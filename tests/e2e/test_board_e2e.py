"""The chart board in a real browser: redrawn in place, linked hover, click-to-select,
downloads, no JavaScript errors inside the boards. The boards render in the app's document
(components v2): each is a `.attnviz-board` element, no iframe."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_helpers import choose_option, selectbox_input

pytestmark = pytest.mark.e2e

# Every chart of the page: [board index, chart key, title, rows, cols, mark].
CHARTS_JS = """() => Array.from(document.querySelectorAll('.attnviz-board'))
  .flatMap((bd, b) => Array.from(bd.querySelectorAll('.cell')).map(cell => {
    const gd = cell.querySelector('.js-plotly-plot');
    const t = gd && gd._fullData && gd._fullData[0];
    const z = t && t.type === 'heatmap' ? gd.calcdata[0][0].z : null;
    return {board: b, key: cell.dataset.key, mark: gd ? gd.__testMark || null : null,
            title: String(((gd.layout || {}).title || {}).text || ''),
            rows: z ? z.length : 0, cols: z ? z[0].length : 0,
            label: gd.getAttribute('aria-label'),
            hl: Array.from(cell.querySelectorAll('.hl')).map(h => ({
              left: parseFloat(h.style.left), top: parseFloat(h.style.top),
              width: parseFloat(h.style.width), height: parseFloat(h.style.height)}))};
  }))"""

MARK_JS = """() => { let i = 0; document.querySelectorAll('.attnviz-board .js-plotly-plot')
    .forEach(gd => { gd.__testMark = 'm' + (i++); }); return i; }"""

# Page coordinates of the centre of cell (x, y) (data coordinates) of chart `key`, and the
# pixel box of that cell inside its board's cell (to compare with the highlight boxes).
CELL_JS = """([key, x, y]) => {
  const cell = document.querySelector(`.attnviz-board .cell[data-key="${key}"]`);
  if (!cell) return null;
  const gd = cell.querySelector('.js-plotly-plot');
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  const cr = cell.getBoundingClientRect();
  const px = xa._offset + xa.l2p(x), py = ya._offset + ya.l2p(y);
  return {pageX: cr.left + px, pageY: cr.top + py,
          rowTop: ya._offset + Math.min(ya.l2p(y - 0.5), ya.l2p(y + 0.5)),
          colLeft: xa._offset + Math.min(xa.l2p(x - 0.5), xa.l2p(x + 0.5))};
}"""

ERRORS_JS = """() => [
  ...(window.__attnvizBoardErrors || ['board script did not start']),
  ...(document.querySelectorAll('iframe').length ? ['an iframe on the page'] : [])]"""


def charts(session) -> dict[str, dict]:
    return {c["key"]: c for c in session.page.evaluate(CHARTS_JS)}


def assert_no_board_errors(session) -> None:
    assert session.page.evaluate(ERRORS_JS) == []
    session.assert_healthy("board")


def test_slider_move_redraws_in_place(session):
    session.open("/?N=6")
    before = charts(session)
    assert {"pg_scores", "pg_weights", "pg_out", "pg_q", "pg_k", "pg_v", "pg_qbars"} <= set(before)
    assert all(c["label"].startswith("Chart: ") for c in before.values())
    count = session.page.evaluate(MARK_JS)
    assert count == len(before)
    marks = {k: c["mark"] for k, c in charts(session).items()}
    assert None not in marks.values()
    thumb = session.page.locator(".st-key-N input[type='range']").first
    thumb.focus()
    session.rerun_after(lambda: session.page.keyboard.press("ArrowRight"))
    after = charts(session)
    assert (after["pg_weights"]["rows"], after["pg_weights"]["cols"]) == (7, 7)
    assert (before["pg_weights"]["rows"], before["pg_weights"]["cols"]) == (6, 6)
    # The same plot divs (same JS objects) drew the new figures: no remount.
    assert {k: c["mark"] for k, c in after.items()} == marks
    assert_no_board_errors(session)


STATE_JS = """(key) => {
    const cell = document.querySelector(`.attnviz-board .cell[data-key="${key}"]`);
    return cell ? cell.closest('.attnviz-board').dataset.state : null; }"""


def test_boards_out_of_view_draw_when_scrolled_into_view(session):
    """A slider move redraws the charts in view at once; a board below the fold keeps its
    old charts ("deferred") until it is scrolled into view, then draws the new ones."""
    session.open("/?N=6")
    session.page.evaluate("() => { window.__attnvizCatchUpMs = 60000; window.scrollTo(0, 0); }")
    assert session.page.evaluate(BARS_LEN_JS) == 6  # drawn on the first render, out of view
    # Streamlit re-sends a component's arguments (frame height, ...): each board drew once
    # (the hidden prefetch board draws nothing).
    renders = session.page.evaluate(
        """() => Array.from(document.querySelectorAll('.attnviz-board'))
          .filter(b => b.querySelector('.cell'))
          .map(b => b.dataset.renders)"""
    )
    assert len(renders) == 3 and set(renders) == {"1"}, renders
    thumb = session.page.locator(".st-key-N input[type='range']").first
    thumb.focus()
    session.page.keyboard.press("ArrowRight")
    session.page.wait_for_function(
        "(js) => eval(js)('pg_qbars') === 'deferred'", arg=STATE_JS, timeout=30_000
    )
    session.page.wait_for_function(
        "(js) => eval(js)('pg_weights') === 'drawn'", arg=STATE_JS, timeout=30_000
    )
    c = charts(session)
    assert (c["pg_weights"]["rows"], c["pg_weights"]["cols"]) == (7, 7)
    assert len(c["pg_qbars"]["title"]) > 0
    assert session.page.evaluate(BARS_LEN_JS) == 6  # still the old bars: 6 keys
    session.page.evaluate(
        """() => document.querySelector('.attnviz-board .cell[data-key="pg_qbars"]')
          .closest('.attnviz-board').scrollIntoView()"""
    )
    session.page.wait_for_function(
        "(js) => eval(js)('pg_qbars') === 'drawn'", arg=STATE_JS, timeout=30_000
    )
    assert session.page.evaluate(BARS_LEN_JS) == 7
    assert_no_board_errors(session)


def test_a_key_press_postpones_the_catch_up_of_a_deferred_board(session):
    """A board out of view catches up on its deferred redraw only once the page has had no
    key press or click for the catch-up delay: a stale board does not draw while the user's
    next gesture (another slider step) is under way (issue 46)."""
    session.open("/?N=6")
    session.page.evaluate("() => { window.__attnvizCatchUpMs = 1500; window.scrollTo(0, 0); }")
    thumb = session.page.locator(".st-key-N input[type='range']").first
    thumb.focus()
    session.page.keyboard.press("ArrowRight")
    session.page.wait_for_function(
        "(js) => eval(js)('pg_qbars') === 'deferred'", arg=STATE_JS, timeout=30_000
    )
    for _ in range(10):  # 2.5 s of key presses that change nothing, 0.25 s apart
        session.page.keyboard.press("Shift")
        session.page.wait_for_timeout(250)
    assert session.page.evaluate(STATE_JS, "pg_qbars") == "deferred"
    assert session.page.evaluate(BARS_LEN_JS) == 6  # still the old bars
    session.page.wait_for_function(
        "(js) => eval(js)('pg_qbars') === 'drawn'", arg=STATE_JS, timeout=30_000
    )
    assert session.page.evaluate(BARS_LEN_JS) == 7
    assert_no_board_errors(session)


BARS_LEN_JS = """() => {
    const cell = document.querySelector('.attnviz-board .cell[data-key="pg_qbars"]');
    return cell ? cell.querySelector('.js-plotly-plot').calcdata[0].length : -1; }"""


def test_hovering_a_weights_cell_highlights_the_linked_cells(session):
    session.open("/?N=6")
    i, j = 2, 4
    cell = session.page.evaluate(CELL_JS, ["pg_weights", j, i])
    session.page.mouse.move(cell["pageX"], cell["pageY"])
    session.page.wait_for_timeout(300)
    c = charts(session)
    q_row = session.page.evaluate(CELL_JS, ["pg_q", 0, i])
    k_row = session.page.evaluate(CELL_JS, ["pg_k", 0, j])
    v_row = session.page.evaluate(CELL_JS, ["pg_v", 0, j])
    out_row = session.page.evaluate(CELL_JS, ["pg_out", 0, i])
    s_cell = session.page.evaluate(CELL_JS, ["pg_scores", j, i])

    def has_row(key, ref):
        return any(abs(h["top"] - ref["rowTop"]) < 1.5 for h in c[key]["hl"]), c[key]["hl"]

    for key, ref in (("pg_q", q_row), ("pg_k", k_row), ("pg_v", v_row), ("pg_out", out_row)):
        ok, hl = has_row(key, ref)
        assert ok, (key, hl, ref)
    # the scores: the cell (i, j) itself
    assert any(
        abs(h["top"] - s_cell["rowTop"]) < 1.5 and abs(h["left"] - s_cell["colLeft"]) < 1.5
        for h in c["pg_scores"]["hl"]
    ), c["pg_scores"]["hl"]
    # the bars follow the hovered row
    assert c["pg_qbars"]["title"].startswith(f"Weights of query {i} "), c["pg_qbars"]["title"]
    assert not c["pg_x"]["hl"] or has_row("pg_x", session.page.evaluate(CELL_JS, ["pg_x", 0, i]))
    # leaving the chart clears the highlights and restores the bars
    session.page.mouse.move(5, 5)
    session.page.wait_for_timeout(300)
    c = charts(session)
    assert not any(ch["hl"] for ch in c.values())
    assert c["pg_qbars"]["title"].startswith("Weights of query 0 ")
    assert_no_board_errors(session)


def test_clicking_a_weights_cell_selects_the_query(session):
    session.open("/?N=6")
    assert selectbox_input(session, "query").input_value() == "0"
    cell = session.page.evaluate(CELL_JS, ["pg_weights", 1, 4])
    session.rerun_after(lambda: session.page.mouse.click(cell["pageX"], cell["pageY"]))
    assert selectbox_input(session, "query").input_value() == "4"
    assert charts(session)["pg_qbars"]["title"].startswith("Weights of query 4 ")
    assert_no_board_errors(session)


@pytest.mark.parametrize(("button", "suffix"), [("PNG", ".png"), ("SVG", ".svg")])
def test_chart_downloads(session, button, suffix):
    session.open("/?N=6")
    click = f"""() => {{
      const cell = document.querySelector('.attnviz-board .cell[data-key="pg_weights"]');
      if (!cell) return false;
      const b = Array.from(cell.querySelectorAll('.modebar-btn'))
        .find(b => (b.getAttribute('data-title') || '').toLowerCase()
                     .includes('download plot as') &&
                   (b.getAttribute('data-title') || '').includes('{button}'));
      b.click();
      return true;
    }}"""
    with session.page.expect_download() as info:
        assert session.page.evaluate(click)
    download = info.value
    assert download.suggested_filename == "pg_weights" + suffix
    path = download.path()
    data = Path(path).read_bytes()
    if suffix == ".png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width = int.from_bytes(data[16:20], "big")
        css_width = session.page.evaluate(
            """() => document.querySelector(
              '.attnviz-board .cell[data-key="pg_weights"] .js-plotly-plot')._fullLayout.width"""
        )
        # projector resolution: 1920 px wide (never below 2x)
        assert abs(width - max(1920, 2 * css_width)) <= 2, (width, css_width)
        assert width >= 1920
    else:
        assert b"<svg" in data[:400]
    assert_no_board_errors(session)


# Page coordinates of cell (x, y) of heatmap trace `t` (a subplot) of chart `key`.
SUB_CELL_JS = """([key, t, x, y]) => {
  const cell = document.querySelector(`.attnviz-board .cell[data-key="${key}"]`);
  if (!cell) return null;
  const gd = cell.querySelector('.js-plotly-plot');
  const tr = gd._fullData[t];
  const ax = (id, d) => gd._fullLayout[id.length > 1 ? d + 'axis' + id.slice(1) : d + 'axis'];
  const xa = ax(tr.xaxis, 'x'), ya = ax(tr.yaxis, 'y');
  const cr = cell.getBoundingClientRect();
  return {pageX: cr.left + xa._offset + xa.l2p(x), pageY: cr.top + ya._offset + ya.l2p(y),
          left: xa._offset, right: xa._offset + xa._length};
}"""


def test_multi_head_small_multiples_link_and_select_query_and_head(session):
    """Hovering a cell of head 1 outlines that cell in every head; a click picks query and
    head."""
    session.open("/multi_head?N=6&D=8&heads=2")
    assert selectbox_input(session, "query").input_value() == "0"
    assert selectbox_input(session, "head").input_value() == "0"
    board = session.page.locator(".attnviz-board:has(.cell[data-key='mh_small'])").first
    board.scroll_into_view_if_needed()
    c1 = session.page.evaluate(SUB_CELL_JS, ["mh_small", 1, 2, 4])
    session.page.mouse.move(c1["pageX"], c1["pageY"])
    session.page.wait_for_timeout(300)
    hl = charts(session)["mh_small"]["hl"]
    assert hl, "no highlight on the hovered head"
    # the cell is outlined in head 1's subplot and in head 0's, at the same place
    c0 = session.page.evaluate(SUB_CELL_JS, ["mh_small", 0, 2, 4])
    for c in (c0, c1):
        assert any(c["left"] - 1 <= h["left"] <= c["right"] for h in hl), (hl, c)
    session.rerun_after(lambda: session.page.mouse.click(c1["pageX"], c1["pageY"]))
    assert selectbox_input(session, "query").input_value() == "4"
    assert selectbox_input(session, "head").input_value() == "1"
    assert "query 4 in head 1" in charts(session)["mh_qsum"]["title"]
    assert_no_board_errors(session)


# Board `name`'s draws (render count) and head switches drawn from prefetched figures.
DRAWS_JS = """(name) => {
  const cell = document.querySelector('.attnviz-board .cell[data-key="' + name + '"]');
  if (!cell) return null;
  const b = cell.closest('.attnviz-board');
  return [Number(b.dataset.renders || 0), Number(b.dataset.switches || 0)];
}"""


def test_a_head_change_draws_the_prefetched_head_in_the_browser(session):
    """On the playground, once the user has changed the head, the other heads' charts are
    in the browser: the next head change draws them from there, without waiting for the
    rerun it starts, and that rerun does not draw them again."""
    session.open("/?N=5&D=8&heads=4")
    choose_option(session, "head", "1")  # a rerun draws head 1 and prefetches heads 0, 2, 3
    assert "head 1" in charts(session)["pg_out"]["title"]
    renders, switches = session.page.evaluate(DRAWS_JS, "pg_out")
    choose_option(session, "head", "2")
    c = charts(session)
    assert "head 2" in c["pg_out"]["title"]
    assert "head 2" in c["pg_q"]["title"] and "head 2" in c["pg_v"]["title"]
    # one draw, made by the switch; the rerun brought the same revision and was skipped
    assert session.page.evaluate(DRAWS_JS, "pg_out") == [renders + 1, switches + 1]
    # a fresh page has nothing prefetched (nor has an N move, tests/test_app.py): the first
    # head change redraws through its rerun
    session.open("/?N=6&D=8&heads=4&head=2")
    renders, switches = session.page.evaluate(DRAWS_JS, "pg_out")
    choose_option(session, "head", "3")
    assert "head 3" in charts(session)["pg_out"]["title"]
    assert session.page.evaluate(DRAWS_JS, "pg_out") == [renders + 1, switches]
    assert_no_board_errors(session)


def test_a_chart_not_redrawn_keeps_its_keyboard_help(session):
    """A rerun that brings the same figures does not redraw them; their label keeps the
    keyboard's help that keys.js wrote on the first draw (CI found it reset to the bare
    title: the multi-head chart lost "] and [" after a second render of the same board)."""
    session.open("/multi_head?N=6&heads=2")
    first = charts(session)
    assert all("Arrow keys" in c["label"] for c in first.values() if c["rows"]), first
    session.page.evaluate("() => document.activeElement && document.activeElement.blur()")
    session.rerun_after(lambda: session.page.keyboard.press("r"))
    after = charts(session)
    heat = {k: c for k, c in after.items() if c["rows"]}
    assert heat and all("Arrow keys" in c["label"] for c in heat.values()), after
    assert "] and [" in after["mh_small"]["label"], after["mh_small"]["label"]
    assert_no_board_errors(session)


# Records every <style> element a script of the board's folder makes (the board's files are
# served under /_stcore/bidi-components/attnviz.board/): its call stack names the file.
STYLE_SPY_JS = """(() => {
  window.__boardStyles = [];
  const make = Document.prototype.createElement;
  Document.prototype.createElement = function (tag, ...rest) {
    if (String(tag).toLowerCase() === 'style') {
      const stack = String(new Error().stack || '');
      if (stack.includes('attnviz.board/')) window.__boardStyles.push(stack);
    }
    return make.call(this, tag, ...rest);
  };
})();"""

# The rules of the board modules' classes in the page's stylesheets, each with where it
# comes from (a sheet's address, or "STYLE" for a <style> element), and a few computed
# styles that need them.
BOARD_RULES_JS = r"""() => {
  const ours = /\.attnviz-(sr-only|bar|buttons|live|table|download|kbd|focus|arith|scrolls)/;
  const rules = [];
  const walk = (list, from) => { for (const r of list) {
    if (r.cssRules) walk(r.cssRules, from);
    if (r.selectorText && ours.test(r.selectorText)) rules.push([r.selectorText, from]);
  } };
  for (const sheet of document.styleSheets) {
    let list;
    try { list = sheet.cssRules; } catch (e) { continue; }
    walk(list, sheet.href || (sheet.ownerNode ? sheet.ownerNode.tagName : '?'));
  }
  const css = (sel, prop) => { const e = document.querySelector(sel);
                               return e ? getComputedStyle(e)[prop] : null; };
  return {made: window.__boardStyles, rules,
          arith: css('.attnviz-arith:not([hidden])', 'borderTopLeftRadius'),
          focus: css('.attnviz-focus', 'borderTopWidth'),
          hidden: css('.attnviz-table-holder.attnviz-sr-only', 'width'),
          shown: css('.attnviz-table-holder:not(.attnviz-sr-only)', 'overflowX')};
}"""


def test_the_board_styles_come_from_board_css_alone(session):
    """The board's JavaScript makes no <style> of its own: the cell panel (cell.js), the
    keyboard outline (keys.js), the tables (table.js) and the wide equations (wide.js) are
    styled by the one stylesheet Streamlit loads with the board, board.css."""
    session.page.add_init_script(STYLE_SPY_JS)  # this tab only
    session.open("/step_by_step?N=6&mask=causal")
    session.page.locator('.attnviz-board .cell[data-key="sb_w"]').scroll_into_view_if_needed()
    session.page.wait_for_timeout(200)
    cell = session.page.evaluate(CELL_JS, ["sb_w", 1, 4])
    session.page.mouse.click(cell["pageX"], cell["pageY"])  # the panel, no rerun here
    session.page.wait_for_selector(".attnviz-arith:not([hidden])")
    toggle = session.page.locator('.cell[data-key="sb_w"] .attnviz-table-toggle')
    toggle.click()
    session.page.wait_for_function(
        "(b) => b.getAttribute('aria-expanded') === 'true'", arg=toggle.element_handle()
    )
    session.page.locator('.attnviz-board .cell[data-key="sb_w"] .attnviz-kbd').focus()
    session.page.wait_for_selector(".attnviz-focus")
    got = session.page.evaluate(BOARD_RULES_JS)
    assert got["made"] == [], got["made"][:1]
    sources = {src for _, src in got["rules"]}
    assert len(sources) == 1 and sources.pop().split("?")[0].endswith("/board.css"), got
    selectors = " ".join(sel for sel, _ in got["rules"])
    for name in ("sr-only", "table", "focus", "arith", "scrolls"):
        assert f".attnviz-{name}" in selectors, (name, selectors)
    # and they apply: the panel's rounded box, the 3 px outline, a hidden table clipped to
    # 1 px (the scores' table), the shown one scrolling sideways
    assert (got["arith"], got["focus"], got["hidden"], got["shown"]) == (
        "8px",
        "3px",
        "1px",
        "auto",
    ), got
    assert_no_board_errors(session)


# The aria-labels of the weights chart's download buttons (tools.js: the board's catalog).
DOWNLOAD_LABELS_JS = """() => Array.from(document.querySelectorAll(
  '.attnviz-board .cell[data-key="pg_weights"] .attnviz-download'))
  .map(b => b.getAttribute('aria-label'))"""
# The computed direction of the main column, the sidebar and a board (board.css's
# html[data-dir="rtl"] rules: prose right to left in Arabic, the charts left to right).
DIRECTIONS_JS = """() => ['[data-testid="stMain"]', '[data-testid="stSidebarContent"]',
  '.attnviz-board'].map(s => getComputedStyle(document.querySelector(s)).direction)"""
#: Each chart title holding Arabic and Latin letters: whether the first of the two in the
#: text is drawn right of the other, as a right-to-left line puts it (plotly's SVG text is
#: laid out left to right unless fit.js puts the line in a right-to-left isolate).
RTL_TITLES_JS = r"""() => [...document.querySelectorAll('.js-plotly-plot .gtitle')].map(t => {
  const s = t.textContent;
  const a = s.search(/[\u0600-\u06ff]/), l = s.search(/[A-Za-z]/);
  if (a < 0 || l < 0) return null;
  const [first, then] = a < l ? [a, l] : [l, a];
  return t.getStartPositionOfChar(first).x > t.getStartPositionOfChar(then).x;
}).filter(x => x !== null)"""
#: The sidebar's radio texts "1/√d_k" (the scale's option and its caption): whether their
#: "1" is drawn left of their "d", as the formula reads (board.css: first-strong direction).
FORMULA_OPTION_JS = r"""() => [...document.querySelectorAll(
    '[data-testid="stRadio"] p')].filter(p => p.textContent.trim() === '1/√d_k').map(p => {
  const node = p.firstChild, at = (i) => { const r = document.createRange();
    r.setStart(node, i); r.setEnd(node, i + 1); return r.getBoundingClientRect().left; };
  const t = node.textContent; return at(t.indexOf('1')) < at(t.indexOf('d')); })"""
CATALOG_JS = """() => performance.getEntriesByType('resource').map(e => e.name)
  .filter(n => n.includes('/_attnviz/catalog/'))"""


def test_a_language_switch_translates_the_boards_own_words(session):
    """The board's catalog comes by URL (attnviz.classroom.web.catalog), fetched once per tab and
    language, not with every rerun: a Spanish page's board speaks Spanish, a slider move
    fetches nothing, and the language picker's Arabic re-translates the board and runs the
    page's prose right to left (board.css, by <html data-dir>), the charts left to right,
    the scale's option "1/√d_k" as it reads."""
    from attnviz import i18n

    def prefix(code: str) -> str:
        with i18n.use(code):
            return i18n._("Download {title} as {format}").split("{")[0].strip()

    session.open("/?N=6&lang=es")
    labels = session.page.evaluate(DOWNLOAD_LABELS_JS)
    assert labels and all(label.startswith(prefix("es")) for label in labels), labels
    fetched = session.page.evaluate(CATALOG_JS)
    assert len(fetched) == 1 and "/es.json?v=" in fetched[0], fetched
    thumb = session.page.locator(".st-key-N input[type='range']").first
    thumb.focus()
    session.rerun_after(lambda: session.page.keyboard.press("ArrowRight"))
    assert session.page.evaluate(CATALOG_JS) == fetched  # the move sent no catalog
    assert session.page.evaluate(DIRECTIONS_JS) == ["ltr", "ltr", "ltr"]
    choose_option(session, "attnviz_lang_pick", "العربية")
    labels = session.page.evaluate(DOWNLOAD_LABELS_JS)
    assert labels and all(label.startswith(prefix("ar")) for label in labels), labels
    assert session.page.evaluate("() => document.documentElement.lang") == "ar"
    assert session.page.evaluate(DIRECTIONS_JS) == ["rtl", "rtl", "ltr"]
    titles = session.page.evaluate(RTL_TITLES_JS)
    assert titles and all(titles), titles  # "الأوزان A = softmax(S)": its Arabic at the right
    options = session.page.evaluate(FORMULA_OPTION_JS)
    assert len(options) == 2 and all(options), options  # it read "d_k√/1"
    assert any("/ar.json?v=" in u for u in session.page.evaluate(CATALOG_JS))
    assert_no_board_errors(session)


def test_a_fragments_rerun_speaks_the_pages_language(session):
    """A head change reruns only Step by step's fragment, in a thread where the app's run
    did not set the language: the page stays Spanish (attnviz.i18n.current asks the
    session, attnviz.ui.lang's fallback). Before, the page's body turned English."""
    from attnviz import i18n

    with i18n.use("es"):
        shape = i18n._("shape: **{shape}**").split("**")[0].strip()
    assert shape != "shape:"
    session.open("/step_by_step?lang=es&heads=2")
    main = '[data-testid="stMain"]'
    assert shape in session.page.inner_text(main)
    choose_option(session, "head", "1")
    text = session.page.inner_text(main)
    assert shape in text and "shape:" not in text, text[:400]
    assert "Weighted sum" not in text
    assert_no_board_errors(session)
