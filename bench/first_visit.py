"""A first visit (empty cache), attnviz against the plain two-page app, interleaved: marks
from the navigation's start and the bytes (docs/benchmarks.md, "First visit").

    python bench/first_visit.py --rounds 3
    python bench/first_visit.py --rounds 3 --proxy --json first.json
"""

from __future__ import annotations

import contextlib
import os
import statistics
import sys

import kit
from browser_latency import INIT_JS
from hall import HAProxy

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
  return document.querySelectorAll('.js-plotly-plot').length >= charts && (BOARDS_DRAWN)();
}""".replace("BOARDS_DRAWN", kit.BOARDS_DRAWN_JS)

TIMES_JS = """(pattern) => {
  const all = performance.getEntriesByType('resource');
  const r = all.find(e => new RegExp(pattern).test(e.name));
  const nav = performance.getEntriesByType('navigation')[0];
  const http = all.concat(nav ? [nav] : []).reduce((a, e) => a + (e.encodedBodySize || 0), 0);
  const ws = (window.__ws ? window.__ws.recvs : []).reduce((a, m) => a + m[1], 0);
  return Object.assign({}, window.__fv, {drawn: performance.now(),
    plotly_asked: r ? r.startTime : null, plotly_got: r ? r.responseEnd : null,
    http_bytes: http, ws_bytes: ws});
}"""

APPS = {  # name -> (url path, resource pattern of plotly.js, charts drawn at the end)
    "attnviz": ("/", r"vendor/plotly-.*\.min\.js", 9),
    "plain": ("/one", r"PlotlyChart\..*\.js", 3),
    "attnviz+haproxy": ("/", r"vendor/plotly-.*\.min\.js", 9),  # with --proxy
}
KEYS = ("content", "plotly_asked", "plotly_got", "plotly_ready", "drawn")
CLASS = 60


def visit(browser, url: str, pattern: str, charts: int) -> dict:
    ctx, page = kit.tab(browser, (1280, 800), INIT_JS, MARKS_JS)  # INIT_JS: the websocket
    with ctx:
        page.goto(url)
        page.wait_for_function(DRAWN_JS, arg=charts, timeout=90_000, polling=20)
        return page.evaluate(TIMES_JS, pattern)


def report(rows: dict[str, list[dict]]) -> dict:
    """Medians per app (times, bytes, the class of 60), printed."""
    out = {}
    for name, rs in rows.items():
        med = {k: statistics.median(r.get(k) or float("nan") for r in rs) for k in KEYS}
        med["plotly_run"] = statistics.median(r["plotly_ready"] - r["plotly_got"] for r in rs)
        size = {k: statistics.median(r[k] for r in rs) for k in ("http_bytes", "ws_bytes")}
        out[name] = {
            "median_ms": {k: round(v) for k, v in med.items()},
            "median_bytes": size,
            "class_of_60_bytes": CLASS * sum(size.values()),
            "visits": rs,
        }
        kit.line(name, {**med, **size, "class_of_60_bytes": out[name]["class_of_60_bytes"]})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = kit.parser(__doc__)
    ap.add_argument("--app", default="serve.py", help="attnviz as scripts/run.sh serves it")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warm", type=int, default=1, help="visits per app before measuring")
    ap.add_argument("--proxy", action="store_true", help="also attnviz behind haproxy")
    args = ap.parse_args(argv)
    apps = {k: v for k, v in APPS.items() if args.proxy or "haproxy" not in k}
    out: dict = {"load_before": os.getloadavg(), "rounds": args.rounds}
    rows: dict[str, list[dict]] = {name: [] for name in apps}
    with (
        kit.servers(args.app, kit.PLAIN_APP) as (app, plain),
        kit.browser() as browser,
        HAProxy([app.port]) if args.proxy else contextlib.nullcontext() as proxy,
    ):
        urls = {"attnviz": app.url, "plain": plain.url, "attnviz+haproxy": proxy and proxy.url}
        for i in range(args.warm + args.rounds):  # warm: the servers' first runs, caches
            for name, (path, pattern, charts) in apps.items():
                r = visit(browser, urls[name] + path, pattern, charts)
                if i >= args.warm:
                    rows[name].append(r)
    out |= {"load_after": os.getloadavg(), **report(rows)}
    ratio = out["attnviz"]["median_ms"]["drawn"] / out["plain"]["median_ms"]["drawn"]
    print(f"first visit, attnviz / plain: {ratio:.2f}x  (load {out['load_before'][0]:.1f})")
    kit.write_json(args.json, out, say=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
