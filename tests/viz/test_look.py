"""A lesson stop's look drawn on its chart (attnviz.viz.look): which chart a look names, and
the outline of a cell, a token's row or the whole matrix, in either layout, on a pooled
heatmap's block, on every head of a grid; nothing drawn where the figure has no such row."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import viz
from attnviz.ui.board import figure_json
from attnviz.viz import look
from attnviz.viz.style import pool_factor

W = np.random.default_rng(0).dirichlet(np.ones(5), size=5)  # (5, 5) weights


def _rects(fig) -> list[tuple[float, float, float, float]]:
    """The look's outlines (one per white-and-dashed pair): (x0, x1, y0, y1)."""
    shapes = [s for s in fig.layout.shapes if s.name == "look" and s.line.dash == "dash"]
    return [(s.x0, s.x1, s.y0, s.y1) for s in shapes]


def test_a_chart_is_named_by_its_role_or_its_key_never_its_title():
    scores = viz.heatmaps.attention_figure(W, what="scores", title="weights, really")
    weights = viz.heatmaps.attention_figure(W, what="weights")
    tokens = viz.heatmaps.token_matrix_figure(W, name="X")
    grid = viz.attention.small_multiples_figure(np.stack([W, W]))
    assert look.chart_role("pg_scores", scores) == "scores"
    assert look.chart_role("sb_w", weights) == "weights"
    assert look.chart_role("mh_small", grid) == "heads"
    assert [look.chart_role(k, tokens) for k in ("sb_x", "pg_q", "sb_v", "mh_out")] == [
        "x", "q", "v", "output",
    ]  # fmt: skip
    assert look.chart_role("sc_var", tokens) is None and look.chart_role("chart", tokens) is None


@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_a_cell_is_outlined_at_its_query_and_key(layout):
    fig = viz.heatmaps.attention_figure(W, what="weights", layout=layout)
    out = look.outline(fig, cell=(1, 3))
    ((x0, x1, y0, y1),) = _rects(out)
    x, y = (3, 1) if layout == "rows" else (1, 3)  # key across in rows, query across in columns
    assert (x0, x1, y0, y1) == (x - 0.5, x + 0.5, y - 0.5, y + 0.5)
    assert not fig.layout.shapes  # a copy: the figure itself is left as it was


@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_a_token_row_spans_the_other_axis(layout):
    fig = viz.heatmaps.token_matrix_figure(np.ones((5, 8)), name="Q", layout=layout)
    ((x0, x1, y0, y1),) = _rects(look.outline(fig, row=2))
    if layout == "rows":
        assert (y0, y1) == (1.5, 2.5) and (x0, x1) == (-0.5, 7.5)
    else:
        assert (x0, x1) == (1.5, 2.5) and (y0, y1) == (-0.5, 7.5)


def test_no_row_or_cell_frames_the_whole_matrix():
    fig = viz.heatmaps.attention_figure(W, what="scores")
    assert _rects(look.outline(fig)) == [(-0.5, 4.5, -0.5, 4.5)]


def test_a_pooled_heatmap_outlines_the_block_that_holds_the_row():
    n = 300
    b = pool_factor(n)
    assert b > 1
    fig = viz.heatmaps.attention_figure(np.full((n, n), 1 / n), what="weights")
    ((x0, x1, y0, y1),) = _rects(look.outline(fig, row=b + 1))  # in the second block
    assert (y0, y1) == (b - b / 2, b + b / 2)
    assert x0 == -b / 2 and x1 >= n - b / 2


def test_every_head_of_a_grid_gets_the_row_on_its_own_axes():
    fig = viz.attention.small_multiples_figure(np.stack([W, W, W]), layout="columns")
    shapes = [s for s in look.outline(fig, row=4).layout.shapes if s.line.dash == "dash"]
    assert [s.xref for s in shapes] == ["x", "x2", "x3"]
    assert all((s.x0, s.x1) == (3.5, 4.5) for s in shapes)  # queries across in columns


def test_a_row_or_cell_the_figure_does_not_have_draws_nothing():
    fig = viz.heatmaps.attention_figure(W, what="weights")
    assert look.outline(fig, row=5) is fig  # the student moved N below the stop's row
    assert look.outline(fig, cell=(0, 9)) is fig
    bars = viz.charts.bars_figure(
        {"a": [1.0, 2.0]}, x_labels=["p", "q"], title="t", x_title="x", y_title="y"
    )
    assert look.outline(bars) is bars


def test_the_board_s_json_gets_the_same_outline_without_a_copy_of_its_data():
    fig = viz.heatmaps.attention_figure(W, what="weights")
    spec = figure_json(fig)
    before = list(spec["layout"].get("shapes", []))
    drawn = look.outlined(spec, row=3)
    assert drawn["data"] is spec["data"] and spec["layout"].get("shapes", []) == before
    assert (
        drawn["layout"]["shapes"] == look.outline(fig, row=3).to_plotly_json()["layout"]["shapes"]
    )
    assert look.chart_role("sb_w", spec) == "weights"  # the JSON is named as the figure is
    assert look.outlined(spec, row=9) is spec
