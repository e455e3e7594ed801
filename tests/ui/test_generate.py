"""Generation step by step on the decoder page, for a tiny Llama found in an
``ATTNVIZ_MODELS`` folder (AppTest): the settings from the link, each step's new row of
every head, the KV cache size and the top 5, equal to ``model.generate_steps``."""

from __future__ import annotations

import numpy as np
from board_view import figures_of

from attnviz import models
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
