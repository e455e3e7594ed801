"""The plain two-page comparison app for bench/page_switch.py (bench/plain_charts.py).

streamlit run bench/plain_pages.py
"""

import streamlit as st

from bench.plain_charts import heatmaps, sidebar


def charts(page: str) -> None:
    st.title(page)
    ss = st.session_state
    heatmaps(ss.N, ss.D, ss.heads, ss.seed, ss.scale, ss.mask, key=page)


def page_one() -> None:
    charts("Page one")


def page_two() -> None:
    charts("Page two")


nav = st.navigation(
    [
        st.Page(page_one, title="Page one", url_path="one", default=True),
        st.Page(page_two, title="Page two", url_path="two"),
    ]
)
sidebar()
nav.run()
