"""Plotly figure builders: pure functions from NumPy arrays to ``go.Figure`` (no Streamlit).

Conventions (every builder follows them, tests read them back from the figure data):

- Matrices arrive in row layout (one token per row, as the engine returns them); the
  ``layout`` argument chooses how they are drawn: ``"rows"`` keeps tokens as rows
  (PyTorch), ``"columns"`` transposes so that tokens are columns (the UDL book). Axis
  titles always say which.
- Heatmap axes are numeric (0..N-1, row 0 at the top) with token labels as tick text,
  so repeated words stay separate cells; with more than :data:`MAX_TICK_LABELS`
  tokens the ticks show indices only.
- Scores and outputs use a diverging scale centred at 0 (``RdBu`` reversed, ``zmid=0``);
  weights use a sequential scale fixed to 0..1 (``Viridis``). Both are colour-blind safe.
- Masked cells are NaN (gaps, drawn on a grey background, never a colour of the scale)
  and, for small N, crossed out by a "×" marker trace named ``"masked"``.
- Values are sent as float32 (plotly encodes them as base64), which keeps the payload
  small at large N; hover templates name the cell, e.g. ``q₂·k₅ / √d_k = 1.234``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "DIVERGING",
    "MASK_BG",
    "MAX_CELL_TEXT_N",
    "MAX_FULL_HEATMAP_N",
    "MAX_MASK_MARKERS",
    "MAX_SMALL_MULTIPLES_N",
    "MAX_TICK_LABELS",
    "NOTE_LINE",
    "SEQUENTIAL",
    "TEXT_COLOR",
    "Layout",
    "argmax_figure",
    "attention_figure",
    "bars_figure",
    "entropy_figure",
    "line_figure",
    "mask_figure",
    "matrix_figure",
    "plotly_text",
    "pool_blocks",
    "pool_factor",
    "query_weights_figure",
    "scale_label",
    "shared_range",
    "small_multiples_figure",
    "style_text",
    "softmax_factor_figure",
    "token_matrix_figure",
    "variance_figure",
    "weighted_sum_figure",
]

Layout = Literal["rows", "columns"]
Kind = Literal["diverging", "weights", "sequential"]

#: ColorBrewer RdBu reversed: negative = blue, 0 = white, positive = red (colour-blind
#: safe). An explicit list: plotly.js's own "RdBu" is a different, grey-centred scale.
DIVERGING = [
    [i / 10, c]
    for i, c in enumerate(
        [
            "rgb(5,48,97)",
            "rgb(33,102,172)",
            "rgb(67,147,195)",
            "rgb(146,197,222)",
            "rgb(209,229,240)",
            "rgb(247,247,247)",
            "rgb(253,219,199)",
            "rgb(244,165,130)",
            "rgb(214,96,77)",
            "rgb(178,24,43)",
            "rgb(103,0,31)",
        ]
    )
]
SEQUENTIAL = "Viridis"  #: weights 0 (dark) .. 1 (yellow)
MASK_BG = "#bdbdbd"  #: the grey behind masked (NaN) cells
MAX_TICK_LABELS = 40  #: above this many tokens, axes show indices instead of token labels
MAX_MASK_MARKERS = 48  #: above this N, masked cells are grey without "×" markers
MAX_SMALL_MULTIPLES_N = 64  #: above this N, per-head small multiples become a summary
MAX_CELL_TEXT_N = 8  #: up to this N, the weights heatmap writes each value in its cell
#: above this many tokens, a heatmap axis that counts tokens is drawn in blocks of
#: b = ceil(N / MAX_FULL_HEATMAP_N) tokens (mean of the unmasked cells of each block): a
#: 512×512 matrix in a ~350 px wide column would be two cells per pixel (and 1.5 MB of JSON)
MAX_FULL_HEATMAP_N = 128

#: Chart text for a lecture hall: Streamlit's own near-black text colour, ticks 13 px, axis
#: and colour-bar titles 14 px, figure titles 16 px. Set explicitly on every axis and colour
#: bar (Streamlit's chart theme would otherwise draw ticks ~11 px in light grey).
TEXT_COLOR = "#262730"
TICK_FONT = {"size": 13, "color": TEXT_COLOR}
AXIS_TITLE_FONT = {"size": 14, "color": TEXT_COLOR}
TITLE_FONT = {"size": 16, "color": TEXT_COLOR}
_FONT = {"size": 13, "color": TEXT_COLOR}
_SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
#: Opens a figure title's second, smaller line ("grey = masked", "4-token blocks (mean)").
NOTE_LINE = "<br><span style='font-size:13px;color:#555'>"


def _f32(a: ArrayLike) -> NDArray[np.float32]:
    return np.ascontiguousarray(np.asarray(a, dtype=np.float32))


def colorbar(title: str | None = None, **extra) -> dict:
    """A colour bar with the shared text style (ticks 13 px, title 14 px, near-black)."""
    out = {
        "tickfont": dict(TICK_FONT),
        "title": {"font": dict(AXIS_TITLE_FONT), "side": "right"},
        **extra,
    }
    if title is not None:
        out["title"]["text"] = title
    return out


def _axis(axis: dict | None = None) -> dict:
    """``axis`` (a layout.xaxis/yaxis dict) with the shared tick and title fonts added."""
    a = dict(axis or {})
    a.setdefault("tickfont", dict(TICK_FONT))
    title = a.get("title")
    title = {"text": title} if isinstance(title, str) else dict(title or {})
    title.setdefault("font", dict(AXIS_TITLE_FONT))
    a["title"] = title
    return a


def style_text(fig: go.Figure) -> go.Figure:
    """Apply the shared chart text style to a ``go.Figure`` built with plotly's own API:
    every x/y axis (subplots included) and every trace's colour bar.
    Builders of plain-dict figures get the same through :func:`_layout`/:func:`colorbar`."""
    fig.update_layout(font=dict(_FONT))
    # Margins: these charts (bars, lines) start from small margins and let plotly.js grow
    # them to fit the tick labels and axis titles (plotly's default is off; Streamlit's
    # theme used to turn it on). A builder with fixed margins sets automargin False after.
    fig.update_xaxes(tickfont=TICK_FONT, title_font=AXIS_TITLE_FONT, automargin=True)
    fig.update_yaxes(tickfont=TICK_FONT, title_font=AXIS_TITLE_FONT, automargin=True)
    for trace in fig.data:
        if "colorbar" in trace:
            trace.update(colorbar={"tickfont": TICK_FONT, "title": {"font": AXIS_TITLE_FONT}})
    return fig


def _layout(*, title: str, height: int, **extra) -> dict:
    """The shared layout as a plain dict (see :func:`_figure`)."""
    out = {
        "template": "none",
        "title": {"text": title, "x": 0.0, "xanchor": "left", "font": dict(TITLE_FONT)},
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        "font": dict(_FONT),
        "plot_bgcolor": MASK_BG,
        "paper_bgcolor": "white",
    }
    out.update(extra)
    out["xaxis"] = _axis(out.get("xaxis"))
    out["yaxis"] = _axis(out.get("yaxis"))
    return out


def _figure(data: list[dict], layout: dict) -> go.Figure:
    """A figure from plain dicts, without plotly's per-property validation.

    Validation costs ~25 ms per heatmap figure, more than everything else in a rerun
    of the playground; the dicts here use only documented plotly properties (the tests
    read them back, and streamlit serialises the figure with validate=False anyway).
    """
    return go.Figure({"data": data, "layout": layout}, _validate=False)


def plotly_text(label: object) -> str:
    """``label`` as plotly text that is drawn literally: ``&``, ``<``, ``>`` and ``%`` as
    character references.

    Plotly reads a small HTML subset in every text it draws (tick labels, titles, legend
    names, hover labels, cell text): ``<b>`` is bold, ``<a href=…>`` a link, ``&lt;`` a
    "<". Token labels come from users (typed text, CSV uploads), so every builder passes
    them through this function; a caller that puts a label in a ``title`` must do the same.
    ``%`` is escaped too, so a label such as ``%{z}`` stays text even in a hover template.
    """
    return (
        str(label)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("%", "&#37;")
    )


def _tick_step(n: int, max_ticks: int = 10) -> int:
    """A round step (1, 2, 5, 10, 20, 50, …) giving at most ``max_ticks`` integer ticks."""
    step = 1
    while math.ceil(n / step) > max_ticks:
        step = step * 5 // 2 if str(step)[0] == "2" else step * 2
    return step


def scale_label(scale: float, d_k: int) -> str:
    """How the scores were scaled, for titles and hover text: "/ √d_k", "× 8", or ""."""
    if d_k >= 1 and math.isclose(scale, 1.0 / math.sqrt(d_k), rel_tol=1e-9):
        return " / √d<sub>k</sub>"
    if scale == 1.0:
        return ""
    return f" × {scale:.4g}"


def _ticks(labels: Sequence[str] | None, n: int) -> dict:
    """Ticks of an axis that counts tokens or features 0..n-1: the (escaped) labels for
    up to :data:`MAX_TICK_LABELS` labelled cells, else integer indices at a round step
    (plotly's automatic ticks put half-cell ticks such as 0.5 on short axes)."""
    if labels is not None and n <= MAX_TICK_LABELS:
        return {
            "tickmode": "array",
            "tickvals": list(range(n)),
            "ticktext": [plotly_text(s) for s in labels],
            "showgrid": False,
            "zeroline": False,
        }
    return {
        "tickmode": "linear",
        "tick0": 0,
        "dtick": _tick_step(n),
        "showgrid": False,
        "zeroline": False,
    }


def shared_range(*arrays: ArrayLike) -> float:
    """One colour range for charts meant to be compared: the largest finite |value| of
    all of ``arrays`` (1.0 if they have none), to pass as their ``zmax``. With a range
    each, a matrix and the same matrix halved would look alike."""
    m = 0.0
    for a in arrays:
        v = np.abs(np.asarray(a, dtype=np.float64))
        v = v[np.isfinite(v)]
        if v.size:
            m = max(m, float(v.max()))
    return m or 1.0


def _colour(kind: Kind, z: np.ndarray, zmax: float | None) -> dict:
    if kind == "weights":
        return {"colorscale": SEQUENTIAL, "zmin": 0.0, "zmax": 1.0}
    if kind == "sequential":
        return {"colorscale": SEQUENTIAL}
    finite = z[np.isfinite(z)]
    m = zmax if zmax is not None else (float(np.max(np.abs(finite))) if finite.size else 1.0)
    m = m or 1.0
    return {"colorscale": DIVERGING, "zmid": 0.0, "zmin": -m, "zmax": m}


CHAR_PX = 7.5  #: average width of a tick label character at font size 13
TITLE_CHAR_PX = 7.8  #: average width of an axis title character at font size 14
TITLE_LINE_PX = 18  #: the height of a line of a figure title (16 px type)


def pool_factor(n: int) -> int:
    """Tokens per block along an axis of ``n`` tokens: 1 up to :data:`MAX_FULL_HEATMAP_N`,
    else ceil(n / MAX_FULL_HEATMAP_N) (N=512 -> 4, N=200 -> 2)."""
    return max(1, math.ceil(n / MAX_FULL_HEATMAP_N))


def pool_blocks(
    z: ArrayLike, rows: int = 1, cols: int = 1, masked: ArrayLike | None = None
) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
    """Mean of ``z`` over blocks of ``rows`` × ``cols`` cells, ignoring masked and NaN cells.

    Returns ``(means, empty)``: ``means`` has shape (ceil(ny / rows), ceil(nx / cols)) (the
    last block of an axis may be shorter), ``empty`` marks blocks without any unmasked finite
    cell; their mean is NaN (drawn as masked). Sums are taken in float64.
    """
    a = np.asarray(z, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"pool_blocks needs a 2-D array, got shape {a.shape}")
    if rows < 1 or cols < 1:
        raise ValueError(f"block sizes must be >= 1, got {rows}×{cols}")
    valid = np.isfinite(a)
    if masked is not None:
        valid &= ~np.asarray(masked, dtype=bool)
    ny, nx = a.shape
    by, bx = math.ceil(ny / rows), math.ceil(nx / cols)
    pad = ((0, by * rows - ny), (0, bx * cols - nx))
    vals = np.pad(np.where(valid, a, 0.0), pad).reshape(by, rows, bx, cols)
    cnt = np.pad(valid, pad).reshape(by, rows, bx, cols).sum(axis=(1, 3))
    sums = vals.sum(axis=(1, 3))
    empty = cnt == 0
    means = np.where(empty, np.nan, sums / np.maximum(cnt, 1))
    return means.astype(np.float32), empty


def _short_number(v: float, fmt: str) -> str:
    """``v`` formatted with ``fmt``, without the leading zero: 0.19 -> ".19", -0.5 -> "-.50"."""
    s = format(float(v), fmt)
    return s.replace("0.", ".", 1) if s.startswith(("0.", "-0.")) else s


def _label_len(labels: Sequence[str] | None, n: int) -> int:
    """Characters of the longest tick label of an axis drawn by :func:`_ticks`."""
    if labels is not None and n <= MAX_TICK_LABELS:
        return max((len(str(s)) for s in labels), default=1)
    return len(str(max(n - 1, 0)))


def _fit_axis_title(text: str, plot_px: float, top_px: float, title_lines: int) -> str:
    """The longest form of a vertical axis title that does not reach into the figure's
    title. The title is centred on the plot and may stick out of it by what the top margin
    (``top_px``) leaves free above the figure's title (``title_lines`` lines, left-aligned
    above the axis title); beside a shorter plot "query i (row) — rows = tokens (PyTorch)"
    loses "(PyTorch)", then everything after its " — " (the masking page's 330 px charts
    had it cross their "grey = masked" line). The margins stay as they are: at 1280 px the
    plots keep their width."""
    free = top_px - (TITLE_LINE_PX * title_lines + 16)
    forms = [text]
    if " — " in text:
        head, tail = text.split(" — ", 1)
        short = tail.replace(" (PyTorch)", "").replace(" (UDL book)", "")
        forms += [f"{head} — {short}"] if short != tail else []
        forms.append(head)
    for form in forms:
        if (len(form) * TITLE_CHAR_PX - plot_px) / 2 <= free:
            return form
    return forms[-1]


def _fixed_margins(x_labels, y_labels, nx: int, ny: int) -> dict:
    """Margins that fit the tick labels and the axis titles, for axes with automargin off.

    With automargin on, plotly.js measures every tick label after drawing and draws the
    figure again with grown margins: about a third of the browser's time per heatmap
    (bench/browser_latency.py). X labels that cannot sit side by side are turned by
    plotly (up to 90°), so the bottom margin then fits the longest label.
    """
    lx, ly = _label_len(x_labels, nx), _label_len(y_labels, ny)
    left = 10 + 24 + CHAR_PX * ly + 6
    turned = CHAR_PX * lx * nx > 280
    bottom = 10 + 24 + (CHAR_PX * lx + 6 if turned else 20)
    return {"l": int(left), "r": 10, "t": 60, "b": int(bottom)}


def matrix_figure(
    z: ArrayLike,
    *,
    title: str,
    x_title: str,
    y_title: str,
    hover: str,
    kind: Kind = "diverging",
    x_labels: Sequence[str] | None = None,
    y_labels: Sequence[str] | None = None,
    masked: ArrayLike | None = None,
    height: int = 380,
    zmax: float | None = None,
    colorbar_title: str | None = None,
    colorscale: str | list | None = None,
    showscale: bool = True,
    separators: tuple[str, int] | None = None,
    cell_text: str | None = None,
    token_axes: str = "",
    pooled_hover: str | None = None,
) -> go.Figure:
    """One heatmap, drawn as given (row 0 at the top).

    ``cell_text`` (a format such as ``".2f"``) writes each value in its cell, in black or
    white, whichever contrasts with the cell colour (plotly's "auto" text colour); a
    leading "0" is dropped (".19") so that the numbers fit narrow cells (~21 px at 1280 px).

    ``colorscale`` overrides the kind's scale; ``separators=("x", k)`` draws a line
    every k columns (("y", k): every k rows), e.g. between the heads of a concatenation.

    ``masked`` (bool, same shape as ``z``): True cells become NaN gaps on the grey
    background, crossed out with "×" markers when the matrix is small.
    ``hover`` is a plotly hovertemplate using %{x}, %{y} (indices) and %{z}.

    ``token_axes`` ("x", "y", "xy" or ""): the axes that count tokens. One with more than
    :data:`MAX_FULL_HEATMAP_N` cells is drawn in blocks of :func:`pool_factor` cells (the
    mean of each block's unmasked cells, :func:`pool_blocks`); a block whose cells are all
    masked is drawn as masked. The axes keep their token coordinates (a block of b tokens
    spans b units, hover %{x}/%{y} is its first token), the title says "b×b-token blocks"
    and the hover uses ``pooled_hover`` (default: "mean of the block from row …").
    """
    # 1. the values, masked cells as NaN gaps; pooled into blocks above the full-size limit
    z, m = _masked_matrix(z, masked)
    ny, nx = z.shape
    by = pool_factor(ny) if "y" in token_axes else 1
    bx = pool_factor(nx) if "x" in token_axes else 1
    pooled = by > 1 or bx > 1
    notes = []  # a second title line: long single-line titles are cut in narrow columns
    if pooled:
        z, empty = pool_blocks(z, by, bx, masked=m)
        m = empty if m is not None else None
        cell_text = None
        hover = pooled_hover or (
            f"mean of the {by}×{bx} block from row %{{y}}, column %{{x}} = %{{z:.4f}}"
        )
        notes.append(
            f"{by}×{bx} blocks (mean)"
            if by > 1 and bx > 1
            else f"{max(by, bx)}-token blocks (mean)"
        )
    # 2. the heatmap, with the values written in the cells
    colour = _colour(kind, z, zmax)
    if colorscale is not None:
        colour["colorscale"] = colorscale
    heatmap = {
        "type": "heatmap",
        "z": z,
        "hovertemplate": hover + "<extra></extra>",
        "hoverongaps": False,
        "colorbar": colorbar(colorbar_title or "", thickness=12),
        "showscale": showscale,
        "name": title,
        **colour,
    }
    if pooled:  # block k of an axis starts at token k·b and spans b token units
        heatmap.update({"x0": 0, "dx": bx, "y0": 0, "dy": by})
    if cell_text is not None:
        heatmap.update(_cell_text(z, cell_text))
    data: list[dict] = [heatmap]
    # 3. the masked cells: crossed out when the matrix is small, noted in the title
    if m is not None and m.any():
        if max(nx, ny) <= MAX_MASK_MARKERS and not pooled:
            data.append(_mask_markers(m))
        notes.append("grey = masked")
    if notes:
        title += f"{NOTE_LINE}{' · '.join(notes)}</span>"
    # 4. the layout: separator lines, margins that fit the labels, token axes
    margin = _fixed_margins(x_labels, y_labels, nx, ny)
    y_title = _fit_axis_title(
        y_title, height - margin["t"] - margin["b"], margin["t"], title.count("<br>") + 1
    )
    layout = _layout(
        title=title,
        height=height,
        shapes=_separator_lines(separators, nx, ny),
        margin=margin,
        xaxis=_matrix_axis(x_title, x_labels, nx, bx, reverse=False),
        yaxis=_matrix_axis(y_title, y_labels, ny, by, reverse=True),
    )
    return _figure(data, layout)


def _masked_matrix(z: ArrayLike, masked: ArrayLike | None) -> tuple[np.ndarray, np.ndarray | None]:
    """z as float32 (ny, nx), masked cells NaN; the mask as bool (ny, nx) or None."""
    z = _f32(z)
    if z.ndim != 2:
        raise ValueError(f"matrix_figure needs a 2-D array, got shape {z.shape}")
    if masked is None:
        return z, None
    m = np.asarray(masked, dtype=bool)
    if m.shape != z.shape:
        raise ValueError(f"mask shape {m.shape} does not match the matrix {z.shape}")
    return np.where(m, np.float32(np.nan), z), m


def _cell_text(z: np.ndarray, fmt: str) -> dict:
    """The heatmap fields that write each finite value in its cell (format ``fmt``), in
    black or white against the cell colour; gaps stay empty."""
    return {
        "text": [["" if not np.isfinite(v) else _short_number(v, fmt) for v in row] for row in z],
        "texttemplate": "%{text}",
        "textfont": {"size": 12, "color": "auto"},
    }


def _separator_lines(separators: tuple[str, int] | None, nx: int, ny: int) -> list[dict]:
    """Black lines every k columns (``("x", k)``) or rows (``("y", k)``), or none."""
    if separators is None:
        return []
    axis, every = separators
    count = nx if axis == "x" else ny
    line = {"color": "black", "width": 2}
    if axis == "x":
        return [
            {"type": "line", "xref": "x", "yref": "paper", "x0": c - 0.5, "x1": c - 0.5,
             "y0": 0, "y1": 1, "line": line}
            for c in range(every, count, every)
        ]  # fmt: skip
    return [
        {"type": "line", "xref": "paper", "yref": "y", "y0": c - 0.5, "y1": c - 0.5,
         "x0": 0, "x1": 1, "line": line}
        for c in range(every, count, every)
    ]  # fmt: skip


def _mask_markers(m: np.ndarray) -> dict:
    """A scatter trace of "×" markers on the masked cells of ``m`` (ny, nx)."""
    yy, xx = np.nonzero(m)
    return {
        "type": "scatter",
        "x": xx.astype(np.int16),
        "y": yy.astype(np.int16),
        "mode": "markers",
        "marker": {"symbol": "x-thin", "size": 9, "line": {"width": 1.5, "color": "#555"}},
        "name": "masked",
        "hovertemplate": "masked (−∞ before softmax, weight 0)<extra></extra>",
        "showlegend": False,
    }


def _matrix_axis(
    title: str, labels: Sequence[str] | None, n: int, b: int, *, reverse: bool
) -> dict:
    """One axis of a heatmap of ``n`` cells drawn in blocks of ``b``: its title, a range
    that fits the cells (reversed for y: row 0 at the top) and the tick labels."""
    span = [-b / 2, math.ceil(n / b) * b - b / 2]
    return {
        "title": {"text": title},
        "range": span[::-1] if reverse else span,
        "automargin": False,
        **_ticks(labels, n),
    }


def _sub(s: str) -> str:
    return f"<sub>{s}</sub>"


def attention_figure(
    matrix: ArrayLike,
    *,
    what: Literal["scores", "weights"],
    labels: Sequence[str] | None = None,
    layout: Layout = "rows",
    mask: ArrayLike | None = None,
    scale: float = 1.0,
    d_k: int = 1,
    title: str | None = None,
    height: int = 380,
    zmax: float | None = None,
) -> go.Figure:
    """Scores (before softmax, after scaling) or softmax weights of one head.

    ``matrix`` is (N queries, M keys) in row layout; ``mask`` (N, M) bool, True = may
    attend (the engine's convention). With ``layout="columns"`` the matrix is drawn
    transposed (keys down, queries across), as the UDL book's ``softmax_cols``.
    ``zmax``: the scores' colour range ±zmax (default: their own largest |value|); two
    charts meant to be compared get the same one (:func:`shared_range`). Weights always
    run from 0 to 1.
    """
    a = np.asarray(matrix)
    if a.ndim != 2:
        raise ValueError(f"attention_figure needs (N, M), got shape {a.shape}")
    masked = None if mask is None else ~np.broadcast_to(np.asarray(mask, dtype=bool), a.shape)
    sl = scale_label(scale, d_k)
    if layout == "rows":
        z, mk = a, masked
        qi, kj = "%{y}", "%{x}"
        y_title, x_title = "query i (row) — rows = tokens (PyTorch)", "key j (column)"
    elif layout == "columns":
        z, mk = a.T, None if masked is None else masked.T
        qi, kj = "%{x}", "%{y}"
        y_title, x_title = "key j (row)", "query i (column) — columns = tokens (UDL book)"
    else:
        raise ValueError(f"layout must be 'rows' or 'columns', got {layout!r}")
    if what == "scores":
        hover = f"q{_sub(qi)}·k{_sub(kj)}{sl} = %{{z:.4f}}"
        kind: Kind = "diverging"
        default_title = f"Scores S = QKᵀ{sl.replace('<sub>k</sub>', '_k')}"
        cb = "score"
    elif what == "weights":
        hover = (
            f"a{_sub(qi + ',' + kj)} = softmax weight of k{_sub(kj)} for q{_sub(qi)} = %{{z:.4f}}"
        )
        kind = "weights"
        default_title = "Weights A = softmax(S)"
        cb = "weight"
    else:
        raise ValueError(f"what must be 'scores' or 'weights', got {what!r}")
    n_rows, n_cols = z.shape
    b = pool_factor(max(n_rows, n_cols))
    pooled_hover = (
        f"{b}×{b} block from query {qi}, key {kj} (to +{b - 1}): "
        f"mean {'score' if what == 'scores' else 'weight'} = %{{z:.4f}}"
    )
    return matrix_figure(
        z,
        title=title or default_title,
        x_title=x_title,
        y_title=y_title,
        hover=hover,
        kind=kind,
        x_labels=labels if labels is not None and len(labels) == n_cols else None,
        y_labels=labels if labels is not None and len(labels) == n_rows else None,
        masked=mk,
        height=height,
        colorbar_title=cb,
        cell_text=".2f" if what == "weights" and max(n_rows, n_cols) <= MAX_CELL_TEXT_N else None,
        token_axes="xy",
        pooled_hover=pooled_hover,
        zmax=zmax,
    )


def token_matrix_figure(
    matrix: ArrayLike,
    *,
    name: str,
    labels: Sequence[str] | None = None,
    layout: Layout = "rows",
    title: str | None = None,
    height: int = 380,
    feature_name: str = "feature",
    feature_groups: int | None = None,
    zmax: float | None = None,
) -> go.Figure:
    """A per-token matrix (N tokens, d features): X, Q, K, V, a head's output, ...

    Diverging colour scale centred at 0, ±``zmax`` (default: the matrix's own largest
    |value|; :func:`shared_range` for charts meant to be compared). Hover: "Q[token 2,
    feature 5] = …". ``feature_groups=k`` draws a line every k features (the heads of a
    concatenation).
    """
    a = np.asarray(matrix)
    if a.ndim != 2:
        raise ValueError(f"token_matrix_figure needs (N, d), got shape {a.shape}")
    n, d = a.shape
    hover_rows = f"{name}[token %{{y}}, {feature_name} %{{x}}] = %{{z:.4f}}"
    hover_cols = f"{name}[{feature_name} %{{y}}, token %{{x}}] = %{{z:.4f}}"
    if layout == "rows":
        return matrix_figure(
            a,
            title=title or f"{name} ({n}×{d})",
            x_title=feature_name,
            y_title="token (row) — rows = tokens (PyTorch)",
            hover=hover_rows,
            y_labels=labels,
            x_labels=None,
            height=height,
            separators=None if not feature_groups else ("x", feature_groups),
            token_axes="y",
            pooled_hover=f"mean of {name} over tokens %{{y}} to +{pool_factor(n) - 1}, "
            f"{feature_name} %{{x}} = %{{z:.4f}}",
            zmax=zmax,
        )
    if layout == "columns":
        return matrix_figure(
            a.T,
            title=title or f"{name}, transposed ({d}×{n})",
            x_title="token (column) — columns = tokens (UDL book)",
            y_title=feature_name,
            hover=hover_cols,
            x_labels=labels,
            y_labels=None,
            height=height,
            separators=None if not feature_groups else ("y", feature_groups),
            token_axes="x",
            pooled_hover=f"mean of {name} over tokens %{{x}} to +{pool_factor(n) - 1}, "
            f"{feature_name} %{{y}} = %{{z:.4f}}",
            zmax=zmax,
        )
    raise ValueError(f"layout must be 'rows' or 'columns', got {layout!r}")


def mask_figure(
    mask: ArrayLike,
    *,
    labels: Sequence[str] | None = None,
    layout: Layout = "rows",
    title: str = "Mask: who may attend to whom",
    height: int = 380,
) -> go.Figure:
    """The boolean mask (N queries, M keys; True = may attend): green = allowed, grey × = masked."""
    m = np.asarray(mask, dtype=bool)
    if m.ndim != 2:
        raise ValueError(f"mask must be (N, M), got shape {m.shape}")
    z = np.ones(m.shape, np.float32)
    if layout == "columns":
        m, z = m.T, z.T
        y_title, x_title = "key j (row)", "query i (column) — columns = tokens (UDL book)"
        hover = "query %{x} may attend to key %{y}"
    else:
        y_title, x_title = "query i (row) — rows = tokens (PyTorch)", "key j (column)"
        hover = "query %{y} may attend to key %{x}"
    return matrix_figure(
        z,
        title=title,
        x_title=x_title,
        y_title=y_title,
        hover=hover,
        kind="sequential",
        x_labels=labels,
        y_labels=labels,
        masked=~m,
        height=height,
        colorscale=[[0.0, "#a6dba0"], [1.0, "#a6dba0"]],
        showscale=False,
        token_axes="xy",
        pooled_hover="a block with at least one allowed pair, from query "
        + ("%{x}, key %{y}" if layout == "columns" else "%{y}, key %{x}"),
    )


def query_weights_figure(
    weights_row: ArrayLike,
    *,
    query: int,
    labels: Sequence[str] | None = None,
    mask_row: ArrayLike | None = None,
    height: int = 300,
) -> go.Figure:
    """Bars: how much query ``query`` attends to each key (its row of the weights)."""
    w = _f32(weights_row).ravel()
    n = w.size
    allowed = np.ones(n, bool) if mask_row is None else np.asarray(mask_row, bool).ravel()
    colours = np.where(allowed, "#3b528b", MASK_BG)
    qname = plotly_text(labels[query]) if labels is not None else f"t{query}"
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
            "name": "weight",
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
                "text": ["masked"] * idx.size,
                "textposition": "top center",
                "textfont": {"color": "#555", "size": 10},
                "name": "masked",
                "hoverinfo": "skip",
                "showlegend": False,
            }
        )
    layout = _layout(
        title=f"Weights of query {query} (“{qname}”) over the keys",
        height=height,
        plot_bgcolor="white",
        # fixed margins, automargin off (see _fixed_margins); y ticks are "0.8" at most
        margin={**_fixed_margins(labels, None, n, 1), "l": int(10 + 24 + CHAR_PX * 4 + 6)},
        xaxis={"title": {"text": "key j"}, "automargin": False, **_ticks(labels, n)},
        yaxis={
            "title": {"text": "weight a"},
            "range": [0, 1.05],
            "showgrid": True,
            "automargin": False,
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
    order = np.argsort(-w, kind="stable")
    keep = order[: min(top, w.size)]
    rest = order[min(top, w.size) :]
    d = v.shape[1]
    feats = np.arange(d, dtype=np.int16)
    data: list[dict] = []
    for j in keep:
        name = plotly_text(labels[j]) if labels is not None else f"t{j}"
        data.append(
            {
                "type": "bar",
                "x": feats,
                "y": _f32(contrib[j]),
                "name": f"a{_sub(str(query) + ',' + str(j))}·v{_sub(str(j))} ({name}, "
                f"a={w[j]:.3f})",
                "hovertemplate": f"a·v of key {j}, feature %{{x}}: %{{y:.4f}}<extra></extra>",
            }
        )
    if rest.size:
        data.append(
            {
                "type": "bar",
                "x": feats,
                "y": _f32(contrib[rest].sum(axis=0)),
                "name": (
                    f"1 other key (a={w[rest].sum():.3f})"
                    if rest.size == 1
                    else f"{rest.size} other keys (Σa={w[rest].sum():.3f})"
                ),
                "marker": {"color": "#cccccc"},
                "hovertemplate": "other keys, feature %{x}: %{y:.4f}<extra></extra>",
            }
        )
    data.append(
        {
            "type": "scatter",
            "x": feats,
            "y": _f32(contrib.sum(axis=0)),
            "mode": "markers",
            "marker": {"symbol": "diamond", "size": 10, "color": "black"},
            "name": f"output x′{_sub(str(query))} = Σ a·v",
            "hovertemplate": "output, feature %{x}: %{y:.4f}<extra></extra>",
        }
    )
    layout = _layout(
        title=title or f"Output of query {query} = weighted sum of values",
        height=height,
        barmode="relative",
        plot_bgcolor="white",
        legend={"font": {"size": 11}, "orientation": "v"},
        colorway=["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"],
        # fixed margins, automargin off (see _fixed_margins); y ticks like "−0.5"
        margin={"l": int(10 + 24 + CHAR_PX * 5 + 6), "r": 10, "t": 60, "b": 10 + 24 + 20},
        xaxis={
            "title": {"text": "value feature"},
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
    )
    return _figure(data, layout)


def small_multiples_figure(
    weights: ArrayLike,
    *,
    labels: Sequence[str] | None = None,
    layout: Layout = "rows",
    mask: ArrayLike | None = None,
    max_cols: int = 4,
    height_per_row: int = 260,
) -> go.Figure:
    """Every head's weights (H, N, N) as a grid of heatmaps sharing one 0..1 colour bar.

    Raises ``ValueError`` for N above :data:`MAX_SMALL_MULTIPLES_N` (the caller shows a
    summary instead; H tiny heatmaps of 100+ tokens are unreadable and heavy).
    Built as plain dicts (see :func:`_figure`): ``make_subplots`` and plotly's per-axis
    updates cost ~100 ms a figure, more than the rest of the multi-head page's rerun.
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
    show = labels is not None and max(n, m) <= 12
    x_ticks = _ticks(labels if show else None, m)
    y_ticks = _ticks(labels if show else None, n)
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
        # fixed margins instead of plotly's automargin (a second drawing pass)
        axes[f"xaxis{sfx}"] = _axis(
            {"domain": [x0, x0 + cell_w], "anchor": f"y{sfx}", "automargin": False, **x_ticks}
        )
        axes[f"yaxis{sfx}"] = _axis(
            {
                "domain": [y1 - cell_h, y1],
                "anchor": f"x{sfx}",
                "autorange": "reversed",
                "automargin": False,
                **y_ticks,
                # token labels only left of the first column
                **({} if col == 0 else {"showticklabels": False}),
            }
        )
        titles.append(_cell_title(f"head {i}", x0 + cell_w / 2, y1))
    # 3. the layout: margins that fit the labels, one shared 0..1 colour bar
    ly = _label_len(labels if show else None, n)
    lx = _label_len(labels if show else None, m)
    turned = CHAR_PX * lx * m > 1000 / cols  # a subplot is about 1000/cols px wide
    bottom = 10 + (CHAR_PX * lx + 6 if turned else 20)
    lay = _layout(
        title=(
            "Weights of every head — "
            + ("rows = queries (PyTorch)" if layout == "rows" else "columns = queries (UDL book)")
            + (" · grey = masked" if masked is not None and masked.any() else "")
        ),
        height=max(300, rows * height_per_row + 60),
        margin={"l": int(10 + CHAR_PX * ly + 6), "r": 10, "t": 80, "b": int(bottom)},
        coloraxis={
            "colorscale": SEQUENTIAL,
            "cmin": 0.0,
            "cmax": 1.0,
            "colorbar": colorbar("weight", thickness=12),
        },
        annotations=titles,
    )
    lay.update(axes)
    return _figure(data, lay)


def _head_heatmap(
    w: np.ndarray, i: int, sfx: str, layout: Layout, masked: np.ndarray | None
) -> dict:
    """Head ``i``'s weights (N, M) as a heatmap on axes x{sfx}/y{sfx} (transposed for the
    column layout), masked cells as NaN gaps, coloured by the shared colour axis."""
    z = w if layout == "rows" else w.T
    if masked is not None:
        z = np.where(masked if layout == "rows" else masked.T, np.float32(np.nan), z)
    if layout == "rows":
        hover = f"head {i}: a<sub>%{{y}},%{{x}}</sub> = %{{z:.3f}}<extra></extra>"
    else:
        hover = f"head {i}: a<sub>%{{x}},%{{y}}</sub> = %{{z:.3f}}<extra></extra>"
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
    title: str = "Entropy of each head's weights (mean over queries)",
    height: int = 300,
) -> go.Figure:
    """Bars of the mean row entropy per head (bits), with the uniform maximum log₂ N."""
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
            "hovertemplate": "head %{x}: mean entropy %{y:.3f} bits<extra></extra>",
            "name": "entropy",
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
                "text": f"uniform: log₂ N = {max_entropy:.2f} bits",
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
        title=title,
        height=height,
        plot_bgcolor="white",
        xaxis={"title": {"text": "head"}, "dtick": 1, "automargin": True},
        yaxis={
            "title": {"text": "bits (0 = one key, high = spread out)"},
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
        [plotly_text(s) for s in labels]
        if labels is not None and len(labels) == m
        else [f"t{j}" for j in range(m)]
    )
    trace = {
        "z": _f32(z),
        "colorscale": SEQUENTIAL,
        "zmin": 0.0,
        "zmax": 1.0,
        "hoverongaps": False,
        "colorbar": colorbar("max weight", thickness=12),
        "customdata": arg.astype(np.int16),
        "hovertemplate": "head %{y}, query %{x} → key %{customdata} (weight %{z:.3f})"
        "<extra></extra>",
    }
    if n <= MAX_TICK_LABELS:
        trace["text"] = [
            ["" if dead[i, q] else names[arg[i, q]] for q in range(n)] for i in range(h)
        ]
        trace["texttemplate"] = "%{text}"
        trace["textfont"] = {"size": 11}
    trace["type"] = "heatmap"
    lay = _layout(
        title="Which key each query attends to most (per head)",
        height=height,
        xaxis={"title": {"text": "query i"}, "automargin": True, **_ticks(labels, n)},
        yaxis={
            "title": {"text": "head"},
            "tickmode": "array",
            "tickvals": list(range(h)),
            "ticktext": [str(i) for i in range(h)],
            "range": [h - 0.5, -0.5],
            "automargin": True,
        },
    )
    return _figure([trace], lay)


def bars_figure(
    series: dict[str, ArrayLike],
    *,
    x_labels: Sequence[str],
    title: str,
    x_title: str,
    y_title: str,
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
    yaxis = {"title": {"text": y_title}, "showgrid": True, "automargin": True}
    if y_range is not None:
        yaxis["range"] = list(y_range)
    lay = _layout(
        title=title,
        height=height,
        barmode="group",
        plot_bgcolor="white",
        xaxis={"title": {"text": x_title}, "type": "category", "automargin": True},
        yaxis=yaxis,
    )
    return _figure(data, lay)


def line_figure(
    x: ArrayLike,
    series: dict[str, ArrayLike],
    *,
    title: str,
    x_title: str,
    y_title: str,
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
        xaxis={
            "title": {"text": x_title},
            "type": "log" if log_x else "linear",
            "showgrid": True,
            "automargin": True,
            **x_ticks,
        },
        yaxis={
            "title": {"text": y_title},
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
        {"var(q·k)": before, "var(q·k / √d_k)": after, "d_k (theory, unscaled)": d},
        title="Variance of a dot product of two random N(0,1) vectors",
        x_title="d_k (vector length)",
        y_title="variance",
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
        title="The same logits, multiplied by a factor before the softmax",
        x_title="position: logit",
        y_title="softmax weight",
        y_range=(0.0, 1.0),
    )
