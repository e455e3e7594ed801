"""A lesson stop's look (attnviz.ui.lesson_look): outlined on the charts it names on its own
stop's page only (every board of the page, through AppTest), said in words in the bar; every
shipped look names a chart its page draws."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from attnviz.classroom import lessons
from attnviz.ui import lesson_look
from tests.board_view import figures_of
from tests.ui.test_tour import INTRO, _open, _stop


def _looks(at: AppTest) -> dict[str, int]:
    """Chart key -> how many of the look's outlines it carries (each a white and a dashed line)."""
    out = {}
    for key, fig in figures_of(at).items():
        shapes = fig.get("layout", {}).get("shapes", [])
        out[key] = sum(s.get("name") == "look" for s in shapes) // 2
    return out


def test_a_stop_s_look_is_outlined_on_the_charts_it_names_and_said():
    i = next(k for k, s in enumerate(INTRO.stops) if s.look and s.look.chart == "scores")
    stop = INTRO.stops[i]
    at = _stop(i)
    looks = _looks(at)
    scores = {k for k in looks if k in ("sb_raw", "sb_scaled", "sb_masked", "pg_scores")}
    assert scores and all(looks[k] == 1 for k in scores), looks
    assert sum(looks.values()) == len(scores)  # the weights, X, Q... are left alone
    said = " ".join(m.value for m in at.markdown)  # the tour bar's one block (ui.tour._head)
    assert f":gray[Where to look: the scores S, query {stop.look.row} (outlined).]" in said
    # the same page without the lesson: nothing outlined
    at = _open(stop.page, dict(stop.settings))
    assert not any(_looks(at).values())


def test_a_look_at_x_frames_the_input_only_on_its_own_stop():
    i = next(k for k, s in enumerate(INTRO.stops) if s.look and s.look.chart == "x")
    looks = _looks(_stop(i))
    assert looks["sb_x"] == 1 and sum(looks.values()) == 1
    j = next(k for k, s in enumerate(INTRO.stops) if k > i and s.page == INTRO.stops[i].page
             and not s.look)  # fmt: skip
    assert not any(_looks(_stop(j)).values())  # the next stop of the same page: not its look


@pytest.mark.parametrize(
    ("look", "said"),
    [
        (lessons.Look("weights", cell=(1, 3)), "the weights A, query 1 and key 3 (outlined)"),
        (lessons.Look("q", row=2), "the queries Q, token 2 (outlined)"),
        (lessons.Look("heads"), "every head's weights (outlined)"),
    ],
)
def test_the_bar_says_where_to_look(look, said):
    assert lesson_look.words(look) == f"Where to look: {said}."


LOOKS = [(x, i) for x in lessons.shipped() for i, s in enumerate(x.stops) if s.look]


@pytest.mark.parametrize(("lesson", "i"), LOOKS, ids=[f"{x.slug}-{i + 1}" for x, i in LOOKS])
def test_every_shipped_look_lands_on_a_chart_of_its_page(lesson, i):
    stop = lesson.stops[i]
    at = _open(stop.page, {**stop.settings, "lesson": lesson.slug, "stop": str(i + 1)})
    assert any(_looks(at).values()), (stop.link, stop.look)
