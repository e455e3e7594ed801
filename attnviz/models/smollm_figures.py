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
        title=f"All {w.shape[0] * w.shape[1]} heads",
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


def next_token_figure(top: Sequence[tuple[str, float]], *, height: int = 360) -> go.Figure:
    """Horizontal bars of the most likely next tokens, most likely at the top."""
    if not top:
        raise ValueError("no tokens to draw")
    labels = [f"{i + 1}. “{figures.plotly_text(t)}”" for i, (t, _) in enumerate(top)]
    probs = np.asarray([p for _, p in top], dtype=np.float64)
    # plain dicts (figures._figure): plotly's validating API costs ~15 ms a call here
    bar = {
        "type": "bar",
        "x": probs,
        "y": labels,
        "orientation": "h",
        "marker": {"color": "#0072B2"},
        "text": [f"{p:.1%}" for p in probs],
        "textposition": "outside",
        "cliponaxis": False,
        "hovertemplate": "%{y}: probability %{x:.4f}<extra></extra>",
        "name": "probability",
    }
    layout = figures._layout(
        title=f"The {len(top)} most likely next tokens",
        height=height,
        margin={"l": 150, "r": 60, "t": 50, "b": 55},
        plot_bgcolor="white",
        showlegend=False,
        yaxis={"autorange": "reversed", "type": "category", "automargin": True},
        xaxis={
            "title": "probability (a leading space is part of the token)",
            "range": [0, float(probs.max()) * 1.15 + 1e-9],
            "showgrid": True,
            "tickformat": ".0%",
            "automargin": True,
        },
    )
    return figures._figure([bar], layout)


def rope_distance_figure(
    distances: ArrayLike, with_rope: ArrayLike, without: ArrayLike, *, title: str
) -> go.Figure:
    """Score of one fixed q and k against their distance, with and without RoPE."""
    fig = figures.line_figure(
        distances,
        {"with RoPE (rotated by position)": with_rope, "without RoPE": without},
        title=title,
        x_title="distance between the query and the key (tokens)",
        y_title="score q·k / √64",
        height=360,
    )
    # the lines are named where they end (a legend's width is measured before the board's
    # font is ready, which cut its text)
    xs = np.asarray(distances, dtype=np.float64)
    w, wo = np.asarray(with_rope, np.float64), np.asarray(without, np.float64)
    above = bool(wo[-1] >= w[-1])
    for y, name, up, colour in (
        (wo[-1], "without RoPE", above, "#E69F00"),
        (w[-1], "with RoPE", not above, "#0072B2"),
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
