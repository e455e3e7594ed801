"""Exercises: predict a number of attention on paper, then check it (attnviz.exercises)."""

import random

import streamlit as st

from attnviz import exercises, ui

COUNT = 8

ui.page_guard()
ui.intro(
    "Exercises: predict, then check",
    "Work each question out on paper (the numbers are small on purpose), type your answer "
    "and press **Check**. The sidebar's **seed** chooses the set: a link with `?seed=…` "
    "gives a whole class the same questions. Count rows and columns from 0.",
)


@st.cache_data(max_entries=16, show_spinner=False)
def generate(seed: int) -> list[exercises.Exercise]:
    return exercises.generate(seed=seed, count=COUNT)


def _results() -> dict[int, str]:
    return st.session_state.setdefault("ex_results", {})


def _check(i: int, item: exercises.Exercise) -> None:
    value = st.session_state.get(f"ex{i}")
    if _results().get(i) == "shown":
        return
    _results()[i] = "right" if item.check(value) else "wrong"


def _show(i: int) -> None:
    _results()[i] = "shown"


def _clear() -> None:
    for i in range(COUNT):
        st.session_state.pop(f"ex{i}", None)
    st.session_state["ex_results"] = {}


def _new_set() -> None:
    # a callback runs before the widgets: setting the bound seed control here is safe,
    # and Streamlit writes it to the URL
    old = int(st.session_state.get("seed", 0))
    new = old
    while new == old:
        new = random.randint(0, 9999)
    st.session_state["seed"] = new  # the page forgets the old answers: another seed


seed = int(st.session_state.get("seed", 0) or 0)
if st.session_state.get("ex_seed") != seed:  # another set: forget the old answers
    _clear()
    st.session_state["ex_seed"] = seed
items = generate(seed)
results = _results()

right = sum(v == "right" for v in results.values())
top = st.columns([2, 1, 1, 1], vertical_alignment="center")
top[0].markdown(f"### Score: {right} / {len(items)} right  ·  seed {seed}")
top[1].button("New exercises", key="ex_new", on_click=_new_set, icon=":material/casino:")
top[2].download_button(
    "Answer key (.md)",
    exercises.answer_key_markdown(seed, items),
    file_name=f"attnviz-exercises-seed{seed}.md",
    mime="text/markdown",
    key="ex_key_md",
    on_click="ignore",  # a download does not rerun the page
    icon=":material/download:",
)
top[3].download_button(
    "Answer key (.csv)",
    exercises.answer_key_csv(items),
    file_name=f"attnviz-exercises-seed{seed}.csv",
    mime="text/csv",
    key="ex_key_csv",
    on_click="ignore",  # a download does not rerun the page
    icon=":material/download:",
)

for i, item in enumerate(items):
    state = results.get(i)
    with st.container(border=True):
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
            )
        c2.button("Check", key=f"ex{i}_check", on_click=_check, args=(i, item))
        if state == "right":
            st.success(f"Right: {item.answer_text}.", icon=":material/check_circle:")
            st.markdown(item.explanation)
        elif state == "wrong":
            st.error("Not quite. Hint: " + item.hint, icon=":material/lightbulb:")
            st.button("Show the answer", key=f"ex{i}_show", on_click=_show, args=(i,))
        elif state == "shown":
            st.info(f"Answer: **{item.answer_text}**", icon=":material/visibility:")
            st.markdown(item.explanation)
