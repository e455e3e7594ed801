"""Figures of the real-model page that :mod:`attnviz.figures` does not have (pure plotly).

Same conventions as :mod:`attnviz.figures`: weights on the sequential 0..1 scale
(``SEQUENTIAL``), float32 values, row 0 at the top; layers and heads are numbered from 1
on screen (layer 1 = the first layer).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray

from attnviz.figures import SEQUENTIAL, TITLE_FONT, colorbar, style_text

__all__ = ["GRID_MAX_CELLS", "heads_grid_figure", "pool_square", "summary_figure", "tile_spec"]

#: thumbnails of longer inputs are averaged down to this many rows/columns
GRID_MAX_CELLS = 24
_GAP = 1  # blank cells (NaN) between thumbnails


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
) -> go.Figure:
    """Every head's weights (L, H, N, N) tiled into one heatmap: layers down, heads across.

    One trace whatever L and H, so the figure stays light. Inputs longer than ``max_cells``
    tokens are averaged into ``max_cells`` blocks (:func:`pool_square`). ``selected`` =
    (layer, head), 0-based, gets a red frame. ``layout.meta["tiles"]`` (:func:`tile_spec`)
    says how the trace is tiled, so that the board's table and keyboard
    (``attnviz/board/table.js``, ``keys.js``) read it head by head.
    """
    w = np.asarray(weights, dtype=np.float32)
    if w.ndim != 4 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must be (layers, heads, N, N), got shape {w.shape}")
    n_layers, n_heads, n, _ = w.shape
    # 1. every head's (pooled) weights tiled into one array, gaps of NaN between them
    p = pool_square(w, max_cells)  # (L, H, c, c)
    c = p.shape[-1]
    step = c + _GAP
    tiled, ids = _tile_heads(p)
    # 2. one heatmap trace, its colour bar under the grid
    fig = go.Figure(_grid_heatmap(tiled, ids))
    if selected is not None:  # a red frame around the selected head
        sl, sh = selected
        fig.add_shape(
            type="rect",
            x0=sh * step - 0.9,
            x1=sh * step + c - 0.1,
            y0=sl * step - 0.9,
            y1=sl * step + c - 0.1,
            line={"color": "#d62728", "width": 3},
        )
    # 3. the layout: the title, square cells, heads across (H1 ...), layers down (L1 ...)
    sub = f" (each averaged to {c}×{c})" if c < n else ""
    if title is None:
        title = f"All {n_layers * n_heads} heads: layers down, heads across"
    fig.update_layout(
        template="none",
        title={"text": title + sub, "x": 0.0, "xanchor": "left", "font": dict(TITLE_FONT)},
        height=height,
        margin={"l": 40, "r": 10, "t": 40, "b": 75},
        font={"size": 13, "color": TITLE_FONT["color"]},
        plot_bgcolor="white",
        paper_bgcolor="white",
        meta={"tiles": tile_spec(n_layers, n_heads, n, max_cells)},
    )
    centre = (c - 1) / 2
    fig.update_xaxes(
        tickmode="array",
        tickvals=[h * step + centre for h in range(n_heads)],
        ticktext=[f"H{h + 1}" for h in range(n_heads)],
        showgrid=False,
        zeroline=False,
        range=[-0.5, tiled.shape[1] - 0.5],
        constrain="domain",  # square cells shrink the axis, not pad it with empty range
    )
    fig.update_yaxes(
        tickmode="array",
        tickvals=[layer * step + centre for layer in range(n_layers)],
        ticktext=[f"L{layer + 1}" for layer in range(n_layers)],
        showgrid=False,
        zeroline=False,
        range=[tiled.shape[0] - 0.5, -0.5],
        scaleanchor="x",
        constrain="domain",
        constraintoward="bottom",  # spare height goes above the grid, not between it and the bar
    )
    return style_text(fig)


def tile_spec(n_layers: int, n_heads: int, n: int, cells: int = GRID_MAX_CELLS) -> dict:
    """How :func:`heads_grid_figure` tiles its trace, for the front end: ``rows`` x ``cols``
    tiles (layers down, heads across, numbered from 1 on screen), each ``size`` x ``size``
    cells (queries down, keys across) with ``gap`` blank cells between tiles; ``blocks``:
    the first token of each cell's block and the end (``size + 1`` numbers: a cell covers
    tokens ``blocks[i]`` to ``blocks[i + 1] - 1``, as :func:`pool_square` averages them)."""
    c = min(n, cells)
    edges = (np.arange(c) * n) // c
    return {
        "rows": n_layers,
        "cols": n_heads,
        "size": c,
        "gap": _GAP,
        "row": "layer",
        "col": "head",
        "blocks": [*map(int, edges), n],
    }


def _tile_heads(p: NDArray[np.float32]) -> tuple[NDArray[np.float32], NDArray[np.int16]]:
    """(L, H, c, c) -> the tiled weights (L·(c + gap) − gap, H·(c + gap) − gap), NaN in the
    gaps, and the 1-based (layer, head) of each cell (-1 in the gaps), for the hover."""
    n_layers, n_heads, c, _ = p.shape
    step = c + _GAP
    tiled = np.full((n_layers * step - _GAP, n_heads * step - _GAP), np.nan, np.float32)
    ids = np.full(tiled.shape + (2,), -1, np.int16)  # (layer, head) of each cell, 1-based
    for layer in range(n_layers):
        for head in range(n_heads):
            r, k = layer * step, head * step
            tiled[r : r + c, k : k + c] = p[layer, head]
            ids[r : r + c, k : k + c] = (layer + 1, head + 1)
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
            "weight",
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
        hovertemplate="layer %{customdata[0]}, head %{customdata[1]}<br>"
        "weight %{z:.2f}<extra></extra>",
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
            hovertemplate=f"layer %{{customdata[0]}}, head %{{customdata[1]}}: %{{z:{fmt}}}"
            "<extra></extra>",
            customdata=np.stack(
                np.meshgrid(np.arange(1, n_layers + 1), np.arange(1, n_heads + 1), indexing="ij"),
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
        title={"text": title, "x": 0.0, "xanchor": "left", "font": dict(TITLE_FONT)},
        height=height,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        font={"size": 13, "color": TITLE_FONT["color"]},
    )
    fig.update_xaxes(
        tickmode="array",
        tickvals=list(range(n_heads)),
        ticktext=[f"H{h + 1}" for h in range(n_heads)],
        showgrid=False,
    )
    fig.update_yaxes(
        tickmode="array",
        tickvals=list(range(n_layers)),
        ticktext=[f"L{layer + 1}" for layer in range(n_layers)],
        showgrid=False,
        range=[n_layers - 0.5, -0.5],
    )
    return style_text(fig)
