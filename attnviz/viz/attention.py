"""Views of attention beyond one heatmap: one query's weights and weighted sum, every head as
small multiples, entropy and argmax per head (pure plotly builders).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz import i18n
from attnviz.i18n import N_, _, ngettext
from attnviz.viz.heatmaps import _cell_text, _sub
from attnviz.viz.style import (
    CHAR_PX,
    HEAD,
    KEY_J,
    MASK_BG,
    MAX_CELL_TEXT_N,
    MAX_MASK_MARKERS,
    MAX_SMALL_MULTIPLES_N,
    MAX_TICK_LABELS,
    QUERY_I,
    SEQUENTIAL,
    TITLE_FONT,
    WEIGHT_A,
    AxisTitle,
    Layout,
    _axis,
    _f32,
    _figure,
    _fixed_margins,
    _label_len,
    _layout,
    _ticks,
    axes_meta,
    axis_text,
    colorbar,
    token_label,
)

__all__ = [
    "argmax_figure",
    "entropy_figure",
    "query_weights_figure",
    "small_multiples_figure",
    "weighted_sum_figure",
]


BITS = AxisTitle(N_("bits (0 = one key, high = spread out)"), N_("bits"))
VALUE_FEATURE = AxisTitle(N_("value feature"), N_("value feature"))


def query_weights_figure(
    weights_row: ArrayLike,
    *,
    query: int,
    labels: Sequence[str] | None = None,
    mask_row: ArrayLike | None = None,
    height: int = 300,
    query_label: str | None = None,
) -> go.Figure:
    """Bars: how much query ``query`` attends to each key (its row of the weights).
    ``labels`` name the keys (and the query, in self-attention); cross-attention passes the
    source's tokens as ``labels`` and the target token as ``query_label``."""
    w = _f32(weights_row).ravel()
    n = w.size
    allowed = np.ones(n, bool) if mask_row is None else np.asarray(mask_row, bool).ravel()
    colours = np.where(allowed, "#3b528b", MASK_BG)
    if query_label is None and labels is not None and query < len(labels):
        query_label = labels[query]
    qname = token_label(query_label) if query_label is not None else f"t{query}"
    data: list[dict] = [
        {
            "type": "bar",
            "x": np.arange(n, dtype=np.int16),
            "y": w,
            "marker": {
                "color": colours.tolist(),
                "pattern": {"shape": np.where(allowed, "", "x").tolist()},
            },
            "hovertemplate": f"a<sub>{query},%{{x}}</sub> = %{{y:.4f}}<extra></extra>",
            "name": _("weight"),
        }
    ]
    if not allowed.all() and n <= MAX_MASK_MARKERS:
        idx = np.nonzero(~allowed)[0]
        data.append(
            {
                "type": "scatter",
                "x": idx.astype(np.int16),
                "y": np.full(idx.size, 0.02, np.float32),
                "mode": "text",
                "text": [_("masked")] * idx.size,
                "textposition": "top center",
                "textfont": {"color": "#555", "size": 10},
                "name": _("masked"),
                "hoverinfo": "skip",
                "showlegend": False,
            }
        )
    layout = _layout(
        title=_("Weights of query {query} (“{name}”) over the keys").format(
            query=query, name=qname
        ),
        height=height,
        plot_bgcolor="white",
        # fixed margins, automargin off (see _fixed_margins); y ticks are "0.8" at most
        margin={**_fixed_margins(labels, None, n, 1), "l": int(10 + 24 + CHAR_PX * 4 + 6)},
        xaxis={"title": {"text": axis_text(KEY_J)}, "automargin": False, **_ticks(labels, n)},
        yaxis={
            "title": {"text": axis_text(WEIGHT_A)},
            "range": [0, 1.05],
            "showgrid": True,
            "automargin": False,
        },
        # for the board (keys.js): the row these bars are, the nouns of the axes
        meta={
            "query": int(query),
            "axes": axes_meta(xaxis=KEY_J, yaxis=WEIGHT_A),
            "value": "weights",
        },
    )
    return _figure(data, layout)


def weighted_sum_figure(
    values: ArrayLike,
    weights_row: ArrayLike,
    *,
    query: int,
    labels: Sequence[str] | None = None,
    top: int = 5,
    height: int = 320,
    title: str | None = None,
) -> go.Figure:
    """The output of one query as the weighted sum of the value vectors, as stacked bars.

    Bars per feature: a_j·v_j for the ``top`` keys with the largest weights, the rest
    summed as "other keys"; black diamonds mark the sum Σ_j a_j v_j (the output row).
    """
    v = np.asarray(values, dtype=np.float64)  # (M, d_v)
    w = np.asarray(weights_row, dtype=np.float64).ravel()  # (M,)
    if v.ndim != 2 or v.shape[0] != w.size:
        raise ValueError(f"values (M, d_v) and weights (M,) do not fit: {v.shape}, {w.shape}")
    contrib = w[:, None] * v  # (M, d_v)
    feats = np.arange(v.shape[1], dtype=np.int16)
    data = _contribution_bars(contrib, w, feats, query, labels, top)
    data.append(
        {
            "type": "scatter",
            "x": feats,
            "y": _f32(contrib.sum(axis=0)),
            "mode": "markers",
            "marker": {"symbol": "diamond", "size": 10, "color": "black"},
            "name": _("output {x} = Σ a·v").format(x=f"x′{_sub(str(query))}"),
            "hovertemplate": _("output, feature {f}: {y}").format(f="%{x}", y="%{y:.4f}")
            + "<extra></extra>",
        }
    )
    title = title or _("Output of query {query} = weighted sum of values").format(query=query)
    layout = _weighted_sum_layout(title, height, v.shape[1])
    return _figure(data, layout)


def _contribution_bars(
    contrib: np.ndarray,
    w: np.ndarray,
    feats: np.ndarray,
    query: int,
    labels: Sequence[str] | None,
    top: int,
) -> list[dict]:
    """The bars of :func:`weighted_sum_figure`: a_j·v_j (``contrib`` (M, d_v)) of the
    ``top`` keys with the largest weights ``w``, then the rest summed as "other keys"."""
    order = np.argsort(-w, kind="stable")
    keep = order[: min(top, w.size)]
    rest = order[min(top, w.size) :]
    data: list[dict] = []
    for j in keep:
        name = token_label(labels[j]) if labels is not None else f"t{j}"
        data.append(
            {
                "type": "bar",
                "x": feats,
                "y": _f32(contrib[j]),
                "name": f"a{_sub(str(query) + ',' + str(j))}·v{_sub(str(j))} ({name}, "
                f"a={i18n.fmt(w[j], '.3f')})",
                "hovertemplate": _("a·v of key {j}, feature {f}: {y}").format(
                    j=j, f="%{x}", y="%{y:.4f}"
                )
                + "<extra></extra>",
            }
        )
    if rest.size:
        data.append(
            {
                "type": "bar",
                "x": feats,
                "y": _f32(contrib[rest].sum(axis=0)),
                "name": (
                    _("1 other key (a={a})").format(a=i18n.fmt(w[rest].sum(), ".3f"))
                    if rest.size == 1
                    else ngettext(
                        "{n} other key (Σa={a})", "{n} other keys (Σa={a})", rest.size
                    ).format(n=rest.size, a=i18n.fmt(w[rest].sum(), ".3f"))
                ),
                "marker": {"color": "#cccccc"},
                "hovertemplate": _("other keys, feature {f}: {y}").format(f="%{x}", y="%{y:.4f}")
                + "<extra></extra>",
            }
        )
    return data


def _weighted_sum_layout(title: str, height: int, d: int) -> dict:
    """The layout of :func:`weighted_sum_figure` of ``d`` value features: stacked bars."""
    return _layout(
        title=title,
        height=height,
        barmode="relative",
        plot_bgcolor="white",
        legend={"font": {"size": 11}, "orientation": "v"},
        colorway=["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"],
        # fixed margins, automargin off (see _fixed_margins); y ticks like "−0.5"
        margin={"l": int(10 + 24 + CHAR_PX * 5 + 6), "r": 10, "t": 60, "b": 10 + 24 + 20},
        xaxis={
            "title": {"text": _("value feature")},
            "automargin": False,
            **({"dtick": 1} if d <= 32 else {}),
        },
        yaxis={
            "title": {"text": "a·v"},
            "zeroline": True,
            "zerolinecolor": "#888",
            "showgrid": True,
            "automargin": False,
        },
        meta={"axes": axes_meta(xaxis=VALUE_FEATURE, yaxis="a·v")},
    )


def small_multiples_figure(
    weights: ArrayLike,
    *,
    labels: Sequence[str] | None = None,
    layout: Layout = "rows",
    mask: ArrayLike | None = None,
    max_cols: int = 4,
    height_per_row: int = 260,
    key_labels: Sequence[str] | None = None,
    title: str | None = None,
    panel_titles: Sequence[str] | None = None,
) -> go.Figure:
    """Every head's weights (H, N, M) as a grid of heatmaps sharing one 0..1 colour bar.
    ``labels`` name the N queries and, unless ``key_labels`` (M) is given, the keys too;
    ``panel_titles`` (H of them) replace "head h" above the panels (a layer × head grid).
    Raises ``ValueError`` for N above :data:`MAX_SMALL_MULTIPLES_N` (the caller shows a
    summary instead; H tiny heatmaps of 100+ tokens are unreadable and heavy).
    Plain dicts (:func:`_figure`): ``make_subplots`` and per-axis updates cost ~100 ms.
    """
    w = _f32(weights)
    if w.ndim != 3:
        raise ValueError(f"weights must be (H, N, M), got shape {w.shape}")
    h, n, m = w.shape
    if max(n, m) > MAX_SMALL_MULTIPLES_N:
        raise ValueError(
            f"N={max(n, m)} is too large for per-head small multiples "
            f"(limit {MAX_SMALL_MULTIPLES_N}); show a summary instead"
        )
    # 1. the grid: cols x rows cells of the paper, with gaps between them
    cols = min(h, max_cols)
    rows = math.ceil(h / cols)
    h_gap = 0.04
    v_gap = min(0.3, 0.5 / rows) if rows > 1 else 0.0
    cell_w = (1 - h_gap * (cols - 1)) / cols
    cell_h = (1 - v_gap * (rows - 1)) / rows
    masked = None if mask is None else ~np.broadcast_to(np.asarray(mask, bool), (n, m))
    (x_lab, nx), (y_lab, ny) = _grid_labels(labels, key_labels, n, m, layout)
    x_ticks, y_ticks = _ticks(x_lab, nx), _ticks(y_lab, ny)
    data: list[dict] = []
    axes: dict[str, dict] = {}
    titles: list[dict] = []
    # 2. per head: its heatmap, its pair of axes in its cell, its title above the cell
    for i in range(h):
        row, col = divmod(i, cols)
        sfx = "" if i == 0 else str(i + 1)
        x0 = col * (cell_w + h_gap)
        y1 = 1 - row * (cell_h + v_gap)
        data.append(_head_heatmap(w[i], i, sfx, layout, masked))
        if max(n, m) <= MAX_CELL_TEXT_N:  # the board keeps them where the cells fit them
            data[-1].update(_cell_text(data[-1]["z"], ".2f"))
        axes.update(_panel_axes(sfx, (x0, y1), (cell_w, cell_h), (x_ticks, y_ticks), col == 0))
        name = _("head {i}").format(i=i) if panel_titles is None else panel_titles[i]
        titles.append(_cell_title(name, x0 + cell_w / 2, y1))
    # 3. the layout: margins that fit the labels, one shared 0..1 colour bar
    ly = _label_len(y_lab, ny)
    lx = _label_len(x_lab, nx)
    turned = CHAR_PX * lx * nx > 1000 / cols  # a subplot is about 1000/cols px wide
    bottom = 10 + (CHAR_PX * lx + 6 if turned else 20)
    lay = _layout(
        title=title or _grid_title(layout, masked is not None and masked.any()),
        height=max(300, rows * height_per_row + 60),
        margin={"l": int(10 + CHAR_PX * ly + 6), "r": 10, "t": 80, "b": int(bottom)},
        coloraxis={
            "colorscale": SEQUENTIAL,
            "cmin": 0.0,
            "cmax": 1.0,
            "colorbar": colorbar(_("weight"), thickness=12),
        },
        annotations=titles,
    )
    lay.update(axes)
    # for the board: a slide fits the grid to the screen with square cells (fit.js)
    grid = {"rows": rows, "cols": cols, "count": h, "n": n, "m": m, "layout": layout}
    lay["meta"] = {**lay.get("meta", {}), "grid": grid, "value": "weights"}
    return _figure(data, lay)


def _panel_axes(
    sfx: str, corner: tuple[float, float], cell: tuple[float, float], ticks: tuple, first: bool
) -> dict[str, dict]:
    """The x and y axes of one panel of :func:`small_multiples_figure` (axis suffix ``sfx``):
    its cell of the paper (``corner`` = its left and top, ``cell`` = width and height),
    the (x, y) tick fields, token labels only left of the ``first`` column. Fixed margins
    instead of plotly's automargin (a second drawing pass)."""
    (x0, y1), (cell_w, cell_h), (x_ticks, y_ticks) = corner, cell, ticks
    return {
        f"xaxis{sfx}": _axis(
            {
                "domain": [x0, min(1.0, x0 + cell_w)],
                "anchor": f"y{sfx}",
                "automargin": False,
                **x_ticks,
            }
        ),
        f"yaxis{sfx}": _axis(
            {
                "domain": [max(0.0, y1 - cell_h), y1],
                "anchor": f"x{sfx}",
                "autorange": "reversed",
                "automargin": False,
                **y_ticks,
                **({} if first else {"showticklabels": False}),
            }
        ),
    }


def _grid_title(layout: Layout, masked: bool) -> str:
    """The default title of :func:`small_multiples_figure`."""
    return (
        _("Weights of every head — ")
        + (_("rows = queries (PyTorch)") if layout == "rows" else _("columns = queries (UDL book)"))
        + (" · " + _("grey = masked") if masked else "")
    )


def _grid_labels(
    labels: Sequence[str] | None, key_labels: Sequence[str] | None, n: int, m: int, layout: Layout
) -> tuple[tuple[Sequence[str] | None, int], tuple[Sequence[str] | None, int]]:
    """((x labels, x cells), (y labels, y cells)) of a grid of (N queries, M keys) panels:
    labels only up to 12 tokens; rows: keys across, queries down; columns: the other way."""
    show = labels is not None and max(n, m) <= 12
    q_lab = labels if show else None
    k_lab = (labels if key_labels is None else key_labels) if show else None
    return ((k_lab, m), (q_lab, n)) if layout == "rows" else ((q_lab, n), (k_lab, m))


def _head_heatmap(
    w: np.ndarray, i: int, sfx: str, layout: Layout, masked: np.ndarray | None
) -> dict:
    """Head ``i``'s weights (N, M) as a heatmap on axes x{sfx}/y{sfx} (transposed for the
    column layout), masked cells as NaN gaps, coloured by the shared colour axis."""
    z = w if layout == "rows" else w.T
    if masked is not None:
        z = np.where(masked if layout == "rows" else masked.T, np.float32(np.nan), z)
    cell = "a<sub>%{y},%{x}</sub>" if layout == "rows" else "a<sub>%{x},%{y}</sub>"
    hover = _("head {i}").format(i=i) + f": {cell} = %{{z:.3f}}<extra></extra>"
    return {
        "type": "heatmap",
        "z": z,
        "coloraxis": "coloraxis",
        "showscale": False,  # the shared colour bar is the coloraxis'
        "hovertemplate": hover,
        "hoverongaps": False,
        "xaxis": f"x{sfx}",
        "yaxis": f"y{sfx}",
    }


def _cell_title(text: str, x: float, y: float) -> dict:
    """A title annotation centred above a grid cell whose top centre is (x, y) (paper)."""
    return {
        "text": text,
        "x": x,
        "y": y,
        "xref": "paper",
        "yref": "paper",
        "xanchor": "center",
        "yanchor": "bottom",
        "yshift": 6,  # the "head h" titles clear the grey plot area
        "showarrow": False,
        "font": dict(TITLE_FONT),
    }


def entropy_figure(
    entropy: ArrayLike,
    *,
    max_entropy: float | None = None,
    title: str | None = None,
    height: int = 300,
) -> go.Figure:
    """Bars of the mean row entropy per head (bits), with the uniform maximum log₂ N.
    ``title``: default "Entropy of each head's weights (mean over queries)" (translated)."""
    e = np.asarray(entropy, dtype=np.float64)
    if e.ndim == 2:  # (H, N) -> mean per head
        per_head, spread = e.mean(axis=1), e.std(axis=1)
    elif e.ndim == 1:
        per_head, spread = e, np.zeros_like(e)
    else:
        raise ValueError(f"entropy must be (H,) or (H, N), got shape {e.shape}")
    h = per_head.size
    data = [
        {
            "type": "bar",
            "x": np.arange(h, dtype=np.int16),
            "y": _f32(per_head),
            "error_y": {"type": "data", "array": _f32(spread), "visible": bool(spread.any())},
            "marker": {"color": "#21918c"},
            "hovertemplate": _("head {h}: mean entropy {e} bits").format(h="%{x}", e="%{y:.3f}")
            + "<extra></extra>",
            "name": _("entropy"),
        }
    ]
    extra: dict = {}
    if max_entropy is not None:  # a dashed line across the plot, labelled at its left end
        extra["shapes"] = [
            {
                "type": "line",
                "xref": "x domain",
                "x0": 0,
                "x1": 1,
                "yref": "y",
                "y0": float(max_entropy),
                "y1": float(max_entropy),
                "line": {"dash": "dash", "color": "#444"},
            }
        ]
        extra["annotations"] = [
            {
                "text": _("uniform: log₂ N = {bits} bits").format(
                    bits=i18n.fmt(max_entropy, ".2f")
                ),
                "xref": "x domain",
                "x": 0,
                "xanchor": "left",
                "yref": "y",
                "y": float(max_entropy),
                "yanchor": "bottom",
                "showarrow": False,
            }
        ]
    lay = _layout(
        title=title or _("Entropy of each head's weights (mean over queries)"),
        height=height,
        plot_bgcolor="white",
        xaxis={"title": {"text": axis_text(HEAD)}, "dtick": 1, "automargin": True},
        meta={"axes": axes_meta(xaxis=HEAD, yaxis=BITS)},
        yaxis={
            # the unit alone, the caption under the chart says what it means: the whole
            # note, 40% longer (issue 45's pseudo-language), ran past a phone's 300-px
            # chart into its title (issue 47)
            "title": {"text": _("bits")},
            "showgrid": True,
            "automargin": True,
        },
        **extra,
    )
    return _figure(data, lay)


def argmax_figure(
    weights: ArrayLike,
    *,
    labels: Sequence[str] | None = None,
    mask: ArrayLike | None = None,
    height: int = 300,
) -> go.Figure:
    """Heat map (head × query) of the key each query attends to most, coloured by its weight.

    Cell text is the key's label (for N up to :data:`MAX_TICK_LABELS`).
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 3:
        raise ValueError(f"weights must be (H, N, M), got shape {w.shape}")
    h, n, m = w.shape
    arg = w.argmax(axis=2)  # (H, N)
    top = w.max(axis=2)  # (H, N)
    dead = top == 0  # fully masked rows
    z = np.where(dead, np.nan, top)
    names = (
        [token_label(s) for s in labels]
        if labels is not None and len(labels) == m
        else [f"t{j}" for j in range(m)]
    )
    trace = {
        "z": _f32(z),
        "colorscale": SEQUENTIAL,
        "zmin": 0.0,
        "zmax": 1.0,
        "hoverongaps": False,
        "colorbar": colorbar(_("max weight"), thickness=12),
        "customdata": arg.astype(np.int16),
        "hovertemplate": _("head {h}, query {q} → key {k} (weight {w})").format(
            h="%{y}", q="%{x}", k="%{customdata}", w="%{z:.3f}"
        )
        + "<extra></extra>",
    }
    if n <= MAX_TICK_LABELS:
        trace["text"] = [
            ["" if dead[i, q] else names[arg[i, q]] for q in range(n)] for i in range(h)
        ]
        trace["texttemplate"] = "%{text}"
        trace["textfont"] = {"size": 11}
    trace["type"] = "heatmap"
    lay = _layout(
        title=_("Which key each query attends to most (per head)"),
        height=height,
        xaxis={"title": {"text": axis_text(QUERY_I)}, "automargin": True, **_ticks(labels, n)},
        meta={"axes": axes_meta(xaxis=QUERY_I, yaxis=HEAD), "value": "weights"},
        yaxis={
            "title": {"text": axis_text(HEAD)},
            "tickmode": "array",
            "tickvals": list(range(h)),
            "ticktext": [str(i) for i in range(h)],
            "range": [h - 0.5, -0.5],
            "automargin": True,
        },
    )
    return _figure([trace], lay)
