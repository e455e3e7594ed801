"""attnviz's BART and Marian against transformers' BartForConditionalGeneration and
MarianMTModel (tiny models of tests/encdec_models.py): learned positions with offset 2
and the embedding LayerNorm (BART), sinusoids, √D-scaled embeddings, final_logits_bias
and a decoder vocabulary of its own (Marian); bad weights."""

from __future__ import annotations

import numpy as np
import pytest
from encdec_models import (
    assert_same,
    ids_for,
    make,
    ours,
    reference,
    round_weights,
    saved,
    state_weights,
    transformers,
)

from attnviz.models import bart

BART_CASES = ["bart", "bart-scaled", "marian", "marian-own-vocab"]
FC1 = "model.encoder.layers.0.fc1.weight"


@pytest.fixture(scope="module", params=BART_CASES)
def case(request, tmp_path_factory):
    return saved(request.param, tmp_path_factory.mktemp(request.param))


def test_every_attention_and_the_logits_equal_transformers(case):
    """Built from the saved file (lm_head and the stacks' embeddings absent: tied;
    Marian's sinusoids absent: computed)."""
    name, model, config, weights = case
    m = ours(config, weights)
    assert (m.family, m.kind, m.config) == (config["model_type"], "encoder-decoder", config)
    assert not any("embed_positions" in k for k in weights) or name.startswith("bart")
    src, tgt = ids_for(model, 11, 1), ids_for(model, 7, 2)
    tgt[0] = m.decoder_start_token_id
    run = m.run_ids(src, tgt)
    assert_same(run, reference(model, src, tgt))
    assert np.all(np.triu(run.attentions, k=1) == 0)  # causal: zero above the diagonal


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["bart", "marian"])
def test_rounded_weights_equal_transformers_on_the_same_weights(name, dtype):
    """Weights rounded to half precision in torch, then both run in float32."""
    model = make(name)
    round_weights(model, dtype)
    src, tgt = ids_for(model, 9, 3), ids_for(model, 6, 4)
    run = ours(model.config.to_dict(), state_weights(model)).run_ids(src, tgt)
    assert_same(run, reference(model, src, tgt))


@pytest.mark.parametrize("dim", [32, 7])
def test_sinusoids_equal_transformers(dim):
    table = transformers.models.marian.modeling_marian.MarianSinusoidalPositionalEmbedding(50, dim)
    np.testing.assert_array_equal(bart.sinusoidal_positions(50, dim), table.create_weight().numpy())


def test_a_tensor_of_the_wrong_width_is_named_with_both_shapes():
    model = make("bart")
    weights, config = state_weights(model), model.config.to_dict()
    rows, cols = weights[FC1].shape
    weights[FC1] = np.zeros((rows, cols + 1), np.float32)
    with pytest.raises(ValueError, match=rf"{FC1}.*\({rows}, {cols + 1}\).*\({rows}, {cols}\)"):
        ours(config, weights)
    config = dict(config, d_model=config["d_model"] + 8)  # the config wrong instead
    with pytest.raises(ValueError, match=r"'model.shared.weight' has shape .* but the config"):
        ours(config, state_weights(model))


def test_a_missing_tensor_is_named():
    model = make("marian")
    weights = state_weights(model)
    del weights[FC1]
    with pytest.raises(ValueError, match=rf"{FC1}.* is missing"):
        ours(model.config.to_dict(), weights)
    with pytest.raises(ValueError, match="not model_type 't5'"):
        bart.build(dict(model.config.to_dict(), model_type="t5"), weights, None)
