"""Nameable attention heads, scored: previous-token, attention-sink, self, local,
duplicate-token and induction heads (pure NumPy).

A *probe* is a random token sequence repeated twice (:func:`probe`): on its second copy a
head that has learned to copy ("induction", Olsson et al. 2022) attends to the token that
followed the current token's earlier occurrence. :func:`scores` turns a model's attention
weights (layers, heads, N, N) on any ids into six numbers per head, each in 0..1:

==============  ===============================================================
``previous``    mean over queries i >= 1 of A[i, i-1]
``first``       mean over queries i >= 1 of A[i, 0] (the attention sink)
``self``        mean over queries i of A[i, i]
``local``       mean over queries i of the weight on keys i-3 .. i-1 (row 0 has none: 0)
``duplicate``   mean, over queries whose token occurred before, of the weight on those
                earlier occurrences
``induction``   mean, over queries i whose token occurred before at position p, of
                A[i, p+1] (summed over every earlier occurrence p); for a probe of
                length T that is A[i, i-T+1] on the second copy
==============  ===============================================================

``duplicate`` and ``induction`` are NaN for a head when no token repeats (no query to
average over); ``previous`` and ``first`` are NaN for a single token.

All six are computed for every head at once: one (N, N) 0/1 matrix per pattern says which
(query, key) cells count; the weights on them are summed for every head and query at
once (diagonals for the positional patterns), and a mean over the queries that count gives
(layers, heads). No loop over heads.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.i18n import N_

__all__ = [
    "LOCAL_WINDOW",
    "PATTERNS",
    "cell_masks",
    "probe",
    "scores",
    "top_heads",
]

#: The six patterns, in the order the page shows them, with a short label (``N_``-marked:
#: shown with ``_(PATTERNS[name])``; the keys are identifiers).
PATTERNS: dict[str, str] = {
    "previous": N_("previous token"),
    "first": N_("first token (sink)"),
    "self": N_("itself"),
    "local": N_("the 3 tokens before"),
    "duplicate": N_("earlier copies of its token"),
    "induction": N_("induction (token after the earlier copy)"),
}
#: ``local``: the keys i-3 .. i-1.
LOCAL_WINDOW = 3


def probe(seed: int, length: int, vocab: tuple[int, int]) -> NDArray[np.int64]:
    """(2 * length,) ids: ``length`` ids drawn uniformly from ``vocab`` = (lo, hi), hi
    excluded (``numpy.random.default_rng(seed)``), then the same ``length`` ids again."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if isinstance(length, bool) or not isinstance(length, int | np.integer) or length < 1:
        raise ValueError(f"length must be an integer >= 1, got {length!r}")
    try:
        lo, hi = (int(v) for v in vocab)
    except (TypeError, ValueError):
        raise ValueError(f"vocab must be two integers (lo, hi), got {vocab!r}") from None
    if not 0 <= lo < hi:
        raise ValueError(f"vocab must satisfy 0 <= lo < hi, got ({lo}, {hi})")
    first = np.random.default_rng(int(seed)).integers(lo, hi, size=int(length), dtype=np.int64)
    return np.concatenate([first, first])  # (2T,)


def cell_masks(ids: ArrayLike) -> dict[str, NDArray[np.float64]]:
    """Per pattern, the (N, N) 0/1 matrix of the (query, key) cells whose weights it sums.

    ``previous``: (i, i-1); ``first``: (i, 0) for i >= 1; ``self``: (i, i); ``local``:
    (i, i-3 .. i-1); ``duplicate``: (i, p) with p < i and ids[p] == ids[i]; ``induction``:
    (i, p+1) with p < i and ids[p] == ids[i].
    """
    ids = _ids(ids)
    n = ids.size
    i = np.arange(n)[:, None]  # (N, 1) queries
    j = np.arange(n)[None, :]  # (1, N) keys
    same = ids[:, None] == ids[None, :]  # (N, N): same token
    earlier = same & (j < i)  # (N, N): an earlier occurrence of query i's token at key j
    after_earlier = np.zeros((n, n), dtype=bool)
    after_earlier[:, 1:] = earlier[:, :-1]  # key p+1 for every earlier occurrence p
    return {
        "previous": (j == i - 1).astype(np.float64),
        "first": ((j == 0) & (i >= 1)).astype(np.float64),
        "self": (j == i).astype(np.float64),
        "local": ((j >= i - LOCAL_WINDOW) & (j < i)).astype(np.float64),
        "duplicate": earlier.astype(np.float64),
        "induction": after_earlier.astype(np.float64),
    }


def scores(attentions: ArrayLike, ids: ArrayLike) -> dict[str, NDArray[np.float64]]:
    """The six pattern scores (see the module docstring) of every head: pattern -> (L, H).

    ``attentions`` (layers, heads, N, N) = (layer, head, query, key), rows of weights
    (causal or not); ``ids`` (N,) the token ids the weights were computed on.
    """
    a = np.asarray(attentions)
    ids = _ids(ids)
    if a.ndim != 4 or a.shape[-1] != a.shape[-2]:
        raise ValueError(
            f"attentions must be (layers, heads, N, N) with N queries and N keys, got shape "
            f"{a.shape}"
        )
    if a.shape[-1] != ids.size:
        raise ValueError(
            f"attentions and ids must have the same N: attentions {a.shape}, ids ({ids.size},)"
        )
    if a.dtype.kind != "f":
        raise ValueError(f"attentions must be floating-point weights, got dtype {a.dtype}")
    n = ids.size
    masks = cell_masks(ids)  # pattern -> (N, N)
    names = list(masks)

    # 1) weight on the pattern's cells, per head and query: pattern -> (L, H, N), summed
    #    in float64. Diagonals for the positional patterns; the token patterns multiply by
    #    their 0/1 matrix (exact) and sum each row.
    def diag(back: int) -> NDArray[np.float64]:  # (L, H, N): A[i, i - back], 0 if i < back
        out = np.zeros((*a.shape[:2], n))
        out[..., back:] = np.diagonal(a, offset=-back, axis1=-2, axis2=-1)  # (L, H, N - back)
        return out

    per_query = {
        "previous": diag(1),
        "first": np.concatenate([np.zeros((*a.shape[:2], 1)), a[..., 1:, 0]], axis=-1),
        "self": diag(0),
        "local": sum(diag(k) for k in range(1, LOCAL_WINDOW + 1)),
    }
    for name in ("duplicate", "induction"):
        m = masks[name].astype(a.dtype)  # (N, N)
        per_query[name] = (a * m).sum(axis=-1, dtype=np.float64)  # (L, H, N)
    # 2) which queries each pattern averages over: (6, N)
    rows = np.ones((len(names), n), dtype=bool)
    rows[names.index("previous"), 0] = False
    rows[names.index("first"), 0] = False
    repeated = masks["duplicate"].any(axis=1)  # (N,): the token occurred before
    rows[names.index("duplicate")] = repeated
    rows[names.index("induction")] = repeated
    # 3) the mean over those queries; NaN where there is none
    out = {}
    for k, name in enumerate(names):
        count = int(rows[k].sum())
        if count == 0:
            out[name] = np.full(a.shape[:2], np.nan)
        else:
            out[name] = per_query[name][..., rows[k]].sum(axis=-1) / count  # (L, H)
    return out


def top_heads(values: ArrayLike, k: int = 3) -> list[tuple[int, int, float]]:
    """The ``k`` heads with the largest score: [(layer, head, score)], 0-based, largest
    first (ties: the earlier layer, then head); NaN scores are left out."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2:
        raise ValueError(f"values must be (layers, heads), got shape {v.shape}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be an integer >= 0, got {k!r}")
    flat = np.where(np.isnan(v), -np.inf, v).ravel()
    order = np.argsort(-flat, kind="stable")[: min(k, int(np.isfinite(flat).sum()))]
    return [(int(i // v.shape[1]), int(i % v.shape[1]), float(flat[i])) for i in order]


def _ids(ids: ArrayLike) -> NDArray[np.int64]:
    arr = np.asarray(ids)
    if arr.ndim != 1 or arr.size < 1:
        raise ValueError(f"ids must be a non-empty 1-D array of token ids, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"ids must be integers, got dtype {arr.dtype}")
    return arr.astype(np.int64, copy=False)
