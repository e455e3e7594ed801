"""GPT-2 (Radford et al. 2019) in NumPy, from a Hugging Face checkpoint.

Learned positions, pre-LayerNorm, multi-head attention with biases, a GELU (tanh) MLP::

    h = wte[ids] + wpe[positions]                                    # (N, D)
    for each layer:
        q, k, v = split(LayerNorm₁(h) @ c_attn + b)                   # (N, 3D)
        h = h + attention_from_qkv(q, [cache; k], [cache; v],
                                   mask=causal, w_o=c_proj).output    # (N, D)
        h = h + gelu_tanh(LayerNorm₂(h) @ c_fc + b) @ c_proj' + b'   # (N, 4D) -> (N, D)
    logits = LayerNorm_f(h[-1]) @ wteᵀ                               # (V,), tied

GPT-2's ``Conv1D`` stores its weights as (in, out): the engine's row layout already.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attnviz.engine import AttentionResult, attention_from_qkv, project
from attnviz.models.causal import CausalLM, KVCache, causal_rows, eos_ids, require
from attnviz.models.checkpoint import CheckpointError, TextTokenizer, expect
from attnviz.models.layers import embedding_lookup, feed_forward, gelu_tanh, layer_norm

__all__ = ["FAMILIES", "KIND", "GPT2", "build"]

KIND = "decoder"
FAMILIES = ("gpt2",)
Array = NDArray[np.float32]


class GPT2(CausalLM):
    """GPT-2; :func:`build` reads it from a checkpoint."""

    def __init__(
        self, config: dict[str, Any], weights: Mapping[str, np.ndarray], tokenizer_path: Path | None
    ) -> None:
        self.family, self.config = "gpt2", config
        d, self.num_layers, self.num_heads, self.vocab_size, self.max_positions = require(
            config, "n_embd", "n_layer", "n_head", "vocab_size", "n_positions"
        )
        self.num_kv_heads, self.eps = self.num_heads, float(config.get("layer_norm_epsilon", 1e-5))
        if config.get("activation_function", "gelu_new") not in ("gelu_new", "gelu_pytorch_tanh"):
            raise CheckpointError(
                f"config.json: activation_function {config['activation_function']!r} is not "
                "supported (gelu_new)"
            )
        self.tokenizer, self.eos_ids = TextTokenizer(tokenizer_path), eos_ids(config)
        p = "transformer." if "transformer.wte.weight" in weights else ""
        inner = int(config.get("n_inner") or 4 * d)

        def get(name: str, shape: tuple[int, ...]) -> Array:
            return np.asarray(expect(weights, p + name, shape), dtype=np.float32)

        self.wte = get("wte.weight", (self.vocab_size, d))  # (V, D), also the output layer
        self.wpe = get("wpe.weight", (self.max_positions, d))  # (P, D)
        self.ln_f = get("ln_f.weight", (d,)), get("ln_f.bias", (d,))
        self.layers = []
        for i in range(self.num_layers):
            shapes = {
                "ln_1.weight": (d,), "ln_1.bias": (d,), "ln_2.weight": (d,), "ln_2.bias": (d,),
                "attn.c_attn.weight": (d, 3 * d), "attn.c_attn.bias": (3 * d,),
                "attn.c_proj.weight": (d, d), "attn.c_proj.bias": (d,),
                "mlp.c_fc.weight": (d, inner), "mlp.c_fc.bias": (inner,),
                "mlp.c_proj.weight": (inner, d), "mlp.c_proj.bias": (d,),
            }  # fmt: skip
            self.layers.append({k: get(f"h.{i}.{k}", s) for k, s in shapes.items()})
        self.scale_by_layer = bool(config.get("scale_attn_by_inverse_layer_idx", False))

    def embed(self, ids: NDArray[np.int64], positions: NDArray[np.int64]) -> Array:
        return embedding_lookup(self.wte, ids) + self.wpe[positions]  # (N, D)

    def block(
        self, i: int, h: Array, positions: NDArray[np.int64], cache: KVCache
    ) -> tuple[Array, AttentionResult]:
        w, d = self.layers[i], h.shape[1]
        # 1) pre-LayerNorm, q, k, v in one matmul (Conv1D: (in, out))
        x = layer_norm(h, w["ln_1.weight"], w["ln_1.bias"], self.eps)  # (N, D)
        qkv = project(x, w["attn.c_attn.weight"], w["attn.c_attn.bias"])  # (N, 3D)
        keys, values = cache.extend(i, qkv[:, d : 2 * d], qkv[:, 2 * d :])  # (M, D) each
        # 2) causal multi-head attention over every token so far, output projection
        scale = 1 / np.sqrt(d // self.num_heads) / ((i + 1) if self.scale_by_layer else 1)
        att = attention_from_qkv(
            qkv[:, :d], keys, values, num_heads=self.num_heads, scale=float(scale),
            mask=causal_rows(cache.length, h.shape[0]),
            w_o=w["attn.c_proj.weight"], b_o=w["attn.c_proj.bias"],
        )  # fmt: skip
        h = h + att.output  # (N, D)
        # 3) pre-LayerNorm GELU MLP, (N, D) -> (N, 4D) -> (N, D)
        x = layer_norm(h, w["ln_2.weight"], w["ln_2.bias"], self.eps)
        f = feed_forward(
            x, w["mlp.c_fc.weight"], w["mlp.c_proj.weight"], gelu_tanh,
            w["mlp.c_fc.bias"], w["mlp.c_proj.bias"],
        )  # fmt: skip
        return h + f, att  # (N, D), the engine's result (weights (H, N, M))

    def head(self, last: Array) -> Array:
        return self.wte @ layer_norm(last, *self.ln_f, self.eps)  # (V,)


def build(
    config: dict[str, Any], weights: Mapping[str, np.ndarray], tokenizer_path: Path | None
) -> GPT2:
    """A GPT-2 checkpoint as a :class:`GPT2`."""
    return GPT2(config, weights, tokenizer_path)
