"""The Learned attention page's charts of one checkpoint (attnviz.ui.learned_charts): the
words they add for each task, and the names the page reads through attnviz.ui.learned.
The charts themselves are checked through the page (tests/ui/test_learned.py)."""

from __future__ import annotations

from attnviz import toys
from attnviz.ui import learned, learned_charts


def test_every_task_has_its_phase_text_and_what_to_look_for():
    assert set(learned_charts.PHASE_TEXT) == set(toys.TASKS)
    assert set(learned_charts.LOOK_FOR) == set(toys.TASKS)
    assert all(text.strip() for text in learned_charts.LOOK_FOR.values())


def test_the_page_module_reaches_the_same_chart_functions():
    for name in ("curves", "heads", "numbers", "cross_heads", "cross_figure", "HEADS_RESERVE_PX"):
        assert getattr(learned, name) is getattr(learned_charts, name), name


def test_a_slide_puts_a_layer_a_row_filling_the_screen(monkeypatch):
    """Issue 47: on a slide a layer a row and the board filling the screen below its top
    (fit_screen 0), beside the slider (every head in one row was width-bound); else a layer
    a row, fitted under a slider at the top."""
    monkeypatch.setattr(learned_charts, "presenting", lambda: False)
    assert learned_charts.heads_layout(4, 2) == (None, learned_charts.HEADS_RESERVE_PX)
    monkeypatch.setattr(learned_charts, "presenting", lambda: True)
    assert learned_charts.heads_layout(4, 2) == (2, 0)
    assert learned_charts.heads_layout(2, 2) == (2, 0)
    assert learned_charts.heads_layout(1, 2) == (1, 0)
