"""BART and Marian, encoder-decoder transformers of the original paper's shape, in NumPy.

Both are "Attention Is All You Need" with post-LayerNorm: every sublayer is
``x = LayerNorm(x + sublayer(x))``. Every attention goes through the engine
(:func:`attnviz.engine.attention_from_qkv`, scaled by 1/√d, biases on the projections).
The forward pass::

    e = embed_scale · E[src] + P[0..S-1]           # (S, D); BART: LayerNorm(e) after
    for each encoder layer:                        # bidirectional self-attention
        e = LN(e + MHA(e, e));   e = LN(e + W_2 act(W_1 e + b_1) + b_2)
    h = embed_scale · E[tgt] + P[0..T-1]           # (T, D); BART: LayerNorm(h) after
    for each decoder layer:
        h = LN(h + MHA(h, h, causal))              # self-attention, (L, H, T, T)
        h = LN(h + MHA(h, e))                      # cross-attention, (L, H, T, S)
        h = LN(h + W_2 act(W_1 h + b_1) + b_2)
    logits = h[-1] @ Eᵀ + final_logits_bias       # (V,)

What differs (:class:`Variant`): BART learns its positions, stored from row 2 on (the
"offset 2" of fairseq), and normalises the embeddings (``layernorm_embedding``); Marian
adds fixed sinusoids (sines in the first half of each row, cosines in the second), scales
the word embeddings by √D (``scale_embedding``), has no embedding LayerNorm, and may give
the decoder a vocabulary of its own (``share_encoder_decoder_embeddings: false``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from attnviz.engine import AttentionResult, attention_from_qkv
from attnviz.models.encdec import (
    Decoded,
    EncoderDecoder,
    KVCache,
    WeightReader,
    activation,
    eos_ids,
    load_tokenizer,
    token_id,
)
from attnviz.models.layers import embedding_lookup, feed_forward, layer_norm

__all__ = ["FAMILIES", "KIND", "Bart", "build", "sinusoidal_positions"]

Array = NDArray[np.floating]

KIND = "encoder-decoder"
FAMILIES = ("bart", "marian")
LN_EPS = 1e-5  # nn.LayerNorm's default, which both use


# --------------------------------------------------------------------------- config


@dataclass(frozen=True)
class Variant:
    """How BART and Marian differ (module docstring)."""

    learned_positions: bool  # BART: a table P (max + 2, D); Marian: sinusoids
    layernorm_embedding: bool  # BART: LayerNorm right after the embeddings


VARIANTS = {
    "bart": Variant(learned_positions=True, layernorm_embedding=True),
    "marian": Variant(learned_positions=False, layernorm_embedding=False),
}

#: The config.json fields every BART or Marian config has.
REQUIRED = (
    "vocab_size",
    "d_model",
    "encoder_layers",
    "decoder_layers",
    "encoder_attention_heads",
    "decoder_attention_heads",
    "encoder_ffn_dim",
    "decoder_ffn_dim",
    "max_position_embeddings",
)


def sinusoidal_positions(n_pos: int, dim: int) -> Array:
    """(n_pos, dim) Marian's positions: angle pos / 10000^(2⌊j/2⌋/dim), the sines of the
    even j in the first half of each row, the cosines of the odd j in the second
    (transformers' ``MarianSinusoidalPositionalEmbedding``, computed in float64)."""
    j = np.arange(dim)
    angle = np.arange(n_pos)[:, None] / np.power(10000, 2 * (j // 2) / dim)  # (n_pos, dim)
    half = dim // 2 + dim % 2
    out = np.empty((n_pos, dim), dtype=np.float32)
    out[:, :half] = np.sin(angle[:, 0::2])
    out[:, half:] = np.cos(angle[:, 1::2])
    return out


# --------------------------------------------------------------------------- weights


@dataclass(frozen=True)
class _Attention:
    """One attention's projections in row layout (D, D) and their biases (D,)."""

    w_q: Array
    b_q: Array
    w_k: Array
    b_k: Array
    w_v: Array
    b_v: Array
    w_o: Array
    b_o: Array
    heads: int


@dataclass(frozen=True)
class _Layer:
    self_attn: _Attention
    self_ln: tuple[Array, Array]  # LayerNorm weight, bias after self-attention
    cross_attn: _Attention | None  # decoder layers only
    cross_ln: tuple[Array, Array] | None
    w_1: Array  # (D, I)
    b_1: Array  # (I,)
    w_2: Array  # (I, D)
    b_2: Array  # (D,)
    final_ln: tuple[Array, Array]


def _attention(get: WeightReader, p: str, d: int, heads: int) -> _Attention:
    """The projections ``p.{q,k,v,out}_proj`` of width ``d``."""
    w = {n: get.linear(f"{p}.{n}_proj.weight", d, d) for n in ("q", "k", "v", "out")}
    b = {n: get.get(f"{p}.{n}_proj.bias", (d,)) for n in ("q", "k", "v", "out")}
    return _Attention(
        w_q=w["q"], b_q=b["q"], w_k=w["k"], b_k=b["k"], w_v=w["v"], b_v=b["v"],
        w_o=w["out"], b_o=b["out"], heads=heads,
    )  # fmt: skip


def _norm(get: WeightReader, p: str, d: int) -> tuple[Array, Array]:
    return get.get(f"{p}.weight", (d,)), get.get(f"{p}.bias", (d,))


def _layer(get: WeightReader, p: str, d: int, heads: int, ffn: int, cross: bool) -> _Layer:
    """Layer ``p`` (``model.encoder.layers.0`` ...): attention(s), norms, the MLP."""
    return _Layer(
        self_attn=_attention(get, f"{p}.self_attn", d, heads),
        self_ln=_norm(get, f"{p}.self_attn_layer_norm", d),
        cross_attn=_attention(get, f"{p}.encoder_attn", d, heads) if cross else None,
        cross_ln=_norm(get, f"{p}.encoder_attn_layer_norm", d) if cross else None,
        w_1=get.linear(f"{p}.fc1.weight", d, ffn),
        b_1=get.get(f"{p}.fc1.bias", (ffn,)),
        w_2=get.linear(f"{p}.fc2.weight", ffn, d),
        b_2=get.get(f"{p}.fc2.bias", (d,)),
        final_ln=_norm(get, f"{p}.final_layer_norm", d),
    )


# --------------------------------------------------------------------------- model


class Bart(EncoderDecoder):
    """BART or Marian from a config.json dict and its weights (:func:`build`)."""

    def __init__(self, config: dict, weights: Mapping[str, Array], tokenizer_path: Path | None):
        self.family = str(config.get("model_type", "bart"))
        if self.family not in VARIANTS:
            raise ValueError(f"bart.py builds {FAMILIES}, not model_type {self.family!r}")
        missing = [k for k in REQUIRED if k not in config]
        if missing:
            raise ValueError(f"{self.family} config lacks {missing}")
        self.config, self.variant = config, VARIANTS[self.family]
        self.d = int(config["d_model"])
        self.embed_scale = math.sqrt(self.d) if config.get("scale_embedding") else 1.0
        self.act = activation(config.get("activation_function", "gelu"), self.family)
        self.decoder_start_token_id = token_id(config, "decoder_start_token_id", self.family)
        self.eos_token_ids = eos_ids(config)
        self.tokenizer = load_tokenizer(tokenizer_path, self.family)
        get = WeightReader(weights, self.family)
        self.prefix = "model." if any(k.startswith("model.") for k in weights) else ""
        self._read_embeddings(get)
        self._read_layers(get)

    def _read_embeddings(self, get: WeightReader) -> None:
        """Word embeddings (shared or per side), positions, their norms, the output layer."""
        cfg, p, d = self.config, self.prefix, self.d
        shared = cfg.get("share_encoder_decoder_embeddings", True)
        self.src_vocab = int(cfg["vocab_size"])
        self.tgt_vocab = self.src_vocab if shared else int(cfg["decoder_vocab_size"])
        enc_names = [f"{p}shared.weight", f"{p}encoder.embed_tokens.weight"]
        dec_names = [f"{p}shared.weight", f"{p}decoder.embed_tokens.weight"] if shared else []
        dec_names += [f"{p}decoder.embed_tokens.weight", "lm_head.weight"]
        self.enc_embed = get.first(enc_names, (self.src_vocab, d))  # (V, D)
        self.dec_embed = get.first(dec_names, (self.tgt_vocab, d))  # (V', D)
        # the output layer: lm_head if the file has it, else tied to the decoder's embedding
        self.lm_head = get.first(["lm_head.weight", *dec_names], (self.tgt_vocab, d))  # (V', D)
        self.final_logits_bias = (
            get.get("final_logits_bias", (1, self.tgt_vocab))[0]
            if get.has("final_logits_bias")
            else np.zeros(self.tgt_vocab, np.float32)
        )  # (V',)
        n_pos = int(cfg["max_position_embeddings"])
        self.positions, self.emb_ln = {}, {}
        for side in ("encoder", "decoder"):
            name = f"{p}{side}.embed_positions.weight"
            if self.variant.learned_positions:  # rows 2 .. max + 1 (fairseq's offset 2)
                self.positions[side] = get.get(name, (n_pos + 2, d))[2:]  # (max, D)
            elif get.has(name):
                self.positions[side] = get.get(name, (n_pos, d))
            else:
                self.positions[side] = sinusoidal_positions(n_pos, d)  # (max, D)
            if self.variant.layernorm_embedding:
                self.emb_ln[side] = _norm(get, f"{p}{side}.layernorm_embedding", d)

    def _read_layers(self, get: WeightReader) -> None:
        cfg, p, d = self.config, self.prefix, self.d
        self.enc_heads = int(cfg["encoder_attention_heads"])
        self.dec_heads = int(cfg["decoder_attention_heads"])
        for heads in (self.enc_heads, self.dec_heads):
            if heads < 1 or d % heads:
                raise ValueError(f"{self.family}: {heads} heads do not divide d_model={d}")
        self.encoder_layers = tuple(
            _layer(get, f"{p}encoder.layers.{i}", d, self.enc_heads, cfg["encoder_ffn_dim"], False)
            for i in range(int(cfg["encoder_layers"]))
        )
        self.decoder_layers = tuple(
            _layer(get, f"{p}decoder.layers.{i}", d, self.dec_heads, cfg["decoder_ffn_dim"], True)
            for i in range(int(cfg["decoder_layers"]))
        )

    # ----------------------------------------------------------------- the passes

    def _embed(self, side: str, table: Array, ids: NDArray[np.int64], start: int) -> Array:
        """Word embeddings (scaled) plus positions start .. start + n - 1, BART's norm."""
        n = ids.size
        if start + n > self.positions[side].shape[0]:
            raise ValueError(
                f"{self.family} has {self.positions[side].shape[0]} positions; the {side} "
                f"input needs {start + n}"
            )
        x = embedding_lookup(table, ids) * np.float32(self.embed_scale)  # (n, D)
        x = x + self.positions[side][start : start + n]  # (n, D)
        if self.variant.layernorm_embedding:
            x = layer_norm(x, *self.emb_ln[side], LN_EPS)
        return x

    def _mlp(self, x: Array, lay: _Layer) -> Array:
        """x = LN(x + W_2 act(W_1 x + b_1) + b_2): the position-wise MLP, post-norm."""
        f = feed_forward(x, lay.w_1, lay.w_2, self.act, lay.b_1, lay.b_2)  # (n, I) -> (n, D)
        return layer_norm(x + f, *lay.final_ln, LN_EPS)

    def encode(self, src_ids: NDArray[np.int64]) -> tuple[Array, Array]:
        """The encoder: output (S, D) and its attention weights (L, H, S, S)."""
        x = self._embed("encoder", self.enc_embed, src_ids, 0)  # (S, D)
        weights = []
        for lay in self.encoder_layers:
            a = lay.self_attn
            # 1. self-attention, every token seeing every token; post-norm residual
            att = _mha(x @ a.w_q + a.b_q, x @ a.w_k + a.b_k, x @ a.w_v + a.b_v, a, None)
            x = layer_norm(x + att.output, *lay.self_ln, LN_EPS)  # (S, D)
            weights.append(att.weights)  # (H, S, S)
            # 2. the MLP
            x = self._mlp(x, lay)
        return x, np.stack(weights)  # (S, D), (L, H, S, S)

    def cross_cache(self, memory: Array) -> KVCache:
        """Each decoder layer's cross keys and values of the encoder output (S, D)."""
        layers = [lay.cross_attn for lay in self.decoder_layers]
        return KVCache(
            cross_k=[memory @ a.w_k + a.b_k for a in layers],  # L x (S, D)
            cross_v=[memory @ a.w_v + a.b_v for a in layers],  # L x (S, D)
        )

    def decode(self, ids: NDArray[np.int64], cache: KVCache) -> Decoded:
        """The decoder over n new tokens at positions p = cache.length .. p + n - 1."""
        p, n = cache.length, ids.size
        x = self._embed("decoder", self.dec_embed, ids, p)  # (n, D)
        causal = np.arange(p + n)[None, :] <= np.arange(p, p + n)[:, None]  # (n, p + n)
        self_w, cross_w = [], []
        for i, lay in enumerate(self.decoder_layers):
            a, c = lay.self_attn, lay.cross_attn
            # 1. causal self-attention over the cache and the new tokens
            k, v = cache.append(i, x @ a.w_k + a.b_k, x @ a.w_v + a.b_v, axis=0)  # (p + n, D)
            att = _mha(x @ a.w_q + a.b_q, k, v, a, causal)
            x = layer_norm(x + att.output, *lay.self_ln, LN_EPS)  # (n, D)
            self_w.append(att.weights)  # (H, n, p + n)
            # 2. cross-attention: queries from the decoder, keys and values from the source
            att = _mha(x @ c.w_q + c.b_q, cache.cross_k[i], cache.cross_v[i], c, None)
            x = layer_norm(x + att.output, *lay.cross_ln, LN_EPS)  # (n, D)
            cross_w.append(att.weights)  # (H, n, S)
            # 3. the MLP
            x = self._mlp(x, lay)
        cache.advance(n)
        logits = x @ self.lm_head.T + self.final_logits_bias  # (n, V)
        return Decoded(logits, np.stack(self_w), np.stack(cross_w))


def _mha(q: Array, k: Array, v: Array, a: _Attention, mask: Array | None) -> AttentionResult:
    """The engine's multi-head attention of projected q (n, D), k, v (m, D): scaled by
    1/√d, masked, the output projection W_o, b_o applied."""
    return attention_from_qkv(q, k, v, num_heads=a.heads, mask=mask, w_o=a.w_o, b_o=a.b_o)


def build(config: dict, weights: Mapping[str, np.ndarray], tokenizer_path: Path | None) -> Bart:
    """BART (``model_type`` "bart") or Marian ("marian") from config.json, the checkpoint's
    tensors by Hugging Face name (float32) and, optionally, tokenizer.json."""
    return Bart(config, weights, tokenizer_path)
