"""A live class in a real browser: a teacher tab and three student tabs on one server.

The teacher presses **Start a class**; three students open the join link and answer the
first question (one right, two wrong); the teacher's tally (refreshed every 2 s) shows 3
answers; the teacher reveals a question and the students' pages show its answer; the
students' page has no answer-key download. Screenshots of both views at 1280x800.
"""

from __future__ import annotations

import csv
import io
import re

import pytest
from class_helpers import answer, app_server, data_dir, params, press, start_class  # noqa: F401
from e2e_app import BrowserSession

from attnviz import exercises
from attnviz.classroom import ClassStore

pytestmark = pytest.mark.e2e

SEED = 5
LIVE_WAIT_MS = 30_000  # the tally refreshes every 2 s; a loaded machine gets room


def test_a_teacher_and_three_students(browser, app_server, data_dir):  # noqa: F811 (fixtures)
    items = exercises.generate(seed=SEED, count=8)
    teacher = BrowserSession(browser, app_server)
    students = [BrowserSession(browser, app_server) for _ in range(3)]
    try:
        # 1) the teacher starts a class
        code, key = start_class(teacher, SEED)
        teacher.page.get_by_text(f"Live class {code}").wait_for()
        body = teacher.page.inner_text("body")
        assert "0 students · 0 answers" in body
        join = teacher.page.locator(".st-key-class_join")
        assert f"?class={code}" in join.inner_text() and key not in join.inner_text()
        assert join.locator("img").count() == 1  # the QR code
        assert teacher.page.locator('[data-testid="stDownloadButton"]').count() == 2
        with teacher.page.expect_download() as got:
            teacher.page.locator(".st-key-ex_key_csv button").click()
        rows = list(csv.DictReader(io.StringIO(got.value.path().read_text())))
        assert [r["kind"] for r in rows] == [e.kind for e in items]
        assert all(e.check(r["answer"]) for r, e in zip(rows, items, strict=True))
        with teacher.page.expect_download() as got:
            teacher.page.locator(".st-key-ex_key_md button").click()
        assert f"seed {SEED}" in got.value.path().read_text()

        # 2) three students join with the link and answer question 1
        for n, s in enumerate(students):
            s.open(f"/exercises?class={code}")
            s.page.get_by_text(f"Live class {code}").wait_for()
            assert s.page.locator('[data-testid="stDownloadButton"]').count() == 0
            assert "Answer key" not in s.page.inner_text("body")
            s.page.locator(".st-key-class_nickname input").fill(f"student {n}")
            answer(s, 0, items[0].answer_text if n == 0 else "17")
        students[0].page.get_by_text(f"Right: {items[0].answer_text}.").wait_for()
        for s in students[1:]:
            s.page.get_by_text("Not quite").wait_for()
        ids = {params(s)["student"] for s in students}
        assert len(ids) == 3

        # 3) the teacher's tally shows them (no reload: the fragment refreshes)
        teacher.page.get_by_text("3 students · 3 answers").wait_for(timeout=LIVE_WAIT_MS)
        row = teacher.page.locator(".st-key-class_q0").inner_text()
        assert "3 answered, 1 right, 2 wrong" in row and "17" in row and "×2" in row
        store = ClassStore(f"sqlite:///{data_dir / 'classes.db'}")
        assert store.count_rows(code) == 3
        assert store.nicknames(code, key) == ["student 0", "student 1", "student 2"]
        store.dispose()
        # the nicknames at the presenter view's type, in the text colour (not a grey caption)
        names = teacher.page.locator(".st-key-class_nicknames p")
        assert "student 0, student 1, student 2" in names.inner_text()
        style = names.evaluate("e => [getComputedStyle(e).fontSize, getComputedStyle(e).color]")
        assert style == ["22.4px", "rgb(17, 17, 17)"], style
        # the chart's Table: per question its counts (it said "students 0 | masked | masked")
        bar = teacher.page.locator('.cell[data-key="class_tally"] .attnviz-bar')
        bar.locator(".attnviz-table-toggle").click()
        rows = bar.locator(".attnviz-table tbody tr")
        assert rows.count() == len(items)
        assert rows.first.locator("th, td").all_inner_texts() == [f"1. {items[0].kind}", "1", "2"]
        assert bar.locator(".attnviz-table thead th").all_inner_texts() == ["Right", "Wrong"]
        teacher.screenshot("class_teacher_1280x800")

        # 4) the teacher reveals question 2: every student's page shows its answer
        press(teacher, "class_reveal1")
        teacher.page.locator(".st-key-class_q1").get_by_text("revealed").wait_for()
        shown = f"Revealed by the teacher: the answer is {items[1].answer_text}"
        for s in students:
            s.page.get_by_text(re.compile(re.escape(shown))).wait_for(timeout=LIVE_WAIT_MS)
        students[1].screenshot("class_student_1280x800")

        # 5) the class ends: the students are told
        press(teacher, "class_end")
        teacher.page.get_by_text("This class has ended").wait_for()
        students[2].page.get_by_text("ended this class").wait_for(timeout=LIVE_WAIT_MS)
        for s in [teacher, *students]:
            s.assert_healthy("the live class")
    finally:
        for s in [teacher, *students]:
            s.close()


def test_a_wrong_code_offers_the_normal_page(session):
    session.open("/exercises?class=QQQQQQ")
    session.page.get_by_text("There is no class with the code").wait_for()
    assert "QQQQQQ" in session.page.locator('[data-testid="stAlert"]').inner_text()
    press(session, "class_leave")
    session.page.get_by_text("Exercises: predict, then check").wait_for()
    assert "class=" not in session.page.url
    session.assert_healthy("a wrong class code")
