"""Exercises: predict a number of attention on paper, then check it (attnviz.classroom.exercises).

With ``?class=CODE&teacher=KEY`` the page is a live class's teacher view (attnviz.ui.live);
students answer on the class's light page (``/join?class=CODE``, attnviz.classroom.web), and an old
student link here (``?class=CODE``) gets a button to it. No ``st.stop()`` after the class's
view: it would drop a click queued behind this run (docs/architecture.md, "No click is
lost")."""

import random

import streamlit as st

from attnviz import ui
from attnviz.i18n import _
from attnviz.ui import live, live_notices, live_source, present, projector, quiz


def _new_set() -> None:
    # a callback runs before the widgets: setting the bound seed control here is safe,
    # and Streamlit writes it to the URL
    old = int(st.session_state.get("seed", 0))
    new = old
    while new == old:
        new = random.randint(0, 9999)
    st.session_state["seed"] = new  # the page forgets the old answers: another seed


def exercises_page() -> None:
    """The page without a class: the seed's set, the score, Start a class, Join."""
    ui.intro(
        _("Exercises: predict, then check"),
        _(
            "Work each question out on paper (the numbers are small on purpose), type your "
            "answer and press **Check**. The sidebar's **seed** chooses the set: a link with "
            "`?seed=…` gives a whole class the same questions, and **Start a class** collects "
            "the room's answers live. Count rows and columns from 0."
        ),
    )
    seed = int(st.session_state.get("seed", 0) or 0)
    quiz.use_set(seed, live.COUNT)  # another set: forget the old answers
    items = quiz.generate(seed, live.COUNT)
    step = ui.steps([item.title for item in items])  # the presenter view: a question a slide

    top = st.columns([2.4, 1, 1], vertical_alignment="center")
    top[0].markdown(
        "## "
        + _("Score: {score} / {count} right  ·  seed {seed}").format(
            score=quiz.score(items), count=len(items), seed=seed
        )
    )
    top[1].button(_("New exercises"), key="ex_new", on_click=_new_set, icon=":material/casino:")
    live.start_button(seed, top[2])
    if step.presenting:  # the projector: one question, the room works it out on paper
        quiz.cards(items, only=step.index)
    else:
        live_source.source_box(st.columns([2.4, 2])[1])  # what a class started here asks
        live.join_box()
        quiz.cards(items)


ui.page_guard()
room = live.room()
if room is None:
    exercises_page()
elif room.problem:  # a live class: the teacher's view, or a student's old link
    live_notices.missing(room)
elif room.teacher and present.presenting():  # the class on the projector: its slides
    projector.view(room)
elif room.teacher:
    live.teacher_view(room)
else:
    live_notices.moved(room)
