"""The presenter view in a real browser at 1280x720: one step per screen, Previous / Next by
click and by the keys a presentation remote sends (PageDown / PageUp), the step in the URL,
the sidebar collapsed, larger type, the class link and its QR code; screenshots for review."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

pytestmark = pytest.mark.e2e

PROJECTOR = (1280, 720)

STEP_TITLES_JS = """() => Array.from(document.querySelectorAll('[data-testid="stMain"] h2'))
  .map(h => h.innerText.trim())"""

SIZES_JS = """() => {
  const px = (el) => el ? parseFloat(getComputedStyle(el).fontSize) : 0;
  const root = parseFloat(getComputedStyle(document.documentElement).fontSize);
  const line = Array.from(document.querySelectorAll(
      '[data-testid="stMain"] [data-testid="stMarkdownContainer"] p'))
    .find(p => p.innerText.includes('Step '));
  return {root, step: px(line)};
}"""

SIDEBAR_JS = """() => {
  const sb = document.querySelector('[data-testid="stSidebar"]');
  if (!sb) return null;
  return {expanded: sb.getAttribute('aria-expanded'), width: sb.getBoundingClientRect().width,
          right: sb.getBoundingClientRect().right};
}"""

CHART_FONT_JS = """() => {
  const gd = document.querySelector('.attnviz-board .js-plotly-plot');
  return gd && gd._fullLayout ? gd._fullLayout.font.size : null; }"""


def headings(session) -> list[str]:
    return session.page.evaluate(STEP_TITLES_JS)


def step_param(session) -> list[str] | None:
    return parse_qs(urlparse(session.page.url).query).get("step")


def test_presenter_navigation_by_button_and_keyboard(new_session):
    s = new_session(PROJECTOR)
    s.open("/step_by_step?present=1&N=5")
    s.assert_healthy("presenter view")
    assert headings(s) == ["1. The input: one vector per token"]
    # the sidebar starts collapsed: off screen or zero width
    sb = s.page.evaluate(SIDEBAR_JS)
    assert sb is None or sb["expanded"] == "false" or sb["right"] <= 1, sb
    # larger type: the step line at >= 1.3x the root (body) size; chart text enlarged
    sizes = s.page.evaluate(SIZES_JS)
    assert sizes["step"] >= 1.3 * sizes["root"], sizes
    assert s.page.evaluate(CHART_FONT_JS) >= 1.3 * 12
    s.screenshot("present_step_by_step_1", full=False)

    s.rerun_after(lambda: s.page.locator(".st-key-present_next button").click())
    assert headings(s) == ["2. Queries, keys and values: three linear maps of X"]
    assert step_param(s) == ["2"]

    # a presentation remote: PageDown / PageUp (focus on the page, not in a widget)
    s.page.locator("h1").first.click()
    s.rerun_after(lambda: s.page.keyboard.press("PageDown"))
    assert headings(s) == ["3. Dot products: how well each query matches each key"]
    assert step_param(s) == ["3"]
    s.rerun_after(lambda: s.page.keyboard.press("PageDown"))
    assert step_param(s) == ["4"]
    s.rerun_after(lambda: s.page.keyboard.press("PageUp"))
    assert step_param(s) == ["3"]
    s.rerun_after(lambda: s.page.locator(".st-key-present_prev button").click())
    assert step_param(s) == ["2"]
    s.assert_healthy("after navigation")

    # a link with the step opens at that step
    s.open("/step_by_step?present=1&N=5&step=6")
    assert headings(s)[0].startswith("6. Softmax")
    s.screenshot("present_step_by_step_6", full=False)


def test_class_link_and_qr_code(new_session):
    s = new_session(PROJECTOR)
    s.open("/multi_head?present=1&N=4&D=4&heads=2")
    s.page.get_by_text("Copy link for the class").click()
    code = s.page.locator('[data-testid="stCode"]').first.inner_text().strip()
    # the page's own URL (what the sidebar keeps in it) without the presenter's parameters
    url = urlparse(s.page.url)
    kept = [p for p in url.query.split("&") if not p.startswith(("present=", "step="))]
    assert "present" in url.query and kept
    assert code == f"{s.base_url}/multi_head?" + "&".join(kept), (code, s.page.url)
    img = s.page.locator('[data-testid="stImage"] img').first
    img.wait_for(state="visible")
    box = img.bounding_box()
    assert box and box["width"] >= 150 and box["height"] >= 150
    assert s.page.evaluate("(i) => i.complete && i.naturalWidth > 0", img.element_handle())
    s.screenshot("present_link_box", full=False)
    s.assert_healthy("link box")


def test_multi_head_screens(new_session):
    s = new_session(PROJECTOR)
    s.open("/multi_head?present=1&N=6&D=8&heads=2")
    s.assert_healthy("multi-head presenter")
    s.screenshot("present_multi_head_1", full=False)
    for _ in range(3):  # all heads, head 0, head 1, then the concatenation
        s.rerun_after(lambda: s.page.locator(".st-key-present_next button").click())
    assert step_param(s) == ["4"]
    assert s.page.get_by_text("Concatenate the heads, then mix them with W_O").count() == 1
    s.screenshot("present_multi_head_4", full=False)
    s.assert_healthy("multi-head concat step")


def test_masking_screens(new_session):
    s = new_session(PROJECTOR)
    s.open("/masking?present=1&N=6&step=2")
    s.assert_healthy("masking presenter")
    assert s.page.get_by_text("Causal mask: no query sees a later token").count() == 1
    # the mask's scores and weights, no other mask's charts
    keys = s.page.evaluate(
        "() => Array.from(document.querySelectorAll('.attnviz-board .cell[data-key]'))"
        ".map(c => c.dataset.key)"
    )
    assert keys == ["mk_s_causal", "mk_w_causal"], keys
    s.screenshot("present_masking_2", full=False)
