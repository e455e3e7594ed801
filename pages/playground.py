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


#: The presenter view's slides (``?present=1&step=``), one idea each; the normal page
#: shows them all, one under the other.
STEPS = [
    _("Scores and weights of one head"),
    _("The output: the weights mix the values"),
    _("Where Q, K and V come from"),
    _("One query: its weights and its output"),
]


@st.fragment
def body(view: ui.View) -> None:
    """Head, query, charts, export: a head or query change, or a click on a heatmap cell,
    reruns only this part of the page. In the presenter view, one step a slide."""
    step = ui.steps(STEPS)
    if step.presenting:
        slide(view, step.index)
        return
    row = ui.row("head")
    head = head_row(view, [row], width=ui.SMALL_PICKER_WIDTH)
    ui.pooled_note(view.result.n_tokens)
    top_row(view, head)
    asks.playground(view.settings, view.result.weights, head, view.labels)  # Ask the room
    ui.cell_panel(view.result, view.labels, "pg_top", head)
    inputs_row(view, head)
    query_section(view, head)
    footer(view, head)


def head_row(view: ui.View, columns: list, width: int | str = "stretch") -> int:
    """The head picker in ``columns[0]`` (``width``: its own) and what the head is in
    ``columns[-1]`` (both in one :func:`attnviz.ui.row`: ``[row]``); the head."""
    s, r = view.settings, view.result
    h_count, dk = r.num_heads, r.queries.shape[-1]
    head = ui.head_picker(h_count, columns[0], width=width)
    columns[-1].markdown(
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
        + ".",
        width="stretch",
    )
    return head


def top_charts(view: ui.View, head: int) -> list:
    """Scores | weights | output of one head, linked."""
    return [scores_chart(view, head), weights_chart(view, head), out_chart(view, head)]


def scores_chart(view: ui.View, head: int) -> tuple:
    """One head's scores S, linked (a click picks the query)."""
    r, lay = view.result, view.layout
    return (
        "pg_scores",
        viz.heatmaps.attention_figure(
            r.scores[head],
            what="scores",
            labels=view.labels,
            layout=lay,
            mask=r.mask,
            scale=r.scale,
            d_k=r.queries.shape[-1],
        ),
        ui.link_attn(head, lay),
    )


def weights_chart(view: ui.View, head: int) -> tuple:
    """One head's weights A, linked, with a clicked cell's arithmetic."""
    r, lay = view.result, view.layout
    return (
        "pg_weights",
        viz.heatmaps.attention_figure(
            r.weights[head], what="weights", labels=view.labels, layout=lay, mask=r.mask
        ),
        # the arithmetic of a clicked cell (scores or weights), worked out in the browser
        ui.link_attn(head, lay, weights=True, arithmetic=ui.cell_data(r, head, view.labels)),
    )


def out_chart(view: ui.View, head: int) -> tuple:
    """One head's output A V, a row per token."""
    return (
        "pg_out",
        viz.heatmaps.token_matrix_figure(
            view.result.head_outputs[head],
            name=_("out (head {head}) = A V").format(head=head),
            labels=view.labels,
            layout=view.layout,
        ),
        ui.link_tokens(head, view.layout, "query"),
    )


def top_row(view: ui.View, head: int) -> None:
    """Scores | weights | output of the head, linked; a click on a cell picks its query."""
    lay, n = view.layout, view.result.n_tokens
    ui.head_board(
        "pg_top",
        lambda h: top_charts(view, h),
        head,
        overlays={"pg_weights": ui.Overlay("playground", view.settings, head, lay, n)},
        select_into=("query", None),
        n=n,
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
    return [
        (
            "pg_x",
            viz.heatmaps.token_matrix_figure(
                view.x, name="X", labels=labels, layout=lay, height=320
            ),
            ui.link_tokens(None, lay, "query"),
        ),
        *(
            projection_chart(view, head, m, a)
            for m, a in (("Q", r.queries), ("K", r.keys), ("V", r.values))
        ),
    ]


def projection_chart(view: ui.View, head: int, m: str, a) -> tuple:
    """One head's Q, K or V (``m``; ``a``: the (H, N, d_k) array), linked to the tokens."""
    return (
        f"pg_{m.lower()}",
        viz.heatmaps.token_matrix_figure(
            a[head],
            name=_("{name} (head {head})").format(name=m, head=head),
            labels=view.labels,
            layout=view.layout,
            height=320,
        ),
        ui.link_tokens(head, view.layout, "query" if m == "Q" else "key"),
    )


def inputs_row(view: ui.View, head: int) -> None:
    """X and this head's Q, K, V, linked to the attention matrices above."""
    st.header(_("Inputs and projections of this head"))
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
    title = st.empty()  # the heading names the query picked below it
    row = ui.row("query")  # the picker, then what the section shows (one block)
    query = query_box(row, n, width=ui.SMALL_PICKER_WIDTH)
    title.header(
        _("Query {query} ({token}): its weights and its output").format(
            query=query, token=ui.md_token(labels[query])
        )
    )
    row.markdown(
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
        width="stretch",
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


def query_box(where, n: int, width: int | str = "stretch") -> int:
    """The query picker (``?query=``), drawn in ``where`` (``width``: Streamlit's); the query."""
    return where.selectbox(
        _("query token i"),
        list(range(n)),
        key="query",
        bind="query-params",
        help=_("Or click a cell of the scores or weights: its row becomes the query."),
        width=width,
    )


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


def slide(view: ui.View, index: int) -> None:
    """The presenter view's step ``index`` (:data:`STEPS`): the head picker and what the
    head is above the step's one board, which fills the screen below them; the query
    picker on the query's step (elsewhere in a hidden box: its value and link kept); Ask
    the room on the weights (a teacher's open class in the link). While the lecturer
    flips through the heads, the other heads' charts are sent after the shown ones."""
    r, n = view.result, view.result.n_tokens
    hidden = ui.present.hidden_box()
    if index == 3:
        c_head, c_query, c_info = st.columns([1, 1, 4])
        query = query_box(c_query, n)
        head = head_row(view, [c_head, c_info])
    else:
        query = query_box(hidden, n)
        head = head_row(view, st.columns([1, 4]))
    if index == 0:
        ui.pooled_note(n)
        top_slide(view, head)
        asks.playground(view.settings, r.weights, head, view.labels)
    elif index == 1:
        ui.head_board(
            "pg_mix",
            lambda h: [
                weights_chart(view, h),
                projection_chart(view, h, "V", r.values),
                out_chart(view, h),
            ],
            head,
            columns=[1.5, 1, 1],
        )
    elif index == 2:
        # X's column a little narrower: Q, K and V (the head's, d_k wide) as tall as they
        # may be stretched, their values written; X's D features in smaller cells
        columns = [0.9, 1, 1, 1]
        ui.head_board("pg_inputs", lambda h: input_charts(view, h), head, columns=columns)
    else:
        ui.head_board("pg_query", lambda h: slide_query_charts(view, h, query), head)
    with hidden:  # under the board it would push the slide 16 px past the screen
        ui.prefetch_heads(r.num_heads, head, n, repr(view.settings))


def top_slide(view: ui.View, head: int) -> None:
    """The first slide's board: scores | weights, each filling the screen (a click picks
    the query; a revealed answer of the teacher's class outlined on the weights)."""
    lay, n = view.layout, view.result.n_tokens
    ui.head_board(
        "pg_top",
        lambda h: [scores_chart(view, h), weights_chart(view, h)],
        head,
        overlays={"pg_weights": ui.Overlay("playground", view.settings, head, lay, n)},
        select_into=("query", None),
        n=n,
    )


def slide_query_charts(view: ui.View, head: int, query: int) -> list:
    """:func:`query_charts` as tall as the slide leaves them (``layout.meta.fill``)."""
    charts = query_charts(view, head, query)
    for __, fig, __ in charts:
        fig.layout.meta = {**(fig.layout.meta or {}), "fill": "height"}
    return charts


body(view)
