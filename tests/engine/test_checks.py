"""Unit tests of attnviz.engine.checks, through the engine's public functions: bad input
raises ``ValueError`` whose message names what was expected and the shapes that came.
One row per case (id, call, regex the message must match)."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.engine import (
    AttentionParams,
    attention_from_qkv,
    causal_mask,
    multi_head_attention,
    padding_mask,
    permute_tokens,
    prefix_mask,
    resolve_scale,
    scaled_dot_product_attention,
    sliding_window_mask,
    split_heads,
)


def rng_x(n: int, d: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, d))


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
