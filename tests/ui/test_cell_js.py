"""The browser's cell arithmetic (attnviz/ui/board/js/cell.js, run in Node) against the server's:
the numbers of :func:`attnviz.teaching.explain.cell` to 1e-12 on random cells of the 50 random
views of
``tests/teaching/test_explain.py`` (masked cells and fully masked rows included), the text lines of
:func:`attnviz.teaching.latex.cell_steps` character for character, and the data :func:`cell_data`
sends (its size, its bound).

Node is required (as for tests/ui/test_board_js.py); in CI a missing node fails these tests.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from attnviz import engine
from attnviz.teaching import explain, latex
from attnviz.teaching.inputs import default_labels
from attnviz.ui import cell as ui_cell
from tests.teaching.test_explain import VIEWS
from tests.ui.test_board_js import node_json

TOL = 1e-12
PER_VIEW = 40  # cells per view (every cell of the smaller views)


def _run(payload: dict) -> dict:
    return node_json("dump_cells.mjs", payload, timeout=120)


def _cells(res: engine.AttentionResult, rng: np.random.Generator) -> list[tuple[int, int, int]]:
    """Every cell of a small view, else PER_VIEW random ones plus its masked cells' first
    and a fully masked row's first cell."""
    h_count, n, _ = res.weights.shape
    every = [(h, i, j) for h in range(h_count) for i in range(n) for j in range(n)]
    if len(every) <= PER_VIEW:
        return every
    picked = [every[int(t)] for t in rng.choice(len(every), PER_VIEW, replace=False)]
    if res.mask is not None:
        hidden = np.argwhere(~np.asarray(res.mask, bool))
        picked += [(h_count - 1, int(i), int(j)) for i, j in hidden[:3]]
    return picked


def _num(v) -> float:
    return float(v) if not isinstance(v, str) else float(v.replace("Infinity", "inf"))


def _close(a, b) -> bool:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=0, atol=TOL, equal_nan=False))


@pytest.fixture(scope="module")
def dumped():
    rng = np.random.default_rng(20)
    views = []
    for name, res in VIEWS:
        labels = default_labels(res.n_tokens)
        data = ui_cell.cell_data(res, range(res.num_heads), labels, title="A: ")
        views.append((name, res, labels, data, _cells(res, rng)))
    out = _run({"views": [{"data": d, "cells": c} for *_, d, c in views]})
    return views, out["views"]


def test_js_numbers_equal_explain_cell_to_1e12(dumped):
    views, got = dumped
    checked = masked = fully = 0
    for (name, res, _, _, cells), js in zip(views, got, strict=True):
        for (h, i, j), g in zip(cells, js, strict=True):
            c = explain.cell(res, h, i, j)
            w = g["cell"]
            where = f"{name} head {h} cell ({i}, {j})"
            for field, js_field in (("q", "q"), ("k", "k"), ("products", "products")):
                assert _close(getattr(c, field), w[js_field]), (where, field)
            assert math.isclose(c.dot, w["dot"], abs_tol=TOL), where
            assert c.scale == w["scale"] and c.masked == w["masked"], where
            assert c.score == _num(w["score"]) or math.isclose(c.score, w["score"], abs_tol=TOL)
            js_scores = [_num(v) for v in w["rowScores"]]
            assert np.array_equal(np.isinf(c.row_scores), np.isinf(js_scores)), where
            fin = np.isfinite(c.row_scores)
            assert _close(c.row_scores[fin], np.asarray(js_scores)[fin]), where
            assert math.isclose(c.row_max, w["rowMax"], abs_tol=TOL), where
            assert _close(c.row_exps, w["rowExps"]), where
            assert math.isclose(c.exp_sum, w["expSum"], abs_tol=TOL), where
            assert math.isclose(c.weight, w["weight"], abs_tol=TOL), where
            assert _close(c.row_weights, w["rowWeights"]), where
            assert _close(c.output_terms, w["outputTerms"]), where
            assert _close(c.output, w["output"]), where
            assert c.fully_masked == w["fullyMasked"], where
            checked += 1
            masked += c.masked
            fully += c.fully_masked
    assert checked > 1000 and masked > 50 and fully > 10, (checked, masked, fully)


def test_js_text_lines_equal_the_python_plain_text(dumped):
    views, got = dumped
    for (name, res, labels, _, cells), js in zip(views, got, strict=True):
        for (h, i, j), g in zip(cells, js, strict=True):
            c = explain.cell(res, h, i, j)
            want = [[title, text] for title, _, text in latex.cell_steps(c)]
            assert g["steps"] == want, (name, h, i, j)
            assert g["heading"] == (
                f"A: Weight a_{i},{j} = {c.weight:.4f}, head {h}: query {i} ({labels[i]}), "
                f"key {j} ({labels[j]})"
                + (" (masked: this key is hidden from this query)" if c.masked else "")
            ).replace("= -0.0000", "= 0.0000")


@pytest.mark.parametrize(("n_tgt", "n_src", "pad"), [(3, 5, 0), (5, 2, 1), (4, 4, 2)])
def test_cross_attention_cells_bound_keys_by_the_source(n_tgt, n_src, pad):
    """T target rows over S source columns: every cell equals explain.cell, the heading names
    the source's token; a key past the source is no cell (not a crash)."""
    rng = np.random.default_rng(n_tgt * 10 + n_src)
    params = engine.AttentionParams.random(4, seed=2)
    mask = engine.key_padding_mask(n_tgt, n_src, pad) if pad else None
    res = engine.cross_attention(rng.standard_normal((n_tgt, 4)), rng.standard_normal((n_src, 4)),
                                 params, num_heads=2, mask=mask)  # fmt: skip
    tgt, src = [f"t{i}" for i in range(n_tgt)], [f"src{j}" for j in range(n_src)]
    data = ui_cell.cell_data(res, [0, 1], tgt, key_labels=src)
    cells = [(h, i, j) for h in range(2) for i in range(n_tgt) for j in range(n_src)]
    got = _run({"views": [{"data": data, "cells": [*cells, (0, 0, n_src)]}]})["views"][0]
    assert got[-1] is None
    for (h, i, j), g in zip(cells, got, strict=False):
        c = explain.cell(res, h, i, j)
        assert math.isclose(c.weight, g["cell"]["weight"], abs_tol=TOL)
        assert _close(c.output, g["cell"]["output"])
        assert f"query {i} (t{i}), key {j} (src{j})" in g["heading"]


def test_numbers_are_rounded_as_python_rounds_them_ties_included():
    values = [0.03125, -0.03125, 0.09375, 1.03125, 2.5, 0.5, -0.00004, 1e-9, -1e-9, 123.456789]
    values += list(np.random.default_rng(1).standard_normal(200) * 10)
    want = [latex._plain(v, 4) for v in values] + [latex._plain(v, 2) for v in (0.125, 0.375)]
    numbers = [[v, 4] for v in values] + [[0.125, 2], [0.375, 2]]
    assert _run({"numbers": numbers})["numbers"] == want
    assert want[:3] == ["0.0312", "-0.0312", "0.0938"]  # half to even, not away from zero


def test_the_head_shown_is_the_clicked_one_or_the_only_one():
    res = VIEWS[1][1]
    two = ui_cell.cell_data(res, [0, 1])
    one = ui_cell.cell_data(res, 1)
    picks = [
        [two, {"head": 1}],
        [two, {"head": None}],  # a click naming no head: ambiguous, nothing shown
        [one, {"head": None}],  # Compare's A or B board: its one head
        [one, {"head": 0}],  # a click on another head: not this chart's
    ]
    assert _run({"picks": picks})["picks"] == [1, None, 1, None]


def test_cell_data_is_exact_small_and_bounded():
    rng = np.random.default_rng(0)

    def view(n, d, heads, mask=None):
        params = engine.AttentionParams.random(d, seed=1)
        x = rng.standard_normal((n, d))
        return engine.multi_head_attention(x, params, num_heads=heads, mask=mask)

    res = view(6, 8, 2, engine.causal_mask(6))
    data = ui_cell.cell_data(res, 0, default_labels(6))
    assert data["mask"][0] == "100000" and data["mask"][5] == "111111"
    assert data["scale"] == res.scale and list(data["heads"]) == ["0"]
    size6 = len(json.dumps(data, separators=(",", ":")))
    assert size6 < 1500, size6  # N = 6, d_k = 4: 3 x 24 float64 and the mask
    big = view(ui_cell.CLIENT_MAX_N, 8, 2)
    size64 = len(json.dumps(ui_cell.cell_data(big, 0), separators=(",", ":")))
    assert size64 < 10_000, size64  # N = 64, D = 8 (the default), d_k = 4, no mask
    assert ui_cell.cell_data(view(ui_cell.CLIENT_MAX_N + 1, 8, 2), 0) is None
    assert not ui_cell.client_side(view(ui_cell.CLIENT_MAX_N + 1, 8, 2))
    widest = view(ui_cell.CLIENT_MAX_ND // 128, 128, 4)  # N = 16, D = 128: every head
    size = len(json.dumps(ui_cell.cell_data(widest, range(4)), separators=(",", ":")))
    assert size < 70_000, size
    assert not ui_cell.client_side(view(ui_cell.CLIENT_MAX_ND // 128 + 1, 128, 4))
