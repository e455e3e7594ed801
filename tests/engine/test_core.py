"""Unit tests of attnviz.engine: shapes, scaling, masks, heads, layouts and bad input.

Tables of cases in the einops style: one row per case, one assertion per concept.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnviz.engine import (
    AttentionParams,
    apply_mask,
    attention,
    attention_from_qkv,
    attention_scores,
    causal_mask,
    loop_attention,
    merge_heads,
    multi_head_attention,
    padding_mask,
    permute_tokens,
    prefix_mask,
    resolve_scale,
    row_entropy,
    scaled_dot_product_attention,
    sliding_window_mask,
    softmax,
    split_heads,
    to_columns,
)


def rng_x(n: int, d: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, d))


# --------------------------------------------------------------------------- shapes

#: (N, D, H, d_k, d_v, d_out, out_proj)
SHAPE_CASES = [
    (1, 1, 1, 1, 1, 1, True),
    (3, 4, 1, 4, 4, 4, True),
    (6, 8, 2, 8, 8, 8, True),
    (5, 6, 3, 12, 6, 2, True),
    (4, 8, 4, 8, 16, 16, False),
    (7, 3, 1, 5, 2, 9, True),
]


@pytest.mark.parametrize(("n", "d", "h", "dk", "dv", "dout", "out_proj"), SHAPE_CASES)
def test_result_shapes(n, d, h, dk, dv, dout, out_proj):
    p = AttentionParams.random(d, d_k=dk, d_v=dv, d_out=dout, seed=1, out_proj=out_proj)
    r = multi_head_attention(rng_x(n, d), p, num_heads=h)
    assert r.queries.shape == (h, n, dk // h)
    assert r.keys.shape == (h, n, dk // h)
    assert r.values.shape == (h, n, dv // h)
    assert r.scores.shape == (h, n, n)
    assert r.weights.shape == (h, n, n)
    assert r.head_outputs.shape == (h, n, dv // h)
    assert r.concat.shape == (n, dv)
    assert r.output.shape == (n, dout if out_proj else dv)
    assert r.mask is None
    assert (r.num_heads, r.n_tokens) == (h, n)


@pytest.mark.parametrize(("n", "d", "h", "dk", "dv", "dout", "out_proj"), SHAPE_CASES)
def test_column_view_is_the_transpose(n, d, h, dk, dv, dout, out_proj):
    p = AttentionParams.random(d, d_k=dk, d_v=dv, d_out=dout, seed=2, out_proj=out_proj)
    x = rng_x(n, d, 3)
    r = multi_head_attention(x, p, num_heads=h)
    c = to_columns(r)
    np.testing.assert_array_equal(c.x, x.T)
    for name in ("queries", "keys", "values", "scores", "weights", "head_outputs"):
        np.testing.assert_array_equal(getattr(c, name), np.swapaxes(getattr(r, name), -1, -2))
    np.testing.assert_array_equal(c.concat, r.concat.T)
    np.testing.assert_array_equal(c.output, r.output.T)
    # each column (one query) of the column-layout weights sums to 1, as softmax_cols
    np.testing.assert_allclose(c.weights.sum(axis=-2), 1.0, atol=1e-12)


# --------------------------------------------------------------------------- scale

#: (scale argument, d_k per head, factor used)
SCALE_CASES = [
    (True, 4, 0.5),
    (True, 8, 1 / math.sqrt(8)),
    (False, 8, 1.0),
    (0.25, 8, 0.25),
    (2, 3, 2.0),
    (np.bool_(True), 16, 0.25),
]


@pytest.mark.parametrize(("scale", "d_k", "factor"), SCALE_CASES)
def test_resolve_scale(scale, d_k, factor):
    assert resolve_scale(scale, d_k) == pytest.approx(factor, rel=1e-15)


@pytest.mark.parametrize(
    ("scale", "heads", "factor"), [(True, 2, 0.5), (False, 2, 1.0), (0.1, 4, 0.1)]
)
def test_multi_head_scale_uses_per_head_width(scale, heads, factor):
    p = AttentionParams.random(8, seed=0)
    r = multi_head_attention(rng_x(5, 8), p, num_heads=heads, scale=scale)
    assert r.scale == pytest.approx(factor)
    expected = r.queries @ np.swapaxes(r.keys, -1, -2) * factor
    np.testing.assert_allclose(r.scores, expected, rtol=1e-13, atol=1e-13)


def test_attention_scores_formula():
    q, k = rng_x(3, 4, 1), rng_x(5, 4, 2)
    np.testing.assert_allclose(attention_scores(q, k, True), q @ k.T / 2, rtol=1e-14)
    np.testing.assert_allclose(attention_scores(q, k, False), q @ k.T, rtol=1e-14)


# --------------------------------------------------------------------------- masks

CAUSAL_CASES = [
    (1, [[True]]),
    (2, [[True, False], [True, True]]),
    (3, [[True, False, False], [True, True, False], [True, True, True]]),
]


@pytest.mark.parametrize(("n", "expected"), CAUSAL_CASES)
def test_causal_mask(n, expected):
    m = causal_mask(n)
    assert m.dtype == np.bool_
    np.testing.assert_array_equal(m, np.array(expected))


PADDING_CASES = [
    (3, 0, [[True] * 3] * 3),
    (3, 1, [[True, True, False]] * 3),
    (2, 2, [[False, False]] * 2),
]


@pytest.mark.parametrize(("n", "n_pad", "expected"), PADDING_CASES)
def test_padding_mask(n, n_pad, expected):
    np.testing.assert_array_equal(padding_mask(n, n_pad), np.array(expected))


def _loop_mask(n: int, may_attend) -> np.ndarray:
    """A mask written as its definition, one (query i, key j) pair at a time."""
    return np.array([[may_attend(i, j) for j in range(n)] for i in range(n)], dtype=bool)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_sliding_window_mask_is_its_definition(n):
    for window in range(1, n + 1):
        expected = _loop_mask(n, lambda i, j, w=window: i - w < j <= i)
        m = sliding_window_mask(n, window)
        assert m.dtype == np.bool_ and m.shape == (n, n)
        np.testing.assert_array_equal(m, expected)
        assert (m.sum(axis=1) == np.minimum(np.arange(n) + 1, window)).all()  # keys per row
    np.testing.assert_array_equal(sliding_window_mask(n, n), causal_mask(n))
    np.testing.assert_array_equal(sliding_window_mask(n, 1), np.eye(n, dtype=bool))


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_prefix_mask_is_its_definition(n):
    for prefix in range(n + 1):
        expected = _loop_mask(n, lambda i, j, p=prefix: j < p or j <= i)
        m = prefix_mask(n, prefix)
        assert m.dtype == np.bool_ and m.shape == (n, n)
        np.testing.assert_array_equal(m, expected)
    np.testing.assert_array_equal(prefix_mask(n, 0), causal_mask(n))
    assert prefix_mask(n, n).all()


def test_masked_weights_are_exactly_zero_and_rows_sum_to_one():
    p = AttentionParams.random(6, seed=4)
    r = multi_head_attention(rng_x(5, 6), p, num_heads=3, mask=causal_mask(5))
    assert np.all(r.weights[:, ~causal_mask(5)] == 0.0)
    np.testing.assert_allclose(r.weights.sum(-1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(r.mask, causal_mask(5))
    assert np.all(np.isneginf(r.masked_scores[:, ~causal_mask(5)]))


def test_fully_masked_rows_give_zero_weights_and_zero_head_outputs():
    p = AttentionParams.random(4, seed=5, bias=True)
    mask = padding_mask(3, 3)
    r = multi_head_attention(rng_x(3, 4), p, num_heads=2, mask=mask)
    assert np.all(r.weights == 0.0)
    assert np.all(r.head_outputs == 0.0)
    np.testing.assert_allclose(r.output, np.broadcast_to(p.b_o, r.output.shape))
    assert np.isfinite(r.output).all()


def test_apply_mask_without_mask_returns_the_scores():
    s = rng_x(2, 2)
    assert apply_mask(s, None) is s


# --------------------------------------------------------------------------- heads


def test_split_heads_takes_contiguous_column_blocks():
    x = np.arange(12.0).reshape(2, 6)
    h = split_heads(x, 3)
    assert h.shape == (3, 2, 2)
    np.testing.assert_array_equal(h[0], [[0, 1], [6, 7]])
    np.testing.assert_array_equal(h[1], [[2, 3], [8, 9]])
    np.testing.assert_array_equal(h[2], [[4, 5], [10, 11]])
    np.testing.assert_array_equal(merge_heads(h), x)


def test_each_head_is_single_head_attention_on_its_block():
    p = AttentionParams.random(8, seed=6, out_proj=False)
    x = rng_x(4, 8, 7)
    r = multi_head_attention(x, p, num_heads=2)
    for h in range(2):
        cols = slice(4 * h, 4 * (h + 1))
        sub = AttentionParams(
            w_q=p.w_q[:, cols], w_k=p.w_k[:, cols], w_v=p.w_v[:, cols],
            b_q=p.b_q[cols], b_k=p.b_k[cols], b_v=p.b_v[cols],
        )  # fmt: skip
        single = multi_head_attention(x, sub, num_heads=1)
        np.testing.assert_allclose(r.weights[h], single.weights[0], rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(r.output[:, cols], single.output, rtol=1e-13, atol=1e-14)


def test_single_head_keeps_the_head_axis():
    r = multi_head_attention(rng_x(3, 4), AttentionParams.random(4), num_heads=1)
    assert r.weights.shape == (1, 3, 3)
    assert r.queries.shape == (1, 3, 4)


def test_sdpa_broadcasts_leading_axes():
    rng = np.random.default_rng(8)
    q = rng.standard_normal((2, 3, 4, 5))
    k = rng.standard_normal((1, 3, 6, 5))
    v = rng.standard_normal((2, 1, 6, 7))
    w, out = scaled_dot_product_attention(q, k, v, mask=np.ones((4, 6), bool))
    assert w.shape == (2, 3, 4, 6)
    assert out.shape == (2, 3, 4, 7)
    w00, out00 = scaled_dot_product_attention(q[1, 2], k[0, 2], v[1, 0])
    np.testing.assert_allclose(w[1, 2], w00, rtol=1e-14)
    np.testing.assert_allclose(out[1, 2], out00, rtol=1e-13)


def test_attention_from_qkv_equals_multi_head_attention():
    p = AttentionParams.random(6, seed=9)
    x = rng_x(4, 6, 10)
    r = multi_head_attention(x, p, num_heads=3, mask=causal_mask(4))
    q, k, v = x @ p.w_q + p.b_q, x @ p.w_k + p.b_k, x @ p.w_v + p.b_v
    r2 = attention_from_qkv(q, k, v, num_heads=3, mask=causal_mask(4), w_o=p.w_o, b_o=p.b_o)
    np.testing.assert_allclose(r2.output, r.output, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r2.weights, r.weights, rtol=1e-12, atol=1e-15)


def test_loop_form_equals_matrix_form_with_mask():
    q, k, v = rng_x(4, 3, 11), rng_x(4, 3, 12), rng_x(4, 2, 13)
    w1, o1 = loop_attention(q, k, v, scale=True, mask=causal_mask(4))
    w2, o2 = scaled_dot_product_attention(q, k, v, scale=True, mask=causal_mask(4))
    np.testing.assert_allclose(w1, w2, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(o1, o2, rtol=1e-12, atol=1e-14)


# --------------------------------------------------------------------------- dtype

DTYPE_CASES = [np.float32, np.float64]


@pytest.mark.parametrize("dtype", DTYPE_CASES)
@pytest.mark.parametrize("scale", [True, False, 0.3])
def test_dtype_is_preserved(dtype, scale):
    p = AttentionParams.random(8, seed=0).astype(dtype)
    x = rng_x(5, 8).astype(dtype)
    r = multi_head_attention(x, p, num_heads=2, scale=scale, mask=causal_mask(5))
    for name in ("queries", "keys", "values", "scores", "weights", "head_outputs", "concat"):
        assert getattr(r, name).dtype == dtype, name
    assert r.output.dtype == dtype
    w, out = scaled_dot_product_attention(r.queries, r.keys, r.values, scale=scale)
    assert w.dtype == dtype and out.dtype == dtype


def test_float32_agrees_with_float64():
    p = AttentionParams.random(8, seed=0, init="xavier")
    x = rng_x(6, 8)
    r64 = multi_head_attention(x, p, num_heads=2)
    r32 = multi_head_attention(x.astype(np.float32), p.astype(np.float32), num_heads=2)
    np.testing.assert_allclose(r32.output, r64.output, rtol=1e-4, atol=1e-5)


def test_integer_input_becomes_float64():
    p = AttentionParams.random(2, seed=0)
    r = multi_head_attention(np.array([[1, 0], [0, 1]]), p)
    assert r.output.dtype == np.float64


# --------------------------------------------------------------------------- helpers


def test_row_entropy():
    w = np.array([[0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]])
    np.testing.assert_allclose(row_entropy(w), [2.0, 0.0, 1.0], atol=1e-15)
    np.testing.assert_allclose(row_entropy(w, base=math.e), [math.log(4), 0.0, math.log(2)])


def test_permute_tokens():
    x = np.arange(6).reshape(3, 2)
    np.testing.assert_array_equal(permute_tokens(x, [2, 0, 1]), [[4, 5], [0, 1], [2, 3]])


def test_softmax_of_scores_is_the_weights():
    p = AttentionParams.random(4, seed=0)
    r = multi_head_attention(rng_x(3, 4), p, num_heads=2)
    np.testing.assert_allclose(r.weights, softmax(r.scores), rtol=1e-15)


# --------------------------------------------------------------------------- the formula


def test_attention_is_the_formula():
    """attention() on one head: softmax(Q Kᵀ · scale, masked) V, written out by hand."""
    rng = np.random.default_rng(20)
    q, k, v = rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    mask = rng.random((4, 5)) < 0.7
    s, w, out = attention(q, k, v, scale=0.5, mask=mask)
    expected_s = np.array([[q[i] @ k[j] * 0.5 for j in range(5)] for i in range(4)])
    e = np.where(mask, np.exp(expected_s), 0.0)
    sums = e.sum(axis=1, keepdims=True)
    expected_w = np.divide(e, sums, out=np.zeros_like(e), where=sums > 0)
    np.testing.assert_allclose(s, expected_s, rtol=1e-14)
    np.testing.assert_allclose(w, expected_w, rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(out, expected_w @ v, rtol=1e-13, atol=1e-15)
