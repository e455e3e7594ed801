"""Figures of the Heads section (pure plotly): the six pattern scores of every head as
layer x head heatmaps, and one head's weights on the probe.

Same conventions as :mod:`attnviz.viz`: scores and weights on the sequential 0..1
scale (``SEQUENTIAL``), layer 0 at the top, layers and heads numbered from 0 on screen
(as in the engine, the code box and ``?head=`` links).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz.engine import causal_mask
from attnviz.i18n import N_, _
from attnviz.models.head_patterns import PATTERNS
from attnviz.viz.heatmaps import attention_figure
from attnviz.viz.style import (
    AXIS_TITLE_FONT,
    HEAD,
    LAYER,
    NOTE_LINE,
    SEQUENTIAL,
    TICK_FONT,
    TITLE_FONT,
    axes_meta,
    axis_text,
    colorbar,
    title_box,
)

__all__ = ["SELECTED_COLOUR", "probe_weights_figure", "scores_figure"]

SELECTED_COLOUR = "#d62728"
#: The panels' titles: the patterns' keys (PATTERNS) as shown, translated where drawn.
PANEL_TITLES = {
    "previous": N_("previous"),
    "first": N_("first"),
    "self": N_("self"),
    "local": N_("local"),
    "duplicate": N_("duplicate"),
    "induction": N_("induction"),
}


def scores_figure(
    scores: Mapping[str, ArrayLike],
    *,
    selected: tuple[int, int] | None = None,
    title: str | None = None,
    height: int | None = None,
) -> go.Figure:
    """One heatmap per pattern of :data:`PATTERNS` (in that order), each (layers, heads)
    with layer 0 at the top; a shared 0..1 colour scale; NaN cells (a pattern with nothing
    to average over) stay blank. ``selected`` = (layer, head), 0-based, is framed in red
    in every panel; panel titles are the pattern names. Two rows of three panels (one row
    of six left a phone's panel ~50 px for 9 heads: their numbers and the panels' titles ran
    together, issue 47's audit); a tall model (more layers than heads) gets taller rows.

    ``title``: default "Every head's six scores (layers down, heads across)" (translated).
    Built from plain dicts: plotly's validation of six subplots cost ~0.5 s a rerun."""
    z = _checked_scores(scores)
    n_layers, n_heads = z["previous"].shape
    rows, cols = 2, 3
    grid = _Grid(rows, cols, h_gap=0.04, v_gap=0.12)
    data, axes, titles, shapes = [], {}, [], []
    for idx, (name, values) in enumerate(z.items()):
        # 1) the panel's heatmap, its axes and its title
        sfx = "" if idx == 0 else str(idx + 1)
        data.append(_heatmap(name, values, sfx))
        axes.update(grid.axes(idx, sfx, n_layers, n_heads))
        titles.append(grid.title(idx, _(PANEL_TITLES.get(name, name))))
        if selected is not None:  # 2) the head view's head, framed
            shapes.append(_frame(*selected, sfx))
    layout = {
        "template": "none",
        "title": title_box(title or _("Every head's six scores (layers down, heads across)")),
        "height": height or (680 if n_layers > n_heads else 520),
        "margin": {"l": 50, "r": 10, "t": 80, "b": 50},
        "font": {"size": 13, "color": TITLE_FONT["color"]},
        "coloraxis": {
            "colorscale": SEQUENTIAL,
            "cmin": 0.0,
            "cmax": 1.0,
            "colorbar": colorbar(_("score"), thickness=12, len=0.8),
        },
        "annotations": titles,
        "shapes": shapes,
        "plot_bgcolor": "white",
        "paper_bgcolor": "white",
        **axes,
        # every panel's axes count heads (x) and layers (y), titled or not (board tables)
        "meta": {
            "axes": axes_meta(**{k: HEAD if k[0] == "x" else LAYER for k in axes}),
            "value": "scores",
        },
    }
    return go.Figure({"data": data, "layout": layout}, _validate=False)


def _checked_scores(scores: Mapping[str, ArrayLike]) -> dict[str, np.ndarray]:
    """pattern -> (L, H) float32, in :data:`PATTERNS` order; ValueError if one is missing
    or the shapes differ."""
    missing = [k for k in PATTERNS if k not in scores]
    if missing:
        raise ValueError(f"scores must have the patterns {list(PATTERNS)}; missing {missing}")
    z = {k: np.asarray(scores[k], dtype=np.float32) for k in PATTERNS}
    shape = z["previous"].shape
    if len(shape) != 2 or any(v.shape != shape for v in z.values()):
        raise ValueError(
            "every pattern's scores must be one (layers, heads) array, got shapes "
            + ", ".join(f"{k} {v.shape}" for k, v in z.items())
        )
    return z


def _heatmap(name: str, values: np.ndarray, sfx: str) -> dict:
    n_layers, n_heads = values.shape
    return {
        "type": "heatmap",
        "z": values,
        "x": list(range(n_heads)),
        "y": list(range(n_layers)),
        "xaxis": f"x{sfx}",
        "yaxis": f"y{sfx}",
        "coloraxis": "coloraxis",
        "hoverongaps": False,
        "xgap": 1,
        "ygap": 1,
        "name": _(PANEL_TITLES.get(name, name)),
        "hovertemplate": _("layer {layer}, head {head}").format(layer="%{y}", head="%{x}")
        + f"<br>{_(PATTERNS[name])}: %{{z:.2f}}<extra></extra>",
    }


def _frame(layer: int, head: int, sfx: str) -> dict:
    """A red frame around cell (layer, head), 0-based, of panel ``sfx``."""
    return {
        "type": "rect",
        "xref": f"x{sfx}",
        "yref": f"y{sfx}",
        "x0": head - 0.5,
        "x1": head + 0.5,
        "y0": layer - 0.5,
        "y1": layer + 0.5,
        "line": {"color": SELECTED_COLOUR, "width": 2},
    }


class _Grid:
    """Panels in ``rows`` x ``cols``, filled row by row, in paper coordinates."""

    def __init__(self, rows: int, cols: int, *, h_gap: float, v_gap: float) -> None:
        self.rows, self.cols = rows, cols
        self.h_gap, self.v_gap = h_gap, v_gap
        self.width = (1 - (cols - 1) * h_gap) / cols
        self.height = (1 - (rows - 1) * v_gap) / rows

    def _corner(self, idx: int) -> tuple[int, int, float, float]:
        """(row, column, left x, top y) of panel ``idx``."""
        r, c = divmod(idx, self.cols)
        return r, c, c * (self.width + self.h_gap), 1 - r * (self.height + self.v_gap)

    def axes(self, idx: int, sfx: str, n_layers: int, n_heads: int) -> dict[str, dict]:
        """Panel ``idx``'s x and y axes: layer 0 at the top; the layer numbers and the axis
        titles on the outer panels only (every panel has the same layers and heads)."""
        r, c, x0, y1 = self._corner(idx)
        return {
            f"xaxis{sfx}": {
                "domain": [round(x0, 6), round(min(x0 + self.width, 1.0), 6)],
                "anchor": f"y{sfx}",
                "showgrid": False,
                "zeroline": False,
                "tickfont": dict(TICK_FONT),
                # whole heads (no 0.5 ticks); every other one past 8 (SmolLM2's 9 ran
                # together in a phone's third of the width)
                "dtick": 2 if n_heads > 8 else 1,
                "title": {
                    "text": axis_text(HEAD) if r == self.rows - 1 else "",
                    "font": dict(AXIS_TITLE_FONT),
                },
            },
            f"yaxis{sfx}": {
                "domain": [round(max(y1 - self.height, 0.0), 6), round(y1, 6)],
                "anchor": f"x{sfx}",
                "autorange": "reversed",
                "showgrid": False,
                "zeroline": False,
                "tickfont": dict(TICK_FONT),
                "dtick": 3 if n_layers > 12 else 1,  # whole layers (a 2-layer model)
                "showticklabels": c == 0,
                "ticks": "outside" if c == 0 else "",
                "title": {
                    "text": axis_text(LAYER) if c == 0 else "",
                    "font": dict(AXIS_TITLE_FONT),
                },
            },
        }

    def title(self, idx: int, text: str) -> dict:
        """Panel ``idx``'s title, centred above it."""
        __, __, x0, y1 = self._corner(idx)
        return {
            "text": text,
            "x": x0 + self.width / 2,
            "y": y1,
            "xref": "paper",
            "yref": "paper",
            "xanchor": "center",
            "yanchor": "bottom",
            "showarrow": False,
            "font": {"size": 13, "color": TITLE_FONT["color"]},
        }


def probe_weights_figure(
    weights: ArrayLike,
    tokens: Sequence[str],
    *,
    length: int | None,
    start: int = 0,
    causal: bool = True,
    title: str,
    height: int = 360,
    note: str = "",
) -> go.Figure:
    """One head's weights (N, N) on the probe: :func:`attnviz.viz.heatmaps.attention_figure`
    with dashed lines where the second copy starts (query and key ``start + length``); on
    the second copy an induction head's weight sits on the diagonal ``length - 1`` cells
    left of the main one. ``length=None``: any text (the page's own), no lines. ``note``:
    a short line under the title (with "grey = masked"), where three charts abreast leave
    no room in the title itself."""
    w = np.asarray(weights)
    n = len(tokens)
    if w.shape != (n, n):
        raise ValueError(f"weights must be (N, N) for the {n} tokens, got shape {w.shape}")
    if length is not None and (start < 0 or length < 1 or start + 2 * length > n):
        raise ValueError(
            f"the probe (start {start}, 2 x {length} tokens) does not fit in {n} tokens"
        )
    fig = attention_figure(
        w,
        what="weights",
        labels=list(tokens),
        mask=causal_mask(n) if causal else None,
        title=title,
        height=height,
    )
    # the shared titles do not fit 3 abreast
    fig.layout.yaxis.title.text = _("query i (row)")
    fig.layout.xaxis.title.text = _("key j (column)")
    if note:
        text = fig.layout.title.text
        head, sep, rest = text.partition(NOTE_LINE)  # the builder's own second line
        fig.layout.title.text = (
            f"{head}{NOTE_LINE}{note} · {rest}" if sep else f"{text}{NOTE_LINE}{note}</span>"
        )
    if length is None:
        return fig
    edge = start + length - 0.5  # between the copies
    line = {"color": SELECTED_COLOUR, "width": 1.5, "dash": "dash"}
    fig.add_shape(type="line", x0=edge, x1=edge, y0=-0.5, y1=n - 0.5, line=line)
    fig.add_shape(type="line", x0=-0.5, x1=n - 0.5, y0=edge, y1=edge, line=line)
    return fig
