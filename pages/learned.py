"""Learned attention: heads that formed while a tiny transformer trained (attnviz.toys)."""

import contextlib

import streamlit as st

from attnviz import toys, ui
from attnviz.i18n import _
from attnviz.ui import learned

ui.page_guard()
ui.intro(
    _("Learned attention"),
    _(
        "Every other page shows attention with random weights, or read out of a model someone "
        "else trained. Here the weights were **learned**: a tiny transformer (attention only, "
        "no MLPs) was trained in NumPy to predict the next token, and its checkpoints show "
        "its heads finding their jobs. Pick a task, move the **training step**, and watch the "
        "heads form where the loss falls. The sidebar's random-weights controls do not apply "
        "here."
    ),
)
for note in learned.read_link():
    st.warning(note, icon=":material/warning:")
# the presenter view: every head at a training step, then the loss and the heads' job
# scores (training and the exercises are the normal page's); on both slides the task, what
# it is about (a popover over the slide) and the step slider beside the charts (issue 47:
# under them the heads had a third of the screen's height), drawn in the fragment
slides = ui.steps([_("Every head at a training step"), _("The loss and each head's job score")])
slide = slides.presenting
task = None if slide else learned.task_picker()


def about_task(task: str, where) -> None:
    """What the task is about, in ``where``: the page's text or a slide's popover."""
    if task == "induction":
        where.markdown(
            _(
                "**How an induction head works.** The sequence is a random run of tokens "
                "repeated twice. In the second copy the next token can be predicted: it is the "
                "token that came *after* this token in the first copy. Two heads do it "
                "together. A **previous-token head** attends to the token just before each "
                'position and writes "the token before me" into the residual stream. An '
                "**induction head** uses it: its key at each position now says which token "
                "came before, so its query (the current token) matches the key of the position "
                "*after* the earlier copy of the current token, attends there and copies that "
                "token into the prediction. Which of the model's two layers holds which head? "
                "Predict it (the first exercise below), then move the training step."
            )
        )
    elif task == "align":
        where.markdown(
            _(
                "**Learned alignment.** A tiny encoder-decoder translates English colour-noun "
                "pairs into French (*red cat* → *chat rouge*): French puts each colour after "
                "its noun. The encoder reads the English; the decoder writes the French one "
                "word at a time and, through its **cross-attention**, looks back at the "
                "English. Nobody tells it where to look: it learns only to predict the next "
                "French word. Move the training step and watch each row's weight go from "
                "spread over the source to the word it translates; the second chart below "
                "counts how often each head's largest weight lands there (its alignment "
                "accuracy)."
            )
        )
    else:
        where.markdown(
            f"**{task}**: "  # the task's name (its id in the link), then its title in words
            + _(
                "{title}. One layer is enough: each query only needs a fixed offset from its "
                "own position, which the position embeddings give. Switch to **induction** for "
                "the two-layer circuit."
            ).format(title=_(toys.TASKS[task].title))
        )
    if slides.presenting:  # under the chart, where they are in the normal view, they were cut
        for note in learned.heads_notes(task):
            where.caption(note, unsafe_allow_html=True)  # the app's own words (pointing)


if not slide:
    about_task(task, st)


@st.fragment
def checkpoint_view(task: str | None, slides: ui.Steps) -> None:
    """The run, the step slider and the charts of that checkpoint: a step move reruns
    only this part. On a slide (``task`` None) the task, its popover and the slider
    beside the slide's charts, all in this part."""
    side, charts, aside = st, contextlib.nullcontext(), None
    if slides.presenting:
        if slides.index == 0:  # the heads, height-bound, beside the task and the slider
            side, charts = st.columns([1, 3], gap="large")
            aside = at_task = at_about = side  # a clicked cell worked out there too
        else:  # the curves, wide (their legends right of them), under one row of controls
            at_task, at_about, side = st.columns([1.6, 0.9, 2.5], vertical_alignment="bottom")
        with at_task:
            task = learned.task_picker()
        about_task(task, at_about.popover(_("About this task"), width="stretch"))
    history, jobs, source = learned.shown_run(task, side)
    # the slider right above the heads (beside them on a slide), both on the screen
    # together: drag it and watch the heads form; the loss and the job scores below, the
    # same step marked
    step = learned.step_slider(history, side)
    learned.write_link(task, step)
    params = history.checkpoints[int(list(history.steps).index(step))]
    if slides.show(0):
        with charts:
            learned.heads("lr_heads", task, params, step, (task, source, step), aside=aside)
    if slides.rest:
        st.header(_("The loss and each head's job score, step {step} marked").format(step=step))
        learned.curves("lr_curves", history, jobs, step)
        learned.numbers(history, jobs)
    elif slides.show(1):
        with charts:
            learned.curves("lr_curves", history, jobs, step, slide=True)


def trainer_and_exercises(task: str) -> None:
    """Train it yourself and the exercises (the normal page only)."""
    st.header(_("Train it yourself"))
    st.markdown(
        _(
            "Train the **{task}** model from scratch on the server, with your own seed, and watch "
            "the loss and the heads' scores as the checkpoints arrive. Then pick your run above "
            "and scrub through it."
        ).format(task=task)
    )
    learned.trainer(task)

    st.header(_("Exercises"))
    st.caption(_("About the shipped induction run (task **induction** above)."))
    learned.exercise_cards()


checkpoint_view(task, slides)

if slides.rest:
    trainer_and_exercises(task)
