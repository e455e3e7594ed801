"""attnviz.ui.a11y: every page of the app gets the stylesheet once per run (the focus ring in
FOCUS, reduced motion), and the ring's colour has the contrast WCAG 1.4.11 asks on white."""

from __future__ import annotations

import pytest
from test_app import run_app

from attnviz.ui import a11y


def _luminance(hex_colour: str) -> float:
    c = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def test_the_focus_ring_contrasts_with_white():
    assert (1.05) / (_luminance(a11y.FOCUS) + 0.05) >= 3.0


@pytest.mark.parametrize("page", ["pages/playground.py", "pages/exercises.py"])
def test_every_run_injects_the_stylesheet_once(page):
    at = run_app({}, page)
    sheets = [h.proto.body for h in at.get("html") if ":focus-visible" in h.proto.body]
    assert len(sheets) == 1
    assert f"outline: 3px solid {a11y.FOCUS}" in sheets[0]
    assert "prefers-reduced-motion: reduce" in sheets[0]
    at.run()
    assert len([h for h in at.get("html") if ":focus-visible" in h.proto.body]) == 1
