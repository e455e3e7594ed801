"""The exercises page in a real browser: type the right answer, press Check, see the
success message; a wrong one shows the hint; no answer key on the students' page; "New exercises"
puts the new seed into the link. Screenshots at 1280x720 and 1280x800."""

from __future__ import annotations

import pytest
from e2e_app import BrowserSession
from e2e_helpers import alerts, query

from attnviz.classroom import exercises
from attnviz.ui import live

pytestmark = pytest.mark.e2e


def _answer(session, i: int, text: str) -> None:
    box = session.page.locator(f".st-key-ex{i} input")
    box.fill(text)
    # the button press commits the text input and runs the callback (one or two reruns)
    session.rerun_after(lambda: session.page.locator(f".st-key-ex{i}_check button").click())
    session.page.wait_for_timeout(300)
    session.wait_for_run()


def test_right_answer_gives_the_success_message(session):
    session.open("/exercises?seed=5")
    e = exercises.generate(seed=5, count=live.COUNT)[0]
    _answer(session, 0, e.answer_text)
    session.page.get_by_text(f"Right: {e.answer_text}.").wait_for(timeout=20_000)
    assert f"Right: {e.answer_text}." in " ".join(alerts(session, "Success"))
    assert f"1 / {live.COUNT} right" in session.page.inner_text("body")  # one per kind
    assert not session.exceptions() and not session.errors


def test_wrong_answer_gives_the_hint_and_the_answer_on_request(session):
    session.open("/exercises?seed=5")
    e = exercises.generate(seed=5, count=live.COUNT)[2]  # a score
    _answer(session, 2, f"{e.answer + 1:.2f}")
    session.page.get_by_text("Not quite").wait_for(timeout=20_000)
    assert e.hint in " ".join(alerts(session, "Error"))
    show = session.page.locator(".st-key-ex2_show button")
    session.rerun_after(show.click)
    session.page.get_by_text(f"Answer: {e.answer_text}").wait_for(timeout=20_000)
    assert not session.exceptions()


def test_no_answer_key_for_students_and_new_exercises_change_the_link(session):
    # the answer key moved to the teacher's view of a live class (issue 19), where
    # tests/e2e/test_class_e2e.py downloads it
    session.open("/exercises?seed=8")
    assert session.page.locator('[data-testid="stDownloadButton"]').count() == 0
    assert "Answer key" not in session.page.inner_text("body")
    session.rerun_after(lambda: session.page.locator(".st-key-ex_new button").click())
    # the whole value, not a prefix: a new seed such as 8008 also starts with "8"
    session.page.wait_for_function(
        "new URLSearchParams(location.search).get('seed') !== '8'", timeout=20_000
    )
    new = int(query(session)["seed"][0])
    assert new != 8
    assert f"seed {new}" in session.page.inner_text("body")


@pytest.mark.parametrize("size", [(1280, 720), (1280, 800)], ids=["1280x720", "1280x800"])
def test_screenshots(browser, app_server, size):
    s = BrowserSession(browser, app_server, size)
    try:
        s.open("/exercises?seed=0")
        e = exercises.generate(seed=0, count=live.COUNT)[0]
        _answer(s, 0, e.answer_text)
        s.page.get_by_text(f"Right: {e.answer_text}.").wait_for(timeout=20_000)
        s.screenshot(f"exercises_{size[0]}x{size[1]}")  # the window and the whole page
        assert not s.exceptions()
    finally:
        s.close()
