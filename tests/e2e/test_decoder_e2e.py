"""The decoder page in a real browser: "Add the top token" extends the prompt (an on_click
callback), the newest row grows, and the page says which sidebar controls apply; a newline
token is seen ("↵") and kept (the box becomes a text area)."""

from __future__ import annotations

import contextlib

import pytest
from e2e_app import BOARDS_DRAWN_JS

pytestmark = pytest.mark.e2e
#: the page's 9 charts and the Heads section's 4 (the scores and the top 3 heads)
CHARTS = 13


def _charts(session, want: int) -> int:
    """The number of charts once it reaches ``want`` (the boards may still be
    loading when the run has finished on a busy machine), or what there is after 30 s."""
    with contextlib.suppress(Exception):  # the caller's assertion says what was found
        session.page.wait_for_function(
            f"() => window.__allPlots().length >= {want}", timeout=30_000, polling=200
        )
    return session.plotly_count()


def _prompt(session, want: str | None = None) -> str:
    """The text box's value; with ``want``, once it shows ``want`` or after 15 s (on a busy
    machine the input can be drawn a moment before its value is set)."""
    box = session.page.locator(".st-key-dec_text input, .st-key-dec_text textarea")
    if want is not None:
        with contextlib.suppress(Exception):  # the caller's assertion says what was found
            box.evaluate(
                "(el, want) => new Promise((ok, no) => { const t0 = Date.now();"
                " (function poll() { if (el.value === want) ok();"
                " else if (Date.now() - t0 > 15000) no(); else setTimeout(poll, 100); })(); })",
                want,
            )
    return box.input_value()


def test_add_the_top_token_twice_then_back(session):
    from attnviz.models import smollm

    model = smollm.load()
    session.open("/decoder")
    session.assert_healthy("decoder page")
    assert _prompt(session, smollm.DEFAULT_TEXT) == smollm.DEFAULT_TEXT
    assert _charts(session, CHARTS) == CHARTS
    # the sidebar's random-weights controls are hidden on this page
    assert not session.page.locator(".st-key-N").is_visible()
    text = smollm.DEFAULT_TEXT
    for _ in range(2):
        best = model.next_tokens(text, k=1)[0][0]
        button = session.page.get_by_role("button", name="Add the top token")
        session.rerun_after(button.click)
        session.assert_healthy("after 'Add the top token'")
        text += best
        assert _prompt(session, text) == text
        assert "same as before" in session.page.locator("main").inner_text()
    session.rerun_after(session.page.get_by_role("button", name="Back to the first prompt").click)
    assert _prompt(session, smollm.DEFAULT_TEXT) == smollm.DEFAULT_TEXT
    assert _charts(session, CHARTS) == CHARTS


def test_a_newline_token_is_seen_and_kept(session):
    """Issue 47: "Shopping list:" makes "\n" the top token. Its button, bar and tick read
    "↵"; added, it stays in the box (a text area now) and in the link."""
    session.open("/decoder?dec_text=Shopping%20list%3A")
    session.assert_healthy("decoder page, one-line prompt")
    button = session.page.get_by_role("button", name="Add the top token: ↵")
    session.rerun_after(button.click)
    session.assert_healthy("after adding a newline")
    assert _prompt(session, "Shopping list:\n") == "Shopping list:\n"
    assert session.page.locator(".st-key-dec_text textarea").count() == 1
    assert "dec_text=Shopping+list%3A%0A" in session.page.url.replace("%20", "+")
    ticks = session.page.evaluate(
        "() => window.__allPlots().flatMap(p => (p.layout.xaxis || {}).ticktext || [])"
    )
    assert "↵" in ticks, ticks


# --------------------------------------------------------------------------- slides

SCREEN = (1920, 1080)
#: the smallest chart text that reads from the back of a hall on a 1080p slide (board fit.js)
READABLE_PX = 20

#: one chart (by its title's start) as drawn: its box, its cells and its text boxes
CHART_JS = """(start) => {
  const gd = window.__allPlots().find(g => {
    const t = g._fullLayout && g._fullLayout.title;
    return t && String(t.text).startsWith(start); });
  if (!gd) return null;
  const box = gd.getBoundingClientRect(), fl = gd._fullLayout;
  const heat = gd.data.find(t => t.type === 'heatmap');
  const texts = Array.from(gd.querySelectorAll('svg text'))
    .filter(t => t.textContent.trim() && t.getBBox().width > 0)
    .map(t => { const b = t.getBoundingClientRect();
      return {s: t.textContent, cell: !!t.closest('.hm, .heatmaplayer'),
              size: parseFloat(getComputedStyle(t).fontSize),
              x: b.x, y: b.y, w: b.width, h: b.height}; });
  const z = heat && heat.z;
  const cols = !z ? 0 : Array.isArray(z) ? z[0].length : Number(String(z.shape).split(',')[1]);
  return {top: box.top, bottom: box.bottom, height: box.height, texts,
          cellW: cols ? fl.xaxis._length / cols : 0};
}"""


def _overlaps(texts: list[dict]) -> list[tuple[str, str]]:
    out = []
    for i, a in enumerate(texts):
        for b in texts[i + 1 :]:
            ox = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
            oy = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
            if ox > 0.5 and oy > 0.5:
                out.append((a["s"], b["s"]))
    return out


def _chart(session, start: str) -> dict:
    session.page.wait_for_function(
        "(s) => window.__allPlots().some(g => g._fullLayout && g._fullLayout.title"
        " && String(g._fullLayout.title.text).startsWith(s))",
        arg=start,
        timeout=60_000,
    )
    session.page.wait_for_function(BOARDS_DRAWN_JS, timeout=30_000)
    return session.page.evaluate(CHART_JS, start)


def _slide_problems(c: dict, screen_h: int) -> list[str]:
    """A slide's main chart: within the screen, at least 45% of its height, its cell values
    readable (>= 20 px) or absent, each within its cell, no two text boxes overlapping."""
    problems = []
    if c["bottom"] > screen_h:
        problems.append(f"ends at y = {c['bottom']:.0f}, below the {screen_h}-px screen")
    if c["height"] < 0.45 * screen_h:
        problems.append(f"{c['height']:.0f} px tall, under 45% of the screen")
    cells = [t for t in c["texts"] if t["cell"]]
    small = sorted({t["size"] for t in cells if t["size"] < READABLE_PX})
    if small:
        problems.append(f"cell values in {small} px type")
    wide = [t["s"] for t in cells if t["w"] > c["cellW"]]
    if wide:
        problems.append(f"cell values wider than their {c['cellW']:.1f}-px cells: {wide[:3]}")
    if _overlaps(c["texts"]):
        problems.append(f"text boxes overlap: {_overlaps(c['texts'])[:3]}")
    return problems


def test_model_heads_are_slides_with_readable_values_or_none(new_session):
    """MiniLM's one-head slide (16 tokens) and the decoder's next-token slide at 1920x1080:
    the chart within the screen and large, values readable or absent, nothing overlapping;
    and MiniLM's head view on a laptop: values only where they fit (they ran together)."""
    s = new_session(SCREEN)
    s.open("/real_model?present=1&step=2")
    s.assert_healthy("MiniLM's one-head slide")
    head = _chart(s, "Layer 0, head 0: weights")
    assert not _slide_problems(head, SCREEN[1]), _slide_problems(head, SCREEN[1])
    ticks = [t["s"] for t in head["texts"] if not t["cell"]]
    assert "because" in ticks and "animal" in ticks  # every token labelled, none thinned out
    s.go("/decoder?present=1&step=3")
    s.assert_healthy("the decoder's next-token slide")
    rows = _chart(s, "Layer 0: the newest token")
    assert not _slide_problems(rows, SCREEN[1]), _slide_problems(rows, SCREEN[1])
    assert [t for t in rows["texts"] if t["cell"]], "9 tokens: the weights fit and are written"
    laptop = new_session((1440, 900))
    laptop.open("/real_model")
    view = _chart(laptop, "Layer 0, head 0: weights")
    values = [t for t in view["texts"] if t["cell"]]
    assert not _overlaps(values), _overlaps(values)[:3]
    assert all(t["w"] <= view["cellW"] for t in values)
