"""Generation step by step on the decoder page, for a tiny Llama found in an
``ATTNVIZ_MODELS`` folder (AppTest): the settings from the link, each step's new row of
every head, the KV cache size and the top 5, equal to ``model.generate_steps``."""

from __future__ import annotations

import numpy as np
from board_view import figures_of

from attnviz import models
from attnviz.ui.text import md_text
from tests.models.test_smollm import _z
from tests.ui.test_picker import _run, env, folder  # noqa: F401 (fixtures)

TEXT = "w5 w9 w5 w9 w7"


def test_steps_follow_generate_steps(env):  # noqa: F811
    query = {"model": "tiny-llama", "dec_text": TEXT, "dec_gen_n": "6", "dec_gen_temp": "0.8",
             "dec_gen_topk": "20", "dec_gen_topp": "0.9", "dec_gen_seed": "3"}  # fmt: skip
    at = _run("pages/decoder.py", query)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error and not at.warning, [w.value for w in at.warning]
    model = models.load(env / "tiny-llama")
    _, ids = model.tokenize(TEXT)
    steps = list(model.generate_steps(ids, 6, temperature=0.8, top_k=20, top_p=0.9, seed=3))
    figs = figures_of(at)
    assert {"dec_gen_rows_fig", "dec_gen_layers_fig", "dec_gen_next_fig"} <= set(figs)
    last = steps[-1]
    np.testing.assert_allclose(
        _z(figs["dec_gen_rows_fig"]["data"][0]), last.attentions[0], atol=1e-6
    )
    words = " ".join(m.value for m in at.markdown)
    assert f"**{last.cache_tokens}**" in words and "Sampled" in words
    at.slider("dec_gen_step").set_value(2).run()
    assert not at.exception
    figs = figures_of(at)
    z = _z(figs["dec_gen_layers_fig"]["data"][0])  # head 1 of every layer, step 2
    np.testing.assert_allclose(z, steps[1].attentions[:, 0], atol=1e-6)
    probs = [p for _, p in steps[1].top(5)]
    np.testing.assert_allclose(
        _z({"z": figs["dec_gen_next_fig"]["data"][0]["x"]}), probs, atol=1e-6
    )


def test_an_encoder_decoder_generates_step_by_step_on_the_cross_page(env):  # noqa: F811
    """The Cross page's real encoder-decoder: from the link's settings, each step's new
    token's cross-attention row over the source and its self-attention row, per layer and
    head, the KV cache's size and the top 5, equal to ``model.generate_steps``."""
    src_text = "w5 w9 w7 w5"
    query = {"cx_model": "tiny-t5", "cxm_src": src_text, "cxm_gen_n": "5",
             "cxm_gen_temp": "0.9", "cxm_gen_topk": "40", "cxm_gen_seed": "7",
             "cxm_layer": "2", "cxm_head": "3"}  # fmt: skip
    at = _run("pages/cross.py", query)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error and not at.warning, [w.value for w in at.warning]
    model = models.load(env / "tiny-t5")
    _, src = model.tokenize(src_text)
    steps = list(model.generate_steps(src, 5, temperature=0.9, top_k=40, seed=7))
    figs = figures_of(at)
    want = {"cxm_gen_rows_fig", "cxm_gen_cross_fig", "cxm_gen_layers_fig",
            "cxm_gen_cross_layers_fig", "cxm_gen_next_fig"}  # fmt: skip
    assert want <= set(figs), sorted(figs)
    last = steps[-1]
    z = _z(figs["cxm_gen_cross_fig"]["data"][0])  # layer 2, every head, over the source
    np.testing.assert_allclose(z, last.cross_attentions[1], atol=1e-6)
    assert z.shape == (model.config["num_heads"], src.size)
    words = " ".join(m.value for m in at.markdown)
    assert f"**{last.cache_length}**" in words and "Sampled" in words
    assert "computed once" in words
    # the self-attention cache grows by one token's keys and values a step, the cross one not
    assert steps[1].cache_bytes == 2 * steps[0].cache_bytes > 0
    assert steps[0].cross_bytes == steps[-1].cross_bytes > 0
    at.slider("cxm_gen_step").set_value(2).run()
    assert not at.exception
    figs = figures_of(at)
    z = _z(figs["cxm_gen_layers_fig"]["data"][0])  # head 3 of every layer, step 2, self
    np.testing.assert_allclose(z, steps[1].self_attentions[:, 2], atol=1e-6)
    assert z.shape[1] == 2  # the start token and the first new one
    z = _z(figs["cxm_gen_cross_layers_fig"]["data"][0])
    np.testing.assert_allclose(z, steps[1].cross_attentions[:, 2], atol=1e-6)
    ids, probs = steps[1].top(5)
    np.testing.assert_allclose(
        _z({"z": figs["cxm_gen_next_fig"]["data"][0]["x"]}), probs, atol=1e-6
    )
    # greedy is the default: the same tokens as model.generate
    at = _run("pages/cross.py", {"cx_model": "tiny-t5", "cxm_src": src_text, "cxm_gen_n": "6"})
    words = " ".join(m.value for m in at.markdown)
    greedy = model.generate(src, 6)
    assert "Greedy" in words
    text = " · ".join(md_text(model.tokenizer.id_to_token(i)) for i in greedy)
    assert text in words, (text, [m.value for m in at.markdown if "Greedy" in m.value])


def _whitespace_generation():
    """generate.section on a stand-in decoder whose new tokens are a newline, a tab and a
    word with a leading space (the tiny models' word-level tokenizer makes none)."""
    import numpy as np

    from attnviz.ui import generate

    texts = {0: "Hi", 1: "\n", 2: "\t", 3: " x"}

    class Tokenizer:
        def text(self, i):
            return texts[int(i)]

    class Step:
        def __init__(self, k):
            self.token, n = k + 1, 2 + k  # the k-th new token sees the 2 given and k new
            self.attentions = np.full((1, 1, n), 1 / n)  # (L, H, n)
            self.cache_tokens, self.cache_bytes = n, 100

        def top(self, k):
            return [(1, 0.6), (3, 0.3), (2, 0.1)][:k]

    class Model:
        tokenizer = Tokenizer()

        def generate_steps(self, ids, n, **sampling):
            return [Step(k) for k in range(min(n, 3))]

    generate.section("whitespace-model", Model(), np.array([0, 3]), ["Hi", " x"], 0, 0)


def test_generation_shows_newline_tab_and_space_tokens():
    """Issue 47: a generated newline was a blank in the step's sentence and the charts."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_whitespace_generation, default_timeout=60).run()
    assert not at.exception, at.exception
    words = " ".join(m.value for m in at.markdown)
    assert "`Hi` · `␣x` **→** `↵` · `⇥` · `␣x`" in words, words
    assert "it chose `␣x`" in words and "the query is `⇥`" in words
    figs = figures_of(at)
    assert list(figs["dec_gen_rows_fig"]["layout"]["xaxis"]["ticktext"]) == ["Hi", "␣x", "↵", "⇥"]
    assert list(figs["dec_gen_next_fig"]["data"][0]["y"]) == ["1. “↵”", "2. “␣x”", "3. “⇥”"]
    assert list(figs["dec_gen_next_fig"]["data"][0]["customdata"]) == ['"\\n"', '" x"', '"\\t"']
