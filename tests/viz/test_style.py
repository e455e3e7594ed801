"""Chart text readable on a projector: every builder draws ticks >= 13 px, axis and colour-bar
titles >= 14 px, all in near-black (viz.style.TEXT_COLOR), set explicitly on each axis and
colour bar so that Streamlit's chart theme (small light-grey ticks) cannot override them."""

import numpy as np
import pytest

from attnviz import engine, viz


def _res():
    x = np.random.default_rng(0).standard_normal((6, 8))
    p = engine.AttentionParams.random(8, seed=1)
    return engine.multi_head_attention(x, p, num_heads=2, mask=engine.causal_mask(6))


def _builders():
    r = _res()
    labels = list("abcdef")
    return {
        "attention": viz.heatmaps.attention_figure(r.weights[0], what="weights", labels=labels),
        "scores": viz.heatmaps.attention_figure(r.scores[0], what="scores", mask=r.mask),
        "token": viz.heatmaps.token_matrix_figure(r.queries[0], name="Q", labels=labels),
        "mask": viz.heatmaps.mask_figure(r.mask),
        "query_bars": viz.attention.query_weights_figure(r.weights[0, 2], query=2, labels=labels),
        "weighted_sum": viz.attention.weighted_sum_figure(r.values[0], r.weights[0, 2], query=2),
        "small_multiples": viz.attention.small_multiples_figure(r.weights, labels=labels),
        "entropy": viz.attention.entropy_figure(np.ones((2, 6)), max_entropy=2.0),
        "argmax": viz.attention.argmax_figure(r.weights, labels=labels),
        "bars": viz.charts.bars_figure(
            {"a": [1, 2]}, x_labels=["x", "y"], title="t", x_title="x", y_title="y"
        ),
        "line": viz.charts.line_figure(
            [1, 10], {"a": [1, 2]}, title="t", x_title="x", y_title="y", log_x=True
        ),
        "grid": viz.models.heads_grid_figure(np.full((2, 3, 5, 5), 0.2)),
        "summary": viz.models.summary_figure(np.ones((2, 3)), title="t"),
    }


@pytest.mark.parametrize("name", list(_builders()))
def test_every_axis_and_colour_bar_has_large_dark_text(name):
    fig = _builders()[name]
    axes = [k for k in fig.layout.to_plotly_json() if k.startswith(("xaxis", "yaxis"))]
    assert axes, name
    for k in axes:
        ax = fig.layout[k]
        assert ax.tickfont.size >= 13 and ax.tickfont.color == viz.style.TEXT_COLOR, (name, k)
        assert ax.title.font.size >= 14 and ax.title.font.color == viz.style.TEXT_COLOR, (name, k)
    bars = [t.colorbar for t in fig.data if "colorbar" in t and t.showscale is not False]
    if fig.layout.coloraxis.colorbar.tickfont.size is not None:
        bars.append(fig.layout.coloraxis.colorbar)
    for cb in bars:
        assert cb.tickfont.size >= 13 and cb.tickfont.color == viz.style.TEXT_COLOR, name
        assert cb.title.font.size >= 14, name
    assert fig.layout.font.color == viz.style.TEXT_COLOR


def test_small_matrix_heatmaps_write_their_values_large_ones_do_not():
    r = _res()  # N = 6
    small = viz.heatmaps.attention_figure(r.weights[0], what="weights", mask=r.mask)
    hm = small.data[0]
    assert hm.texttemplate == "%{text}" and hm.textfont.color == "auto"
    w = np.where(r.mask, r.weights[0], np.nan)
    for i in range(6):
        for j in range(6):
            t = hm.text[i][j]
            assert (t == "") if np.isnan(w[i, j]) else float(t) == round(float(w[i, j]), 2)
    assert hm.text[0][0] in ("1.00", "1")  # query 0 sees only key 0 (causal)
    assert (hm.zmin, hm.zmax) == (0.0, 1.0)  # fixed 0..1 scale kept
    scores = viz.heatmaps.attention_figure(r.scores[0], what="scores")
    assert scores.data[0].texttemplate == "%{text}"  # the scores too (issue 35)
    assert float(scores.data[0].text[1][2]) == round(float(r.scores[0][1, 2]), 2)
    x = viz.heatmaps.token_matrix_figure(r.head_outputs[0], name="out")
    assert x.data[0].texttemplate == "%{text}"
    assert viz.style._short_number(0.19, ".2f") == ".19"
    assert viz.style._short_number(-0.5, ".2f") == "-.50"
    n = viz.style.MAX_CELL_TEXT_N + 1
    big = viz.heatmaps.attention_figure(np.full((n, n), 1 / n), what="weights")
    assert big.data[0].texttemplate is None
    wide = viz.heatmaps.token_matrix_figure(np.zeros((4, n)), name="X")
    assert wide.data[0].texttemplate is None


def test_heads_grid_colour_bar_sits_under_the_grid_not_at_the_paper_edge():
    fig = viz.models.heads_grid_figure(np.full((2, 3, 5, 5), 0.2))
    cb = fig.data[0].colorbar
    assert cb.orientation == "h" and cb.x == 0.5 and cb.xanchor == "center"
    assert fig.layout.xaxis.constrain == "domain" and fig.layout.yaxis.constrain == "domain"
    assert fig.layout.yaxis.scaleanchor == "x"  # square cells kept
