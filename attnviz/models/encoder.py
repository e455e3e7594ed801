"""BERT and its kin (RoBERTa, DistilBERT) in NumPy, from a Hugging Face checkpoint.

The encoder of Devlin et al. 2019 (post-LayerNorm, learned positions, GELU MLP); every
layer's self-attention goes through :func:`attnviz.engine.multi_head_attention`::

    h = LayerNorm(word[ids] + position[positions] + type[0])          # (N, D)
    for each layer:
        h = LayerNorm(h + multi_head_attention(h, W_q, W_k, W_v, W_o).output)
        h = LayerNorm(h + GELU(h W_1 + b_1) W_2 + b_2)                 # (N, I) -> (N, D)

RoBERTa counts positions from ``pad_token_id + 1``; DistilBERT has no token types and names
its weights its own way (``q_lin``, ``sa_layer_norm``, ...). The weights may sit under a
task model's prefix (``bert.``, ``roberta.``, ``distilbert.``): it is found from the word
embeddings' name.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from attnviz.engine import AttentionParams, AttentionResult, multi_head_attention
from attnviz.models.causal import require
from attnviz.models.checkpoint import CheckpointError, TextTokenizer, expect
from attnviz.models.layers import (
    embedding_lookup,
    feed_forward,
    gelu,
    gelu_tanh,
    layer_norm,
    row_layout,
)

__all__ = ["FAMILIES", "KIND", "Encoder", "EncoderRun", "build"]

KIND = "encoder"
FAMILIES = ("bert", "roberta", "distilbert")
Array = NDArray[np.float32]
ACTIVATIONS = {"gelu": gelu, "gelu_new": gelu_tanh, "gelu_pytorch_tanh": gelu_tanh}
#: Per family: the names of one layer's tensors (query, key, value, output, norm 1, MLP
#: in, MLP out, norm 2) after ``{prefix}{layers}{i}.``.
NAMES = {
    "bert": ("encoder.layer.", "attention.self.query", "attention.self.key",
             "attention.self.value", "attention.output.dense", "attention.output.LayerNorm",
             "intermediate.dense", "output.dense", "output.LayerNorm"),
    "distilbert": ("transformer.layer.", "attention.q_lin", "attention.k_lin",
                   "attention.v_lin", "attention.out_lin", "sa_layer_norm", "ffn.lin1",
                   "ffn.lin2", "output_layer_norm"),
}  # fmt: skip
NAMES["roberta"] = NAMES["bert"]


@dataclass(frozen=True, eq=False)
class EncoderRun:
    """tokens (N texts), ids (N,), attentions (L, H, N, N) = (layer, head, query, key),
    hidden_states (L + 1, N, D): the embeddings and each layer's output."""

    tokens: list[str]
    ids: NDArray[np.int64]
    attentions: Array
    hidden_states: Array


class Encoder:
    """A BERT-style encoder; :func:`build` reads it from a checkpoint."""

    kind = "encoder"

    def __init__(
        self, config: dict[str, Any], weights: Mapping[str, np.ndarray], tokenizer_path: Path | None
    ) -> None:
        self.family, self.config = str(config["model_type"]), config
        distil = self.family == "distilbert"
        keys = ("dim", "n_layers", "n_heads", "hidden_dim") if distil else (
            "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size"
        )  # fmt: skip
        d, self.num_layers, self.num_heads, inter = require(config, *keys)
        self.vocab_size = int(require(config, "vocab_size")[0])
        act = config.get("activation" if distil else "hidden_act", "gelu")
        if act not in ACTIVATIONS:
            raise CheckpointError(f"config.json: activation {act!r} is not supported")
        self.act, self.eps = ACTIVATIONS[act], float(config.get("layer_norm_eps", 1e-12))
        self.tokenizer = TextTokenizer(tokenizer_path)
        # positions: RoBERTa's start after the padding id
        roberta = self.family == "roberta"
        self.first_position = int(config.get("pad_token_id") or 0) + 1 if roberta else 0
        self.max_positions = int(config.get("max_position_embeddings", 512)) - self.first_position
        found = [k for k in weights if k.endswith("embeddings.word_embeddings.weight")]
        if not found:
            raise CheckpointError("the checkpoint has no tensor embeddings.word_embeddings.weight")
        p = found[0][: -len("embeddings.word_embeddings.weight")]

        def get(name: str, shape: tuple[int, ...]) -> Array:
            return np.asarray(expect(weights, p + name, shape), dtype=np.float32)

        e = "embeddings."
        self.word = get(e + "word_embeddings.weight", (self.vocab_size, d))  # (V, D)
        n_pos = int(config.get("max_position_embeddings", 512))
        self.position = get(e + "position_embeddings.weight", (n_pos, d))  # (P, D)
        n_types = int(config.get("type_vocab_size", 2))
        types = None if distil else get(e + "token_type_embeddings.weight", (n_types, d))
        self.token_type = types  # (T, D) or None
        self.emb_norm = get(e + "LayerNorm.weight", (d,)), get(e + "LayerNorm.bias", (d,))
        names = NAMES[self.family]
        self.layers = [
            self._read_layer(get, f"{names[0]}{i}.", names[1:], d, inter)
            for i in range(self.num_layers)
        ]

    @staticmethod
    def _read_layer(get: Any, p: str, names: tuple[str, ...], d: int, inter: int) -> dict[str, Any]:
        """One layer: nn.Linear's (out, in) weights in row layout (in, out), and biases."""
        q, k, v, o, norm1, w1, w2, norm2 = (p + n for n in names)

        def lin(n: str, out: int, inp: int) -> tuple[Array, Array]:
            return row_layout(get(n + ".weight", (out, inp))), get(n + ".bias", (out,))

        (wq, bq), (wk, bk), (wv, bv), (wo, bo) = (lin(n, d, d) for n in (q, k, v, o))
        params = AttentionParams(w_q=wq, w_k=wk, w_v=wv, w_o=wo, b_q=bq, b_k=bk, b_v=bv, b_o=bo)
        return {
            "params": params,
            "norm1": (get(norm1 + ".weight", (d,)), get(norm1 + ".bias", (d,))),
            "mlp": (*lin(w1, inter, d), *lin(w2, d, inter)),  # w_1 (D, I), b_1, w_2 (I, D), b_2
            "norm2": (get(norm2 + ".weight", (d,)), get(norm2 + ".bias", (d,))),
        }

    @property
    def num_kv_heads(self) -> int:
        return self.num_heads

    def tokenize(self, text: str) -> tuple[list[str], NDArray[np.int64]]:
        """(token texts, ids), with the special tokens the tokenizer adds ([CLS], [SEP])."""
        return self.tokenizer.encode(text)

    def _check_ids(self, ids: ArrayLike) -> NDArray[np.int64]:
        ids = np.asarray(ids, dtype=np.int64)
        if ids.ndim != 1 or not 1 <= ids.size <= self.max_positions:
            raise ValueError(
                f"ids must be 1-D with 1..{self.max_positions} tokens, got shape {ids.shape}"
            )
        if ids.min() < 0 or ids.max() >= self.vocab_size:
            raise ValueError(f"token ids must be in 0..{self.vocab_size - 1}")
        return ids

    def _layers(self, ids: NDArray[np.int64]) -> Iterator[tuple[AttentionResult | None, Array]]:
        """Each layer in turn: its attention (the engine's result) and its output (N, D);
        the embeddings are yielded first, with no attention (None)."""
        positions = self.first_position + np.arange(ids.size)  # (N,)
        h = embedding_lookup(self.word, ids) + self.position[positions]  # (N, D)
        if self.token_type is not None:
            h = h + self.token_type[0]  # one segment
        h = layer_norm(h, *self.emb_norm, self.eps)
        yield None, h
        for lay in self.layers:
            # 1) self-attention through the engine, residual, LayerNorm
            att = multi_head_attention(h, lay["params"], num_heads=self.num_heads)
            h = layer_norm(h + att.output, *lay["norm1"], self.eps)  # (N, D)
            # 2) the MLP, (N, D) -> (N, I) -> (N, D), residual, LayerNorm
            w1, b1, w2, b2 = lay["mlp"]
            h = layer_norm(h + feed_forward(h, w1, w2, self.act, b1, b2), *lay["norm2"], self.eps)
            yield att, h

    def run_ids(self, ids: ArrayLike) -> EncoderRun:
        """The forward pass of ``ids`` (N,): every layer's attention weights."""
        ids = self._check_ids(ids)
        passes = list(self._layers(ids))
        return EncoderRun(
            tokens=[self.tokenizer.text(i) for i in ids],
            ids=ids,
            attentions=np.stack([a.weights for a, _ in passes[1:] if a]),  # (L, H, N, N)
            hidden_states=np.stack([h for _, h in passes]),  # (L + 1, N, D)
        )

    def attention_result(self, ids: ArrayLike, layer: int) -> AttentionResult:
        """Layer ``layer``'s whole attention (the engine's result: each head's queries,
        keys, values, scores and weights) on ``ids``; runs the layers up to it only."""
        ids = self._check_ids(ids)
        if not 0 <= layer < self.num_layers:
            raise ValueError(f"layer must be in 0..{self.num_layers - 1}, got {layer}")
        att, _ = next(itertools.islice(self._layers(ids), layer + 1, None))
        return att


def build(
    config: dict[str, Any], weights: Mapping[str, np.ndarray], tokenizer_path: Path | None
) -> Encoder:
    """A BERT, RoBERTa or DistilBERT checkpoint as an :class:`Encoder`."""
    return Encoder(config, weights, tokenizer_path)
