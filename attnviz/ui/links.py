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

from attnviz.engine import masks
from attnviz.i18n import _
from attnviz.ui import streamlit_private
from attnviz.ui.callbacks import preset_names, preset_values
from attnviz.ui.controls import DEFAULTS
from attnviz.ui.sizes import default_heads
from attnviz.ui.text import md_text

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
    *(f"{p}_{x}" for p in ("dec", "rm", "cxm") for x in ("L", "H")),  # layer, head sliders
)


def control_default(key: str, d: int) -> Any:
    """A sidebar control's default value (None: not a control with one): ``heads``' follows
    the model width ``d`` (:func:`attnviz.ui.sizes.default_heads`), the others' are
    :data:`attnviz.ui.controls.DEFAULTS`. A link leaves out a value equal to it."""
    return default_heads(d) if key == "heads" else DEFAULTS.get(key)


def preset_query(name: str) -> dict[str, str]:
    """The URL query of a preset's view (values equal to the defaults left out)."""
    vals = {"source": "preset", "preset": name, **preset_values(name)}
    first = preset_names()[0] if preset_names() else None
    out = {}
    for k, v in vals.items():
        default = first if k == "preset" else control_default(k, vals["D"])
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


# Layer and head sliders: counted from 0 on every page (the engine, the code box, ?head=).
# The model pages' sliders counted from 1 under other keys (?dec_layer=5 = the 5th layer);
# such a link still opens the same layer, moved to the new key with a note.
_CHECKED = "links_checked"  # session key: the link keys already checked (once a session)


def int_link_warning(key: str, lo: int, hi: int, default: int) -> str | None:
    """Before ``key``'s URL-bound number input is drawn, the first time in this session:
    if the link's value is not an integer in lo..hi, drop it (the widget then takes
    ``default``) and return the warning to show; else None."""
    checked = st.session_state.setdefault(_CHECKED, set())
    if key in checked:
        return None
    checked.add(key)
    raw = st.query_params.get_all(key)
    if not raw or _index(raw[-1], lo, hi) is not None:
        return None
    drop_url_value(key)
    return _(
        "The link set {shown}, which is not valid ({key} must be an integer from {lo} to "
        "{hi}); using {used}."
    ).format(shown=_shown(key, raw), key=key, lo=lo, hi=hi, used=md_text(f"{key}={default}"))


def index_link_notices(key: str, top: int, old_key: str | None = None) -> list[tuple[str, str]]:
    """Before the URL-bound layer or head slider ``key`` (values 0 … top − 1) is drawn, the
    first time in this session: a link's ``old_key`` (the slider's former key, counted from
    1) moved to ``key`` as its value − 1, and a link value of ``key`` that is not an integer
    in range dropped (the slider then starts at 0). Returns what to tell the reader, as
    ("warning" or "info", text)."""
    checked = st.session_state.setdefault(_CHECKED, set())
    if key in checked:
        return []
    checked.add(key)
    notes: list[tuple[str, str]] = []
    raw_new = st.query_params.get_all(key)
    if raw_new and _index(raw_new[-1], 0, top - 1) is None:
        drop_url_value(key)
        notes.append(("warning", _(
            "The link set {shown}, which is not valid ({key} must be an integer from 0 to "
            "{top}: layers and heads are counted from 0); using {key}=0."
        ).format(shown=_shown(key, raw_new), key=key, top=top - 1)))  # fmt: skip
        raw_new = []
    raw_old = st.query_params.get_all(old_key) if old_key else []
    if raw_old:
        del st.query_params[old_key]
        one_based = _index(raw_old[-1], 1, top)
        if raw_new:  # both: the new key wins
            notes.append(("info", _("The link's `{old}` is replaced by its `{key}`: ignored.")
                          .format(old=old_key, key=key)))  # fmt: skip
        elif one_based is None:
            notes.append(("warning", _(
                "The link set {shown}, which is not valid ({old} counted from 1 to {top}); "
                "using {key}=0."
            ).format(shown=_shown(old_key, raw_old), old=old_key, top=top, key=key)))  # fmt: skip
        else:
            st.session_state[key] = one_based - 1
            notes.append(("info", _(
                "This link counts from 1 (`{old}={one}`); every page now counts layers and "
                "heads from 0, as the engine and the code do: this is `{key}={zero}`, the same "
                "one as before."
            ).format(old=old_key, one=one_based, key=key, zero=one_based - 1)))  # fmt: skip
    return notes


def _index(raw: str, lo: int, hi: int) -> int | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    if not math.isfinite(value) or not value.is_integer() or not lo <= value <= hi:
        return None
    return int(value)


def _shown(key: str, raw: list[str]) -> str:
    return md_text(f"{key}={str(raw[-1])[:40]}")
