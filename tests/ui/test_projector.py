"""attnviz.ui.projector through AppTest: the class's slides for the projector (the browser's
view, sizes and keys: tests/e2e/test_class_projector_e2e.py)."""

from __future__ import annotations

import pytest
from test_app import run_app

from attnviz import classroom
from attnviz.classroom import exercises
from attnviz.classroom.store import ClassStore
from attnviz.ui import projector

PAGE = "pages/exercises.py"


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.delenv(classroom.DATABASE_URL_ENV, raising=False)
    monkeypatch.setenv(classroom.DATA_DIR_ENV, str(tmp_path))
    s = ClassStore(grade=exercises.grade)
    yield s
    s.dispose()


def texts(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])


def test_the_join_slide_then_questions_without_their_answer_until_revealed(store):
    code, key = store.create(4, 8)
    items = exercises.generate(seed=4, count=len(exercises.KINDS))
    at = run_app({"class": code, "teacher": key, "present": "1"}, PAGE)
    assert not at.exception, [e.value for e in at.exception]
    assert code in texts(at) and f"?class={code}" in texts(at)  # AppTest has no address
    assert not [b for b in at.button if b.key.startswith("class_reveal")]
    assert not at.get("download_button")
    store.join(code, "a" * 16)
    at.run()
    assert "1 student in" in texts(at)
    at.button(key="class_next").click().run()
    assert f"1. {items[0].title}" in texts(at) and items[0].prompt.split("\n")[0] in texts(at)
    assert not [s for s in at.success if "Answer" in s.value]
    store.submit(code, "a" * 16, 0, items[0].answer_text)
    store.reveal(code, key, 0)
    at.run()
    assert [s.value for s in at.success] == [f"Answer: **{items[0].answer_text}**"]
    assert "**1** answered · **1** right · **0** wrong" in texts(at)
    at.button(key="class_prev").click().run()
    assert f"{code}" in texts(at)


def test_a_questions_matrices_are_sized_to_the_slide_within_its_type():
    sizes = {e.kind: projector.math_px(e.prompt) for e in exercises.generate(seed=4, count=9)}
    assert all(projector.MATH_MIN_PX <= px <= projector.MATH_MAX_PX for px in sizes.values())
    assert sizes["mask"] == projector.MATH_MIN_PX  # no formula: nothing to size
    assert sizes["argmax"] > sizes["heads"]  # two matrices beside each other, three


def test_a_row_vector_beside_another_goes_under_it_when_that_makes_it_larger():
    items = {e.kind: e for e in exercises.generate(seed=5, count=9)}
    prompt, px = projector.slide_prompt(items["score"].prompt)  # q_i = [...] \\qquad k_j = [...]
    assert prompt.count("$$") == 4 and "\\qquad" not in prompt
    assert px >= 1.2 * projector.math_px(items["score"].prompt)
    assert projector.slide_prompt(items["argmax"].prompt)[0] == items["argmax"].prompt
