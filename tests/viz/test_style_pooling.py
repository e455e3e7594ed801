"""Large N: N×N heatmaps above viz.style.MAX_FULL_HEATMAP_N tokens are drawn as block means
(unmasked cells only; fully masked blocks drawn as masked) and the pages say so."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from attnviz import engine, viz
from tests.test_app import assert_clean, figures_of, run_app, view_of, z_of


def _manual_block_means(z, mask_out, b):
    n_r, n_c = z.shape
    out = np.full((-(-n_r // b), -(-n_c // b)), np.nan)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            blk = z[i * b : (i + 1) * b, j * b : (j + 1) * b]
            ok = ~mask_out[i * b : (i + 1) * b, j * b : (j + 1) * b]
            if ok.any():
                out[i, j] = blk[ok].mean()
    return out


@pytest.mark.parametrize("n", [129, 200, 512])
def test_weights_heatmap_block_means_equal_the_manual_computation(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 8))
    p = engine.AttentionParams.random(8, seed=2)
    r = engine.multi_head_attention(x, p, num_heads=2, mask=engine.causal_mask(n))
    b = viz.style.pool_factor(n)
    assert b == -(-n // viz.style.MAX_FULL_HEATMAP_N) > 1
    fig = viz.heatmaps.attention_figure(r.weights[1], what="weights", mask=r.mask)
    z = np.asarray(fig.data[0].z, dtype=np.float64)
    want = _manual_block_means(r.weights[1], ~r.mask, b)
    assert z.shape == want.shape == (-(-n // b),) * 2
    np.testing.assert_allclose(z, want, rtol=1e-5, atol=1e-7, equal_nan=True)
    # causal: blocks strictly above the diagonal are entirely masked -> NaN (grey)
    iu = np.triu_indices(z.shape[0], 1)
    assert np.isnan(z[iu]).all() and np.isfinite(np.diag(z)).all()
    hm = fig.data[0]
    assert (hm.x0, hm.dx, hm.y0, hm.dy) == (0, b, 0, b)  # axes stay in token units
    assert f"{b}×{b} blocks" in fig.layout.title.text and "grey = masked" in fig.layout.title.text
    assert "block" in hm.hovertemplate
    assert len([t for t in fig.data if t.name == "masked"]) == 0  # no × markers


def test_pool_blocks_ignores_masked_and_nan_cells_and_handles_ragged_edges():
    z = np.arange(15, dtype=float).reshape(3, 5)
    masked = np.zeros((3, 5), bool)
    masked[0, 0] = True
    z[1, 1] = np.nan
    means, empty = viz.style.pool_blocks(z, 2, 2, masked=masked)
    assert means.shape == (2, 3)
    assert means[0, 0] == pytest.approx((1 + 5) / 2)  # [0,0] masked, [1,1] NaN
    assert means[0, 2] == pytest.approx((4 + 9) / 2)  # ragged last column block
    assert means[1, 2] == pytest.approx(14)
    assert not empty.any()
    all_masked = np.ones((3, 5), bool)
    means, empty = viz.style.pool_blocks(z, 2, 2, masked=all_masked)
    assert empty.all() and np.isnan(means).all()


def test_small_n_is_drawn_cell_by_cell_and_token_matrices_pool_only_tokens():
    n = viz.style.MAX_FULL_HEATMAP_N
    w = np.full((n, n), 1.0 / n)
    assert np.asarray(viz.heatmaps.attention_figure(w, what="weights").data[0].z).shape == (n, n)
    q = np.random.default_rng(0).standard_normal((512, 16))
    fig = viz.heatmaps.token_matrix_figure(q, name="Q")
    z = np.asarray(fig.data[0].z, dtype=np.float64)
    assert z.shape == (128, 16)
    np.testing.assert_allclose(z, q.reshape(128, 4, 16).mean(axis=1), rtol=1e-5, atol=1e-6)
    figc = viz.heatmaps.token_matrix_figure(q, name="Q", layout="columns")
    assert np.asarray(figc.data[0].z).shape == (16, 128)


@pytest.mark.slow
def test_playground_at_n512_draws_pooled_heatmaps_and_says_so():
    at = run_app({"N": "512", "D": "16", "heads": "4", "mask": "causal"})
    assert_clean(at)
    f = figures_of(at)
    for key in ("pg_scores", "pg_weights"):
        assert z_of(f[key]).shape == (128, 128), key
        assert "4×4 blocks" in f[key]["layout"]["title"]["text"]
    assert z_of(f["pg_out"]).shape == (128, 4)
    notes = [i.value for i in at.info]
    assert any("N=512 is drawn as 128×128 blocks of 4×4 tokens" in v for v in notes), notes
    assert any("pick a query token to see its full row" in v.lower() for v in notes)
    # the per-query bars stay exact: one bar per key
    bars = f["pg_qbars"]["data"][0]["y"]
    if isinstance(bars, dict):  # base64 typed array
        bars = np.frombuffer(base64.b64decode(bars["bdata"]), dtype=bars["dtype"])
    assert len(bars) == 512
    w = view_of(at).result.weights
    pooled = z_of(f["pg_weights"]).astype(np.float64)
    want = _manual_block_means(w[0], ~view_of(at).result.mask, 4)
    np.testing.assert_allclose(pooled, want, rtol=1e-5, atol=1e-7, equal_nan=True)


def test_playground_at_small_n_has_no_block_note():
    at = run_app({"N": "100"})
    assert_clean(at)
    assert z_of(figures_of(at)["pg_weights"]).shape == (100, 100)
    assert not any("blocks of" in i.value for i in at.info)


def test_real_model_page_pools_a_long_sentence_and_says_so():
    pytest.importorskip("torch")
    from tests.models.test_minilm import _Page

    try:
        page = _Page()
        at = page.run()
    except Exception as e:  # pragma: no cover - the model package is missing
        pytest.skip(f"real model page unavailable: {e}")
    if at.exception or not at.get("text_input"):
        pytest.skip("real model page unavailable here")
    at.text_input("rm_text").set_value(" ".join(["word"] * 200)).run()
    assert not at.exception
    specs = figures_of(at)
    z = z_of(specs["rm_head_fig"])
    assert z.shape == (101, 101)  # 202 tokens ([CLS] + 200 + [SEP]) in blocks of 2
    assert any("N=202 is drawn as 101×101 blocks of 2×2 tokens" in i.value for i in at.info)
    assert not any("exports" in i.value for i in at.info)
