"""A lesson played as a tour (``?lesson=<slug>&stop=<k>``): a bar above the page with the
stop's title, text and progress, Back and Next, its question answered in place, and a
summary after the last stop (docs/lessons.md).

- :func:`enter` opens the first stop's view for a link without ``stop=`` (``app.py``, before
  the sidebar).
- :func:`current` reads the link: the lesson (:func:`attnviz.ui.lesson_links.listed`), the
  stop (from 1; one past the last is the summary) and the answers so far; a ``?lesson=``
  that names no usable lesson is warned about, once per run (:func:`bar`).
- :func:`stop_url`: a stop's link, its page and settings with the tour's own parameters.
  Back and Next are links (the tour's state is the URL: a reload resumes, a link shared
  mid-tour opens the same stop).
- :func:`bar` draws the bar (``app.py``, before the page); :func:`ask` answers a stop's
  prediction on its page: a page's questions pass through :func:`attnviz.ui.predict.ask_room`,
  which hands them here first (the stop's ``kind`` picks one, its ``query``/``row`` is the
  one the page asks about: the stop's link sets it).
- A typed exercise (``question = { kind = "weight", seed = 3 }``) is asked in the bar.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlencode

import streamlit as st

from attnviz import i18n
from attnviz.classroom import exercises, lessons
from attnviz.i18n import _
from attnviz.ui import lesson_links, lesson_look, links, navlinks, present
from attnviz.ui.board import BELOW_KEY
from attnviz.ui.controls import DEFAULTS
from attnviz.ui.text import plain_text

PARAM, STOP_PARAM, ANSWERS_PARAM = "lesson", "stop", "answered"
#: The tour's own link parameters: kept across its stops, never a page's setting.
TOUR_PARAMS = (PARAM, STOP_PARAM, ANSWERS_PARAM)
#: Kept from the current link into every stop's (the shown language, the presenter view, a
#: teacher's live class: the lecture asks the room its questions, :func:`room_question`).
CARRIED = ("lang", "present", "class", "teacher")
CHOICE_KEY, TYPED_KEY = "tour_choice", "tour_typed"
#: Set by Check: the bar's links must be drawn again (see :func:`ask`).
RECORDED_KEY = "tour_recorded"
#: The query or row the stop's question is about (read by ``predict.query_on_screen``).
AIM_KEY = "tour_aim"
#: px a slide keeps under its charts for a stop's question (:func:`ask`: one popover button)
QUESTION_PX = 60


@dataclass(frozen=True)
class Tour:
    """A lesson on its way: ``index`` of its stop (from 0; ``len(lesson)``: the summary) and
    the answers so far (stop index -> right)."""

    lesson: lessons.Lesson
    index: int
    answers: dict[int, bool]

    @property
    def stop(self) -> lessons.Stop | None:
        return self.lesson.stops[self.index] if self.index < len(self.lesson) else None

    @property
    def at_summary(self) -> bool:
        return self.index >= len(self.lesson)


def shown(lesson: lessons.Lesson, text: str) -> str:
    """A lesson's text in the shown language: a shipped lesson's through the catalogs."""
    return _(text) if lesson.shipped and text else text


def _answers(raw: str | None) -> dict[int, bool]:
    out = {}
    for part in (raw or "").split("."):
        i, _sep, right = part.partition("-")
        if i.isdigit() and right in ("0", "1"):
            out[int(i) - 1] = right == "1"
    return out


def _answers_param(answers: dict[int, bool]) -> str:
    return ".".join(f"{i + 1}-{int(right)}" for i, right in sorted(answers.items()))


@st.cache_resource(ttl=30, show_spinner=False)
def _listed(env_value: str, lang: str) -> list[lessons.Listed]:
    """Every lesson (shipped and the teacher's), read at most every 30 s; ``lang``: the
    language of the errors' words. Shared, not copied per call (cache_data unpickles a copy:
    ~1 ms a call, several a run): the lessons are frozen, nothing changes them."""
    return lesson_links.listed({lessons.ENV: env_value})


def listed() -> list[lessons.Listed]:
    """Every lesson, shipped and the teacher's (``ATTNVIZ_LESSONS``), broken ones with errors."""
    return _listed(os.environ.get(lessons.ENV, ""), i18n.current())


def current() -> Tour | None | str:
    """The tour of this link; None without ``?lesson=``; the problem (a text) when it names
    no usable lesson."""
    slug = st.query_params.get(PARAM)
    if not slug:
        return None
    found = next((x for x in listed() if x.slug == slug), None)
    if found is None:
        return _("There is no lesson {name}: the Lessons page lists them.").format(name=repr(slug))
    if found.lesson is None:
        return _("The lesson {name} cannot be played: {error}").format(
            name=repr(slug), error=found.error
        )
    raw = str(st.query_params.get(STOP_PARAM, "1"))
    index = int(raw) - 1 if raw.isdigit() and int(raw) >= 1 else 0
    index = min(index, len(found.lesson))
    return Tour(found.lesson, index, _answers(st.query_params.get(ANSWERS_PARAM)))


def enter(files: dict[str, str]) -> None:
    """A lesson's link without its stop (``?lesson=intro``, typed or shared by hand) opens
    its first stop's view: the stop's page with its settings (``st.switch_page``), called
    before the sidebar draws a control from the link it came with. ``files``: each page's
    file by its slug."""
    if STOP_PARAM in st.query_params:
        return
    tour = current()
    page = tour.lesson.stops[0].page if isinstance(tour, Tour) else None
    if page in files:  # else no lesson, or one that cannot be played: bar() says why
        st.switch_page(files[page], query_params=stop_params(tour.lesson, 0, tour.answers))


def _is_default(key: str, raw: str, settings: dict[str, str]) -> bool:
    """Whether a stop's setting is its sidebar control's default
    (:func:`attnviz.ui.links.control_default`, with the stop's D). Left out of the stop's
    link: Next arrives by a history navigation, where a missing value is the default anyway,
    and Streamlit takes a default out of the address itself, one message a value, each
    making the browser's app draw itself again (issue 48: a stop change costs no more than
    a page switch)."""
    d = settings.get("D", str(DEFAULTS["D"]))
    d = int(d) if d.isdigit() and int(d) >= 1 else None  # None: a D the sidebar refuses
    if d is None and key == "heads":
        return False  # heads' default follows D
    default = links.control_default(key, d or DEFAULTS["D"])
    return default is not None and links.same(raw, default)


def stop_params(
    lesson: lessons.Lesson,
    index: int,
    answers: dict[int, bool] | None = None,
    present: bool | None = None,
) -> dict[str, str]:
    """The URL parameters of stop ``index`` (``len(lesson)``: the summary, on the last
    stop's page): its settings, the tour's parameters, the shown language and the presenter
    view (``present``: on or off; None: as in the current link)."""
    stop = lesson.stops[min(index, len(lesson) - 1)]
    params = {k: v for k, v in stop.settings.items() if not _is_default(k, v, stop.settings)}
    params |= {k: st.query_params[k] for k in CARRIED if k in st.query_params}
    if present is not None:
        params.pop("present", None)
        params |= {"present": "1"} if present else {}
    params |= {PARAM: lesson.slug, STOP_PARAM: str(index + 1)}
    if answers:
        params[ANSWERS_PARAM] = _answers_param(answers)
    return params


def stop_url(
    lesson: lessons.Lesson,
    index: int,
    answers: dict[int, bool] | None = None,
    present: bool | None = None,
) -> str:
    """The link of stop ``index``: its page and :func:`stop_params`."""
    stop = lesson.stops[min(index, len(lesson) - 1)]
    params = stop_params(lesson, index, answers, present)
    # the first page's address is the app's own ("/"): "/playground" is not one of its pages
    path = "" if stop.page == lesson_links.slugs()[0] else stop.page
    return f"./{path}?{urlencode(params)}"


def _changed(stop: lessons.Stop) -> bool:
    """Whether the student moved a control of the stop's view (a widget's value, else the
    link's: the URL drops a widget's default value)."""
    for key, value in stop.settings.items():
        if key == "step" and not present.presenting():
            continue  # the presenter view's step: every step is shown
        got = st.session_state[key] if key in st.session_state else st.query_params.get(key)
        if str(got).lower() != value.lower():
            return True
    return False


def announcement(tour: Tour) -> str:
    """What a screen reader is told on a stop change (``navlinks.js`` writes it into a live
    region when it changes): the stop, its number and title; after the last, the summary's
    count."""
    lesson = tour.lesson
    if tour.at_summary:
        asked = [i for i, s in enumerate(lesson.stops) if s.question]
        right = sum(tour.answers.get(i, False) for i in asked)
        text = _("**End of the lesson.** Questions answered right: {right} of {asked}.")
        return text.replace("**", "").format(right=right, asked=len(asked))
    return _("Stop {i} of {n}: {title}").format(
        i=tour.index + 1, n=len(lesson), title=shown(lesson, tour.stop.title)
    )


def _links(tour: Tour, page: str) -> None:
    lesson, i = tour.lesson, tour.index
    # on a slide a presentation remote's keys go through the lesson (after a page's steps)
    back, ahead = ("PageUp", "PageDown") if present.presenting() else ("", "")
    parts = []
    if i > 0:
        url = stop_url(lesson, i - 1, tour.answers)
        parts.append(navlinks.link_html(_("← Back"), url, key="back", shortcut=back))
    if not tour.at_summary:
        last = i == len(lesson) - 1
        label = _("Finish: the summary") if last else _("Next →")
        url = stop_url(lesson, i + 1, tour.answers)
        parts.append(navlinks.link_html(label, url, primary=True, key="next", shortcut=ahead))
        stop = tour.stop
        if page != stop.page or _changed(stop):
            url = stop_url(lesson, i, tour.answers)
            parts.append(navlinks.link_html(_("Back to the lesson's view"), url, key="view"))
    label, said = html.escape(_("Lesson")), html.escape(announcement(tour))
    # navlinks.js: the stop said to a screen reader, the progress kept in the browser
    st.html(  # no <style> here: the bar's CSS is an element of its own (bar)
        f'<nav class="tour-links" aria-label="{label}" data-attnviz-announce="{said}" '
        f'data-attnviz-lesson="{html.escape(lesson.slug)}">{"".join(parts)}</nav>'
    )


def _summary(tour: Tour) -> None:
    lesson = tour.lesson
    asked = [i for i, s in enumerate(lesson.stops) if s.question]
    right = sum(tour.answers.get(i, False) for i in asked)
    st.markdown(
        _("**End of the lesson.** Questions answered right: {right} of {asked}.").format(
            right=right, asked=len(asked)
        )
    )
    rows = []
    for i, s in enumerate(lesson.stops):
        mark = ""
        if i in tour.answers:
            mark = " ✓" if tour.answers[i] else " ✗"
        elif s.question:
            mark = " " + _("(not answered)")
        url, title = html.escape(stop_url(lesson, i, tour.answers)), shown(lesson, s.title)
        a = f'<a href="{url}" data-attnviz-nav target="_self">{html.escape(title)}</a>'
        rows.append(f"<li>{a}{mark}</li>")
    st.html(f'<ol class="tour-summary">{"".join(rows)}</ol>')


def _record(tour: Tour, right: bool) -> None:
    """on_click of Check: the answer goes into the link (Next and Back carry it)."""
    answers = dict(tour.answers) | {tour.index: right}
    st.query_params[ANSWERS_PARAM] = _answers_param(answers)
    st.session_state[RECORDED_KEY] = True


def _exercise(tour: Tour) -> None:
    q = tour.stop.question
    found = [e for e in exercises.generated(q.seed or 0, len(exercises.KINDS)) if e.kind == q.kind]
    if not found:
        st.info(_("This set has no {kind} question.").format(kind=q.kind))
        return
    e = found[0]
    st.session_state.pop(RECORDED_KEY, None)  # the bar's own Check: this run drew the links
    st.markdown(f"**{e.title}.** {shown(tour.lesson, q.prompt) or e.prompt}")
    if e.choices is not None:
        value = st.radio(_("Your answer"), e.choice_labels, index=None, key=TYPED_KEY)
        value = None if value is None else e.choices[e.choice_labels.index(value)]
    else:
        value = st.text_input(_("Your answer"), key=TYPED_KEY)
    _check(tour, value is not None and e.check(value), value, e.answer_shown, e.explanation)


def _check(tour: Tour, right: bool, value: object, answer: str, why: str = "") -> None:
    """Check, then the verdict, the answer and its explanation (once answered)."""
    if tour.index not in tour.answers:
        st.button(
            _("Check"), key="tour_check", type="primary", disabled=value in (None, ""),
            on_click=_record, args=(tour, right),
        )  # fmt: skip
        return
    if tour.answers[tour.index]:
        st.success(_("Right: {answer}.").format(answer=answer))
    else:
        st.error(_("Not this time: the answer is {answer}.").format(answer=answer))
    if why:
        st.markdown(why)


def _aim(tour: Tour | None, page: str) -> None:
    """The query (or row) the stop's prediction on ``page`` is about, for the pages without a
    query picker (:func:`attnviz.ui.predict.query_on_screen` reads :data:`AIM_KEY`; a page
    with one takes it from the stop's link, ``query=``); none without such a stop."""
    stop = tour.stop if tour is not None else None
    q = stop.question if stop is not None and stop.page == page else None
    aim = None if q is None or not q.predicted else (q.row if q.row is not None else q.query)
    if aim is None:
        st.session_state.pop(AIM_KEY, None)
    else:
        st.session_state[AIM_KEY] = aim


def ask(page: str, asks: list) -> bool:
    """A stop's prediction asked on its page (:func:`attnviz.ui.predict.ask_room` calls it
    with the page's questions): True if it drew it."""
    if st.session_state.pop(RECORDED_KEY, False):
        # Check was pressed inside the page's fragment (the playground's, step by step's):
        # that reran the fragment alone, and the bar above it still links without the answer
        st.rerun(scope="app")
    tour = current()
    if not isinstance(tour, Tour) or tour.stop is None:
        return False
    q = tour.stop.question
    if q is None or not q.predicted or tour.stop.page != page:
        return False
    found = next((a for a in asks if a.name == q.kind), None)
    if found is None:
        with st.container(border=True, key="tour_question"):
            st.warning(_("This view asks no question of the kind {kind}.").format(kind=q.kind))
        return True
    try:
        question = found.make()
    except ValueError as exc:
        with st.container(border=True, key="tour_question"):
            st.info(_("No single answer on this view: {why}.").format(why=exc))
        return True
    said = _("**Predict:** {prompt}").format(prompt=shown(tour.lesson, q.prompt) or question.prompt)
    # on a slide the question is one button under the chart (its choices in a popover, the
    # lecturer opens it when the room has answered aloud): the slide keeps the screen
    slide = present.presenting()
    box = (
        st.popover(said, key="tour_question")
        if slide
        else st.container(border=True, key="tour_question")
    )
    with box:
        if not slide:
            st.markdown(said)
        choice = st.radio(_("Your answer"), question.choices, index=None, key=CHOICE_KEY)
        right = choice is not None and question.choices.index(choice) == question.answer
        _check(tour, right, choice, question.choices[question.answer], question.why)
    return True


def room_question(page: str) -> tuple[str, str] | None:
    """The stop's prediction on ``page`` as the room is asked it when a class is running
    (:func:`attnviz.ui.predict.ask_room`: its Ask the room button first, marked as the
    stop's): its kind and the lesson's prompt ("": the kind's own); None without one."""
    tour = current()
    if not isinstance(tour, Tour) or tour.stop is None or tour.stop.page != page:
        return None
    q = tour.stop.question
    if q is None or not q.predicted:
        return None
    return q.kind, shown(tour.lesson, q.prompt)


def _slide_bar(tour: Tour, page: str) -> None:
    """The bar on a slide: one line (the lesson, the stop, its title, Back and Next), the
    stop's text in a popover (the lecturer says it); the slide keeps the screen."""
    lesson, stop = tour.lesson, tour.stop
    with st.container(border=True, key="tour_bar"):
        c1, c2, c3 = st.columns([5, 2, 3], vertical_alignment="center")
        # one line (the slide keeps the screen): the stop; the lesson's title in the popover.
        # Bold around the whole line, not inside {title}: a right-to-left catalog isolates the
        # title (U+2068 ... U+2069), and "**" between "؟" and U+2069 closes no bold
        said = _("Stop {i} of {n}: {title}").format(
            i=tour.index + 1, n=len(lesson), title=plain_text(shown(lesson, stop.title))
        )
        c1.markdown(f"**{said}**")
        with c2.popover(_("The stop's text")):
            st.caption(shown(lesson, lesson.title))
            if stop.text:
                st.markdown(shown(lesson, stop.text))
            if stop.look is not None and page == stop.page:
                st.caption(lesson_look.words(stop.look))
            if stop.question and not stop.question.predicted:
                _exercise(tour)
        with c3:
            _links(tour, page)


def _head(tour: Tour, at: int, page: str | None = None) -> str:
    """The bar's head as ONE Markdown block (a stop change redraws one element, not five):
    the lesson and the stop's number ("stop 3 of 11", the progress), and (``page`` given)
    the stop's title, its text (Markdown, LaTeX) and where to look."""
    lesson, n = tour.lesson, len(tour.lesson)
    # the lesson's words made plain before they go into the catalog's (its isolates kept)
    said = _("Lesson: {title} · stop {i} of {n}")
    parts = [f":gray[{said.format(title=plain_text(shown(lesson, lesson.title)), i=at, n=n)}]"]
    stop = tour.stop
    if page is not None and stop is not None:
        parts.append(f"**{plain_text(shown(lesson, stop.title))}**")
        if stop.text:
            parts.append(shown(lesson, stop.text))
        if stop.look is not None and page == stop.page:
            parts.append(f":gray[{lesson_look.words(stop.look)}]")
    return "\n\n".join(parts)


def bar(page: str, open_class: Callable[[], object | None]) -> None:
    """The lesson's bar above the page, or nothing without ``?lesson=``. ``open_class``: the
    teacher of a class open on this slide or None (:func:`attnviz.ui.predict.teacher`: its
    Ask the room box then takes the stop's question; else the bar's popover asks it)."""
    tour = current()
    _aim(tour if isinstance(tour, Tour) else None, page)  # once a run, before the page
    stop = tour.stop if isinstance(tour, Tour) else None
    here = stop is not None and stop.page == page
    lesson_look.show(stop.look if here else None)
    # a stop pinned to one step of its page: PageDown / PageUp are the lesson's Next / Back
    st.session_state[present.PINNED_KEY] = here and stop.step is not None
    # a slide's charts leave room for the stop's question under them (without a class: with
    # one, the page's Ask the room box is drawn there instead)
    asks = here and stop.question is not None and stop.question.predicted
    st.session_state[BELOW_KEY] = QUESTION_PX if asks and open_class() is None else 0
    if tour is None:
        return
    if isinstance(tour, str):
        st.warning(tour, icon=":material/warning:")
        return
    # the bar's CSS: style only (no space taken) and the same at every stop, so a stop change
    # does not put a new style sheet into the document (a whole-page restyle in the browser)
    st.html(navlinks.CSS)
    if present.presenting() and not tour.at_summary:
        _slide_bar(tour, page)
        return
    lesson = tour.lesson
    n = len(lesson)
    with st.container(border=True, key="tour_bar"):
        at = min(tour.index + 1, n)
        if tour.at_summary:
            st.markdown(_head(tour, at))
            _summary(tour)
        else:
            stop = tour.stop
            st.markdown(_head(tour, at, page))
            if stop.question and not stop.question.predicted:
                _exercise(tour)
            elif stop.question and page != stop.page:
                st.caption(_("This stop's question is asked on its own page."))
        _links(tour, page)
