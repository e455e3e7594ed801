"""The board's accessibility modules (attnviz/board/table.js, keys.js), run in Node.

- ``node --test tests/js/``: their pure logic (next cell for a key, spoken numbers, the
  announcement text).
- Figures built by ``attnviz.figures`` from the engine's weights go through
  ``tests/js/dump_tables.mjs``: the tables hold the engine's values (4 decimals), headers
  named by the tokens, the top 3 per row above 32 keys, and the announcement of a cell
  names its query, key, weight and row sum.

Node is required (installed by scripts/test.sh's environment, as for the e2e tests'
axe-core); in CI a missing node fails these tests.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from attnviz import engine, figures
from attnviz.inputs import default_labels
from attnviz.ui.board import figure_json

ROOT = Path(__file__).resolve().parents[1]
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
    assert "# fail 0" in out.stdout and "# pass 10" in out.stdout, out.stdout[-800:]


def test_weights_table_holds_every_cell_named_by_tokens():
    n = 6
    w = _weights(n)
    labels = default_labels(n)
    fig = figures.attention_figure(w, what="weights", labels=labels)
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
    fig = figures.attention_figure(w, what="weights", labels=default_labels(n), layout="columns")
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
    fig = figures.attention_figure(w, what="weights", labels=default_labels(n))
    out = _dump(fig, cells=[(2, 4)])
    assert out["announcements"]["2,4"] == f"query t2, key t4, weight {w[2, 4]:.2f}, row sums to 1"


def test_above_32_keys_each_row_lists_its_top_3_and_says_so():
    n = 40
    w = _weights(n, seed=3)
    fig = figures.attention_figure(w, what="weights", labels=default_labels(n))
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
    fig = figures.attention_figure(w, what="weights", labels=default_labels(n), mask=mask)
    out = _dump(fig, cells=[(1, 3)])
    (table,) = out["tables"]
    assert table["rows"][1]["cells"][3]["value"] is None  # NaN on the wire: masked
    assert out["announcements"]["1,3"] == "query t1, key t3, masked (weight 0), row sums to 1"
    big = figures.MAX_FULL_HEATMAP_N * 2
    fig = figures.attention_figure(_weights(big), what="weights")
    (table,) = _dump(fig)["tables"]
    assert "mean of a block" in table["note"]
    assert table["rows"][0]["name"] == "t0–t1"


def test_bar_chart_table_and_token_matrix_headers():
    n = 6
    w = _weights(n)
    labels = default_labels(n)
    fig = figures.query_weights_figure(w[2], query=2, labels=labels)
    out = _dump(fig, cells=[(0, 4)])
    (table,) = out["tables"]
    assert [r["name"] for r in table["rows"]] == list(labels)
    assert table["rowNoun"] == "key"
    np.testing.assert_allclose([r["cells"][0]["value"] for r in table["rows"]], w[2], atol=1e-6)
    assert out["announcements"]["0,4"] == f"query t2, key t4, weight {w[2, 4]:.2f}"
    x = np.random.default_rng(1).standard_normal((n, 4))
    fig = figures.token_matrix_figure(x, name="X", labels=labels)
    (table,) = _dump(fig)["tables"]
    assert table["rowNoun"] == "token" and table["colNoun"] == "feature"
    assert table["colNames"] == ["0", "1", "2", "3"]
    np.testing.assert_allclose(
        [[c["value"] for c in r["cells"]] for r in table["rows"]], x, atol=1e-6
    )


def test_small_multiples_make_one_table_per_head():
    w = np.stack([_weights(5, seed=s) for s in range(3)])
    fig = figures.small_multiples_figure(w, labels=default_labels(5))
    tables = _dump(fig, link={"heads": [0, 1, 2]})["tables"]
    assert len(tables) == 3
    for h, t in enumerate(tables):
        assert f"head {h}" in t["caption"]
        got = np.array([[c["value"] for c in r["cells"]] for r in t["rows"]])
        np.testing.assert_allclose(got, w[h], atol=1e-6)
