"""attnviz.classroom.web.student: the student page's routes over a real SQLite store (Starlette's
TestClient): the page, joining, answering once however often retried, the state, refusals
said in plain words, and nothing a student must not see."""

from __future__ import annotations

import html
import re

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from attnviz import i18n
from attnviz.classroom import exercises
from attnviz.classroom.store import ClassStore
from attnviz.classroom.web import student, words
from attnviz.classroom.web.render import text_html

SEED, COUNT = 5, 8
ITEMS = exercises.generate(seed=SEED, count=COUNT)
ORIGIN = {"origin": "http://testserver"}


@pytest.fixture
def env(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'classes.db'}"
    server = student.Server(url)
    monkeypatch.setattr(student, "SERVER", server)
    store = ClassStore(url)
    code, key = store.create(SEED, COUNT)
    with TestClient(Starlette(routes=student.routes())) as client:
        yield client, store, code, key
    store.dispose()
    if server._store is not None:
        server._store.dispose()


def post(client, code, what, **body):
    return client.post(f"/join/api/{code}/{what}", json=body, headers=ORIGIN)


def test_the_page_has_every_question_and_no_answer(env):
    client, _, code, key = env
    page = client.get(f"/join?class={code.lower()}")
    assert page.status_code == 200
    text = page.text
    assert f"<h1>Live class {code}</h1>" in text and "Nickname (optional)" in text
    assert text.count("<label for=") >= COUNT  # "Your answer" per typed question
    assert text.count(">Check</button>") == COUNT and text.count("Your answer") == COUNT
    for i, e in enumerate(ITEMS):
        assert f"{i + 1}. {html.escape(e.title)}" in text
    for e in ITEMS:  # no explanation (they give the answers) before a check or a reveal
        assert e.explanation[:40] not in text
    assert key not in text and "$$" not in text and "<math" in text
    assert re.search(r'data-student="[0-9a-f]{16}"', text)
    assert page.headers["content-security-policy"].startswith("default-src 'none'")


def test_the_page_keeps_the_students_id_from_the_link(env):
    client, _, code, _ = env
    text = client.get(f"/join?class={code}&student=abcdef0123456789").text
    assert 'data-student="abcdef0123456789"' in text
    assert 'id="join"' not in text  # a class page: no box for a code (never shown there)
    text = client.get(f"/join?class={code}&student=<x>").text  # not an id: a new one
    assert "<x>" not in text and re.search(r'data-student="[0-9a-f]{16}"', text)


def test_a_wrong_code_says_so_and_offers_a_box(env):
    client = env[0]
    page = client.get("/join?class=<script>alert(1)</script>")
    assert page.status_code == 404
    assert "There is no class with the code &lt;script&gt;alert(1)&lt;/sc…" in page.text
    assert "<script>alert" not in page.text
    assert 'id="join" class="join" method="get" action="join">' in page.text
    assert "Class code" in client.get("/join").text


def test_the_files_are_versioned_and_small(env):
    client = env[0]
    text = client.get("/join?class=AAAAAA").text
    for name in ("student.js", "student.css"):
        (link,) = re.findall(rf"join/static/{name}\?v=\w+", text)
        got = client.get("/" + link)
        assert got.status_code == 200 and "immutable" in got.headers["cache-control"]
        assert len(got.content) < 30_000
    # an unknown version (another replica's catalogs): in the page's language, not the browser's
    (arabic,) = re.findall(
        r'join/static/student\.js\?[^"]+', client.get("/join?class=AAAAAA&lang=ar").text
    )
    old = client.get(
        "/" + html.unescape(arabic).replace("v=", "v=0"), headers={"accept-language": "en"}
    )
    assert old.headers["cache-control"] == "no-cache" and old.content == words.script_in("ar")[0]
    unversioned = client.get("/join/static/student.js", headers={"accept-language": "es"})
    assert unversioned.headers["cache-control"] == "no-cache"
    assert "Accept-Language" in unversioned.headers["vary"] and "Elige" in unversioned.text
    assert client.get("/join/static/../student.py").status_code == 404


def test_a_check_is_answered_with_its_verdict_and_stored_once(env):
    client, store, code, key = env
    body = dict(student="s" * 16, cid="c" * 16, item=0, answer=ITEMS[0].answer_text)
    got = post(client, code, "answer", nickname="ada", **body)
    assert got.status_code == 200, got.text
    data = got.json()
    assert data["right"] and data["stored"] and data["verdict"].startswith("<p><strong>Right:")
    # the explanation in a box of its own: a revealed card hides it there (it shows in the
    # revealed box: once)
    explanation = text_html(ITEMS[0].explanation)
    assert data["verdict"].endswith(f'<div class="explanation">{explanation}</div>')
    again = post(client, code, "answer", nickname="ada", **body)  # a retry: the same cid
    assert again.json() == data
    assert store.count_rows(code) == 1 and store.nicknames(code, key) == ["ada"]
    wrong = post(client, code, "answer", **{**body, "cid": "d" * 16, "answer": "17"})
    assert wrong.json()["right"] is False and "Not quite." in wrong.json()["verdict"]
    assert store.answers(code, "s" * 16) == {0: ("17", False)}
    assert store.tally(code, key)[0]["answered"] == 1


def test_a_retried_check_after_a_newer_one_does_not_replace_it(env):
    client, store, code, _ = env
    first = dict(student="s" * 16, cid="1" * 16, item=1, answer="0.5")
    post(client, code, "answer", **first)
    post(client, code, "answer", **{**first, "cid": "2" * 16, "answer": "0.7"})
    post(client, code, "answer", **first)  # the first one's retry arrives late
    assert store.answers(code, "s" * 16)[1][0] == "0.7"


def test_the_state_waits_for_a_reveal_and_then_shows_its_answer(env):
    client, store, code, key = env
    first = client.get(f"/join/api/{code}/state")
    assert first.status_code == 200 and first.json()["revealed"] == {}
    store.reveal(code, key, 3)
    later = client.get(f"/join/api/{code}/state?since={first.json()['v']}")
    shown = later.json()["revealed"]["3"]
    assert shown["answer"] == ITEMS[3].answer_text and shown["html"]
    assert key not in later.text


def test_a_closed_class_checks_but_does_not_store_and_says_so(env):
    client, store, code, key = env
    store.close(code, key)
    got = post(client, code, "answer", student="s" * 16, cid="c" * 16, item=0, answer="1")
    data = got.json()
    assert got.status_code == 200 and data["stored"] is False
    assert "ended this class" in data["message"] and store.count_rows(code) == 0
    assert client.get(f"/join/api/{code}/state").json()["closed"] is True


@pytest.mark.parametrize(
    "body, words",
    [
        (dict(item=0, answer=""), "Type an answer first"),
        (dict(item=0, answer="x" * 65), "at most 64"),
        (dict(item=99, answer="1"), "tem must be from 0 to 7"),
        (dict(item=0, answer="1", nickname="n" * 25), "at most 24"),
        (dict(item=0, answer="1\x00"), "control"),
        (dict(item=0, answer="1", student="bad id"), "student id"),
        (dict(item=0, answer="1", cid=""), "no id"),
    ],
)
def test_bad_input_is_refused_in_words_and_nothing_is_stored(env, body, words):
    client, store, code, _ = env
    full = {"student": "s" * 16, "cid": "c" * 16, **body}
    got = post(client, code, "answer", **full)
    assert got.status_code == 400 and words in got.json()["message"], got.json()
    assert store.count_rows(code) == 0


def test_another_site_cannot_post_and_a_large_body_is_refused(env):
    client, store, code, _ = env
    body = dict(student="s" * 16, cid="c" * 16, item=0, answer="1")
    evil = client.post(f"/join/api/{code}/answer", json=body, headers={"origin": "http://evil"})
    assert evil.status_code == 403
    form = client.post(f"/join/api/{code}/answer", data=body)  # a form: no JSON
    assert form.status_code == 415
    big = client.post(
        f"/join/api/{code}/answer",
        content=b"{" + b" " * 5000 + b"}",
        headers={**ORIGIN, "content-type": "application/json"},
    )
    assert big.status_code == 413
    assert store.count_rows(code) == 0


def test_a_student_who_checks_too_fast_is_told_to_wait(env):
    client, _, code, _ = env
    statuses = [
        post(client, code, "answer", student="s" * 16, cid=f"{i:016d}", item=0, answer="1")
        for i in range(student.guard.BURST + 3)
    ]
    assert statuses[-1].status_code == 429 and int(statuses[-1].headers["retry-after"]) >= 1
    other = post(client, code, "answer", student="t" * 16, cid="x" * 16, item=0, answer="1")
    assert other.status_code == 200


def test_mine_gives_back_a_students_answers_and_no_one_elses(env):
    client, _, code, _ = env
    post(client, code, "answer", student="a" * 16, cid="1" * 16, item=2, answer="5")
    post(client, code, "answer", student="b" * 16, cid="2" * 16, item=4, answer="secret")
    mine = client.get(f"/join/api/{code}/mine?student={'a' * 16}").json()
    assert list(mine["answers"]) == ["2"] and mine["answers"]["2"]["answer"] == "5"
    assert "secret" not in client.get(f"/join/api/{code}/mine?student={'a' * 16}").text
    assert client.get(f"/join/api/{code}/mine?student=x").status_code == 400


def test_a_prediction_is_stored_and_refused_after_the_reveal(env):
    client, store, code, key = env
    qid = store.ask(code, key, page="playground", link="http://h/", view="v", kind="top_key",
                    prompt="Which key?", choices=["0", "1"], answer=1, detail={})  # fmt: skip
    ok = post(client, code, "predict", student="a" * 16, cid="1" * 16, qid=qid, choice=1)
    assert ok.status_code == 200 and store.question_tally(code, key, qid) == [0, 1]
    mine = client.get(f"/join/api/{code}/mine?student={'a' * 16}").json()
    assert mine["choice"] == {"qid": qid, "choice": 1}
    store.reveal_question(code, key, qid)
    late = post(client, code, "predict", student="a" * 16, cid="2" * 16, qid=qid, choice=0)
    assert late.status_code == 409 and "revealed" in late.json()["message"]


def test_an_unknown_class_is_404_in_words_everywhere(env):
    client = env[0]
    assert client.get("/join/api/QQQQQQ/state").status_code == 404
    got = post(client, "QQQQQQ", "answer", student="s" * 16, cid="c" * 16, item=0, answer="1")
    assert got.status_code == 404 and "There is no class with the code" in got.json()["message"]


def test_a_store_that_is_down_is_said_and_the_answer_can_be_sent_again(env, monkeypatch):
    client, store, code, _ = env

    def down(*args, **kwargs):
        raise OSError("database is locked")

    student.SERVER.store.submit = down  # the instance's: deleting it restores the method
    body = dict(student="s" * 16, cid="c" * 16, item=0, answer="1")
    got = post(client, code, "answer", **body)
    assert got.status_code == 503 and "kept on this device" in got.json()["message"]
    del student.SERVER.store.submit
    again = post(client, code, "answer", **body)  # the retry is not answered from memory
    assert again.status_code == 200 and store.count_rows(code) == 1


def test_a_full_store_is_said_in_words(env):
    client, store, code, _ = env

    def full(*args, **kwargs):
        raise OSError("database or disk is full")

    student.SERVER.store.submit = full
    got = post(client, code, "answer", student="s" * 16, cid="c" * 16, item=0, answer="1")
    del student.SERVER.store.submit
    assert got.status_code == 503 and got.json()["error"] == "store_full"
    assert "full" in got.json()["message"] and "kept on this device" in got.json()["message"]
    assert store.count_rows(code) == 0


def test_a_phone_that_opens_the_page_is_counted_once(env):
    client, store, code, key = env
    for cid in ("1" * 16, "2" * 16):  # a second hello of the same phone (a reload)
        got = post(client, code, "hello", student="a" * 16, cid=cid)
        assert got.status_code == 200
    post(client, code, "hello", student="b" * 16, cid="3" * 16)
    assert store.joined(code, key) == 2 and store.count_rows(code) == 0


def test_the_same_body_is_compressed_once(env):
    client, store, code, key = env
    student.gzipped.cache_clear()
    for _ in range(3):
        got = client.get(f"/join/api/{code}/state", headers={"accept-encoding": "gzip"})
        assert got.status_code == 200 and got.json()["code"] == code
    store.reveal(code, key, 0)  # a longer body (the explanation) for the same request
    got = client.get(f"/join/api/{code}/state?since=x", headers={"accept-encoding": "gzip"})
    assert got.headers["content-encoding"] == "gzip" and got.json()["revealed"]
    before = student.gzipped.cache_info()
    for _ in range(3):
        client.get("/join/static/student.js", headers={"accept-encoding": "gzip"})
    after = student.gzipped.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 2)


def test_cross_attention_questions_on_the_phone_page():
    """A class of nine has both cross-attention kinds: titled, their matrices as MathML, a
    shape box for the shape question, graded like the others."""
    items = exercises.generate(seed=SEED, count=len(exercises.KINDS))
    page = student._questions_html(SEED, len(exercises.KINDS))
    for i, e in enumerate(items):
        if e.kind not in ("cross_shape", "cross_argmax"):
            continue
        card = page.split(f'id="q{i}"')[1].split("</li>")[0]
        assert html.escape(e.title) in card
        assert ('placeholder="(4, 2)"' in card) == (e.kind == "cross_shape")
        assert e.kind == "cross_shape" or "<math" in card
        assert exercises.grade(SEED, len(items), i, e.answer_text)


@pytest.fixture
def pseudo(monkeypatch):
    """The test-only language xx (every message ⟦…⟧) is one the page can show."""
    monkeypatch.setenv("ATTNVIZ_PSEUDO", "1")
    student.words.script_in.cache_clear()
    yield "xx"
    student.words.script_in.cache_clear()


def test_the_page_speaks_english_with_its_script_in_english(env):
    client, _, code, _ = env
    text = client.get(f"/join?class={code}", headers={"accept-language": "en-GB"}).text
    assert text.startswith('<!doctype html>\n<html lang="en" dir="ltr">')
    assert f"student.js?v={student.words.script_in('en')[1]}" in text
    assert 'type="application/json"' not in text  # no catalog beside the script
    assert "Work each question out on paper, type your answer and press <strong>Check" in text
    assert 'name="lang"' not in text  # the browser's language: not written into the link


def test_the_page_is_in_the_links_language_else_the_browsers(env, pseudo):
    client, _, code, _ = env
    page = client.get(f"/join?class={code}&lang={pseudo}&student=abcdef0123456789")
    text = page.text
    assert '<html lang="xx" dir="ltr">' in text and "Accept-Language" in page.headers["vary"]
    assert ">⟦Çhéçk" in text and "Your answer" not in text
    assert "<math" in text  # the formulas as they are
    (link,) = re.findall(r"join/static/student\.js\?v=\w+", text)
    script = client.get("/" + link)
    assert "immutable" in script.headers["cache-control"]  # its version: its language
    assert '_("⟦Pîçk õñé fîrst' in script.text and "Pick one first." not in script.text
    assert f'href="join?class={code}&amp;student=abcdef0123456789&amp;lang=en"' in text
    arabic = client.get(f"/join?class={code}", headers={"accept-language": "ar-EG,en;q=0.5"})
    assert '<html lang="ar" dir="rtl">' in arabic.text
    box = client.get(f"/join?lang={pseudo}").text  # the code box keeps the chosen language
    assert '<input type="hidden" name="lang" value="xx">' in box
    assert "⟦Jõîñ à lîvé çlàss" in box and "⟦Çlàss çõdé" in box


def test_the_api_answers_in_the_pages_language(env, pseudo):
    client, store, code, _ = env
    body = dict(student="s" * 16, cid="c" * 16, item=0, answer="")
    got = client.post(f"/join/api/{code}/answer?lang={pseudo}", json=body, headers=ORIGIN)
    assert got.status_code == 400 and got.json()["message"].startswith("⟦Týpé àñ àñswér")
    long = {**body, "answer": "x" * 65}
    got = client.post(f"/join/api/{code}/answer?lang={pseudo}", json=long, headers=ORIGIN)
    assert got.json()["message"].startswith("⟦Ñõt séñt: Àñ àñswér") and "64" in got.text
    gone = client.get(f"/join/api/QQQQQQ/state?lang={pseudo}").json()["message"]
    assert gone.startswith("⟦Théré îs ñõ çlàss")
    right = dict(student="s" * 16, cid="d" * 16, item=0, answer=ITEMS[0].answer_text)
    got = client.post(f"/join/api/{code}/answer?lang={pseudo}", json=right, headers=ORIGIN)
    assert got.json()["verdict"].startswith("<p><strong>⟦Rîght: ")


def test_the_class_state_is_one_body_per_language_with_one_version(env, pseudo):
    client, store, code, key = env
    for item in range(COUNT):  # a body worth compressing
        store.reveal(code, key, item)
    student.gzipped.cache_clear()
    gz = {"accept-encoding": "gzip"}
    english = client.get(f"/join/api/{code}/state", headers=gz).json()
    spanish = client.get(f"/join/api/{code}/state?lang=es", headers=gz).json()
    for _ in range(2):
        client.get(f"/join/api/{code}/state?lang=es", headers=gz)
    assert english["v"] == spanish["v"] and english["revealed"].keys() == spanish["revealed"].keys()
    answer = ITEMS[1].answer_text
    assert english["revealed"]["1"]["answer"] == answer
    assert spanish["revealed"]["1"]["answer"] == answer.replace(".", ",")
    info = student.gzipped.cache_info()
    assert (info.misses, info.hits) == (2, 2)  # compressed once per language


@pytest.mark.parametrize("lang", ["en", "es", "zh_CN", "ar"])
def test_a_lesson_class_shows_and_checks_its_questions_first(env, lang):
    """A class started from a lesson (issue 48): its question first on the phone, in the
    page's language; checked, stored, revealed and given back as the same answer."""
    client, store, _, key = env
    lesson = ("weight@3", "mask@5")
    code, key = store.create(SEED, 3, "scaling_masks", lesson)
    shown = exercises.of_class(SEED, 3, lesson, lang)
    assert [e.kind for e in shown] == ["weight", "mask", ITEMS[0].kind]
    text = client.get(f"/join?class={code}&lang={lang}").text
    assert text.count(">Check</button>" if lang == "en" else 'class="answer"') == 3
    with i18n.use(lang):  # a title is said in the language it is read in
        titles = [html.escape(e.title) for e in shown]
        marked = html.escape(i18n._("{n}. {title} (lesson)").format(n=1, title=shown[0].title))
    assert f'id="q0-title">{marked}</h2>' in text and "(lesson)" not in text.split('id="q2')[1]
    plain = text.replace(i18n.FSI, "").replace(i18n.PDI, "")  # Arabic's isolates (i18n.isolate)
    for i, title in enumerate(titles):
        assert f"{i + 1}. {title}" in plain
    assert plain.index(titles[0]) < plain.index(titles[1]) < plain.index(titles[2])
    e = shown[1]
    body = dict(student="s" * 16, cid="l" * 16, item=1, answer=e.answer_text, lang=lang)
    got = client.post(f"/join/api/{code}/answer?lang={lang}", json=body, headers=ORIGIN)
    assert got.json()["right"] is True, got.text
    assert store.answers(code, "s" * 16) == {1: (e.answer_text, True)}
    assert post(client, code, "answer", student="t" * 16, cid="m" * 16, item=0, answer="7").json()[
        "right"
    ] is False  # fmt: skip
    assert store.tally(code, key)[1]["right"] == 1 and store.tally(code, key)[0]["wrong"] == 1
    store.reveal(code, key, 0)
    state = client.get(f"/join/api/{code}/state?lang={lang}").json()
    with i18n.use(lang):
        assert state["revealed"]["0"]["answer"] == shown[0].answer_shown
