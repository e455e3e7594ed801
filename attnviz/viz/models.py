"""Figures of the two real-model pages (MiniLM, the SmolLM2 decoder) that the other viz
modules do not have (pure plotly).

Same conventions as :mod:`attnviz.viz`: weights on the sequential 0..1 scale
(``SEQUENTIAL``), float32 values, row 0 at the top; layers and heads are numbered from 0
on screen, as in the engine, the code box and ``?head=`` links (layer 0 = the first layer).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray

from attnviz import i18n
from attnviz.i18n import N_, _
from attnviz.teaching import token_text
from attnviz.viz import charts, heatmaps, style
from attnviz.viz.style import SEQUENTIAL, TITLE_FONT, colorbar, style_text, title_box

__all__ = [
    "all_heads_figure",
    "gqa_table",
    "GRID_MAX_CELLS",
    "heads_grid_figure",
    "layer_band",
    "newest_rows_figure",
    "next_token_figure",
    "pool_square",
    "rope_distance_figure",
    "summary_figure",
    "tile_spec",
]

#: thumbnails of longer inputs are averaged down to this many rows/columns
GRID_MAX_CELLS = 24
_GAP = 1  # blank cells (NaN) between thumbnails


CACHED_KEY = style.AxisTitle(
    N_("key"), N_("key"), N_("earlier tokens: their k and v come from the cache")
)
PROBABILITY = style.AxisTitle(
    N_("probability"), N_("probability"), N_("a leading space is part of the token")
)


def pool_square(w: ArrayLike, cells: int) -> NDArray[np.float32]:
    """Average (..., N, N) down to (..., c, c) with c = min(N, cells), in contiguous blocks.

    Block b covers positions [floor(b N / c), floor((b + 1) N / c)); each pooled row is the
    mean of the rows it covers, so rows of weights still sum to 1.
    """
    a = np.asarray(w, dtype=np.float32)
    n = a.shape[-1]
    c = min(n, cells)
    if c == n:
        return a
    edges = (np.arange(c) * n) // c  # block starts
    sizes = np.diff(np.append(edges, n)).astype(np.float32)
    rows = np.add.reduceat(a, edges, axis=-2) / sizes[:, None]  # mean of rows
    return np.add.reduceat(rows, edges, axis=-1)  # sum over keys in a block


def heads_grid_figure(
    weights: ArrayLike,
    *,
    selected: tuple[int, int] | None = None,
    max_cells: int = GRID_MAX_CELLS,
    height: int = 340,
    title: str | None = None,
    first_layer: int = 0,
) -> go.Figure:
    """Every head's weights (L, H, N, N) tiled into one heatmap: layers down, heads across.

    One trace whatever L and H, so the figure stays light. Inputs longer than ``max_cells``
    tokens are averaged into ``max_cells`` blocks (:func:`pool_square`). ``selected`` =
    (layer, head), 0-based, gets a red frame. ``layout.meta["tiles"]`` (:func:`tile_spec`)
    says how the trace is tiled, so that the board's table and keyboard
    (``attnviz/ui/board/js/table.js``, ``keys.js``) read it head by head.
    ``first_layer``: ``weights`` are a band of a model's layers starting there (a slide's
    few rows, large enough to point at): the ticks, the hover, the table and ``selected``
    name the model's own layers.
    """
    w = np.asarray(weights, dtype=np.float32)
    if w.ndim != 4 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must be (layers, heads, N, N), got shape {w.shape}")
    if first_layer < 0:
        raise ValueError(f"first_layer must be >= 0, got {first_layer}")
    n_layers, n_heads, n, __ = w.shape
    # 1. every head's (pooled) weights tiled into one array, gaps of NaN between them
    p = pool_square(w, max_cells)  # (L, H, c, c)
    c = p.shape[-1]
    step = c + _GAP
    tiled, ids = _tile_heads(p, first_layer)
    # 2. one heatmap trace, its colour bar under the grid
    fig = go.Figure(_grid_heatmap(tiled, ids))
    if selected is not None and 0 <= selected[0] - first_layer < n_layers:  # a red frame
        sl, sh = selected[0] - first_layer, selected[1]
        fig.add_shape(
            type="rect",
            x0=sh * step - 0.9,
            x1=sh * step + c - 0.1,
            y0=sl * step - 0.9,
            y1=sl * step + c - 0.1,
            line={"color": "#d62728", "width": 3},
        )
    # 3. the layout: the title, square cells, heads across (H1 ...), layers down (L1 ...)
    sub = " " + _("(each averaged to {size})").format(size=f"{c}×{c}") if c < n else ""
    if title is None:
        title = _("All {n} heads: layers down, heads across").format(n=n_layers * n_heads)
    fig.update_layout(
        template="none",
        title=title_box(title + sub),
        height=height,
        margin={"l": 40, "r": 10, "t": 40, "b": 75},
        font={"size": 13, "color": TITLE_FONT["color"]},
        plot_bgcolor="white",
        paper_bgcolor="white",
        meta={"tiles": tile_spec(n_layers, n_heads, n, max_cells, first_layer), **SQUARE},
    )
    centre = (c - 1) / 2
    fig.update_xaxes(
        tickmode="array",
        tickvals=[h * step + centre for h in range(n_heads)],
        ticktext=[f"H{h}" for h in range(n_heads)],
        showgrid=False,
        zeroline=False,
        range=[-0.5, tiled.shape[1] - 0.5],
        constrain="domain",  # square cells shrink the axis, not pad it with empty range
    )
    fig.update_yaxes(
        tickmode="array",
        tickvals=[layer * step + centre for layer in range(n_layers)],
        ticktext=[f"L{first_layer + layer}" for layer in range(n_layers)],
        showgrid=False,
        zeroline=False,
        range=[tiled.shape[0] - 0.5, -0.5],
        scaleanchor="x",
        constrain="domain",
        constraintoward="bottom",  # spare height goes above the grid, not between it and the bar
    )
    return style_text(fig)


#: ``layout.meta`` of a figure of attention weights (the board's value kind)
WEIGHTS = {"value": "weights"}
#: ... of the grid of heads: square cells on a slide too (the board's presenterFill
#: stretches a matrix's cells otherwise, slanting each thumbnail's diagonal)
SQUARE = {"cells": "square", **WEIGHTS}


def tile_spec(
    n_layers: int, n_heads: int, n: int, cells: int = GRID_MAX_CELLS, first_layer: int = 0
) -> dict:
    """How :func:`heads_grid_figure` tiles its trace, for the front end: ``rows`` x ``cols``
    tiles (layers down, heads across, numbered from 0 on screen), each ``size`` x ``size``
    cells (queries down, keys across) with ``gap`` blank cells between tiles; ``blocks``:
    the first token of each cell's block and the end (``size + 1`` numbers: a cell covers
    tokens ``blocks[i]`` to ``blocks[i + 1] - 1``, as :func:`pool_square` averages them);
    ``first_row``: the number of the first row's layer (a band of a model's layers)."""
    c = min(n, cells)
    edges = (np.arange(c) * n) // c
    return {
        "rows": n_layers,
        "cols": n_heads,
        "size": c,
        "gap": _GAP,
        "row": "layer",
        "col": "head",
        "first_row": int(first_layer),
        "blocks": [*map(int, edges), n],
    }


def _tile_heads(
    p: NDArray[np.float32], first_layer: int = 0
) -> tuple[NDArray[np.float32], NDArray[np.int16]]:
    """(L, H, c, c) -> the tiled weights (L·(c + gap) − gap, H·(c + gap) − gap), NaN in the
    gaps, and the 0-based (layer, head) of each cell (-1 in the gaps; layers from
    ``first_layer``), for the hover."""
    n_layers, n_heads, c, __ = p.shape
    step = c + _GAP
    tiled = np.full((n_layers * step - _GAP, n_heads * step - _GAP), np.nan, np.float32)
    ids = np.full(tiled.shape + (2,), -1, np.int16)  # (layer, head) of each cell, 0-based
    for layer in range(n_layers):
        for head in range(n_heads):
            r, k = layer * step, head * step
            tiled[r : r + c, k : k + c] = p[layer, head]
            ids[r : r + c, k : k + c] = (first_layer + layer, head)
    return tiled, ids


def _grid_heatmap(tiled: NDArray[np.float32], ids: NDArray[np.int16]) -> go.Heatmap:
    """The one heatmap of the tiled heads, 0..1, hover naming the layer and the head."""
    return go.Heatmap(
        z=tiled,
        customdata=ids,
        colorscale=SEQUENTIAL,
        zmin=0.0,
        zmax=1.0,
        hoverongaps=False,
        xgap=0,
        ygap=0,
        # under the grid, centred like it: a vertical bar at the paper's right edge is
        # far from a grid whose width is set by its square cells (wide screens)
        colorbar=colorbar(
            _("weight"),
            thickness=10,
            orientation="h",
            x=0.5,
            xanchor="center",
            len=0.5,
            yref="container",
            y=0.0,
            yanchor="bottom",
            ypad=8,
        ),
        hovertemplate=_("layer {layer}, head {head}").format(
            layer="%{customdata[0]}", head="%{customdata[1]}"
        )
        + "<br>"
        + _("weight {w}").format(w="%{z:.2f}")
        + "<extra></extra>",
        name="heads",
    )


def summary_figure(
    values: ArrayLike,
    *,
    title: str,
    fmt: str = ".2f",
    zmin: float = 0.0,
    zmax: float | None = None,
    selected: tuple[int, int] | None = None,
    height: int = 300,
) -> go.Figure:
    """A (layers, heads) table of one per-head number as a heatmap with the values written in."""
    v = np.asarray(values, dtype=np.float32)
    if v.ndim != 2:
        raise ValueError(f"values must be (layers, heads), got shape {v.shape}")
    n_layers, n_heads = v.shape
    top = float(np.nanmax(v)) if zmax is None else zmax
    fig = go.Figure(
        go.Heatmap(
            z=v,
            x=np.arange(n_heads, dtype=np.int16),
            y=np.arange(n_layers, dtype=np.int16),
            colorscale=SEQUENTIAL,
            zmin=zmin,
            zmax=top if top > zmin else zmin + 1.0,
            texttemplate=f"%{{z:{fmt}}}",
            textfont={"size": 11},
            hovertemplate=_("layer {layer}, head {head}").format(
                layer="%{customdata[0]}", head="%{customdata[1]}"
            )
            + f": %{{z:{fmt}}}"
            "<extra></extra>",
            customdata=np.stack(
                np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij"),
                axis=-1,
            ).astype(np.int16),
            colorbar=colorbar(thickness=10),
            name=title,
        )
    )
    if selected is not None:
        sl, sh = selected
        fig.add_shape(
            type="rect",
            x0=sh - 0.5,
            x1=sh + 0.5,
            y0=sl - 0.5,
            y1=sl + 0.5,
            line={"color": "#d62728", "width": 3},
        )
    fig.update_layout(
        template="none",
        title=title_box(title),
        height=height,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        font={"size": 13, "color": TITLE_FONT["color"]},
    )
    fig.update_xaxes(
        tickmode="array",
        tickvals=list(range(n_heads)),
        ticktext=[f"H{h}" for h in range(n_heads)],
        showgrid=False,
    )
    fig.update_yaxes(
        tickmode="array",
        tickvals=list(range(n_layers)),
        ticktext=[f"L{layer}" for layer in range(n_layers)],
        showgrid=False,
        range=[n_layers - 0.5, -0.5],
    )
    return style_text(fig)


# The decoder page (SmolLM2-135M): layers, heads and key/value heads numbered from 0.
def all_heads_figure(
    weights: ArrayLike,
    *,
    selected: tuple[int, int] | None = None,
    height: int = 860,
    layers: tuple[int, int] | None = None,
) -> go.Figure:
    """Every head's causal weights (30, 9, N, N) as thumbnails: layers down, heads across.
    ``layers`` = (first, stop): only those layers' rows (a slide: a few rows, cells large
    enough to point at), titled "Layers a–b of the 270 heads"."""
    w = np.asarray(weights)
    if w.ndim != 4:
        raise ValueError(f"weights must be (layers, heads, N, N), got shape {w.shape}")
    total = w.shape[0] * w.shape[1]
    if layers is None:
        title = _("All {n} heads").format(n=total)
        return heads_grid_figure(w, selected=selected, height=height, title=title)
    a, b = layers
    if not 0 <= a < b <= w.shape[0]:
        raise ValueError(f"layers must be (first, stop) within 0..{w.shape[0]}, got {layers}")
    return heads_grid_figure(
        w[a:b],
        selected=selected,
        height=height,
        title=_("Layers {first}–{last} of the {n} heads").format(first=a, last=b - 1, n=total),
        first_layer=a,
    )


def layer_band(layer: int, n_layers: int, rows: int) -> tuple[int, int]:
    """The ``rows`` consecutive layers (first, stop) a slide's grid shows around ``layer``:
    bands 0..rows-1, rows..2·rows-1, …, the last one ending at the model's last layer."""
    if rows < 1 or not 0 <= layer < n_layers:
        raise ValueError(f"need rows >= 1 and 0 <= layer < {n_layers}, got {rows}, {layer}")
    if rows >= n_layers:
        return 0, n_layers
    first = min((layer // rows) * rows, n_layers - rows)
    return first, first + rows


def gqa_table(num_heads: int, num_kv_heads: int, selected: int | None = None) -> str:
    """Markdown: which query heads share each key/value head (numbered from 0)."""
    if num_kv_heads < 1 or num_heads % num_kv_heads:
        raise ValueError(f"{num_kv_heads} key/value heads do not divide {num_heads} heads")
    g = num_heads // num_kv_heads
    header = "| " + _("key/value head") + " | " + _("query heads that use it") + " |"
    rows = [header, "| --- | --- |"]
    for kv in range(num_kv_heads):
        heads = [f"**{h}**" if h == selected else str(h) for h in range(kv * g, kv * g + g)]
        rows.append(f"| {kv} | {', '.join(heads)} |")
    return "\n".join(rows)


def newest_rows_figure(
    rows: ArrayLike, labels: Sequence[str], *, layer: int, height: int = 320
) -> go.Figure:
    """The newest token's row of weights (H, N) of every head of one layer (0-based layer):
    what the new query computes against the cached keys. Up to
    :data:`~attnviz.viz.style.MAX_CELL_TEXT_N` keys each weight is written in its cell (the
    board keeps them where the cells are large enough for them)."""
    r = np.asarray(rows, dtype=np.float32)
    if r.ndim != 2 or r.shape[1] != len(labels):
        raise ValueError(f"rows must be (heads, {len(labels)}), got shape {r.shape}")
    return heatmaps.matrix_figure(
        r,
        title=_("Layer {layer}: the newest token's row in each head").format(layer=layer),
        x_title=CACHED_KEY,
        y_title=style.HEAD,
        hover=_("head {head}, key {key}: weight {w}").format(head="%{y}", key="%{x}", w="%{z:.3f}"),
        kind="weights",
        x_labels=list(labels),
        y_labels=[f"H{h}" for h in range(r.shape[0])],
        height=height,
        zmax=1.0,
        colorbar_title=_("weight"),
        cell_text=".2f" if r.shape[1] <= style.MAX_CELL_TEXT_N else None,
    )


def next_token_figure(top: Sequence[tuple[str, float]], *, height: int = 360) -> go.Figure:
    """Horizontal bars of the most likely next tokens, most likely at the top."""
    if not top:
        raise ValueError("no tokens to draw")
    # numbered: a category axis merges equal names; raw: the token as code writes it
    labels = [f"{i + 1}. “{style.token_label(t)}”" for i, (t, __) in enumerate(top)]
    raw = [style.plotly_text(token_text.raw(t)) for t, __ in top]
    probs = np.asarray([p for __, p in top], dtype=np.float64)
    # plain dicts (style._figure): plotly's validating API costs ~15 ms a call here
    bar = {
        "type": "bar",
        "x": probs,
        "y": labels,
        "orientation": "h",
        "marker": {"color": "#0072B2"},
        "text": [i18n.fmt(p, ".1%") for p in probs],
        "textposition": "outside",
        # the tick labels' type (grown on a slide as they are), never shrunk to the bar's
        # thickness (plotly's default constraint drew 18 px on a slide; issue 47)
        "textfont": dict(style.TICK_FONT),
        "constraintext": "none",
        "cliponaxis": False,
        "customdata": raw,
        "hovertemplate": _("%{y} (%{customdata}): probability %{x:.4f}") + "<extra></extra>",
        "name": _("probability"),
    }
    layout = style._layout(
        title=_("The {n} most likely next tokens").format(n=len(top)),
        height=height,
        margin={"l": 150, "r": 60, "t": 50, "b": 55},
        plot_bgcolor="white",
        showlegend=False,
        yaxis={"autorange": "reversed", "type": "category", "automargin": True},
        meta={"axes": style.axes_meta(xaxis=PROBABILITY)},
        xaxis={
            "title": style.axis_text(PROBABILITY),
            "range": [0, float(probs.max()) * 1.15 + 1e-9],
            "showgrid": True,
            # whole percents repeat on a flat distribution ("0%, 1%, 1%" up to 1.2 %)
            "tickformat": ".0%" if probs.max() >= 0.05 else ".1%",
            "automargin": True,
        },
    )
    return style._figure([bar], layout)


def rope_distance_figure(
    distances: ArrayLike, with_rope: ArrayLike, without: ArrayLike, *, title: str
) -> go.Figure:
    """Score of one fixed q and k against their distance, with and without RoPE."""
    fig = charts.line_figure(
        distances,
        {_("with RoPE (rotated by position)"): with_rope, _("without RoPE"): without},
        title=title,
        x_title=style.AxisTitle(
            N_("distance between the query and the key (tokens)"),
            N_("distance between the query and the key"),
        ),
        y_title=_("score q·k / √64"),
        height=360,
    )
    # the lines are named where they end (a legend's width is measured before the board's
    # font is ready, which cut its text)
    xs = np.asarray(distances, dtype=np.float64)
    w, wo = np.asarray(with_rope, np.float64), np.asarray(without, np.float64)
    above = bool(wo[-1] >= w[-1])
    for y, name, up, colour in (
        (wo[-1], _("without RoPE"), above, "#E69F00"),
        (w[-1], _("with RoPE"), not above, "#0072B2"),
    ):
        fig.add_annotation(
            x=float(xs[-1]),
            y=float(y),
            text=name,
            showarrow=False,
            xanchor="right",
            yanchor="bottom" if up else "top",
            yshift=8 if up else -14,
            font={"size": 13, "color": colour},
        )
    fig.update_layout(showlegend=False, margin={"l": 80, "r": 20, "t": 60, "b": 60})
    return fig  # its y axis keeps line_figure's automargin
