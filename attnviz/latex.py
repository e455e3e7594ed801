"""LaTeX for slides and notes: small matrices as ``bmatrix`` and one query's worked example.

Pure string builders (NumPy and the engine, no Streamlit): the export section of the pages
(:mod:`attnviz.ui.export`) shows their output, the tests parse it back
(:func:`parse_bmatrix`) into the same numbers within the rounding shown.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from attnviz import engine

#: Decimals of the numbers written in cells on screen (``figures``: ``cell_text=".2f"``).
DECIMALS = 2
#: Largest side of a matrix offered as LaTeX (a slide holds about 8 columns).
SMALL = 8

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def escape(text: object) -> str:
    """``text`` as literal LaTeX text (for ``\\text{...}`` or a paragraph): the ten
    special characters escaped, line breaks as spaces."""
    s = " ".join(str(text).splitlines())
    return "".join(_SPECIAL.get(c, c) for c in s)


def is_small(a: np.ndarray, limit: int = SMALL) -> bool:
    """Whether ``a`` is a matrix (or vector) with no side above ``limit``."""
    a = np.asarray(a)
    return 1 <= a.ndim <= 2 and a.size > 0 and max(a.shape) <= limit


def number(v: float, decimals: int = DECIMALS) -> str:
    """One cell: rounded to ``decimals``; -inf as ``-\\infty`` (masked scores)."""
    v = float(v)
    if math.isnan(v):
        return r"\text{NaN}"
    if math.isinf(v):
        return r"-\infty" if v < 0 else r"\infty"
    out = f"{v:.{decimals}f}"
    return out[1:] if out.startswith("-") and float(out) == 0 else out  # no "-0.00"


def bmatrix(a: np.ndarray, decimals: int = DECIMALS) -> str:
    """``a`` (a vector is one row) as ``\\begin{bmatrix} ... \\end{bmatrix}``."""
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    if a.ndim != 2:
        raise ValueError(f"bmatrix takes a vector or a matrix, not shape {a.shape}")
    rows = [" & ".join(number(v, decimals) for v in row) for row in a]
    return "\\begin{bmatrix}\n" + " \\\\\n".join(rows) + "\n\\end{bmatrix}"


def named(name: str, a: np.ndarray, decimals: int = DECIMALS) -> str:
    """``name = bmatrix`` for a display equation; ``name`` is LaTeX maths as given."""
    return f"{name} = {bmatrix(a, decimals)}"


def text_name(name: str) -> str:
    """A plain name (e.g. ``"S masked"``) as maths: ``\\text{...}``, escaped."""
    return rf"\text{{{escape(name)}}}"


_BMATRIX = re.compile(r"\\begin\{bmatrix\}(.*?)\\end\{bmatrix\}", re.S)


def _cell(s: str) -> float:
    s = s.strip()
    if s in (r"-\infty", r"- \infty"):
        return -math.inf
    if s == r"\infty":
        return math.inf
    if s == r"\text{NaN}":
        return math.nan
    return float(s)


def parse_bmatrix(tex: str) -> list[np.ndarray]:
    """Every ``bmatrix`` in ``tex`` back as a float array (rows split on ``\\\\``, cells
    on ``&``); raises ValueError on a ragged matrix or a cell that is not a number."""
    out = []
    for body in _BMATRIX.findall(tex):
        rows = [r for r in body.split("\\\\") if r.strip()]
        cells = [[_cell(c) for c in r.split("&")] for r in rows]
        if len({len(r) for r in cells}) != 1:
            raise ValueError("ragged bmatrix")
        out.append(np.array(cells, dtype=np.float64))
    return out


def _display(line: str) -> str:
    return "\\[\n" + line + "\n\\]"


def worked_example(
    *,
    labels: Sequence[str],
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    query: int,
    scale: float,
    mask: np.ndarray | None = None,
    head: int = 0,
    decimals: int = 3,
    title: str = "Self-attention for one query, step by step",
) -> str:
    """A standalone LaTeX document (``amsmath``) with the computation of query ``query``
    of one head: its q, every key and value, the scores q·k_j, the scale, the mask, the
    softmax weights and the output, with the numbers rounded to ``decimals``.

    ``q``, ``k``, ``v``: (N, d_k) of the head; ``mask``: (N, N) boolean, True = may attend.
    The numbers are recomputed here from q, k, v (the engine's softmax), in the order of
    the page.
    """
    q, k, v = (np.asarray(m, dtype=np.float64) for m in (q, k, v))
    n, dk = k.shape
    if not 0 <= query < n:
        raise ValueError(f"query must be from 0 to {n - 1}, not {query}")
    qi = q[query]
    raw = k @ qi
    scaled = raw * scale
    visible = np.ones(n, bool) if mask is None else np.asarray(mask, bool)[query]
    masked = np.where(visible, scaled, -np.inf)
    w = engine.softmax(masked)  # every key masked: weights 0, not NaN
    out = w @ v
    d = decimals
    tok = escape(labels[query]) if query < len(labels) else str(query)
    lines = [
        r"\documentclass{article}",
        r"\usepackage{amsmath}",
        r"\setcounter{MaxMatrixCols}{64}",
        r"\begin{document}",
        rf"\section*{{{escape(title)}}}",
        rf"Query $i = {query}$ (token \texttt{{{tok}}}) of head {head}: $N = {n}$ tokens, "
        rf"$d_k = {dk}$, numbers rounded to {d} decimals. Tokens: "
        + ", ".join(rf"{j}: \texttt{{{escape(t)}}}" for j, t in enumerate(labels))
        + ".",
        "",
        r"\paragraph{1. The query and the keys and values of the head.}",
        _display(named(rf"q_{{{query}}}", qi, d)),
        _display(named("K", k, d) + r",\qquad " + named("V", v, d)),
        r"\paragraph{2. Dot products with every key.} "
        rf"$s_{{{query}j}} = q_{{{query}}} \cdot k_j$:",
        _display(named(rf"q_{{{query}}} K^\top", raw, d)),
        rf"\paragraph{{3. Scale.}} Factor ${number(scale, 4)}$:",
        _display(named(rf"s_{{{query}}}", scaled, d)),
    ]
    if mask is not None:
        hidden = ", ".join(str(j) for j in np.flatnonzero(~visible)) or "none"
        lines += [
            rf"\paragraph{{4. Mask.}} Keys this query may not see get $-\infty$ (keys: {hidden}):",
            _display(named(rf"\tilde s_{{{query}}}", masked, d)),
        ]
    else:
        lines.append(r"\paragraph{4. Mask.} None: every key is visible.")
    lines += [
        r"\paragraph{5. Softmax over the keys.} "
        rf"$a_{{{query}j}} = e^{{s_{{{query}j}}}} / \sum_m e^{{s_{{{query}m}}}}$, "
        "the weights sum to 1:",
        _display(named(rf"a_{{{query}}}", w, d)),
        r"\paragraph{6. Weighted sum of the values.} "
        rf"$\text{{out}}_{{{query}}} = \sum_j a_{{{query}j}}\, v_j$:",
        _display(named(rf"\text{{out}}_{{{query}}}", out, d)),
        rf"The largest weight is on key {int(np.argmax(w))} "
        rf"(\texttt{{{escape(labels[int(np.argmax(w))]) if labels else ''}}}).",
        r"\end{document}",
        "",
    ]
    return "\n".join(lines)
