"""attnviz.viz.compare's numbers (B − A, the largest changes, the entropy change) and the
difference chart's scale; the Compare page is tests/ui/test_compare.py."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz import engine, viz

A = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
B = np.array([[1.0, 0.0, 0.0], [0.1, 0.9, 0.0], [0.4, 0.3, 0.3]])


def test_largest_changes_largest_first_ties_by_position_unchanged_cells_left_out():
    changes = viz.compare.largest_changes(A, B, k=10)
    assert [(c.query, c.key) for c in changes] == [(1, 0), (1, 1), (2, 0), (2, 2)]
    assert [round(c.delta, 12) for c in changes] == [-0.4, 0.4, 0.2, -0.2]
    assert len(viz.compare.largest_changes(A, B, k=1)) == 1
    assert viz.compare.largest_changes(A, A) == []


def test_entropy_change_is_per_query_in_bits():
    np.testing.assert_allclose(
        viz.compare.entropy_change(A, B), engine.row_entropy(B) - engine.row_entropy(A)
    )
    np.testing.assert_array_equal(viz.compare.difference(A, B), B - A)


@pytest.mark.parametrize("b", [np.ones((3, 2)), np.ones((2, 2)), np.ones(3)])
def test_views_of_different_shapes_are_refused_with_both_shapes(b):
    with pytest.raises(ValueError, match="same N×N shape"):
        viz.compare.difference(A, b)


def test_difference_chart_is_symmetric_around_zero_at_least_a_hundredth():
    t = viz.compare.difference_figure(A, B, what="x").data[0]
    assert (t.zmin, t.zmax, t.zmid) == (pytest.approx(-0.4), pytest.approx(0.4), 0)
    t = viz.compare.difference_figure(A, A + 1e-9, what="x").data[0]
    assert (t.zmin, t.zmax) == (-0.01, 0.01)
    with pytest.raises(ValueError, match="layout"):
        viz.compare.difference_figure(A, B, what="x", layout="diagonal")
