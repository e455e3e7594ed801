"""Figures of the decoder page (SmolLM2-135M), pure plotly on top of :mod:`attnviz.figures`.

Layers, heads and key/value heads are numbered from 1 on screen.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz import figures
from attnviz.models.minilm_figures import heads_grid_figure

__all__ = [
    "all_heads_figure",
    "gqa_table",
    "newest_rows_figure",
    "next_token_figure",
    "rope_distance_figure",
]


def all_heads_figure(
    weights: ArrayLike, *, selected: tuple[int, int] | None = None, height: int = 860
) -> go.Figure:
    """Every head's causal weights (30, 9, N, N) as thumbnails: layers down, heads across."""
    w = np.asarray(weights)
    if w.ndim != 4:
        raise ValueError(f"weights must be (layers, heads, N, N), got shape {w.shape}")
    return heads_grid_figure(
        w,
        selected=selected,
        height=height,
        title=f"All {w.shape[0] * w.shape[1]} heads (causal: nothing above the diagonal)",
    )


def gqa_table(num_heads: int, num_kv_heads: int, selected: int | None = None) -> str:
    """Markdown: which query heads share each key/value head (1-based on screen)."""
    if num_kv_heads < 1 or num_heads % num_kv_heads:
        raise ValueError(f"{num_kv_heads} key/value heads do not divide {num_heads} heads")
    g = num_heads // num_kv_heads
    rows = ["| key/value head | query heads that use it |", "| --- | --- |"]
    for kv in range(num_kv_heads):
        heads = [f"**{h + 1}**" if h == selected else str(h + 1) for h in range(kv * g, kv * g + g)]
        rows.append(f"| {kv + 1} | {', '.join(heads)} |")
    return "\n".join(rows)


def newest_rows_figure(
    rows: ArrayLike, labels: Sequence[str], *, layer: int, height: int = 320
) -> go.Figure:
    """The newest token's row of weights (H, N) of every head of one layer (0-based layer):
    what the new query computes against the cached keys."""
    r = np.asarray(rows, dtype=np.float32)
    if r.ndim != 2 or r.shape[1] != len(labels):
        raise ValueError(f"rows must be (heads, {len(labels)}), got shape {r.shape}")
    return figures.matrix_figure(
        r,
        title=f"Layer {layer + 1}: the newest token's row in each head",
        x_title="key (earlier tokens: their k and v come from the cache)",
        y_title="head",
        hover="head %{y}, key %{x}: weight %{z:.3f}",
        kind="weights",
        x_labels=list(labels),
        y_labels=[f"H{h + 1}" for h in range(r.shape[0])],
        height=height,
        zmax=1.0,
        colorbar_title="weight",
    )


def next_token_figure(top: Sequence[tuple[str, float]], *, height: int = 320) -> go.Figure:
    """Bars of the most likely next tokens, most likely first."""
    if not top:
        raise ValueError("no tokens to draw")
    labels = [f"{i + 1}. {figures.plotly_text(repr(t)[1:-1])}" for i, (t, _) in enumerate(top)]
    fig = figures.bars_figure(
        {"probability": [p for _, p in top]},
        x_labels=labels,
        title=f"The {len(top)} most likely next tokens",
        x_title="next token (rank. text; a leading space is part of the token)",
        y_title="probability",
        height=height,
        y_range=(0.0, max(p for _, p in top) * 1.1 + 1e-9),
    )
    fig.update_layout(showlegend=False)
    return fig


def rope_distance_figure(
    distances: ArrayLike, with_rope: ArrayLike, without: ArrayLike, *, title: str
) -> go.Figure:
    """Score of one fixed q and k against their distance, with and without RoPE."""
    return figures.line_figure(
        distances,
        {"with RoPE (rotated by position)": with_rope, "without RoPE": without},
        title=title,
        x_title="distance between the query and the key (tokens)",
        y_title="score q·k / √64",
        height=340,
    )
