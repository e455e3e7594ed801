"""The exercises page through AppTest: the seed from the link chooses the set, a right
answer gets the success and the explanation, a wrong one the hint and "Show the answer",
the score counts, "New exercises" changes the seed, no answer key on the students' page."""

from __future__ import annotations

import pytest
from test_app import CONFIGS, assert_clean, run_app

from attnviz.classroom import exercises
from attnviz.ui import live

PAGE = "pages/exercises.py"


def answer_widget(at, i: int):
    e = exercises.generate(seed=int(at.session_state["seed"]), count=live.COUNT)[i]
    return (at.radio(key=f"ex{i}") if e.choices else at.text_input(key=f"ex{i}")), e


def score(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("## Score"))


@pytest.mark.parametrize("config", list(CONFIGS))
def test_the_page_runs_with_every_sidebar_config(config):
    at = run_app(CONFIGS[config], PAGE)
    assert_clean(at)
    assert at.title[0].value.startswith("Exercises")
    assert len([b for b in at.button if b.key.endswith("_check")]) == live.COUNT


def test_the_link_seed_chooses_the_set_and_a_right_answer_succeeds():
    at = run_app({"seed": "12"}, PAGE)
    items = exercises.generate(seed=12, count=live.COUNT)
    assert any(items[0].prompt.strip() in m.value for m in at.markdown)
    assert f"0 / {live.COUNT} right" in score(at)
    at.text_input(key="ex0").input(f" {items[0].answer_text} ")
    at.button(key="ex0_check").click().run()
    assert_clean(at)
    assert [s.value for s in at.success] == [f"Right: {items[0].answer_text}."]
    assert any(items[0].explanation.strip()[:40] in m.value for m in at.markdown)
    assert f"1 / {live.COUNT} right" in score(at)


def test_a_wrong_answer_gives_the_hint_then_the_answer():
    at = run_app({"seed": "4"}, PAGE)
    items = exercises.generate(seed=4, count=live.COUNT)
    e = items[1]  # a weight: a float answer
    at.text_input(key="ex1").input(str(e.answer + 0.2))
    at.button(key="ex1_check").click().run()
    assert not at.success
    assert any(e.hint in x.value and "Not quite" in x.value for x in at.error)
    at.button(key="ex1_show").click().run()
    assert any(e.answer_text in i.value for i in at.info)
    assert f"0 / {live.COUNT} right" in score(at)  # shown is not right
    # junk is wrong, never a traceback
    at.text_input(key="ex2").input("abc; DROP TABLE")
    at.button(key="ex2_check").click().run()
    assert not at.exception
    assert any(items[2].hint in x.value for x in at.error)


def test_the_choice_question_has_no_preselected_answer():
    at = run_app({"seed": "0"}, PAGE)
    i = exercises.KINDS.index("scaling")
    radio, e = answer_widget(at, i)
    assert radio.value is None and tuple(radio.options) == ("rise", "fall")
    at.button(key=f"ex{i}_check").click().run()  # nothing chosen: wrong, no traceback
    assert not at.exception and at.error
    radio, _ = answer_widget(at, i)
    radio.set_value(e.answer)
    at.button(key=f"ex{i}_check").click().run()
    assert [s.value for s in at.success] == [f"Right: {e.answer}."]


def test_new_exercises_change_the_seed_and_clear_the_answers():
    at = run_app({"seed": "7"}, PAGE)
    e0 = exercises.generate(seed=7, count=1)[0]
    at.text_input(key="ex0").input(e0.answer_text)
    at.button(key="ex0_check").click().run()
    assert f"1 / {live.COUNT} right" in score(at)
    at.button(key="ex_new").click().run()
    assert_clean(at)
    new = int(at.session_state["seed"])
    assert new != 7
    assert at.query_params.get("seed") in (str(new), [str(new)])
    assert f"0 / {live.COUNT} right" in score(at) and f"seed {new}" in score(at)
    assert at.text_input(key="ex0").value == ""
    prompt = exercises.generate(seed=new, count=1)[0].prompt.strip()
    assert any(prompt in m.value for m in at.markdown)


def test_the_answer_key_is_not_on_the_students_page():
    # issue 19: the keys moved to the teacher's view of a live class
    # (tests/ui/test_live.py downloads them there)
    at = run_app({"seed": "21"}, PAGE)
    keys = {b.key for b in at.get("download_button")}
    assert not keys & {"ex_key_md", "ex_key_csv"}
    assert not any("Answer key" in b.proto.label for b in at.get("download_button"))
    assert at.button(key="class_start").label == "Start a class"
    # the functions the teacher's view calls
    items = exercises.generate(seed=21, count=live.COUNT)
    md = exercises.answer_key_markdown(21, items)
    assert all(e.answer_text in md for e in items)
