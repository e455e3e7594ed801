"""Where a page switch's time goes (issue 27), attnviz against the plain two-page app
(``bench/plain_pages.py``), interleaved, with the browser's own CPU profiler.

Each switch (a click on a sidebar page link, as ``bench/page_switch.py``) runs under CDP
``Profiler`` (V8's sampling profiler of the page's main thread, 200 µs). Per switch, in ms
from the click:

* ``wall``: the last chart drawn (``page_switch.py``'s definition);
* ``server``: the rerun on the server: the websocket's first and last message of the run
  (``first_msg``, ``last_msg``; the last is ``script_finished``);
* the main thread's time between the click and the last chart, by whose code ran (self
  time of the sampled JavaScript, with the browser functions it called: the style and
  layout a getBoundingClientRect forces counts for its caller; medians over the profiles in
  which the click was found, by a 4 ms marker function its listener runs):
  ``plotly`` (plotly.js: the board's file, or the plain app's ``PlotlyChart`` chunk),
  ``board`` (attnviz's board modules), ``streamlit`` (Streamlit's own bundle: React, the
  websocket, the elements), ``gc``, ``other`` (the browser outside JavaScript: style,
  layout, paint of the page), and ``idle`` (nothing to run: waiting for the server).

    python bench/switch_profile.py --rounds 4
    python bench/switch_profile.py --rounds 4 --pages ",multi_head" --json profile.json
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_latency import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from page_switch import PAGES, PLAIN, open_tab, switch  # noqa: E402
from stclient import Server  # noqa: E402

BUCKETS = ("plotly", "board", "streamlit", "gc", "other", "idle")


def bucket(url: str, name: str) -> str:
    """Whose code a profile node is."""
    if name == "(idle)":
        return "idle"
    if name == "(garbage collector)":
        return "gc"
    if "vendor/plotly" in url or "PlotlyChart" in url or url.startswith("blob:"):
        return "plotly"  # the board runs plotly.js from a blob: URL (its IndexedDB copy)
    if "/bidi-components/attnviz.board/" in url:
        return "board"
    if "/static/js/" in url:
        return "streamlit"
    return "other"  # (program): style, layout, paint, parsing outside JavaScript


def split(profile: dict, t0_us: float, t1_us: float) -> dict[str, float]:
    """Main-thread ms by bucket between t0 and t1 (the profile's clock, µs)."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", [])}

    def url_of(i: int) -> str:
        """A node's script; a native function (getBoundingClientRect: the forced layout of
        its caller) counts as its nearest caller with a script."""
        while i is not None:
            u = nodes[i]["callFrame"].get("url", "")
            if u:
                return u
            i = parent.get(i)
        return ""

    kind = {i: bucket(url_of(i), n["callFrame"].get("functionName", "")) for i, n in nodes.items()}
    out: collections.Counter = collections.Counter()
    for node, a, t in intervals(profile):
        overlap = min(t, t1_us) - max(a, t0_us)
        if overlap > 0:
            out[kind[node]] += overlap / 1000
    return {b: round(out.get(b, 0.0), 1) for b in BUCKETS}


def intervals(profile: dict) -> list[tuple[int, float, float]]:
    """(node, start, end) per sample, in time order: a sample stands for the time since the
    one before it, (start, end]. V8 does not promise samples in time order (a time delta can
    be negative, and DevTools sorts them too); taken in the order given, two samples' intervals
    would overlap and a split could hold more time than its window."""
    t, stamped = profile["startTime"], []
    for node, dt in zip(profile["samples"], profile["timeDeltas"], strict=True):
        t += dt
        stamped.append((t, node))
    stamped.sort(key=lambda s: s[0])  # stable: equal times keep their order
    out, a = [], profile["startTime"]
    for t, node in stamped:
        out.append((node, a, t))
        a = t
    return out


def profiled_switch(page, cdp, fetched, title: str, quiet: float, timeout: float) -> dict:
    n_recv = page.evaluate("() => window.__ws.recvs.length")
    cdp.send("Profiler.start")
    r = switch(page, fetched, title, quiet, timeout)
    prof = cdp.send("Profiler.stop")["profile"]
    stopped = page.evaluate("() => performance.now()")
    recvs, t_click = page.evaluate(
        """(n) => [window.__ws.recvs.slice(n), window.__bench.clicks.slice(-1)[0]]""", n_recv
    )
    after = [m[0] - t_click for m in recvs if m[0] >= t_click]
    # the profile's clock (µs) is not performance.now(): the click is found in the profile
    # itself, by the marker function the click listener runs (CLICKS_JS)
    t0 = marker_time(prof)
    aligned = "click"
    if t0 is None:  # no sample in the marker: the profile's end is about `stopped`
        t0, aligned = prof["endTime"] - (stopped - t_click) * 1000, "end"
    parts = split(prof, t0, t0 + r["ms"] * 1000)
    return {
        "wall": round(r["ms"]),
        "first_msg": round(after[0]) if after else None,
        "last_msg": round(after[-1]) if after else None,
        **parts,
        "aligned": aligned,
    }


# The click's time in performance.now() (for the websocket's marks) and, in the profile's own
# clock, a 4 ms marker function the profiler should not miss (a loaded machine's sampler
# may: then the profile is aligned at its end, see profiled_switch).
CLICKS_JS = """() => { window.__bench.clicks = window.__bench.clicks || [];
  function __benchClickMarker() { const t = performance.now(); while (performance.now() - t < 4); }
  document.addEventListener('click', e => {
    window.__bench.clicks.push(performance.now()); __benchClickMarker(); }, true); }"""
MARKER = "__benchClickMarker"


def marker_time(profile: dict) -> float | None:
    """The profile's time (µs) of the click: the start of the first sample interval that
    ends in the click's marker function (200 µs late at most)."""
    marked = {n["id"] for n in profile["nodes"] if n["callFrame"]["functionName"] == MARKER}
    children = {n["id"]: n.get("children", []) for n in profile["nodes"]}
    todo = list(marked)
    while todo:  # and what it calls (performance.now)
        for c in children[todo.pop()]:
            if c not in marked:
                marked.add(c)
                todo.append(c)
    for node, a, _ in intervals(profile):
        if node in marked:
            return a  # the marker began within this sample's interval (click listener)
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--app", default="app.py")
    ap.add_argument("--plain", default="bench/plain_pages.py")
    ap.add_argument("--pages", default=",".join(PAGES), help="attnviz url paths ('' = home)")
    ap.add_argument("--rounds", type=int, default=3, help="switches per page")
    ap.add_argument("--quiet", type=float, default=400.0)
    ap.add_argument("--timeout", type=float, default=90.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    pages = args.pages.split(",")
    from playwright.sync_api import sync_playwright

    out: dict = {"load_before": os.getloadavg()}
    rows: dict[str, list[dict]] = {"attnviz": [], "plain": []}
    with Server(args.app) as app, Server(args.plain) as plain, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        tabs = {}
        for name, url in (("attnviz", f"{app.url}/{pages[-1]}"), ("plain", f"{plain.url}/two")):
            ctx, page, fetched, _, _ = open_tab(browser, url, args.quiet, args.timeout)
            page.evaluate(CLICKS_JS)
            cdp = ctx.new_cdp_session(page)
            cdp.send("Profiler.enable")
            cdp.send("Profiler.setSamplingInterval", {"interval": 200})
            tabs[name] = (ctx, page, fetched, cdp)
        flip = 0
        for _ in range(args.rounds):
            for p in pages:
                _, page, fetched, cdp = tabs["attnviz"]
                a = profiled_switch(page, cdp, fetched, PAGES[p], args.quiet, args.timeout)
                rows["attnviz"].append({"page": PAGES[p], **a})
                _, page, fetched, cdp = tabs["plain"]
                title = PLAIN[("one", "two")[flip % 2]]
                flip += 1
                b = profiled_switch(page, cdp, fetched, title, args.quiet, args.timeout)
                rows["plain"].append({"page": title, **b})
                print(f"{PAGES[p]:13s} {a}\n{'plain':13s} {b}", flush=True)
        browser.close()
    out["load_after"] = os.getloadavg()
    keys = ("wall", "first_msg", "last_msg", *BUCKETS)
    for name, rs in rows.items():
        # the main thread's split only from profiles aligned on the click's marker
        good = [r for r in rs if r["aligned"] == "click"] or rs
        out[name] = {
            k: statistics.median(r[k] for r in (rs if k == "wall" else good) if r[k] is not None)
            for k in keys
        }
        out[name]["profiles_aligned_on_the_click"] = len(good)
        print(
            f"{name:8s} median "
            + "  ".join(f"{k} {out[name][k]:.0f}" for k in keys)
            + f"  ({out[name]['profiles_aligned_on_the_click']} of {len(rs)} profiles split)"
        )
    ratio = out["attnviz"]["wall"] / out["plain"]["wall"]
    print(
        f"page switch attnviz / plain: {ratio:.2f}x; load {out['load_before']} -> "
        f"{out['load_after']}"
    )
    out["rows"] = rows
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
