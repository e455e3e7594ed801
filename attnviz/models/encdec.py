"""What every encoder-decoder family shares (T5 in :mod:`attnviz.models.t5`, BART and
Marian in :mod:`attnviz.models.bart`): the run, the decoding steps, the KV cache,
greedy and sampled generation, the weights reader and the tokenizer.

A family's model subclasses :class:`EncoderDecoder` and writes out three passes:

1. ``encode(src_ids)``: the encoder over the source, every token seeing every token:
   its output (S, D) and its self-attention weights (L, H, S, S);
2. ``cross_cache(memory)``: each decoder layer's cross-attention keys and values of the
   encoder output, computed once per source;
3. ``decode(ids, cache)``: the decoder over new target tokens at positions
   ``cache.length ..``, each seeing the cached tokens and itself (causal self-attention)
   and the whole source (cross-attention); it appends their keys and values to the cache.

:meth:`EncoderDecoder.run_ids` decodes the whole target at once from an empty cache;
:meth:`EncoderDecoder.generate_steps` decodes one token at a time, the cache growing by
one key and value per layer at each step. Both run the same ``decode``.

Row layout throughout: one token per row, weights (in, out) as the engine uses them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.engine import softmax
from attnviz.models.causal import check_sampling, sample
from attnviz.models.layers import check_text, gelu, missing_libraries, row_layout

__all__ = [
    "ACTIVATIONS",
    "DecodeStep",
    "Decoded",
    "EncDecRun",
    "EncoderDecoder",
    "KVCache",
    "WeightReader",
    "activation",
    "eos_ids",
    "load_tokenizer",
    "next_token",
    "token_id",
]

Array = NDArray[np.floating]
KIND = "encoder-decoder"


# --------------------------------------------------------------------------- activations


def _relu(x: Array) -> Array:
    return np.maximum(x, 0)


def _gelu_tanh(x: Array) -> Array:
    """GELU's tanh approximation (transformers' ``gelu_new``, T5 v1.1's gated-gelu)."""
    x64 = x.astype(np.float64)
    inner = np.sqrt(2.0 / np.pi) * (x64 + 0.044715 * x64**3)
    return (0.5 * x64 * (1.0 + np.tanh(inner))).astype(x.dtype)


def _silu(x: Array) -> Array:
    with np.errstate(over="ignore"):
        return x / (1.0 + np.exp(-x))


#: The activations a config may name (transformers' ``ACT2FN`` keys).
ACTIVATIONS = {
    "relu": _relu,
    "gelu": gelu,
    "gelu_new": _gelu_tanh,
    "gelu_pytorch_tanh": _gelu_tanh,
    "silu": _silu,
    "swish": _silu,
}


def activation(name: str, family: str) -> Any:
    """The activation function ``name``; ValueError naming the ones attnviz has."""
    try:
        return ACTIVATIONS[name]
    except KeyError:
        raise ValueError(
            f"{family}: activation {name!r} is not supported (expected one of "
            f"{', '.join(sorted(ACTIVATIONS))})"
        ) from None


# --------------------------------------------------------------------------- weights


class WeightReader:
    """The checkpoint's tensors by Hugging Face name, each checked against the shape the
    config gives it; float32, in row layout where asked."""

    def __init__(self, weights: Mapping[str, np.ndarray], family: str) -> None:
        self.weights = weights
        self.family = family

    def has(self, name: str) -> bool:
        return name in self.weights

    def get(self, name: str, shape: tuple[int, ...]) -> Array:
        """Tensor ``name`` as float32; ValueError if it is missing or not ``shape``."""
        if name not in self.weights:
            raise ValueError(f"{self.family} weights: tensor {name!r} is missing")
        w = np.asarray(self.weights[name], dtype=np.float32)
        if w.shape != tuple(shape):
            raise ValueError(
                f"{self.family} weights: tensor {name!r} has shape {w.shape}, but the "
                f"config gives it {tuple(shape)}"
            )
        return w

    def first(self, names: list[str], shape: tuple[int, ...]) -> Array:
        """The first of ``names`` the checkpoint has (tied weights are stored once, under
        any of their names); ValueError naming them all if none is there."""
        for name in names:
            if name in self.weights:
                return self.get(name, shape)
        raise ValueError(f"{self.family} weights: tensor {names[0]!r} is missing (nor {names[1:]})")

    def linear(self, name: str, d_in: int, d_out: int) -> Array:
        """``nn.Linear`` weight ``name`` (out, in) in the engine's row layout (in, out)."""
        return row_layout(self.get(name, (d_out, d_in)))


# --------------------------------------------------------------------------- cache


@dataclass
class KVCache:
    """The decoder's keys and values, per layer. ``self_k``/``self_v``: one row per target
    token decoded so far, growing by one per step; ``cross_k``/``cross_v``: the encoder
    output's keys and values, computed once per source (a family's own layout:
    (tokens, H·d) for BART, (H, tokens, d) for T5)."""

    cross_k: list[Array]
    cross_v: list[Array]
    self_k: list[Array | None] = field(default_factory=list)
    self_v: list[Array | None] = field(default_factory=list)
    length: int = 0  # target tokens in the cache

    def __post_init__(self) -> None:
        layers = len(self.cross_k)
        self.self_k = self.self_k or [None] * layers
        self.self_v = self.self_v or [None] * layers

    def append(self, layer: int, k: Array, v: Array, axis: int) -> tuple[Array, Array]:
        """Layer ``layer``'s keys and values with ``k``, ``v`` appended along ``axis`` (the
        token axis); the cache keeps them. ``length`` is moved on by :meth:`advance`."""
        old_k, old_v = self.self_k[layer], self.self_v[layer]
        if old_k is not None:
            k = np.concatenate([old_k, k], axis=axis)
            v = np.concatenate([old_v, v], axis=axis)
        self.self_k[layer], self.self_v[layer] = k, v
        return k, v

    def advance(self, n: int) -> None:
        self.length += n


@dataclass(frozen=True, eq=False)
class Decoded:
    """What ``decode`` returns for n new target tokens at positions p .. p + n - 1:
    logits (n, V); self_attentions (L, H, n, p + n), causal; cross_attentions (L, H, n, S)."""

    logits: Array
    self_attentions: Array
    cross_attentions: Array


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, eq=False)
class EncDecRun:
    """One pass over a source and a target. src_ids (S,), tgt_ids (T,) (the decoder's
    input, its start token first); encoder_attentions (L, H, S, S); attentions (L, H, T, T)
    the decoder's causal self-attention, zero above the diagonal; cross_attentions
    (L, H, T, S); logits (V,) of the token after the last target token."""

    src_ids: NDArray[np.int64]
    tgt_ids: NDArray[np.int64]
    encoder_attentions: Array
    attentions: Array
    cross_attentions: Array
    logits: Array

    def probabilities(self) -> NDArray[np.float64]:
        return softmax(self.logits.astype(np.float64))


@dataclass(frozen=True, eq=False)
class DecodeStep:
    """One step of generation: the token ``input_id`` at ``position`` went in, ``next_id``
    came out. self_attentions (L, H, n): its weights over the n = ``cache_length`` target
    tokens so far (itself last); cross_attentions (L, H, S): over the source; logits (V,).
    ``cache_bytes``: the self-attention cache's size after the step (it grows by one
    token a step); ``cross_bytes``: the source's cross keys and values (fixed)."""

    position: int
    input_id: int
    next_id: int
    self_attentions: Array
    cross_attentions: Array
    logits: Array
    cache_length: int
    cache_bytes: int = 0  # the self-attention cache's keys and values, every layer
    cross_bytes: int = 0  # the source's cross-attention keys and values (made once)

    def top(self, k: int = 5) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The ``k`` most likely next ids, most likely first, and their probabilities."""
        p = softmax(self.logits.astype(np.float64))
        ids = np.argsort(-p, kind="stable")[:k]
        return ids, p[ids]


# --------------------------------------------------------------------------- sampling


def next_token(
    logits: Array,
    rng: np.random.Generator,
    temperature: float = 0.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> int:
    """The next id, drawn as every family draws it (:func:`attnviz.models.causal.sample`:
    greedy at temperature 0, else temperature, top-k, top-p in transformers' order), the
    settings checked first."""
    check_sampling(0, temperature, top_k, top_p)
    return sample(logits, rng, temperature, top_k, top_p)


def load_tokenizer(path: Path | None, family: str) -> Any:
    """A ``tokenizers.Tokenizer`` from tokenizer.json (padding and truncation off), or
    None without a path."""
    if path is None:
        return None
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise missing_libraries(family, ["tokenizers"], exc) from exc
    tok = Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.no_truncation()
    return tok


def eos_ids(config: Mapping[str, Any], default: int | None = None) -> frozenset[int]:
    """The config's end-of-sequence ids (``eos_token_id``: one id, a list, or none)."""
    eos = config.get("eos_token_id", default)
    return frozenset([] if eos is None else eos if isinstance(eos, list) else [eos])


def token_id(config: Mapping[str, Any], key: str, family: str) -> int:
    """The config's ``key`` (a token id; the first of a list); ValueError if it has none."""
    value = config.get(key)
    if isinstance(value, list | tuple):
        value = value[0] if value else None
    if value is None:
        raise ValueError(f"{family} config has no {key}")
    return int(value)


# --------------------------------------------------------------------------- the model


class EncoderDecoder:
    """The model object of every encoder-decoder family. A family sets ``family``,
    ``config``, the vocabulary sizes and the token ids, and writes ``encode``,
    ``cross_cache`` and ``decode`` (module docstring)."""

    kind = KIND
    family: str
    config: dict
    tokenizer: Any
    src_vocab: int  # rows of the encoder's embedding
    tgt_vocab: int  # rows of the decoder's embedding (and logits)
    decoder_start_token_id: int
    eos_token_ids: frozenset[int]

    def encode(self, src_ids: NDArray[np.int64]) -> tuple[Array, Array]:
        raise NotImplementedError

    def cross_cache(self, memory: Array) -> KVCache:
        raise NotImplementedError

    def decode(self, ids: NDArray[np.int64], cache: KVCache) -> Decoded:
        raise NotImplementedError

    # ----------------------------------------------------------------- tokens

    def tokenize(self, text: str) -> tuple[list[str], NDArray[np.int64]]:
        """(token texts, ids) of ``text`` with the checkpoint's tokenizer.json (its own
        special tokens, such as the closing ``</s>``, added)."""
        if self.tokenizer is None:
            raise ValueError(
                f"this {self.family} model was built without a tokenizer: give build() the "
                f"path of its tokenizer.json, or call run_ids with token ids"
            )
        enc = self.tokenizer.encode(check_text(text, "sentence"))
        return list(enc.tokens), np.asarray(enc.ids, dtype=np.int64)

    def check_ids(self, ids: ArrayLike, what: str, vocab: int) -> NDArray[np.int64]:
        """``ids`` as a non-empty 1-D int64 array in 0 .. vocab - 1, else a ValueError."""
        arr = np.asarray(ids)
        if arr.ndim != 1 or arr.size < 1 or arr.dtype.kind not in "iu":
            raise ValueError(f"{what} must be a non-empty 1-D array of integers, got {arr!r}")
        if arr.min() < 0 or arr.max() >= vocab:
            bad = arr[(arr < 0) | (arr >= vocab)]
            raise ValueError(f"{what} must be in 0..{vocab - 1} (the vocabulary), got {bad}")
        return arr.astype(np.int64)

    # ----------------------------------------------------------------- one pass

    def run_ids(self, src_ids: ArrayLike, tgt_ids: ArrayLike) -> EncDecRun:
        """The whole pass: the encoder over ``src_ids``, the decoder over ``tgt_ids``
        (taken as given, its start token first) at once."""
        src = self.check_ids(src_ids, "source ids", self.src_vocab)
        tgt = self.check_ids(tgt_ids, "target ids", self.tgt_vocab)
        memory, encoder_attentions = self.encode(src)  # (S, D), (L, H, S, S)
        out = self.decode(tgt, self.cross_cache(memory))
        return EncDecRun(
            src_ids=src,
            tgt_ids=tgt,
            encoder_attentions=encoder_attentions,
            attentions=out.self_attentions,  # (L, H, T, T)
            cross_attentions=out.cross_attentions,  # (L, H, T, S)
            logits=out.logits[-1],  # (V,)
        )

    # ----------------------------------------------------------------- generation

    def generate_steps(
        self,
        src_ids: ArrayLike,
        max_new_tokens: int,
        *,
        temperature: float = 0.0,
        top_k: int | None = None,
        top_p: float | None = None,
        seed: int = 0,
    ) -> Iterator[DecodeStep]:
        """One :class:`DecodeStep` per new token: the encoder runs once, the cross keys
        and values are computed once, then each step decodes the last token alone
        against the cache (which grows by one), until eos or ``max_new_tokens``."""
        if max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
        src = self.check_ids(src_ids, "source ids", self.src_vocab)
        memory, _ = self.encode(src)  # (S, D)
        cache = self.cross_cache(memory)  # cross keys and values, once
        rng = np.random.default_rng(seed)
        cross_bytes = sum(a.nbytes for a in (*cache.cross_k, *cache.cross_v))
        token = self.decoder_start_token_id
        for _ in range(max_new_tokens):
            position = cache.length
            out = self.decode(np.array([token], dtype=np.int64), cache)  # cache grows by 1
            logits = out.logits[0]  # (V,)
            nxt = next_token(logits, rng, temperature, top_k, top_p)
            yield DecodeStep(
                position=position,
                input_id=token,
                next_id=nxt,
                self_attentions=out.self_attentions[:, :, 0],  # (L, H, n)
                cross_attentions=out.cross_attentions[:, :, 0],  # (L, H, S)
                logits=logits,
                cache_length=cache.length,
                cache_bytes=sum(a.nbytes for a in (*cache.self_k, *cache.self_v) if a is not None),
                cross_bytes=cross_bytes,
            )
            if nxt in self.eos_token_ids:
                return
            token = nxt

    def generate(self, src_ids: ArrayLike, max_new_tokens: int, **sampling: Any) -> list[int]:
        """The new ids only (eos last if it came), greedy for temperature 0 (the default);
        keyword arguments as :meth:`generate_steps`."""
        return [s.next_id for s in self.generate_steps(src_ids, max_new_tokens, **sampling)]
