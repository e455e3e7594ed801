"""The family table: every supported model type, a missing module left out, the dispatch
to a module's build (the encoder-decoders' too), an unsupported type named."""

from __future__ import annotations

import sys
import types

import pytest

from attnviz.models import checkpoint, families


def test_every_family_of_this_branch_is_supported():
    expected = {"bert", "roberta", "distilbert", "gpt2", "llama", "mistral", "qwen2", "qwen3",
                "gemma3_text", "gemma3"}  # fmt: skip
    assert expected <= set(families.supported())
    assert families.kind_of("bert") == "encoder" and families.kind_of("qwen3") == "decoder"


def test_an_unsupported_model_type_names_the_supported_ones():
    with pytest.raises(checkpoint.CheckpointError) as err:
        families.module_for("mamba", "/m/config.json")
    assert "/m/config.json" in str(err.value) and "'mamba'" in str(err.value)
    assert "llama" in str(err.value) and "gemma3_text" in str(err.value)


@pytest.fixture
def fake_t5(monkeypatch):
    """An encoder-decoder module where the t5 module goes (the other branch writes it)."""
    module = types.ModuleType("attnviz.models.t5")
    module.KIND, module.FAMILIES = "encoder-decoder", ("t5",)
    module.build = lambda config, weights, tokenizer_path: ("built", config["model_type"])
    monkeypatch.setitem(sys.modules, "attnviz.models.t5", module)
    families._table.cache_clear()
    yield module
    families._table.cache_clear()


def test_an_encoder_decoder_module_is_dispatched_to(fake_t5, tmp_path):
    assert families.kind_of("t5") == "encoder-decoder"
    entries = {}
    ckpt = checkpoint.Checkpoint(tmp_path, tmp_path, {"model_type": "t5"}, entries, None)
    assert families.build(ckpt) == ("built", "t5")


def test_a_module_of_the_table_that_is_missing_is_left_out(monkeypatch):
    monkeypatch.setattr(families, "MODULES", (*families.MODULES, "attnviz.models.nowhere"))
    families._table.cache_clear()
    try:
        assert "llama" in families.supported()
    finally:
        families._table.cache_clear()
