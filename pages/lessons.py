"""Lessons: the lessons attnviz ships and the teacher's own (``ATTNVIZ_LESSONS``), each with
its stops and links to play it as a tour or present it; a broken file with its error
(attnviz.classroom.lessons, attnviz.ui.tour, docs/lessons.md)."""

import html

import streamlit as st

from attnviz import ui
from attnviz.classroom import lessons
from attnviz.i18n import _, ngettext
from attnviz.ui import live_source, navlinks, tour

ui.page_guard()  # a deep link before app.py ran: switch to navigation and rerun
st.title(_("Lessons"), anchor=False)
st.markdown(
    _(
        "A lesson is one path through attnviz: a list of stops, each a view of a page with a "
        "few sentences and sometimes a question. **Start the tour** to go through it at your "
        "own pace; **Present it** to give it as a lecture, one stop a slide."
    )
)


def _lesson(x: lessons.Listed) -> None:
    lesson = x.lesson
    title = tour.shown(lesson, lesson.title)
    with st.container(border=True, key=f"lesson_{x.slug}"):
        st.header(title, anchor=False)  # h2 under the page's h1
        if lesson.audience:
            st.caption(tour.shown(lesson, lesson.audience))
        count = ngettext("{n} stop", "{n} stops", len(lesson)).format(n=len(lesson))
        if lesson.minutes:
            m = lesson.minutes
            count += " · " + ngettext("about {m} minute", "about {m} minutes", m).format(m=m)
        questions = sum(1 for s in lesson.stops if s.question)
        count += " · " + ngettext("{n} question", "{n} questions", questions).format(n=questions)
        st.markdown(
            count + ("" if x.shipped else " · " + _("from {path}").format(path=f"`{x.path}`"))
        )
        start = tour.stop_url(lesson, 0, present=False)
        show = tour.stop_url(lesson, 0, present=True)
        links = navlinks.link_html(_("Start the tour"), start, primary=True, key=f"start-{x.slug}")
        # shown by the browser when it kept this lesson's progress (board/js/navlinks.js)
        links += navlinks.link_html(
            _("Resume where you left off"), start, key=f"resume-{x.slug}", resume=x.slug
        )
        links += navlinks.link_html(_("Present it"), show, key=f"present-{x.slug}")
        klass = live_source.class_url(lesson)  # its typed questions: a live class's set
        if klass is not None:
            links += navlinks.link_html(
                _("Start a class with its questions"), klass, key=f"class-{x.slug}"
            )
        st.html(
            f'{navlinks.CSS}<nav class="tour-links" aria-label="{html.escape(title)}">{links}</nav>'
        )
        with st.expander(_("The stops")):
            items = "".join(
                f'<li><a href="{html.escape(tour.stop_url(lesson, i))}" data-attnviz-nav '
                f'target="_self">'
                f"{html.escape(tour.shown(lesson, s.title))}</a></li>"
                for i, s in enumerate(lesson.stops)
            )
            st.html(f"<ol>{items}</ol>")


# each lesson's title an h2, the page's headings in order for a screen reader's list of
# them (an h3 right under the h1 skipped a level: axe's heading-order)
listed = tour.listed()
# on a slide the lessons side by side, three a row: the list on one screen (issue 47)
cols = st.columns(3) if ui.present.presenting() and listed else [st.container()]
for i, x in enumerate(listed):
    with cols[i % len(cols)]:
        if x.lesson is not None:
            _lesson(x)
        else:
            st.error(
                _("**{name}** cannot be played: {error}").format(name=x.slug, error=x.error),
                icon=":material/error:",
            )
st.caption(
    _(
        "Your own lessons: TOML files in the folders named by the environment variable "
        "{env} (docs/lessons.md says how to write one)."
    ).format(env=f"`{lessons.ENV}`")
)
