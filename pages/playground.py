"""Playground (home): scores | weights | output of one head, the inputs, one query's sum."""

import streamlit as st

from attnviz import i18n, ui, viz
from attnviz.i18n import _
from attnviz.ui import asks

view = ui.start(
    _("Self-attention playground"),
    _(
        "Every token asks a **query**, offers a **key** and carries a **value**. The score "
        "of query *i* with key *j* is their dot product (scaled); a softmax turns each row of "
        "scores into **weights** that sum to 1; the output of token *i* is the weighted sum "
        "of the values. Change N, D, heads, the scaling and the mask in the sidebar and watch "
        "the three matrices change. {point} to see exactly what it is."
    ).format(point=ui.pointing(_("Hover a cell"), _("Tap a cell"))),
)


@st.fragment
def body(view: ui.View) -> None:
    """Head, query, charts, export: a head or query change, or a click on a heatmap cell,
    reruns only this part of the page."""
    s, r = view.settings, view.result
    n, h_count, dk = r.n_tokens, r.num_heads, r.queries.shape[-1]
    c_head, c_info = st.columns([1, 4])
    head = ui.head_picker(h_count, c_head)
    c_info.markdown(
        _(
            "Head **{head}** of {count} uses columns {first}…{last} of Q, K, V "
            "(d_k = D / heads = {d} / {count} = **{dk}**). Scale factor = **{scale}**"
        ).format(
            head=head,
            count=h_count,
            first=head * dk,
            last=(head + 1) * dk - 1,
            d=s.d,
            dk=dk,
            scale=i18n.fmt(r.scale, ".4g"),
        )
        + (_(" · mask: **{kind}**").format(kind=s.mask_kind) if s.mask_kind != "none" else "")
        + "."
    )

    ui.pooled_note(n)
    top_row(view, head)
    asks.playground(s, r.weights, head, view.labels)  # a teacher's open class: Ask the room
    ui.cell_panel(view.result, view.labels, "pg_top", head)
    inputs_row(view, head)
    query_section(view, head)
    footer(view, head)


def top_charts(view: ui.View, head: int) -> list:
    """Scores | weights | output of one head, linked."""
    r, labels, lay, mask = view.result, view.labels, view.layout, view.result.mask
    dk = r.queries.shape[-1]
    return [
        (
            "pg_scores",
            viz.heatmaps.attention_figure(
                r.scores[head],
                what="scores",
                labels=labels,
                layout=lay,
                mask=mask,
                scale=r.scale,
                d_k=dk,
            ),
            ui.link_attn(head, lay),
        ),
        (
            "pg_weights",
            viz.heatmaps.attention_figure(
                r.weights[head], what="weights", labels=labels, layout=lay, mask=mask
            ),
            # the arithmetic of a clicked cell (scores or weights), worked out in the browser
            ui.link_attn(head, lay, weights=True, arithmetic=ui.cell_data(r, head, labels)),
        ),
        (
            "pg_out",
            viz.heatmaps.token_matrix_figure(
                r.head_outputs[head],
                name=_("out (head {head}) = A V").format(head=head),
                labels=labels,
                layout=lay,
            ),
            ui.link_tokens(head, lay, "query"),
        ),
    ]


def top_row(view: ui.View, head: int) -> None:
    """Scores | weights | output of the head, linked; a click on a cell picks its query.
    On a slide two a row (scores | weights, then the output), each filling the screen. A
    revealed answer of the teacher's class is outlined on the weights (the projector)."""
    lay, n = view.layout, view.result.n_tokens
    ui.head_board(
        "pg_top",
        lambda h: top_charts(view, h),
        head,
        overlays={"pg_weights": ui.Overlay("playground", view.settings, head, lay, n)},
        select_into=("query", None),
        n=n,
        columns=[1, 1] if ui.present.presenting() else None,
    )
    st.caption(
        (
            _(
                "Scores and outputs: blue < 0 < red (white = 0). Weights: {scale}, so darker = "
                "closer to 0; each row sums to 1"
            ).format(scale=ui.weights_scale())
            if lay == "rows"
            else _(
                "Scores and outputs: blue < 0 < red (white = 0). Weights: {scale}, so darker = "
                "closer to 0; each column sums to 1"
            ).format(scale=ui.weights_scale())
        )
        + (
            _(" (the values are written in the cells where they fit)")
            if n <= viz.style.MAX_CELL_TEXT_N
            else ""
        )
        + _(". Grey cells with × are masked: their score is −∞ and their weight 0.")
        + (
            _(" Token labels are hidden above {n} tokens; {point} shows the indices.").format(
                n=viz.style.MAX_TICK_LABELS, point=ui.pointing(_("hover"), _("a tap"))
            )
            if n > viz.style.MAX_TICK_LABELS
            else ""
        ),
        unsafe_allow_html=True,  # the app's own words (ui.pointing)
    )


def input_charts(view: ui.View, head: int) -> list:
    """X and one head's Q, K, V, linked to the attention matrices above."""
    r, labels, lay = view.result, view.labels, view.layout
    tm = viz.heatmaps.token_matrix_figure
    return [
        (
            "pg_x",
            tm(view.x, name="X", labels=labels, layout=lay, height=320),
            ui.link_tokens(None, lay, "query"),
        ),
        *(
            (
                f"pg_{m.lower()}",
                tm(
                    a[head],
                    name=_("{name} (head {head})").format(name=m, head=head),
                    labels=labels,
                    layout=lay,
                    height=320,
                ),
                ui.link_tokens(head, lay, "query" if m == "Q" else "key"),
            )
            for m, a in (("Q", r.queries), ("K", r.keys), ("V", r.values))
        ),
    ]


def inputs_row(view: ui.View, head: int) -> None:
    """X and this head's Q, K, V, linked to the attention matrices above."""
    st.subheader(_("Inputs and projections of this head"))
    ui.head_board("pg_inputs", lambda h: input_charts(view, h), head)


def footer(view: ui.View, head: int) -> None:
    """Shapes, exports and the NumPy code of this view."""
    r, lay = view.result, view.layout
    ui.shapes(
        {
            "X": view.x,
            "Q, K, V": r.concat,
            f"Q_{head}, K_{head}, V_{head}": r.queries[head],
            _("S (scores)"): r.scores[head],
            _("A (weights)"): r.weights[head],
            _("out (head)"): r.head_outputs[head],
            "concat": r.concat,
            _("Y (output)"): r.output,
        },
        note=_("rows = tokens") if lay == "rows" else _("shown transposed: columns = tokens"),
    )
    ui.export_section(
        view,
        page="playground",
        tokens={
            "X": view.x,
            f"Q head {head}": r.queries[head],
            f"K head {head}": r.keys[head],
            f"V head {head}": r.values[head],
            f"out head {head}": r.head_outputs[head],
            "Y output": r.output,
        },
        squares={f"S head {head}": r.masked_scores[head], f"A head {head}": r.weights[head]},
    )
    ui.code_box(view, head=head)


@st.fragment
def query_section(view: ui.View, head: int) -> None:
    """One query's weights and output: the query picker reruns only this part (a click on
    a scores or weights cell sets the picker and reruns the whole body)."""
    labels, mask, n = view.labels, view.result.mask, view.result.n_tokens
    title = st.empty()  # the subheader names the query picked below it
    c_query, c_qinfo = st.columns([1, 4])
    query = c_query.selectbox(
        _("query token i"),
        list(range(n)),
        key="query",
        bind="query-params",
        help=_("Or click a cell of the scores or weights: its row becomes the query."),
    )
    title.subheader(
        _("Query {query} ({token}): its weights and its output").format(
            query=query, token=ui.md_token(labels[query])
        )
    )
    c_qinfo.markdown(
        _(
            "Its row of the weights (left) and how its output is built from the values "
            "(right). {point} to pick its query."
        ).format(
            point=ui.pointing(
                _("Hover a row of the weights above to preview another query's bars; click a cell"),
                _("Tap a cell of the weights above"),
            )
        ),
        unsafe_allow_html=True,  # the app's own words (ui.pointing)
    )
    ui.head_board("pg_query", lambda h: query_charts(view, h, query), head)
    if mask is not None and not mask[query].any():
        st.info(
            _(
                "Query {query} may attend to no key at all (every key is masked): its weights "
                "are all 0 and its output is 0, not NaN."
            ).format(query=query)
        )
    # the other heads' charts of the boards above, sent after them while the user flips
    # through the heads: the next head change draws at once, in the browser (see ui.board)
    ui.prefetch_heads(view.result.num_heads, head, n, repr(view.settings))


def query_charts(view: ui.View, head: int, query: int) -> list:
    """One query's weights over the keys and its output as a weighted sum of the values."""
    r, labels, mask = view.result, view.labels, view.result.mask
    return [
        (
            "pg_qbars",
            viz.attention.query_weights_figure(
                r.weights[head, query],
                query=query,
                labels=labels,
                mask_row=None if mask is None else mask[query],
            ),
            ui.link_bars(head),
        ),
        (
            "pg_qsum",
            viz.attention.weighted_sum_figure(
                r.values[head], r.weights[head, query], query=query, labels=labels
            ),
            None,
        ),
    ]


body(view)
