"""Scaled dot-product, multi-head self-attention and cross-attention in pure NumPy.

Row layout throughout, as in PyTorch: one token per row, ``x`` has shape (N, D).
The UDL book's column layout (D x N, ``Omega x + beta``) is the same computation
transposed; :func:`to_columns` gives that view of a result.

The steps of :func:`multi_head_attention`, one line each, with its shape: step 1 in it,
steps 2-9 in :func:`attention_from_qkv` (which it calls), steps 3-7 in :func:`attention`:

1. :func:`project`: Q = x @ w_q + b_q, K = x @ w_k + b_k, V = x @ w_v + b_v
   (cross-attention, :func:`cross_attention`: Q from the target x_q, K and V from the
   source x_kv; every step after this one is the same, with N_q queries and N_kv keys)
2. :func:`split_heads`: (N, Dk) -> (H, N, Dk/H), head h takes the h-th block of columns
3. scores S = Q Kᵀ per head
4. scale: S · 1/sqrt(d_k)
5. :func:`apply_mask`: masked scores become -inf (their weights exactly 0)
6. :func:`softmax` over the keys (last axis); a fully masked row gives zeros
7. the weighted sum of the values: A V
8. :func:`merge_heads`: (H, N, d_v) -> (N, H·d_v), the heads side by side
9. the output projection: concat @ w_o + b_o

The one switch, ``fused`` (None: :data:`FUSED`, True): by default steps 3-7 run fused
(``fused.attend``: the same numbers to rounding, tested; one N x N array per head, a
vectorised exp, the scores computed when read), what the app runs and what competes with
PyTorch (``bench/engine.py``). ``fused=False``: :func:`attention`, the formula as written.

This file reads in that order: the formula (:func:`attention`, :func:`multi_head_attention`,
:func:`cross_attention` and the steps they call), the masks, the result, the loop form.
Elsewhere, re-exported here: the column layout (:func:`to_columns`), :func:`row_entropy` and
:func:`permute_tokens` in ``attnviz/engine/views.py``; the parameters
(:class:`AttentionParams`) in ``attnviz/engine/params.py``; the input checks in
``attnviz/engine/checks.py``; the decoder pieces (:func:`repeat_kv`, :func:`rope_cos_sin`,
:func:`apply_rope`) in ``attnviz/engine/decoder.py``.
NumPy throughout (numba compiles the exp of the fused path and the addition of the Q, K, V
biases where installed, ``fast_exp``): no Streamlit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.engine import fused as fused_path
from attnviz.engine.checks import (
    check_from_qkv,
    check_loop,
    check_mha,
    check_projections,
    check_sdpa,
)
from attnviz.engine.decoder import repeat_kv
from attnviz.engine.fast_exp import add_rows_inplace as add_rows
from attnviz.engine.params import AttentionParams

__all__ = [
    "FUSED",
    "AttentionResult",
    "Scale",
    "apply_mask",
    "attention",
    "attention_from_qkv",
    "attention_scores",
    "causal_mask",
    "cross_attention",
    "key_padding_mask",
    "loop_attention",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "prefix_mask",
    "project",
    "resolve_scale",
    "scaled_dot_product_attention",
    "sliding_window_mask",
    "softmax",
    "split_heads",
]

Array = NDArray[np.floating]
#: ``True`` = 1/sqrt(d_k), ``False`` = 1, a number = that factor (as in PyTorch).
Scale = bool | float

#: The one switch between the two ways to run steps 3-7: the default of the ``fused``
#: argument of :func:`multi_head_attention`, :func:`attention_from_qkv` and
#: :func:`scaled_dot_product_attention` when it is ``None``. ``True`` (what the app, the
#: presets and the real models run): ``fused.attend`` (BLAS-friendly layouts, vectorised
#: exp, no max shift unless a row needs it, scores computed on first read), 1.3-2x faster
#: from N = 64 with 8 heads (docs/engine.md). ``False``: :func:`attention`, as written.
FUSED = True


# --------------------------------------------------------------------------- the formula


def attention(
    q: Array, k: Array, v: Array, *, scale: Scale = True, mask: ArrayLike | None = None
) -> tuple[Array, Array, Array]:
    """softmax(Q Kᵀ · scale, masked) V, as written: steps 3-7 of the module docstring.

    q (..., N, d_k), k (..., M, d_k), v (..., M, d_v) float arrays of one dtype, leading
    axes broadcast (heads); mask boolean, broadcastable to (..., N, M), True = may attend.
    Shapes are not checked here: :func:`scaled_dot_product_attention` is this function with
    the checks. Returns ``(scores, weights, output)``: (..., N, M), (..., N, M), (..., N, d_v).
    """
    scores = q @ np.swapaxes(k, -1, -2)  # (..., N, M)  3. S = Q Kᵀ
    scores *= resolve_scale(scale, q.shape[-1])  # (..., N, M)  4. · 1/√d_k (or the factor)
    masked = apply_mask(scores, mask)  # (..., N, M)  5. -inf where the mask is False
    weights = softmax(masked)  # (..., N, M)  6. over the keys: unmasked rows sum to 1
    output = weights @ v  # (..., N, d_v)  7. the weighted sum of the values
    return scores, weights, output


def multi_head_attention(
    x: ArrayLike,
    params: AttentionParams,
    *,
    num_heads: int = 1,
    scale: Scale = True,
    mask: ArrayLike | None = None,
    fused: bool | None = None,
    x_kv: ArrayLike | None = None,
) -> AttentionResult:
    """Multi-head self-attention of ``x`` (N, D), as ``torch.nn.MultiheadAttention``::

        Q, K, V = x w_q + b_q, x w_k + b_k, x w_v + b_v
        head_h  = softmax(Q_h K_hᵀ · scale, masked) V_h        for h = 1 .. H
        output  = [head_1 | ... | head_H] w_o + b_o

    Head h uses the h-th contiguous block of Dk/H columns of Q and K and of Dv/H
    columns of V. ``scale=True`` uses 1/sqrt(Dk/H), the per-head width. The result
    keeps the head axis (H = 1 for single-head attention). ``fused``: run steps 3-7 fused
    (True, ``fused.attend``) or as :func:`attention` (False); None follows :data:`FUSED`.
    ``x_kv`` (M, D): cross-attention, the keys and values from this other sequence
    (:func:`cross_attention`, which reads better); the scores are then (H, N, M).
    """
    # the door: x (N, D), the source x_kv (M, D) or None, p in x's dtype, H, mask (N, M)
    x, x_kv, p, h, mask = check_mha(x, params, num_heads, mask, x_kv)
    # 1. project Q from x, K and V from the source (x itself in self-attention)
    q, k, v = _project(x, x_kv, p)  # (N, Dk), (M, Dk), (M, Dv)
    # 2.-9. split the heads, attention per head, merge the heads, the output projection
    return _multi_head(q, k, v, h, h, scale, mask, p.w_o, p.b_o, x, _use_fused(fused), x_kv)


def cross_attention(
    x_q: ArrayLike,
    x_kv: ArrayLike,
    params: AttentionParams,
    *,
    num_heads: int = 1,
    scale: Scale = True,
    mask: ArrayLike | str | None = None,
    fused: bool | None = None,
) -> AttentionResult:
    """Multi-head cross-attention: the target ``x_q`` (N_q, D) asks, the source ``x_kv``
    (N_kv, D) answers, as ``torch.nn.MultiheadAttention(query=x_q, key=x_kv, value=x_kv)``::

        Q = x_q w_q + b_q                  (N_q, Dk)   one query per target token
        K, V = x_kv w_k + b_k, x_kv w_v + b_v   (N_kv, Dk), (N_kv, Dv)   from the source
        head_h = softmax(Q_h K_hᵀ · scale, masked) V_h    (N_q, N_kv) weights per head
        output = [head_1 | ... | head_H] w_o + b_o        (N_q, Dout)

    The steps are those of :func:`multi_head_attention`; only step 1 differs. ``mask``
    (N_q, N_kv) bool, True where a target token may attend to a source token, e.g.
    :func:`key_padding_mask` (the source's padding). ``mask="causal"`` is accepted only
    when N_q == N_kv and refused otherwise: "causal" orders one sequence against itself,
    and a target token may read the whole source. The result's ``weights`` are
    (H, N_q, N_kv): target tokens as rows, source tokens as columns; ``x`` is the target
    and ``x_kv`` the source.
    """
    return multi_head_attention(
        x_q, params, num_heads=num_heads, scale=scale, mask=mask, fused=fused,
        x_kv=x_kv if x_kv is not None else _missing_source(),
    )  # fmt: skip


def _multi_head(
    q: Array,
    k: Array,
    v: Array,
    h: int,
    g: int,
    scale: Scale,
    mask: NDArray[np.bool_] | None,
    w_o: Array | None,
    b_o: Array | None,
    x: Array | None,
    fused: bool,
    x_kv: Array | None = None,
) -> AttentionResult:
    """Steps 2-9 on checked q (N, H·d_k), k (M, G·d_k), v (M, G·d_v) with H = ``h`` query
    heads and G = ``g`` key/value heads; mask (N, M) or None; x_kv the source of
    cross-attention (None in self-attention)."""
    # 2. split the heads: head i takes the i-th block of d_k (d_v) columns; with G < H
    #    key/value heads, each serves H/G query heads (G = H: no repeat)
    qh = split_heads(q, h)  # (H, N, d_k)
    kh, vh = split_heads(k, g), split_heads(v, g)  # (G, M, d_k), (G, M, d_v)
    if g < h:  # (G, M, d) -> (H, M, d)
        kh, vh = repeat_kv(kh, h // g), repeat_kv(vh, h // g)
    factor = resolve_scale(scale, qh.shape[-1])  # 1/√d_k for scale=True
    # 3.-7. per head: S = Q Kᵀ, · scale, masked -> -inf, softmax over the keys, A V
    if fused:  # the same numbers, faster (attnviz/engine/fused.py)
        scores, weights, head_out = fused_path.attend(qh, kh, vh, factor, mask)
    else:
        scores, weights, head_out = attention(qh, kh, vh, scale=factor, mask=mask)
    # scores, weights (H, N, M); head_out (H, N, d_v)
    # 8. merge the heads: their outputs side by side
    concat = merge_heads(head_out)  # (N, H·d_v)
    # 9. the output projection (none: the output is the concatenation)
    output = concat if w_o is None else project(concat, w_o, b_o)  # (N, Dout)
    result = _FusedResult if fused else AttentionResult  # fused: scores computed when read
    return result(
        queries=qh, keys=kh, values=vh, scores=scores,
        mask=None if mask is None else np.array(mask), weights=weights,
        head_outputs=head_out, concat=concat, output=output, scale=factor, x=x, x_kv=x_kv,
    )  # fmt: skip


def project(x: Array, w: Array, b: Array | None = None) -> Array:
    """x @ w + b: (N, D) @ (D, d) -> (N, d)."""
    y = x @ w
    if b is not None:
        y += b
    return y


def _project(x: Array, x_kv: Array | None, p: AttentionParams) -> tuple[Array, Array, Array]:
    """Step 1: Q = x w_q + b_q, K = x_kv w_k + b_k, V = x_kv w_v + b_v; in self-attention
    (x_kv None) by one (N, D) @ (D, 2Dk + Dv) matmul and one add (the same bits), views.
    Finite, or an error naming the projection that overflowed the dtype."""
    dk = p.w_q.shape[1]
    if x_kv is None:  # [w_q | w_k | w_v], [b_q | b_k | b_v], kept by the parameters
        w, b = p.qkv()
        qkv = x @ w  # (N, 2Dk + Dv)
        # + b in one compiled pass, which also says whether every entry stayed finite
        finite = np.isfinite(np.add.reduce(qkv, axis=None)) if b is None else add_rows(qkv, b)
        q, k, v = qkv[:, :dk], qkv[:, dk : 2 * dk], qkv[:, 2 * dk :]  # views
    else:
        q = project(x, p.w_q, p.b_q)  # (N, Dk)
        k, v = project(x_kv, p.w_k, p.b_k), project(x_kv, p.w_v, p.b_v)  # (M, Dk), (M, Dv)
        finite = np.isfinite(np.add.reduce(q, axis=None) + k.sum() + v.sum())
    if not finite:  # a finite sum: every entry finite (check_finite)
        check_projections(q, k, v)  # raises, naming the one that overflowed
    return q, k, v


def split_heads(x: Array, num_heads: int) -> Array:
    """(N, D) -> (H, N, D/H): head h gets the h-th contiguous block of D/H columns."""
    n, d = x.shape
    if num_heads < 1 or d % num_heads:
        raise ValueError(
            f"cannot split width {d} (array of shape {n}x{d}) into {num_heads} heads: "
            f"the width must be divisible by the number of heads"
        )
    return x.reshape(n, num_heads, d // num_heads).transpose(1, 0, 2)  # (H, N, D/H)


def merge_heads(x: Array) -> Array:
    """(H, N, d) -> (N, H*d), the inverse of :func:`split_heads` (concatenation)."""
    h, n, d = x.shape
    return x.transpose(1, 0, 2).reshape(n, h * d)  # (N, H*d)


def resolve_scale(scale: Scale, d_k: int) -> float:
    """The factor that multiplies the scores: 1/sqrt(d_k) for True, 1 for False."""
    if isinstance(scale, bool | np.bool_):
        return 1.0 / math.sqrt(d_k) if scale else 1.0
    try:
        f = float(scale)
    except (TypeError, ValueError):
        raise ValueError(f"scale must be True, False or a number, got {scale!r}") from None
    if not math.isfinite(f):
        raise ValueError(f"scale must be finite, got {scale!r}")
    return f


def apply_mask(scores: Array, mask: NDArray[np.bool_] | None) -> Array:
    """Scores with -inf where ``mask`` is False (a new array); ``scores`` if no mask."""
    if mask is None:
        return scores
    return np.where(mask, scores, scores.dtype.type(-np.inf))


def softmax(x: ArrayLike, axis: int = -1) -> Array:
    """Numerically stable softmax along ``axis``.

    The maximum of each slice is subtracted before exponentiating, so inputs such as
    1e4 stay finite. A slice that is entirely ``-inf`` (a fully masked row) gives all
    zeros rather than NaN. Floating dtypes are kept (float32 stays float32); other
    inputs become float64. Returns a new array.
    """
    x = np.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    m[np.isneginf(m)] = 0  # an all -inf slice: shift by 0, not -inf (-inf - -inf is NaN)
    e = np.subtract(x, m)  # the only full-size allocation; everything below is in place
    return _exp_normalize(e, axis)


def _exp_normalize(e: Array, axis: int) -> Array:
    """In place: exp(e) / sum(exp(e)) along ``axis``, for e already shifted by the slice
    maximum (so the largest entry is 0 and each sum is >= 1). Slices that are all -inf sum
    to 0 and stay all zeros."""
    np.exp(e, out=e)
    s = np.sum(e, axis=axis, keepdims=True)  # (..., 1)
    s[s == 0] = 1  # all -inf: e is all zeros, keep it so
    np.reciprocal(s, out=s)  # one division per slice, then one multiplication per entry
    e *= s
    return e


def attention_from_qkv(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    num_heads: int = 1,
    scale: Scale = True,
    mask: ArrayLike | None = None,
    w_o: Array | None = None,
    b_o: Array | None = None,
    x: Array | None = None,
    num_kv_heads: int | None = None,
    fused: bool | None = None,
) -> AttentionResult:
    """Multi-head attention from already projected Q (N, Dk), K (M, Dk), V (M, Dv):
    steps 2-9 of :func:`multi_head_attention` (both run them in ``_multi_head`` below).

    Used where a notebook gives Q, K and V directly (the numerical example of ``004_…``).
    Grouped-query attention (Llama, SmolLM2): with ``num_kv_heads`` = G, K is (M, G·d) and
    V is (M, G·d_v) with d = Dk / num_heads: G key/value heads, each shared by
    num_heads / G consecutive query heads (query head h uses key/value head
    h // (num_heads / G), :func:`repeat_kv`). The result's ``keys`` and ``values`` are
    the repeated ones, (H, M, d), so they line up with ``queries`` head by head.
    Multi-head attention is the case G = num_heads (each head its own key/value head).
    ``fused``: as in :func:`multi_head_attention`.
    """
    # the door: q, k, v of one float dtype, H and G heads, w_o and b_o, the mask (N, M)
    q, k, v, h, g, w_o, b_o, mask = check_from_qkv(q, k, v, num_heads, num_kv_heads, w_o, b_o, mask)
    return _multi_head(q, k, v, h, g, scale, mask, w_o, b_o, x, _use_fused(fused))


def scaled_dot_product_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    scale: Scale = True,
    mask: ArrayLike | None = None,
    fused: bool | None = None,
) -> tuple[Array, Array]:
    """softmax(Q Kᵀ * scale, masked) V.

    Args:
        q: queries (..., N, d_k).
        k: keys (..., M, d_k).
        v: values (..., M, d_v). Leading axes broadcast (for example heads).
        scale: True for 1/sqrt(d_k), False for 1, or a number (PyTorch's meaning).
        mask: boolean, broadcastable to (..., N, M); True = may attend.
        fused: run the fused ``fused.attend`` (True) or :func:`attention` (False); None
            follows :data:`FUSED`. The same numbers to rounding either way.

    Returns:
        ``(weights, output)``: weights (..., N, M), each unmasked row summing to 1 and
        masked entries exactly 0; output (..., N, d_v).
    """
    fused = _use_fused(fused)
    q, k, v, m = check_sdpa(q, k, v, mask)  # (*lead, N, d_k), (*lead, M, d_k), (..., M, d_v)
    factor = resolve_scale(scale, q.shape[-1])
    if fused:
        _, weights, output = fused_path.attend(q, k, v, factor, m)
    else:
        _, weights, output = attention(q, k, v, scale=factor, mask=m)
    return weights, output  # (*lead, N, M), (*lead, N, d_v)


def _use_fused(fused: object) -> bool:
    """The ``fused`` argument resolved: None means the module default :data:`FUSED`."""
    if fused is None:
        return bool(FUSED)
    if not isinstance(fused, bool | np.bool_):
        raise ValueError(f"fused must be True, False or None (engine.FUSED), got {fused!r}")
    return bool(fused)


def attention_scores(q: Array, k: Array, scale: Scale = True) -> Array:
    """S = Q Kᵀ * scale, shape (..., N, M) from q (..., N, d_k) and k (..., M, d_k)."""
    s = q @ np.swapaxes(k, -1, -2)  # (..., N, M)
    f = resolve_scale(scale, q.shape[-1])
    if f != 1.0:
        s *= s.dtype.type(f)  # keep float32 float32
    return s


# --------------------------------------------------------------------------- masks


def causal_mask(n: int) -> NDArray[np.bool_]:
    """(n, n) boolean mask, True where query i may attend to key j (j <= i)."""
    if n < 1:
        raise ValueError(f"causal_mask needs n >= 1, got n={n}")
    return np.tri(n, dtype=bool)


def padding_mask(n: int, n_pad: int) -> NDArray[np.bool_]:
    """(n, n) boolean mask where the last ``n_pad`` tokens are padding.

    No query may attend to a padding key. Padding queries keep their row (they attend
    to the real tokens), as in PyTorch's ``key_padding_mask``. With ``n_pad == n``
    every row is fully masked and its weights are all zero.
    """
    if n < 1:
        raise ValueError(f"padding_mask needs n >= 1, got n={n}")
    if not 0 <= n_pad <= n:
        raise ValueError(f"padding_mask needs 0 <= n_pad <= n, got n_pad={n_pad}, n={n}")
    keep = np.arange(n) < n - n_pad
    return np.broadcast_to(keep, (n, n)).copy()


def key_padding_mask(n_q: int, n_kv: int, n_pad: int) -> NDArray[np.bool_]:
    """(n_q, n_kv) cross-attention mask where the source's last ``n_pad`` tokens are
    padding: no target token attends to them (PyTorch's ``key_padding_mask``, negated:
    True here = may attend). ``n_pad == n_kv`` masks every row: its weights are all 0."""
    if n_q < 1 or n_kv < 1:
        raise ValueError(f"key_padding_mask needs n_q >= 1 and n_kv >= 1, got {n_q} and {n_kv}")
    if not 0 <= n_pad <= n_kv:
        raise ValueError(
            f"key_padding_mask needs 0 <= n_pad <= n_kv, got n_pad={n_pad}, n_kv={n_kv}"
        )
    keep = np.arange(n_kv) < n_kv - n_pad  # (n_kv,) the real source tokens
    return np.broadcast_to(keep, (n_q, n_kv)).copy()


def sliding_window_mask(n: int, window: int) -> NDArray[np.bool_]:
    """(n, n) causal sliding-window mask: query i may attend to keys i - window < j <= i,
    the last ``window`` tokens itself included, as in Mistral and Gemma's local layers.
    ``window == n`` is the causal mask; ``window == 1``: each token sees only itself."""
    if n < 1:
        raise ValueError(f"sliding_window_mask needs n >= 1, got n={n}")
    if not 1 <= window <= n:
        raise ValueError(f"sliding_window_mask needs 1 <= window <= n, got window={window}, n={n}")
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]  # (n, 1) queries, (1, n) keys
    return (j <= i) & (j > i - window)  # (n, n)


def prefix_mask(n: int, prefix: int) -> NDArray[np.bool_]:
    """(n, n) prefix-LM mask: every query may attend to the keys j < ``prefix`` (the
    prefix, seen in both directions); after it the mask is causal (j <= i), as in T5's
    prefix LM and PaLM. ``prefix == 0`` is the causal mask, ``prefix == n`` no mask."""
    if n < 1:
        raise ValueError(f"prefix_mask needs n >= 1, got n={n}")
    if not 0 <= prefix <= n:
        raise ValueError(f"prefix_mask needs 0 <= prefix <= n, got prefix={prefix}, n={n}")
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]  # (n, 1) queries, (1, n) keys
    return (j <= i) | (j < prefix)  # (n, n)


# --------------------------------------------------------------------------- the result


@dataclass(frozen=True, eq=False)
class AttentionResult:
    """Every intermediate of one multi-head attention pass (row layout).

    queries (H, N, Dk/H); keys (H, M, Dk/H); values (H, M, Dv/H); scores (H, N, M),
    scaled and before masking; mask (N, M) bool or None; weights (H, N, M); head_outputs
    (H, N, Dv/H); concat (N, Dv); output (N, Dout). ``scale`` is the factor used. In
    self-attention M = N; in cross-attention N counts the target's tokens (``x``), M the
    source's (``x_kv``, None in self-attention).
    """

    queries: Array
    keys: Array
    values: Array
    scores: Array
    mask: NDArray[np.bool_] | None
    weights: Array
    head_outputs: Array
    concat: Array
    output: Array
    scale: float = 1.0
    x: Array | None = field(default=None, repr=False)
    x_kv: Array | None = field(default=None, repr=False)

    @property
    def num_heads(self) -> int:
        return int(self.weights.shape[0])

    @property
    def n_tokens(self) -> int:
        return int(self.weights.shape[1])

    @property
    def is_cross(self) -> bool:
        """True for cross-attention: the keys and values came from another sequence."""
        return self.x_kv is not None

    @property
    def masked_scores(self) -> Array:
        """Scores with -inf where the mask forbids attention (what the softmax sees)."""
        return apply_mask(self.scores, self.mask)


@dataclass(frozen=True, eq=False)
class _FusedResult(AttentionResult):
    """The :class:`AttentionResult` of the fused path: ``scores`` is computed when it is
    first read (Q Kᵀ once more, the same numbers the weights were computed from), so a
    pass that only needs the weights and the output, like ``torch.nn.MultiheadAttention``,
    does not pay for an extra N x N array. Otherwise an AttentionResult like any other."""

    scores: Array = fused_path.DeferredField()  # type: ignore[assignment]  # computed when read


# --------------------------------------------------------------------------- other views


def loop_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    scale: Scale = True,
    mask: ArrayLike | None = None,
) -> tuple[Array, Array]:
    """The per-query loop of notebook 12.1: x'_n = sum_m a[x_m, x_n] v_m.

    For each query n, the dot products with every key, their softmax, then the weighted
    sum of values, one token at a time. Same arguments and returns as
    :func:`scaled_dot_product_attention` for 2-D q (N, d_k), k (M, d_k), v (M, d_v);
    slow on purpose, to show that it equals the matrix form.
    """
    q, k, v, full = check_loop(q, k, v, mask)  # the door: float arrays, the mask (N, M)
    n_q, n_k = q.shape[0], k.shape[0]
    f = resolve_scale(scale, q.shape[1])
    weights = np.zeros((n_q, n_k), dtype=q.dtype)
    out = np.zeros((n_q, v.shape[1]), dtype=q.dtype)
    for n in range(n_q):
        dots = np.array([k[m] @ q[n] * f for m in range(n_k)])
        if full is not None:
            dots = np.where(full[n], dots, -np.inf)
        a = softmax(dots)
        weights[n] = a
        for m in range(n_k):
            out[n] += a[m] * v[m]
    return weights, out


# --------------------------------------------------------------------------- errors


def _missing_source() -> Array:
    raise ValueError("cross_attention needs the source x_kv (N_kv, D), got None")
