"""Links: the URL's values and presets as links.

Streamlit binds the sidebar widgets to the URL (``bind="query-params"``). What it does
not do is handled here: integers it cannot parse (``seed=1e999``), link values that a
derived control must override (``?source=preset&N=30``) and presets as URL queries. The
callbacks that keep ``heads`` a divisor of ``D`` and apply a preset's sizes are in
:mod:`attnviz.ui.callbacks`.
"""

from __future__ import annotations

import math
from typing import Any

import streamlit as st

from attnviz import masks
from attnviz.ui import streamlit_private
from attnviz.ui.callbacks import preset_names, preset_values
from attnviz.ui.controls import DEFAULTS
from attnviz.ui.sizes import default_heads

#: Integer number inputs bound to the URL (sidebar and pages): the seed, each mask
#: parameter (``pad``), the Masking page's k, Cross-attention's sizes and padding, and
#: Compare's B of each of them.
INT_URL_KEYS = (
    "seed",
    *masks.PARAMS,
    "mk_pad",
    "perm_seed",
    "N_src",
    "N_tgt",
    "pad_src",
    "b_seed",
    *(f"b_{key}" for key in masks.PARAMS),
    "b_D",
)


def preset_query(name: str) -> dict[str, str]:
    """The URL query of a preset's view (values equal to the defaults left out)."""
    vals = {"source": "preset", "preset": name, **preset_values(name)}
    first = preset_names()[0] if preset_names() else None
    out = {}
    for k, v in vals.items():
        default = first if k == "preset" else DEFAULTS.get(k)
        if k == "heads":
            default = default_heads(vals["D"])
        if v != default:
            out[k] = str(v).lower() if isinstance(v, bool) else str(v)
    return out


def drop_overflowing_url_values() -> list[tuple[str, str]]:
    """Remove integer URL values such as ``seed=1e999`` before the widgets read them.

    Streamlit parses them as float("inf") and then calls int() on it, an OverflowError
    it does not catch (it does catch ValueError), so the page would crash. Only on the
    first run of a session (the only run that reads the URL). Uses Streamlit's internal
    query-param state; if that moves, nothing is removed.
    """
    dropped: list[tuple[str, str]] = []
    for key, raw in (streamlit_private.first_run_url_values(INT_URL_KEYS) or {}).items():
        try:
            f = float(raw)
        except ValueError:
            continue  # Streamlit drops non-numbers itself
        if not math.isfinite(f) or abs(f) >= 2**63:
            streamlit_private.forget_url_value(key)
            dropped.append((key, raw))
    return dropped


def drop_url_value(key: str) -> bool:
    """Forget the link's value of ``key`` before its widget reads it (first run only).

    On the first run a URL-bound widget takes the link's value even over
    ``st.session_state``, so a derived control (N set by the text, a preset or an upload)
    can only be set before the widget exists if the link's value is gone. Returns False if
    Streamlit's internal state moved (the caller then overrides the value itself).
    """
    return streamlit_private.forget_url_value(key)


def force(key: str, value: Any) -> None:
    """Before the widget exists this run: make its value ``value`` (derived controls)."""
    if st.session_state.get(key) != value:
        st.session_state[key] = value


def same(raw: Any, value: Any) -> bool:
    """Does the raw URL string ``raw`` stand for the widget value ``value``?"""
    if isinstance(raw, list):
        raw = raw[-1] if raw else ""
    raw = str(raw)
    if isinstance(value, bool):
        return raw.strip().lower() == str(value).lower()
    if isinstance(value, int | float):
        try:
            return float(raw) == float(value)
        except ValueError:
            return False
    return raw == str(value)
