"""Multi-head attention: every head's weights, the concatenation, W_O, heads compared."""

import math

import numpy as np
import streamlit as st

from attnviz import engine, i18n, ui, viz
from attnviz.i18n import _, ngettext
from attnviz.ui import asks
from attnviz.ui.cell import HINT_WEIGHTS

view = ui.start(
    _("Multi-head attention"),
    _(
        "Instead of one attention over all D features, the features are cut into **heads** "
        "blocks of d_k = D / heads; each head runs its own attention on its own block, so "
        "different heads can look at different tokens. Their outputs are **concatenated** "
        "back to width D and mixed by the output matrix **W_O**. Compare the heads below: "
        "which token each query attends to most, and how spread out (entropy) each head is."
    ),
)
s, r, labels, lay = view.settings, view.result, view.labels, view.layout
n, h, dk = r.n_tokens, r.num_heads, r.queries.shape[-1]

st.markdown(
    ngettext(
        "**{n} head**, each with d_k = {d} / {n} = **{dk}** columns of Q, K and V; "
        "scale factor {scale}.",
        "**{n} heads**, each with d_k = {d} / {n} = **{dk}** columns of Q, K and V; "
        "scale factor {scale}.",
        h,
    ).format(n=h, d=s.d, dk=dk, scale=i18n.fmt(r.scale, ".4g"))
)


@st.fragment
def query_section(view: ui.View) -> None:
    """One query in every head, and its output in the picked head: the pickers rerun only
    this part (a click on a cell above sets them)."""
    r, labels, n, h = view.result, view.labels, view.result.n_tokens, view.result.num_heads
    row = ui.row("query")  # the two pickers, then what they show (one block, not four)
    query = row.selectbox(
        _("query token i"),
        list(range(n)),
        key="query",
        bind="query-params",
        width=ui.SMALL_PICKER_WIDTH,
    )
    head = ui.head_picker(h, row, width=ui.SMALL_PICKER_WIDTH)
    row.markdown(
        _(
            "Query **{query}** ({token}) asks every head the same question "
            "with a different block of Q and K: each head spreads its weights differently, and "
            "head **{head}** sums its own values with them."
        ).format(query=query, token=ui.md_token(labels[query]), head=head),
        width="stretch",
    )
    ui.chart_row(
        "mh_query",
        {
            "mh_qheads": viz.charts.bars_figure(
                {_("head {head}").format(head=i): r.weights[i, query] for i in range(h)},
                x_labels=labels,
                title=_("Weights of query {query} over the keys, in every head").format(
                    query=query
                ),
                x_title=viz.style.KEY_J,
                y_title=viz.style.WEIGHT_A,
                y_range=(0.0, 1.0),
            ),
            "mh_qsum": viz.attention.weighted_sum_figure(
                r.values[head],
                r.weights[head, query],
                query=query,
                labels=labels,
                title=_(
                    "Output of query {query} in head {head} = weighted sum of its values"
                ).format(query=query, head=head),
            ),
        },
    )


def all_heads(view: ui.View) -> None:
    """Every head's weights side by side (small multiples), linked: a click picks a query
    and a head (below it in the normal view); above N = 64, why not."""
    r, labels, lay, n, h = (
        view.result,
        view.labels,
        view.layout,
        view.result.n_tokens,
        view.result.num_heads,
    )
    if n > viz.style.MAX_SMALL_MULTIPLES_N:
        st.info(
            _(
                "With N = {n} tokens, {h} heatmaps of {n}×{n} cells would be unreadable (and "
                "heavy), so each head is summarised instead (limit: N ≤ {limit}). "
                "Pick one head on the playground to see its full weights."
            ).format(n=n, h=h, limit=viz.style.MAX_SMALL_MULTIPLES_N)
        )
        return
    ui.board(
        "board_mh_small",
        [
            (
                "mh_small",
                viz.attention.small_multiples_figure(
                    r.weights, labels=labels, layout=lay, mask=r.mask
                ),
                ui.link_attn(
                    None, lay, heads=range(h), arithmetic=ui.cell_data(r, range(h), labels)
                ),
            )
        ],
        select_into=("query", "head"),
        n=n,
        heads=h,
    )


def one_head(view: ui.View, head: int) -> None:
    """A slide of one head's weights (a revealed answer outlined: the teacher's projector)."""
    s, r, labels, lay, n = (
        view.settings,
        view.result,
        view.labels,
        view.layout,
        view.result.n_tokens,
    )
    ui.plot(
        viz.heatmaps.attention_figure(
            r.weights[head],
            what="weights",
            labels=labels,
            layout=lay,
            mask=r.mask,
            title=_("head {head}: weights A (d_k = {dk} columns of Q, K, V)").format(
                head=head, dk=dk
            ),
            height=420,
        ),
        key="mh_one_head",
        link=ui.link_attn(head, lay, weights=True, select=False),
        overlay=ui.Overlay("multi_head", s, head, lay, n),
    )


# the presenter view: every head side by side, then one head a slide, then the concatenation
step = ui.steps(
    [_("All heads side by side")]
    + [_("Head {head}: its own attention").format(head=i) for i in range(h)]
    + [_("Concatenate, then W_O")]
)
if step.presenting and step.index == 0:
    all_heads(view)
    # a teacher's open class in the link: Ask the room which head, or about head 0
    asks.multi_head(s, r.weights, 0, labels)
elif step.presenting and step.index <= h:
    one_head(view, step.index - 1)
    asks.multi_head(s, r.weights, step.index - 1, labels)
elif step.rest:
    all_heads(view)
    if n <= viz.style.MAX_SMALL_MULTIPLES_N:
        st.caption(
            _(
                "{hover} to outline the same query and key in every head; {click} to pick that "
                "query and head for the section below."
            ).format(
                hover=ui.pointing(_("Hover a cell"), _("Tap a cell")),
                click=ui.pointing(_("click it"), _("the tap picks")),
            ),
            unsafe_allow_html=True,  # the app's own words (ui.pointing)
        )
        ui.cell_panel(r, labels, "board_mh_small", hint=HINT_WEIGHTS)
        st.header(_("One query in every head"))
        query_section(view)
    else:
        st.header(_("One query in every head"))
        st.info(
            _(
                "With N = {n} tokens the bars of one query in {h} heads would be unreadable "
                "(limit: N ≤ {limit}); the playground shows one head's query."
            ).format(n=n, h=h, limit=viz.style.MAX_SMALL_MULTIPLES_N)
        )

    ent = engine.row_entropy(r.weights)  # (H, N) bits
    ui.board(
        "mh_heads",
        [
            (
                "mh_entropy",
                viz.attention.entropy_figure(ent, max_entropy=math.log2(n) if n > 1 else 0.0),
                None,
            ),
            ("mh_argmax", viz.attention.argmax_figure(r.weights, labels=labels, mask=r.mask), None),
        ],
    )
    st.caption(
        _(
            "Entropy 0 bits: a query puts all its weight on one key. log₂ N bits: it spreads "
            "its weight evenly over all N keys. Bars show the mean over queries (whiskers: "
            "spread)."
        )
    )

if step.show(h + 1):
    st.header(_("Concatenate the heads, then mix them with W_O"))
    ui.pooled_note(n, _("pick one head on the playground to see its full weights"))
    w_o = None if view.params is None else view.params.w_o

    def rows(key: str, matrix, name: str, title: str, **more) -> tuple:
        """A chart of one row per token (concat, Y), linked to the query's cells."""
        fig = viz.heatmaps.token_matrix_figure(
            matrix, name=name, labels=labels, layout=lay, title=title, **more
        )
        return key, fig, ui.link_tokens(None, lay, "query")

    concat_title = _("concat of {h} head outputs ({n}×{d})").format(h=h, n=n, d=s.d)
    groups = dk if h > 1 else None
    charts = [rows("mh_concat", r.concat, "concat", concat_title, feature_groups=groups)]
    if w_o is not None:
        charts.append(
            (
                "mh_wo",
                viz.heatmaps.matrix_figure(
                    w_o,
                    title=f"W_O ({w_o.shape[0]}×{w_o.shape[1]})",
                    x_title=_("output feature"),
                    y_title=_("concat feature (head blocks)"),
                    hover="W_O[%{y}, %{x}] = %{z:.4f}",
                    separators=("y", dk) if h > 1 else None,
                ),
                None,
            )
        )
    y_title = f"Y = concat · W_O + b_O ({n}×{r.output.shape[1]})"
    charts.append(rows("mh_out", r.output, "Y", y_title))
    if w_o is None:
        st.info(_("This preset has no output projection W_O: the output is the concatenation."))
    ui.board("mh_mix", charts)
    st.latex(
        r"\text{head}_h = \operatorname{softmax}\!\Big(\frac{Q_h K_h^\top}{\sqrt{d_k}}\Big) V_h,"
        r"\qquad Y = [\text{head}_0, \dots, \text{head}_{H-1}]\, W_O + b_O"
    )

if step.rest:
    top = r.weights.argmax(axis=2)  # (H, N)
    agree = float(np.mean(top == top[:1])) if h > 1 else 1.0
    st.markdown(
        _(
            "Heads agree on the most-attended key for **{agree}** of the (head, query) pairs "
            "(compared with head 0)."
        ).format(agree=i18n.fmt(agree, ".0%"))
    )
    ui.shapes(
        {
            _("weights"): r.weights,
            _("head outputs"): r.head_outputs,
            "concat": r.concat,
            **({"W_O": w_o} if w_o is not None else {}),
            "Y": r.output,
            _("entropy"): ent,
        },
        note=_("(heads, queries, keys) for the weights"),
    )
    tables = {"entropy per head and query": (ent, None, labels)}
    if w_o is not None:
        tables["W_O"] = (w_o, None, None)
    ui.export_section(
        view,
        tables,
        page="multi_head",
        squares={f"A head {i}": r.weights[i] for i in range(min(h, 16))},
        tokens={"concat": r.concat, "Y": r.output},
    )
    ui.code_box(view, head=0)
