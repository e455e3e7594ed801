"""The plain two-page comparison app for bench/page_switch.py (bench/plain_charts.py).

streamlit run bench/plain_pages.py
"""

from functools import partial

import streamlit as st

from bench.plain_charts import heatmaps, sidebar


def charts(page: str) -> None:
    st.title(page)
    ss = st.session_state
    heatmaps(ss.N, ss.D, ss.heads, ss.seed, ss.scale, ss.mask, key=page)


nav = st.navigation(
    [
        st.Page(partial(charts, "Page one"), title="Page one", url_path="one", default=True),
        st.Page(partial(charts, "Page two"), title="Page two", url_path="two"),
    ]
)
sidebar()
nav.run()
