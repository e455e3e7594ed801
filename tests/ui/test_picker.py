"""The model picker of the two real-model pages (AppTest, inside the whole app): a tiny
encoder and a tiny decoder in an ``ATTNVIZ_MODELS`` folder are listed, picked by
``?model=`` and drawn (grid, one head, next token, Heads section); an unknown name or a
path in the link is warned about and never read; a too-large model is listed, not loaded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from board_view import figures_of

from attnviz import models
from attnviz.models import catalog
from tests.models.test_smollm import _z, need

REPO = Path(__file__).resolve().parents[2]
PAGES = {"encoder": ("pages/real_model.py", "rm"), "decoder": ("pages/decoder.py", "dec")}
NAMES = {"encoder": "tiny-bert", "decoder": "tiny-llama"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A folder of models: a tiny BERT and a tiny Llama (built once per module)."""
    need("transformers")
    from tests.models import tiny

    root = tmp_path_factory.mktemp("found-models")
    tiny.save("bert", root / NAMES["encoder"])
    tiny.save("llama", root / NAMES["decoder"])
    from tests import encdec_models

    encdec_models.saved("t5", root / "tiny-t5")
    tiny.tokenizer_json(root / "tiny-t5" / "tokenizer.json", vocab_size=160)
    return root


@pytest.fixture
def env(folder, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_MODELS", str(folder))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))  # this machine's cache out
    monkeypatch.delenv("ATTNVIZ_MODEL_MAX_GB", raising=False)
    return folder


def _run(path: str, query: dict[str, str]):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    return at.switch_page(path).run()


@pytest.mark.parametrize("kind", list(PAGES))
def test_a_found_model_is_picked_by_the_link_and_drawn(env, kind):
    path, prefix = PAGES[kind]
    at = _run(path, {"model": NAMES[kind], f"{prefix}_text": "w5 w9 w5 w9 w7"})
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error and not at.warning, [w.value for w in at.warning]
    picker = at.selectbox(key="model")
    assert picker.value == NAMES[kind]
    assert any(NAMES[kind] in o and "parameters" in o for o in picker.options)
    assert not any("tiny-" in o for o in picker.options if NAMES[kind] not in o)  # one kind
    figs = figures_of(at)
    want = {f"{prefix}_grid_fig", f"{prefix}_head_fig", f"{prefix}_heads_scores"}
    if kind == "decoder":
        want |= {"dec_next_fig", "dec_newest_fig"}
    assert want <= set(figs)
    model = models.load(env / NAMES[kind])
    _, ids = model.tokenize("w5 w9 w5 w9 w7")
    w = model.run_ids(ids).attentions  # (L, H, N, N)
    z = _z(figs[f"{prefix}_head_fig"]["data"][0])
    seen = ~np.isnan(z)  # a decoder's future triangle is drawn masked
    np.testing.assert_allclose(z[seen], w[0, 0][seen], atol=1e-6)
    assert seen.sum() == (
        w[0, 0].size if kind == "encoder" else w.shape[-1] * (w.shape[-1] + 1) // 2
    )
    # the head sliders follow the model, the link's head moves the big head
    at.slider(f"{prefix}_H").set_value(w.shape[1] - 1).run()
    assert not at.exception
    z = _z(figures_of(at)[f"{prefix}_head_fig"]["data"][0])
    np.testing.assert_allclose(z[seen], w[0, -1][seen], atol=1e-6)


@pytest.mark.parametrize("value", ["no-such-model", "../../etc", "/etc", "tiny-llama"])
def test_a_link_to_a_model_not_listed_is_warned_and_nothing_is_read(env, monkeypatch, value):
    """On the encoder page: an unknown name, a path, a decoder's name (not an encoder)."""
    loaded, opened = [], []
    real_load, real_open = models.load, catalog.open_folder
    monkeypatch.setattr(models, "load", lambda t: loaded.append(t) or real_load(t))

    def spy(folder, root=None):
        opened.append(Path(folder))
        return real_open(folder, root)

    monkeypatch.setattr(catalog, "open_folder", spy)
    catalog_cache_clear()
    at = _run("pages/real_model.py", {"model": value})
    assert not at.exception, [e.value for e in at.exception]
    warned = [w.value for w in at.warning]
    assert any(value in w and "not an encoder found" in w for w in warned), warned
    assert at.selectbox(key="model").value == ""  # the bundled model
    assert at.query_params.get("model") in (None, [], "")
    assert not loaded  # nothing loaded from the link
    assert all(p.resolve().is_relative_to(env.resolve()) for p in opened), opened


def test_a_too_large_model_is_listed_with_its_size_and_not_loaded(env, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_MODEL_MAX_GB", "0.000001")  # 1 kB: every model too large
    catalog_cache_clear()
    loaded = []
    monkeypatch.setattr(models, "load", lambda t: loaded.append(t))
    at = _run("pages/decoder.py", {"model": "tiny-llama"})
    assert not at.exception, [e.value for e in at.exception]
    assert any("too large" in o for o in at.selectbox(key="model").options)
    assert any("too large to load" in w.value for w in at.warning)
    assert not loaded
    assert "dec_grid_fig" not in figures_of(at)


def catalog_cache_clear() -> None:
    """Forget the picker's cached list (it is read again after a minute anyway)."""
    from attnviz.ui import picker

    picker._found.clear()


def test_picking_in_the_list_puts_the_name_in_the_link(env):
    at = _run("pages/real_model.py", {})
    assert at.selectbox(key="model").value == ""
    at.selectbox(key="model").set_value(NAMES["encoder"]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params.get("model") in (NAMES["encoder"], [NAMES["encoder"]])
    assert "rm_grid_fig" in figures_of(at)
    at.selectbox(key="model").set_value("").run()  # back to the bundled model
    assert "model" not in at.query_params


def test_the_cross_page_draws_a_found_encoder_decoders_cross_attention(env):
    query = {"cx_model": "tiny-t5", "cxm_src": "w5 w9 w7 w5", "cxm_tgt": "w4 w6"}
    at = _run("pages/cross.py", query)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error and not at.warning, [w.value for w in at.warning]
    assert at.selectbox(key="cx_model").value == "tiny-t5"
    figs = figures_of(at)
    model = models.load(env / "tiny-t5")
    _, src = model.tokenize("w5 w9 w7 w5")
    w = model.run_ids(src, [model.decoder_start_token_id, 4, 6]).cross_attentions  # (L, H, 3, S)
    top = [k for k in figs if k.startswith("cxm_top")]
    assert top and "cxm_grid_grid" in figs, sorted(figs)
    z = _z(figs[top[0]]["data"][0])
    np.testing.assert_allclose(z, w[0, 0], atol=1e-6)
    at.slider("cxm_L").set_value(1).run()
    z = _z(figures_of(at)[top[0]]["data"][0])
    np.testing.assert_allclose(z, w[1, 0], atol=1e-6)
    # an unknown name in the link: warned, nothing drawn for it
    at = _run("pages/cross.py", {"cx_model": "../t5"})
    assert not at.exception
    assert any("../t5" in w.value for w in at.warning)
    assert not [k for k in figures_of(at) if k.startswith("cxm_")]


def test_a_wrong_size_limit_is_said_not_raised(env, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_MODEL_MAX_GB", "lots")
    at = _run("pages/real_model.py", {"model": "tiny-bert"})
    assert not at.exception, [e.value for e in at.exception]
    assert any("Cannot list the models" in w.value for w in at.warning)


@pytest.mark.parametrize("kind", list(PAGES))
def test_the_title_names_the_picked_model_and_a_clicked_cell_is_worked_out(env, kind):
    """The page's title and intro name the found model (name, family, layers × heads),
    not the bundled one; a click on the head's weights (the board's state) shows that
    weight's arithmetic, from the layer's queries and keys."""
    path, prefix = PAGES[kind]
    text = "w5 w9 w5 w9 w7"
    at = _run(path, {"model": NAMES[kind], f"{prefix}_text": text, f"{prefix}_layer": "2"})
    assert not at.exception, [e.value for e in at.exception]
    assert NAMES[kind] in at.title[0].value
    assert "MiniLM" not in at.title[0].value and "SmolLM2" not in at.title[0].value
    intro = at.markdown[0].value
    family = "bert" if kind == "encoder" else "llama"
    assert f"a {family} {kind} found" in intro and "2 layers × 4 heads" in intro, intro
    assert ("sharing 2 key/value heads" in intro) == (kind == "decoder")
    board = f"board_{prefix}_head_fig"
    at.session_state[board] = {"selection": {"query": 3, "key": 1, "head": 2, "chart": "weights"}}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    model = models.load(env / NAMES[kind])
    _, ids = model.tokenize(text)
    w = model.run_ids(ids).attentions[1, 2, 3, 1]  # layer 2, head 3, query 3, key 1
    words = " ".join(m.value for m in at.markdown) + " ".join(e.label for e in at.expander)
    assert "a\\_3,1" in words and "of head 2" in words, words[-800:]
    r = model.attention_result(ids, 1)
    assert r.weights[2, 3, 1] == pytest.approx(w, abs=1e-7)
    # the exports, once their box is open: every head (long CSV, NPZ) and the head's grid
    at.session_state[f"{prefix}_export_box"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    labels = [d.proto.label for d in at.get("download_button")]
    n = ids.size
    assert labels == [
        f"Every head, long CSV ({2 * 4 * n * n:,} rows)",
        f"Layer 1, head 0 ({n}×{n}) CSV",  # the old 1-based link key, migrated
        "Every head, tokens, ids (NPZ)",
    ], labels


def test_the_exports_hold_every_layer_and_head_with_the_tokens(env):
    import io

    import pandas as pd

    from attnviz.ui import model_exports

    model = models.load(env / "tiny-llama")
    _, ids = model.tokenize("w5 w9 w5 w7")
    run = model.run_ids(ids)
    df = pd.read_csv(io.StringIO(model_exports.long_csv(run.attentions, list(run.tokens)).decode()))
    assert list(df.columns) == ["layer", "head", "query", "query_token", "key", "key_token",
                                "weight"]  # fmt: skip
    assert len(df) == run.attentions.size
    row = df[(df.layer == 1) & (df["head"] == 2) & (df["query"] == 3) & (df.key == 1)]
    assert row.weight.item() == pytest.approx(float(run.attentions[1, 2, 3, 1]), abs=1e-7)
    assert (row.query_token.item(), row.key_token.item()) == ("w7", "w9")
    entry = next(e for e in models.find([env]) if e.name == "tiny-llama")
    with np.load(io.BytesIO(model_exports.npz(entry, run))) as f:
        np.testing.assert_array_equal(f["attentions"], run.attentions)
        assert list(f["tokens"]) == list(run.tokens) and "tiny-llama" in str(f["model_json"])
        np.testing.assert_array_equal(f["logits"], run.logits)


def test_switching_pages_with_a_decoders_name_in_the_link_warns(env):
    """From the decoder page with ``?model=tiny-llama`` to the encoder page: the name
    goes with the link (Streamlit keeps the query string across a page switch) and the
    encoder page says it is not an encoder, instead of dropping it unsaid."""
    at = _run("pages/decoder.py", {"model": "tiny-llama", "dec_text": "w5 w9"})
    assert at.selectbox(key="model").value == "tiny-llama"
    at.switch_page("pages/real_model.py").run()
    assert not at.exception, [e.value for e in at.exception]
    warned = [w.value for w in at.warning]
    assert any("tiny-llama" in w and "not an encoder found" in w for w in warned), warned
    assert at.selectbox(key="model").value == ""  # the bundled model, and the link says so
    assert "model" not in at.query_params


def test_a_found_decoder_in_the_presenter_view_is_one_view_a_slide(env):
    """Every head, one head, the next token, generation step by step: each alone on its
    slide (the generation's rows were a chart far below the screen on the long page)."""
    path, prefix = PAGES["decoder"]
    slides = [
        {"dec_grid_fig"},
        {"dec_head_fig"},
        {"dec_next_fig", "dec_newest_fig"},
        {"dec_gen_rows_fig"},
    ]
    for step, want in enumerate(slides, start=1):
        query = {"model": NAMES["decoder"], f"{prefix}_text": "w5 w9 w5 w9 w7"}
        at = _run(path, {**query, "present": "1", "step": str(step)})
        assert not at.exception, [e.value for e in at.exception]
        assert set(figures_of(at)) == want, step
    assert any("Step 8:" in m.value for m in at.markdown)  # the generation's last step
