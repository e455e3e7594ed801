"""The tasks (:data:`TASKS`: previous, reverse, induction, decoder-only; align, an
encoder-decoder's, :class:`AlignTask`), their batches, the fixed example sequence a page
shows (:func:`example`), every head's weights on it, and the step where the loss falls
fastest (:func:`phase_change`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.engine import AttentionResult, causal_mask
from attnviz.i18n import N_
from attnviz.toys.model import EncDecParams, ToyParams, _check_ids, _forward, _int, forward

Array = NDArray[np.float64]


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
    predicting ``targets`` (elsewhere ``targets`` is 0 and not used). An encoder-decoder's
    task (:class:`AlignTask`) gives ``(src, tgt, targets, weight)``.
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

    def sample(self, rng: np.random.Generator, batch: int) -> tuple[NDArray[np.int64], ...]:
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


# --------------------------------------------------------------------------- align

#: The align task's words: (English, French) for the nouns, then for the colours. English
#: puts a colour before its noun, French after it: "red cat" is "chat rouge".
NOUNS = (
    ("cat", "chat"),
    ("dog", "chien"),
    ("bird", "oiseau"),
    ("fish", "poisson"),
    ("horse", "cheval"),
    ("mouse", "souris"),
    ("cow", "vache"),
    ("fox", "renard"),
)
COLOURS = (
    ("red", "rouge"),
    ("blue", "bleu"),
    ("black", "noir"),
    ("white", "blanc"),
    ("green", "vert"),
    ("yellow", "jaune"),
    ("grey", "gris"),
    ("pink", "rose"),
)
WORDS = (*NOUNS, *COLOURS)  # English id i (0 .. 15); its French id is i + len(WORDS)
BOS = "<s>"  # the decoder's first input: the start of the translation


def _aligned_from(colour: NDArray[np.bool_]) -> NDArray[np.int64]:
    """(B, S) the source position of each target word, from where the colours are: a colour
    at j is written after its noun (target j + 1), its noun before it (target j)."""
    j = np.arange(colour.shape[1])  # (S,)
    after = np.zeros_like(colour)  # (B, S): the noun right after a colour
    after[:, 1:] = colour[:, :-1]
    return np.where(colour, j + 1, np.where(after, j - 1, j)).astype(np.int64)  # (B, S)


def _sample_align(task: AlignTask, rng: np.random.Generator, b: int, example: bool):
    """S/2 English pairs "colour noun" (random words) and their French translation, each
    colour after its noun ("red cat" -> "chat rouge"). The decoder reads the start token
    then the translation so far (teacher-forced), and predicts every word. The example:
    no word twice."""
    s, n = task.src_length, len(NOUNS)
    colour = np.broadcast_to(np.arange(s) % 2 == 0, (b, s))  # (B, S) where the colours are
    if example:  # (B, S) a shuffle of the nouns and of the colours per row
        nouns = np.argsort(rng.random((b, s)), axis=1) % n
        colours = n + np.argsort(rng.random((b, s)), axis=1) % n
    else:
        nouns, colours = rng.integers(0, n, (b, s)), rng.integers(n, len(WORDS), (b, s))
    words = np.where(colour, colours, nouns)  # (B, S) English
    aligned = _aligned_from(colour)  # (B, S)
    targets = np.take_along_axis(words, aligned, axis=1) + len(WORDS)  # (B, T): French
    bos = np.full((b, 1), task.vocab - 1)  # (B, 1)
    tgt = np.concatenate([bos, targets[:, :-1]], axis=1)  # (B, T) the translation so far
    return words, tgt, targets, np.ones_like(targets)


@dataclass(frozen=True)
class AlignTask(Task):
    """An encoder-decoder's task (:class:`EncDecParams`: L encoder and L decoder layers).

    ``sample(rng, batch)`` gives ``(src, tgt, targets, weight)``: the source ids (B, S),
    the decoder's input ids (B, T), the next-token targets and 0/1 weights (B, T).
    :meth:`aligned` gives the source position each target position should attend to.
    """

    src_length: int  # S, every source's length (and the model's S_max)

    def sample(self, rng: np.random.Generator, batch: int) -> tuple[NDArray[np.int64], ...]:
        """``batch`` fresh pairs: (src (B, S), tgt, targets, weight (B, T)), int64."""
        return super().sample(rng, batch)

    def label(self, token: int) -> str:
        """The word of token id ``token``: English, French, or the start token."""
        token = _int("token", token, 0, self.vocab - 1)
        if token == self.vocab - 1:
            return BOS
        return WORDS[token % len(WORDS)][token // len(WORDS)]

    def aligned(self, src: ArrayLike, tgt: ArrayLike) -> NDArray[np.int64]:
        """(B, T) the source position each decoder position should attend to: the English
        word whose translation it predicts (-1 where none; none here: every target word
        translates one source word). ``src`` (B, S) English phrases, ``tgt`` (B, T = S)."""
        src, tgt = np.asarray(src), np.asarray(tgt)
        want = f"(B, {self.src_length})"
        if src.ndim != 2 or src.shape[1] != self.src_length or src.dtype.kind not in "iu":
            raise ValueError(f"src must be {want} integer ids, got {src.dtype} {src.shape}")
        if tgt.shape != src.shape:
            raise ValueError(f"tgt must have the shape of src {src.shape}, got {tgt.shape}")
        if src.min() < 0 or src.max() >= len(WORDS):
            raise ValueError(
                f"src must be English words, ids 0..{len(WORDS) - 1}, got values "
                f"{int(src.min())}..{int(src.max())}"
            )
        colour = src >= len(NOUNS)  # (B, S)
        if (colour[:, -1] | (colour[:, :-1] & colour[:, 1:]).any(axis=1)).any():
            raise ValueError("src must put a noun after every colour, got a colour without")
        return _aligned_from(colour)

    def init(self, rng: np.random.Generator) -> EncDecParams:  # type: ignore[override]
        """Random weights of this task's encoder-decoder (:meth:`EncDecParams.init`)."""
        return EncDecParams.init(
            rng, vocab=self.vocab, src_length=self.src_length, length=self.length,
            d_model=self.d_model, layers=self.layers, heads=self.heads, d_head=self.d_head,
        )  # fmt: skip


#: The tasks by name; each ``title`` is ``N_``-marked (shown with ``_(task.title)``).
TASKS: dict[str, Task] = {
    "previous": Task(
        name="previous", title=N_("predict the token before this one"), layers=1,
        jobs=("previous",), vocab=16, length=16, separator=None, heads=2, d_model=32,
        d_head=8, batch=32, lr=3e-3, steps=400, every=20, drop=0.1,
        sampler=_sample_previous,
    ),
    "reverse": Task(
        name="reverse", title=N_("a sequence, a separator, then the sequence reversed"),
        layers=1, jobs=("antidiagonal",), vocab=17, length=17, separator=16, heads=2,
        d_model=32, d_head=8, batch=32, lr=3e-3, steps=500, every=20, drop=0.1,
        sampler=_sample_reverse,
    ),
    "induction": Task(
        name="induction", title=N_("a random sequence repeated: continue the copy"),
        layers=2, jobs=("previous", "induction"), vocab=32, length=32, separator=None,
        heads=2, d_model=32, d_head=16, batch=32, lr=5e-3, steps=1500, every=100,
        drop=0.1, sampler=_sample_induction,
    ),
    "align": AlignTask(
        name="align", title=N_("translate English into French: each colour after its noun"),
        layers=1, jobs=("alignment",), vocab=2 * len(WORDS) + 1, length=8, src_length=8,
        separator=None, heads=2, d_model=32, d_head=8, batch=32, lr=5e-3, steps=400,
        every=25, drop=0.1, sampler=_sample_align,
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

    ids: NDArray[np.int64]  # (T,) what the decoder reads
    targets: NDArray[np.int64]  # (T,) 0 where weight is 0
    weight: NDArray[np.int64]  # (T,) 1 where the model is scored
    labels: tuple[str, ...]  # (T,) each token's text (repeated tokens repeat their text)
    src: NDArray[np.int64] | None = None  # (S,) an encoder-decoder's source, else None
    src_labels: tuple[str, ...] = ()  # (S,) the source's words
    target_labels: tuple[str, ...] = ()  # (T,) an encoder-decoder's target words


def example(task: str | Task) -> Example:
    """The task's fixed example sequence (the same on every call): drawn with seed
    :data:`EXAMPLE_SEED`; for ``induction`` the repeated sequence is T/2 long (a probe as
    in :mod:`attnviz.models.head_patterns`, of distinct tokens)."""
    task = get_task(task)
    *inputs, targets, weight = task.sampler(task, np.random.default_rng(EXAMPLE_SEED), 1, True)
    ids = inputs[-1][0]  # (T,) the decoder's input
    words = {}
    if isinstance(task, AlignTask):
        src = inputs[0][0]  # (S,)
        words = {"src": src, "src_labels": tuple(task.label(i) for i in src),
                 "target_labels": tuple(task.label(i) for i in targets[0])}  # fmt: skip
    return Example(
        ids=ids, targets=targets[0], weight=weight[0],
        labels=tuple(task.label(i) for i in ids), **words,
    )  # fmt: skip


def example_cross(task: str | Task, params: EncDecParams) -> Array:
    """Every cross-attention head's weights on an encoder-decoder task's :func:`example`:
    (L, H, T, S) = (layer, head, target position, source position); the rows' words in
    ``example(task).target_labels`` (the word each position writes), the columns' in
    ``src_labels``."""
    ex = example(task)
    if ex.src is None:
        raise ValueError(f"task {get_task(task).name!r} has no source: not an encoder-decoder's")
    _, attentions = forward(params, ex.src[None], ex.ids[None])
    return attentions["cross"][:, 0]  # (L, H, T, S)


def example_attentions(task: str | Task, params: ToyParams) -> Array:
    """Every head's weights on the task's :func:`example`: (L, H, T, T) = (layer, head,
    query, key), the tokens' texts in ``example(task).labels``."""
    _, attentions = forward(params, example(task).ids[None])  # (L, 1, H, T, T)
    return attentions[:, 0]  # (L, H, T, T)


def example_result(task: str | Task, params: ToyParams) -> AttentionResult:
    """Every head of every layer on the task's :func:`example`, as one engine
    ``AttentionResult`` of L·H heads, layer by layer (head ``l * H + h`` is head h of
    layer l), so that the engine's tools (:func:`attnviz.teaching.explain.cell`, a clicked cell
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
