"""The plain two-page comparison app for bench/page_switch.py: the same sidebar controls
and engine as attnviz, three ``st.plotly_chart`` heatmaps (scores, weights, output) per head
on each of two pages, routed with ``st.navigation``. No board, no component.

    streamlit run bench/plain_pages.py
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from attnviz import engine

BIND = "query-params"


@st.cache_data(max_entries=32)
def run(n: int, d: int, heads: int, seed: int, scale: str, mask_kind: str):
    x = np.random.default_rng(seed).standard_normal((n, d))
    params = engine.AttentionParams.random(d, seed=seed + 1)
    mask = {"none": None, "causal": engine.causal_mask(n), "padding": engine.padding_mask(n, 1)}[
        mask_kind
    ]
    s = {"none": False, "1/√d_k": True, "custom": 8.0}[scale]
    return engine.multi_head_attention(x, params, num_heads=heads, scale=s, mask=mask)


def charts(page: str) -> None:
    """Three heatmaps per head of the sidebar's settings."""
    st.title(page)
    ss = st.session_state
    r = run(ss.N, ss.D, ss.heads, int(ss.seed), ss.scale, ss.mask)
    for h in range(r.num_heads):
        cols = st.columns(3)
        for col, (name, z) in zip(
            cols,
            (("scores", r.scores[h]), ("weights", r.weights[h]), ("output", r.head_outputs[h])),
            strict=True,
        ):
            col.plotly_chart(
                go.Figure(go.Heatmap(z=z), layout={"title": f"head {h} {name}"}),
                key=f"{page}_{h}_{name}",
            )


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
sb = st.sidebar
sb.slider("N", 1, 512, 6, key="N", bind=BIND)
d = sb.slider("D", 1, 128, 8, key="D", bind=BIND)
divs = [h for h in range(1, d + 1) if d % h == 0]
sb.selectbox("heads", divs, index=divs.index(2) if 2 in divs else 0, key="heads", bind=BIND)
sb.number_input("seed", 0, 2**31 - 1, 0, key="seed", bind=BIND)
sb.radio("scale", ["none", "1/√d_k", "custom"], index=1, key="scale", bind=BIND)
sb.radio("mask", ["none", "causal", "padding"], key="mask", bind=BIND)
nav.run()
