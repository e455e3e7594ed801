"""Where a first visit's time goes (issue 17): attnviz against the plain two-page app
(``bench/plain_pages.py``), a new browser profile (empty cache) per visit, interleaved.

For each visit, in the page's clock (``performance.now()``, from the navigation's start):

* ``content``: the first Markdown of the page in the DOM (Streamlit has drawn the run's
  first elements);
* ``plotly_asked`` / ``plotly_got``: the request for plotly.js starts / its last byte
  (attnviz: the board's ``vendor/plotly-*.min.js``; plain app: Streamlit's
  ``PlotlyChart.*.js`` chunk, which holds plotly.js);
* ``plotly_ready``: ``window.Plotly`` exists (the script has run);
* ``drawn``: every chart of the page drawn (attnviz: every board ``drawn``; plain: as many
  plots as charts and no script run).

``plotly_ready - plotly_got`` is plotly.js's compile and run on this machine's main thread.

    python bench/first_visit.py --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_latency import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from stclient import Server  # noqa: E402

MARKS_JS = """
window.__fv = {};
new MutationObserver(() => {
  const t = window.__fv;
  if (!t.content && document.querySelector(
      '[data-testid="stMain"] [data-testid="stMarkdownContainer"]')) t.content = performance.now();
}).observe(document, {subtree: true, childList: true});
const poll = setInterval(() => {
  if (window.Plotly) { window.__fv.plotly_ready = performance.now(); clearInterval(poll); }
}, 5);
"""

DRAWN_JS = """(charts) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const boards = Array.from(document.querySelectorAll('.stBidiComponent'));
  const plots = document.querySelectorAll('.js-plotly-plot').length;
  return plots >= charts && boards.every(c => {
    const b = c.querySelector('.attnviz-board'); return b && b.dataset.state === 'drawn'; });
}"""

TIMES_JS = """(pattern) => {
  const r = performance.getEntriesByType('resource').find(e => new RegExp(pattern).test(e.name));
  return Object.assign({}, window.__fv, {drawn: performance.now(),
    plotly_asked: r ? r.startTime : null, plotly_got: r ? r.responseEnd : null});
}"""

APPS = {  # name -> (url path, resource pattern of plotly.js, charts drawn at the end)
    "attnviz": ("/", r"vendor/plotly-.*\.min\.js", 9),
    "plain": ("/one", r"PlotlyChart\..*\.js", 3),
}
KEYS = ("content", "plotly_asked", "plotly_got", "plotly_ready", "drawn")


def visit(browser, url: str, pattern: str, charts: int, timeout: float) -> dict:
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        ctx.add_init_script(MARKS_JS)
        page = ctx.new_page()
        page.goto(url)
        page.wait_for_function(DRAWN_JS, arg=charts, timeout=timeout * 1000, polling=20)
        return page.evaluate(TIMES_JS, pattern)
    finally:
        ctx.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--app", default="app.py")
    ap.add_argument("--plain", default="bench/plain_pages.py")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warm", type=int, default=1, help="visits per app before measuring")
    ap.add_argument("--timeout", type=float, default=90.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    out: dict = {"load_before": os.getloadavg(), "rounds": args.rounds}
    rows: dict[str, list[dict]] = {name: [] for name in APPS}
    with Server(args.app) as app, Server(args.plain) as plain, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        servers = {"attnviz": app, "plain": plain}
        for _ in range(args.warm):  # the servers' first runs, imports and caches
            for name, (path, pattern, charts) in APPS.items():
                visit(browser, servers[name].url + path, pattern, charts, args.timeout)
        for _ in range(args.rounds):
            for name, (path, pattern, charts) in APPS.items():
                rows[name].append(
                    visit(browser, servers[name].url + path, pattern, charts, args.timeout)
                )
        browser.close()
    out["load_after"] = os.getloadavg()
    for name, rs in rows.items():
        med = {k: statistics.median(r.get(k) or float("nan") for r in rs) for k in KEYS}
        med["plotly_run"] = statistics.median(r["plotly_ready"] - r["plotly_got"] for r in rs)
        out[name] = {"median_ms": {k: round(v) for k, v in med.items()}, "visits": rs}
        print(f"{name:8s} " + "  ".join(f"{k} {v:5.0f}" for k, v in med.items()))
    ratio = out["attnviz"]["median_ms"]["drawn"] / out["plain"]["median_ms"]["drawn"]
    print(f"first visit, attnviz / plain: {ratio:.2f}x  (load {out['load_before'][0]:.1f})")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
