"""The engine's decoder pieces: grouped-query attention (num_kv_heads, repeat_kv) and RoPE
(apply_rope, rope_cos_sin), against PyTorch / transformers' Llama code in float64 (1e-9),
plus their properties and refusals.

torch and transformers are dev dependencies CI installs: with CI set, a missing one fails
the cross-checks instead of skipping them.
"""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest

from attnviz.engine import (
    AttentionParams,
    apply_rope,
    attention_from_qkv,
    causal_mask,
    merge_heads,
    multi_head_attention,
    repeat_kv,
    rope_cos_sin,
    split_heads,
)

TOL = 1e-9


def need(module: str):
    if os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module)


def _rng(seed=0):
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------- vs PyTorch


@pytest.mark.torch
@pytest.mark.parametrize(("g", "n_rep"), [(3, 3), (2, 4), (1, 5), (4, 1)])
def test_repeat_kv_equals_transformers(g, n_rep):
    torch = need("torch")
    llama = need("transformers.models.llama.modeling_llama")
    x = _rng(g).standard_normal((g, 7, 8))
    ref = llama.repeat_kv(torch.from_numpy(x)[None], n_rep)[0].numpy()
    np.testing.assert_array_equal(repeat_kv(x, n_rep), ref)


@pytest.mark.torch
@pytest.mark.parametrize(
    ("heads", "n", "d", "base", "offset"),
    [(9, 12, 64, 100000.0, 0), (2, 5, 8, 10000.0, 37), (1, 30, 16, 500.0, 1000)],
)
def test_apply_rope_equals_transformers_llama(heads, n, d, base, offset):
    torch = need("torch")
    llama = need("transformers.models.llama.modeling_llama")
    rng = _rng(n)
    q = rng.standard_normal((heads, n, d))
    k = rng.standard_normal((heads, n, d))
    pos = np.arange(offset, offset + n)
    # Llama's table, built in torch float64: inv_freq = 1 / base^(2i/d), emb = [f, f]
    inv = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    freqs = torch.from_numpy(pos.astype(np.float64))[:, None] * inv[None, :]
    emb = torch.cat([freqs, freqs], dim=-1)
    cos, sin = emb.cos()[None], emb.sin()[None]  # (1, N, d)
    rq, rk = llama.apply_rotary_pos_emb(
        torch.from_numpy(q)[None], torch.from_numpy(k)[None], cos, sin
    )
    np.testing.assert_allclose(apply_rope(q, pos, base=base), rq[0].numpy(), rtol=0, atol=TOL)
    np.testing.assert_allclose(apply_rope(k, pos, base=base), rk[0].numpy(), rtol=0, atol=TOL)
    c, s = rope_cos_sin(pos, d, base=base)
    np.testing.assert_allclose(c, cos[0].numpy(), rtol=0, atol=TOL)
    np.testing.assert_allclose(s, sin[0].numpy(), rtol=0, atol=TOL)


@pytest.mark.torch
def test_llama_rotary_embedding_float32_table_is_close():
    """transformers computes its table in float32: the same angles to float32 rounding."""
    torch = need("torch")
    transformers = need("transformers")
    cfg = transformers.LlamaConfig(
        hidden_size=576, num_attention_heads=9, rope_parameters={"rope_theta": 1e5}
    )
    emb = transformers.models.llama.modeling_llama.LlamaRotaryEmbedding(cfg)
    pos = torch.arange(0, 64)[None]
    cos, sin = emb(torch.zeros(1, 64, 64), pos)
    c, s = rope_cos_sin(np.arange(64), 64, base=1e5)
    np.testing.assert_allclose(c, cos[0].numpy(), atol=2e-5)
    np.testing.assert_allclose(s, sin[0].numpy(), atol=2e-5)


@pytest.mark.torch
@pytest.mark.parametrize(
    ("h", "g", "n", "d", "causal"), [(9, 3, 11, 64, True), (4, 2, 6, 8, False)]
)
def test_gqa_equals_torch_sdpa_enable_gqa(h, g, n, d, causal):
    torch = need("torch")
    F = torch.nn.functional  # noqa: N806
    rng = _rng(h * n)
    q = rng.standard_normal((n, h * d))
    k = rng.standard_normal((n, g * d))
    v = rng.standard_normal((n, g * d))
    w_o = rng.standard_normal((h * d, 5))
    r = attention_from_qkv(
        q,
        k,
        v,
        num_heads=h,
        num_kv_heads=g,
        mask=causal_mask(n) if causal else None,
        w_o=w_o,
    )
    tq = torch.from_numpy(split_heads(q, h).copy())[None]  # (1, H, N, d)
    tk = torch.from_numpy(split_heads(k, g).copy())[None]  # (1, G, N, d)
    tv = torch.from_numpy(split_heads(v, g).copy())[None]
    out = F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal, enable_gqa=True)
    np.testing.assert_allclose(r.head_outputs, out[0].numpy(), rtol=0, atol=TOL)
    np.testing.assert_allclose(r.output, merge_heads(out[0].numpy()) @ w_o, rtol=0, atol=TOL)
    # the weights, as transformers' eager attention computes them (float64 throughout)
    kr = torch.repeat_interleave(tk, h // g, dim=1)
    s = tq @ kr.transpose(-1, -2) / np.sqrt(d)
    if causal:
        s = s.masked_fill(~torch.from_numpy(causal_mask(n)), float("-inf"))
    np.testing.assert_allclose(r.weights, torch.softmax(s, -1)[0].numpy(), rtol=0, atol=TOL)


# --------------------------------------------------------------------------- properties


def test_gqa_with_one_query_head_per_kv_head_is_multi_head_attention():
    p = AttentionParams.random(12, seed=4)
    x = _rng(1).standard_normal((5, 12))
    ref = multi_head_attention(x, p, num_heads=3, mask=causal_mask(5))
    q, k, v = x @ p.w_q + p.b_q, x @ p.w_k + p.b_k, x @ p.w_v + p.b_v
    r = attention_from_qkv(
        q, k, v, num_heads=3, num_kv_heads=3, mask=causal_mask(5), w_o=p.w_o, b_o=p.b_o
    )
    np.testing.assert_allclose(r.weights, ref.weights, atol=1e-12)
    np.testing.assert_allclose(r.output, ref.output, atol=1e-12)


def test_gqa_equals_mha_with_repeated_key_value_columns():
    rng = _rng(2)
    h, g, d, n = 6, 2, 4, 7
    q, k, v = (
        rng.standard_normal((n, h * d)),
        rng.standard_normal((n, g * d)),
        rng.standard_normal((n, g * d)),
    )
    gqa = attention_from_qkv(q, k, v, num_heads=h, num_kv_heads=g)
    k_full = merge_heads(repeat_kv(split_heads(k, g), h // g))  # (N, H*d)
    v_full = merge_heads(repeat_kv(split_heads(v, g), h // g))
    mha = attention_from_qkv(q, k_full, v_full, num_heads=h)
    np.testing.assert_allclose(gqa.weights, mha.weights, atol=1e-12)
    np.testing.assert_allclose(gqa.output, mha.output, atol=1e-12)
    assert gqa.keys.shape == (h, n, d)
    # query heads 0-2 share key head 0, heads 3-5 key head 1
    np.testing.assert_array_equal(gqa.keys[0], gqa.keys[2])
    assert not np.array_equal(gqa.keys[2], gqa.keys[3])


def test_rope_scores_depend_only_on_relative_position():
    rng = _rng(3)
    q, k = rng.standard_normal((1, 16)), rng.standard_normal((1, 16))
    s = [
        (apply_rope(q, [m + 5], base=100.0) @ apply_rope(k, [m], base=100.0).T).item()
        for m in (0, 3, 40, 1000)
    ]
    np.testing.assert_allclose(s, s[0], atol=1e-9)
    far = (apply_rope(q, [9], base=100.0) @ apply_rope(k, [0], base=100.0).T).item()
    assert abs(far - s[0]) > 1e-3  # another distance, another score


def test_rope_keeps_norms_and_position_zero_is_identity_and_float32_stays():
    x = _rng(5).standard_normal((3, 6, 8)).astype(np.float32)
    r = apply_rope(x, np.arange(6))
    assert r.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(r, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-5)
    np.testing.assert_allclose(r[:, 0], x[:, 0], atol=1e-7)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: apply_rope(np.ones(8), [0]), r"\(tokens, head_dim\).*got shape 8"),
        (lambda: apply_rope(np.ones((2, 3, 4, 8)), [0]), r"got shape 2x3x4x8"),
        (lambda: apply_rope(np.ones((3, 7)), [0, 1, 2]), r"even head_dim.*3x7"),
        (lambda: apply_rope(np.ones((3, 8)), [0, 1]), r"positions .* 3 entries.*got shape 2"),
        (lambda: apply_rope(np.ones((3, 8)), [0, 1, 2], base=1.0), r"base must be"),
        (lambda: apply_rope(np.ones((1, 8)), [np.nan]), r"positions .*NaN"),
        (lambda: rope_cos_sin([0], 7), r"even integer"),
        (lambda: repeat_kv(np.ones((2, 3)), 2), r"\(kv_heads, tokens, head_dim\).*2x3"),
        (lambda: repeat_kv(np.ones((2, 3, 4)), 0), r"n_rep must be"),
        (
            lambda: attention_from_qkv(
                np.ones((2, 8)), np.ones((2, 4)), np.ones((2, 4)), num_heads=4, num_kv_heads=3
            ),
            r"num_kv_heads=3 .* divide num_heads=4",
        ),
        (
            lambda: attention_from_qkv(
                np.ones((2, 8)), np.ones((2, 8)), np.ones((2, 4)), num_heads=4, num_kv_heads=2
            ),
            r"k \(M, 4\).*got q 2x8, k 2x8, v 2x4",
        ),
        (
            lambda: attention_from_qkv(
                np.ones((2, 9)), np.ones((2, 3)), np.ones((2, 3)), num_heads=2, num_kv_heads=1
            ),
            r"does not divide the query width Dk=9",
        ),
    ],
)
def test_decoder_helpers_refuse_bad_shapes_with_clear_messages(call, message):
    with pytest.raises(ValueError, match=message):
        call()
