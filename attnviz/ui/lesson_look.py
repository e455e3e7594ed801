"""A lesson's stop pointing at a chart (``look = { chart = "scores", row = 2 }``,
docs/lessons.md): outlined on the charts it names while the stop's page is shown, and said
in words in the tour's bar (what the outline shows, for everyone and for a screen reader).

- :func:`show` (called by :func:`attnviz.ui.tour.bar` once a run, before the page): the look
  every board of the page draws (:data:`attnviz.ui.board.LOOK_KEY`; the outline itself is
  :func:`attnviz.viz.look.outlined`, put on each chart's JSON by
  :func:`attnviz.ui.board.payload`);
  no page names it.
- :func:`words`: "Where to look: the scores S, query 2 (outlined)."
"""

from __future__ import annotations

import streamlit as st

from attnviz.classroom import lessons
from attnviz.i18n import N_, _
from attnviz.ui.board import LOOK_KEY

#: A look's chart as the bar names it (:data:`attnviz.classroom.lessons.LOOK_CHARTS`).
LOOK_WORDS = {
    "scores": N_("the scores S"),
    "weights": N_("the weights A"),
    "output": N_("the output"),
    "x": N_("the input X"),
    "q": N_("the queries Q"),
    "k": N_("the keys K"),
    "v": N_("the values V"),
    "heads": N_("every head's weights"),
}
#: The charts whose rows are queries (the others' rows are tokens).
QUERY_ROWS = ("scores", "weights", "heads")


def show(look: lessons.Look | None) -> None:
    """Outline ``look`` on the charts of this run's boards that it names; None: nothing
    (no stop, or the stop's page is not this one)."""
    if look is None:
        st.session_state.pop(LOOK_KEY, None)
        return
    cell = list(look.cell) if look.cell is not None else None
    st.session_state[LOOK_KEY] = {"chart": look.chart, "cell": cell, "row": look.row}


def words(look: lessons.Look) -> str:
    """Where the stop's look points, in words (what the outline shows, said)."""
    chart = _(LOOK_WORDS[look.chart])
    if look.cell is not None:
        return _("Where to look: {chart}, query {query} and key {key} (outlined).").format(
            chart=chart, query=look.cell[0], key=look.cell[1]
        )
    if look.row is not None and look.chart in QUERY_ROWS:
        return _("Where to look: {chart}, query {row} (outlined).").format(
            chart=chart, row=look.row
        )
    if look.row is not None:
        return _("Where to look: {chart}, token {row} (outlined).").format(
            chart=chart, row=look.row
        )
    return _("Where to look: {chart} (outlined).").format(chart=chart)
