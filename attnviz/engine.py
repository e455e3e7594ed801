"""Scaled dot-product and multi-head self-attention in pure NumPy.

Row layout throughout, as in PyTorch: one token per row, ``x`` has shape (N, D).
The UDL book's column layout (D x N, ``Omega x + beta``) is the same computation
transposed; :func:`to_columns` gives that view of a result.

The steps of :func:`multi_head_attention`, one line each, with its shape: step 1 in it,
steps 2-9 in :func:`attention_from_qkv` (which it calls), steps 3-7 in :func:`attention`:

1. :func:`project`: Q = x @ w_q + b_q, K = x @ w_k + b_k, V = x @ w_v + b_v
2. :func:`split_heads`: (N, Dk) -> (H, N, Dk/H), head h takes the h-th block of columns
3. scores S = Q Kᵀ per head
4. scale: S · 1/sqrt(d_k)
5. :func:`apply_mask`: masked scores become -inf (their weights exactly 0)
6. :func:`softmax` over the keys (last axis); a fully masked row gives zeros
7. the weighted sum of the values: A V
8. :func:`merge_heads`: (H, N, d_v) -> (N, H·d_v), the heads side by side
9. the output projection: concat @ w_o + b_o

The one switch, ``fused`` (its default for ``fused=None`` the constant :data:`FUSED`,
False): ``fused=True`` runs steps 3-7 fused instead, in ``_attend`` at the end of this
module: the same numbers to rounding (tested), one N x N array per head instead of two or
three, the scores computed only when read; it is the path that competes with PyTorch
(``bench/engine.py``).
Everything here is plain NumPy: no Streamlit, no plotting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "FUSED",
    "AttentionParams",
    "AttentionResult",
    "ColumnView",
    "Init",
    "Scale",
    "apply_mask",
    "apply_rope",
    "attention",
    "attention_from_qkv",
    "attention_scores",
    "causal_mask",
    "check_finite",
    "loop_attention",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "permute_tokens",
    "prefix_mask",
    "project",
    "repeat_kv",
    "resolve_scale",
    "rope_cos_sin",
    "row_entropy",
    "scaled_dot_product_attention",
    "sliding_window_mask",
    "softmax",
    "split_heads",
    "to_columns",
]

Array = NDArray[np.floating]
#: ``True`` = 1/sqrt(d_k), ``False`` = 1, a number = that factor (as in PyTorch).
Scale = bool | float
Init = Literal["normal", "uniform", "xavier"]

#: The one switch between the two ways to run steps 3-7: the default of the ``fused``
#: argument of :func:`multi_head_attention`, :func:`attention_from_qkv` and
#: :func:`scaled_dot_product_attention` when it is ``None``. ``False``: :func:`attention`,
#: the formula as written (what the app runs: up to N = 64 both paths take under 1.5 ms;
#: at N = 512 the fused path saves 15-20 ms of a 130-200 ms rerun, docs/engine.md).
#: ``True``: ``_attend``, fused (BLAS-friendly layouts, no max shift unless a row needs
#: it, scores computed on first read): about twice as fast at N >= 256 with 8 heads.
FUSED = False


# --------------------------------------------------------------------------- checks


def _shape(a: ArrayLike) -> str:
    return "x".join(str(s) for s in np.shape(a)) or "scalar"


def check_finite(name: str, a: NDArray) -> None:
    """Raise ``ValueError`` if ``a`` holds NaN or ±inf, naming the array and the place."""
    if a.dtype.kind not in "fc" or np.isfinite(np.sum(a)):  # fast: no temporary array
        return  # (a finite sum means every entry is finite; an overflowing sum checks all)
    if not np.isfinite(a).all():
        bad = np.argwhere(~np.isfinite(a))[0]
        raise ValueError(
            f"{name} (shape {_shape(a)}) contains NaN or inf, first at index "
            f"{tuple(int(i) for i in bad)}: {a[tuple(bad)]!r}"
        )


def _check_heads(num_heads: object) -> int:
    if isinstance(num_heads, bool) or not isinstance(num_heads, int | np.integer):
        raise ValueError(f"num_heads must be an integer >= 1, got {num_heads!r}")
    return int(num_heads)


def _as_float(name: str, a: ArrayLike, dtype: np.dtype | None = None) -> Array:
    arr = np.asarray(a)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype} (shape {_shape(arr)})")
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    elif arr.dtype.kind != "f":
        arr = arr.astype(np.float64)
    check_finite(name, arr)
    return arr


# --------------------------------------------------------------------------- softmax


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


# --------------------------------------------------------------------------- core


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


def attention_scores(q: Array, k: Array, scale: Scale = True) -> Array:
    """S = Q Kᵀ * scale, shape (..., N, M) from q (..., N, d_k) and k (..., M, d_k)."""
    s = q @ np.swapaxes(k, -1, -2)  # (..., N, M)
    f = resolve_scale(scale, q.shape[-1])
    if f != 1.0:
        s *= s.dtype.type(f)  # keep float32 float32
    return s


def _check_mask(mask: ArrayLike, shape: tuple[int, ...]) -> NDArray[np.bool_]:
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise ValueError(
            f"mask must be a boolean array (True = may attend), got dtype {m.dtype} "
            f"with shape {_shape(m)}"
        )
    try:
        np.broadcast_shapes(m.shape, shape)
    except ValueError:
        raise ValueError(
            f"mask of shape {_shape(m)} does not broadcast to the scores' shape "
            f"{'x'.join(map(str, shape))} (..., N queries, M keys)"
        ) from None
    return m


def apply_mask(scores: Array, mask: NDArray[np.bool_] | None) -> Array:
    """Scores with -inf where ``mask`` is False (a new array); ``scores`` if no mask."""
    if mask is None:
        return scores
    return np.where(mask, scores, scores.dtype.type(-np.inf))


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
        fused: run :func:`attention` (False) or the fused ``_attend`` (True); None
            follows :data:`FUSED`. The same numbers to rounding either way.

    Returns:
        ``(weights, output)``: weights (..., N, M), each unmasked row summing to 1 and
        masked entries exactly 0; output (..., N, d_v).
    """
    return _sdpa(q, k, v, scale=scale, mask=mask, fused=_use_fused(fused))


def _sdpa(
    q: ArrayLike, k: ArrayLike, v: ArrayLike, *, scale: Scale, mask: ArrayLike | None, fused: bool
) -> tuple[Array, Array]:
    q, k, v = (np.asarray(a) for a in (q, k, v))
    dtype = np.result_type(q, k, v, np.float32)
    q, k, v = (_as_float(n, a, dtype) for n, a in (("q", q), ("k", k), ("v", v)))
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ValueError(
            f"q, k and v need at least 2 axes (..., tokens, features); got q {_shape(q)}, "
            f"k {_shape(k)}, v {_shape(v)}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q (..., N, d_k) and k (..., M, d_k) must share d_k; got q {_shape(q)}, k {_shape(k)}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k (..., M, d_k) and v (..., M, d_v) must have the same number of keys M; "
            f"got k {_shape(k)}, v {_shape(v)}"
        )
    if q.shape[-2] < 1 or k.shape[-2] < 1 or q.shape[-1] < 1:
        raise ValueError(f"empty attention: q {_shape(q)}, k {_shape(k)}, v {_shape(v)}")
    try:
        lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the leading axes of q {_shape(q)}, k {_shape(k)} and v {_shape(v)} do not broadcast"
        ) from None
    m = None
    if mask is not None:
        m = _check_mask(mask, (*lead, q.shape[-2], k.shape[-2]))
        lead = np.broadcast_shapes(lead, m.shape[:-2])
    # one leading shape for all (views, no copies): weights (*lead, N, M)
    q = np.broadcast_to(q, (*lead, *q.shape[-2:]))
    k = np.broadcast_to(k, (*lead, *k.shape[-2:]))
    factor = resolve_scale(scale, q.shape[-1])
    if fused:
        _, weights, output = _attend(q, k, v, factor, m)
    else:
        _, weights, output = attention(q, k, v, scale=factor, mask=m)
    return weights, output


def _use_fused(fused: object) -> bool:
    """The ``fused`` argument resolved: None means the module default :data:`FUSED`."""
    if fused is None:
        return bool(FUSED)
    if not isinstance(fused, bool | np.bool_):
        raise ValueError(f"fused must be True, False or None (engine.FUSED), got {fused!r}")
    return bool(fused)


# --------------------------------------------------------------------------- heads


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


# --------------------------------------------------------------------------- parameters


@dataclass(frozen=True, eq=False)
class AttentionParams:
    """Projection weights in row layout: Q = x @ w_q + b_q, and so on.

    Shapes: w_q (D, Dk), w_k (D, Dk), w_v (D, Dv), b_q (Dk,), b_k (Dk,), b_v (Dv,),
    w_o (Dv, Dout), b_o (Dout,). Biases and the output projection are optional;
    without ``w_o`` the output of :func:`multi_head_attention` is the concatenation.
    """

    w_q: Array
    w_k: Array
    w_v: Array
    b_q: Array | None = None
    b_k: Array | None = None
    b_v: Array | None = None
    w_o: Array | None = None
    b_o: Array | None = None

    def __post_init__(self) -> None:
        for name in ("w_q", "w_k", "w_v", "b_q", "b_k", "b_v", "w_o", "b_o"):
            a = getattr(self, name)
            if a is None:
                continue
            a = _as_float(name, a)
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        for name in ("w_q", "w_k", "w_v"):
            if getattr(self, name).ndim != 2:
                raise ValueError(
                    f"{name} must be 2-D (D, d), got shape {_shape(getattr(self, name))}"
                )
        d = self.w_q.shape[0]
        if self.w_k.shape != self.w_q.shape:
            raise ValueError(
                f"w_k must have the shape of w_q (D, Dk); got w_q {_shape(self.w_q)}, "
                f"w_k {_shape(self.w_k)}"
            )
        if self.w_v.shape[0] != d:
            raise ValueError(
                f"w_v must have D={d} rows like w_q; got w_q {_shape(self.w_q)}, "
                f"w_v {_shape(self.w_v)}"
            )
        for b, w in (("b_q", "w_q"), ("b_k", "w_k"), ("b_v", "w_v"), ("b_o", "w_o")):
            bias, weight = getattr(self, b), getattr(self, w)
            if bias is None:
                continue
            if weight is None:
                raise ValueError(f"{b} given without {w}")
            if bias.shape != (weight.shape[1],):
                raise ValueError(
                    f"{b} must have shape ({weight.shape[1]},) to match {w} "
                    f"{_shape(weight)}; got {_shape(bias)}"
                )
        if self.w_o is not None and (self.w_o.ndim != 2 or self.w_o.shape[0] != self.d_v):
            raise ValueError(
                f"w_o must have shape (Dv, Dout) with Dv={self.d_v} (the width of w_v "
                f"{_shape(self.w_v)}); got {_shape(self.w_o)}"
            )

    @property
    def d_model(self) -> int:
        return int(self.w_q.shape[0])

    @property
    def d_k(self) -> int:
        return int(self.w_q.shape[1])

    @property
    def d_v(self) -> int:
        return int(self.w_v.shape[1])

    @property
    def d_out(self) -> int:
        return int(self.w_o.shape[1]) if self.w_o is not None else self.d_v

    @cached_property
    def w_qkv(self) -> Array:
        """[w_q | w_k | w_v], shape (D, 2 Dk + Dv): one matmul projects Q, K and V."""
        w = np.concatenate([self.w_q, self.w_k, self.w_v], axis=1)  # (D, 2Dk+Dv)
        w.setflags(write=False)
        return w

    @cached_property
    def b_qkv(self) -> Array | None:
        """[b_q | b_k | b_v] (2 Dk + Dv,), zeros for missing biases; None if all are missing."""
        if self.b_q is None and self.b_k is None and self.b_v is None:
            return None
        parts = [
            np.zeros(w.shape[1], self.w_q.dtype) if b is None else b
            for b, w in ((self.b_q, self.w_q), (self.b_k, self.w_k), (self.b_v, self.w_v))
        ]
        b = np.concatenate(parts)  # (2Dk+Dv,)
        b.setflags(write=False)
        return b

    def astype(self, dtype: np.dtype | type) -> AttentionParams:
        """The same parameters in another float dtype (for float32 runs)."""
        return AttentionParams(
            **{
                k: None if getattr(self, k) is None else getattr(self, k).astype(dtype)
                for k in ("w_q", "w_k", "w_v", "b_q", "b_k", "b_v", "w_o", "b_o")
            }
        )

    @classmethod
    def random(
        cls,
        d_model: int,
        *,
        d_k: int | None = None,
        d_v: int | None = None,
        d_out: int | None = None,
        seed: int = 0,
        init: Init = "normal",
        bias: bool = True,
        out_proj: bool = True,
    ) -> AttentionParams:
        """Seeded random parameters.

        ``init``: "normal" draws N(0, 1) as the UDL notebooks do; "uniform" draws
        U[0, 1) as ``np.random.rand``/``torch.rand`` in the other notebooks; "xavier"
        draws U(-a, a) with a = sqrt(6 / (fan_in + fan_out)), biases
        U(-1/sqrt(fan_in), 1/sqrt(fan_in)) as ``nn.Linear``. Draw order: w_q, w_k, w_v,
        b_q, b_k, b_v, w_o, b_o (from ``np.random.default_rng(seed)``).
        Defaults: d_k = d_v = d_out = d_model.
        """
        if d_model < 1:
            raise ValueError(f"d_model must be >= 1, got {d_model}")
        d_k = d_model if d_k is None else d_k
        d_v = d_model if d_v is None else d_v
        d_out = d_model if d_out is None else d_out
        for name, val in (("d_k", d_k), ("d_v", d_v), ("d_out", d_out)):
            if val < 1:
                raise ValueError(f"{name} must be >= 1, got {val}")
        if init not in ("normal", "uniform", "xavier"):
            raise ValueError(f"init must be 'normal', 'uniform' or 'xavier', got {init!r}")
        rng = np.random.default_rng(seed)

        def weight(fan_in: int, fan_out: int) -> Array:
            if init == "normal":
                return rng.standard_normal((fan_in, fan_out))
            if init == "uniform":
                return rng.random((fan_in, fan_out))
            a = math.sqrt(6.0 / (fan_in + fan_out))
            return rng.uniform(-a, a, (fan_in, fan_out))

        def vec(fan_in: int, n: int) -> Array:
            if init == "normal":
                return rng.standard_normal(n)
            if init == "uniform":
                return rng.random(n)
            a = 1.0 / math.sqrt(fan_in)
            return rng.uniform(-a, a, n)

        w_q, w_k, w_v = weight(d_model, d_k), weight(d_model, d_k), weight(d_model, d_v)
        b_q = b_k = b_v = w_o = b_o = None
        if bias:
            b_q, b_k, b_v = vec(d_model, d_k), vec(d_model, d_k), vec(d_model, d_v)
        if out_proj:
            w_o = weight(d_v, d_out)
            if bias:
                b_o = vec(d_v, d_out)
        return cls(w_q, w_k, w_v, b_q, b_k, b_v, w_o, b_o)


# --------------------------------------------------------------------------- result


@dataclass(frozen=True, eq=False)
class AttentionResult:
    """Every intermediate of one multi-head attention pass (row layout).

    queries, keys (H, N, Dk/H); values (H, N, Dv/H); scores (H, N, N), scaled and
    before masking; mask (N, N) bool or None; weights (H, N, N); head_outputs
    (H, N, Dv/H); concat (N, Dv); output (N, Dout). ``scale`` is the factor used.
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

    @property
    def num_heads(self) -> int:
        return int(self.weights.shape[0])

    @property
    def n_tokens(self) -> int:
        return int(self.weights.shape[1])

    @property
    def masked_scores(self) -> Array:
        """Scores with -inf where the mask forbids attention (what the softmax sees)."""
        return apply_mask(self.scores, self.mask)


def project(x: Array, w: Array, b: Array | None = None) -> Array:
    """x @ w + b: (N, D) @ (D, d) -> (N, d)."""
    y = x @ w
    if b is not None:
        y += b
    return y


def _full_mask(mask: ArrayLike | None, n: int, m: int) -> NDArray[np.bool_] | None:
    if mask is None:
        return None
    mk = _check_mask(mask, (n, m))
    if mk.ndim > 2:
        raise ValueError(
            f"mask for multi_head_attention must be (N, M) = ({n}, {m}) or broadcast to it; "
            f"got {_shape(mk)}"
        )
    return np.broadcast_to(mk, (n, m))


# --------------------------------------------------------------------------- multi-head


def multi_head_attention(
    x: ArrayLike,
    params: AttentionParams,
    *,
    num_heads: int = 1,
    scale: Scale = True,
    mask: ArrayLike | None = None,
    fused: bool | None = None,
) -> AttentionResult:
    """Multi-head self-attention of ``x`` (N, D), as ``torch.nn.MultiheadAttention``::

        Q, K, V = x w_q + b_q, x w_k + b_k, x w_v + b_v
        head_h  = softmax(Q_h K_hᵀ · scale, masked) V_h        for h = 1 .. H
        output  = [head_1 | ... | head_H] w_o + b_o

    Head h uses the h-th contiguous block of Dk/H columns of Q and K and of Dv/H
    columns of V. ``scale=True`` uses 1/sqrt(Dk/H), the per-head width. The result
    keeps the head axis (H = 1 for single-head attention). ``fused``: run steps 3-7 as
    :func:`attention` (False) or fused (True); None follows :data:`FUSED`.
    """
    x, p, h = _check_mha(x, params, num_heads)  # x (N, D); p in x's dtype; h heads
    mask = _full_mask(mask, x.shape[0], x.shape[0])  # (N, N) or None
    # 1. project Q, K and V (one token per row)
    q = project(x, p.w_q, p.b_q)  # (N, Dk)
    k = project(x, p.w_k, p.b_k)  # (N, Dk)
    v = project(x, p.w_v, p.b_v)  # (N, Dv)
    _check_projections(q, k, v)
    # 2.-9. split the heads, attention per head, merge the heads, the output projection
    return _multi_head(q, k, v, h, h, scale, mask, p.w_o, p.b_o, x, _use_fused(fused))


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
    q, k, v, h, g, w_o, b_o = _check_from_qkv(q, k, v, num_heads, num_kv_heads, w_o, b_o)
    mask = _full_mask(mask, q.shape[0], k.shape[0])  # (N, M) or None
    return _multi_head(q, k, v, h, g, scale, mask, w_o, b_o, x, _use_fused(fused))


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
) -> AttentionResult:
    """Steps 2-9 on checked q (N, H·d_k), k (M, G·d_k), v (M, G·d_v) with H = ``h`` query
    heads and G = ``g`` key/value heads; mask (N, M) or None."""
    # 2. split the heads: head i takes the i-th block of d_k (d_v) columns; with G < H
    #    key/value heads, each serves H/G query heads (G = H: no repeat)
    qh = split_heads(q, h)  # (H, N, d_k)
    kh = repeat_kv(split_heads(k, g), h // g)  # (G, M, d_k) -> (H, M, d_k)
    vh = repeat_kv(split_heads(v, g), h // g)  # (G, M, d_v) -> (H, M, d_v)
    factor = resolve_scale(scale, qh.shape[-1])  # 1/√d_k for scale=True
    # 3.-7. per head: S = Q Kᵀ, · scale, masked -> -inf, softmax over the keys, A V
    if fused:  # the same numbers, faster at large N (the end of this module)
        scores, weights, head_out = _attend(qh, kh, vh, factor, mask)
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
        head_outputs=head_out, concat=concat, output=output, scale=factor, x=x,
    )  # fmt: skip


def _check_mha(
    x: ArrayLike, params: AttentionParams, num_heads: int
) -> tuple[Array, AttentionParams, int]:
    """x (N, D) as a float array, the parameters in its dtype and H, checked against each
    other."""
    if not isinstance(params, AttentionParams):
        raise ValueError(f"params must be AttentionParams, got {type(params).__name__}")
    x = np.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"x must be 2-D (N tokens, D features), got shape {_shape(x)}")
    n, d = x.shape
    if n < 1 or d < 1:
        raise ValueError(f"x must have N >= 1 tokens and D >= 1 features, got shape {n}x{d}")
    dtype = np.result_type(x, params.w_q, np.float32)
    x = _as_float("x", x, dtype)
    if d != params.d_model:
        raise ValueError(
            f"x has D={d} features (shape {n}x{d}) but w_q expects D={params.d_model} "
            f"(w_q shape {_shape(params.w_q)})"
        )
    num_heads = _check_heads(num_heads)
    if num_heads < 1 or params.d_k % num_heads or params.d_v % num_heads:
        raise ValueError(
            f"num_heads={num_heads} must divide Dk={params.d_k} (w_q {_shape(params.w_q)}) "
            f"and Dv={params.d_v} (w_v {_shape(params.w_v)})"
        )
    return x, params if params.w_q.dtype == dtype else params.astype(dtype), num_heads


def _check_projections(q: Array, k: Array, v: Array) -> None:
    """Q, K and V finite: a projection may overflow the dtype even when x and w are finite."""
    if np.isfinite(np.sum(q) + np.sum(k) + np.sum(v)):  # fast (as check_finite)
        return
    for name, a in (("Q = x @ w_q + b_q", q), ("K = x @ w_k + b_k", k), ("V = x @ w_v + b_v", v)):
        check_finite(f"{name} (overflow?)", a)


def _check_from_qkv(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    num_heads: int,
    num_kv_heads: int | None,
    w_o: ArrayLike | None,
    b_o: ArrayLike | None,
) -> tuple[Array, Array, Array, int, int, Array | None, Array | None]:
    """q, k, v of one float dtype, H and G (the numbers of query and key/value heads), w_o
    and b_o in that dtype, all checked (the arguments of :func:`attention_from_qkv`)."""
    q, k, v, dtype = _check_qkv(q, k, v)
    num_heads = _check_heads(num_heads)
    if num_kv_heads is None:
        _check_mha_widths(q, k, v, num_heads)
        g = num_heads
    else:
        g = _check_gqa_widths(q, k, v, num_heads, num_kv_heads)
    if w_o is not None:
        w_o = _as_float("w_o", w_o, dtype)
        b_o = None if b_o is None else _as_float("b_o", b_o, dtype)
    return q, k, v, num_heads, g, w_o, b_o


def _check_qkv(q: ArrayLike, k: ArrayLike, v: ArrayLike) -> tuple[Array, Array, Array, np.dtype]:
    """q, k and v as non-empty 2-D arrays (tokens, features) of one float dtype."""
    q = _as_float("q", q)
    dtype = np.result_type(q, np.asarray(k), np.asarray(v), np.float32)
    q, k, v = (_as_float(n, a, dtype) for n, a in (("q", q), ("k", k), ("v", v)))
    for name, a in (("q", q), ("k", k), ("v", v)):
        if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 1:
            raise ValueError(
                f"{name} must be 2-D (tokens, features) and non-empty, got {_shape(a)}"
            )
    return q, k, v, dtype


def _check_mha_widths(q: Array, k: Array, v: Array, num_heads: int) -> None:
    """q (N, Dk), k (M, Dk), v (M, Dv) with H = num_heads dividing Dk and Dv."""
    if q.shape[1] != k.shape[1] or k.shape[0] != v.shape[0]:
        raise ValueError(
            f"q (N, Dk), k (M, Dk), v (M, Dv) do not fit: q {_shape(q)}, k {_shape(k)}, "
            f"v {_shape(v)}"
        )
    if num_heads < 1 or q.shape[1] % num_heads or v.shape[1] % num_heads:
        raise ValueError(
            f"{num_heads} heads do not divide the query/key width Dk={q.shape[1]} and the "
            f"value width Dv={v.shape[1]} (q {_shape(q)}, v {_shape(v)})"
        )


def _check_gqa_widths(q: Array, k: Array, v: Array, num_heads: int, num_kv_heads: int) -> int:
    """G = num_kv_heads, checked: q (N, H·d), k (M, G·d), v (M, G·d_v), G dividing H."""
    g = _check_heads(num_kv_heads)
    if num_heads < 1 or g < 1 or num_heads % g:
        raise ValueError(
            f"num_kv_heads={num_kv_heads} must be >= 1 and divide num_heads={num_heads} "
            f"(each key/value head serves the same number of query heads)"
        )
    if q.shape[1] % num_heads:
        raise ValueError(
            f"num_heads={num_heads} does not divide the query width Dk={q.shape[1]} (q {_shape(q)})"
        )
    d = q.shape[1] // num_heads
    if k.shape[1] != g * d or k.shape[0] != v.shape[0] or v.shape[1] % g:
        raise ValueError(
            f"grouped-query attention with {num_heads} query heads of {d} and {g} key/value "
            f"heads needs q (N, {num_heads * d}), k (M, {g * d}), v (M, {g}·d_v); got "
            f"q {_shape(q)}, k {_shape(k)}, v {_shape(v)}"
        )
    return g


# --------------------------------------------------------------------------- decoders: GQA, RoPE


def repeat_kv(x: ArrayLike, n_rep: int) -> Array:
    """(G, M, d) -> (G·n_rep, M, d): key/value head g is used by query heads
    g·n_rep .. g·n_rep + n_rep - 1 (as transformers' ``repeat_kv``, without the batch axis).
    """
    a = np.asarray(x)
    if isinstance(n_rep, bool) or not isinstance(n_rep, int | np.integer) or n_rep < 1:
        raise ValueError(f"n_rep must be an integer >= 1, got {n_rep!r}")
    if a.ndim != 3:
        raise ValueError(f"repeat_kv needs (kv_heads, tokens, head_dim), got shape {_shape(a)}")
    if n_rep == 1:
        return a
    return np.repeat(a, int(n_rep), axis=0)  # (G*n_rep, M, d)


def _check_positions(positions: ArrayLike, n: int, where: str) -> NDArray[np.float64]:
    pos = np.asarray(positions)
    if pos.dtype.kind not in "iuf" or pos.ndim != 1 or pos.shape[0] != n:
        raise ValueError(
            f"{where}: positions must be a 1-D numeric array of {n} entries (one per token), "
            f"got shape {_shape(pos)} dtype {pos.dtype}"
        )
    pos = pos.astype(np.float64)
    check_finite("positions", pos)
    return pos


def rope_cos_sin(
    positions: ArrayLike, dim: int, *, base: float = 10000.0
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """cos and sin (N, dim) of the rotary angles, in float64, as Llama's rotary embedding.

    Frequency i (0 <= i < dim/2) is base^(-2i/dim); the angle of position p is p * freq,
    and the table repeats the dim/2 angles twice ("rotate half" layout: feature i is
    paired with feature i + dim/2).
    """
    if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 2 or dim % 2:
        raise ValueError(f"dim (the head width) must be an even integer >= 2, got {dim!r}")
    if not base > 1:
        raise ValueError(f"base must be a number > 1, got {base!r}")
    pos = np.asarray(positions, dtype=np.float64)
    if pos.ndim != 1:
        raise ValueError(f"positions must be 1-D (N,), got shape {_shape(pos)}")
    inv_freq = 1.0 / float(base) ** (np.arange(0, dim, 2, dtype=np.float64) / dim)  # (dim/2,)
    angles = pos[:, None] * inv_freq[None, :]  # (N, dim/2)
    angles = np.concatenate([angles, angles], axis=-1)  # (N, dim)
    return np.cos(angles), np.sin(angles)


def apply_rope(x: ArrayLike, positions: ArrayLike, *, base: float = 10000.0) -> Array:
    """Rotary position embedding (RoPE) of queries or keys, as Llama / transformers.

    ``x`` (N, d) or (H, N, d) with d even; ``positions`` (N,), the position of each token
    (usually 0..N-1). Features i and i + d/2 of a token at position p are rotated by the
    angle p * base^(-2i/d): x * cos + rotate_half(x) * sin with rotate_half(x) =
    [-x2, x1]. Two rotated vectors' dot product depends only on their positions'
    difference. Returns the dtype of ``x`` (float32 stays float32).
    """
    a = np.asarray(x)
    if a.ndim not in (2, 3):
        raise ValueError(
            f"apply_rope needs x of shape (tokens, head_dim) or (heads, tokens, head_dim), "
            f"got shape {_shape(a)}"
        )
    a = _as_float("x", a)
    n, d = a.shape[-2], a.shape[-1]
    if d % 2:
        raise ValueError(
            f"apply_rope needs an even head_dim (features are rotated in pairs), got x of "
            f"shape {_shape(a)} with head_dim {d}"
        )
    pos = _check_positions(positions, n, f"apply_rope on x of shape {_shape(a)}")
    cos, sin = rope_cos_sin(pos, d, base=base)  # (N, d) each
    cos, sin = cos.astype(a.dtype, copy=False), sin.astype(a.dtype, copy=False)
    half = d // 2
    rot = np.concatenate([-a[..., half:], a[..., :half]], axis=-1)  # rotate_half, (..., N, d)
    return a * cos + rot * sin  # (..., N, d)


# --------------------------------------------------------------------------- views and checks


@dataclass(frozen=True, eq=False)
class ColumnView:
    """A result in the UDL book's column layout: one token per column.

    x (D, N); queries, keys (H, Dk/H, N); values (H, Dv/H, N); scores and weights
    (H, N keys, N queries) so that each column (one query) of ``weights`` sums to 1,
    as in ``softmax_cols``; head_outputs (H, Dv/H, N); concat (Dv, N); output (Dout, N).
    """

    x: Array | None
    queries: Array
    keys: Array
    values: Array
    scores: Array
    weights: Array
    head_outputs: Array
    concat: Array
    output: Array


def to_columns(result: AttentionResult) -> ColumnView:
    """The UDL column-layout (D x N) view of a row-layout result: every matrix transposed."""

    def t(a: Array) -> Array:
        return np.swapaxes(a, -1, -2)

    return ColumnView(
        x=None if result.x is None else result.x.T,
        queries=t(result.queries),
        keys=t(result.keys),
        values=t(result.values),
        scores=t(result.scores),
        weights=t(result.weights),
        head_outputs=t(result.head_outputs),
        concat=result.concat.T,
        output=result.output.T,
    )


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
    q, k, v = (_as_float(n, a) for n, a in (("q", q), ("k", k), ("v", v)))
    n_q, n_k = q.shape[0], k.shape[0]
    f = resolve_scale(scale, q.shape[1])
    full = _full_mask(mask, n_q, n_k)
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


def row_entropy(weights: ArrayLike, *, base: float = 2.0) -> Array:
    """Entropy of each row of attention weights (bits by default); 0·log 0 counts as 0.

    A uniform row over M keys gives log(M); a one-hot row gives 0. Shape: weights
    without the last axis.
    """
    w = np.asarray(weights, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(w > 0, -w * np.log(w), 0.0)
    return terms.sum(axis=-1) / math.log(base)


def permute_tokens(x: ArrayLike, perm: ArrayLike) -> Array:
    """Rows of ``x`` (N, ...) reordered by ``perm``: row i of the result is x[perm[i]]."""
    x = np.asarray(x)
    p = np.asarray(perm)
    if p.shape != (x.shape[0],) or not np.array_equal(np.sort(p), np.arange(x.shape[0])):
        raise ValueError(
            f"perm must be a permutation of 0..{x.shape[0] - 1} for x of shape {_shape(x)}, "
            f"got {p.tolist()}"
        )
    return x[p]


# --------------------------------------------------------------------------- the fused path
#
# Steps 3-7 of the module docstring fused, for ``fused=True`` (see :data:`FUSED`): what
# :func:`attention` computes, to rounding, with fewer passes over N x N arrays. Nothing
# above this line depends on it except the two ``if fused:`` branches.


#: Row sums of the unshifted exp(scores) accepted without a shift by the row maximum, per
#: itemsize: within e^±600 (float64) and e^±60 (float32) nothing overflowed and nothing
#: that matters underflowed, so the unshifted softmax is as accurate as the shifted one.
_EXP_SAFE = {8: 600.0, 4: 60.0}


class _DeferredScores:
    """The recipe of the scores, S = (q f) kᵀ, computed on first access (picklable).

    qs (..., N, d_k) the scaled queries; kt (..., d_k, M) the keys transposed, contiguous.
    """

    __slots__ = ("kt", "qs")

    def __init__(self, qs: Array, kt: Array) -> None:
        self.qs, self.kt = qs, kt

    def compute(self) -> Array:
        return np.matmul(self.qs, self.kt)  # (..., N, M)


class _DeferredField:
    """A dataclass field whose value may be a :class:`_DeferredScores`, computed (once) on
    first access. The field stays a field: ``dataclasses.fields``, the constructor,
    ``replace``, pickling (``st.cache_data``) and ``repr`` all work as for a plain one."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._key = f"_{name}_value"

    def __get__(self, obj: object, objtype: type | None = None) -> Array:
        if obj is None:  # no class-level default: the field is required
            raise AttributeError(self._key)
        value = obj.__dict__[self._key]
        if isinstance(value, _DeferredScores):
            value = value.compute()
            obj.__dict__[self._key] = value
        return value

    def __set__(self, obj: object, value: object) -> None:
        obj.__dict__[self._key] = value


@dataclass(frozen=True, eq=False)
class _FusedResult(AttentionResult):
    """The :class:`AttentionResult` of the fused path: ``scores`` is computed when it is
    first read (Q Kᵀ once more, the same numbers the weights were computed from), so a
    pass that only needs the weights and the output, like ``torch.nn.MultiheadAttention``,
    does not pay for an extra N x N array. Otherwise an AttentionResult like any other."""

    scores: Array = _DeferredField()  # type: ignore[assignment]  # computed on first access


def _values_and_ones(v: Array) -> Array:
    """[v | 1]: the values and a column of ones (for the row sums), laid out for the
    faster matmul orientation of the dtype (measured with OpenBLAS): (..., d_v + 1, M),
    transposed, for float64; (..., M, d_v + 1) otherwise."""
    dv, m = v.shape[-1], v.shape[-2]
    if v.dtype.itemsize == 8:
        v1t = np.empty((*v.shape[:-2], dv + 1, m), v.dtype)  # (..., d_v + 1, M)
        v1t[..., :dv, :] = np.swapaxes(v, -1, -2)
        v1t[..., dv, :] = 1
        return v1t
    v1 = np.empty((*v.shape[:-2], m, dv + 1), v.dtype)  # (..., M, d_v + 1)
    v1[..., :dv] = v
    v1[..., dv] = 1
    return v1


def _times_values(w: Array, v1: Array) -> Array:
    """w [v | 1]: (..., N, M) -> (..., N, d_v + 1), the last column holding the row sums
    of w. float64 computes it as ([v | 1]ᵀ wᵀ)ᵀ, the orientation BLAS handles faster."""
    if w.dtype.itemsize == 8:
        return np.swapaxes(np.matmul(v1, np.swapaxes(w, -1, -2)), -1, -2)  # (..., N, d_v+1)
    return np.matmul(w, v1)  # (..., N, d_v + 1)


def _rows_at_risk(o1: Array, notmask: NDArray[np.bool_] | None, shape: tuple) -> Array | None:
    """None if every row's unshifted softmax is safe, else a boolean (..., N) of the rows
    whose sum left e^±_EXP_SAFE or whose outputs are not finite (fully masked rows, sum 0,
    are fine)."""
    sums = o1[..., -1]  # (..., N)
    limit = _EXP_SAFE.get(o1.dtype.itemsize, 0.0)
    lo, hi = math.exp(-limit), math.exp(limit)
    # fast: every row fine (three reductions, no temporaries)
    if lo <= sums.min() and sums.max() <= hi and math.isfinite(o1.sum()):
        return None
    ok = (sums >= lo) & (sums <= hi) & np.isfinite(o1).all(axis=-1)  # (..., N)
    if notmask is not None:
        ok |= np.broadcast_to(notmask, shape).all(axis=-1)
    return None if ok.all() else ~ok


def _stable_softmax(deferred: _DeferredScores, notmask: NDArray[np.bool_] | None) -> Array:
    """softmax(S) over the keys, shifted by the row maximum, masked entries 0: the textbook
    stable softmax (normalised before it meets the values, so huge values cannot overflow
    the weighted sums)."""
    ws = deferred.compute()  # (..., N, M)
    if notmask is not None:
        np.copyto(ws, ws.dtype.type(-np.inf), where=notmask)
    mx = np.max(ws, axis=-1, keepdims=True)  # (..., N, 1)
    mx[np.isneginf(mx)] = 0  # fully masked rows stay -inf and become zeros
    ws -= mx
    return _exp_normalize(ws, axis=-1)  # (..., N, M)


def _attend(
    q: Array, k: Array, v: Array, factor: float, mask: NDArray[np.bool_] | None
) -> tuple[_DeferredScores, Array, Array]:
    """Steps 3-7 fused: :func:`attention`'s numbers to rounding, on validated arrays.

    q (..., N, d_k), k (..., M, d_k), v (..., M, d_v) of one float dtype, leading axes
    broadcast; ``factor`` a Python float (so float32 stays float32); mask broadcastable to
    (..., N, M) or None. Returns (the scores as a recipe computed when read, weights
    (..., N, M), output (..., N, d_v)). One full-size (..., N, M) array is allocated: the
    scores are exponentiated in place into the weights (and recomputed on demand).

    The softmax skips the shift by the row maximum and checks afterwards, per row, that
    the row sum stayed within e^±_EXP_SAFE (no overflow, no harmful underflow); rows that
    did not are recomputed with the shift. Each row's path depends on that row alone, so
    a causal row never depends on later tokens, not even by rounding.
    """
    # a. scale the queries, not the N x M scores: (q f) kᵀ = (q kᵀ) f, N*d_k products;
    #    contiguous per head (BLAS is faster on contiguous blocks than on strided views)
    qs = np.multiply(q, factor, out=np.empty(q.shape, q.dtype))  # (..., N, d_k)
    kt = np.ascontiguousarray(np.swapaxes(k, -1, -2))  # (..., d_k, M)
    deferred = _DeferredScores(qs, kt)
    notmask = None if mask is None else ~np.asarray(mask)  # (..., N, M) broadcastable
    v1 = _values_and_ones(v.astype(qs.dtype, copy=False))  # [v | 1]
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # b. scores S = (q f) kᵀ (one BLAS matmul per head), exp in place: the numerators
        w = deferred.compute()  # (..., N, M), becomes the weights
        np.exp(w, out=w)
        if notmask is not None:
            np.copyto(w, 0, where=notmask)  # masked weights exactly 0
        # c. unnormalised outputs and the row sums in one matmul: w [v | 1]
        o1 = _times_values(w, v1)  # (..., N, d_v + 1)
        bad = _rows_at_risk(o1, notmask, w.shape)  # None or (..., N)
    if bad is not None:
        # c'. rows at risk: the stable softmax (row sums 1, so step d keeps them)
        ws = _stable_softmax(deferred, notmask)  # (..., N, M)
        w[bad] = ws[bad]
        o1[bad] = _times_values(ws, v1)[bad]
    sums = o1[..., -1:]  # (..., N, 1)
    sums[sums == 0] = 1  # fully masked rows: weights and outputs stay 0
    inv = np.reciprocal(sums)  # (..., N, 1)
    # d. normalise: softmax weights (rows sum to 1) and the weighted sums of the values
    w *= inv  # (..., N, M)
    output = np.multiply(o1[..., :-1], inv)  # (..., N, d_v)
    return deferred, w, output
