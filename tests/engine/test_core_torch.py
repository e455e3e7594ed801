"""Cross-checks against PyTorch: nn.MultiheadAttention and F.scaled_dot_product_attention.

Torch is a dev dependency that CI installs: with CI set, a missing torch fails this module
instead of skipping it. Locally without torch, the module is skipped.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

if os.environ.get("CI"):
    import torch
    import torch.nn.functional as F  # noqa: N812
else:
    torch = pytest.importorskip("torch")
    F = torch.nn.functional

from attnviz.engine import (
    AttentionParams,
    causal_mask,
    multi_head_attention,
    padding_mask,
    scaled_dot_product_attention,
)
from attnviz.teaching import presets

pytestmark = pytest.mark.torch
TOL = 1e-9


def torch_mha(params: AttentionParams, num_heads: int) -> torch.nn.MultiheadAttention:
    """An nn.MultiheadAttention (float64, batch_first) holding ``params``.

    Mapping: in_proj_weight = [w_qᵀ; w_kᵀ; w_vᵀ] (so w_q = in_proj_weight[:E].T),
    in_proj_bias = [b_q, b_k, b_v], out_proj.weight = w_oᵀ, out_proj.bias = b_o.
    """
    e = params.d_model
    mha = torch.nn.MultiheadAttention(
        e, num_heads, bias=True, batch_first=True, dtype=torch.float64
    )
    with torch.no_grad():
        mha.in_proj_weight.copy_(
            torch.from_numpy(np.vstack([params.w_q.T, params.w_k.T, params.w_v.T]))
        )
        mha.in_proj_bias.copy_(
            torch.from_numpy(np.concatenate([params.b_q, params.b_k, params.b_v]))
        )
        mha.out_proj.weight.copy_(torch.tensor(params.w_o.T))
        mha.out_proj.bias.copy_(torch.tensor(params.b_o))
    return mha.eval()


def test_weight_mapping_round_trips():
    p = AttentionParams.random(8, seed=0)
    mha = torch_mha(p, 2)
    e = 8
    w = mha.in_proj_weight.detach().numpy()
    np.testing.assert_array_equal(w[:e].T, p.w_q)
    np.testing.assert_array_equal(w[e : 2 * e].T, p.w_k)
    np.testing.assert_array_equal(w[2 * e :].T, p.w_v)


#: (N, E, H, mask kind, init)
MHA_CASES = [
    (1, 4, 1, "none", "normal"),
    (5, 8, 2, "none", "xavier"),
    (6, 8, 2, "causal", "normal"),
    (7, 12, 3, "causal", "xavier"),
    (4, 16, 4, "padding", "uniform"),
    (9, 6, 6, "random", "xavier"),
    (16, 32, 8, "causal", "xavier"),
]


def _mask(kind: str, n: int, seed: int) -> np.ndarray | None:
    if kind == "none":
        return None
    if kind == "causal":
        return causal_mask(n)
    if kind == "padding":
        return padding_mask(n, 1)
    m = np.random.default_rng(seed).random((n, n)) < 0.7
    m[np.arange(n), np.arange(n)] = True  # no fully masked row: torch gives NaN there
    return m


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize(("n", "e", "h", "kind", "init"), MHA_CASES)
def test_multi_head_attention_equals_torch(n, e, h, kind, init, fused):
    p = AttentionParams.random(e, seed=n + e, init=init)
    x = np.random.default_rng(n * e).standard_normal((n, e))
    mask = _mask(kind, n, seed=n)
    res = multi_head_attention(x, p, num_heads=h, mask=mask, fused=fused)
    mha = torch_mha(p, h)
    xt = torch.from_numpy(x)[None]  # (1, N, E)
    attn_mask = None if mask is None else torch.from_numpy(~mask)  # torch: True = NOT allowed
    with torch.no_grad():
        out, w = mha(xt, xt, xt, need_weights=True, average_attn_weights=False, attn_mask=attn_mask)
    np.testing.assert_allclose(res.output, out[0].numpy(), rtol=TOL, atol=TOL)
    np.testing.assert_allclose(res.weights, w[0].numpy(), rtol=TOL, atol=TOL)


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize(("n", "e", "h", "kind", "init"), MHA_CASES)
def test_float32_matches_torch_float32(n, e, h, kind, init, fused):
    p = AttentionParams.random(e, seed=n + e, init=init)
    x = np.random.default_rng(n * e).standard_normal((n, e))
    mask = _mask(kind, n, seed=n)
    x32, p32 = x.astype(np.float32), p.astype(np.float32)
    res = multi_head_attention(x32, p32, num_heads=h, mask=mask, fused=fused)
    assert res.output.dtype == np.float32
    mha = torch_mha(p, h).float()
    xt = torch.from_numpy(x.astype(np.float32))[None]
    attn_mask = None if mask is None else torch.from_numpy(~mask)
    with torch.no_grad():
        out, w = mha(xt, xt, xt, need_weights=True, average_attn_weights=False, attn_mask=attn_mask)
    np.testing.assert_allclose(res.output, out[0].numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(res.weights, w[0].numpy(), rtol=1e-4, atol=1e-5)


#: (leading axes, N, M, d_k, d_v, scale, mask kind)
SDPA_CASES = [
    ((), 3, 3, 4, 4, True, "none"),
    ((2,), 5, 5, 8, 3, True, "causal"),
    ((2, 3), 4, 6, 5, 7, False, "none"),
    ((4,), 6, 6, 2, 2, 0.3, "causal"),
    ((3,), 5, 7, 4, 4, 1.7, "random"),
]


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize(("lead", "n", "m", "dk", "dv", "scale", "kind"), SDPA_CASES)
def test_sdpa_equals_torch(lead, n, m, dk, dv, scale, kind, fused):
    rng = np.random.default_rng(n * m + dk)
    q = rng.standard_normal((*lead, n, dk))
    k = rng.standard_normal((*lead, m, dk))
    v = rng.standard_normal((*lead, m, dv))
    mask = None
    if kind == "causal":
        mask = causal_mask(n)
    elif kind == "random":
        mask = rng.random((n, m)) < 0.6
        mask[:, 0] = True  # no fully masked row
    w, out = scaled_dot_product_attention(q, k, v, scale=scale, mask=mask, fused=fused)
    t_scale = None if scale is True else (1.0 if scale is False else float(scale))
    t_mask = None if mask is None else torch.from_numpy(mask)  # SDPA: True = may attend
    t_out = F.scaled_dot_product_attention(
        torch.from_numpy(q),
        torch.from_numpy(k),
        torch.from_numpy(v),
        attn_mask=t_mask,
        scale=t_scale,
    )
    np.testing.assert_allclose(out, t_out.numpy(), rtol=TOL, atol=TOL)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-12)


def test_sdpa_is_causal_flag():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 5, 4)) for _ in range(3))
    _, out = scaled_dot_product_attention(q, k, v, mask=causal_mask(5))
    t = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v)), is_causal=True)
    np.testing.assert_allclose(out, t.numpy(), rtol=TOL, atol=TOL)


# --------------------------------------------------------------------------- notebook 002


def test_scaling_demo_weights_are_torchs_draws():
    torch.manual_seed(123)
    draws = [torch.rand(3, 2) for _ in range(3)]  # W_query, W_key, W_value of SelfAttention_v1
    p = presets.get("scaling-demo")
    for ours, theirs in zip((p.params.w_q, p.params.w_k, p.params.w_v), draws, strict=True):
        assert theirs.dtype == torch.float32
        np.testing.assert_array_equal(ours, theirs.numpy().astype(np.float64))


def test_scaling_demo_matches_self_attention_v1_in_torch():
    p = presets.get("scaling-demo")
    x = torch.tensor(p.x, dtype=torch.float64)
    wq, wk, wv = (torch.from_numpy(np.array(w)) for w in (p.params.w_q, p.params.w_k, p.params.w_v))
    q, k, v = x @ wq, x @ wk, x @ wv
    out = torch.softmax(q @ k.T / k.shape[-1] ** 0.5, dim=-1) @ v
    np.testing.assert_allclose(p.run().output, out.numpy(), rtol=TOL, atol=TOL)
