"""Compare: views A (the sidebar) and B (A with some settings changed, ``b_`` in the link)
of the same input, their weights side by side and B − A, the largest changes, entropy."""

import numpy as np
import streamlit as st

from attnviz import engine, i18n, ui, viz
from attnviz.i18n import _
from attnviz.ui import asks, compare, compare_presets

view = ui.start(
    _("Compare two settings"),
    _(
        "**A** is the view of the sidebar; **B** is the same input with the settings you "
        "change below (or another head). Both views' weights are drawn side by side, then "
        "**B − A**: red where B gives the key more weight, blue where it gives less. {point} "
        "to see how A and B computed it. Or start from a classic comparison:"
    ).format(
        point=ui.pointing(_("Hover a cell to outline it in all three; click it"), _("Tap a cell"))
    ),
)
#: The presenter view's slides (``?present=1&step=``); the normal page shows them all.
STEPS = [
    _("A, B and B − A"),
    _("The largest changes"),
    _("Entropy: how widely each query spreads its attention"),
]
step = ui.steps(STEPS)
if not step.presenting:  # a slide has them in a popover beside the heads (:func:`slide`)
    compare_presets.preset_buttons()


@st.fragment
def body(view: ui.View, step: ui.Steps) -> None:
    """B's controls, the heads, the three matrices and what changed: a change of B or of a
    head reruns only this part (a click on a cell only :func:`views`). In the presenter
    view one step a slide (:func:`slide`)."""
    if step.presenting:
        slide(view, step.index)
        return
    st.header(_("View B: what differs from A"))
    b = compare.b_controls(view)
    rb = compare.view_b(view, b)
    if rb is None:
        return
    ra, lay, labels = view.result, view.layout, view.labels
    c_a, c_b, c_info = st.columns([1, 1, 3])
    ha, hb = compare.head_pickers(ra.num_heads, rb.num_heads, c_a, c_b)
    diff, what_a, what_b = compare.what_differs(view.settings, b.settings)
    c_info.markdown(
        _("**A**: {a} · head {ha}  \n**B**: {b} · head {hb}").format(
            a=compare.describe(view.settings),
            ha=ha,
            b=what_b if diff else _("the same settings as A"),
            hb=hb,
        )
    )
    if not diff and ha == hb:
        st.info(_("B is the same as A: change one of B's settings or its head, or pick a preset."))

    wa, wb = ra.weights[ha], rb.weights[hb]  # (N, N) each
    shown = (view.settings, b.settings, ha, hb)  # what the charts show: a question's view
    views(view, rb, (ha, hb), (what_a, what_b), shown)
    asks.compare(shown, wa, wb, (ha, hb))  # a teacher's open class: Ask the room

    st.header(_("The largest changes"))
    compare.changes_table(wa, wb, labels)
    st.header(_("Entropy: how widely each query spreads its attention"))
    ui.plot(viz.compare.entropy_change_figure(wa, wb, labels=labels), key="cmp_entropy")
    st.caption(entropy_words(wa, wb))
    ui.shapes(
        {_("A (weights)"): wa, _("B (weights)"): wb, "B − A": wb - wa},
        note=_("rows = tokens") if lay == "rows" else _("shown transposed: columns = tokens"),
    )
    compare.exports(view, b.settings, rb, (ha, hb))


def entropy_words(wa: np.ndarray, wb: np.ndarray) -> str:
    """What the entropy chart shows, and B's mean change in words."""
    mean = float(viz.compare.entropy_change(wa, wb).mean())
    return _(
        "H(B) − H(A) in bits, per query (uniform over the N keys: log₂ N = "
        "{uniform} bits; one-hot: 0). On average B's attention is "
    ).format(uniform=i18n.fmt(np.log2(wa.shape[0]), ".2f")) + (
        _("broader than A's, by {d} bits.").format(d=i18n.fmt(mean, ".3f"))
        if mean > 0.005
        else _("sharper than A's, by {d} bits.").format(d=i18n.fmt(-mean, ".3f"))
        if mean < -0.005
        else _("as broad as A's (the same to 2 decimals).")
    )


def slide(view: ui.View, index: int) -> None:
    """The presenter view's step ``index`` (:data:`STEPS`): the heads of A and B, B's
    settings in a popover over the slide (its controls drawn there every run, so their
    values and link stay) and what differs, above the step's one view: the three
    matrices filling the screen; the table of the largest changes; the entropy chart as
    tall as the slide leaves it, its words beside it."""
    c_a, c_b, c_set, c_pre, c_info = st.columns([1, 1, 1.3, 1.2, 2.4], vertical_alignment="bottom")
    with c_set.popover(_("View B: what differs from A"), width="stretch"):
        b = compare.b_controls(view, columns=2)
    # the presets in a popover too (a row of them above took the height the matrices need);
    # they change the sidebar's view A, so a click reruns the whole page, not this part
    with c_pre.popover(_("Classic comparisons"), width="stretch"):
        if compare_presets.preset_buttons(columns=1):
            st.rerun(scope="app")
    rb = compare.view_b(view, b)
    if rb is None:
        return
    ra, labels = view.result, view.labels
    ha, hb = compare.head_pickers(ra.num_heads, rb.num_heads, c_a, c_b)
    _diff, what_a, what_b = compare.what_differs(view.settings, b.settings)
    c_info.markdown(
        _("**A**: {a} · head {ha}  \n**B**: {b} · head {hb}").format(
            a=what_a, ha=ha, b=what_b, hb=hb
        )
    )
    wa, wb = ra.weights[ha], rb.weights[hb]  # (N, N) each
    shown = (view.settings, b.settings, ha, hb)
    if index == 0:
        charts = weight_charts(view, rb, (ha, hb), (what_a, what_b), shown)
        # A's column wider by its row labels, which B and B − A (the same rows) leave out
        for col, (key, f, link, over) in zip(st.columns([1.2, 1, 1]), charts, strict=True):
            slide_matrix(f, labelled=key == "cmp_a")
            with col:
                ui.board(f"board_{key}", [(key, f, link)], overlays=over)
        asks.compare(shown, wa, wb, (ha, hb))  # a teacher's open class: Ask the room
    elif index == 1:
        changes_slide(wa, wb, labels)
    else:
        chart, side = st.columns([3, 1.2], gap="large")
        fig = viz.compare.entropy_change_figure(wa, wb, labels=labels)
        fig.layout.meta = {**(fig.layout.meta or {}), "fill": "height"}
        with chart:
            ui.plot(fig, key="cmp_entropy")
        side.container(key="slide_text_cmp").markdown(entropy_words(wa, wb))


def slide_matrix(fig, labelled: bool) -> None:
    """One of the three matrices of a slide, in place: its colour bar under it (beside it,
    three bars took a fifth of the slide's width: the matrices were 33% of its height);
    the row labels and title only on A's (``labelled``), left of the row of three."""
    fig.layout.meta = {**(fig.layout.meta or {}), "colorbar": "under"}  # fit.js presenterFill
    if not labelled:
        fig.update_yaxes(showticklabels=False, ticks="", title_text="")
        fig.update_layout(margin_l=10)


def changes_slide(wa: np.ndarray, wb: np.ndarray, labels: tuple[str, ...]) -> None:
    """The largest changes |B − A| as a Markdown table: in slide type (the normal page's
    table is a data grid, drawn in small type on a canvas)."""
    rows = viz.compare.largest_changes(wa, wb, k=10)
    if not rows:
        st.markdown(_("No weight changed."))
        return

    def name(t: int) -> str:  # a token's text, literal and its whitespace visible
        return f"{t} ({ui.md_token(labels[t])})".replace("|", "\\|") if t < len(labels) else str(t)

    lines = [f"| {_('query')} | {_('key')} | A | B | B − A |", "|---|---|--:|--:|--:|"]
    lines += [
        f"| {name(c.query)} | {name(c.key)} | {i18n.fmt(c.a, '.4f')} | {i18n.fmt(c.b, '.4f')} "
        f"| {i18n.fmt(c.delta, '+.4f')} |"
        for c in rows
    ]
    st.markdown("\n".join(lines))


def weight_charts(
    view: ui.View,
    rb: engine.AttentionResult,
    heads: tuple[int, int],
    what: tuple[str, str],
    shown: object,
) -> list[tuple]:
    """(key, figure, link, overlays) of A's and B's weights and of B − A, each its own
    board, hover-linked, a click worked out under A's and B's."""
    ra, lay, labels, n = view.result, view.layout, view.labels, view.result.n_tokens
    (ha, hb), (what_a, what_b) = heads, what
    wa, wb = ra.weights[ha], rb.weights[hb]  # (N, N) each

    def weights(which: str, r: engine.AttentionResult, h: int, what: str):
        """View ``which``'s weights of head ``h``."""
        return viz.compare.weights_figure(
            r.weights[h], which=which, what=_("head {head} ({what})").format(head=h, what=what),
            labels=labels, layout=lay,
            mask=r.mask,
        )  # fmt: skip

    fig = {
        "cmp_a": weights("A", ra, ha, what_a),
        "cmp_b": weights("B", rb, hb, what_b),
        "cmp_diff": viz.compare.difference_figure(
            wa,
            wb,
            what=_("weights, head {hb} − head {ha}").format(hb=hb, ha=ha)
            if ha != hb
            else _("weights, head {ha}").format(ha=ha),
            labels=labels,
            layout=lay,
        ),
    }
    arith = {  # a clicked cell worked out in the browser, under A's and under B's chart
        "cmp_a": ui.cell_data(ra, ha, labels, title="A: "),
        "cmp_b": ui.cell_data(rb, hb, labels, title="B: "),
        "cmp_diff": None,
    }
    overlays = {  # a revealed "whose row is sharper" on A's or B's (the teacher's projector)
        key: {key: ui.Overlay("compare", shown, 0, lay, n, chart=i)}
        for i, key in enumerate(("cmp_a", "cmp_b"))
    }
    return [
        (key, f, ui.link_attn(None, lay, arithmetic=arith[key]), overlays.get(key))
        for key, f in fig.items()
    ]


@st.fragment
def views(
    view: ui.View,
    rb: engine.AttentionResult,
    heads: tuple[int, int],
    what: tuple[str, str],
    shown: object = None,
) -> None:
    """A's and B's weights and B − A, hover-linked, and the clicked cell worked out in both:
    a click reruns only this part. ``shown``: the view a revealed question outlines."""
    ra, labels, (ha, hb) = view.result, view.labels, heads
    charts = weight_charts(view, rb, heads, what, shown)
    for col, (key, f, link, over) in zip(st.columns(3), charts, strict=True):
        with col:  # one board each, hover-linked: a click names the view it was made on
            ui.board(f"board_{key}", [(key, f, link)], overlays=over)
    st.caption(
        (
            # the sidebar's weights' colour range (ui.weights_scale): fixed 0…1, or per chart
            _("A and B share one colour scale: weights from 0 (dark purple) to 1 (yellow)")
            if ui.weights_fixed()
            else _("Weights: {scale}; A and B differ, compare their values").format(
                scale=ui.weights_scale()
            )
        )
        + _(
            "; grey × = masked. B − A: red = more weight in B, blue = less, white = unchanged "
            "(the scale is symmetric around 0)."
        )
    )
    keys = tuple(f"board_{key}" for key, *__ in charts)
    compare.cell_pair(keys, (ra, rb), (ha, hb), labels)


body(view, step)
