"""The decoder pieces of the engine: grouped-query attention's shared key/value heads
(:func:`repeat_kv`) and rotary position embeddings (:func:`rope_cos_sin`,
:func:`apply_rope`), as Llama and SmolLM2 use them. ``attnviz.engine`` re-exports them
(``from attnviz.engine import apply_rope`` works); grouped-query attention itself is
``engine.attention_from_qkv(..., num_kv_heads=G)``. Plain NumPy.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.engine.checks import as_float, check_positions, shape_text

__all__ = ["apply_rope", "repeat_kv", "rope_cos_sin"]

Array = NDArray[np.floating]


def repeat_kv(x: ArrayLike, n_rep: int) -> Array:
    """(G, M, d) -> (G·n_rep, M, d): key/value head g is used by query heads
    g·n_rep .. g·n_rep + n_rep - 1 (as transformers' ``repeat_kv``, without the batch axis).
    """
    a = np.asarray(x)
    if isinstance(n_rep, bool) or not isinstance(n_rep, int | np.integer) or n_rep < 1:
        raise ValueError(f"n_rep must be an integer >= 1, got {n_rep!r}")
    if a.ndim != 3:
        raise ValueError(f"repeat_kv needs (kv_heads, tokens, head_dim), got shape {shape_text(a)}")
    if n_rep == 1:
        return a
    return np.repeat(a, int(n_rep), axis=0)  # (G*n_rep, M, d)


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
        raise ValueError(f"positions must be 1-D (N,), got shape {shape_text(pos)}")
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
            f"got shape {shape_text(a)}"
        )
    a = as_float("x", a)
    n, d = a.shape[-2], a.shape[-1]
    if d % 2:
        raise ValueError(
            f"apply_rope needs an even head_dim (features are rotated in pairs), got x of "
            f"shape {shape_text(a)} with head_dim {d}"
        )
    pos = check_positions(positions, n, f"apply_rope on x of shape {shape_text(a)}")
    cos, sin = rope_cos_sin(pos, d, base=base)  # (N, d) each
    cos, sin = cos.astype(a.dtype, copy=False), sin.astype(a.dtype, copy=False)
    half = d // 2
    rot = np.concatenate([-a[..., half:], a[..., :half]], axis=-1)  # rotate_half, (..., N, d)
    return a * cos + rot * sin  # (..., N, d)
