"""Session state: the per-session book, the view of this run and the cached engine runs.

:func:`attnviz.ui.controls.sidebar` builds the frozen ``Settings`` from the widgets and
hands them to :func:`remember`, which runs :func:`compute` (cached, bounded) and keeps the
:class:`View` for the pages (:func:`current`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np
import streamlit as st

from attnviz import engine
from attnviz.i18n import N_, _
from attnviz.teaching import experiments, inputs, presets
from attnviz.ui import streamlit_private
from attnviz.ui.controls import Settings, replace
from attnviz.ui.text import md_text

_STATE = "_attnviz"  # session_state key of the per-session bookkeeping dict


def book() -> dict:
    """This session's bookkeeping (first run, the last view, the upload in use)."""
    return st.session_state.setdefault(_STATE, {"first": True})


def _use_navigation() -> None:
    """Make Streamlit treat this app as an ``st.navigation`` app from the first run on.

    Streamlit decides per process, on the first session, that an entry script with a
    ``pages/`` folder next to it is a legacy (v1) multipage app, and only changes its mind
    when ``st.navigation`` runs. Until then a deep link (``/masking``) runs the page file
    alone, without ``app.py`` and its sidebar. :func:`page_guard` calls this and reruns
    (Streamlit's internals: :mod:`attnviz.ui.streamlit_private`).
    """
    streamlit_private.use_navigation()


def page_guard() -> None:
    """First line of every page: if ``app.py`` did not run this time (a legacy-mode deep
    link, see :func:`_use_navigation`), switch Streamlit to navigation mode and rerun once.
    """
    b = book()
    if b.pop("app_ran", False):
        b["guard_reruns"] = 0
        return
    if b.get("guard_reruns", 0) < 2:
        b["guard_reruns"] = b.get("guard_reruns", 0) + 1
        _use_navigation()
        st.rerun()


def end_page() -> NoReturn:
    """End this run of the page here, like ``st.stop()`` but without dropping a click.

    ``st.stop()`` asks the session's ScriptRequests to stop, and in Streamlit 1.67 that
    request replaces a rerun queued behind this run: a fragment's click (a Check, a Send,
    a Reveal) that reached the server during a full run was never run, and nobody was told
    (issue 25). Raising the exception ``st.stop()`` raises, without its stop request, ends
    the run the same way (Streamlit catches it, keeps the widgets not drawn) and the queued
    rerun runs next: ``bench/lost_click.py``, scenario ``raise``; ``tests/test_lost_click.py``.
    Prefer an ``if``/``else`` around the rest of a page where it reads as well.
    """
    streamlit_private.end_run()


@dataclass(frozen=True, eq=False)
class View:
    """What every page draws: the settings, X with its labels, the parameters, the result."""

    settings: Settings
    x: np.ndarray  # (N, D), for the QKV preset this is Q
    labels: tuple[str, ...]
    params: engine.AttentionParams | None  # None for presets given Q, K, V
    result: engine.AttentionResult
    notes: tuple[str, ...] = field(default=())

    @property
    def layout(self) -> str:
        return self.settings.layout


Computed = tuple[np.ndarray, tuple[str, ...], engine.AttentionParams | None, engine.AttentionResult]


@st.cache_data(max_entries=32, show_spinner=False)
def compute(
    settings: Settings, upload: tuple[np.ndarray, tuple[str, ...]] | None = None
) -> Computed:
    """X, labels, parameters and the engine's result for these settings (cached, bounded).

    ``upload``: (X, labels) of the CSV in use when ``settings.source == "upload"``.
    Raises ``ValueError`` (from the engine or the inputs) for inconsistent inputs.
    """
    s = settings
    mask = s.mask()
    if s.source == "preset":
        p = presets.get(s.preset)
        labels = tuple(p.tokens)
        if p.x is not None:
            res = engine.multi_head_attention(
                p.x, p.params, num_heads=p.num_heads, scale=s.scale, mask=mask
            )
            return p.x, labels, p.params, res
        res = engine.attention_from_qkv(
            p.q, p.k, p.v, num_heads=p.num_heads, scale=s.scale, mask=mask, x=None
        )
        return p.q, labels, None, res
    if s.source == "text":
        ti = inputs.text_input(s.text, s.d)
    elif s.source == "upload":
        if upload is None:
            raise ValueError(N_("no CSV uploaded yet"))  # shown by remember, translated there
        ti = inputs.TokenInput(np.asarray(upload[0], dtype=np.float64), tuple(upload[1] or ()))
    else:
        ti = inputs.random_input(s.n, s.d, s.seed)
    params = engine.AttentionParams.random(s.d, seed=s.seed + 1, init=s.init, bias=s.bias)
    res = engine.multi_head_attention(ti.x, params, num_heads=s.heads, scale=s.scale, mask=mask)
    return ti.x, ti.labels, params, res


def upload_state(max_cols: int) -> tuple[np.ndarray | None, tuple[str, ...] | None, str | None]:
    """Read the uploaded CSV; on error remember it and keep the previous good upload."""
    b = book()
    f = st.session_state.get("upload")
    if f is not None:
        sig = (f.name, f.size, getattr(f, "file_id", None))
        if b.get("upload_sig") != sig:
            b["upload_sig"] = sig
            try:
                ti = inputs.parse_csv(f.getvalue(), max_cols=max_cols)
            except ValueError as e:
                b["upload_error"] = _("Could not use {name}: {error}").format(
                    name=md_text(f.name), error=md_text(_(str(e)))
                )
            else:
                b["upload_error"] = None
                b["upload"] = (ti.x, ti.labels, f.name)
    good = b.get("upload")
    if good is None:
        return None, None, None
    return good


def remember(settings: Settings, upload: tuple | None, notes: tuple[str, ...]) -> View | None:
    """Compute the view of ``settings`` and keep it for the pages; on a ``ValueError``
    show it and keep the previous view."""
    b = book()
    try:
        x, labels, params, result = compute(settings, upload)
    except ValueError as e:
        st.error(_("Cannot compute attention with these settings: {error}").format(error=_(str(e))))
        prev = b.get("view")
        if prev is not None:
            st.info(_("Showing the previous view."))
        return prev
    view = View(settings, x, labels, params, result, notes)
    b["view"] = view
    return view


def current() -> View | None:
    """The view computed by the sidebar in this run (None if it failed)."""
    return book().get("view")


def variant(view: View, **changes: Any) -> engine.AttentionResult:
    """The current inputs with other attention settings (``scale_mode``, ``factor``,
    ``mask_kind`` and its parameters such as ``pad``, ``heads``), through the same bounded
    cache."""
    s = replace(view.settings, **changes)
    up = book().get("upload") if s.source == "upload" else None
    return compute(s, None if up is None else up[:2])[3]


@st.cache_data(max_entries=16, show_spinner=False)
def cached(fn_name: str, *args: Any, **kwargs: Any) -> Any:
    """A bounded cache around a pure function of :mod:`attnviz.teaching.experiments` or the
    engine."""
    fn = getattr(experiments, fn_name, None) or getattr(engine, fn_name)
    return fn(*args, **kwargs)


def experiment(view: View, fn_name: str, *args: Any, **kwargs: Any) -> Any:
    """``cached(fn_name, X, params, *args, num_heads=, scale=, **kwargs)`` on this view's
    inputs, parameters, heads and scale: the experiments that rerun the view's attention
    on changed inputs (permutation, future independence)."""
    r = view.result
    return cached(
        fn_name, view.x, view.params, *args, num_heads=r.num_heads, scale=r.scale, **kwargs
    )
