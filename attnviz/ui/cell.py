"""The cell panel: a clicked cell of the scores or weights, worked out with this view's numbers.

A board (:mod:`attnviz.ui.board`) keeps its last click in its state,
``st.session_state[board key]["selection"]``: ``{"query": i, "key": j, "head": h, "chart":
role, ...}`` (read with ``.get``). :func:`cell_panel` turns it
into :func:`attnviz.explain.cell` and shows the steps of :func:`attnviz.latex.cell_steps`:
each as an equation (KaTeX, whose MathML a screen reader reads) and, in a second tab, as
plain text; the third tab holds the LaTeX to copy. It is drawn by the rerun the click
causes (the fragment the board sits in), so a page calls it in one line, after the board.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from attnviz import engine, explain, latex
from attnviz.ui.page import md_text

HINT = (
    "Click a cell of the scores or the weights to see how it was computed, step by step, "
    "with this view's numbers."
)


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
    n, heads = result.n_tokens, result.num_heads
    if q is None or k is None or not (0 <= q < n and 0 <= k < n and 0 <= h < heads):
        return None
    return explain.cell(result, h, q, k)


def show_cell(c: explain.Cell, labels: tuple[str, ...], key: str, title: str = "") -> None:
    """One cell's worked computation: equations, plain text, and the LaTeX to copy."""
    i, j = c.query, c.key
    li = f" {md_text(labels[i])}" if i < len(labels) else ""
    lj = f" {md_text(labels[j])}" if j < len(labels) else ""
    st.markdown(
        f"**{title}How weight a{i},{j} = {c.weight:.4f} came about** — head {c.head}, "
        f"query {i}{li}, key {j}{lj}"
        + (" (masked: this key is hidden from this query)" if c.masked else "")
    )
    steps = latex.cell_steps(c)
    eq, text, tex = st.tabs(["Equations", "Plain text", "LaTeX"], key=f"{key}_tabs")
    with eq:
        for step_title, step_tex, _ in steps:
            st.markdown(md_plain(step_title))
            st.latex(step_tex)
    with text:
        for step_title, _, step_text in steps:
            st.markdown(f"**{md_plain(step_title)}.** {md_plain(step_text)}")
    with tex:
        st.caption("Copy with the button at the top right; it goes inside a display equation.")
        st.code(latex.cell_latex(c, labels), language="latex")


def cell_panel(
    result: engine.AttentionResult,
    labels: tuple[str, ...],
    board_key: str,
    head: int = 0,
    *,
    title: str = "",
) -> explain.Cell | None:
    """Under board ``board_key``: the worked computation of its last clicked cell (of
    ``result``, head from the click or ``head``), or a hint. Returns the cell shown."""
    c = picked_cell(result, selection(board_key), head)
    with st.container(key=f"{board_key}_cell", border=True):
        if c is None:
            st.caption(HINT)
            return None
        show_cell(c, labels, key=f"{board_key}_cell", title=title)
    return c
