"""The exercise cards of the Exercises page (``pages/exercises.py``): a question, an
answer box, **Check**, then the verdict (right: the explanation; wrong: the hint).

Used alone (each student's answers stay in their browser) and by a student in a live
class (:mod:`attnviz.ui.live`): then each check is also stored (``submit``), a question
the teacher revealed shows its answer, and there is no "Show the answer" button.

The session keeps, per set (``marker``: the seed, or the class and student):
``ex_results`` (item -> "right" | "wrong" | "shown") and ``ex_errors`` (item -> why a
check could not be stored). State changes happen in ``on_click`` callbacks.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import streamlit as st

from attnviz import exercises

RESULTS_KEY = "ex_results"
ERRORS_KEY = "ex_errors"
MARKER_KEY = "ex_seed"

#: ``submit(item, answer) -> right``: stores a check (a live class); ValueError if refused.
Submit = Callable[[int, str], bool]


@st.cache_data(max_entries=16, show_spinner=False)
def generate(seed: int, count: int) -> list[exercises.Exercise]:
    return exercises.generate(seed=seed, count=count)


def in_slot(fragment: Callable[..., object], *args: object) -> None:
    """Call ``fragment`` (an ``st.fragment``) inside a container of its own, its slot.

    Works around a Streamlit 1.67 bug: when a fragment's rerun (a click, its own timer)
    waits behind a full run, the start of the fragment's run drops that full run's
    not-yet-sent messages of the fragment; the browser then removes the fragment's old
    block as stale at the end of the full run, the page's later elements move up one
    place, and the fragment's new block lands on the next element's place, replacing
    it: a question card, the Reveal button or the open question vanished until the next
    full run (bench/vanishing_sibling.py). In a slot of its own the fragment has no
    sibling to replace. docs/architecture.md, "No click is lost"."""
    with st.container():
        fragment(*args)


def results() -> dict[int, str]:
    return st.session_state.setdefault(RESULTS_KEY, {})


def _errors() -> dict[int, str]:
    return st.session_state.setdefault(ERRORS_KEY, {})


def clear(count: int) -> None:
    """Forget the answers typed and checked (another set)."""
    for i in range(count):
        st.session_state.pop(f"ex{i}", None)
    st.session_state[RESULTS_KEY] = {}
    st.session_state[ERRORS_KEY] = {}


def use_set(marker: Hashable, count: int) -> bool:
    """Start over if the set changed (another seed, another class); True if it did."""
    if st.session_state.get(MARKER_KEY) == marker:
        return False
    clear(count)
    st.session_state[MARKER_KEY] = marker
    return True


def restore(items: list[exercises.Exercise], stored: dict[int, tuple[str, bool]]) -> None:
    """Show a student's stored answers again (a new session, e.g. on another replica):
    the answer in its box and its verdict. Before the widgets are drawn."""
    res = results()
    for i, (answer, right) in stored.items():
        if not 0 <= i < len(items):
            continue
        item = items[i]
        if item.choices and answer not in item.choices:
            continue
        st.session_state[f"ex{i}"] = answer
        res[i] = "right" if right else "wrong"


def score(items: list[exercises.Exercise]) -> int:
    return sum(v == "right" for v in results().values())


def _check(i: int, item: exercises.Exercise, submit: Submit | None) -> None:
    """on_click of Check: the verdict, and the stored answer in a live class."""
    value = st.session_state.get(f"ex{i}")
    res = results()
    if res.get(i) == "shown":
        return
    _errors().pop(i, None)
    empty = value is None or not str(value).strip()
    if submit is None or empty:  # nothing typed: wrong, and nothing sent
        res[i] = "right" if item.check(value) else "wrong"
        return
    try:
        res[i] = "right" if submit(i, str(value)) else "wrong"
    except ValueError as exc:  # refused by the class store: say why
        _errors()[i] = str(exc)
        res.pop(i, None)


def _show(i: int) -> None:
    results()[i] = "shown"


def cards(
    items: list[exercises.Exercise],
    *,
    submit: Submit | None = None,
    revealed: frozenset[int] = frozenset(),
    fragments: bool = False,
) -> None:
    """One bordered card per question. ``submit``: store each check (a live class; no
    "Show the answer" then, the teacher reveals); ``revealed``: items whose answer and
    explanation the teacher revealed. ``fragments``: each card is a fragment, so that a
    check reruns its card only (a live class: hundreds of students checking at once)."""
    for i, item in enumerate(items):
        if fragments:
            in_slot(_card_fragment, i, item, submit, i in revealed)
        else:
            _card(i, item, submit, i in revealed)


def _card(i: int, item: exercises.Exercise, submit: Submit | None, revealed: bool) -> None:
    state, errors = results().get(i), _errors()
    with st.container(border=True, key=f"ex{i}_card"):
        st.markdown(f"#### {i + 1}. {item.kind.capitalize()}")
        st.markdown(item.prompt)
        c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
        if item.choices:
            c1.radio("Your answer", item.choices, index=None, key=f"ex{i}", horizontal=True)
        else:
            c1.text_input(
                "Your answer",
                key=f"ex{i}",
                placeholder="(4, 2)" if item.kind == "shape" else "a number",
            )  # no max_chars: a live class's store refuses a long answer and says so
        c2.button("Check", key=f"ex{i}_check", on_click=_check, args=(i, item, submit))
        if i in errors:
            st.error(f"Not sent: {errors[i]}", icon=":material/error:")
        if state == "right":
            st.success(f"Right: {item.answer_text}.", icon=":material/check_circle:")
            st.markdown(item.explanation)
        elif state == "wrong":
            st.error("Not quite. Hint: " + item.hint, icon=":material/lightbulb:")
            if submit is None:
                st.button("Show the answer", key=f"ex{i}_show", on_click=_show, args=(i,))
        elif state == "shown":
            st.info(f"Answer: **{item.answer_text}**", icon=":material/visibility:")
            st.markdown(item.explanation)
        if revealed and state != "right":
            st.info(
                f"Revealed by the teacher: the answer is **{item.answer_text}**",
                icon=":material/visibility:",
            )
            st.markdown(item.explanation)


_card_fragment = st.fragment(_card)
