"""``model.attention_result(ids, layer)``: one layer's whole attention (the engine's result)
of a found encoder or decoder, from which the pages' cell panel works a weight out. Its
weights equal the run's, and each weight follows from its query row, key row, scale and
mask by hand, in every family whose run the pages draw."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import models
from attnviz.teaching import explain
from tests.models.test_smollm import need

IDS = np.array([5, 9, 5, 9, 7, 11])


@pytest.mark.parametrize("family", ["bert", "distilbert", "gpt2", "llama", "qwen3", "gemma3_text"])
def test_each_weight_follows_from_the_layers_queries_and_keys(tmp_path, family):
    need("transformers")
    from tests.models import tiny

    model = models.load(tiny.save(family, tmp_path / family))
    run = model.run_ids(IDS)
    for layer in range(model.num_layers):
        r = model.attention_result(IDS, layer)
        np.testing.assert_allclose(r.weights, run.attentions[layer], atol=1e-6)
        h, i = model.num_heads - 1, IDS.size - 2
        s = r.queries[h, i] @ r.keys[h].T * r.scale  # (N,) the row's scores
        if r.mask is not None:
            s = np.where(r.mask[i], s, -np.inf)
        p = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
        np.testing.assert_allclose(p, run.attentions[layer, h, i], atol=1e-5)
        c = explain.cell(r, h, i, 1)
        assert c.weight == pytest.approx(run.attentions[layer, h, i, 1], abs=1e-6)
    assert (r.mask is None) == (model.kind == "encoder")


def test_a_layer_out_of_range_is_refused(tmp_path):
    need("transformers")
    from tests.models import tiny

    tiny.save("gpt2", tmp_path / "g")
    model = models.load(tmp_path / "g")
    with pytest.raises(ValueError, match="layer must be in 0..1"):
        model.attention_result(IDS, 2)
