"""The encoder-decoder families (T5, BART, Marian) in NumPy against transformers.

Each case is a tiny model (2 layers, width 32-48, vocabulary 96-160) made by transformers
from a fixed torch seed, its weights drawn again so that the attention is not uniform.
attnviz builds the same model from config.json and the tensors of ``model.safetensors``
(``save_pretrained``: the names and the tied weights as the file has them), or from the
state dict rounded to float16 or bfloat16; every attention weight of every layer and head
and the logits must agree to 1e-4, greedy generation token for token.

torch and transformers are in requirements-dev.txt; in CI a missing one fails the tests,
elsewhere it skips them.
"""

from __future__ import annotations

import importlib
import json
import os

import numpy as np
import pytest

from attnviz.models import bart, encdec, t5

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


@pytest.fixture(scope="module", params=list(CASES))
def case(request, tmp_path_factory):
    """(name, the transformers model, config.json as a dict, the file's tensors)."""
    model = make(request.param)
    folder = tmp_path_factory.mktemp(request.param)
    model.save_pretrained(folder)
    config = json.loads((folder / "config.json").read_text())
    weights = safetensors_numpy.load_file(folder / "model.safetensors")
    return request.param, model, config, weights


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


# --------------------------------------------------------------------------- the passes


def test_every_attention_and_the_logits_equal_transformers(case):
    name, model, config, weights = case
    m = ours(config, weights)
    assert (m.family, m.kind, m.config) == (config["model_type"], "encoder-decoder", config)
    src, tgt = ids_for(model, 11, 1), ids_for(model, 7, 2)
    tgt[0] = m.decoder_start_token_id
    run = m.run_ids(src, tgt)
    assert_same(run, reference(model, src, tgt))
    assert np.all(np.triu(run.attentions, k=1) == 0)  # causal: zero above the diagonal


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["t5-v1.1", "bart", "marian"])
def test_rounded_weights_equal_transformers_on_the_same_weights(name, dtype):
    """Weights rounded to half precision in torch, then both run in float32."""
    model = make(name)
    with torch.no_grad():
        for t in model.state_dict().values():
            t.copy_(t.to(getattr(torch, dtype)).float())
    weights = {k: v.numpy() for k, v in model.state_dict().items()}
    config = model.config.to_dict()
    src, tgt = ids_for(model, 9, 3), ids_for(model, 6, 4)
    assert_same(ours(config, weights).run_ids(src, tgt), reference(model, src, tgt))


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


# --------------------------------------------------------------------------- generation


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


def test_greedy_generation_equals_transformers_for_20_steps(case):
    """The new ids token for token, and at each step the logits and the new token's
    attention over the cache (self) and the source (cross), every layer and head."""
    name, model, config, weights = case
    m = ours(config, weights)
    src = ids_for(model, 8, 6)
    ids, logits, self_rows, cross_rows = greedy_reference(model, src, 20)
    steps = list(m.generate_steps(src, 20))
    assert [s.next_id for s in steps] == ids == m.generate(src, 20)
    for s, want_logits, want_self, want_cross in zip(
        steps, logits, self_rows, cross_rows, strict=True
    ):
        np.testing.assert_allclose(s.logits, want_logits, atol=TOL, rtol=0)
        np.testing.assert_allclose(s.self_attentions, want_self, atol=TOL, rtol=0)
        np.testing.assert_allclose(s.cross_attentions, want_cross, atol=TOL, rtol=0)
    assert m.generate(src, 0) == []


def test_generation_stops_at_eos(case):
    """eos is the last new id (transformers keeps it too)."""
    name, model, config, weights = case
    m = ours(config, weights)
    src = ids_for(model, 8, 6)
    first = m.generate(src, 1)[0]
    m.eos_token_ids = frozenset({first})
    assert m.generate(src, 20) == [first]
    assert len(list(m.generate_steps(src, 20))) == 1


def test_each_step_sees_what_the_whole_pass_sees(case):
    """Step by step with the cache: each step's row is the full pass's last row."""
    name, model, config, weights = case
    m = ours(config, weights)
    src = ids_for(model, 8, 7)
    steps = list(m.generate_steps(src, 6, temperature=1.0, seed=2))
    tgt = [m.decoder_start_token_id] + [s.next_id for s in steps]
    for n, step in enumerate(steps, start=1):
        run = m.run_ids(src, tgt[:n])
        assert step.cache_length == n and step.position == n - 1 and step.input_id == tgt[n - 1]
        np.testing.assert_allclose(step.self_attentions, run.attentions[:, :, -1], atol=TOL)
        np.testing.assert_allclose(step.cross_attentions, run.cross_attentions[:, :, -1], atol=TOL)
        np.testing.assert_allclose(step.logits, run.logits, atol=TOL)
    ids, p = steps[0].top(5)
    assert ids.shape == (5,) and np.all(np.diff(p) <= 0) and ids[0] == np.argmax(steps[0].logits)


def test_sampling_is_reproducible_from_its_seed(case):
    name, model, config, weights = case
    m = ours(config, weights)
    src = ids_for(model, 8, 8)
    opts = dict(temperature=1.5, top_k=40, top_p=0.95)
    draws = [tuple(m.generate(src, 12, seed=s, **opts)) for s in (0, 0, 1, 2, 3)]
    assert draws[0] == draws[1]
    assert len(set(draws)) > 2  # other seeds, other text
    assert all(0 <= i < m.tgt_vocab for d in draws for i in d)


def test_next_token_cuts_to_top_k_and_top_p():
    rng = np.random.default_rng(0)
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05], dtype=np.float32))
    assert encdec.next_token(logits, rng) == 0
    drawn = {encdec.next_token(logits, rng, 1.0, top_k=2) for _ in range(200)}
    assert drawn == {0, 1}
    drawn = {encdec.next_token(logits, rng, 1.0, top_p=0.7) for _ in range(200)}
    assert drawn == {0, 1}  # 0.5 + 0.3 reach 0.7
    assert {encdec.next_token(logits, rng, 1.0, top_p=0.01) for _ in range(50)} == {0}
    bad_args = [
        dict(temperature=-1.0),
        dict(temperature=1.0, top_k=0),
        dict(temperature=1.0, top_p=0),
    ]
    for bad in bad_args:
        with pytest.raises(ValueError):
            encdec.next_token(logits, rng, **bad)


# --------------------------------------------------------------------------- bad input


FC1 = {
    "t5": "encoder.block.0.layer.1.DenseReluDense.wi.weight",
    "bart": "model.encoder.layers.0.fc1.weight",
}


@pytest.mark.parametrize("name", ["t5", "bart"])
def test_a_tensor_of_the_wrong_width_is_named_with_both_shapes(name):
    model = make(name)
    weights = {k: v.numpy() for k, v in model.state_dict().items()}
    config = model.config.to_dict()
    tensor = FC1[name]
    rows, cols = weights[tensor].shape
    weights[tensor] = np.zeros((rows, cols + 1), np.float32)
    with pytest.raises(ValueError, match=rf"{tensor}.*\({rows}, {cols + 1}\).*\({rows}, {cols}\)"):
        ours(config, weights)
    config = dict(config, d_model=config["d_model"] + 8)  # the config wrong instead
    with pytest.raises(ValueError, match=r"has shape .* but the config gives it"):
        ours(config, {k: v.numpy() for k, v in model.state_dict().items()})


@pytest.mark.parametrize("name", ["t5", "bart"])
def test_a_missing_tensor_is_named(name):
    model = make(name)
    weights = {k: v.numpy() for k, v in model.state_dict().items()}
    del weights[FC1[name]]
    with pytest.raises(ValueError, match=rf"{FC1[name]}.* is missing"):
        ours(model.config.to_dict(), weights)


def test_ids_outside_the_vocabulary_and_no_tokenizer(case):
    name, model, config, weights = case
    m = ours(config, weights)
    src = ids_for(model, 5, 9)
    for bad in ([m.src_vocab], [-1], []):
        with pytest.raises(ValueError, match="source ids"):
            m.run_ids(np.array(bad, dtype=np.int64), [m.decoder_start_token_id])
        with pytest.raises(ValueError, match="source ids"):
            m.generate(np.array(bad, dtype=np.int64), 3)
    with pytest.raises(ValueError, match="target ids"):
        m.run_ids(src, [m.tgt_vocab])
    with pytest.raises(ValueError, match="tokenizer.json"):
        m.tokenize("hello")


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
    weights = {k: v.numpy() for k, v in model.state_dict().items()}
    m = t5.build(model.config.to_dict(), weights, path)
    tokens, ids = m.tokenize("the cat sat")
    assert tokens == ["the", "cat", "<unk>", "</s>"] and ids.tolist() == [3, 4, 2, 1]
    with pytest.raises(ValueError, match="empty"):
        m.tokenize("  ")
