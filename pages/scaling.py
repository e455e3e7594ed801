"""Why divide by √d_k: dot-product variance, the ×8 softmax example, entropy scaled vs not."""

import functools
import math

import numpy as np
import streamlit as st

from attnviz import engine, experiments, i18n, ui, viz
from attnviz.i18n import _
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
s = view.settings

st.subheader(_("1. Variance of q·k grows with d_k; q·k / √d_k stays near 1"))
dims = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
curve = ui.cached("dot_product_variance", dims, trials=1000, seed=s.seed)
ui.plot(viz.charts.variance_figure(curve.dims, curve.before, curve.after), key="sc_var")
st.caption(
    _(
        "1000 random pairs q, k ~ N(0, I) per d_k (seed {seed}). At d_k = 512 the unscaled "
        "variance is {before}, the scaled one {after}."
    ).format(
        seed=s.seed,
        before=i18n.fmt(curve.before[-1], ".0f"),
        after=i18n.fmt(curve.after[-1], ".2f"),
    )
)


@st.fragment
def body(view: ui.View, curve) -> None:
    """Sections 2 and 3 and the export: the factor and head inputs rerun only this part."""
    factor, logits, factors, wts = factor_section()
    head, un, sc, e_un, e_sc, sat = current_section(view)
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


def factor_section():
    """Section 2: notebook 002's logits under a factor: weights and entropy."""
    st.subheader(_("2. The same logits, multiplied by a factor"))
    c1, c2 = st.columns([1, 3])
    factor = c1.number_input(
        _("factor"),
        min_value=0.0,
        max_value=50.0,
        value=8.0,
        step=0.5,
        key="sc_factor",
        bind="query-params",
        help=_("Notebook 002 multiplies its logits by 8."),
    )
    logits = np.array(experiments.NOTEBOOK_LOGITS)
    factors = [1.0, float(factor)]
    wts = experiments.softmax_under_factor(logits, factors)  # (2, 5)
    with c2:
        ui.plot(viz.charts.softmax_factor_figure(logits, factors, wts), key="sc_factor_fig")
    ent = engine.row_entropy(wts)
    c1.markdown(
        _(
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
    )
    st.latex(
        r"\operatorname{softmax}(c\,z)_i = \frac{e^{c z_i}}{\sum_j e^{c z_j}}"
        r"\;\xrightarrow{\;c\to\infty\;}\;\text{" + _("one-hot on") + r" } \arg\max z"
    )
    return factor, logits, factors, wts


def current_section(view: ui.View):
    """Section 3: the sidebar's attention with and without 1/√d_k: weights, entropy."""
    s, r, labels, lay = view.settings, view.result, view.labels, view.layout
    st.subheader(_("3. Your current attention: scaled vs not scaled"))
    un = ui.variant(view, scale_mode="none")
    sc = ui.variant(view, scale_mode="1/√d_k")
    dk = r.queries.shape[-1]
    head = ui.head_picker(r.num_heads)
    weights = functools.partial(
        viz.heatmaps.attention_figure, what="weights", labels=labels, layout=lay
    )
    ui.chart_row(
        "sc_pair",
        {
            "sc_un": weights(un.weights[head], mask=un.mask, title=_("Weights, not scaled (× 1)")),
            "sc_sc": weights(
                sc.weights[head],
                mask=sc.mask,
                title=_("Weights, scaled by 1/√{dk}").format(dk=dk),
            ),
        },
        caption=(
            # the sidebar's weights' colour range (ui.weights_scale): fixed 0…1, or per chart
            _("Both charts colour the weights on one scale, from 0 (dark purple) to 1 (yellow)")
            if ui.weights_fixed()
            else _("Weights: {scale}, so compare the values, not the colours").format(
                scale=ui.weights_scale()
            )
        )
        + _(
            ": where a row is more yellow on one key and darker elsewhere, its weights are sharper."
        ),
        overlays={  # a revealed "which row is sharper" (the teacher's projector)
            key: ui.Overlay("scaling", s, head, lay, r.n_tokens, chart=i)
            for i, key in enumerate(("sc_un", "sc_sc"))
        },
    )
    asks.scaling(s, un.weights, sc.weights, head)  # a teacher's open class: Ask the room
    e_un = engine.row_entropy(un.weights).mean(axis=1)  # (H,)
    e_sc = engine.row_entropy(sc.weights).mean(axis=1)
    heads_lbl = [_("head {head}").format(head=i) for i in range(r.num_heads)]
    ui.plot(
        viz.charts.bars_figure(
            {_("not scaled"): e_un, _("scaled (1/√{dk})").format(dk=dk): e_sc},
            x_labels=heads_lbl,
            title=_("Mean entropy of the weights per head (higher = more spread out)"),
            x_title=_("head"),
            y_title=_("bits"),
        ),
        key="sc_ent",
    )
    st.caption(
        _(
            "d_k = {dk}. With a small d_k the difference is small; raise D (or lower the heads) "
            "in the sidebar to see the unscaled weights collapse onto single keys."
        ).format(dk=dk)
    )
    sat = ui.cached("max_weight_curve", dims, n_keys=8, trials=200, seed=s.seed)
    ui.plot(
        viz.charts.line_figure(
            sat.dims,
            {
                _("not scaled"): sat.unscaled,
                _("scaled by 1/√d_k"): sat.scaled,
                _("uniform (1/8)"): np.full(len(dims), 1 / sat.n_keys),
            },
            title=_("Mean largest weight of a query over 8 random keys"),
            x_title="d_k",
            y_title=viz.style.AxisTitle(_("largest weight (1 = one-hot)"), _("largest weight")),
            log_x=True,
        ),
        key="sc_sat",
    )
    return head, un, sc, e_un, e_sc, sat


body(view, curve)
