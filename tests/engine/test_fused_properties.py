"""Property tests of attnviz.engine.fused (hypothesis; derandomized "ci" profile when CI is set):
the fused path and the formula as written (``engine.attention``) agree entry by entry
within bounds derived from rounding-error analysis."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attnviz.engine import (
    attention_from_qkv,
    merge_heads,
    multi_head_attention,
    scaled_dot_product_attention,
    to_columns,
)
from tests.engine.test_core_properties import finite, problems

# --------------------------------------------------------------------------- the two paths
#
# fused=False (attention(), the formula as written) and fused=True (fused.attend) compute the
# same numbers in a different order, so they agree to rounding. How far apart they may be,
# per entry, from the standard first-order error bounds (eps = the dtype's machine epsilon,
# twice the unit roundoff; Higham, "Accuracy and Stability of Numerical Algorithms", ch. 3):
#
# - scores: each path rounds q·k (d_k products and sums) and one multiplication by the
#   scale, so each is within (d_k + 2) eps f |q|·|k| of the exact score: the two within
#   twice that.
# - weights: if every score of a row moves by at most c, each softmax weight moves by a
#   factor within e^(±2c); c is the row's score bound above plus the rounding of the shift
#   by the row maximum (eps · |s - max|). Each path's exp, sum over M keys and
#   normalisation add (M + 8) eps relative (NumPy's exp is within a few ulp).
# - outputs: a weighted sum of M values: the weights' error, plus (M + 2) eps of rounding
#   in each path, relative to sum_j w_j |v_j|; then the output projection adds the error
#   of its Dv products.
# - underflow: an operation whose result is subnormal may also be off by half a subnormal
#   ulp (`tiny`) in absolute terms (fl(x op y) = (x op y)(1 + d) + e, |e| <= tiny/2): one
#   tiny per operation for the two paths together, d_k + 2 per score (the fused path
#   scales q before the product, so there it is multiplied by |k|). The fused path divides
#   its unnormalised weights and sums by the row sum, which it keeps >= e^-600 (float64),
#   e^-60 (float32) (fused._EXP_SAFE): there one tiny may grow to FLOOR = tiny e^600
#   (~2e-63) or tiny e^60 (~2e-19), per weight and per operation of an output.
#
# The bounds are first order; the factor SLACK = 2 covers the second-order terms.

SLACK = 2.0


def _within(name: str, a: np.ndarray, b: np.ndarray, bound: np.ndarray) -> None:
    diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    over = diff > SLACK * bound
    assert not over.any(), (
        f"{name}: plain and fused differ by {diff[over].max():.3g} where the bound is "
        f"{SLACK * bound[over][np.argmax(diff[over])]:.3g} ({over.sum()} entries)"
    )


def assert_paths_agree(plain, fused, w_o=None, b_o=None) -> None:
    """The two paths' AttentionResults agree within the bounds above, entry by entry."""
    for name in ("queries", "keys", "values"):  # steps 1-2 are the same code: the same bits
        np.testing.assert_array_equal(getattr(plain, name), getattr(fused, name))
    assert plain.scale == fused.scale
    dtype = plain.weights.dtype
    eps, tiny = np.finfo(dtype).eps, np.finfo(dtype).smallest_subnormal
    q, k, v = (np.abs(a.astype(np.float64)) for a in (plain.queries, plain.keys, plain.values))
    d_k, m = q.shape[-1], k.shape[-2]
    qk = abs(plain.scale) * (q @ np.swapaxes(k, -1, -2))  # (H, N, M), |q|·|k| f
    under = (d_k + 2 + k.sum(axis=-1)[:, None, :]) * tiny  # (H, 1, M)
    _within("scores", plain.scores, fused.scores, 2 * (d_k + 2) * eps * qk + under)
    c = (2 * (d_k + 2) + 2) * eps * qk.max(axis=-1, keepdims=True) + under.max()
    rel_w = np.expm1(2 * c) + 2 * (m + 8) * eps  # (H, N, 1)
    floor = tiny * math.exp(600.0 if dtype == np.float64 else 60.0)  # FLOOR above
    w = np.abs(plain.weights.astype(np.float64))
    _within("weights", plain.weights, fused.weights, rel_w * w + floor)
    bound_o = (rel_w + 2 * (m + 2) * eps) * (w @ v)
    bound_o += floor * (v.sum(axis=-2, keepdims=True) + m + 2)  # underflow
    _within("head_outputs", plain.head_outputs, fused.head_outputs, bound_o)
    bound_c = merge_heads(bound_o)  # (N, Dv)
    _within("concat", plain.concat, fused.concat, bound_c)
    if w_o is not None:
        wo, concat = np.abs(w_o.astype(np.float64)), np.abs(plain.concat.astype(np.float64))
        bo = 0.0 if b_o is None else np.abs(b_o.astype(np.float64))
        rounding = 2 * (wo.shape[0] + 1) * eps * (concat @ wo + bo) + (wo.shape[0] + 1) * tiny
        _within("output", plain.output, fused.output, bound_c @ wo + rounding)
    # the layouts: the column view is the same transposes of both
    cp, cf = to_columns(plain), to_columns(fused)
    _within("columns weights", cp.weights, cf.weights, np.swapaxes(rel_w * w + floor, -1, -2))


def _mask(kind: str, n: int, m: int, data) -> np.ndarray | None:
    """none, causal (key j <= query i), padding (the last keys), random, or random with
    one query row fully masked."""
    if kind == "none":
        return None
    if kind == "causal":
        return np.tri(n, m, dtype=bool)
    if kind == "padding":
        return np.broadcast_to(np.arange(m) < m - data.draw(st.integers(0, m)), (n, m)).copy()
    mask = data.draw(hnp.arrays(np.bool_, (n, m)))
    if kind == "fully-masked-row":
        mask[data.draw(st.integers(0, n - 1))] = False
    return mask


MASK_KINDS = st.sampled_from(["none", "causal", "padding", "random", "fully-masked-row"])
SCALES = st.one_of(st.booleans(), st.floats(-10, 10, allow_nan=False, width=32))


@given(st.data(), MASK_KINDS, SCALES, st.sampled_from([np.float64, np.float32]))
def test_both_paths_agree_from_qkv(data, kind, scale, dtype):
    """attention_from_qkv: multi-head (G = H) and grouped-query (G < H), N != M, every mask
    kind, scales True/False/any factor, float64 (also at magnitudes that send the fused
    path's rows to its shifted softmax) and float32."""
    h = data.draw(st.integers(1, 4))
    g = data.draw(st.sampled_from([d for d in range(1, h + 1) if h % d == 0]))
    d_k, d_v = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 3))
    n, m = data.draw(st.integers(1, 7)), data.draw(st.integers(1, 7))
    mag = data.draw(st.sampled_from([1.0, 100.0])) if dtype == np.float64 else 1.0
    q = data.draw(hnp.arrays(np.float64, (n, h * d_k), elements=finite)) * mag
    k = data.draw(hnp.arrays(np.float64, (m, g * d_k), elements=finite))
    v = data.draw(hnp.arrays(np.float64, (m, g * d_v), elements=finite))
    q, k, v = (a.astype(dtype) for a in (q, k, v))
    w_o = data.draw(st.none() | hnp.arrays(dtype, (g * d_v * (h // g), 3), elements=finite))
    mask = _mask(kind, n, m, data)
    kw = dict(num_heads=h, num_kv_heads=g, scale=scale, mask=mask, w_o=w_o)
    plain = attention_from_qkv(q, k, v, **kw, fused=False)
    fused = attention_from_qkv(q, k, v, **kw, fused=True)
    assert plain.weights.dtype == fused.weights.dtype == dtype
    assert_paths_agree(plain, fused, w_o)
    if mask is not None:  # masked weights exactly 0 on both paths, and so fully masked rows
        assert np.all(plain.weights[:, ~mask] == 0) and np.all(fused.weights[:, ~mask] == 0)


@given(problems(max_n=8), st.data(), MASK_KINDS, SCALES)
def test_both_paths_agree_in_multi_head_attention(problem, data, kind, scale):
    """multi_head_attention with biases on or off, three inits, every mask kind and scale."""
    x, p, h = problem
    n = x.shape[0]
    mask = _mask(kind, n, n, data)
    plain = multi_head_attention(x, p, num_heads=h, scale=scale, mask=mask, fused=False)
    fused = multi_head_attention(x, p, num_heads=h, scale=scale, mask=mask, fused=True)
    assert_paths_agree(plain, fused, p.w_o, p.b_o)


@given(st.data(), st.booleans())
def test_both_paths_agree_in_sdpa_with_leading_axes(data, masked):
    lead = data.draw(st.sampled_from([(), (2,), (2, 3)]))
    n, m, d = (data.draw(st.integers(1, 5)) for _ in range(3))
    q = data.draw(hnp.arrays(np.float64, (*lead, n, d), elements=finite))
    k = data.draw(hnp.arrays(np.float64, (*lead, m, d), elements=finite))
    v = data.draw(hnp.arrays(np.float64, (*lead, m, 2), elements=finite))
    mask = data.draw(hnp.arrays(np.bool_, (n, m))) if masked else None
    w1, o1 = scaled_dot_product_attention(q, k, v, mask=mask, fused=False)
    w2, o2 = scaled_dot_product_attention(q, k, v, mask=mask, fused=True)
    # the same problem through attention_from_qkv is checked entry by entry above; here
    # the broadcasting of the leading axes: each slice equals its own 2-D call
    np.testing.assert_allclose(w1, w2, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(o1, o2, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(o1).max()))
