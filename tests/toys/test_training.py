"""attnviz.toys.training: Adam, train_iter and train."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from attnviz import toys
from tests.toys import odd_params

# --------------------------------------------------------------------------- training


def test_adam_first_step_is_lr_times_the_sign():
    p = odd_params()
    g = odd_params(9)
    adam = toys.training._Adam(p, lr=0.01)
    before = p.copy()
    adam.step(p, g)
    for name in toys.SHAPES:
        step = getattr(before, name) - getattr(p, name)
        gn = getattr(g, name)
        np.testing.assert_allclose(step, 0.01 * gn / (np.abs(gn) + 1e-8), rtol=1e-12)


def test_train_iter_yields_each_checkpoint_as_it_is_made():
    runs = list(toys.train_iter("previous", 3, 60, every=20))
    first, last = runs[0], runs[-1]
    assert first.steps.tolist() == [0] and first.losses.size == 0 and not first.done
    assert last.done and last.steps[-1] == 60 and last.losses.shape == (60,)
    assert [r.steps[-1] for r in runs] == last.steps.tolist()
    assert all(np.diff(last.steps) <= 20)
    for r in runs:  # each snapshot: its checkpoints so far and the losses up to its step
        assert len(r.checkpoints) == len(r.steps) and r.losses.size == r.steps[-1]
        np.testing.assert_array_equal(r.losses, last.losses[: r.losses.size])
    # checkpoints are copies: the first is still the random weights
    np.testing.assert_array_equal(
        last.checkpoints[0].w_q, toys.TASKS["previous"].init(np.random.default_rng(3)).w_q
    )
    assert not np.array_equal(last.checkpoints[0].w_q, last.checkpoints[-1].w_q)
    assert last.settings == {"lr": 3e-3, "batch": 32, "every": 20, "drop": 0.1}


def test_a_sudden_drop_gets_extra_checkpoints():
    every = toys.train("previous", 0, 200, every=200, drop=100.0)
    dense = toys.train("previous", 0, 200, every=200, drop=0.1)
    assert every.steps.tolist() == [0, 200]
    assert len(dense.steps) > 10 and np.diff(dense.steps).min() >= 1


def test_training_is_deterministic_and_seeded():
    a = toys.history_bytes(toys.train("induction", 5, 20))
    b = toys.history_bytes(toys.train("induction", 5, 20))
    c = toys.history_bytes(toys.train("induction", 6, 20))
    assert a == b and a != c


def test_training_learns():
    run = toys.train("previous", 0, 150)
    assert run.losses[-10:].mean() < run.losses[:10].mean() / 4


def test_the_same_run_under_1_and_2_blas_threads():
    """The BLAS calls give the same bits with 1 or 2 threads (the run files are made
    without OPENBLAS_NUM_THREADS set; the tests may run with it)."""
    code = (
        "import hashlib, sys; from attnviz import toys; "
        "sys.stdout.write(hashlib.sha256(toys.history_bytes(toys.train('induction', 0, 20)))"
        ".hexdigest())"
    )
    digests = set()
    for threads in ("1", "2"):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True,
            timeout=240, check=True,
        )  # fmt: skip
        digests.add(out.stdout)
    assert len(digests) == 1


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"steps": 0}, ValueError, f"steps must be in 1..{toys.MAX_STEPS}, got 0"),
        ({"steps": toys.MAX_STEPS + 1}, ValueError,
         f"steps must be in 1..{toys.MAX_STEPS}, got {toys.MAX_STEPS + 1}"),
        ({"steps": 2.5}, ValueError, "steps must be an integer, got 2.5"),
        ({"seed": -1}, ValueError, "seed must be >= 0, got -1"),
        ({"lr": 0}, ValueError, r"lr must be a number in \(0, 1\], got 0"),
        ({"batch": 0}, ValueError, "batch must be in 1..4096, got 0"),
        ({"every": 0}, ValueError, "every must be >= 1, got 0"),
        ({"drop": -1}, ValueError, r"drop must be a number > 0 \(nats\), got -1"),
        ({"task": "copy"}, KeyError, "unknown task 'copy'"),
    ],
)  # fmt: skip
def test_train_refuses_bad_input_at_once(kwargs, error, message):
    args = {"task": "previous", "seed": 0, "steps": 10, **kwargs}
    with pytest.raises(error, match=message):
        toys.train_iter(**args)  # raised by the call, before the first checkpoint
    with pytest.raises(error, match=message):
        toys.train(**args)
