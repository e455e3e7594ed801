"""Gemma 3 (text) in NumPy: the Llama layer of :mod:`attnviz.models.llama` with Gemma's
departures (Gemma Team 2025), each a switch of :class:`attnviz.models.llama.Quirks`:

- embeddings times √D; RMSNorm scales by (1 + w) (the stored weight is w);
- "sandwich" norms: RMSNorm after the attention and after the MLP too, before each
  residual sum (``post_attention_layernorm``, ``post_feedforward_layernorm``; the MLP's
  pre-norm is ``pre_feedforward_layernorm``);
- RMSNorm on each head's queries and keys (as Qwen3); scores scaled by
  ``query_pre_attn_scalar``^-1/2 instead of 1/√d; a GELU (tanh) gated MLP;
- local and global layers: five sliding-window layers (``sliding_window`` tokens, RoPE
  base ``rope_local_base_freq`` = 10 000) for each global one (causal, base
  ``rope_theta`` = 10⁶, with ``rope_scaling`` such as linear × 8 on the larger models).
  Hub checkpoints give the pattern as ``sliding_window_pattern`` (every 6th layer
  global), transformers 5 as ``layer_types`` and ``rope_parameters`` per layer type.

``gemma3`` (the multimodal checkpoint) is read for its language model: the config's
``text_config`` and the weights under ``language_model.``; the vision tower is not read.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from attnviz.models.checkpoint import CheckpointError
from attnviz.models.llama import Llama, Quirks, layer_windows

__all__ = ["FAMILIES", "KIND", "build", "layer_types", "text_config"]

KIND = "decoder"
FAMILIES = ("gemma3_text", "gemma3")
#: Where the multimodal checkpoint keeps its language model's weights.
TEXT_PREFIXES = ("model.language_model.", "language_model.model.")


def layer_types(config: Mapping[str, Any]) -> list[str]:
    """``layer_types``, or from the pattern: layer i is global when (i + 1) % pattern == 0."""
    if config.get("layer_types"):
        return list(config["layer_types"])
    pattern = int(
        config.get("sliding_window_pattern") or config.get("_sliding_window_pattern") or 6
    )
    n = int(config["num_hidden_layers"])
    return ["full_attention" if (i + 1) % pattern == 0 else "sliding_attention" for i in range(n)]


def text_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The language model's config, its RoPE written per layer type (transformers 5's
    ``rope_parameters``) when the checkpoint gives hub keys."""
    cfg = (
        dict(config.get("text_config") or {}) if config["model_type"] == "gemma3" else dict(config)
    )
    cfg.setdefault("model_type", "gemma3_text")
    params = cfg.get("rope_parameters")
    if not (isinstance(params, Mapping) and "full_attention" in params):
        full = {"rope_type": "default", "rope_theta": cfg.get("rope_theta", 1_000_000.0)}
        full.update(cfg.get("rope_scaling") or {})
        local = {"rope_type": "default", "rope_theta": cfg.get("rope_local_base_freq", 10_000.0)}
        cfg["rope_parameters"] = {"full_attention": full, "sliding_attention": local}
    return cfg


class _TextWeights(Mapping[str, np.ndarray]):
    """The multimodal checkpoint's language-model weights under the text model's names."""

    def __init__(self, weights: Mapping[str, np.ndarray]) -> None:
        self.weights = weights
        self.names = {
            "model." + k[len(p) :]: k for k in weights for p in TEXT_PREFIXES if k.startswith(p)
        }

    def __getitem__(self, name: str) -> np.ndarray:
        return self.weights[self.names[name]]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def where(self, name: str) -> Path | str:
        where = getattr(self.weights, "where", None)
        return where(self.names[name]) if where else "the checkpoint"


def build(
    config: dict[str, Any], weights: Mapping[str, np.ndarray], tokenizer_path: Path | None
) -> Llama:
    """A Gemma 3 checkpoint (text or multimodal) as a :class:`Llama` with Gemma's quirks."""
    multimodal = config["model_type"] == "gemma3"
    cfg = text_config(config)
    if cfg.get("attn_logit_softcapping") or cfg.get("use_bidirectional_attention"):
        raise CheckpointError(
            "config.json: attention logit soft-capping and bidirectional attention are not "
            "supported (Gemma 3 uses neither)"
        )
    if multimodal:
        weights = _TextWeights(weights)
        cfg.setdefault("eos_token_id", config.get("eos_token_id"))
    d = int(cfg["hidden_size"])
    quirks = Quirks(
        norm_plus_one=True,
        sandwich=True,
        gelu=True,
        embed_scale=math.sqrt(d),
        attn_scale=float(cfg.get("query_pre_attn_scalar", 256)) ** -0.5,
        final_softcap=cfg.get("final_logit_softcapping"),
    )
    types = layer_types(cfg)
    cfg.setdefault("tie_word_embeddings", True)
    model = Llama(
        cfg,
        weights,
        tokenizer_path,
        windows=layer_windows(cfg, types),
        rope_types=types,
        quirks=quirks,
    )
    model.family = str(config["model_type"])
    return model
