"""Fixtures shared by the model tests: the references that are slow to load, loaded once
per test session (transformers dequantizes SmolLM2's GGUF file in ~35 s)."""

from __future__ import annotations

import pytest

from attnviz.models import smollm
from tests.models.test_smollm import need


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
