"""Where a head change's time goes: key press -> board switch -> each chart drawn.

Opens the playground (``--query``, default N=16, D=32, 4 heads) in headless Chromium, flips
the head picker once (so the other heads are prefetched), then for ``--moves`` head changes
records in the page's clock: the Enter keydown, the head widget's first mutation, every
board's switch (``data-switches``) and state, each chart's ``plotly_afterplot`` (with its
board and whether it is in view) and the rerun's end; prints the median of each mark. With
``--trace FILE`` the last move is also recorded as a Chrome trace (CDP ``Tracing``,
devtools.timeline categories) and summarised: main-thread time by event kind
(script, style, layout, paint, ...) between the key press and the last chart in view.

    python bench/head_trace.py --moves 8 --trace /tmp/head.json
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
from pathlib import Path

import kit
from browser_latency import open_page, wait_idle

# marks: [name, t] in performance.now() ms
MARKS_JS = """
() => {
  const m = window.__marks = [];
  const mark = (n) => m.push([n, performance.now()]);
  document.addEventListener('keydown', e => m.push(['key', e.timeStamp]), true);
  const head = document.querySelector('.st-key-head');
  new MutationObserver(muts => muts.forEach(x => mark('widget:' + (x.attributeName || x.type) +
    '=' + (x.attributeName ? x.target.getAttribute(x.attributeName) : '')))).observe(head,
    {subtree: true, attributes: true, childList: true, characterData: true});
  const app = document.querySelector('[data-testid="stApp"]');
  new MutationObserver(() => mark('script:' + app.getAttribute('data-test-script-state')))
    .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  new MutationObserver(muts => {
    for (const x of muts) {
      const el = x.target.nodeType === 1 ? x.target : x.target.parentElement;
      const plot = el && el.closest && el.closest('.js-plotly-plot');
      if (!plot) continue;
      const r = plot.getBoundingClientRect();
      if (!(r.bottom > 0 && r.top < innerHeight)) continue;
      const c = plot.closest('.cell');
      mark('mut:' + (c ? c.dataset.key : '?') + ':' + (x.attributeName || x.type) + ':' +
           (el.tagName || '') + '.' + String(el.getAttribute('class') || '').split(' ')[0]);
      break;
    }
  }).observe(document.body, {subtree: true, childList: true, attributes: true});
  document.querySelectorAll('.attnviz-board').forEach(b => {
    new MutationObserver(muts => muts.forEach(x => mark(
      (b.dataset.board || '?') + ':' + x.attributeName + '=' + b.getAttribute(x.attributeName))))
      .observe(b, {attributes: true, attributeFilter: ['data-state', 'data-switches']});
    b.querySelectorAll('.js-plotly-plot').forEach(gd => gd.on('plotly_afterplot', () => {
      const r = gd.getBoundingClientRect();
      const v = r.bottom > 0 && r.top < innerHeight ? 'view' : 'out';
      mark('plot:' + (b.dataset.board || '?') + ':' + gd.parentElement.dataset.key + ':' + v);
    }));
  });
}
"""

CATS = "devtools.timeline,disabled-by-default-devtools.timeline,v8.execute,blink.user_timing"
KINDS = {
    "FunctionCall": "script",
    "EvaluateScript": "script",
    "v8.compile": "script",
    "TimerFire": "script",
    "EventDispatch": "script",
    "FireAnimationFrame": "script",
    "RunMicrotasks": "script",
    "UpdateLayoutTree": "style",
    "RecalculateStyles": "style",
    "Layout": "layout",
    "PrePaint": "paint",
    "Paint": "paint",
    "Layerize": "paint",
    "UpdateLayer": "paint",
    "ParseHTML": "parse",
    "MajorGC": "gc",
    "MinorGC": "gc",
    "V8.GCScavenger": "gc",
}


def summarise(trace: list[dict], t0_us: float, t1_us: float) -> dict[str, float]:
    """Main-thread time (ms) by kind of top-level-ish event in [t0, t1] (trace clock):
    the innermost known kind wins over its parent (script inside a task, style in script)."""
    renderers = {
        (e.get("pid"), e.get("tid"))
        for e in trace
        if e.get("name") == "thread_name" and e.get("args", {}).get("name") == "CrRendererMain"
    }
    main = collections.Counter(
        (e.get("pid"), e.get("tid"))
        for e in trace
        if (e.get("pid"), e.get("tid")) in renderers and t0_us <= e.get("ts", 0) <= t1_us
    ).most_common(1)[0][0]
    evs = [
        e
        for e in trace
        if (e.get("pid"), e.get("tid")) == main
        and e.get("ph") == "X"
        and e.get("dur")
        and e["ts"] + e["dur"] >= t0_us
        and e["ts"] <= t1_us
    ]
    # self time per kind: time covered by an event of that kind not covered by a child kind
    spans = sorted(
        (
            (
                e["ts"],
                e["ts"] + e["dur"],
                KINDS.get(e["name"], "task" if e["name"] == "RunTask" else None),
            )
            for e in evs
        ),
        key=lambda s: (s[0], -s[1]),
    )
    spans = [s for s in spans if s[2]]
    out: collections.Counter = collections.Counter()
    step = 100  # us resolution
    for t in range(int(t0_us), int(t1_us), step):
        kind = "idle"
        for a, b, k in spans:
            if a <= t < b:
                kind = k  # later (inner) spans override
            elif a > t:
                break
        out[kind] += step / 1000
    return dict(out.most_common())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--query", default="N=16&D=32&heads=4")
    ap.add_argument("--select", default="head")
    ap.add_argument("--moves", type=int, default=8)
    ap.add_argument("--trace", help="write a Chrome trace of the last move here")
    ap.add_argument("--viewport", default="1600x1000")
    args = ap.parse_args(argv)
    with kit.warm() as srv, kit.browser() as browser:
        ctx, page, _ = open_page(browser, f"{srv.url}/?{args.query}", kit.size(args.viewport), 300)
        box = page.locator(f".st-key-{args.select} input[role='combobox']").first
        rows = []
        cdp = ctx.new_cdp_session(page)
        chunks: list = []
        done: list = []
        cdp.on("Tracing.dataCollected", lambda p: chunks.extend(p["value"]))
        cdp.on("Tracing.tracingComplete", lambda p: done.append(1))
        for i in range(args.moves + 1):
            if i == 1:
                page.evaluate(MARKS_JS)
            tracing = args.trace and i == args.moves
            if tracing:
                cdp.send("Tracing.start", {"categories": CATS, "transferMode": "ReportEvents"})
            box.focus()
            page.keyboard.type(str((i + 1) % 2))
            page.wait_for_timeout(200)
            if i >= 1:
                page.evaluate("() => { window.__marks.length = 0; }")
            page.keyboard.press("Enter")
            page.wait_for_timeout(1500)
            wait_idle(page)
            if tracing:
                cdp.send("Tracing.end")
                while not done:
                    page.wait_for_timeout(100)
            if i == 0:
                continue
            marks = page.evaluate("() => window.__marks")
            t0 = next(t for n, t in marks if n == "key")
            rows.append({n: round(t - t0, 1) for n, t in reversed(marks) if n != "key"})
            rows[-1]["_order"] = [(n, round(t - t0, 1)) for n, t in marks]
    for n, t in rows[-1]["_order"]:
        print(f"  last move {t:8.1f} ms  {n}")
    names = sorted(
        {k for r in rows for k in r if k != "_order"},
        key=lambda k: statistics.median(r[k] for r in rows if k in r),
    )
    print(f"median over {len(rows)} moves (first occurrence of each mark):")
    for k in names:
        print(f"  {statistics.median(r[k] for r in rows if k in r):8.1f} ms  {k}")
    if args.trace:
        Path(args.trace).write_text(json.dumps({"traceEvents": chunks}))
        # the key press and last in-view chart in the trace's clock: EventDispatch keydown
        keys = [
            e
            for e in chunks
            if e.get("name") == "EventDispatch"
            and e.get("args", {}).get("data", {}).get("type") == "keydown"
        ]
        t0 = keys[-1]["ts"]
        last = rows[-1]
        plots = [t for n, t in last["_order"] if n.startswith("plot:") and n.endswith(":view")]
        t1 = t0 + 1000 * (max(plots) if plots else 300)
        print(
            f"trace {args.trace}: main thread from key press to last chart in view "
            f"({(t1 - t0) / 1000:.0f} ms):"
        )
        for k, v in summarise(chunks, t0, t1).items():
            print(f"  {k:8s} {v:7.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
