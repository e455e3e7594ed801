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
# The tab's icon is attnviz's own file, served by this server: a page's ":material/...:" icon
# would make every browser fetch it from Google's font service (docs/deploy.md, "Offline").
# The shown language first: ?lang=, else the session's, else the browser's (attnviz.i18n).
ui.lang.setup()
st.set_page_config(
    layout="wide", initial_sidebar_state=ui.present.sidebar_state(), page_icon=ui.ICON
)
# The page's CSS first (it also hides the hidden boards, the next one among them).
ui.a11y.setup()
# Second element of every run: the browser starts loading plotly.js now, not when the first
# chart arrives (a first visit saves most of its 1.3 s download and compile); it also sets
# the page's language (<html lang>, and data-dir, by which board.css runs a right-to-left
# language's prose right to left; the board's catalog).
ui.preload_plotly(ui.lang.board_locale())

# The pages, their titles, icons and sidebar flags: one table, attnviz.ui.pages.PAGES.
# Each st.Page keeps its entry (no look-up by title); url_path is the table's slug, which
# is also what Streamlit derives from the file name (tests/ui/test_pages.py).
entries = [entry for entry in ui.pages.PAGES if (HERE / entry.file).exists()]
nav = [
    st.Page(e.file, title=e.shown_title, icon=e.icon, url_path=e.slug, default=(i == 0))
    for i, e in enumerate(entries)
]
# expanded: every page's link stays in the sidebar (Streamlit folds the list behind
# "View more" from 13 pages on; a new page must not hide the last ones)
page = st.navigation(nav, expanded=True)
entry = next(e for p, e in zip(nav, entries, strict=True) if p is page)
# ?lesson=intro without its stop: the first stop's page and settings (attnviz.ui.tour)
ui.tour.enter({e.slug: e.file for e in entries})
ui.lang.picker()
ui.sidebar(
    applies=entry.controls != "none",
    seed_only=entry.controls == "seed",
    weights_only=entry.controls == "weights",
    runs_model=entry.runs_model,
)
ui.present.setup()
# A lesson's tour (?lesson=...): its bar above the page (a stop's question goes to the room
# when a class is open on the slide); the sidebar's lesson builder (attnviz.ui.tour,
# docs/lessons.md).
ui.tour.bar(entry.slug, open_class=ui.predict.teacher)
ui.lesson_build.builder(entry.slug, entry.shown_title)
page.run()
