"""A fragment's click queued behind a slow full run, then lost to ``st.stop()``
(Streamlit 1.67). Driven by bench/lost_click.py; alone: ``streamlit run`` it, type a
name, press Enter and click "+1" at once: with ``STOP=1`` the count stays 0."""

import os
import time

import streamlit as st

st.session_state.setdefault("clicks", 0)


def plus_one() -> None:
    st.session_state.clicks += 1


@st.fragment
def counter() -> None:
    st.button("+1", key="plus", on_click=plus_one)
    st.markdown(f"clicks: {st.session_state.clicks}")


counter()
st.text_input("name", key="name")  # committing it reruns the whole page
if st.session_state.name:
    time.sleep(float(os.environ.get("FULL_RUN_S", "1.5")))  # a slow full run
if os.environ.get("STOP") == "1":
    st.stop()  # the page's last line: it stops nothing, yet the queued click is dropped
