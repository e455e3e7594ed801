"""Every figure builder of attnviz, called with realistic inputs (engine results, the models'
shapes, a live class's tally): the figures the board's plotly.js must be able to draw.

``catalogue()`` gives ``{"module.builder[/variant]": go.Figure}``; ``BUILDER_MODULES`` are
the modules whose public functions returning a ``go.Figure`` must all be in it
(``tests/ui/test_board_assets.py`` checks that, so a new builder cannot be forgotten).
"""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import plotly.graph_objects as go

from attnviz import engine, toys, viz
from attnviz.models.head_patterns import PATTERNS
from attnviz.teaching import experiments

BUILDER_MODULES = tuple(f"attnviz.viz.{m}" for m in viz.__all__)


def builders() -> set[str]:
    """``module.function`` of every public function of BUILDER_MODULES that returns a
    plotly figure."""
    out = set()
    for name in BUILDER_MODULES:
        mod = importlib.import_module(name)
        for fname, f in inspect.getmembers(mod, inspect.isfunction):
            ret = str(inspect.signature(f).return_annotation)
            if f.__module__ == name and not fname.startswith("_") and "Figure" in ret:
                out.add(f"{name.removeprefix('attnviz.')}.{fname}")
    return out


def _run(n: int, d: int, heads: int, mask=None, seed: int = 0):
    x = np.random.default_rng(seed).standard_normal((n, d))
    params = engine.AttentionParams.random(d, seed=seed + 1)
    return engine.multi_head_attention(x, params, num_heads=heads, mask=mask), x


def _tally(*pairs: tuple[int, int]) -> dict:
    return {
        i: {"answered": r + w, "right": r, "wrong": w, "wrong_answers": []}
        for i, (r, w) in enumerate(pairs)
    }


def _page_figures(r, x, labels, causal) -> dict[str, go.Figure]:
    """The playground's, step by step's, multi-head's and masking's builders."""
    s, w = r.scores[0], r.weights[0]
    return {
        "viz.heatmaps.attention_figure/scores": viz.heatmaps.attention_figure(
            s, what="scores", labels=labels, mask=causal, scale=0.5, d_k=4
        ),
        "viz.heatmaps.attention_figure/weights-columns": viz.heatmaps.attention_figure(
            w, what="weights", labels=labels, layout="columns"
        ),
        "viz.heatmaps.matrix_figure": viz.heatmaps.matrix_figure(
            x, title="X", x_title="feature", y_title="token", hover="x", y_labels=labels
        ),
        "viz.heatmaps.token_matrix_figure": viz.heatmaps.token_matrix_figure(
            r.head_outputs[0], name="Y", labels=labels, feature_groups=2
        ),
        "viz.heatmaps.mask_figure": viz.heatmaps.mask_figure(causal, labels=labels),
        "viz.attention.query_weights_figure": viz.attention.query_weights_figure(
            w[2], query=2, labels=labels, mask_row=causal[2]
        ),
        "viz.attention.weighted_sum_figure": viz.attention.weighted_sum_figure(
            r.head_outputs[0], w[2], query=2, labels=labels
        ),
        "viz.attention.small_multiples_figure": viz.attention.small_multiples_figure(
            r.weights, labels=labels, mask=causal
        ),
        "viz.attention.entropy_figure": viz.attention.entropy_figure(
            -(r.weights * np.log2(r.weights)).sum(-1).mean(-1), max_entropy=np.log2(6)
        ),
        "viz.attention.argmax_figure": viz.attention.argmax_figure(
            r.weights, labels=labels, mask=causal
        ),
        "viz.charts.bars_figure": viz.charts.bars_figure(
            {"A": w[0], "B": w[1]}, x_labels=labels, title="t", x_title="key", y_title="w"
        ),
        "viz.charts.line_figure": viz.charts.line_figure(
            [1, 2, 4, 8], {"a": [1, 2, 3, 4]}, title="t", x_title="d", y_title="v", log_x=True
        ),
        "viz.style.style_text": viz.style.style_text(go.Figure(go.Heatmap(z=w))),
    }


def catalogue() -> dict[str, go.Figure]:
    """One or more figures per builder (see the module's docstring)."""
    r, x = _run(6, 8, 2)
    labels = ["the", "cat", "sat", "on", "the", "mat"]
    causal = engine.causal_mask(6)
    big, _ = _run(200, 8, 2, mask=engine.causal_mask(200))  # pooled 2x2 blocks
    rb, _ = _run(6, 8, 2, seed=3)
    curve = experiments.dot_product_variance([1, 2, 4, 8, 16, 64], trials=200, seed=0)
    rng = np.random.default_rng(0)
    weights_fig = viz.heatmaps.attention_figure(r.weights[0], what="weights", labels=labels)
    logits = rng.standard_normal(5)
    factors = [0.5, 1.0, 8.0]
    wts = np.stack([np.exp(f * logits) / np.exp(f * logits).sum() for f in factors])
    out = {
        **_page_figures(r, x, labels, causal),
        "viz.heatmaps.attention_figure/pooled": viz.heatmaps.attention_figure(
            big.weights[1], what="weights", mask=engine.causal_mask(200)
        ),
        # the weights' per-matrix colour range (?wrange=matrix), applied to a weights heatmap
        "viz.style.weight_range": viz.style.weight_range(
            viz.heatmaps.attention_figure(r.weights[1], what="weights", labels=labels), "matrix"
        ),
        "viz.charts.variance_figure": viz.charts.variance_figure(
            curve.dims, curve.before, curve.after
        ),
        "viz.charts.softmax_factor_figure": viz.charts.softmax_factor_figure(logits, factors, wts),
        "viz.compare.weights_figure": viz.compare.weights_figure(
            rb.weights[0], which="B", what="weights", labels=labels
        ),
        "viz.compare.difference_figure": viz.compare.difference_figure(
            r.weights[0], rb.weights[0], what="weights", labels=labels
        ),
        "viz.compare.entropy_change_figure": viz.compare.entropy_change_figure(
            r.weights[0], rb.weights[0], labels=labels
        ),
        "viz.classroom.tally_figure": viz.classroom.tally_figure(
            _tally((12, 3), (0, 0), (7, 9)), ["1. a", "2. b", "3. c"], students=30
        ),
        "viz.classroom.choice_tally_figure": viz.classroom.choice_tally_figure(
            ["key 0", "key 1", "key 2"], [5, 2, 1], answer=0
        ),
        "viz.classroom.outline_cell": viz.classroom.outline_cell(weights_fig, 2, 1),
        "viz.classroom.outline_cells": viz.classroom.outline_cells(
            weights_fig, [(2, 1), (3, 0)], n=6
        ),
        "viz.classroom.outline_row": viz.classroom.outline_row(
            weights_fig, 2, (-0.5, 5.5), "rows", 6
        ),
        "viz.heads.scores_figure": viz.heads.scores_figure(
            {k: rng.random((30, 9)) for k in PATTERNS}, selected=(2, 1)
        ),
        "viz.heads.probe_weights_figure": viz.heads.probe_weights_figure(
            np.tril(np.ones((22, 22))) / np.arange(1, 23)[:, None],
            [f"t{i}" for i in range(22)],
            length=10,
            start=1,
            title="Layer 1, head 1",
        ),
        "viz.models.heads_grid_figure": viz.models.heads_grid_figure(
            rng.dirichlet(np.ones(9), size=(6, 12, 9)), selected=(2, 7)
        ),
        "viz.models.summary_figure": viz.models.summary_figure(
            rng.random((6, 12)), title="previous-token score", selected=(1, 3)
        ),
        "viz.models.all_heads_figure": viz.models.all_heads_figure(
            rng.dirichlet(np.ones(7), size=(30, 9, 7)) * np.tril(np.ones((7, 7))),
            selected=(3, 4),
        ),
        "viz.models.newest_rows_figure": viz.models.newest_rows_figure(
            rng.dirichlet(np.ones(7), size=9), [f"t{i}" for i in range(7)], layer=3
        ),
        "viz.models.next_token_figure": viz.models.next_token_figure(
            [(" Paris", 0.61), (" the", 0.12), (" a", 0.05)]
        ),
        "viz.models.rope_distance_figure": viz.models.rope_distance_figure(
            np.arange(1, 17), rng.standard_normal(16), np.full(16, 0.3), title="q·k by distance"
        ),
        **_learned_figures(),
        **_cross_figures(),
    }
    return out


def _cross_figures() -> dict[str, go.Figure]:
    """Cross-attention's builders: 7 target tokens over 4 source tokens, the source's last
    token padding; a model's (L, H, T, S) grid."""
    src, tgt = ["the", "black", "cat", "sat"], ["le", "chat", "noir", "s", "'", "est", "assis"]
    rng = np.random.default_rng(0)
    params = engine.AttentionParams.random(8, seed=1)
    pad = engine.key_padding_mask(7, 4, 1)
    r = engine.cross_attention(
        rng.standard_normal((7, 8)), rng.standard_normal((4, 8)), params, num_heads=2, mask=pad
    )
    kw = {"target_labels": tgt, "source_labels": src}
    return {
        "viz.cross.cross_attention_figure/scores": viz.cross.cross_attention_figure(
            r.masked_scores[0], what="scores", mask=pad, scale=r.scale, d_k=4, head=0, **kw
        ),
        "viz.cross.cross_attention_figure/weights": viz.cross.cross_attention_figure(
            r.weights[1], what="weights", mask=pad, **kw
        ),
        "viz.cross.cross_token_figure": viz.cross.cross_token_figure(
            r.keys[0], name="K (head 0)", side="source", labels=src
        ),
        "viz.cross.cross_grid_figure": viz.cross.cross_grid_figure(
            rng.dirichlet(np.ones(4), size=(3, 2, 7)).astype(np.float32), **kw
        ),
    }


def _learned_figures() -> dict[str, go.Figure]:
    """The Learned attention page's builders on the shipped induction run."""
    task = toys.get_task("induction")
    history = toys.load(task)
    step = int(history.steps[len(history.steps) // 2])
    params = history.checkpoints[len(history.steps) // 2]
    result = toys.example_result(task, params)
    jobs = toys.job_scores(task, history)
    return {
        "viz.learned.loss_figure": viz.learned.loss_figure(
            history.losses, step, phase=toys.phase_change(history.losses)
        ),
        "viz.learned.heads_figure": viz.learned.heads_figure(
            result.weights, toys.example(task).labels, step=step, heads_per_layer=task.heads
        ),
        "viz.learned.job_figure": viz.learned.job_figure(
            jobs.steps, jobs.scores, jobs.labels, step
        ),
    }
