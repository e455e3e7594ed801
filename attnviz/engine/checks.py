"""The engine's input checks: every array the engine is given is checked here, once per
call, and a wrong one raises ``ValueError`` naming what was expected and the shapes that
came (einops-style). ``attnviz/engine/core.py`` reads as the formula; what it must be sure of
before it runs is here. Plain NumPy; it imports nothing of attnviz.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.floating]


def shape_text(a: ArrayLike) -> str:
    return "x".join(str(s) for s in np.shape(a)) or "scalar"


def check_finite(name: str, a: NDArray) -> None:
    """Raise ``ValueError`` if ``a`` holds NaN or ±inf, naming the array and the place."""
    if a.dtype.kind not in "fc" or np.isfinite(np.add.reduce(a, axis=None)):  # no temporary
        return  # (a finite sum means every entry is finite; an overflowing sum checks all)
    if not np.isfinite(a).all():
        bad = np.argwhere(~np.isfinite(a))[0]
        raise ValueError(
            f"{name} (shape {shape_text(a)}) contains NaN or inf, first at index "
            f"{tuple(int(i) for i in bad)}: {a[tuple(bad)]!r}"
        )


def check_heads(num_heads: object) -> int:
    if isinstance(num_heads, bool) or not isinstance(num_heads, int | np.integer):
        raise ValueError(f"num_heads must be an integer >= 1, got {num_heads!r}")
    return int(num_heads)


def as_float(name: str, a: ArrayLike, dtype: np.dtype | None = None) -> Array:
    arr = np.asarray(a)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype} (shape {shape_text(arr)})")
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    elif arr.dtype.kind != "f":
        arr = arr.astype(np.float64)
    check_finite(name, arr)
    return arr


def check_mask(mask: ArrayLike, shape: tuple[int, ...]) -> NDArray[np.bool_]:
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise ValueError(
            f"mask must be a boolean array (True = may attend), got dtype {m.dtype} "
            f"with shape {shape_text(m)}"
        )
    try:
        np.broadcast_shapes(m.shape, shape)
    except ValueError:
        raise ValueError(
            f"mask of shape {shape_text(m)} does not broadcast to the scores' shape "
            f"{'x'.join(map(str, shape))} (..., N queries, M keys)"
        ) from None
    return m


def full_mask(mask: ArrayLike | None, n: int, m: int) -> NDArray[np.bool_] | None:
    if mask is None:
        return None
    mk = check_mask(mask, (n, m))
    if mk.ndim > 2:
        raise ValueError(
            f"mask for multi_head_attention must be (N, M) = ({n}, {m}) or broadcast to it; "
            f"got {shape_text(mk)}"
        )
    return np.broadcast_to(mk, (n, m))


def check_projections(q: Array, k: Array, v: Array) -> None:
    """Q, K and V finite: a projection may overflow the dtype even when x and w are finite."""
    if np.isfinite(np.sum(q) + np.sum(k) + np.sum(v)):  # fast (as check_finite)
        return
    for name, a in (("Q = x @ w_q + b_q", q), ("K = x @ w_k + b_k", k), ("V = x @ w_v + b_v", v)):
        check_finite(f"{name} (overflow?)", a)


def check_from_qkv(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    num_heads: int,
    num_kv_heads: int | None,
    w_o: ArrayLike | None,
    b_o: ArrayLike | None,
    mask: ArrayLike | None = None,
) -> tuple[Array, Array, Array, int, int, Array | None, Array | None, NDArray[np.bool_] | None]:
    """q, k, v of one float dtype, H and G (the numbers of query and key/value heads), w_o
    and b_o in that dtype and the mask as a full (N, M) bool array (or None), all checked
    (the arguments of ``attention_from_qkv``)."""
    q, k, v, dtype = check_qkv(q, k, v)
    num_heads = check_heads(num_heads)
    if num_kv_heads is None:
        check_mha_widths(q, k, v, num_heads)
        g = num_heads
    else:
        g = check_gqa_widths(q, k, v, num_heads, num_kv_heads)
    if w_o is not None:
        w_o = as_float("w_o", w_o, dtype)
        b_o = None if b_o is None else as_float("b_o", b_o, dtype)
    mask = full_mask(mask, q.shape[0], k.shape[0])  # (N, M) or None
    return q, k, v, num_heads, g, w_o, b_o, mask


def check_loop(
    q: ArrayLike, k: ArrayLike, v: ArrayLike, mask: ArrayLike | None
) -> tuple[Array, Array, Array, NDArray[np.bool_] | None]:
    """The arguments of ``loop_attention``: q (N, d_k), k (M, d_k), v (M, d_v) as float
    arrays and the mask as a full (N, M) bool array (or None)."""
    q, k, v = (as_float(n, a) for n, a in (("q", q), ("k", k), ("v", v)))
    return q, k, v, full_mask(mask, q.shape[0], k.shape[0])


def check_qkv(q: ArrayLike, k: ArrayLike, v: ArrayLike) -> tuple[Array, Array, Array, np.dtype]:
    """q, k and v as non-empty 2-D arrays (tokens, features) of one float dtype."""
    q = as_float("q", q)
    dtype = np.result_type(q, np.asarray(k), np.asarray(v), np.float32)
    q, k, v = (as_float(n, a, dtype) for n, a in (("q", q), ("k", k), ("v", v)))
    for name, a in (("q", q), ("k", k), ("v", v)):
        if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 1:
            raise ValueError(
                f"{name} must be 2-D (tokens, features) and non-empty, got {shape_text(a)}"
            )
    return q, k, v, dtype


def check_mha_widths(q: Array, k: Array, v: Array, num_heads: int) -> None:
    """q (N, Dk), k (M, Dk), v (M, Dv) with H = num_heads dividing Dk and Dv."""
    if q.shape[1] != k.shape[1] or k.shape[0] != v.shape[0]:
        raise ValueError(
            f"q (N, Dk), k (M, Dk), v (M, Dv) do not fit: q {shape_text(q)}, k {shape_text(k)}, "
            f"v {shape_text(v)}"
        )
    if num_heads < 1 or q.shape[1] % num_heads or v.shape[1] % num_heads:
        raise ValueError(
            f"{num_heads} heads do not divide the query/key width Dk={q.shape[1]} and the "
            f"value width Dv={v.shape[1]} (q {shape_text(q)}, v {shape_text(v)})"
        )


def check_gqa_widths(q: Array, k: Array, v: Array, num_heads: int, num_kv_heads: int) -> int:
    """G = num_kv_heads, checked: q (N, H·d), k (M, G·d), v (M, G·d_v), G dividing H."""
    g = check_heads(num_kv_heads)
    if num_heads < 1 or g < 1 or num_heads % g:
        raise ValueError(
            f"num_kv_heads={num_kv_heads} must be >= 1 and divide num_heads={num_heads} "
            f"(each key/value head serves the same number of query heads)"
        )
    if q.shape[1] % num_heads:
        raise ValueError(
            f"num_heads={num_heads} does not divide the query width Dk={q.shape[1]} "
            f"(q {shape_text(q)})"
        )
    d = q.shape[1] // num_heads
    if k.shape[1] != g * d or k.shape[0] != v.shape[0] or v.shape[1] % g:
        raise ValueError(
            f"grouped-query attention with {num_heads} query heads of {d} and {g} key/value "
            f"heads needs q (N, {num_heads * d}), k (M, {g * d}), v (M, {g}·d_v); got "
            f"q {shape_text(q)}, k {shape_text(k)}, v {shape_text(v)}"
        )
    return g


def check_positions(positions: ArrayLike, n: int, where: str) -> NDArray[np.float64]:
    pos = np.asarray(positions)
    if pos.dtype.kind not in "iuf" or pos.ndim != 1 or pos.shape[0] != n:
        raise ValueError(
            f"{where}: positions must be a 1-D numeric array of {n} entries (one per token), "
            f"got shape {shape_text(pos)} dtype {pos.dtype}"
        )
    pos = pos.astype(np.float64)
    check_finite("positions", pos)
    return pos


#: The fields of ``AttentionParams``, in order: :func:`check_params` returns them so.
PARAM_FIELDS = ("w_q", "w_k", "w_v", "b_q", "b_k", "b_v", "w_o", "b_o")


def check_params(p: Any) -> tuple[Array | None, ...]:
    """The fields of ``AttentionParams`` ``p`` (:data:`PARAM_FIELDS`) as float arrays (None
    stays None), finite, their shapes checked against each other: w_q, w_k, w_v 2-D with D
    rows, w_k like w_q, each bias the width of its weight, w_o (Dv, Dout)."""
    a = {n: None if getattr(p, n) is None else as_float(n, getattr(p, n)) for n in PARAM_FIELDS}
    for name in ("w_q", "w_k", "w_v"):
        if a[name].ndim != 2:
            raise ValueError(f"{name} must be 2-D (D, d), got shape {shape_text(a[name])}")
    w_q, w_k, w_v, w_o = a["w_q"], a["w_k"], a["w_v"], a["w_o"]
    d = w_q.shape[0]
    if w_k.shape != w_q.shape:
        raise ValueError(
            f"w_k must have the shape of w_q (D, Dk); got w_q {shape_text(w_q)}, "
            f"w_k {shape_text(w_k)}"
        )
    if w_v.shape[0] != d:
        raise ValueError(
            f"w_v must have D={d} rows like w_q; got w_q {shape_text(w_q)}, w_v {shape_text(w_v)}"
        )
    for b, w in (("b_q", "w_q"), ("b_k", "w_k"), ("b_v", "w_v"), ("b_o", "w_o")):
        bias, weight = a[b], a[w]
        if bias is None:
            continue
        if weight is None:
            raise ValueError(f"{b} given without {w}")
        if bias.shape != (weight.shape[1],):
            raise ValueError(
                f"{b} must have shape ({weight.shape[1]},) to match {w} "
                f"{shape_text(weight)}; got {shape_text(bias)}"
            )
    if w_o is not None and (w_o.ndim != 2 or w_o.shape[0] != w_v.shape[1]):
        raise ValueError(
            f"w_o must have shape (Dv, Dout) with Dv={w_v.shape[1]} (the width of w_v "
            f"{shape_text(w_v)}); got {shape_text(w_o)}"
        )
    return tuple(a[n] for n in PARAM_FIELDS)


def check_mha(
    x: ArrayLike,
    params: Any,
    num_heads: object,
    mask: ArrayLike | str | None,
    x_kv: ArrayLike | None,
) -> tuple[Array, Array | None, Any, int, NDArray[np.bool_] | None]:
    """The arguments of ``multi_head_attention`` (and ``cross_attention``), checked against
    each other in one call: x (N, D) as a float array, the source x_kv (M, D) in its dtype
    (None in self-attention), the parameters in that dtype, H and the mask as a full (N, M)
    bool array (or None). ``params`` is an ``AttentionParams`` (its fields and methods:
    this module imports nothing of attnviz)."""
    if not (hasattr(params, "qkv") and hasattr(params, "w_q")):  # duck-typed (see above)
        raise ValueError(f"params must be AttentionParams, got {type(params).__name__}")
    x = np.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"x must be 2-D (N tokens, D features), got shape {shape_text(x)}")
    n, d = x.shape
    if n < 1 or d < 1:
        raise ValueError(f"x must have N >= 1 tokens and D >= 1 features, got shape {n}x{d}")
    w_q, w_v = params.w_q, params.w_v
    dtype = np.result_type(x, w_q, np.float32)
    x = as_float("x", x, dtype)
    if d != w_q.shape[0]:
        raise ValueError(
            f"x has D={d} features (shape {n}x{d}) but w_q expects D={w_q.shape[0]} "
            f"(w_q shape {shape_text(w_q)})"
        )
    h = check_heads(num_heads)
    if h < 1 or w_q.shape[1] % h or w_v.shape[1] % h:
        raise ValueError(
            f"num_heads={h} must divide Dk={w_q.shape[1]} (w_q {shape_text(w_q)}) "
            f"and Dv={w_v.shape[1]} (w_v {shape_text(w_v)})"
        )
    p = params if w_q.dtype == dtype else params.astype(dtype)
    source = None if x_kv is None else check_source(x_kv, x, p)  # (M, D)
    mask = cross_mask(mask, x, x if source is None else source, cross=source is not None)
    return x, source, p, h, mask


def check_sdpa(
    q: ArrayLike, k: ArrayLike, v: ArrayLike, mask: ArrayLike | None
) -> tuple[Array, Array, Array, NDArray[np.bool_] | None]:
    """The arguments of ``scaled_dot_product_attention`` checked and of one float dtype,
    q and k broadcast to one leading shape (views, no copies), so that the weights are
    (*lead, N, M); the mask checked (or None)."""
    q, k, v = (np.asarray(a) for a in (q, k, v))
    dtype = np.result_type(q, k, v, np.float32)
    q, k, v = (as_float(n, a, dtype) for n, a in (("q", q), ("k", k), ("v", v)))
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ValueError(
            f"q, k and v need at least 2 axes (..., tokens, features); got q {shape_text(q)}, "
            f"k {shape_text(k)}, v {shape_text(v)}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q (..., N, d_k) and k (..., M, d_k) must share d_k; got q {shape_text(q)}, "
            f"k {shape_text(k)}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k (..., M, d_k) and v (..., M, d_v) must have the same number of keys M; "
            f"got k {shape_text(k)}, v {shape_text(v)}"
        )
    if q.shape[-2] < 1 or k.shape[-2] < 1 or q.shape[-1] < 1:
        raise ValueError(
            f"empty attention: q {shape_text(q)}, k {shape_text(k)}, v {shape_text(v)}"
        )
    try:
        lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the leading axes of q {shape_text(q)}, k {shape_text(k)} and v {shape_text(v)} "
            f"do not broadcast"
        ) from None
    m = None
    if mask is not None:
        m = check_mask(mask, (*lead, q.shape[-2], k.shape[-2]))
        lead = np.broadcast_shapes(lead, m.shape[:-2])
    q = np.broadcast_to(q, (*lead, *q.shape[-2:]))  # (*lead, N, d_k)
    k = np.broadcast_to(k, (*lead, *k.shape[-2:]))  # (*lead, M, d_k)
    return q, k, v, m


def check_source(x_kv: ArrayLike, x: Array, p: Any) -> Array:
    """The source x_kv (M, D) of cross-attention, checked against the target x (N, D)."""
    src = np.asarray(x_kv)
    n, d = x.shape
    if src.ndim != 2 or src.shape[0] < 1 or src.shape[1] < 1:
        raise ValueError(
            f"the source x_kv must be 2-D (N_kv >= 1 tokens, D features), got shape "
            f"{shape_text(src)} (the target x_q is {n}x{d})"
        )
    if src.shape[1] != d:
        raise ValueError(
            f"the source x_kv has D={src.shape[1]} features (shape {shape_text(src)}) but the "
            f"target x_q has D={d} (shape {n}x{d}); both must match w_k and w_v "
            f"({shape_text(p.w_k)}, {shape_text(p.w_v)})"
        )
    return as_float("x_kv", src, x.dtype)


def cross_mask(
    mask: ArrayLike | str | None, x: Array, source: Array, *, cross: bool
) -> NDArray[np.bool_] | None:
    """The mask as a full (N, M) bool array (or None), with an error naming both
    sequences when it does not fit; "causal" only where N == M."""
    n, m = x.shape[0], source.shape[0]
    if isinstance(mask, str):
        if mask != "causal":
            raise ValueError(f'mask must be an (N, M) boolean array or "causal", got {mask!r}')
        if n != m:
            raise ValueError(
                f"a causal mask needs as many queries as keys, but the target x_q is "
                f"{shape_text(x)} ({n} tokens) and the source x_kv is {shape_text(source)} "
                f"({m} tokens): causal orders one sequence against itself (token i sees "
                f"tokens j <= i), while in cross-attention every target token may read the "
                f"whole source. Mask the decoder's self-attention instead, or pad the source "
                f"with key_padding_mask"
            )
        return np.tri(n, dtype=bool)  # engine.causal_mask(n)
    if cross and mask is not None and np.ndim(mask) == 2 and np.shape(mask) != (n, m):
        raise ValueError(
            f"mask of shape {shape_text(mask)} does not fit cross-attention of the target "
            f"x_q {shape_text(x)} over the source x_kv {shape_text(source)}: it must be "
            f"(N_q, N_kv) = ({n}, {m}), target tokens as rows, source tokens as columns"
        )
    return full_mask(mask, n, m)
