"""attnviz.viz.attention: one query's bars, the heads' entropy and argmax, read back from the
figures and recomputed with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import engine, viz
from attnviz.viz.style import MASK_BG


def test_query_bars_hold_the_row_and_grey_out_masked_keys():
    row = np.array([0.25, 0.75, 0.0])
    fig = viz.attention.query_weights_figure(
        row, query=1, labels=["a", "b", "c"], mask_row=[1, 1, 0]
    )
    bars = fig.data[0]
    np.testing.assert_allclose(np.asarray(bars.y, float), row)
    assert list(bars.marker.color)[2] == MASK_BG and list(bars.marker.color)[0] != MASK_BG


def test_entropy_bars_are_the_mean_per_head_with_the_uniform_maximum():
    rng = np.random.default_rng(1)
    w = engine.softmax(rng.standard_normal((3, 5, 5)), axis=-1)  # (H, N, N)
    e = engine.row_entropy(w)  # (H, N)
    fig = viz.attention.entropy_figure(e, max_entropy=np.log2(5))
    np.testing.assert_allclose(np.asarray(fig.data[0].y, float), e.mean(axis=1), rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(fig.data[0].error_y.array, float), e.std(axis=1), rtol=1e-6
    )
    assert fig.layout.shapes[0].y0 == pytest.approx(np.log2(5))
    with pytest.raises(ValueError, match=r"\(H,\) or \(H, N\)"):
        viz.attention.entropy_figure(np.zeros((2, 2, 2)))


def test_argmax_cells_name_the_top_key_and_leave_fully_masked_rows_empty():
    w = np.array([[[0.2, 0.8], [0.6, 0.4]], [[0.0, 0.0], [0.1, 0.9]]])  # (H=2, N=2, M=2)
    fig = viz.attention.argmax_figure(w, labels=["a", "b"])
    t = fig.data[0]
    np.testing.assert_array_equal(np.asarray(t.customdata), w.argmax(axis=2))
    assert [list(r) for r in t.text] == [["b", "a"], ["", "b"]]
    z = np.asarray(t.z, float)
    assert np.isnan(z[1, 0]) and z[0, 0] == pytest.approx(0.8)
    with pytest.raises(ValueError, match=r"\(H, N, M\)"):
        viz.attention.argmax_figure(w[0])


def test_cross_attention_keeps_each_axis_its_own_labels():
    """Queries of a target (2 tokens) over keys of a source (3 tokens)."""
    tgt, src = ["le", "chat"], ["the", "black", "cat"]
    bars = viz.attention.query_weights_figure(
        [0.2, 0.3, 0.5], query=1, labels=src, query_label=tgt[1]
    )
    assert "chat" in bars.layout.title.text and list(bars.layout.xaxis.ticktext) == src
    w = np.full((2, 2, 3), 1 / 3)
    grid = viz.attention.small_multiples_figure(w, labels=tgt, key_labels=src)
    assert list(grid.layout.xaxis.ticktext) == src and list(grid.layout.yaxis.ticktext) == tgt
    cols = viz.attention.small_multiples_figure(w, labels=tgt, key_labels=src, layout="columns")
    assert list(cols.layout.xaxis.ticktext) == tgt and list(cols.layout.yaxis.ticktext) == src
