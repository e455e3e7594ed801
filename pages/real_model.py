"""Real model page: MiniLM-L6's attention, computed by attnviz's own NumPy engine."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnviz import i18n, ui, viz
from attnviz.i18n import _
from attnviz.models import head_probes, minilm
from attnviz.ui import asks, heads, picker

# The page runs again on every run: its texts are in the language of this run.
SUMMARIES = {
    "to_prev": (_("Attention to the previous token"), _("positional heads: ‘look one back’")),
    "to_next": (_("Attention to the next token"), _("positional heads: ‘look one ahead’")),
    "to_cls": (_("Attention to [CLS]"), _("heads that park their attention on the first token")),
    "to_sep": (_("Attention to [SEP]"), _("‘no-op’ heads: nothing to do, look at [SEP]")),
    "to_self": (_("Attention to the token itself"), _("the diagonal")),
    "entropy": (
        _("Mean entropy (bits)"),
        _("low = sharp (one key), high = spread over many keys"),
    ),
}


@st.cache_resource(show_spinner=_("Loading the MiniLM-L6 weights (90 MB)…"))
def _model() -> minilm.MiniLM:
    return minilm.load()


# Shared by every session; a 512-token run keeps about 150 MB of intermediates
# (scores and weights of 6 layers x 12 heads), so only the last few sentences are kept.
@st.cache_resource(max_entries=4, show_spinner=_("Running MiniLM-L6 on the sentence…"))
def _run(text: str) -> minilm.MiniLMRun:
    return _model().run(text)


@st.cache_resource(max_entries=4, show_spinner=False)
def _random(text: str, layer: int, seed: int, init: str):
    run = _run(text)
    return _model().random_attention(run.hidden_states[layer], seed=seed, init=init)


def _intro() -> None:
    ui.intro(
        _("Real model: MiniLM-L6"),
        _(
            "A small **pretrained** transformer, "
            "[all-MiniLM-L6-v2](https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2): "
            "6 layers, 12 heads each, 384 numbers per token. Your sentence is cut into word "
            "pieces; every layer runs **exactly the attention of the other pages**, "
            "softmax(QKᵀ/√32)·V, through the same NumPy function — only the weights are "
            "learned instead of random. Pick a layer and a head to see who looks at whom. "
            "The sidebar's random-weights controls do not apply here: none of them change this "
            "page."
        ),
    )


def _pickers(tokens: list[str], n_layers: int, n_heads: int) -> tuple[int, int, int]:
    """The head view's layer and head (from 0) and the token of the q, k, v tab."""
    n = len(tokens)
    c1, c2, c3 = st.columns([1, 1, 1.3])
    layer = ui.index_slider(_("Layer"), "rm_L", n_layers, old_key="rm_layer", where=c1)
    head = ui.index_slider(_("Head"), "rm_H", n_heads, old_key="rm_head", where=c2)
    default_tok = tokens.index("it") if "it" in tokens else min(1, n - 1)
    tok = ui.token_select(_("Token (for q, k, v)"), "rm_token", tokens, default_tok, where=c3)
    return layer, head, tok


def _views(text: str, model: minilm.MiniLM, run: minilm.MiniLMRun) -> None:
    """The bundled MiniLM-L6's views of ``text``: one head, the grid, q, k and v of a
    token, random weights, head types, the shapes and the Heads section."""
    tokens = run.tokens
    n, n_layers, n_heads = run.n_tokens, model.num_layers, model.num_heads
    weights = run.attentions  # (6, 12, N, N)
    # the shared sidebar's "tokens as rows / columns" choice, if the app has one
    layout = st.session_state.get("layout", "rows")
    layout = layout if layout in ("rows", "columns") else "rows"
    reveal = heads.opened(HEADS)  # an Open button of the Heads section: scroll up to here
    step = ui.model_steps(
        n_layers * n_heads, _("One head: who looks at whom"), _("q, k, v of one token")
    )
    if step.presenting:  # the presenter view: one view a slide, within the screen
        _slide(step.index, text, run, layout, reveal)
        return
    layer, head, tok = _pickers(tokens, n_layers, n_heads)
    res = run.layers[layer]
    sel = (layer, head)
    ui.pooled_note(
        n, _("the token selector's bars (first tab below) show its full row"), exports=False
    )
    left, right = st.columns([1.15, 1])
    with left:
        ui.plot(viz.models.heads_grid_figure(weights, selected=sel), key="rm_grid_fig")
    with right:
        _head_view(text, run, layer, head, layout, reveal)
    asks.model_heads("real_model", (text, layer), weights[layer], layer)  # Ask the room

    ui.shapes(
        {
            "x": run.hidden_states[layer],
            _("Q, K, V per head"): res.queries,
            _("weights of a layer"): res.weights,
            _("all weights"): weights,
        },
        note=_("layer input, then 12 heads of 32 features each"),
    )
    t_qkv, t_random, t_types, t_shapes = st.tabs(
        [
            _("q, k, v of one token"),
            _("Compare with random weights"),
            _("Find head types"),
            _("Shapes"),
        ]
    )
    with t_qkv:
        _qkv(res, weights, tokens, layer, head, tok)
    with t_random:
        _compare_random(text, run, tokens, layer, head, layout)
    with t_types:
        _head_types(weights, tokens, sel)
    with t_shapes:
        _shapes(model, n)
    heads.section(HEADS, run, layer, head)


def _head_view(text: str, run, layer: int, head: int, layout: str, reveal) -> None:
    """One head's weights, large: the head view (a revealed "which head" on the teacher's
    projector drawn over it)."""
    title = _("Layer {layer}, head {head}: weights").format(layer=layer, head=head)
    ui.plot(
        _head_figure(run.layers[layer], head, run.tokens, layout, title),
        key="rm_head_fig",
        reveal=reveal,
        overlay=ui.Overlay("real_model", (text, layer), head, layout, run.n_tokens),
    )


def _slide(index: int, text: str, run, layout: str, reveal) -> None:
    """The presenter view's slides: every head (the sliders above them), one head with the
    whole height beside its sliders, one token's q, k, v and row of weights."""
    tokens, weights = run.tokens, run.attentions
    n_layers, n_heads = weights.shape[:2]
    if index == 0:
        c1, c2 = st.columns(2)
        layer = ui.index_slider(_("Layer"), "rm_L", n_layers, old_key="rm_layer", where=c1)
        head = ui.index_slider(_("Head"), "rm_H", n_heads, old_key="rm_head", where=c2)
        grid = viz.models.heads_grid_figure(weights, selected=(layer, head))
        ui.plot(grid, key="rm_grid_fig")
    elif index == 1:
        side, main = st.columns([1, 3])
        layer = ui.index_slider(_("Layer"), "rm_L", n_layers, old_key="rm_layer", where=side)
        head = ui.index_slider(_("Head"), "rm_H", n_heads, old_key="rm_head", where=side)
        with main:
            _head_view(text, run, layer, head, layout, reveal)
    else:
        layer, head, tok = _pickers(tokens, n_layers, n_heads)
        _qkv(run.layers[layer], weights, tokens, layer, head, tok, slide=True)
    asks.model_heads("real_model", (text, layer), weights[layer], layer)  # Ask the room


MODELS = picker.PageModels(
    "encoder", "rm", _("the bundled MiniLM-L6"), "rm_text", _("Sentence"), minilm.DEFAULT_TEXT
)
HEADS = picker.heads_spec(
    MODELS, "MiniLM-L6", lambda seed, length: head_probes.minilm_probe(_model(), seed, length)
)


def _shapes(model: minilm.MiniLM, n: int) -> None:
    """The shapes tab: every step of a layer with its shape for this sentence."""
    d, d_head, d_ff = model.hidden_size, model.config.head_size, model.config.intermediate_size
    n_layers, n_heads = model.num_layers, model.num_heads
    rows = [
        (_("token ids → embeddings (word + position + type), LayerNorm: x"), f"({n}, {d})"),
        (
            "Q = x W_q + b_q, K = x W_k + b_k, V = x W_v + b_v",
            _("({n}, {d}) each").format(n=n, d=d),
        ),
        (
            _("split into {h} heads of {c} columns").format(h=n_heads, c=d_head),
            _("({h}, {n}, {c}) each").format(h=n_heads, n=n, c=d_head),
        ),
        (_("weights = softmax(Q Kᵀ / √{c})").format(c=d_head), f"({n_heads}, {n}, {n})"),
        (_("weights · V, heads concatenated, output projection"), f"({n}, {d})"),
        (
            _("+ x, LayerNorm, feed-forward {d}→{ff}→{d} (GELU), + x, LayerNorm").format(
                d=d, ff=d_ff
            ),
            f"({n}, {d})",
        ),
        (_("all layers' weights"), f"({n_layers}, {n_heads}, {n}, {n})"),
    ]
    st.markdown(
        f"\n| {_('step')} | {_('shape')} |\n| --- | --- |\n"
        + "".join(f"| {step} | {shape} |\n" for step, shape in rows)
    )
    st.caption(
        _(
            "PyTorch stores each projection as (out, in) and computes x Wᵀ + b; attnviz's "
            "engine uses row layout, so the page passes w_q = W_qᵀ (and so on) in "
            "`AttentionParams`. The result matches transformers' BertModel to 1e-5."
        )
    )


def _head_figure(res, head: int, tokens: list[str], layout: str, title: str):
    """One head's weights of a layer result, with its scale and d_k in the hover."""
    return viz.heatmaps.attention_figure(
        res.weights[head],
        what="weights",
        labels=tokens,
        scale=res.scale,
        d_k=res.queries.shape[-1],
        layout=layout,
        title=title,
        height=420,
    )


def _qkv(res, weights, tokens, layer, head, tok, *, slide: bool = False) -> None:
    """One token's q, k, v in a head and its row of weights (``slide``: side by side, and
    nothing under them)."""
    q = res.queries[head, tok]  # (32,)
    k = res.keys[head, tok]
    v = res.values[head, tok]
    st.markdown(
        _(
            "Token **{tok}:** {token} in layer {layer}, head {head}: "
            "its query, key and value are {size} numbers each (this head's block of Q, K and "
            "V). Its row of weights is softmax(q · kⱼ / √{size}) over every key kⱼ."
        ).format(tok=tok, token=ui.md_token(tokens[tok]), layer=layer, head=head, size=q.size)
    )
    left, right = st.columns(2) if slide else (st.container(), st.container())
    with left:
        ui.plot(
            viz.heatmaps.matrix_figure(
                np.stack([q, k, v]),
                title=_("q, k, v of “{token}” (layer {layer}, head {head})").format(
                    token=viz.style.token_label(tokens[tok]), layer=layer, head=head
                ),
                x_title=_("feature (of this head's 32)"),
                y_title="",
                hover=_("%{y}[feature %{x}] = %{z:.3f}"),
                y_labels=["q", "k", "v"],
                height=220,
            ),
            key="rm_qkv_fig",
        )
    with right:
        row = viz.attention.query_weights_figure(
            res.weights[head, tok], query=tok, labels=tokens, height=500 if slide else 300
        )
        if slide:  # the slide's larger labels upright, side by side (slanted they overlap)
            row.update_xaxes(tickangle=-90)
        ui.plot(row, key="rm_row_fig")
    if slide:
        return
    links = minilm.strongest_links(weights, tokens, tok, top=4)
    if links:
        st.markdown(
            _(
                "Where {token} looks most at a word further away (any layer, "
                "any head; itself, its neighbours, [CLS] and [SEP] left out):"
            ).format(token=ui.md_token(tokens[tok]))
            + "\n\n"
            + "\n".join(
                "- "
                + _("layer {layer}, head {head} → {token} ({weight})").format(
                    layer=lay, head=h, token=ui.md_token(tokens[k]), weight=i18n.fmt(wt, ".2f")
                )
                for lay, h, k, wt in links
            )
        )


def _compare_random(text, run, tokens, layer, head, layout) -> None:
    c1, c2 = st.columns(2)
    seed = c1.number_input(_("Seed"), 0, 10_000, 0, key="rm_seed")
    init = c2.selectbox(
        _("Random init"),
        ["xavier", "normal", "uniform"],  # the engine's names of the inits
        key="rm_init",
        help=_(
            "xavier: Glorot uniform U(±√(6 / (fan_in + fan_out))), biases U(±1/√fan_in). "
            "(A fresh nn.Linear is different: kaiming-uniform with a = √5, i.e. weights "
            "U(±1/√fan_in), √3 times narrower for a square matrix.) "
            "normal: N(0, 1) as in the notebooks; uniform: U[0, 1)."
        ),
    )
    rnd = _random(text, layer, int(seed), init)
    st.markdown(
        _(
            "The same {n} tokens, the same input to layer {layer}, the same engine "
            "call — with random weights of the same shapes instead of the trained ones."
        ).format(n=run.n_tokens, layer=layer)
    )
    a, b = st.columns(2)
    trained = run.layers[layer]
    random_name = _("random ({init}, seed {seed})").format(init=init, seed=seed)
    for col, r, name in ((a, trained, _("trained")), (b, rnd, random_name)):
        title = _("Layer {layer}, head {head}: {name}").format(layer=layer, head=head, name=name)
        with col:
            ui.plot(
                _head_figure(r, head, tokens, layout, title),
                key=f"rm_cmp_{'trained' if r is trained else 'random'}",
            )
    ent_t = minilm.head_summaries(trained.weights, tokens)["entropy"]
    ent_r = minilm.head_summaries(rnd.weights, tokens)["entropy"]
    st.caption(
        _(
            "Mean entropy over the 12 heads of layer {layer}: trained {t} bits, "
            "random {r} bits (uniform would be {u})."
        ).format(
            layer=layer,
            t=i18n.fmt(ent_t.mean(), ".2f"),
            r=i18n.fmt(ent_r.mean(), ".2f"),
            u=i18n.fmt(np.log2(run.n_tokens), ".2f"),
        )
    )


def _head_types(weights, tokens, sel) -> None:
    summ = minilm.head_summaries(weights, tokens)
    key = st.radio(
        _("Colour the heads by"),
        list(SUMMARIES),
        format_func=lambda k: SUMMARIES[k][0],
        horizontal=True,
        key="rm_metric",
    )
    vals = summ[key]
    is_entropy = key == "entropy"
    ui.plot(
        viz.models.summary_figure(
            vals,
            title=f"{SUMMARIES[key][0]} — {SUMMARIES[key][1]}",
            zmax=None if is_entropy else 1.0,
            selected=sel,
        ),
        key="rm_summary_fig",
    )
    lines = []
    for k, (label, __) in SUMMARIES.items():
        v = summ[k]
        l_, h_ = np.unravel_index(np.argmin(v) if k == "entropy" else np.argmax(v), v.shape)
        line = (
            _("{label}: lowest in **layer {layer}, head {head}** ({value})")
            if k == "entropy"
            else _("{label}: highest in **layer {layer}, head {head}** ({value})")
        )
        value = i18n.fmt(v[l_, h_], ".2f")
        lines.append("- " + line.format(label=label, layer=l_, head=h_, value=value))
    st.markdown(
        _(
            "Averaged over every query of your sentence. Try a longer sentence: positional "
            "heads keep their pattern, others change with the words."
        )
        + "\n\n"
        + "\n".join(lines)
    )


def main() -> None:
    ui.page_guard()
    picker.bundled_page(MODELS, _intro, load=_model, run=_run, views=_views)


main()
