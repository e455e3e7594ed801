"""The Cross-attention page's real encoder-decoder (issue 34): a T5, BART or Marian found on
this machine (``?cx_model=<name>``, picked as the model pages pick theirs), a source and a
target prefix, its cross-attention per layer and head, and generation step by step."""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from attnviz import viz
from attnviz.i18n import N_, _, ngettext
from attnviz.ui import cross_view, generate
from attnviz.ui.page import index_slider
from attnviz.ui.picker import MAX_TOKENS, PageModels, _load, choose
from attnviz.ui.text import md_text

#: The Cross-attention page's picker of the encoder-decoders found (T5, BART, Marian);
#: ``bundled`` and ``text_label`` are marked for the catalog, translated where shown. The
#: default text stays English: the models found translate from English.
ENCDEC = PageModels(
    kind="encoder-decoder",
    prefix="cxm",
    bundled=N_("none (the random weights above)"),
    text_key="cxm_src",
    text_label=N_("Source sentence (the encoder reads it)"),
    default_text="The cat sat on the mat.",
    key="cx_model",
)


def _target(model: Any, text: str) -> tuple[list[str], np.ndarray]:
    """The decoder's input: its start token, then the prefix's tokens without the special
    ones the tokenizer adds (a closing </s>)."""
    start = int(model.decoder_start_token_id)
    tokens, ids = [model.tokenizer.id_to_token(start) or str(start)], [start]
    if text.strip():
        enc = model.tokenizer.encode(text)
        keep = [i for i, s in enumerate(enc.special_tokens_mask) if not s]
        tokens += [enc.tokens[i] for i in keep]
        ids += [enc.ids[i] for i in keep]
    return tokens, np.asarray(ids, dtype=np.int64)


@st.cache_resource(max_entries=2, show_spinner=False)  # the caller's spinner: translated
def _cross_run(path: str, source: str, target: str, _model: Any) -> tuple[Any, list, list]:
    """(run, source tokens, target tokens); ValueError for an empty or too long text."""
    src_tokens, src = _model.tokenize(source)
    tgt_tokens, tgt = _target(_model, target)
    if max(src.size, tgt.size) > MAX_TOKENS:
        raise ValueError(
            _("at most {n} tokens a side here. Shorten the text.").format(n=MAX_TOKENS)
        )
    return _model.run_ids(src, tgt), list(src_tokens), tgt_tokens


def encdec_section() -> None:
    """The Cross-attention page's real encoder-decoder: pick one found on this machine,
    type a source and a target prefix, see its cross-attention per layer and head."""
    st.header(_("A real encoder-decoder"), anchor="real-encoder-decoder")
    entry = choose(ENCDEC)
    if entry is None:
        return
    model = _load(entry)
    if model is None:
        return
    source = st.text_input(
        _(ENCDEC.text_label), ENCDEC.default_text, max_chars=2000, key="cxm_src",
        bind="query-params",
    )  # fmt: skip
    target = st.text_input(
        _("Target prefix (the decoder reads it after its start token; may be empty)"), "",
        max_chars=2000, key="cxm_tgt", bind="query-params",
    )  # fmt: skip
    try:
        with st.spinner(_("Running the encoder-decoder…")):
            run, src, tgt = _cross_run(str(entry.path), source, target, model)
    except ValueError as err:
        st.warning(md_text(str(err)))
        return
    w = run.cross_attentions  # (L, H, T, S)
    n_layers, n_heads = w.shape[:2]
    c1, c2 = st.columns(2)
    with c1:
        layer = index_slider(_("Layer"), "cxm_L", n_layers, old_key="cxm_layer")
    with c2:
        head = index_slider(_("Head"), "cxm_H", n_heads, old_key="cxm_head")
    st.markdown(
        _(
            "**{name}** ({family}): the decoder's {t} target tokens ask, the encoder's {s} "
            "source tokens answer. Layer {layer}, head {head} of {heads} (from 0); each row "
            "sums to 1 over the source."
        ).format(
            name=md_text(entry.name), family=entry.family, t=len(tgt), s=len(src), layer=layer,
            head=head, heads=n_heads,
        )
    )  # fmt: skip

    title = _("Layer {layer}, head {head}: weights A = softmax over the source").format(
        layer=layer, head=head
    )
    cross_view.attention_board(  # counted from 0, as the sliders
        "cxm_top", w[layer], head, target_labels=tgt, source_labels=src, weights_title=title
    )
    per_screen = max(1, viz.cross.MAX_GRID_PANELS // n_heads)
    shown = list(range(min(n_layers, per_screen)))
    if len(shown) < n_layers:
        st.caption(
            ngettext(
                "The grid shows the first {n} of {total} layers.",
                "The grid shows the first {n} of {total} layers.",
                n_layers,
            ).format(n=len(shown), total=n_layers)
        )
    cross_view.grid_board(
        "cxm_grid", w, target_labels=tgt, source_labels=src,
        layers=shown if len(shown) < n_layers else None,
    )  # fmt: skip
    st.caption(
        _(
            "No cell panel here: an encoder-decoder's run keeps its weights, not its queries "
            "and keys, so a clicked weight is not worked out; the head, the grid and "
            "generation below apply."
        )
    )
    generate.section(
        str(entry.path), model, run.src_ids, tgt[:1], layer, head, prefix="cxm_gen", source=src
    )
