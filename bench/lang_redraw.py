"""The N slider's redraw in several languages, interleaved, with figures that need no clock
(plotly calls, Chrome's layout metrics, CPU seconds); docs/benchmarks.md, "Chinese and
Arabic redraws".

    python bench/lang_redraw.py                                   # en, zh_CN, ar at 1600x1000
    python bench/lang_redraw.py --viewport 1600x900 --no-catch-up  # the same charts in view
"""

from __future__ import annotations

import statistics

import browser_latency as bl
import kit

# Counts every call of plotly's drawing functions (window.Plotly, once it has loaded).
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


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - a benchmark
    ap = kit.parser(__doc__)
    ap.add_argument("--langs", default="en,zh_CN,ar", help="codes, LANG@WxH for its own window")
    ap.add_argument("--moves", type=int, default=10)
    ap.add_argument("--viewport", default="1600x1000")
    ap.add_argument("--query", default="", help="more of the link, e.g. N=12&heads=4")
    ap.add_argument("--no-catch-up", action="store_true")
    ap.add_argument("--page", default="", help="the page's URL path, e.g. multi_head")
    ap.add_argument("--app", default="serve.py", help="what the server runs (as deployed)")
    args = ap.parse_args(argv)

    langs = [x.strip() for x in args.langs.split(",") if x.strip()]
    out: dict[str, list[dict]] = {lang: [] for lang in langs}
    with kit.warm(args.app) as srv, kit.browser() as browser:
        system = browser.new_browser_cdp_session()

        def cpu() -> dict[str, float]:
            acc: dict[str, float] = {}
            for p in system.send("SystemInfo.getProcessInfo")["processInfo"]:
                acc[p["type"]] = acc.get(p["type"], 0.0) + p["cpuTime"]
            return acc

        pages = {}
        for lang in langs:
            code, _, size = lang.partition("@")
            query = f"lang={code}" + (f"&{args.query}" if args.query else "")
            init = ["window.__attnvizCatchUpMs = 1e9;"] if args.no_catch_up else []
            url, window = f"{srv.url}/{args.page}?{query}", kit.size(size or args.viewport)
            ctx, page = bl.open_page(browser, url, window, 300, *init)
            page.wait_for_function(HOOK_JS, timeout=60_000)
            metrics = ctx.new_cdp_session(page)
            metrics.send("Performance.enable")
            pages[lang] = (page, metrics)

        def metric(session) -> dict[str, float]:
            got = session.send("Performance.getMetrics")["metrics"]
            values = {m["name"]: m["value"] for m in got}
            return {k: values.get(k, 0.0) for k in METRICS}

        for i in range(args.moves + 1):  # move 0 warms up
            for lang in langs if i % 2 == 0 else langs[::-1]:
                page, metrics = pages[lang]
                page.locator(".st-key-N input[type='range']").first.focus()
                page.wait_for_timeout(100)
                m0, c0, s0 = metric(metrics), cpu(), kit.cpu_s(srv.proc.pid)
                calls0 = page.evaluate("() => ({...window.__calls})")
                row = bl.one_move(page, "ArrowRight", 300.0, 60.0)
                m1, c1, s1 = metric(metrics), cpu(), kit.cpu_s(srv.proc.pid)
                calls1 = page.evaluate("() => ({...window.__calls})")
                row.update({k: m1[k] - m0[k] for k in METRICS})
                row.update({f"calls_{k}": calls1[k] - calls0[k] for k in calls1})
                for kind in ("renderer", "browser", "gpu"):
                    row[f"cpu_{kind}"] = c1.get(kind, 0.0) - c0.get(kind, 0.0)
                row["cpu_server"] = s1 - s0
                if i > 0:
                    out[lang].append(row)
    keys = [k for k, v in out[langs[0]][0].items() if isinstance(v, (int, float))]
    print(f"{'median per move':24s}" + "".join(f"{lang:>16s}" for lang in langs))
    for k in keys:
        meds = (statistics.median(r[k] for r in out[lang]) for lang in langs)
        print(f"{k:24s}" + "".join(f"{m:16.3f}" for m in meds))
    base = langs[0]
    for lang in langs[1:]:
        for k in RATIOS:
            rs = [b[k] / a[k] for a, b in zip(out[base], out[lang], strict=True) if a[k] > 0]
            if rs:
                print(
                    f"{lang}/{base} {k}: median of the moves' ratios {statistics.median(rs):.3f} "
                    f"(range {min(rs):.2f}-{max(rs):.2f}, {len(rs)} moves)"
                )
    kit.write_json(args.json, out, say=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
