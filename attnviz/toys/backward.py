"""The toy transformer's backward pass: :func:`loss_and_grads`, the mean cross-entropy and
the gradient of every weight, written out step by step beside the forward's steps.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.engine import softmax
from attnviz.toys.model import ToyParams, _check_ids, _forward, _Layer, _tokens

Array = NDArray[np.float64]


def _check_targets(ids: NDArray, targets: ArrayLike, weight: ArrayLike, vocab: int):
    targets = _tokens("targets", targets, vocab, ids.shape)
    w = np.asarray(weight)
    if w.shape != ids.shape:
        raise ValueError(f"weight must have the shape of ids {ids.shape}, got {w.shape}")
    if w.dtype.kind not in "biuf" or not np.isin(w, (0, 1)).all():
        raise ValueError(f"weight must hold only 0 and 1, got dtype {w.dtype}")
    if not w.any():
        raise ValueError("weight is 0 everywhere: no position to average the loss over")
    return targets, w.astype(np.float64)


def _cross_entropy(logits: Array, targets: NDArray, w: Array) -> tuple[float, Array]:
    """The mean cross-entropy over the weighted positions and its gradient wrt the logits."""
    p = softmax(logits, axis=-1)  # (B, T, V) the predicted distribution
    b, t = np.indices(targets.shape)  # (B, T) each
    nll = -np.log(p[b, t, targets])  # (B, T) minus log p(target)
    count = w.sum()
    loss = float((nll * w).sum() / count)
    # d loss / d logits = (p - onehot(target)) * weight / count
    d_logits = p.copy()  # (B, T, V)
    d_logits[b, t, targets] -= 1.0
    d_logits *= (w / count)[..., None]  # (B, T, V)
    return loss, d_logits


def _attention_layer_backward(
    params: ToyParams, layer: int, c: _Layer, d_out: Array, grads: ToyParams
) -> Array:
    """The steps of :func:`_attention_layer` backwards: fills ``grads``' weights of
    ``layer`` and returns d loss / d x through the layer (the residual not included)."""
    d_h = params.w_q.shape[-1]
    d_outh = d_out[:, None]  # (B, 1, T, D): the same gradient reaches every head
    # d) out = Σ_h z_h w_o[h]  and  z = a v
    grads.w_o[layer] = (c.z.swapaxes(-1, -2) @ d_outh).sum(axis=0)  # (H, d_h, D)
    d_z = d_outh @ params.w_o[layer].swapaxes(-1, -2)  # (B, H, T, d_h)
    d_a = d_z @ c.v.swapaxes(-1, -2)  # (B, H, T, T)
    d_v = c.a.swapaxes(-1, -2) @ d_z  # (B, H, T, d_h)
    # c) softmax: ∂a_ij/∂s_ik = a_ij (δ_jk - a_ik), so d s_ij = a_ij (d a_ij - Σ_k a_ik d a_ik);
    #    a masked cell has a_ij = 0, so d s_ij = 0 there
    d_s = c.a * (d_a - (c.a * d_a).sum(axis=-1, keepdims=True))  # (B, H, T, T)
    # b) s = q kᵀ / √d_h (the mask is a constant: no gradient)
    d_s /= math.sqrt(d_h)
    d_q = d_s @ c.k  # (B, H, T, d_h)
    d_k = d_s.swapaxes(-1, -2) @ c.q  # (B, H, T, d_h)
    # a) q = x w_q, k = x w_k, v = x w_v
    xt = c.x[:, None].swapaxes(-1, -2)  # (B, 1, D, T)
    grads.w_q[layer] = (xt @ d_q).sum(axis=0)  # (H, D, d_h)
    grads.w_k[layer] = (xt @ d_k).sum(axis=0)  # (H, D, d_h)
    grads.w_v[layer] = (xt @ d_v).sum(axis=0)  # (H, D, d_h)
    d_x = (
        d_q @ params.w_q[layer].swapaxes(-1, -2)  # (B, H, T, D)
        + d_k @ params.w_k[layer].swapaxes(-1, -2)
        + d_v @ params.w_v[layer].swapaxes(-1, -2)
    ).sum(axis=1)  # (B, T, D)
    return d_x


def loss_and_grads(
    params: ToyParams, ids: ArrayLike, targets: ArrayLike, weight: ArrayLike
) -> tuple[float, ToyParams]:
    """The mean cross-entropy over the positions where ``weight`` is 1, and its gradient.

    ``ids``, ``targets`` (B, T) integer ids, ``weight`` (B, T) of 0 and 1 (at least one 1).
    The backward pass runs the forward pass's steps in reverse, each step's gradient
    from the one after it (the chain rule).
    """
    ids = _check_ids(params, ids)
    targets, w = _check_targets(ids, targets, weight, params.embed.shape[0])
    logits, x, saved = _forward(params, ids)  # (B, T, V), (B, T, D)
    loss, d_logits = _cross_entropy(logits, targets, w)  # float, (B, T, V)
    grads = params.zeros_like()
    # 3) logits = x unembed: a sum over the sequences of xᵀ d_logits
    grads.unembed[...] = (x.swapaxes(-1, -2) @ d_logits).sum(axis=0)  # (B, D, V) -> (D, V)
    d_x = d_logits @ params.unembed.T  # (B, T, D)
    # 2) x = x + out: the residual passes d_x through, the layer adds its own part
    for layer in reversed(range(len(saved))):
        d_x = d_x + _attention_layer_backward(params, layer, saved[layer], d_x, grads)
    # 1) x = embed[ids] + pos[:T]: each row of embed collects the gradient of its tokens
    np.add.at(grads.embed, ids, d_x)  # (V, D)
    grads.pos[: ids.shape[1]] = d_x.sum(axis=0)  # (T, D)
    return loss, grads
