"""Gemma 3 against transformers on tiny random checkpoints (local and global layers,
query/key norms, sandwich norms, soft-capped logits), and its config readers."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.models import checkpoint, families, gemma3
from tests.models import tiny


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_equals_transformers(tiny_checkpoint, dtype):
    folder = tiny_checkpoint("gemma3_text", dtype)
    model = families.build(checkpoint.open_folder(folder))
    assert [lay.window for lay in model.layers] == [5, None, 5]
    tiny.check_decoder(model, folder)


def test_hub_keys_become_layer_types_and_rope_per_layer_type():
    hub = {"model_type": "gemma3_text", "num_hidden_layers": 12, "sliding_window_pattern": 6,
           "rope_theta": 1e6, "rope_local_base_freq": 1e4,
           "rope_scaling": {"rope_type": "linear", "factor": 8.0}}  # fmt: skip
    types = gemma3.layer_types(hub)
    assert [i for i, t in enumerate(types) if t == "full_attention"] == [5, 11]
    rope = gemma3.text_config(hub)["rope_parameters"]
    assert rope["full_attention"] == {"rope_type": "linear", "rope_theta": 1e6, "factor": 8.0}
    assert rope["sliding_attention"] == {"rope_type": "default", "rope_theta": 1e4}


@pytest.mark.torch
def test_the_multimodal_checkpoint_runs_its_language_model(tiny_checkpoint):
    ckpt = checkpoint.open_folder(tiny_checkpoint("gemma3_text"))
    text = families.build(ckpt)
    weights = {
        "model.language_model." + k.removeprefix("model."): v for k, v in ckpt.weights().items()
    }
    weights["model.vision_tower.patch.weight"] = np.zeros((2, 2), np.float32)
    config = {"model_type": "gemma3", "text_config": dict(ckpt.config), "eos_token_id": 1}
    model = gemma3.build(config, weights, None)
    assert model.family == "gemma3"
    ids = tiny.prompt()
    np.testing.assert_array_equal(model.run_ids(ids).logits, text.run_ids(ids).logits)
