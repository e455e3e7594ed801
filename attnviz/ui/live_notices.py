"""What the Exercises page says to a class link it cannot open as a teacher's view: a wrong
or expired code (or a wrong teacher key): :func:`missing`; a student's old link
(``?class=CODE``, no key; students answer on the class's light page now): :func:`moved`.
"""

from __future__ import annotations

import streamlit as st

from attnviz import classroom
from attnviz.i18n import _
from attnviz.ui import live


def _as_student() -> None:
    if live.TEACHER_PARAM in st.query_params:
        del st.query_params[live.TEACHER_PARAM]


def missing(r: live.Room) -> None:
    """A wrong or expired code (or a wrong teacher key): say so, offer the normal page."""
    st.title(_("Exercises: live class"))
    st.error(r.problem or _("No such class."), icon=":material/error:")
    c1, c2 = st.columns(2)
    c1.button(
        _("Open the exercises without a class"),
        key="class_leave",
        on_click=live.leave,
        type="primary",
    )
    if r.info is not None:  # a wrong teacher key: the class itself exists
        c2.button(
            _("Join class {code} as a student").format(code=r.code),
            key="class_as_student",
            on_click=_as_student,
        )


def moved(r: live.Room) -> None:
    """A student's link to this page (``?class=CODE``, no key): a class is answered on its
    light page now; one button opens it (the link keeps the student's id)."""
    assert r.info is not None
    st.title(_("Live class {code}").format(code=r.code))
    target = f"{classroom.JOIN_PATH}?{live.CLASS_PARAM}={r.code}"
    student = st.query_params.get(live.STUDENT_PARAM)
    if student and student.isascii() and student.isalnum() and 8 <= len(student) <= 32:
        target += f"&{live.STUDENT_PARAM}={student}"
    st.info(
        _(
            "A live class is answered on its own page, made for phones: open it to answer "
            "this class's questions."
        ),
        icon=":material/groups:",
    )
    st.link_button(_("Open class {code}").format(code=r.code), target, type="primary")
    st.button(_("Open the exercises without a class"), key="class_leave", on_click=live.leave)
