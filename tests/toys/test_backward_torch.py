"""attnviz.toys against PyTorch autograd: the same model written in torch (float64), its
logits, attention weights, loss and every gradient.

Torch is a dev dependency that CI installs: with CI set, a missing torch fails this module
instead of skipping it. Locally without torch, the module is skipped.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

if os.environ.get("CI"):
    import torch
    import torch.nn.functional as F  # noqa: N812
else:
    torch = pytest.importorskip("torch")
    F = torch.nn.functional

from attnviz import toys

pytestmark = pytest.mark.torch
TOL = 1e-8


def torch_model(params: toys.ToyParams, ids, targets, weight):
    """The model of attnviz.toys in torch: (loss, logits, attentions, leaf tensors)."""
    p = {k: torch.tensor(a, dtype=torch.float64, requires_grad=True) for k, a in
         params.arrays().items()}  # fmt: skip
    ids_t, targets_t = torch.from_numpy(ids), torch.from_numpy(targets)
    w = torch.from_numpy(weight.astype(np.float64))
    b, t = ids.shape
    d_h = params.sizes["d_h"]
    x = p["embed"][ids_t] + p["pos"][:t]
    keep = torch.tril(torch.ones(t, t, dtype=torch.bool))
    attentions = []
    for layer in range(params.sizes["L"]):
        q = torch.einsum("btd,hde->bhte", x, p["w_q"][layer])
        k = torch.einsum("btd,hde->bhte", x, p["w_k"][layer])
        v = torch.einsum("btd,hde->bhte", x, p["w_v"][layer])
        s = (q @ k.transpose(-1, -2) / math.sqrt(d_h)).masked_fill(~keep, float("-inf"))
        a = torch.softmax(s, dim=-1)
        attentions.append(a)
        x = x + torch.einsum("bhte,hed->btd", a @ v, p["w_o"][layer])
    logits = x @ p["unembed"]
    nll = F.cross_entropy(
        logits.reshape(b * t, -1), targets_t.reshape(-1), reduction="none"
    ).reshape(b, t)
    loss = (nll * w).sum() / w.sum()
    loss.backward()
    return loss, logits, torch.stack(attentions), p


def cases():
    """(id, params, ids, targets, weight): each task's random and shipped final weights on
    its own batches, and an odd shape (L=3, H=3, D=7, d_h=5) on random weights."""
    out = []
    for name, task in toys.TASKS.items():
        if isinstance(task, toys.AlignTask):  # the encoder-decoder: below
            continue
        rng = np.random.default_rng(11)
        batch = task.sample(rng, 6)
        out.append((f"{name}-random", task.init(rng), *batch))
        out.append((f"{name}-trained", toys.load(name).checkpoints[-1], *batch))
    rng = np.random.default_rng(12)
    odd = toys.ToyParams.init(rng, vocab=11, length=9, d_model=7, layers=3, heads=3, d_head=5)
    ids = rng.integers(0, 11, (5, 8))
    weight = (rng.random((5, 8)) < 0.5).astype(np.int64)
    weight[0, 0] = 1
    out.append(("odd", odd, ids, rng.integers(0, 11, (5, 8)), weight))
    return out


@pytest.mark.parametrize(("params", "ids", "targets", "weight"), [c[1:] for c in cases()],
                         ids=[c[0] for c in cases()])  # fmt: skip
def test_gradients_equal_torch_autograd(params, ids, targets, weight):
    loss, grads = toys.loss_and_grads(params, ids, targets, weight)
    t_loss, _, _, leaves = torch_model(params, ids, targets, weight)
    assert loss == pytest.approx(t_loss.item(), rel=1e-12, abs=1e-12)
    for name in toys.SHAPES:
        ours, theirs = getattr(grads, name), leaves[name].grad.numpy()
        assert np.abs(theirs).max() > 0, name
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=TOL, err_msg=name)


@pytest.mark.parametrize(("params", "ids", "targets", "weight"), [c[1:] for c in cases()],
                         ids=[c[0] for c in cases()])  # fmt: skip
def test_forward_equals_torch(params, ids, targets, weight):
    logits, attentions = toys.forward(params, ids)
    _, t_logits, t_att, _ = torch_model(params, ids, targets, weight)
    np.testing.assert_allclose(logits, t_logits.detach().numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(attentions, t_att.detach().numpy(), rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- encoder-decoder


def torch_encdec(params: toys.EncDecParams, src, tgt, targets, weight):
    """The encoder-decoder of attnviz.toys in torch: (loss, logits, attentions, leaves)."""
    p = {k: torch.tensor(a, dtype=torch.float64, requires_grad=True) for k, a in
         params.arrays().items()}  # fmt: skip
    src_t, tgt_t = torch.from_numpy(src), torch.from_numpy(tgt)
    d_h, t = params.sizes["d_h"], tgt.shape[1]
    keep = torch.tril(torch.ones(t, t, dtype=torch.bool))

    def attend(part, layer, x, c, causal):
        q = torch.einsum("btd,hde->bhte", x, p[f"{part}_q"][layer])
        k = torch.einsum("bsd,hde->bhse", c, p[f"{part}_k"][layer])
        v = torch.einsum("bsd,hde->bhse", c, p[f"{part}_v"][layer])
        s = q @ k.transpose(-1, -2) / math.sqrt(d_h)
        a = torch.softmax(s.masked_fill(~keep, float("-inf")) if causal else s, dim=-1)
        return torch.einsum("bhte,hed->btd", a @ v, p[f"{part}_o"][layer]), a

    att = {"encoder": [], "decoder": [], "cross": []}
    x = p["embed"][src_t] + p["pos_src"][: src.shape[1]]
    for layer in range(params.sizes["L"]):
        out, a = attend("enc", layer, x, x, False)
        x, _ = x + out, att["encoder"].append(a)
    y = p["embed"][tgt_t] + p["pos_tgt"][:t]
    for layer in range(params.sizes["L"]):
        out, a = attend("dec", layer, y, y, True)
        y, _ = y + out, att["decoder"].append(a)
        out, a = attend("cross", layer, y, x, False)
        y, _ = y + out, att["cross"].append(a)
    logits = y @ p["unembed"]
    nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                          torch.from_numpy(targets).reshape(-1), reduction="none")  # fmt: skip
    w = torch.from_numpy(weight.astype(np.float64)).reshape(-1)
    loss = (nll * w).sum() / w.sum()
    loss.backward()
    return loss, logits, {k: torch.stack(v) for k, v in att.items()}, p


def encdec_cases():
    """(id, params, src, tgt, targets, weight): the align task's random and shipped final
    weights on its pairs, and an odd shape (L=2, H=3, D=7, d_h=5, S=6 != T=5) at random."""
    task = toys.TASKS["align"]
    rng = np.random.default_rng(21)
    batch = task.sample(rng, 6)
    out = [("align-random", task.init(rng), *batch),
           ("align-trained", toys.load("align").checkpoints[-1], *batch)]  # fmt: skip
    odd = toys.EncDecParams.init(rng, vocab=11, src_length=6, length=5, d_model=7, layers=2,
                                 heads=3, d_head=5)  # fmt: skip
    weight = (rng.random((4, 5)) < 0.6).astype(np.int64)
    weight[0, 0] = 1
    out.append(("odd", odd, rng.integers(0, 11, (4, 6)), rng.integers(0, 11, (4, 5)),
                rng.integers(0, 11, (4, 5)), weight))  # fmt: skip
    return out


@pytest.mark.parametrize(
    ("params", "src", "tgt", "targets", "weight"),
    [c[1:] for c in encdec_cases()],
    ids=[c[0] for c in encdec_cases()],
)
def test_encoder_decoder_gradients_equal_torch_autograd(params, src, tgt, targets, weight):
    """Through the cross-attention (and every other weight) to 1e-8 relative, in float64."""
    loss, grads = toys.loss_and_grads(params, src, tgt, targets, weight)
    t_loss, t_logits, t_att, leaves = torch_encdec(params, src, tgt, targets, weight)
    assert loss == pytest.approx(t_loss.item(), rel=1e-12, abs=1e-12)
    for name in toys.ENCDEC_SHAPES:
        ours, theirs = getattr(grads, name), leaves[name].grad.numpy()
        scale = np.abs(theirs).max()
        assert scale > 0, name
        np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-8 * scale, err_msg=name)
    logits, attentions = toys.forward(params, src, tgt)
    np.testing.assert_allclose(logits, t_logits.detach().numpy(), rtol=1e-10, atol=1e-10)
    for kind, a in attentions.items():
        np.testing.assert_allclose(a, t_att[kind].detach().numpy(), rtol=0, atol=1e-12)
