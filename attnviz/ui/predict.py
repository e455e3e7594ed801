"""Predict, then reveal on any page: the teacher asks the room about the view on the
projector, the students answer on their devices, the projector shows the tally, then the
answer is outlined on the chart itself.

- :func:`teacher` reads the link: the presenter view (``?present=1``) of a teacher whose
  class is open (``&class=CODE&teacher=KEY``), else None (nothing is drawn).
- :func:`ask_room` (teacher): **Ask the room** buttons (:class:`Ask`) for the view on
  screen (the questions and answers come from :mod:`attnviz.classroom.predict`; each page's set is
  in :mod:`attnviz.ui.asks`), then the live tally (a fragment that reruns every
  :data:`TALLY_EVERY` s) and **Reveal**. :func:`ask_box`: the playground's set ("Which
  key does query i attend to most?", "Which head looks at the previous token?").
- :func:`outline` (teacher): the revealed answer of this page and view, outlined on the
  page's weights chart (:func:`attnviz.viz.classroom.outline_cells`) by
  :func:`class_overlay`, the board's overlay provider: a page names its chart with
  ``overlay=ui.Overlay(slug, view, head, ...)`` and never imports this module.
- The students answer on the class's light page (:mod:`attnviz.classroom.web`, ``/join``): the open
  question with its choices, **Send**, and after the reveal the answer.

State changes happen in ``on_click`` callbacks.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta

import numpy as np
import streamlit as st

from attnviz import classroom, viz
from attnviz.classroom import predict
from attnviz.classroom.predict import Question
from attnviz.classroom.schema import ViewQuestion
from attnviz.i18n import _, ngettext
from attnviz.ui import address, live, pages, present, quiz, tour
from attnviz.ui.board import Painter, board
from attnviz.ui.text import plain_text
from attnviz.viz.style import pool_factor

TALLY_EVERY = live.TALLY_EVERY
ERROR_KEY = "predict_error"
STORE_DOWN = classroom.STORE_ERRORS


@dataclass(frozen=True)
class Teacher:
    """The teacher's open class of this link."""

    code: str
    key: str


def teacher() -> Teacher | None:
    """The teacher of an open class in the presenter view, else None."""
    if not present.presenting():
        return None
    code = st.query_params.get(live.CLASS_PARAM)
    key = st.query_params.get(live.TEACHER_PARAM)
    if not code or not key:
        return None
    try:
        if not live.store().teaches(code, key):  # one read a call: asked on every run
            return None
    except (ValueError, *STORE_DOWN):
        return None
    return Teacher(classroom.normalize_code(code), str(key))


plain = plain_text  # Markdown drawn literally as ordinary text (attnviz.ui.text)


def view_digest(settings: object) -> str:
    """What a view question's view is (the settings that make the chart): a short hash."""
    return hashlib.sha256(repr(settings).encode()).hexdigest()[:32]


def _question(code: str) -> ViewQuestion | None:
    try:
        return live.store().question(code)
    except (ValueError, *STORE_DOWN):
        return None


def outline(page: str, settings: object) -> ViewQuestion | None:
    """The revealed view question of this page (its slug in :data:`attnviz.ui.pages.PAGES`)
    and view (the teacher's projector), whose answer the page outlines; None otherwise."""
    page = pages.page(page).slug  # a slug not in the table fails here, on every run
    t = teacher()
    q = None if t is None else _question(t.code)
    if q is None or not q.revealed or q.page != page or q.view != view_digest(settings):
        return None
    return q


def outlined(
    figure,
    q: ViewQuestion | None,
    head: int,
    layout: str,
    n: int,
    chart: int = 0,
    span: tuple[float, float] | None = None,
):
    """``figure`` (head ``head``'s weights, or chart ``chart`` of a page's pair) with
    ``q``'s answer outlined when it shows it: a cell, the previous-token cells, or a whole
    row from ``span[0]`` to ``span[1]`` (default: the N keys of a weights chart)."""
    if q is None or q.detail.get("head", head) != head or q.detail.get("chart", chart) != chart:
        return figure
    if q.kind in predict.ROW_KINDS:
        b = pool_factor(n)
        keys = span or (-b / 2, (n - 1) // b * b + b / 2)
        row = predict.answer_row(q.kind, q.detail)
        return viz.classroom.outline_row(figure, row, keys, layout, n)
    cells = predict.answer_cells(q.kind, q.detail, n)
    return viz.classroom.outline_cells(figure, cells, layout, n)


def class_overlay(page: str, view: object) -> Painter | None:
    """The board's overlay provider (:func:`attnviz.ui.board.overlay_provider`, set by
    :mod:`attnviz.ui`): for the revealed view question of ``page`` and ``view``
    (:func:`outline`), what outlines its answer on a chart (:func:`outlined`, told the
    chart's head, layout, N, pair index and span by its :class:`~attnviz.ui.board.Overlay`);
    None when there is nothing to outline."""
    q = outline(page, view)
    if q is None:
        return None
    return lambda fig, o: outlined(fig, q, o.head, o.layout, o.n, chart=o.chart, span=o.span)


# --------------------------------------------------------------------------- teacher


#: The query picker of :func:`ask_room` on a page that has none of its own.
QUERY_KEY = "predict_query"
LAST_QUERY_KEY = "predict_query_last"


def _keep_query() -> None:
    """on_change of :func:`ask_room`'s picker: its value outlives the runs that do not draw
    it (while a question is open), so the next question starts from the same query."""
    st.session_state[LAST_QUERY_KEY] = st.session_state[QUERY_KEY]


def query_on_screen(n: int, key: str = "query") -> int:
    """The page's query picker's value (``key``) before the picker is drawn: its state,
    else its link value (:func:`ask_room`'s: its last value), else 0; clamped to the N
    tokens."""
    # a lesson's stop asks about its own query (attnviz.ui.tour), else the picker's last
    fallback = st.session_state.get(tour.AIM_KEY, st.session_state.get(LAST_QUERY_KEY, 0))
    fallback = fallback if key == QUERY_KEY else 0
    raw = st.session_state.get(key, st.query_params.get(key, fallback))
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = 0
    return min(max(value, 0), n - 1)


def _ask(t: Teacher, page: str, settings: object, q: Question) -> None:
    base = address.link().url  # this page's address, as the room opens it
    link = present.class_link(st.query_params.to_dict(), base)
    try:
        live.store().ask(
            t.code, t.key, page=page, link=link[:classroom.LINK_MAX], view=view_digest(settings),
            kind=q.kind, prompt=q.prompt, choices=list(q.choices), answer=q.answer,
            detail=q.detail,
        )  # fmt: skip
    except (ValueError, PermissionError, *STORE_DOWN) as exc:
        st.session_state[ERROR_KEY] = _("The question was not asked: {error}").format(error=exc)


def _reveal(t: Teacher, qid: int) -> None:
    try:
        live.store().reveal_question(t.code, t.key, qid)
    except (ValueError, PermissionError, *STORE_DOWN) as exc:
        st.session_state[ERROR_KEY] = _("The answer was not revealed: {error}").format(error=exc)


@dataclass(frozen=True)
class Ask:
    """One **Ask the room** button: its label, its key (``predict_ask_<name>``) and what
    makes the question (a ValueError greys the button out, the tooltip saying why)."""

    label: str
    name: str
    make: Callable[[], Question]


def top_key_ask(
    weights: np.ndarray,
    head: int,
    query: int,
    labels: Sequence[str],
    mask: np.ndarray | None = None,
    name: str = "",
) -> Ask:
    """ "Which key does query ``query`` attend to most?" in head ``head`` of ``weights``
    (H, N, M); under ``mask`` (N, M) the hidden keys are not choices. ``name``: the mask's
    (or variant's) name, said in the button's label and, with a mask, in the prompt."""
    label = (
        _("Which key does query {query} attend to most ({name})?").format(query=query, name=name)
        if name
        else _("Which key does query {query} attend to most?").format(query=query)
    )
    where = "" if mask is None else _(", {name} mask").format(name=name)
    return Ask(
        label,
        "top_key",
        lambda: predict.top_key(weights, head, query, labels, mask=mask, where=where),
    )


def _ask_button(
    ask: Ask, t: Teacher, page: str, settings: object, lesson: tuple[str, str] | None = None
) -> None:
    """A button asking ``ask.make()``; disabled with the reason if the view has no single
    answer. ``lesson``: a lesson stop's question (kind, prompt): its button is the primary
    one, says so, and asks the lesson's prompt (:func:`attnviz.ui.tour.room_question`)."""
    key = f"predict_ask_{ask.name}"
    label, kind = ask.label, "secondary"
    if lesson is not None and lesson[0] == ask.name:
        label, kind = _("{question} (this stop's question)").format(question=ask.label), "primary"
    try:
        q = ask.make()
    except ValueError as exc:
        st.button(label, key=key, disabled=True, help=_("Not on this view: {why}.").format(why=exc))
        return
    if kind == "primary" and lesson[1]:
        q = replace(q, prompt=lesson[1])
    st.button(
        label, key=key, on_click=_ask, args=(t, page, settings, q), icon=":material/campaign:",
        type=kind,
    )  # fmt: skip


def ask_room(
    page: str,
    settings: object,
    asks: list[Ask],
    pick_query: int = 0,
    pick_label: str | None = None,
) -> None:
    """The teacher's **Ask the room** box under the chart (presenter view, open class):
    one button per question of ``asks`` about the view ``settings`` on screen, then the
    open question's tally and **Reveal**. ``page``: the page's slug in
    :data:`attnviz.ui.pages.PAGES` (the question's page in the class store).
    ``pick_query=N``: a query picker (key :data:`QUERY_KEY`, read by
    :func:`query_on_screen`) for a page that has none; ``pick_label``: its label, translated
    (default "query i of the question")."""
    page = pages.page(page).slug  # a slug not in the table fails here, on every run
    t = teacher()
    if t is None:
        tour.ask(page, asks)  # a lesson's stop asks one of them in place (attnviz.ui.tour)
        return
    with st.container(border=True, key="predict_box"):
        problem = st.session_state.pop(ERROR_KEY, None)
        if problem:
            st.error(problem, icon=":material/error:")
        q = _question(t.code)
        if q is not None and q.page == page and not q.revealed:
            st.markdown(_("**Asked the room:** {prompt}").format(prompt=plain(q.prompt)))
            quiz.in_slot(_tally, t, q.qid, q.choices)  # the Reveal below stays put
            st.button(
                _("Reveal"), key="predict_reveal", on_click=_reveal, args=(t, q.qid),
                type="primary", icon=":material/visibility:",
            )  # fmt: skip
            return
        if q is not None and q.page == page and q.revealed:
            _revealed(t, q, settings)
        st.markdown(
            _(
                "**Ask the room** about this view (class **{code}**: students answer on the "
                "class's page, you see the tally here, then reveal the answer on the chart):"
            ).format(code=t.code)
        )
        cols = st.columns([1.2] * bool(pick_query) + [3] * len(asks), vertical_alignment="bottom")
        if pick_query:
            cols.pop(0).selectbox(
                pick_label or _("query i of the question"), list(range(pick_query)), key=QUERY_KEY,
                index=query_on_screen(pick_query, QUERY_KEY), on_change=_keep_query,
            )  # fmt: skip
        lesson = tour.room_question(page)  # a lesson's stop: its question first
        first = sorted(asks, key=lambda a: lesson is None or a.name != lesson[0])
        for col, ask in zip(cols, first, strict=True):
            with col:
                _ask_button(ask, t, page, settings, lesson)


def ask_box(page: str, settings: object, weights: np.ndarray, head: int, query: int,
            labels: list[str]) -> None:  # fmt: skip
    """:func:`ask_room` with the playground's two questions. ``weights`` (H, N, M): the
    view's; ``head``, ``query``: the ones on screen."""
    ask_room(
        page,
        settings,
        [
            top_key_ask(weights, head, query, labels),
            Ask(
                _("Which head looks at the previous token?"), "previous_head",
                lambda: predict.previous_head(weights),
            ),
        ],
    )  # fmt: skip


def _revealed(t: Teacher, q: ViewQuestion, settings: object) -> None:
    """The last revealed question: its answer and the final tally."""
    try:
        counts = live.store().question_tally(t.code, t.key, q.qid)
    except (ValueError, PermissionError, *STORE_DOWN):
        counts = [0] * len(q.choices)
    right = counts[q.answer]
    here = q.view == view_digest(settings)
    where = (
        _("outlined on the chart")
        if here
        else _("asked about another view: return to it to see the outline")
    )
    head = q.choices[q.answer]
    if q.kind == "previous_head" and here:
        where = _("its previous-token cells are outlined on {head}'s chart").format(head=head)
    if q.kind == "induction_head" and here:
        where = _("the cells after each earlier copy are outlined on {head}'s chart").format(
            head=head
        )
    if q.kind in predict.ROW_KINDS and here:
        where = _("row {query} is outlined on its chart").format(query=q.detail["query"])
    st.success(
        _("{prompt} **{answer}** ({where}).").format(
            prompt=plain(q.prompt), answer=plain(q.choices[q.answer]), where=where
        )
        + " "
        + ngettext(
            "{right} of {n} predicted it.", "{right} of {n} predicted it.", sum(counts)
        ).format(right=right, n=sum(counts)),
        icon=":material/check_circle:",
    )


@st.fragment(run_every=timedelta(seconds=TALLY_EVERY))
def _tally(t: Teacher, qid: int, choices: tuple[str, ...]) -> None:
    """The live tally of the open question; reruns alone every TALLY_EVERY seconds."""
    try:
        counts = live.store().question_tally(t.code, t.key, qid)
    except (ValueError, PermissionError, *STORE_DOWN) as exc:
        st.warning(
            _("The class store is not answering ({error}); retrying.").format(
                error=type(exc).__name__
            )
        )
        return
    total = sum(counts)
    st.markdown("## " + ngettext("{n} answer", "{n} answers", total).format(n=total))
    board(
        "predict_tally_board",
        [("predict_tally", viz.classroom.choice_tally_figure(choices, counts), None)],
    )
