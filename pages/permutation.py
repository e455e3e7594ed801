"""Permutation: shuffle the tokens, the outputs shuffle the same way; positions break it."""

import functools

import numpy as np
import streamlit as st

from attnviz import i18n, ui, viz
from attnviz.i18n import _
from attnviz.teaching import experiments
from attnviz.teaching.wording import readable, rounding
from attnviz.ui import asks

view = ui.start(
    _("Shuffle the tokens: self-attention does not notice"),
    _(
        "Self-attention treats its input as a **set**: if you shuffle the tokens, every output "
        "is the same vector as before, just at the shuffled place (it is *permutation "
        "equivariant* — the TODO of notebook 12.1). So attention alone cannot tell “dog bites "
        "man” from “man bites dog”. Adding a **positional encoding** to X before the attention "
        "breaks the symmetry: then the order matters."
    ),
)
s, r, labels, lay = view.settings, view.result, view.labels, view.layout
n = r.n_tokens
if view.params is None:
    st.info(
        _(
            "This preset gives Q, K and V directly, without X and weight matrices, so there is "
            "nothing to permute before the projections. Pick another input in the sidebar."
        )
    )
    ui.end_page()  # not st.stop(): it drops a click queued behind this run
c1, c2 = st.columns(2)
pseed = c1.number_input(
    _("shuffle seed"), 0, 10**6, value=1, step=1, key="perm_seed", bind="query-params"
)
positions = c2.toggle(
    _("add sinusoidal positional encodings to X"),
    value=False,
    key="positions",
    bind="query-params",
)
perm = np.random.default_rng(int(pseed)).permutation(n)
ui.pooled_note(n, _("the max difference reported here is computed on the full matrices"))
if n > 1 and np.array_equal(perm, np.arange(n)):
    perm = np.roll(perm, 1)  # a real shuffle, not the identity
pe = experiments.sinusoidal_positions(n, s.d) if positions else None
chk = ui.experiment(view, "permutation_check", perm, positions=pe)
st.markdown(
    _("Permutation (new position ← old token): ")
    + i18n.isolated(
        ", ".join(f"{i}←{int(p)}" for i, p in enumerate(perm[:24])) + (" …" if n > 24 else "")
    )
    + (
        _(" · no mask is applied on this page (a causal mask is not permutation equivariant).")
        if s.mask_kind != "none"
        else ""
    )
)
if chk.equivariant:
    st.success(
        _(
            "Equivariant: attention(shuffled X) = shuffled attention(X). The largest difference "
            "is {d}."
        ).format(d=rounding(chk.max_abs_diff))
    )
else:
    st.warning(
        (
            _(
                "Not equivariant: the outputs differ by up to {d} — the positional encodings "
                "stay in place while the tokens move."
            )
            if positions
            else _("Not equivariant: the outputs differ by up to {d}.")
        ).format(d=readable(chk.max_abs_diff, 3))
    )
slide = ui.present.presenting()  # one screen: the formula above the charts, no tools
formula = (
    r"\operatorname{Attn}(PX) = P\,\operatorname{Attn}(X)"
    + r"\quad\text{"
    + _("but")
    + r"}\quad \operatorname{Attn}(P X + E) \ne P\,\operatorname{Attn}(X + E)"
)
if slide:
    st.latex(formula)
plabels = [labels[int(p)] for p in perm]
shuffled_out = chk.out[perm]  # (N, Dout): the original outputs, shuffled
diff = chk.out_of_permuted - shuffled_out
# the three charts on one colour scale: the difference is measured against the outputs
zmax = viz.style.shared_range(shuffled_out, chk.out_of_permuted)
outputs = functools.partial(
    viz.heatmaps.token_matrix_figure, labels=plabels, layout=lay, height=340, zmax=zmax
)
scale_note = _(
    "The three charts share one colour scale, ±{z}: a difference "
    "as small as rounding stays white, a real one shows in the colours of the outputs."
).format(z=readable(zmax, 3))
if slide:  # above the charts: the board fills the slide below its top
    st.caption(scale_note)
features = (-0.5, chk.out.shape[1] - 0.5)  # a row of the outputs spans their features
ui.chart_row(
    "pm_outputs",
    {
        "pm_a": outputs(
            shuffled_out, name="P·attention(X)", title=_("outputs of X, then shuffled")
        ),
        "pm_b": outputs(
            chk.out_of_permuted, name="attention(P·X)", title=_("outputs of the shuffled X")
        ),
        "pm_d": viz.heatmaps.matrix_figure(
            diff if lay == "rows" else diff.T,
            title=_("difference (right − left)"),
            x_title=_("feature") if lay == "rows" else _("token (column)"),
            y_title=_("token (row)") if lay == "rows" else _("feature"),
            hover=_("difference = %{z:.4f}"),
            y_labels=plabels if lay == "rows" else None,
            x_labels=plabels if lay == "columns" else None,
            height=340,
            zmax=zmax,
            token_axes="y" if lay == "rows" else "x",
        ),
    },
    caption=None if slide else scale_note,
    overlays={  # a revealed "where is the old row i" (the teacher's projector)
        "pm_b": ui.Overlay(
            "permutation", (s, perm.tolist(), positions), layout=lay, n=n, span=features
        )
    },
)
asks.permutation((s, perm.tolist(), positions), chk.out, chk.out_of_permuted)
if not slide:
    st.latex(formula)
if pe is not None:
    ui.plot(
        viz.heatmaps.token_matrix_figure(
            pe,
            name=_("E (positions)"),
            labels=[str(i) for i in range(n)],
            layout=lay,
            height=300,
            title=_("sinusoidal positional encoding E ({n}×{d})").format(n=n, d=s.d),
        ),
        key="pm_pe",
    )

if not slide:  # the shapes, downloads and code: the laptop's page
    ui.shapes(
        {
            "X": view.x,
            "P·X": view.x[perm],
            _("outputs"): chk.out,
            **({"E": pe} if pe is not None else {}),
        }
    )
    ui.export_section(
        view,
        {"permutation": (perm[:, None], None, ["old index"])},
        page="permutation",
        tokens={
            "outputs of X shuffled": shuffled_out,
            "outputs of shuffled X": chk.out_of_permuted,
            "difference": diff,
            **({"positional encoding": pe} if pe is not None else {}),
        },
        extra={"perm": perm},
    )
    ui.code_box(
        view,
        extra=ui.page_extra(
            "permutation", perm=perm.tolist(), positions=ui.code.POSITIONS_NOTE if positions else ""
        ),
    )
