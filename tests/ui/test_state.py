"""attnviz.ui.state: compute() gives the engine's result for the settings (each source), a
missing upload is refused with a message, and cached() runs only the experiments and the
engine."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import engine, ui
from attnviz.teaching import inputs, presets
from attnviz.ui import state
from attnviz.ui.controls import replace

DEFAULT = ui.Settings(**{c.field: c.default for c in ui.CONTROLS if c.field}, mask_params=())


def test_random_source_is_the_engine_on_the_seeded_input_and_weights():
    s = replace(DEFAULT, n=5, d=8, heads=2, seed=3, mask_kind="causal")
    x, labels, params, res = state.compute(s)
    np.testing.assert_array_equal(x, inputs.random_input(5, 8, 3).x)
    want = engine.AttentionParams.random(8, seed=4, init=s.init, bias=s.bias)
    np.testing.assert_array_equal(params.w_q, want.w_q)
    ref = engine.multi_head_attention(x, want, num_heads=2, scale=s.scale, mask=s.mask())
    np.testing.assert_array_equal(res.weights, ref.weights)
    assert np.all(res.weights[:, 0, 1:] == 0)  # causal: the first query sees itself only


def test_preset_and_upload_sources():
    p = presets.get("udl-multihead")
    s = replace(
        DEFAULT,
        source="preset",
        preset="udl-multihead",
        n=p.n_tokens,
        d=p.d_model,
        heads=p.num_heads,
    )
    x, labels, _, res = state.compute(s)
    assert labels == tuple(p.tokens) and res.weights.shape == (p.num_heads, p.n_tokens, p.n_tokens)
    up = replace(DEFAULT, source="upload", n=3, d=2, heads=1)
    with pytest.raises(ValueError, match="no CSV uploaded yet"):
        state.compute(up)
    x_up = np.arange(6.0).reshape(3, 2)
    x, labels, _, res = state.compute(up, (x_up, ("a", "b", "c")))
    np.testing.assert_array_equal(x, x_up)
    assert labels == ("a", "b", "c") and res.output.shape == (3, 2)


def test_cached_runs_experiments_and_engine_functions_only():
    w = state.cached("softmax", np.array([0.0, np.log(3.0)]))
    np.testing.assert_allclose(w, [0.25, 0.75])
    with pytest.raises(AttributeError):
        state.cached("no_such_function")
