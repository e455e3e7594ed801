"""The style every figure shares: colour scales, chart text, margins, ticks and the pooling
of large matrices into blocks (no Streamlit).
"""

from __future__ import annotations

import base64
import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray

from attnviz import i18n
from attnviz.engine import limits
from attnviz.i18n import N_, _
from attnviz.teaching.token_text import visible

__all__ = [
    "AXIS_TITLE_FONT",
    "CHAR_PX",
    "colorbar",
    "DIVERGING",
    "Layout",
    "MASK_BG",
    "MAX_CELL_TEXT_N",
    "MAX_FULL_HEATMAP_N",
    "MAX_MASK_MARKERS",
    "MAX_SMALL_MULTIPLES_N",
    "MAX_TICK_LABELS",
    "NOTE_LINE",
    "plotly_text",
    "pool_blocks",
    "pool_factor",
    "scale_label",
    "SEQUENTIAL",
    "shared_range",
    "style_text",
    "TEXT_COLOR",
    "TICK_FONT",
    "TITLE_CHAR_PX",
    "TITLE_FONT",
    "TITLE_LINE_PX",
    "token_label",
    "WEIGHT_RANGES",
    "weight_range",
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
# N's limits of the figures, read from the one table (attnviz.engine.limits):
#: above this many tokens, axes show indices instead of token labels
MAX_TICK_LABELS = limits.TICK_LABELS_N
MAX_MASK_MARKERS = limits.MASK_MARKERS_N  #: above this N, masked cells are grey without "×"
#: above this N, per-head small multiples become a summary
MAX_SMALL_MULTIPLES_N = limits.SMALL_MULTIPLES_N
#: up to this N, a matrix heatmap (scores, weights, X, Q, K, V, outputs) writes each value in
#: its cell; the board drops the values where the cells it draws are too narrow for them
MAX_CELL_TEXT_N = limits.CELL_TEXT_N
#: above this many tokens, a heatmap axis that counts tokens is drawn in blocks of
#: b = ceil(N / MAX_FULL_HEATMAP_N) tokens (mean of the unmasked cells of each block): a
#: 512×512 matrix in a ~350 px wide column would be two cells per pixel (and 1.5 MB of JSON)
MAX_FULL_HEATMAP_N = limits.FULL_HEATMAP_N

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


def title_box(text: str) -> dict:
    """A figure's title at the start of the reader's line: its left in a left-to-right
    language, its right in Arabic (the page's prose starts there; the plot's axes keep
    their mathematical order). In Arabic the formulas and shapes the code wrote into it
    ("(6×4)") are isolated as a catalog's are (:func:`attnviz.i18n.isolate`; the board reads
    each line from the right: ``rtl.js`` ``rtlLines``)."""
    if i18n.direction() == "rtl":
        return {"text": i18n.isolate(text), "x": 1.0, "xanchor": "right", "font": dict(TITLE_FONT)}
    return {"text": text, "x": 0.0, "xanchor": "left", "font": dict(TITLE_FONT)}


def _layout(*, title: str, height: int, **extra) -> dict:
    """The shared layout as a plain dict (see :func:`_figure`)."""
    out = {
        "template": "none",
        "title": title_box(title),
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


def token_label(token: object) -> str:
    """A token as plotly text: its whitespace visible (:func:`attnviz.teaching.token_text.visible`:
    "\\n" -> "↵", " the" -> "␣the") and drawn literally (:func:`plotly_text`)."""
    return plotly_text(visible(token))


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
            "ticktext": [token_label(s) for s in labels],
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
    """``v`` formatted with ``fmt``, without the leading zero: 0.19 -> ".19", -0.5 -> "-.50";
    a value that rounds to zero has no sign: -0.001 -> ".00", never "-.00" (issue 47; not
    "0.00" either, which is wider than the other cells' values: in a laptop's 21 px cells
    it would make the board drop every value of the chart); with the shown language's
    decimal sign (",19", ",00" in Spanish)."""
    s = format(float(v), fmt)
    if s.startswith("-") and not s.strip("-0."):  # -0.001 -> "-0.00": rounds to zero
        s = s[1:]
    s = s.replace("0.", ".", 1) if s.startswith(("0.", "-0.")) else s
    dec = i18n.decimal_sign(i18n.current())
    return s if dec == "." else s.replace(".", dec)


def _label_len(labels: Sequence[str] | None, n: int) -> int:
    """Characters of the longest tick label of an axis drawn by :func:`_ticks`."""
    if labels is not None and n <= MAX_TICK_LABELS:
        return max((len(str(s)) for s in labels), default=1)
    return len(str(max(n - 1, 0)))


@dataclass(frozen=True)
class AxisTitle:
    """An axis title in its parts, so that nothing reads them back out of the text:
    ``head`` ("query i (row)"), the ``noun`` the axis counts ("query": the board's tables
    and keyboard announcements), a ``note`` ("rows = tokens") and the convention it follows
    (``source``, "PyTorch"). Drawn as "query i (row) — rows = tokens (PyTorch)"; shorter
    forms drop the source, then the note.

    The head, note and source are English marked with ``N_`` (module constants) or text the
    caller translated; they are shown in the shown language (:meth:`forms`, :meth:`meta`).
    The noun stays the English identifier the board compares ("query", "key", "token",
    "weight"); ``meta()["word"]`` is its display word."""

    head: str
    noun: str
    note: str = ""
    source: str = ""

    def _rests(self) -> list[str]:
        """What follows the head in each form, longest first ("" for the head alone)."""
        if not self.note:
            return [""]
        note = _(self.note)  # N_-marked where the title is made (or already translated)
        if not self.source:
            return [note, ""]
        return [f"{note} ({_(self.source)})", note, ""]

    def forms(self) -> list[str]:
        """The title's forms, longest first: "head — note (source)", "head — note", "head"."""
        head = _(self.head)
        return [f"{head} — {r}" if r else head for r in self._rests()]

    def meta(self) -> dict:
        """What the board reads (``layout.meta["axes"]``): the noun (an English identifier),
        its display word, the head and what follows it in each form (``rests``, longest
        first, "" for the head alone). The board (``draw.js`` ``axisParts``) joins them into
        the forms ("head — rest", :meth:`forms`) and the same on two lines ("head<br>rest":
        a tall title at a larger text size): each part sent once, not in six strings (issue
        45: in Arabic every letter is two bytes of every slider move)."""
        return {
            "noun": self.noun,
            "word": _(self.noun),
            "head": _(self.head),
            "rests": self._rests(),
        }


#: Axis titles written with their variable: the axis counts what comes before it.
QUERY_I = AxisTitle(N_("query i"), N_("query"))
KEY_J = AxisTitle(N_("key j"), N_("key"))
WEIGHT_A = AxisTitle(N_("weight a"), N_("weight"))
#: One-word axis titles whose noun the board reads, shown translated.
HEAD = AxisTitle(N_("head"), N_("head"))
LAYER = AxisTitle(N_("layer"), N_("layer"))


def axis_text(title: str | AxisTitle) -> str:
    """The text of an axis title (an :class:`AxisTitle`'s longest form)."""
    return title.forms()[0] if isinstance(title, AxisTitle) else title


def axes_meta(**axes: str | AxisTitle) -> dict:
    """``layout.meta["axes"]`` of axes titled ``axes`` (axis name -> title): what each
    counts, for the board's tables and keyboard announcements. A plain title is its own
    noun ("head"); one with more words than its noun is an :class:`AxisTitle` ("query i"
    counts queries). Untitled axes are left out. A plain title is shown as given: a
    translated one whose meaning the board reads (a query, key or token axis) must be an
    :class:`AxisTitle` with its English noun."""
    return {k: t.meta() if isinstance(t, AxisTitle) else {"noun": t} for k, t in axes.items() if t}


def _width(text: str) -> int:
    """``text``'s width in Latin characters: a wide (Chinese, Japanese, Korean) character
    counts two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _fit_axis_title(title: str | AxisTitle, plot_px: float, top_px: float, title_lines: int) -> str:
    """The longest form of a vertical axis title that does not reach into the figure's
    title. The title is centred on the plot and may stick out of it by what the top margin
    (``top_px``) leaves free above the figure's title (``title_lines`` lines, left-aligned
    above the axis title); beside a shorter plot "query i (row) — rows = tokens (PyTorch)"
    loses "(PyTorch)", then everything after its " — " (:meth:`AxisTitle.forms`; the
    masking page's 330 px charts had it cross their "grey = masked" line). The margins stay
    as they are: at 1280 px the plots keep their width."""
    free = top_px - (TITLE_LINE_PX * title_lines + 16)
    forms = title.forms() if isinstance(title, AxisTitle) else [title]
    for form in forms:
        if (_width(form) * TITLE_CHAR_PX - plot_px) / 2 <= free:
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


#: The weights' colour ranges: "fixed" 0 to 1 (every chart alike, the default), "matrix"
#: 0 to each matrix's own largest weight.
WEIGHT_RANGES = ("fixed", "matrix")


def _top(z: object) -> float | None:
    """The largest finite value of a trace's z (an array, lists, or plotly's typed-array
    JSON ``{"dtype", "bdata", "shape"}``), or None."""
    if isinstance(z, dict) and "bdata" in z:
        z = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"])
    a = np.asarray(z, dtype=np.float64) if z is not None else np.empty(0)
    finite = a[np.isfinite(a)]
    return float(finite.max()) if finite.size else None


def _range_title(title: object, top: float, whose: str) -> str:
    text = title if isinstance(title, str) and title else _("weight")
    return f"{text}<br>" + _("0 to {top} ({whose})").format(top=i18n.fmt(top, ".2g"), whose=whose)


def weight_range(fig: go.Figure, mode: str = "fixed") -> go.Figure:
    """The weights' colour range of ``fig``, changed in place and returned. ``"fixed"``
    leaves the figure as built (weights from 0 to 1, every chart alike). ``"matrix"``: each
    heatmap of weights on the fixed 0..1 scale (``zmin`` 0, ``zmax`` 1) runs from 0 to its
    own largest weight, and heatmaps sharing a 0..1 colour axis (the small multiples) from
    0 to their largest: at N = 30 every weight is near 1/30, which the fixed scale draws as
    one dark block. The colour bar's title says so ("weight / 0 to 0.31 (this matrix)").
    A matrix of zeros or NaN keeps 0..1. Scores and other scales are left alone."""
    if mode not in WEIGHT_RANGES:
        raise ValueError(f"mode must be one of {', '.join(WEIGHT_RANGES)}, got {mode!r}")
    if mode == "fixed":
        return fig
    shared: list[float] = []
    for trace in fig.data:
        if trace.type != "heatmap":
            continue
        if trace.coloraxis:
            top = _top(trace.z)
            if top is not None:
                shared.append(top)
            continue
        if trace.zmin != 0 or trace.zmax != 1:
            continue
        top = _top(trace.z)
        if top is None or top <= 0:
            continue
        trace.zmax = top
        trace.colorbar.title.text = _range_title(trace.colorbar.title.text, top, _("this matrix"))
    axis = fig.layout.coloraxis
    if shared and axis.cmin == 0 and axis.cmax == 1 and max(shared) > 0:
        top = max(shared)
        axis.cmax = top
        axis.colorbar.title.text = _range_title(axis.colorbar.title.text, top, _("these matrices"))
    return fig
