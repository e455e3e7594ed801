"""attnviz.toys: the model, its backward pass, the tasks, the scores, training and run files.

The gradients against PyTorch are in tests/test_toys_torch.py, the shipped runs in
tests/test_toys_runs.py.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from attnviz import toys
from attnviz.engine import AttentionParams, causal_mask, multi_head_attention

#: A small model of every kind of shape: L=3, H=3, D=7, d_h=5, V=11, T_max=9.
ODD = {"vocab": 11, "length": 9, "d_model": 7, "layers": 3, "heads": 3, "d_head": 5}


def odd_params(seed: int = 0) -> toys.ToyParams:
    return toys.ToyParams.init(np.random.default_rng(seed), **ODD)


def odd_batch(seed: int = 1, b: int = 4, t: int = 9):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, ODD["vocab"], (b, t))
    targets = rng.integers(0, ODD["vocab"], (b, t))
    weight = (rng.random((b, t)) < 0.6).astype(np.int64)
    weight[0, 0] = 1
    return ids, targets, weight


# --------------------------------------------------------------------------- parameters


def test_params_are_float64_copies_with_their_sizes():
    p = odd_params()
    assert p.sizes == {"V": 11, "D": 7, "T_max": 9, "L": 3, "H": 3, "d_h": 5}
    assert all(a.dtype == np.float64 for a in p.arrays().values())
    assert list(p.arrays()) == list(toys.SHAPES)
    q = p.copy()
    q.w_q[0, 0, 0, 0] += 1
    assert p.w_q[0, 0, 0, 0] != q.w_q[0, 0, 0, 0]
    stored = toys.ToyParams(**{k: a.astype(np.float16) for k, a in p.arrays().items()})
    assert stored.embed.dtype == np.float64


@pytest.mark.parametrize(
    ("name", "shape", "message"),
    [
        ("w_k", (3, 3, 7, 4), "ToyParams.w_k must be (L, H, D, d_h), got shape (3, 3, 7, 4): "
         "its d_h is 4 but w_q has d_h = 5"),
        ("unembed", (7, 12), "its V is 12 but embed has V = 11"),
        ("pos", (9, 7, 1), "ToyParams.pos must be (T_max, D), got shape (9, 7, 1)"),
        ("w_o", (3, 3, 5, 6), "its D is 6 but embed has D = 7"),
        ("embed", (0, 7), "ToyParams.embed must be (V, D), got shape (0, 7)"),
    ],
)  # fmt: skip
def test_params_say_which_size_disagrees(name, shape, message):
    arrays = odd_params().arrays()
    arrays[name] = np.zeros(shape)
    with pytest.raises(ValueError, match=re.escape(message)):
        toys.ToyParams(**arrays)


def test_params_refuse_nan_and_text():
    arrays = odd_params().arrays()
    arrays["pos"] = arrays["pos"].copy()
    arrays["pos"][2, 3] = np.nan
    with pytest.raises(ValueError, match=r"ToyParams.pos \(shape \(9, 7\)\) contains NaN"):
        toys.ToyParams(**arrays)
    arrays = odd_params().arrays()
    arrays["embed"] = np.full((11, 7), "a")
    with pytest.raises(ValueError, match="ToyParams.embed must be numeric, got dtype <U1"):
        toys.ToyParams(**arrays)


# --------------------------------------------------------------------------- forward


def test_forward_shapes_causal_rows():
    p = odd_params()
    ids, _, _ = odd_batch(t=6)
    logits, att = toys.forward(p, ids)
    assert logits.shape == (4, 6, 11) and att.shape == (3, 4, 3, 6, 6)
    np.testing.assert_allclose(att.sum(-1), 1.0, atol=1e-12)
    assert (att[..., ~causal_mask(6)] == 0).all()


def engine_forward(p: toys.ToyParams, ids: np.ndarray) -> np.ndarray:
    """The same model through attnviz's engine, one sequence and one layer at a time:
    a layer's heads are one multi_head_attention with w_q = [w_q[l, 0] | w_q[l, 1] | ...]
    (split_heads gives head h the h-th block of columns) and w_o the blocks stacked."""
    out = []
    for row in ids:
        x = p.embed[row] + p.pos[: len(row)]  # (T, D)
        for layer in range(p.sizes["L"]):
            params = AttentionParams(
                w_q=np.concatenate(list(p.w_q[layer]), axis=1),  # (D, H d_h)
                w_k=np.concatenate(list(p.w_k[layer]), axis=1),
                w_v=np.concatenate(list(p.w_v[layer]), axis=1),
                w_o=np.concatenate(list(p.w_o[layer]), axis=0),  # (H d_h, D)
            )
            res = multi_head_attention(
                x, params, num_heads=p.sizes["H"], mask=causal_mask(len(row))
            )
            x = x + res.output
        out.append(x @ p.unembed)
    return np.stack(out)


def test_forward_equals_the_engine_layer_by_layer():
    p = odd_params(3)
    ids, _, _ = odd_batch(seed=4)
    logits, _ = toys.forward(p, ids)
    np.testing.assert_allclose(logits, engine_forward(p, ids), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        (np.zeros((2, 10), int), r"ids has T = 10 tokens, more than the model's T_max = 9"),
        (np.zeros(5, int), r"ids must be \(B, T\) with B, T >= 1, got shape \(5,\)"),
        (np.zeros((2, 3)), "ids must be integer token ids, got dtype float64"),
        (np.full((1, 3), 11), r"ids must be in 0..10 \(V = 11\), got values 11..11"),
        (np.full((1, 3), -1), r"ids must be in 0..10 \(V = 11\), got values -1..-1"),
    ],
)
def test_forward_refuses_bad_ids(ids, message):
    with pytest.raises(ValueError, match=message):
        toys.forward(odd_params(), ids)


def test_forward_refuses_what_is_not_params():
    with pytest.raises(ValueError, match="params must be ToyParams, got dict"):
        toys.forward({}, np.zeros((1, 2), int))


# --------------------------------------------------------------------------- backward


def test_loss_is_the_mean_cross_entropy_over_the_weighted_positions():
    p = odd_params()
    ids, targets, weight = odd_batch()
    loss, _ = toys.loss_and_grads(p, ids, targets, weight)
    logits, _ = toys.forward(p, ids)
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    nll = -np.take_along_axis(logp, targets[..., None], -1)[..., 0]
    assert loss == pytest.approx(nll[weight == 1].mean(), rel=1e-12)


def test_gradients_equal_central_differences():
    p = odd_params(5)
    ids, targets, weight = odd_batch(seed=6)
    _, grads = toys.loss_and_grads(p, ids, targets, weight)
    rng = np.random.default_rng(7)
    eps = 1e-6
    for name, arr in p.arrays().items():
        for _ in range(4):
            idx = tuple(int(rng.integers(0, s)) for s in arr.shape)
            if name == "pos" and idx[0] >= ids.shape[1]:
                continue
            old = arr[idx]
            arr[idx] = old + eps
            up, _ = toys.loss_and_grads(p, ids, targets, weight)
            arr[idx] = old - eps
            down, _ = toys.loss_and_grads(p, ids, targets, weight)
            arr[idx] = old
            numeric = (up - down) / (2 * eps)
            assert getattr(grads, name)[idx] == pytest.approx(numeric, rel=1e-5, abs=1e-8), (
                name,
                idx,
            )


def test_unused_positions_get_no_gradient():
    p = odd_params()
    ids, targets, weight = odd_batch(t=6)
    _, grads = toys.loss_and_grads(p, ids, targets, weight)
    assert (grads.pos[6:] == 0).all()  # positions past T
    unused = np.setdiff1d(np.arange(11), ids)
    assert (grads.embed[unused] == 0).all()


def test_targets_where_weight_is_0_do_not_count():
    p = odd_params()
    ids, targets, weight = odd_batch()
    other = np.where(weight == 1, targets, (targets + 3) % 11)
    a, ga = toys.loss_and_grads(p, ids, targets, weight)
    b, gb = toys.loss_and_grads(p, ids, other, weight)
    assert a == b
    for name in toys.SHAPES:
        np.testing.assert_array_equal(getattr(ga, name), getattr(gb, name))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"targets": np.zeros((4, 8), int)}, r"targets must have the shape of ids \(4, 9\), got "
         r"\(4, 8\)"),
        ({"weight": np.zeros((4, 9), int)}, "weight is 0 everywhere"),
        ({"weight": np.full((4, 9), 0.5)}, "weight must hold only 0 and 1"),
        ({"weight": np.ones((4, 8))}, r"weight must have the shape of ids \(4, 9\), got \(4, 8\)"),
        ({"targets": np.full((4, 9), 11)}, r"targets must be in 0..10"),
    ],
)  # fmt: skip
def test_loss_refuses_bad_targets_and_weights(change, message):
    ids, targets, weight = odd_batch()
    args = {"ids": ids, "targets": targets, "weight": weight, **change}
    with pytest.raises(ValueError, match=message):
        toys.loss_and_grads(odd_params(), **args)


# --------------------------------------------------------------------------- tasks


def test_tasks_and_their_layers():
    assert list(toys.TASKS) == ["previous", "reverse", "induction"]
    assert [t.layers for t in toys.TASKS.values()] == [1, 1, 2]
    for task in toys.TASKS.values():
        assert len(task.jobs) == task.layers and set(task.jobs) <= set(toys.JOBS)
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
    for name in toys.TASKS:
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


# --------------------------------------------------------------------------- training


def test_adam_first_step_is_lr_times_the_sign():
    p = odd_params()
    g = odd_params(9)
    adam = toys._Adam(p, lr=0.01)
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


# --------------------------------------------------------------------------- run files


def test_run_file_round_trip_in_float16():
    run = toys.train("reverse", 0, 30)
    data = toys.history_bytes(run)
    back = toys.read_history(data)
    assert (back.task, back.seed, back.total, back.settings) == (
        run.task, run.seed, run.total, run.settings,
    )  # fmt: skip
    np.testing.assert_array_equal(back.steps, run.steps)
    np.testing.assert_array_equal(back.losses, run.losses.astype(np.float32))
    for got, want in zip(back.checkpoints, run.checkpoints, strict=True):
        for name in toys.SHAPES:
            np.testing.assert_array_equal(
                getattr(got, name), getattr(want, name).astype(np.float16).astype(np.float64)
            )
    assert toys.history_bytes(back) == data  # float16 weights survive a second round


def test_run_file_is_an_npz_with_fixed_dates():
    data = toys.history_bytes(toys.train("reverse", 0, 5))
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert {i.date_time for i in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        assert sorted(z.namelist()) == sorted(
            f"{n}.npy" for n in ["run", "steps", "losses", *toys.SHAPES]
        )
    npz = np.load(io.BytesIO(data))
    assert npz["w_q"].shape == (len(npz["steps"]), 1, 2, 32, 8)


def test_a_bad_run_file_is_a_value_error():
    with pytest.raises(ValueError, match="not a toys run file"):
        toys.read_history(b"not a zip")


def test_example_attentions_are_the_heads_on_the_example():
    p = toys.TASKS["induction"].init(np.random.default_rng(0))
    att = toys.example_attentions("induction", p)
    assert att.shape == (2, 2, 32, 32)
    _, full = toys.forward(p, toys.example("induction").ids[None])
    np.testing.assert_array_equal(att, full[:, 0])


# --------------------------------------------------------------------------- command


def test_the_command_writes_a_run_and_reports_it(tmp_path, capsys):
    out = tmp_path / "prev.npz"
    assert toys.main(["--task", "previous", "--seed", "2", "--steps", "30", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}" in printed and "previous: 30 steps in" in printed
    assert "fresh samples: loss" in printed and "layer 0 previous-token score" in printed
    assert out.read_bytes() == toys.history_bytes(toys.train("previous", 2, 30))


def test_the_command_says_what_is_wrong(capsys):
    with pytest.raises(SystemExit):
        toys.main(["--task", "previous", "--steps", str(toys.MAX_STEPS + 1)])
    assert f"steps must be in 1..{toys.MAX_STEPS}" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        toys.main(["--task", "copy"])
    assert "invalid choice: 'copy'" in capsys.readouterr().err


def test_the_command_reports_the_shipped_run(capsys):
    assert toys.main(["--task", "reverse", "--report"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("reverse: 500 steps, seed 0,") and "accuracy 1.0000" in printed


# --------------------------------------------------------------------------- the page's helpers


@pytest.mark.parametrize("task", list(toys.TASKS))
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
