"""A fragment's rerun queued behind a full run replaces the element after the fragment
(Streamlit 1.67). Driven by bench/vanishing_sibling.py; alone: ``streamlit run`` it, type
a name, press Enter and click "+1" within a second: "I come after the fragment" is gone.
``?slot=1``: the fragment is called inside a container of its own (attnviz's
``quiz.in_slot``), and nothing vanishes."""

import time

import streamlit as st

st.session_state.setdefault("clicks", 0)


def plus_one() -> None:
    st.session_state.clicks += 1


@st.fragment
def counter() -> None:
    st.button("+1", key="plus", on_click=plus_one)
    st.markdown(f"clicks: {st.session_state.clicks}")


st.text_input("name", key="name")  # committing it reruns the whole page
if st.session_state.name:
    time.sleep(float(st.query_params.get("slow", "1.5")))  # a slow full run ...
if st.query_params.get("slot") == "1":
    with st.container():
        counter()
else:
    counter()  # ... that draws the fragment at its end
st.markdown("I come after the fragment")
