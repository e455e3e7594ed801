"""What every decoder family shares: the forward pass over a KV cache, the run of a
prompt, and generation token by token (greedy or sampled).

A family (:mod:`attnviz.models.gpt2`, :mod:`attnviz.models.llama`) subclasses
:class:`CausalLM` and writes three steps of its paper::

    h = embed(ids, positions)                      # (N, D)
    for each layer i:
        h, att = block(i, h, positions, cache)     # (N, D), att.weights (H, N, M); M: so far
    logits = head(h[-1])                           # (V,)

:meth:`CausalLM.forward` runs them on the new tokens only: the keys and values of the
earlier ones are in the :class:`KVCache` (``block`` appends its layer's). A prompt is one
forward pass from an empty cache (:meth:`CausalLM.run_ids`); generation (:meth:`CausalLM.
generate_steps`) then feeds one token at a time, each step one query row per head.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.engine import AttentionResult
from attnviz.models.checkpoint import CheckpointError, TextTokenizer

__all__ = [
    "CausalLM",
    "DecoderRun",
    "KVCache",
    "Step",
    "causal_rows",
    "eos_ids",
    "require",
    "sample",
]

Array = NDArray[np.float32]
#: The longest prompt a run takes (its attentions alone: L x H x N x N float32).
MAX_TOKENS = 2048


@dataclass(frozen=True, eq=False)
class DecoderRun:
    """A prompt's forward pass: tokens (N texts), ids (N,), attentions (L, H, N, N) =
    (layer, head, query, key), zero above the diagonal; logits (V,) of the next token."""

    tokens: list[str]
    ids: NDArray[np.int64]
    attentions: Array
    logits: Array


@dataclass(frozen=True, eq=False)
class Step:
    """One generation step: the newest token (``query``, at position n - 1) attended over
    the n tokens so far, ``attentions`` (L, H, n); its ``logits`` (V,) gave ``token``, the
    id chosen next. ``cache_tokens`` = n keys and values per layer, ``cache_bytes`` their
    size."""

    query: int
    attentions: Array
    logits: Array
    token: int
    cache_tokens: int
    cache_bytes: int

    def top(self, k: int = 5) -> list[tuple[int, float]]:
        """The ``k`` most likely next ids and their probabilities (softmax of the logits)."""
        z = self.logits.astype(np.float64)  # (V,)
        p = np.exp(z - z.max())
        p /= p.sum()
        best = np.argsort(-p, kind="stable")[:k]
        return [(int(i), float(p[i])) for i in best]


class KVCache:
    """Per layer, the keys and values of every token so far: (M, G·d) each, after RoPE."""

    def __init__(self, num_layers: int) -> None:
        self.keys: list[Array | None] = [None] * num_layers
        self.values: list[Array | None] = [None] * num_layers
        self.length = 0  # tokens whose keys and values every layer holds

    def extend(self, layer: int, k: Array, v: Array) -> tuple[Array, Array]:
        """Append the new tokens' k (N, G·d) and v (N, G·d_v); return all (M, ...)."""
        old_k, old_v = self.keys[layer], self.values[layer]
        if old_k is not None and old_v is not None:
            k = np.concatenate([old_k, k])  # (M, G*d)
            v = np.concatenate([old_v, v])  # (M, G*d_v)
        self.keys[layer], self.values[layer] = k, v
        return k, v

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (*self.keys, *self.values) if a is not None)


def causal_rows(past: int, n: int, window: int | None = None) -> NDArray[np.bool_]:
    """(n, past + n) mask of n new queries at positions past .. past + n - 1: True where
    query i may see key j: j <= i, and with a sliding ``window`` also j > i - window (the
    last ``window`` tokens, itself included, as transformers' ``sliding_window_overlay``)."""
    i = np.arange(past, past + n)[:, None]  # (n, 1) query positions
    j = np.arange(past + n)[None, :]  # (1, M) key positions
    ok = j <= i  # (n, M)
    if window is not None:
        ok &= j > i - window
    return ok


def sample(
    logits: ArrayLike,
    rng: np.random.Generator,
    temperature: float = 0.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> int:
    """The next id: the largest logit when ``temperature`` is 0, else drawn from
    softmax(logits / temperature) restricted to the ``top_k`` largest and then to the
    smallest set whose probability reaches ``top_p`` (transformers' order)."""
    z = np.asarray(logits, dtype=np.float64)  # (V,)
    if temperature == 0:
        return int(np.argmax(z))
    z = z / temperature
    if top_k is not None and top_k < z.size:
        kth = np.partition(z, -top_k)[-top_k]
        z = np.where(z < kth, -np.inf, z)
    p = np.exp(z - z.max())
    p /= p.sum()  # (V,)
    if top_p is not None and top_p < 1.0:
        order = np.argsort(-p, kind="stable")
        before = np.cumsum(p[order]) - p[order]  # probability of the tokens ranked above
        drop = order[before >= top_p]
        p[drop] = 0.0
        p /= p.sum()
    return int(rng.choice(p.size, p=p))


def check_sampling(max_new: int, temperature: float, top_k: Any, top_p: Any) -> None:
    """The generation settings, checked once before the first step (every family's)."""
    if isinstance(max_new, bool) or not isinstance(max_new, int | np.integer) or max_new < 0:
        raise ValueError(f"max_new_tokens must be an integer >= 0, got {max_new!r}")
    if not (isinstance(temperature, int | float) and temperature >= 0):
        raise ValueError(f"temperature must be a number >= 0, got {temperature!r}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"top_k must be None or an integer >= 1, got {top_k!r}")
    if top_p is not None and not (isinstance(top_p, int | float) and 0 < top_p <= 1):
        raise ValueError(f"top_p must be None or a number in (0, 1], got {top_p!r}")


class CausalLM:
    """A decoder: :meth:`embed`, :meth:`block` and :meth:`head` come from its family."""

    kind = "decoder"
    family: str
    config: dict[str, Any]
    tokenizer: TextTokenizer
    num_layers: int
    num_heads: int
    num_kv_heads: int
    vocab_size: int
    max_positions: int
    eos_ids: frozenset[int] = frozenset()

    # ------------------------------------------------------------ the family's steps

    def embed(self, ids: NDArray[np.int64], positions: NDArray[np.int64]) -> Array:
        raise NotImplementedError  # (N, D)

    def block(
        self, i: int, h: Array, positions: NDArray[np.int64], cache: KVCache
    ) -> tuple[Array, AttentionResult]:
        raise NotImplementedError  # (N, D), the engine's result: weights (H, N, M)

    def head(self, last: Array) -> Array:
        raise NotImplementedError  # (V,)

    # ------------------------------------------------------------ shared

    def tokenize(self, text: str) -> tuple[list[str], NDArray[np.int64]]:
        """(token texts, ids) from the folder's tokenizer.json."""
        return self.tokenizer.encode(text)

    def _check_ids(self, ids: ArrayLike, past: int = 0) -> NDArray[np.int64]:
        ids = np.asarray(ids, dtype=np.int64)
        if ids.ndim != 1 or ids.size < 1:
            raise ValueError(f"ids must be a non-empty 1-D array, got shape {ids.shape}")
        if ids.min() < 0 or ids.max() >= self.vocab_size:
            raise ValueError(f"token ids must be in 0..{self.vocab_size - 1}")
        if past + ids.size > self.max_positions:
            raise ValueError(f"{past + ids.size} tokens, the model has {self.max_positions}")
        return ids

    def forward(self, ids: NDArray[np.int64], cache: KVCache) -> tuple[list[Array], Array]:
        """The new tokens ``ids`` (N,) after the cache's: each layer's weights (H, N, M)
        and the logits (V,) after the last token. The cache grows by N."""
        positions = np.arange(cache.length, cache.length + ids.size)  # (N,)
        h = self.embed(ids, positions)  # (N, D)
        weights = []
        for i in range(self.num_layers):
            h, att = self.block(i, h, positions, cache)  # (N, D), result
            weights.append(att.weights)  # (H, N, M)
        cache.length += ids.size
        return weights, self.head(h[-1])  # (V,)

    def attention_result(self, ids: ArrayLike, layer: int) -> AttentionResult:
        """Layer ``layer``'s whole attention on a prompt: the engine's result, with each
        head's queries and keys after RoPE (keys and values repeated per query head), the
        scale and the causal mask, so that any weight can be worked out from them
        (:func:`attnviz.teaching.explain.cell`). Runs the layers up to ``layer`` only."""
        ids = self._check_ids(ids)
        if not 0 <= layer < self.num_layers:
            raise ValueError(f"layer must be in 0..{self.num_layers - 1}, got {layer}")
        positions, cache = np.arange(ids.size), KVCache(self.num_layers)
        h = self.embed(ids, positions)  # (N, D)
        for i in range(layer + 1):
            h, att = self.block(i, h, positions, cache)
        return att

    def run_ids(self, ids: ArrayLike) -> DecoderRun:
        """A prompt's forward pass (ValueError for ids out of the vocabulary or too many)."""
        ids = self._check_ids(ids)
        if ids.size > MAX_TOKENS:
            raise ValueError(f"at most {MAX_TOKENS} tokens, got {ids.size}")
        weights, logits = self.forward(ids, KVCache(self.num_layers))
        return DecoderRun(
            tokens=[self.tokenizer.text(i) for i in ids],
            ids=ids,
            attentions=np.stack(weights),  # (L, H, N, N)
            logits=logits,
        )

    def generate_steps(
        self,
        ids: ArrayLike,
        max_new_tokens: int,
        *,
        temperature: float = 0.0,
        top_k: int | None = None,
        top_p: float | None = None,
        seed: int = 0,
    ) -> Iterator[Step]:
        """One :class:`Step` per new token (at most ``max_new_tokens``; it stops after an
        end-of-sequence token). The prompt runs once; each later step feeds one token."""
        check_sampling(max_new_tokens, temperature, top_k, top_p)
        ids = self._check_ids(ids)
        self._check_ids(ids[:1], ids.size + max_new_tokens - 1)  # room for every position
        rng = np.random.default_rng(seed)
        cache = KVCache(self.num_layers)
        new = ids
        for _ in range(max_new_tokens):
            weights, logits = self.forward(new, cache)  # [(H, N, M)], (V,)
            token = sample(logits, rng, temperature, top_k, top_p)
            rows = np.stack([w[:, -1, :] for w in weights])  # (L, H, M): the newest row
            yield Step(int(new[-1]), rows, logits, token, cache.length, cache.nbytes)
            if token in self.eos_ids:
                return
            new = np.array([token], dtype=np.int64)  # (1,)

    def generate(
        self,
        ids: ArrayLike,
        max_new_tokens: int,
        *,
        temperature: float = 0.0,
        top_k: int | None = None,
        top_p: float | None = None,
        seed: int = 0,
    ) -> NDArray[np.int64]:
        """The new ids only (greedy when ``temperature`` is 0), as :meth:`generate_steps`."""
        steps = self.generate_steps(
            ids, max_new_tokens, temperature=temperature, top_k=top_k, top_p=top_p, seed=seed
        )
        return np.array([s.token for s in steps], dtype=np.int64)


def eos_ids(config: dict[str, Any]) -> frozenset[int]:
    """config.json's ``eos_token_id`` (an id, a list of ids or null) as a set."""
    eos = config.get("eos_token_id")
    if eos is None:
        return frozenset()
    return frozenset([int(eos)] if isinstance(eos, int) else (int(e) for e in eos))


def require(config: dict[str, Any], *keys: str) -> list[Any]:
    """config.json's values of ``keys``; CheckpointError naming a missing one."""
    missing = [k for k in keys if config.get(k) is None]
    if missing:
        raise CheckpointError(
            f"config.json of {config.get('model_type')!r} has no {', '.join(missing)}"
        )
    return [config[k] for k in keys]
