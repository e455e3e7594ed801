"""Tiny attention-only transformers trained in NumPy: watch an attention head form.

Every other view of attnviz shows attention computed with random weights, or read out of a
model someone else trained. Here the weights are learned, in plain NumPy, in seconds: train
a two-layer attention-only transformer on sequences that repeat and a previous-token head
forms in layer 0, then an induction head in layer 1, in a sudden drop of the loss (Olsson
et al. 2022, "In-context Learning and Induction Heads").

The model (no MLPs, no biases, no layer norm, causal), in row layout as the engine::

    x = embed[ids] + pos[:T]                                     # (B, T, D)
    for each layer l:
        x = x + Σ_h softmax(causal(Q_h K_hᵀ / √d_h)) V_h w_o[l, h]
            with Q_h = x w_q[l, h], K_h = x w_k[l, h], V_h = x w_v[l, h]
    logits = x unembed                                           # (B, T, V)

Shapes: B sequences of T tokens, V tokens in the vocabulary, D the width of the residual
stream, L layers of H heads of width d_h. :func:`forward` runs it; :func:`loss_and_grads`
runs it and its backward pass, written out step by step beside the forward's steps;
:func:`train` runs Adam (written out too). The three tasks (:data:`TASKS`):

``previous``   random tokens; predict the token before this one (1 layer)
``reverse``    a sequence, a separator, then the same sequence reversed: the second half
               attends along an anti-diagonal (1 layer)
``induction``  a sequence of distinct random tokens repeated twice, among other random
               tokens (its length and place vary, so no fixed offset finds the answer):
               the second copy is predictable only by induction (2 layers)

:func:`load` gives the run shipped with the package for each task (made by
``python -m attnviz.toys --task induction --seed 0``, byte-identical when re-run);
:func:`job_scores` the score of each head at each checkpoint for the job the task needs
(previous-token, induction, anti-diagonal), :func:`example` the fixed sequence a page shows
and :func:`example_attentions` every head's weights on it.
NumPy only: no Streamlit, no plotting. Bad input raises ``ValueError`` (an unknown task
``KeyError``) saying what was expected and what came.
"""

from __future__ import annotations

import argparse
import io
import math
import sys
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.engine import AttentionResult, causal_mask, softmax
from attnviz.models.head_patterns import scores as pattern_scores

__all__ = [
    "JOBS",
    "MAX_STEPS",
    "SHAPES",
    "TASKS",
    "Example",
    "History",
    "JobScores",
    "Task",
    "ToyParams",
    "antidiagonal_share",
    "evaluate",
    "example",
    "example_attentions",
    "example_result",
    "forward",
    "get_task",
    "history_bytes",
    "job_scores",
    "load",
    "loss_and_grads",
    "main",
    "phase_change",
    "read_history",
    "run_path",
    "train",
    "train_iter",
]

#: The most steps :func:`train` and :func:`train_iter` accept (a live run on a page stays
#: under about a minute on one core).
MAX_STEPS = 5_000
#: Where the shipped runs are (package data): ``attnviz/toy_runs/<task>.npz``.
RUNS_DIR = "toy_runs"
#: The fixed date of every entry of a run file (a zip), so that a re-run is byte-identical.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
Array = NDArray[np.float64]


# --------------------------------------------------------------------------- checks


def _int(name: str, value: object, lo: int, hi: int | None = None) -> int:
    """``value`` as an int in lo..hi (hi included), or ValueError saying what came."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < lo or (hi is not None and value > hi):
        want = f">= {lo}" if hi is None else f"in {lo}..{hi}"
        raise ValueError(f"{name} must be {want}, got {value}")
    return int(value)


def _tokens(name: str, a: ArrayLike, vocab: int, shape: tuple[int, ...] | None = None):
    """``a`` as an int64 (B, T) array of ids in 0..vocab-1, or ValueError."""
    arr = np.asarray(a)
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must be integer token ids, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"{name} must be (B, T) with B, T >= 1, got shape {arr.shape}")
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} must have the shape of ids {shape}, got {arr.shape}")
    if arr.min() < 0 or arr.max() >= vocab:
        raise ValueError(
            f"{name} must be in 0..{vocab - 1} (V = {vocab}), got values "
            f"{int(arr.min())}..{int(arr.max())}"
        )
    return arr.astype(np.int64, copy=False)


# --------------------------------------------------------------------------- parameters


#: Each weight's shape in symbols, in the order of ToyParams' fields.
SHAPES: dict[str, tuple[str, ...]] = {
    "embed": ("V", "D"),
    "pos": ("T_max", "D"),
    "w_q": ("L", "H", "D", "d_h"),
    "w_k": ("L", "H", "D", "d_h"),
    "w_v": ("L", "H", "D", "d_h"),
    "w_o": ("L", "H", "d_h", "D"),
    "unembed": ("D", "V"),
}


@dataclass
class ToyParams:
    """The weights of a toy transformer, float64 arrays (row layout: ``Q = x @ w_q``).

    embed (V, D), pos (T_max, D), w_q, w_k, w_v (L, H, D, d_h), w_o (L, H, d_h, D),
    unembed (D, V) (:data:`SHAPES`). On construction the arrays are copied as float64 and
    checked: the right number of axes, every size >= 1, each symbol one size throughout.
    """

    embed: Array  # (V, D) one row per token
    pos: Array  # (T_max, D) one row per position
    w_q: Array  # (L, H, D, d_h)
    w_k: Array  # (L, H, D, d_h)
    w_v: Array  # (L, H, D, d_h)
    w_o: Array  # (L, H, d_h, D)
    unembed: Array  # (D, V)

    def __post_init__(self) -> None:
        sizes: dict[str, tuple[int, str]] = {}  # symbol -> (size, the weight it came from)
        for name, symbols in SHAPES.items():
            arr = np.asarray(getattr(self, name))
            want = f"({', '.join(symbols)})"
            if arr.dtype.kind not in "iuf":
                raise ValueError(f"ToyParams.{name} must be numeric, got dtype {arr.dtype}")
            if arr.ndim != len(symbols) or 0 in arr.shape:
                raise ValueError(f"ToyParams.{name} must be {want}, got shape {arr.shape}")
            for symbol, size in zip(symbols, arr.shape, strict=True):
                known, where = sizes.setdefault(symbol, (size, name))
                if size != known:
                    raise ValueError(
                        f"ToyParams.{name} must be {want}, got shape {arr.shape}: its "
                        f"{symbol} is {size} but {where} has {symbol} = {known}"
                    )
            arr = np.array(arr, dtype=np.float64)  # a float64 copy
            if not np.isfinite(arr).all():
                raise ValueError(f"ToyParams.{name} (shape {arr.shape}) contains NaN or inf")
            setattr(self, name, arr)

    @property
    def sizes(self) -> dict[str, int]:
        """V, D, T_max, L, H, d_h."""
        out = {}
        for name, symbols in SHAPES.items():
            out.update(zip(symbols, getattr(self, name).shape, strict=True))
        return out

    def arrays(self) -> dict[str, Array]:
        """name -> array, in the order of the fields."""
        return {name: getattr(self, name) for name in SHAPES}

    def zeros_like(self) -> ToyParams:
        return ToyParams(**{k: np.zeros_like(a) for k, a in self.arrays().items()})

    def copy(self) -> ToyParams:
        return ToyParams(**self.arrays())  # __post_init__ copies

    @classmethod
    def init(
        cls, rng: np.random.Generator, *, vocab: int, length: int, d_model: int,
        layers: int, heads: int, d_head: int,
    ) -> ToyParams:  # fmt: skip
        """Random weights: embeddings N(0, 1), projections N(0, 1/fan-in)."""
        v, t, d, n_l, h, d_h = vocab, length, d_model, layers, heads, d_head

        def normal(shape: tuple[int, ...], fan_in: int) -> Array:
            return rng.standard_normal(shape) / math.sqrt(fan_in)

        return cls(
            embed=normal((v, d), 1),  # (V, D)
            pos=normal((t, d), 1),  # (T_max, D)
            w_q=normal((n_l, h, d, d_h), d),  # (L, H, D, d_h)
            w_k=normal((n_l, h, d, d_h), d),  # (L, H, D, d_h)
            w_v=normal((n_l, h, d, d_h), d),  # (L, H, D, d_h)
            w_o=normal((n_l, h, d_h, d), h * d_h),  # (L, H, d_h, D)
            unembed=normal((d, v), d),  # (D, V)
        )


# --------------------------------------------------------------------------- the model


@dataclass
class _Layer:
    """What one attention layer's backward pass needs from its forward pass."""

    x: Array  # (B, T, D) the residual stream the layer reads
    q: Array  # (B, H, T, d_h)
    k: Array  # (B, H, T, d_h)
    v: Array  # (B, H, T, d_h)
    a: Array  # (B, H, T, T) the attention weights
    z: Array  # (B, H, T, d_h) the weighted values


def _check_ids(params: ToyParams, ids: ArrayLike) -> NDArray[np.int64]:
    if not isinstance(params, ToyParams):
        raise ValueError(f"params must be ToyParams, got {type(params).__name__}")
    ids = _tokens("ids", ids, params.embed.shape[0])
    if ids.shape[1] > params.pos.shape[0]:
        raise ValueError(
            f"ids has T = {ids.shape[1]} tokens, more than the model's T_max = "
            f"{params.pos.shape[0]} positions (pos {params.pos.shape})"
        )
    return ids


def _attention_layer(params: ToyParams, layer: int, x: Array) -> tuple[Array, _Layer]:
    """One layer's heads: Σ_h softmax(causal(Q_h K_hᵀ / √d_h)) V_h w_o[l, h]."""
    t, d_h = x.shape[1], params.w_q.shape[-1]
    xh = x[:, None]  # (B, 1, T, D): the same stream for every head
    # a) project: one query, key and value per head and token
    q = xh @ params.w_q[layer]  # (B, H, T, d_h)
    k = xh @ params.w_k[layer]  # (B, H, T, d_h)
    v = xh @ params.w_v[layer]  # (B, H, T, d_h)
    # b) scores, scaled; a query sees only itself and the keys before it
    s = q @ k.swapaxes(-1, -2) / math.sqrt(d_h)  # (B, H, T, T)
    s = np.where(causal_mask(t), s, -np.inf)  # (B, H, T, T)
    # c) softmax over the keys: each row of weights sums to 1
    a = softmax(s, axis=-1)  # (B, H, T, T)
    # d) weighted sum of the values, then each head's output projection, summed over heads
    z = a @ v  # (B, H, T, d_h)
    out = (z @ params.w_o[layer]).sum(axis=1)  # (B, H, T, D) -> (B, T, D)
    return out, _Layer(x=x, q=q, k=k, v=v, a=a, z=z)


def _forward(params: ToyParams, ids: NDArray[np.int64]) -> tuple[Array, Array, list[_Layer]]:
    """The forward pass: logits, the last residual stream and each layer's saved arrays."""
    t = ids.shape[1]
    # 1) embed: each token's vector plus its position's
    x = params.embed[ids] + params.pos[:t]  # (B, T, D)
    # 2) each layer adds its heads' outputs to the residual stream
    saved = []
    for layer in range(params.w_q.shape[0]):
        out, cache = _attention_layer(params, layer, x)  # (B, T, D)
        x = x + out  # (B, T, D)
        saved.append(cache)
    # 3) unembed: a score per token of the vocabulary
    logits = x @ params.unembed  # (B, T, V)
    return logits, x, saved


def forward(params: ToyParams, ids: ArrayLike) -> tuple[Array, Array]:
    """``logits`` (B, T, V) and ``attentions`` (L, B, H, T, T) of the model on ``ids`` (B, T).

    ``attentions[l, b, h, i, j]`` is the weight query i of sequence b puts on key j in head
    h of layer l (0 for j > i; each row sums to 1).
    """
    ids = _check_ids(params, ids)
    logits, _, saved = _forward(params, ids)
    return logits, np.stack([c.a for c in saved])  # (B, T, V), (L, B, H, T, T)


# --------------------------------------------------------------------------- backward


def _check_targets(ids: NDArray, targets: ArrayLike, weight: ArrayLike, vocab: int):
    targets = _tokens("targets", targets, vocab, ids.shape)
    w = np.asarray(weight)
    if w.shape != ids.shape:
        raise ValueError(f"weight must have the shape of ids {ids.shape}, got {w.shape}")
    if w.dtype.kind not in "biuf" or not np.isin(w, (0, 1)).all():
        raise ValueError(f"weight must hold only 0 and 1, got dtype {w.dtype}")
    if not w.any():
        raise ValueError("weight is 0 everywhere: no position to average the loss over")
    return targets, w.astype(np.float64)


def _cross_entropy(logits: Array, targets: NDArray, w: Array) -> tuple[float, Array]:
    """The mean cross-entropy over the weighted positions and its gradient wrt the logits."""
    p = softmax(logits, axis=-1)  # (B, T, V) the predicted distribution
    b, t = np.indices(targets.shape)  # (B, T) each
    nll = -np.log(p[b, t, targets])  # (B, T) minus log p(target)
    count = w.sum()
    loss = float((nll * w).sum() / count)
    # d loss / d logits = (p - onehot(target)) * weight / count
    d_logits = p.copy()  # (B, T, V)
    d_logits[b, t, targets] -= 1.0
    d_logits *= (w / count)[..., None]  # (B, T, V)
    return loss, d_logits


def _attention_layer_backward(
    params: ToyParams, layer: int, c: _Layer, d_out: Array, grads: ToyParams
) -> Array:
    """The steps of :func:`_attention_layer` backwards: fills ``grads``' weights of
    ``layer`` and returns d loss / d x through the layer (the residual not included)."""
    d_h = params.w_q.shape[-1]
    d_outh = d_out[:, None]  # (B, 1, T, D): the same gradient reaches every head
    # d) out = Σ_h z_h w_o[h]  and  z = a v
    grads.w_o[layer] = (c.z.swapaxes(-1, -2) @ d_outh).sum(axis=0)  # (H, d_h, D)
    d_z = d_outh @ params.w_o[layer].swapaxes(-1, -2)  # (B, H, T, d_h)
    d_a = d_z @ c.v.swapaxes(-1, -2)  # (B, H, T, T)
    d_v = c.a.swapaxes(-1, -2) @ d_z  # (B, H, T, d_h)
    # c) softmax: ∂a_ij/∂s_ik = a_ij (δ_jk - a_ik), so d s_ij = a_ij (d a_ij - Σ_k a_ik d a_ik);
    #    a masked cell has a_ij = 0, so d s_ij = 0 there
    d_s = c.a * (d_a - (c.a * d_a).sum(axis=-1, keepdims=True))  # (B, H, T, T)
    # b) s = q kᵀ / √d_h (the mask is a constant: no gradient)
    d_s /= math.sqrt(d_h)
    d_q = d_s @ c.k  # (B, H, T, d_h)
    d_k = d_s.swapaxes(-1, -2) @ c.q  # (B, H, T, d_h)
    # a) q = x w_q, k = x w_k, v = x w_v
    xt = c.x[:, None].swapaxes(-1, -2)  # (B, 1, D, T)
    grads.w_q[layer] = (xt @ d_q).sum(axis=0)  # (H, D, d_h)
    grads.w_k[layer] = (xt @ d_k).sum(axis=0)  # (H, D, d_h)
    grads.w_v[layer] = (xt @ d_v).sum(axis=0)  # (H, D, d_h)
    d_x = (
        d_q @ params.w_q[layer].swapaxes(-1, -2)  # (B, H, T, D)
        + d_k @ params.w_k[layer].swapaxes(-1, -2)
        + d_v @ params.w_v[layer].swapaxes(-1, -2)
    ).sum(axis=1)  # (B, T, D)
    return d_x


def loss_and_grads(
    params: ToyParams, ids: ArrayLike, targets: ArrayLike, weight: ArrayLike
) -> tuple[float, ToyParams]:
    """The mean cross-entropy over the positions where ``weight`` is 1, and its gradient.

    ``ids``, ``targets`` (B, T) integer ids, ``weight`` (B, T) of 0 and 1 (at least one 1).
    The backward pass runs the forward pass's steps in reverse, each step's gradient
    from the one after it (the chain rule).
    """
    ids = _check_ids(params, ids)
    targets, w = _check_targets(ids, targets, weight, params.embed.shape[0])
    logits, x, saved = _forward(params, ids)  # (B, T, V), (B, T, D)
    loss, d_logits = _cross_entropy(logits, targets, w)  # float, (B, T, V)
    grads = params.zeros_like()
    # 3) logits = x unembed: a sum over the sequences of xᵀ d_logits
    grads.unembed[...] = (x.swapaxes(-1, -2) @ d_logits).sum(axis=0)  # (B, D, V) -> (D, V)
    d_x = d_logits @ params.unembed.T  # (B, T, D)
    # 2) x = x + out: the residual passes d_x through, the layer adds its own part
    for layer in reversed(range(len(saved))):
        d_x = d_x + _attention_layer_backward(params, layer, saved[layer], d_x, grads)
    # 1) x = embed[ids] + pos[:T]: each row of embed collects the gradient of its tokens
    np.add.at(grads.embed, ids, d_x)  # (V, D)
    grads.pos[: ids.shape[1]] = d_x.sum(axis=0)  # (T, D)
    return loss, grads


# --------------------------------------------------------------------------- tasks

#: Token labels: token i is ``ALPHABET[i]``; a task's separator is ``SEPARATOR``.
ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
SEPARATOR = "|"
#: The seed of each task's fixed example (:func:`example`).
EXAMPLE_SEED = 2022
Batch = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]


@dataclass(frozen=True)
class Task:
    """A task: how its sequences are drawn, the model that learns it and its shipped run.

    ``sample(rng, batch)`` gives ``(ids, targets, weight)``, three (B, T) int arrays: the
    model reads ``ids``, and at each position where ``weight`` is 1 it is scored on
    predicting ``targets`` (elsewhere ``targets`` is 0 and not used).
    """

    name: str
    title: str  # one line: what is predicted
    layers: int  # L
    jobs: tuple[str, ...]  # per layer, the score (a key of JOBS) naming its heads' job
    vocab: int  # V, the separator included
    length: int  # T, every sequence's length (and the model's T_max)
    separator: int | None  # the separator's id (the last id), or None
    heads: int  # H per layer
    d_model: int  # D
    d_head: int  # d_h
    batch: int  # sequences per training step
    lr: float  # Adam's learning rate
    steps: int  # the shipped run's steps
    every: int  # a checkpoint at least every this many steps ...
    drop: float  # ... and sooner when the smoothed loss fell by this much (nats)
    sampler: Callable[[Task, np.random.Generator, int, bool], Batch]

    def sample(self, rng: np.random.Generator, batch: int) -> Batch:
        """``batch`` fresh sequences: (ids, targets, weight), each (B, T) int64."""
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        return self.sampler(self, rng, _int("batch", batch, 1), False)

    def label(self, token: int) -> str:
        """The text of token id ``token``: a letter, or ``SEPARATOR``."""
        token = _int("token", token, 0, self.vocab - 1)
        return SEPARATOR if token == self.separator else ALPHABET[token]

    def init(self, rng: np.random.Generator) -> ToyParams:
        """Random weights of this task's model (:meth:`ToyParams.init`)."""
        return ToyParams.init(
            rng, vocab=self.vocab, length=self.length, d_model=self.d_model,
            layers=self.layers, heads=self.heads, d_head=self.d_head,
        )  # fmt: skip


def _next_token(ids: NDArray[np.int64], weight: NDArray[np.bool_]) -> Batch:
    """targets[t] = ids[t + 1] where ``weight`` (never at the last position), else 0."""
    targets = np.zeros_like(ids)  # (B, T)
    targets[:, :-1] = ids[:, 1:]
    weight = weight.copy()
    weight[:, -1] = False
    return ids, np.where(weight, targets, 0), weight.astype(np.int64)


def _sample_previous(task: Task, rng: np.random.Generator, b: int, example: bool) -> Batch:
    """Random tokens; at every position but the first, the target is the token before."""
    ids = rng.integers(0, task.vocab, size=(b, task.length))  # (B, T)
    targets = np.zeros_like(ids)  # (B, T)
    targets[:, 1:] = ids[:, :-1]
    weight = np.ones_like(ids)  # (B, T)
    weight[:, 0] = 0
    return ids, targets, weight


def _sample_reverse(task: Task, rng: np.random.Generator, b: int, example: bool) -> Batch:
    """n random tokens, the separator, the n tokens reversed (T = 2n + 1); from the
    separator on, the target is the next token: query t (n <= t < 2n) needs key 2n-1-t."""
    n = (task.length - 1) // 2
    first = rng.integers(0, task.vocab - 1, size=(b, n))  # (B, n) no separator
    sep = np.full((b, 1), task.separator)  # (B, 1)
    ids = np.concatenate([first, sep, first[:, ::-1]], axis=1)  # (B, 2n + 1)
    t = np.arange(task.length)  # (T,)
    return _next_token(ids, np.broadcast_to(t >= n, ids.shape))


def _sample_induction(task: Task, rng: np.random.Generator, b: int, example: bool) -> Batch:
    """A sequence of n distinct random tokens repeated twice, at a random place among
    random other tokens (n from 2 to T/2; the example: n = T/2 at the start, nothing else).
    On the second copy but its last token, the target is the next token: found only by
    induction, the token after this one's earlier copy (n and the place vary: no fixed
    offset or position finds it)."""
    t_max, half = task.length, task.length // 2
    n = np.full(b, half) if example else rng.integers(2, half + 1, size=b)  # (B,)
    start = np.zeros(b, np.int64) if example else rng.integers(0, t_max - 2 * n + 1)  # (B,)
    perm = np.argsort(rng.random((b, task.vocab)), axis=1)  # (B, V) a shuffle per row
    other = rng.integers(half, task.vocab, size=(b, t_max))  # (B, T): never in the copy
    t = np.arange(t_max)[None, :] - start[:, None]  # (B, T) position from the start
    n = n[:, None]  # (B, 1)
    index = np.where((t >= 0) & (t < 2 * n), t % n, other)  # (B, T) into perm
    ids = np.take_along_axis(perm, index, axis=1)  # (B, T)
    return _next_token(ids, (t >= n) & (t < 2 * n - 1))  # (B, T) each


TASKS: dict[str, Task] = {
    "previous": Task(
        name="previous", title="predict the token before this one", layers=1,
        jobs=("previous",), vocab=16, length=16, separator=None, heads=2, d_model=32,
        d_head=8, batch=32, lr=3e-3, steps=400, every=20, drop=0.1,
        sampler=_sample_previous,
    ),
    "reverse": Task(
        name="reverse", title="a sequence, a separator, then the sequence reversed",
        layers=1, jobs=("antidiagonal",), vocab=17, length=17, separator=16, heads=2,
        d_model=32, d_head=8, batch=32, lr=3e-3, steps=500, every=20, drop=0.1,
        sampler=_sample_reverse,
    ),
    "induction": Task(
        name="induction", title="a random sequence repeated: continue the copy",
        layers=2, jobs=("previous", "induction"), vocab=32, length=32, separator=None,
        heads=2, d_model=32, d_head=16, batch=32, lr=5e-3, steps=1500, every=100,
        drop=0.1, sampler=_sample_induction,
    ),
}  # fmt: skip


def get_task(task: str | Task) -> Task:
    """A :data:`TASKS` entry by name (a ``Task`` is returned as it is); ``KeyError`` for
    an unknown name, naming the tasks there are."""
    if isinstance(task, Task):
        return task
    if not isinstance(task, str) or task not in TASKS:
        raise KeyError(f"unknown task {task!r}: expected one of {', '.join(map(repr, TASKS))}")
    return TASKS[task]


@dataclass(frozen=True)
class Example:
    """One fixed sequence of a task, for showing every head's attention on it."""

    ids: NDArray[np.int64]  # (T,)
    targets: NDArray[np.int64]  # (T,) 0 where weight is 0
    weight: NDArray[np.int64]  # (T,) 1 where the model is scored
    labels: tuple[str, ...]  # (T,) each token's text (repeated tokens repeat their text)


def example(task: str | Task) -> Example:
    """The task's fixed example sequence (the same on every call): drawn with seed
    :data:`EXAMPLE_SEED`; for ``induction`` the repeated sequence is T/2 long (a probe as
    in :mod:`attnviz.models.head_patterns`, of distinct tokens)."""
    task = get_task(task)
    ids, targets, weight = task.sampler(task, np.random.default_rng(EXAMPLE_SEED), 1, True)
    return Example(
        ids=ids[0], targets=targets[0], weight=weight[0],
        labels=tuple(task.label(i) for i in ids[0]),
    )  # fmt: skip


def example_attentions(task: str | Task, params: ToyParams) -> Array:
    """Every head's weights on the task's :func:`example`: (L, H, T, T) = (layer, head,
    query, key), the tokens' texts in ``example(task).labels``."""
    _, attentions = forward(params, example(task).ids[None])  # (L, 1, H, T, T)
    return attentions[:, 0]  # (L, H, T, T)


def example_result(task: str | Task, params: ToyParams) -> AttentionResult:
    """Every head of every layer on the task's :func:`example`, as one engine
    ``AttentionResult`` of L·H heads, layer by layer (head ``l * H + h`` is head h of
    layer l), so that the engine's tools (:func:`attnviz.explain.cell`, a clicked cell
    worked out) read a learned head as they read a random one. queries, keys, values
    (L·H, T, d_h); scores (L·H, T, T) scaled, before the causal ``mask`` (T, T); weights
    (L·H, T, T); head_outputs (L·H, T, d_h) the weighted values; concat (T, L·H·d_h);
    output (T, D) the last residual stream; scale 1/√d_h; x (T, D) the embedded tokens."""
    task = get_task(task)
    ids = _check_ids(params, example(task).ids[None])  # (1, T)
    _, x_last, saved = _forward(params, ids)

    def heads(name: str) -> Array:  # (L, 1, H, T, d) -> (L·H, T, d)
        a = np.stack([getattr(c, name)[0] for c in saved])  # (L, H, T, d)
        return a.reshape(-1, *a.shape[2:])

    q, k, z = heads("q"), heads("k"), heads("z")  # (L·H, T, d_h) each
    d_h = q.shape[-1]
    return AttentionResult(
        queries=q, keys=k, values=heads("v"),
        scores=q @ k.swapaxes(-1, -2) / math.sqrt(d_h),  # (L·H, T, T)
        mask=causal_mask(ids.shape[1]), weights=heads("a"), head_outputs=z,
        concat=z.transpose(1, 0, 2).reshape(ids.shape[1], -1),  # (T, L·H·d_h)
        output=x_last[0], scale=1 / math.sqrt(d_h), x=saved[0].x[0],
    )  # fmt: skip


def phase_change(losses: ArrayLike, window: int = 20) -> int | None:
    """The step where the training loss falls fastest (the induction run's sudden drop):
    the first step of the ``window`` steps whose mean loss is lowest below the mean of the
    ``window`` steps before them; None for a run shorter than 2 windows or whose loss never
    falls. ``losses`` (S,): the loss of each step (step s at index s - 1)."""
    window = _int("window", window, 1)
    a = np.asarray(losses, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"losses must be (S,), got shape {a.shape}")
    if a.size < 2 * window:
        return None
    mean = np.convolve(a, np.ones(window) / window, mode="valid")  # (S - w + 1,)
    fall = mean[:-window] - mean[window:]  # (S - 2w + 1,) mean before - mean after
    best = int(np.argmax(fall))
    if fall[best] <= 0:
        return None
    return best + window + 1  # 1-based step at the start of the later window


# --------------------------------------------------------------------------- scores

#: The scores that name a head's job: key -> label.
JOBS: dict[str, str] = {
    "previous": "previous-token score",
    "induction": "induction score",
    "antidiagonal": "anti-diagonal share",
}


def antidiagonal_share(attentions: ArrayLike) -> NDArray[np.float64]:
    """The anti-diagonal share of heads on a ``reverse`` sequence (n tokens, the separator,
    the n tokens reversed: T = 2n + 1): the mean over the queries t = n .. 2n-1 (the
    separator and the reversed tokens but the last, the positions scored) of the weight
    on key 2n-1-t, the token to predict next. ``attentions`` (..., T, T) -> (...)."""
    a = np.asarray(attentions)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] < 3 or a.shape[-1] % 2 == 0:
        raise ValueError(
            f"attentions must be (..., T, T) with T = 2n + 1 >= 3 odd (a reverse sequence), "
            f"got shape {a.shape}"
        )
    n = (a.shape[-1] - 1) // 2
    queries = np.arange(n, 2 * n)  # (n,)
    return a[..., queries, 2 * n - 1 - queries].mean(axis=-1)  # (...)


def _layer_job(task: Task, attentions: Array, ids: NDArray[np.int64]) -> Array:
    """Each head's job score, (L, H), averaged over the sequences: attentions (L, B, H, T, T)."""
    out = np.empty(attentions.shape[0:1] + attentions.shape[2:3])  # (L, H)
    for layer, job in enumerate(task.jobs):
        a = attentions[layer]  # (B, H, T, T)
        if job == "antidiagonal":
            out[layer] = antidiagonal_share(a).mean(axis=0)  # (H,)
        else:  # head_patterns scores (layers, heads, N, N) on one sequence's ids
            per_row = [pattern_scores(a[b][None], ids[b])[job][0] for b in range(len(ids))]
            out[layer] = np.mean(per_row, axis=0)  # (H,)
    return out


@dataclass(frozen=True)
class JobScores:
    """Per checkpoint, each head's score for the job its layer does in the task."""

    task: str
    steps: NDArray[np.int64]  # (C,) the checkpoints' steps
    scores: NDArray[np.float64]  # (C, L, H), each in 0..1
    jobs: tuple[str, ...]  # (L,) keys of JOBS
    labels: tuple[str, ...]  # (L,) the JOBS label of each layer's score

    def first_step_above(self, threshold: float) -> NDArray[np.int64]:
        """(L, H): the first checkpoint step at which each head scores >= ``threshold``
        (-1 if it never does): "the moment a head forms"."""
        above = self.scores >= threshold  # (C, L, H)
        first = np.argmax(above, axis=0)  # (L, H)
        return np.where(above.any(axis=0), self.steps[first], -1)


def job_scores(
    task: str | Task, history: History | list[ToyParams], ids: ArrayLike | None = None
) -> JobScores:
    """Each head's job score (:data:`JOBS`, per layer ``task.jobs``) at each checkpoint of
    ``history`` (a :class:`History`, or a list of ``ToyParams`` at steps 0, 1, ...), on
    ``ids`` (T,) or (B, T) (scores averaged over the sequences; default: the task's
    :func:`example`, the sequence a page shows). ``previous`` and ``induction`` are
    :func:`attnviz.models.head_patterns.scores`; ``antidiagonal``: :func:`antidiagonal_share`.
    """
    task = get_task(task)
    if isinstance(history, History):
        checkpoints, steps = history.checkpoints, history.steps
    else:
        checkpoints, steps = list(history), np.arange(len(history))
    if not checkpoints or not all(isinstance(p, ToyParams) for p in checkpoints):
        raise ValueError("history must be a History or a non-empty list of ToyParams")
    ids = example(task).ids if ids is None else np.asarray(ids)
    ids = ids[None] if ids.ndim == 1 else ids
    out = []
    for params in checkpoints:
        if params.w_q.shape[0] != task.layers:
            raise ValueError(
                f"task {task.name!r} has {task.layers} layer(s), params have "
                f"{params.w_q.shape[0]} (w_q {params.w_q.shape})"
            )
        _, attentions = forward(params, ids)  # (L, B, H, T, T)
        out.append(_layer_job(task, attentions, _check_ids(params, ids)))
    return JobScores(
        task=task.name, steps=np.asarray(steps, dtype=np.int64), scores=np.stack(out),
        jobs=task.jobs, labels=tuple(JOBS[j] for j in task.jobs),
    )  # fmt: skip


def evaluate(
    task: str | Task, params: ToyParams, *, seed: int = 12345, batch: int = 1000
) -> tuple[float, float]:
    """(loss, accuracy) on ``batch`` fresh sequences drawn with ``seed``: the mean
    cross-entropy and the share of weighted positions whose largest logit is the target."""
    task = get_task(task)
    ids, targets, weight = task.sample(np.random.default_rng(_int("seed", seed, 0)), batch)
    logits, _ = forward(params, ids)  # (B, T, V)
    right = (logits.argmax(axis=-1) == targets) & (weight == 1)  # (B, T)
    loss, _ = _cross_entropy(logits, targets, weight.astype(np.float64))
    return loss, float(right.sum() / weight.sum())


# --------------------------------------------------------------------------- training


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
        ids, targets, weight = task.sample(rng, int(settings["batch"]))  # (B, T) each
        loss, grads = loss_and_grads(params, ids, targets, weight)
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


# --------------------------------------------------------------------------- run files

#: How a run file stores the weights (float16 halves the size; see docs/engine.md).
STORE_DTYPE = np.float16
_FORMAT = 1


def _npy(a: NDArray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(a), allow_pickle=False)
    return buf.getvalue()


def history_bytes(history: History) -> bytes:
    """A run as a file: a zip of ``.npy`` arrays (``numpy.load`` reads it as an npz) whose
    entries all carry the date :data:`ZIP_DATE`, so the same run gives the same bytes.

    ``steps`` (C,) int32, ``losses`` (S,) float32, one (C, ...) array per ``ToyParams``
    field in :data:`STORE_DTYPE`, and ``run`` the task, seed, total steps and settings.
    """
    run = {"format": _FORMAT, "task": history.task, "seed": history.seed,
           "total": history.total, **history.settings}  # fmt: skip
    entries = {
        "run": np.array(sorted(run.items()), dtype=str),  # (k, 2) text pairs
        "steps": history.steps.astype(np.int32),  # (C,)
        "losses": history.losses.astype(np.float32),  # (S,)
    }
    for name in SHAPES:
        stacked = np.stack([getattr(p, name) for p in history.checkpoints])  # (C, ...)
        entries[name] = stacked.astype(STORE_DTYPE)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, arr in entries.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=ZIP_DATE)
            info.external_attr = 0o644 << 16
            z.writestr(info, _npy(arr))
    return buf.getvalue()


def read_history(data: bytes) -> History:
    """The run written by :func:`history_bytes` (weights back in float64)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            arrays = {
                n.removesuffix(".npy"): np.lib.format.read_array(
                    io.BytesIO(z.read(n)), allow_pickle=False
                )
                for n in z.namelist()
            }
        run = dict(arrays.pop("run").tolist())
        steps, losses = arrays.pop("steps"), arrays.pop("losses")
        checkpoints = [ToyParams(**{k: a[c] for k, a in arrays.items()}) for c in range(len(steps))]
    except (zipfile.BadZipFile, KeyError, ValueError, TypeError) as e:
        raise ValueError(f"not a toys run file (expected a zip of .npy arrays): {e}") from e
    return History(
        task=run["task"], seed=int(run["seed"]), steps=steps.astype(np.int64),
        checkpoints=checkpoints, losses=losses.astype(np.float64), total=int(run["total"]),
        settings={"lr": float(run["lr"]), "batch": int(run["batch"]),
                  "every": int(run["every"]), "drop": float(run["drop"])},
    )  # fmt: skip


def run_path(task: str | Task) -> Path:
    """The shipped run file of a task, in the installed package."""
    return Path(str(resources.files("attnviz") / RUNS_DIR / f"{get_task(task).name}.npz"))


def load(task: str | Task) -> History:
    """The run shipped with the package for ``task`` (made by ``python -m attnviz.toys
    --task <task> --seed <seed>``)."""
    path = run_path(task)
    if not path.is_file():
        raise ValueError(f"no shipped run for task {get_task(task).name!r}: {path} is missing")
    return read_history(path.read_bytes())


# --------------------------------------------------------------------------- command


def _report(task: Task, history: History, seconds: float | None, size: int) -> str:
    """What a run reached, as text: accuracy, job scores, losses at the checkpoints."""
    loaded = read_history(history_bytes(history))  # the stored (rounded) weights
    loss, acc = evaluate(task, loaded.checkpoints[-1])
    jobs = job_scores(task, loaded)
    took = "" if seconds is None else f" in {seconds:.1f} s"
    lines = [
        f"{task.name}: {history.total} steps{took}, seed {history.seed}, "
        f"{len(history.steps)} checkpoints, {size} bytes",
        f"fresh samples: loss {loss:.4f}, accuracy {acc:.4f}",
    ]
    for layer, label in enumerate(jobs.labels):
        first = jobs.scores[0, layer].round(3).tolist()
        last = jobs.scores[-1, layer].round(3).tolist()
        formed = jobs.first_step_above(0.8)[layer].tolist()
        lines.append(
            f"layer {layer} {label}: step 0 {first}, end {last}, first step >= 0.8 {formed}"
        )
    smooth = [float(history.losses[max(0, s - 10) : s].mean()) for s in history.steps[1:]]
    pairs = ", ".join(f"{s}:{v:.3f}" for s, v in zip(history.steps[1:], smooth, strict=True))
    lines.append(f"training loss (mean of the 10 steps before each checkpoint): {pairs}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m attnviz.toys --task induction --seed 0``: train, write the run file
    (default: the package's shipped one), print what it reached. ``--report``: train
    nothing, print what the shipped run reached."""
    parser = argparse.ArgumentParser(
        prog="python -m attnviz.toys", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--task", required=True, choices=list(TASKS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=None, help="default: the task's")
    parser.add_argument("--out", type=Path, default=None, help="default: the shipped file")
    parser.add_argument("--report", action="store_true", help="only report the shipped run")
    args = parser.parse_args(argv)
    task = TASKS[args.task]
    if args.report:
        print(_report(task, load(task), None, run_path(task).stat().st_size))
        return 0
    start = time.perf_counter()
    try:
        history = train(task, args.seed, task.steps if args.steps is None else args.steps)
    except ValueError as e:
        parser.error(str(e))
    seconds = time.perf_counter() - start
    data = history_bytes(history)
    out = args.out or Path(__file__).parent / RUNS_DIR / f"{task.name}.npz"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    print(f"wrote {out}")
    print(_report(task, history, seconds, len(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
