"""GPT-2 against transformers on tiny random checkpoints (float32, float16, bfloat16)."""

from __future__ import annotations

import pytest

from attnviz.models import checkpoint, families
from tests.models import tiny


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_equals_transformers(tiny_checkpoint, dtype):
    folder = tiny_checkpoint("gpt2", dtype)
    model = families.build(checkpoint.open_folder(folder))
    assert (model.family, model.kind, model.eos_ids) == ("gpt2", "decoder", frozenset({1}))
    tiny.check_decoder(model, folder)


@pytest.mark.torch
def test_an_unknown_activation_is_named(tiny_checkpoint):
    ckpt = checkpoint.open_folder(tiny_checkpoint("gpt2"))
    config = {**ckpt.config, "activation_function": "relu"}
    with pytest.raises(ValueError, match="'relu'"):
        families.module_for("gpt2").build(config, ckpt.weights(), None)
