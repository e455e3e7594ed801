"""T5 (and T5 v1.1, Flan-T5), the text-to-text encoder-decoder, in NumPy.

T5 is pre-norm with an RMS norm (no mean, no bias), has no position embeddings and
learns instead one scalar per head for each *bucket* of relative distance, added to the
attention scores: ``S[h, i, j] = q_i · k_j + B[h, bucket(j - i)]``. The scores are not
scaled by 1/√d (the initialisation folds that factor into W_q). The forward pass::

    e = E[src]                                           # (S, D)
    for each encoder layer:                              # B: bidirectional buckets
        e = e + W_o · softmax(Q Kᵀ + B_enc) V            # of RMSNorm(e)
        e = e + W_o' act(W_i RMSNorm(e))                 # (gated: act(W_i0 x) * W_i1 x)
    e = RMSNorm(e)
    h = E[tgt]                                           # (T, D)
    for each decoder layer:
        h = h + W_o · softmax(Q Kᵀ + B_dec, causal) V    # B: one-way buckets
        h = h + W_o · softmax(Q Kᵀ_e) V_e                # cross: no position bias
        h = h + MLP(RMSNorm(h))
    logits = (RMSNorm(h[-1]) · D^-½) @ Eᵀ                # D^-½ only with tied embeddings

Only the first layer of each stack holds the bias table (buckets, H); the other layers
reuse its bias. The engine has no additive bias, so the attention here is written out
with the engine's steps (:func:`attnviz.engine.attention_scores` unscaled, the bias,
:func:`attnviz.engine.apply_mask`, :func:`attnviz.engine.softmax`,
:func:`attnviz.engine.merge_heads`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from attnviz.engine import apply_mask, attention_scores, merge_heads, softmax, split_heads
from attnviz.models.encdec import (
    Decoded,
    EncoderDecoder,
    KVCache,
    WeightReader,
    activation,
    eos_ids,
    load_tokenizer,
)
from attnviz.models.layers import embedding_lookup, rms_norm

__all__ = ["FAMILIES", "KIND", "T5", "build", "relative_position_bucket"]

Array = NDArray[np.floating]

KIND = "encoder-decoder"
FAMILIES = ("t5",)

#: The config.json fields every T5 config has.
REQUIRED = ("vocab_size", "d_model", "d_kv", "d_ff", "num_layers", "num_heads")


def relative_position_bucket(
    relative: NDArray[np.int64], bidirectional: bool, num_buckets: int, max_distance: int
) -> NDArray[np.int64]:
    """T5's bucket of each relative position j - i (Mesh TensorFlow's scheme).

    Bidirectional (the encoder): half the buckets for keys after the query, half before.
    One-way (the decoder): only keys at or before the query count. Within a half, the
    first half of the buckets are the exact distances 0, 1, ...; the rest grow
    logarithmically up to ``max_distance``, beyond which all share the last bucket.
    """
    buckets = np.zeros_like(relative)
    if bidirectional:
        num_buckets //= 2
        buckets += (relative > 0).astype(np.int64) * num_buckets  # keys after the query
        distance = np.abs(relative)
    else:
        distance = -np.minimum(relative, 0)  # keys after the query: distance 0 (masked)
    max_exact = num_buckets // 2
    is_small = distance < max_exact
    far = np.maximum(distance, 1).astype(np.float32)  # (the small ones are not read here)
    log_ratio = np.log(far / max_exact) / math.log(max_distance / max_exact)
    large = max_exact + (log_ratio * (num_buckets - max_exact)).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return buckets + np.where(is_small, distance, large)


# --------------------------------------------------------------------------- weights


@dataclass(frozen=True)
class _Attention:
    """W_q, W_k, W_v (D, H·d), W_o (H·d, D) in row layout; no biases in T5."""

    w_q: Array
    w_k: Array
    w_v: Array
    w_o: Array


@dataclass(frozen=True)
class _Layer:
    self_norm: Array  # (D,)
    self_attn: _Attention
    cross_norm: Array | None  # decoder layers only
    cross_attn: _Attention | None
    ff_norm: Array  # (D,)
    w_in: tuple[Array, ...]  # (D, F): W_i, or W_i0 and W_i1 (gated)
    w_out: Array  # (F, D)


# --------------------------------------------------------------------------- model


class T5(EncoderDecoder):
    """T5 from a config.json dict and its weights (:func:`build`)."""

    def __init__(self, config: dict, weights: Mapping[str, Array], tokenizer_path: Path | None):
        self.family = "t5"
        missing = [k for k in REQUIRED if k not in config]
        if missing:
            raise ValueError(f"t5 config lacks {missing}")
        self.config = config
        self.d, self.heads, self.d_kv = (int(config[k]) for k in ("d_model", "num_heads", "d_kv"))
        self.eps = float(config.get("layer_norm_epsilon", 1e-6))
        self.num_buckets = int(config.get("relative_attention_num_buckets", 32))
        self.max_distance = int(config.get("relative_attention_max_distance", 128))
        proj = str(config.get("feed_forward_proj", "relu"))  # "relu", "gated-gelu", ...
        self.gated = proj.startswith("gated-")
        act = "gelu_new" if proj == "gated-gelu" else proj.split("-")[-1]  # as T5Config
        self.act = activation(act, self.family)
        # tied embeddings scale the decoder's output by D^-½ (T5Config's rule)
        tied = config.get("tie_word_embeddings", True) is not False
        self.scale_output = bool(config.get("scale_decoder_outputs", tied))
        self.src_vocab = self.tgt_vocab = int(config["vocab_size"])
        pad = config.get("pad_token_id", 0)
        start = config.get("decoder_start_token_id")
        self.decoder_start_token_id = int(pad if start is None else start)  # T5 starts at pad
        self.eos_token_ids = eos_ids(config, default=1)
        self.tokenizer = load_tokenizer(tokenizer_path, self.family)
        self._read(WeightReader(weights, self.family))

    def _read(self, get: WeightReader) -> None:
        """The embedding, the output layer, both stacks and their bias tables."""
        cfg, d = self.config, self.d
        names = ["shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight"]
        self.embed = get.first(names, (self.src_vocab, d))  # (V, D)
        self.lm_head = get.first(["lm_head.weight", *names], (self.tgt_vocab, d))  # (V, D)
        n_enc = int(cfg["num_layers"])
        n_dec = int(cfg.get("num_decoder_layers") or n_enc)
        bias_shape = (self.num_buckets, self.heads)
        self.enc_bias = get.get(
            "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", bias_shape
        )  # (buckets, H)
        self.dec_bias = get.get(
            "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", bias_shape
        )  # (buckets, H)
        self.encoder_layers = tuple(self._layer(get, f"encoder.block.{i}", 0) for i in range(n_enc))
        self.decoder_layers = tuple(self._layer(get, f"decoder.block.{i}", 1) for i in range(n_dec))
        self.enc_final_norm = get.get("encoder.final_layer_norm.weight", (d,))
        self.dec_final_norm = get.get("decoder.final_layer_norm.weight", (d,))

    def _layer(self, get: WeightReader, p: str, decoder: int) -> _Layer:
        """Block ``p``: layer.0 self-attention, (``decoder`` 1) layer.1 cross, then the MLP."""
        d, inner, ff = self.d, self.heads * self.d_kv, int(self.config["d_ff"])

        def attn(q: str) -> _Attention:
            w = {n: get.linear(f"{q}.{n}.weight", d, inner) for n in "qkv"}
            return _Attention(w["q"], w["k"], w["v"], get.linear(f"{q}.o.weight", inner, d))

        mlp = f"{p}.layer.{1 + decoder}"  # the MLP follows the attention(s)
        w_in = ("wi_0", "wi_1") if self.gated else ("wi",)
        return _Layer(
            self_norm=get.get(f"{p}.layer.0.layer_norm.weight", (d,)),
            self_attn=attn(f"{p}.layer.0.SelfAttention"),
            cross_norm=get.get(f"{p}.layer.1.layer_norm.weight", (d,)) if decoder else None,
            cross_attn=attn(f"{p}.layer.1.EncDecAttention") if decoder else None,
            ff_norm=get.get(f"{mlp}.layer_norm.weight", (d,)),
            w_in=tuple(get.linear(f"{mlp}.DenseReluDense.{w}.weight", d, ff) for w in w_in),
            w_out=get.linear(f"{mlp}.DenseReluDense.wo.weight", ff, d),
        )

    # ----------------------------------------------------------------- the passes

    def position_bias(self, table: Array, queries: NDArray, keys: int, both_ways: bool) -> Array:
        """(H, n, m): the bias of query positions ``queries`` (n,) over keys 0 .. m - 1."""
        relative = np.arange(keys)[None, :] - queries[:, None]  # (n, m): j - i
        buckets = relative_position_bucket(
            relative, both_ways, self.num_buckets, self.max_distance
        )  # (n, m)
        return table[buckets].transpose(2, 0, 1)  # (n, m, H) -> (H, n, m)

    def _mlp(self, x: Array, lay: _Layer) -> Array:
        """x + W_o act(W_i RMSNorm(x)); gated: x + W_o (act(W_i0 y) * W_i1 y)."""
        y = rms_norm(x, lay.ff_norm, self.eps)  # (n, D)
        hidden = self.act(y @ lay.w_in[0])  # (n, F)
        if self.gated:
            hidden = hidden * (y @ lay.w_in[1])  # (n, F)
        return x + hidden @ lay.w_out  # (n, D)

    def encode(self, src_ids: NDArray[np.int64]) -> tuple[Array, Array]:
        """The encoder: output after its final norm (S, D), attention weights (L, H, S, S)."""
        x = embedding_lookup(self.embed, src_ids)  # (S, D)
        s = src_ids.size
        bias = self.position_bias(self.enc_bias, np.arange(s), s, both_ways=True)  # (H, S, S)
        weights = []
        for lay in self.encoder_layers:
            a = lay.self_attn
            # 1. self-attention with the relative bias, on the normed input; residual
            y = rms_norm(x, lay.self_norm, self.eps)  # (S, D)
            kh, vh = self._heads(y @ a.w_k), self._heads(y @ a.w_v)  # (H, S, d)
            out, w = _attend(self._heads(y @ a.w_q), kh, vh, bias, None)
            x = x + out @ a.w_o  # (S, D)
            weights.append(w)  # (H, S, S)
            # 2. the MLP
            x = self._mlp(x, lay)
        return rms_norm(x, self.enc_final_norm, self.eps), np.stack(weights)

    def _heads(self, x: Array) -> Array:
        return split_heads(x, self.heads)  # (n, H·d) -> (H, n, d)

    def cross_cache(self, memory: Array) -> KVCache:
        """Each decoder layer's cross keys and values of the encoder output, (H, S, d)."""
        layers = [lay.cross_attn for lay in self.decoder_layers]
        return KVCache(
            cross_k=[self._heads(memory @ a.w_k) for a in layers],  # L x (H, S, d)
            cross_v=[self._heads(memory @ a.w_v) for a in layers],  # L x (H, S, d)
        )

    def decode(self, ids: NDArray[np.int64], cache: KVCache) -> Decoded:
        """The decoder over n new tokens at positions p = cache.length .. p + n - 1."""
        p, n = cache.length, ids.size
        x = embedding_lookup(self.embed, ids)  # (n, D)
        queries = np.arange(p, p + n)  # (n,) positions of the new tokens
        bias = self.position_bias(self.dec_bias, queries, p + n, both_ways=False)
        causal = np.arange(p + n)[None, :] <= queries[:, None]  # (n, p + n)
        self_w, cross_w = [], []
        for i, lay in enumerate(self.decoder_layers):
            a, c = lay.self_attn, lay.cross_attn
            # 1. causal self-attention with the one-way bias, over the cache and the new tokens
            y = rms_norm(x, lay.self_norm, self.eps)  # (n, D)
            kh, vh = cache.append(i, self._heads(y @ a.w_k), self._heads(y @ a.w_v), axis=1)
            out, w = _attend(self._heads(y @ a.w_q), kh, vh, bias, causal)  # kh (H, p + n, d)
            x = x + out @ a.w_o  # (n, D)
            self_w.append(w)  # (H, n, p + n)
            # 2. cross-attention over the encoder output, no position bias
            y = rms_norm(x, lay.cross_norm, self.eps)  # (n, D)
            out, w = _attend(self._heads(y @ c.w_q), cache.cross_k[i], cache.cross_v[i], None, None)
            x = x + out @ c.w_o  # (n, D)
            cross_w.append(w)  # (H, n, S)
            # 3. the MLP
            x = self._mlp(x, lay)
        cache.advance(n)
        x = rms_norm(x, self.dec_final_norm, self.eps)  # (n, D)
        if self.scale_output:
            x = x * np.float32(self.d**-0.5)
        return Decoded(x @ self.lm_head.T, np.stack(self_w), np.stack(cross_w))  # (n, V)


def _attend(
    qh: Array, kh: Array, vh: Array, bias: Array | None, mask: NDArray[np.bool_] | None
) -> tuple[Array, Array]:
    """T5's attention of qh (H, n, d) over kh, vh (H, m, d): (the heads merged (n, H·d),
    the weights (H, n, m))."""
    scores = attention_scores(qh, kh, scale=False)  # 1. S = Q Kᵀ, unscaled (H, n, m)
    if bias is not None:
        scores = scores + bias  # 2. + the relative position bias (H, n, m)
    weights = softmax(apply_mask(scores, mask))  # 3. causal mask, 4. softmax over the keys
    return merge_heads(weights @ vh), weights  # 5. A V, the heads side by side (n, H·d)


def build(config: dict, weights: Mapping[str, np.ndarray], tokenizer_path: Path | None) -> T5:
    """T5 (``model_type`` "t5") from config.json, the checkpoint's tensors by Hugging
    Face name (float32) and, optionally, tokenizer.json."""
    return T5(config, weights, tokenizer_path)
