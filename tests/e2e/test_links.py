"""Shared links whose N or heads contradict the input (typed text, a preset): a real
browser shows the derived values and a notice, never an exception."""

from __future__ import annotations

import pytest
from e2e_helpers import alerts, query, scores_shape, selectbox_input, slider_value
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    ("path", "n", "heads", "shown"),
    [
        ("/?N=10&source=text&text=the+cat+sat", 3, "2", "N=10"),
        ("/?N=30&source=preset", 3, "1", "N=30"),
        ("/?source=preset&preset=udl-multihead&heads=3", 6, "2", "heads=3"),
        ("/step_by_step?source=preset&N=30", 3, "1", "N=30"),
    ],
)
def test_contradicting_link_is_corrected_with_a_notice(session, path, n, heads, shown):
    session.open(path)
    session.assert_healthy(path)
    assert slider_value(session, "N") == n
    expect(selectbox_input(session, "heads")).to_have_value(heads)
    assert scores_shape(session) == (n, n)
    warnings = alerts(session, "Warning")
    assert any(shown in w and "is set by" in w for w in warnings), warnings
    key = shown.split("=")[0]
    assert query(session).get(key) in (None, [str(n) if key == "N" else heads])
