"""Cross-attention's charts on a page, from plain arrays: what the Cross-attention page draws
and what a real encoder-decoder's page (T5, BART, Marian) calls for one layer of its
``cross_attentions`` (L, H, T, S)::

    from attnviz.ui import cross_view
    cross_view.attention_board("mt_top", weights[layer], head, target_labels=tgt,
                               source_labels=src)          # weights (H, T, S)
    cross_view.grid_board("mt_grid", weights, target_labels=tgt, source_labels=src)

Target tokens are the rows (they ask), source tokens the columns (they answer), each
labelled with its own tokens; the board links hover and click across the charts, reads
each chart as a table and cell by cell with the arrow keys, and (with ``result``) works a
clicked cell out: the target's query row · the source's key row, scaled, softmax over
the source.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import streamlit as st

from attnviz import engine, viz
from attnviz.i18n import N_, _
from attnviz.ui.board import Overlay, board, link_attn, link_tokens
from attnviz.ui.cell import cell_data, cell_panel
from attnviz.ui.page import weights_scale
from attnviz.ui.present import presenting
from attnviz.ui.text import pointing

_LAYOUT = "rows"  # target tokens as rows, always (a translation reads along its rows)


def attention_charts(
    key: str,
    weights: np.ndarray,
    head: int,
    *,
    target_labels: Sequence[str],
    source_labels: Sequence[str],
    scores: np.ndarray | None = None,
    outputs: np.ndarray | None = None,
    mask: np.ndarray | None = None,
    scale: float = 1.0,
    result: engine.AttentionResult | None = None,
    weights_title: str | None = None,
) -> list:
    """The board's charts: scores (if given) | weights | output (if given) of ``head``.
    ``weights`` (H, T, S), ``scores`` (H, T, S) scaled before the mask, ``outputs`` (H, T,
    d_v); ``result`` (the engine's, when there is one) lets the browser work a clicked cell
    out; ``weights_title`` replaces the weights chart's title (a real model's page names
    its layer and head there, counted as its sliders count)."""
    tl, sl = list(target_labels), list(source_labels)
    d_k = 1 if result is None else result.queries.shape[-1]
    arithmetic = None if result is None else cell_data(result, head, tl, key_labels=sl)
    out: list = []
    if scores is not None:
        masked = np.asarray(scores[head], dtype=np.float64)
        if mask is not None:
            masked = np.where(mask, masked, -np.inf)
        fig = viz.cross.cross_attention_figure(
            masked, what="scores", target_labels=tl, source_labels=sl, mask=mask,
            scale=scale, d_k=d_k, head=head,
        )  # fmt: skip
        out.append((f"{key}_scores", fig, link_attn(head, _LAYOUT, arithmetic=arithmetic)))
    fig = viz.cross.cross_attention_figure(
        weights[head], what="weights", target_labels=tl, source_labels=sl, mask=mask, head=head
    )
    if weights_title is not None:
        fig.layout.title.text = weights_title
    link = link_attn(head, _LAYOUT, weights=True, arithmetic=arithmetic)
    out.append((f"{key}_weights", fig, link))
    if outputs is not None:
        fig = viz.cross.cross_token_figure(
            outputs[head],
            name=_("out (head {head}) = A V").format(head=head),
            side="target",
            labels=tl,
            height=380,
        )
        out.append((f"{key}_out", fig, link_tokens(head, _LAYOUT, "query")))
    return out


def attention_board(
    key: str, weights: np.ndarray, head: int = 0, overlay: Overlay | None = None, **kwargs: Any
) -> Any:
    """Scores | weights | output of one head in one board (see :func:`attention_charts`
    for the arguments), its caption and, with ``result``, the cell panel under it;
    ``overlay``: the weights chart's (:class:`~attnviz.ui.board.Overlay`, a revealed
    answer). Returns the board's last click."""
    charts = attention_charts(key, weights, head, **kwargs)
    # on a slide two a row (scores | weights, then the output), each filling the screen
    columns = [1, 1] if presenting() and len(charts) > 2 else None
    overlays = {f"{key}_weights": overlay} if overlay is not None else None
    picked = board(key, charts, columns=columns, overlays=overlays)
    st.caption(
        _(
            "Rows: the target's tokens (each asks with its query); columns: the source's "
            "tokens (each answers with its key). Scores and outputs: blue < 0 < red (white = "
            "0). Weights: {scale}; each row sums to 1 over the source. {point} to follow its "
            "target token in Q and its source token in K and V."
        ).format(scale=weights_scale(), point=pointing(_("Hover a cell"), _("Tap a cell"))),
        unsafe_allow_html=True,  # the app's own words (ui.pointing)
    )
    result = kwargs.get("result")
    if result is not None:
        cell_panel(
            result, tuple(kwargs["target_labels"]), key, head,
            key_labels=tuple(kwargs["source_labels"]),
            hint=N_("Click a cell of the scores or the weights to see how it was computed: "
            "the target's query row · the source's key row, scaled, softmax over the source."),
        )  # fmt: skip
    return picked


def projections_board(
    key: str,
    result: engine.AttentionResult,
    head: int,
    *,
    target_labels: Sequence[str],
    source_labels: Sequence[str],
) -> Any:
    """Q of the target, K and V of the source (head ``head``), linked to the attention
    charts: hovering cell (i, j) there outlines row i of Q and row j of K and V."""
    tl, sl = list(target_labels), list(source_labels)
    f = viz.cross.cross_token_figure
    q_name, k_name, v_name = (
        _("Q (head {head})").format(head=head),
        _("K (head {head})").format(head=head),
        _("V (head {head})").format(head=head),
    )
    return board(
        key,
        [
            (f"{key}_q", f(result.queries[head], name=q_name, side="target", labels=tl),
             link_tokens(head, _LAYOUT, "query")),
            (f"{key}_k", f(result.keys[head], name=k_name, side="source", labels=sl),
             link_tokens(head, _LAYOUT, "key")),
            (f"{key}_v", f(result.values[head], name=v_name, side="source", labels=sl),
             link_tokens(head, _LAYOUT, "key")),
        ],
    )  # fmt: skip


def grid_board(
    key: str,
    weights: np.ndarray,
    *,
    target_labels: Sequence[str],
    source_labels: Sequence[str],
    layers: Sequence[int] | None = None,
    first: int = 0,
) -> Any:
    """Every head at once: ``weights`` (H, T, S) of one layer, or (L, H, T, S) of a model's
    layers (a layer × head grid), as small multiples sharing one colour bar. A model with
    more panels than :data:`attnviz.viz.cross.MAX_GRID_PANELS` passes fewer ``layers``.
    ``first``: the number the panels' titles give the first layer and head (1 where the
    page's sliders count from 1: a real model's section)."""
    w = np.asarray(weights)
    grid = w if w.ndim == 4 else w[None]
    if layers is not None:
        grid = grid[list(layers)]
    fig = viz.cross.cross_grid_figure(
        grid, target_labels=list(target_labels), source_labels=list(source_labels)
    )
    if layers is not None or first:  # the panels' titles name the model's own layers
        h, names = grid.shape[1], list(layers if layers is not None else range(grid.shape[0]))
        for n, a in enumerate(fig.layout.annotations):
            a.text = _("layer {layer}, head {head}").format(
                layer=names[n // h] + first, head=n % h + first
            )
    if w.ndim == 3:  # one layer: "head h" is enough
        fig.layout.title.text = _("Every head's weights — rows = target, columns = source")
        for a, h in zip(fig.layout.annotations, range(w.shape[0]), strict=False):
            a.text = _("head {h}").format(h=h)
    heads = range(grid.shape[0] * grid.shape[1])
    return board(key, [(f"{key}_grid", fig, link_attn(None, _LAYOUT, heads=heads))])


def slide_board(
    key: str, which: str, weights: np.ndarray, head: int = 0,
    overlay: Overlay | None = None, **kwargs: Any,
) -> Any:  # fmt: skip
    """One chart of :func:`attention_board` alone, for a slide (the presenter view fills
    the screen with it): ``which`` is ``"scores"``, ``"weights"`` or ``"out"`` (the
    arguments: :func:`attention_charts`'); the words go beside it (:func:`slide_words`).
    Returns the board's last click."""
    charts = [c for c in attention_charts(key, weights, head, **kwargs) if c[0] == f"{key}_{which}"]
    overlays = {f"{key}_weights": overlay} if overlay is not None and which == "weights" else None
    return board(key, charts, overlays=overlays)


def slide_words(step: int) -> str:
    """What a Cross-attention slide's chart shows, beside it (``step`` from 0: Q, K and V;
    the scores; the weights; the output)."""
    return [
        _(
            "One row per token: Q's rows are the target's tokens (they ask), K's and V's the "
            "source's (they answer); each has d_k columns. Blue < 0 < red (white = 0)."
        ),
        _(
            "Row i, column j: target token i's query · source token j's key, times the scale "
            "factor. Blue < 0 < red (white = 0)."
        ),
        _("Each row is a softmax over the source's tokens and sums to 1. Weights: {scale}.").format(
            scale=weights_scale()
        ),
        _(
            "out = A V: row i mixes the source's value rows, each times target token i's "
            "weight on it. Blue < 0 < red (white = 0)."
        ),
    ][step]
