"""Smoke tests of the benchmark scripts' machinery on a tiny app (no timing assertions).

bench/stclient.py must speak Streamlit's websocket protocol well enough that a control change
really reaches the script; the browser benches measure on the real app.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import browser_latency  # noqa: E402
import hall  # noqa: E402
import kit  # noqa: E402
from kit import Server  # noqa: E402
from stclient import Session  # noqa: E402

TINY_APP = """
import streamlit as st
n = st.slider("N", 1, 64, 4, key="N", bind="query-params")
mask = st.selectbox("mask", ["none", "causal"], key="mask", bind="query-params")
seed = st.number_input("seed", 0, 1000, 0, key="seed", bind="query-params")
st.markdown(f"N={n} mask={mask} seed={seed}")
if n == 13:
    st.error("thirteen")
"""


PLOT_APP = """
import numpy as np
import plotly.graph_objects as go
import streamlit as st
n = st.slider("N", 1, 64, 3, key="N", bind="query-params")
st.plotly_chart(go.Figure(go.Heatmap(z=np.arange(n * n).reshape(n, n))), key="hm")
"""


@pytest.fixture(scope="module")
def tiny_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    app = tmp_path_factory.mktemp("tinyapp") / "tiny_app.py"
    app.write_text(TINY_APP)
    return app


@pytest.fixture(scope="module")
def server(tiny_app: Path):
    with Server(tiny_app) as srv:
        yield srv


@pytest.fixture(scope="module")
def shared_bench():
    """One Chromium and one server per app for this module's browser benches, started when
    a bench first asks (``kit.browser``, ``kit.servers``) and stopped after the module: each
    bench started attnviz, the plain app and a browser of its own. A bench still opens a
    fresh browser context per tab (its own cache: a first visit still fetches everything),
    and a server's state is per session."""
    with contextlib.ExitStack() as stack:
        running: dict[str, Server] = {}
        browsers: list = []
        servers, browser = kit.servers, kit.browser

        @contextlib.contextmanager
        def shared_servers(*apps, **kw):
            if kw:  # options of its own: a server of its own
                with servers(*apps, **kw) as own:
                    yield own
                return
            for app in apps:
                if str(app) not in running:
                    running[str(app)] = stack.enter_context(Server(app))
            yield [running[str(app)] for app in apps]

        @contextlib.contextmanager
        def shared_browser(**launch):
            if launch:
                with browser(**launch) as own:
                    yield own
                return
            if not browsers:
                browsers.append(stack.enter_context(browser()))
            yield browsers[0]

        yield shared_servers, shared_browser


@pytest.fixture
def reuse(shared_bench, monkeypatch):
    """kit.servers and kit.browser hand out the module's shared servers and browser."""
    monkeypatch.setattr(kit, "servers", shared_bench[0])
    monkeypatch.setattr(kit, "browser", shared_bench[1])


def test_session_changes_reach_the_script(server: Server) -> None:
    with Session(server.url, query="N=7") as s:
        first = s.rerun()
        assert first.ok, first.errors
        assert first.status == "FINISHED_SUCCESSFULLY"
        assert first.texts == ["N=7 mask=none seed=0"]  # seeded from the URL
        assert {"N", "mask", "seed"} <= set(s.widgets)
        assert s.widgets["N"].kind == "slider"

        r = s.rerun({"N": 9, "mask": "causal"})
        assert r.ok, r.errors
        assert r.texts == ["N=9 mask=causal seed=0"]
        assert "N=9" in s.query_string and "mask=causal" in s.query_string

        r = s.rerun({"seed": 5})  # earlier changes are kept, as in the browser
        assert r.texts == ["N=9 mask=causal seed=5"]
        assert r.messages > 0 and r.bytes > 0 and r.seconds > 0


def test_session_reports_errors_shown_by_the_app(server: Server) -> None:
    with Session(server.url) as s:
        s.rerun()
        r = s.rerun({"N": 13})
        assert not r.ok
        assert any("thirteen" in e for e in r.errors)


@pytest.mark.e2e
def test_browser_latency_measures_key_presses(tmp_path: Path, reuse: None) -> None:
    if not Path(kit.CHROMIUM).exists():
        pytest.skip("needs Debian's chromium at /usr/bin/chromium")
    app = tmp_path / "plot_app.py"
    app.write_text(PLOT_APP)
    out = tmp_path / "latency.json"
    no_bare = str(tmp_path / "no_bare_app.py")  # skipped: one server is enough here
    argv = ["--app", str(app), "--bare", no_bare, "--pages", "", "--configs", "tiny=N=3"]
    argv += ["--moves", "2", "--warmup", "0", "--pause", "0", "--json", str(out)]
    assert browser_latency.main(argv) == 0
    rows = json.loads(out.read_text())
    assert [r["label"] for r in rows] == ["attnviz:home:tiny"]
    for r in rows:
        assert r["moves"] == 2
        assert r["N"] == "3->5"  # two ArrowRight presses reached the slider
        assert r["plots"] == 1
        for move in r["rows"]:
            assert 0 <= move["sent_ms"] <= move["script_ms"] <= move["drawn_ms"]
            assert move["kb"] > 0
            assert move["in_view"] == move["redrawn_in_view"] == 1  # the one heatmap


def _latency_row(label: str, redrawn: float) -> dict:
    """A row of bench/browser_latency.py's results: only what unlike_views reads."""
    return {"label": label, "median_redrawn_in_view": redrawn}


def test_browser_latency_notes_configs_that_redrew_different_charts() -> None:
    """Two languages that redraw 3 and 7 charts in view did different work: a note names
    the page and each configuration's count; equal counts (any rounds) give no note."""
    rows = [
        _latency_row("attnviz:home:defaults:r1", 3),
        _latency_row("attnviz:home:zh:r1", 7),
        _latency_row("attnviz:multi_head:defaults:r1", 4),
        _latency_row("attnviz:multi_head:zh:r1", 4),
        _latency_row("attnviz:home:defaults:r2", 3),
        _latency_row("bare:home:defaults:r1", 3),
    ]
    notes = browser_latency.unlike_views(rows)
    assert len(notes) == 1
    assert notes[0].startswith("attnviz:home: ")
    assert "defaults 3, zh 7" in notes[0]
    assert browser_latency.unlike_views(rows[2:]) == []


def test_rerun_payload_counts_the_boards_charts() -> None:
    """bench/rerun.py's payload counts the figures inside the board components (it read only
    st.plotly_chart elements and reported 0 MB in 0 plots once the pages drew through
    boards)."""
    import rerun

    from attnviz.ui import pages

    # the playground's charts, as its entry in the page table counts them (a chart added
    # by the recipe of docs/architecture.md changes that entry, not this test)
    charts = pages.page("playground").charts
    at = rerun.start(rerun.APP, {"N": "12", "D": "8", "heads": "2"})
    size, count = rerun.payload(at)
    assert count == charts > 0
    small = size
    at = rerun.start(rerun.APP, {"N": "64", "D": "8", "heads": "2"})
    size, count = rerun.payload(at)
    grown = 2 * 4 * (64 * 64 - 12 * 12)  # the scores and the weights: N×N float32 each
    assert count == charts and size > small + grown


@pytest.mark.e2e
def test_page_switch_per_language_clicks_the_translated_links(tmp_path: Path, reuse: None) -> None:
    """bench/page_switch.py --langs (issue 45): one tab per language, each switching by its
    own language's sidebar links (an Arabic tab that lost its language would find no link
    and time out); per language the switches, bytes and the ratio to the first language."""
    import page_switch

    if not Path(kit.CHROMIUM).exists():
        pytest.skip("needs Debian's chromium at /usr/bin/chromium")
    out = tmp_path / "langs.json"
    argv = ["--langs", "en,ar", "--rounds", "1", "--pages", ",multi_head", "--quiet", "250"]
    assert page_switch.main([*argv, "--json", str(out)]) == 0
    langs = json.loads(out.read_text())["langs"]
    assert set(langs) == {"en", "ar"} and langs["en"]["ratio_ms"] == 1.0
    for r in langs.values():
        assert set(r["per_page_ms"]) == {"Playground", "Multi-head"}
        assert [row["page"] for row in r["rows"]] == ["", "multi_head"]
        assert all(row["ms"] > 0 and row["plots"] > 0 and row["ws_bytes"] > 0 for row in r["rows"])


@pytest.mark.e2e
def test_first_visit_timeline_orders_its_marks(tmp_path: Path, reuse: None) -> None:
    """bench/page_switch.py --first-visit: one first visit per app, its marks in the order
    they happen (page content, plotly.js asked, received, run, every chart drawn; no timing
    asserted)."""
    import page_switch

    out = tmp_path / "first.json"
    # behind deploy/haproxy.cfg too when haproxy is installed (scripts/test.sh installs it)
    proxy = hall.haproxy_exe() is not None or bool(os.environ.get("CI"))
    argv = ["--first-visit", "--rounds", "1", "--warm", "0", "--json", str(out)]
    assert page_switch.main(argv + ["--proxy"] * proxy) == 0
    r = json.loads(out.read_text())
    for name in ("attnviz", "plain", "attnviz+haproxy")[: 2 + proxy]:
        (v,) = r[name]["visits"]
        marks = [v[k] for k in ("plotly_asked", "plotly_got", "plotly_ready", "drawn")]
        assert all(m is not None and m > 0 for m in marks), (name, v)
        assert marks == sorted(marks), (name, v)
        assert v["content"] is not None and v["content"] < v["drawn"], (name, v)
        assert v["http_bytes"] > 1_000_000 and v["ws_bytes"] > 10_000, (name, v)
        assert r[name]["class_of_60_bytes"] == 60 * (v["http_bytes"] + v["ws_bytes"])
    if proxy:  # behind deploy/haproxy.cfg, Streamlit's own front end comes compressed
        through, direct = (r[k]["visits"][0]["http_bytes"] for k in ("attnviz+haproxy", "attnviz"))
        assert through < 0.8 * direct, (through, direct)


# A view whose run is over and whose one chart and board were drawn before the bench's marks
# came: nothing of it is redrawn while the marks watch.
DRAWN_BEFORE = (
    "data:text/html,<div data-testid='stApp' data-test-script-state='notRunning'>"
    "<div class='stBidiComponent'><div class='attnviz-board' data-state='drawn'>"
    "<div class='js-plotly-plot'>a chart</div></div></div></div>"
)


@pytest.mark.e2e
def test_a_tab_opens_on_a_view_drawn_before_the_marks_came(reuse: None) -> None:
    """CI, stop 54: page_switch's first tab waited 90 s for a draw. serve.py's page runs
    plotly.js as it arrives, which holds the document's `load` back; the marks, installed after
    `load`, came after the charts had drawn, and the first view was taken for one still
    drawing. A view drawn before the marks is settled by its boards' state
    (browser_latency.load, which page_switch's tabs use)."""
    with kit.browser() as browser:
        ctx, page = browser_latency.open_page(browser, DRAWN_BEFORE, (1280, 900), 100, timeout=10)
        assert page.evaluate("() => window.__bench.plots.length") == 0  # no draw was seen
        ctx.close()


@pytest.mark.e2e
def test_page_switch_measures_switches_and_bytes(tmp_path: Path, reuse: None) -> None:
    """bench/page_switch.py on the real app and the plain two-page app: one switch per page,
    reported with bytes (no timing asserted)."""
    import page_switch

    if not Path(kit.CHROMIUM).exists():
        pytest.skip("needs Debian's chromium at /usr/bin/chromium")
    out = tmp_path / "switch.json"
    argv = ["--rounds", "1", "--pages", ",multi_head", "--quiet", "250"]
    assert page_switch.main([*argv, "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    s = r["switch"]
    assert set(s["per_page_ms"]) == {"Playground", "Multi-head"}
    assert all(ms > 0 for ms in s["per_page_ms"].values())
    assert s["attnviz_ms"] > 0 and s["plain_ms"] > 0
    for rows in r["switch_rows"].values():
        assert all(row["script_ms"] > 0 and row["ms"] > 0 and row["plots"] > 0 for row in rows)
    # the tab's first page fetched plotly.js (once); no switch fetched it again
    assert 300_000 < s["first_page_of_tab_plotly_bytes"] <= 600_000
    assert s["attnviz_plotly_bytes_all_switches"] == 0
    assert s["class_of_60_bytes_per_switch"]["attnviz"] == 60 * (
        s["attnviz_http_bytes"] + s["attnviz_ws_bytes"]
    )
    ours = [row for rows in r["switch_rows"].values() for row in rows]
    assert [row["title"] for row in ours] == ["Playground", "Multi-head"]
    assert len(r["plain_rows"]) == 2 and all(row["ms"] > 0 for row in r["plain_rows"])


def test_suite_cpu_counts_each_test_and_what_it_starts(tmp_path: Path) -> None:
    """bench/suite_cpu.py on a tiny suite: a test that burns CPU in a child process gets
    that CPU (its cgroup holds the child), a test that sleeps gets almost none."""
    import subprocess

    (tmp_path / "test_tiny.py").write_text(
        "import subprocess, sys, time\n"
        "def test_child_burns():\n"
        "    subprocess.run([sys.executable, '-c', "
        "'import time\\nt = time.process_time()\\nwhile time.process_time() - t < 1.5: pass'])\n"
        "def test_sleeps():\n"
        "    time.sleep(1.0)\n"
    )
    cmd = [sys.executable, str(BENCH / "suite_cpu.py"), str(tmp_path), "-q"]
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    got = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "run 1 (exit 0): 2 tests" in got.stdout, got.stdout
    lines = next(tmp_path.glob("suite_cpu_*.0.tsv")).read_text().splitlines()
    rows = {n.split("::")[1]: (float(c), float(w)) for c, w, n in (x.split("\t") for x in lines)}
    assert rows["test_child_burns"][0] >= 1.4, rows  # the child's CPU, counted
    assert rows["test_sleeps"][0] < 0.5 <= rows["test_sleeps"][1], rows  # waited, not worked
