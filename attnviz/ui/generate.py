"""Generation step by step (issue 34), for a decoder found on the disk (the decoder page)
and for an encoder-decoder (the Cross-attention page's "A real encoder-decoder"): up to
:data:`MAX_NEW` new tokens, greedy or sampled (temperature, top-k, top-p, seed, all kept
in the link), and a step slider: at each step the new token's attention over every target
token before it (and, for an encoder-decoder, over the source), per layer and head, the
KV cache's size and the 5 most likely next tokens (``model.generate_steps``:
:mod:`attnviz.models.causal`, :mod:`attnviz.models.encdec`)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from attnviz import viz
from attnviz.i18n import N_, _, fmt
from attnviz.ui.page import plot
from attnviz.ui.text import md_text, md_token
from attnviz.viz.style import AxisTitle

__all__ = ["MAX_NEW", "GenStep", "section", "steps_of"]

MAX_NEW = 32
P = "dec_gen"  # the decoder page's widget-key prefix; each key is also the link's parameter


@dataclass(frozen=True, eq=False)
class GenStep:
    """One step, whichever kind of model: the new token's row of weights over the n target
    tokens so far, ``self_rows`` (L, H, n), and over the S source tokens, ``cross_rows``
    (L, H, S; None for a decoder); the ``token`` chosen; the ``top`` 5 (id, probability);
    the self-attention cache's ``cache_tokens`` and ``cache_bytes``; ``cross_bytes``: the
    source's keys and values (0 for a decoder)."""

    self_rows: np.ndarray
    cross_rows: np.ndarray | None
    token: int
    top: list[tuple[int, float]]
    cache_tokens: int
    cache_bytes: int
    cross_bytes: int = 0


def _as_step(s: Any) -> GenStep:
    """A decoder's :class:`~attnviz.models.causal.Step` or an encoder-decoder's
    :class:`~attnviz.models.encdec.DecodeStep` as a :class:`GenStep`."""
    if hasattr(s, "next_id"):  # an encoder-decoder's
        ids, probs = s.top(5)
        top = [(int(i), float(p)) for i, p in zip(ids, probs, strict=True)]
        return GenStep(s.self_attentions, s.cross_attentions, int(s.next_id), top,
                       int(s.cache_length), int(s.cache_bytes), int(s.cross_bytes))  # fmt: skip
    return GenStep(s.attentions, None, int(s.token), s.top(5), s.cache_tokens, s.cache_bytes)


def steps_of(model: Any, ids: np.ndarray, n: int, sampling: tuple) -> list[GenStep]:
    """Every step of one generation from ``ids`` (a decoder's prompt, an encoder-decoder's
    source); ``sampling`` = (temperature, top_k (0: all), top_p (1: all), seed)."""
    temperature, top_k, top_p, seed = sampling
    return [
        _as_step(s)
        for s in model.generate_steps(
            np.asarray(ids, dtype=np.int64), n,
            temperature=temperature, top_k=top_k or None,
            top_p=None if top_p >= 1 else top_p, seed=seed,
        )
    ]  # fmt: skip


# (its spinner is said where it is called: a decorator's text is read at import)
@st.cache_resource(max_entries=4, show_spinner=False)
def _steps(path: str, ids: tuple[int, ...], n: int, sampling: tuple, _model: Any) -> list:
    """Every step of one generation (each small: the newest rows and the logits' top 5);
    shared by every session."""
    return steps_of(_model, np.asarray(ids, dtype=np.int64), n, sampling)


def token_text(model: Any, i: int) -> str:
    """Token ``i`` as text: a decoder's :class:`TextTokenizer` reads it as it prints; an
    encoder-decoder's ``tokenizers.Tokenizer`` gives the piece ("▁cat")."""
    tok = model.tokenizer
    if hasattr(tok, "text"):
        return str(tok.text(int(i)))
    return str(tok.id_to_token(int(i)) or i)


def _controls(prefix: str) -> tuple[int, tuple]:
    """The number of new tokens and (temperature, top_k, top_p, seed), bound to the link."""
    c = st.columns(5)
    n = c[0].number_input(_("New tokens"), 1, MAX_NEW, 8, key=f"{prefix}_n", bind="query-params")
    temperature = c[1].number_input(
        _("Temperature"), 0.0, 5.0, 0.0, step=0.1, key=f"{prefix}_temp", bind="query-params",
        help=_("0: greedy (the most likely token every time); above 0: sampled from "
               "softmax(logits / temperature)."),
    )  # fmt: skip
    top_k = c[2].number_input(
        _("Top-k"), 0, 1000, 0, key=f"{prefix}_topk", bind="query-params",
        help=_("Sample among the k most likely tokens only (0: all). Not used when greedy."),
    )  # fmt: skip
    top_p = c[3].number_input(
        _("Top-p"), 0.01, 1.0, 1.0, step=0.05, key=f"{prefix}_topp", bind="query-params",
        help=_("Sample among the most likely tokens whose probabilities reach p (1: all)."),
    )  # fmt: skip
    seed = c[4].number_input(_("Seed"), 0, 2**31 - 1, 0, key=f"{prefix}_seed", bind="query-params")
    return int(n), (float(temperature), int(top_k), float(top_p), int(seed))


def section(
    path: str,
    model: Any,
    ids: np.ndarray,
    start: list[str],
    layer: int,
    head: int,
    *,
    prefix: str = P,
    source: list[str] | None = None,
    slide: tuple | None = None,
) -> None:
    """Generation step by step. A decoder: from its prompt ``ids``, whose tokens ``start``
    are the first the new ones see. An encoder-decoder: from the ``source``'s ``ids``
    (its tokens ``source``); ``start`` is the decoder's start token. ``layer``, ``head``:
    the page's head view, 0-based; ``prefix``: the widgets' keys (and link parameters).
    ``slide`` (a decoder's, in the presenter view): two columns, the words and controls
    drawn in the first, the new token's rows in the second (the screen's height below the
    step bar)."""
    if slide:
        words, chart = slide
        with words:
            got = _step(path, model, ids, start, source, prefix, settings_box=True)
            if got is None:
                return
            step, labels = got
            st.markdown(
                _("**The 5 most likely next tokens:** {tokens}").format(
                    tokens=" · ".join(
                        f"{md_text(token_text(model, i))} ({fmt(p, '.0%')})" for i, p in step.top
                    )
                )
            )
        with chart:
            plot(
                viz.models.newest_rows_figure(step.self_rows[layer], labels, layer=layer),
                key=f"{prefix}_rows_fig",
            )
        return
    st.header(_("Generation step by step"), anchor=f"{prefix}-generation")
    got = _step(path, model, ids, start, source, prefix)
    if got is None:
        return
    step, labels = got
    left, right = st.columns([1.3, 1])
    with left:
        plot(
            viz.models.newest_rows_figure(step.self_rows[layer], labels, layer=layer),
            key=f"{prefix}_rows_fig",
        )
        if step.cross_rows is not None and source is not None:
            plot(_cross_figure(step.cross_rows[layer], source, layer), key=f"{prefix}_cross_fig")
        plot(_layers_figure(step.self_rows[:, head], labels, head), key=f"{prefix}_layers_fig")
        if step.cross_rows is not None and source is not None:
            plot(
                _layers_figure(step.cross_rows[:, head], source, head, cross=True),
                key=f"{prefix}_cross_layers_fig",
            )
    with right:
        plot(
            viz.models.next_token_figure([(token_text(model, i), p) for i, p in step.top]),
            key=f"{prefix}_next_fig",
        )


def _step(path, model, ids, start, source, prefix, *, settings_box: bool = False):
    """The controls (in a "Settings" box on a slide), the run and the words of the step
    shown: (the step, the tokens its query sees), or None after a warning."""
    with st.expander(_("Settings")) if settings_box else contextlib.nullcontext():
        n, sampling = _controls(prefix)
    got = _run_steps(path, model, ids, n, sampling)
    if got is None:
        return None
    steps, new = got
    step, labels, __ = _step_words(steps, new, start, n, sampling, source, prefix)
    return step, labels


def _run_steps(path: str, model: Any, ids: np.ndarray, n: int, sampling: tuple):
    """(steps, their new tokens as text), or None after a warning (no room left in the
    model's positions, bad settings, no token generated)."""
    try:
        with st.spinner(_("Generating…")):
            steps = _steps(path, tuple(int(i) for i in ids), n, sampling, model)
    except ValueError as err:  # no room left in the model's positions, bad settings
        st.warning(md_text(str(err)))
        return None
    if not steps:
        st.warning(_("The model generated no token."))
        return None
    return steps, [token_text(model, s.token) for s in steps]


def _step_words(steps, new, start, n, sampling, source, prefix):
    """The generated text, the step slider and what the step's query did: (the step, the
    tokens its query sees, its number from 1)."""
    given = start if source is None else source  # the prompt's or the source's tokens
    st.markdown(
        (_("**Greedy:** ") if sampling[0] == 0 else _("**Sampled:** "))
        + " · ".join(md_token(t) for t in given)
        + " **→** "
        + " · ".join(md_token(t) for t in new)
        + (_(" (stopped at an end-of-text token)") if len(steps) < n else "")
    )
    if len(steps) > 1:
        k = st.slider(
            _("Step"), 1, len(steps), len(steps), key=f"{prefix}_step", bind="query-params"
        )
    else:
        k = 1
    step = steps[k - 1]
    labels = list(start) + new[: k - 1]  # the target tokens the new query sees (n of them)
    st.markdown(
        _(
            "**Step {k}:** the query is {query} (position {position}); it chose {token}. {cache}."
        ).format(
            k=k,
            query=md_token(labels[-1]),
            position=len(labels) - 1,
            token=md_token(new[k - 1]),
            cache=_cache(step, source),
        )
    )
    return step, labels, k


def _cache(step: GenStep, source: list[str] | None) -> str:
    """What the KV cache holds at ``step`` (and, for an encoder-decoder, the source's)."""
    cache = _("The KV cache holds **{n}** tokens' keys and values in every layer: {size}").format(
        n=step.cache_tokens, size=_size(step.cache_bytes)
    )
    if source is not None:
        cache += _(
            " (self-attention; the source's {s} cross-attention keys and values, {size}, were "
            "computed once, before the first step)"
        ).format(s=len(source), size=_size(step.cross_bytes))
    return cache


def _size(n_bytes: int) -> str:
    if n_bytes >= 100_000:
        return _("{n} MB").format(n=fmt(n_bytes / 1e6, ".2f"))
    return _("{n} kB").format(n=fmt(n_bytes / 1e3, ".1f"))


def _cross_figure(rows: np.ndarray, source: list[str], layer: int):
    """The new token's cross-attention row (H, S) over the source, each head of a layer."""
    return viz.heatmaps.matrix_figure(
        rows,
        title=_("Layer {layer}: the new token's cross-attention row in each head").format(
            layer=layer
        ),
        # translated titles keep the English noun the board reads (layout.meta)
        x_title=AxisTitle(_("key (the source's tokens: the encoder's output)"), N_("key")),
        y_title=AxisTitle(_("head"), N_("head")),
        hover=_("head %{y}, source token %{x}: weight %{z:.3f}"),
        kind="weights",
        x_labels=list(source),
        y_labels=[f"H{h}" for h in range(rows.shape[0])],
        height=max(220, 26 * rows.shape[0] + 120),
        zmax=1.0,
        colorbar_title=_("weight"),
    )


def _layers_figure(rows: np.ndarray, labels: list[str], head: int, *, cross: bool = False):
    """The new token's row (L, n) in one head of every layer (``cross``: over the source)."""
    title = (
        _("Head {head}: the new token's cross-attention row in every layer")
        if cross
        else _("Head {head}: the new token's row in every layer")
    )
    return viz.heatmaps.matrix_figure(
        rows,
        title=title.format(head=head),
        x_title=AxisTitle(
            _("key (the source's tokens)") if cross else _("key (earlier tokens, from the cache)"),
            N_("key"),
        ),
        y_title=AxisTitle(_("layer"), N_("layer")),
        hover=_("layer %{y}, key %{x}: weight %{z:.3f}"),
        kind="weights",
        x_labels=labels,
        y_labels=[f"L{i}" for i in range(rows.shape[0])],
        height=max(220, 26 * rows.shape[0] + 120),
        zmax=1.0,
        colorbar_title=_("weight"),
    )
