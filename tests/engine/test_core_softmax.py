"""attnviz.engine.softmax, in the style of SciPy's tests of scipy.special.softmax."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.engine import softmax


def test_golden_values():
    # softmax([1, 2, 3]) = e^i / (e + e^2 + e^3), the example in SciPy's documentation.
    expected = np.array([0.09003057317038046, 0.24472847105479764, 0.6652409557748219])
    np.testing.assert_allclose(softmax(np.array([1.0, 2.0, 3.0])), expected, rtol=1e-15)


def test_golden_values_of_notebook_002():
    # torch.softmax printed in notebook 002 at 4 decimals
    z = np.array([0.1, -0.2, 0.3, -0.4, -0.3])
    np.testing.assert_allclose(softmax(z), [0.2359, 0.1748, 0.2881, 0.1431, 0.1581], atol=5e-5)
    np.testing.assert_allclose(softmax(8 * z), [0.1639, 0.0149, 0.8116, 0.0030, 0.0067], atol=5e-5)


def test_zeros_give_uniform():
    np.testing.assert_array_equal(softmax(np.zeros(4)), np.full(4, 0.25))


@pytest.mark.parametrize("shift", [-1000.0, -3.5, 0.0, 7.0, 1e4])
def test_shift_invariance(shift):
    z = np.array([[0.5, -1.0, 2.0], [3.0, 3.0, -2.0]])
    np.testing.assert_allclose(softmax(z + shift), softmax(z), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("big", [1e4, 1e10, 1e300])
def test_overflow_inputs_stay_finite(big):
    z = np.array([big, big - 1.0, -big])
    s = softmax(z)
    assert np.isfinite(s).all()
    assert s.sum() == pytest.approx(1.0)
    if big == 1e4:
        np.testing.assert_allclose(s[:2], [1 / (1 + np.exp(-1)), np.exp(-1) / (1 + np.exp(-1))])


def test_all_neg_inf_row_gives_zeros_not_nan():
    z = np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 0.0]])
    s = softmax(z)
    np.testing.assert_array_equal(s[0], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(s[1], [0.5, 0.0, 0.5])
    assert not np.isnan(s).any()


def test_neg_inf_entries_are_exactly_zero():
    s = softmax(np.array([1.0, -np.inf, 2.0, -np.inf]))
    assert s[1] == 0.0 and s[3] == 0.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_dtype_is_preserved(dtype):
    z = np.array([[1.0, 2.0, -np.inf], [-np.inf, -np.inf, -np.inf]], dtype=dtype)
    s = softmax(z)
    assert s.dtype == dtype
    np.testing.assert_allclose(s[0].sum(), 1.0, rtol=1e-3)


def test_integers_become_float64():
    s = softmax(np.array([1, 2, 3]))
    assert s.dtype == np.float64


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_axis(axis):
    z = np.random.default_rng(0).standard_normal((3, 4))
    s = softmax(z, axis=axis)
    np.testing.assert_allclose(s.sum(axis=axis), 1.0, rtol=1e-14)
    e = np.exp(z)
    np.testing.assert_allclose(s, e / e.sum(axis=axis, keepdims=True), rtol=1e-14)


def test_input_is_not_modified():
    z = np.array([1.0, 2.0, 3.0])
    softmax(z)
    np.testing.assert_array_equal(z, [1.0, 2.0, 3.0])


def test_list_input():
    np.testing.assert_allclose(softmax([0.0, 0.0]), [0.5, 0.5])
