"""attnviz.ui.cross_view: the charts a real encoder-decoder's page draws from plain arrays
(weights (H, T, S) of one layer, (L, H, T, S) for the grid), with no engine result."""

from __future__ import annotations

from board_view import board_entries
from streamlit.testing.v1 import AppTest

SCRIPT = """
import numpy as np
from attnviz.ui import cross_view
# (L, H, T, S): 2 layers, 4 heads, 5 target tokens, 3 source tokens
w = np.random.default_rng(0).dirichlet(np.ones(3), size=(2, 4, 5)).astype(np.float32)
tgt, src = ["a", "b", "c", "d", "e"], ["x", "y", "z"]
cross_view.attention_board("m_top", w[1], 2, target_labels=tgt, source_labels=src)
cross_view.grid_board("m_grid", w, target_labels=tgt, source_labels=src)
cross_view.grid_board("m_layer", w[0], target_labels=tgt, source_labels=src)
cross_view.grid_board("m_last", w, target_labels=tgt, source_labels=src, layers=[1])
"""


def test_a_model_page_draws_one_layer_and_the_layer_by_head_grid():
    at = AppTest.from_string(SCRIPT, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    e = board_entries(at)
    assert set(e) == {"m_top_weights", "m_grid_grid", "m_layer_grid", "m_last_grid"}
    w = e["m_top_weights"]["figure"]["layout"]
    assert w["yaxis"]["ticktext"] == ["a", "b", "c", "d", "e"] and w["xaxis"]["ticktext"] == [
        "x", "y", "z",
    ]  # fmt: skip
    assert (
        e["m_top_weights"]["link"]["head"] == 2 and "arithmetic" not in e["m_top_weights"]["link"]
    )
    grid = e["m_grid_grid"]
    assert grid["link"]["heads"] == list(range(8)) and len(grid["figure"]["data"]) == 8
    titles = [a["text"] for a in e["m_layer_grid"]["figure"]["layout"]["annotations"]]
    assert titles == ["head 0", "head 1", "head 2", "head 3"]
    last = [a["text"] for a in e["m_last_grid"]["figure"]["layout"]["annotations"]]
    assert last == ["layer 1, head 0", "layer 1, head 1", "layer 1, head 2", "layer 1, head 3"]
