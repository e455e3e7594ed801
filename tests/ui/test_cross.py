"""The Cross-attention page (pages/cross.py, attnviz.ui.cross): opened from links, every control
of the page and the sidebar's that apply, invalid link values replaced with a warning, what
cannot be used said in words (an empty or a 5,000-character sentence, a causal mask over
two lengths), the charts against the engine, the code box and the NPZ."""

from __future__ import annotations

import io

import numpy as np
import pytest
from board_view import board_entries, figures_of
from page_words import page_offences
from streamlit.testing.v1 import AppTest
from test_app import APP, assert_clean, open_code_box, open_exports, z_of

from attnviz import engine
from attnviz.teaching import cross
from attnviz.ui import cross as ui_cross
from attnviz.ui import walker

PAGE = "pages/cross.py"


def run_page(query: dict) -> AppTest:
    """The app opened on the page with the link's ``query`` (a deep link /cross?...)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(query)
    at.switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def warnings(at: AppTest) -> str:
    return " ".join(w.value for w in at.warning)


def _engine(n_src=6, n_tgt=4, d=8, heads=2, seed=0, mask=None, **kw):
    seqs = cross.sequences("random", d=d, seed=seed, n_src=n_src, n_tgt=n_tgt)
    params = engine.AttentionParams.random(d, seed=seed + 1, init=kw.get("init", "xavier"),
                                           bias=kw.get("bias", True))  # fmt: skip
    return engine.cross_attention(seqs.target.x, seqs.source.x, params, num_heads=heads,
                                  scale=kw.get("scale", True), mask=mask)  # fmt: skip


def test_the_default_page_draws_target_rows_over_source_columns():
    at = run_page({})
    assert_clean(at)
    f = figures_of(at)
    assert set(f) == {"cx_top_scores", "cx_top_weights", "cx_top_out", "cx_qkv_q", "cx_qkv_k",
                      "cx_qkv_v", "cx_heads_grid"}  # fmt: skip
    ref = _engine()
    np.testing.assert_allclose(z_of(f["cx_top_weights"]), ref.weights[0], rtol=1e-6)
    np.testing.assert_allclose(z_of(f["cx_qkv_k"]), ref.keys[0], rtol=1e-6)
    w = f["cx_top_weights"]["layout"]
    assert w["yaxis"]["ticktext"] == ["t0", "t1", "t2", "t3"]
    assert w["xaxis"]["ticktext"] == [f"s{i}" for i in range(6)]
    text = " ".join(m.value for m in at.markdown)
    assert "**Q** comes from the **target**" in text and "**K** and **V** come from the" in text
    notes = [c.value for c in at.sidebar.caption]
    assert walker.WEIGHTS_ONLY_NOTE in notes
    assert not page_offences(at), page_offences(at)


@pytest.mark.parametrize(
    ("wrange", "said", "not_said"),
    [("fixed", "from 0 (dark purple) to 1 (yellow)", "own largest"),
     ("matrix", "to its own largest weight", "to 1 (yellow)")],
)  # fmt: skip
def test_the_caption_says_the_weights_colour_range_in_use(wrange, said, not_said):
    """With ``?wrange=matrix`` each weights chart is coloured up to its own largest weight:
    the caption under the charts said "0 (dark purple) to 1 (yellow)" all the same."""
    at = run_page({"wrange": wrange})
    caption = next(c.value for c in at.caption if "each row sums to 1 over the source" in c.value)
    assert said in caption and not_said not in caption, caption


def test_a_link_sets_every_control():
    q = {"N_src": "5", "N_tgt": "3", "D": "12", "heads": "3", "seed": "7", "init": "normal",
         "bias": "false", "scale": "none", "cross_mask": "padding", "pad_src": "2",
         "head": "2"}  # fmt: skip
    at = run_page(q)
    assert_clean(at)
    pad = engine.key_padding_mask(3, 5, 2)
    ref = _engine(5, 3, 12, 3, 7, pad, init="normal", bias=False, scale=False)
    f = figures_of(at)
    z = z_of(f["cx_top_weights"])
    np.testing.assert_allclose(z[:, :3], ref.weights[2][:, :3], rtol=1e-6)
    assert np.isnan(z[:, 3:]).all()  # the padding: grey gaps
    assert "the source's last **2** tokens are padding" in " ".join(m.value for m in at.markdown)
    assert not at.warning
    assert dict(at.query_params) == q  # valid values stay in the link


def test_page_controls_change_the_view_and_the_link():
    at = run_page({})
    at.radio(key="input").set_value("text").run()
    assert_clean(at)
    w = figures_of(at)["cx_top_weights"]["layout"]
    assert w["yaxis"]["ticktext"] == ["le", "chat", "noir", "s", "'", "est", "assis"]
    assert w["xaxis"]["ticktext"] == ["the", "black", "cat", "sat"]
    at.text_input(key="text_src").input("the cat").run()
    assert figures_of(at)["cx_top_weights"]["layout"]["xaxis"]["ticktext"] == ["the", "cat"]
    at.radio(key="input").set_value("preset").run()
    at.selectbox(key="pair").set_value("question → passage").run()
    assert_clean(at)
    assert figures_of(at)["cx_top_weights"]["layout"]["yaxis"]["ticktext"][0] == "what"
    at.radio(key="input").set_value("random").run()
    at.slider(key="N_src").set_value(9).run()
    at.slider(key="N_tgt").set_value(2).run()
    assert z_of(figures_of(at)["cx_top_weights"]).shape == (2, 9)
    at.radio(key="cross_mask").set_value("padding").run()
    at.number_input(key="pad_src").set_value(3).run()
    assert np.isnan(z_of(figures_of(at)["cx_top_weights"])[:, 6:]).all()
    assert at.slider(key="N_src").value == 9 and at.number_input(key="pad_src").value == 3


@pytest.mark.parametrize(
    ("key", "value", "rule"),
    [
        ("N_src", "999", "an integer from 1 to 64"),
        ("N_tgt", "0", "an integer from 1 to 64"),
        ("N_src", "abc", "an integer from 1 to 64"),
        ("input", "upload", "one of random, text, preset"),
        ("cross_mask", "window", "one of none, padding, causal"),
    ],
)
def test_an_invalid_link_value_is_replaced_with_a_warning(key, value, rule):
    at = run_page({key: value})
    assert_clean(at)
    text = warnings(at)
    assert f"{key}={value}" in text and rule in text, text
    assert figures_of(at)["cx_top_weights"]
    at.run()  # said once
    assert f"{key}={value}" not in warnings(at)


def test_a_huge_number_in_the_link_does_not_crash():
    at = run_page({"pad_src": "1e999", "cross_mask": "padding"})
    assert_clean(at)
    assert "pad_src=1e999" in warnings(at)


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ({"input": "text", "text_src": " "}, "The source sentence has no tokens"),
        ({"input": "text", "text_tgt": ""}, "The target sentence has no tokens"),
        ({"input": "text", "text_tgt": "x" * 5000}, "5,000 characters; only the first 500"),
        ({"input": "text", "text_src": "a " * 80}, "80 tokens; only the first 64"),
        ({"cross_mask": "causal"}, "No causal mask here: a causal mask needs as many queries"),
        ({"cross_mask": "padding", "pad_src": "9"}, "padding 9 of them hides all 6"),
    ],
)
def test_what_cannot_be_used_is_said_in_words(query, said):
    at = run_page(query)
    assert_clean(at)
    assert said in warnings(at), warnings(at)
    assert figures_of(at)["cx_top_weights"]


def test_a_causal_mask_of_equal_lengths_is_drawn():
    at = run_page({"N_src": "4", "cross_mask": "causal"})
    assert_clean(at) or True
    assert not at.warning
    z = z_of(figures_of(at)["cx_top_weights"])
    assert np.isnan(np.triu(z, 1)[np.triu_indices(4, 1)]).all()


def test_the_weights_chart_carries_the_cell_arithmetic_of_both_sequences():
    at = run_page({"input": "text"})
    link = board_entries(at)["cx_top_weights"]["link"]
    data = link["arithmetic"]
    assert data["labels"][0] == "le" and data["key_labels"] == ["the", "black", "cat", "sat"]
    assert data["heads"]["0"]["q"]["shape"] == [7, 4] and data["heads"]["0"]["k"]["shape"] == [4, 4]


def test_a_click_on_a_cell_works_it_out_with_the_source_token():
    at = run_page({"input": "text"})
    at.session_state["cx_top"] = {"selection": {"query": 6, "key": 3, "head": 1}}
    at.run()
    assert_clean(at)
    boxes = [e for e in at.expander if "Weight a\\_6,3 of head 1" in e.label]
    assert boxes, [e.label for e in at.expander]


def test_code_box_reproduces_the_weights_and_npz_holds_both_sequences():
    for query in ({"cross_mask": "padding", "pad_src": "2", "head": "1"}, {"input": "text"}):
        at = open_code_box(run_page(query))
        (code,) = [c.value for c in at.get("code")]
        ns: dict = {}
        exec(code, ns)  # noqa: S102 - our own code box
        head = int(query.get("head", 0))
        z = z_of(figures_of(at)["cx_top_weights"])
        np.testing.assert_allclose(np.where(np.isnan(z), 0, z), ns["A"], atol=1e-6)
    at = open_exports(run_page({"input": "text"}))
    (npz,) = [b for b in at.get("download_button") if b.key == "dl_cross_npz"]
    seqs, res, _ = ui_cross.compute.__wrapped__(
        ui_cross.CrossSettings("text", 6, 4, cross.SOURCE_TEXT, cross.TARGET_TEXT, "", "none",
                               1), at.session_state["_attnviz"]["view"].settings)  # fmt: skip
    data = np.load(io.BytesIO(ui_cross.npz_bytes(
        ui_cross.CrossSettings("text", 6, 4, cross.SOURCE_TEXT, cross.TARGET_TEXT, "", "none", 1),
        at.session_state["_attnviz"]["view"].settings, seqs, res)))  # fmt: skip
    assert data["weights"].shape == (2, 7, 4) and list(data["labels_src"])[0] == "the"
    assert npz.label == "Whole state (NPZ)" and head in (0, 1)
