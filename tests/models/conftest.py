"""Fixtures shared by the model tests, each built or loaded once per test session: tiny
checkpoints of every family (tests/models/tiny.py) and transformers' SmolLM2 reference
(transformers dequantizes SmolLM2's GGUF file in ~35 s)."""

from __future__ import annotations

import pytest

from attnviz.models import smollm
from tests.models import tiny
from tests.models.test_smollm import need


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
def smollm_reference():
    """transformers' LlamaForCausalLM and tokenizer on SmolLM2's GGUF file: (torch, model,
    tokenizer), for tests/models/test_smollm.py and test_head_probes.py."""
    torch = need("torch")
    transformers = need("transformers")
    need("accelerate")
    need("gguf")
    path = smollm.model_file()
    ref = transformers.AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, attn_implementation="eager"
    ).eval()
    tok = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    return torch, ref, tok
