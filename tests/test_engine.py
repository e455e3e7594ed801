"""Unit tests of attnviz.engine: shapes, scaling, masks, heads, layouts and bad input.

Tables of cases in the einops style: one row per case, one assertion per concept.
"""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pytest

from attnviz import engine, presets
from attnviz.engine import (
    AttentionParams,
    AttentionResult,
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


# --------------------------------------------------------------------------- parameters

PARAM_CASES = [
    # (kwargs, field -> expected shape or None)
    ({}, {"w_q": (5, 5), "b_q": (5,), "w_o": (5, 5), "b_o": (5,)}),
    ({"d_k": 4, "d_v": 6, "d_out": 2}, {"w_k": (5, 4), "w_v": (5, 6), "w_o": (6, 2)}),
    ({"bias": False}, {"b_q": None, "b_k": None, "b_v": None, "b_o": None, "w_o": (5, 5)}),
    ({"out_proj": False}, {"w_o": None, "b_o": None, "b_v": (5,)}),
]


@pytest.mark.parametrize(("kwargs", "shapes"), PARAM_CASES)
def test_random_params_shapes(kwargs, shapes):
    p = AttentionParams.random(5, seed=0, **kwargs)
    for name, shape in shapes.items():
        a = getattr(p, name)
        assert (a is None) if shape is None else (a.shape == shape), name


@pytest.mark.parametrize("init", ["normal", "uniform", "xavier"])
def test_random_params_are_seeded_and_in_range(init):
    a = AttentionParams.random(6, seed=3, init=init)
    b = AttentionParams.random(6, seed=3, init=init)
    c = AttentionParams.random(6, seed=4, init=init)
    np.testing.assert_array_equal(a.w_q, b.w_q)
    assert not np.array_equal(a.w_q, c.w_q)
    if init == "uniform":
        assert a.w_q.min() >= 0 and a.w_q.max() < 1
    if init == "xavier":
        assert np.abs(a.w_q).max() <= math.sqrt(6 / 12)
    assert not a.w_q.flags.writeable


def test_params_astype():
    p = AttentionParams.random(4, seed=0).astype(np.float32)
    assert p.w_q.dtype == np.float32 and p.b_o.dtype == np.float32


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


# --------------------------------------------------------------------------- bad input


def _params(d=8, **kw):
    return AttentionParams.random(d, seed=0, **kw)


def _nan_weights():
    w = np.eye(4)
    w[1, 2] = np.nan
    return AttentionParams(w_q=w, w_k=np.eye(4), w_v=np.eye(4))


def _inf_x():
    x = rng_x(3, 4)
    x[2, 1] = np.inf
    return multi_head_attention(x, _params(4))


def _overflowing_projection():
    p = AttentionParams(np.full((2, 2), 2.0), np.eye(2), np.eye(2))
    with np.errstate(over="ignore"):  # NumPy's own warning; the engine's error is the test
        return multi_head_attention(np.full((2, 2), 1e308), p)


ERROR_CASES = [
    # (id, callable, regex that the message must match)
    ("heads-not-divisor", lambda: multi_head_attention(rng_x(3, 8), _params(), num_heads=3),
     r"num_heads=3 must divide Dk=8 \(w_q 8x8\)"),
    ("heads-zero", lambda: multi_head_attention(rng_x(3, 8), _params(), num_heads=0),
     r"num_heads=0"),
    ("heads-float", lambda: multi_head_attention(rng_x(3, 8), _params(), num_heads=2.0),
     r"num_heads must be an integer >= 1, got 2.0"),
    ("heads-str", lambda: attention_from_qkv(np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 4)),
                                              num_heads="2"),
     r"num_heads must be an integer >= 1, got '2'"),
    ("x-wider", lambda: multi_head_attention(rng_x(3, 9), _params()),
     r"x has D=9 features \(shape 3x9\) but w_q expects D=8 \(w_q shape 8x8\)"),
    ("x-narrower", lambda: multi_head_attention(rng_x(3, 7), _params()),
     r"x has D=7 features \(shape 3x7\) but w_q expects D=8"),
    ("x-1d", lambda: multi_head_attention(np.ones(8), _params()), r"x must be 2-D .* shape 8"),
    ("no-tokens", lambda: multi_head_attention(np.ones((0, 8)), _params()),
     r"N >= 1 tokens and D >= 1 features, got shape 0x8"),
    ("no-features", lambda: multi_head_attention(np.ones((3, 0)), _params()),
     r"got shape 3x0"),
    ("mask-wrong-shape", lambda: multi_head_attention(rng_x(3, 8), _params(), mask=causal_mask(4)),
     r"mask of shape 4x4 does not broadcast to the scores' shape 3x3"),
    ("mask-not-bool", lambda: multi_head_attention(rng_x(3, 8), _params(), mask=np.ones((3, 3))),
     r"mask must be a boolean array .* float64 with shape 3x3"),
    ("mask-3d", lambda: multi_head_attention(rng_x(3, 8), _params(), mask=np.ones((2, 3, 3), bool)),
     r"must be \(N, M\) = \(3, 3\) .* got 2x3x3"),
    ("nan-weights", _nan_weights,
     r"w_q \(shape 4x4\) contains NaN or inf, first at index \(1, 2\)"),
    ("inf-x", _inf_x, r"x \(shape 3x4\) contains NaN or inf, first at index \(2, 1\)"),
    ("overflow", _overflowing_projection,
     r"Q = x @ w_q \+ b_q \(overflow\?\) \(shape 2x2\) contains NaN or inf"),
    ("nan-q", lambda: scaled_dot_product_attention([[np.nan]], [[1.0]], [[1.0]]),
     r"q \(shape 1x1\) contains NaN"),
    ("w_k-shape", lambda: AttentionParams(np.eye(4), np.ones((4, 3)), np.eye(4)),
     r"w_k must have the shape of w_q .* w_q 4x4, w_k 4x3"),
    ("w_v-rows", lambda: AttentionParams(np.eye(4), np.eye(4), np.ones((3, 4))),
     r"w_v must have D=4 rows .* w_v 3x4"),
    ("bias-shape", lambda: AttentionParams(np.eye(4), np.eye(4), np.eye(4), b_q=np.ones(3)),
     r"b_q must have shape \(4,\) to match w_q 4x4; got 3"),
    ("w_o-shape", lambda: AttentionParams(np.eye(4), np.eye(4), np.eye(4), w_o=np.ones((3, 2))),
     r"w_o must have shape \(Dv, Dout\) with Dv=4 .* got 3x2"),
    ("params-type", lambda: multi_head_attention(rng_x(3, 4), {"w_q": 1}),
     r"params must be AttentionParams, got dict"),
    ("string-x", lambda: multi_head_attention(np.array([["a"]]), _params(1)), r"x must be numeric"),
    ("d_model-zero", lambda: AttentionParams.random(0), r"d_model must be >= 1, got 0"),
    ("bad-init", lambda: AttentionParams.random(4, init="he"), r"init must be .* got 'he'"),
    ("qk-width",
     lambda: scaled_dot_product_attention(np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 1))),
     r"must share d_k; got q 2x3, k 2x4"),
    ("kv-count",
     lambda: scaled_dot_product_attention(np.ones((2, 3)), np.ones((2, 3)), np.ones((5, 1))),
     r"same number of keys M; got k 2x3, v 5x1"),
    ("sdpa-1d", lambda: scaled_dot_product_attention(np.ones(3), np.ones(3), np.ones(3)),
     r"at least 2 axes"),
    ("sdpa-mask", lambda: scaled_dot_product_attention(
        np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 1)), mask=np.ones((4, 2), bool)),
     r"mask of shape 4x2 does not broadcast to the scores' shape 2x4"),
    ("split-heads", lambda: split_heads(np.ones((2, 6)), 4),
     r"cannot split width 6 \(array of shape 2x6\) into 4 heads"),
    ("scale-string", lambda: resolve_scale("big", 4), r"scale must be True, False or a number"),
    ("scale-inf", lambda: resolve_scale(float("inf"), 4), r"scale must be finite"),
    ("causal-zero", lambda: causal_mask(0), r"causal_mask needs n >= 1, got n=0"),
    ("padding-too-many", lambda: padding_mask(3, 4), r"0 <= n_pad <= n, got n_pad=4, n=3"),
    ("window-zero", lambda: sliding_window_mask(5, 0),
     r"sliding_window_mask needs 1 <= window <= n, got window=0, n=5"),
    ("window-too-wide", lambda: sliding_window_mask(5, 6), r"got window=6, n=5"),
    ("window-n-zero", lambda: sliding_window_mask(0, 1), r"sliding_window_mask needs n >= 1"),
    ("prefix-negative", lambda: prefix_mask(5, -1),
     r"prefix_mask needs 0 <= prefix <= n, got prefix=-1, n=5"),
    ("prefix-too-long", lambda: prefix_mask(6, 99), r"got prefix=99, n=6"),
    ("perm-bad", lambda: permute_tokens(np.ones((3, 2)), [0, 0, 1]),
     r"perm must be a permutation of 0..2 for x of shape 3x2"),
    ("qkv-heads", lambda: attention_from_qkv(np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 3)),
                                              num_heads=2),
     r"2 heads do not divide .* Dk=4 and the value width Dv=3"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("make", "match"), [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES]
)
def test_bad_input_raises_value_error_naming_shapes(make, match):
    with pytest.raises(ValueError, match=match):
        make()


# --------------------------------------------------------------------------- the switch


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


def test_the_default_is_the_plain_path():
    assert engine.FUSED is False


#: (engine.FUSED, the fused argument, the path that runs)
SWITCH_CASES = [
    (False, None, "plain"),
    (False, False, "plain"),
    (False, True, "fused"),
    (True, None, "fused"),
    (True, False, "plain"),
    (True, True, "fused"),
    (np.bool_(True), np.bool_(False), "plain"),
]

ENTRY_POINTS = {
    "multi_head_attention": lambda fused: multi_head_attention(
        rng_x(5, 4), AttentionParams.random(4, seed=0), num_heads=2, fused=fused
    ),
    "attention_from_qkv": lambda fused: attention_from_qkv(
        rng_x(5, 4), rng_x(5, 4, 1), rng_x(5, 2, 2), num_heads=2, fused=fused
    ),
    "scaled_dot_product_attention": lambda fused: scaled_dot_product_attention(
        rng_x(5, 4), rng_x(5, 4, 1), rng_x(5, 2, 2), fused=fused
    ),
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize(("default", "fused", "runs"), SWITCH_CASES)
def test_one_switch_picks_the_path(monkeypatch, entry, default, fused, runs):
    """``fused`` picks the path; None follows engine.FUSED; nothing else does."""
    ran = []
    plain_fn, fused_fn = engine.attention, engine._attend
    monkeypatch.setattr(
        engine, "attention", lambda *a, **kw: ran.append("plain") or plain_fn(*a, **kw)
    )
    monkeypatch.setattr(engine, "_attend", lambda *a: ran.append("fused") or fused_fn(*a))
    monkeypatch.setattr(engine, "FUSED", default)
    ENTRY_POINTS[entry](fused)
    assert ran == [runs]


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("bad", [1, 0, "yes", "False"])
def test_fused_must_be_true_false_or_none(entry, bad):
    with pytest.raises(ValueError, match=r"fused must be True, False or None .* got"):
        ENTRY_POINTS[entry](bad)


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("name", presets.names())
def test_both_paths_reproduce_the_seed_notebooks(monkeypatch, fused, name):
    """Every printed value of the five seed notebooks, through each path (presets run the
    engine with its default, which this test sets)."""
    monkeypatch.setattr(engine, "FUSED", fused)
    checks = presets.get(name).check()
    assert checks
    failed = [
        f"{c.label}: {c.max_abs_error:.3g} > {c.tolerance:.3g}" for c in checks if not c.passed
    ]
    assert not failed, failed


@pytest.mark.parametrize("fused", [False, True])
def test_scores_are_a_field_that_survives_pickle_and_replace(fused):
    p = AttentionParams.random(6, seed=3)
    x = rng_x(4, 6, 4)
    r = multi_head_attention(x, p, num_heads=2, scale=0.7, fused=fused)
    assert isinstance(r, AttentionResult)
    assert "scores" in {f.name for f in dataclasses.fields(r)}
    q, k = r.queries, r.keys
    np.testing.assert_allclose(r.scores, q @ np.swapaxes(k, -1, -2) * 0.7, rtol=1e-13, atol=1e-14)
    assert r.scores is r.scores  # computed (fused) or stored (plain) once
    clone = pickle.loads(
        pickle.dumps(multi_head_attention(x, p, num_heads=2, scale=0.7, fused=fused))
    )
    np.testing.assert_array_equal(clone.scores, r.scores)
    replaced = dataclasses.replace(r, scores=np.zeros((2, 4, 4)))
    assert np.all(replaced.scores == 0) and replaced.weights is r.weights
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.scores = np.zeros((2, 4, 4))


def test_fused_scores_are_computed_on_first_read():
    """The fused path keeps the recipe (q f and kᵀ, 2 H N d_k numbers), not the H N N scores,
    until they are read: a pickled fused result (st.cache_data) is smaller by the difference."""
    x, p = rng_x(64, 8), AttentionParams.random(8, seed=1)
    plain = multi_head_attention(x, p, num_heads=2, fused=False)
    fused = multi_head_attention(x, p, num_heads=2, fused=True)
    saved = plain.scores.nbytes - 2 * plain.queries.nbytes  # 2x64x64 - 2 (2x64x4), float64
    assert len(pickle.dumps(plain)) - len(pickle.dumps(fused)) > 0.95 * saved
    fused.scores  # noqa: B018  # read: now the fused result holds the array too
    assert len(pickle.dumps(fused)) > len(pickle.dumps(plain))


@pytest.mark.parametrize("fused", [False, True])
def test_weights_are_the_softmax_of_the_scores(fused):
    p = AttentionParams.random(8, seed=5)
    r = multi_head_attention(rng_x(7, 8, 6), p, num_heads=4, mask=causal_mask(7), fused=fused)
    np.testing.assert_allclose(r.weights, softmax(r.masked_scores), rtol=1e-12, atol=1e-15)


# --------------------------------------------------------------------------- huge scores


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("magnitude", [1.0, 50.0, 1e3, 1e5])
def test_huge_scores_agree_with_softmax(dtype, magnitude, fused):
    """Scores far beyond exp's range (fused: rows recomputed with the max shift) match
    softmax of the masked scores on both paths."""
    rng = np.random.default_rng(11)
    q = (rng.standard_normal((2, 5, 4)) * magnitude).astype(dtype)
    k = (rng.standard_normal((2, 6, 4)) * magnitude).astype(dtype)
    v = rng.standard_normal((2, 6, 3)).astype(dtype)
    mask = rng.random((5, 6)) < 0.6
    mask[3] = False  # one fully masked row
    w, out = scaled_dot_product_attention(q, k, v, mask=mask, fused=fused)
    assert w.dtype == dtype and np.isfinite(w).all() and np.isfinite(out).all()
    s = (q.astype(np.float64) @ np.swapaxes(k, -1, -2).astype(np.float64)) / 2
    ref = softmax(np.where(mask, s, -np.inf))
    tol = 1e-12 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(w, ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(out, ref @ v.astype(np.float64), rtol=tol * 10, atol=tol * 10)
    assert np.all(w[:, 3] == 0) and np.all(out[:, 3] == 0)


@pytest.mark.parametrize("fused", [False, True])
def test_mixed_rows_each_take_their_own_path(fused):
    # fused: row 0 has huge scores (shifted path), row 1 small ones (unshifted): both exact
    q = np.array([[1000.0, 0.0], [0.01, 0.02]])
    k = np.array([[1.0, 0.0], [0.5, 1.0], [-1.0, 2.0]])
    v = np.eye(3)
    w, out = scaled_dot_product_attention(q, k, v, scale=False, fused=fused)
    ref = softmax(q @ k.T)
    np.testing.assert_allclose(w, ref, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(out, ref, rtol=1e-14, atol=1e-300)


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_huge_values_do_not_overflow_the_weighted_sums(dtype, fused):
    big = np.finfo(dtype).max / 4
    rng = np.random.default_rng(12)
    q, k = rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal((5, 4)).astype(dtype)
    v = np.full((5, 2), big, dtype)
    v[:, 1] = -big
    w, out = scaled_dot_product_attention(q, k, v, fused=fused)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out[:, 0] / big, 1.0, rtol=1e-5)
    np.testing.assert_allclose(out[:, 1] / big, -1.0, rtol=1e-5)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-5)
