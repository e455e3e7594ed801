"""One cell's arithmetic: how weight a_ij (and score s_ij, and output row i) came about.

Pure NumPy on the engine's :class:`~attnviz.engine.AttentionResult` (row layout: query i is
row i of the head's Q, key j row j of its K). The steps of :func:`cell`, for head h:

1. q_i and k_j side by side, their products term by term and the sum: the dot product
2. the scale: s_ij = (q_i · k_j) × scale
3. the mask: a key query i may not see gets s_ij = -inf (its weight is exactly 0)
4. the row's exponentials e_m = exp(s_im - max_m s_im) (0 where masked) and their sum
5. the weight a_ij = e_j / Σ_m e_m (0 for a fully masked row: no key to attend to)
6. the output row i of the head: Σ_m a_im v_m, one term per key

In the UDL book's column layout (``to_columns``) the same cell is drawn at row j, column i:
the indices here are always (query i, key j), whatever the layout shown.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnviz.engine import AttentionResult

__all__ = ["Cell", "cell", "cell_at"]

Array = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class Cell:
    """The worked computation of weight a_ij of one head (every number in float64).

    ``products`` (d_k,) = q_i * k_j elementwise; ``dot`` their sum; ``scale`` the factor;
    ``masked`` whether key j is hidden from query i; ``score`` = dot * scale, or -inf if
    masked; ``row_scores`` (N,) the row's scores (-inf where masked); ``row_max`` the
    largest visible score (0 for a fully masked row); ``row_exps`` (N,) exp(score - row_max),
    0 where masked; ``exp_sum`` their sum (0 for a fully masked row); ``weight`` =
    ``result.weights[head, query, key]``; ``row_weights`` (N,) the whole row of weights;
    ``values`` (N, d_v) the head's V; ``output_terms`` (N, d_v) = row_weights[:, None] * V,
    summing (over the keys) to ``output``, the head's output row i.
    """

    head: int
    query: int
    key: int
    q: Array  # (d_k,) q_i of the head
    k: Array  # (d_k,) k_j of the head
    products: Array  # (d_k,) q_i * k_j
    dot: float
    scale: float
    masked: bool
    score: float
    row_scores: Array  # (N,)
    row_max: float
    row_exps: Array  # (N,)
    exp_sum: float
    weight: float
    row_weights: Array  # (N,)
    values: Array  # (N, d_v)
    output_terms: Array  # (N, d_v)
    output: Array  # (d_v,)

    @property
    def fully_masked(self) -> bool:
        """Query i may see no key at all: every weight of its row is 0."""
        return not np.isfinite(self.row_scores).any()

    @property
    def n_tokens(self) -> int:
        return int(self.row_scores.shape[0])


def _index(name: str, value: object, size: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer from 0 to {size - 1} ({what}), got {value!r}")
    if not 0 <= int(value) < size:
        raise ValueError(f"{name} must be from 0 to {size - 1} ({what}), got {value}")
    return int(value)


def cell(result: AttentionResult, head: int, query: int, key: int) -> Cell:
    """The arithmetic of weight ``result.weights[head, query, key]`` (see the module's steps).

    Raises ``ValueError`` naming the valid range if an index is out of range.
    """
    if not isinstance(result, AttentionResult):
        raise ValueError(f"result must be an engine AttentionResult, got {type(result).__name__}")
    h_count, n, m = result.weights.shape  # (H, N queries, M keys)
    head = _index("head", head, h_count, f"{h_count} heads")
    query = _index("query", query, n, f"{n} queries")
    key = _index("key", key, m, f"{m} keys")
    f64 = np.float64
    qs = np.asarray(result.queries[head], f64)  # (N, d_k)
    ks = np.asarray(result.keys[head], f64)  # (M, d_k)
    vs = np.asarray(result.values[head], f64)  # (M, d_v)
    scale = float(result.scale)
    # 1. q_i and k_j term by term, and the dot product
    q, k = qs[query], ks[key]  # (d_k,), (d_k,)
    products = q * k  # (d_k,)
    dot = float(products.sum())
    # 2-3. the row's scores, scaled, -inf where the mask hides a key
    visible = np.ones(m, bool) if result.mask is None else np.asarray(result.mask[query], bool)
    row_scores = np.where(visible, (ks @ q) * scale, -np.inf)  # (M,)
    masked = not bool(visible[key])
    score = -np.inf if masked else dot * scale
    # 4. exponentials shifted by the row's largest visible score (0 where masked)
    row_max = float(row_scores[visible].max()) if visible.any() else 0.0
    row_exps = np.zeros(m, f64)  # (M,)
    row_exps[visible] = np.exp(row_scores[visible] - row_max)
    exp_sum = float(row_exps.sum())
    # 5. the weight (the engine's); 6. the output row as one term per key
    row_weights = np.asarray(result.weights[head, query], f64)  # (M,)
    output_terms = row_weights[:, None] * vs  # (M, d_v)
    return Cell(
        head=head,
        query=query,
        key=key,
        q=q.copy(),
        k=k.copy(),
        products=products,
        dot=dot,
        scale=scale,
        masked=masked,
        score=float(score),
        row_scores=row_scores,
        row_max=row_max,
        row_exps=row_exps,
        exp_sum=exp_sum,
        weight=float(result.weights[head, query, key]),
        row_weights=row_weights.copy(),
        values=vs.copy(),
        output_terms=output_terms,
        output=output_terms.sum(axis=0),
    )


def cell_at(result: AttentionResult, head: int, row: int, col: int, layout: str) -> Cell:
    """The cell drawn at (``row``, ``col``) of a head's matrix in ``layout``: rows (PyTorch,
    query i = row) or columns (UDL book, query i = column)."""
    if layout == "rows":
        return cell(result, head, row, col)
    if layout == "columns":
        return cell(result, head, col, row)
    raise ValueError(f"layout must be 'rows' or 'columns', got {layout!r}")
