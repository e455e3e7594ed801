"""The exercise cards of the Exercises page (``pages/exercises.py``): a question, an
answer box, **Check**, then the verdict (right: the explanation; wrong: the hint).

Each student's answers stay in their browser session (a live class's students answer on
the class's light page, :mod:`attnviz.classroom.web`). The session keeps, per set (``marker``: the
seed): ``ex_results`` (item -> "right" | "wrong" | "shown"). State changes happen in
``on_click`` callbacks.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from contextlib import nullcontext

import streamlit as st

from attnviz.classroom import exercises
from attnviz.i18n import _

RESULTS_KEY = "ex_results"
MARKER_KEY = "ex_seed"


def generate(seed: int, count: int, items: tuple[str, ...] = ()) -> list[exercises.Exercise]:
    """The set of ``seed`` (a lesson's class: its ``items`` first), in the shown language
    (its prompts, hints and explanations): the one kept per process and language by
    :func:`attnviz.classroom.exercises.of_class`, the same the live class grades with."""
    return list(exercises.of_class(seed, count, items))


def titles(items: list[exercises.Exercise], from_lesson: int = 0) -> list[str]:
    """ "1. One attention weight", one per item; the first ``from_lesson`` (a lesson's
    questions in a class started from it) marked as the lesson's."""
    return [
        _("{n}. {title} (lesson)").format(n=i + 1, title=e.title)
        if i < from_lesson
        else f"{i + 1}. {e.title}"
        for i, e in enumerate(items)
    ]


def in_slot(fragment: Callable[..., object], *args: object) -> None:
    """Call ``fragment`` (an ``st.fragment``) inside a container of its own, its slot.

    Works around a Streamlit 1.67 bug: when a fragment's rerun (a click, its own timer)
    waits behind a full run, the start of the fragment's run drops that full run's
    not-yet-sent messages of the fragment; the browser then removes the fragment's old
    block as stale at the end of the full run, the page's later elements move up one
    place, and the fragment's new block lands on the next element's place, replacing
    it: a question card, the Reveal button or the open question vanished until the next
    full run (bench/lost_click.py --sibling). In a slot of its own the fragment has no
    sibling to replace. docs/architecture.md, "No click is lost"."""
    with st.container():
        fragment(*args)


def results() -> dict[int, str]:
    return st.session_state.setdefault(RESULTS_KEY, {})


def clear(count: int) -> None:
    """Forget the answers typed and checked (another set)."""
    for i in range(count):
        st.session_state.pop(f"ex{i}", None)
    st.session_state[RESULTS_KEY] = {}


def use_set(marker: Hashable, count: int) -> bool:
    """Start over if the set changed (another seed); True if it did."""
    if st.session_state.get(MARKER_KEY) == marker:
        return False
    clear(count)
    st.session_state[MARKER_KEY] = marker
    return True


def score(items: list[exercises.Exercise]) -> int:
    return sum(v == "right" for v in results().values())


def _check(i: int, item: exercises.Exercise) -> None:
    """on_click of Check: the verdict."""
    if results().get(i) == "shown":
        return
    results()[i] = "right" if item.check(st.session_state.get(f"ex{i}")) else "wrong"


def _show(i: int) -> None:
    results()[i] = "shown"


def cards(items: list[exercises.Exercise], only: int | None = None) -> None:
    """One bordered card per question. ``only``: that question's card alone, a slide's:
    the question on the left, the verdict and the worked answer on the right (under the
    question they ran past the screen's bottom edge). On slides, an answer typed and not
    yet checked is kept while other questions' slides show (Streamlit forgets the value of
    a widget it does not draw in a run; set again here, it stays)."""
    if only is not None:
        for i in range(len(items)):
            if f"ex{i}" in st.session_state:
                st.session_state[f"ex{i}"] = st.session_state[f"ex{i}"]
    for i, item in enumerate(items):
        if only is None:
            _card(i, item)
        elif i == only:
            _card(i, item, side=True)


def _card(i: int, item: exercises.Exercise, side: bool = False) -> None:
    state = results().get(i)
    with st.container(border=True, key=f"ex{i}_card"):
        # the normal page: one under the other in the card, as before
        question, answer = st.columns(2, gap="large") if side else (nullcontext(),) * 2
        with question:
            _question(i, item)
        with answer:
            _verdict(i, item, state)


def _question(i: int, item: exercises.Exercise) -> None:
    """A card's question, its answer box and Check."""
    st.markdown(f"### {i + 1}. {item.title}")
    st.markdown(item.prompt)
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    if item.choices:
        c1.radio(
            _("Your answer"),
            item.choices,
            index=None,
            key=f"ex{i}",
            horizontal=True,
            format_func=_,  # the choices are the answer's values (English), shown translated
        )
    else:
        c1.text_input(
            _("Your answer"),
            key=f"ex{i}",
            placeholder="(4, 2)" if item.kind in exercises.SHAPE_KINDS else _("a number"),
        )
    c2.button(_("Check"), key=f"ex{i}_check", on_click=_check, args=(i, item))


def _verdict(i: int, item: exercises.Exercise, state: str | None) -> None:
    """A card's verdict after Check, and the worked answer."""
    if state == "right":
        st.success(
            _("Right: {answer}.").format(answer=item.answer_shown),
            icon=":material/check_circle:",
        )
        st.markdown(item.explanation)
    elif state == "wrong":
        st.error(_("Not quite. Hint: ") + item.hint, icon=":material/lightbulb:")
        st.button(_("Show the answer"), key=f"ex{i}_show", on_click=_show, args=(i,))
    elif state == "shown":
        st.info(
            _("Answer: **{answer}**").format(answer=item.answer_shown),
            icon=":material/visibility:",
        )
        st.markdown(item.explanation)
