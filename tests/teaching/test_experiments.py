"""attnviz.teaching.experiments: the scaling, positional-encoding, permutation and masking
helpers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnviz.engine import AttentionParams
from attnviz.teaching import experiments as ex


def test_dot_product_variance_grows_like_d_and_scaling_fixes_it():
    dims = [1, 4, 16, 64, 256]
    c = ex.dot_product_variance(dims, trials=4000, seed=0)
    np.testing.assert_array_equal(c.dims, dims)
    # Var(q·k) = d; with 4000 trials the relative standard error is about 3%.
    np.testing.assert_allclose(c.before / np.array(dims), 1.0, rtol=0.15)
    np.testing.assert_allclose(c.after, 1.0, rtol=0.15)
    np.testing.assert_allclose(c.after, c.before / np.array(dims), rtol=1e-12)


def test_dot_product_variance_is_seeded():
    a = ex.dot_product_variance([5, 100], seed=3)
    b = ex.dot_product_variance([5, 100], seed=3)
    c = ex.dot_product_variance([5, 100], seed=4)
    np.testing.assert_array_equal(a.before, b.before)
    assert not np.array_equal(a.before, c.before)


@pytest.mark.parametrize(
    ("dims", "kwargs", "match"),
    [
        ([], {}, "dims must be a non-empty list of integers >= 1"),
        ([0, 4], {}, "dims must be"),
        ([2.5], {}, "dims must be"),
        ([4], {"trials": 1}, "trials must be >= 2"),
    ],
)
def test_dot_product_variance_bad_input(dims, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ex.dot_product_variance(dims, **kwargs)


def test_softmax_under_factor_reproduces_notebook_002():
    s = ex.softmax_under_factor(ex.NOTEBOOK_LOGITS, [1, 8])
    assert s.shape == (2, 5)
    np.testing.assert_allclose(s[0], [0.2359, 0.1748, 0.2881, 0.1431, 0.1581], atol=5e-5)
    np.testing.assert_allclose(s[1], [0.1639, 0.0149, 0.8116, 0.0030, 0.0067], atol=5e-5)


def test_softmax_sharpens_with_the_factor():
    s = ex.softmax_under_factor(ex.NOTEBOOK_LOGITS, [0, 0.5, 1, 2, 8, 100])
    np.testing.assert_allclose(s.sum(axis=1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(s[0], 0.2)  # factor 0: uniform
    assert np.all(np.diff(s.max(axis=1)) > 0)
    assert s[-1].argmax() == 2 and s[-1].max() > 0.99


def test_softmax_under_factor_bad_input():
    with pytest.raises(ValueError, match="logits must be a non-empty 1-D list"):
        ex.softmax_under_factor([], [1])
    with pytest.raises(ValueError, match="finite"):
        ex.softmax_under_factor([1.0, np.nan], [1])


def test_max_weight_curve_unscaled_saturates():
    c = ex.max_weight_curve([1, 16, 256], n_keys=8, trials=300, seed=0)
    assert np.all(np.diff(c.unscaled) > 0)
    assert c.unscaled[-1] > 0.85
    assert np.all(c.scaled < 0.6)
    assert c.scaled[0] == c.unscaled[0]  # d = 1: the factor is 1


@pytest.mark.parametrize(("n", "d"), [(1, 1), (4, 6), (7, 5), (50, 16)])
def test_sinusoidal_positions_formula(n, d):
    pe = ex.sinusoidal_positions(n, d)
    assert pe.shape == (n, d)
    assert np.all(np.abs(pe) <= 1.0)
    for p in range(n):
        for i in range(d):
            angle = p / 10000 ** (2 * (i // 2) / d)
            expected = math.sin(angle) if i % 2 == 0 else math.cos(angle)
            assert pe[p, i] == pytest.approx(expected, abs=1e-12)


def test_sinusoidal_positions_first_row_and_bad_input():
    np.testing.assert_array_equal(ex.sinusoidal_positions(2, 4)[0], [0, 1, 0, 1])
    with pytest.raises(ValueError, match="n >= 1 and d >= 1, got n=0, d=3"):
        ex.sinusoidal_positions(0, 3)


def test_all_permutations_in_the_notebooks_order():
    perms = ex.all_permutations(3)
    assert perms == [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    assert len(ex.all_permutations(5)) == 120
    with pytest.raises(ValueError, match="1 <= n <= 8"):
        ex.all_permutations(9)


def _problem(n=5, d=6, seed=1):
    x = np.random.default_rng(seed).standard_normal((n, d))
    return x, AttentionParams.random(d, seed=seed)


@pytest.mark.parametrize("perm", ex.all_permutations(4))
def test_permutation_check_equivariant_without_positions(perm):
    x, p = _problem(n=4)
    c = ex.permutation_check(x, p, perm, num_heads=2)
    assert c.equivariant
    assert c.max_abs_diff < 1e-12
    assert c.perm == perm
    np.testing.assert_allclose(c.out_of_permuted, c.out[list(perm)], atol=1e-12)


def test_permutation_check_positions_break_it():
    x, p = _problem()
    pos = ex.sinusoidal_positions(5, 6)
    c = ex.permutation_check(x, p, [1, 0, 2, 3, 4], num_heads=3, positions=pos)
    assert not c.equivariant
    assert c.max_abs_diff > 1e-3
    # the identity permutation is trivially fine even with positions
    assert ex.permutation_check(x, p, range(5), positions=pos).equivariant


def test_permutation_check_bad_input():
    x, p = _problem()
    with pytest.raises(ValueError, match="perm must be a permutation of 0..4"):
        ex.permutation_check(x, p, [0, 1, 2])
    with pytest.raises(ValueError, match=r"positions must have the shape of x \(5, 6\)"):
        ex.permutation_check(x, p, range(5), positions=np.zeros((5, 5)))


@pytest.mark.parametrize(("kind", "expected"), [("none", None), ("causal", 6), ("padding", 6)])
def test_make_mask(kind, expected):
    m = ex.make_mask(kind, 3, n_pad=1)
    assert (m is None) if expected is None else (int(m.sum()) == expected)
    with pytest.raises(ValueError, match="mask kind must be"):
        ex.make_mask("future", 3)


@pytest.mark.parametrize("position", [0, 2, 4])
def test_future_independence(position):
    x, p = _problem()
    assert ex.future_independence(x, p, position, num_heads=2) == 0.0
    if position < 4:
        assert ex.future_independence(x, p, position, causal=False) > 1e-6
    with pytest.raises(ValueError, match="position must be in 0..4"):
        ex.future_independence(x, p, 5)
