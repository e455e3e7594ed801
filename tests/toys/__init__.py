"""Tests of attnviz.toys, one file per module; what they share: a small model of every kind
of shape."""

from __future__ import annotations

import numpy as np

from attnviz import toys

#: The decoder-only tasks (the encoder-decoder's, align: tests/toys/test_tasks_align.py).
DECODER_ONLY = [n for n, t in toys.TASKS.items() if not isinstance(t, toys.AlignTask)]

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
