"""attnviz.toys.tasks: the tasks, their examples, every head on them, the phase change."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import toys
from tests.toys import DECODER_ONLY

# --------------------------------------------------------------------------- tasks


def test_tasks_and_their_layers():
    assert list(toys.TASKS) == ["previous", "reverse", "induction", "align"]
    assert [t.layers for t in toys.TASKS.values()] == [1, 1, 2, 1]
    for task in toys.TASKS.values():
        assert len(task.jobs) == task.layers and set(task.jobs) <= set(toys.JOBS)
    for task in map(toys.get_task, DECODER_ONLY):
        ids, targets, weight = task.sample(np.random.default_rng(0), 5)
        assert ids.shape == targets.shape == weight.shape == (5, task.length)
        assert all(a.dtype == np.int64 for a in (ids, targets, weight))
        assert set(np.unique(weight)) == {0, 1} and (targets[weight == 0] == 0).all()
        assert ids.min() >= 0 and ids.max() < task.vocab
        again = task.sample(np.random.default_rng(0), 5)
        assert all((a == b).all() for a, b in zip((ids, targets, weight), again, strict=True))


def test_previous_targets_are_the_token_before():
    ids, targets, weight = toys.TASKS["previous"].sample(np.random.default_rng(1), 8)
    assert (weight[:, 0] == 0).all() and (weight[:, 1:] == 1).all()
    np.testing.assert_array_equal(targets[:, 1:], ids[:, :-1])


def test_reverse_is_a_sequence_a_separator_and_the_sequence_reversed():
    task = toys.TASKS["reverse"]
    ids, targets, weight = task.sample(np.random.default_rng(2), 8)
    n = (task.length - 1) // 2
    np.testing.assert_array_equal(ids[:, n + 1 :], ids[:, :n][:, ::-1])
    assert (ids[:, n] == task.separator).all() and (ids[:, :n] != task.separator).all()
    t = np.arange(n, 2 * n)  # the scored queries: their target is at key 2n-1-t
    assert (weight[:, t] == 1).all() and weight.sum() == 8 * n
    np.testing.assert_array_equal(targets[:, t], ids[:, 2 * n - 1 - t])


def test_induction_targets_are_found_only_by_induction():
    """On every scored position the query's token occurred exactly once before, and the
    target is the token after that occurrence; the repeat's length and place vary."""
    task = toys.TASKS["induction"]
    ids, targets, weight = task.sample(np.random.default_rng(3), 64)
    offsets = set()
    for row, tgt, w in zip(ids, targets, weight, strict=True):
        for t in np.flatnonzero(w):
            (earlier,) = np.flatnonzero(row[:t] == row[t])  # exactly one
            assert tgt[t] == row[earlier + 1]
            offsets.add(t - earlier)
        scored = np.flatnonzero(w)
        assert len(scored) >= 1 and (np.diff(scored) == 1).all()
    assert len(offsets) >= 8  # no fixed offset finds the answer


def test_examples_are_fixed_with_token_labels():
    for name in DECODER_ONLY:
        a, b = toys.example(name), toys.example(name)
        np.testing.assert_array_equal(a.ids, b.ids)
        assert len(a.labels) == a.ids.shape[0] == toys.TASKS[name].length
        assert all(len(s) == 1 for s in a.labels)
    rev = toys.example("reverse")
    assert rev.labels[8] == toys.SEPARATOR and rev.labels[:8] == rev.labels[9:][::-1]
    ind = toys.example("induction")
    assert ind.labels[:16] == ind.labels[16:] and len(set(ind.labels)) == 16
    assert "".join(toys.example("previous").labels).isalpha()


def test_unknown_task_is_a_key_error_naming_the_tasks():
    msg = r"unknown task 'copy': expected one of 'previous', 'reverse', 'induction'"
    for call in (lambda: toys.get_task("copy"), lambda: toys.example("copy")):
        with pytest.raises(KeyError, match=msg):
            call()
    with pytest.raises(KeyError, match="unknown task"):
        toys.train("copy", 0, 10)


def test_example_attentions_are_the_heads_on_the_example():
    p = toys.TASKS["induction"].init(np.random.default_rng(0))
    att = toys.example_attentions("induction", p)
    assert att.shape == (2, 2, 32, 32)
    _, full = toys.forward(p, toys.example("induction").ids[None])
    np.testing.assert_array_equal(att, full[:, 0])


# --------------------------------------------------------------------------- the page's helpers


@pytest.mark.parametrize("task", DECODER_ONLY)
def test_example_result_stacks_every_layers_heads_as_the_engine_would(task):
    t = toys.TASKS[task]
    params = toys.load(task).checkpoints[-1]
    r = toys.example_result(task, params)
    a = toys.example_attentions(task, params)  # (L, H, T, T)
    assert r.num_heads == t.layers * t.heads and r.n_tokens == t.length
    np.testing.assert_array_equal(r.weights, a.reshape(-1, t.length, t.length))
    # the weights are the causal softmax of the scores: what explain.cell recomputes
    s = np.where(r.mask, r.scores, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(e / e.sum(axis=-1, keepdims=True), r.weights, atol=1e-12)
    np.testing.assert_allclose(r.scale, 1 / np.sqrt(t.d_head))
    np.testing.assert_allclose(r.head_outputs, r.weights @ r.values, atol=1e-12)
    logits, _ = toys.forward(params, toys.example(task).ids[None])
    np.testing.assert_allclose(r.output @ params.unembed, logits[0], atol=1e-10)


def test_phase_change_finds_the_sudden_drop():
    losses = np.concatenate([np.full(300, 3.4), np.linspace(3.4, 0.4, 40), np.full(200, 0.4)])
    step = toys.phase_change(losses, window=20)
    assert 300 <= step <= 341  # inside the drop (steps 301..340)
    assert toys.phase_change(np.full(30, 1.0), window=20) is None  # too short
    assert toys.phase_change(np.linspace(0, 1, 100)) is None  # never falls
    with pytest.raises(ValueError, match="window"):
        toys.phase_change(losses, window=0)
