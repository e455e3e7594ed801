"""The plain comparison apps' parts: the playground's sidebar controls and engine, three
plain ``st.plotly_chart`` heatmaps per head, nothing else. Run (``streamlit run``, AppTest):
the bare comparison page (bench/bare_app.py until issue 49)."""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from attnviz import engine

BIND = "query-params"


def sidebar() -> tuple:
    """The controls: (N, D, heads, seed, scale, mask)."""
    sb = st.sidebar
    n = sb.slider("N", 1, 512, 6, key="N", bind=BIND)
    d = sb.slider("D", 1, 128, 8, key="D", bind=BIND)
    divs = [h for h in range(1, d + 1) if d % h == 0]
    heads = sb.selectbox(
        "heads", divs, index=divs.index(2) if 2 in divs else 0, key="heads", bind=BIND
    )
    seed = sb.number_input("seed", 0, 2**31 - 1, 0, key="seed", bind=BIND)
    scale = sb.radio("scale", ["none", "1/√d_k", "custom"], index=1, key="scale", bind=BIND)
    mask = sb.radio("mask", ["none", "causal", "padding"], key="mask", bind=BIND)
    return n, d, heads, seed, scale, mask


@st.cache_data(max_entries=32)
def run(n: int, d: int, heads: int, seed: int, scale: str, mask_kind: str):
    x = np.random.default_rng(seed).standard_normal((n, d))
    params = engine.AttentionParams.random(d, seed=seed + 1)
    mask = {"none": None, "causal": engine.causal_mask(n), "padding": engine.padding_mask(n, 1)}[
        mask_kind
    ]
    s = {"none": False, "1/√d_k": True, "custom": 8.0}[scale]
    return engine.multi_head_attention(x, params, num_heads=heads, scale=s, mask=mask)


def heatmaps(n: int, d: int, heads: int, seed: int, scale: str, mask: str, key: str) -> None:
    """Three heatmaps per head of these settings (element keys ``{key}_{head}_{name}``)."""
    r = run(n, d, heads, int(seed), scale, mask)
    for h in range(r.num_heads):
        cols = st.columns(3)
        for col, (name, z) in zip(
            cols,
            (("scores", r.scores[h]), ("weights", r.weights[h]), ("output", r.head_outputs[h])),
            strict=True,
        ):
            col.plotly_chart(
                go.Figure(go.Heatmap(z=z), layout={"title": f"head {h} {name}"}),
                key=f"{key}_{h}_{name}",
            )


if __name__ == "__main__":  # run by streamlit (or AppTest): the bare page
    heatmaps(*sidebar(), key="bare")
