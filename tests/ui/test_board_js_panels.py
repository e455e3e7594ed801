"""The board's accessibility modules on figures of several heatmaps (keys.js, table.js), run
in Node through tests/js/dump_tables.mjs (see tests/ui/test_board_js.py):

- small multiples (one heatmap per head, the multi-head page): the keyboard walks every
  head, each announcement names its head, query and key (from the link's orientation:
  the subplots' axes have no title) and the engine's weight;
- the Heads section's six pattern panels (72 and 270 heads): one table, a row per head
  ("layer 3, head 4", numbered from 0 as on screen) and a column per pattern, holding the scores;
  the keyboard walks each pattern's panel with the same numbers;
- the model pages' tiled grid of every head's weights (``layout.meta["tiles"]``): one table,
  a row per head, a column per query naming the key it weighs most; the keyboard walks
  head by head, each announcement naming the layer and head.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import viz
from attnviz.models.head_patterns import PATTERNS
from attnviz.teaching.inputs import default_labels
from attnviz.ui.board import link_attn
from tests.ui.test_board_js import _dump, _weights


@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_small_multiples_announce_every_head_with_its_weight(layout):
    n, heads = 6, 3
    w = np.stack([_weights(n, seed=s) for s in range(heads)])
    fig = viz.attention.small_multiples_figure(w, labels=default_labels(n), layout=layout)
    cells = [(2, 4, h) if layout == "rows" else (4, 2, h) for h in range(heads)]
    out = _dump(fig, cells=cells, link=link_attn(None, layout, heads=range(heads)))
    sums = "row sums to 1" if layout == "rows" else "column sums to 1"
    for r, c, h in cells:
        assert out["announcements"][f"{r},{c},{h}"] == (
            f"head {h}: query t2, key t4, weight {w[h, 2, 4]:.2f}, {sums}"
        )
    tables = out["tables"]
    assert [(t["rowNoun"], t["colNoun"]) for t in tables] == [
        ("query", "key") if layout == "rows" else ("key", "query")
    ] * heads
    assert all(t["valueName"] == "weight" for t in tables)


@pytest.mark.parametrize(("layers", "heads"), [(6, 12), (30, 9)])
def test_pattern_panels_make_one_table_of_every_head(layers, heads):
    rng = np.random.default_rng(layers)
    scores = {k: rng.random((layers, heads)).astype(np.float32) for k in PATTERNS}
    scores["duplicate"][0, 0] = np.nan
    best = (layers - 1, heads - 2)
    scores["induction"][best] = 1.0
    fig = viz.heads.scores_figure(scores, selected=(0, 0))
    out = _dump(fig, cells=[(2, 4, 0), (best[0], best[1], 5)])
    (table,) = out["tables"]
    assert table["colNames"] == list(PATTERNS)
    assert len(table["rows"]) == layers * heads
    # rows in (layer, head) order, numbered from 0 as on screen
    assert table["rows"][0]["name"] == "layer 0, head 0"
    assert table["rows"][heads + 2]["name"] == "layer 1, head 2"
    assert table["rows"][-1]["name"] == f"layer {layers - 1}, head {heads - 1}"
    got = np.array([[c["value"] for c in r["cells"]] for r in table["rows"]], dtype=float)
    want = np.stack([scores[k].ravel() for k in PATTERNS], axis=1)
    np.testing.assert_allclose(got, want, atol=1e-6)  # NaN (None on the wire) stays NaN
    assert f"induction: layer {best[0]}, head {best[1]} (1.00)" in table["note"]
    assert out["announcements"]["2,4,0"] == (
        f"previous: layer 2, head 4, score {scores['previous'][2, 4]:.2f}"
    )
    assert out["announcements"][f"{best[0]},{best[1]},5"] == (
        f"induction: layer {best[0]}, head {best[1]}, score 1.00"
    )


@pytest.mark.parametrize("n", [7, 40])
def test_tiled_grid_of_every_head_reads_head_by_head(n):
    layers, heads = 3, 4
    w = np.stack([[_weights(n, seed=10 * a + b) for b in range(heads)] for a in range(layers)])
    fig = viz.models.heads_grid_figure(w, selected=(0, 0))
    c = min(n, viz.models.GRID_MAX_CELLS)
    p = viz.models.pool_square(w, c)  # (L, H, c, c): what the tiles show
    out = _dump(fig, cells=[(2, 4, heads + 1)])  # layer 2, head 2 (0-based tile 5)
    (table,) = out["tables"]
    assert [r["name"] for r in table["rows"][:2]] == ["layer 0, head 0", "layer 0, head 1"]
    assert len(table["rows"]) == layers * heads
    names = table["colNames"]
    assert len(names) == c and names[0] == "t0"
    if c < n:
        assert names[1] == "t1–t2" and "block of tokens" in table["note"]
    for t, row in enumerate(table["rows"]):
        layer, head = divmod(t, heads)
        best = p[layer, head].argmax(axis=1)
        assert [cell["text"] for cell in row["cells"]] == [
            f"key {names[k]}: {p[layer, head, q, k]:.4f}" for q, k in enumerate(best)
        ], row["name"]
    value = "mean weight" if c < n else "weight"
    sums = "" if c < n else ", row sums to 1"
    assert out["announcements"][f"2,4,{heads + 1}"] == (
        f"layer 1, head 1: query {names[2]}, key {names[4]}, {value} {p[1, 1, 2, 4]:.2f}{sums}"
    )
