"""Where a rerun's time goes: engine, figure building, plotly validation/serialisation.

Two measurements:

1. ``breakdown`` (default): runs a page through ``streamlit.testing.v1.AppTest`` and times,
   per rerun, the engine (``attnviz.engine.multi_head_attention`` and friends, cache
   misses only), the figure builders (``attnviz.viz.*``, outermost calls), plotly's
   figure validation inside ``st.plotly_chart`` (``plotly.tools.
   return_figure_from_figure_or_data``) and its JSON serialisation (``plotly.io.to_json``);
   the rest is Streamlit and the page itself. ``--cprofile N`` also prints the top N
   functions by cumulative time (cProfile on the script thread, with its overhead).
2. ``--sweep``: a real server (``bench/kit.py``), rerun time and websocket payload of
   the page against N (default 8, 64, 256, 512) at D=64, heads=8.

    python bench/profile_rerun.py                         # playground, N=64, D=64, heads=8
    python bench/profile_rerun.py --page pages/multi_head.py --query N=16
    python bench/profile_rerun.py --sweep                 # cost against N
    python bench/profile_rerun.py --cprofile 30

The browser's share (plotly drawing) is measured by ``bench/browser_latency.py``.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import os
import pstats
import statistics
import threading
import time
import urllib.parse
from collections import defaultdict

import kit
from kit import REPO
from stclient import Session


class Timers:
    """Wall-clock totals of wrapped functions (outermost call per category only)."""

    def __init__(self) -> None:
        self.total: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._depth = threading.local()

    def wrap(self, category: str, fn):
        @functools.wraps(fn)
        def inner(*a, **k):
            depth = getattr(self._depth, category, 0)
            setattr(self._depth, category, depth + 1)
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                setattr(self._depth, category, depth)
                if depth == 0:
                    self.total[category] += time.perf_counter() - t
                    self.calls[category] += 1

        return inner

    def reset(self) -> None:
        self.total.clear()
        self.calls.clear()


def install(timers: Timers) -> None:
    import plotly.io
    import plotly.tools

    from attnviz import engine, viz

    # the pages call the builders through their module (viz.heatmaps.attention_figure)
    for module in (viz.heatmaps, viz.attention, viz.charts, viz.models, viz.heads, viz.compare):
        for name in dir(module):
            fn = getattr(module, name)
            if callable(fn) and name.endswith("_figure") and not name.startswith("_"):
                setattr(module, name, timers.wrap("figures", fn))
    for name in ("multi_head_attention", "attention_from_qkv", "loop_attention"):
        if hasattr(engine, name):
            setattr(engine, name, timers.wrap("engine", getattr(engine, name)))
    plotly.tools.return_figure_from_figure_or_data = timers.wrap(
        "plotly validate", plotly.tools.return_figure_from_figure_or_data
    )
    plotly.io.to_json = timers.wrap("plotly to_json", plotly.io.to_json)


def breakdown(args: argparse.Namespace) -> None:
    from streamlit.runtime.scriptrunner import script_runner
    from streamlit.testing.v1 import AppTest

    timers = Timers()
    install(timers)
    profiler: list[cProfile.Profile] = []
    orig = script_runner.ScriptRunner._run_script_thread

    def run_thread(self):  # profile the script thread when asked
        if profiler:
            profiler[0].enable()
            try:
                return orig(self)
            finally:
                profiler[0].disable()
        return orig(self)

    script_runner.ScriptRunner._run_script_thread = run_thread
    script_runner.ScriptRunner._run_script = timers.wrap(
        "script", script_runner.ScriptRunner._run_script
    )
    kit.server_like_pages()

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    if args.page:
        at.switch_page(args.page)
    for k, v in urllib.parse.parse_qsl(args.query):
        at.query_params[k] = v
    kit.run_app(at, "the page")
    seed0 = int(at.number_input(key="seed").value)
    n = at.slider(key="N").value
    print(f"page {args.page or 'home'} ?{args.query}: N={n}, {len(at.get('plotly_chart'))} charts")
    rows = []
    for i in range(args.warmup + args.reruns):
        if i == args.warmup and args.cprofile:
            profiler.append(cProfile.Profile())
        timers.reset()
        # a new seed each time: the engine's cache misses, as for a new slider value
        at.number_input(key="seed").set_value(seed0 + 1 + i)
        wall = kit.run_app(at, "the page")
        if i >= args.warmup:
            rows.append({"AppTest run": wall, **dict(timers.total)})
    keys = ["script", "engine", "figures", "plotly validate", "plotly to_json"]
    med = {k: statistics.median(r.get(k, 0.0) for r in rows) for k in ["AppTest run", *keys]}
    med["streamlit + page"] = med["script"] - sum(med[k] for k in keys[1:])
    spec_kb = sum(len(c.proto.spec) for c in at.get("plotly_chart")) / 1024
    print(f"median over {len(rows)} reruns (AppTest, new seed each):")
    for k, v in med.items():
        share = f"{100 * v / med['script']:5.1f} %" if k != "AppTest run" else ""
        print(f"  {k:18s} {1000 * v:8.1f} ms  {share}")
    print(f"  plotly specs     {spec_kb:8.1f} KB (JSON, all charts)")
    if profiler:
        s = io.StringIO()
        pstats.Stats(profiler[0], stream=s).sort_stats("cumulative").print_stats(args.cprofile)
        print(s.getvalue())


def sweep(args: argparse.Namespace) -> None:
    ns = [int(x) for x in args.ns.split(",")]
    with kit.warm("app.py") as srv:
        print(f"{'N':>5} {'load ms':>8} {'rerun ms':>9} {'KB/rerun':>9} {'plotly KB':>9} charts")
        for n in ns:
            q = f"N={n}&{args.sweep_query}"
            with Session(srv.url, page=args.url_page, query=q, timeout=300) as s:
                r0 = s.rerun()
                if r0.errors:
                    print(f"{n:5d} errors: {r0.errors}")
                    continue
                seed0 = 0
                ts, kb, pkb = [], [], []
                for i in range(args.reruns):
                    r = s.rerun({"seed": seed0 + 1 + i})
                    ts.append(r.seconds)
                    kb.append(r.bytes / 1024)
                    pkb.append(r.plotly_bytes / 1024)
                print(
                    f"{n:5d} {1000 * r0.seconds:8.0f} {1000 * statistics.median(ts):9.0f} "
                    f"{statistics.median(kb):9.0f} {statistics.median(pkb):9.0f} {r.charts:6d}"
                )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--page", default="", help="AppTest page path, e.g. pages/multi_head.py")
    ap.add_argument("--query", default="N=64&D=64&heads=8")
    ap.add_argument("--reruns", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--cprofile", type=int, default=0, metavar="TOP")
    ap.add_argument("--sweep", action="store_true", help="rerun time and payload against N")
    ap.add_argument("--ns", default="8,64,256,512")
    ap.add_argument("--sweep-query", default="D=64&heads=8")
    ap.add_argument("--url-page", default="", help="page url path for --sweep")
    args = ap.parse_args(argv)
    os.chdir(REPO)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    (sweep if args.sweep else breakdown)(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
