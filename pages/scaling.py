"""Why divide by √d_k: dot-product variance, the ×8 softmax example, entropy scaled vs not."""

import functools
import math

import numpy as np
import streamlit as st

from attnviz import engine, i18n, ui, viz
from attnviz.i18n import _
from attnviz.teaching import experiments
from attnviz.ui import asks

view = ui.start(
    _("Why divide the scores by √d_k?"),
    _(
        "A dot product of two random vectors with d_k entries adds up d_k products, so its "
        "spread (variance) grows like d_k. Large scores push the softmax towards a one-hot "
        "vector: one key gets all the weight, the others almost none, and learning stalls. "
        "Dividing by √d_k brings the variance back to about 1. Three views of that idea "
        "(the experiments of notebook `002`):"
    ),
)
DIMS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
#: The steps (the presenter view's slides); the normal page heads its first three sections
#: with them, numbered.
STEPS = [
    _("Variance of q·k grows with d_k; q·k / √d_k stays near 1"),
    _("The same logits, multiplied by a factor"),
    _("Your current attention: scaled vs not scaled"),
    _("Mean entropy of the weights per head, scaled vs not"),
    _("The largest weight of a query as d_k grows"),
]


@st.fragment
def body(view: ui.View) -> None:
    """Every section (normal view) or one step a slide (presenter view): the factor and
    head inputs rerun only this part."""
    step = ui.steps(STEPS)
    if step.presenting:
        slide(view, step)
        return
    s = view.settings
    st.header(f"1. {STEPS[0]}")
    curve = ui.cached("dot_product_variance", DIMS, trials=1000, seed=s.seed)
    ui.plot(variance_chart(curve), key="sc_var")
    st.caption(variance_caption(view, curve))
    st.header(f"2. {STEPS[1]}")
    c1, c2 = st.columns([1, 3])
    factor = factor_input(c1)
    logits, factors, wts = factor_weights(factor)
    with c2:
        ui.plot(viz.charts.softmax_factor_figure(logits, factors, wts), key="sc_factor_fig")
    c1.markdown(factor_words(factor, wts))
    st.latex(factor_latex())
    st.header(f"3. {STEPS[2]}")
    un, sc = unscaled_scaled(view)
    head = ui.head_picker(view.result.num_heads)
    charts, overlays = pair_charts(view, un, sc, head)
    ui.chart_row("sc_pair", charts, caption=pair_caption(), overlays=overlays)
    asks.scaling(s, un.weights, sc.weights, head)  # a teacher's open class: Ask the room
    e_un, e_sc = entropies(un, sc)
    ui.plot(entropy_chart(view, e_un, e_sc), key="sc_ent")
    st.caption(entropy_caption(view))
    sat = ui.cached("max_weight_curve", DIMS, n_keys=8, trials=200, seed=s.seed)
    ui.plot(saturation_chart(sat), key="sc_sat")
    footer(view, curve, factor, logits, factors, wts, head, un, sc, e_un, e_sc, sat)


def slide(view: ui.View, step: ui.Steps) -> None:
    """One step on the screen: its chart beside its words (in slide type); the factor on
    the factor's step and the head on the weights' step, the other steps keep them in a
    hidden box (their values and links kept)."""
    s, i = view.settings, step.index
    hidden = ui.present.hidden_box()
    if i == 2:  # the pair of weights: square matrices as large as the screen allows
        charts, side = st.columns([4.6, 1], gap="medium")
        words = side.container(key="slide_text_sc")
        head = ui.head_picker(view.result.num_heads, words)
        factor_input(hidden)
        un, sc = unscaled_scaled(view)
        with charts:
            pair, overlays = pair_charts(view, un, sc, head)
            ui.chart_row("sc_pair", pair, overlays=overlays)
        words.markdown(pair_caption())
        asks.scaling(s, un.weights, sc.weights, head)
        return
    chart, side = st.columns([3, 1.2], gap="large")
    words = side.container(key="slide_text_sc")
    ui.head_picker(view.result.num_heads, hidden)
    factor = factor_input(words if i == 1 else hidden)
    tall = functools.partial(slide_plot, chart)
    if i == 0:
        curve = ui.cached("dot_product_variance", DIMS, trials=1000, seed=s.seed)
        tall(variance_chart(curve), "sc_var")
        words.markdown(variance_caption(view, curve))
    elif i == 1:
        logits, factors, wts = factor_weights(factor)
        tall(viz.charts.softmax_factor_figure(logits, factors, wts), "sc_factor_fig")
        words.markdown(factor_words(factor, wts))
        words.latex(factor_latex(lines=True))
    elif i == 3:
        un, sc = unscaled_scaled(view)
        tall(entropy_chart(view, *entropies(un, sc)), "sc_ent")
        words.markdown(entropy_caption(view))
    else:
        sat = ui.cached("max_weight_curve", DIMS, n_keys=8, trials=200, seed=s.seed)
        tall(saturation_chart(sat), "sc_sat")
        words.markdown(saturation_caption())


def slide_plot(where, fig, key: str) -> None:
    """A line or bar chart on a slide: as tall as the screen leaves it (the board's
    ``layout.meta.fill``, ``fit.js``)."""
    fig.layout.meta = {**(fig.layout.meta or {}), "fill": "height"}
    with where:
        ui.plot(fig, key=key)


# --------------------------------------------------------------------------- step 1


def variance_chart(curve):
    return viz.charts.variance_figure(curve.dims, curve.before, curve.after)


def variance_caption(view: ui.View, curve) -> str:
    return _(
        "1000 random pairs q, k ~ N(0, I) per d_k (seed {seed}). At d_k = 512 the unscaled "
        "variance is {before}, the scaled one {after}."
    ).format(
        seed=view.settings.seed,
        before=i18n.fmt(curve.before[-1], ".0f"),
        after=i18n.fmt(curve.after[-1], ".2f"),
    )


# --------------------------------------------------------------------------- step 2


def factor_latex(lines: bool = False) -> str:
    """Softmax under a factor, and where it goes (in the shown language); ``lines``: on two
    lines (a slide's column of words)."""
    limit = r"\xrightarrow{\;c\to\infty\;}\;\text{" + _("one-hot on") + r" } \arg\max z"
    softmax = r"\operatorname{softmax}(c\,z)_i = \frac{e^{c z_i}}{\sum_j e^{c z_j}}"
    if lines:
        return r"\begin{gathered}" + softmax + r" \\ " + limit + r"\end{gathered}"
    return softmax + r"\;" + limit


def factor_input(where) -> float:
    """The factor (``?sc_factor=``), drawn in ``where``."""
    return where.number_input(
        _("factor"),
        min_value=0.0,
        max_value=50.0,
        value=8.0,
        step=0.5,
        key="sc_factor",
        bind="query-params",
        help=_("Notebook 002 multiplies its logits by 8."),
    )


def factor_weights(factor: float):
    """Notebook 002's logits, the factors 1 and ``factor``, the softmax under each (2, 5)."""
    logits = np.array(experiments.NOTEBOOK_LOGITS)
    factors = [1.0, float(factor)]
    return logits, factors, experiments.softmax_under_factor(logits, factors)


def factor_words(factor: float, wts) -> str:
    ent = engine.row_entropy(wts)
    return _(
        "Entropy: **{e1}** bits at ×1, **{e2}** bits at ×{factor} "
        "(uniform over 5 = {uniform} bits). Largest weight: {w1} → {w2}."
    ).format(
        e1=i18n.fmt(ent[0], ".2f"),
        e2=i18n.fmt(ent[1], ".2f"),
        factor=i18n.fmt(factor, "g"),
        uniform=i18n.fmt(math.log2(5), ".2f"),
        w1=i18n.fmt(wts[0].max(), ".3f"),
        w2=i18n.fmt(wts[1].max(), ".3f"),
    )


# --------------------------------------------------------------------------- step 3


def unscaled_scaled(view: ui.View):
    """The sidebar's attention without and with 1/√d_k."""
    return ui.variant(view, scale_mode="none"), ui.variant(view, scale_mode="1/√d_k")


def pair_charts(view: ui.View, un, sc, head: int) -> tuple[dict, dict]:
    """The weights of ``head`` not scaled and scaled by chart key, and their overlays (a
    revealed "which row is sharper", the teacher's projector)."""
    s, r, labels, lay = view.settings, view.result, view.labels, view.layout
    dk = r.queries.shape[-1]
    weights = functools.partial(
        viz.heatmaps.attention_figure, what="weights", labels=labels, layout=lay
    )
    charts = {
        "sc_un": weights(un.weights[head], mask=un.mask, title=_("Weights, not scaled (× 1)")),
        "sc_sc": weights(
            sc.weights[head], mask=sc.mask, title=_("Weights, scaled by 1/√{dk}").format(dk=dk)
        ),
    }
    overlays = {
        key: ui.Overlay("scaling", s, head, lay, r.n_tokens, chart=i)
        for i, key in enumerate(charts)
    }
    return charts, overlays


def pair_caption() -> str:
    # the sidebar's weights' colour range (ui.weights_scale): fixed 0…1, or per chart
    return (
        _("Both charts colour the weights on one scale, from 0 (dark purple) to 1 (yellow)")
        if ui.weights_fixed()
        else _("Weights: {scale}, so compare the values, not the colours").format(
            scale=ui.weights_scale()
        )
    ) + _(": where a row is more yellow on one key and darker elsewhere, its weights are sharper.")


# --------------------------------------------------------------------------- steps 4, 5


def entropies(un, sc):
    """Mean entropy of the weights per head (H,), not scaled and scaled."""
    return engine.row_entropy(un.weights).mean(axis=1), engine.row_entropy(sc.weights).mean(axis=1)


def entropy_chart(view: ui.View, e_un, e_sc):
    r = view.result
    dk = r.queries.shape[-1]
    heads_lbl = [_("head {head}").format(head=i) for i in range(r.num_heads)]
    return viz.charts.bars_figure(
        {_("not scaled"): e_un, _("scaled (1/√{dk})").format(dk=dk): e_sc},
        x_labels=heads_lbl,
        title=_("Mean entropy of the weights per head (higher = more spread out)"),
        x_title=_("head"),
        y_title=_("bits"),
    )


def entropy_caption(view: ui.View) -> str:
    return _(
        "d_k = {dk}. With a small d_k the difference is small; raise D (or lower the heads) "
        "in the sidebar to see the unscaled weights collapse onto single keys."
    ).format(dk=view.result.queries.shape[-1])


def saturation_chart(sat):
    return viz.charts.line_figure(
        sat.dims,
        {
            _("not scaled"): sat.unscaled,
            _("scaled by 1/√d_k"): sat.scaled,
            _("uniform (1/8)"): np.full(len(DIMS), 1 / sat.n_keys),
        },
        title=_("Mean largest weight of a query over 8 random keys"),
        x_title="d_k",
        y_title=viz.style.AxisTitle(_("largest weight (1 = one-hot)"), _("largest weight")),
        log_x=True,
    )


def saturation_caption() -> str:
    return _(
        "Without the scale, the largest weight climbs towards 1 (one key takes everything) "
        "as d_k grows; scaled by 1/√d_k it stays level."
    )


def footer(view, curve, factor, logits, factors, wts, head, un, sc, e_un, e_sc, sat) -> None:
    """Shapes, exports and the NumPy code of the normal view."""
    # the CSV's row names: machine-readable, English
    heads_lbl = [f"head {i}" for i in range(view.result.num_heads)]
    ui.shapes(
        {
            "logits": logits,
            "softmax(c·z)": wts,
            _("weights (unscaled)"): un.weights,
            _("weights (scaled)"): sc.weights,
        },
    )
    ui.export_section(
        view,
        {
            "variance": (
                np.stack([curve.dims, curve.before, curve.after], 1),
                None,
                ["d_k", "var_unscaled", "var_scaled"],
            ),
            "softmax under factor": (wts, [f"x{f:g}" for f in factors], None),
            "entropy per head": (np.stack([e_un, e_sc], 1), heads_lbl, ["unscaled", "scaled"]),
            "max weight curve": (
                np.stack([sat.dims, sat.unscaled, sat.scaled], 1),
                None,
                ["d_k", "unscaled", "scaled"],
            ),
        },
        page="scaling",
        squares={
            f"A unscaled head {head}": un.weights[head],
            f"A scaled head {head}": sc.weights[head],
        },
        extra={
            "variance_dims": curve.dims,
            "variance_before": curve.before,
            "variance_after": curve.after,
        },
    )
    ui.code_box(
        view,
        head=head,
        extra=ui.page_extra(
            "scaling",
            seed=view.settings.seed,
            logits=list(experiments.NOTEBOOK_LOGITS),
            factor=repr(float(factor)),
        ),
    )


body(view)
