"""The live class on the Exercises page through AppTest (attnviz.ui.live): Start a class opens
the teacher view (join link, QR code, tally, Reveal, answer keys, End the class); a student's
link to this page offers the class's light page (the students' side: tests/classroom/web/); a wrong
or
expired code and a wrong teacher key say so and offer the normal page. Clicks that go
through the browser (several tabs, the live refresh) are in tests/e2e/test_class_e2e.py."""

from __future__ import annotations

import base64
import re

import pytest
from test_app import run_app

from attnviz import classroom
from attnviz.classroom import exercises, roomlink
from attnviz.classroom.store import ClassStore
from attnviz.ui import address, live, live_source
from attnviz.ui.page import md_text
from attnviz.ui.present import qr_svg

PAGE = "pages/exercises.py"


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    """Each test its own SQLite class store (the app reads the same environment)."""
    monkeypatch.delenv(classroom.DATABASE_URL_ENV, raising=False)
    monkeypatch.setenv(classroom.DATA_DIR_ENV, str(tmp_path))
    return tmp_path


@pytest.fixture
def store(data_dir):
    s = ClassStore(grade=exercises.grade)  # the students' side, as the light page grades
    yield s
    s.dispose()


def qp(at, name):
    v = at.query_params.get(name)
    return v[0] if isinstance(v, list) else v


def svg_path(svg: str) -> str:
    """The modules of a QR code: its SVG's one path."""
    (path,) = re.findall(r'\sd="([^"]+)"', svg)
    return path


def texts(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [a.value for kind in ("error", "warning", "info", "success") for a in at.get(kind)]
    return "\n".join(parts)


def test_start_a_class_opens_the_teacher_view(store):
    at = run_app({"seed": "5"}, PAGE)
    at.button(key="class_start").click().run()
    assert not at.exception, [e.value for e in at.exception]
    code, key = qp(at, "class"), qp(at, "teacher")
    assert code and key and store.authorised(code, key)
    info = store.info(code)
    assert (info.seed, info.count) == (5, live.COUNT)
    assert at.title[0].value == f"Live class {code}"
    # join link and QR code, the tally with a Reveal per question, the keys, End
    assert any(f"?class={code}" in c.value and key not in c.value for c in at.code)
    assert at.get("imgs") or at.get("image")
    assert "0 students · 0 answers" in texts(at)
    assert [b.key for b in at.button if b.key.startswith("class_reveal")] == [
        f"class_reveal{i}" for i in range(live.COUNT)
    ]
    downloads = {b.key for b in at.get("download_button")}
    assert {"ex_key_md", "ex_key_csv"} <= downloads
    assert at.button(key="class_end").label == "End the class"


def test_the_teacher_sees_answers_reveals_and_ends(store):
    code, key = store.create(3, live.COUNT)
    items = exercises.generate(seed=3, count=live.COUNT)
    store.submit(code, "s1", 0, items[0].answer_text, nickname="Ada")
    store.submit(code, "s2", 0, "17")
    store.submit(code, "s3", 0, "17")
    at = run_app({"class": code, "teacher": key}, PAGE)
    assert not at.exception and not at.error
    shown = texts(at)
    assert "3 students · 3 answers" in shown
    assert "3 answered, 1 right, 2 wrong" in shown and "`17` ×2" in shown
    assert "**Nicknames:** Ada" in shown  # ordinary text at the presenter's type
    at.button(key="class_reveal0").click().run()
    assert store.info(code).revealed == frozenset({0})
    assert not any(b.key == "class_reveal0" for b in at.button)
    at.button(key="class_end").click().run()
    assert store.info(code).closed
    assert "has ended" in texts(at)


def test_an_old_student_link_opens_the_class_page_with_the_same_student(store):
    """Students answer on the light page (attnviz.classroom.web,
    tests/classroom/web/test_student.py); a link
    to this page without a teacher key offers it, keeping the student's id."""
    code, key = store.create(4, live.COUNT)
    at = run_app({"class": code, "student": "abcdef0123456789"}, PAGE)
    assert not at.exception and not at.error
    assert at.title[0].value == f"Live class {code}"
    (button,) = at.get("link_button")
    assert button.proto.url == f"join?class={code}&student=abcdef0123456789"
    assert not at.get("download_button") and not at.main.text_input  # no answer key, no answers
    at = run_app({"class": code, "student": "<bad>"}, PAGE)
    assert at.get("link_button")[0].proto.url == f"join?class={code}"


@pytest.mark.parametrize(
    "code", ["ZZZZZZ", "abc", "'; DROP TABLE x; --", "x" * 5000, "[x](http://e.vil) **b**"]
)
def test_a_wrong_code_says_so_and_offers_the_normal_page(store, code):
    at = run_app({"class": code}, PAGE)
    assert not at.exception
    (error,) = at.error
    shown = code[:20] + ("…" if len(code) > 20 else "")
    assert f"There is no class with the code {md_text(shown)}:" in error.value  # literally
    at.button(key="class_leave").click().run()
    assert qp(at, "class") is None
    assert at.title[0].value.startswith("Exercises: predict")


def test_an_expired_class_says_so(store, data_dir):
    clock_store = ClassStore(clock=lambda: 0.0)  # created at the epoch: long expired
    code, key = clock_store.create(1, live.COUNT)
    clock_store.dispose()
    at = run_app({"class": code, "teacher": key}, PAGE)
    assert any("no class with the code" in e.value and "24 hours" in e.value for e in at.error)


def test_a_wrong_teacher_key_shows_no_tally(store):
    code, key = store.create(2, live.COUNT)
    at = run_app({"class": code, "teacher": key[:-2] + "xx"}, PAGE)
    assert any("teacher key" in e.value for e in at.error)
    assert not any(b.key.startswith("class_reveal") for b in at.button)
    assert not at.get("download_button")
    at.button(key="class_as_student").click().run()
    assert qp(at, "teacher") is None
    assert at.title[0].value == f"Live class {code}"


def test_the_presenter_class_link_never_carries_the_teacher_key_or_a_student_id():
    from attnviz.ui import present

    params = {"class": "K7QX2M", "teacher": "secret", "student": "abc123", "present": "1"}
    assert present.class_link(params, "http://h/exercises") == "http://h/exercises?class=K7QX2M"
    assert (live.TEACHER_PARAM, live.STUDENT_PARAM) == present.PRIVATE_PARAMS


def test_the_join_box_is_a_form_that_opens_the_class_page():
    at = run_app({}, PAGE)
    (form,) = [h.proto.body for h in at.get("html") if "attnviz-join" in h.proto.body]
    assert f'<form class="attnviz-join" method="get" action="{classroom.JOIN_PATH}">' in form
    assert (
        f'name="{live.CLASS_PARAM}"' in form and "maxlength" not in form
    )  # a long code is said there
    assert "Joining a live class? Its code:" in form


def test_a_reveal_that_fails_says_why_instead_of_a_traceback(store, monkeypatch):
    code, key = store.create(2, live.COUNT)
    at = run_app({"class": code, "teacher": key}, PAGE)

    def broken(*args):
        raise classroom.ClassNotFound("no class with the code X (a wrong code, or it expired)")

    monkeypatch.setattr(ClassStore, "reveal", broken)
    at.button(key="class_reveal2").click().run()
    assert not at.exception
    assert any("Question 3 was not revealed" in e.value for e in at.error), (
        [e.value for e in at.error],
        store.info(code).revealed,
        [b.key for b in at.button],
    )


def test_bidi_controls_in_a_shown_code_are_shown_not_obeyed(store):
    code = "\u202eQQQQQQ"
    at = run_app({"class": code}, PAGE)
    (error,) = at.error
    assert "\u202e" not in error.value and "`<U+202E>QQQQQQ`" in error.value
    assert error.value.endswith("A class code is 6 letters and digits.")


def test_the_join_link_and_qr_code_use_the_public_address(store, monkeypatch):
    monkeypatch.setenv(roomlink.PUBLIC_URL_ENV, "http://192.168.1.20:8501/")
    code, key = store.create(2, live.COUNT)
    at = run_app({"class": code, "teacher": key}, PAGE)
    link = f"http://192.168.1.20:8501/join?class={code}"
    assert link in [c.value for c in at.code]
    (image,) = at.get("imgs") or at.get("image")
    shown = base64.b64decode(image.proto.imgs[0].url.split(",", 1)[1]).decode()
    assert svg_path(shown) == svg_path(qr_svg(link))  # the QR code of that link
    # an address typed in the teacher's view wins for this session
    at.text_input(key=address.GIVEN_KEY).input("https://hall.example.org/attnviz").run()
    assert f"https://hall.example.org/attnviz/join?class={code}" in [c.value for c in at.code]
    assert "the address you typed" in texts(at)


@pytest.mark.parametrize("choice, then_set", [("intro", False), ("intro+", True)])
def test_a_class_started_from_a_lessons_questions(store, choice, then_set):
    """The teacher chooses the lesson's questions (alone, or before this page's set): the
    class holds them first, the teacher view says so and presents the lesson to the class."""
    at = run_app({"seed": "5"}, PAGE)
    box = at.selectbox(key=live_source.SOURCE_KEY)
    assert box.options[0] == f"This page's set of {live.COUNT} questions"
    assert "Self-attention in 20 minutes: its 1 question only" in box.options
    box.set_value(choice).run()
    at.button(key="class_start").click().run()
    assert not at.exception, [e.value for e in at.exception]
    code, key = qp(at, "class"), qp(at, "teacher")
    info = store.info(code)
    count = 1 + (live.COUNT if then_set else 0)
    assert (info.lesson, info.items, info.count, info.seed) == ("intro", ("weight@3",), count, 5)
    reveals = [b.key for b in at.button if b.key.startswith("class_reveal")]
    assert reveals == [f"class_reveal{i}" for i in range(count)]
    said = texts(at)
    assert "From the lesson **Self\\-attention in 20 minutes**: its 1 question first" in said
    assert (f"Then {live.COUNT} questions of this page's set." in said) is then_set
    (present,) = [b for b in at.get("link_button") if "lesson" in b.proto.url]
    assert f"class={code}" in present.proto.url and f"teacher={key}" in present.proto.url
    assert "lesson=intro" in present.proto.url and "present=1" in present.proto.url
    # the first tally row is the lesson's question, graded as the phones' page grades it
    (e,) = exercises.of_class(5, 1, ("weight@3",), "en")
    assert store.submit(code, "s1", 0, e.answer_text) is True
    assert f"**1. {e.title} (lesson)**: 1 answered, 1 right" in texts(at.run())
    assert f"**2. {e.title} (lesson)**" not in texts(at)


def test_the_plain_set_stays_the_default(store):
    at = run_app({"seed": "5"}, PAGE)
    at.button(key="class_start").click().run()
    info = store.info(qp(at, "class"))
    assert (info.lesson, info.items, info.count) == ("", (), live.COUNT)


def test_the_lessons_page_starts_a_class_with_a_lessons_questions(store):
    """The Lessons page's "Start a class with its questions" opens this page with the
    lesson's questions chosen; the class started holds them and the link forgets them."""
    from attnviz.classroom import lessons

    (intro,) = [x for x in lessons.shipped() if x.slug == "intro"]
    (heads,) = [x for x in lessons.shipped() if x.slug == "learned_heads"]
    assert live_source.class_url(heads) is None  # predictions only: nothing typed to give a class
    assert live_source.class_url(intro) == f"./exercises?{live_source.LESSON_PARAM}=intro"
    at = run_app({"seed": "5", live_source.LESSON_PARAM: "intro"}, PAGE)
    assert at.selectbox(key=live_source.SOURCE_KEY).value == "intro"
    at.button(key="class_start").click().run()
    info = store.info(qp(at, "class"))
    assert (info.lesson, info.items, info.count) == ("intro", ("weight@3",), 1)
    assert qp(at, live_source.LESSON_PARAM) is None
    # a link naming no lesson with typed questions chooses nothing
    at = run_app({"seed": "5", live_source.LESSON_PARAM: "learned_heads"}, PAGE)
    assert at.selectbox(key=live_source.SOURCE_KEY).value == ""
