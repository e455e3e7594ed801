"""One colour range per comparison (issue 25): two charts meant to be compared share their
zmin/zmax, and the page says so in a caption a student reads.

Before, steps 3 and 4 of step by step coloured QKᵀ at ±4 and QKᵀ/√d_k at ±2: the same
colours for numbers half as large, so scaling looked as if it changed nothing.
"""

from __future__ import annotations

import numpy as np
import pytest
from board_view import figures_of
from test_app import assert_clean, run_app, view_of

from attnviz import engine, viz


def _range(fig: dict) -> tuple[float, float]:
    trace = fig["data"][0]
    return trace["zmin"], trace["zmax"]


def test_shared_range_is_the_largest_finite_value_of_all():
    a = np.array([[1.0, -4.5], [-np.inf, 2.0]])
    b = np.array([[0.5, np.nan], [3.0, -1.0]])
    assert viz.style.shared_range(a, b) == 4.5
    assert viz.style.shared_range(np.full((2, 2), -np.inf)) == 1.0  # nothing finite: ±1
    fig = viz.heatmaps.attention_figure(b, what="scores", zmax=4.5)
    assert _range(viz.heatmaps.token_matrix_figure(a[:1], name="x", zmax=7.0).to_dict()) == (-7, 7)
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-4.5, 4.5)
    own = viz.heatmaps.attention_figure(b, what="scores")  # default: its own range
    assert (own.data[0].zmin, own.data[0].zmax) == (-3.0, 3.0)


@pytest.mark.parametrize("query", [{}, {"mask": "causal", "D": "16", "heads": "1"}])
def test_step_by_step_steps_3_4_and_5_share_one_scale(query):
    at = run_app({"N": "6", **query}, "pages/step_by_step.py")
    assert_clean(at)
    figs = figures_of(at)
    r = view_of(at).result
    raw = engine.attention_scores(r.queries[0], r.keys[0], scale=False)
    m = float(np.abs(raw).max())  # |QKᵀ| >= |QKᵀ / √d_k|
    charts = ["sb_raw", "sb_scaled"] + (["sb_masked"] if "mask" in query else [])
    for key in charts:
        assert _range(figs[key]) == pytest.approx((-m, m), rel=1e-6), key
    captions = " ".join(c.value for c in at.caption)
    steps = "Steps 3, 4 and 5" if "mask" in query else "Steps 3 and 4"  # 5: the masked scores
    assert f"{steps} colour the scores on one scale" in captions
    assert "look paler than in step 3: they are smaller" in captions


def test_masking_columns_share_one_scale():
    at = run_app({"N": "6", "mask": "none"}, "pages/masking.py")
    assert_clean(at)
    figs = figures_of(at)
    causal, padding = _range(figs["mk_s_causal"]), _range(figs["mk_s_padding"])
    assert causal == padding
    r = view_of(at).result
    assert causal[1] == pytest.approx(float(np.abs(r.scores[0]).max()), rel=1e-6)
    assert any("coloured on one scale" in c.value for c in at.caption)


@pytest.mark.parametrize("positions", ["false", "true"])
def test_permutation_outputs_and_difference_share_one_scale(positions):
    at = run_app({"N": "6", "positions": positions}, "pages/permutation.py")
    assert_clean(at)
    figs = figures_of(at)
    ranges = {k: _range(figs[k]) for k in ("pm_a", "pm_b", "pm_d")}
    assert len(set(ranges.values())) == 1, ranges
    # rounding noise (about 1e-16) is white on the outputs' scale, not a full-colour chart
    assert ranges["pm_a"][1] > 0.1
    assert any("share one colour scale" in c.value for c in at.caption)


def test_scaling_weights_scaled_and_not_share_zero_to_one():
    at = run_app({"N": "6"}, "pages/scaling.py")
    assert_clean(at)
    figs = figures_of(at)
    assert _range(figs["sc_un"]) == _range(figs["sc_sc"]) == (0, 1)
    assert any("Both charts colour the weights on one scale" in c.value for c in at.caption)


def test_compare_a_and_b_share_zero_to_one():
    at = run_app({"N": "6", "b_scale": "none"}, "pages/compare.py")
    assert_clean(at)
    figs = figures_of(at)
    assert _range(figs["cmp_a"]) == _range(figs["cmp_b"]) == (0, 1)
    assert any("A and B share one colour scale" in c.value for c in at.caption)


# --------------------------------------------------------------------------- weight_range


def _weights(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = np.exp(rng.normal(size=(n, n)))
    return e / e.sum(axis=1, keepdims=True)


def test_weight_range_fixed_leaves_0_to_1_and_matrix_runs_to_the_largest_weight():
    w = _weights(30)
    fig = viz.heatmaps.attention_figure(w, what="weights")
    hm = fig.data[0]
    assert (hm.zmin, hm.zmax, hm.colorbar.title.text) == (0.0, 1.0, "weight")
    assert viz.style.weight_range(fig, "fixed") is fig and fig.data[0].zmax == 1.0
    viz.style.weight_range(fig, "matrix")
    hm = fig.data[0]
    top = float(w.max())
    assert hm.zmin == 0.0 and hm.zmax == pytest.approx(top, rel=1e-6) and top < 0.5
    assert hm.colorbar.title.text == f"weight<br>0 to {top:.2g} (this matrix)"


def test_weight_range_leaves_scores_and_shares_the_small_multiples_axis():
    w = np.stack([_weights(12, s) for s in range(3)])
    scores = viz.heatmaps.attention_figure(np.log(w[0]), what="scores")
    before = (scores.data[0].zmin, scores.data[0].zmax, scores.data[0].colorbar.title.text)
    viz.style.weight_range(scores, "matrix")
    assert (scores.data[0].zmin, scores.data[0].zmax, scores.data[0].colorbar.title.text) == before
    fig = viz.attention.small_multiples_figure(w)
    viz.style.weight_range(fig, "matrix")
    axis = fig.layout.coloraxis
    assert axis.cmin == 0.0 and axis.cmax == pytest.approx(float(w.max()), rel=1e-6)
    assert axis.colorbar.title.text.endswith("(these matrices)")


def test_weight_range_refuses_an_unknown_mode_and_keeps_an_empty_matrix_at_0_to_1():
    fig = viz.heatmaps.attention_figure(np.zeros((3, 3)), what="weights")
    assert viz.style.weight_range(fig, "matrix").data[0].zmax == 1.0
    with pytest.raises(ValueError, match="fixed, matrix"):
        viz.style.weight_range(fig, "row")


def test_the_link_asks_for_each_matrixs_range_and_a_bad_value_is_warned():
    at = run_app({"N": "30", "wrange": "matrix"}, "pages/playground.py")
    assert_clean(at)
    w = view_of(at).result.weights  # (H, N, N)
    figs = figures_of(at)
    weights = [f for f in figs.values() if f["layout"].get("meta", {}).get("role") == "weights"]
    assert weights
    for fig in weights:
        hm = fig["data"][0]
        assert hm["zmin"] == 0.0 and hm["zmax"] < 1.0 and hm["zmax"] <= float(w.max()) + 1e-6
        assert hm["colorbar"]["title"]["text"].endswith("(this matrix)")
    at = run_app({"N": "30", "wrange": "rows"}, "pages/playground.py")
    assert_clean(at)
    assert any("wrange" in w.value for w in at.warning)
    fig = next(
        f for f in figures_of(at).values() if f["layout"].get("meta", {}).get("role") == "weights"
    )
    assert (fig["data"][0]["zmin"], fig["data"][0]["zmax"]) == (0.0, 1.0)
