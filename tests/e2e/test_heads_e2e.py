"""The Heads section of both model pages in a real browser: it renders (score heatmaps, the
table, the top heads' weights on the probe), the score grid reads by keyboard and as one
table of every head (a screen reader's form of it), an "Open layer L, head H" button moves
the page's head view to that head, and an invalid probe length in the link is replaced
with a warning."""

from __future__ import annotations

import contextlib

import pytest
from e2e_helpers import slider_value

pytestmark = pytest.mark.e2e

#: page path, widget-key prefix, the head view's own charts before the Heads section
PAGES = [("/decoder", "dec"), ("/real_model", "rm")]


def _section(session, prefix: str):
    heads = session.page.locator(f"[id='{prefix}-heads']")
    heads.scroll_into_view_if_needed()
    return heads


def _slider(session, key: str) -> str:
    return str(slider_value(session, key))


def _wait_charts(session, titles: list[str]) -> list[str]:
    """The plot titles on the page once every one of ``titles`` is drawn (boards below the
    fold draw when scrolled into view), or what there is after 60 s."""
    js = """(want) => { const have = window.__allPlots().map(
        gd => (gd.layout && gd.layout.title && gd.layout.title.text) || '');
      return want.every(w => have.some(h => h.includes(w))); }"""
    with contextlib.suppress(Exception):  # the caller's assertion says what was found
        session.page.wait_for_function(js, arg=titles, timeout=60_000, polling=250)
    return session.page.evaluate(
        "() => window.__allPlots().map(gd => (gd.layout && gd.layout.title"
        " && gd.layout.title.text) || '')"
    )


@pytest.mark.parametrize(("path", "prefix"), PAGES)
def test_heads_section_renders_and_a_top_head_opens_in_the_head_view(session, path, prefix):
    session.open(path)
    session.assert_healthy(path)
    _section(session, prefix)
    main = session.page.locator("main")
    main.get_by_text("How an induction head works").scroll_into_view_if_needed()
    titles = _wait_charts(session, ["six scores on the probe", "Layer"])
    assert any("six scores on the probe" in t for t in titles), titles
    assert session.page.locator(f".st-key-{prefix}_heads_table").is_visible()
    session.screenshot(f"heads_{prefix}", full=True)
    _scores_by_keyboard_and_table(session, prefix)
    _every_head_grid_by_keyboard_and_table(session, prefix)
    button = session.page.locator(f".st-key-{prefix}_heads_open0 button")
    label = button.inner_text()  # "Open layer 18, head 6" (from 0)
    layer, head = (int(s.strip(" ,")) for s in label.split("layer")[1].split("head"))
    session.rerun_after(button.click)
    session.assert_healthy(f"{path} after {label!r}")
    assert _slider(session, f"{prefix}_L") == str(layer)
    assert _slider(session, f"{prefix}_H") == str(head)
    assert f"Layer {layer}, head {head} is open in the head view" in main.inner_text()
    # the page scrolled up to the head view: the button was two screens below it (the board
    # keeps itself centred while the run's last elements and its own charts change the
    # layout: board.js reveal())
    view = f".attnviz-board[data-board='board_{prefix}_head_fig']"
    in_view = """(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
      return r.top >= -1 && r.bottom <= window.innerHeight + 1; }"""
    with contextlib.suppress(Exception):  # the assertion below says where it is
        session.page.wait_for_function(in_view, arg=view, timeout=10_000, polling=100)
    assert session.page.evaluate(in_view, view), session.page.evaluate(
        "(sel) => document.querySelector(sel).getBoundingClientRect().toJSON()", view
    )
    session.screenshot(f"heads_{prefix}_opened", full=False)
    # the head view's own heatmap now shows that head
    titles = _wait_charts(session, [f"Layer {layer}, head {head}: weights"])
    assert any(f"Layer {layer}, head {head}: weights" in t for t in titles), titles
    # the link keeps the head (a value equal to the slider's default, 0, is left out)
    for key, value in ((f"{prefix}_L", layer), (f"{prefix}_H", head)):
        if value != 0:
            assert f"{key}={value}" in session.page.url


SCORES_JS = """(sel) => { const b = document.querySelector(sel);
  const t = b.querySelector('.attnviz-table');
  const cols = Array.from(t.querySelectorAll('thead th')).map(th => th.textContent);
  const rows = Array.from(t.querySelectorAll('tbody tr')).map(tr =>
    [tr.querySelector('th').textContent,
     ...Array.from(tr.querySelectorAll('td')).map(td => td.textContent)]);
  return {cols, rows}; }"""


def _scores_by_keyboard_and_table(session, prefix: str) -> None:
    """The score grid for a screen reader: one table, a row per head (layer, head numbered
    from 0 as on screen), a column per pattern; the keyboard reads layer 1 / head 0 in the first
    panel, `]` the same head's next pattern, each as the table says."""
    sel = f'[data-board="board_{prefix}_heads_scores"]'
    table = session.page.evaluate(SCORES_JS, sel)
    assert table["cols"] == ["previous", "first", "self", "local", "duplicate", "induction"]
    layers, heads = {"dec": (30, 9), "rm": (6, 12)}[prefix]
    assert len(table["rows"]) == layers * heads
    assert table["rows"][heads][0] == "layer 1, head 0"
    chart = session.page.locator(f'{sel} [role="application"]').first
    chart.focus()
    session.page.keyboard.press("ArrowDown")
    live = session.page.locator(f"{sel} [aria-live]")
    value = float(table["rows"][heads][1])
    assert live.text_content() == f"previous: layer 1, head 0, score {value:.2f}"
    session.page.keyboard.press("]")
    value = float(table["rows"][heads][2])
    assert live.text_content() == f"first: layer 1, head 0, score {value:.2f}"
    session.page.keyboard.press("Escape")


def _every_head_grid_by_keyboard_and_table(session, prefix: str) -> None:
    """The tiled grid of every head's weights on the page's text: one table, a row per head;
    the keyboard walks tile by tile (`]` the next head, `}` the next layer), each cell
    announced with its layer and head."""
    sel = f'[data-board="board_{prefix}_grid_fig"]'
    layers, heads = {"dec": (30, 9), "rm": (6, 12)}[prefix]
    rows = session.page.locator(f"{sel} .attnviz-table tbody th").all_text_contents()
    assert len(rows) == layers * heads and rows[heads + 1] == "layer 1, head 1", rows[:3]
    session.page.locator(f'{sel} [role="application"]').first.focus()
    for key in ("]", "}"):
        session.page.keyboard.press(key)
    live = session.page.locator(f"{sel} [aria-live]").text_content()
    assert live.startswith("layer 1, head 1: query t0, key t0, "), live
    session.page.keyboard.press("Escape")


def test_invalid_probe_length_in_the_link_is_replaced_with_a_warning(session):
    session.open("/decoder?dec_probe_len=9999&dec_probe_seed=7")
    session.assert_healthy("decoder with an invalid probe length")
    text = session.page.locator("main").inner_text()
    assert "dec_probe_len=9999" in text and "using dec_probe_len=40" in text
    seed = session.page.locator(".st-key-dec_probe_seed input").input_value()
    length = session.page.locator(".st-key-dec_probe_len input").input_value()
    assert (seed, length) == ("7", "40")


def test_a_click_on_a_table_row_opens_that_head(session):
    session.open("/decoder")
    session.assert_healthy("decoder")
    table = session.page.locator(".st-key-dec_heads_table [data-testid='stDataFrame']")
    table.scroll_into_view_if_needed()
    session.page.wait_for_timeout(500)
    box = table.bounding_box()
    assert box is not None
    row, row_px = 4, 35  # the fifth row (layer 0, head 4), below the 35 px header
    session.rerun_after(
        lambda: session.page.mouse.click(box["x"] + 20, box["y"] + row_px * (row + 1.5))
    )
    session.assert_healthy("decoder after a table click")
    assert _slider(session, "dec_L") == "0"
    assert _slider(session, "dec_H") == "4"
    assert "Layer 0, head 4 is open in the head view" in session.page.locator("main").inner_text()
