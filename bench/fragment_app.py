"""Two Streamlit 1.67 reproductions on one tiny page (bench/lost_click.py drives both): a
fragment ("+1", a click counter) beside a text input whose commit reruns the whole page,
slowly (``?slow=`` s, 1.5).

``?case=lost`` (the default): a fragment's click queued behind the slow full run, then lost
to ``st.stop()``. ``?end=`` how the full run ends: ``stop`` (``st.stop()``), ``raise`` (the
exception ``st.stop()`` raises, without its stop request: attnviz's ``end_page``),
``rerun`` (``st.rerun()`` once: attnviz's ``page_guard``), else nothing.

``?case=sibling`` (``--sibling``): a fragment's rerun queued behind a full run replaces the
element after the fragment; ``&slot=1``: the fragment in a container of its own
(attnviz's ``quiz.in_slot``), and nothing vanishes."""

import time

import streamlit as st
from streamlit.runtime.scriptrunner import StopException

st.session_state.setdefault("clicks", 0)
slow = float(st.query_params.get("slow", "1.5"))


def plus_one() -> None:
    st.session_state.clicks += 1


@st.fragment
def counter() -> None:
    st.button("+1", key="plus", on_click=plus_one)
    st.markdown(f"clicks: {st.session_state.clicks}")


if st.query_params.get("case") == "sibling":
    st.text_input("name", key="name")  # committing it reruns the whole page
    if st.session_state.name:
        time.sleep(slow)  # a slow full run ...
    if st.query_params.get("slot") == "1":
        with st.container():
            counter()
    else:
        counter()  # ... that draws the fragment at its end
    st.markdown("I come after the fragment")
else:
    counter()
    st.text_input("name", key="name")  # committing it reruns the whole page
    end = st.query_params.get("end", "")
    if st.session_state.name:
        time.sleep(slow)  # a slow full run
        if end == "rerun" and st.session_state.get("reran_for") != st.session_state.name:
            st.session_state.reran_for = st.session_state.name
            st.rerun()
    if end == "stop":
        st.stop()  # the page's last line: it stops nothing, yet the queued click is dropped
    if end == "raise":
        raise StopException()  # ends the run the same way, but keeps the queued click
