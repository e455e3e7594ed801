"""The toy transformers' backward pass: :func:`loss_and_grads`, the mean cross-entropy and
the gradient of every weight, written out step by step beside the forward's steps (the
decoder-only model, and the encoder-decoder through its cross-attention).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.engine import softmax
from attnviz.toys.model import (
    EncDecParams,
    ToyParams,
    _check_ids,
    _check_pair,
    _EncDec,
    _forward,
    _forward_encdec,
    _inputs,
    _Layer,
    _tokens,
)

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


def _attend_backward(
    w: tuple[Array, Array, Array, Array], g: tuple[Array, Array, Array, Array],
    c: _Layer, d_out: Array,
) -> tuple[Array, Array | None]:  # fmt: skip
    """The steps of :func:`attnviz.toys.model._attend` backwards: fills one layer's
    gradients ``g`` (of w_q, w_k, w_v, w_o) and returns d loss / d x through the layer (the
    residual not included) and, for cross-attention, d loss / d c (None in self-attention,
    where c is x and its part is in d x)."""
    w_q, w_k, w_v, w_o = w  # (H, D, d_h) x 3, (H, d_h, D)
    g_q, g_k, g_v, g_o = g
    d_h = w_q.shape[-1]
    d_outh = d_out[:, None]  # (B, 1, T, D): the same gradient reaches every head
    # d) out = Σ_h z_h w_o[h]  and  z = a v
    g_o[...] = (c.z.swapaxes(-1, -2) @ d_outh).sum(axis=0)  # (H, d_h, D)
    d_z = d_outh @ w_o.swapaxes(-1, -2)  # (B, H, T, d_h)
    d_a = d_z @ c.v.swapaxes(-1, -2)  # (B, H, T, S)
    d_v = c.a.swapaxes(-1, -2) @ d_z  # (B, H, S, d_h)
    # c) softmax: ∂a_ij/∂s_ik = a_ij (δ_jk - a_ik), so d s_ij = a_ij (d a_ij - Σ_k a_ik d a_ik);
    #    a masked cell has a_ij = 0, so d s_ij = 0 there
    d_s = c.a * (d_a - (c.a * d_a).sum(axis=-1, keepdims=True))  # (B, H, T, S)
    # b) s = q kᵀ / √d_h (the mask is a constant: no gradient)
    d_s /= math.sqrt(d_h)
    d_q = d_s @ c.k  # (B, H, T, d_h)
    d_k = d_s.swapaxes(-1, -2) @ c.q  # (B, H, S, d_h)
    # a) q = x w_q, k = c w_k, v = c w_v
    xt = c.x[:, None].swapaxes(-1, -2)  # (B, 1, D, T)
    ct = xt if c.c is c.x else c.c[:, None].swapaxes(-1, -2)  # (B, 1, D, S)
    g_q[...] = (xt @ d_q).sum(axis=0)  # (H, D, d_h)
    g_k[...] = (ct @ d_k).sum(axis=0)  # (H, D, d_h)
    g_v[...] = (ct @ d_v).sum(axis=0)  # (H, D, d_h)
    d_xq = d_q @ w_q.swapaxes(-1, -2)  # (B, H, T, D)
    if c.c is c.x:  # self-attention: x gave the queries, keys and values
        d_x = (d_xq + d_k @ w_k.swapaxes(-1, -2) + d_v @ w_v.swapaxes(-1, -2)).sum(axis=1)
        return d_x, None  # (B, T, D)
    d_c = (d_k @ w_k.swapaxes(-1, -2) + d_v @ w_v.swapaxes(-1, -2)).sum(axis=1)  # (B, S, D)
    return d_xq.sum(axis=1), d_c  # (B, T, D), (B, S, D)


def _decoder_only(
    params: ToyParams, ids: ArrayLike, targets: ArrayLike, weight: ArrayLike
) -> tuple[float, ToyParams]:
    """:func:`loss_and_grads` of the decoder-only model."""
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
        w, g = params.heads("w_", layer), grads.heads("w_", layer)
        d_x = d_x + _attend_backward(w, g, saved[layer], d_x)[0]
    # 1) x = embed[ids] + pos[:T]: each row of embed collects the gradient of its tokens
    np.add.at(grads.embed, ids, d_x)  # (V, D)
    grads.pos[: ids.shape[1]] = d_x.sum(axis=0)  # (T, D)
    return loss, grads


def _encoder_decoder(
    params: EncDecParams, src: ArrayLike, tgt: ArrayLike, targets: ArrayLike,
    weight: ArrayLike,
) -> tuple[float, EncDecParams]:  # fmt: skip
    """:func:`loss_and_grads` of the encoder-decoder: its forward's steps in reverse."""
    src, tgt = _check_pair(params, src, tgt)
    targets, w = _check_targets(tgt, targets, weight, params.embed.shape[0])
    logits, saved = _forward_encdec(params, src, tgt)  # (B, T, V)
    loss, d_logits = _cross_entropy(logits, targets, w)  # float, (B, T, V)
    grads = params.zeros_like()
    # 5) logits = y unembed
    grads.unembed[...] = (saved.y.swapaxes(-1, -2) @ d_logits).sum(axis=0)  # (D, V)
    d_y = d_logits @ params.unembed.T  # (B, T, D)
    d_mem = _decoder_backward(params, saved, d_y, grads, tgt)  # (B, S, D)
    # 2) x = x + out over the encoder's layers; d_mem reached x from every cross-attention
    d_x = d_mem
    for layer in reversed(range(len(saved.encoder))):
        w, g = params.heads("enc_", layer), grads.heads("enc_", layer)
        d_x = d_x + _attend_backward(w, g, saved.encoder[layer], d_x)[0]
    # 1) x = embed[src] + pos_src[:S]
    np.add.at(grads.embed, src, d_x)  # (V, D)
    grads.pos_src[: src.shape[1]] = d_x.sum(axis=0)  # (S, D)
    return loss, grads


def _decoder_backward(
    params: EncDecParams, saved: _EncDec, d_y: Array, grads: EncDecParams, tgt: NDArray
) -> Array:
    """Steps 4) and 3) of the encoder-decoder backwards: fills the decoder's gradients
    (self- and cross-attention, the target's rows of embed, pos_tgt) and returns d loss /
    d memory (B, S, D), the encoder's last stream, summed over the cross-attentions."""
    d_mem = np.zeros_like(saved.memory)  # (B, S, D)
    # 4) per layer, last first: y = y + cross(y, memory), then y = y + self(y)
    for layer in reversed(range(len(saved.cross))):
        w, g = params.heads("cross_", layer), grads.heads("cross_", layer)
        d_in, d_c = _attend_backward(w, g, saved.cross[layer], d_y)  # (B, T, D), (B, S, D)
        d_y = d_y + d_in
        d_mem += d_c
        w, g = params.heads("dec_", layer), grads.heads("dec_", layer)
        d_y = d_y + _attend_backward(w, g, saved.decoder[layer], d_y)[0]  # (B, T, D)
    # 3) y = embed[tgt] + pos_tgt[:T]
    np.add.at(grads.embed, tgt, d_y)  # (V, D)
    grads.pos_tgt[: tgt.shape[1]] = d_y.sum(axis=0)  # (T, D)
    return d_mem


def loss_and_grads(params: ToyParams | EncDecParams, *batch: ArrayLike, **named: ArrayLike):
    """The mean cross-entropy over the positions where ``weight`` is 1, and its gradient
    (parameters of the same kind): ``loss_and_grads(params, ids, targets, weight)`` for
    ToyParams, ``loss_and_grads(params, src, tgt, targets, weight)`` for EncDecParams (the
    tuple a task's ``sample`` gives).

    ``ids``, ``tgt``, ``targets`` (B, T) and ``src`` (B, S) integer ids, ``weight`` (B, T)
    of 0 and 1 (at least one 1). The backward pass runs the forward pass's steps in
    reverse, each step's gradient from the one after it (the chain rule).
    """
    if isinstance(params, EncDecParams):
        names = ("src", "tgt", "targets", "weight")
        return _encoder_decoder(params, *_inputs("loss_and_grads", params, batch, named, names))
    names = ("ids", "targets", "weight")
    return _decoder_only(params, *_inputs("loss_and_grads", params, batch, named, names))
