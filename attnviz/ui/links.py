"""Links: the URL's values, presets as links, and the callbacks that keep controls valid.

Streamlit binds the sidebar widgets to the URL (``bind="query-params"``). What it does
not do is handled here: integers it cannot parse (``seed=1e999``), link values that a
derived control must override (``?source=preset&N=30``), presets as URL queries, and the
callbacks that keep ``heads`` a divisor of ``D`` and apply a preset's sizes.
"""

from __future__ import annotations

import math
from typing import Any

import streamlit as st

try:  # presets are optional at import time (the app works without them)
    from attnviz import presets as _presets
except ImportError:  # pragma: no cover
    _presets = None

#: Integer number inputs bound to the URL (sidebar and pages).
INT_URL_KEYS = ("seed", "pad", "mk_pad", "perm_seed", "b_seed", "b_pad", "b_D")


def _controls():
    from attnviz.ui import controls  # late: controls imports this module

    return controls


def preset_names() -> list[str]:
    return list(_presets.names()) if _presets is not None else []


def preset_values(name: str) -> dict[str, Any]:
    """The control values of a preset (what "load preset" sets)."""
    p = _presets.get(name)
    out: dict[str, Any] = {"N": p.n_tokens, "D": p.d_model, "heads": p.num_heads}
    if p.scale is True:
        out["scale"] = "1/√d_k"
    elif p.scale is False:
        out["scale"] = "none"
    else:
        out["scale"], out["factor"] = "custom", float(p.scale)
    out["mask"] = p.mask
    return out


def preset_query(name: str) -> dict[str, str]:
    """The URL query of a preset's view (values equal to the defaults left out)."""
    c = _controls()
    vals = {"source": "preset", "preset": name, **preset_values(name)}
    first = preset_names()[0] if preset_names() else None
    out = {}
    for k, v in vals.items():
        default = first if k == "preset" else c.DEFAULTS.get(k)
        if k == "heads":
            default = c.default_heads(vals["D"])
        if v != default:
            out[k] = str(v).lower() if isinstance(v, bool) else str(v)
    return out


def load_preset(name: str) -> None:
    """Set the controls to a preset's values (use as a button callback)."""
    st.session_state["source"] = "preset"
    st.session_state["preset"] = name
    st.session_state.update(preset_values(name))


def on_source_change() -> None:
    if st.session_state.get("source") == "preset":
        names = preset_names()
        name = st.session_state.get("preset") or (names[0] if names else None)
        if name in names:
            st.session_state.update(preset_values(name))


def on_preset_change() -> None:
    name = st.session_state.get("preset")
    if name in preset_names():
        st.session_state.update(preset_values(name))


def on_d_change() -> None:
    c = _controls()
    d = st.session_state.get("D", c.DEFAULTS["D"])
    h = st.session_state.get("heads", c.DEFAULTS["heads"])
    if isinstance(d, int) and d >= 1 and (not isinstance(h, int) or d % h):
        st.session_state["heads"] = c.nearest_divisor(d, h if isinstance(h, int) else 1)


def _query_state():
    """Streamlit's internal query-param state of this run (None outside a run)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_state.query_params()


def drop_overflowing_url_values() -> list[tuple[str, str]]:
    """Remove integer URL values such as ``seed=1e999`` before the widgets read them.

    Streamlit parses them as float("inf") and then calls int() on it, an OverflowError
    it does not catch (it does catch ValueError), so the page would crash. Only on the
    first run of a session (the only run that reads the URL). Uses Streamlit's internal
    query-param state; if that moves, nothing is removed.
    """
    dropped: list[tuple[str, str]] = []
    try:
        qs = _query_state()
        if qs is None:
            return dropped
        with qs as qp:
            initial = qp._initial_query_params
            for key in INT_URL_KEYS:
                values = initial.get(key)
                if not values:
                    continue
                raw = values[-1] if isinstance(values, list) else values
                try:
                    f = float(raw)
                except ValueError:
                    continue  # Streamlit drops non-numbers itself
                if not math.isfinite(f) or abs(f) >= 2**63:
                    initial.pop(key, None)
                    qp.remove_param(key)
                    dropped.append((key, str(raw)))
    except Exception:  # pragma: no cover - internal API changed
        pass
    return dropped


def drop_url_value(key: str) -> bool:
    """Forget the link's value of ``key`` before its widget reads it (first run only).

    On the first run a URL-bound widget takes the link's value even over
    ``st.session_state``, so a derived control (N set by the text, a preset or an upload)
    can only be set before the widget exists if the link's value is gone. Returns False if
    Streamlit's internal state moved (the caller then overrides the value itself).
    """
    try:
        qs = _query_state()
        if qs is None:
            return False
        with qs as qp:
            qp._initial_query_params.pop(key, None)
            qp.remove_param(key)
        return True
    except Exception:  # pragma: no cover - internal API changed
        return False


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
