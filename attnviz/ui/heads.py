"""The "Heads" section of the model pages: nameable heads, scored on a probe and on the
page's own text (:mod:`attnviz.models.head_patterns`).

A page calls :func:`section` once, after its own charts, with a :class:`ModelHeads` that
says how to run the probe through its model and which widgets are its head view. The
probe's seed and length are page widgets bound to the URL (``<prefix>_probe_seed``,
``<prefix>_probe_len``); a link value that is not a valid integer in range is dropped
before the widget reads it, with a warning, as the sidebar does for its controls.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from attnviz import i18n, viz
from attnviz.i18n import _, fmt, pgettext
from attnviz.models import head_patterns, head_probes
from attnviz.models.head_patterns import PATTERNS
from attnviz.ui import links
from attnviz.ui.heads_spec import MEANING, TOP, ModelHeads, ProbeSummary, summarise
from attnviz.ui.page import chart_row, plot
from attnviz.ui.text import md_text, md_token

__all__ = ["ModelHeads", "ProbeSummary", "opened", "section", "summarise"]

SEED_MAX = 2**31 - 1
_OPENED = "heads_opened"  # session key: (prefix, layer, head) last opened
_REVEALS = "heads_reveals"  # session key: Open clicks so far (the head view's reveal token)


# Per probe and model, shared by every session: a summary is ~100 kB at the default length.
# (its spinner is said where it is called: a decorator's text is read at import)
@st.cache_data(max_entries=16, show_spinner=False)
def _probe(model: str, seed: int, length: int, _spec: ModelHeads) -> ProbeSummary:
    return summarise(_spec.probe(seed, length))


@st.cache_data(max_entries=16, show_spinner=False)
def _own_scores(model: str, text: str, _run: Any) -> dict[str, np.ndarray]:
    return head_patterns.scores(_run.attentions, _run.ids)


def _pattern(name: str) -> str:
    """A pattern's name (a key of PATTERNS, the table's column) in the shown language."""
    return {
        "previous": pgettext("head pattern", "previous"),
        "first": pgettext("head pattern", "first"),
        "self": pgettext("head pattern", "self"),
        "local": pgettext("head pattern", "local"),
        "duplicate": pgettext("head pattern", "duplicate"),
        "induction": pgettext("head pattern", "induction"),
    }.get(name, name)


# --------------------------------------------------------------------------- the probe


def _probe_controls(spec: ModelHeads) -> tuple[int, int]:
    seed_key, len_key = f"{spec.prefix}_probe_seed", f"{spec.prefix}_probe_len"
    lo, hi = head_probes.LENGTH_MIN, head_probes.LENGTH_MAX
    notices = [
        links.int_link_warning(seed_key, 0, SEED_MAX, head_probes.DEFAULT_SEED),
        links.int_link_warning(len_key, lo, hi, head_probes.DEFAULT_LENGTH),
    ]
    for msg in notices:
        if msg:
            st.warning(msg, icon=":material/warning:")
    c1, c2 = st.columns(2)
    seed = c1.number_input(
        _("Probe seed"),
        0,
        SEED_MAX,
        head_probes.DEFAULT_SEED,
        key=seed_key,
        bind="query-params",
        help=_("Which random tokens the probe draws (the same seed gives the same probe)."),
    )
    length = c2.number_input(
        _("Probe length T"),
        lo,
        hi,
        head_probes.DEFAULT_LENGTH,
        key=len_key,
        bind="query-params",
        help=_("T random tokens, then the same T again: 2T tokens ({lo} to {hi}).").format(
            lo=lo, hi=hi
        ),
    )
    return int(seed), int(length)


# --------------------------------------------------------------------------- opening a head


def _open(spec: ModelHeads, layer: int, head: int) -> None:
    """on_click: show head (layer, head), 0-based, in the page's head view."""
    st.session_state[spec.layer_key] = layer
    st.session_state[spec.head_key] = head
    st.session_state[_OPENED] = (spec.prefix, layer, head)


def opened(spec: ModelHeads) -> str | None:
    """Above the page's head view, on the run an Open button (or a table row) caused: say
    which head is open, and return a new token for the head view's board to scroll into
    view (``ui.plot(..., reveal=token)``: the button sits far below it); else None."""
    got = st.session_state.get(_OPENED)
    if not got or got[0] != spec.prefix:
        return None
    del st.session_state[_OPENED]
    __, layer, head = got
    st.success(
        _(
            "Layer {layer}, head {head} is open in the head view (the layer and head "
            "sliders); the Heads section is further down."
        ).format(layer=layer, head=head),
        icon=":material/check:",
    )
    count = st.session_state.get(_REVEALS, 0) + 1
    st.session_state[_REVEALS] = count
    return f"{spec.prefix}-{count}"


def _use_repeat_text(spec: ModelHeads) -> None:
    """on_click of "Try a repeated phrase": the phrase in the page's text box, the scores
    (and top heads) on it, the induction heads first."""
    if spec.text_key and spec.repeat_text:
        st.session_state[spec.text_key] = spec.repeat_text
        st.session_state[f"{spec.prefix}_heads_source"] = "text"
        st.session_state[f"{spec.prefix}_heads_pattern"] = "induction"


def _open_from_table(spec: ModelHeads, table_key: str, n_heads: int) -> None:
    """on_select of the table: its rows are the heads in (layer, head) order."""
    sel = st.session_state.get(table_key)
    rows = getattr(getattr(sel, "selection", None), "rows", None)
    if rows is None and isinstance(sel, dict):
        rows = sel.get("selection", {}).get("rows")
    if rows:
        layer, head = divmod(int(rows[0]), n_heads)
        _open(spec, layer, head)


# --------------------------------------------------------------------------- the section


def _table(scores: dict[str, np.ndarray]) -> pd.DataFrame:
    n_layers, n_heads = scores["previous"].shape
    layer, head = np.divmod(np.arange(n_layers * n_heads), n_heads)
    cols = {"layer": layer, "head": head}
    cols.update({name: np.round(scores[name].ravel(), 3) for name in PATTERNS})
    return pd.DataFrame(cols)


def _where(top: list[tuple[int, int, float]], above: float) -> str:
    heads = [f"{lay}/{h} ({fmt(v, '.2f')})" for lay, h, v in top if v >= above]
    return ", ".join(heads) if heads else pgettext("no heads", "none")


def _mechanism(spec: ModelHeads, probe: ProbeSummary) -> None:
    prev, ind = probe.top["previous"], probe.top["induction"]
    st.markdown(
        _(
            "**How an induction head works.** Two heads in two layers do it together. "
            "A **previous-token head** in an earlier layer copies, into each position, "
            "“my previous token was X”. Later, an **induction head** looks at the current "
            "token, searches the earlier text for a position whose note says “my previous "
            "token was *this one*”, and copies what it finds there: the token that followed "
            "last time. That is how a model continues a pattern it has seen once in the "
            "prompt (“Mr Dursley … Mr” → “Dursley”). On the probe the second copy is fully "
            "predictable this way, and nothing else can predict it."
        )
    )
    if spec.causal:
        strong_prev = [lay for lay, __, v in prev if v >= 0.3]
        strong_ind = [lay for lay, __, v in ind if v >= 0.3]
        order = ""
        if strong_prev and strong_ind:
            first_ind = min(strong_ind)
            before = sorted({lay for lay in strong_prev if lay < first_ind})
            order = (
                _(
                    " The first strong induction head is in layer {first}; of the "
                    "previous-token heads listed, those in layers {layers} come before it, "
                    "as the mechanism needs."
                ).format(first=first_ind, layers=", ".join(map(str, before)))
                if before
                else _(" The first strong induction head is in layer {first}.").format(
                    first=first_ind
                )
            )
        st.markdown(
            _(
                "**In {name}** (layer/head, score on this probe): strongest previous-token "
                "heads {prev}; strongest induction heads {ind}."
            ).format(name=spec.name, prev=_where(prev, 0.3), ind=_where(ind, 0.3))
            + order
        )
    else:
        st.markdown(
            _(
                "**{name} is an encoder**: every token sees every token, also the ones "
                "after it, and it was trained to fill in hidden words, not to continue text. "
                "*previous*, *first* (here [CLS]), *self*, *local* and *duplicate* apply as "
                "they are; *induction* can be measured but an encoder has no use for it: its "
                "best induction score on this probe is {score} "
                "(strongest previous-token heads: {prev})."
            ).format(name=spec.name, score=fmt(ind[0][2], ".2f"), prev=_where(prev, 0.3))
            if ind
            else _("**{name} is an encoder**: every token sees every token.").format(name=spec.name)
        )


def _top_heads(spec: ModelHeads, probe: ProbeSummary, run: Any, own: dict | None) -> None:
    """The top heads of a pattern and their weights: on the probe, or (``own``: the
    scores on the page's text) on the text of the page's ``run``."""
    pattern = st.radio(
        _("Top heads of"),
        list(PATTERNS),
        format_func=_pattern,
        horizontal=True,
        key=f"{spec.prefix}_heads_pattern",
        index=list(PATTERNS).index("induction" if spec.causal else "previous"),
    )
    on_text = own is not None
    top = head_patterns.top_heads(own[pattern], TOP) if on_text else probe.top[pattern]
    if not top:
        st.info(
            _("Your text repeats no token, so no head has a {pattern} score on it: ").format(
                pattern=_pattern(pattern)
            )
            + (_("try the repeated phrase above.") if spec.repeat_text else _("type a text "
               "that repeats a phrase."))
            if on_text
            else _("No head has a {pattern} score on this probe.").format(
                pattern=_pattern(pattern)
            )
        )  # fmt: skip
        return
    charts = {}
    for i, (lay, h, v) in enumerate(top):
        on_probe = float(probe.scores[pattern][lay, h])
        charts[f"{spec.prefix}_heads_top{i}"] = viz.heads.probe_weights_figure(
            np.asarray(run.attentions[lay, h]) if on_text else probe.weights[(lay, h)],
            list(run.tokens) if on_text else probe.tokens,
            length=None if on_text else probe.length,
            start=0 if on_text else probe.start,
            causal=spec.causal,
            title=_("Layer {layer}, head {head}: {pattern} {score}").format(
                layer=lay, head=h, pattern=_pattern(pattern), score=fmt(v, ".2f")
            ),
            note=_("on the probe {score}").format(score=fmt(on_probe, ".2f")) if on_text else "",
            height=340,
        )
    chart_row(
        f"{spec.prefix}_heads_top_row",
        charts,
        caption=(
            _(
                "Their weights on your text (the box above); under each title, the head's "
                "score on the probe. "
            )
            if on_text
            else _(
                "Their weights on the probe; the dashed lines mark where the second copy starts. "
            )
        )
        + _("{meaning}. **Open** shows a head in the head view at the top of the page.").format(
            meaning=_(MEANING[pattern]).capitalize()
        ),
    )
    cols = st.columns(len(top))
    for col, (i, (lay, h, __)) in zip(cols, enumerate(top), strict=True):
        col.button(
            _("Open layer {layer}, head {head}").format(layer=lay, head=h),
            key=f"{spec.prefix}_heads_open{i}",
            on_click=_open,
            args=(spec, lay, h),
            icon=":material/open_in_new:",
            width="stretch",
        )


def _repeat_offer(spec: ModelHeads, run: Any, own: dict[str, np.ndarray], text: bool) -> None:
    """The one-click prompt with a repeated phrase, and what the induction heads do on it."""
    if not (spec.text_key and spec.repeat_text):
        return
    ind = head_patterns.top_heads(own["induction"], 1)
    if st.session_state.get(spec.text_key) == spec.repeat_text and ind:
        lay, h, v = ind[0]
        st.caption(
            _(
                "On the repeated phrase the strongest induction head is layer {layer}, head "
                "{head}: {score}"
            ).format(layer=lay, head=h, score=fmt(v, ".2f"))
            + (_(" (the top heads below are on this text).") if text else ".")
        )
        return
    c1, c2 = st.columns([1, 2], vertical_alignment="center")
    c1.button(
        _("Try a repeated phrase"),
        key=f"{spec.prefix}_heads_repeat",
        on_click=_use_repeat_text,
        args=(spec,),
        icon=":material/repeat:",
        width="stretch",
    )
    c2.caption(
        _(
            "An induction head shows where a text repeats itself, and a short sentence of "
            "your own rarely does. This puts “{phrase}” in the prompt box and scores every "
            "head on it: on the second copy an induction head looks back at the token that "
            "came next the first time."
        ).format(phrase=md_text(spec.repeat_text))
    )


def section(spec: ModelHeads, run: Any, layer: int, head: int) -> None:
    """The Heads section. ``run``: the page's run on its own text (``tokens``, ``ids``,
    ``attentions`` (L, H, N, N)); ``layer``, ``head``: the head view's head, 0-based."""
    st.header(_("Heads"), anchor=f"{spec.prefix}-heads")
    st.markdown(
        _(
            "Some heads do one nameable thing whatever the text. To find them, the page runs "
            "a **probe** through the model — T random tokens, then the same T tokens again — "
            "and scores every head on six patterns (each a mean weight, 0 to 1):"
        )
        + "\n\n"
        + "\n".join(f"- **{_pattern(k)}**: {_(v)}" for k, v in MEANING.items())
    )
    seed, length = _probe_controls(spec)
    with st.spinner(_("Running the probe through every head…")):
        probe = _probe(spec.name, seed, length, spec)
    body = probe.tokens[probe.start : probe.start + probe.length]
    st.caption(
        (
            _("**The probe ({n} tokens, between [CLS] and [SEP]):** ")
            if probe.start
            else _("**The probe ({n} tokens):** ")
        ).format(n=2 * length)
        + i18n.isolated(
            " · ".join(md_token(t) for t in body[:16]) + (" …" if len(body) > 16 else "")
        )
        + _(" — then the same again.")
    )
    source = st.radio(
        _("Scores on"),
        ["probe", "text"],
        format_func=lambda k: _("the probe") if k == "probe" else _("your text (the box above)"),
        horizontal=True,
        key=f"{spec.prefix}_heads_source",
    )
    own = _own_scores(spec.name, " ".join(map(str, run.ids.tolist())), run)
    _repeat_offer(spec, run, own, source == "text")
    scores = probe.scores if source == "probe" else own
    plot(
        viz.heads.scores_figure(
            scores,
            selected=(layer, head),
            title=_(
                "Every head's six scores on {what} (layers down, heads across; the head view's "
                "head framed)"
            ).format(what=_("the probe") if source == "probe" else _("your text")),
        ),
        key=f"{spec.prefix}_heads_scores",
    )
    _this_head(spec, probe.scores, own, layer, head)
    _every_head(spec, scores)
    _top_heads(spec, probe, run, own if source == "text" else None)
    _mechanism(spec, probe)


def _this_head(
    spec: ModelHeads,
    probe: dict[str, np.ndarray],
    own: dict[str, np.ndarray],
    layer: int,
    head: int,
) -> None:
    """The head view's head scored on the probe and on the page's text, side by side."""
    row = "| {} | " + " | ".join(["{}"] * len(PATTERNS)) + " |"
    st.markdown(
        _(
            "**Layer {layer}, head {head}** (the head view's head, framed above) on the probe "
            "and on your text:"
        ).format(layer=layer, head=head)
        + "\n\n"
        + "\n".join(
            [
                row.format("", *map(_pattern, PATTERNS)),
                "|---|" + "---:|" * len(PATTERNS),
                row.format(_("probe"), *(_fmt(probe[k][layer, head]) for k in PATTERNS)),
                row.format(_("your text"), *(_fmt(own[k][layer, head]) for k in PATTERNS)),
            ]
        )
    )
    if np.isnan(own["induction"]).all():
        st.caption(
            _(
                "Your text repeats no token, so duplicate and induction have nothing to "
                "measure on it (n/a): "
            )
            + (
                _("try the repeated phrase above.")
                if spec.repeat_text
                else _(
                    "type a text that repeats a phrase, e.g. “Mr Dursley was proud of his "
                    "son. Mr Dursley”."
                )
            )
        )


def _every_head(spec: ModelHeads, scores: dict[str, np.ndarray]) -> None:
    """The sortable table of every head; selecting a row opens that head."""
    n_heads = scores["previous"].shape[1]
    table_key = f"{spec.prefix}_heads_table"
    st.markdown(
        _(
            "**Every head** — sort by a column (click its name); click a row's box on the "
            "left to open that head in the head view."
        )
    )
    st.dataframe(
        _table(scores),
        key=table_key,
        on_select=lambda: _open_from_table(spec, table_key, n_heads),
        selection_mode="single-row",
        hide_index=True,
        height=280,
        column_config={
            "layer": st.column_config.Column(_("layer")),
            "head": st.column_config.Column(_("head")),
            **{
                name: st.column_config.NumberColumn(
                    _pattern(name), help=_(MEANING[name]), format="%.2f"
                )
                for name in PATTERNS
            },
        },
    )


def _fmt(v: float) -> str:
    return _("n/a") if np.isnan(v) else fmt(v, ".2f")
