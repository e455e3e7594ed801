"""attnviz.toys.scores: each head's job score."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import toys

# --------------------------------------------------------------------------- scores


def test_antidiagonal_share():
    n = 4
    t = 2 * n + 1
    perfect = np.zeros((t, t))
    perfect[np.arange(t), np.arange(t)] = 1  # itself everywhere ...
    q = np.arange(n, 2 * n)
    perfect[q, q] = 0
    perfect[q, 2 * n - 1 - q] = 1  # ... but the scored queries, on the anti-diagonal
    assert toys.antidiagonal_share(perfect) == 1.0
    uniform = np.tril(np.ones((t, t))) / np.arange(1, t + 1)[:, None]
    assert toys.antidiagonal_share(uniform) == pytest.approx(np.mean(1 / (q + 1)))
    stacked = toys.antidiagonal_share(np.stack([perfect, uniform])[None])
    assert stacked.shape == (1, 2)
    for bad in (np.zeros((4, 4)), np.zeros((5, 4)), np.zeros(3)):
        with pytest.raises(ValueError, match=r"attentions must be \(..., T, T\) with T = 2n"):
            toys.antidiagonal_share(bad)


def test_first_step_above():
    scores = np.array([[[0.1, 0.2]], [[0.5, 0.1]], [[0.9, 0.3]]])  # (C=3, L=1, H=2)
    js = toys.JobScores("previous", np.array([0, 10, 25]), scores, ("previous",), ("p",))
    np.testing.assert_array_equal(js.first_step_above(0.5), [[10, -1]])
    np.testing.assert_array_equal(js.first_step_above(0.2), [[10, 0]])


def test_job_scores_of_a_list_and_of_ids():
    task = toys.TASKS["previous"]
    p = task.init(np.random.default_rng(0))
    js = toys.job_scores("previous", [p, p])
    assert js.scores.shape == (2, 1, 2) and (js.steps == [0, 1]).all()
    assert js.jobs == ("previous",) and js.labels == ("previous-token score",)
    # on the example by default; given ids (B, T) the mean over the rows
    _, att = toys.forward(p, toys.example("previous").ids[None])
    np.testing.assert_allclose(js.scores[0, 0], np.diagonal(att[0, 0], -1, -2, -1).mean(-1))
    ids = task.sample(np.random.default_rng(1), 3)[0]
    rows = [toys.job_scores(task, [p], ids[i]).scores[0] for i in range(3)]
    np.testing.assert_allclose(toys.job_scores(task, [p], ids).scores[0], np.mean(rows, 0))
    with pytest.raises(ValueError, match="task 'induction' has 2 layer"):
        toys.job_scores("induction", [p])
    with pytest.raises(ValueError, match="a non-empty list of ToyParams"):
        toys.job_scores("previous", [])
