"""attnviz.viz.cross: target tokens as rows, source tokens as columns, each axis with its own
labels; the (L, H, T, S) grid of a model's layers."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import engine, viz

SRC = ["the", "black", "cat", "sat"]
TGT = ["le", "chat", "noir", "s", "'", "est", "assis"]


def _result(pad: int = 0):
    rng = np.random.default_rng(0)
    mask = engine.key_padding_mask(7, 4, pad) if pad else None
    params = engine.AttentionParams.random(8, seed=1)
    x_t, x_s = rng.standard_normal((7, 8)), rng.standard_normal((4, 8))
    return engine.cross_attention(x_t, x_s, params, num_heads=2, mask=mask), mask


def test_weights_rows_are_the_target_columns_the_source():
    r, _ = _result()
    fig = viz.cross.cross_attention_figure(
        r.weights[1], what="weights", target_labels=TGT, source_labels=SRC, head=1
    )
    z = np.asarray(fig.data[0].z)
    assert z.shape == (7, 4)
    np.testing.assert_allclose(z, r.weights[1], rtol=1e-6)
    assert list(fig.layout.yaxis.ticktext) == TGT and list(fig.layout.xaxis.ticktext) == SRC
    meta = fig.layout.meta
    assert meta["role"] == "weights" and meta["cells"] == "square"
    assert meta["axes"]["yaxis"]["noun"] == "query" and meta["axes"]["xaxis"]["noun"] == "key"
    assert "target" in fig.layout.yaxis.title.text and "source" in fig.layout.xaxis.title.text
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0.0, 1.0)


def test_masked_source_tokens_are_grey_gaps_in_the_scores():
    r, mask = _result(pad=1)
    fig = viz.cross.cross_attention_figure(
        r.masked_scores[0], what="scores", target_labels=TGT, source_labels=SRC, mask=mask,
        scale=r.scale, d_k=4,
    )  # fmt: skip
    z = np.asarray(fig.data[0].z, dtype=float)
    assert np.isnan(z[:, 3]).all() and np.isfinite(z[:, :3]).all()
    assert fig.data[0].zmid == 0 and "√d" in fig.data[0].hovertemplate


def test_labels_of_the_wrong_length_are_refused():
    with pytest.raises(ValueError, match="3 source labels for a matrix of shape"):
        viz.cross.cross_attention_figure(np.ones((2, 4)), what="weights", source_labels="abc")


def test_token_figure_says_its_side():
    fig = viz.cross.cross_token_figure(np.ones((4, 2)), name="K", side="source", labels=SRC)
    assert "from the source" in fig.layout.title.text
    assert list(fig.layout.yaxis.ticktext) == SRC


def test_layer_by_head_grid():
    w = np.random.default_rng(0).dirichlet(np.ones(4), size=(3, 2, 7))  # (L, H, T, S)
    fig = viz.cross.cross_grid_figure(w, target_labels=TGT, source_labels=SRC)
    assert len(fig.data) == 6 and fig.layout.meta["grid"] == {
        "rows": 3, "cols": 2, "count": 6, "n": 7, "m": 4, "layout": "rows",
    }  # fmt: skip
    titles = [a.text for a in fig.layout.annotations]
    assert titles[:3] == ["layer 0, head 0", "layer 0, head 1", "layer 1, head 0"]
    np.testing.assert_allclose(np.asarray(fig.data[3].z), w[1, 1], rtol=1e-6)
    assert list(fig.layout.xaxis.ticktext) == SRC and list(fig.layout.yaxis.ticktext) == TGT
    one = viz.cross.cross_grid_figure(w, layers=[2])
    assert len(one.data) == 2
    with pytest.raises(ValueError, match="more than 48"):
        viz.cross.cross_grid_figure(np.ones((12, 8, 2, 2)))
