"""Compare mode: view B, the sidebar's view A with some settings changed.

B's controls are the sidebar's (:data:`attnviz.ui.controls.CONTROLS`: label, options,
range, link rule), drawn on the page with the key ``b_<key>`` and bound to the URL, so a
link holds only what B changes: ``?b_scale=none``, ``?b_mask=causal``, ``?b_seed=3``,
``?b_heads=4``. Each starts at "same as A" (empty for a number), which keeps A's value.
An invalid ``b_`` value in a link is dropped by Streamlit's URL binding and a warning says
so (:func:`b_controls`, the first time the page runs in a session). ``b_head`` picks B's
head: with nothing else changed, A and B are two heads of one view.

The classic comparisons' presets are in :mod:`attnviz.ui.compare_presets`;
:func:`latest_click` finds the last click among the page's boards for the cell panel.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from attnviz import engine, viz
from attnviz.engine import masks
from attnviz.i18n import N_, _, pgettext
from attnviz.ui import links, state
from attnviz.ui.cell import client_side, picked_cell, selection, show_cell
from attnviz.ui.code import code_lines, lazy_code_box
from attnviz.ui.controls import BY_KEY, LABELS, SEED_MAX, Control, option_label, replace
from attnviz.ui.export import export_section
from attnviz.ui.page import head_picker, md_text
from attnviz.ui.sizes import divisors, nearest_divisor

#: The value of a B control that keeps A's value (the option shown first, the default).
#: An English value (in the session and the link's logic); shown as ``_(SAME)``.
SAME = N_("same as A")
#: The sidebar controls B may change, in the sidebar's order (N, the input and the layout
#: stay A's: B − A needs the same tokens, drawn the same way).
B_KEYS = ("D", "heads", "seed", "init", "bias", "scale", "factor", "mask", *masks.PARAMS)
#: Short labels of B's controls (the sidebar's are long for a row of narrow columns); English,
#: shown as ``_(SHORT[key])``.
SHORT = {
    "D": N_("D (width)"),
    "heads": N_("heads"),
    "seed": N_("seed"),
    "init": N_("initialisation"),
    "bias": N_("biases"),
    "scale": N_("scale"),
    "factor": N_("factor"),
    "mask": N_("mask"),
    **{key: p.short for key, (__, p) in masks.PARAMS.items()},
}
_CHECKED = "compare_links_checked"  # book key: the page's first run checked the link


def url_key(key: str) -> str:
    """The widget and URL key of B's control ``key``: ``b_<key>``."""
    return f"b_{key}"


def a_values(s: Any) -> dict[str, Any]:
    """The values of A's settings under the controls' keys (``D``, ``scale``, ...)."""
    return {k: s.value(k) for k in B_KEYS}


def _fmt(v: Any) -> str:
    """A value as the link writes it (``true``/``false`` for the biases)."""
    return str(v).lower() if isinstance(v, bool) else str(v)


def _shown(v: Any) -> str:
    """An option of B's selectboxes as shown: "same as A" in the shown language, the rest
    as the link writes it (the link holds this text: a value stays canonical)."""
    return _(SAME) if isinstance(v, str) and v == SAME else _fmt(v)


def _said(k: str, v: Any) -> str:
    """A value in a sentence: biases on/off, a choice by its label (as the sidebar names it,
    in the shown language), the rest as the link writes it."""
    if k == "bias":
        return pgettext("biases", "on") if v else pgettext("biases", "off")
    return option_label(k, v) or _fmt(v)


def _widget(c: Control, a: dict, b: dict, where: Any, disabled: bool) -> Any:
    """B's control ``c`` in ``where``: its value, or :data:`SAME` / None for A's."""
    key = url_key(c.key)
    shown_a = option_label(c.key, a[c.key]) or _fmt(a[c.key])
    common = {
        "key": key,
        "bind": "query-params",
        "disabled": disabled,
        "help": _("same as A: {value}. ").format(value=shown_a) + (c.help_text() or ""),
    }
    label = _("B: {control}").format(control=_(SHORT[c.key]))
    if c.kind == "number" or c.key == "D":
        lo, hi = (c.lo, c.hi) if c.key != "seed" else (0, SEED_MAX)
        step = c.step if c.step is not None else 1
        return where.number_input(
            label,
            lo,
            hi,
            value=None,
            step=step,
            placeholder=_("same as A ({value})").format(value=a[c.key]),
            **common,
        )
    if c.key == "heads":
        options = divisors(b["D"])
    elif c.key == "bias":
        options = [True, False]
    else:
        options = c.option_list(b)
    return where.selectbox(label, [SAME, *options], format_func=_shown, **common)


def _disabled(c: Control, source: str) -> bool:
    """A control the input fixes (a preset's sizes and weights, an upload's D)."""
    return source in c.disabled_by or source in c.derived_by


@dataclass(frozen=True)
class BControls:
    """What B changes: ``changes`` (Settings field or mask parameter -> value), its settings
    and notes."""

    changes: dict[str, Any]
    settings: Any  # attnviz.ui.controls.Settings
    notes: tuple[str, ...]


def b_controls(view: state.View, columns: int = 5) -> BControls:
    """Draw B's controls (in rows of ``columns``) and return what B changes. On the page's
    first run in a session, a ``b_`` link value the widgets did not take gets a warning."""
    s = view.settings
    a = a_values(s)
    b = dict(a)
    raw = {k: st.query_params.get_all(url_key(k)) for k in B_KEYS if url_key(k) in st.query_params}
    notes: list[str] = []
    changes: dict[str, Any] = {}
    checkable: set[str] = set()  # drawn and free: a link value it did not take was invalid
    cols = st.columns(columns)
    drawn = 0
    for k in B_KEYS:
        c = BY_KEY[k]
        if c.when is not None and b.get(c.when[0]) != c.when[1]:
            continue  # factor only for a custom scale, pad only for the padding mask
        disabled = _disabled(c, s.source)
        v = _widget(c, a, b, cols[drawn % columns], disabled)
        drawn += 1
        if not disabled:
            checkable.add(k)
        if v is None or (isinstance(v, str) and v == SAME):
            continue
        if disabled:
            notes.append(
                _("B's {key} is set by the input ({source}) and stays A's.").format(
                    key=k, source=_(LABELS["source"][s.source])
                )
            )
            continue
        b[k] = changes[k if c.mask_param else c.field] = v
    if b["heads"] not in divisors(b["D"]):  # A's heads with B's width
        h = nearest_divisor(b["D"], b["heads"])
        notes.append(
            _("{heads} heads do not divide B's D = {d}: B uses {h} heads.").format(
                heads=b["heads"], d=b["D"], h=h
            )
        )
        b["heads"] = changes["heads"] = h
    book = state.book()
    if not book.get(_CHECKED):
        book[_CHECKED] = True
        notes += _link_notices({k: r for k, r in raw.items() if k in checkable}, a, b)
    return BControls(changes, replace(s, **changes), tuple(notes))


def _link_notices(raw: dict[str, list[str]], a: dict, b: dict) -> list[str]:
    """A warning for each ``b_`` link value the widgets did not take (invalid ones)."""
    out = []
    for k, r in raw.items():
        if links.same(r, b[k]):
            continue
        value = r[-1] if r else ""
        said = (
            _(
                "The link set {set}, which is not valid (B's {key} must be {rule}); "
                "B uses {used}, A's value."
            )
            if b[k] == a[k]
            else _(
                "The link set {set}, which is not valid (B's {key} must be {rule}); B uses {used}."
            )
        )
        out.append(
            said.format(
                set=md_text(f"{url_key(k)}={value}"),
                key=k,
                rule=BY_KEY[k].rule_text(b),
                used=md_text(f"{k}={_fmt(b[k])}"),
            )
        )
    return out


def head_pickers(a_heads: int, b_heads: int, where_a: Any, where_b: Any) -> tuple[int, int]:
    """A's head (the page's ``head``) and B's (``b_head``, "same as A" by default)."""
    ha = head_picker(a_heads, where_a, label=_("A: head"))
    hb = where_b.selectbox(
        _("B: head"),
        [SAME, *range(b_heads)],
        key="b_head",
        bind="query-params",
        format_func=_shown,
        help=_(
            "Another head of B's view; with nothing else changed, A and B are two heads of "
            "one view."
        ),
    )
    hb = ha if hb == SAME else int(hb)
    return ha, min(hb, b_heads - 1)


def compute_b(view: state.View, settings: Any) -> engine.AttentionResult:
    """B's result: the same input as A with B's settings (the bounded cache of ``compute``)."""
    changes = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}
    return state.variant(view, **changes)


def view_b(view: state.View, b: Any) -> engine.AttentionResult | None:
    """B's notes (a value its range changed), then B's result; None, with the reason said,
    where B's settings cannot be computed."""
    for note in b.notes:
        st.warning(note, icon=":material/warning:")
    try:
        return compute_b(view, b.settings)
    except ValueError as e:
        st.error(_("Cannot compute view B with these settings: {error}").format(error=e))
        return None


def what_differs(a: Any, b: Any) -> tuple[tuple[str, ...], str, str]:
    """The settings where B differs from A, and each view said by them ("the sidebar's
    view" and "the same view" where none differs)."""
    diff = differing(a, b)
    what_a = describe(a, diff) if diff else _("the sidebar's view")
    what_b = describe(b, diff) if diff else _("the same view")
    return diff, what_a, what_b


def describe(s: Any, keys: tuple[str, ...] = B_KEYS) -> str:
    """The settings ``keys`` of ``s`` in a few words: "scale none · mask causal"."""
    out = []
    for k in keys:
        c = BY_KEY[k]
        if c.when is not None and s.value(c.when[0]) != c.when[1]:
            continue
        out.append(f"{_(SHORT[k])} {_said(k, s.value(k))}")
    return " · ".join(out)


def differing(a: Any, b: Any) -> tuple[str, ...]:
    """The keys of :data:`B_KEYS` whose values differ between settings ``a`` and ``b``."""
    return tuple(k for k in B_KEYS if a.value(k) != b.value(k))


# --------------------------------------------------------------------------- clicks


def latest_click(board_keys: tuple[str, ...]) -> dict[str, Any] | None:
    """The newest click among the boards ``board_keys`` (the one whose value changed since
    the last run; each board keeps only its own last click)."""
    book = state.book()
    seen = book.setdefault("compare_clicks", {})
    newest = book.get("compare_click")
    for k in board_keys:
        v = selection(k)
        if v is not None and v != seen.get(k):
            newest = v
            seen[k] = v
    book["compare_click"] = newest
    return newest


#: The hint before the first click: the page's charts are A's and B's weights and B − A.
HINT = N_(
    "Click a cell of A, B or B − A to see how A and B each computed that weight, step by "
    "step, with their own numbers."
)


def cell_pair(
    board_keys: tuple[str, ...],
    results: tuple[engine.AttentionResult, engine.AttentionResult],
    heads: tuple[int, int],
    labels: tuple[str, ...],
) -> None:
    """The last clicked cell (on any of ``board_keys``) worked out in A, then in B, each in
    its own head (one above the other: the equations need the page's width); a hint
    before the first click."""
    click = latest_click(board_keys)
    sel = None if click is None else {k: v for k, v in click.items() if k != "head"}
    cells = [picked_cell(r, sel, h) for r, h in zip(results, heads, strict=True)]
    with st.container(key="cmp_cell", border=True):
        if cells[0] is None or cells[1] is None:
            st.caption(_(HINT))
            return
        for c, r, which in zip(cells, results, "AB", strict=True):
            text = not client_side(r)  # else the browser wrote the steps under A and B
            show_cell(c, labels, key=f"cmp_cell_{which}", title=f"{which}: ", text=text)


def changes_table(wa: np.ndarray, wb: np.ndarray, labels: tuple[str, ...], k: int = 10) -> None:
    """The ``k`` largest changes |B − A| as a table: query, key, A, B, B − A."""
    rows = viz.compare.largest_changes(wa, wb, k=k)
    if not rows:
        st.caption(_("No weight changed."))
        return

    def name(t: int) -> str:
        return f"{t} ({labels[t]})" if t < len(labels) else str(t)

    st.dataframe(
        pd.DataFrame(
            {
                "query": [name(c.query) for c in rows],
                "key": [name(c.key) for c in rows],
                "A": [c.a for c in rows],
                "B": [c.b for c in rows],
                "B − A": [c.delta for c in rows],
            }
        ),
        hide_index=True,
        column_config={  # the columns' names stay English; their labels are shown translated
            "query": st.column_config.Column(_("query")),
            "key": st.column_config.Column(_("key")),
            "A": st.column_config.NumberColumn(format="%.4f"),
            "B": st.column_config.NumberColumn(format="%.4f"),
            "B − A": st.column_config.NumberColumn(format="%+.4f"),
        },
        key="cmp_changes",
    )


def compare_code(view: state.View, view_b: state.View, heads: tuple[int, int]) -> str:
    """NumPy lines that recompute A's and B's weights (each view's code, as every page's
    code box has it) and ``diff``, the third chart B − A."""
    ha, hb = heads
    return (
        f"# ---- view A (head {ha})\n{code_lines(view, ha)}\n"
        "A_a = A.copy()  # view A's weights\n\n"
        f"# ---- view B: the same input, B's settings (head {hb})\n{code_lines(view_b, hb)}\n"
        "A_b = A.copy()  # view B's weights\n"
        "diff = A_b - A_a  # B − A, the third chart (rows = queries)"
    )


def exports(
    view: state.View, b_settings: Any, rb: engine.AttentionResult, heads: tuple[int, int]
) -> None:
    """The page's Export (A's and B's weights and B − A as CSV; the NPZ adds both views'
    weights of every head) and its code box (:func:`compare_code`)."""
    ha, hb = heads
    wa, wb = view.result.weights[ha], rb.weights[hb]  # (N, N) each
    export_section(
        view,
        page="compare",
        squares={"A weights": wa, "B weights": wb, "B minus A": wb - wa},
        extra={"a_weights": view.result.weights, "b_weights": rb.weights},
    )
    # built only while open, as the Export box (a B change reruns this part: ~40 ms saved)
    lazy_code_box(
        _("NumPy code that reproduces A, B and B − A"),
        "code_box_compare",
        lambda: compare_code(
            view, dataclasses.replace(view, settings=b_settings, result=rb), heads
        ),
    )
