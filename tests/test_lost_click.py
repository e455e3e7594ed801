"""A click queued behind a full run is not lost (issue 25, item 9), on a real server.

``bench/lost_click.py`` drives ``bench/fragment_app.py`` over Streamlit's websocket as a
browser does: a full run made slow on purpose, a fragment's "+1" clicked during it. Here
the page ends with attnviz's :func:`attnviz.ui.state.end_page` (what ``ui.start`` and the
permutation page call where they used to call ``st.stop()``), and with ``st.stop()`` itself
to keep an eye on Streamlit: if ``st.stop()`` stops dropping the click, a newer Streamlit
fixed it (then ``end_page`` may become ``st.stop()`` again).
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import lost_click  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict[str, list[int]]:
    """The bench app, its ``raise StopException()`` replaced by attnviz's ``end_page()``;
    one trial per scenario, a 3 s full run (the click lands 0.3 s into it). The three
    scenarios are three sessions of one server, run side by side: each trial is its own
    session with its own script thread, and waits out fixed quiet times (~8 s a trial,
    mostly sleeping), which ``lost_click.run`` spends one after the other."""
    source = lost_click.APP.read_text()
    raised = "raise StopException()"
    assert raised in source
    app = tmp_path_factory.mktemp("lost_click") / "app.py"
    app.write_text(
        source.replace(raised, "end_page()").replace(
            "import streamlit as st\n",
            "import streamlit as st\n\nfrom attnviz.ui.state import end_page\n",
        )
    )
    args = lost_click.parse_args(["--trials", "1", "--full-run", "3"])
    scenarios = ["raise", "rerun", "stop"]
    options = {"runner.fastReruns": args.fast_reruns}  # as lost_click.run starts it
    with lost_click.Server(app, options=options) as srv, ThreadPoolExecutor(3) as pool:
        trials = {sc: pool.submit(lost_click.trial, srv.url, sc, args) for sc in scenarios}
        return {sc: [t.result()] for sc, t in trials.items()}


def test_end_page_keeps_a_click_queued_behind_the_run(report):
    assert report["raise"] == [1]


def test_a_rerun_like_page_guards_keeps_the_click(report):
    assert report["rerun"] == [1]


def test_streamlit_still_drops_it_with_st_stop(report):
    assert report["stop"] == [0], "st.stop() kept the click: a Streamlit fix? see end_page"
