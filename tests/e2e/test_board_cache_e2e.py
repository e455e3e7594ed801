"""Light pages (issue 17) in a real browser: plotly.js is fetched once per tab (and not again
in a second tab), page switches fetch no plotly.js, the boards of two pages draw, link and
download after several switches, no iframe, no JavaScript error."""

from __future__ import annotations

import pytest
from e2e_app import BrowserSession
from e2e_helpers import click_page

pytestmark = pytest.mark.e2e

PLOTLY_URL = "/_stcore/bidi-components/attnviz.board/vendor/plotly-"


class Fetches:
    """The responses of a page for plotly.js, with their (encoded) body sizes."""

    def __init__(self, page):
        self.seen: list[tuple[str, int]] = []
        page.on("requestfinished", self._on)

    def _on(self, request) -> None:
        if PLOTLY_URL in request.url:
            self.seen.append((request.url, request.sizes()["responseBodySize"]))


def board_state(session) -> dict:
    return session.page.evaluate(
        """() => ({
          boards: Array.from(document.querySelectorAll('.attnviz-board:not([data-hidden])'))
            .map(b => [b.dataset.board, b.dataset.state,
                       b.querySelectorAll('.js-plotly-plot').length]),
          iframes: document.querySelectorAll('iframe').length,
          scripts: document.querySelectorAll('script[data-attnviz="plotly"]').length,
          errors: window.__attnvizBoardErrors || null,
          plotly: window.Plotly ? window.Plotly.version : null,
          preload: (() => { const box = document.querySelector('.st-key-board_preload');
            const b = box && box.querySelector('.attnviz-board');
            return box ? {height: box.getBoundingClientRect().height,
                          state: b ? b.dataset.state : null} : null; })()})"""
    )


def assert_boards_drawn(session, where: str) -> dict:
    s = board_state(session)
    assert s["boards"], f"{where}: no board"
    assert all(state == "drawn" and n > 0 for _, state, n in s["boards"]), (where, s)
    assert s["iframes"] == 0, f"{where}: {s['iframes']} iframe(s) on the page"
    assert s["scripts"] == 1, f"{where}: plotly.js added {s['scripts']} times"
    assert s["errors"] == [], (where, s["errors"])
    # the hidden board that starts plotly.js first (ui.board.preload_plotly): no space
    assert s["preload"] == {"height": 0, "state": "drawn"}, (where, s["preload"])
    session.assert_healthy(where)
    return s


HOVER_JS = """([key, x, y]) => {
  const cell = document.querySelector(`.attnviz-board .cell[data-key="${key}"]`);
  cell.scrollIntoView({block: 'center'});
  const gd = cell.querySelector('.js-plotly-plot');
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  const r = cell.getBoundingClientRect();
  return {x: r.left + xa._offset + xa.l2p(x), y: r.top + ya._offset + ya.l2p(y)};
}"""

HIGHLIGHTS_JS = """(key) => document.querySelectorAll(
  `.attnviz-board .cell[data-key="${key}"] .hl`).length"""


def hover_links(session, source: str, target: str) -> None:
    """Hovering a cell of chart `source` outlines cells in chart `target` (another board)."""
    at = session.page.evaluate(HOVER_JS, [source, 1, 2])
    session.page.mouse.move(at["x"], at["y"])
    session.page.wait_for_function(f"(js) => eval(js)('{target}') > 0", arg=HIGHLIGHTS_JS)
    session.page.mouse.move(2, 2)


def download_png(session, key: str) -> None:
    click = f"""() => {{
      const cell = document.querySelector('.attnviz-board .cell[data-key="{key}"]');
      const b = Array.from(cell.querySelectorAll('.modebar-btn'))
        .find(b => (b.getAttribute('data-title') || '').includes('PNG'));
      b.click();
    }}"""
    with session.page.expect_download() as info:
        session.page.evaluate(click)
    assert info.value.suggested_filename == f"{key}.png"
    with open(info.value.path(), "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_plotly_js_once_per_tab_and_boards_work_after_many_page_switches(session):
    fetched = Fetches(session.page)
    session.open("/?N=6")
    first = assert_boards_drawn(session, "playground")
    assert first["plotly"]
    assert len(fetched.seen) == 1, fetched.seen  # a fresh browser profile: fetched once
    assert all(size <= 600_000 for _, size in fetched.seen), fetched.seen  # the bundle, gzipped
    before = len(fetched.seen)
    for title in ("Multi-head", "Step by step", "Masking", "Playground", "Multi-head"):
        click_page(session, title)
        assert_boards_drawn(session, title)
    assert len(fetched.seen) == before, f"a page switch fetched plotly.js: {fetched.seen}"
    # the boards of two pages, after those switches: they link and download
    hover_links(session, "mh_out", "mh_out")  # a query-side matrix highlights its row
    download_png(session, "mh_out")
    click_page(session, "Playground")
    assert_boards_drawn(session, "playground again")
    hover_links(session, "pg_weights", "pg_q")  # weights (one board) -> Q (another board)
    download_png(session, "pg_weights")
    assert len(fetched.seen) == before
    assert_boards_drawn(session, "the end")


def test_a_second_tab_does_not_download_plotly_js_again(browser, app_server):
    """Two tabs of one browser (one profile): the first fetches plotly.js at most once, the
    second reads it from the browser's storage and fetches none of it."""
    first = BrowserSession(browser, app_server, fresh=True)  # an empty profile
    second = BrowserSession(browser, app_server, context=first.context)
    try:
        tab1, tab2 = Fetches(first.page), Fetches(second.page)
        first.open("/?N=6")
        assert_boards_drawn(first, "first tab")
        assert len(tab1.seen) == 1 and tab1.seen[0][1] <= 600_000, tab1.seen
        second.open("/masking?N=6")
        assert_boards_drawn(second, "second tab")
        assert tab2.seen == [], f"the second tab downloaded plotly.js again: {tab2.seen}"
    finally:
        second.close()
        first.close()
