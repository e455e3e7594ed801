"""Compare's presets: the classic comparisons (scaled vs not, causal vs none, two seeds, 1 vs
4 heads, xavier vs normal, B = A), each setting A's sidebar and B's controls
(:mod:`attnviz.ui.compare`'s ``b_<key>``) in one click."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from attnviz.i18n import N_, _
from attnviz.ui.compare import B_KEYS, SAME, url_key
from attnviz.ui.controls import BY_KEY, SEED_MAX


def _reset_b() -> None:
    for k in B_KEYS:
        st.session_state[url_key(k)] = None if BY_KEY[k].kind == "number" or k == "D" else SAME
    st.session_state["b_head"] = SAME


def _preset(a: dict[str, Any], b: dict[str, Any]) -> Callable[[], None]:
    def apply() -> None:
        _reset_b()
        for k, v in a.items():
            st.session_state[k] = v
        for k, v in b.items():
            st.session_state[url_key(k)] = v

    return apply


def _two_seeds() -> None:
    _reset_b()
    seed = int(st.session_state.get("seed", 0))
    st.session_state[url_key("seed")] = seed + 1 if seed < SEED_MAX else seed - 1


def _one_vs_four() -> None:
    _reset_b()
    if int(st.session_state.get("D", 8)) % 4:
        st.session_state["D"] = 8
    st.session_state["heads"] = 1
    st.session_state[url_key("heads")] = 4


#: The classic comparisons: (button label, what it sets, callback); English (the label is
#: also the button's key), shown with ``_()``.
PRESETS: tuple[tuple[str, str, Callable[[], None]], ...] = (
    (
        N_("Scaled vs not"),
        N_("A: scale 1/√d_k · B: none"),
        _preset({"scale": "1/√d_k"}, {"scale": "none"}),
    ),
    (
        N_("Causal vs none"),
        N_("A: no mask · B: causal"),
        _preset({"mask": "none"}, {"mask": "causal"}),
    ),
    (N_("Two seeds"), N_("B: seed + 1"), _two_seeds),
    (N_("1 vs 4 heads"), N_("A: 1 head · B: 4 heads"), _one_vs_four),
    (
        N_("Xavier vs normal"),
        N_("A: xavier · B: normal"),
        _preset({"init": "xavier"}, {"init": "normal"}),
    ),
    ("B = A", N_("B back to A's settings"), _reset_b),
)


def preset_buttons(columns: int | None = None) -> bool:
    """One button per preset, in a row that wraps where their labels do not fit (a laptop
    in Spanish or Arabic: six equal columns cut "1 frente a 4 cabezas" to "1 frente a…"),
    or ``columns`` a row, as wide as their column; whether one was clicked. They change the
    sidebar: outside any fragment, or one that reruns the app after a click."""
    if columns is None:
        cols, width = [st.container(horizontal=True, gap="small", key="cmp_presets")], "content"
    else:
        cols, width = st.columns(columns), "stretch"
    clicked = False
    for i, (label, what, callback) in enumerate(PRESETS):
        clicked |= cols[i % len(cols)].button(
            _(label), help=_(what), on_click=callback, key=f"cmp_preset_{label}", width=width
        )
    return clicked
