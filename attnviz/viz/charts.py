"""Plain charts: bars, lines, the variance of q·k against d_k and the softmax factor of the
scaling page (pure plotly builders).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz.i18n import N_, _
from attnviz.viz.style import AxisTitle, _f32, _figure, _layout, axes_meta, axis_text, plotly_text

__all__ = ["bars_figure", "line_figure", "softmax_factor_figure", "variance_figure"]


def bars_figure(
    series: dict[str, ArrayLike],
    *,
    x_labels: Sequence[str],
    title: str,
    x_title: str | AxisTitle,
    y_title: str | AxisTitle,
    height: int = 320,
    y_range: tuple[float, float] | None = None,
) -> go.Figure:
    """Grouped bars, one trace per entry of ``series`` (all the same length)."""
    # Okabe-Ito, distinct for up to 8 series (8 heads)
    palette = [
        "#0072B2",
        "#E69F00",
        "#009E73",
        "#CC79A7",
        "#56B4E9",
        "#D55E00",
        "#999999",
        "#000000",
    ]
    xs = [plotly_text(s) for s in x_labels]
    data = []
    for k, (name, ys) in enumerate(series.items()):
        y = _f32(ys).ravel()
        if y.size != len(x_labels):
            raise ValueError(f"series {name!r} has {y.size} values for {len(x_labels)} labels")
        data.append(
            {
                "type": "bar",
                "x": xs,
                "y": y,
                "name": name,
                "marker": {"color": palette[k % len(palette)]},
                "hovertemplate": f"{name}: %{{x}} → %{{y:.4f}}<extra></extra>",
            }
        )
    yaxis = {"title": {"text": axis_text(y_title)}, "showgrid": True, "automargin": True}
    if y_range is not None:
        yaxis["range"] = list(y_range)
    lay = _layout(
        title=title,
        height=height,
        barmode="group",
        plot_bgcolor="white",
        xaxis={"title": {"text": axis_text(x_title)}, "type": "category", "automargin": True},
        yaxis=yaxis,
        meta={"axes": axes_meta(xaxis=x_title, yaxis=y_title)},
    )
    return _figure(data, lay)


def line_figure(
    x: ArrayLike,
    series: dict[str, ArrayLike],
    *,
    title: str,
    x_title: str | AxisTitle,
    y_title: str | AxisTitle,
    log_x: bool = False,
    log_y: bool = False,
    height: int = 340,
) -> go.Figure:
    """Lines with markers, one per entry of ``series``, against ``x``."""
    xs = np.asarray(x, dtype=np.float64).ravel()
    palette = ["#0072B2", "#E69F00", "#009E73", "#CC79A7"]
    dashes = ["solid", "dash", "dot", "dashdot"]
    data = []
    for k, (name, ys) in enumerate(series.items()):
        y = np.asarray(ys, dtype=np.float64).ravel()
        if y.size != xs.size:
            raise ValueError(f"series {name!r} has {y.size} values for {xs.size} x values")
        data.append(
            {
                "type": "scatter",
                "x": xs,
                "y": y,
                "mode": "lines+markers",
                "name": name,
                "line": {"color": palette[k % 4], "dash": dashes[k % 4]},
                "hovertemplate": f"{name}: x=%{{x}}, y=%{{y:.4g}}<extra></extra>",
            }
        )
    # Log axes: plotly's own ticks label the minor steps "1, 2, 5, 10, 2, 5, 100", which
    # reads as repeated numbers. The x ticks are the data's x values; log y: one per decade.
    x_ticks = {"tickvals": xs.tolist(), "ticktext": [f"{v:g}" for v in xs]} if log_x else {}
    lay = _layout(
        title=title,
        height=height,
        plot_bgcolor="white",
        meta={"axes": axes_meta(xaxis=x_title, yaxis=y_title)},
        xaxis={
            "title": {"text": axis_text(x_title)},
            "type": "log" if log_x else "linear",
            "showgrid": True,
            "automargin": True,
            **x_ticks,
        },
        yaxis={
            "title": {"text": axis_text(y_title)},
            "type": "log" if log_y else "linear",
            "showgrid": True,
            "automargin": True,
            **({"dtick": 1} if log_y else {}),
        },
    )
    return _figure(data, lay)


def variance_figure(dims: ArrayLike, before: ArrayLike, after: ArrayLike) -> go.Figure:
    """Variance of q·k against d_k, unscaled and divided by √d_k (log-log)."""
    d = np.asarray(dims, dtype=np.float64)
    fig = line_figure(
        d,
        {"var(q·k)": before, "var(q·k / √d_k)": after, _("d_k (theory, unscaled)"): d},
        title=_("Variance of a dot product of two random N(0,1) vectors"),
        x_title=AxisTitle(N_("d_k (vector length)"), "d_k"),
        y_title=_("variance"),
        log_x=True,
        log_y=True,
    )
    return fig


def softmax_factor_figure(
    logits: ArrayLike, factors: Sequence[float], weights: ArrayLike
) -> go.Figure:
    """Softmax of the same logits multiplied by each factor: grouped bars per position.

    ``weights`` is (len(factors), len(logits)).
    """
    w = np.asarray(weights, dtype=np.float64)
    lg = np.asarray(logits, dtype=np.float64).ravel()
    if w.shape != (len(factors), lg.size):
        raise ValueError(
            f"weights must be (factors, logits) = ({len(factors)}, {lg.size}), got {w.shape}"
        )
    labels = [f"{i}: {v:+.2f}" for i, v in enumerate(lg)]
    return bars_figure(
        {f"softmax({f:g} × logits)": w[k] for k, f in enumerate(factors)},
        x_labels=labels,
        title=_("The same logits, multiplied by a factor before the softmax"),
        x_title=_("position: logit"),
        y_title=AxisTitle(N_("softmax weight"), N_("softmax weight")),
        y_range=(0.0, 1.0),
    )
