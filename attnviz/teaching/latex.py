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
from attnviz.i18n import _
from attnviz.teaching.explain import Cell

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
        rf"$s_{{{query},j}} = q_{{{query}}} \cdot k_j$:",
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
        rf"$a_{{{query},j}} = e^{{s_{{{query},j}}}} / \sum_m e^{{s_{{{query},m}}}}$, "
        "the weights sum to 1:",
        _display(named(rf"a_{{{query}}}", w, d)),
        r"\paragraph{6. Weighted sum of the values.} "
        rf"$\text{{out}}_{{{query}}} = \sum_j a_{{{query},j}}\, v_j$:",
        _display(named(rf"\text{{out}}_{{{query}}}", out, d)),
        rf"The largest weight is on key {int(np.argmax(w))} "
        rf"(\texttt{{{escape(labels[int(np.argmax(w))]) if labels else ''}}}).",
        r"\end{document}",
        "",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- one cell's arithmetic

#: Decimals of a cell's worked computation (the heatmaps' hover shows 4: the same weight).
CELL_DECIMALS = 4
#: Longest list written out term by term (d_k products, the row's N exponentials, N output
#: terms); longer ones show their first CELL_TERMS - 2 terms, "…" and the last 2.
CELL_TERMS = 12


def _plain(v: float, decimals: int) -> str:
    """A number for the plain text: as :func:`number`, with "−∞" for a masked score."""
    v = float(v)
    if math.isinf(v):
        return "−∞" if v < 0 else "∞"
    out = f"{v:.{decimals}f}"
    return out[1:] if out.startswith("-") and float(out) == 0 else out


def _shown(n: int) -> list[int | None]:
    """Indices of a list of ``n`` written out: all, or the first ones, None (…), the last 2."""
    if n <= CELL_TERMS:
        return list(range(n))
    return [*range(CELL_TERMS - 2), None, n - 2, n - 1]


def _vec(a: np.ndarray, decimals: int, tex: bool) -> str:
    fmt = number if tex else _plain
    parts = [
        (r"\cdots" if tex else "…") if i is None else fmt(a[i], decimals) for i in _shown(len(a))
    ]
    if tex:
        return r"\begin{bmatrix}" + " & ".join(parts) + r"\end{bmatrix}"
    return "[" + ", ".join(parts) + "]"


def _paren(s: str) -> str:
    return f"({s})" if s.startswith("-") else s


Step = tuple[str, str, str]  #: (title, LaTeX, plain text)


def _dot_step(c: Cell, d: int) -> Step:
    """1. q_i and k_j, their products term by term, the sum."""
    i, j, dk = c.query, c.key, len(c.products)
    n = lambda v: _paren(number(v, d))  # noqa: E731
    p = lambda v: _paren(_plain(v, d))  # noqa: E731
    idx = _shown(dk)
    tex_terms = " + ".join(
        r"\cdots" if t is None else f"{n(c.q[t])} \\cdot {n(c.k[t])}" for t in idx
    )
    tex_prods = " + ".join(r"\cdots" if t is None else n(c.products[t]) for t in idx)
    txt_terms = " + ".join("…" if t is None else f"{p(c.q[t])}·{p(c.k[t])}" for t in idx)
    txt_prods = " + ".join("…" if t is None else p(c.products[t]) for t in idx)
    return (
        _("1. Dot product of query {i} and key {j} (d_k = {dk} terms)").format(i=i, j=j, dk=dk),
        f"q_{{{i}}} = {_vec(c.q, d, True)},\\quad k_{{{j}}} = {_vec(c.k, d, True)}"
        f"\\\\ q_{{{i}}} \\cdot k_{{{j}}} = {tex_terms}"
        f"\\\\ = {tex_prods} = {number(c.dot, d)}",
        f"q_{i} = {_vec(c.q, d, False)}; k_{j} = {_vec(c.k, d, False)}. "
        f"q_{i} · k_{j} = {txt_terms} = {txt_prods} = {_plain(c.dot, d)}.",
    )


def _scale_step(c: Cell, d: int) -> Step:
    """2. The dot product times the scale."""
    i, j, f = c.query, c.key, c.scale
    return (
        _("2. Scale: times {f}").format(f=_plain(f, 4)),
        f"q_{{{i}}} \\cdot k_{{{j}}} \\times {number(f, 4)} = {number(c.dot, d)} \\times "
        f"{_paren(number(f, 4))} = {number(c.dot * f, d)}",
        f"{_plain(c.dot, d)} × {_plain(f, 4)} = {_plain(c.dot * f, d)}.",
    )


def _mask_step(c: Cell, d: int) -> Step:
    """3. The mask: the score, or -inf for a hidden key."""
    i, j = c.query, c.key
    if c.masked:
        why = _("(key {j} is masked for query {i})").format(i=i, j=j)
        return (
            _("3. Mask: this key is hidden"),
            f"s_{{{i},{j}}} = -\\infty \\quad \\text{{{escape(why)}}}",
            _(
                "Key {j} is masked for query {i}: the score s_{i},{j} is −∞ and the weight is 0."
            ).format(i=i, j=j),
        )
    return (
        _("3. Mask: this key is visible"),
        f"s_{{{i},{j}}} = {number(c.score, d)}",
        _("Key {j} is visible to query {i}: the score s_{i},{j} = {s}.").format(
            i=i, j=j, s=_plain(c.score, d)
        ),
    )


def _exp_step(c: Cell, d: int) -> Step:
    """4. The row's exponentials, shifted by its largest score, and their sum."""
    i = c.query
    if c.fully_masked:
        every = escape(_("for every key"))
        return (
            _("4. Exponentials: none (every key is masked)"),
            f"e_{{{i},m}} = 0 \\text{{ {every} }} m, \\quad \\sum_m e_{{{i},m}} = 0",
            _(
                "Query {i} may see no key at all: every exponential is 0 and so is their sum."
            ).format(i=i),
        )
    return (
        _("4. Exponentials of row {i}, shifted by its largest score {max}").format(
            i=i, max=_plain(c.row_max, d)
        ),
        f"e_{{{i},m}} = \\exp(s_{{{i},m}} - {_paren(number(c.row_max, d))}) = "
        f"{_vec(c.row_exps, d, True)},\\quad \\sum_m e_{{{i},m}} = {number(c.exp_sum, d)}",
        _(
            "e_{i},m = exp(s_{i},m − {max}) for the {n} keys (0 where masked) = {exps}; "
            "their sum = {sum}."
        ).format(
            i=i,
            max=_paren(_plain(c.row_max, d)),
            n=c.n_tokens,
            exps=_vec(c.row_exps, d, False),
            sum=_plain(c.exp_sum, d),
        ),
    )


def _weight_step(c: Cell, d: int) -> Step:
    """5. The weight: this key's exponential over the row's sum."""
    i, j = c.query, c.key
    title = _("5. Weight a_{i},{j} = {w}").format(i=i, j=j, w=_plain(c.weight, d))
    if c.fully_masked:
        none = escape(_("(no key to attend to)"))
        return (
            title,
            f"a_{{{i},{j}}} = 0 \\quad \\text{{{none}}}",
            _("a_{i},{j} = 0 (query {i} has no key to attend to).").format(i=i, j=j),
        )
    e, total, w = c.row_exps[j], c.exp_sum, c.weight
    return (
        title,
        f"a_{{{i},{j}}} = \\frac{{e_{{{i},{j}}}}}{{\\sum_m e_{{{i},m}}}} = "
        f"\\frac{{{number(e, d)}}}{{{number(total, d)}}} = {number(w, d)}",
        _("a_{i},{j} = e_{i},{j} / sum = {e} / {sum} = {w}.").format(
            i=i, j=j, e=_plain(e, d), sum=_plain(total, d), w=_plain(w, d)
        ),
    )


def _output_step(c: Cell, d: int) -> Step:
    """6. The output row of the query: the weighted sum of the values, one term per key."""
    i, idx = c.query, _shown(c.n_tokens)
    tex_out = " + ".join(
        r"\cdots" if m is None else f"{number(c.row_weights[m], d)}\\,{_vec(c.values[m], d, True)}"
        for m in idx
    )
    txt_out = " + ".join(
        "…" if m is None else f"{_plain(c.row_weights[m], d)}·{_vec(c.values[m], d, False)}"
        for m in idx
    )
    return (
        _("6. Output of query {i}: the weighted sum of the values").format(i=i),
        f"\\text{{out}}_{{{i}}} = \\sum_m a_{{{i},m}} v_m = {tex_out}"
        f"\\\\ = {_vec(c.output, d, True)}",
        _("out_{i} = sum over m of a_{i},m · v_m = {terms} = {out}.").format(
            i=i, terms=txt_out, out=_vec(c.output, d, False)
        ),
    )


def cell_steps(c: Cell, decimals: int = CELL_DECIMALS) -> list[Step]:
    """The worked computation of weight a_{i,j}, one step a tuple ``(title, LaTeX, text)``,
    the words in the shown language (cell.js writes the same messages in the browser; the
    numbers keep the point: they stand in formulas):
    cells are named with a comma, a_{2,5}: above N = 10, a_{125} could be a_{12,5} or a_{1,25};
    the LaTeX for KaTeX / a slide, the text for a screen reader or a plain note. Steps:
    q_i and k_j with their products term by term and the sum; the scale; the mask; the
    row's exponentials and their sum; the weight; the output row as the weighted sum of
    the values (one term per key)."""
    steps = (_dot_step, _scale_step, _mask_step, _exp_step, _weight_step, _output_step)
    return [step(c, decimals) for step in steps]


def cell_latex(c: Cell, labels: Sequence[str] = (), decimals: int = CELL_DECIMALS) -> str:
    """The worked computation of a cell as one LaTeX ``gathered`` block (KaTeX, or a display
    equation of an ``amsmath`` document), a comment line before each step."""
    tok = lambda t: f" ({escape(labels[t])})" if t < len(labels) else ""  # noqa: E731
    lines = [
        f"% weight a_{{{c.query},{c.key}}} of head {c.head}: query {c.query}{tok(c.query)}, "
        f"key {c.key}{tok(c.key)}",
        r"\begin{gathered}",
    ]
    steps = cell_steps(c, decimals)
    for k, (title, tex, __) in enumerate(steps):
        lines += [f"% {escape(title)}", tex + (r" \\[6pt]" if k < len(steps) - 1 else "")]
    return "\n".join([*lines, r"\end{gathered}"])


def cell_text(c: Cell, decimals: int = CELL_DECIMALS) -> str:
    """The worked computation of a cell as plain text, one line per step."""
    return "\n".join(f"{title}: {txt}" for title, __, txt in cell_steps(c, decimals))


# --------------------------------------------------------------------------- a slide's size

#: Widths in em of KaTeX's glyphs (its fonts' metrics, rounded up), for a formula's size
#: before it is drawn: digits, a minus sign with its spacing, a point, a relation with its
#: spaces, a letter; anything else counts as :data:`_OTHER_EM`.
_GLYPH_EM = {**dict.fromkeys("0123456789", 0.5), "-": 0.78, ".": 0.28, "=": 1.34, ",": 0.45}
_LETTER_EM, _OTHER_EM = 0.75, 0.6
#: A matrix's row (KaTeX's baselineskip), the space between two columns, its brackets.
_ROW_EM, _COLSEP_EM, _BRACKETS_EM = 1.2, 1.0, 1.2
_MATRIX = re.compile(r"\\begin\{([bp]?matrix)\}(.*?)\\end\{\1\}", re.S)
_DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)


def _text_em(tex: str) -> float:
    """The width of ``tex`` without matrices, its commands counted as one glyph."""
    tex = re.sub(r"\\qquad", "", tex)
    tex = re.sub(r"\\[A-Za-z]+", "x", tex)
    tex = re.sub(r"[_^{}\s]", "", tex)
    return sum(_GLYPH_EM.get(c, _LETTER_EM if c.isalpha() else _OTHER_EM) for c in tex)


def _matrix_em(body: str) -> tuple[float, float]:
    """A matrix's (width, height) in em from its rows (``\\\\``) and cells (``&``)."""
    rows = [[_text_em(c) for c in r.split("&")] for r in body.split(r"\\") if r.strip()]
    cols = max(len(r) for r in rows)
    widths = [max(r[j] for r in rows if j < len(r)) for j in range(cols)]
    return sum(widths) + _COLSEP_EM * (cols - 1) + _BRACKETS_EM, _ROW_EM * len(rows) + 0.4


def display_extent(text: str) -> tuple[float, float]:
    """The size in em, (width, height), of the display formulas of the Markdown ``text``
    (its ``$$...$$``, matrices side by side as :mod:`attnviz.classroom.exercises` writes them) as
    KaTeX draws them, estimated from its glyphs' widths and rounded up: the widest
    formula's width and the heights of all of them summed, (0, 0) when there are none.
    What a slide needs to size them to the room (:mod:`attnviz.ui.projector`)."""
    width = height = 0.0
    for m in _DISPLAY_MATH.finditer(text):
        tex = m.group(1)
        sizes = [_matrix_em(b.group(2)) for b in _MATRIX.finditer(tex)]
        w = _text_em(_MATRIX.sub("", tex)) + sum(s[0] for s in sizes)
        w += 2.0 * len(re.findall(r"\\qquad", tex))
        width = max(width, w)
        height += max([1.2, *(s[1] for s in sizes)])
    return width, height


def stacked(text: str) -> str:
    """The Markdown ``text`` with each formula of its displays that stood beside another
    (``Q = [...] \\qquad K = [...]``) in a display of its own, under the one before."""
    return _DISPLAY_MATH.sub(
        lambda m: "$$" + re.sub(r"\s*\\qquad\s*", "\n$$\n\n$$\n", m.group(1)) + "$$", text
    )
