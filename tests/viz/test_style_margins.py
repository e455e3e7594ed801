"""The heatmap builders draw in one pass: plotly's automargin off, margins that fit the labels.

With automargin on, plotly.js measures every tick label after drawing and draws the figure
again with grown margins, about a third of the browser's time per heatmap
(bench/browser_latency.py). These tests read the figures' layouts.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import viz


def _axes(fig):
    lay = fig.to_dict()["layout"]
    return lay, [v for k, v in lay.items() if k.startswith(("xaxis", "yaxis"))]


@pytest.mark.parametrize("n", [1, 6, 40, 64, 300])
def test_attention_heatmaps_have_fixed_margins(n: int) -> None:
    rng = np.random.default_rng(0)
    labels = [f"tok{i}" for i in range(n)]
    for fig in (
        viz.heatmaps.attention_figure(rng.random((n, n)), what="weights", labels=labels),
        viz.heatmaps.token_matrix_figure(rng.standard_normal((n, 8)), name="X", labels=labels),
    ):
        lay, axes = _axes(fig)
        assert axes and all(ax.get("automargin") is False for ax in axes)
        m = lay["margin"]
        assert m["l"] >= 30 and m["b"] >= 30  # room for the axis titles at least


def test_long_token_labels_get_room() -> None:
    # tall enough that the y axis title stays on one line in both
    short = viz.heatmaps.attention_figure(np.eye(3), what="weights", labels=list("abc"), height=700)
    long_labels = ["internationalization", "of", "attention"]
    long = viz.heatmaps.attention_figure(np.eye(3), what="weights", labels=long_labels, height=700)
    ls, ll = short.to_dict()["layout"]["margin"], long.to_dict()["layout"]["margin"]
    # the y labels sit left of the plot: ~7.5 px per character of the longest one
    assert ll["l"] - ls["l"] >= 7 * (len("internationalization") - 1)
    assert ll["b"] > ls["b"]  # x labels that cannot sit side by side are turned


def test_small_multiples_have_fixed_margins() -> None:
    w = np.full((4, 5, 5), 0.2)
    lay, axes = _axes(viz.attention.small_multiples_figure(w, labels=list("abcde")))
    assert len(axes) == 8
    assert all(ax.get("automargin") is False for ax in axes)
    assert lay["margin"]["t"] == 80  # the head titles keep their room


def test_bar_and_line_charts_grow_their_margins_to_fit() -> None:
    """Charts without fixed margins (bars, lines, the head summaries) let plotly.js fit the
    tick labels and axis titles: automargin on every axis (off, they start from 10 px
    margins and the labels are cut)."""

    rng = np.random.default_rng(0)
    w = rng.dirichlet(np.ones(5), size=(3, 5))  # (3, 5, 5)
    built = {
        "bars": viz.charts.bars_figure(
            {"a": [1.0, 2.0], "b": [2.0, 1.0]},
            x_labels=["x", "y"],
            title="t",
            x_title="x",
            y_title="y",
        ),
        "entropy": viz.attention.entropy_figure(rng.random((3, 5)), max_entropy=2.3),
        "argmax": viz.attention.argmax_figure(w),
        "line": viz.charts.line_figure(
            [1, 2, 4], {"a": [1.0, 2.0, 3.0]}, title="t", x_title="x", y_title="y"
        ),
        "variance": viz.charts.variance_figure([1, 2, 4], [1.0, 2.0, 4.0], [1.0, 1.0, 1.0]),
        "summary": viz.models.summary_figure(rng.random((6, 12)), title="t"),
    }
    for name, fig in built.items():
        _, axes = _axes(fig)
        assert axes, name
        assert all(ax.get("automargin") is True for ax in axes), (name, axes)


FULL = "query i (row) — rows = tokens (PyTorch)"


@pytest.mark.parametrize(
    ("height", "masked", "expected"),
    [
        (240, False, "query i (row)"),
        (300, True, "query i (row)"),
        (330, False, "query i (row) — rows = tokens"),
        (330, True, "query i (row) — rows = tokens"),
        (380, False, FULL),
        (380, True, "query i (row) — rows = tokens"),
        (480, True, FULL),
        (800, False, FULL),
    ],
)
def test_long_vertical_axis_title_stays_out_of_the_figure_title(
    height: int, masked: bool, expected: str
) -> None:
    """ "query i (row) — rows = tokens (PyTorch)" (~310 px at 14 px) is centred on its plot:
    beside a shorter plot it stuck out into the figure's title (the masking page's 330 px
    charts, across their "grey = masked" line). It is shortened there instead, and the left
    margin stays as it is (the plots keep their width at 1280 px)."""
    labels = [f"t{i}" for i in range(6)]
    mask = np.tril(np.ones((6, 6), bool)) if masked else None
    fig = viz.heatmaps.attention_figure(
        np.eye(6), what="weights", labels=labels, height=height, mask=mask
    )
    lay = fig.to_dict()["layout"]
    text, m = lay["yaxis"]["title"]["text"], lay["margin"]
    assert text == expected
    title_lines = lay["title"]["text"].count("<br>") + 1
    assert title_lines == (2 if masked else 1)  # the "grey = masked" line
    free = m["t"] - (viz.style.TITLE_LINE_PX * title_lines + 16)
    plot_px = height - m["t"] - m["b"]
    assert (len(text) * viz.style.TITLE_CHAR_PX - plot_px) / 2 <= free
    tall = viz.heatmaps.attention_figure(np.eye(6), what="weights", labels=labels, height=800)
    assert m["l"] == tall.to_dict()["layout"]["margin"]["l"]
