"""The Compare page's redraw and the cell panel, in a real browser, against the playground.

One server (``app.py``), headless Chromium, the page instrumentation of
``bench/browser_latency.py`` (keydown -> rerun done -> last plotly redraw). In one run:

* ``playground N``: ArrowRight on the N slider of the playground (the reference);
* ``compare A (N)``: the same slider on the Compare page (a change of view A: the whole
  page reruns, both views are computed);
* ``compare B (mask)``: view B's mask selectbox switched between ``causal`` and ``padding``
  (a change of view B: the page's fragment reruns);
* ``compare B (head)``: view B's head switched between 0 and 1 (fragment);
* ``cell click``: a click on a weights cell -> its worked computation shown, on the
  playground and on Compare: first the browser's panel (``attnviz/ui/board/js/cell.js``: its
  heading naming that cell is in the page), then the server's part (the equations; its
  heading naming the cell), drawn by the fragment rerun the click causes.

Each gesture is repeated ``--moves`` times after ``--warmup``; medians are printed, with
the ratio of each compare redraw to the playground's slider time (target < 1.5x) and the
click-to-panel times (target 150 ms: the browser's panel).

    python bench/compare.py
    python bench/compare.py --moves 12 --configs "defaults,N16_H4=N=16&D=32&heads=4"
    python bench/compare.py --json compare.json
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import kit
from browser_latency import one_move, open_page

CONFIGS = {"defaults": ""}
# Every board of the page (components v2, in the page's document) has drawn its last data.
BOARDS_DRAWN_JS = """() => Array.from(document.querySelectorAll('.stBidiComponent'))
  .every(c => { const b = c.querySelector('.attnviz-board');
                return b !== null && b.dataset.state === 'drawn'; })"""

# Page coordinates of the centre of cell (x, y) of chart `key` (scrolled into view).
CELL_JS = """([key, x, y]) => {
  const cell = document.querySelector(`.attnviz-board .cell[data-key="${key}"]`);
  if (!cell) return null;
  cell.scrollIntoView({block: 'center'});
  const gd = cell.querySelector('.js-plotly-plot');
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  const cr = cell.getBoundingClientRect();
  return {x: cr.left + xa._offset + xa.l2p(x), y: cr.top + ya._offset + ya.l2p(y)};
}"""

# Arm a watcher: the time of the mousedown on a board, of the rerun request the click
# value causes (the next websocket send), of the first moment the page shows the browser's
# panel (cell.js) naming cell (i, j) and of the server's panel heading naming it. All in
# the page's clock.
ARM_JS = """([i, j]) => {
  const w = window.__cell = {down: 0, sent: 0, client: 0, shown: 0};
  const want = `a${i},${j} = `;
  if (!window.__cellHooked) {
    window.__cellHooked = true;
    const at = (name) => (ev) => {
      const t = ev.target;
      if (t.closest && t.closest('.attnviz-board')) window.__cell[name] = performance.now();
    };
    document.addEventListener('mousedown', at('down'), true);
    const send = WebSocket.prototype.send;  // the rerun request (a BackMsg)
    WebSocket.prototype.send = function (d) {
      const c = window.__cell;
      if (c && c.down && !c.sent) c.sent = performance.now();
      return send.call(this, d);
    };
  }
  // only added nodes and text changes are looked at (plotly's hover changes attributes)
  const names = (n) => {
    const el = n && (n.nodeType === 1 ? n : n.parentElement);
    const s = el ? el.closest('strong') || el : null;
    return !!s && s.textContent.includes('came about') && s.textContent.includes(want);
  };
  const client = (n) => {
    const el = n && n.nodeType === 1 ? n : null;
    return !!el && el.matches('.attnviz-arith h3') && el.textContent.includes(want);
  };
  const seen = (muts, test) => muts.some(m => m.type === 'characterData' ? test(m.target)
                                         : Array.from(m.addedNodes).some(test));
  const mo = new MutationObserver((muts) => {
    const t = performance.now();
    if (!w.client && seen(muts, client)) w.client = t;
    if (!w.shown && seen(muts, names)) w.shown = t;
    if (w.client && w.shown) mo.disconnect();
  });
  mo.observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def keys(browser, url: str, args, action: str) -> list[dict]:
    """``action``: "slider" (ArrowRight on N), "select:KEY:A|B" (a selectbox switched between
    options A and B by typing them, then Enter)."""
    ctx, page, ws_bytes = open_page(browser, url, args.viewport, args.quiet)
    rows = []
    try:
        if action == "slider":
            page.locator(".st-key-N input[type='range']").first.focus()
        for i in range(args.warmup + args.moves):
            if action == "slider":
                key = "ArrowRight"
            else:
                _, wkey, opts = action.split(":")
                box = page.locator(f".st-key-{wkey} input[role='combobox']").first
                box.scroll_into_view_if_needed()
                box.focus()
                page.keyboard.type(opts.split("|")[i % 2])
                page.wait_for_timeout(200)
                key = "Enter"
            r = one_move(page, key, ws_bytes, args.quiet, args.timeout)
            if i >= args.warmup:
                rows.append(r)
            time.sleep(args.pause)
    finally:
        ctx.close()
    return rows


def clicks(browser, url: str, args, chart: str) -> list[dict]:
    """Click cells of ``chart`` in turn; per click, from the mousedown: the browser's panel
    naming that cell shown, the rerun request sent, the server's panel naming it shown (the
    page's own clock)."""
    ctx, page = kit.tab(browser, args.viewport)
    page.goto(url)
    page.wait_for_function(  # the chart is there (its board has loaded), then all are drawn
        f"() => !!({CELL_JS})(['{chart}', 0, 0])", timeout=120_000, polling=200
    )
    page.wait_for_function(BOARDS_DRAWN_JS, timeout=120_000, polling=200)
    page.wait_for_timeout(1000)
    rows = []
    try:
        for i in range(args.warmup + args.moves):
            q, k = (i % 5) + 1, (i * 2) % 6  # a different cell each time
            pos = page.evaluate(CELL_JS, [chart, k, q])  # scrolls the board into view
            page.wait_for_timeout(300)
            pos = page.evaluate(CELL_JS, [chart, k, q])
            page.evaluate(ARM_JS, [q, k])
            page.mouse.click(pos["x"], pos["y"])
            deadline = time.monotonic() + args.timeout
            while time.monotonic() < deadline:
                w = page.evaluate("() => window.__cell")
                if w["down"] and w["shown"] and w["client"]:
                    break
                time.sleep(0.02)
            else:
                raise TimeoutError(f"no panel for cell ({q}, {k}) of {chart}: {w}")
            if i >= args.warmup:  # from the mousedown: browser's panel, rerun request, server's
                rows.append(
                    {
                        "client_ms": w["client"] - w["down"],
                        "sent_ms": (w["sent"] or w["shown"]) - w["down"],
                        "shown_ms": w["shown"] - w["down"],
                    }
                )
            page.wait_for_function(BOARDS_DRAWN_JS, timeout=120_000, polling=200)
            time.sleep(args.pause + args.quiet / 1000)
    finally:
        ctx.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--app", default="app.py")
    ap.add_argument("--configs", default="defaults", help="names or NAME=QUERY, comma-separated")
    ap.add_argument("--moves", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--viewport", default="1600x1000")
    ap.add_argument("--pause", type=float, default=0.2)
    ap.add_argument("--quiet", type=float, default=300.0)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    args.viewport = kit.size(args.viewport)
    configs = []
    for c in (c.strip() for c in args.configs.split(",") if c.strip()):
        name, _, q = c.partition("=")
        CONFIGS.setdefault(name, q)
        configs.append(name)

    results: list[dict[str, Any]] = []
    with kit.warm(args.app) as srv, kit.browser() as browser:
        for cfg in configs:
            q = CONFIGS[cfg]
            amp = f"&{q}" if q else ""
            base = f"{srv.url}/?{q}" if q else f"{srv.url}/"
            cmp_url = f"{srv.url}/compare?b_scale=none{amp}"
            runs = [  # (label, measure, url, what)
                ("playground N", keys, base, "slider"),
                ("compare A (N)", keys, cmp_url, "slider"),
                ("compare B (mask)", keys, cmp_url, "select:b_mask:causal|padding"),
                ("compare B (head)", keys, cmp_url, "select:b_head:1|0"),
                ("cell click playground", clicks, base, "pg_weights"),
                ("cell click compare", clicks, cmp_url, "cmp_diff"),
            ]
            ref = None
            for label, run, url, what in runs:
                rows = run(browser, url, args, what)
                key = "shown_ms" if label.startswith("cell") else "drawn_ms"
                med = round(kit.median(rows, key), 1)
                out = {"config": cfg, "label": label, "median_ms": med, "rows": rows}
                if key == "drawn_ms":
                    out["median_script_ms"] = round(kit.median(rows, "script_ms"), 1)
                    ref = med if label == "playground N" else ref
                    ratio = f"  {med / ref:4.2f}x the playground's slider" if ref else ""
                    target = "  (target < 1.5x)" if label != "playground N" else ""
                else:
                    out["median_client_ms"] = round(kit.median(rows, "client_ms"), 1)
                    ratio = f"  (the browser's panel: {out['median_client_ms']:.0f} ms"
                    target = ", target 150 ms; above: the server's part)"
                print(f"{cfg:10s} {label:22s} median {med:6.0f} ms{ratio}{target}", flush=True)
                results.append(out)
    kit.write_json(args.json, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
