"""A live class on the Exercises page: the teacher's and the students' views over the class
store (:mod:`attnviz.classroom`).

- **Start a class** (:func:`start_button`) creates a class on the page's set and opens the
  teacher view: ``?class=CODE&teacher=KEY`` (the teacher can reopen it, or project it from
  a second device).
- :func:`room` reads the link: no ``class`` (the normal page), a class to join, or why
  not (a wrong or expired code).
- :func:`teacher_view`: the join link and its QR code, the live tally (a fragment that
  reruns every :data:`TALLY_EVERY` s), **Reveal** per question, the answer keys, **End
  the class**.
- The students are not here: the join link opens the class's light page
  (:mod:`attnviz.classroom.web`, ``<address>/join?class=CODE``), no Streamlit session per phone.
  An old student link to this page (``?class=CODE`` without a key), a wrong or expired
  code: :mod:`attnviz.ui.live_notices`.

State changes happen in ``on_click`` callbacks (they also work on a page reached by
``st.switch_page``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import streamlit as st

from attnviz import classroom, i18n, viz
from attnviz.classroom import exercises
from attnviz.classroom.roomlink import EXAMPLE, FIND_ADDRESS, RoomLink
from attnviz.classroom.schema import ClassInfo
from attnviz.classroom.store import ClassStore
from attnviz.i18n import _, fmt, ngettext
from attnviz.ui import address, live_source, pages, quiz, streamlit_private
from attnviz.ui.board import board
from attnviz.ui.page import md_text as ui_text
from attnviz.ui.present import qr_svg
from attnviz.ui.text import plain_text

CLASS_PARAM = "class"
TEACHER_PARAM = "teacher"
STUDENT_PARAM = "student"
#: Questions in a class (the page's set): one of every kind of exercises.KINDS.
COUNT = live_source.COUNT
#: Seconds between two refreshes of the teacher's tally.
TALLY_EVERY = 2.0
#: Common wrong answers listed per question.
WRONG_SHOWN = 3
STORE_DOWN = classroom.STORE_ERRORS


@st.cache_resource(show_spinner=False, max_entries=4)
def _store(url: str) -> ClassStore:
    return ClassStore(url)


def store() -> ClassStore:
    """The process's store on :func:`attnviz.classroom.default_url` (one engine, pooled)."""
    return _store(classroom.default_url())


@dataclass(frozen=True)
class Room:
    """The class of this link: ``info`` if it was found, else ``problem`` (why not);
    ``teacher``: the key in the link was the class's key."""

    code: str
    info: ClassInfo | None = None
    teacher: str | None = None
    problem: str | None = None


def _param(name: str) -> str | None:
    value = st.query_params.get(name)
    return None if value is None else str(value)


def room() -> Room | None:
    """The class named by ``?class=`` (None: no class in the link)."""
    code = _param(CLASS_PARAM)
    if code is None:
        return None
    try:
        info = store().info(code)
    except classroom.ClassNotFound:  # the typed text, literally (a code span)
        shown = code.strip()[:20] + ("…" if len(code.strip()) > 20 else "")
        return Room(
            code[:20],
            problem=_(
                "There is no class with the code {code}: a wrong code, or the class ended "
                "more than 24 hours ago (classes expire then). A class code is 6 letters and "
                "digits."
            ).format(code=ui_text(shown)),
        )
    except STORE_DOWN as exc:
        return Room(
            code[:20],
            problem=_("The class store cannot be reached ({error}).").format(
                error=type(exc).__name__
            ),
        )
    key = _param(TEACHER_PARAM)
    if key is not None and store().authorised(info.code, key):
        return Room(info.code, info, teacher=key)
    if key is not None:
        return Room(
            info.code, info, problem=_("The teacher key in this link is wrong for this class.")
        )
    return Room(info.code, info)


# --------------------------------------------------------------------------- callbacks


def _start(seed: int) -> None:
    try:
        count, lesson, items = live_source.plan()
        code, key = store().create(seed, count, lesson, items)
    except STORE_DOWN as exc:
        st.session_state["class_start_error"] = f"{type(exc).__name__}: {exc}"[:300]
        return
    st.query_params[CLASS_PARAM] = code
    st.query_params[TEACHER_PARAM] = key
    if live_source.LESSON_PARAM in st.query_params:  # chosen: the class holds it now
        del st.query_params[live_source.LESSON_PARAM]


def leave() -> None:
    """on_click: back to the normal page (the class parameters leave the link)."""
    for name in (CLASS_PARAM, TEACHER_PARAM, STUDENT_PARAM):
        if name in st.query_params:
            del st.query_params[name]


ACTION_ERROR_KEY = "class_action_error"


def _reveal(code: str, key: str, item: int) -> None:
    try:
        store().reveal(code, key, item)
    except (ValueError, PermissionError, *STORE_DOWN) as exc:
        st.session_state[ACTION_ERROR_KEY] = _("Question {n} was not revealed: {error}").format(
            n=item + 1, error=exc
        )


def _close(code: str, key: str) -> None:
    try:
        store().close(code, key)
    except (ValueError, PermissionError, *STORE_DOWN) as exc:
        st.session_state[ACTION_ERROR_KEY] = _("The class was not ended: {error}").format(error=exc)


# --------------------------------------------------------------------------- shared


def start_button(seed: int, where=st) -> None:
    """**Start a class** on the set of ``seed`` (opens the teacher view)."""
    where.button(
        _("Start a class"),
        key="class_start",
        on_click=_start,
        args=(seed,),
        icon=":material/groups:",
        help=_(
            "Students join with a link or QR code and answer on their devices; you see "
            "the room's answers live and reveal them one by one."
        ),
    )
    problem = st.session_state.pop("class_start_error", None)
    if problem:
        st.error(
            _("The class could not be started: the class store failed ({error}).").format(
                error=problem
            )
        )


def join_box() -> None:
    """A student's way in without the link: a form that opens the class's light page
    (``join?class=CODE``, relative to this page: it works under a base path too; a literal,
    as every raw HTML of the app, checked against ``classroom.JOIN_PATH`` and
    ``CLASS_PARAM`` by tests/ui/test_live.py); a wrong code is said there."""
    st.html(
        """<form class="attnviz-join" method="get" action="join">
<label for="attnviz-join-code">"""
        + _("Joining a live class? Its code:")
        + """</label>
<input id="attnviz-join-code" name="class" type="text" autocomplete="off"
 autocapitalize="characters" spellcheck="false" placeholder=\""""
        + _("e.g. K7QX2M")
        + """">
<button type="submit">"""
        + _("Join")
        + """</button></form>
<style>
.attnviz-join { display: flex; flex-wrap: wrap; align-items: end; gap: 0.5rem 0.75rem; }
.attnviz-join label { flex-basis: 100%; font-size: 0.875rem; }
.attnviz-join input { font: inherit; min-height: 2.75rem; padding: 0 0.75rem; width: 14rem;
  border: 1px solid rgba(49, 51, 63, 0.5); border-radius: 0.5rem; }
.attnviz-join button { font: inherit; min-height: 2.75rem; padding: 0 1rem; cursor: pointer;
  border: 1px solid rgba(49, 51, 63, 0.5); border-radius: 0.5rem; background: #fff; }
</style>"""
    )


#: The Exercises page's path under the app's address (its slug, checked against the table).
PAGE = pages.page("exercises").slug


def join_link(code: str, where: RoomLink | None = None) -> str:
    """The class's join link: the room's address of the class's light page
    (:func:`attnviz.ui.address.link`, or ``where``) with the code, and the teacher's
    language when it is not English (the phones open in it; each student can switch)."""
    where = where or address.link(page=classroom.JOIN_PATH)
    lang = i18n.current()
    return f"{where.url}?{CLASS_PARAM}={code}" + (f"&lang={lang}" if lang != i18n.SOURCE else "")


def address_box(where: RoomLink, note: bool = True) -> None:
    """Under the join link: where its address comes from (``note``), and the field for the
    address the room opens (the warning, if any, is above the QR code)."""
    if note and where.note:
        st.caption(where.note)
    st.text_input(
        _("Address the room opens (optional)"),
        key=address.GIVEN_KEY,
        placeholder=_("e.g. {example}").format(example=EXAMPLE),
        help=_(
            "The app's address as phones on the room's network reach it: this computer's "
            "network address and port, or a proxy's address with its path ({find}). "
            "It replaces the address in the join link and QR code for this session; "
            "ATTNVIZ_PUBLIC_URL sets it for every session."
        ).format(find=FIND_ADDRESS),
    )


def _sidebar_note(info: ClassInfo) -> None:
    st.sidebar.info(
        _(
            "A live class uses its own set of questions (seed {seed}): the seed above does "
            "not apply here."
        ).format(seed=info.seed),
        icon=":material/groups:",
    )


# --------------------------------------------------------------------------- teacher


def _join_panel(code: str, link: str, where: RoomLink) -> None:
    """The join code, the QR code and link, the address box."""
    address.warn(where)  # phones cannot open it: said before it is shown
    st.markdown(
        _("**Join:** scan, or open the link, or type the code **{code}**").format(code=code)
    )
    alt = _("QR code of the join link {link}").format(link=link)
    st.image(qr_svg(link), width=230, alt=alt)
    st.code(link, language=None, wrap_lines=True)
    address_box(where)


def teacher_view(r: Room) -> None:
    """The teacher's screen (see the module docstring)."""
    info = r.info
    assert info is not None and r.teacher is not None
    items = quiz.generate(info.seed, info.count, info.items)
    where = address.link(page=classroom.JOIN_PATH)
    link = join_link(info.code, where)
    _sidebar_note(info)
    st.title(_("Live class {code}").format(code=info.code))
    left, right = st.columns([1.6, 1], vertical_alignment="top")
    with right, st.container(border=True, key="class_join"):
        _join_panel(info.code, link, where)
    with left:
        if info.closed:
            st.warning(
                _(
                    "This class has ended: it takes no more answers. The tally stays here "
                    "until the class expires (24 h after it started)."
                ),
                icon=":material/event_busy:",
            )
        else:
            st.markdown(
                ngettext(
                    "Students open the join link (or scan the code): they get the {n} "
                    "question of this set and answer on their own devices. The tally below "
                    "refreshes every {every} s; **Reveal** shows a question's answer and "
                    "explanation on every student's page.",
                    "Students open the join link (or scan the code): they get the {n} "
                    "questions of this set and answer on their own devices. The tally below "
                    "refreshes every {every} s; **Reveal** shows a question's answer and "
                    "explanation on every student's page.",
                    info.count,
                ).format(n=info.count, every=fmt(TALLY_EVERY, "g"))
            )
        live_source.lesson_note(info)
        # the nicknames at the presenter view's body type (attnviz.ui.present.setup)
        streamlit_private.nicknames_css()
        quiz.in_slot(_tally, info.code, r.teacher, quiz.titles(items, len(info.items)))
    st.divider()
    _teacher_tools(r, items, link)


def _teacher_tools(r: Room, items: list, link: str) -> None:
    """Under the tally: the answer keys, End, Leave, the projector's link, the teacher's
    own link and the questions with their answers."""
    info = r.info
    assert info is not None and r.teacher is not None
    c = st.columns([1, 1, 1, 1.2], vertical_alignment="center")
    c[0].download_button(
        _("Answer key (.md)"),
        exercises.answer_key_markdown(info.seed, items),
        file_name=f"attnviz-exercises-seed{info.seed}.md",
        mime="text/markdown",
        key="ex_key_md",
        on_click="ignore",  # a download does not rerun the page
        icon=":material/download:",
    )
    c[1].download_button(
        _("Answer key (.csv)"),
        exercises.answer_key_csv(items),
        file_name=f"attnviz-exercises-seed{info.seed}.csv",
        mime="text/csv",
        key="ex_key_csv",
        on_click="ignore",
        icon=":material/download:",
    )
    if not info.closed:
        c[2].button(
            _("End the class"),
            key="class_end",
            on_click=_close,
            args=(info.code, r.teacher),
            icon=":material/stop_circle:",
        )
    c[3].button(_("Leave the class view"), key="class_leave", on_click=leave)
    st.link_button(
        _("Project it: the join screen, then one question per slide"),
        f"{PAGE}?{CLASS_PARAM}={info.code}&{TEACHER_PARAM}={r.teacher}&present=1",
        icon=":material/co_present:",
        help=_(
            "Opens the class's slides for the projector (a second window or device); "
            "Reveal, the answer keys and End stay here."
        ),
    )
    with st.expander(
        ":material/key: " + _("Your teacher link (keep it private: it opens this view)")
    ):
        st.code(f"{link}&{TEACHER_PARAM}={r.teacher}", language=None, wrap_lines=True)
    with st.expander(":material/quiz: " + _("The questions with their answers")):
        for i, e in enumerate(items):
            st.markdown(f"**{i + 1}. {e.title}**")
            st.markdown(e.prompt)
            st.markdown(_("**Answer: {answer}**").format(answer=e.answer_text))


@st.fragment(run_every=timedelta(seconds=TALLY_EVERY))
def _tally(code: str, key: str, labels: list[str]) -> None:
    """The live tally: students, the bar chart, per question its counts, common wrong
    answers and Reveal. Reruns alone every TALLY_EVERY seconds."""
    problem = st.session_state.pop(ACTION_ERROR_KEY, None)
    if problem:
        st.error(problem, icon=":material/error:")
    try:
        tally = store().tally(code, key)
        students = store().students(code, key)
        names = store().nicknames(code, key)
        info = store().info(code)
    except classroom.ClassNotFound:
        st.error(_("This class has expired."), icon=":material/error:")
        return
    except STORE_DOWN as exc:
        st.warning(
            _("The class store is not answering ({error}); retrying.").format(
                error=type(exc).__name__
            )
        )
        return
    answers = sum(t["answered"] for t in tally.values())
    st.markdown(
        "## "
        + ngettext("{n} student", "{n} students", students).format(n=students)
        + " · "
        + ngettext("{n} answer", "{n} answers", answers).format(n=answers),
    )
    if names:  # at the presenter view's type (the style in teacher_view), black, as text
        extra = len(names) - 30
        more = _(" and {n} more").format(n=extra) if extra > 0 else ""
        with st.container(key="class_nicknames"):
            st.markdown(_("**Nicknames:** ") + ", ".join(plain_text(n) for n in names[:30]) + more)
    board(
        "class_tally_board",
        [("class_tally", viz.classroom.tally_figure(tally, labels, students), None)],
    )
    for i, t in tally.items():
        # one row, the button at its end as wide as its label in every language (a column
        # of a fixed share cut "Reveal the answer" short in Arabic); under the text if narrow
        with st.container(
            border=True,
            key=f"class_q{i}",
            horizontal=True,
            horizontal_alignment="distribute",
            vertical_alignment="center",
        ):
            common = ", ".join(
                f"{ui_text(a)} ×{n}" if a else _("(empty)") + f" ×{n}"
                for a, n in t["wrong_answers"][:WRONG_SHOWN]
            )
            st.markdown(
                _("**{question}**: {answered} answered, {right} right, {wrong} wrong").format(
                    question=labels[i], answered=t["answered"], right=t["right"], wrong=t["wrong"]
                )
                + (_(" · common wrong answers: {answers}").format(answers=common) if common else "")
            )
            if i in info.revealed:
                st.markdown(":material/visibility: " + _("revealed"), width="content")
            else:
                st.button(
                    _("Reveal"),
                    key=f"class_reveal{i}",
                    on_click=_reveal,
                    args=(code, key, i),
                    icon=":material/visibility:",
                )
