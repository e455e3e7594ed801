"""Drive the playground like a user: a shared link, the keyboard, uploads, the layout switch."""

from __future__ import annotations

import re

import pytest
from e2e_helpers import (
    alerts,
    axis_title_problems,
    choose_radio,
    heatmaps,
    query,
    radio_value,
    scores_shape,
    selectbox_input,
    slider_value,
    upload,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e


def test_shared_link_sets_the_controls(session):
    session.open("/?N=9&D=16&heads=4&mask=causal&seed=3")
    session.assert_healthy("shared link")
    assert slider_value(session, "N") == 9
    assert slider_value(session, "D") == 16
    expect(selectbox_input(session, "heads")).to_have_value("4")
    assert radio_value(session, "mask") == "causal"
    assert int(session.page.locator(".st-key-seed input").input_value()) == 3
    assert scores_shape(session) == (9, 9)
    assert not alerts(session, "Warning"), alerts(session)


def test_keyboard_moves_the_n_slider_and_the_heatmaps_repaint(session):
    session.open("/")
    n = slider_value(session, "N")
    assert scores_shape(session) == (n, n)
    thumb = session.page.locator('.st-key-N input[type="range"]')
    thumb.focus()
    session.rerun_after(lambda: session.page.keyboard.press("ArrowRight"))
    assert slider_value(session, "N") == n + 1
    assert scores_shape(session) == (n + 1, n + 1)
    scores = [h for h in heatmaps(session) if h["title"].startswith("Scores")][0]
    assert scores["yticks"] is None or len(scores["yticks"]) == n + 1
    assert query(session).get("N") == [str(n + 1)]
    session.assert_healthy("after ArrowRight")


def test_the_n_box_and_the_slider_stay_in_step_under_one_url_key(session):
    """Issue 25: N with a mouse moved by 4 per 2 px; the box beside the slider takes a
    typed N. Both are N in the link (?N=12), each follows the other, and a typed value out
    of range is clamped with the link check's warning."""
    session.open("/?N=9")
    box = session.page.locator(".st-key-N_box input")
    expect(box).to_have_value("9")
    box.fill("12")
    session.rerun_after(lambda: box.press("Enter"))
    assert slider_value(session, "N") == 12 and scores_shape(session) == (12, 12)
    assert query(session).get("N") == ["12"] and "N_box" not in query(session)
    thumb = session.page.locator('.st-key-N input[type="range"]')
    thumb.focus()
    session.rerun_after(lambda: session.page.keyboard.press("ArrowRight"))
    expect(box).to_have_value("13")
    assert query(session).get("N") == ["13"]
    box.fill("0")
    session.rerun_after(lambda: box.press("Enter"))
    assert slider_value(session, "N") == 1
    expect(box).to_have_value("1")
    warnings = alerts(session, "Warning")
    assert any("N=0" in w and "N must be an integer from 1 to 512" in w for w in warnings), warnings
    session.screenshot("n-box")
    session.assert_healthy("after the N box")


def test_upload_a_valid_then_an_invalid_csv(session):
    session.open("/")
    choose_radio(session, "source", "upload")
    upload(session, "x.csv", b"f1,f2,f3\n1,0,0\n0,1,0\n0,0,1\n1,1,1\n")
    session.assert_healthy("valid upload")
    assert not alerts(session, "Error"), alerts(session)
    assert slider_value(session, "N") == 4
    assert slider_value(session, "D") == 3
    assert scores_shape(session) == (4, 4)

    upload(session, "bad.csv", b"a,b\nc,d\n")
    session.assert_healthy("invalid upload")
    errors = alerts(session, "Error")
    assert errors and "bad.csv" in errors[0], alerts(session)
    # The previous good upload is still what is drawn.
    assert scores_shape(session) == (4, 4)


def test_layout_switch_transposes_the_matrices(session):
    session.open("/")
    n, d = slider_value(session, "N"), slider_value(session, "D")
    before = {h["title"]: (h["rows"], h["cols"]) for h in heatmaps(session)}
    choose_radio(session, "layout", "columns")
    session.assert_healthy("columns layout")
    after = {h["title"]: (h["rows"], h["cols"]) for h in heatmaps(session)}
    assert query(session).get("layout") == ["columns"]
    # Some matrix of shape (N, D) in rows layout is drawn (D, N) in columns layout.
    transposed = [t for t, s in before.items() if s == (n, d) and after.get(t) == (d, n)]
    assert transposed or any(s == (d, n) for s in after.values()), (before, after)
    axis_titles = " ".join(h["xtitle"] + " " + h["ytitle"] for h in heatmaps(session))
    assert "query i (column)" in axis_titles, axis_titles
    # at 1280 px the long "… (column) — columns = tokens (UDL book)" titles are shortened by
    # the board to fit their charts (they were cut at both edges)
    assert axis_title_problems(session) == []


def test_axis_titles_fit_their_charts(session):
    """Every axis title is drawn whole, inside its chart and clear of the chart's title, on
    the pages with the most heatmaps, with a mask (a second title line) and without (the
    first opened, the others reached in the same tab)."""
    for path in ("/", "/?mask=causal", "/masking", "/step_by_step?mask=causal"):
        session.visit(path)
        session.assert_healthy(path)
        assert axis_title_problems(session) == [], path


def _scores_z(session) -> list[list[float]]:
    return session.page.evaluate(
        """() => {
          for (const gd of window.__allPlots()) {
            const title = String(((gd.layout || {}).title || {}).text || '');
            if (title.replace(/<[^>]*>/g, '').startsWith('Scores'))
              return Array.from(gd._fullData[0].z, row => Array.from(row));
          }
          return null;
        }"""
    )


def test_downloaded_x_uploads_back_to_the_same_attention(session, tmp_path):
    """Export X as CSV from the page, upload that file: the same scores come back."""
    session.open("/?N=5&D=6&heads=3&seed=7")
    before = _scores_z(session)
    assert before is not None and len(before) == 5
    session.page.get_by_text("Export: every matrix as CSV").click()
    button = session.page.locator('[data-testid="stDownloadButton"] button').filter(
        has_text=re.compile(r"^X \(")
    )
    with session.page.expect_download() as info:
        button.first.click()
    path = tmp_path / "x.csv"
    info.value.save_as(path)
    content = path.read_bytes()
    assert content.count(b"\n") >= 5

    choose_radio(session, "source", "upload")
    upload(session, "x.csv", content)
    assert not alerts(session, "Error"), alerts(session)
    assert (slider_value(session, "N"), slider_value(session, "D")) == (5, 6)
    after = _scores_z(session)
    assert len(after) == 5
    worst = max(
        abs(a - b)
        for ra, rb in zip(before, after, strict=True)
        for a, b in zip(ra, rb, strict=True)
    )
    assert worst < 1e-4 * max(1.0, max(abs(v) for row in before for v in row))
