"""Predict, then reveal on the other pages (attnviz.ui.asks), through AppTest: in each
page's presenter view a teacher whose class is open sees **Ask the room**, asking stores
the page's question with the engine's (or the model's) answer, and after **Reveal** the
page's own chart carries the outline at the answer's cell, row or head.
The playground and multi-head pages: tests/ui/test_predict.py."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from board_view import figures_of
from test_app import run_app, view_of

from attnviz.classroom import predict
from attnviz.teaching import cross
from attnviz.ui import state
from attnviz.viz.style import pool_factor
from tests.ui.test_heads import IN_CI, PAGES
from tests.ui.test_live import data_dir, store, texts  # noqa: F401 (fixtures)
from tests.ui.test_predict import rects


def teacher_link(store, **extra) -> tuple[dict, str, str]:  # noqa: F811
    code, key = store.create(3, 8)
    return {"present": "1", "class": code, "teacher": key, "N": "5", **extra}, code, key


def run_page(link: dict, page: str):
    at = run_app(link, page)
    assert not at.exception, [e.value for e in at.exception]
    return at


def ask(at, query: int | None = None, name: str = "top_key"):
    """Pick the question's query in the box (if given), press its Ask button."""
    assert "Ask the room" in texts(at)
    if query is not None:
        at.selectbox(key="predict_query").set_value(query).run()
    at.button(key=f"predict_ask_{name}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "0 answers" in texts(at)
    return at


def reveal(at):
    at.button(key="predict_reveal").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def cells(fig: dict) -> set[tuple[float, float]]:
    """The (row, column) centres of the outlined cells (row layout: query, key)."""
    return {((s["y0"] + s["y1"]) / 2, (s["x0"] + s["x1"]) / 2) for s in rects(fig)}


def engine_result(at, **changes):
    """The engine's result of the page's view with ``changes`` (as ``ui.variant``)."""
    s = dataclasses.replace(view_of(at).settings, **changes)
    return state.compute(s, None)[3]


def test_no_ask_box_outside_the_teachers_presenter_view(store):  # noqa: F811
    link, code, key = teacher_link(store)
    for page in ("pages/step_by_step.py", "pages/masking.py", "pages/scaling.py"):
        for query in ({**link, "present": "0"}, {**link, "teacher": key + "x"}):
            at = run_page({**query, "step": "2"}, page)
            assert not [b for b in at.button if b.key.startswith("predict_")], (page, query)


def test_step_by_step_asks_on_the_weights_step_and_outlines_the_cell(store):  # noqa: F811
    link, code, _ = teacher_link(store, heads="2", D="8", head="1")
    at = run_page({**link, "step": "3"}, "pages/step_by_step.py")  # the scores step
    assert not [b for b in at.button if b.key.startswith("predict_ask")]
    at = ask(run_page({**link, "step": "6"}, "pages/step_by_step.py"), query=3)
    q = store.question(code)
    w = view_of(at).result.weights  # (H, N, N): the engine's
    assert (q.page, q.kind) == ("step_by_step", "top_key")
    assert q.detail == {"query": 3, "head": 1, "key": int(np.argmax(w[1, 3]))}
    assert q.answer == q.detail["key"] and len(q.choices) == 5
    assert not rects(figures_of(at)["sb_w"])  # nothing outlined before the reveal
    reveal(at)
    assert cells(figures_of(at)["sb_w"]) == {(3, q.detail["key"])}
    other = run_page({**link, "step": "6", "head": "0"}, "pages/step_by_step.py")
    assert not rects(figures_of(other)["sb_w"])  # another head: no outline


def test_masking_asks_under_the_causal_mask_without_the_hidden_keys(store):  # noqa: F811
    link, code, _ = teacher_link(store)
    at = run_page({**link, "step": "2"}, "pages/masking.py")  # the causal mask's step
    at.selectbox(key="predict_query").set_value(0).run()
    assert at.button(key="predict_ask_top_key").disabled  # query 0 sees one key: no question
    at = ask(at, query=2)
    q = store.question(code)
    w = engine_result(at, mask_kind="causal").weights[0]  # (N, N)
    assert q.page == "masking" and [c.split(" (")[0] for c in q.choices] == [
        "key 0",
        "key 1",
        "key 2",
    ]
    assert "causal mask" in q.prompt and q.detail["key"] == int(np.argmax(w[2]))
    assert q.choices[q.answer].startswith(f"key {q.detail['key']} (")
    reveal(at)
    assert cells(figures_of(at)["mk_w_causal"]) == {(2, q.detail["key"])}
    # the same settings on the no-mask step are another view: no outline there
    other = run_page({**link, "step": "1"}, "pages/masking.py")
    assert not rects(figures_of(other)["mk_w_none"])
    assert "another view" in texts(other) or "Ask the room" in texts(other)


def test_scaling_asks_which_row_is_sharper_and_outlines_that_row(store):  # noqa: F811
    link, code, _ = teacher_link(store, D="32", heads="1")
    at = run_page({**link, "step": "3"}, "pages/scaling.py")  # the pair of weights
    at = ask(at, query=1, name="sharper_row")
    q = store.question(code)
    un = engine_result(at, scale_mode="none").weights[0, 1]
    sc = engine_result(at, scale_mode="1/√d_k").weights[0, 1]
    sharper = int(predict.entropy(sc) < predict.entropy(un))  # 0: not scaled
    assert (q.kind, q.answer, q.detail["chart"]) == ("sharper_row", sharper, sharper)
    assert q.choices == predict.SHARPER_CHOICES and sharper == 0  # d_k = 32: × 1 is sharper
    reveal(at)
    figs = figures_of(at)
    (r0, r1) = rects(figs["sc_un"])
    assert (r0["x0"], r0["x1"], r0["y0"], r0["y1"]) == (-0.5, 4.5, 0.5, 1.5)  # all of row 1
    assert not rects(figs["sc_sc"])


def test_permutation_asks_where_a_row_went_and_outlines_it(store):  # noqa: F811
    link, code, _ = teacher_link(store, D="8")
    at = ask(run_page(link, "pages/permutation.py"), query=4, name="moved_row")
    q = store.question(code)
    perm = np.random.default_rng(1).permutation(5)  # the page's shuffle seed 1
    new = int(np.flatnonzero(perm == 4)[0])  # new position <- old token 4
    assert (q.kind, q.answer, q.choices[q.answer]) == ("moved_row", new, f"row {new}")
    reveal(at)
    (r0, _) = rects(figures_of(at)["pm_b"])
    assert (r0["x0"], r0["x1"], r0["y0"], r0["y1"]) == (-0.5, 7.5, new - 0.5, new + 0.5)
    assert not rects(figures_of(at)["pm_a"])
    # with positional encodings no row equals the old one: the button says why
    at = run_page({**link, "positions": "true"}, "pages/permutation.py")
    button = at.button(key="predict_ask_moved_row")
    assert button.disabled and "not equivariant" in button.help


@pytest.mark.parametrize("name", list(PAGES))
def test_model_pages_ask_which_head_looks_at_the_previous_token(store, name):  # noqa: F811
    path, prefix, load, _ = PAGES[name]
    try:
        model = load()
    except ImportError:
        if IN_CI:
            raise
        pytest.skip(f"the weights of {path} are not installed")
    link, code, key = teacher_link(store, **{f"{prefix}_L": "2"})
    link.pop("N")
    at = ask(run_page(link, path), name="previous_head")
    q = store.question(code)
    run = model.run(at.session_state[f"{prefix}_text"])
    w = run.attentions[2]  # (H, N, N): layer 2, counted from 0
    i = np.arange(1, w.shape[1])
    head = int(np.argmax(w[:, i, i - 1].mean(axis=1)))
    assert (q.page, q.kind, q.detail) == (path[6:-3], "previous_head", {"head": head})
    assert q.choices[q.answer] == f"head {head}" and "layer 2" in q.prompt
    reveal(at)
    assert f"outlined on head {head}'s chart" in texts(at)
    key_fig = f"{prefix}_head_fig"  # the one-head view: the model pages' second slide
    at = run_page({**link, "step": "2"}, path)
    assert not rects(figures_of(at)[key_fig]) or head == 0  # the page shows head 0
    at = run_page({**link, "step": "2", f"{prefix}_H": str(head)}, path)
    n = w.shape[1]
    b = pool_factor(n)
    want = {(r // b * b, (r - 1) // b * b) for r in range(1, n)}
    assert cells(figures_of(at)[key_fig]) == {(float(r), float(c)) for r, c in want}


def test_compare_asks_which_views_row_is_sharper_and_outlines_it(store):  # noqa: F811
    link, code, _ = teacher_link(store, D="32", heads="1", b_scale="none")
    at = ask(run_page(link, "pages/compare.py"), query=2, name="sharper_row")
    q = store.question(code)
    a = view_of(at).result.weights[0, 2]  # A: the sidebar's (scaled by 1/√d_k)
    b = engine_result(at, scale_mode="none").weights[0, 2]  # B: not scaled
    sharper = int(predict.entropy(b) < predict.entropy(a))
    assert (q.page, q.choices, q.answer) == ("compare", ("view A", "view B"), sharper)
    assert sharper == 1 and "view A's (head 0) or view B's (head 0)" in q.prompt
    reveal(at)
    figs = figures_of(at)
    assert not rects(figs["cmp_a"]) and not rects(figs["cmp_diff"])
    assert {(r["x0"], r["x1"], r["y0"], r["y1"]) for r in rects(figs["cmp_b"])} == {
        (-0.5, 4.5, 1.5, 2.5)
    }
    other = run_page({**link, "b_scale": "custom"}, "pages/compare.py")  # another B
    assert not rects(figures_of(other)["cmp_b"])


def test_cross_attention_asks_which_source_token_and_outlines_it(store):  # noqa: F811
    """Target token i over the source's tokens: the choices are the source's (the padded
    ones left out), the answer the engine's argmax, outlined on the T × S weights."""
    link, code, _ = teacher_link(store, input="text", cross_mask="padding", pad_src="1")
    link.pop("N")
    at = ask(run_page({**link, "step": "3"}, "pages/cross.py"), query=6)  # the weights
    q = store.question(code)
    assert (q.page, q.kind) == ("cross", "top_key")
    assert q.prompt == "Which source token does target token 6 (assis) attend to most (head 0)?"
    assert q.choices == ("source token 0 (the)", "source token 1 (black)", "source token 2 (cat)")
    seqs = cross.sequences("text", d=8)
    res = cross.run(seqs, d=8, heads=2, mask="padding", pad=1)
    assert q.detail == {"query": 6, "head": 0, "key": int(np.argmax(res.weights[0, 6]))}
    at = reveal(at)
    assert cells(figures_of(at)["cx_top_weights"]) == {(6.0, float(q.detail["key"]))}


def test_a_lesson_s_question_slide_keeps_its_room_unless_the_class_is_open(store):  # noqa: F811
    """On a slide, a lesson stop's prediction is the tour's own question under the charts
    (room kept for it: the board's ``below``) unless a class is open, whose Ask the room
    box takes it; a link whose class has ended is a slide without a class again."""
    from attnviz.classroom import lessons
    from attnviz.ui import pages, tour
    from attnviz.ui.board import BELOW_KEY

    intro = next(x for x in lessons.shipped() if x.slug == "intro")
    i, stop = next((k, s) for k, s in enumerate(intro.stops) if s.question and s.question.predicted)
    lesson = {**stop.settings, "lesson": "intro", "stop": str(i + 1), "present": "1"}
    page = pages.page(stop.page).file
    link, code, key = teacher_link(store, **lesson)

    def shown(at) -> tuple[int, bool, bool]:
        """The room kept, the tour's question (its choices), the Ask the room box (its asks)."""
        return (
            at.session_state[BELOW_KEY],
            any(r.key == tour.CHOICE_KEY for r in at.radio),
            any((b.key or "").startswith("predict_ask_") for b in at.button),
        )

    alone = shown(run_page(lesson, page))
    assert alone[0] == tour.QUESTION_PX and alone[1] and not alone[2], alone
    assert shown(run_page(link, page)) == (0, False, True)
    store.close(code, key)
    assert shown(run_page(link, page)) == alone
