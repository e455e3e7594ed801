"""View questions in the class store ("predict, then reveal", attnviz.classroom) and the
pure answers (attnviz.classroom.predict), outlines (attnviz.viz.classroom.outline_cell). The
store cases run against SQLite and a real PostgreSQL (fixtures of tests/classroom/test_store.py)."""

# ruff: noqa: F811 (the store fixtures come from tests/classroom/test_store.py)
from __future__ import annotations

import numpy as np
import pytest
import sqlalchemy as sa
from test_store import Clock, pg, store, url  # noqa: F401 (fixtures)

from attnviz import classroom, engine, viz
from attnviz.classroom import exercises, predict
from attnviz.classroom.schema import ClassClosed, ClassNotFound
from attnviz.classroom.store import ClassStore

Q = dict(
    page="playground",
    link="N=4&seed=0",
    view="abc123",
    kind="top_key",
    prompt="Which key does query 1 attend to most (head 0)?",
    choices=["key 0", "key 1", "key 2", "key 3"],
    answer=2,
    detail={"query": 1, "head": 0, "key": 2},
)


def test_ask_answer_tally_reveal(store):
    code, key = store.create(3, 8)
    assert store.question(code) is None
    qid = store.ask(code, key, **Q)
    q = store.question(code)
    assert (q.qid, q.page, q.kind, q.answer, q.revealed) == (qid, "playground", "top_key", 2, False)
    assert q.choices == tuple(Q["choices"]) and q.detail == Q["detail"] and q.link == Q["link"]
    store.answer_question(code, "s1", qid, 2)
    store.answer_question(code, "s2", qid, 0)
    store.answer_question(code, "s2", qid, 3)  # a later pick replaces the earlier one
    assert store.question_tally(code, key, qid) == [0, 0, 1, 1]
    assert store.my_choice(code, "s2", qid) == 3 and store.my_choice(code, "s9", qid) is None
    store.reveal_question(code, key, qid)
    store.reveal_question(code, key, qid)  # idempotent
    assert store.question(code).revealed
    with pytest.raises(ValueError, match="revealed"):
        store.answer_question(code, "s3", qid, 2)
    assert store.question_tally(code, key, qid) == [0, 0, 1, 1]
    # a second question becomes the current one; answers to the old one are refused
    qid2 = store.ask(code, key, **{**Q, "answer": 0})
    assert qid2 == qid + 1 and store.question(code).qid == qid2
    with pytest.raises(ValueError, match="not the class's current question"):
        store.answer_question(code, "s1", qid, 1)
    assert store.question_tally(code, key, qid2) == [0, 0, 0, 0]


def test_view_questions_need_the_key_and_an_open_class(store):
    code, key = store.create(3, 8)
    with pytest.raises(PermissionError):
        store.ask(code, "nope", **Q)
    qid = store.ask(code, key, **Q)
    for call in (store.question_tally, store.reveal_question):
        with pytest.raises(PermissionError):
            call(code, key + "x", qid)
    with pytest.raises(ValueError, match="no view question"):
        store.question_tally(code, key, 99)
    with pytest.raises(ValueError, match="no view question"):
        store.reveal_question(code, key, 99)
    with pytest.raises(ClassNotFound):
        store.question("QQQQQQ")
    store.close(code, key)
    with pytest.raises(ClassClosed):
        store.ask(code, key, **Q)
    with pytest.raises(ClassClosed):
        store.answer_question(code, "s1", qid, 1)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"kind": "'; DROP TABLE x; --"}, "kind is one of"),
        ({"choices": ["only one"]}, "2 to 64 choices"),
        ({"choices": ["a", "a"]}, "must differ"),
        ({"choices": "key 0\nkey 1"}, "list of text"),
        ({"choices": ["a", "b\x00"]}, "control characters"),
        ({"choices": ["a", "b" * 41]}, "at most 40"),
        ({"answer": 4}, "from 0 to 3"),
        ({"answer": True}, "index"),
        ({"prompt": "x" * 10_000}, "at most 200"),
        ({"prompt": "a\x1b[2Jb"}, "control characters"),
        ({"link": "x" * 2001}, "at most 2000"),
        ({"detail": {"query": "1"}}, "whole numbers"),
        ({"detail": {"a b": 1}}, "whole numbers"),
        ({"page": ""}, "empty"),
    ],
)
def test_bad_questions_are_refused_and_nothing_is_stored(store, change, message):
    code, key = store.create(3, 8)
    with pytest.raises(ValueError, match=message):
        store.ask(code, key, **{**Q, **change})
    assert store.question(code) is None


@pytest.mark.parametrize("choice", [-1, 4, 1.0, "1", None, True])
def test_bad_choices_are_refused(store, choice):
    code, key = store.create(3, 8)
    qid = store.ask(code, key, **Q)
    with pytest.raises(ValueError):
        store.answer_question(code, "s1", qid, choice)
    with pytest.raises(ValueError):
        store.answer_question(code, "s\x00", qid, 1)
    assert store.question_tally(code, key, qid) == [0, 0, 0, 0]


def test_sql_in_text_is_stored_literally(store):
    code, key = store.create(3, 8)
    evil = "x'); DELETE FROM attnviz_classes; --"
    store.ask(code, key, **{**Q, "prompt": evil, "choices": [evil[:40], "b"], "answer": 1})
    assert store.question(code).prompt == evil
    assert store.question(code).choices[0] == evil[:40]


def test_view_questions_expire_with_their_class(url):
    clock = Clock()
    s = ClassStore(url, clock=clock, grade=exercises.grade)
    try:
        code, key = s.create(3, 8)
        qid = s.ask(code, key, **Q)
        s.answer_question(code, "s1", qid, 1)
        clock.now += classroom.TTL_SECONDS + 1
        s.create(4, 8)  # purges the expired class
        with s.engine.connect() as conn:
            for table in (classroom.view_questions_table, classroom.view_answers_table):
                assert conn.execute(sa.select(sa.func.count()).select_from(table)).scalar() == 0
    finally:
        s.dispose()


def test_a_database_made_before_view_questions_gains_their_tables(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    old = [classroom.view_questions_table, classroom.view_answers_table]
    eng = sa.create_engine(url)
    classroom.metadata.create_all(
        eng, tables=[t for t in classroom.metadata.sorted_tables if t not in old]
    )
    with eng.begin() as conn:
        conn.execute(classroom.meta_table.insert().values(name="schema_version", value="1"))
    eng.dispose()
    s = ClassStore(url, grade=exercises.grade)
    try:
        code, key = s.create(3, 8)
        assert s.ask(code, key, **Q) == 1
    finally:
        s.dispose()


# --------------------------------------------------------------------------- pure


def weights_of(n=5, heads=2, seed=0):
    scores = np.random.default_rng(seed).standard_normal((heads, n, n)) * 2
    return engine.softmax(scores)  # (H, N, N)


def test_top_key_is_the_argmax_of_the_row():
    w = weights_of()
    q = predict.top_key(w, 1, 3, ["a", "b", "c", "d", "e"])
    assert q.answer == int(np.argmax(w[1, 3])) and q.detail == {
        "query": 3,
        "head": 1,
        "key": q.answer,
    }
    assert q.choices[0] == "key 0 (a)" and len(q.choices) == 5
    assert "query 3" in q.prompt and "head 1" in q.prompt


def test_top_key_refuses_a_tie_a_masked_row_and_a_bad_index():
    with pytest.raises(ValueError, match="no single answer"):
        predict.top_key(np.full((1, 3, 3), 1 / 3), 0, 0)
    w = np.zeros((1, 3, 3))
    with pytest.raises(ValueError, match="every key is masked"):
        predict.top_key(w, 0, 0)
    with pytest.raises(ValueError, match="head must be"):
        predict.top_key(weights_of(), 2, 0)
    with pytest.raises(ValueError, match="shape"):
        predict.top_key(np.ones((3, 3)), 0, 0)


def test_previous_head_finds_the_head_on_the_diagonal_below():
    n = 5
    w = np.full((3, n, n), 1 / n)
    w[2] = np.eye(n, k=-1)
    w[2, 0, 0] = 1.0
    q = predict.previous_head(w)
    assert q.answer == 2 and q.choices == ("head 0", "head 1", "head 2")
    np.testing.assert_allclose(predict.previous_scores(w), [0.2, 0.2, 1.0])
    with pytest.raises(ValueError, match="2 heads"):
        predict.previous_head(w[:1])
    with pytest.raises(ValueError, match="N >= 2"):
        predict.previous_head(np.ones((2, 1, 1)))


@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_outline_frames_the_cell(layout):
    w = weights_of()[0]
    fig = viz.heatmaps.attention_figure(w, what="weights", layout=layout)
    out = viz.classroom.outline_cell(fig, 3, 1, layout, n=5)
    rects = [s for s in out.layout.shapes if s.type == "rect"]
    assert len(rects) == 2 and len(fig.layout.shapes) == len(out.layout.shapes) - 2
    x, y = (1, 3) if layout == "rows" else (3, 1)
    assert {(r.x0, r.x1, r.y0, r.y1) for r in rects} == {(x - 0.5, x + 0.5, y - 0.5, y + 0.5)}


def test_outline_frames_the_block_of_a_pooled_heatmap():
    n = 200  # pooled 2x2
    b = viz.style.pool_factor(n)
    fig = viz.heatmaps.attention_figure(np.full((n, n), 1 / n), what="weights")
    r = viz.classroom.outline_cell(fig, 7, 11, "rows", n=n).layout.shapes[-1]
    assert b == 2 and (r.x0, r.x1, r.y0, r.y1) == (9.0, 11.0, 5.0, 7.0)
    with pytest.raises(ValueError, match="layout"):
        viz.classroom.outline_cell(fig, 0, 0, "diag")


def test_choice_tally_figure_names_every_choice_and_colours_the_answer():
    choices = ["key 0", "key 1", "key 2 <b>"]
    fig = viz.classroom.choice_tally_figure(choices, [2, 0, 1]).to_dict()
    bar = fig["data"][0]
    assert bar["x"] == [2, 0, 1] and bar["text"] == ["2", "", "1"]
    assert bar["y"][2] == "key 2 &lt;b&gt;" and fig["layout"]["yaxis"]["tickvals"] == bar["y"]
    assert len(set(bar["marker"]["color"])) == 1  # before the reveal: no answer shown
    shown = viz.classroom.choice_tally_figure(choices, [2, 0, 1], answer=1).to_dict()
    colors = shown["data"][0]["marker"]["color"]
    assert colors[1] == viz.classroom.RIGHT_COLOR and colors[0] == colors[2] != colors[1]
    assert shown["data"][0]["y"][1].endswith("✓")
    with pytest.raises(ValueError, match="3 choices, 2 counts"):
        viz.classroom.choice_tally_figure(choices, [1, 2])
    with pytest.raises(ValueError, match="answer must index"):
        viz.classroom.choice_tally_figure(choices, [1, 2, 3], answer=3)
