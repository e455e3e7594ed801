"""Property tests of the engine (hypothesis; derandomized "ci" profile when CI is set)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attnviz.engine import (
    AttentionParams,
    causal_mask,
    loop_attention,
    merge_heads,
    multi_head_attention,
    scaled_dot_product_attention,
    softmax,
    split_heads,
    to_columns,
)

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def problems(draw, max_n: int = 6):
    """(x (N, D), params, num_heads) with D divisible by the number of heads."""
    heads = draw(st.integers(1, 3))
    d = heads * draw(st.integers(1, 3))
    n = draw(st.integers(1, max_n))
    x = draw(hnp.arrays(np.float64, (n, d), elements=finite))
    seed = draw(st.integers(0, 2**16))
    init = draw(st.sampled_from(["normal", "uniform", "xavier"]))
    bias = draw(st.booleans())
    params = AttentionParams.random(d, seed=seed, init=init, bias=bias)
    return x, params, heads


@st.composite
def score_rows(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6))
    return draw(hnp.arrays(np.float64, shape, elements=st.floats(-1e4, 1e4)))


@given(score_rows(), st.floats(-1e3, 1e3))
def test_softmax_rows_sum_to_one_and_shift_invariance(z, shift):
    s = softmax(z)
    assert np.all(s >= 0)
    np.testing.assert_allclose(s.sum(axis=-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(softmax(z + shift), s, rtol=1e-9, atol=1e-12)


@given(score_rows())
def test_softmax_of_large_inputs_is_finite(z):
    s = softmax(z * 1e4)
    assert np.isfinite(s).all()


@given(problems(), st.booleans())
def test_weights_rows_sum_to_one(problem, masked):
    x, p, h = problem
    mask = causal_mask(x.shape[0]) if masked else None
    r = multi_head_attention(x, p, num_heads=h, mask=mask)
    assert np.isfinite(r.output).all()
    np.testing.assert_allclose(r.weights.sum(axis=-1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("fused", [False, True])
@given(problems(), st.data())
def test_masked_weights_are_exactly_zero(fused, problem, data):
    x, p, h = problem
    n = x.shape[0]
    mask = data.draw(hnp.arrays(np.bool_, (n, n)))
    r = multi_head_attention(x, p, num_heads=h, mask=mask, fused=fused)
    assert np.all(r.weights[:, ~mask] == 0.0)
    rows = mask.any(axis=1)
    np.testing.assert_allclose(r.weights[:, rows].sum(axis=-1), 1.0, rtol=1e-12)
    assert np.all(r.weights[:, ~rows] == 0.0)


@pytest.mark.parametrize("fused", [False, True])
@given(problems(), st.data())
def test_causal_outputs_do_not_depend_on_future_tokens(fused, problem, data):
    x, p, h = problem
    n = x.shape[0]
    t = data.draw(st.integers(0, n - 1))
    future = data.draw(hnp.arrays(np.float64, (n - t - 1, x.shape[1]), elements=finite))
    x2 = x.copy()
    x2[t + 1 :] = future
    a = multi_head_attention(x, p, num_heads=h, mask=causal_mask(n), fused=fused)
    b = multi_head_attention(x2, p, num_heads=h, mask=causal_mask(n), fused=fused)
    np.testing.assert_array_equal(a.output[: t + 1], b.output[: t + 1])
    np.testing.assert_array_equal(a.weights[:, : t + 1], b.weights[:, : t + 1])


@given(problems(), st.randoms(use_true_random=False))
def test_permutation_equivariance_without_mask(problem, rnd):
    x, p, h = problem
    perm = list(range(x.shape[0]))
    rnd.shuffle(perm)
    a = multi_head_attention(x, p, num_heads=h)
    b = multi_head_attention(x[perm], p, num_heads=h)
    scale = max(1.0, float(np.abs(a.output).max()))
    np.testing.assert_allclose(b.output, a.output[perm], rtol=1e-9, atol=1e-9 * scale)
    np.testing.assert_allclose(b.weights, a.weights[:, perm][:, :, perm], rtol=1e-9, atol=1e-12)


@given(
    st.integers(1, 4).flatmap(
        lambda h: st.tuples(
            st.just(h),
            hnp.arrays(
                np.float64,
                st.tuples(st.integers(1, 5), st.integers(1, 4).map(lambda k: k * h)),
                elements=finite,
            ),
        )
    )
)
def test_split_merge_heads_round_trip_exactly(case):
    h, x = case
    parts = split_heads(x, h)
    assert parts.shape == (h, x.shape[0], x.shape[1] // h)
    np.testing.assert_array_equal(merge_heads(parts), x)
    np.testing.assert_array_equal(split_heads(merge_heads(parts), h), parts)


@given(st.data(), st.booleans(), st.sampled_from([True, False, 0.5]))
def test_loop_form_equals_matrix_form(data, masked, scale):
    n = data.draw(st.integers(1, 5))
    dk = data.draw(st.integers(1, 4))
    dv = data.draw(st.integers(1, 4))
    q = data.draw(hnp.arrays(np.float64, (n, dk), elements=finite))
    k = data.draw(hnp.arrays(np.float64, (n, dk), elements=finite))
    v = data.draw(hnp.arrays(np.float64, (n, dv), elements=finite))
    mask = causal_mask(n) if masked else None
    w1, o1 = loop_attention(q, k, v, scale=scale, mask=mask)
    w2, o2 = scaled_dot_product_attention(q, k, v, scale=scale, mask=mask)
    np.testing.assert_allclose(w1, w2, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(o1, o2, rtol=1e-9, atol=1e-9)


@given(problems())
def test_to_columns_is_the_transpose(problem):
    x, p, h = problem
    r = multi_head_attention(x, p, num_heads=h)
    c = to_columns(r)
    np.testing.assert_array_equal(c.x, x.T)
    np.testing.assert_array_equal(c.output, r.output.T)
    np.testing.assert_array_equal(c.concat, r.concat.T)
    np.testing.assert_array_equal(c.weights, r.weights.transpose(0, 2, 1))
    np.testing.assert_array_equal(c.queries, r.queries.transpose(0, 2, 1))


@pytest.mark.parametrize("fused", [False, True])
@given(problems(), st.sampled_from([1e-3, 1.0, 30.0, 1e3]), st.booleans())
def test_weights_are_the_stable_softmax_of_the_scores_at_any_magnitude(fused, problem, mag, masked):
    """Small scores (fused: unshifted path), huge ones (fused: shifted rows) and mixtures all
    agree with the reference softmax of the masked scores."""
    x, p, h = problem
    n = x.shape[0]
    mask = causal_mask(n) if masked else None
    r = multi_head_attention(x * mag, p, num_heads=h, mask=mask, fused=fused)
    assert np.isfinite(r.weights).all() and np.isfinite(r.output).all()
    np.testing.assert_allclose(r.weights, softmax(r.masked_scores), rtol=1e-9, atol=1e-12)
    ref = merge_heads(softmax(r.masked_scores) @ r.values)
    scale = max(1.0, float(np.abs(ref).max()))
    np.testing.assert_allclose(r.concat, ref, rtol=1e-9, atol=1e-9 * scale)
