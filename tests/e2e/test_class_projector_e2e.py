"""The class on the projector (``present=1`` on the teacher's link) at 1920x1080: the join
screen (the QR code at least 40% of the screen's height, the code's letters at least 48 px
tall, the join address, the students in, nothing of the teacher's controls; this server
answers this computer only, so the teacher's warning that phones cannot open the link, in
the same words), then one question per slide by **Next question** or PageDown: its text,
no answer until the teacher reveals it, then "Answer: ..." with the explanation. Every
slide within the screen, its text at least 24 px, the question's matrices filling their
column. axe-core, screenshots in docs/img."""

from __future__ import annotations

import pytest
from axe import BLOCKING, scan
from class_helpers import app_server, data_dir  # noqa: F401
from e2e_app import BrowserSession
from e2e_helpers import HEADINGS_JS, skipped_levels
from test_readme_images import keep

from attnviz.classroom import exercises
from attnviz.classroom.store import ClassStore
from attnviz.ui import projector

pytestmark = pytest.mark.e2e

SEED = 4
SIZE = (1920, 1080)
LIVE_WAIT_MS = 30_000

QR_JS = """() => { const i = document.querySelector('.st-key-class_big_qr img');
  const r = i.getBoundingClientRect(); return [r.width, r.height, r.bottom]; }"""
CODE_JS = """() => { const p = document.querySelector('.st-key-class_big_code p');
  return parseFloat(getComputedStyle(p).fontSize); }"""
#: The slide's texts (elements with text of their own) under 24 px (the slide's body
#: type), and how far its main column scrolls (a slide does not).
SLIDE_JS = """() => { const main = document.querySelector('[data-testid="stMain"]');
  const small = Array.from(main.querySelectorAll('p, li, label, input, h1, h2, h3'))
    .filter(e => e.getBoundingClientRect().height > 0
      && Array.from(e.childNodes).some(n => n.nodeType === 3 && n.textContent.trim())
      && parseFloat(getComputedStyle(e).fontSize) < 24)
    .map(e => [e.tagName, e.innerText.slice(0, 30), getComputedStyle(e).fontSize]);
  return [small, main.scrollHeight - main.clientHeight]; }"""
#: The question's formulas: [widest, heights summed, lowest bottom] of what KaTeX drew, and
#: its column's width.
MATH_JS = """() => { const box = document.querySelector('.st-key-class_slide_prompt');
  const rs = Array.from(box.querySelectorAll('.katex-display .katex-html'))
    .map(e => e.getBoundingClientRect());
  return [Math.max(...rs.map(r => r.width)), rs.reduce((h, r) => h + r.height, 0),
    Math.max(...rs.map(r => r.bottom)), box.getBoundingClientRect().width]; }"""
WARNING = '[data-testid="stAlert"]'


def assert_a_slide(s, what: str) -> None:
    """No text under 24 px, and nothing to scroll to."""
    small, overflow = s.page.evaluate(SLIDE_JS)
    assert not small and overflow <= 0, (what, small, overflow)


def assert_one_title(s, code: str) -> list:
    """The slide's one ``h1`` names the class (read, not drawn: 1 px), first in the
    outline, and no level is skipped below it; the outline."""
    headings = s.page.evaluate(HEADINGS_JS)
    assert headings[0] == [1, f"Live class {code}"], headings
    assert [h for h in headings if h[0] == 1] == headings[:1], headings
    assert not skipped_levels(headings), headings
    box = s.page.locator("h1").bounding_box()
    assert box["width"] <= 1 and box["height"] <= 1, box
    return headings


def assert_math_fills_its_column(s) -> None:
    """The formulas within the screen and their column, and as large as it holds them:
    as wide as the column (less a margin for the estimate of their size) or as tall as
    the room the slide gives them (attnviz.ui.projector.MATH_BOX)."""
    width, height, bottom, column = s.page.evaluate(MATH_JS)
    assert width <= column and bottom <= SIZE[1], (width, height, bottom, column)
    assert width >= 0.7 * column or height >= 0.7 * projector.MATH_BOX[1], (width, height)


def test_the_join_screen_then_a_question_per_slide(browser, app_server, data_dir):  # noqa: F811
    store = ClassStore(f"sqlite:///{data_dir / 'classes.db'}")
    code, key = store.create(SEED, 8)
    items = exercises.generate(seed=SEED, count=8)
    s = BrowserSession(browser, app_server, SIZE)
    try:
        # the teacher's view warns that phones cannot open a 127.0.0.1 link; the projector too
        s.open(f"/exercises?class={code}&teacher={key}")
        warned = s.page.locator(f".st-key-class_join {WARNING}").inner_text()
        assert "Phones cannot open this link" in warned
        s.open(f"/exercises?class={code}&teacher={key}&present=1")
        s.page.locator(".st-key-class_big_code").get_by_text(code).wait_for()
        assert s.page.locator(f".st-key-class_big_warning {WARNING}").inner_text() == warned
        assert_a_slide(s, "the join screen")
        assert assert_one_title(s, code) == [[1, f"Live class {code}"]]
        width, height, bottom = s.page.evaluate(QR_JS)
        assert height >= 0.4 * SIZE[1] and bottom <= SIZE[1], (width, height, bottom)
        # a capital letter is about 0.7 of the font size: at least 48 px
        assert s.page.evaluate(CODE_JS) * 0.7 >= 48
        assert f"/join?class={code}" in s.page.locator(".st-key-class_big_link").inner_text()
        body = s.page.inner_text("body")
        for teacher_only in ("Reveal", "Answer key", "End the class", key):
            assert teacher_only not in body, teacher_only
        store.join(code, "a" * 16)
        store.join(code, "b" * 16)
        s.page.get_by_text("2 students in").wait_for(timeout=LIVE_WAIT_MS)
        assert not [v for v in scan(s.page) if v.impact in BLOCKING]
        join_shot = s.screenshot("class_projector_join", full=False, always=True)

        # Next question: question 1, its text and no answer
        s.rerun_after(lambda: s.page.get_by_role("button", name="Next question").click())
        s.page.get_by_role("heading", name=f"1. {items[0].title}").wait_for()
        assert "Answer:" not in s.page.inner_text("body")
        assert_math_fills_its_column(s)
        assert assert_one_title(s, code)[1] == [2, f"1. {items[0].title}"]
        store.reveal(code, key, 0)
        answer = s.page.locator(".st-key-class_answer")
        answer.get_by_text(f"Answer: {items[0].answer_text}").wait_for(timeout=LIVE_WAIT_MS)
        assert_a_slide(s, "a question, revealed")
        question_shot = s.screenshot("class_projector_question", full=False, always=True)
        # the keyboard: PageDown to question 2, PageUp back
        s.rerun_after(lambda: s.page.keyboard.press("PageDown"))
        s.page.get_by_role("heading", name=f"2. {items[1].title}").wait_for()
        assert_a_slide(s, "a question")
        assert_math_fills_its_column(s)
        # question 3: two row vectors
        s.rerun_after(lambda: s.page.keyboard.press("PageDown"))
        s.page.get_by_role("heading", name=f"3. {items[2].title}").wait_for()
        assert_a_slide(s, "a question with two vectors")
        assert_math_fills_its_column(s)
        s.rerun_after(lambda: s.page.keyboard.press("PageUp"))
        s.rerun_after(lambda: s.page.keyboard.press("PageUp"))
        s.page.get_by_role("heading", name=f"1. {items[0].title}").wait_for()
        s.assert_healthy("the class on the projector")
    finally:
        s.close()
        store.dispose()
    keep("class_projector_join", join_shot, SIZE, "docs/classroom.md")
    keep("class_projector_question", question_shot, SIZE, "docs/classroom.md")
