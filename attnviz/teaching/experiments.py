"""The small experiments behind the pages, in pure NumPy.

- Why sqrt(d_k): :func:`dot_product_variance` (the Monte Carlo of notebooks ``002_…``
  and ``004_…``), :func:`softmax_under_factor` (the x1 / x8 softmax of ``002_…``) and
  :func:`max_weight_curve` (how one-hot the unscaled softmax becomes as d_k grows).
- Masking: :func:`make_mask` and :func:`future_independence` (with a causal mask, changing
  a later token leaves the earlier outputs exactly as they were).
- Permutations: :func:`permutation_check` (self-attention without positions is
  permutation equivariant; adding :func:`sinusoidal_positions` breaks it) and
  :func:`all_permutations`.

Everything is seeded and vectorised; no Streamlit, no plotting.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from attnviz.engine import (
    AttentionParams,
    Scale,
    causal_mask,
    masks,
    multi_head_attention,
    permute_tokens,
    softmax,
)
from attnviz.engine.core import Array

__all__ = [
    "NOTEBOOK_LOGITS",
    "PermutationCheck",
    "SaturationCurve",
    "VarianceCurve",
    "all_permutations",
    "dot_product_variance",
    "future_independence",
    "make_mask",
    "max_weight_curve",
    "permutation_check",
    "sinusoidal_positions",
    "softmax_under_factor",
]

#: The logits of notebook ``002_…`` (softmax "without scaling" and "with scaling" x8).
NOTEBOOK_LOGITS: tuple[float, ...] = (0.1, -0.2, 0.3, -0.4, -0.3)


def _dims(dims: ArrayLike) -> np.ndarray:
    d = np.atleast_1d(np.asarray(dims))
    if d.ndim != 1 or d.size == 0 or d.dtype.kind not in "iu" or (d < 1).any():
        raise ValueError(f"dims must be a non-empty list of integers >= 1, got {dims!r}")
    return d.astype(np.int64)


# --------------------------------------------------------------------------- why sqrt(d_k)


@dataclass(frozen=True, eq=False)
class VarianceCurve:
    """Variance of q·k (``before``) and of q·k / sqrt(d) (``after``) for each d in ``dims``."""

    dims: np.ndarray
    before: np.ndarray
    after: np.ndarray


def dot_product_variance(dims: ArrayLike, *, trials: int = 1000, seed: int = 0) -> VarianceCurve:
    """Monte Carlo variance of q·k for q, k ~ N(0, I_d), before and after dividing by sqrt(d).

    For each d: ``trials`` pairs (q, k), the dot products, their ``np.var``. Theory:
    Var(q·k) = d, so ``before`` grows like d and ``after`` stays near 1. Seeded with
    ``np.random.default_rng(seed)``; dims are drawn in order.
    """
    d = _dims(dims)
    if trials < 2:
        raise ValueError(f"trials must be >= 2 to estimate a variance, got {trials}")
    rng = np.random.default_rng(seed)
    before = np.empty(d.size)
    after = np.empty(d.size)
    for i, dim in enumerate(d):
        q = rng.standard_normal((trials, int(dim)))  # (trials, d)
        k = rng.standard_normal((trials, int(dim)))  # (trials, d)
        dots = np.einsum("td,td->t", q, k)  # (trials,)
        before[i] = np.var(dots)
        after[i] = np.var(dots / math.sqrt(dim))
    return VarianceCurve(dims=d, before=before, after=after)


def softmax_under_factor(logits: ArrayLike, factors: ArrayLike) -> np.ndarray:
    """softmax(factor * logits) for each factor: shape (F, L).

    Notebook ``002_…`` uses factors 1 and 8 on :data:`NOTEBOOK_LOGITS`: the larger the
    factor, the closer the softmax comes to a one-hot vector on the largest logit.
    """
    z = np.asarray(logits, dtype=np.float64)
    f = np.atleast_1d(np.asarray(factors, dtype=np.float64))
    if z.ndim != 1 or z.size == 0 or f.ndim != 1:
        raise ValueError(
            f"logits must be a non-empty 1-D list and factors 1-D; got logits of shape "
            f"{z.shape}, factors of shape {f.shape}"
        )
    if not (np.isfinite(z).all() and np.isfinite(f).all()):
        raise ValueError("logits and factors must be finite")
    return softmax(f[:, None] * z[None, :], axis=-1)  # (F, L)


@dataclass(frozen=True, eq=False)
class SaturationCurve:
    """Mean largest attention weight per query, unscaled and scaled, for each d in ``dims``.

    1/n_keys means uniform attention; 1 means one-hot (the softmax has saturated).
    """

    dims: np.ndarray
    n_keys: int
    unscaled: np.ndarray
    scaled: np.ndarray


def max_weight_curve(
    dims: ArrayLike, *, n_keys: int = 8, trials: int = 200, seed: int = 0
) -> SaturationCurve:
    """How one-hot softmax(q·k) gets as d grows, with and without the 1/sqrt(d) factor.

    For each d: ``trials`` queries and ``n_keys`` keys ~ N(0, I_d), the softmax of the
    dot products over the keys, and the mean of each query's largest weight.
    """
    d = _dims(dims)
    if n_keys < 1 or trials < 1:
        raise ValueError(f"n_keys and trials must be >= 1, got {n_keys}, {trials}")
    rng = np.random.default_rng(seed)
    unscaled = np.empty(d.size)
    scaled = np.empty(d.size)
    for i, dim in enumerate(d):
        q = rng.standard_normal((trials, int(dim)))  # (trials, d)
        k = rng.standard_normal((n_keys, int(dim)))  # (n_keys, d)
        s = q @ k.T  # (trials, n_keys)
        unscaled[i] = softmax(s).max(axis=-1).mean()
        scaled[i] = softmax(s / math.sqrt(dim)).max(axis=-1).mean()
    return SaturationCurve(dims=d, n_keys=n_keys, unscaled=unscaled, scaled=scaled)


# --------------------------------------------------------------------------- positions


def sinusoidal_positions(n: int, d: int) -> np.ndarray:
    """The sinusoidal positional encoding of Vaswani et al. (2017): shape (n, d).

    PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(p / 10000^(2i/d)).
    Works for odd d (the last column is a sine).
    """
    if n < 1 or d < 1:
        raise ValueError(f"sinusoidal_positions needs n >= 1 and d >= 1, got n={n}, d={d}")
    pos = np.arange(n, dtype=np.float64)[:, None]  # (n, 1)
    i2 = np.arange(0, d, 2, dtype=np.float64)  # (ceil(d/2),) the even column indices 2i
    angles = pos / np.power(10000.0, i2 / d)  # (n, ceil(d/2))
    pe = np.empty((n, d))
    pe[:, 0::2] = np.sin(angles)  # (n, ceil(d/2))
    pe[:, 1::2] = np.cos(angles[:, : d // 2])  # (n, floor(d/2))
    return pe


# --------------------------------------------------------------------------- permutations


def all_permutations(n: int) -> list[tuple[int, ...]]:
    """Every permutation of 0..n-1 in ``itertools.permutations`` order (the notebook's).

    Only for small n (n! grows fast): n must be between 1 and 8.
    """
    if not 1 <= n <= 8:
        raise ValueError(f"all_permutations is for 1 <= n <= 8 (n! rows), got n={n}")
    return list(itertools.permutations(range(n)))


@dataclass(frozen=True, eq=False)
class PermutationCheck:
    """Is attention(permuted x) the permuted attention(x)?

    ``out`` = attention(x) (N, Dout), ``out_of_permuted`` = attention(x[perm]);
    ``max_abs_diff`` = max |out[perm] - out_of_permuted|; ``equivariant`` when that is
    at rounding level.
    """

    perm: tuple[int, ...]
    out: Array
    out_of_permuted: Array
    max_abs_diff: float
    equivariant: bool


def permutation_check(
    x: ArrayLike,
    params: AttentionParams,
    perm: ArrayLike,
    *,
    num_heads: int = 1,
    scale: Scale = True,
    positions: ArrayLike | None = None,
) -> PermutationCheck:
    """Permute the tokens and compare, without a mask.

    Without ``positions`` self-attention is permutation equivariant: the outputs of the
    permuted tokens are the permuted outputs. With ``positions`` (N, D) added to the
    input (x + P, then x[perm] + P: the positions stay where they are while the tokens
    move), it is not any more.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"x must be 2-D (N, D), got shape {x.shape}")
    xp = permute_tokens(x, perm)  # (N, D): row i is x[perm[i]]
    if positions is not None:
        p = np.asarray(positions, dtype=np.float64)
        if p.shape != x.shape:
            raise ValueError(f"positions must have the shape of x {x.shape}, got {p.shape}")
        x, xp = x + p, xp + p
    out = multi_head_attention(x, params, num_heads=num_heads, scale=scale).output  # (N, Dout)
    out_p = multi_head_attention(xp, params, num_heads=num_heads, scale=scale).output
    diff = float(np.abs(permute_tokens(out, perm) - out_p).max())
    tol = 1e-9 * max(1.0, float(np.abs(out).max()))
    return PermutationCheck(
        perm=tuple(int(i) for i in np.asarray(perm)),
        out=out,
        out_of_permuted=out_p,
        max_abs_diff=diff,
        equivariant=diff <= tol,
    )


# --------------------------------------------------------------------------- masking


def make_mask(kind: str, n: int, *, n_pad: int = 0, **params: int) -> np.ndarray | None:
    """The (n, n) boolean mask of a kind of :data:`attnviz.engine.masks.KINDS`: "none" -> None,
    "causal", "padding" (the last ``n_pad`` tokens), and the parameters of the others by
    their URL keys; the engine's builder rejects values out of range."""
    return masks.build(kind, n, clamp=False, **{"pad": n_pad, **params})


def future_independence(
    x: ArrayLike,
    params: AttentionParams,
    position: int,
    *,
    num_heads: int = 1,
    scale: Scale = True,
    seed: int = 0,
    causal: bool = True,
) -> float:
    """Change every token after ``position`` (random values) and return the largest change
    of the outputs at positions 0..position.

    With the causal mask this is exactly 0.0: no token sees the future. Without it
    (``causal=False``) the earlier outputs change too.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"x must be 2-D (N, D), got shape {x.shape}")
    n = x.shape[0]
    if not 0 <= position < n:
        raise ValueError(f"position must be in 0..{n - 1} for x of shape {x.shape}, got {position}")
    x2 = x.copy()
    x2[position + 1 :] = np.random.default_rng(seed).standard_normal(x2[position + 1 :].shape)
    mask = causal_mask(n) if causal else None
    a = multi_head_attention(x, params, num_heads=num_heads, scale=scale, mask=mask).output
    b = multi_head_attention(x2, params, num_heads=num_heads, scale=scale, mask=mask).output
    return float(np.abs(a[: position + 1] - b[: position + 1]).max())
