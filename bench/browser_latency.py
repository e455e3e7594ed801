"""Slider latency in a real browser: key press on a slider -> rerun done -> last redraw,
attnviz against ``bench/plain_charts.py`` (docs/benchmarks.md; the guard runs the first two).
``--langs``: the N slider in several languages, interleaved move by move, with figures that
need no clock (plotly calls, Chrome's layout metrics, CPU seconds; "Chinese and Arabic
redraws"; bench/lang_redraw.py until issue 49).

    python bench/browser_latency.py --pages ",multi_head,step_by_step" --configs defaults
    python bench/browser_latency.py --pages "" --select head --bare-slider \
        --configs "defaults,N16_H4=N=16&D=32&heads=4"
    python bench/browser_latency.py --langs en,zh_CN,ar --viewport 1600x900 --no-catch-up
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import statistics
import time
from pathlib import Path
from typing import Any

import kit
from kit import REPO

CONFIGS = {"defaults": "", "N64_D64_H8": "N=64&D=64&heads=8"}

# Installed before the page's own scripts: websocket sends and receives (time, bytes).
INIT_JS = """
(() => {
  const w = window.__ws = {sends: [], recvs: []};
  const Orig = window.WebSocket;
  class Patched extends Orig {
    constructor(...a) {
      super(...a);
      this.addEventListener('message', ev => w.recvs.push(
        [performance.now(), ev.data.byteLength || ev.data.size || ev.data.length || 0]));
    }
    send(data) { w.sends.push(performance.now()); return super.send(data); }
  }
  window.WebSocket = Patched;
})();
"""

# Once per page load: script-state transitions, plotly redraws, keydowns (performance.now()).
INSTRUMENT_JS = """
() => {
  if (window.__bench) return;
  const b = window.__bench = {states: [], plots: [], drawn: [], keys: [], hooked: 0};
  // Is a chart (page or board iframe) in the viewport? Asked when the marks are read, not
  // in the observer: a layout forced between plotly's DOM changes costs the page (issue 27).
  // By what it draws (title, plot areas, axis title, colour bars, legend), not by its box:
  // a chart whose blank top margin alone reaches into the window shows nothing redrawn.
  const DRAWN = '.gtitle, .nsewdrag, .g-xtitle, .colorbar, .legend';
  const inView = (el) => {
    const parts = Array.from(el.querySelectorAll(DRAWN), p => p.getBoundingClientRect())
      .filter(r => r.height > 0);
    const r = el.getBoundingClientRect();
    let top = parts.length ? Math.min(...parts.map(p => p.top)) : r.top;
    let bottom = parts.length ? Math.max(...parts.map(p => p.bottom)) : r.bottom;
    const fr = el.ownerDocument.defaultView.frameElement;
    if (fr) { const f = fr.getBoundingClientRect(); top += f.top; bottom += f.top; }
    return bottom > 0 && top < window.innerHeight;
  };
  const drew = (el) => {
    const t = performance.now();
    b.plots.push(t);
    if (el) b.drawn.push([t, el]);
    if (b.drawn.length > 2000) b.drawn.splice(0, 1000);
  };
  // Charts in view, and those redrawn since `since`: are two configurations comparable?
  window.__benchViewCounts = (since) => {
    const seen = b.drawn.filter(d => d[0] >= since).map(d => d[1]);
    const shown = window.__benchPlots().filter(inView);
    const redrawn = shown.filter(el => seen.some(d => d === el || d.contains(el)));
    return {inView: shown.length, redrawnInView: redrawn.length};
  };
  window.__benchLastInView = () => {
    for (let i = b.drawn.length - 1; i >= 0; i--)
      if (b.drawn[i][1].isConnected && inView(b.drawn[i][1])) return b.drawn[i][0];
    return 0;
  };
  const app = document.querySelector('[data-testid="stApp"]');
  const rec = () => b.states.push([app.getAttribute('data-test-script-state'),
                                   performance.now()]);
  rec();
  new MutationObserver(rec).observe(app, {attributes: true,
                                          attributeFilter: ['data-test-script-state']});
  // plotly charts of the page and of its same-origin iframes (the attnviz board)
  const docs = () => [document, ...Array.from(document.querySelectorAll('iframe'))
    .map(f => { try { return f.contentDocument; } catch (e) { return null; } })
    .filter(d => d && d.body)];
  window.__benchPlots = () => docs().flatMap(
    d => Array.from(d.querySelectorAll('.js-plotly-plot')));
  const observed = new WeakSet();
  const hook = () => {
    docs().forEach(d => { if (!observed.has(d)) { observed.add(d); mo.observe(d.body, opts); } });
    window.__benchPlots().forEach(gd => {
      if (gd.__benchHooked || !gd.on) return;
      gd.__benchHooked = true; b.hooked++;
      gd.on('plotly_afterplot', () => drew(gd));
    });
  };
  const opts = {subtree: true, childList: true, attributes: true};
  const mo = new MutationObserver(muts => {
    const plots = new Set();
    for (const m of muts) {
      const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
      const plot = el && el.closest && el.closest('[data-testid="stPlotlyChart"], .js-plotly-plot');
      if (plot) plots.add(plot);
    }
    plots.forEach(drew);
    hook();
  });
  hook();
  setInterval(hook, 100);  // iframes that load later
  document.addEventListener('keydown', e => b.keys.push(e.timeStamp), true);
}
"""

STATUS_JS = """
() => {
  const b = window.__bench;
  return {now: performance.now(), states: b.states.slice(-20), lastPlot: b.plots.length ?
          b.plots[b.plots.length - 1] : 0,
          lastViewPlot: window.__benchLastInView(),
          sends: window.__ws.sends.slice(-5),
          recvs: window.__ws.recvs.filter(r => r[0] >= (b.keys[b.keys.length - 1] || 0)),
          key: b.keys.length ? b.keys[b.keys.length - 1] : 0};
}
"""

# Every chart drawn: script not running, every board drawn, no redraw for `quiet` ms.
DONE_JS = """([since, quiet]) => {
  const b = window.__bench;
  const app = document.querySelector('[data-testid="stApp"]');
  const state = app ? app.getAttribute('data-test-script-state') : null;
  const boards = (BOARDS_DRAWN)();
  const last = b.plots.length ? b.plots[b.plots.length - 1] : 0;
  const stateAt = b.states.length ? b.states[b.states.length - 1][1] : 0;
  const now = performance.now();
  const plots = window.__benchPlots().length;
  const ws = window.__ws.recvs.filter(r => r[0] >= since).reduce((a, r) => a + r[1], 0);
  const ends = b.states.filter(s => s[0] === 'notRunning' && s[1] >= since);
  const msgs = window.__ws.recvs.filter(r => r[0] >= since);
  const script = Math.max(ends.length ? ends[ends.length - 1][1] : 0,
                          msgs.length ? msgs[msgs.length - 1][0] : 0);
  return {done: state === 'notRunning' && boards && plots > 0 && last > since
                && now - last > quiet && now - stateAt > quiet,
          last, plots, ws, now, script, state, boards};
}""".replace("BOARDS_DRAWN", kit.BOARDS_DRAWN_JS)


def load(page, url: str, quiet: float, timeout: float) -> None:
    """Go to ``url``, instrument the page, wait until it is drawn and quiet (not for `load`:
    the charts may draw before the marks come, then the boards' state settles it)."""
    page.goto(url, wait_until="commit")
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout * 1000)
    page.evaluate(INSTRUMENT_JS)
    deadline, calm = time.monotonic() + timeout, None
    while time.monotonic() < deadline:  # drawn and quiet for `quiet` ms (or boards drawn)
        s = page.evaluate(DONE_JS, [0, quiet])
        ready = s["done"] or (s["state"] == "notRunning" and s["boards"] and s["plots"] > 0)
        calm = (calm or time.monotonic()) if ready else None
        if calm is not None and time.monotonic() - calm > quiet / 1000:
            return
        time.sleep(0.05)
    raise TimeoutError(f"the view did not settle within {timeout} s: {s}")


def open_page(browser, url: str, viewport: tuple[int, int], quiet: float, *init_js: str,
              timeout: float = 120.0):  # fmt: skip
    """A new tab on ``url``, instrumented, drawn and quiet: (context, page)."""
    ctx, page = kit.tab(browser, viewport, INIT_JS, *init_js)
    load(page, url, quiet, timeout)
    return ctx, page


def one_move(page, key: str, quiet_ms: float, timeout: float) -> dict:
    """Press ``key``; wait for the rerun (its last websocket message or the script state's
    ``notRunning``, the later: a short rerun may never show ``running``) and its redraws."""
    n_keys = page.evaluate("() => window.__bench.keys.length")
    page.keyboard.press(key)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.03)
        s = page.evaluate(STATUS_JS)
        if page.evaluate("() => window.__bench.keys.length") == n_keys:
            continue
        t0 = s["key"]
        sent = next((t for t in s["sends"] if t >= t0), None)
        if sent is None:
            continue
        recvs = [r for r in s["recvs"] if r[0] >= sent]
        if not recvs or s["states"][-1][0] != "notRunning":
            continue
        ends = [t for st, t in s["states"] if t >= t0 and st == "notRunning"]
        end = max([recvs[-1][0], *ends])
        last_plot = s["lastPlot"] if s["lastPlot"] > t0 else end
        last_view = s["lastViewPlot"] if s["lastViewPlot"] > t0 else end
        if s["now"] - max(end, last_plot) < quiet_ms:
            continue
        counts = page.evaluate("(t) => window.__benchViewCounts(t)", t0)
        return {
            "sent_ms": sent - t0,
            "first_msg_ms": recvs[0][0] - t0,
            "last_msg_ms": recvs[-1][0] - t0,
            "script_ms": end - t0,
            "view_ms": max(end, last_view) - t0,
            "charts_ms": last_view - t0,  # a board switching heads draws before the rerun ends
            "drawn_ms": max(end, last_plot) - t0,
            "kb": sum(r[1] for r in recvs) / 1024,
            "in_view": counts["inView"],
            "redrawn_in_view": counts["redrawnInView"],
        }
    raise TimeoutError(f"no finished rerun within {timeout} s after {key}")


def measure(
    browser, url: str, args: argparse.Namespace, label: str, select: str | None = None,
    key: str | None = None,
) -> dict[str, Any]:  # pragma: no cover - driven by main()  # fmt: skip
    ctx, page = open_page(browser, url, kit.size(args.viewport), args.quiet)
    if select:  # a selectbox (head, query): type an option, time the Enter
        thumb = page.locator(f".st-key-{select} input[role='combobox']").first
    else:
        thumb = page.locator(f".st-key-{key or args.key} input[type='range']").first
    thumb.focus()
    n_start = thumb.get_attribute("value") or thumb.input_value()
    rows = []
    for i in range(args.warmup + args.moves):
        if select:  # type the option (1 and 0 in turn: every page has both) then Enter
            thumb.focus()
            page.keyboard.type(str((i + 1) % 2))
            page.wait_for_timeout(200)
        r = one_move(page, "Enter" if select else "ArrowRight", args.quiet, args.timeout)
        if i >= args.warmup:
            rows.append(r)
        time.sleep(args.pause)
    n_end = thumb.get_attribute("value") or thumb.input_value()
    nplots = page.evaluate("() => window.__benchPlots().length")
    ctx.close()
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    out = {
        "label": label,
        "url": url,
        "moves": len(rows),
        "N": f"{n_start}->{n_end}",
        "plots": nplots,
        **{f"median_{k}": round(v, 1) for k, v in med.items()},
        "p90_drawn_ms": round(sorted(r["drawn_ms"] for r in rows)[int(0.9 * (len(rows) - 1))], 1),
        "rows": rows,
    }
    kit.line(f"{label} N {out['N']}", {"plots": nplots, **med, "p90_drawn_ms": out["p90_drawn_ms"]})
    return out


# --langs: counts every call of plotly's drawing functions (window.Plotly, once it has loaded).
HOOK_JS = """() => {
  if (window.__calls) return true;
  const P = window.Plotly;
  if (!P) return false;
  const c = window.__calls = {};
  for (const f of ['react', 'newPlot', 'relayout', 'restyle', 'purge']) {
    const o = P[f];
    c[f] = 0;
    P[f] = function (...a) { c[f]++; return o.apply(this, a); };
  }
  return true;
}"""
METRICS = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")
METRICS += ("LayoutCount", "RecalcStyleCount")
RATIOS = ("cpu_renderer", "cpu_server", "view_ms", "TaskDuration", "LayoutDuration")


def languages(args: argparse.Namespace, srv: kit.Server, browser) -> dict[str, list[dict]]:
    """``--langs``: a tab per language (``LANG@WxH``: its own window) on the first of
    ``--pages`` with the first of ``--configs``; the N slider moved in each in turn, the
    order reversed every move; move 0 warms up. The medians and the ratios are printed."""
    system, langs = browser.new_browser_cdp_session(), args.langs.split(",")

    def counters(tab: tuple) -> dict[str, float]:
        page, metrics = tab
        got = {m["name"]: m["value"] for m in metrics.send("Performance.getMetrics")["metrics"]}
        out = {k: got.get(k, 0.0) for k in METRICS} | {"cpu_server": kit.cpu_s(srv.proc.pid)}
        for p in system.send("SystemInfo.getProcessInfo")["processInfo"]:
            out[f"cpu_{p['type']}"] = out.get(f"cpu_{p['type']}", 0.0) + p["cpuTime"]
        calls = page.evaluate("() => ({...window.__calls})")
        return out | {f"calls_{k}": v for k, v in calls.items()}

    tabs, query = {}, CONFIGS[args.configs.split(",")[0].partition("=")[0]]
    for lang in langs:
        code, _, size = lang.partition("@")
        url = f"{srv.url}/{args.pages.split(',')[0]}?lang={code}" + (f"&{query}" * bool(query))
        init = ["window.__attnvizCatchUpMs = 1e9;"] if args.no_catch_up else []
        ctx, page = open_page(browser, url, kit.size(size or args.viewport), args.quiet, *init)
        page.wait_for_function(HOOK_JS, timeout=60_000)
        tabs[lang] = (page, ctx.new_cdp_session(page))
        tabs[lang][1].send("Performance.enable")
    out: dict[str, list[dict]] = {lang: [] for lang in langs}
    for i in range(args.moves + 1):
        for lang in langs if i % 2 == 0 else langs[::-1]:
            tabs[lang][0].locator(f".st-key-{args.key} input[type='range']").first.focus()
            tabs[lang][0].wait_for_timeout(100)
            c0 = counters(tabs[lang])
            row = one_move(tabs[lang][0], "ArrowRight", args.quiet, 60.0)
            row |= {k: v - c0.get(k, 0.0) for k, v in counters(tabs[lang]).items()}
            if i > 0:
                out[lang].append(row)
    keys = [k for k, v in out[langs[0]][0].items() if isinstance(v, int | float)]
    print(f"{'median per move':24s}" + "".join(f"{lang:>16s}" for lang in langs))
    for k in keys:
        meds = (statistics.median(r.get(k, 0.0) for r in out[lang]) for lang in langs)
        print(f"{k:24s}" + "".join(f"{m:16.3f}" for m in meds))
    for lang in langs[1:]:
        for k in RATIOS:
            rs = [b[k] / a[k] for a, b in zip(out[langs[0]], out[lang], strict=True) if a[k] > 0]
            if rs:
                print(f"{lang}/{langs[0]} {k}: median of the moves' ratios "
                      f"{statistics.median(rs):.3f} (range {min(rs):.2f}-{max(rs):.2f}, "
                      f"{len(rs)} moves)")  # fmt: skip
    return out


def unlike_views(results: list[dict]) -> list[str]:
    """A note per page whose configurations redrew different numbers of charts in view: their
    times measure different work (docs/benchmarks.md, "Chinese and Arabic redraws")."""
    pages: dict[str, dict[str, set[float]]] = {}
    for r in results:
        app, page, cfg = r["label"].split(":")[:3]
        pages.setdefault(f"{app}:{page}", {}).setdefault(cfg, set()).add(
            r["median_redrawn_in_view"]
        )
    notes = []
    for page, cfgs in pages.items():
        if len(set().union(*cfgs.values())) > 1:
            counts = ", ".join(
                f"{cfg} {'/'.join(f'{v:g}' for v in sorted(vs))}" for cfg, vs in cfgs.items()
            )
            notes.append(
                f"{page}: charts redrawn in view differ ({counts}): compare these times only "
                "at a --viewport where the counts agree"
            )
    return notes


def main(argv: list[str] | None = None) -> int:
    ap = kit.parser(__doc__)
    ap.add_argument("--app", default="serve.py", help="attnviz as scripts/run.sh serves it")
    ap.add_argument("--bare", default=kit.BARE_APP)
    ap.add_argument("--pages", default=",multi_head", help="url paths ('' = the playground)")
    ap.add_argument("--configs", default=",".join(CONFIGS), help=f"of {CONFIGS} or NAME=QUERY")
    ap.add_argument("--key", default="N", help="widget key of the slider to move")
    ap.add_argument("--select", help="widget key of a selectbox to step instead (no bare page)")
    ap.add_argument("--bare-slider", action="store_true", help="with --select: the bare's --key")
    ap.add_argument("--moves", type=int, default=12)
    ap.add_argument("--viewport", default="1600x1000", help="WxH (1600x4000: every chart in view)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--pause", type=float, default=0.2, help="seconds between moves")
    ap.add_argument("--quiet", type=float, default=300.0, help="ms without redraws = done")
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--rounds", type=int, default=1, help="repeat everything, interleaved")
    ap.add_argument("--langs", help="en,zh_CN,ar (LANG@WxH: its own window): the languages")
    ap.add_argument("--no-catch-up", action="store_true", help="--langs: no stale board's draw")
    args = ap.parse_args(argv)
    if args.langs:
        with kit.warm(args.app) as srv, kit.browser() as browser:
            kit.write_json(args.json, languages(args, srv, browser), say=False)
        return 0

    pages = [p.strip().strip("/") for p in args.pages.split(",")]
    configs = [c.strip().partition("=") for c in args.configs.split(",") if c.strip()]
    CONFIGS.update({name: q for name, eq, q in configs if eq})
    configs = [name for name, _, _ in configs]
    bare = not args.select or args.bare_slider  # the bare page moves its --key slider
    apps = [("attnviz", args.app, pages)] + ([("bare", args.bare, [""])] if bare else [])
    results = []
    with contextlib.ExitStack() as stack:
        targets = []
        for name, app, pgs in apps:
            if not (REPO / app).exists() and not Path(app).exists():
                print(f"skipping {name}: {app} does not exist")
                continue
            targets.append((name, stack.enter_context(kit.warm(app)), pgs))
        browser = stack.enter_context(kit.browser())
        for rnd, cfg, (name, srv, pgs) in itertools.product(range(args.rounds), configs, targets):
            for pg, _, key in (entry.partition("@") for entry in pgs):  # "learned@lr_step"
                url = f"{srv.url}/{pg}" + (f"?{CONFIGS[cfg]}" if CONFIGS[cfg] else "")
                label = f"{name}:{pg or 'home'}:{cfg}" + (f":r{rnd + 1}" if args.rounds > 1 else "")
                select = args.select if name == "attnviz" else None
                results.append(measure(browser, url, args, label, select, key or None))
    for note in unlike_views(results):
        print(f"note: {note}")
    kit.write_json(args.json, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
