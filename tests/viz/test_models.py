"""attnviz.viz.models' pure parts: pooling a model's N×N weights to the grid's cells, the grid's
tiling for the front end, the grouped-query table."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import engine, viz


def test_pool_square_keeps_rows_summing_to_one_and_averages_blocks():
    rng = np.random.default_rng(2)
    w = engine.softmax(rng.standard_normal((2, 10, 10)), axis=-1)  # (H, N, N)
    p = viz.models.pool_square(w, 4)  # blocks of 2, 3, 2, 3 tokens: starts 0, 2, 5, 7
    assert p.shape == (2, 4, 4)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(p[0, 1, 2], w[0, 2:5, 5:7].sum(axis=1).mean(), rtol=1e-6)
    np.testing.assert_allclose(viz.models.pool_square(w, 12), w, rtol=1e-6)  # N <= cells: as is


def test_tile_spec_blocks_are_the_pooled_blocks():
    spec = viz.models.tile_spec(6, 12, n=10, cells=4)
    assert (spec["rows"], spec["cols"], spec["size"]) == (6, 12, 4)
    assert spec["blocks"] == [0, 2, 5, 7, 10]
    assert viz.models.tile_spec(1, 1, n=3, cells=4)["blocks"] == [0, 1, 2, 3]


def test_gqa_table_groups_query_heads_and_bolds_the_selected_one():
    table = viz.models.gqa_table(6, 2, selected=4)
    assert table.splitlines()[2:] == ["| 0 | 0, 1, 2 |", "| 1 | 3, **4**, 5 |"]
    with pytest.raises(ValueError, match="do not divide"):
        viz.models.gqa_table(6, 4)


def test_next_token_ticks_do_not_repeat_on_a_flat_distribution():
    """A random model's top 5 of ~1 % each: whole percents would read 0%, 1%, 1%."""
    flat = viz.models.next_token_figure([("a", 0.012), ("b", 0.009), ("c", 0.008)])
    assert flat.layout.xaxis.tickformat == ".1%"
    sharp = viz.models.next_token_figure([("a", 0.77), ("b", 0.06)])
    assert sharp.layout.xaxis.tickformat == ".0%"


def test_next_token_bars_show_whitespace_and_hover_the_raw_token():
    """A newline was a bar labelled " " (issue 47): now "↵", the hover says "\\n"."""
    fig = viz.models.next_token_figure([("\n", 0.6), (" the", 0.3), ("\t", 0.1)])
    bar = fig.data[0]
    assert list(bar.y) == ["1. “↵”", "2. “␣the”", "3. “⇥”"]
    assert list(bar.customdata) == ['"\\n"', '" the"', '"\\t"']
    assert "%{customdata}" in bar.hovertemplate


def test_newest_rows_write_their_weights_in_the_cells_up_to_the_cell_text_limit():
    rng = np.random.default_rng(3)
    rows = engine.softmax(rng.standard_normal((9, 6)), axis=-1).astype(np.float32)  # (H, N)
    fig = viz.models.newest_rows_figure(rows, [f"t{i}" for i in range(6)], layer=2)
    heat = fig.data[0]
    assert heat.texttemplate == "%{text}"
    assert heat.text[4][1] == viz.style._short_number(float(rows[4, 1]), ".2f")
    n = viz.style.MAX_CELL_TEXT_N + 1  # a longer prompt: no values (the board could not fit them)
    long = engine.softmax(rng.standard_normal((9, n)), axis=-1)
    heat = viz.models.newest_rows_figure(long, [f"t{i}" for i in range(n)], layer=2).data[0]
    assert not heat.texttemplate and heat.text is None


def test_heads_grid_asks_for_square_cells_on_a_slide():
    """The board stretches a matrix's cells on a slide unless its figure asks for square
    ones: a grid of 6 x 12 thumbnails stretched 1:2 slanted every diagonal."""
    w = engine.softmax(np.random.default_rng(4).standard_normal((6, 12, 5, 5)), axis=-1)
    fig = viz.models.heads_grid_figure(w)
    assert fig.layout.meta["cells"] == "square"
    assert fig.layout.meta["tiles"]["rows"] == 6
