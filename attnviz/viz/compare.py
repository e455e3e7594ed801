"""Figures and tables of the Compare page: two views' weights, their difference B − A on a
diverging scale centred on 0, the largest changes and the change in entropy per query.

Pure functions of arrays (NumPy and plotly, no Streamlit), like :mod:`attnviz.viz`,
whose heatmap builder they use. Matrices are in row layout (query i = row i); ``layout``
says how they are drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray

from attnviz import engine
from attnviz.engine import limits
from attnviz.i18n import N_, _
from attnviz.viz import heatmaps, style

__all__ = [
    "Change",
    "difference",
    "difference_figure",
    "entropy_change",
    "entropy_change_figure",
    "largest_changes",
    "weights_figure",
]


#: Up to this N the hover of B − A also shows A's and B's weights (their N·N·2 numbers
#: travel as JSON lists; attnviz.engine.limits).
HOVER_BOTH_N = limits.HOVER_BOTH_N


ENTROPY_CHANGE = style.AxisTitle(N_("H(B) − H(A) (bits)"), "H(B) − H(A)")


def _pair(a: ArrayLike, b: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.ndim != 2 or a.shape != b.shape or a.shape[0] != a.shape[1]:
        raise ValueError(
            f"A and B must be weights of the same N×N shape (the same input), got A "
            f"{'×'.join(map(str, a.shape))} and B {'×'.join(map(str, b.shape))}"
        )
    return a, b


def difference(a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """B − A, cell by cell: (N, N) from the two views' weights (N, N)."""
    a, b = _pair(a, b)
    return b - a  # (N, N)


@dataclass(frozen=True)
class Change:
    """One cell of the largest changes: query i, key j, A's and B's weights, B − A."""

    query: int
    key: int
    a: float
    b: float

    @property
    def delta(self) -> float:
        return self.b - self.a


def largest_changes(a: ArrayLike, b: ArrayLike, k: int = 10) -> list[Change]:
    """The ``k`` cells with the largest |B − A|, largest first (ties: by query, then key);
    cells that did not change are left out."""
    a, b = _pair(a, b)
    d = np.abs(b - a).ravel()  # (N·N,)
    order = np.lexsort((np.arange(d.size), -d))[:k]  # by -|B − A|, then row-major index
    n = a.shape[1]
    return [
        Change(int(i // n), int(i % n), float(a.flat[i]), float(b.flat[i]))
        for i in order
        if d[i] > 0
    ]


def entropy_change(a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """Per query, H(B's row) − H(A's row) in bits, (N,); a fully masked row counts 0."""
    a, b = _pair(a, b)
    return engine.row_entropy(b) - engine.row_entropy(a)  # (N,)


def weights_figure(
    w: ArrayLike,
    *,
    which: str,
    what: str,
    labels: Sequence[str] | None = None,
    layout: style.Layout = "rows",
    mask: ArrayLike | None = None,
    height: int = 380,
) -> go.Figure:
    """One view's weights, titled "``which``: weights, ``what``" (which = "A" or "B")."""
    return heatmaps.attention_figure(
        w,
        what="weights",
        labels=labels,
        layout=layout,
        mask=mask,
        title=_("{which}: weights, {what}").format(which=which, what=what),
        height=height,
    )


def difference_figure(
    a: ArrayLike,
    b: ArrayLike,
    *,
    what: str,
    labels: Sequence[str] | None = None,
    layout: style.Layout = "rows",
    height: int = 380,
) -> go.Figure:
    """B − A on a diverging scale centred on 0 (blue: B smaller, red: B larger), symmetric
    around 0 (at least ±0.01, so rounding noise stays white). Hover: A, B and B − A.
    ``what``: the title's rest, "B − A: ``what``"."""
    a, b = _pair(a, b)
    d = b - a  # (N, N)
    n = d.shape[0]
    m = max(float(np.abs(d).max()), 0.01)
    rows = layout == "rows"
    if layout not in ("rows", "columns"):
        raise ValueError(f"layout must be 'rows' or 'columns', got {layout!r}")
    qi, kj = ("%{y}", "%{x}") if rows else ("%{x}", "%{y}")
    both = n <= HOVER_BOTH_N
    hover = _("query {q}, key {k}: B − A = {z}").format(q=qi, k=kj, z="%{z:+.4f}")
    if both:
        hover += "<br>A = %{customdata[0]:.4f}, B = %{customdata[1]:.4f}"
    fig = heatmaps.matrix_figure(
        d if rows else d.T,
        title=f"B − A: {what}",
        x_title=heatmaps.KEY_COLUMNS if rows else heatmaps.QUERY_COLUMNS,
        y_title=heatmaps.QUERY_ROWS if rows else heatmaps.KEY_ROWS,
        hover=hover,
        kind="diverging",
        x_labels=labels if labels is not None and len(labels) == n else None,
        y_labels=labels if labels is not None and len(labels) == n else None,
        height=height,
        zmax=m,
        colorbar_title="B − A",
        role="weights",  # a change of weights (the board's click value)
        cell_text=".2f" if n <= style.MAX_CELL_TEXT_N else None,
        token_axes="xy",
        pooled_hover=_("block from query {q}, key {k}: mean B − A = {z}").format(
            q=qi, k=kj, z="%{z:+.4f}"
        ),
    )
    if both:  # nested lists: plotly.js does not read a 3-D typed array as customdata
        ab = np.round(np.stack([a, b], axis=-1), 4)  # (N, N, 2)
        fig.update_traces(customdata=(ab if rows else ab.transpose(1, 0, 2)).tolist(), selector=0)
    return fig


def entropy_change_figure(
    a: ArrayLike,
    b: ArrayLike,
    *,
    labels: Sequence[str] | None = None,
    title: str | None = None,
    height: int = 300,
) -> go.Figure:
    """Per query, H(B) − H(A) in bits: positive = B spreads its attention more widely.
    ``title``: default "B − A: entropy of each query's weights (bits)" (translated)."""
    a, b = _pair(a, b)
    ha, hb = engine.row_entropy(a), engine.row_entropy(b)  # (N,), (N,)
    dh = hb - ha
    n = dh.size
    data = [
        {
            "type": "bar",
            "x": np.arange(n, dtype=np.int16),
            "y": dh.astype(np.float32),
            "customdata": np.stack([ha, hb], axis=-1).astype(np.float32),
            "marker": {"color": np.where(dh >= 0, "#d6604d", "#4393c3").tolist()},
            "hovertemplate": _("query {q}: H(B) − H(A) = {d} bits").format(q="%{x}", d="%{y:+.3f}")
            + "<br>H(A) = %{customdata[0]:.3f}, H(B) = %{customdata[1]:.3f}<extra></extra>",
            "name": _("entropy change"),
        }
    ]
    layout = style._layout(
        title=title or _("B − A: entropy of each query's weights (bits)"),
        height=height,
        margin={"l": 70, "r": 20, "t": 60, "b": 60},
        meta={"axes": style.axes_meta(xaxis=style.QUERY_I, yaxis=ENTROPY_CHANGE)},
        xaxis={
            "title": {"text": style.axis_text(style.QUERY_I)},
            **style._ticks(labels, n),
            "automargin": True,
        },
        yaxis={
            "title": {"text": style.axis_text(ENTROPY_CHANGE)},
            "zeroline": True,
            "zerolinecolor": "#444",
            "automargin": True,
        },
        showlegend=False,
        plot_bgcolor="white",
    )
    return style._figure(data, layout)
