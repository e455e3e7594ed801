"""attnviz's T5 against transformers' T5ForConditionalGeneration (tiny models of
tests/encdec_models.py): the original T5 (relu, tied embeddings, output scaled by D^-½)
and v1.1 (gated-gelu, untied, a deeper decoder, fewer buckets); the relative position
buckets; bad weights; the tokenizer."""

from __future__ import annotations

import numpy as np
import pytest
from encdec_models import (
    assert_same,
    ids_for,
    make,
    need,
    ours,
    reference,
    round_weights,
    saved,
    state_weights,
    torch,
    transformers,
)

from attnviz.models import t5

T5_CASES = ["t5", "t5-v1.1"]
FC1 = "encoder.block.0.layer.1.DenseReluDense.wi.weight"


@pytest.fixture(scope="module", params=T5_CASES)
def case(request, tmp_path_factory):
    return saved(request.param, tmp_path_factory.mktemp(request.param))


def test_every_attention_and_the_logits_equal_transformers(case):
    """Built from the saved file (lm_head and the stacks' embeddings absent: tied)."""
    name, model, config, weights = case
    m = ours(config, weights)
    assert (m.family, m.kind, m.config) == ("t5", "encoder-decoder", config)
    assert m.scale_output is (name == "t5")
    src, tgt = ids_for(model, 11, 1), ids_for(model, 7, 2)
    tgt[0] = m.decoder_start_token_id
    run = m.run_ids(src, tgt)
    assert_same(run, reference(model, src, tgt))
    assert np.all(np.triu(run.attentions, k=1) == 0)  # causal: zero above the diagonal


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", T5_CASES)
def test_rounded_weights_equal_transformers_on_the_same_weights(name, dtype):
    """Weights rounded to half precision in torch, then both run in float32."""
    model = make(name)
    round_weights(model, dtype)
    src, tgt = ids_for(model, 9, 3), ids_for(model, 6, 4)
    run = ours(model.config.to_dict(), state_weights(model)).run_ids(src, tgt)
    assert_same(run, reference(model, src, tgt))


def test_relative_buckets_equal_transformers():
    attention = transformers.models.t5.modeling_t5.T5Attention
    rel = np.arange(-300, 300)[None, :]
    for bidirectional in (True, False):
        for buckets, distance in ((32, 128), (8, 16)):
            want = attention._relative_position_bucket(
                torch.tensor(rel), bidirectional, buckets, distance
            ).numpy()
            got = t5.relative_position_bucket(rel, bidirectional, buckets, distance)
            np.testing.assert_array_equal(got, want)


def test_a_tensor_of_the_wrong_width_is_named_with_both_shapes():
    model = make("t5")
    weights, config = state_weights(model), model.config.to_dict()
    rows, cols = weights[FC1].shape
    weights[FC1] = np.zeros((rows, cols + 1), np.float32)
    with pytest.raises(ValueError, match=rf"{FC1}.*\({rows}, {cols + 1}\).*\({rows}, {cols}\)"):
        ours(config, weights)
    config = dict(config, d_model=config["d_model"] + 8)  # the config wrong instead
    with pytest.raises(ValueError, match=r"'shared.weight' has shape .* but the config gives"):
        ours(config, state_weights(model))


def test_a_missing_tensor_is_named():
    model = make("t5")
    weights = state_weights(model)
    del weights[FC1]
    with pytest.raises(ValueError, match=rf"{FC1}.* is missing"):
        ours(model.config.to_dict(), weights)
    with pytest.raises(ValueError, match=r"lacks \['d_kv'\]"):
        ours({k: v for k, v in model.config.to_dict().items() if k != "d_kv"}, weights)


def test_tokenize_reads_tokenizer_json(tmp_path):
    tokenizers = need("tokenizers")
    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2, "the": 3, "cat": 4}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.post_processor = tokenizers.processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", 1)]
    )
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    model = make("t5")
    m = t5.build(model.config.to_dict(), state_weights(model), path)
    tokens, ids = m.tokenize("the cat sat")
    assert tokens == ["the", "cat", "<unk>", "</s>"] and ids.tolist() == [3, 4, 2, 1]
    with pytest.raises(ValueError, match="empty"):
        m.tokenize("  ")
