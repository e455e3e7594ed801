"""attnviz.viz.charts: grouped bars and lines carry their series, named, on the asked axes."""

from __future__ import annotations

import numpy as np

from attnviz import viz


def test_bars_one_trace_per_series_in_order_with_distinct_colours():
    series = {f"head {h}": np.arange(3) * (h + 1) for h in range(4)}
    fig = viz.charts.bars_figure(
        series, x_labels=["x", "y", "z"], title="t", x_title="X", y_title="Y"
    )
    assert [d.name for d in fig.data] == list(series)
    for d, v in zip(fig.data, series.values(), strict=True):
        np.testing.assert_allclose(np.asarray(d.y, float), v)
    assert len({d.marker.color for d in fig.data}) == 4
    assert fig.layout.barmode == "group"


def test_variance_chart_is_log_log_with_the_theory_line_equal_to_d():
    dims = np.array([1, 4, 16, 64])
    fig = viz.charts.variance_figure(dims, before=dims * 1.1, after=np.ones(4))
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    by_name = {d.name: np.asarray(d.y, float) for d in fig.data}
    np.testing.assert_allclose(by_name["d_k (theory, unscaled)"], dims)
    np.testing.assert_allclose(by_name["var(q·k / √d_k)"], 1.0)
