"""Reading a checkpoint folder: bf16 and f16 widened exactly, shards, and every bad input a
ValueError (CheckpointError) that names the file or the value."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from attnviz.models import catalog, checkpoint, families

torch = pytest.importorskip("torch")
from safetensors.torch import save_file  # noqa: E402


@pytest.fixture
def llama_copy(tiny_checkpoint, tmp_path):
    """A copy of the tiny llama folder a test may break."""
    return shutil.copytree(tiny_checkpoint("llama"), tmp_path / "llama")


def test_bf16_and_f16_are_widened_exactly(tmp_path):
    x = torch.randn(3, 5) * 100
    tensors = {"b": x.to(torch.bfloat16), "h": x.to(torch.float16), "f": x, "i": torch.arange(3)}
    save_file(tensors, tmp_path / "w.safetensors")
    entries = checkpoint.read_header(tmp_path / "w.safetensors")
    assert {k: e.dtype for k, e in entries.items()} == {
        "b": "BF16",
        "h": "F16",
        "f": "F32",
        "i": "I64",
    }
    weights = checkpoint.Weights(entries)
    assert sorted(weights) == ["b", "f", "h"]  # integer buffers are not weights
    for name in "bhf":
        assert weights[name].dtype == np.float32
        np.testing.assert_array_equal(weights[name], tensors[name].float().numpy())


def test_a_sharded_checkpoint_reads_as_one(tiny_checkpoint, tmp_path):
    from tests.models import tiny

    folder = tiny_checkpoint("qwen2")
    tiny.reference(folder).save_pretrained(tmp_path / "sharded", max_shard_size="40KB")
    shards = sorted(p.name for p in (tmp_path / "sharded").glob("*.safetensors"))
    assert len(shards) > 1 and (tmp_path / "sharded" / checkpoint.INDEX).exists()
    one, many = checkpoint.open_folder(folder), checkpoint.open_folder(tmp_path / "sharded")
    assert many.params == one.params and many.bytes == 4 * one.params
    ids = tiny.prompt()
    a = families.build(one).run_ids(ids)
    b = families.build(many).run_ids(ids)
    np.testing.assert_array_equal(a.logits, b.logits)


def test_a_folder_without_config_json(tmp_path):
    with pytest.raises(ValueError, match=f"{tmp_path} has no config.json"):
        checkpoint.open_folder(tmp_path)


def test_a_truncated_safetensors_file(llama_copy):
    path = llama_copy / "model.safetensors"
    size = path.stat().st_size
    os.truncate(path, size - 100)
    with pytest.raises(ValueError, match=f"{path}: truncated safetensors file: tensor .* ends at"):
        checkpoint.open_folder(llama_copy)
    os.truncate(path, 5)
    with pytest.raises(ValueError, match=f"{path}: truncated safetensors file"):
        checkpoint.open_folder(llama_copy)


def test_a_config_that_does_not_match_its_weights(llama_copy):
    config = json.loads((llama_copy / "config.json").read_text())
    (llama_copy / "config.json").write_text(json.dumps({**config, "hidden_size": 48}))
    ckpt = checkpoint.open_folder(llama_copy)
    with pytest.raises(ValueError, match=r"model.safetensors: tensor model.embed_tokens.weight "
                       r"has shape \(128, 32\), config.json implies \(128, 48\)"):  # fmt: skip
        families.build(ckpt)


def test_an_unsupported_model_type(llama_copy):
    config = json.loads((llama_copy / "config.json").read_text())
    (llama_copy / "config.json").write_text(json.dumps({**config, "model_type": "mamba"}))
    with pytest.raises(ValueError, match=r"config.json: model_type 'mamba' is not supported; "
                       r"attnviz runs .*bert.*llama"):  # fmt: skip
        catalog.load(llama_copy)


def test_over_the_size_limit_raises_before_reading_weights(llama_copy, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_MODEL_MAX_GB", "0.0001")

    def no_read(*args, **kwargs):
        raise AssertionError("weights read")

    monkeypatch.setattr(checkpoint.Weights, "__getitem__", no_read)
    message = r"26,784 parameters, 0.000107 GB in float32, over the limit of 0.0001 GB"
    with pytest.raises(ValueError, match=message + r" \(ATTNVIZ_MODEL_MAX_GB\)"):
        catalog.load(llama_copy)
    monkeypatch.setenv("ATTNVIZ_MODEL_MAX_GB", "lots")
    with pytest.raises(ValueError, match="'lots'"):
        checkpoint.max_bytes()


def test_files_that_point_outside_the_folder_are_refused(llama_copy, tmp_path):
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}")
    (llama_copy / "tokenizer.json").unlink()
    (llama_copy / "tokenizer.json").symlink_to(outside)
    with pytest.raises(ValueError, match="tokenizer.json points outside"):
        checkpoint.open_folder(llama_copy)
    (llama_copy / "tokenizer.json").unlink()
    index = {"weight_map": {"model.norm.weight": "../../../etc/passwd"}}
    (llama_copy / checkpoint.INDEX).write_text(json.dumps(index))
    with pytest.raises(ValueError, match="passwd points outside"):
        checkpoint.open_folder(llama_copy)


def test_a_folder_without_safetensors(llama_copy):
    (llama_copy / "model.safetensors").unlink()
    with pytest.raises(ValueError, match=r"has no \*.safetensors file"):
        checkpoint.open_folder(llama_copy)


def test_text_without_a_tokenizer(llama_copy):
    (llama_copy / "tokenizer.json").unlink()
    model = families.build(checkpoint.open_folder(llama_copy))
    with pytest.raises(ValueError, match="no tokenizer.json"):
        model.tokenize("w5 w6")
    assert model.run_ids([5, 6]).tokens == ["<5>", "<6>"]
