"""Tiny random checkpoints of every family, made with transformers (nothing downloaded):
``save(family, folder, dtype)`` writes config.json, model.safetensors and a word-level
tokenizer.json; ``reference(folder)`` loads the same files in transformers, float32,
eager attention (so f16/bf16 files are compared on the same rounded weights)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

VOCAB = 128
SMALL = dict(
    vocab_size=VOCAB,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    initializer_range=0.2,
)
DECODER = dict(SMALL, intermediate_size=64, num_key_value_heads=2, initializer_range=0.2)

#: family -> (transformers config class, its arguments, the Auto class that builds it)
FAMILIES = {
    "bert": ("BertConfig", dict(SMALL, intermediate_size=64), "AutoModel"),
    "roberta": (
        "RobertaConfig",
        dict(SMALL, intermediate_size=64, max_position_embeddings=70, type_vocab_size=1),
        "AutoModel",
    ),
    "distilbert": (
        "DistilBertConfig",
        dict(vocab_size=VOCAB, dim=32, n_layers=2, n_heads=4, hidden_dim=64, initializer_range=0.2),
        "AutoModel",
    ),
    "gpt2": (
        "GPT2Config",
        dict(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=128,
             bos_token_id=0, eos_token_id=1, initializer_range=0.2),
        "AutoModelForCausalLM",
    ),
    "llama": ("LlamaConfig", dict(DECODER, rope_theta=500.0), "AutoModelForCausalLM"),
    "mistral": ("MistralConfig", dict(DECODER, sliding_window=5), "AutoModelForCausalLM"),
    "qwen2": ("Qwen2Config", dict(DECODER, tie_word_embeddings=True), "AutoModelForCausalLM"),
    "qwen3": ("Qwen3Config", dict(DECODER, head_dim=16), "AutoModelForCausalLM"),
    "gemma3_text": (
        "Gemma3TextConfig",
        dict(DECODER, num_hidden_layers=3, head_dim=16, sliding_window=5,
             layer_types=["sliding_attention", "full_attention", "sliding_attention"],
             query_pre_attn_scalar=24, final_logit_softcapping=30.0),
        "AutoModelForCausalLM",
    ),
}  # fmt: skip


def tokenizer_json(path: Path, vocab_size: int = VOCAB, *, cls_sep: bool = False) -> None:
    """A word-level tokenizer: "w0" .. "w{V-1}" split on white space ([CLS]/[SEP] added
    around the text for an encoder)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocab = {f"w{i}": i for i in range(vocab_size)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="w0"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    if cls_sep:
        tok.post_processor = processors.TemplateProcessing(
            single="w2 $A w3", special_tokens=[("w2", 2), ("w3", 3)]
        )
    tok.save(str(path))


def save(family: str, folder: Path, dtype: str = "float32", seed: int = 0, **overrides) -> Path:
    """A random model of ``family`` saved in ``dtype`` (float32, float16, bfloat16)."""
    import torch
    import transformers

    cls_name, kwargs, auto = FAMILIES[family]
    cfg = getattr(transformers, cls_name)(**{**kwargs, **overrides})
    torch.manual_seed(seed)
    model = getattr(transformers, auto).from_config(cfg)
    with torch.no_grad():  # biases and norms off their initial 0 and 1, so they count
        for name, p in model.named_parameters():
            if "bias" in name or "norm" in name.lower() or ".ln_" in name:
                p.add_(0.1 * torch.randn_like(p))
    model.to(getattr(torch, dtype)).save_pretrained(folder)
    tokenizer_json(folder / "tokenizer.json", cls_sep=auto == "AutoModel")
    return folder


@functools.cache
def reference(folder: Path):
    """The checkpoint in transformers: float32, eager attention, eval mode."""
    import torch
    import transformers

    family = json.loads((folder / "config.json").read_text())["model_type"]
    auto = getattr(transformers, FAMILIES[family][2])
    model = auto.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager")
    return model.eval()


def prompt(n: int = 12, seed: int = 1):
    """``n`` random ids above the tokenizer's special ones."""
    import numpy as np

    return np.random.default_rng(seed).integers(4, VOCAB, n)


def reference_run(folder: Path, ids):
    """transformers' attentions (L, H, N, N) and last logits (V,) or hidden states."""
    import torch

    with torch.no_grad():
        out = reference(folder)(torch.tensor(ids)[None], output_attentions=True,
                                output_hidden_states=True)  # fmt: skip
    attentions = torch.stack(out.attentions)[:, 0].numpy()  # (L, H, N, N)
    last = out.logits[0, -1].numpy() if hasattr(out, "logits") else None  # (V,)
    states = torch.stack(out.hidden_states)[:, 0].numpy()  # (L + 1, N, D)
    return attentions, last, states


def reference_generate(folder: Path, ids, steps: int):
    """transformers' greedy continuation (the new ids only)."""
    import torch

    with torch.no_grad():
        out = reference(folder).generate(
            torch.tensor(ids)[None], max_new_tokens=steps, do_sample=False, pad_token_id=0
        )
    return out[0, len(ids) :].numpy()


def check_decoder(model, folder: Path, steps: int = 20) -> None:
    """attnviz's decoder equals transformers on ``folder``: every head's attentions and
    the logits to 1e-4, and the greedy continuation token for token."""
    import numpy as np

    ids = prompt()
    run = model.run_ids(ids)
    attentions, logits, _ = reference_run(folder, ids)
    assert run.attentions.shape == attentions.shape
    assert run.attentions.dtype == np.float32 and run.logits.dtype == np.float32
    assert np.abs(run.attentions - attentions).max() <= 1e-4
    assert np.abs(run.logits - logits).max() <= 1e-4
    np.testing.assert_array_equal(
        model.generate(ids, steps), reference_generate(folder, ids, steps)
    )
