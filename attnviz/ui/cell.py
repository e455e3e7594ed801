"""The cell panel: a clicked cell of the scores or weights, worked out with this view's numbers.

Two parts:

1. In the browser, at once (a few ms after the click): the board's chart module
   ``attnviz/ui/board/js/cell.js`` writes the steps out as text under the board, from the head's
   Q, K, V rows, the scale and the mask that :func:`cell_data` puts in the chart's link
   (``ui.link_attn(..., arithmetic=cell_data(result, head))``), while N is at most
   :data:`CLIENT_MAX_N`.
2. On the server, by the rerun the click causes (the fragment the board sits in): the board
   keeps its last click in its state, ``st.session_state[board key]["selection"]``:
   ``{"query": i, "key": j, "head": h, "chart": role, ...}`` (read with ``.get``).
   :func:`cell_panel` turns it into :func:`attnviz.teaching.explain.cell` and shows the steps of
   :func:`attnviz.teaching.latex.cell_steps` as equations (KaTeX, whose MathML a screen reader
   reads)
   and the LaTeX to copy. When the browser wrote the steps, the equations and the LaTeX sit
   in a closed expander under them ("for slides"), so that the page explains the cell once;
   above :data:`CLIENT_MAX_N` the server writes the heading and the steps itself, as text,
   equations and LaTeX in tabs.

A page calls it in one line, after the board.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import streamlit as st

from attnviz import engine, i18n
from attnviz.engine import limits
from attnviz.i18n import N_, _
from attnviz.teaching import explain, latex
from attnviz.teaching.token_text import visible_all
from attnviz.ui.page import md_token

HINT = N_(
    "Click a cell of the scores or the weights to see how it was computed, step by step, "
    "with this view's numbers."
)
#: The hint of a page whose clickable charts are weights only (the multi-head page's heads).
HINT_WEIGHTS = N_(
    "Click a cell of a head's weights to see how it was computed, step by step, with this "
    "view's numbers."
)


#: The largest views whose cells the browser works out (cell.js): N tokens at most
#: CLIENT_MAX_N and N x D at most CLIENT_MAX_ND. Above, the arithmetic is not sent and the
#: server's panel writes the steps as text too. Sent: Q, K, V of the heads as float64, so at
#: most 3 x 2048 numbers (66 KB of JSON) even with every head (the small multiples).
CLIENT_MAX_N = limits.CELL_PANEL_N  # attnviz.engine.limits
CLIENT_MAX_ND = limits.CELL_PANEL_ND


def client_side(result: engine.AttentionResult) -> bool:
    """Whether the browser works out this view's cells (see :func:`cell_data`)."""
    n = max(result.weights.shape[1:])  # N queries, M keys (cross-attention: M may differ)
    width = result.num_heads * result.queries.shape[-1]  # D
    return n <= CLIENT_MAX_N and n * width <= CLIENT_MAX_ND


def _f8(a: np.ndarray) -> dict[str, Any]:
    """A float64 array as plotly's base64 form (what ``table.js``'s ``decode`` reads)."""
    a = np.ascontiguousarray(a, dtype="<f8")
    return {"dtype": "f8", "bdata": base64.b64encode(a.tobytes()).decode(), "shape": list(a.shape)}


def cell_data(
    result: engine.AttentionResult,
    heads: int | Sequence[int],
    labels: Sequence[str] = (),
    *,
    title: str = "",
    key_labels: Sequence[str] | None = None,
) -> dict[str, Any] | None:
    """What ``cell.js`` needs to work out any cell of ``heads`` of ``result`` in the browser
    (the ``arithmetic`` of a chart's link), or None for a larger view (:func:`client_side`):
    ``{"scale", "mask": ["1101", ...] (row i: which keys query i sees) or None, "labels",
    "key_labels" (cross-attention: the source's tokens; else absent, the keys are
    ``labels``), "title" (before the panel's heading, e.g. "A: "), "decimals", "terms",
    "heads": {"h": {"q", "k", "v"}}}``, the head's (N, d_k) query rows and (M, d_k) key
    and value rows as base64 float64 (exact)."""
    if not client_side(result):
        return None
    hs = [heads] if isinstance(heads, int | np.integer) else list(heads)
    mask = None
    if result.mask is not None:
        mask = ["".join("1" if v else "0" for v in row) for row in np.asarray(result.mask, bool)]
    out = {
        "scale": float(result.scale),
        "mask": mask,
        "labels": visible_all(labels),  # as the ticks show them
        "title": title,
        "decimals": latex.CELL_DECIMALS,
        "terms": latex.CELL_TERMS,
        "heads": {
            str(int(h)): {
                "q": _f8(result.queries[h]),  # (N, d_k)
                "k": _f8(result.keys[h]),  # (M, d_k)
                "v": _f8(result.values[h]),  # (M, d_v)
            }
            for h in hs
        },
    }
    if key_labels is not None:
        out["key_labels"] = visible_all(key_labels)
    return out


_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<>#$|~"})


def md_plain(text: str) -> str:
    """``text`` (numbers and symbols, no user text) as Markdown shown as written: the
    characters Markdown and Streamlit read (``_`` italics, ``$`` maths, ...) escaped, and a
    leading "1." not taken for a list."""
    out = text.translate(_MD_SPECIAL)
    return out.replace(".", "\\.", 1) if out[:1].isdigit() else out


def selection(board_key: str) -> dict[str, Any] | None:
    """The last click on board ``board_key`` (a dict), or None. The board's state is
    ``{"selection": click}`` (components v2); a bare click dict is taken as it is."""
    v = st.session_state.get(board_key)
    if isinstance(v, Mapping) and "selection" in v:
        v = v["selection"]
    return dict(v) if isinstance(v, Mapping) else None


def _int(v: Any) -> int | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return int(v) if float(v).is_integer() else None


def picked_cell(
    result: engine.AttentionResult, sel: dict[str, Any] | None, head: int
) -> explain.Cell | None:
    """The cell a click ``sel`` names in ``result`` (its head if it carries one, else
    ``head``), or None if there was no click or it lies outside this view (N changed)."""
    if sel is None:
        return None
    q, k, h = _int(sel.get("query")), _int(sel.get("key")), _int(sel.get("head"))
    h = head if h is None else h
    heads, n, m = result.weights.shape  # (H, N queries, M keys)
    if q is None or k is None or not (0 <= q < n and 0 <= k < m and 0 <= h < heads):
        return None
    return explain.cell(result, h, q, k)


def show_cell(
    c: explain.Cell,
    labels: tuple[str, ...],
    key: str,
    title: str = "",
    *,
    text: bool = True,
    key_labels: tuple[str, ...] | None = None,
) -> None:
    """One cell's worked computation. ``text=True`` (the browser did not write it): a
    heading, then the steps in tabs (equations, plain text, the LaTeX to copy).
    ``text=False`` (``cell.js`` wrote the heading and the steps as text under the chart):
    only a closed expander with the same steps as equations and the LaTeX, for slides.
    ``key_labels``: the keys' tokens when they are not ``labels`` (cross-attention)."""
    i, j = c.query, c.key
    klabels = labels if key_labels is None else key_labels
    steps = latex.cell_steps(c)
    if not text:
        with st.expander(
            _(
                "{title}Weight a\\_{i},{j} of head {head} as equations, and its LaTeX for slides"
            ).format(title=title, i=i, j=j, head=c.head),
            expanded=False,
            key=f"{key}_tex",
        ):
            _equations(steps)
            _latex_to_copy(c, labels)
        return
    li = f" {md_token(labels[i])}" if i < len(labels) else ""
    lj = f" {md_token(klabels[j])}" if j < len(klabels) else ""
    st.markdown(
        _(
            "**{title}How weight a\\_{i},{j} = {weight} came about** — head {head}, "
            "query {i}{li}, key {j}{lj}"
        ).format(title=title, i=i, j=j, weight=i18n.fmt(c.weight, ".4f"), head=c.head, li=li, lj=lj)
        + (_(" (masked: this key is hidden from this query)") if c.masked else "")
    )
    tabs = st.tabs([_("Equations"), _("Plain text"), _("LaTeX")], key=f"{key}_tabs")
    with tabs[0]:
        _equations(steps)
    with tabs[1]:
        for step_title, _tex, step_text in steps:
            st.markdown(f"**{md_plain(step_title)}.** {md_plain(step_text)}")
    with tabs[2]:
        _latex_to_copy(c, labels)


def _equations(steps: list[latex.Step]) -> None:
    for step_title, step_tex, _text in steps:
        st.markdown(md_plain(step_title))
        # inline maths (KaTeX), not st.latex: a long sum wraps at its + signs instead of
        # needing a scroll region (which a keyboard cannot reach, WCAG 2.1.1)
        st.markdown(f"$\\displaystyle {step_tex}$")


def _latex_to_copy(c: explain.Cell, labels: tuple[str, ...]) -> None:
    st.caption(_("Copy with the button at the top right; it goes inside a display equation."))
    st.code(latex.cell_latex(c, labels), language="latex", wrap_lines=True)


def cell_panel(
    result: engine.AttentionResult,
    labels: tuple[str, ...],
    board_key: str,
    head: int = 0,
    *,
    title: str = "",
    hint: str = HINT,
    key_labels: tuple[str, ...] | None = None,
) -> explain.Cell | None:
    """Under board ``board_key``: the worked computation of its last clicked cell (of
    ``result``, head from the click or ``head``), or ``hint`` (it names the charts of the
    page that can be clicked; an ``N_``-marked text such as :data:`HINT`, translated
    here). ``key_labels``: the keys' tokens when they are not ``labels`` (cross-attention:
    the source's). Returns the cell shown."""
    c = picked_cell(result, selection(board_key), head)
    with st.container(key=f"{board_key}_cell", border=True):
        if c is None:
            st.caption(_(hint))
            return None
        show_cell(
            c,
            labels,
            key=f"{board_key}_cell",
            title=title,
            text=not client_side(result),
            key_labels=key_labels,
        )
    return c
