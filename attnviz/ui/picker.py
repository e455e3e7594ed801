"""The model picker of the two real-model pages (issue 34): the page's bundled model, or
any model of the page's kind found on this machine (:func:`attnviz.models.find`: the hub
cache and ``ATTNVIZ_MODELS``), kept in the link as ``?model=<name>``.

A page calls :func:`choose` under its title: ``None`` means the bundled model (the page as
it was), else the picked :class:`~attnviz.models.ModelEntry`, which :func:`show` draws: the
text box, every head as thumbnails, one head large, a decoder's next token and the Heads
section, from nothing but the model's ``tokenize`` and ``run_ids``. A link value that is
not a found model's name (an unknown name, a path) is dropped with a warning: only names
of the list are ever loaded, never a path from the link.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from attnviz import models, viz
from attnviz.engine import causal_mask
from attnviz.models import head_probes
from attnviz.models.catalog import ModelEntry, hub_cache
from attnviz.models.checkpoint import max_bytes
from attnviz.ui import cross_view, generate, heads, links
from attnviz.ui.page import index_slider, plot
from attnviz.ui.text import md_text

__all__ = ["KEY", "MAX_TOKENS", "PageModels", "choose", "describe", "show"]

KEY = "model"  # the widget key and the link's parameter
#: The longest text a found model is run on here (its attentions: L x H x N x N float32).
MAX_TOKENS = 512


@dataclass(frozen=True)
class PageModels:
    """What the picker needs from a page: the ``kind`` of model it lists ("encoder",
    "decoder"), its widget-key ``prefix`` ("rm", "dec"), the ``bundled`` model's name,
    and its text box (``text_key``, ``text_label``, ``default_text``)."""

    kind: str
    prefix: str
    bundled: str
    text_key: str
    text_label: str
    default_text: str
    key: str = KEY  # the picker's widget key and link parameter


def _upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def _size(n_bytes: int) -> str:
    return f"{n_bytes / 1e9:.1f} GB" if n_bytes >= 1e8 else f"{n_bytes / 1e6:.1f} MB"


def _params(n: int) -> str:
    for unit, div in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return str(n)


def describe(entry: ModelEntry) -> str:
    """One line: name, family, parameters, size in float32 (and too large, if it is)."""
    text = (
        f"{entry.name} — {entry.family}, {_params(entry.params)} parameters, {_size(entry.bytes)}"
    )
    return text + (f" (too large: the limit is {_size(max_bytes())})" if entry.too_large else "")


# Shared by every session, read again after a minute (a model downloaded meanwhile shows
# up); keyed by where it looks and the size limit, so a changed setting is read at once.
@st.cache_resource(ttl=60, show_spinner=False)
def _found(extra: str, hub: str, limit: str) -> list[ModelEntry]:
    return models.find()


def _entries(kind: str) -> list[ModelEntry]:
    """The found models of ``kind``; none, with a warning, if the settings are wrong."""
    env = os.environ.get
    try:
        max_bytes()  # a wrong limit would leave every folder out of the list, unsaid
        found = _found(env("ATTNVIZ_MODELS", ""), str(hub_cache()), env("ATTNVIZ_MODEL_MAX_GB", ""))
    except ValueError as err:  # CheckpointError: ATTNVIZ_MODEL_MAX_GB is not a number
        st.warning(f"Cannot list the models on this machine: {md_text(str(err))}")
        return []
    return [e for e in found if e.kind == kind]


def _link(spec: PageModels, names: list[str]) -> str:
    """The link's ``model``: a found model's name, or "" (the bundled model). Any other
    value is dropped from the link with a warning naming it; it is never read as a path."""
    raw = st.query_params.get_all(spec.key)
    if not raw or raw[-1] in names:
        return raw[-1] if raw else ""
    links.drop_url_value(spec.key)
    st.query_params.pop(spec.key, None)
    st.warning(
        f"The link asked for the model {md_text(raw[-1])}, which is not "
        f"{'an' if spec.kind[0] == 'e' else 'a'} {spec.kind} found on this machine; "
        f"showing {spec.bundled}. The list below has the models found (a link "
        "gives a name from it, never a path).",
        icon=":material/warning:",
    )
    return ""


def _to_link(key: str) -> None:
    """on_change of the picker: its name into the link (none for the bundled model)."""
    name = st.session_state.get(key) or ""
    if name:
        st.query_params[key] = name
    else:
        st.query_params.pop(key, None)


def choose(spec: PageModels) -> ModelEntry | None:
    """The picker: None for the bundled model, else the found model picked (by name).
    The link's ``?model=`` is the picker's value (Streamlit's own binding would put the
    option's whole label in the link, so the page keeps the name there itself)."""
    entries = _entries(spec.kind)
    by_name = {e.name: e for e in entries}
    st.session_state[spec.key] = _link(spec, list(by_name))
    if not entries:
        st.caption(
            f"Other {spec.kind}s: none found on this machine (the Hugging Face cache and "
            "the folders of `ATTNVIZ_MODELS`; see docs/models.md)."
        )
        return None
    name = st.selectbox(
        "Model",
        ["", *by_name],
        format_func=lambda n: _upper(spec.bundled) if n == "" else describe(by_name[n]),
        key=spec.key,
        on_change=_to_link,
        args=(spec.key,),
        help=f"{_upper(spec.bundled)}, or a {spec.kind} found on this machine (the "
        "Hugging Face cache, ATTNVIZ_MODELS). Nothing is downloaded.",
    )
    return by_name.get(name)


def _load(entry: ModelEntry) -> Any | None:
    """The model, loaded once per server process (the catalog caches it per folder; other
    sessions keep working meanwhile); None after saying why it cannot be loaded."""
    if entry.too_large:
        st.warning(
            f"{md_text(entry.name)} is too large to load here: {_size(entry.bytes)} in "
            f"float32, the limit is {_size(max_bytes())} (`ATTNVIZ_MODEL_MAX_GB`).",
            icon=":material/block:",
        )
        return None
    try:
        with st.spinner(f"Loading {entry.name} ({_size(entry.bytes)}; once per server)…"):
            return models.load(entry)
    except (ValueError, OSError, ImportError) as err:  # CheckpointError is a ValueError
        st.error(f"{md_text(entry.name)} cannot be loaded: {md_text(str(err))}")
        return None


@st.cache_resource(max_entries=2, show_spinner="Running the model on the text…")
def _run(path: str, text: str, _model: Any) -> Any:
    """The model's run on ``text`` (shared by every session; a few runs only: a long
    text's attentions are large). ValueError for an empty or too long text."""
    _, ids = _model.tokenize(text)
    if ids.size > MAX_TOKENS:
        raise ValueError(f"{ids.size} tokens: at most {MAX_TOKENS} here. Shorten the text.")
    return _model.run_ids(ids)


def _slider(label: str, key: str, top: int, old_key: str) -> int:
    """A layer or head slider kept in the link, counted from 0 (:func:`attnviz.ui.page.
    index_slider`; ``old_key``: its former key, counted from 1); returns its value."""
    return index_slider(label, key, top, old_key=old_key)


def _heads_spec(spec: PageModels, entry: ModelEntry, model: Any) -> heads.ModelHeads:
    return heads.ModelHeads(
        prefix=spec.prefix,
        name=entry.name,
        causal=spec.kind == "decoder",
        layer_key=f"{spec.prefix}_L",
        head_key=f"{spec.prefix}_H",
        probe=functools.partial(head_probes.any_probe, model),
        text_key=spec.text_key,
    )


def show(spec: PageModels, entry: ModelEntry) -> None:
    """The page's views for a found model: the text box and the model's run on it, every
    head, one head large, a decoder's next token, the Heads section."""
    st.subheader(entry.name, anchor=False)
    model = _load(entry)
    if model is None:
        return
    text = st.text_input(
        spec.text_label, spec.default_text, max_chars=4000, key=spec.text_key, bind="query-params"
    )
    try:
        run = _run(str(entry.path), text, model)
    except ValueError as err:
        st.warning(md_text(str(err)))
        return
    tokens, n = list(run.tokens), len(run.tokens)
    st.caption(
        f"**{n} tokens:** " + " · ".join(md_text(t) for t in tokens[:80]) + (" …" if n > 80 else "")
    )
    weights = run.attentions  # (L, H, N, N)
    n_layers, n_heads = weights.shape[:2]
    hspec = _heads_spec(spec, entry, model)
    c1, c2 = st.columns(2)
    with c1:
        layer = _slider("Layer", hspec.layer_key, n_layers, f"{spec.prefix}_layer")
    with c2:
        head = _slider("Head", hspec.head_key, n_heads, f"{spec.prefix}_head")
    reveal = heads.opened(hspec)
    causal = spec.kind == "decoder"
    left, right = st.columns([1, 1.2])
    with left:
        plot(
            viz.models.heads_grid_figure(
                weights, selected=(layer, head), title=f"All {n_layers * n_heads} heads"
            ),
            key=f"{spec.prefix}_grid_fig",
        )
    with right:
        plot(
            viz.heatmaps.attention_figure(
                weights[layer, head],
                what="weights",
                labels=tokens,
                mask=causal_mask(n) if causal else None,
                title=f"Layer {layer}, head {head}: weights" + (" (causal)" if causal else ""),
                height=440,
            ),
            key=f"{spec.prefix}_head_fig",
            reveal=reveal,
        )
    if causal:
        _next_token(spec, model, run, layer)
    st.info(
        f"For {md_text(entry.name)} the page shows the grid, one head, "
        + ("the next token " if causal else "")
        + f"and the Heads section. The page's other views for {spec.bundled} (q, k, v of "
        "one token, random weights, "
        + ("rotary positions, " if causal else "head types, ")
        + "the shapes table, the room's questions) read that model's own parts, which "
        "attnviz keeps for the bundled model only.",
        icon=":material/info:",
    )
    if causal and hasattr(model, "generate_steps"):
        generate.section(str(entry.path), model, run, layer, head)
    heads.section(hspec, run, layer, head)


def _next_token(spec: PageModels, model: Any, run: Any, layer: int) -> None:
    """A decoder's 10 most likely next tokens and the newest row of every head."""
    z = np.asarray(run.logits, dtype=np.float64)  # (V,)
    p = np.exp(z - z.max())
    p /= p.sum()
    best = np.argsort(-p, kind="stable")[:10]
    top = [(model.tokenizer.text(int(i)), float(p[i])) for i in best]
    plot(viz.models.next_token_figure(top), key=f"{spec.prefix}_next_fig")
    plot(
        viz.models.newest_rows_figure(
            run.attentions[layer, :, -1, :], list(run.tokens), layer=layer
        ),
        key=f"{spec.prefix}_newest_fig",
    )


# --------------------------------------------------------------------------- encoder-decoders

#: The Cross-attention page's picker of the encoder-decoders found (T5, BART, Marian).
ENCDEC = PageModels(
    kind="encoder-decoder",
    prefix="cxm",
    bundled="none (the random weights above)",
    text_key="cxm_src",
    text_label="Source sentence (the encoder reads it)",
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


@st.cache_resource(max_entries=2, show_spinner="Running the encoder-decoder…")
def _cross_run(path: str, source: str, target: str, _model: Any) -> tuple[Any, list, list]:
    """(run, source tokens, target tokens); ValueError for an empty or too long text."""
    src_tokens, src = _model.tokenize(source)
    tgt_tokens, tgt = _target(_model, target)
    if max(src.size, tgt.size) > MAX_TOKENS:
        raise ValueError(f"at most {MAX_TOKENS} tokens a side here. Shorten the text.")
    return _model.run_ids(src, tgt), list(src_tokens), tgt_tokens


def encdec_section() -> None:
    """The Cross-attention page's real encoder-decoder: pick one found on this machine,
    type a source and a target prefix, see its cross-attention per layer and head."""
    st.header("A real encoder-decoder", anchor="real-encoder-decoder")
    entry = choose(ENCDEC)
    if entry is None:
        return
    model = _load(entry)
    if model is None:
        return
    source = st.text_input(
        ENCDEC.text_label, ENCDEC.default_text, max_chars=2000, key="cxm_src",
        bind="query-params",
    )  # fmt: skip
    target = st.text_input(
        "Target prefix (the decoder reads it after its start token; may be empty)", "",
        max_chars=2000, key="cxm_tgt", bind="query-params",
    )  # fmt: skip
    try:
        run, src, tgt = _cross_run(str(entry.path), source, target, model)
    except ValueError as err:
        st.warning(md_text(str(err)))
        return
    w = run.cross_attentions  # (L, H, T, S)
    n_layers, n_heads = w.shape[:2]
    c1, c2 = st.columns(2)
    with c1:
        layer = _slider("Layer", "cxm_L", n_layers, "cxm_layer")
    with c2:
        head = _slider("Head", "cxm_H", n_heads, "cxm_head")
    st.markdown(
        f"**{md_text(entry.name)}** ({entry.family}): the decoder's {len(tgt)} target tokens "
        f"ask, the encoder's {len(src)} source tokens answer. Layer {layer}, head "
        f"{head} of {n_heads} (from 0); each row sums to 1 over the source."
    )
    cross_view.attention_board("cxm_top", w[layer], head, target_labels=tgt, source_labels=src)
    per_screen = max(1, viz.cross.MAX_GRID_PANELS // n_heads)
    shown = list(range(min(n_layers, per_screen)))
    if len(shown) < n_layers:
        st.caption(f"The grid shows the first {len(shown)} of {n_layers} layers.")
    cross_view.grid_board(
        "cxm_grid", w, target_labels=tgt, source_labels=src,
        layers=shown if len(shown) < n_layers else None,
    )  # fmt: skip
