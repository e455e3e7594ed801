"""attnviz: the entry point. ``streamlit run app.py``.

Builds the navigation (one thin file per page in ``pages/``), draws the shared sidebar
controls (:func:`attnviz.ui.sidebar`: validation, URL binding, cached engine run) and
runs the selected page.
"""

from pathlib import Path

import streamlit as st

from attnviz import ui

HERE = Path(__file__).parent

# No page_title here: each st.Page's title becomes its browser tab title.
# The presenter view (?present=1) starts with the sidebar collapsed: set_page_config runs
# once per run, so the state is derived from the URL here.
st.set_page_config(layout="wide", initial_sidebar_state=ui.present.sidebar_state())
# First element of every run: the browser starts loading plotly.js now, not when the first
# chart arrives (a first visit saves most of its 1.3 s download and compile).
ui.preload_plotly()

#: (file, title, icon). Pages in MODEL_PAGES run a trained model with its own weights: the
#: sidebar's random-weights controls do not apply there and are hidden (ui.sidebar).
PAGES = [
    ("pages/playground.py", "Playground", ":material/tune:"),
    ("pages/step_by_step.py", "Step by step", ":material/stairs:"),
    ("pages/multi_head.py", "Multi-head", ":material/view_module:"),
    ("pages/scaling.py", "Why √d_k", ":material/straighten:"),
    ("pages/masking.py", "Masking", ":material/visibility_off:"),
    ("pages/permutation.py", "Permutation", ":material/shuffle:"),
    ("pages/compare.py", "Compare", ":material/compare:"),
    ("pages/notebooks.py", "Notebooks", ":material/menu_book:"),
    ("pages/real_model.py", "Real model (MiniLM)", ":material/smart_toy:"),
    ("pages/decoder.py", "Real model (decoder)", ":material/auto_awesome:"),
    ("pages/learned.py", "Learned attention", ":material/school:"),
    ("pages/exercises.py", "Exercises", ":material/quiz:"),
]
MODEL_PAGES = {"pages/real_model.py", "pages/decoder.py", "pages/learned.py"}
#: Pages where only the sidebar's seed applies (the other controls are hidden there).
SEED_ONLY = {"pages/exercises.py"}

pages = [
    st.Page(path, title=title, icon=icon, default=(i == 0))
    for i, (path, title, icon) in enumerate(PAGES)
    if (HERE / path).exists()
]
page = st.navigation(pages)
path = next((p for p, t, _ in PAGES if t == page.title), "")
ui.sidebar(applies=path not in MODEL_PAGES, seed_only=path in SEED_ONLY)
ui.present.setup()
ui.a11y.setup()
page.run()
