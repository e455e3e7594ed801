"""Llama, Mistral, Qwen2 and Qwen3 against transformers on tiny random checkpoints saved in
float32, float16 and bfloat16 (transformers loads the same file in float32), and the
config readers: RoPE parameters, layer types, sliding windows."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.models import checkpoint, families, llama
from tests.models import tiny

DTYPES = ["float32", "float16", "bfloat16"]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("family", llama.FAMILIES)
def test_equals_transformers(tiny_checkpoint, family, dtype):
    folder = tiny_checkpoint(family, dtype)
    model = families.build(checkpoint.open_folder(folder))
    assert (model.family, model.kind) == (family, "decoder")
    tiny.check_decoder(model, folder)


@pytest.mark.torch
def test_mistral_slides_and_qwen2_has_biases(tiny_checkpoint):
    mistral = families.build(checkpoint.open_folder(tiny_checkpoint("mistral")))
    assert [lay.window for lay in mistral.layers] == [5, 5]
    run = mistral.run_ids(tiny.prompt(9))
    assert np.all(run.attentions[:, :, 8, :4] == 0) and np.all(run.attentions[:, :, 8, 4:] > 0)
    qwen2 = families.build(checkpoint.open_folder(tiny_checkpoint("qwen2")))
    assert qwen2.layers[0].b_qkv is not None and qwen2.lm_head is qwen2.embedding  # tied
    qwen3 = families.build(checkpoint.open_folder(tiny_checkpoint("qwen3")))
    assert qwen3.layers[0].q_norm.shape == (16,) and qwen3.head_dim == 16


def test_rope_parameters_from_hub_keys_and_transformers_5():
    hub = {"rope_theta": 500000.0, "rope_scaling": {"rope_type": "linear", "factor": 4.0}}
    new = {"rope_parameters": {"rope_type": "linear", "rope_theta": 500000.0, "factor": 4.0}}
    a = llama.inv_freq(llama.rope_params(hub, "full_attention"), 64)
    b = llama.inv_freq(llama.rope_params(new, "full_attention"), 64)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a * 4, 1 / 500000.0 ** (np.arange(0, 64, 2) / 64))
    with pytest.raises(checkpoint.CheckpointError, match="'yarn'"):
        llama.inv_freq({"rope_type": "yarn", "factor": 4.0}, 64)


@pytest.mark.torch
def test_llama3_rope_equals_transformers():
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    scaling = {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}  # fmt: skip
    cfg = LlamaConfig(hidden_size=2048, num_attention_heads=32, rope_theta=500000.0,
                      rope_scaling=scaling, max_position_embeddings=131072)  # fmt: skip
    ref, _ = ROPE_INIT_FUNCTIONS["llama3"](cfg, "cpu")
    ours = llama.inv_freq(llama.rope_params(cfg.to_dict(), "full_attention"), 64)
    np.testing.assert_allclose(ours, ref.numpy(), rtol=1e-6)


def test_layer_types_of_hub_configs():
    base = {"model_type": "qwen2", "num_hidden_layers": 4, "sliding_window": 8}
    assert llama.default_layer_types(base) == ["full_attention"] * 4
    qwen = {**base, "use_sliding_window": True, "max_window_layers": 2}
    assert llama.layer_windows(qwen, llama.default_layer_types(qwen)) == [None, None, 8, 8]
    mistral = {**base, "model_type": "mistral"}
    assert llama.layer_windows(mistral, llama.default_layer_types(mistral)) == [8] * 4
    assert llama.layer_windows({**mistral, "sliding_window": None}, ["sliding_attention"]) == [None]
