"""Heatmaps of matrices: scores, weights, outputs, inputs and masks (pure plotly builders).

Matrices arrive in row layout; ``layout`` chooses rows (PyTorch) or columns (UDL). See
:mod:`attnviz.viz` for the conventions every builder follows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from attnviz.i18n import N_, _
from attnviz.teaching.token_text import raw, visible
from attnviz.viz.style import (
    MAX_CELL_TEXT_N,
    MAX_MASK_MARKERS,
    MAX_TICK_LABELS,
    NOTE_LINE,
    AxisTitle,
    Kind,
    Layout,
    _colour,
    _f32,
    _figure,
    _fit_axis_title,
    _fixed_margins,
    _layout,
    _short_number,
    _ticks,
    axes_meta,
    axis_text,
    colorbar,
    plotly_text,
    pool_blocks,
    pool_factor,
    scale_label,
)

__all__ = ["attention_figure", "mask_figure", "matrix_figure", "token_matrix_figure"]

# The axes of a token-by-token matrix: the query (or token) axis says which convention it
# follows (rows = tokens: PyTorch; columns = tokens: the UDL book), the key axis only its name
# (English marked N_: AxisTitle shows them translated; the nouns stay English identifiers)
QUERY_ROWS = AxisTitle(N_("query i (row)"), N_("query"), N_("rows = tokens"), "PyTorch")
QUERY_COLUMNS = AxisTitle(
    N_("query i (column)"), N_("query"), N_("columns = tokens"), N_("UDL book")
)
KEY_ROWS = AxisTitle(N_("key j (row)"), N_("key"))
KEY_COLUMNS = AxisTitle(N_("key j (column)"), N_("key"))
TOKEN_ROWS = AxisTitle(N_("token (row)"), N_("token"), N_("rows = tokens"), "PyTorch")
TOKEN_COLUMNS = AxisTitle(N_("token (column)"), N_("token"), N_("columns = tokens"), N_("UDL book"))


def matrix_figure(
    z: ArrayLike,
    *,
    title: str,
    x_title: str | AxisTitle,
    y_title: str | AxisTitle,
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
    role: str | None = None,
) -> go.Figure:
    """One heatmap, drawn as given (row 0 at the top).

    For the chart board, never read from the titles: ``role`` ("scores", "weights") in
    ``layout.meta["role"]``; what each axis counts (and an
    :class:`~attnviz.viz.style.AxisTitle`'s shorter forms) in ``layout.meta["axes"]``;
    whether the values are attention weights (``kind`` "weights") in
    ``layout.meta["value"]`` ("weights" or "values"): titles may be translated.

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
    z, m, (by, bx), blocks = _pooled(z, m, token_axes)
    notes = [blocks] if blocks else []  # a second title line: long titles are cut
    if blocks:
        cell_text = None
        hover = pooled_hover or _block_hover(by, bx)
    # 2. the heatmap, with the values written in the cells
    colour = _colour(kind, z, zmax)
    if colorscale is not None:
        colour["colorscale"] = colorscale
    bar = colorbar(colorbar_title or "", thickness=12)
    data: list[dict] = [_heatmap(z, title, hover, colour, bar, showscale, (bx, by), cell_text)]
    if not blocks:  # a token with whitespace: the hover also writes it as code does
        data[0].update(_raw_tokens(hover, x_labels, y_labels, nx, ny))
    # 3. the masked cells: crossed out when the matrix is small, noted in the title
    if m is not None and m.any():
        if max(nx, ny) <= MAX_MASK_MARKERS and not blocks:
            data.append(_mask_markers(m))
        notes.append(_("grey = masked"))
    if notes:
        title += f"{NOTE_LINE}{' · '.join(notes)}</span>"
    # 4. the layout: separator lines, margins that fit the labels, token axes
    layout = _matrix_layout(
        title, height, separators, (x_title, x_labels, nx, bx), (y_title, y_labels, ny, by)
    )
    value = "weights" if kind == "weights" else "values"
    layout["meta"] = {"axes": axes_meta(xaxis=x_title, yaxis=y_title), "value": value}
    if role is not None:
        layout["meta"]["role"] = role
    return _figure(data, layout)


def _raw_tokens(
    hover: str, x_labels: Sequence[str] | None, y_labels: Sequence[str] | None, nx: int, ny: int
) -> dict:
    """The hover fields that add each cell's tokens as code writes them (``"\\n"``,
    ``" the"``: :func:`attnviz.teaching.token_text.raw`), for axes whose tick labels show a token
    with whitespace (a newline's tick is "↵"); nothing when no label has any."""

    def raws(labels: Sequence[str] | None, n: int) -> list[str] | None:
        if labels is None or len(labels) != n or n > MAX_TICK_LABELS:
            return None
        if all(visible(t) == str(t) for t in labels):
            return None
        return [plotly_text(raw(t)) for t in labels]

    rows, cols = raws(y_labels, ny), raws(x_labels, nx)
    if rows is None and cols is None:
        return {}
    blank = [""] * max(nx, ny)
    rows, cols = rows or blank, cols or blank
    custom = [[[rows[i], cols[j]] for j in range(nx)] for i in range(ny)]
    if rows is blank:
        line = _("column token: {column}").format(column="%{customdata[1]}")
    elif cols is blank:
        line = _("row token: {row}").format(row="%{customdata[0]}")
    else:
        line = _("row token: {row}, column token: {column}").format(
            row="%{customdata[0]}", column="%{customdata[1]}"
        )
    return {"customdata": custom, "hovertemplate": f"{hover}<br>{line}<extra></extra>"}


def _block_hover(by: int, bx: int) -> str:
    """The default hover of a heatmap drawn in blocks of ``by`` × ``bx`` cells."""
    return _("mean of the {size} block from row {row}, column {column} = {z}").format(
        size=f"{by}×{bx}", row="%{y}", column="%{x}", z="%{z:.4f}"
    )


def _pooled(
    z: np.ndarray, m: np.ndarray | None, token_axes: str
) -> tuple[np.ndarray, np.ndarray | None, tuple[int, int], str]:
    """Step 1 of :func:`matrix_figure`: ``z`` and its mask ``m`` pooled into blocks along
    the token axes above the full-size limit (a block whose cells are all masked is
    masked); returns them, the blocks' (rows, columns) and the title's note ("" if not)."""
    ny, nx = z.shape
    by = pool_factor(ny) if "y" in token_axes else 1
    bx = pool_factor(nx) if "x" in token_axes else 1
    if by == bx == 1:
        return z, m, (1, 1), ""
    z, empty = pool_blocks(z, by, bx, masked=m)
    if by > 1 and bx > 1:
        note = _("{size} blocks (mean)").format(size=f"{by}×{bx}")
    else:
        note = _("{n}-token blocks (mean)").format(n=max(by, bx))
    return z, empty if m is not None else None, (by, bx), note


def _heatmap(
    z: np.ndarray,
    name: str,
    hover: str,
    colour: dict,
    bar: dict,
    showscale: bool,
    blocks: tuple[int, int],
    cell_text: str | None,
) -> dict:
    """Step 2 of :func:`matrix_figure`: the heatmap trace of ``z``, drawn in ``blocks``
    (columns, rows) of tokens, with its values written in the cells (``cell_text``)."""
    heatmap = {
        "type": "heatmap",
        "z": z,
        "hovertemplate": hover + "<extra></extra>",
        "hoverongaps": False,
        "colorbar": bar,
        "showscale": showscale,
        "name": name,
        **colour,
    }
    bx, by = blocks
    if bx > 1 or by > 1:  # block k of an axis starts at token k·b and spans b token units
        heatmap.update({"x0": 0, "dx": bx, "y0": 0, "dy": by})
    if cell_text is not None:
        heatmap.update(_cell_text(z, cell_text))
    return heatmap


def _matrix_layout(
    title: str, height: int, separators: tuple[str, int] | None, x: tuple, y: tuple
) -> dict:
    """The layout of :func:`matrix_figure`: ``x``, ``y`` = (axis title, tick labels, cells,
    cells per block). The y title is the longest of its forms that fits beside the plot."""
    (x_title, x_labels, nx, bx), (y_title, y_labels, ny, by) = x, y
    margin = _fixed_margins(x_labels, y_labels, nx, ny)
    y_text = _fit_axis_title(
        y_title, height - margin["t"] - margin["b"], margin["t"], title.count("<br>") + 1
    )
    return _layout(
        title=title,
        height=height,
        shapes=_separator_lines(separators, nx, ny),
        margin=margin,
        xaxis=_matrix_axis(axis_text(x_title), x_labels, nx, bx, reverse=False),
        yaxis=_matrix_axis(y_text, y_labels, ny, by, reverse=True),
    )


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
        "name": _("masked"),
        "hovertemplate": _("masked (−∞ before softmax, weight 0)") + "<extra></extra>",
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


def _attention_words(what: str, qi: str, kj: str, sl: str) -> tuple[str, Kind, str, str]:
    """What :func:`attention_figure` says of scores or weights: the hover (query ``qi``,
    key ``kj``, the scale's label ``sl``), the colour kind, the default title and the
    colour bar's title."""
    if what == "scores":
        hover = f"q{_sub(qi)}·k{_sub(kj)}{sl} = %{{z:.4f}}"
        title = _("Scores S = QKᵀ{scale}").format(scale=sl.replace("<sub>k</sub>", "_k"))
        return hover, "diverging", title, _("score")
    if what == "weights":
        hover = _("{a} = softmax weight of {k} for {q} = {z}").format(
            a=f"a{_sub(qi + ',' + kj)}", k=f"k{_sub(kj)}", q=f"q{_sub(qi)}", z="%{z:.4f}"
        )
        return hover, "weights", _("Weights A = softmax(S)"), _("weight")
    raise ValueError(f"what must be 'scores' or 'weights', got {what!r}")


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
    key_labels: Sequence[str] | None = None,
    axes: tuple[AxisTitle, AxisTitle] | None = None,
) -> go.Figure:
    """Scores (before softmax, after scaling) or softmax weights of one head.

    ``matrix`` is (N queries, M keys) in row layout; ``mask`` (N, M) bool, True = may
    attend (the engine's convention). ``labels`` name the queries and, unless
    ``key_labels`` is given, the keys too (self-attention); cross-attention passes the
    source's tokens as ``key_labels`` (M of them). ``axes``: the (query, key) axis titles
    in place of "query i (row)" and "key j (column)" (their nouns stay "query" and "key",
    what the board's tables and keys read). With ``layout="columns"`` the matrix is drawn
    transposed (keys down, queries across), as the UDL book's ``softmax_cols``.
    ``zmax``: the scores' colour range ±zmax (default: their own largest |value|); two
    charts meant to be compared get the same one (:func:`shared_range`). Weights always
    run from 0 to 1. Up to :data:`MAX_CELL_TEXT_N` tokens every
    value is written in its cell (the board keeps them where the cells are large enough):
    a row of weights that all look dark at larger N still reads.
    """
    a = np.asarray(matrix)
    if a.ndim != 2:
        raise ValueError(f"attention_figure needs (N, M), got shape {a.shape}")
    masked = None if mask is None else ~np.broadcast_to(np.asarray(mask, dtype=bool), a.shape)
    sl = scale_label(scale, d_k)
    q_labels, k_labels = labels, labels if key_labels is None else key_labels
    if layout == "rows":
        z, mk = a, masked
        qi, kj = "%{y}", "%{x}"
        y_title, x_title = axes or (QUERY_ROWS, KEY_COLUMNS)
        y_labels, x_labels = q_labels, k_labels
    elif layout == "columns":
        z, mk = a.T, None if masked is None else masked.T
        qi, kj = "%{x}", "%{y}"
        x_title, y_title = axes or (QUERY_COLUMNS, KEY_ROWS)
        y_labels, x_labels = k_labels, q_labels
    else:
        raise ValueError(f"layout must be 'rows' or 'columns', got {layout!r}")
    hover, kind, default_title, cb = _attention_words(what, qi, kj, sl)
    n_rows, n_cols = z.shape
    b = pool_factor(max(n_rows, n_cols))
    pooled = (
        _("{size} block from query {q}, key {k} (to +{last}): mean score = {z}")
        if what == "scores"
        else _("{size} block from query {q}, key {k} (to +{last}): mean weight = {z}")
    )
    pooled_hover = pooled.format(size=f"{b}×{b}", q=qi, k=kj, last=b - 1, z="%{z:.4f}")
    return matrix_figure(
        z,
        title=title or default_title,
        x_title=x_title,
        y_title=y_title,
        hover=hover,
        kind=kind,
        x_labels=x_labels if x_labels is not None and len(x_labels) == n_cols else None,
        y_labels=y_labels if y_labels is not None and len(y_labels) == n_rows else None,
        masked=mk,
        height=height,
        colorbar_title=cb,
        cell_text=".2f" if max(n_rows, n_cols) <= MAX_CELL_TEXT_N else None,
        token_axes="xy",
        pooled_hover=pooled_hover,
        zmax=zmax,
        role=what,
    )


def token_matrix_figure(
    matrix: ArrayLike,
    *,
    name: str,
    labels: Sequence[str] | None = None,
    layout: Layout = "rows",
    title: str | None = None,
    height: int = 380,
    feature_name: str | None = None,
    feature_groups: int | None = None,
    zmax: float | None = None,
) -> go.Figure:
    """A per-token matrix (N tokens, d features): X, Q, K, V, a head's output, ...

    Diverging colour scale centred at 0, ±``zmax`` (default: the matrix's own largest
    |value|; :func:`shared_range` for charts meant to be compared). Hover: "Q[token 2,
    feature 5] = …". ``feature_groups=k`` draws a line every k features (the heads of a
    concatenation). ``feature_name``: the feature axis' title (default: "feature", translated).
    """
    a = np.asarray(matrix)
    if a.ndim != 2:
        raise ValueError(f"token_matrix_figure needs (N, d), got shape {a.shape}")
    n, d = a.shape
    feature_name = feature_name or _("feature")
    text = ".2f" if max(n, d) <= MAX_CELL_TEXT_N else None  # kept where the cells fit them
    token = _("token")
    hover_rows = f"{name}[{token} %{{y}}, {feature_name} %{{x}}] = %{{z:.4f}}"
    hover_cols = f"{name}[{feature_name} %{{y}}, {token} %{{x}}] = %{{z:.4f}}"
    mean = _("mean of {name} over tokens {first} to +{last}, {feature} {f} = {z}")
    if layout == "rows":
        return matrix_figure(
            a,
            title=title or f"{name} ({n}×{d})",
            x_title=feature_name,
            y_title=TOKEN_ROWS,
            hover=hover_rows,
            y_labels=labels,
            x_labels=None,
            height=height,
            separators=None if not feature_groups else ("x", feature_groups),
            token_axes="y",
            cell_text=text,
            pooled_hover=mean.format(
                name=name,
                first="%{y}",
                last=pool_factor(n) - 1,
                feature=feature_name,
                f="%{x}",
                z="%{z:.4f}",
            ),  # fmt: skip
            zmax=zmax,
        )
    if layout == "columns":
        return matrix_figure(
            a.T,
            title=title or _("{name}, transposed ({size})").format(name=name, size=f"{d}×{n}"),
            x_title=TOKEN_COLUMNS,
            y_title=feature_name,
            hover=hover_cols,
            x_labels=labels,
            y_labels=None,
            height=height,
            separators=None if not feature_groups else ("y", feature_groups),
            token_axes="x",
            cell_text=text,
            pooled_hover=mean.format(
                name=name,
                first="%{x}",
                last=pool_factor(n) - 1,
                feature=feature_name,
                f="%{y}",
                z="%{z:.4f}",
            ),  # fmt: skip
            zmax=zmax,
        )
    raise ValueError(f"layout must be 'rows' or 'columns', got {layout!r}")


def mask_figure(
    mask: ArrayLike,
    *,
    labels: Sequence[str] | None = None,
    layout: Layout = "rows",
    title: str | None = None,
    height: int = 380,
    key_labels: Sequence[str] | None = None,
) -> go.Figure:
    """The boolean mask (N queries, M keys; True = may attend): green = allowed, grey × = masked.
    ``labels`` name the queries and, unless ``key_labels`` is given, the keys too.
    ``title``: default "Mask: who may attend to whom" (translated)."""
    m = np.asarray(mask, dtype=bool)
    if m.ndim != 2:
        raise ValueError(f"mask must be (N, M), got shape {m.shape}")
    z = np.ones(m.shape, np.float32)
    k_labels = labels if key_labels is None else key_labels
    if layout == "columns":
        m, z = m.T, z.T
        y_title, x_title = KEY_ROWS, QUERY_COLUMNS
        q, k = "%{x}", "%{y}"
    else:
        y_title, x_title = QUERY_ROWS, KEY_COLUMNS
        q, k = "%{y}", "%{x}"
    hover = _("query {q} may attend to key {k}").format(q=q, k=k)
    return matrix_figure(
        z,
        title=title or _("Mask: who may attend to whom"),
        x_title=x_title,
        y_title=y_title,
        hover=hover,
        kind="sequential",
        x_labels=k_labels if layout != "columns" else labels,
        y_labels=labels if layout != "columns" else k_labels,
        masked=~m,
        height=height,
        colorscale=[[0.0, "#a6dba0"], [1.0, "#a6dba0"]],
        showscale=False,
        token_axes="xy",
        pooled_hover=_("a block with at least one allowed pair, from query {q}, key {k}").format(
            q=q, k=k
        ),
    )
