"""Unit tests of attnviz.params: seeded random parameters, their shapes and dtypes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnviz.engine import AttentionParams

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
