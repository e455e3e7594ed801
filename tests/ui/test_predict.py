"""Predict, then reveal through AppTest (attnviz.ui.predict): in the presenter view of the
playground a teacher whose class is open asks the room about the view on screen, sees the
tally, reveals, and the weights chart outlines the right cell; a student of the class sees
the question on the Exercises page, answers it, and after the reveal sees the answer.
The real-browser run (a teacher tab, two students) is tests/e2e/test_predict_e2e.py."""

from __future__ import annotations

import re

import pytest
from board_view import figures_of
from test_app import run_app

from attnviz import classroom
from attnviz.classroom import lessons, predict
from attnviz.ui.predict import plain
from tests.ui.test_live import data_dir, qp, store, texts  # noqa: F401 (fixtures)


def teacher_app(store, **extra):  # noqa: F811
    code, key = store.create(3, 8)
    at = run_app({"present": "1", "class": code, "teacher": key, "N": "5", **extra})
    assert not at.exception, [e.value for e in at.exception]
    return at, code, key


def rects(fig: dict) -> list[dict]:
    return [s for s in fig["layout"].get("shapes", []) if s.get("type") == "rect"]


def test_no_ask_box_without_presenter_view_or_a_valid_teacher_link(store):  # noqa: F811
    code, key = store.create(3, 8)
    for query in (
        {"class": code, "teacher": key},  # not presenting
        {"present": "1"},  # no class
        {"present": "1", "class": code, "teacher": key + "x"},  # a wrong key
    ):
        at = run_app(query)
        assert not at.exception
        assert not [b for b in at.button if b.key.startswith("predict_")], query
    store.close(code, key)
    at = run_app({"present": "1", "class": code, "teacher": key})
    assert not [b for b in at.button if b.key.startswith("predict_")]


def test_the_teacher_asks_sees_the_tally_and_reveals_on_the_chart(store):  # noqa: F811
    at, code, key = teacher_app(store, query="2")
    assert "Ask the room" in texts(at)
    at.button(key="predict_ask_top_key").click().run()
    assert not at.exception, [e.value for e in at.exception]
    q = store.question(code)
    assert q is not None and q.kind == "top_key" and q.page == "playground"
    assert q.detail["query"] == 2 and q.detail["head"] == 0
    assert plain("Which key does query 2 attend to most (head 0)?") in texts(at)
    assert "0 answers" in texts(at)
    assert not rects(figures_of(at)["pg_weights"])  # nothing outlined before the reveal
    # two students answer (one right, one wrong)
    store.answer_question(code, "s1", q.qid, q.answer)
    store.answer_question(code, "s2", q.qid, (q.answer + 1) % len(q.choices))
    at.run()
    assert "2 answers" in texts(at)
    tally = figures_of(at)["predict_tally"]
    assert tally["data"][0]["x"] == [int(i in (q.answer, (q.answer + 1) % 5)) for i in range(5)]
    at.button(key="predict_reveal").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert store.question(code).revealed
    shapes = rects(figures_of(at)["pg_weights"])
    k = q.detail["key"]
    assert {(s["x0"], s["x1"], s["y0"], s["y1"]) for s in shapes} == {(k - 0.5, k + 0.5, 1.5, 2.5)}
    assert f"**{plain(q.choices[q.answer])}**" in texts(at) and "1 of 2 predicted it" in texts(at)
    # the other charts and another head carry no outline
    assert not rects(figures_of(at)["pg_scores"])


def test_the_outline_belongs_to_its_view(store):  # noqa: F811
    at, code, key = teacher_app(store)
    at.button(key="predict_ask_top_key").click().run()
    at.button(key="predict_reveal").click().run()
    assert rects(figures_of(at)["pg_weights"])
    at.query_params["N"] = "6"  # another view: its chart is not outlined
    at2 = run_app({"present": "1", "class": code, "teacher": key, "N": "6"})
    assert not rects(figures_of(at2)["pg_weights"])
    assert "another view" in texts(at2)


def test_which_head_outlines_the_previous_token_diagonal(store):  # noqa: F811
    at, code, key = teacher_app(store, heads="2", D="8")
    at.button(key="predict_ask_previous_head").click().run()
    q = store.question(code)
    assert q.kind == "previous_head" and q.choices == ("head 0", "head 1")
    at.button(key="predict_reveal").click().run()
    head = q.detail["head"]
    at2 = run_app({"present": "1", "class": code, "teacher": key, "N": "5", "heads": "2",
                   "D": "8", "head": str(head)})  # fmt: skip
    assert {(s["y0"] + 0.5, s["x0"] + 0.5) for s in rects(figures_of(at2)["pg_weights"])} == {
        (i, i - 1) for i in range(1, 5)
    }


# The students' side (the choices, Send, the reveal) is the light page's:
# tests/classroom/web/test_student.py and tests/e2e/test_predict_e2e.py.


@pytest.mark.parametrize(
    "kind",
    [k for k in classroom.VIEW_KINDS if k not in (*predict.ROW_KINDS, "induction_head")],
)  # induction_head's cells: tests/test_predict_kinds.py
def test_answer_cells_cover_both_kinds(kind):
    cells = predict.answer_cells(kind, {"query": 1, "key": 0, "head": 0}, 3)
    assert cells == ([(1, 0)] if kind == "top_key" else [(1, 0), (2, 1)])


def test_plain_text_is_drawn_literally():
    assert plain("*a* $x$ (t_1) `c` <b>") == r"\*a\* \$x\$ \(t\_1\) \`c\` \<b\>"


def test_multi_head_asks_which_head_and_outlines_it_on_its_step(store):  # noqa: F811
    code, key = store.create(3, 8)
    link = {"present": "1", "class": code, "teacher": key, "N": "5", "heads": "2", "D": "8"}
    at = run_app({**link, "step": "1"}, "pages/multi_head.py")
    assert not at.exception, [e.value for e in at.exception]
    at.button(key="predict_ask_previous_head").click().run()
    q = store.question(code)
    assert q.page == "multi_head" and q.kind == "previous_head"
    assert "0 answers" in texts(at)
    at.button(key="predict_reveal").click().run()
    assert not at.exception, [e.value for e in at.exception]
    head = q.detail["head"]
    at2 = run_app({**link, "step": str(head + 2)}, "pages/multi_head.py")  # step 1: all heads
    cells = {(s["y0"] + 0.5, s["x0"] + 0.5) for s in rects(figures_of(at2)["mh_one_head"])}
    assert cells == {(i, i - 1) for i in range(1, 5)}
    other = run_app({**link, "step": str(3 - head)}, "pages/multi_head.py")
    assert not rects(figures_of(other)["mh_one_head"])


def test_a_lesson_s_question_stop_is_asked_of_the_room_and_the_class_goes_on(store):  # noqa: F811
    """A lecture with a class running (``present=1&class=&teacher=``): the stop's prediction is
    the first, primary Ask the room button, marked as the stop's; Next keeps the class."""
    intro = next(x for x in lessons.shipped() if x.slug == "intro")
    i = next(k for k, s in enumerate(intro.stops) if s.question and s.page == "playground")
    stop = intro.stops[i]
    at, code, key = teacher_app(store, **stop.settings, lesson="intro", stop=str(i + 1))
    asks = [b for b in at.button if b.key.startswith("predict_ask_")]
    assert asks[0].key == f"predict_ask_{stop.question.kind}"
    assert asks[0].proto.type == "primary" and "(this stop's question)" in asks[0].label
    assert all(b.proto.type != "primary" and "this stop" not in b.label for b in asks[1:])
    asks[0].click().run()
    q = store.question(code)
    assert q.kind == stop.question.kind and q.detail["query"] == stop.question.query
    html = " ".join(str(h.proto.body) for h in at.get("html")).replace("&amp;", "&")
    nxt = re.search(r'data-tour="next"[^>]*? href="([^"]+)"', html).group(1)
    assert f"class={code}" in nxt and f"teacher={key}" in nxt and "present=1" in nxt
    # the same page without the lesson: no button is the stop's
    at, code, key = teacher_app(store, **stop.settings)
    assert not [b for b in at.button if "this stop" in b.label]
