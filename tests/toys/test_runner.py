"""attnviz.toys.runner: a run trained in a thread, its slot, stopped when left or cancelled
(the page that starts and polls it: tests/ui/test_learned.py)."""

from __future__ import annotations

import time

from attnviz.toys import runner
from attnviz.ui.learned import LIVE_MAX_STEPS


def test_a_run_whose_page_was_left_stops():
    assert runner.SLOTS.acquire(blocking=False)  # what Train takes; the run gives it back
    run = runner.Run(task="induction", seed=0, steps=LIVE_MAX_STEPS)
    run.seen = time.monotonic() - runner.LEAVE_AFTER - 1  # nobody looked for a while
    runner.train_run(run)
    assert run.state == "cancelled"
    assert run.history is not None and run.history.steps[-1] < run.steps
    assert runner.SLOTS.acquire(blocking=False)  # the slot came back
    runner.SLOTS.release()


def test_cancel_stops_the_run_and_keeps_its_checkpoints():
    assert runner.SLOTS.acquire(blocking=False)
    run = runner.Run(task="previous", seed=0, steps=LIVE_MAX_STEPS)
    run.cancel.set()
    runner.train_run(run)
    assert run.state == "cancelled" and len(run.scores) == len(run.history.steps)
