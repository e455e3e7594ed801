"""A fragment's click queued behind a slow full run, then lost to ``st.stop()``
(Streamlit 1.67). Driven by bench/lost_click.py; alone: ``streamlit run`` it, open
``/?end=stop``, type a name, press Enter and click "+1" at once: the count stays 0.
``?end=`` how the full run ends: ``stop`` (``st.stop()``), ``raise`` (the exception
``st.stop()`` raises, without its stop request: attnviz's ``end_page``), ``rerun``
(``st.rerun()`` once: attnviz's ``page_guard``), else nothing."""

import time

import streamlit as st
from streamlit.runtime.scriptrunner import StopException

st.session_state.setdefault("clicks", 0)


def plus_one() -> None:
    st.session_state.clicks += 1


@st.fragment
def counter() -> None:
    st.button("+1", key="plus", on_click=plus_one)
    st.markdown(f"clicks: {st.session_state.clicks}")


counter()
st.text_input("name", key="name")  # committing it reruns the whole page
end = st.query_params.get("end", "")
if st.session_state.name:
    time.sleep(float(st.query_params.get("slow", "1.5")))  # a slow full run
    if end == "rerun" and st.session_state.get("reran_for") != st.session_state.name:
        st.session_state.reran_for = st.session_state.name
        st.rerun()
if end == "stop":
    st.stop()  # the page's last line: it stops nothing, yet the queued click is dropped
if end == "raise":
    raise StopException()  # ends the run the same way, but keeps the queued click
