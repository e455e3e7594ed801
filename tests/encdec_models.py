"""Tiny encoder-decoder models made by transformers, for the tests of attnviz's T5, BART
and Marian (tests/models/test_t5.py, test_bart.py, test_encdec.py).

Each case is a tiny model (2-3 layers, width 32-48, vocabulary 96-160) made by
transformers from a fixed torch seed, its weights drawn again so that the attention is not
uniform. attnviz builds the same model from config.json and the tensors of
``model.safetensors`` (``save_pretrained``: the names and the tied weights as the file has
them) or from a state dict; every attention weight of every layer and head and the logits
must agree to :data:`TOL`.

torch and transformers are in requirements-dev.txt; in CI a missing one fails the tests,
elsewhere it skips them.
"""

from __future__ import annotations

import importlib
import json
import os

import numpy as np
import pytest

from attnviz.models import bart, t5

IN_CI = bool(os.environ.get("CI"))
TOL = 1e-4


def need(module: str):
    """Import ``module``; in CI a missing module fails the test, elsewhere it skips it."""
    if IN_CI:
        return importlib.import_module(module)
    return pytest.importorskip(module)


torch = need("torch")
transformers = need("transformers")
safetensors_numpy = need("safetensors.numpy")

SMALL = dict(vocab_size=128, d_model=32, max_position_embeddings=64)
BART_LIKE = dict(
    encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
    encoder_ffn_dim=64, decoder_ffn_dim=48,
)  # fmt: skip
T5_SMALL = dict(vocab_size=160, d_model=48, d_kv=8, d_ff=64, num_layers=2, num_heads=4)

#: name: (config class, its arguments, model class). Generation's own habits (forced
#: tokens, minimum lengths) are switched off in :func:`greedy_reference`.
CASES = {
    "t5": ("T5Config", dict(T5_SMALL, decoder_start_token_id=0), "T5ForConditionalGeneration"),
    "t5-v1.1": (
        "T5Config",
        dict(
            T5_SMALL,
            num_decoder_layers=3,
            feed_forward_proj="gated-gelu",
            tie_word_embeddings=False,
            relative_attention_num_buckets=8,
            relative_attention_max_distance=16,
            decoder_start_token_id=0,
        ),
        "T5ForConditionalGeneration",
    ),
    "bart": ("BartConfig", dict(SMALL, **BART_LIKE), "BartForConditionalGeneration"),
    "bart-scaled": (
        "BartConfig",
        dict(SMALL, **BART_LIKE, scale_embedding=True, activation_function="relu"),
        "BartForConditionalGeneration",
    ),
    "marian": (
        "MarianConfig",
        dict(
            SMALL,
            **BART_LIKE,
            scale_embedding=True,
            pad_token_id=127,
            decoder_start_token_id=127,
            eos_token_id=0,
            activation_function="swish",
        ),
        "MarianMTModel",
    ),
    "marian-own-vocab": (
        "MarianConfig",
        dict(
            SMALL,
            **BART_LIKE,
            scale_embedding=True,
            pad_token_id=95,
            decoder_vocab_size=96,
            decoder_start_token_id=95,
            eos_token_id=0,
            share_encoder_decoder_embeddings=False,
        ),
        "MarianMTModel",
    ),
}
MODULES = {"t5": t5, "bart": bart, "marian": bart}


def enliven(model) -> None:
    """Redraw every tensor so that heads differ: matrices N(0, 1/fan_in), norms around 1,
    biases (final_logits_bias too) around 0. Tied tensors are drawn once."""
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, t in model.state_dict(keep_vars=True).items():
            if "embed_positions" in name and "marian" in type(model).__name__.lower():
                continue  # Marian's sinusoids stay
            noise = torch.randn(t.shape, generator=g)
            if t.ndim == 2 and "final_logits_bias" not in name:
                t.copy_(noise * 1.2 / t.shape[1] ** 0.5)
            elif "norm" in name:
                t.copy_(1 + 0.2 * noise)
            else:
                t.copy_(0.3 * noise)


def make(case: str):
    """The transformers model of ``case`` (eval mode, eager attention), made from seed 0."""
    config_cls, kwargs, model_cls = CASES[case]
    torch.manual_seed(0)
    cfg = getattr(transformers, config_cls)(**kwargs, attn_implementation="eager")
    model = getattr(transformers, model_cls)(cfg).eval()
    enliven(model)
    return model


def saved(name: str, folder) -> tuple:
    """(name, the transformers model, config.json as a dict, the file's tensors): the model
    of case ``name`` through ``save_pretrained`` into ``folder``."""
    model = make(name)
    model.save_pretrained(folder)
    config = json.loads((folder / "config.json").read_text())
    weights = safetensors_numpy.load_file(folder / "model.safetensors")
    return name, model, config, weights


def state_weights(model) -> dict:
    """The state dict as float32 NumPy arrays (every tied name present)."""
    return {k: v.float().numpy() for k, v in model.state_dict().items()}


def round_weights(model, dtype: str) -> None:
    """Round every tensor of ``model`` to ``dtype`` (float16, bfloat16) and back, in place."""
    with torch.no_grad():
        for t in model.state_dict().values():
            t.copy_(t.to(getattr(torch, dtype)).float())


def ours(config: dict, weights: dict):
    module = MODULES[config["model_type"]]
    assert module.KIND == "encoder-decoder" and config["model_type"] in module.FAMILIES
    return module.build(config, weights, None)


def ids_for(model, n: int, seed: int) -> np.ndarray:
    """``n`` ids of the source vocabulary that are not a special token."""
    cfg = model.config
    vocab = min(cfg.vocab_size, getattr(cfg, "decoder_vocab_size", None) or cfg.vocab_size)
    return np.random.default_rng(seed).integers(3, vocab - 2, n)


def reference(model, src: np.ndarray, tgt: np.ndarray):
    """transformers' pass with every attention."""
    with torch.no_grad():
        return model(
            input_ids=torch.tensor(src[None]),
            decoder_input_ids=torch.tensor(tgt[None]),
            output_attentions=True,
        )


def assert_same(run, out) -> None:
    """Every layer and head of the three attentions, and the last logits, to TOL."""
    for ours_w, theirs in (
        (run.encoder_attentions, out.encoder_attentions),
        (run.attentions, out.decoder_attentions),
        (run.cross_attentions, out.cross_attentions),
    ):
        want = torch.stack(theirs)[:, 0].numpy()  # (L, H, ., .)
        assert ours_w.dtype == np.float32 and ours_w.shape == want.shape
        np.testing.assert_allclose(ours_w, want, atol=TOL, rtol=0)
    assert run.logits.dtype == np.float32
    np.testing.assert_allclose(run.logits, out.logits[0, -1].numpy(), atol=TOL, rtol=0)


def greedy_reference(model, src: np.ndarray, n: int):
    """transformers' greedy generation with its extras off, every step's logits and
    attentions kept: (new ids, logits (n, V), self (n, L, H, ·), cross (n, L, H, S)).

    transformers 5.23 sizes generate's cache by the encoder's depth (``num_layers``), so a
    T5 with more decoder layers fails there (IndexError); it generates without the cache."""
    cfg = model.config
    deeper = getattr(cfg, "num_decoder_layers", None) not in (None, getattr(cfg, "num_layers", 0))
    with torch.no_grad():
        out = model.generate(
            input_ids=torch.tensor(src[None]), do_sample=False, num_beams=1, max_new_tokens=n,
            min_length=0, forced_bos_token_id=None, forced_eos_token_id=None,
            no_repeat_ngram_size=0, repetition_penalty=1.0, bad_words_ids=None,
            use_cache=not deeper, return_dict_in_generate=True, output_logits=True,
            output_attentions=True,
        )  # fmt: skip

    def last_rows(step):  # the new token's row of each layer: (L, H, keys)
        return torch.stack([a[0, :, -1] for a in step]).numpy()

    return (
        out.sequences[0, 1:].tolist(),
        torch.cat(out.logits).numpy(),
        [last_rows(step) for step in out.decoder_attentions],
        [last_rows(step) for step in out.cross_attentions],
    )
