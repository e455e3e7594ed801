"""attnviz.teaching.explain.cell against the engine: every cell of 50 random views (masks, scales,
layouts, fully masked rows), to 1e-12."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnviz import engine
from attnviz.teaching import explain

TOL = 1e-12


def _mask(kind: str, n: int, rng: np.random.Generator) -> np.ndarray | None:
    if kind == "none":
        return None
    if kind == "causal":
        return engine.causal_mask(n)
    if kind == "padding":
        return engine.padding_mask(n, int(rng.integers(0, n + 1)))  # n_pad = n: all masked
    m = rng.random((n, n)) < 0.6  # random, with some fully masked rows
    m[rng.random(n) < 0.2] = False
    return m


def _views(count: int = 50):
    """(name, result) of ``count`` random views: sizes, heads, inits, biases, scales
    (1/√d_k, none, custom factors including negative ones), masks and the Q, K, V path."""
    rng = np.random.default_rng(2026)
    scales = [True, False, 2.5, -1.5, 0.3]
    masks = ["none", "causal", "padding", "random"]
    for i in range(count):
        n = int(rng.integers(1, 11))
        heads = int(rng.choice([1, 2, 4]))
        d = heads * int(rng.integers(1, 5))
        scale = scales[i % len(scales)]
        kind = masks[(i // len(scales)) % len(masks)]
        mask = _mask(kind, n, rng)
        if i % 7 == 6:  # presets given Q, K, V directly
            q, k, v = (rng.standard_normal((n, d)) for _ in range(3))
            res = engine.attention_from_qkv(q, k, v, num_heads=heads, scale=scale, mask=mask)
        else:
            init = ("normal", "uniform", "xavier")[i % 3]
            params = engine.AttentionParams.random(d, seed=i, init=init, bias=i % 2 == 0)
            x = rng.standard_normal((n, d))
            res = engine.multi_head_attention(x, params, num_heads=heads, scale=scale, mask=mask)
        yield f"{i}: N={n} D={d} H={heads} scale={scale} mask={kind}", res


VIEWS = list(_views())


def test_the_views_cover_masks_scales_and_fully_masked_rows():
    fully = [r for _, r in VIEWS if r.mask is not None and (~r.mask).all(axis=1).any()]
    assert len(fully) >= 5
    assert {r.scale for _, r in VIEWS} >= {1.0, 2.5, -1.5}
    assert sum(r.mask is None for _, r in VIEWS) >= 5


@pytest.mark.parametrize(("name", "res"), VIEWS, ids=[n for n, _ in VIEWS])
def test_every_cell_matches_the_engine(name, res):
    h_count, n, _ = res.weights.shape
    scores = res.masked_scores  # (H, N, N), -inf where masked
    for h in range(h_count):
        for i in range(n):
            for j in range(n):
                c = explain.cell(res, h, i, j)
                np.testing.assert_array_equal(c.q, res.queries[h, i])
                np.testing.assert_array_equal(c.k, res.keys[h, j])
                np.testing.assert_array_equal(c.products, res.queries[h, i] * res.keys[h, j])
                assert math.isclose(c.dot, float(res.queries[h, i] @ res.keys[h, j]), abs_tol=TOL)
                assert c.scale == res.scale
                assert c.masked == (res.mask is not None and not res.mask[i, j])
                if c.masked:
                    assert c.score == -math.inf and c.row_exps[j] == 0
                else:
                    assert math.isclose(c.score, float(scores[h, i, j]), abs_tol=TOL)
                np.testing.assert_allclose(c.row_scores, scores[h, i], rtol=0, atol=TOL)
                assert c.weight == res.weights[h, i, j]
                if c.fully_masked:
                    assert c.exp_sum == 0 and c.weight == 0 and not c.row_exps.any()
                else:
                    assert c.row_exps.max() == 1.0  # shifted by the largest visible score
                    assert math.isclose(c.row_exps[j] / c.exp_sum, c.weight, abs_tol=TOL)
                    np.testing.assert_allclose(
                        c.row_exps / c.exp_sum, res.weights[h, i], rtol=0, atol=TOL
                    )
                assert c.output_terms.shape == res.values[h].shape
                np.testing.assert_allclose(
                    c.output_terms.sum(axis=0), res.head_outputs[h, i], rtol=0, atol=TOL
                )
                np.testing.assert_array_equal(c.output, c.output_terms.sum(axis=0))


@pytest.mark.parametrize(("name", "res"), VIEWS[:10], ids=[n for n, _ in VIEWS[:10]])
def test_cells_drawn_in_the_column_layout(name, res):
    """In the UDL book's layout cell (row j, column i) of a head is a_ij."""
    cols = engine.to_columns(res)
    n = res.n_tokens
    for h in range(res.num_heads):
        for r in range(n):
            for c in range(n):
                got = explain.cell_at(res, h, r, c, "columns")
                assert (got.query, got.key) == (c, r)
                assert got.weight == cols.weights[h, r, c]
                assert explain.cell_at(res, h, r, c, "rows").weight == res.weights[h, r, c]


CASES = [
    # (mask, query, key, masked, fully masked row)
    (None, 2, 0, False, False),
    (engine.causal_mask(4), 1, 3, True, False),
    (engine.causal_mask(4), 3, 3, False, False),
    (engine.padding_mask(4, 1), 0, 3, True, False),
    (engine.padding_mask(4, 4), 2, 1, True, True),
]


@pytest.mark.parametrize(("mask", "query", "key", "masked", "fully"), CASES)
def test_masked_cells_and_fully_masked_rows(mask, query, key, masked, fully):
    params = engine.AttentionParams.random(4, seed=1, init="xavier")
    x = np.random.default_rng(0).standard_normal((4, 4))
    res = engine.multi_head_attention(x, params, num_heads=2, mask=mask)
    c = explain.cell(res, 1, query, key)
    assert (c.masked, c.fully_masked) == (masked, fully)
    assert (c.score == -math.inf) == masked
    assert (c.weight == 0) == masked
    if fully:
        assert not c.output.any() and c.row_max == 0


def test_a_hand_worked_cell():
    """q = (1, 2), k = (3, -1): products (3, -2), dot 1, scale 1/√2, two keys."""
    q = np.array([[1.0, 2.0], [0.0, 0.0]])
    k = np.array([[3.0, -1.0], [0.0, 1.0]])
    v = np.array([[1.0, 0.0], [0.0, 1.0]])
    res = engine.attention_from_qkv(q, k, v)
    c = explain.cell(res, 0, 0, 0)
    np.testing.assert_array_equal(c.products, [3.0, -2.0])
    assert c.dot == 1.0 and math.isclose(c.score, 1 / math.sqrt(2))
    s1 = 2 / math.sqrt(2)  # q_0 · k_1 scaled: the row's largest score
    assert math.isclose(c.row_max, s1)
    np.testing.assert_allclose(c.row_exps, [math.exp(1 / math.sqrt(2) - s1), 1.0])
    w0 = 1 / (1 + math.exp(s1 - 1 / math.sqrt(2)))
    assert math.isclose(c.weight, w0, abs_tol=TOL)
    np.testing.assert_allclose(c.output, [w0, 1 - w0], atol=TOL)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((2, 0, 0), "head must be from 0 to 1 (2 heads), got 2"),
        ((0, -1, 0), "query must be from 0 to 2 (3 queries), got -1"),
        ((0, 0, 3), "key must be from 0 to 2 (3 keys), got 3"),
        ((0, 0.5, 0), "query must be an integer from 0 to 2"),
        ((0, True, 0), "query must be an integer"),
    ],
)
def test_bad_indices_say_what_was_expected(args, message):
    params = engine.AttentionParams.random(4, seed=1)
    res = engine.multi_head_attention(np.ones((3, 4)), params, num_heads=2)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        explain.cell(res, *args)


def test_not_a_result():
    with pytest.raises(ValueError, match="AttentionResult, got ndarray"):
        explain.cell(np.zeros((1, 2, 2)), 0, 0, 0)  # type: ignore[arg-type]
    res = engine.multi_head_attention(np.ones((2, 2)), engine.AttentionParams.random(2))
    with pytest.raises(ValueError, match="layout must be 'rows' or 'columns', got 'diag'"):
        explain.cell_at(res, 0, 0, 0, "diag")
