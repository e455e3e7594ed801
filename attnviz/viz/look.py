"""What a lesson's stop points at, drawn on its chart (``look = { chart = "scores", row = 2 }``,
docs/lessons.md): a dashed outline of a cell, a token's row, or the whole matrix, on every
heatmap of the chart the stop names (pure plotly, no Streamlit).

- :func:`chart_role`: which of a lesson's chart names
  (:data:`attnviz.classroom.lessons.LOOK_CHARTS`) a board's chart is, from what its builder
  put in the figure (``layout.meta``: ``role`` "scores" or "weights", ``grid`` for every
  head's weights) or, for the per-token matrices,
  the suffix of the chart's key (``pg_x``, ``sb_q``, ``mh_out``); never from its title.
- :func:`outline`: a copy of a figure with the look drawn, read from the figure alone: each
  heatmap's axes say what they count (``layout.meta["axes"]``: "query", "key", "token"), its
  size and blocks (a pooled heatmap's ``dx``/``dy``) where a token's row or a cell lies, in
  the row or the column layout alike. A row or cell the figure does not have (the student
  moved N below it) is not drawn.

The outline is dashed (black dashes on a white line: seen on any colour scale, on a
projector too), unlike a live class's revealed answer (:mod:`attnviz.viz.classroom`, solid).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attnviz.viz.style import _figure

#: The per-token matrices' chart keys end in these (``<page>_<suffix>``): the look's name.
KEY_SUFFIXES = {"x": "x", "q": "q", "k": "k", "v": "v", "out": "output"}
#: The nouns of a token's axis (``layout.meta["axes"]``): a row of queries or of tokens.
ROW_NOUNS = ("query", "token")
#: White under black dashes, px: the outline of a look.
LINES = ((8, "#ffffff", "solid"), (4, "#000000", "dash"))


def chart_role(key: str, figure: go.Figure | dict) -> str | None:
    """The look's name of a board's chart ``key`` drawing ``figure``: "scores", "weights",
    "heads", "x", "q", "k", "v", "output", or None (a chart a look cannot name)."""
    meta = _layout(figure).get("meta") or {}
    meta = meta if isinstance(meta, dict) else {}
    if meta.get("grid"):
        return "heads"
    if meta.get("role") in ("scores", "weights"):
        return str(meta["role"])
    return KEY_SUFFIXES.get(key.rsplit("_", 1)[-1]) if "_" in key else None


def _layout(figure: go.Figure | dict) -> dict:
    if isinstance(figure, go.Figure):
        return figure.layout.to_plotly_json()
    return figure.get("layout", {})


def _nouns(meta: dict, sfx: str) -> tuple[str, str]:
    """What the x and y axes of a heatmap on axes x{sfx}/y{sfx} count (a grid of heads: its
    layout says, rows = queries unless "columns")."""
    axes = meta.get("axes") or {}
    if axes:
        x = axes.get(f"xaxis{sfx}", axes.get("xaxis", {})).get("noun", "")
        y = axes.get(f"yaxis{sfx}", axes.get("yaxis", {})).get("noun", "")
        return x, y
    grid = meta.get("grid") or {}
    if grid:
        return ("query", "key") if grid.get("layout") == "columns" else ("key", "query")
    return "", ""


def _extent(trace: dict, axis: str, n: int) -> tuple[float, float, float]:
    """A heatmap's (first cell's centre, cell size, end) along ``axis`` ("x" or "y") of
    ``n`` cells: a pooled heatmap's cell is a block of ``d{axis}`` tokens."""
    start, step = float(trace.get(f"{axis}0", 0) or 0), float(trace.get(f"d{axis}", 1) or 1)
    return start, step, start + n * step


def _shape(z: object) -> tuple[int, int] | None:
    """A heatmap's (rows, columns): of an array, or of plotly's typed array (``bdata`` with
    its ``shape``, "5, 5")."""
    if isinstance(z, dict):
        dims = [int(d) for d in str(z.get("shape", "")).split(",") if d.strip().isdigit()]
    else:
        dims = list(np.shape(z)) if z is not None else []
    return (dims[0], dims[1]) if len(dims) == 2 else None


def _rect(sfx: str, x: tuple[float, float], y: tuple[float, float]) -> list[dict]:
    return [
        {
            "type": "rect", "xref": f"x{sfx}", "yref": f"y{sfx}",
            "x0": x[0], "x1": x[1], "y0": y[0], "y1": y[1],
            "line": {"color": color, "width": width, "dash": dash},
            "fillcolor": "rgba(0,0,0,0)", "layer": "above", "name": "look",
        }
        for width, color, dash in LINES
    ]  # fmt: skip


def _shapes(trace: dict, meta: dict, cell: Sequence[int] | None, row: int | None) -> list[dict]:
    """The outline on one heatmap trace: ``cell`` (query, key), else ``row`` (a query's or a
    token's), else the whole matrix; none where the heatmap does not have it."""
    size = _shape(trace.get("z"))
    if size is None:
        return []
    ny, nx = size
    sfx = str(trace.get("xaxis", "x"))[1:]
    (x0, dx, x_end), (y0, dy, y_end) = _extent(trace, "x", nx), _extent(trace, "y", ny)
    xs, ys = (x0 - dx / 2, x_end - dx / 2), (y0 - dy / 2, y_end - dy / 2)

    def block(i: int, start: float, step: float, end: float) -> tuple[float, float] | None:
        lo = start + (i - start) // step * step - step / 2  # the block holding token i
        return (lo, lo + step) if i >= 0 and lo + step / 2 < end else None

    x_noun, y_noun = _nouns(meta, sfx)
    if cell is not None:
        q, k = cell
        if (x_noun, y_noun) == ("key", "query"):
            bx, by = block(k, x0, dx, x_end), block(q, y0, dy, y_end)
        elif (x_noun, y_noun) == ("query", "key"):
            bx, by = block(q, x0, dx, x_end), block(k, y0, dy, y_end)
        else:
            return []
        return _rect(sfx, bx, by) if bx and by else []
    if row is not None:
        if y_noun in ROW_NOUNS:
            b = block(row, y0, dy, y_end)
            return _rect(sfx, xs, b) if b else []
        if x_noun in ROW_NOUNS:
            b = block(row, x0, dx, x_end)
            return _rect(sfx, b, ys) if b else []
        return []
    return _rect(sfx, xs, ys)


def shapes(spec: dict, cell: Sequence[int] | None = None, row: int | None = None) -> list[dict]:
    """The look's outlines on a figure given as plotly JSON (``{"data", "layout"}``, as the
    board sends it): cell ``(query, key)``, else token ``row``, else the whole matrix, on each
    of its heatmaps (none where the figure does not have it)."""
    meta = spec.get("layout", {}).get("meta") or {}
    meta = meta if isinstance(meta, dict) else {}
    return [
        s
        for trace in spec.get("data", [])
        if trace.get("type") == "heatmap"
        for s in _shapes(trace, meta, cell, row)
    ]


def outlined(spec: dict, cell: Sequence[int] | None = None, row: int | None = None) -> dict:
    """``spec`` (plotly JSON) with the look drawn (:func:`shapes`), its layout copied, the
    data shared (no figure is copied: the board's path, ~20 µs)."""
    found = shapes(spec, cell, row)
    if not found:
        return spec
    lay = spec.get("layout", {})
    return {**spec, "layout": {**lay, "shapes": [*lay.get("shapes", []), *found]}}


def outline(
    figure: go.Figure, cell: Sequence[int] | None = None, row: int | None = None
) -> go.Figure:
    """A copy of ``figure`` with a lesson's look drawn on each of its heatmaps: cell
    ``(query, key)``, else token ``row``, else the whole matrix (dashed; a pooled heatmap's
    block holding it). A figure with nothing to draw comes back as it is."""
    fig = figure.to_plotly_json()
    found = shapes(fig, cell, row)
    if not found:
        return figure
    lay = {**fig["layout"], "shapes": [*fig["layout"].get("shapes", []), *found]}
    return _figure(fig["data"], lay)
