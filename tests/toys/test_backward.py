"""attnviz.toys.backward: the loss and its gradients (against PyTorch autograd:
tests/toys/test_backward_torch.py)."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import toys
from tests.toys import odd_batch, odd_params

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
