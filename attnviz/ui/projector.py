"""A live class on the projector: ``present=1`` on the teacher's link
(``/exercises?class=CODE&teacher=KEY&present=1``).

Slide 1 is the join screen: the QR code of the join link at about half the screen's
height, the class code in letters the back row reads, the join address (with the teacher's
warning when phones cannot open it, and the field for one they can), and how many
students are in (a fragment that refreshes every :data:`attnviz.ui.live.TALLY_EVERY` s).
Then one question per slide (**Next question**, **Previous**, PageDown / PageUp and the
arrow keys; the slide in the URL as ``step=``, as every presenter view): on the left its
text and matrices, the matrices as large as the column holds them (:func:`math_px`), no
answer; on the right the room's counts in words, large, and once the teacher revealed it,
**Answer: ...** and its explanation. The teacher's controls (Reveal, the answer keys, End)
stay on the teacher's own screen: the same link without ``present=1``.
"""

from __future__ import annotations

import html
from datetime import timedelta

import streamlit as st

from attnviz import classroom
from attnviz.classroom import exercises
from attnviz.classroom.roomlink import RoomLink
from attnviz.i18n import _, ngettext
from attnviz.teaching import latex
from attnviz.ui import address, live, present, quiz, streamlit_private
from attnviz.ui.page import md_text

#: The room a question slide's formulas may take at 1920x1080 (px): its left column's width
#: and the height the heading, the question's words and the nav bar leave.
MATH_BOX = (960, 470)
#: A question's formulas at most this large (px; a 2-row vector would fill the column) and at
#: least the slide's body type.
MATH_MAX_PX, MATH_MIN_PX = 64, 26
#: A display formula's margins above and below it (px: KaTeX's 1em at 16 px).
DISPLAY_MARGIN_PX = 32


def view(r: live.Room) -> None:
    """The projector's slides of the class ``r`` (a teacher's link)."""
    info = r.info
    assert info is not None and r.teacher is not None
    items = quiz.generate(info.seed, info.count, info.items)
    titles = [_("Join the class"), *quiz.titles(items, len(info.items))]
    streamlit_private.projector_css()
    # the slides' one h1, for a screen reader's outline (the slides show no page title)
    title = _("Live class {code}").format(code=info.code)
    st.html(f'<h1 class="attnviz-slide-title">{html.escape(title)}</h1>')
    index = present.nav_bar(titles, word=_("Slide"), next_label=_("Next question"), prefix="class")
    if index == 0:
        _join_slide(info, r.teacher)
    else:
        _question_slide(info, r.teacher, items, index - 1)


def _join_slide(info: classroom.ClassInfo, key: str) -> None:
    where = address.link(page=classroom.JOIN_PATH)
    link = live.join_link(info.code, where)
    left, right = st.columns([1, 1.15], vertical_alignment="center")
    with left, st.container(key="class_big_qr"):  # as tall as the screen allows (CSS)
        st.image(
            present.qr_svg(link),
            width="stretch",
            alt=_("QR code of the join link {link}").format(link=link),
        )
    with right:
        st.markdown(_("Scan the code, or open"))
        with st.container(key="class_big_link"):
            st.markdown(md_text(link))
        _link_warning(where)
        st.markdown(_("The class code:"))
        with st.container(key="class_big_code"):
            st.markdown(info.code)
        quiz.in_slot(_students_in, info.code, key)


def _link_warning(where: RoomLink) -> None:
    """When phones cannot open the link: the teacher's warning (the same words,
    :func:`attnviz.ui.address.warn`) in the slide's type, and the field it speaks of (an
    address typed in the teacher's view stays in that window's session, not this one's)."""
    if not (where.warning or st.session_state.get(address.GIVEN_KEY)):
        return
    with st.container(key="class_big_warning"):
        address.warn(where)
        live.address_box(where, note=False)


@st.fragment(run_every=timedelta(seconds=live.TALLY_EVERY))
def _students_in(code: str, key: str) -> None:
    try:
        n = live.store().joined(code, key)
    except (ValueError, PermissionError, *live.STORE_DOWN):
        return
    with st.container(key="class_big_count"):
        st.markdown(ngettext("{n} student in", "{n} students in", n).format(n=n))


def _question_slide(
    info: classroom.ClassInfo, key: str, items: list[exercises.Exercise], i: int
) -> None:
    e = items[i]
    st.markdown("## " + quiz.titles(items, len(info.items))[i])
    left, right = st.columns([1.4, 1], gap="large")
    with left, st.container(key="class_slide_prompt"):
        prompt, px = slide_prompt(e.prompt)
        streamlit_private.slide_math_css(px)
        st.markdown(prompt)
    with right:
        quiz.in_slot(_question_live, info.code, key, i)


def math_px(prompt: str) -> float:
    """The font size (px) of the question's display formulas: as large as the slide's left
    column holds them (:data:`MATH_BOX`, from :func:`attnviz.teaching.latex.display_extent`; each
    display's margins, :data:`DISPLAY_MARGIN_PX`, taken off), at most :data:`MATH_MAX_PX`,
    at least :data:`MATH_MIN_PX` (the slide's body type)."""
    width, height = latex.display_extent(prompt)
    if not width:
        return MATH_MIN_PX
    room = MATH_BOX[1] - DISPLAY_MARGIN_PX * prompt.count("$$") // 2
    px = min(MATH_BOX[0] / width, room / height, MATH_MAX_PX)
    return max(px, MATH_MIN_PX)


def slide_prompt(prompt: str) -> tuple[str, float]:
    """The question as its slide shows it, and its formulas' size (:func:`math_px`): its
    matrices side by side, or one under the other when that makes them larger by a fifth
    or more (a row vector beside another, three heads' weights)."""
    side, under = math_px(prompt), math_px(latex.stacked(prompt))
    return (latex.stacked(prompt), under) if under >= 1.2 * side else (prompt, side)


@st.fragment(run_every=timedelta(seconds=live.TALLY_EVERY))
def _question_live(code: str, key: str, i: int) -> None:
    """The room's counts for question ``i`` and, once revealed, its answer."""
    try:
        t = live.store().tally(code, key)[i]
        info = live.store().info(code)
    except (ValueError, PermissionError, *live.STORE_DOWN):
        st.warning(_("The class store is not answering; retrying."))
        return
    e = quiz.generate(info.seed, info.count, info.items)[i]
    with st.container(key="class_big_tally"):
        st.markdown(
            _("**{answered}** answered · **{right}** right · **{wrong}** wrong").format(
                answered=t["answered"], right=t["right"], wrong=t["wrong"]
            )
        )
    if i in info.revealed:
        with st.container(key="class_answer"):
            st.success(
                _("Answer: **{answer}**").format(answer=e.answer_shown),
                icon=":material/visibility:",
            )
            st.markdown(e.explanation)
    else:
        st.caption(_("The answer shows here when the teacher reveals it."))
