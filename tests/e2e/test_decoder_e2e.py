"""The decoder page in a real browser: "Add the top token" extends the prompt (an on_click
callback), the newest row grows, and the page says which sidebar controls apply; a newline
token is seen ("↵") and kept (the box becomes a text area)."""

from __future__ import annotations

import contextlib

import pytest

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
