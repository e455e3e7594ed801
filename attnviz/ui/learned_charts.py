"""The Learned attention page's charts of one checkpoint (:mod:`attnviz.ui.learned`
re-exports them): the loss curve and every head's job score (:func:`curves`, their
numbers as a table: :func:`numbers`), every head's weights with the tokens as labels
(:func:`heads`: hover-linked, the cell panel, Ask the room and a revealed answer's head),
and an encoder-decoder's cross-attention heads (:func:`cross_heads`)."""

from __future__ import annotations

import contextlib

import numpy as np
import pandas as pd
import streamlit as st

from attnviz import toys, viz
from attnviz.i18n import N_, _
from attnviz.ui import asks, predict
from attnviz.ui.board import board, link_attn
from attnviz.ui.cell import HINT_WEIGHTS, cell_data, cell_panel
from attnviz.ui.page import plot
from attnviz.ui.present import presenting
from attnviz.ui.text import pointing

#: What the heads' board keeps of the screen for the step slider above it and the strip of
#: buttons under it: the slider and the heads are on the screen together (issue 35). On a
#: slide the board fills the screen below its own top instead (the page scrolled to the top).
HEADS_RESERVE_PX = 230


def heads_layout(count: int, heads_per_layer: int) -> tuple[int | None, int]:
    """(panels a row, the board's ``fit_screen``) of the heads' chart: a layer a row; on a
    slide (the presenter view) the board fills the screen below its top, beside the task
    and the step slider (issue 47: every head in one row under them was width-bound, a
    third of the screen's height), the rows sharing their x labels; else fitted below a
    slider at the screen's top."""
    if not presenting():
        return None, HEADS_RESERVE_PX
    return min(heads_per_layer, count), 0


#: What the phase change is called on the loss curve, per task.
PHASE_TEXT = {
    "previous": N_("the loss falls fastest: the previous-token head forms"),
    "reverse": N_("the loss falls fastest: the anti-diagonal forms"),
    "induction": N_("phase change: the induction heads form"),
    "align": N_("the loss falls fastest: the alignment forms"),
}
#: What to look for in each task's heads.
LOOK_FOR = {
    "previous": N_(
        "Each query should put its weight on the key just before it: a bright line "
        "one cell left of the diagonal."
    ),
    "reverse": N_(
        "After the separator `|`, query t should look at key 2n−1−t, the token it "
        "must copy next: a bright anti-diagonal in the lower left quarter."
    ),
    "induction": N_(
        "A previous-token head: a line one left of the diagonal. An induction head: "
        "in the second copy, each query looks at the token *after* the earlier copy of itself, "
        "a line parallel to the diagonal, T/2 − 1 cells to its left."
    ),
    "align": N_(
        "Each row is a French word the decoder writes, each column an English word of "
        "the source. A head that found the alignment puts each row's weight on the word it "
        "translates: the noun one column to the right of the diagonal, then its colour one "
        "column to the left, pairs of crossing cells along the diagonal."
    ),
}


# --------------------------------------------------------------------------- charts


def curves(
    key: str, history, jobs, step: int, *, total: int | None = None, slide: bool = False
) -> None:
    """The loss curve and every head's job score, one a row (each legend right of its
    curves), ``step`` marked; ``slide``: side by side, as tall as the slide leaves them."""
    task = history.task
    phase = toys.phase_change(history.losses) if history.done else None
    charts = [
        (
            f"{key}_loss",
            viz.learned.loss_figure(
                history.losses, step, total=total, phase=phase, phase_text=_(PHASE_TEXT[task])
            ),
            None,
        )
    ]
    if jobs is not None:
        charts.append(
            (
                f"{key}_jobs",
                viz.learned.job_figure(jobs.steps, jobs.scores, jobs.labels, step, total=total),
                None,
            )
        )
    if slide:
        for __, fig, __ in charts:
            fig.layout.meta = {**(fig.layout.meta or {}), "fill": "height"}
    board(key, charts, columns=[1] * len(charts) if slide else [1])


def heads_notes(task: str) -> list[str]:
    """How to read the heads' chart of ``task`` (Markdown, the app's own words, with HTML):
    under the chart, or on a slide in the page's "About this task" popover, which opens
    over the slide (under the chart they were cut at the screen's bottom edge)."""
    t = toys.get_task(task)
    count = t.layers * t.heads
    names = ", ".join(viz.learned.head_name(i, t.heads) for i in range(count))
    if isinstance(t, toys.AlignTask):
        return [
            _(
                "Cross-attention: the decoder's queries (the French it writes, teacher-forced) "
                "against the encoder's keys (the English source). Heads are numbered from 0: "
                "{names}."
            ).format(names=names)
            + " "
            + _(LOOK_FOR[task])
        ]
    return [
        _("{point} to see how its weight was computed from this checkpoint's Q and K.").format(
            point=pointing(
                _(
                    "Hover a cell to outline the same query and key in every head; click it "
                    "(or Tab to the chart, move with the arrows, press Enter)"
                ),
                _("Tap a cell to outline it in every head and"),
            )
        ),
        _("Heads are numbered across the layers, from 0: {names}.").format(names=names)
        + " "
        + _(LOOK_FOR[task]),
    ]


def heads(key: str, task: str, params: toys.ToyParams, step: int, view: object, aside=None) -> None:
    """Every head's weights on the example at one checkpoint, linked (hover, tables,
    keyboard), a clicked cell worked out below (in ``aside``, a slide's column beside the
    chart, when given); in a teacher's presenter view, Ask the room (``view``: what makes
    the chart) and a revealed answer's head outlined."""
    t = toys.get_task(task)
    if isinstance(t, toys.AlignTask):
        cross_heads(key, t, params, step)
        return
    result = toys.example_result(task, params)  # L·H heads
    labels = toys.example(task).labels
    count = result.num_heads
    cols, fit = heads_layout(count, t.heads)
    board(
        key,
        [
            (
                f"{key}_all",
                viz.learned.heads_figure(
                    result.weights,
                    labels,
                    step=step,
                    heads_per_layer=t.heads,
                    cols=cols,
                    shared_x=presenting(),
                ),
                link_attn(
                    None,
                    "rows",
                    heads=range(count),
                    arithmetic=cell_data(result, range(count), labels),
                ),
            )
        ],
        fit_screen=fit,
    )
    if not presenting():  # a slide has them in its "About this task" (heads_notes)
        for note in heads_notes(task):
            st.caption(note, unsafe_allow_html=True)  # the app's own words (pointing)
    with aside if aside is not None else contextlib.nullcontext():
        cell_panel(result, labels, key, hint=HINT_WEIGHTS)
    ids = toys.example(task).ids if "induction" in t.jobs else None
    asks.learned(view, result.weights, step, ids)
    q = predict.outline("learned", view)
    if q is not None and 0 <= q.detail.get("head", -1) < count:
        h = q.detail["head"]
        fig = viz.heatmaps.attention_figure(
            result.weights[h], what="weights", labels=labels, mask=result.mask,
            title=_("{head} at step {step}: weights").format(
                head=viz.learned.head_name(h, t.heads), step=step
            ), height=420,
        )  # fmt: skip
        plot(predict.outlined(fig, q, h, "rows", result.n_tokens), key=f"{key}_answer")


def cross_figure(
    task: toys.AlignTask, params: toys.EncDecParams, step: int, cols: int | None = None
):
    """Every cross-attention head on the example: target words as rows, source words as
    columns, (L·H, T, S); ``cols`` panels a row (default: a layer a row)."""
    ex = toys.example(task)
    w = toys.example_cross(task, params)  # (L, H, T, S)
    return viz.learned.heads_figure(
        w.reshape(-1, *w.shape[2:]), ex.target_labels, step=step, heads_per_layer=task.heads,
        key_labels=ex.src_labels, cols=cols,
    )  # fmt: skip


def cross_heads(key: str, task: toys.AlignTask, params: toys.EncDecParams, step: int) -> None:
    """An encoder-decoder's cross-attention heads on the example, linked (hover, tables,
    keyboard); no cell panel (its arithmetic is the engine's square self-attention's)."""
    count = task.layers * task.heads
    cols, fit = heads_layout(count, task.heads)
    fig = cross_figure(task, params, step, cols)
    board(
        key, [(f"{key}_all", fig, link_attn(None, "rows", heads=range(count)))],
        fit_screen=fit,
    )  # fmt: skip
    if not presenting():  # a slide has them in its "About this task" (heads_notes)
        for note in heads_notes(task.name):
            st.caption(note)


def numbers(history: toys.History, jobs: toys.JobScores | None) -> None:
    """The curves' numbers at each checkpoint, as a table."""
    with st.expander(_("The numbers of these curves, as a table")):
        means = viz.learned.running_mean(history.losses)
        data = {_("step"): history.steps}
        data[_("loss (mean of 10 steps)")] = [
            float(means[s - 1]) if s >= 1 else float("nan") for s in history.steps
        ]
        if jobs is not None:
            h = jobs.scores.shape[2]
            for layer, label in enumerate(jobs.labels):
                for i in range(h):
                    data[f"{viz.learned.head_name(layer * h + i, h)}: {label}"] = jobs.scores[
                        :, layer, i
                    ]
        c = min(len(v) for v in data.values())
        st.dataframe(
            pd.DataFrame({k: np.asarray(v)[:c] for k, v in data.items()}),
            hide_index=True,
            width="stretch",
        )
