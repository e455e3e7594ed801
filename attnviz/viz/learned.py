"""The Learned attention page's figures (pure: arrays in, plotly figures out, no Streamlit).

- :func:`loss_figure`: the training loss of every step, its running mean, the step on
  screen marked and the phase change (the sudden drop) pointed out.
- :func:`heads_figure`: every head of every layer on one sequence, the tokens as labels
  (the board's small multiples; heads numbered 0 .. L·H-1, layer by layer); with
  ``key_labels``, an encoder-decoder's cross-attention: target words as rows, source words
  as columns (T x S, no mask).
- :func:`job_figure`: each head's job score at each checkpoint (previous-token,
  induction, anti-diagonal), the step on screen marked: the moment a head forms.

Heads are numbered across the layers (:func:`head_name`), as :func:`attnviz.toys.
example_result` stacks them, so that a click on head 2 of the small multiples, its line
and its cell panel all say "head 2".
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz import i18n
from attnviz.i18n import N_, _
from attnviz.viz.attention import small_multiples_figure
from attnviz.viz.charts import line_figure
from attnviz.viz.style import AxisTitle, axes_meta, axis_text, plotly_text, token_label

#: The running mean of the loss curve, in steps.
SMOOTH = 10
#: Pixels per row of heads (a layer) in :func:`heads_figure`.
ROW_PX = 340
#: The type of :func:`heads_figure`'s tick labels, colour bar ticks and cell values (px):
#: times a slide's text scale (1.45) they are at least 20 px, read from the back row.
HEADS_TEXT_PX = 14
#: px between a row of panels' y title and its words.
TITLE_GAP_PX = 12
_MARK = "#D55E00"  # the step on screen (Okabe-Ito vermillion)
_PHASE = "#555555"
#: The axis titles of :func:`heads_figure`'s panels: what they count (English nouns).
_QUERY = AxisTitle(N_("query"), N_("query"))
_KEY = AxisTitle(N_("key"), N_("key"))
_TARGET = AxisTitle(N_("target word"), N_("target word"))
_SOURCE = AxisTitle(N_("source word"), N_("source word"))


def head_name(flat: int, heads: int) -> str:
    """Head ``flat`` of the stacked heads as the page names it: "head 2 (layer 1)"."""
    if heads < 1 or flat < 0:
        raise ValueError(f"expected head >= 0 and heads per layer >= 1, got {flat}, {heads}")
    return _("head {head} (layer {layer})").format(head=flat, layer=flat // heads)


def _vline(x: float, color: str, dash: str = "solid") -> dict:
    return {
        "type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x, "y0": 0, "y1": 1,
        "line": {"color": color, "width": 2, "dash": dash},
    }  # fmt: skip


def _step(x: float) -> str:
    return _("step {x}").format(x=i18n.number(f"{x:g}"))


def _step_label(x: float, x_end: float, color: str, y: float = 1.0) -> dict:
    """ "step x" beside the step's line: on its right in the axis' first half, else on its
    left, so that it stays inside the plot (a phone's chart is ~300 px wide)."""
    right = x <= 0.5 * x_end
    return {
        "x": x, "y": y, "xref": "x", "yref": "paper", "showarrow": False,
        "text": f" {_step(x)}" if right else f"{_step(x)} ", "yanchor": "top",
        "xanchor": "left" if right else "right", "font": {"color": color, "size": 12},
        "bgcolor": "rgba(255,255,255,0.85)",
    }  # fmt: skip


def _legend_outside() -> dict:
    """A legend right of the plot, outside it: inside, it covered the curves (the phase
    change on a phone). A chart too narrow for it gets it under the plot (the board's
    fit.js ``legendBelow``)."""
    return {"x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"}


def running_mean(losses: ArrayLike, window: int = SMOOTH) -> np.ndarray:
    """(S,) the mean of each step's loss and the ``window - 1`` before it (fewer at first)."""
    a = np.asarray(losses, dtype=np.float64).ravel()
    if a.size == 0:
        return a
    c = np.cumsum(np.concatenate([[0.0], a]))  # (S + 1,)
    i = np.arange(1, a.size + 1)
    lo = np.maximum(i - window, 0)
    return (c[i] - c[lo]) / (i - lo)


def loss_figure(
    losses: ArrayLike,
    step: int,
    *,
    total: int | None = None,
    phase: int | None = None,
    phase_text: str | None = None,
    height: int = 320,
) -> go.Figure:
    """The training loss (S,) of steps 1..S: each step's (thin, grey) and its running
    mean over :data:`SMOOTH` steps; ``step`` marked by a vertical line; ``phase`` (a step,
    or None) pointed out by an arrow with ``phase_text`` (default: "the loss falls fastest
    here", translated); ``total``: the x axis runs to it (a live run whose curve grows)."""
    y = np.asarray(losses, dtype=np.float64).ravel()
    if y.size and not np.isfinite(y).all():
        raise ValueError(f"losses must be finite, got {int((~np.isfinite(y)).sum())} NaN or inf")
    x = np.arange(1, y.size + 1)
    mean = running_mean(y)
    mean_name = _("mean of the last {n} steps").format(n=SMOOTH)
    fig = line_figure(
        x, {_("loss of the step's batch"): y, mean_name: mean},
        title=_("Training loss, step {step} marked").format(step=step),
        x_title=_("training step"), y_title=_("loss (cross-entropy, nats)"), height=height,
    )  # fmt: skip
    raw, smooth = fig.data
    raw.update(mode="lines", line={"color": "#B0B0B0", "width": 1, "dash": "solid"})
    smooth.update(mode="lines", line={"color": "#0072B2", "width": 2.5, "dash": "solid"})
    x_end = max(total or 0, y.size, step, 1)
    shapes, notes = [_vline(step, _MARK)], [_step_label(step, x_end, _MARK)]
    if phase is not None and 1 <= phase <= y.size:
        # short lines: the note stays inside a phone's chart, to the right of the arrow
        phase_text = phase_text or _("the loss falls fastest here")
        text = "<br>".join(plotly_text(line) for line in textwrap.wrap(phase_text, 22))
        notes.append(
            {
                "x": phase, "y": float(mean[phase - 1]), "xref": "x", "yref": "y",
                "text": f"{text}<br>({_step(phase)})", "showarrow": True,
                "arrowhead": 2, "ax": 30, "ay": -45, "xanchor": "left",
                "font": {"color": _PHASE, "size": 12},
                "bgcolor": "rgba(255,255,255,0.85)",
            }
        )  # fmt: skip
    top = float(y.max()) if y.size else 1.0
    fig.update_layout(
        shapes=shapes, annotations=notes,
        xaxis={"range": [0, x_end]},
        yaxis={"range": [0, max(top * 1.05, 0.1)]},
        legend=_legend_outside(),
    )  # fmt: skip
    return fig


def heads_figure(
    weights: ArrayLike,
    labels: Sequence[str],
    *,
    step: int,
    heads_per_layer: int,
    layout: str = "rows",
    key_labels: Sequence[str] | None = None,
    cols: int | None = None,
    shared_x: bool = False,
) -> go.Figure:
    """Every head's weights on one sequence: ``weights`` (L·H, T, T), layer by layer (a
    row of panels per layer; ``cols``: that many panels a row instead), ``labels`` (T,)
    the tokens, on every axis; ``shared_x``: a slide's board shows the x labels under each
    column's last panel only (``layout.meta.grid.shared_x``, fit.js fitGrid). Causal: the cells
    above the diagonal are masked (grey). With ``key_labels`` (S,): an encoder-decoder's
    cross-attention (L·H, T, S), ``labels`` the target words (rows), ``key_labels`` the
    source words (columns), nothing masked."""
    w = np.asarray(weights, dtype=np.float64)
    cross = key_labels is not None
    m = len(key_labels) if cross else (w.shape[1] if w.ndim == 3 else 0)
    if w.ndim != 3 or w.shape[2] != m or w.shape[0] % max(heads_per_layer, 1):
        want = "(L·H, T, S) with S = len(key_labels)" if cross else "(L·H, T, T)"
        raise ValueError(
            f"weights must be {want} with L·H a multiple of heads_per_layer "
            f"{heads_per_layer}, got shape {w.shape}"
        )
    n = w.shape[1]
    if len(labels) != n:
        raise ValueError(f"labels must be {n} tokens (one per row of weights), got {len(labels)}")
    if cols is not None and cols < 1:
        raise ValueError(f"cols must be at least 1 panel a row, got {cols}")
    cols = min(cols or heads_per_layer, w.shape[0])
    fig = small_multiples_figure(
        w, labels=labels, layout=layout, max_cols=cols, height_per_row=ROW_PX,
        mask=None if cross else np.tril(np.ones((n, n), dtype=bool)),
    )  # fmt: skip
    axes = _head_axes(w.shape[0], cols, labels, key_labels, layout)
    nouns = {k: v.pop("noun") for k, v in axes.items()}  # not a plotly property
    # edited as plain dicts: plotly's validated updates cost ~40 ms on this figure
    spec = fig.to_plotly_json()
    lay = spec["layout"]
    for i, note in enumerate(lay["annotations"]):
        note["text"] = plotly_text(head_name(i, heads_per_layer))
    for name, extra in axes.items():
        lay[name] = {**lay.get(name, {}), **extra}
    bar = lay["coloraxis"]["colorbar"]
    bar["tickfont"] = {**bar.get("tickfont", {}), "size": HEADS_TEXT_PX}
    for trace in spec["data"]:  # the values written in the cells (the board keeps those that fit)
        if "texttemplate" in trace:
            trace["textfont"] = {**trace.get("textfont", {}), "size": HEADS_TEXT_PX}
    rows = layout == "rows"
    if cross:
        text = (
            _("Every cross-attention head at step {step} · rows = target words")
            if rows
            else _("Every cross-attention head at step {step} · columns = target words")
        )
    else:
        text = (
            _("Every head at step {step} · rows = queries · grey = masked")
            if rows
            else _("Every head at step {step} · columns = queries · grey = masked")
        )
    lay["title"] = {**lay["title"], "text": text.format(step=step)}
    lay["margin"] = {**lay["margin"], "l": 60, "b": 50}
    # what each titled axis counts, for the board's tables and keyboard (the titles are nouns)
    lay["meta"] = {
        **lay.get("meta", {}),
        "axes": axes_meta(**{k: n for k, n in nouns.items() if axes[k]["title"]["text"]}),
    }
    if shared_x:
        lay["meta"]["grid"] = {**lay["meta"]["grid"], "shared_x": True}
    return go.Figure(spec, _validate=False)


def _head_axes(count, per_row, labels, key_labels, layout) -> dict[str, dict]:
    """Each panel's axes of :func:`heads_figure` (``per_row`` panels a row): the tokens as
    ticks, titled by what they count (query and key, or target and source word); y ticks
    and title on a row's first panel."""

    def ticks(words: Sequence[str], angle: int = 0) -> dict:
        return {
            "tickmode": "array", "tickvals": list(range(len(words))),
            "ticktext": [token_label(t) for t in words], "tickfont": {"size": HEADS_TEXT_PX},
            "tickangle": angle,
        }  # fmt: skip

    rows, cols = (_QUERY, _KEY) if key_labels is None else (_TARGET, _SOURCE)
    # the rows' words read level; the source's words under the columns slant to fit
    row_ticks = ticks(labels)
    col_ticks = ticks(labels) if key_labels is None else ticks(key_labels, -45)
    if layout != "rows":
        rows, cols, row_ticks, col_ticks = cols, rows, col_ticks, row_ticks
    axes = {}
    for i in range(count):
        sfx = "" if i == 0 else str(i + 1)
        axes[f"xaxis{sfx}"] = {**col_ticks, "title": {"text": axis_text(cols)}, "noun": cols}
        first = i % per_row == 0  # a row's first panel: the row words and title
        y_ticks = row_ticks if first else {**row_ticks, "showticklabels": False}
        # the title clear of the words (automargin: plotly measures them; a standoff, else
        # "target word" touched "oiseau"), and only where the words are: another panel's
        # title ran into the panel to its left
        title = {"text": axis_text(rows), "standoff": TITLE_GAP_PX} if first else {"text": ""}
        axes[f"yaxis{sfx}"] = {**y_ticks, "title": title, "automargin": first, "noun": rows}
    return axes


def job_figure(
    steps: ArrayLike,
    scores: ArrayLike,
    labels: Sequence[str],
    step: int,
    *,
    total: int | None = None,
    height: int = 320,
) -> go.Figure:
    """Each head's job score at each checkpoint: ``steps`` (C,), ``scores`` (C, L, H) in
    0..1, ``labels`` (L,) the score each layer's heads are measured by; ``step`` marked."""
    s = np.asarray(scores, dtype=np.float64)
    xs = np.asarray(steps, dtype=np.float64).ravel()
    if s.ndim != 3 or s.shape[0] != xs.size or s.shape[1] != len(labels):
        raise ValueError(
            f"scores must be (C, L, H) with C = {xs.size} steps and L = {len(labels)} labels, "
            f"got shape {s.shape}"
        )
    h = s.shape[2]
    series = {
        f"{head_name(layer * h + i, h)}: {_(labels[layer])}": s[:, layer, i]
        for layer in range(s.shape[1])
        for i in range(h)
    }
    fig = line_figure(
        xs, series, title=_("Each head's job score over training: the moment a head forms"),
        x_title=_("training step"), y_title=_("score (0 … 1)"), height=height,
    )  # fmt: skip
    x_end = max(total or 0, float(xs.max()) if xs.size else 1, step, 1)
    fig.update_layout(
        shapes=[_vline(step, _MARK)],
        annotations=[_step_label(step, x_end, _MARK)],
        xaxis={"range": [0, x_end]},
        yaxis={"range": [0, 1.02]},
        legend=_legend_outside(),
    )  # fmt: skip
    return fig
