"""attnviz.ui.code: the NumPy code box, run as written, gives the page's numbers."""

import numpy as np
import pytest

from attnviz import ui
from attnviz.teaching import presets


@pytest.mark.parametrize("name", presets.names())
def test_code_lines_reproduce_every_preset(name):
    p = presets.get(name)
    s = ui.Settings(
        source="preset",
        text="",
        preset=name,
        n=p.n_tokens,
        d=p.d_model,
        heads=p.num_heads,
        seed=0,
        init="normal",
        bias=True,
        scale_mode="1/√d_k",
        factor=8.0,
        mask_kind="causal",
        mask_params=(),
        layout="columns",
    )
    x, labels, params, res = ui.compute(s)
    ns: dict = {}
    exec(ui.code_lines(ui.View(s, x, labels, params, res), head=p.num_heads - 1), ns)  # noqa: S102
    np.testing.assert_allclose(ns["A"], res.weights[-1], atol=1e-12)
    np.testing.assert_allclose(ns["Y"], res.output, atol=1e-9)
