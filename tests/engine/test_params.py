"""Unit tests of attnviz.engine.params: seeded random parameters, their shapes and dtypes."""

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


def test_qkv_weights_side_by_side_are_what_the_fields_show():
    """qkv() is [w_q | w_k | w_v] and [b_q | b_k | b_v]; the fields are read-only views of
    it (one copy, as torch's in_proj_weight), which nothing can make writable again."""
    p = AttentionParams.random(5, d_k=4, d_v=6, seed=1)
    w, b = p.qkv()
    np.testing.assert_array_equal(w, np.concatenate((p.w_q, p.w_k, p.w_v), axis=1))
    np.testing.assert_array_equal(b, np.concatenate((p.b_q, p.b_k, p.b_v)))
    for a in (p.w_q, p.w_k, p.w_v, p.b_q, p.b_k, p.b_v, w, b, p.w_q.base, w.base):
        assert np.shares_memory(a, w) or np.shares_memory(a, b)
        with pytest.raises(ValueError):
            a.setflags(write=True)


def test_params_keep_their_weights_when_the_callers_array_changes():
    """Weights given as views of a writable array: writing to that array afterwards does not
    change the parameters, so the side-by-side copy and the fields cannot disagree."""
    big = np.random.default_rng(2).standard_normal((5, 15))
    p = AttentionParams(big[:, :5], big[:, 5:10], big[:, 10:])
    before = p.w_q.copy()
    big[:] = 0.0
    np.testing.assert_array_equal(p.w_q, before)
    np.testing.assert_array_equal(p.qkv()[0][:, :5], before)


def test_a_missing_bias_is_zeros_side_by_side_and_pickling_keeps_the_views():
    import pickle

    r = AttentionParams.random(4, seed=3)
    p = AttentionParams(r.w_q, r.w_k, r.w_v, b_q=None, b_k=r.b_k, b_v=None)
    w, b = p.qkv()
    np.testing.assert_array_equal(b, np.concatenate((np.zeros(4), r.b_k, np.zeros(4))))
    assert p.b_q is None and p.b_v is None
    q = pickle.loads(pickle.dumps(p))
    np.testing.assert_array_equal(q.qkv()[0], w)
    assert np.shares_memory(q.w_k, q.qkv()[0]) and not q.w_k.flags.writeable


def test_mixed_dtypes_are_side_by_side_in_the_common_dtype():
    r = AttentionParams.random(4, seed=4, bias=False)
    p = AttentionParams(r.w_q.astype(np.float32), r.w_k, r.w_v)
    assert p.w_q.dtype == np.float32 and p.w_k.dtype == np.float64
    w, b = p.qkv()
    assert b is None and w.dtype == np.float64
    np.testing.assert_array_equal(w[:, :4], r.w_q.astype(np.float32))
