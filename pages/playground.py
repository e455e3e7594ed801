"""Playground (home): scores | weights | output of one head, the inputs, one query's sum."""

import streamlit as st

from attnviz import figures, ui

view = ui.start(
    "Self-attention playground",
    "Every token asks a **query**, offers a **key** and carries a **value**. The score "
    "of query *i* with key *j* is their dot product (scaled); a softmax turns each row of "
    "scores into **weights** that sum to 1; the output of token *i* is the weighted sum "
    "of the values. Change N, D, heads, the scaling and the mask in the sidebar and watch "
    "the three matrices change. Hover a cell to see exactly what it is.",
)
s, r, labels, lay = view.settings, view.result, view.labels, view.layout
n, h_count, dk = r.n_tokens, r.num_heads, r.queries.shape[-1]

c_head, c_query, c_info = st.columns([1, 1, 3])
head = c_head.selectbox("head", list(range(h_count)), key="head", bind="query-params")
query = c_query.selectbox(
    "query token i",
    list(range(n)),
    key="query",
    bind="query-params",
    help="Heatmap clicks do not reach Python: pick the token here.",
)
c_info.markdown(
    f"Head **{head}** of {h_count} uses columns {head * dk}…{(head + 1) * dk - 1} of Q, K, V "
    f"(d_k = D / heads = {s.d} / {h_count} = **{dk}**). Scale factor = **{r.scale:.4g}**"
    + (f" · mask: **{s.mask_kind}**" if s.mask_kind != "none" else "")
    + f" · query {query} is {ui.md_text(labels[query])}."
)

mask = r.mask
ui.pooled_note(n)
c1, c2, c3 = st.columns(3)
with c1:
    ui.plot(
        figures.attention_figure(
            r.scores[head],
            what="scores",
            labels=labels,
            layout=lay,
            mask=mask,
            scale=r.scale,
            d_k=dk,
        ),
        key="pg_scores",
    )
with c2:
    ui.plot(
        figures.attention_figure(
            r.weights[head], what="weights", labels=labels, layout=lay, mask=mask
        ),
        key="pg_weights",
    )
with c3:
    ui.plot(
        figures.token_matrix_figure(
            r.head_outputs[head], name=f"out (head {head}) = A V", labels=labels, layout=lay
        ),
        key="pg_out",
    )
st.caption(
    "Scores and outputs: blue < 0 < red (white = 0). Weights: a fixed scale from 0 (dark "
    "purple) to 1 (yellow), so darker = closer to 0; each "
    + ("row" if lay == "rows" else "column")
    + " sums to 1"
    + (" (the values are written in the cells)" if n <= figures.MAX_CELL_TEXT_N else "")
    + ". Grey cells with × are masked: their score is −∞ and their weight 0."
    + (" Token labels are hidden above 40 tokens; hover shows the indices." if n > 40 else "")
)

st.subheader("Inputs and projections of this head")
cx, cq, ck, cv = st.columns(4)
heights = 320
with cx:
    ui.plot(
        figures.token_matrix_figure(view.x, name="X", labels=labels, layout=lay, height=heights),
        key="pg_x",
    )
with cq:
    ui.plot(
        figures.token_matrix_figure(
            r.queries[head], name=f"Q (head {head})", labels=labels, layout=lay, height=heights
        ),
        key="pg_q",
    )
with ck:
    ui.plot(
        figures.token_matrix_figure(
            r.keys[head], name=f"K (head {head})", labels=labels, layout=lay, height=heights
        ),
        key="pg_k",
    )
with cv:
    ui.plot(
        figures.token_matrix_figure(
            r.values[head], name=f"V (head {head})", labels=labels, layout=lay, height=heights
        ),
        key="pg_v",
    )

st.subheader(f"Query {query} ({ui.md_text(labels[query])}): its weights and its output")
cb1, cb2 = st.columns(2)
with cb1:
    ui.plot(
        figures.query_weights_figure(
            r.weights[head, query],
            query=query,
            labels=labels,
            mask_row=None if mask is None else mask[query],
        ),
        key="pg_qbars",
    )
with cb2:
    ui.plot(
        figures.weighted_sum_figure(
            r.values[head], r.weights[head, query], query=query, labels=labels
        ),
        key="pg_qsum",
    )
if mask is not None and not mask[query].any():
    st.info(
        f"Query {query} may attend to no key at all (every key is masked): its weights are "
        "all 0 and its output is 0, not NaN."
    )

ui.shapes(
    {
        "X": view.x,
        "Q, K, V": r.concat,
        f"Q_{head}, K_{head}, V_{head}": r.queries[head],
        "S (scores)": r.scores[head],
        "A (weights)": r.weights[head],
        "out (head)": r.head_outputs[head],
        "concat": r.concat,
        "Y (output)": r.output,
    },
    note="rows = tokens" if lay == "rows" else "shown transposed: columns = tokens",
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
