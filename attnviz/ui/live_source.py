"""What a live class started on the Exercises page asks: this page's generated set, or a
lesson's typed questions in the lesson's order, alone or before the set (issue 48).

- :func:`source_box`: the teacher's choice (a link's ``class_lesson=<slug>``, from the
  Lessons page, chooses that lesson once).
- :func:`plan`: the class to create for that choice: (count, lesson, items).
- :func:`lesson_note`: on the teacher view, the lesson a class came from and its lecture.
- :func:`class_url`: the Lessons page's link to this page with a lesson's questions chosen.
"""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from attnviz.classroom import exercises, lessons
from attnviz.classroom.schema import ClassInfo
from attnviz.i18n import _, ngettext
from attnviz.ui import pages, tour
from attnviz.ui.text import plain_text

#: The questions of a generated set (one of each kind).
COUNT = len(exercises.KINDS)

#: The teacher's choice of a class's questions (:func:`source_box`): "" this page's set;
#: a lesson's name, its typed questions only; the name and ``+``, them then this page's set.
SOURCE_KEY = "class_source"
THEN_SET = "+"
#: The Lessons page's "Start a class with its questions" (:func:`class_url`):
#: ``exercises?class_lesson=<slug>`` opens this page with that lesson's questions chosen.
LESSON_PARAM = "class_lesson"


def _lesson(slug: str) -> lessons.Lesson | None:
    found = next((x.lesson for x in tour.listed() if x.slug == slug), None)
    return found if found is not None and lessons.class_items(found) else None


def _sources() -> list[str]:
    """The choices of :func:`source_box`: this page's set, then per lesson that asks typed
    questions, its questions alone and its questions then the set."""
    out = [""]
    for x in tour.listed():
        if x.lesson is not None and lessons.class_items(x.lesson):
            out += [x.slug, x.slug + THEN_SET]
    return out


def _source_label(value: str) -> str:
    if not value:
        return ngettext(
            "This page's set of {n} question", "This page's set of {n} questions", COUNT
        ).format(n=COUNT)
    lesson = _lesson(value.removesuffix(THEN_SET))
    if lesson is None:
        return value
    n = len(lessons.class_items(lesson))
    title = tour.shown(lesson, lesson.title)
    if value.endswith(THEN_SET):
        return ngettext(
            "{lesson}: its {n} question, then this page's set",
            "{lesson}: its {n} questions, then this page's set",
            n,
        ).format(lesson=title, n=n)
    return ngettext(
        "{lesson}: its {n} question only", "{lesson}: its {n} questions only", n
    ).format(lesson=title, n=n)


def source_box(where=st) -> None:
    """The teacher's choice of what a class started here asks: this page's set, or a
    lesson's typed questions in its order, alone or before this page's set; a link's
    ``class_lesson=<slug>`` chooses that lesson's questions (once: then the teacher's)."""
    options = _sources()
    asked = st.query_params.get(LESSON_PARAM)
    if asked in options and SOURCE_KEY not in st.session_state:
        st.session_state[SOURCE_KEY] = asked
    where.selectbox(
        _("A class started here asks"),
        options,
        key=SOURCE_KEY,
        format_func=_source_label,
        help=_(
            "A lesson's questions come in the lesson's order. Its predictions about a view "
            "are asked from the projector at their stop when you present the lesson."
        ),
    )


def plan() -> tuple[int, str, tuple[str, ...]]:
    """The class to create for the teacher's choice: (count, lesson, items)."""
    value = str(st.session_state.get(SOURCE_KEY) or "")
    lesson = _lesson(value.removesuffix(THEN_SET)) if value else None
    if lesson is None:
        return COUNT, "", ()
    items = lessons.class_items(lesson)
    return len(items) + (COUNT if value.endswith(THEN_SET) else 0), lesson.slug, items


def lesson_note(info: ClassInfo) -> None:
    """A class started from a lesson: which, how many of its questions come first, and the
    lesson's lecture with this class (its predictions asked of the room at their stops)."""
    if not info.lesson:
        return
    lesson = _lesson(info.lesson)
    title = tour.shown(lesson, lesson.title) if lesson is not None else info.lesson
    n, rest = len(info.items), info.count - len(info.items)
    said = ngettext(
        "From the lesson **{lesson}**: its {n} question first, in its order.",
        "From the lesson **{lesson}**: its {n} questions first, in its order.",
        n,
    ).format(lesson=plain_text(title), n=n)
    if rest:
        said += " " + ngettext(
            "Then {n} question of this page's set.", "Then {n} questions of this page's set.", rest
        ).format(n=rest)
    st.info(said, icon=":material/school:")
    if lesson is not None:
        st.link_button(
            _("Present the lesson to this class"),
            tour.stop_url(lesson, 0, present=True),
            icon=":material/co_present:",
            help=_(
                "One stop a slide; a stop's prediction is asked of the room with its Ask "
                "the room button."
            ),
        )


def class_url(lesson: lessons.Lesson) -> str | None:
    """The Exercises page with ``lesson``'s questions chosen for a live class (the shown
    language kept), or None when the lesson asks no typed question."""
    if not lessons.class_items(lesson):
        return None
    params = {LESSON_PARAM: lesson.slug}
    if "lang" in st.query_params:
        params["lang"] = str(st.query_params["lang"])
    return f"./{pages.page('exercises').slug}?{urlencode(params)}"
