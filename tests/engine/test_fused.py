"""Unit tests of attnviz.engine.fused, the engine's fast path, through the engine's switch
(``fused=``, ``engine.FUSED``): which path runs, the same numbers as the formula as
written, scores computed on first read, huge scores and values.

The bounds on the two paths' differences, case by case: tests/engine/test_fused_properties.py.
"""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

from attnviz.engine import (
    AttentionParams,
    AttentionResult,
    attention_from_qkv,
    causal_mask,
    multi_head_attention,
    scaled_dot_product_attention,
    softmax,
)
from attnviz.engine import core as engine
from attnviz.engine import fused as fused_path
from attnviz.teaching import presets


def rng_x(n: int, d: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, d))


# --------------------------------------------------------------------------- the switch


def test_the_default_is_the_fused_path():
    """The app, the presets and the real models run the engine's defaults: the fast path."""
    assert engine.FUSED is True


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
    plain_fn, fused_fn = engine.attention, fused_path.attend
    monkeypatch.setattr(
        engine, "attention", lambda *a, **kw: ran.append("plain") or plain_fn(*a, **kw)
    )
    monkeypatch.setattr(fused_path, "attend", lambda *a: ran.append("fused") or fused_fn(*a))
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


def test_the_keys_copied_or_strided_give_the_same_numbers(monkeypatch):
    """Few scores: Kᵀ is copied contiguous before Q Kᵀ (faster for small heads); many: the
    strided view. Either way the same scores to rounding, and the scores read later are
    the ones the weights were computed from."""
    rng = np.random.default_rng(9)
    q, k, v = (
        rng.standard_normal((8, 20, 4)),
        rng.standard_normal((8, 24, 4)),
        rng.random((8, 24, 3)),
    )
    copied = fused_path.attend(q, k, v, 0.5, None)
    assert copied[0].kt.flags.c_contiguous
    monkeypatch.setattr(fused_path, "_KT_COPY_UP_TO", 0)
    strided = fused_path.attend(q, k, v, 0.5, None)
    assert not strided[0].kt.flags.c_contiguous
    for a, b in zip(copied[1:], strided[1:], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-15)
    s = copied[0].compute()
    np.testing.assert_allclose(s, strided[0].compute(), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(copied[1], softmax(s), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("fused", [False, True])
def test_a_row_with_one_key_allowed_is_exactly_one(fused):
    """A causal mask's first row (and any row with one key allowed) weighs that key exactly
    1 on both paths, whatever its score: the fused path does not shift the scores by the row
    maximum, so its lone entry is exp(score), and a product by the row sum's reciprocal is
    1 - 2^-53 for some scores; an entry equal to its row's sum is set to 1 (x / x)."""
    rng = np.random.default_rng(3)
    q, k, v = (rng.uniform(-4, 4, (64, 16, 8)) for _ in range(3))  # 64 heads' worth of scores
    w, _ = scaled_dot_product_attention(q, k, v, mask=causal_mask(16), fused=fused)
    assert np.all(w[:, 0, 0] == 1.0), w[:, 0, 0][w[:, 0, 0] != 1.0]
    assert np.all(w[:, 0, 1:] == 0.0)


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
