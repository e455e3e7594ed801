"""Each head's score for the job its task needs (:data:`JOBS`: previous-token, induction,
anti-diagonal share, alignment accuracy) at every checkpoint (:func:`job_scores`), and a
run's loss and accuracy on fresh samples (:func:`evaluate`, :func:`alignment`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.i18n import N_
from attnviz.models.head_patterns import scores as pattern_scores
from attnviz.toys.backward import _cross_entropy
from attnviz.toys.model import EncDecParams, ToyParams, _check_ids, _int, forward
from attnviz.toys.tasks import EXAMPLE_SEED, AlignTask, Task, example, get_task
from attnviz.toys.training import History

Array = NDArray[np.float64]


#: The scores that name a head's job: key -> label (``N_``-marked: shown with ``_(JOBS[key])``).
JOBS: dict[str, str] = {
    "previous": N_("previous-token score"),
    "induction": N_("induction score"),
    "antidiagonal": N_("anti-diagonal share"),
    "alignment": N_("alignment accuracy"),
}
#: How many pairs (drawn with seed EXAMPLE_SEED) an align run's job scores are measured on.
ALIGN_BATCH = 128


def antidiagonal_share(attentions: ArrayLike) -> NDArray[np.float64]:
    """The anti-diagonal share of heads on a ``reverse`` sequence (n tokens, the separator,
    the n tokens reversed: T = 2n + 1): the mean over the queries t = n .. 2n-1 (the
    separator and the reversed tokens but the last, the positions scored) of the weight
    on key 2n-1-t, the token to predict next. ``attentions`` (..., T, T) -> (...)."""
    a = np.asarray(attentions)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] < 3 or a.shape[-1] % 2 == 0:
        raise ValueError(
            f"attentions must be (..., T, T) with T = 2n + 1 >= 3 odd (a reverse sequence), "
            f"got shape {a.shape}"
        )
    n = (a.shape[-1] - 1) // 2
    queries = np.arange(n, 2 * n)  # (n,)
    return a[..., queries, 2 * n - 1 - queries].mean(axis=-1)  # (...)


def _layer_job(task: Task, attentions: Array, ids: NDArray[np.int64]) -> Array:
    """Each head's job score, (L, H), averaged over the sequences: attentions (L, B, H, T, T)."""
    out = np.empty(attentions.shape[0:1] + attentions.shape[2:3])  # (L, H)
    for layer, job in enumerate(task.jobs):
        a = attentions[layer]  # (B, H, T, T)
        if job == "antidiagonal":
            out[layer] = antidiagonal_share(a).mean(axis=0)  # (H,)
        else:  # head_patterns scores (layers, heads, N, N) on one sequence's ids
            per_row = [pattern_scores(a[b][None], ids[b])[job][0] for b in range(len(ids))]
            out[layer] = np.mean(per_row, axis=0)  # (H,)
    return out


def alignment_accuracy(cross: ArrayLike, aligned: ArrayLike) -> NDArray[np.float64]:
    """Each head's alignment accuracy: the share of target positions with an aligned source
    position (``aligned`` >= 0) whose largest cross-attention weight sits on it.
    ``cross`` (..., B, H, T, S), ``aligned`` (B, T) -> (..., H)."""
    a, al = np.asarray(cross), np.asarray(aligned)
    if a.ndim < 4 or al.shape != (a.shape[-4], a.shape[-2]):
        raise ValueError(
            f"expected cross (..., B, H, T, S) and aligned (B, T) of its B and T, got "
            f"cross {a.shape}, aligned {al.shape}"
        )
    hit = a.argmax(axis=-1) == al[:, None, :]  # (..., B, H, T)
    has = al >= 0  # (B, T)
    return (hit & has[:, None, :]).sum(axis=(-3, -1)) / max(int(has.sum()), 1)  # (..., H)


def _align_batch(task: AlignTask, seed: int, batch: int) -> tuple[NDArray[np.int64], ...]:
    return task.sample(np.random.default_rng(_int("seed", seed, 0)), batch)


def alignment(
    task: str | Task, params: EncDecParams, *, seed: int = 12345, batch: int = 1000
) -> NDArray[np.float64]:
    """(L, H) each cross-attention head's alignment accuracy on ``batch`` fresh pairs drawn
    with ``seed`` (:func:`alignment_accuracy`; the best head of the last layer:
    ``alignment(...)[-1].max()``)."""
    task = get_task(task)
    if not isinstance(task, AlignTask):
        raise ValueError(f"task {task.name!r} has no alignment: not an encoder-decoder's")
    src, tgt, _, _ = _align_batch(task, seed, batch)
    _, attentions = forward(params, src, tgt)
    return alignment_accuracy(attentions["cross"], task.aligned(src, tgt))  # (L, H)


@dataclass(frozen=True)
class JobScores:
    """Per checkpoint, each head's score for the job its layer does in the task."""

    task: str
    steps: NDArray[np.int64]  # (C,) the checkpoints' steps
    scores: NDArray[np.float64]  # (C, L, H), each in 0..1
    jobs: tuple[str, ...]  # (L,) keys of JOBS
    labels: tuple[str, ...]  # (L,) the JOBS label of each layer's score

    def first_step_above(self, threshold: float) -> NDArray[np.int64]:
        """(L, H): the first checkpoint step at which each head scores >= ``threshold``
        (-1 if it never does): "the moment a head forms"."""
        above = self.scores >= threshold  # (C, L, H)
        first = np.argmax(above, axis=0)  # (L, H)
        return np.where(above.any(axis=0), self.steps[first], -1)


def job_scores(
    task: str | Task, history: History | list[ToyParams], ids: ArrayLike | None = None
) -> JobScores:
    """Each head's job score (:data:`JOBS`, per layer ``task.jobs``) at each checkpoint of
    ``history`` (a :class:`History`, or a list of ``ToyParams`` at steps 0, 1, ...), on
    ``ids`` (T,) or (B, T) (scores averaged over the sequences; default: the task's
    :func:`example`, the sequence a page shows). ``previous`` and ``induction`` are
    :func:`attnviz.models.head_patterns.scores`; ``antidiagonal``: :func:`antidiagonal_share`;
    ``alignment`` (an :class:`AlignTask`, each decoder layer's cross-attention heads): the
    alignment accuracy on :data:`ALIGN_BATCH` pairs drawn with seed ``EXAMPLE_SEED``
    (``ids`` must be None).
    """
    task = get_task(task)
    if isinstance(task, AlignTask) and ids is not None:
        raise ValueError("an align task's job scores take no ids: they are measured on pairs")
    if isinstance(history, History):
        checkpoints, steps = history.checkpoints, history.steps
    else:
        checkpoints, steps = list(history), np.arange(len(history))
    kind = EncDecParams if isinstance(task, AlignTask) else ToyParams
    if not checkpoints or not all(isinstance(p, kind) for p in checkpoints):
        raise ValueError(f"history must be a History or a non-empty list of {kind.__name__}")
    out = []
    for params in checkpoints:
        if params.sizes["L"] != task.layers:
            raise ValueError(
                f"task {task.name!r} has {task.layers} layer(s), params have "
                f"{params.sizes['L']} ({type(params).__name__})"
            )
        if isinstance(task, AlignTask):  # on ALIGN_BATCH fixed pairs
            out.append(alignment(task, params, seed=EXAMPLE_SEED, batch=ALIGN_BATCH))
            continue
        ids = example(task).ids if ids is None else np.asarray(ids)
        ids = ids[None] if ids.ndim == 1 else ids
        _, attentions = forward(params, ids)  # (L, B, H, T, T)
        out.append(_layer_job(task, attentions, _check_ids(params, ids)))
    return JobScores(
        task=task.name, steps=np.asarray(steps, dtype=np.int64), scores=np.stack(out),
        jobs=task.jobs, labels=tuple(JOBS[j] for j in task.jobs),
    )  # fmt: skip


def evaluate(
    task: str | Task, params: ToyParams, *, seed: int = 12345, batch: int = 1000
) -> tuple[float, float]:
    """(loss, accuracy) on ``batch`` fresh sequences drawn with ``seed``: the mean
    cross-entropy and the share of weighted positions whose largest logit is the target."""
    task = get_task(task)
    *inputs, targets, weight = task.sample(np.random.default_rng(_int("seed", seed, 0)), batch)
    logits, _ = forward(params, *inputs)  # (B, T, V)
    right = (logits.argmax(axis=-1) == targets) & (weight == 1)  # (B, T)
    loss, _ = _cross_entropy(logits, targets, weight.astype(np.float64))
    return loss, float(right.sum() / weight.sum())
