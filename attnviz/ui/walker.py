"""The sidebar: walks :data:`attnviz.ui.controls.CONTROLS`, draws each shown control,
settles the derived ones, checks the link's values and computes the view."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from attnviz.engine import masks
from attnviz.i18n import N_, _
from attnviz.teaching import inputs, presets
from attnviz.ui import callbacks, links, state, streamlit_private
from attnviz.ui.controls import (
    BIND,
    BY_KEY,
    CONTROLS,
    DEFAULTS,
    KEYS,
    LABELS,
    Control,
    Settings,
    mask_params,
    option_captions,
)
from attnviz.ui.sizes import D_MAX, N_MAX, default_heads, divisors, nearest_divisor
from attnviz.ui.text import md_text


@dataclass
class _Run:
    """What one sidebar run collects while it walks the table."""

    first: bool
    raw: dict[str, list[str]]
    notices: list[str] = dataclasses.field(default_factory=list)
    forced: dict[str, Any] = dataclasses.field(default_factory=dict)
    upload: tuple | None = None  # (x, labels, file name) of the CSV in use
    box: Any = None  # the sidebar container the controls are drawn in
    hidden: Any = None  # the hidden container of the controls that do not apply (weights_only)


# --------------------------------------------------------------------------- checks after a widget


def _after_text(text: str, values: dict, run: _Run) -> str:
    toks = inputs.tokenize(text)
    if not toks:
        run.notices.append(_("The text has no tokens; using the default sentence."))
        text = DEFAULTS["text"]
        toks = inputs.tokenize(text)
    if len(inputs.tokenize(text, max_tokens=10**6)) > N_MAX:
        run.notices.append(
            _("The text has more than {n} tokens; only the first {n} are used.").format(n=N_MAX)
        )
    run.forced["N"] = len(toks)
    return text


def _after_preset(name: str, values: dict, run: _Run) -> str:
    run.box.caption(_(presets.get(name).title))
    pv = callbacks.preset_values(name)
    run.forced.update({k: pv[k] for k in ("N", "D", "heads")})
    return name


def _after_upload(_value: Any, values: dict, run: _Run) -> None:
    book = state.book()
    upload_x, upload_labels, upload_name = state.upload_state(max_cols=D_MAX)
    if book.get("upload_error"):
        st.error(
            book["upload_error"]
            + (
                _(" — the previous upload is still shown.")
                if upload_x is not None
                else _(" — showing random numbers until a valid CSV is uploaded.")
            )
        )
    if upload_x is not None:
        run.upload = (upload_x, upload_labels, upload_name)
        run.forced["N"], run.forced["D"] = upload_x.shape
        run.box.caption(
            _("Using {name}: {n}×{d}").format(
                name=md_text(upload_name), n=upload_x.shape[0], d=upload_x.shape[1]
            )
        )
    elif not book.get("upload_error"):
        st.info(
            _(
                "No CSV uploaded yet: X is random (seeded) with N and D from the sidebar until "
                "you upload one; then N and D are set by the file."
            ),
            icon=":material/upload_file:",
        )


def _after_factor(factor: float, values: dict, run: _Run) -> float:
    if not math.isfinite(factor):
        run.notices.append(_("The factor must be a finite number; using 1."))
        return 1.0
    return factor


def _after_mask_param(key: str) -> Callable[[int, dict, _Run], int]:
    """The check of mask parameter ``key``: a value above N uses N, with the kind's notice."""
    param = masks.PARAMS[key][1]

    def check(value: int, values: dict, run: _Run) -> int:
        if value > values["N"]:
            run.notices.append(_(param.over_n).format(n=values["N"], value=value))
        return value

    return check


#: The key of the sidebar container that holds the controls (hidden by streamlit_private).
CONTROLS_BOX = "attnviz_controls"
NOT_APPLYING = N_(
    "The sidebar's controls (input X, N, D, heads, seed, scaling, mask) set the "
    "random-weights pages. This page runs a trained model with its own input and weights: "
    "they are hidden here and keep their values for the other pages."
)
#: The same on a page that draws no chart of its own (the Lessons page).
NOT_USED = N_(
    "The sidebar's controls (input X, N, D, heads, seed, scaling, mask) set the "
    "random-weights pages. This page draws none: they are hidden here and keep their "
    "values for the other pages."
)
#: The controls a page with ``controls="weights"`` shows (:mod:`attnviz.ui.pages`): the
#: sizes, the seed, the weights and the scaling; the page sets its own inputs and mask.
WEIGHT_KEYS = ("D", "heads", "seed", "init", "bias", "scale", "factor")
#: The key of the hidden sidebar container that holds the others on such a page.
HIDDEN_BOX = "attnviz_hidden_controls"
WEIGHTS_ONLY_NOTE = N_(
    "On this page the sidebar sets **D, heads, the seed, the weights and the scaling**; the "
    "two sequences, their lengths and the mask are set on the page (the sidebar's input, N, "
    "mask and layout are hidden here and keep their values)."
)
SEED_ONLY_NOTE = N_(
    "On this page only the **seed** applies: it chooses the set of exercises (the other "
    "controls are hidden here and keep their values)."
)

#: The checks a control names in its ``after`` field.
AFTER = {
    "text": _after_text,
    "preset": _after_preset,
    "upload": _after_upload,
    "factor": _after_factor,
    **{key: _after_mask_param(key) for key in masks.PARAMS},
}


# --------------------------------------------------------------------------- the sidebar


def _widget(c: Control, values: dict, run: _Run, source: str) -> Any:
    """Draw control ``c`` in the sidebar and return its value."""
    sb = run.box
    common: dict[str, Any] = {"key": c.key, "help": c.help_text()}
    label = c.label_text()
    if c.bind:
        common["bind"] = BIND
    if c.on_change is not None:
        common["on_change"] = c.on_change
    if c.key in run.forced or source in c.disabled_by:
        common["disabled"] = True
    if c.kind in ("radio", "select"):
        opts = c.option_list(values)
        default = default_heads(values["D"]) if c.key == "heads" else c.default
        index = opts.index(default) if default in opts else 0
        if c.kind == "radio":
            return sb.radio(
                label, opts, index=index, horizontal=c.horizontal,
                captions=option_captions(LABELS.get(c.key), opts), **common,
            )  # fmt: skip
        return sb.selectbox(label, opts, index=index, **common)
    if c.kind == "slider" and c.box:
        return _slider_and_box(c, common, sb)
    if c.kind == "slider":
        return sb.slider(label, c.lo, c.hi, c.default, **common)
    if c.kind == "number":
        return sb.number_input(label, c.lo, c.hi, c.default, step=c.step, **common)
    if c.kind == "toggle":
        return sb.toggle(label, value=c.default, **common)
    if c.kind == "text":
        return sb.text_input(label, value=c.default, max_chars=4000, **common)
    if c.kind == "upload":
        mb = inputs.MAX_UPLOAD_BYTES // 2**20
        return sb.file_uploader(
            label, type=["csv", "txt"], max_upload_size=mb, key=c.key, help=common["help"]
        )
    raise ValueError(f"unknown widget kind {c.kind!r} of control {c.key!r}")


#: The typed-number box beside a slider, px: as wide as the quarter column it had.
BOX_WIDTH = 52


def _slider_and_box(c: Control, common: dict[str, Any], sb: Any) -> Any:
    """Slider ``c`` (bound to the link under its key) and, beside it, a number box for a
    typed value. The box is not bound: it shows the slider's value (set before it is drawn,
    so a link, a drag or a preset moves it too), and a typed value moves the slider
    (:func:`callbacks.on_box_change`, which clamps a value out of range; the sidebar warns
    about it). One value, one URL key: ``?N=12``."""
    # one horizontal block, not columns (three blocks: a page switch renders every block of
    # the sidebar again, issue 46): the slider takes the width the box leaves
    row = sb.container(horizontal=True, vertical_alignment="bottom", gap="small")
    label = c.label_text()
    value = row.slider(label, c.lo, c.hi, c.default, **common)
    key = callbacks.box_key(c.key)
    if st.session_state.get(key) != value:
        st.session_state[key] = value
    row.number_input(
        _("{label}: type a number").format(label=label),
        value=c.default,
        step=1,
        key=key,
        on_change=callbacks.on_box_change,
        args=(c.key, c.lo, c.hi, c.on_change),
        disabled=common.get("disabled", False),
        label_visibility="collapsed",
        width=BOX_WIDTH,
    )
    return value


def invalid_notice(source: str, key: str, shown: Any, rule: str, used: Any) -> str:
    """The warning for a value that was replaced: "The link set N=999, which is not valid
    (N must be an integer from 1 to 512); using N=6." (``source``: "The link", "The box
    beside the N slider", translated; ``rule``: translated)."""
    return _(
        "{source} set {shown}, which is not valid ({key} must be {rule}); using {used}."
    ).format(
        source=source,
        shown=md_text(f"{key}={shown!s}"),
        key=key,
        rule=rule,
        used=md_text(f"{key}={used}"),
    )


def _settle(c: Control, values: dict, run: _Run) -> None:
    """Before ``c``'s widget exists this run: give a derived control its derived value
    (a link that contradicts the input is dropped with a notice), and keep ``heads`` a
    divisor of D. Setting a widget's key after the widget exists raises
    StreamlitWidgetAlreadyInstantiatedError, hence before."""
    if c.key in run.forced:
        v = run.forced[c.key]
        if run.first and c.key in run.raw and not links.same(run.raw[c.key], v):
            source = values["source"]
            what = {
                "text": _("the typed text"),
                "preset": _("the preset {name}").format(name=md_text(values["preset"])),
            }
            shown = run.raw[c.key][-1] if run.raw[c.key] else ""
            run.notices.append(
                _("**{key}** is set by {what}: the link's {old} was replaced by {new}.").format(
                    key=c.key,
                    what=what.get(source, _("the uploaded CSV")),
                    old=md_text(f"{c.key}={shown}"),
                    new=md_text(f"{c.key}={v}"),
                )
            )
            links.drop_url_value(c.key)
        links.force(c.key, v)
    elif c.key == "heads" and not run.first:
        cur = st.session_state.get("heads")
        if isinstance(cur, int) and cur not in divisors(values["D"]):
            links.force("heads", nearest_divisor(values["D"], cur))


def _link_notices(values: dict, run: _Run) -> None:
    """First run only: a warning for each link value that the widgets did not take."""
    for k, r in run.raw.items():
        c = BY_KEY[k]
        if k in run.forced or not c.shown(values):
            continue
        if not links.same(r, values[k]):
            shown = r[-1] if isinstance(r, list) and r else r
            rule = _(c.rule_text(values))
            run.notices.append(invalid_notice(_("The link"), k, shown, rule, values[k]))


def _start_run() -> _Run:
    book = state.book()
    book["app_ran"] = True
    first = book.get("first", True)
    run = _Run(first=first, raw={})
    for key, typed, used in st.session_state.pop(callbacks.BOX_NOTICES, []):
        c = BY_KEY[key]
        source = _("The box beside the {key} slider").format(key=key)
        run.notices.append(invalid_notice(source, key, typed, _(c.rule_text({})), used))
    if first:
        qp = st.query_params
        run.raw = {k: qp.get_all(k) for k in KEYS if k in qp}
        for key, value in links.drop_overflowing_url_values():
            if key not in KEYS:  # page widgets: the sidebar notices cover the others
                run.notices.append(
                    _(
                        "The link set {shown}, which is not a usable number; using the default."
                    ).format(shown=md_text(f"{key}={value}"))
                )
        book["first"] = False
    return run


def sidebar(
    applies: bool = True,
    seed_only: bool = False,
    weights_only: bool = False,
    runs_model: bool = True,
) -> state.View | None:
    """Walk :data:`CONTROLS`: draw each shown control, validate the link, compute (cached)
    and remember the view. Returns the :class:`~attnviz.ui.state.View` (pages get it from
    :func:`attnviz.ui.state.current`), or None if nothing could be computed (an error is
    shown).

    ``applies=False`` (pages that run a real model with its own weights): the controls are
    still drawn, so that they keep their values and links for the other pages, but hidden,
    and the sidebar says why (``runs_model``: it runs one; else it draws no chart).
    ``seed_only=True`` (the exercises page): the seed is the only
    control shown; the others are drawn but hidden. ``weights_only=True`` (the
    Cross-attention page): :data:`WEIGHT_KEYS` are shown, the others drawn in a hidden box.
    """
    run = _start_run()
    run.box = st.sidebar.container(key=CONTROLS_BOX)
    if not applies:
        st.sidebar.info(_(NOT_APPLYING if runs_model else NOT_USED), icon=":material/tune:")
        streamlit_private.hide_box(CONTROLS_BOX)
    elif seed_only:  # CONTROLS_BOX, the seed's key
        streamlit_private.seed_only_controls()
        st.sidebar.caption(_(SEED_ONLY_NOTE))
    elif weights_only:
        st.sidebar.caption(_(WEIGHTS_ONLY_NOTE))
        run.hidden = st.sidebar.container(key=HIDDEN_BOX)
        streamlit_private.hide_box(HIDDEN_BOX)
    values: dict[str, Any] = {}
    section = None
    shown_box = run.box
    for c in CONTROLS:
        if not c.shown(values):
            values[c.key] = c.hidden_value()
            continue
        hide = run.hidden is not None and c.key not in WEIGHT_KEYS
        run.box = run.hidden if hide else shown_box
        if c.section != section and not hide:
            section = c.section
            run.box.markdown(f"### {c.section_text()}")
        _settle(c, values, run)
        value = _widget(c, values, run, values.get("source", ""))
        values[c.key] = AFTER[c.after](value, values, run) if c.after else value
    run.box = shown_box
    if run.first:
        _link_notices(values, run)
    # Safety net if a link's value could not be dropped before its widget read it: use
    # the derived values anyway (never write a widget's key after it was created).
    values.update(run.forced)
    return _view(values, run)


def _view(values: dict, run: _Run) -> state.View | None:
    up = run.upload
    fields = {c.field: values[c.key] for c in CONTROLS if c.field}
    if values["source"] == "upload" and up is None:
        fields["source"] = "random"
    fields.update(seed=int(fields["seed"]), bias=bool(fields["bias"]))
    fields["mask_params"] = mask_params(fields["mask_kind"], values)
    fields["factor"] = float(fields["factor"])
    settings = Settings(**fields, upload_name=None if up is None else up[2])
    for msg in run.notices:
        st.warning(msg, icon=":material/warning:")
    return state.remember(settings, None if up is None else up[:2], tuple(run.notices))
