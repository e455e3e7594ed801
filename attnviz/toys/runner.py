"""A toy run trained in a thread of the server, as the Learned attention page does it
(``attnviz/ui/learned.py`` asks, draws and polls; no Streamlit here).

:func:`start` takes one of :data:`SERVER_RUNS` slots (a semaphore, one per core, for every
session together) and trains a :class:`Run` in a daemon thread (:func:`train_run`): the run
keeps its history so far and each checkpoint's job scores for the page to read, and stops
when cancelled or when its page has not looked at it (``run.seen``) for
:data:`LEAVE_AFTER` seconds. The slot comes back when the thread ends.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from attnviz.toys.scores import JOBS, JobScores, job_scores
from attnviz.toys.tasks import get_task
from attnviz.toys.training import History, train_iter

#: Live runs on this server at once (every session together): one per core.
SERVER_RUNS = max(1, os.cpu_count() or 1)
LEAVE_AFTER = 10.0  # seconds without a look: the student left, the run stops
#: The slots: :func:`start` takes one, the run's thread gives it back.
SLOTS = threading.BoundedSemaphore(SERVER_RUNS)


@dataclass
class Run:
    """This session's own training run, trained by a thread; the page reads it."""

    task: str
    seed: int
    steps: int
    history: History | None = None  # the run so far (a new object per checkpoint)
    scores: list = field(default_factory=list)  # (L, H) job scores, one per checkpoint
    state: str = "running"  # running, done, cancelled, failed
    message: str = ""
    seen: float = field(default_factory=time.monotonic)  # the page's last look
    cancel: threading.Event = field(default_factory=threading.Event)
    announced: bool = False  # the page has rerun once since it ended

    @property
    def running(self) -> bool:
        return self.state == "running"

    def jobs(self) -> JobScores | None:
        """The job scores of the checkpoints so far (None before the first)."""
        h, scores = self.history, list(self.scores)
        if h is None or not scores:
            return None
        c = min(len(scores), len(h.steps))
        task = get_task(self.task)
        return JobScores(
            task=self.task, steps=h.steps[:c], scores=np.stack(scores[:c]), jobs=task.jobs,
            labels=tuple(JOBS[j] for j in task.jobs),
        )  # fmt: skip


def train_run(run: Run) -> None:
    """The thread's work: train, keep the run so far and its job scores, stop when told or left."""
    task = get_task(run.task)
    try:
        every = min(task.every, max(10, run.steps // 50))  # charts at least every 2 %
        for history in train_iter(task, run.seed, run.steps, every=every):
            for params in history.checkpoints[len(run.scores) :]:
                run.scores.append(job_scores(task, [params]).scores[0])  # (L, H)
            run.history = history
            if run.cancel.is_set() or time.monotonic() - run.seen > LEAVE_AFTER:
                run.state = "cancelled"
                return
        run.state = "done"
    except Exception as exc:  # noqa: BLE001 - the page says what went wrong
        run.state, run.message = "failed", f"{type(exc).__name__}: {exc}"
    finally:
        SLOTS.release()


def start(task: str, seed: int, steps: int) -> Run | None:
    """A run of ``task`` training in a new thread, or None if every slot is taken."""
    if not SLOTS.acquire(blocking=False):
        return None
    run = Run(task=task, seed=seed, steps=steps)
    threading.Thread(
        target=train_run, args=(run,), name=f"attnviz-train-{task}", daemon=True
    ).start()
    return run
