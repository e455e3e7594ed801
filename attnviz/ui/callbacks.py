"""The controls' callbacks and the presets' control values.

The controls' table (:mod:`attnviz.ui.controls`) names these callbacks; the links
(:mod:`attnviz.ui.links`) and the sidebar (:mod:`attnviz.ui.walker`) use the presets'
values. This module imports no other ui module but :mod:`attnviz.ui.sizes`, so all of
them can import it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import streamlit as st

from attnviz.teaching import presets
from attnviz.ui.sizes import D_DEFAULT, HEADS_DEFAULT, nearest_divisor


def preset_names(values: dict | None = None) -> list[str]:
    """The notebook presets' names (``values``: unused, for a control's ``options``)."""
    return list(presets.names())


def preset_values(name: str) -> dict[str, Any]:
    """The control values of a preset (what "load preset" sets)."""
    p = presets.get(name)
    out: dict[str, Any] = {"N": p.n_tokens, "D": p.d_model, "heads": p.num_heads}
    if p.scale is True:
        out["scale"] = "1/√d_k"
    elif p.scale is False:
        out["scale"] = "none"
    else:
        out["scale"], out["factor"] = "custom", float(p.scale)
    out["mask"] = p.mask
    return out


def load_preset(name: str) -> None:
    """Set the controls to a preset's values (use as a button callback)."""
    st.session_state["source"] = "preset"
    st.session_state["preset"] = name
    st.session_state.update(preset_values(name))


def on_source_change() -> None:
    """Source -> preset: the preset's sizes at once (before the widgets are drawn)."""
    if st.session_state.get("source") == "preset":
        names = preset_names()
        name = st.session_state.get("preset") or (names[0] if names else None)
        if name in names:
            st.session_state.update(preset_values(name))


def on_preset_change() -> None:
    """Another preset: its sizes."""
    name = st.session_state.get("preset")
    if name in preset_names():
        st.session_state.update(preset_values(name))


def on_d_change() -> None:
    """A new D: heads becomes the divisor of D nearest to it."""
    d = st.session_state.get("D", D_DEFAULT)
    h = st.session_state.get("heads", HEADS_DEFAULT)
    if isinstance(d, int) and d >= 1 and (not isinstance(h, int) or d % h):
        st.session_state["heads"] = nearest_divisor(d, h if isinstance(h, int) else 1)


# --------------------------------------------------------------------------- number boxes

#: Session key: the values typed in a number box that were not valid, as (key, typed,
#: used), until the sidebar warns about them (:mod:`attnviz.ui.walker`).
BOX_NOTICES = "box_notices"


def box_key(key: str) -> str:
    """The widget key of the number box beside slider ``key`` (``N`` -> ``N_box``)."""
    return f"{key}_box"


def on_box_change(key: str, lo: int, hi: int, then: Callable[[], None] | None = None) -> None:
    """on_change of the number box beside slider ``key``: the slider takes the typed value,
    the nearest integer in lo..hi when it is not one (noted in :data:`BOX_NOTICES` for the
    sidebar's warning); then ``then``, the slider's own callback (D: heads stays a
    divisor). An emptied box changes nothing (the sidebar puts the slider's value back)."""
    typed = st.session_state.get(box_key(key))
    if typed is None:
        return
    try:
        v = float(typed)
    except (TypeError, ValueError):
        v = math.nan
    if math.isfinite(v):
        used = min(max(round(v), lo), hi)
    else:
        current = st.session_state.get(key)
        used = current if isinstance(current, int) else lo
    if used != v:
        st.session_state.setdefault(BOX_NOTICES, []).append((key, typed, used))
    st.session_state[key] = used
    if then is not None:
        then()
