"""attnviz/models/layers.py, the parts both real models use, on small arrays (no weights
needed; the models' own tests check them end to end against transformers)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from attnviz import engine
from attnviz.models import layers, minilm, smollm


def test_the_models_reexport_the_shared_names():
    assert minilm.erf is layers.erf and minilm.gelu is layers.gelu
    assert minilm.layer_norm is layers.layer_norm and smollm.rms_norm is layers.rms_norm
    assert smollm.silu is layers.silu
    assert minilm.ModelNotInstalledError is smollm.ModelNotInstalledError
    assert issubclass(layers.ModelNotInstalledError, ImportError)
    assert minilm.INSTALL_COMMAND == smollm.INSTALL_COMMAND == layers.INSTALL_COMMAND


def test_norms_match_their_formulas():
    x = np.random.default_rng(0).standard_normal((3, 8))
    w, b = np.linspace(0.5, 2, 8), np.linspace(-1, 1, 8)
    ln = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(layers.layer_norm(x, w, b, 1e-5), ln, rtol=1e-12)
    rms = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(layers.rms_norm(x, w, 1e-6), rms, rtol=1e-12)


def test_activations():
    x = np.array([-800.0, -2.0, 0.0, 1.5, 800.0])
    np.testing.assert_allclose(
        layers.silu(x), [0.0, -2 / (1 + math.e**2), 0, 1.5 / (1 + math.exp(-1.5)), 800]
    )
    assert layers.gelu(np.float32([1.0])).dtype == np.float32
    assert abs(layers.gelu([1.0])[0] - 0.5 * (1 + math.erf(1 / math.sqrt(2)))) < 1e-15
    assert layers.erf([-np.inf, np.nan, 0.3])[[0, 2]].tolist() == [
        -1.0,
        pytest.approx(math.erf(0.3), abs=1e-15),
    ]
    gu = np.arange(8.0).reshape(2, 4)  # (N, 2I): gate | up
    np.testing.assert_array_equal(layers.swiglu(gu), layers.silu(gu[:, :2]) * gu[:, 2:])


def test_feed_forward_is_act_of_the_first_layer_then_the_second():
    rng = np.random.default_rng(1)
    x, w1, b1, w2, b2 = (rng.standard_normal(s) for s in ((4, 6), (6, 10), (10,), (10, 6), (6,)))
    out = layers.feed_forward(x, w1, w2, np.tanh, b1, b2)
    np.testing.assert_array_equal(out, np.tanh(x @ w1 + b1) @ w2 + b2)
    np.testing.assert_array_equal(layers.feed_forward(x, w1, w2, np.tanh), np.tanh(x @ w1) @ w2)


def test_attention_of_per_head_arrays_is_the_engines_multi_and_grouped_query():
    rng = np.random.default_rng(2)
    qh, kh, vh = (
        rng.standard_normal((4, 5, 3)),
        rng.standard_normal((2, 5, 3)),
        rng.standard_normal((2, 5, 3)),
    )
    mask = engine.causal_mask(5)
    r = layers.attention(qh, kh, vh, mask=mask)
    np.testing.assert_array_equal(r.keys, engine.repeat_kv(kh, 2))  # heads 0, 1 share kv 0
    w, _ = engine.scaled_dot_product_attention(
        qh, engine.repeat_kv(kh, 2), engine.repeat_kv(vh, 2), mask=mask
    )
    np.testing.assert_allclose(r.weights, w, atol=1e-12)
    full = layers.attention(qh, qh, qh)  # G = H: multi-head attention
    mha = engine.attention_from_qkv(*(engine.merge_heads(qh),) * 3, num_heads=4)
    np.testing.assert_array_equal(full.output, mha.output)


def test_weights_helpers():
    get = layers.tensor_reader({"a": np.ones((2, 3))}, Path("m.safetensors"), lambda a: a * 2)
    np.testing.assert_array_equal(get("a"), 2 * np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"m.safetensors has no tensor 'b'"):
        get("b")
    w = np.arange(6.0).reshape(2, 3)
    t = layers.row_layout(w)
    assert t.shape == (3, 2) and t.flags.c_contiguous and np.array_equal(t, w.T)
    table = np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(layers.embedding_lookup(table, np.array([3, 0])), table[[3, 0]])
    with pytest.raises(ValueError, match=r"token ids must be in 0..3"):
        layers.embedding_lookup(table, np.array([4]))


def test_load_once_keeps_one_result_per_argument():
    calls = []

    @layers.load_once(maxsize=2)
    def load(path):
        calls.append(path)
        return object()

    assert load("a") is load("a") and load("b") is not load("a") and calls == ["a", "b"]
    load.cache_clear()
    load("a")
    assert calls == ["a", "b", "a"]


def test_text_checks_say_what_was_expected():
    assert layers.check_text("a cat", "prompt") == "a cat"
    with pytest.raises(ValueError, match="must be a string, got int"):
        layers.check_text(3, "prompt")
    with pytest.raises(ValueError, match="The text is empty: type a sentence."):
        layers.check_text("  ", "sentence")
    layers.check_token_count(512, 512, reads="X reads")
    with pytest.raises(
        ValueError, match=r"513 tokens \(all\); X reads at most 512 tokens. Shorten it by 1"
    ):
        layers.check_token_count(513, 512, reads="X reads", counted=" (all)")


def test_errors_name_the_install_command():
    err = layers.not_installed("Model", "pkg")
    assert isinstance(err, ImportError) and "pkg" in str(err) and layers.INSTALL_COMMAND in str(err)
    assert "reinstall the weights with: " + layers.INSTALL_COMMAND in str(
        layers.missing_file(Path("f"))
    )
    err = layers.missing_libraries("decoder", ["tokenizers"], ImportError("no"))
    assert str(err) == (
        "The decoder page needs tokenizers (no). Install it with: pip install -r requirements.txt"
    )


def test_model_shapes_read_the_config():
    cfg = minilm.MiniLMConfig(
        vocab_size=10,
        hidden_size=12,
        num_hidden_layers=2,
        num_attention_heads=3,
        intermediate_size=8,
    )

    class Model(layers.ModelShapes):
        config = cfg

    m = Model()
    assert (m.num_layers, m.num_heads, m.hidden_size, m.head_dim) == (2, 3, 12, 4)
    assert cfg.head_size == 4 and layers.TransformerConfig.shared_fields()[0] == "vocab_size"


def test_a_bert_config_without_the_shared_fields_is_refused(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12}')
    with pytest.raises(ValueError, match=r"needs \['vocab_size', 'intermediate_size'\]"):
        minilm.MiniLMConfig.from_json(path)
