"""BERT, RoBERTa and DistilBERT against transformers on tiny random checkpoints saved in
float32, float16 and bfloat16: every head's attentions and every layer's output."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.models import checkpoint, encoder, families
from tests.models import tiny


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("family", encoder.FAMILIES)
def test_equals_transformers(tiny_checkpoint, family, dtype):
    folder = tiny_checkpoint(family, dtype)
    model = families.build(checkpoint.open_folder(folder))
    assert (model.family, model.kind) == (family, "encoder")
    tokens, ids = model.tokenize("w10 w11 w12 w99 w13 w14 w15 w16 w17 w18")
    assert ids[0] == 2 and ids[-1] == 3 and tokens[1] == "w10"  # [CLS] ... [SEP]
    run = model.run_ids(ids)
    attentions, _, states = tiny.reference_run(folder, ids)
    assert run.attentions.shape == attentions.shape == (2, 4, 12, 12)
    assert np.abs(run.attentions - attentions).max() <= 1e-4
    assert np.abs(run.hidden_states - states).max() <= 1e-4


@pytest.mark.torch
def test_a_task_models_prefix_is_found(tiny_checkpoint):
    ckpt = checkpoint.open_folder(tiny_checkpoint("bert"))
    plain = families.build(ckpt)
    prefixed = {"bert." + k: v for k, v in ckpt.weights().items()}
    model = encoder.build(ckpt.config, prefixed, None)
    ids = np.array([2, 10, 11, 3])
    np.testing.assert_array_equal(model.run_ids(ids).attentions, plain.run_ids(ids).attentions)
    with pytest.raises(ValueError, match="0..127"):
        model.run_ids([2, 500])
