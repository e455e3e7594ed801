"""Cross-attention's figures: a target's queries over a source's keys (pure plotly builders).

Target tokens are the rows (they ask: Q comes from the target), source tokens the columns
(they answer: K and V come from the source), each axis labelled with its own tokens. These
builders take plain arrays, so that the Cross-attention page and a real encoder-decoder's
page (T5, BART, Marian: ``cross_attentions`` (L, H, T, S)) draw the same charts:

- :func:`cross_attention_figure`: one head's scores or weights (T, S);
- :func:`cross_token_figure`: a per-token matrix of either side (Q and the output from the
  target, K and V from the source);
- :func:`cross_grid_figure`: every head of every layer, (L, H, T, S), as small multiples.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz.i18n import N_, _
from attnviz.viz.attention import small_multiples_figure
from attnviz.viz.heatmaps import attention_figure, token_matrix_figure
from attnviz.viz.style import AxisTitle

__all__ = [
    "SOURCE_KEYS",
    "TARGET_QUERIES",
    "cross_attention_figure",
    "cross_grid_figure",
    "cross_token_figure",
]

#: The axes of a (target, source) matrix: the nouns stay "query" and "key" (what the
#: board's tables, keys and cell panel read), the titles say which sequence each is.
TARGET_QUERIES = AxisTitle(N_("target token i (query)"), N_("query"), N_("rows = target"))
SOURCE_KEYS = AxisTitle(N_("source token j (key)"), N_("key"))
#: Most panels of :func:`cross_grid_figure` (layers × heads); more: pick the layer.
MAX_GRID_PANELS = 48


def _square_cells(fig: go.Figure) -> go.Figure:
    """Ask the board for square cells on a slide, whatever the matrix's shape (fit.js)."""
    meta = dict(fig.layout.meta or {})
    fig.layout.meta = {**meta, "cells": "square"}
    return fig


def cross_attention_figure(
    matrix: ArrayLike,
    *,
    what: Literal["scores", "weights"],
    target_labels: Sequence[str] | None = None,
    source_labels: Sequence[str] | None = None,
    mask: ArrayLike | None = None,
    scale: float = 1.0,
    d_k: int = 1,
    head: int | None = None,
    height: int = 380,
    zmax: float | None = None,
) -> go.Figure:
    """One head's cross-attention scores or weights, ``matrix`` (T target tokens, S source
    tokens): target tokens as rows, source tokens as columns, each with its labels.
    ``mask`` (T, S) bool, True = may attend (e.g. ``engine.key_padding_mask``)."""
    a = np.asarray(matrix)
    if a.ndim != 2:
        raise ValueError(f"cross_attention_figure needs (T, S), got shape {a.shape}")
    for name, labels, n in (
        ("target", target_labels, a.shape[0]),
        ("source", source_labels, a.shape[1]),
    ):
        if labels is not None and len(labels) != n:
            raise ValueError(f"{len(labels)} {name} labels for a matrix of shape {a.shape}")
    of = "" if head is None else " (" + _("head {i}").format(i=head) + ")"
    title = (
        _("Scores S = Q<sub>tgt</sub>K<sub>src</sub>ᵀ") + of
        if what == "scores"
        else _("Weights A = softmax over the source") + of
    )
    fig = attention_figure(
        a,
        what=what,
        labels=target_labels,
        key_labels=source_labels,
        mask=mask,
        scale=scale,
        d_k=d_k,
        title=title,
        height=height,
        zmax=zmax,
        axes=(TARGET_QUERIES, SOURCE_KEYS),
    )
    return _square_cells(fig)


def cross_token_figure(
    matrix: ArrayLike,
    *,
    name: str,
    side: Literal["target", "source"],
    labels: Sequence[str] | None = None,
    height: int = 320,
    zmax: float | None = None,
) -> go.Figure:
    """A per-token matrix (tokens, features) of one side: Q or the output (target), K or V
    (source); its title says which sequence it comes from."""
    a = np.asarray(matrix)
    if a.ndim != 2:
        raise ValueError(f"cross_token_figure needs (tokens, features), got shape {a.shape}")
    n, d = a.shape
    fig = token_matrix_figure(
        a,
        name=name,
        labels=labels,
        title=(
            _("{name} ({size}), from the target")
            if side == "target"
            else _("{name} ({size}), from the source")
        ).format(name=name, size=f"{n}×{d}"),
        height=height,
        zmax=zmax,
    )
    # the rows are the side's tokens (the noun stays "token": what the board links by)
    rows = AxisTitle(
        _("target token (row)") if side == "target" else _("source token (row)"), "token"
    )
    fig.layout.yaxis.title.text = rows.forms()[0]
    fig.layout.meta = {**dict(fig.layout.meta), "axes": {**dict(fig.layout.meta)["axes"],
                                                         "yaxis": rows.meta()}}  # fmt: skip
    return fig


def cross_grid_figure(
    cross_attentions: ArrayLike,
    *,
    target_labels: Sequence[str] | None = None,
    source_labels: Sequence[str] | None = None,
    layers: Sequence[int] | None = None,
) -> go.Figure:
    """Every head of every layer: ``cross_attentions`` (L, H, T, S) (a real model's, e.g.
    ``output.cross_attentions`` of a Hugging Face encoder-decoder stacked) as a grid, one
    row per layer, one column per head, titled "layer l, head h". ``layers``: which layers
    to draw (default all). Raises ``ValueError`` above :data:`MAX_GRID_PANELS` panels or
    :data:`attnviz.viz.style.MAX_SMALL_MULTIPLES_N` tokens (pick a layer then)."""
    w = np.asarray(cross_attentions, dtype=np.float32)
    if w.ndim != 4:
        raise ValueError(f"cross_attentions must be (L, H, T, S), got shape {w.shape}")
    picked = list(range(w.shape[0])) if layers is None else [int(v) for v in layers]
    __, h, t, s = w.shape
    if len(picked) * h > MAX_GRID_PANELS:
        raise ValueError(
            f"{len(picked)} layers × {h} heads = {len(picked) * h} panels, more than "
            f"{MAX_GRID_PANELS}: pass fewer layers"
        )
    flat = w[picked].reshape(len(picked) * h, t, s)
    return small_multiples_figure(
        flat,
        labels=target_labels,
        key_labels=source_labels,
        max_cols=h,
        title=_("Cross-attention weights: rows = target tokens, columns = source tokens"),
        panel_titles=[
            _("layer {layer}, head {head}").format(layer=layer, head=hh)
            for layer in picked
            for hh in range(h)
        ],
    )
