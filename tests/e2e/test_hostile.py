"""Hostile input in one browser session: a clear message, no crash, and the server keeps
serving another session (a second browser context) at the same time."""

from __future__ import annotations

import pytest
from e2e_helpers import alerts, choose_radio, scores_shape, slider_value, upload

pytestmark = pytest.mark.e2e

# Nothing ran in the page (where the chart boards draw) nor in any iframe.
NOT_PWNED_JS = """() => window.__pwned === undefined && Array.from(
  document.querySelectorAll('iframe')).every(f => {
    try { return f.contentWindow.__pwned === undefined; } catch (e) { return true; } })"""

SCRIPT_TEXT = (
    '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> <b>bold</b> ok'
)


@pytest.fixture
def bystander(new_session):
    """Another user's session on the same server, opened before the attack."""
    other = new_session()
    other.open("/")
    return other


def assert_still_serving(bystander) -> None:
    """The other session still reruns: move its N slider and see its heatmaps repaint."""
    n = slider_value(bystander, "N")
    thumb = bystander.page.locator('.st-key-N input[type="range"]')
    key = "ArrowRight" if n < 512 else "ArrowLeft"
    thumb.focus()
    bystander.rerun_after(lambda: bystander.page.keyboard.press(key))
    m = slider_value(bystander, "N")
    assert m == (n + 1 if key == "ArrowRight" else n - 1)
    assert scores_shape(bystander) == (m, m)
    bystander.assert_healthy("bystander session")


def test_hostile_uploads_get_a_message_and_others_keep_working(session, bystander):
    session.open("/")
    choose_radio(session, "source", "upload")
    cases = {
        # Over the 1 MB limit: refused by the uploader itself, nothing reaches the app.
        "huge.csv": (b"0.5," * 400_000, "1.0MB or smaller"),
        # 10^6 rows cannot fit in 1 MB: also refused by size.
        "million.csv": (b"1\n" * 1_000_000, "1.0MB or smaller"),
        # Many rows under the size limit: the parser refuses more tokens than the app draws.
        "rows.csv": (b"1\n" * 200_000, "bad"),
        "text.csv": (b"1,2\n3,four\n", "bad"),
        "nan.csv": (b"1,nan\n2,3\n", "bad"),
        "inf.csv": (b"1,2\ninf,-inf\n", "bad"),
        "empty.csv": (b"", "bad"),
        "binary.csv": (bytes(range(256)) * 8, "bad"),
    }
    for name, (content, expected) in cases.items():
        if expected == "bad":
            upload(session, name, content)
            session.assert_healthy(name)
            errors = alerts(session, "Error")
            assert errors and name in errors[0], f"{name}: no error message: {alerts(session)}"
        else:
            upload(session, name, content, expect_rerun=False)
            widget = session.page.locator(".st-key-upload")
            widget.get_by_text(expected).first.wait_for()
            session.assert_healthy(name)
        assert session.page.evaluate(NOT_PWNED_JS)
    # A valid file still works after all of that; token labels in its first column are
    # drawn as text, even when they look like HTML.
    upload(
        session,
        "labels.csv",
        b'<img src=x onerror="window.__pwned=3">,1,2\n'
        b'<a href="javascript:window.__pwned=4">click</a>,3,4\n'
        b"<b>bold</b>,5,6\n",
    )
    assert not alerts(session, "Error"), alerts(session)
    assert scores_shape(session) == (3, 3)
    hrefs = session.page.evaluate(
        "() => window.__allPlots().flatMap(gd => Array.from(gd.querySelectorAll('a')))"
        ".map(a => { a.dispatchEvent(new MouseEvent('click', {bubbles: true}));"
        " return a.getAttribute('href') || a.getAttribute('xlink:href'); })"
    )
    assert not [h for h in hrefs if h and h.strip().lower().startswith("javascript")], hrefs
    assert session.page.evaluate(NOT_PWNED_JS)
    assert session.page.locator("img[src=x]").count() == 0
    assert session.page.locator('a[href^="javascript"]').count() == 0
    session.assert_healthy("HTML-like token labels")
    assert_still_serving(bystander)


def test_html_and_script_in_the_text_box_are_shown_as_text(session, bystander):
    session.open("/")
    choose_radio(session, "source", "text")
    box = session.page.locator(".st-key-text input")
    box.fill(SCRIPT_TEXT)
    session.rerun_after(lambda: box.press("Enter"))
    session.assert_healthy("script in the text box")
    assert session.page.evaluate(NOT_PWNED_JS)
    # No element the text tried to create exists in the page.
    assert session.page.locator("img[src=x]").count() == 0
    assert session.page.locator("b:text-is('bold')").count() == 0
    n = slider_value(session, "N")
    assert scores_shape(session) == (n, n) and n > 3
    assert_still_serving(bystander)


def test_nonsense_in_the_url_is_corrected_with_a_notice(session, bystander):
    session.open("/?N=-3&heads=7&mask=xyz&D=abc&seed=-1&layout=%3Cscript%3E")
    session.assert_healthy("nonsense URL")
    warnings = alerts(session, "Warning")
    assert warnings, "no notice about the corrected link"
    text = " ".join(warnings)
    for key in ("N", "heads", "mask"):
        assert key in text, f"no notice for {key}: {warnings}"
    n = slider_value(session, "N")
    assert 1 <= n <= 512 and scores_shape(session) == (n, n)
    assert session.page.evaluate(NOT_PWNED_JS)
    assert_still_serving(bystander)


def test_overflowing_number_in_the_url_is_corrected(session):
    """?seed=1e999 overflows int() inside Streamlit's URL binding unless the app removes it
    before the widget reads the URL."""
    session.open("/?seed=1e999")
    session.assert_healthy("?seed=1e999")
    assert any("seed" in w for w in alerts(session, "Warning")), alerts(session)
    assert int(session.page.locator(".st-key-seed input").input_value()) >= 0


def test_real_model_sentence_box_takes_hostile_and_overlong_text(session):
    session.open("/real_model")
    box = session.page.locator(".st-key-rm_text input")
    box.fill(SCRIPT_TEXT + " `code` [link](javascript:window.__pwned=5) **x**")
    session.rerun_after(lambda: box.press("Enter"))
    session.assert_healthy("real model: script in the sentence")
    assert session.page.evaluate(NOT_PWNED_JS)
    assert session.page.locator("img[src=x]").count() == 0
    assert session.page.locator('a[href^="javascript"]').count() == 0
    assert session.plotly_count() > 0
    # More word pieces than the model takes: a message, not a traceback.
    box.fill("word " * 700)
    session.rerun_after(lambda: box.press("Enter"))
    session.assert_healthy("real model: overlong sentence")
    assert alerts(session, "Warning") or alerts(session, "Error"), "no message for 700 words"


def test_uploaded_token_labels_are_drawn_literally(session):
    session.open("/")
    choose_radio(session, "source", "upload")
    upload(
        session,
        "links.csv",
        b'<a href="https://example.org/">visit</a>,1,2\n<b>bold</b>,3,4\n'
        b"[visit](https://example.org/),5,6\n",
    )
    assert not alerts(session, "Error"), alerts(session)
    ticks = session.page.evaluate(
        "() => Array.from(window.__allPlots()[0].querySelectorAll('g.ytick text'))"
        ".map(t => t.textContent)"
    )
    assert "<b>bold</b>" in ticks
    links = session.page.locator('a[href*="example.org"]')
    assert links.count() == 0, links.evaluate_all("ls => ls.map(a => a.outerHTML)")
