"""Figures of a live class (attnviz.classroom): pure plotly builders, no Streamlit.

:func:`tally_figure` draws the room's answers to every question as stacked bars, right
(blue) and wrong (vermillion), one bar per question, for the teacher's projector. The
colours are Okabe-Ito's (distinct with every common colour-vision deficiency), and each
bar also says its counts in text, so colour is not the only cue.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from attnviz.i18n import N_, _, direction, isolated
from attnviz.viz.style import (
    AxisTitle,
    _figure,
    _layout,
    axes_meta,
    axis_text,
    plotly_text,
    pool_factor,
)

STUDENTS = AxisTitle(N_("students"), N_("students"))

RIGHT_COLOR = "#0072B2"
WRONG_COLOR = "#D55E00"
#: px between a bar's label and the axis line (plotly's default draws them touching)
LABEL_GAP = 8


def _labels(names: list[str]) -> dict:
    """The bars' names as the axis writes them: each one isolate in a right-to-left
    language, so that its number stands on the right of its words ("1. argmax" read from
    the right as "argmax .1" otherwise); the data, the hover and the Table keep the names."""
    return {"tickmode": "array", "tickvals": names, "ticktext": [isolated(n) for n in names]}


def tally_figure(
    tally: Mapping[int, Mapping], labels: Sequence[str], students: int | None = None
) -> go.Figure:
    """Stacked bars of right and wrong answers per question.

    ``tally``: :meth:`ClassStore.tally` (item -> ``{"right": n, "wrong": n, ...}``);
    ``labels``: one per item, e.g. ``"1. argmax"``; ``students``: how many students
    answered anything (the x axis reaches at least this far, so a half-answered question
    shows as a half bar)."""
    if len(labels) != len(tally):
        raise ValueError(f"tally_figure: {len(tally)} items, {len(labels)} labels")
    items = sorted(tally)
    ys = [plotly_text(labels[k]) for k in range(len(items))]
    right = [int(tally[i]["right"]) for i in items]
    wrong = [int(tally[i]["wrong"]) for i in items]
    top = max([students or 0, 1, *(r + w for r, w in zip(right, wrong, strict=True))])
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "y": ys,
            "x": xs,
            "name": name,
            "marker": {"color": color},
            "text": [str(v) if v else "" for v in xs],
            "textposition": "inside",
            "insidetextanchor": "middle",
            "textfont": {"color": "white", "size": 16},
            "hovertemplate": hover + "<extra></extra>",
        }
        for name, hover, xs, color in (
            (_("Right"), _("%{y}: %{x} right"), right, RIGHT_COLOR),
            (_("Wrong"), _("%{y}: %{x} wrong"), wrong, WRONG_COLOR),
        )
    ]
    rtl = direction() == "rtl"
    layout = _layout(
        title=_("The room's answers"),
        height=max(220, 60 + 38 * len(items)),
        barmode="stack",
        meta={"axes": axes_meta(xaxis=STUDENTS)},
        xaxis={
            "title": {"text": axis_text(STUDENTS)},
            "range": [0, top * 1.02],
            "showgrid": True,
            "dtick": max(1, round(top / 10)),
            "automargin": True,
        },
        yaxis={
            "autorange": "reversed",
            "automargin": True,
            "title": {"text": ""},
            "ticklabelstandoff": LABEL_GAP,
            **_labels(ys),
        },
        legend={
            # read from the right in a right-to-left language: Right first there too; at
            # the far end of the title's line (the title starts it: style.title_box)
            "traceorder": "reversed" if rtl else "normal",
            "orientation": "h",
            "x": 0.0 if rtl else 1.0,
            "xanchor": "left" if rtl else "right",
            "y": 1.02,
            "yanchor": "bottom",
        },
        plot_bgcolor="white",
    )
    return _figure(data, layout)


#: The choices' bars before the reveal; after it the right one is blue, the others grey.
OPEN_COLOR = "#56B4E9"
OTHER_COLOR = "#BBBBBB"


def choice_tally_figure(
    choices: Sequence[str], counts: Sequence[int], answer: int | None = None
) -> go.Figure:
    """How many students picked each choice of a view question (horizontal bars, counts
    written on them). ``answer``: the right choice once revealed (blue, "✓" in its
    label; the others grey), None before."""
    if len(choices) != len(counts):
        raise ValueError(f"choice_tally_figure: {len(choices)} choices, {len(counts)} counts")
    if answer is not None and not 0 <= answer < len(choices):
        raise ValueError(f"answer must index the {len(choices)} choices, got {answer}")
    labels = [plotly_text(c) + (" ✓" if i == answer else "") for i, c in enumerate(choices)]
    colors = [
        OPEN_COLOR if answer is None else RIGHT_COLOR if i == answer else OTHER_COLOR
        for i in range(len(choices))
    ]
    top = max([1, *counts])
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "y": labels,
            "x": [int(c) for c in counts],
            "marker": {"color": colors},
            "text": [str(int(c)) if c else "" for c in counts],
            "textposition": "outside",
            "textfont": {"size": 16},
            "cliponaxis": False,
            "hovertemplate": _("%{y}: %{x} students") + "<extra></extra>",
        }
    ]
    layout = _layout(
        title=_("The room's predictions")
        if answer is None
        else _("The room's predictions: the answer in blue"),
        height=max(200, 70 + 30 * len(choices)),
        meta={"axes": axes_meta(xaxis=STUDENTS)},
        xaxis={
            "title": {"text": axis_text(STUDENTS)},
            "range": [0, top * 1.15],
            "showgrid": True,
            "dtick": max(1, round(top / 10)),
            "automargin": True,
        },
        yaxis={
            "autorange": "reversed",
            "automargin": True,
            "title": {"text": ""},
            "ticklabelstandoff": LABEL_GAP,
            **_labels(labels),  # every choice named, none skipped
        },
        showlegend=False,
        plot_bgcolor="white",
    )
    return _figure(data, layout)


#: The outline of a revealed answer: black inside white, seen on any colour scale.
OUTLINE = "#000000"


def outline_cell(
    figure: go.Figure, query: int, key: int, layout: str = "rows", n: int | None = None
) -> go.Figure:
    """:func:`outline_cells` of one cell (``query``, ``key``)."""
    return outline_cells(figure, [(query, key)], layout, n)


def outline_cells(
    figure: go.Figure,
    cells: Sequence[tuple[int, int]],
    layout: str = "rows",
    n: int | None = None,
) -> go.Figure:
    """A copy of an attention heatmap (:func:`attnviz.viz.heatmaps.attention_figure`) with the
    cells (``query``, ``key``) outlined: the revealed answer of a view question.

    The heatmap's cells sit at whole-number coordinates (x = key, y = query in row
    layout; swapped in column layout); ``n`` (tokens) gives the block of a pooled heatmap
    (:func:`attnviz.viz.style.pool_factor`), so the outline then frames the block holding
    the cell."""
    if layout not in ("rows", "columns"):
        raise ValueError(f"layout must be 'rows' or 'columns', got {layout!r}")
    if any(q < 0 or k < 0 for q, k in cells):
        raise ValueError(f"a cell's query and key are >= 0, got {list(cells)}")
    b = pool_factor(n) if n else 1
    blocks = {(q // b * b, k // b * b) for q, k in cells}  # (query, key) of each block
    shapes = [
        {
            "type": "rect",
            "xref": "x",
            "yref": "y",
            "x0": x - b / 2,
            "x1": x + b / 2,
            "y0": y - b / 2,
            "y1": y + b / 2,
            "line": {"color": color, "width": width},
            "fillcolor": "rgba(0,0,0,0)",
            "name": _("revealed answer"),
        }
        for width, color in ((7, "#ffffff"), (3.5, OUTLINE))  # white under black
        for q, k in sorted(blocks)
        for x, y in [(k, q) if layout == "rows" else (q, k)]
    ]
    # a copy as plain dicts (add_shape validates: 4x slower than the rest)
    fig = figure.to_plotly_json()
    lay = {**fig["layout"], "shapes": [*fig["layout"].get("shapes", []), *shapes]}
    return _figure(fig["data"], lay)


def outline_row(
    figure: go.Figure,
    row: int,
    span: tuple[float, float],
    layout: str = "rows",
    n: int | None = None,
) -> go.Figure:
    """A copy of a heatmap with one whole token row outlined (a row answer: the sharper
    row of weights, the moved row of outputs): the row's block along the token axis
    (pooled in blocks of :func:`attnviz.viz.style.pool_factor` (``n``) tokens), from
    ``span[0]`` to ``span[1]`` along the other axis (the keys or the features). In column
    layout the token is a column."""
    if layout not in ("rows", "columns"):
        raise ValueError(f"layout must be 'rows' or 'columns', got {layout!r}")
    if row < 0 or span[0] >= span[1]:
        raise ValueError(
            f"a row is >= 0 and a span (start, end) with start < end, got {row}, {span}"
        )
    b = pool_factor(n) if n else 1
    lo, hi = row // b * b - b / 2, row // b * b + b / 2  # the row's block
    shapes = [
        {
            "type": "rect", "xref": "x", "yref": "y",
            **({"x0": span[0], "x1": span[1], "y0": lo, "y1": hi} if layout == "rows"
               else {"x0": lo, "x1": hi, "y0": span[0], "y1": span[1]}),
            "line": {"color": color, "width": width},
            "fillcolor": "rgba(0,0,0,0)",
            "name": _("revealed answer"),
        }
        for width, color in ((7, "#ffffff"), (3.5, OUTLINE))  # white under black
    ]  # fmt: skip
    fig = figure.to_plotly_json()
    lay = {**fig["layout"], "shapes": [*fig["layout"].get("shapes", []), *shapes]}
    return _figure(fig["data"], lay)
