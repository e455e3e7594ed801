"""Other views of the engine's results: the UDL book's column layout (:func:`to_columns`),
the entropy of attention rows (:func:`row_entropy`) and a token permutation
(:func:`permute_tokens`, the permutation-equivariance demonstration of notebook 12.1).
Re-exported by ``attnviz/engine/core.py``, where they are imported from. Plain NumPy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.engine.checks import shape_text

Array = NDArray[np.floating]


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


def to_columns(result: Any) -> ColumnView:
    """The UDL column-layout (D x N) view of a row-layout ``engine.AttentionResult``: every
    matrix transposed."""

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
            f"perm must be a permutation of 0..{x.shape[0] - 1} for x of shape {shape_text(x)}, "
            f"got {p.tolist()}"
        )
    return x[p]
