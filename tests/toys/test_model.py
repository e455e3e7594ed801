"""attnviz.toys.model: the parameters and the forward pass."""

from __future__ import annotations

import re

import numpy as np
import pytest

from attnviz import toys
from attnviz.engine import AttentionParams, causal_mask, multi_head_attention
from tests.toys import odd_batch, odd_params

# --------------------------------------------------------------------------- parameters


def test_params_are_float64_copies_with_their_sizes():
    p = odd_params()
    assert p.sizes == {"V": 11, "D": 7, "T_max": 9, "L": 3, "H": 3, "d_h": 5}
    assert all(a.dtype == np.float64 for a in p.arrays().values())
    assert list(p.arrays()) == list(toys.SHAPES)
    q = p.copy()
    q.w_q[0, 0, 0, 0] += 1
    assert p.w_q[0, 0, 0, 0] != q.w_q[0, 0, 0, 0]
    stored = toys.ToyParams(**{k: a.astype(np.float16) for k, a in p.arrays().items()})
    assert stored.embed.dtype == np.float64


@pytest.mark.parametrize(
    ("name", "shape", "message"),
    [
        ("w_k", (3, 3, 7, 4), "ToyParams.w_k must be (L, H, D, d_h), got shape (3, 3, 7, 4): "
         "its d_h is 4 but w_q has d_h = 5"),
        ("unembed", (7, 12), "its V is 12 but embed has V = 11"),
        ("pos", (9, 7, 1), "ToyParams.pos must be (T_max, D), got shape (9, 7, 1)"),
        ("w_o", (3, 3, 5, 6), "its D is 6 but embed has D = 7"),
        ("embed", (0, 7), "ToyParams.embed must be (V, D), got shape (0, 7)"),
    ],
)  # fmt: skip
def test_params_say_which_size_disagrees(name, shape, message):
    arrays = odd_params().arrays()
    arrays[name] = np.zeros(shape)
    with pytest.raises(ValueError, match=re.escape(message)):
        toys.ToyParams(**arrays)


def test_params_refuse_nan_and_text():
    arrays = odd_params().arrays()
    arrays["pos"] = arrays["pos"].copy()
    arrays["pos"][2, 3] = np.nan
    with pytest.raises(ValueError, match=r"ToyParams.pos \(shape \(9, 7\)\) contains NaN"):
        toys.ToyParams(**arrays)
    arrays = odd_params().arrays()
    arrays["embed"] = np.full((11, 7), "a")
    with pytest.raises(ValueError, match="ToyParams.embed must be numeric, got dtype <U1"):
        toys.ToyParams(**arrays)


# --------------------------------------------------------------------------- forward


def test_forward_shapes_causal_rows():
    p = odd_params()
    ids, _, _ = odd_batch(t=6)
    logits, att = toys.forward(p, ids)
    assert logits.shape == (4, 6, 11) and att.shape == (3, 4, 3, 6, 6)
    np.testing.assert_allclose(att.sum(-1), 1.0, atol=1e-12)
    assert (att[..., ~causal_mask(6)] == 0).all()


def engine_forward(p: toys.ToyParams, ids: np.ndarray) -> np.ndarray:
    """The same model through attnviz's engine, one sequence and one layer at a time:
    a layer's heads are one multi_head_attention with w_q = [w_q[l, 0] | w_q[l, 1] | ...]
    (split_heads gives head h the h-th block of columns) and w_o the blocks stacked."""
    out = []
    for row in ids:
        x = p.embed[row] + p.pos[: len(row)]  # (T, D)
        for layer in range(p.sizes["L"]):
            params = AttentionParams(
                w_q=np.concatenate(list(p.w_q[layer]), axis=1),  # (D, H d_h)
                w_k=np.concatenate(list(p.w_k[layer]), axis=1),
                w_v=np.concatenate(list(p.w_v[layer]), axis=1),
                w_o=np.concatenate(list(p.w_o[layer]), axis=0),  # (H d_h, D)
            )
            res = multi_head_attention(
                x, params, num_heads=p.sizes["H"], mask=causal_mask(len(row))
            )
            x = x + res.output
        out.append(x @ p.unembed)
    return np.stack(out)


def test_forward_equals_the_engine_layer_by_layer():
    p = odd_params(3)
    ids, _, _ = odd_batch(seed=4)
    logits, _ = toys.forward(p, ids)
    np.testing.assert_allclose(logits, engine_forward(p, ids), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        (np.zeros((2, 10), int), r"ids has T = 10 tokens, more than the model's T_max = 9"),
        (np.zeros(5, int), r"ids must be \(B, T\) with B, T >= 1, got shape \(5,\)"),
        (np.zeros((2, 3)), "ids must be integer token ids, got dtype float64"),
        (np.full((1, 3), 11), r"ids must be in 0..10 \(V = 11\), got values 11..11"),
        (np.full((1, 3), -1), r"ids must be in 0..10 \(V = 11\), got values -1..-1"),
    ],
)
def test_forward_refuses_bad_ids(ids, message):
    with pytest.raises(ValueError, match=message):
        toys.forward(odd_params(), ids)


def test_forward_refuses_what_is_not_params():
    with pytest.raises(ValueError, match="params must be ToyParams, got dict"):
        toys.forward({}, np.zeros((1, 2), int))
