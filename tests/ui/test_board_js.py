"""The board's accessibility modules (attnviz/ui/board/js/table.js, keys.js), run in Node.

- ``node --test tests/js/``: their pure logic (next cell for a key, spoken numbers, the
  announcement text).
- Figures built by ``attnviz.viz`` from the engine's weights go through
  ``tests/js/dump_tables.mjs``: the tables hold the engine's values (4 decimals), headers
  named by the tokens, the top 3 per row above 32 keys, and the announcement of a cell
  names its query, key, weight and row sum.

Node is required (installed by scripts/test.sh's environment, as for the e2e tests'
axe-core); in CI a missing node fails these tests.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from attnviz import engine, viz
from attnviz.teaching.inputs import default_labels
from attnviz.ui.board import figure_json, link_attn
from tests.figure_catalogue import catalogue

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "tests" / "js"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed (CI is set: these tests must run)", False)
        pytest.skip("node is not installed")
    return node


def node_json(script: str, payload: dict, timeout: float = 60) -> dict:
    """Run ``tests/js/<script>`` under Node with ``payload`` as JSON on stdin; its JSON out."""
    out = subprocess.run(
        [_node(), str(JS / script)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _dump(fig, cells=(), link=None) -> dict:
    payload = {"figure": figure_json(fig), "link": link, "cells": [list(c) for c in cells]}
    return node_json("dump_tables.mjs", payload)


def _weights(n: int, d: int = 8, seed: int = 0, mask=None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((n, d)) for _ in range(3))
    w, _ = engine.scaled_dot_product_attention(q, k, v, mask=mask)
    return w


def test_node_unit_tests():
    out = subprocess.run(
        [_node(), "--test", str(JS)], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    # every test() of the .test.mjs files ran and passed (none skipped or lost)
    written = sum(len(re.findall(r"^test\(", f.read_text(), re.M)) for f in JS.glob("*.test.mjs"))
    assert written >= 42
    assert "# fail 0" in out.stdout and f"# pass {written}" in out.stdout, out.stdout[-800:]


def test_weights_table_holds_every_cell_named_by_tokens():
    n = 6
    w = _weights(n)
    labels = default_labels(n)
    fig = viz.heatmaps.attention_figure(w, what="weights", labels=labels)
    (table,) = _dump(fig)["tables"]
    assert table["rowNoun"] == "query" and table["colNoun"] == "key"
    assert [r["name"] for r in table["rows"]] == list(labels)
    assert table["colNames"] == list(labels)
    assert table["top"] is None and table["valueName"] == "weight"
    got = np.array([[c["value"] for c in r["cells"]] for r in table["rows"]])
    np.testing.assert_allclose(got, w, atol=1e-6)  # float32 on the wire


def test_columns_layout_names_keys_down_and_queries_across():
    n = 5
    w = _weights(n)
    fig = viz.heatmaps.attention_figure(
        w, what="weights", labels=default_labels(n), layout="columns"
    )
    out = _dump(fig, cells=[(4, 2)])
    (table,) = out["tables"]
    assert table["rowNoun"] == "key" and table["colNoun"] == "query"
    got = np.array([[c["value"] for c in r["cells"]] for r in table["rows"]])
    np.testing.assert_allclose(got, w.T, atol=1e-6)
    # row 4 (key t4), column 2 (query t2): query first, its weights sum down the column
    assert out["announcements"]["4,2"] == (
        f"query t2, key t4, weight {w[2, 4]:.2f}, column sums to 1"
    )


def test_announcement_of_query_2_key_4():
    n = 6
    w = _weights(n)
    fig = viz.heatmaps.attention_figure(w, what="weights", labels=default_labels(n))
    out = _dump(fig, cells=[(2, 4)])
    assert out["announcements"]["2,4"] == f"query t2, key t4, weight {w[2, 4]:.2f}, row sums to 1"


def test_above_32_keys_each_row_lists_its_top_3_and_says_so():
    n = 40
    w = _weights(n, seed=3)
    fig = viz.heatmaps.attention_figure(w, what="weights", labels=default_labels(n))
    (table,) = _dump(fig)["tables"]
    assert table["top"] == 3
    assert "top 3 keys" in table["note"] and "instead of every cell" in table["note"]
    for i, row in enumerate(table["rows"]):
        want = np.argsort(-w[i], kind="stable")[:3]
        assert [c["col"] for c in row["cells"]] == want.tolist(), i
        assert [c["colName"] for c in row["cells"]] == [f"t{j}" for j in want]
        np.testing.assert_allclose([c["value"] for c in row["cells"]], w[i, want], atol=1e-6)


def test_masked_cells_are_said_masked_and_pooled_charts_say_blocks():
    n = 6
    mask = engine.causal_mask(n)
    w = _weights(n, mask=mask)
    fig = viz.heatmaps.attention_figure(w, what="weights", labels=default_labels(n), mask=mask)
    out = _dump(fig, cells=[(1, 3)])
    (table,) = out["tables"]
    assert table["rows"][1]["cells"][3]["value"] is None  # NaN on the wire: masked
    assert out["announcements"]["1,3"] == "query t1, key t3, masked (weight 0), row sums to 1"
    big = viz.style.MAX_FULL_HEATMAP_N * 2
    fig = viz.heatmaps.attention_figure(_weights(big), what="weights")
    (table,) = _dump(fig)["tables"]
    assert "mean of a block" in table["note"]
    assert table["rows"][0]["name"] == "t0–t1"


def test_bar_chart_table_and_token_matrix_headers():
    n = 6
    w = _weights(n)
    labels = default_labels(n)
    fig = viz.attention.query_weights_figure(w[2], query=2, labels=labels)
    out = _dump(fig, cells=[(0, 4)])
    (table,) = out["tables"]
    assert [r["name"] for r in table["rows"]] == list(labels)
    assert table["rowNoun"] == "key"
    np.testing.assert_allclose([r["cells"][0]["value"] for r in table["rows"]], w[2], atol=1e-6)
    assert out["announcements"]["0,4"] == f"query t2, key t4, weight {w[2, 4]:.2f}"
    x = np.random.default_rng(1).standard_normal((n, 4))
    fig = viz.heatmaps.token_matrix_figure(x, name="X", labels=labels)
    (table,) = _dump(fig)["tables"]
    assert table["rowNoun"] == "token" and table["colNoun"] == "feature"
    assert table["colNames"] == ["0", "1", "2", "3"]
    np.testing.assert_allclose(
        [[c["value"] for c in r["cells"]] for r in table["rows"]], x, atol=1e-6
    )


def test_the_table_and_the_keyboard_read_every_heatmap_alike():
    """One reader (figure.js): for every heatmap of every figure builder
    (tests/figure_catalogue.py), alone or as an attention chart of either orientation, the
    table and the keyboard name the rows, columns and values alike and agree on whether the
    values are weights (the grids of the tiled grid and the panel table aside: one table for
    many panels)."""
    figs = catalogue()
    cases = [
        (name, link)
        for name, fig in figs.items()
        if any(t.type == "heatmap" for t in fig.data)
        for link in (None, link_attn(0, "rows"), link_attn(0, "columns"))
    ]
    payload = [{"figure": figure_json(figs[n]), "link": link, "cells": []} for n, link in cases]
    compared = set()
    for (name, link), out in zip(cases, node_json("dump_tables.mjs", payload), strict=True):
        grids = [g for g in out["grids"] if g["kind"] == "heatmap" and "stride" not in g]
        if len(out["tables"]) < len(grids) or not grids:
            continue
        for table, grid in zip(out["tables"], grids, strict=False):
            for k in ("rowNoun", "colNoun", "valueName", "weights", "colNames"):
                assert table[k] == grid[k], (name, link, k, table[k], grid[k])
            assert [r["name"] for r in table["rows"]] == grid["rowNames"], (name, link)
        compared.add(name)
    assert len(compared) >= 15, sorted(compared)
    assert {"viz.heatmaps.attention_figure/weights-columns", "viz.compare.difference_figure"} <= (
        compared
    )


def test_small_multiples_make_one_table_per_head():
    w = np.stack([_weights(5, seed=s) for s in range(3)])
    fig = viz.attention.small_multiples_figure(w, labels=default_labels(5))
    tables = _dump(fig, link={"heads": [0, 1, 2]})["tables"]
    assert len(tables) == 3
    for h, t in enumerate(tables):
        assert f"head {h}" in t["caption"]
        got = np.array([[c["value"] for c in r["cells"]] for r in t["rows"]])
        np.testing.assert_allclose(got, w[h], atol=1e-6)


# --------------------------------------------------------------------------- fitting (fit.js)


def _fit(figs, width: int, height: int = 0, scale: float = 1.0, plot: int = 0, **opts):
    """attnviz's figures as draw.js draws them in a room ``width`` px wide (``height``: the
    screen left below a presenter's chart; ``plot``: the plot area's width plotly gave it,
    for the values in cells), through fit.js (tests/js/dump_fit.mjs)."""
    payload = {
        "figures": [figure_json(f) for f in figs],
        "room": {"width": width, "height": height},
        "scale": scale,
        "opts": opts,
        "plot_width": plot,
    }
    return node_json("dump_fit.mjs", payload)


def _playground_figures(n: int = 6) -> list:
    """The playground's charts at its defaults: scores, weights, output, one query's bars
    and its weighted sum."""
    x = np.random.default_rng(0).standard_normal((n, 8))
    params = engine.AttentionParams.random(8, seed=1)
    r = engine.multi_head_attention(x, params, num_heads=2)
    labels = default_labels(n)
    return [
        viz.heatmaps.attention_figure(r.scores[0], what="scores", labels=labels, d_k=4, scale=0.5),
        viz.heatmaps.attention_figure(r.weights[0], what="weights", labels=labels),
        viz.heatmaps.token_matrix_figure(
            r.head_outputs[0], name="out (head 0) = A V", labels=labels
        ),
        viz.attention.query_weights_figure(r.weights[0, 0], query=0, labels=labels),
        viz.attention.weighted_sum_figure(r.values[0], r.weights[0, 0], query=0, labels=labels),
    ]


def _title_lines(layout: dict) -> list[str]:
    return [re.sub(r"<[^>]*>", "", t) for t in layout["title"]["text"].split("<br>")]


@pytest.mark.parametrize("width", [109, 240, 358])
def test_titles_fit_a_phone_column(width):
    """The issue's 109 px columns ("Weights A = sof"), a tablet's third, a phone's width:
    every title line of the playground's figures fits the chart (0.56 em a character, as
    fit.js estimates without a canvas); the top margin grew by the added lines."""
    figs = _playground_figures()
    for fig, out in zip(figs, _fit(figs, width), strict=True):
        lines = _title_lines(out["layout"])
        assert " ".join(lines).replace("  ", " ").strip(), lines
        for line in lines:
            assert len(line) * 16 * 0.56 <= width - 8, (width, line)
        added = len(lines) - len(_title_lines(figure_json(fig)["layout"]))
        assert out["layout"]["margin"]["t"] >= fig.layout.margin.t + added * 16 * 1.3 - 1


def test_a_narrow_weighted_sum_puts_its_legend_under_the_plot():
    (out,) = _fit(_playground_figures()[4:], 358)
    legend = out["layout"]["legend"]
    assert legend["orientation"] == "h" and legend["yref"] == "container"
    assert out["layout"]["margin"]["b"] > 54 + 3 * 20  # room for its 7 entries
    (wide,) = _fit(_playground_figures()[4:], 520)  # a laptop's half: on the right
    assert wide["layout"]["legend"]["orientation"] == "v"


def test_presenter_matrices_fill_the_room():
    """Scores and weights (6x6) on a slide 1080 px wide with 700 px below: square plot
    (scaleanchor), its side set by the height; the 6x4 output fills the same height, its
    cells at most 1.5 times as wide as tall; one query's bars are left as they were."""
    figs = _playground_figures()[:4]
    scores, weights, out, bars = _fit(figs, 1080, 700, scale=1.45, present=True)
    for fitted in (scores, weights):
        lay = fitted["layout"]
        assert lay["yaxis"]["scaleanchor"] == "x" and lay["yaxis"]["scaleratio"] == 1
        m = lay["margin"]
        assert lay["height"] - m["t"] - m["b"] == 700 - m["t"] - m["b"]
    lay = out["layout"]
    assert lay["yaxis"]["scaleanchor"] == "x" and 1 / 1.5 <= lay["yaxis"]["scaleratio"] <= 1.5
    assert lay["height"] == 700
    assert "scaleanchor" not in bars["layout"]["yaxis"]


def test_cell_values_are_dropped_only_where_they_do_not_fit():
    """The weights' ".19" (about 20 px at 12 px type, estimated here; ~17 px as a browser
    measures it) in a tablet's 12 px cells: dropped; in 21 px cells, where with a space
    between neighbours (fit.js SPACE_EM) the estimate does not fit: dropped; in 24 px
    cells and a phone's 36 px: kept."""
    weights = _playground_figures()[1]
    for plot, kept in ((6 * 12, False), (6 * 21, False), (6 * 24, True), (6 * 36, True)):
        (out,) = _fit([weights], 300, plot=plot)
        assert (out["data"][0]["texttemplate"] == "%{text}") is kept, plot
