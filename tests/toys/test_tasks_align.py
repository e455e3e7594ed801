"""The align task (issue 33, item 3): a toy encoder-decoder whose cross-attention learns
the alignment of a translation. Its pairs and alignment, forward's attentions, bad input,
and the shipped run (attnviz/toy_runs/align.npz): its targets, its size, its seed.
(Gradients against autograd: tests/toys/test_backward_torch.py.)"""

from __future__ import annotations

import re

import numpy as np
import pytest

from attnviz import toys

TASK = toys.TASKS["align"]
#: The shipped run's file stays under this many bytes.
LIMIT = 1_500_000


@pytest.fixture(scope="module")
def run() -> toys.History:
    return toys.load("align")


# --------------------------------------------------------------------------- the task


def test_pairs_translate_each_word_and_put_its_colour_after_its_noun():
    src, tgt, targets, weight = TASK.sample(np.random.default_rng(0), 5)
    assert src.shape == (5, TASK.src_length) and tgt.shape == targets.shape == (5, TASK.length)
    assert (weight == 1).all() and (tgt[:, 0] == TASK.vocab - 1).all()  # the start token
    np.testing.assert_array_equal(tgt[:, 1:], targets[:, :-1])  # teacher-forced
    aligned = TASK.aligned(src, tgt)
    n = len(toys.tasks.WORDS)
    np.testing.assert_array_equal(np.take_along_axis(src, aligned, 1) + n, targets)
    words = [TASK.label(i) for i in src[0]], [TASK.label(i) for i in targets[0]]
    english, french = dict(toys.tasks.WORDS), words[1]
    for j in range(0, TASK.src_length, 2):  # "red cat" -> "chat rouge"
        colour, noun = words[0][j], words[0][j + 1]
        assert french[j : j + 2] == [english[noun], english[colour]]
    np.testing.assert_array_equal(aligned[0], [1, 0, 3, 2, 5, 4, 7, 6])


def test_the_example_is_fixed_and_labelled_with_words():
    a, b = toys.example("align"), toys.example("align")
    np.testing.assert_array_equal(a.src, b.src)
    assert len(a.src_labels) == TASK.src_length and len(a.target_labels) == TASK.length
    assert a.labels[0] == "<s>" and a.labels[1:] == a.target_labels[:-1]
    assert len(set(a.src_labels)) == TASK.src_length  # no word twice: the alignment reads


@pytest.mark.parametrize(
    ("src", "message"),
    [
        (np.zeros((2, 7), int), r"src must be \(B, 8\) integer ids, got int64 \(2, 7\)"),
        (np.full((2, 8), 20), r"src must be English words, ids 0..15, got values 20..20"),
        (np.full((2, 8), 9), "src must put a noun after every colour"),
    ],
)
def test_aligned_refuses_what_is_not_english_pairs(src, message):
    with pytest.raises(ValueError, match=message):
        TASK.aligned(src, np.zeros_like(src))


# --------------------------------------------------------------------------- forward


def test_forward_gives_the_three_kinds_of_attention():
    p = toys.EncDecParams.init(np.random.default_rng(0), vocab=11, src_length=6, length=5,
                               d_model=7, layers=2, heads=3, d_head=5)  # fmt: skip
    rng = np.random.default_rng(1)
    logits, att = toys.forward(p, rng.integers(0, 11, (4, 6)), rng.integers(0, 11, (4, 3)))
    assert logits.shape == (4, 3, 11)
    assert {k: a.shape for k, a in att.items()} == {
        "encoder": (2, 4, 3, 6, 6), "decoder": (2, 4, 3, 3, 3), "cross": (2, 4, 3, 3, 6),
    }  # fmt: skip
    for a in att.values():
        np.testing.assert_allclose(a.sum(-1), 1.0, atol=1e-12)
    assert (att["decoder"][..., ~np.tril(np.ones((3, 3), bool))] == 0).all()  # causal
    assert (att["encoder"] > 0).all() and (att["cross"] > 0).all()  # not causal


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((np.zeros((2, 9), int), np.zeros((2, 8), int)),
         r"src has 9 tokens, more than the model's S_max = 8 positions"),
        ((np.zeros((2, 8), int), np.zeros((3, 8), int)),
         r"src and tgt must hold the same B sequences, got src \(2, 8\), tgt \(3, 8\)"),
        ((np.zeros((2, 8), int), np.full((2, 8), 33)),
         r"tgt must be in 0..32 \(V = 33\), got values 33..33"),
        ((np.zeros((2, 8), float), np.zeros((2, 8), int)),
         "src must be integer token ids, got dtype float64"),
        ((np.zeros((2, 8), int),), "forward of EncDecParams takes src, tgt, got 1 array"),
    ],
)  # fmt: skip
def test_forward_refuses_bad_input_saying_what_was_expected(run, args, message):
    with pytest.raises(ValueError, match=message):
        toys.forward(run.checkpoints[0], *args)


def test_loss_and_grads_takes_the_tuple_sample_gives(run):
    batch = TASK.sample(np.random.default_rng(3), 4)
    loss, grads = toys.loss_and_grads(run.checkpoints[0], *batch)
    assert isinstance(grads, toys.EncDecParams) and loss > 0
    with pytest.raises(ValueError, match=re.escape("takes src, tgt, targets, weight, got 3")):
        toys.loss_and_grads(run.checkpoints[0], *batch[:3])
    src, tgt, targets, weight = batch
    with pytest.raises(ValueError, match=r"targets must have the shape of ids \(4, 8\)"):
        toys.loss_and_grads(run.checkpoints[0], src, tgt, targets[:, :5], weight)


# --------------------------------------------------------------------------- the shipped run


def test_the_shipped_run_reaches_its_targets_on_1000_fresh_pairs(run):
    start = toys.alignment("align", run.checkpoints[0], seed=12345, batch=1000)  # (L, H)
    end = toys.alignment("align", run.checkpoints[-1], seed=12345, batch=1000)
    assert start[-1].max() <= 0.4, start  # the best head of the last layer, at step 0
    assert end[-1].max() >= 0.95, end  # and at the end
    _, accuracy = toys.evaluate("align", run.checkpoints[-1], seed=12345, batch=1000)
    assert accuracy >= 0.95
    assert 0 < toys.run_path("align").stat().st_size < LIMIT


def test_the_alignment_accuracy_is_a_job_score_per_head(run):
    jobs = toys.job_scores("align", run)
    assert jobs.labels == ("alignment accuracy",)
    assert jobs.scores.shape == (len(run.steps), TASK.layers, TASK.heads)
    assert jobs.scores[0].max() <= 0.4 and jobs.scores[-1].max() >= 0.95
    perfect = np.zeros((1, 1, 8, 8))  # one pair, one head: every row on its aligned word
    aligned = np.array([[1, 0, 3, 2, 5, 4, 7, -1]])
    perfect[0, 0, np.arange(7), aligned[0, :7]] = 1
    assert toys.alignment_accuracy(perfect, aligned).tolist() == [1.0]  # -1: not counted


def test_the_shipped_run_is_remade_from_its_seed(run):
    """The first 60 steps trained again from seed 0: the shipped losses and checkpoints
    (float16 in the file: one half-precision step). The whole run, byte for byte: the
    command ``python -m attnviz.toys --task align --seed 0`` (docs/engine.md)."""
    n = 60
    again = toys.train("align", run.seed, n, **run.settings)
    np.testing.assert_allclose(again.losses, run.losses[:n], rtol=1e-5, atol=1e-6)
    shared = [s for s in again.steps if s in set(run.steps.tolist())]
    assert len(shared) >= 10
    for s in shared:
        mine = again.checkpoints[list(again.steps).index(s)]
        theirs = run.checkpoints[list(run.steps).index(s)]
        for name, a in mine.arrays().items():
            np.testing.assert_allclose(a, getattr(theirs, name), rtol=2e-3, atol=2e-3)
    other = toys.train("align", run.seed + 1, 1, **run.settings)
    assert not np.allclose(other.checkpoints[0].embed, run.checkpoints[0].embed, atol=2e-3)
