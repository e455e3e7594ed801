"""Llama and its kin (Mistral, Qwen2, Qwen3) in NumPy, from a Hugging Face checkpoint.

One layer (Touvron et al. 2023; pre-RMSNorm, RoPE, grouped-query attention, SwiGLU)::

    x = RMSNorm(h)                                                  # (N, D)
    q, k, v = x W_q (+ b_q), x W_k (+ b_k), x W_v (+ b_v)           # Qwen2: with biases
    q, k = RMSNorm(q per head), RMSNorm(k per head)                 # Qwen3 only
    q, k = RoPE(q, positions), RoPE(k, positions)                   # (H, N, d), (G, N, d)
    h = h + attention_from_qkv(q, [cache; k], [cache; v], num_kv_heads=G,
                               mask=causal (Mistral: sliding window)).output  # (N, D)
    h = h + (silu(x' W_gate) * (x' W_up)) W_down,  x' = RMSNorm(h)  # (N, I) -> (N, D)

then ``logits = RMSNorm(h[-1]) W_lm`` (W_lm the embedding when tied). The variants differ
only in config keys: Mistral's ``sliding_window`` covers every layer, Qwen2's only the
layers from ``max_window_layers`` on when ``use_sliding_window``, and ``layer_types``
(what transformers 5 writes) says it per layer. RoPE's base is ``rope_theta`` (hub
checkpoints) or ``rope_parameters`` (transformers 5), with ``linear`` or ``llama3``
scaling. Gemma 3 is this model with a few switches (:class:`Quirks`,
:mod:`attnviz.models.gemma3`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attnviz.engine import AttentionResult, attention_from_qkv, merge_heads, project, split_heads
from attnviz.models.causal import CausalLM, KVCache, causal_rows, eos_ids, require
from attnviz.models.checkpoint import CheckpointError, TextTokenizer, expect
from attnviz.models.layers import (
    embedding_lookup,
    feed_forward,
    geglu,
    rms_norm,
    swiglu,
)

__all__ = ["FAMILIES", "KIND", "Llama", "Quirks", "build", "inv_freq", "layer_windows"]

KIND = "decoder"
FAMILIES = ("llama", "mistral", "qwen2", "qwen3")
Array = NDArray[np.float32]


@dataclass(frozen=True)
class Quirks:
    """Where a family departs from Llama (the defaults are Llama's)."""

    norm_plus_one: bool = False  # Gemma: RMSNorm scales by (1 + w)
    sandwich: bool = False  # Gemma: a norm after attention and after the MLP too
    gelu: bool = False  # Gemma: GELU (tanh) gate instead of SiLU
    embed_scale: float = 1.0  # Gemma: embeddings times √D
    attn_scale: float | None = None  # Gemma: query_pre_attn_scalar^-1/2, else 1/√d
    final_softcap: float | None = None  # Gemma 2/3: logits = cap · tanh(logits / cap)


@dataclass(frozen=True, eq=False)
class _Layer:
    # Matrices as the checkpoint stores them, nn.Linear's (out, in), used as x @ w.T: BLAS
    # reads the transpose without a copy, as fast as a contiguous (in, out) copy here
    # (bench/real_models.py qwen2), and loading skips ~2 GB of transposes on a 0.5 B model.
    attn_norm: Array  # (D,)
    w_qkv: Array  # (H·d + 2·G·d, D): [W_q; W_k; W_v]
    b_qkv: Array | None  # (H·d + 2·G·d,) Qwen2
    q_norm: Array | None  # (d,) Qwen3, Gemma 3
    k_norm: Array | None  # (d,)
    w_o: Array  # (D, H·d)
    post_attn_norm: Array | None  # (D,) Gemma
    mlp_norm: Array  # (D,)
    w_gate_up: Array  # (2I, D): [W_gate; W_up]
    w_down: Array  # (D, I)
    post_mlp_norm: Array | None  # (D,) Gemma
    inv_freq: NDArray[np.float64]  # (d/2,) RoPE frequencies of this layer
    window: int | None  # sliding window (tokens), None = causal


# --------------------------------------------------------------------------- config


def inv_freq(params: Mapping[str, Any], head_dim: int) -> NDArray[np.float64]:
    """RoPE's (d/2,) frequencies θ^(-2i/d) for ``params`` (``rope_theta``, ``rope_type``
    or ``type``, and the scaling's keys): ``default``, ``linear`` (÷ factor) or
    ``llama3`` (long wavelengths ÷ factor, a smooth blend between)."""
    theta = float(params.get("rope_theta", 10000.0))
    kind = params.get("rope_type", params.get("type", "default"))
    base = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)  # (d/2,)
    if kind == "default":
        return base
    if kind == "linear":
        return base / float(params["factor"])
    if kind == "llama3":
        factor, old = float(params["factor"]), float(params["original_max_position_embeddings"])
        low, high = float(params["low_freq_factor"]), float(params["high_freq_factor"])
        wavelen = 2 * math.pi / base  # (d/2,)
        smooth = (old / wavelen - low) / (high - low)
        blended = (1 - smooth) * base / factor + smooth * base
        out = np.where(wavelen > old / low, base / factor, base)
        medium = (wavelen >= old / high) & (wavelen <= old / low)
        return np.where(medium, blended, out)
    raise CheckpointError(
        f"config.json: rope type {kind!r} is not supported (default, linear, llama3)"
    )


def rope_params(config: Mapping[str, Any], layer_type: str) -> dict[str, Any]:
    """The RoPE parameters of a layer type, from ``rope_parameters`` (transformers 5:
    one dict, or one per layer type) or ``rope_theta`` and ``rope_scaling`` (hub)."""
    params = config.get("rope_parameters")
    if isinstance(params, Mapping) and layer_type in params:
        return dict(params[layer_type])
    if isinstance(params, Mapping) and "rope_theta" in params:
        return dict(params)
    out = {"rope_theta": config.get("rope_theta", 10000.0)}
    scaling = config.get("rope_scaling")
    if layer_type == "full_attention" and isinstance(scaling, Mapping):
        out.update(scaling)
    return out


def layer_windows(config: Mapping[str, Any], default_types: list[str]) -> list[int | None]:
    """Each layer's sliding window (None = causal) from ``layer_types`` (else
    ``default_types``) and ``sliding_window``."""
    types = config.get("layer_types") or default_types
    window = config.get("sliding_window")
    return [window if t == "sliding_attention" and window else None for t in types]


def default_layer_types(config: Mapping[str, Any]) -> list[str]:
    """Hub checkpoints without ``layer_types``: Mistral slides on every layer when it has
    a ``sliding_window``; Qwen2/3 from ``max_window_layers`` on if ``use_sliding_window``."""
    n = int(config["num_hidden_layers"])
    if config["model_type"] == "mistral":
        return ["sliding_attention"] * n
    if config.get("use_sliding_window"):
        first = int(config.get("max_window_layers", n))
        return ["sliding_attention" if i >= first else "full_attention" for i in range(n)]
    return ["full_attention"] * n


# --------------------------------------------------------------------------- model


class Llama(CausalLM):
    """A Llama-style decoder; :func:`build` reads it from a checkpoint."""

    def __init__(
        self,
        config: dict[str, Any],
        weights: Mapping[str, np.ndarray],
        tokenizer_path: Path | None,
        *,
        windows: list[int | None],
        rope_types: list[str],
        quirks: Quirks = Quirks(),
        prefix: str = "model.",
    ) -> None:
        self.family, self.config, self.quirks = config["model_type"], config, quirks
        d_model, self.num_layers, self.num_heads, self.vocab_size = require(
            config, "hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size"
        )
        self.num_kv_heads = int(config.get("num_key_value_heads") or self.num_heads)
        self.head_dim = int(config.get("head_dim") or d_model // self.num_heads)
        self.d_model, self.eps = d_model, float(config.get("rms_norm_eps", 1e-6))
        self.max_positions = int(config.get("max_position_embeddings", 4096))
        self.tokenizer, self.eos_ids = TextTokenizer(tokenizer_path), eos_ids(config)
        shape = (self.vocab_size, d_model)
        self.embedding = expect(weights, prefix + "embed_tokens.weight", shape)  # (V, D)
        self.final_norm = self._norm_weight(weights, prefix + "norm.weight", d_model)
        untied = "lm_head.weight" in weights  # tied when the config says so or no head is stored
        tied = bool(config.get("tie_word_embeddings", not untied)) or not untied
        self.lm_head = self.embedding if tied else expect(weights, "lm_head.weight", shape)
        if len(windows) != self.num_layers or len(rope_types) != self.num_layers:
            raise CheckpointError(
                f"config.json: {len(rope_types)} layer types for {self.num_layers} layers"
            )
        self.layers = [
            self._read_layer(weights, f"{prefix}layers.{i}.", self._freq(config, t), w)
            for i, (t, w) in enumerate(zip(rope_types, windows, strict=True))
        ]

    def _freq(self, config: Mapping[str, Any], layer_type: str) -> NDArray[np.float64]:
        return inv_freq(rope_params(config, layer_type), self.head_dim)  # (d/2,)

    def _norm_weight(self, weights: Mapping[str, np.ndarray], name: str, width: int) -> Array:
        w = expect(weights, name, (width,)).astype(np.float32)
        return w + np.float32(1) if self.quirks.norm_plus_one else w  # Gemma: x · (1 + w)

    def _read_layer(
        self,
        weights: Mapping[str, np.ndarray],
        p: str,
        freq: NDArray[np.float64],
        window: int | None,
    ) -> _Layer:
        """One layer's weights, (out, in), shapes checked against the config."""
        d, hd, inter = self.d_model, self.head_dim, int(self.config["intermediate_size"])
        dq, dk = self.num_heads * hd, self.num_kv_heads * hd
        a, m, gemma = p + "self_attn.", p + "mlp.", self.quirks.sandwich

        def norm(name: str, width: int = d) -> Array | None:
            return self._norm_weight(weights, name, width) if name in weights else None

        w_q = expect(weights, a + "q_proj.weight", (dq, d))
        w_k = expect(weights, a + "k_proj.weight", (dk, d))
        w_v = expect(weights, a + "v_proj.weight", (dk, d))
        biases = [a + n + "_proj.bias" for n in "qkv"]
        w_gate = expect(weights, m + "gate_proj.weight", (inter, d))
        w_up = expect(weights, m + "up_proj.weight", (inter, d))
        mlp_norm = p + ("pre_feedforward_layernorm" if gemma else "post_attention_layernorm")
        return _Layer(
            attn_norm=self._norm_weight(weights, p + "input_layernorm.weight", d),
            w_qkv=np.concatenate([w_q, w_k, w_v]),  # (H·d + 2·G·d, D)
            b_qkv=np.concatenate([weights[b] for b in biases]) if biases[0] in weights else None,
            q_norm=norm(a + "q_norm.weight", hd),  # (d,) or None
            k_norm=norm(a + "k_norm.weight", hd),
            w_o=np.ascontiguousarray(expect(weights, a + "o_proj.weight", (d, dq))),  # (D, H·d)
            post_attn_norm=norm(p + "post_attention_layernorm.weight") if gemma else None,
            mlp_norm=self._norm_weight(weights, mlp_norm + ".weight", d),
            w_gate_up=np.concatenate([w_gate, w_up]),  # (2I, D)
            w_down=np.ascontiguousarray(expect(weights, m + "down_proj.weight", (d, inter))),
            post_mlp_norm=norm(p + "post_feedforward_layernorm.weight") if gemma else None,
            inv_freq=freq,
            window=window,
        )

    # ------------------------------------------------------------ the forward pass

    def embed(self, ids: NDArray[np.int64], positions: NDArray[np.int64]) -> Array:
        h = embedding_lookup(self.embedding, ids).astype(np.float32)  # (N, D)
        if self.quirks.embed_scale != 1.0:
            h = h * np.float32(self.quirks.embed_scale)  # Gemma: · √D
        return h

    def block(
        self, i: int, h: Array, positions: NDArray[np.int64], cache: KVCache
    ) -> tuple[Array, AttentionResult]:
        lay, hd = self.layers[i], self.head_dim
        nq, nk = self.num_heads * hd, self.num_kv_heads * hd
        # 1) pre-norm, then the query, key and value projections in one matmul
        x = rms_norm(h, lay.attn_norm, self.eps)  # (N, D)
        qkv = project(x, lay.w_qkv.T, lay.b_qkv)  # (N, H·d + 2·G·d)
        q = split_heads(qkv[:, :nq], self.num_heads)  # (H, N, d)
        k = split_heads(qkv[:, nq : nq + nk], self.num_kv_heads)  # (G, N, d)
        v = qkv[:, nq + nk :]  # (N, G·d)
        # 2) Qwen3, Gemma 3: each head's query and key RMS-normed
        if lay.q_norm is not None and lay.k_norm is not None:
            q, k = rms_norm(q, lay.q_norm, self.eps), rms_norm(k, lay.k_norm, self.eps)
        # 3) RoPE at the tokens' positions
        cos, sin = rope_tables(positions, lay.inv_freq)  # (N, d) each
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)  # (H, N, d), (G, N, d)
        # 4) attention over every token so far (the cache), causal or sliding window
        keys, values = cache.extend(i, merge_heads(k), v)  # (M, G·d) each
        mask = causal_rows(cache.length, h.shape[0], lay.window)  # (N, M)
        scale = self.quirks.attn_scale or True
        att = attention_from_qkv(
            merge_heads(q), keys, values, num_heads=self.num_heads,
            num_kv_heads=self.num_kv_heads, scale=scale, mask=mask, w_o=lay.w_o.T,
        )  # fmt: skip
        a = att.output  # (N, D)
        if lay.post_attn_norm is not None:
            a = rms_norm(a, lay.post_attn_norm, self.eps)
        h = h + a
        # 5) the gated MLP, (N, D) -> (N, I) -> (N, D), residual
        x = rms_norm(h, lay.mlp_norm, self.eps)  # (N, D)
        f = feed_forward(x, lay.w_gate_up.T, lay.w_down.T, geglu if self.quirks.gelu else swiglu)
        if lay.post_mlp_norm is not None:
            f = rms_norm(f, lay.post_mlp_norm, self.eps)
        return h + f, att  # (N, D), the engine's result (weights (H, N, M))

    def head(self, last: Array) -> Array:
        logits = self.lm_head @ rms_norm(last, self.final_norm, self.eps)  # (V,)
        cap = self.quirks.final_softcap
        return np.tanh(logits / cap) * np.float32(cap) if cap else logits


def rope_tables(positions: NDArray[np.int64], freq: NDArray[np.float64]) -> tuple[Array, Array]:
    """cos and sin (N, d) of the angles position · freq, "rotate half" layout, float32."""
    angles = positions[:, None].astype(np.float64) * freq[None, :]  # (N, d/2)
    angles = np.concatenate([angles, angles], axis=-1)  # (N, d)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def rotate(x: Array, cos: Array, sin: Array) -> Array:
    """RoPE: x · cos + rotate_half(x) · sin, rotate_half(x) = [-x₂, x₁]; x (..., N, d)."""
    half = x.shape[-1] // 2
    rot = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)  # (..., N, d)
    return x * cos + rot * sin


def build(
    config: dict[str, Any], weights: Mapping[str, np.ndarray], tokenizer_path: Path | None
) -> Llama:
    """A Llama, Mistral, Qwen2 or Qwen3 checkpoint as a :class:`Llama`."""
    types = list(config.get("layer_types") or default_layer_types(config))
    windows = layer_windows(config, types)
    return Llama(config, weights, tokenizer_path, windows=windows, rope_types=types)
