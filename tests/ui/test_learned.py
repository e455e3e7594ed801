"""The Learned attention page (pages/learned.py, attnviz/ui/learned.py) through AppTest:
opened from links (good and bad), the step slider and the task picker, the charts against
attnviz.toys computed here, Train it yourself (refused, trained, cancelled when left), the
exercises and Ask the room."""

from __future__ import annotations

import time

import numpy as np
import pytest
from board_view import figures_of
from page_words import figure_texts, offences, texts_of
from test_app import run_app, z_of

from attnviz import toys
from attnviz.teaching import explain
from attnviz.ui import learned
from tests.ui.test_live import data_dir, store, texts  # noqa: F401 (fixtures)
from tests.ui.test_predict import rects

PAGE = "pages/learned.py"


def open_page(link: dict):
    at = run_app(link, PAGE)
    assert not at.exception, [e.value for e in at.exception]
    return at


def warnings(at) -> list[str]:
    return [w.value for w in at.warning]


def qp(at, name):
    v = at.query_params.get(name)
    return v[0] if isinstance(v, list) else v


def heads_z(at) -> np.ndarray:
    """The heads chart's weights (L·H, T, T), masked cells as NaN."""
    fig = figures_of(at)["lr_heads_all"]
    return np.stack([z_of(fig, t) for t in range(len(fig["data"]))])


def test_a_good_link_opens_that_checkpoint_without_a_warning():
    run = toys.load("induction")
    step = int(run.steps[20])
    at = open_page({"task": "induction", "checkpoint": str(step)})
    assert not warnings(at)
    assert at.session_state[learned.STEP_KEY] == step
    assert (qp(at, "task"), qp(at, "checkpoint")) == ("induction", str(step))
    want = toys.example_attentions("induction", run.checkpoints[20])  # (L, H, T, T)
    z = heads_z(at)
    causal = np.tril(np.ones(want.shape[-2:], bool))
    got = np.where(causal, z, 0.0)
    np.testing.assert_allclose(got, want.reshape(z.shape), atol=1e-6)  # float32 on the wire
    assert np.isnan(z[:, ~causal]).all()  # above the diagonal: masked
    figs = figures_of(at)
    for key in ("lr_curves_loss", "lr_curves_jobs"):
        (line,) = [s for s in figs[key]["layout"]["shapes"] if s["type"] == "line"]
        assert line["x0"] == line["x1"] == step  # the step on screen, marked
    labels = figs["lr_heads_all"]["layout"]["xaxis"]["ticktext"]
    assert labels == list(toys.example("induction").labels)  # the tokens as labels


@pytest.mark.parametrize(
    ("link", "task", "step", "said"),
    [
        ({"task": "inductoin", "checkpoint": "616"}, "induction", 616, ["task `inductoin`"]),
        ({"task": "copy"}, "induction", None, ["task `copy`"]),
        ({"task": "previous", "checkpoint": "99"}, "previous", 100, ["step `99`", "step **100**"]),
        ({"task": "reverse", "checkpoint": "-5"}, "reverse", 0, ["step `-5`"]),
        ({"task": "induction", "checkpoint": "1e999"}, "induction", 1500, ["not a number"]),
        ({"task": "induction", "checkpoint": "abc"}, "induction", 1500, ["not a number"]),
        ({"checkpoint": "99999"}, "induction", 1500, ["step `99999`"]),
    ],
)
def test_a_bad_link_shows_the_nearest_valid_view_and_says_so(link, task, step, said):
    at = open_page(link)
    run = toys.load(task)
    want = int(run.steps[-1]) if step is None else step
    if step is not None:  # computed here: the checkpoint nearest to the link's step
        given = link["checkpoint"]
        raw = float(given) if given not in ("abc", "1e999") else run.steps[-1]
        assert want == int(run.steps[np.argmin(np.abs(run.steps - raw))])
    assert at.session_state[learned.TASK_KEY] == task
    assert at.session_state[learned.STEP_KEY] == want
    assert (qp(at, "task"), qp(at, "checkpoint")) == (task, str(want))  # the URL corrected
    shown = "\n".join(warnings(at))
    for part in said:
        assert part in shown


def test_an_old_link_s_step_is_the_training_step_outside_the_presenter_view():
    """``?step=`` was the training step until the page had presenter steps: outside the
    presenter view an old link still opens its checkpoint, the URL rewritten to
    ``checkpoint=``; in the presenter view ``step=`` is the slide."""
    run = toys.load("induction")
    step = int(run.steps[20])
    at = open_page({"task": "induction", "step": str(step)})
    assert not warnings(at) and at.session_state[learned.STEP_KEY] == step
    assert (qp(at, "checkpoint"), qp(at, "step")) == (str(step), None)
    at = open_page({"task": "induction", "present": "1", "step": "2", "checkpoint": str(step)})
    assert not warnings(at) and at.session_state[learned.STEP_KEY] == step
    assert (qp(at, "checkpoint"), qp(at, "step")) == (str(step), "2")


@pytest.mark.parametrize(
    ("task", "step", "charts"),
    [
        ("induction", 1, ["lr_heads_all"]),
        ("induction", 2, ["lr_curves_loss", "lr_curves_jobs"]),
        ("align", 1, ["lr_heads_all"]),
        ("align", 2, ["lr_curves_loss", "lr_curves_jobs"]),
    ],
)
def test_presenter_slides_show_the_heads_then_the_curves(task, step, charts):
    """Issue 47: in the presenter view two slides, each under the task and the step
    slider: every head at the link's checkpoint, then the loss and the job scores side by
    side as tall as the slide leaves them (the step marked); training, the table of
    numbers and the exercises are the normal page's."""
    run = toys.load(task)
    c = int(run.steps[5])
    at = open_page({"task": task, "present": "1", "step": str(step), "checkpoint": str(c)})
    assert not warnings(at)
    assert at.slider(key=learned.STEP_KEY).value == c
    figs = figures_of(at)
    assert list(figs) == charts
    if step == 2:
        assert all(f["layout"]["meta"]["fill"] == "height" for f in figs.values())
        for f in figs.values():
            (line,) = [s for s in f["layout"]["shapes"] if s["type"] == "line"]
            assert line["x0"] == line["x1"] == c
    else:
        assert f"step {c}" in figs["lr_heads_all"]["layout"]["title"]["text"]
    shown = texts_of(at)
    assert not any("Train it yourself" in t or t == "Exercises" for t in shown)
    assert not at.main.get("number_input") and not at.main.get("expander")  # seed, numbers


def test_the_step_slider_redraws_that_checkpoint_and_moves_the_link():
    at = open_page({"task": "previous"})
    run = toys.load("previous")
    step = int(run.steps[5])
    at.slider(key=learned.STEP_KEY).set_value(step).run()
    assert not at.exception
    assert qp(at, "checkpoint") == str(step)
    want = toys.example_attentions("previous", run.checkpoints[5])
    got = np.nan_to_num(heads_z(at))
    np.testing.assert_allclose(got, want.reshape(got.shape), atol=1e-6)
    assert f"step {step}" in figures_of(at)["lr_heads_all"]["layout"]["title"]["text"]
    assert not warnings(at)  # the page's own URL is not taken for a link to correct


def test_the_step_slider_is_in_steps_and_lands_on_a_checkpoint_in_its_direction():
    """Issue 35: the slider runs over the training steps (not the checkpoints' indices); a
    step between two checkpoints lands on the next one moving forward, the previous one
    moving back (an arrow key moves one checkpoint), the nearest from nowhere."""
    steps = np.array([0, 4, 6, 100, 400])
    assert learned.next_checkpoint(steps, 5, before=4) == 6
    assert learned.next_checkpoint(steps, 7, before=6) == 100  # one step right: the next
    assert learned.next_checkpoint(steps, 99, before=100) == 6  # one step left: the previous
    assert learned.next_checkpoint(steps, 90, before=None) == 100
    assert learned.next_checkpoint(steps, 401, before=400) == 400  # past the end: the last
    # two quick ArrowRights from 0: the second comes from 1, which the browser still showed
    # (not from 4, the first one's checkpoint): on to 6, not back to 0
    assert learned.next_checkpoint(steps, 1, before=0, sent=None) == 4
    assert learned.next_checkpoint(steps, 2, before=4, sent=1) == 6
    assert learned.next_checkpoint(steps, 98, before=6, sent=99) == 4  # two ArrowLefts
    assert learned.next_checkpoint(steps, 5, before=6, sent=7) == 4  # a press from 6 itself
    run = toys.load("previous")
    at = open_page({"task": "previous", "checkpoint": str(int(run.steps[20]))})
    slider = at.slider(key=learned.STEP_KEY)
    assert (slider.min, slider.max, slider.step) == (0, int(run.steps[-1]), 1)
    between = int(run.steps[20]) + 1  # one step right of checkpoint 20
    assert between not in set(run.steps.tolist())
    at.slider(key=learned.STEP_KEY).set_value(between).run()
    assert at.session_state[learned.STEP_KEY] == int(run.steps[21])
    assert qp(at, "checkpoint") == str(int(run.steps[21]))
    at.slider(key=learned.STEP_KEY).set_value(int(run.steps[21]) - 1).run()  # one left
    assert at.session_state[learned.STEP_KEY] == int(run.steps[20])


def test_a_task_change_keeps_the_nearest_step_of_the_new_run():
    at = open_page({"task": "induction", "checkpoint": "382"})
    at.selectbox(key=learned.TASK_KEY).set_value("reverse").run()
    steps = toys.load("reverse").steps
    want = int(steps[np.argmin(np.abs(steps - 382))])
    assert at.session_state[learned.STEP_KEY] == want
    assert (qp(at, "task"), qp(at, "checkpoint")) == ("reverse", str(want))
    assert len(heads_z(at)) == toys.TASKS["reverse"].layers * toys.TASKS["reverse"].heads


def test_the_phase_change_is_pointed_out_where_the_loss_falls_fastest():
    at = open_page({"task": "induction"})
    losses = toys.load("induction").losses
    # the 20-step window whose mean is lowest below the one before it
    w = 20
    means = np.array([losses[i : i + w].mean() for i in range(len(losses) - w + 1)])
    start = int(np.argmax(means[:-w] - means[w:])) + w + 1
    notes = figures_of(at)["lr_curves_loss"]["layout"]["annotations"]
    (arrow,) = [a for a in notes if a.get("showarrow")]
    assert arrow["x"] == start and "induction heads form" in arrow["text"]
    assert 340 <= start <= 490  # inside the drop that docs/engine.md describes


def test_a_clicked_head_cell_is_worked_out_with_that_checkpoints_numbers():
    run = toys.load("induction")
    at = open_page({"task": "induction", "checkpoint": str(int(run.steps[30]))})
    at.session_state["lr_heads"] = {"selection": {"query": 20, "key": 5, "head": 3}}
    at.run()
    assert not at.exception
    assert any("a\\_20,5 of head 3" in e.label for e in at.expander)
    a = toys.example_attentions("induction", run.checkpoints[30])  # (L, H, T, T)
    c = explain.cell(toys.example_result("induction", run.checkpoints[30]), 3, 20, 5)
    assert c.weight == pytest.approx(a[1, 1, 20, 5], abs=1e-12)


def test_an_oversized_training_request_is_refused_with_a_message():
    at = open_page({"task": "induction"})
    at.number_input(key=learned.STEPS_KEY).set_value(learned.LIVE_MAX_STEPS + 1).run()
    at.button(key="lr_train").click().run()
    assert learned.RUN_KEY not in at.session_state
    assert any(f"{learned.LIVE_MAX_STEPS:,} at most" in e.value for e in at.error)


def wait_done(at, limit: float = 120.0):
    """Rerun until the session's run has ended (a generous limit; not a timing check)."""
    end = time.monotonic() + limit
    while at.session_state[learned.RUN_KEY].running and time.monotonic() < end:
        time.sleep(0.3)
        at.run()
    at.run()
    assert not at.session_state[learned.RUN_KEY].running
    return at


def test_train_it_yourself_trains_in_the_server_and_offers_the_run():
    at = open_page({"task": "previous"})
    at.number_input(key=learned.SEED_KEY).set_value(3).run()
    at.number_input(key=learned.STEPS_KEY).set_value(40).run()
    at.button(key="lr_train").click().run()
    assert not at.exception
    run = at.session_state[learned.RUN_KEY]
    if run.running:  # one run per session: the button waits for it
        assert at.button(key="lr_train").disabled
        assert at.get("progress")
    wait_done(at)
    assert run.state == "done" and "Trained" in texts(at)
    want = toys.train("previous", 3, 40, every=run.history.settings["every"])
    np.testing.assert_array_equal(run.history.losses, want.losses)
    np.testing.assert_array_equal(run.history.steps, want.steps)
    live = figures_of(at)["lr_live_all"]  # every head at the run's last checkpoint
    z = np.nan_to_num(np.stack([z_of(live, t) for t in range(len(live["data"]))]))
    last = toys.example_attentions("previous", want.checkpoints[-1])
    np.testing.assert_allclose(z, last.reshape(z.shape), atol=1e-6)
    at.radio(key=learned.SOURCE_KEY).set_value(learned.YOURS).run()
    slider = at.slider(key=learned.STEP_KEY)
    assert (slider.min, slider.max) == (int(want.steps[0]), int(want.steps[-1]))
    step = int(want.steps[2])
    at.slider(key=learned.STEP_KEY).set_value(step).run()
    got = np.nan_to_num(heads_z(at))
    mine = toys.example_attentions("previous", want.checkpoints[2])
    np.testing.assert_allclose(got, mine.reshape(got.shape), atol=1e-6)
    scores = toys.job_scores("previous", want).scores
    np.testing.assert_allclose(run.jobs().scores, scores)


def test_a_second_run_is_refused_while_one_trains():
    assert learned.refusal(100, running=True).startswith("Your run is still training")
    assert learned.refusal(learned.LIVE_MAX_STEPS, running=False) is None
    assert "Refused" in learned.refusal(learned.LIVE_MAX_STEPS + 1, running=False)
    assert learned.refusal(0, running=False) is not None


def test_the_exercises_check_themselves_against_the_shipped_run():
    at = open_page({"task": "induction"})
    jobs = toys.job_scores("induction", toys.load("induction"))
    formed = jobs.steps[np.argmax(jobs.scores[:, 1, :] >= 0.5, axis=0)]  # (H,) layer 1
    at.radio(key="ex0").set_value("layer 0").run()
    at.button(key="ex0_check").click().run()
    assert any("Not quite" in e.value for e in at.error)
    at.radio(key="ex0").set_value("layer 1").run()
    at.button(key="ex0_check").click().run()
    assert any("Right: layer 1" in s.value for s in at.success)
    at.text_input(key="ex1").set_value(str(int(formed.min()) + 10)).run()
    at.button(key="ex1_check").click().run()
    assert any(f"Right: {int(formed.min())}" in s.value for s in at.success)
    assert not at.exception


def test_ask_the_room_which_head_looks_at_the_previous_token(store):  # noqa: F811
    code, key = store.create(3, 8)
    run = toys.load("induction")
    step = int(run.steps[-1])
    at = open_page({"present": "1", "class": code, "teacher": key, "task": "induction"})
    assert "Ask the room" in texts(at)
    at.button(key="predict_ask_previous_head").click().run()
    q = store.question(code)
    w = toys.example_attentions("induction", run.checkpoints[-1]).reshape(4, 32, 32)
    i = np.arange(1, 32)
    head = int(np.argmax(w[:, i, i - 1].mean(axis=1)))
    assert (q.page, q.kind, q.detail) == ("learned", "previous_head", {"head": head})
    assert q.choices[q.answer] == f"head {head}" and f"step {step}" in q.prompt
    at.button(key="predict_reveal").click().run()
    assert not at.exception
    fig = figures_of(at)["lr_heads_answer"]
    centres = {((r["y0"] + r["y1"]) / 2, (r["x0"] + r["x1"]) / 2) for r in rects(fig)}
    assert centres == {(float(r), float(r - 1)) for r in range(1, 32)}


@pytest.mark.parametrize("task", list(toys.TASKS))
def test_the_page_reads_as_words_not_test_output(task):
    at = open_page({"task": task, "checkpoint": str(int(toys.load(task).steps[3]))})
    texts = texts_of(at) + figure_texts(at)
    assert len(texts) > 20, "the page was read"
    assert not offences(texts), offences(texts)


def test_ask_the_room_which_head_is_an_induction_head(store):  # noqa: F811
    code, key = store.create(3, 8)
    run = toys.load("induction")
    c = int(np.flatnonzero(run.steps == 420)[0])  # inside the phase change
    link = {"present": "1", "class": code, "teacher": key, "task": "induction", "checkpoint": "420"}
    at = open_page(link)
    at.button(key="predict_ask_induction_head").click().run()
    q = store.question(code)
    w = toys.example_attentions("induction", run.checkpoints[c]).reshape(4, 32, 32)
    score = [w[h, np.arange(16, 32), np.arange(1, 17)].mean() for h in range(4)]  # key p + 1
    head = int(np.argmax(score))
    assert head in (2, 3)  # a layer-1 head
    assert (q.kind, q.detail) == ("induction_head", {"head": head, "back": 15, "first": 16})
    at.button(key="predict_reveal").click().run()
    assert not at.exception
    fig = figures_of(at)["lr_heads_answer"]
    centres = {((r["y0"] + r["y1"]) / 2, (r["x0"] + r["x1"]) / 2) for r in rects(fig)}
    assert centres == {(float(i), float(i - 15)) for i in range(16, 32)}
    assert "after each earlier copy are outlined" in texts(at)


def test_align_shows_the_cross_attention_forming_and_each_heads_alignment_accuracy():
    """?task=align: the step slider shows the cross-attention of the example (target words
    as rows, source words as columns) at that checkpoint, from spread out at step 0 to the
    alignment at the end; the job chart is each head's alignment accuracy."""
    run = toys.load("align")
    ex = toys.example("align")
    at = open_page({"task": "align", "checkpoint": "0"})
    assert not warnings(at) and at.session_state[learned.STEP_KEY] == 0
    fig = figures_of(at)["lr_heads_all"]
    assert fig["layout"]["xaxis"]["ticktext"] == list(ex.src_labels)  # columns: the source
    assert fig["layout"]["yaxis"]["ticktext"] == list(ex.target_labels)  # rows: the target
    aligned = toys.TASKS["align"].aligned(ex.src[None], ex.ids[None])[0]  # (T,)
    for c, step in ((0, 0), (len(run.steps) - 1, int(run.steps[-1]))):
        if step:
            at.slider(key=learned.STEP_KEY).set_value(step).run()
        z = heads_z(at)  # (L·H, T, S)
        want = toys.example_cross("align", run.checkpoints[c])
        np.testing.assert_allclose(z, want.reshape(z.shape), atol=1e-6)
        on = z[:, np.arange(len(aligned)), aligned].mean(axis=1)  # (L·H,) weight on it
        assert (on.max() < 0.5) if step == 0 else (on.max() > 0.9), (step, on)
    jobs = figures_of(at)["lr_curves_jobs"]
    names = [t["name"] for t in jobs["data"]]
    assert names == ["head 0 (layer 0): alignment accuracy", "head 1 (layer 0): alignment accuracy"]
    assert "Learned alignment" in texts(at) and not at.exception
