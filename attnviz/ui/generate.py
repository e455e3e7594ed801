"""Generation step by step, on the decoder page for a decoder found on the disk (issue 34):
up to :data:`MAX_NEW` new tokens, greedy or sampled (temperature, top-k, top-p, seed, all
kept in the link), and a step slider: at each step the new token's attention over every
token before it, per layer and head, the KV cache's size and the 5 most likely next
tokens (``model.generate_steps``: :mod:`attnviz.models.causal`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from attnviz import viz
from attnviz.ui.page import plot
from attnviz.ui.text import md_text

__all__ = ["MAX_NEW", "section"]

MAX_NEW = 32
P = "dec_gen"  # widget-key prefix; each key is also the link's parameter


@st.cache_resource(max_entries=4, show_spinner="Generating…")
def _steps(path: str, ids: tuple[int, ...], n: int, sampling: tuple, _model: Any) -> list:
    """Every step of one generation (each small: the newest row (L, H, n) and the logits);
    shared by every session."""
    temperature, top_k, top_p, seed = sampling
    return list(
        _model.generate_steps(
            np.asarray(ids, dtype=np.int64), n,
            temperature=temperature, top_k=top_k or None,
            top_p=None if top_p >= 1 else top_p, seed=seed,
        )
    )  # fmt: skip


def _controls() -> tuple[int, tuple]:
    """The number of new tokens and (temperature, top_k, top_p, seed), bound to the link."""
    c = st.columns(5)
    n = c[0].number_input("New tokens", 1, MAX_NEW, 8, key=f"{P}_n", bind="query-params")
    temperature = c[1].number_input(
        "Temperature", 0.0, 5.0, 0.0, step=0.1, key=f"{P}_temp", bind="query-params",
        help="0: greedy (the most likely token every time); above 0: sampled from "
        "softmax(logits / temperature).",
    )  # fmt: skip
    top_k = c[2].number_input(
        "Top-k", 0, 1000, 0, key=f"{P}_topk", bind="query-params",
        help="Sample among the k most likely tokens only (0: all). Not used when greedy.",
    )  # fmt: skip
    top_p = c[3].number_input(
        "Top-p", 0.01, 1.0, 1.0, step=0.05, key=f"{P}_topp", bind="query-params",
        help="Sample among the most likely tokens whose probabilities reach p (1: all).",
    )  # fmt: skip
    seed = c[4].number_input("Seed", 0, 2**31 - 1, 0, key=f"{P}_seed", bind="query-params")
    return int(n), (float(temperature), int(top_k), float(top_p), int(seed))


def section(path: str, model: Any, run: Any, layer: int, head: int) -> None:
    """Generation step by step from the page's prompt (``run``: its run, ``tokens`` and
    ``ids``); ``layer``, ``head``: the page's head view, 0-based."""
    st.header("Generation step by step", anchor="generation")
    n, sampling = _controls()
    try:
        steps = _steps(path, tuple(int(i) for i in run.ids), n, sampling, model)
    except ValueError as err:  # no room left in the model's positions, bad settings
        st.warning(md_text(str(err)))
        return
    new = [model.tokenizer.text(s.token) for s in steps]
    st.markdown(
        f"**{'Greedy' if sampling[0] == 0 else 'Sampled'}:** "
        + md_text("".join(run.tokens))
        + " **→** "
        + " · ".join(md_text(t) for t in new)
        + (" (stopped at an end-of-text token)" if len(steps) < n else "")
    )
    if len(steps) > 1:
        k = st.slider("Step", 1, len(steps), len(steps), key=f"{P}_step", bind="query-params")
    else:
        k = 1
    step = steps[k - 1]
    labels = list(run.tokens) + new[: k - 1]  # the tokens the new query sees (n of them)
    query = labels[-1]
    st.markdown(
        f"**Step {k}:** the query is {md_text(query)} (position {len(labels) - 1}); it "
        f"chose {md_text(new[k - 1])}. The KV cache holds **{step.cache_tokens}** tokens' "
        f"keys and values in every layer: {step.cache_bytes / 1e6:.2f} MB."
    )
    rows = step.attentions  # (L, H, n)
    left, right = st.columns([1.3, 1])
    with left:
        plot(
            viz.models.newest_rows_figure(rows[layer], labels, layer=layer),
            key=f"{P}_rows_fig",
        )
        plot(_layers_figure(rows[:, head], labels, head), key=f"{P}_layers_fig")
    with right:
        top = step.top(5)
        plot(
            viz.models.next_token_figure([(model.tokenizer.text(i), p) for i, p in top]),
            key=f"{P}_next_fig",
        )


def _layers_figure(rows: np.ndarray, labels: list[str], head: int):
    """The new token's row (L, n) in one head of every layer."""
    return viz.heatmaps.matrix_figure(
        rows,
        title=f"Head {head}: the new token's row in every layer",
        x_title="key (earlier tokens, from the cache)",
        y_title="layer",
        hover="layer %{y}, key %{x}: weight %{z:.3f}",
        kind="weights",
        x_labels=labels,
        y_labels=[f"L{i}" for i in range(rows.shape[0])],
        height=max(220, 26 * rows.shape[0] + 120),
        zmax=1.0,
        colorbar_title="weight",
    )
