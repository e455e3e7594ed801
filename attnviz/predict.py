"""Predict, then reveal: questions about the view on screen, answered from the engine's
result (pure NumPy, no Streamlit). The live class stores them (:meth:`ClassStore.ask`).

- :func:`top_key`: "Which key does query i attend to most (head h)?": the argmax of row i
  of head h's weights; choices are the keys.
- :func:`previous_head`: "Which head looks at the previous token?": the head whose mean
  weight on key i-1 (over the queries i >= 1) is largest; choices are the heads.

A question without a single answer (a tie, a fully masked row, one token or one head)
raises ``ValueError`` naming why: the room is not asked something the chart cannot settle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

#: Two weights closer than this are a tie: no single right answer.
TIE = 1e-6
LABEL_CHARS = 16


@dataclass(frozen=True)
class Question:
    """What :meth:`attnviz.classroom.ClassStore.ask` stores: ``answer`` indexes
    ``choices``; ``detail`` says what to outline (``query``/``key``/``head``)."""

    kind: str
    prompt: str
    choices: tuple[str, ...]
    answer: int
    detail: dict[str, int] = field(default_factory=dict)


def _weights(weights: ArrayLike) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 3 or w.shape[1] == 0 or w.shape[2] == 0:
        raise ValueError(f"weights must be (heads, N, M) with N, M >= 1, got shape {w.shape}")
    return w


def _single_top(values: np.ndarray, what: str) -> int:
    """The index of the largest value; ValueError if the top two are a tie."""
    order = np.argsort(-values, kind="stable")
    best = int(order[0])
    if values.size > 1 and values[best] - values[order[1]] < TIE:
        raise ValueError(
            f"{what}: no single answer ({values[best]:.4f} and {values[order[1]]:.4f} tie)"
        )
    return best


def top_key(
    weights: ArrayLike, head: int, query: int, labels: Sequence[str] | None = None
) -> Question:
    """Which key query ``query`` attends to most in head ``head`` (weights (H, N, M))."""
    w = _weights(weights)  # (H, N, M)
    h, n, m = w.shape
    if not (0 <= head < h and 0 <= query < n):
        raise ValueError(f"head must be 0..{h - 1} and query 0..{n - 1}, got {head}, {query}")
    row = w[head, query]  # (M,)
    if not row.any():
        raise ValueError(f"query {query} attends to no key (every key is masked)")
    key = _single_top(row, f"query {query} in head {head}")
    names = [
        f"key {j}" + (f" ({labels[j][:LABEL_CHARS]})" if labels is not None else "")
        for j in range(m)
    ]
    return Question(
        "top_key",
        f"Which key does query {query} attend to most (head {head})?",
        tuple(names),
        key,
        {"query": query, "head": head, "key": key},
    )


def previous_scores(weights: ArrayLike) -> np.ndarray:
    """(H,) each head's mean weight of query i on key i-1, over i = 1..N-1."""
    w = _weights(weights)  # (H, N, M)
    n = min(w.shape[1], w.shape[2])
    if n < 2:
        raise ValueError(f"a previous token needs N >= 2 tokens, got {n}")
    i = np.arange(1, n)
    return w[:, i, i - 1].mean(axis=1)  # (H,)


def previous_head(weights: ArrayLike) -> Question:
    """Which head looks at the previous token most (mean weight on key i-1)."""
    w = _weights(weights)
    if w.shape[0] < 2:
        raise ValueError(f"asking which head needs 2 heads or more, got {w.shape[0]}")
    head = _single_top(previous_scores(w), "the heads' previous-token weights")
    return Question(
        "previous_head",
        "Which head looks at the previous token most?",
        tuple(f"head {i}" for i in range(w.shape[0])),
        head,
        {"head": head},
    )


def answer_cells(kind: str, detail: dict[str, int], n: int) -> list[tuple[int, int]]:
    """The (query, key) cells that show a revealed answer on head ``detail["head"]``'s
    weights: the top key's cell, or the previous-token diagonal (i, i-1)."""
    if kind == "top_key":
        return [(detail["query"], detail["key"])]
    if kind == "previous_head":
        return [(i, i - 1) for i in range(1, n)]
    raise ValueError(f"a view question's kind is 'top_key' or 'previous_head', got {kind!r}")
