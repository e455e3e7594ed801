"""The Learned attention page's Streamlit parts (``pages/learned.py``).

- The link: ``?task=induction&checkpoint=600``. :func:`read_link` takes a link's values
  into the pickers (an unknown task or a step that is not a checkpoint: the nearest valid
  one, and a warning saying so); :func:`write_link` keeps the URL on what is shown. The
  training step was ``?step=`` until the page had presenter steps (``step=`` is their
  slide on every page): outside the presenter view an old link's ``step=`` is still read
  as the training step (and the URL rewritten to ``checkpoint=``).
- The pickers (:func:`task_picker`, :func:`shown_run`, :func:`step_slider`) and the charts
  of one checkpoint, in :mod:`attnviz.ui.learned_charts` and re-exported here
  (:func:`curves`: the loss curve and every head's job score; :func:`heads`: every head's
  weights with the tokens as labels, the cell panel; for the encoder-decoder's task
  (align) every cross-attention head, :func:`cross_heads`: target words as rows, source
  words as columns), drawn with the board (:func:`attnviz.ui.board.board`).
- **Train it yourself** (:func:`trainer`, :func:`live`): a seed and a number of steps; the
  run trains in a thread of the server (``attnviz.toys.runner``), the page polls it (a
  fragment every :data:`POLL` seconds) and draws a progress bar and the charts as
  checkpoints arrive. One run per session at a time, at most :data:`LIVE_MAX_STEPS` steps, at most
  ``runner.SERVER_RUNS`` runs on the server at once; a run stops when its page has not
  polled it for ``runner.LEAVE_AFTER`` seconds (the student left the page or closed the tab) or on
  Cancel.
"""

from __future__ import annotations

import difflib
import time

import numpy as np
import streamlit as st

from attnviz import i18n, toys, viz
from attnviz.classroom import exercises
from attnviz.i18n import N_, _
from attnviz.toys import runner
from attnviz.ui import quiz
from attnviz.ui.board import board, link_attn
from attnviz.ui.learned_charts import (  # noqa: F401  (re-exported: the page draws them)
    HEADS_RESERVE_PX,
    LOOK_FOR,
    PHASE_TEXT,
    cross_figure,
    cross_heads,
    curves,
    heads,
    heads_notes,
    numbers,
)
from attnviz.ui.present import presenting

TASK_KEY = "lr_task"
STEP_KEY = "lr_step"
SOURCE_KEY = "lr_source"
SEED_KEY = "lr_seed"
STEPS_KEY = "lr_steps"
RUN_KEY = "lr_run"  # this session's own run (a Run)
LINK_KEY = "lr_link"  # the (task, step) the page last wrote to the URL
REFUSED_KEY = "lr_refused"  # why the last Train was refused
TASK_PARAM, STEP_PARAM = "task", "checkpoint"
#: The training step's old parameter (the presenter's slide now): read outside the
#: presenter view when the link has no ``checkpoint``.
OLD_STEP_PARAM = "step"
DEFAULT_TASK = "induction"
#: The run picker's values (English, in the session; shown with ``_()``).
SHIPPED, YOURS = N_("the shipped run (seed 0)"), N_("your run")

#: The most steps a run trained on the page may take (about 35 s for induction on one core).
LIVE_MAX_STEPS = 2000
POLL = 0.5  # seconds between two looks at a running run
SEED_MAX = 10_000

# --------------------------------------------------------------------------- runs


def shipped(task: str) -> toys.History:
    """The shipped run of ``task`` (loaded once per server)."""
    with st.spinner(_("Loading the shipped run…")):
        return _shipped(task)


# (its spinner is said by shipped(): a decorator's text is read at import)
@st.cache_resource(show_spinner=False)
def _shipped(task: str) -> toys.History:
    return toys.load(task)


def _count(n: int) -> str:
    """A count with the shown language's thousands sign (2,000; 2.000 in Spanish)."""
    return f"{n:,}".replace(",", i18n.plotly_separators()[1])


@st.cache_resource(show_spinner=False)
def shipped_jobs(task: str) -> toys.JobScores:
    return toys.job_scores(task, _shipped(task))


def refusal(steps: object, running: bool) -> str | None:
    """Why a Train request is refused (None: it is not)."""
    if running:
        return _("Your run is still training: one run per session at a time (cancel it first).")
    if isinstance(steps, bool) or not isinstance(steps, int | float) or steps < 1:
        return _("The number of steps must be a whole number from 1 to {max}.").format(
            max=LIVE_MAX_STEPS
        )
    if steps > LIVE_MAX_STEPS:
        return _(
            "Refused: {n} steps is more than this page trains ({max} at most, about half a "
            "minute), so that a class does not keep the server busy. Ask for fewer steps."
        ).format(n=_count(int(steps)), max=_count(LIVE_MAX_STEPS))
    return None


def _start(task: str) -> None:
    """on_click of Train: start a run, or say why not."""
    seed, steps = st.session_state.get(SEED_KEY, 0), st.session_state.get(STEPS_KEY, 0)
    old = st.session_state.get(RUN_KEY)
    why = refusal(steps, old is not None and old.running)
    run = None if why is not None else runner.start(task, int(seed), int(steps))
    if why is None and run is None:
        why = _(
            "The server is training {n} runs already (one per core); try again in a minute."
        ).format(n=runner.SERVER_RUNS)
    if why is not None:
        st.session_state[REFUSED_KEY] = why
        return
    st.session_state.pop(REFUSED_KEY, None)
    st.session_state[RUN_KEY] = run


def _cancel() -> None:
    run = st.session_state.get(RUN_KEY)
    if run is not None:
        run.cancel.set()


# --------------------------------------------------------------------------- the link


def nearest(steps: np.ndarray, value: float) -> int:
    """The checkpoint step closest to ``value`` (the earlier one on a tie)."""
    return int(steps[int(np.argmin(np.abs(steps.astype(np.float64) - value)))])


def _guess_task(raw: str) -> str:
    close = difflib.get_close_matches(raw.strip().lower(), list(toys.TASKS), n=1, cutoff=0.5)
    return close[0] if close else DEFAULT_TASK


def read_link() -> list[str]:
    """A link's ``task`` and ``step`` into the pickers, before they are drawn, when the URL
    holds values this page did not write (a link opened or typed). Returns the warnings:
    an unknown task or a step that is not a checkpoint of the shipped run is replaced by
    the nearest valid one."""
    raw = (st.query_params.get(TASK_PARAM), st.query_params.get(STEP_PARAM))
    if raw[1] is None and not presenting():  # an old link: the training step was ?step=
        raw = (raw[0], st.query_params.get(OLD_STEP_PARAM))
    if raw == (None, None) or raw == st.session_state.get(LINK_KEY):
        return []
    notes = []
    task = st.session_state.get(TASK_KEY, DEFAULT_TASK)
    if raw[0] is not None:
        task = str(raw[0])
        if task not in toys.TASKS:
            task = _guess_task(task)
            notes.append(
                _("The link's task `{asked}` is not one of {tasks}; showing **{task}**.").format(
                    asked=str(raw[0])[:40], tasks=", ".join(toys.TASKS), task=task
                )
            )
    st.session_state[TASK_KEY] = task
    st.session_state[SOURCE_KEY] = SHIPPED
    steps = shipped(task).steps
    if raw[1] is not None:
        try:
            value = float(str(raw[1]).strip())
            if not np.isfinite(value):
                raise ValueError
        except ValueError:
            value, number = float(steps[-1]), False
        else:
            number = True
        step = nearest(steps, value)
        if step != value or not number:
            said = (
                _(
                    "The link's step `{asked}` is not a checkpoint of this run; showing the "
                    "nearest checkpoint, step **{step}** (checkpoints: {first} … {last})."
                )
                if number
                else _(
                    "The link's step `{asked}` is not a number; showing the nearest "
                    "checkpoint, step **{step}** (checkpoints: {first} … {last})."
                )
            )
            notes.append(
                said.format(asked=str(raw[1])[:20], step=step, first=steps[0], last=steps[-1])
            )
        st.session_state[STEP_KEY] = step
    return notes


def write_link(task: str, step: int) -> None:
    """Keep the URL on the view shown (a link to it reopens it); an old link's ``step=``
    (outside the presenter view, where it is not the slide) gives way to ``checkpoint=``."""
    st.query_params[TASK_PARAM] = task
    st.query_params[STEP_PARAM] = str(step)
    if OLD_STEP_PARAM in st.query_params and not presenting():
        del st.query_params[OLD_STEP_PARAM]
    st.session_state[LINK_KEY] = (task, str(step))


# --------------------------------------------------------------------------- pickers


def _own(task: str) -> runner.Run | None:
    """This session's run of ``task`` with something to show (2 checkpoints or more)."""
    run = st.session_state.get(RUN_KEY)
    if run is None or run.task != task or run.running or run.history is None:
        return None
    return run if len(run.history.steps) >= 2 else None


def _task_changed() -> None:
    st.session_state[SOURCE_KEY] = SHIPPED


def task_picker() -> str:
    """The task (a full rerun on the page, where the text changes with it; on a slide it is
    drawn inside the slide's fragment, with everything the task changes there)."""
    if st.session_state.get(TASK_KEY) not in toys.TASKS:
        st.session_state[TASK_KEY] = DEFAULT_TASK
    return st.selectbox(
        _("Task"),
        list(toys.TASKS),
        key=TASK_KEY,
        format_func=lambda t: f"{t}: {_(toys.TASKS[t].title)}",
        on_change=_task_changed,
        help=_("What the tiny transformer was trained to predict."),
    )


def shown_run(task: str, where=st) -> tuple[toys.History, toys.JobScores, str]:
    """The run on screen: the shipped one, or this session's own once it has trained."""
    own = _own(task)
    if own is None:
        st.session_state[SOURCE_KEY] = SHIPPED
        return shipped(task), shipped_jobs(task), SHIPPED
    if st.session_state.get(SOURCE_KEY) not in (SHIPPED, YOURS):
        st.session_state[SOURCE_KEY] = SHIPPED
    yours = _("{run} (seed {seed}, {steps} steps)").format(
        run=_(YOURS), seed=own.seed, steps=int(own.history.steps[-1])
    )
    source = where.radio(
        _("Run"), [SHIPPED, YOURS], key=SOURCE_KEY, horizontal=True,
        format_func=lambda s: yours if s == YOURS else _(s),
    )  # fmt: skip
    if source == YOURS:
        return own.history, own.jobs(), YOURS
    return shipped(task), shipped_jobs(task), SHIPPED


PREV_STEP_KEY = "lr_step_prev"  # the checkpoint shown before the slider moved
SENT_STEP_KEY = "lr_step_sent"  # the value the browser sent last, before it was snapped


def next_checkpoint(
    steps: np.ndarray, value: int, before: int | None, sent: int | None = None
) -> int:
    """The checkpoint a slider moved to ``value`` (from ``before``) lands on: the first at
    or after it when it moved forward, the last at or before it when it moved back (an
    arrow key moves one checkpoint), else the nearest. ``sent``: the value the browser sent
    last; a press one step from it, not from ``before``, is a second arrow key pressed
    before the browser showed the first one's checkpoint (it moved from ``sent``): one
    checkpoint on from ``before`` in that direction, not back across it (two quick
    ArrowRights from step 0 once landed on step 0)."""
    s = np.asarray(steps)
    if before is not None and sent is not None and abs(value - before) != 1:
        if value == sent + 1 and (s > before).any():
            return int(s[s > before][0])
        if value == sent - 1 and (s < before).any():
            return int(s[s < before][-1])
    if before is not None and value > before and (s >= value).any():
        return int(s[s >= value][0])
    if before is not None and value < before and (s <= value).any():
        return int(s[s <= value][-1])
    return nearest(s, value)


def _snap(steps: tuple[int, ...]) -> None:
    """on_change of the step slider: onto a checkpoint, in the direction it moved."""
    value = int(st.session_state[STEP_KEY])
    state = st.session_state
    step = next_checkpoint(
        np.asarray(steps), value, state.get(PREV_STEP_KEY), state.get(SENT_STEP_KEY)
    )
    state[SENT_STEP_KEY] = value
    state[STEP_KEY] = step
    state[PREV_STEP_KEY] = step


def step_slider(history: toys.History, where=st) -> int:
    """The training step, in steps (a slider from the first checkpoint to the last, spaced
    by step); it lands on a checkpoint (a value from another run: the nearest checkpoint
    of this one)."""
    steps = history.steps
    current = st.session_state.get(STEP_KEY)
    if not isinstance(current, int | np.integer) or int(current) not in set(steps.tolist()):
        value = float(steps[-1]) if current is None else float(current)
        st.session_state[STEP_KEY] = nearest(steps, value)
    st.session_state[PREV_STEP_KEY] = int(st.session_state[STEP_KEY])
    return int(
        where.slider(
            _("Training step (it lands on the nearest checkpoint)"),
            min_value=int(steps[0]),
            max_value=int(steps[-1]),
            step=1,
            key=STEP_KEY,
            on_change=_snap,
            args=(tuple(int(s) for s in steps),),
            help=_(
                "{n} checkpoints from step {first} to {last}: more of them where the loss falls "
                "fast. The arrow keys move one checkpoint."
            ).format(n=len(steps), first=int(steps[0]), last=int(steps[-1])),
        )
    )


# --------------------------------------------------------------------------- exercises


@st.cache_resource(show_spinner=False)
def _exercise_items(lang: str) -> list[exercises.Exercise]:
    """The exercises in the shown language ``lang`` (their words are in the cache)."""
    return exercises.learned(shipped_jobs("induction"))


def exercise_cards() -> None:
    """The page's exercises (about the shipped induction run), checked on the spot."""
    items = _exercise_items(i18n.current())
    quiz.use_set(("learned",), len(items))
    quiz.cards(items)


# --------------------------------------------------------------------------- training


def trainer(task: str) -> None:
    """Train it yourself: a seed, a number of steps, Train (or why not), then the run."""
    t = toys.get_task(task)
    run = st.session_state.get(RUN_KEY)
    running = run is not None and run.running
    c1, c2, c3 = st.columns([1, 1, 1.2], vertical_alignment="bottom")
    c1.number_input(_("Seed"), 0, SEED_MAX, 1, key=SEED_KEY, help=_("Another seed: other "
                    "weights at step 0 and other batches; does the same head take the same "
                    "job?"))  # fmt: skip
    if STEPS_KEY not in st.session_state:
        st.session_state[STEPS_KEY] = t.steps
    c2.number_input(
        _("Steps"), min_value=1, step=100, key=STEPS_KEY,
        help=_("At most {max} on this page.").format(max=_count(LIVE_MAX_STEPS)),
    )  # fmt: skip
    c3.button(
        _("Train {task}").format(task=task), key="lr_train", on_click=_start, args=(task,),
        type="primary", icon=":material/model_training:", disabled=running,
        help=_("Your run is training: one run per session at a time.") if running else None,
    )  # fmt: skip
    why = st.session_state.get(REFUSED_KEY)
    if why:
        st.error(why, icon=":material/block:")
    st.caption(
        _(
            "The run trains on the server, {max} steps at most, one run per session at a "
            "time; it stops if you leave this page."
        ).format(max=_count(LIVE_MAX_STEPS))
    )
    if run is not None:
        every = POLL if run.running else None
        st.fragment(run_every=every)(live)()


def live(key: str = "lr_live") -> None:
    """The session's run: a progress bar, Cancel, and its charts so far: the loss, the job
    scores and every head at the latest checkpoint (a fragment that polls while it
    trains)."""
    run = st.session_state.get(RUN_KEY)
    if run is None:
        return
    run.seen = time.monotonic()  # the page still looks: keep training
    h = run.history
    done = 0 if h is None else int(h.steps[-1])
    what = _("**{task}**, seed {seed}: step {done} of {steps}").format(
        task=run.task, seed=run.seed, done=_count(done), steps=_count(run.steps)
    )
    if run.running:
        st.progress(done / run.steps, text=_("Training {what}").format(what=what))
        st.button(_("Cancel"), key="lr_cancel", on_click=_cancel, icon=":material/stop:")
    elif run.state == "done":
        st.success(_("Trained {what}. Pick **{yours}** above to scrub through it.").format(
                   what=what, yours=_(YOURS)), icon=":material/check_circle:")  # fmt: skip
    elif run.state == "cancelled":
        st.info(_("Stopped {what}; its checkpoints so far are kept.").format(what=what),
                icon=":material/stop:")  # fmt: skip
    else:
        st.error(_("The run failed: {error}").format(error=run.message), icon=":material/error:")
    if h is not None and len(h.steps) >= 1:
        curves(key, h, run.jobs(), done, total=run.steps)
        t = toys.get_task(run.task)
        if isinstance(t, toys.AlignTask):  # the latest checkpoint's cross-attention
            fig = cross_figure(t, h.checkpoints[-1], done)
        else:  # the latest checkpoint
            result = toys.example_result(t, h.checkpoints[-1])
            fig = viz.learned.heads_figure(
                result.weights, toys.example(t).labels, step=done, heads_per_layer=t.heads
            )
        count = t.layers * t.heads
        board(f"{key}_heads", [(f"{key}_all", fig, link_attn(None, "rows", heads=range(count)))])
    if not run.running and not run.announced:
        run.announced = True
        st.rerun(scope="app")  # the checkpoint view above offers the run now
