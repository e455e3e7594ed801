"""Masking: causal and padding masks, −∞ scores, zero weights, the fully masked row."""

import functools

import numpy as np
import pandas as pd
import streamlit as st

from attnviz import engine, ui, viz
from attnviz.engine import masks
from attnviz.i18n import _
from attnviz.teaching.wording import power_of_ten, readable
from attnviz.ui import asks

#: The mask kinds this page always shows (none only in the presenter view); the sidebar's
#: mask of another kind of attnviz.engine.masks.KINDS gets a column of its own.
SHOWN = ("none", "causal", "padding")
#: The other kinds, from the registry: the intro names each with its explanation (in the
#: shown language where the catalog has it: attnviz.engine.masks stays language-free, as the
#: sidebar's help does, attnviz.ui.controls).
OTHERS = "; ".join(f"*{_(k.explain)}*" for k in masks.KINDS.values() if k.name not in SHOWN)

view = ui.start(
    _("Masking: hiding some keys from some queries"),
    _(
        "A mask says which keys each query may look at. Masked scores are set to **−∞** before "
        "the softmax, and e^(−∞) = 0, so those keys get **weight exactly 0** while the other "
        "weights still sum to 1. A **causal** mask hides the future (token i sees tokens 0…i, "
        "as in GPT-style decoders); a **padding** mask hides the filler tokens at the end of a "
        "short sentence in a batch. Choose another kind as the sidebar's **mask** to see it here "
        "beside them:"
    ),
)
if not ui.present.presenting():  # a slide has no room for the intro's list
    st.markdown(f"{OTHERS}.")  # the registry's other kinds (attnviz.engine.masks.KINDS)


@st.fragment
def body(view: ui.View) -> None:
    """Head, padding and the masks: these controls rerun only this part."""
    r, n = view.result, view.result.n_tokens
    other = sidebar_mask(view)  # the sidebar's mask when it is another kind (window, ...)
    step = ui.steps(
        [
            _("No mask: every query sees every key"),
            _("Causal mask: no query sees a later token"),
            _("Padding mask: the last k tokens are hidden"),
        ]
        + ([_("The sidebar's mask: {name}").format(name=other[0])] if other else [])
    )
    if step.presenting:  # one mask per screen, the first with none
        slide(view, step, other)
        return
    row = ui.row("head")  # one block, not three
    head = ui.head_picker(r.num_heads, row)
    k = pad_box(row, n, note=st)  # a note under the row, not in it
    causal, padded, variants = mask_variants(view, k, other)
    ui.pooled_note(n, _("the masks are easiest to read at small N"))
    # the normal page shows causal and padding (and the sidebar's other mask) side by side
    zmax = score_range(variants, head)
    mask_columns(view, head, variants, zmax, mask_words(k))
    fully_masked_row(view)
    future_check(view)
    footer(view, head, causal, padded, k, other)


def pad_box(where, n: int, note=None) -> int:
    """The padding column's k (``?mk_pad=``), drawn in ``where`` (a note that k was cut to N
    in ``note``, default ``where``); k at most N."""
    k_pad = where.number_input(
        _("k — padding tokens at the end (for the padding column)"),
        0,
        512,
        value=1,
        step=1,
        key="mk_pad",
        bind="query-params",
    )
    if k_pad > n:
        said = _("Only {n} tokens: using k = {n} (every token is padding).").format(n=n)
        (where if note is None else note).caption(said)
    return min(int(k_pad), n)


def mask_variants(view: ui.View, k: int, other) -> tuple:
    """(causal, padded, variants): the page's masks, each (kind, title, result); the kind
    names the charts' keys (mk_w_causal, mk_w_window); the title stays English (Ask the
    room's view), :func:`mask_words` says it in words."""
    causal = ui.variant(view, mask_kind="causal")
    padded = ui.variant(view, mask_kind="padding", pad=k)
    variants = [("causal", "causal", causal), ("padding", f"padding (k = {k})", padded)]
    variants += [(view.settings.mask_kind, *other)] if other else []
    return causal, padded, variants


def mask_words(k: int) -> dict[str, str]:
    """A variant's (English) title as shown."""
    words = {"causal": _("causal"), "no mask": _("no mask")}
    words[f"padding (k = {k})"] = _("padding (k = {k})").format(k=k)
    return words


def score_range(variants: list, head: int) -> float:
    """One colour scale for the scores of every mask (side by side, or one per screen)."""
    return viz.style.shared_range(*(res.masked_scores[head] for __, __, res in variants))


def slide(view: ui.View, step: ui.Steps, other) -> None:
    """The presenter view's mask: its scores and weights filling the screen beside a
    column of words (the step's own controls, the legend, the check); the mask itself is
    the grey × cells. Controls a step does not use stay in a hidden box (their values and
    links kept)."""
    r, n = view.result, view.result.n_tokens
    charts, side = st.columns([4.6, 1], gap="medium")
    tags = ["none", "causal", "padding", *([view.settings.mask_kind] if other else [])]
    tag = tags[step.index]
    with side:
        shown = st.container(key="slide_text_mk")
    hidden = ui.present.hidden_box()
    head = ui.head_picker(r.num_heads, shown if r.num_heads > 1 else hidden)
    k = pad_box(shown if tag == "padding" else hidden, n)
    __, __, variants = mask_variants(view, k, other)
    variants.insert(0, ("none", "no mask", ui.variant(view, mask_kind="none")))
    zmax = score_range(variants, head)
    __, name, res = variants[step.index]
    mask = np.ones((n, n), bool) if res.mask is None else res.mask
    with charts:
        asked = ui.Overlay("masking", (view.settings, name), head, view.layout, n)
        ui.chart_row(
            f"mk_row_{tag}",
            mask_charts(view, head, tag, res, zmax, with_mask=False),
            links=mask_links(view, head, tag, res),
            overlays={f"mk_w_{tag}": asked},
        )
    with shown:
        if other is not None and name == other[0]:  # the sidebar's mask: what it hides
            explain = _(masks.KINDS[view.settings.mask_kind].explain)
            st.markdown(explain[0].upper() + explain[1:] + ".")
        st.markdown(legend(zmax, masked=res.mask is not None))
    with charts, st.container(key="slide_text_mk_check"):
        st.markdown(mask_check(res.weights[head], mask, causal=name == "causal"))
    # a teacher's open class in the link: Ask the room about this mask
    asks.masking((view.settings, name), name, res.weights, res.mask, head, view.labels)


def legend(zmax: float, masked: bool) -> str:
    """A slide's legend of its two charts, in words."""
    out = _(
        "Scores: blue < 0 < red, on one scale (±{z}) for every mask. Weights: 0 (dark "
        "purple) to 1 (yellow)."
    ).format(z=readable(zmax, 3))
    if masked:
        out += " " + _("Grey × = masked: the score is −∞, the weight exactly 0.")
    return out


def mask_charts(
    view: ui.View, head: int, tag: str, res, zmax: float, with_mask: bool = True
) -> dict:
    """A variant's charts by key: its mask (``with_mask``, if it has one), its scores with
    −∞ (coloured ±``zmax``, the same for every mask) and its weights."""
    labels, lay = view.labels, view.layout
    dk = view.result.queries.shape[-1]
    charts = {}
    if with_mask and res.mask is not None:
        charts[f"mk_mask_{tag}"] = viz.heatmaps.mask_figure(
            res.mask,
            labels=labels,
            layout=lay,
            title=_("the mask: green = may attend"),  # its name heads the column
            height=330,
        )
    attn = functools.partial(
        viz.heatmaps.attention_figure,
        labels=labels,
        layout=lay,
        mask=res.mask,
        height=330,
        zmax=zmax,
    )
    charts[f"mk_s_{tag}"] = attn(
        res.masked_scores[head],
        what="scores",
        scale=res.scale,
        d_k=dk,
        title=_("scores with −∞ (grey)"),
    )
    charts[f"mk_w_{tag}"] = attn(
        res.weights[head], what="weights", title=_("softmax: masked weights are 0")
    )
    return charts


def mask_links(view: ui.View, head: int, tag: str, res) -> dict:
    """A click on a weight works that cell out under each mask's weights (in the browser)."""
    lay = view.layout
    cells = ui.cell_data(res, head, view.labels)
    return {f"mk_w_{tag}": ui.link_attn(head, lay, weights=True, select=False, arithmetic=cells)}


def sidebar_mask(view: ui.View) -> tuple[str, object] | None:
    """(name, result) of the sidebar's mask if the page does not show its kind already:
    a kind of :data:`attnviz.engine.masks.KINDS` other than none, causal and padding."""
    s = view.settings
    if s.mask_kind in SHOWN:
        return None
    values = ", ".join(f"{key} = {v}" for key, v in s.mask_params)
    return (f"{s.mask_kind} ({values})" if values else s.mask_kind), view.result


def mask_columns(view: ui.View, head: int, shown: list, zmax: float, words: dict[str, str]) -> None:
    """One column per mask variant: the mask, the scores with −∞ (coloured ±``zmax``, the
    same for every mask), the weights, the checks (``words``: a variant's title as shown)."""
    n = view.result.n_tokens
    other = sidebar_mask(view)
    cols = st.columns(len(shown))
    for col, (tag, name, res) in zip(cols, shown, strict=True):
        mask = np.ones((n, n), bool) if res.mask is None else res.mask
        links = mask_links(view, head, tag, res)
        with col:
            st.markdown(f"## {words.get(name, name)}")
            for key, fig in mask_charts(view, head, tag, res, zmax).items():
                ui.plot(fig, key=key, link=links.get(key))
            if other is not None and name == other[0]:  # the sidebar's mask: what it hides
                explain = _(masks.KINDS[view.settings.mask_kind].explain)
                st.caption(explain[0].upper() + explain[1:] + ".")
            st.caption(mask_check(res.weights[head], mask, causal=name == "causal"))
    st.caption(
        _(
            "The scores of every mask are coloured on one scale, ±{z}, and the "
            "weights from 0 to 1: the same colour is the same number under every mask."
        ).format(z=readable(zmax, 3))
    )


def mask_check(w: np.ndarray, mask: np.ndarray, causal: bool = False) -> str:
    """What the weights ``w`` (N, N) under ``mask`` (True = may attend) show, in words:
    masked cells are 0, the rows that see a key sum to 1 (and by how much they miss)."""
    hidden = ~mask
    live = mask.any(axis=1)  # (N,): rows that see at least one key
    if not hidden.any():
        out = _("No cell is masked.")
    else:
        top = float(np.abs(w[hidden]).max())
        out = (
            (
                _("The weight of every masked cell (the whole upper triangle) is exactly 0.")
                if causal
                else _("The weight of every masked cell is exactly 0.")
            )
            if top == 0
            else _("Masked cells have weights up to {w}: they should be 0!").format(w=readable(top))
        )
    if not live.any():
        return out + _(" No query may see any key here, so every row of weights is 0.")
    err = float(np.abs(w[live].sum(axis=1) - 1).max())
    return out + (
        _(" Every row that sees a key sums to 1 exactly.")
        if err == 0
        else _(" Every row that sees a key sums to 1 (up to {e}: floating-point rounding).").format(
            e=power_of_ten(err)
        )
        if err < 1e-9
        else _(" Every row that sees a key sums to 1, but one misses by {e}!").format(
            e=readable(err)
        )
    )


def fully_masked_row(view: ui.View) -> None:
    """Why a query that may see no key gets weights 0 and output 0, not NaN."""
    n = view.result.n_tokens
    st.header(_("A row where every key is masked"))
    st.markdown(
        _(
            "If a query may see **no** key (here: padding with k = N), its scores are all −∞. "
            "Written naively, softmax gives e^(−∞) / Σ e^(−∞) = 0 / 0 = **NaN**, and the NaN "
            "spreads through everything after it. attnviz's softmax subtracts the row maximum "
            "only when it is finite and leaves an all-zero row as zeros: the query's output is "
            "then 0."
        )
    )
    row = np.full(min(n, 6), -np.inf)
    with np.errstate(invalid="ignore"):
        naive = np.exp(row) / np.exp(row).sum()
    safe = engine.softmax(row)

    def _txt(a: np.ndarray) -> list[str]:
        return ["−∞" if np.isneginf(v) else "NaN" if np.isnan(v) else f"{v:g}" for v in a]

    st.dataframe(
        pd.DataFrame(
            {
                _("scores"): _txt(row),
                _("naive exp/sum"): _txt(naive),
                _("attnviz softmax"): _txt(safe),
            },
            index=[_("key {j}").format(j=j) for j in range(row.size)],
        ).T,
        width="stretch",
    )
    full = ui.variant(view, mask_kind="padding", pad=n)
    w_max, out_max = float(np.abs(full.weights).max()), float(np.abs(full.head_outputs).max())
    nan = bool(np.isnan(full.weights).any() or np.isnan(full.output).any())
    st.caption(
        _("With every token padding: ")
        + (
            _("every weight is 0")
            if w_max == 0
            else _("the largest weight is {w}").format(w=readable(w_max))
        )
        + (
            _(", every head's output is 0")
            if out_max == 0
            else _(", outputs up to {o}").format(o=readable(out_max))
        )
        + (_(" and there is a NaN in the output!") if nan else _(", and there is no NaN anywhere."))
    )


def future_check(view: ui.View) -> None:
    """Replace the later tokens by noise: with the causal mask the earlier outputs stay."""
    n, s = view.result.n_tokens, view.settings
    if view.params is not None and n >= 2:
        st.header(_("The causal mask really hides the future"))
        pos = n // 2 - 1 if n > 2 else 0
        with_mask, without = (
            ui.experiment(view, "future_independence", pos, seed=s.seed, causal=c)
            for c in (True, False)
        )
        metrics = ui.row("future")  # one block, not three
        metrics.metric(
            _("largest change of outputs 0…{pos}, causal mask").format(pos=pos),
            readable(with_mask),
        )
        metrics.metric(
            _("largest change of outputs 0…{pos}, no mask").format(pos=pos), readable(without)
        )
        st.caption(
            _(
                "Tokens {first}…{last} were replaced by random vectors. With the causal mask "
                "the outputs of tokens 0…{pos} do not move at all; without it they do."
            ).format(first=pos + 1, last=n - 1, pos=pos)
        )


def footer(view: ui.View, head: int, causal, padded, k: int, other=None) -> None:
    """Shapes, exports and the NumPy code of this view (``other``: the sidebar's mask of
    another kind, (name, result), or None)."""
    n, s = view.result.n_tokens, view.settings
    ui.shapes(
        {
            _("mask"): causal.mask,
            _("scores"): causal.scores[head],
            _("weights"): causal.weights[head],
        },
        note=_("head {head}").format(head=head),
    )
    ui.export_section(
        view,
        page="masking",
        squares={
            "causal mask": causal.mask.astype(int),
            "causal scores": causal.masked_scores[head],
            "causal weights": causal.weights[head],
            "padding mask": padded.mask.astype(int),
            "padding scores": padded.masked_scores[head],
            "padding weights": padded.weights[head],
            **(
                {
                    f"{s.mask_kind} mask": other[1].mask.astype(int),
                    f"{s.mask_kind} scores": other[1].masked_scores[head],
                    f"{s.mask_kind} weights": other[1].weights[head],
                }
                if other
                else {}
            ),
        },
        extra={
            "causal_weights": causal.weights,
            "padding_weights": padded.weights,
            **({f"{s.mask_kind}_weights": other[1].weights} if other else {}),
        },
    )
    lines = [
        masks.code("causal", n, "causal", comment=False),
        masks.code("padding", n, "padding", comment=False, pad=k),
    ]
    if other:
        lines.append(masks.code(s.mask_kind, n, s.mask_kind, False, **dict(s.mask_params)))
    count = ("two", "three")[len(lines) - 2]
    code = "\n".join([f"# the {count} masks of this page (True = may attend)", *lines])
    ui.code_box(view, head=head, extra=ui.page_extra("masking", masks=code))


body(view)
