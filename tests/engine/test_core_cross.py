"""Cross-attention (engine.cross_attention): PyTorch parity, shapes, masks and errors.

The target (N_q tokens) gives the queries, the source (N_kv tokens) the keys and values:
``torch.nn.MultiheadAttention(query=tgt, key=src, value=src)`` in float64 is the reference.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

if os.environ.get("CI"):
    import torch
else:
    torch = pytest.importorskip("torch")

from attnviz import engine
from attnviz.engine import AttentionParams, cross_attention, key_padding_mask
from tests.engine.test_core_torch import torch_mha

TOL = 1e-12

# (N_q, N_kv, D, heads, source padding)
CASES = [
    (4, 5, 8, 1, 0),
    (4, 5, 8, 2, 2),
    (7, 3, 12, 3, 1),
    (1, 6, 4, 4, 0),
    (6, 1, 6, 2, 0),
    (5, 5, 8, 2, 3),
]


@pytest.mark.parametrize(("n_q", "n_kv", "d", "heads", "n_pad"), CASES)
def test_cross_attention_equals_torch(n_q, n_kv, d, heads, n_pad):
    rng = np.random.default_rng(n_q * 100 + n_kv * 10 + heads)
    p = AttentionParams.random(d, seed=n_q + n_kv, init="xavier")
    tgt, src = rng.normal(size=(n_q, d)), rng.normal(size=(n_kv, d))
    mask = key_padding_mask(n_q, n_kv, n_pad) if n_pad else None
    ours = cross_attention(tgt, src, p, num_heads=heads, mask=mask)
    pad = torch.zeros(1, n_kv, dtype=torch.bool)
    pad[0, n_kv - n_pad :] = True  # torch: True = ignore this key
    out, w = torch_mha(p, heads)(
        torch.from_numpy(tgt)[None], torch.from_numpy(src)[None], torch.from_numpy(src)[None],
        key_padding_mask=pad if n_pad else None, need_weights=True, average_attn_weights=False,
    )  # fmt: skip
    assert ours.weights.shape == (heads, n_q, n_kv)
    assert ours.output.shape == (n_q, d)
    np.testing.assert_allclose(ours.weights, w[0].detach().numpy(), rtol=0, atol=TOL)
    np.testing.assert_allclose(ours.output, out[0].detach().numpy(), rtol=0, atol=TOL)


@pytest.mark.parametrize("fused", [True, False])
def test_shapes_rows_and_the_two_sequences(fused):
    p = AttentionParams.random(6, d_v=4, d_out=5, seed=1)
    tgt, src = np.ones((3, 6)), np.arange(42.0).reshape(7, 6) / 42
    r = cross_attention(tgt, src, p, num_heads=2, fused=fused)
    assert r.queries.shape == (2, 3, 3) and r.keys.shape == (2, 7, 3)
    assert r.values.shape == (2, 7, 2) and r.scores.shape == (2, 3, 7)
    assert r.weights.shape == (2, 3, 7) and r.head_outputs.shape == (2, 3, 2)
    assert r.concat.shape == (3, 4) and r.output.shape == (3, 5)
    np.testing.assert_allclose(r.weights.sum(-1), 1.0)
    assert r.is_cross and r.x is not None and r.x_kv is not None
    np.testing.assert_array_equal(r.x, tgt)
    np.testing.assert_array_equal(r.x_kv, src)
    # the same numbers as multi_head_attention(x_kv=...), and the queries come from the target
    same = engine.multi_head_attention(tgt, p, num_heads=2, x_kv=src, fused=fused)
    np.testing.assert_allclose(same.weights, r.weights, rtol=0, atol=0)
    np.testing.assert_allclose(r.queries[0], (tgt @ p.w_q + p.b_q)[:, :3])
    np.testing.assert_allclose(r.keys[0], (src @ p.w_k + p.b_k)[:, :3])


def test_fused_and_readable_paths_agree():
    rng = np.random.default_rng(3)
    p = AttentionParams.random(8, seed=3)
    tgt, src = rng.normal(size=(5, 8)), rng.normal(size=(9, 8))
    mask = key_padding_mask(5, 9, 4)
    a = cross_attention(tgt, src, p, num_heads=2, mask=mask, fused=True)
    b = cross_attention(tgt, src, p, num_heads=2, mask=mask, fused=False)
    np.testing.assert_allclose(a.weights, b.weights, atol=1e-13)
    np.testing.assert_allclose(a.output, b.output, atol=1e-13)
    np.testing.assert_allclose(a.scores, b.scores, atol=1e-13)
    assert (a.weights[:, :, 5:] == 0).all()


def test_self_attention_results_are_not_cross():
    p = AttentionParams.random(4, seed=0)
    r = engine.multi_head_attention(np.ones((3, 4)), p)
    assert not r.is_cross and r.x_kv is None


def test_key_padding_mask():
    m = key_padding_mask(2, 4, 1)
    assert m.dtype == bool and m.shape == (2, 4)
    np.testing.assert_array_equal(m, [[1, 1, 1, 0], [1, 1, 1, 0]])
    assert not key_padding_mask(3, 2, 2).any()
    assert key_padding_mask(3, 2, 0).all()


def test_a_fully_padded_source_gives_zero_rows():
    p = AttentionParams.random(4, seed=0)
    r = cross_attention(np.ones((2, 4)), np.ones((3, 4)), p, mask=key_padding_mask(2, 3, 3))
    assert (r.weights == 0).all() and np.isfinite(r.output).all()


def test_causal_is_accepted_for_equal_lengths():
    p = AttentionParams.random(4, seed=0)
    rng = np.random.default_rng(0)
    tgt, src = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    r = cross_attention(tgt, src, p, mask="causal")
    np.testing.assert_array_equal(r.weights[0] > 0, engine.causal_mask(3))


@pytest.mark.parametrize(
    ("call", "words"),
    [
        # a causal mask with different lengths: refused, saying why, naming both shapes
        (lambda p: cross_attention(np.ones((3, 4)), np.ones((5, 4)), p, mask="causal"),
         ["causal", "3x4", "5x4", "whole source"]),
        (lambda p: cross_attention(np.ones((3, 4)), np.ones((5, 4)), p,
                                   mask=engine.causal_mask(3)),
         ["(N_q, N_kv) = (3, 5)", "3x3", "3x4", "5x4"]),
        (lambda p: cross_attention(np.ones((3, 4)), np.ones((5, 6)), p),
         ["source", "5x6", "3x4", "D=6", "D=4"]),
        (lambda p: cross_attention(np.ones((3, 4)), np.ones(4), p), ["source", "4", "3x4"]),
        (lambda p: cross_attention(np.ones((3, 4)), np.ones((0, 4)), p), ["0x4"]),
        (lambda p: cross_attention(np.ones((3, 4)), None, p), ["x_kv", "None"]),
        (lambda p: cross_attention(np.ones((3, 4)), np.ones((2, 4)), p, mask="window"),
         ["causal", "'window'"]),
        (lambda p: cross_attention(np.ones((3, 5)), np.ones((2, 5)), p), ["D=5", "3x5"]),
        (lambda p: key_padding_mask(2, 3, 4), ["n_pad=4", "n_kv=3"]),
        (lambda p: key_padding_mask(0, 3, 0), ["n_q >= 1"]),
    ],
)  # fmt: skip
def test_bad_input_says_what_and_which_sequence(call, words):
    p = AttentionParams.random(4, seed=0)
    with pytest.raises(ValueError) as err:
        call(p)
    for w in words:
        assert w in str(err.value), (w, str(err.value))
