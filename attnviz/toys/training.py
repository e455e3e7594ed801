"""Training: Adam written out (``_Adam``), :func:`train_iter` (one :class:`History` per
checkpoint, the live form a page uses) and :func:`train`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attnviz.toys.backward import loss_and_grads
from attnviz.toys.model import ToyParams, _int
from attnviz.toys.tasks import Task, get_task

Array = NDArray[np.float64]

#: The most steps :func:`train` and :func:`train_iter` accept (a live run on a page stays
#: under about a minute on one core).
MAX_STEPS = 5_000


@dataclass
class History:
    """A training run: its checkpoints, and the loss of every step.

    ``steps`` (C,) the step of each checkpoint (0 first: the random weights; the last is
    ``total`` once the run is done); ``checkpoints`` the C ``ToyParams``; ``losses`` (S,)
    the training loss of each step taken so far (step s: the loss of its batch before its
    update); ``total`` the steps the run was asked for; ``settings`` lr, batch, every, drop.
    """

    task: str
    seed: int
    steps: NDArray[np.int64]  # (C,)
    checkpoints: list[ToyParams]  # C
    losses: NDArray[np.float64]  # (S,)
    total: int
    settings: dict[str, float]

    @property
    def done(self) -> bool:
        return int(self.steps[-1]) == self.total


class _Adam:
    """Adam (Kingma & Ba 2015), written out: per weight, a running mean m of the
    gradient and v of its square, both bias-corrected, then a step of lr m̂ / (√v̂ + eps)."""

    def __init__(self, params: ToyParams, lr: float, betas=(0.9, 0.999), eps=1e-8) -> None:
        self.lr, (self.b1, self.b2), self.eps = lr, betas, eps
        self.m = params.zeros_like()  # running mean of the gradient
        self.v = params.zeros_like()  # running mean of its square
        self.t = 0

    def step(self, params: ToyParams, grads: ToyParams) -> None:
        """Update ``params`` in place."""
        self.t += 1
        fix1 = 1 - self.b1**self.t  # bias corrections: m and v start at 0
        fix2 = 1 - self.b2**self.t
        for name, p in params.arrays().items():
            g = getattr(grads, name)
            m, v = getattr(self.m, name), getattr(self.v, name)
            m *= self.b1
            m += (1 - self.b1) * g  # m = b1 m + (1 - b1) g
            v *= self.b2
            v += (1 - self.b2) * g * g  # v = b2 v + (1 - b2) g²
            p -= self.lr * (m / fix1) / (np.sqrt(v / fix2) + self.eps)


def _settings(task: Task, steps, lr, batch, every, drop) -> dict[str, float]:
    _int("steps", steps, 1, MAX_STEPS)
    lr = task.lr if lr is None else lr
    if isinstance(lr, bool) or not isinstance(lr, int | float) or not 0 < lr <= 1:
        raise ValueError(f"lr must be a number in (0, 1], got {lr!r}")
    drop = task.drop if drop is None else drop
    if isinstance(drop, bool) or not isinstance(drop, int | float) or not drop > 0:
        raise ValueError(f"drop must be a number > 0 (nats), got {drop!r}")
    return {
        "lr": float(lr),
        "batch": _int("batch", task.batch if batch is None else batch, 1, 4096),
        "every": _int("every", task.every if every is None else every, 1),
        "drop": float(drop),
    }


def train_iter(
    task: str | Task, seed: int, steps: int, *, lr: float | None = None,
    batch: int | None = None, every: int | None = None, drop: float | None = None,
) -> Iterator[History]:  # fmt: skip
    """Train the task's model with Adam, yielding the run so far at each checkpoint.

    The first ``History`` yielded holds step 0 (the random weights), the last one is
    ``done``. Stop iterating to cancel. A checkpoint is taken every ``every`` steps, and
    sooner whenever the smoothed training loss (an exponential mean over about 10 steps)
    fell by ``drop`` nats since the last one, so that a sudden drop gets several. The
    weights and every batch come from ``numpy.random.default_rng(seed)``: a run is
    deterministic. ``steps`` is 1 .. :data:`MAX_STEPS`; the others default to the task's.
    """
    task = get_task(task)
    seed = _int("seed", seed, 0)
    settings = _settings(task, steps, lr, batch, every, drop)  # checked now, not at next()
    return _run(task, seed, steps, settings)


def _run(task: Task, seed: int, steps: int, settings: dict[str, float]) -> Iterator[History]:
    """The training loop of :func:`train_iter`."""
    rng = np.random.default_rng(seed)
    params = task.init(rng)  # (the same generator then draws every batch)
    adam = _Adam(params, settings["lr"])
    losses = np.zeros(steps)  # (S,)
    checkpoints, at = [params.copy()], [0]

    def snapshot(s: int) -> History:
        return History(
            task=task.name, seed=seed, steps=np.array(at, dtype=np.int64),
            checkpoints=list(checkpoints), losses=losses[:s].copy(), total=steps,
            settings=dict(settings),
        )  # fmt: skip

    yield snapshot(0)
    smooth = np.inf  # the smoothed loss, and its value at the last checkpoint
    at_last = np.inf
    for step in range(1, steps + 1):
        batch = task.sample(rng, int(settings["batch"]))  # (ids, targets, weight) (B, T) each
        loss, grads = loss_and_grads(params, *batch)
        losses[step - 1] = loss
        adam.step(params, grads)
        smooth = loss if step == 1 else 0.9 * smooth + 0.1 * loss
        at_last = smooth if step == 1 else at_last
        dropped = at_last - smooth >= settings["drop"]
        if step == steps or step - at[-1] >= settings["every"] or dropped:
            checkpoints.append(params.copy())
            at.append(step)
            at_last = smooth
            yield snapshot(step)


def train(
    task: str | Task, seed: int, steps: int, *, lr: float | None = None,
    batch: int | None = None, every: int | None = None, drop: float | None = None,
) -> History:  # fmt: skip
    """The finished run of :func:`train_iter` (same arguments)."""
    *_, history = train_iter(task, seed, steps, lr=lr, batch=batch, every=every, drop=drop)
    return history
