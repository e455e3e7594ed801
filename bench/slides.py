"""Slides (issue 35): how much of the screen each slide's main chart takes in headless
Chromium (docs/benchmarks.md, "Slides"); the targets are asserted by
``tests/e2e/test_devices_e2e.py -k "projector or learned"``.

    python bench/slides.py --json slides.json
"""

from __future__ import annotations

import kit
from e2e_app import BrowserSession, start_app_server, stop_app_server

#: (name, link, window, chart keys, the element scrolled under the header or None)
VIEWS = [
    ("step 1: X", "/step_by_step?present=1&N=6&D=8&step=1", (1920, 1080), ["sb_x"], None),
    ("step 2: Q, K, V", "/step_by_step?present=1&N=6&D=8&step=2", (1920, 1080),
     ["sb_q", "sb_k", "sb_v"], None),
    ("step 4: scores", "/step_by_step?present=1&N=6&D=8&step=4", (1920, 1080), ["sb_scaled"],
     None),
    ("step 7: output", "/step_by_step?present=1&N=6&D=8&step=7", (1920, 1080), ["sb_out"], None),
    ("playground", "/?present=1", (1920, 1080), ["pg_scores", "pg_weights"], None),
    ("Why √d_k, step 3", "/scaling?present=1&step=3", (1920, 1080), ["sc_un", "sc_sc"], None),
    ("masking, step 3", "/masking?present=1&step=3", (1920, 1080),
     ["mk_s_padding", "mk_w_padding"], None),
    ("cross-attention, step 3", "/cross?present=1&step=3", (1920, 1080), ["cx_top_weights"],
     None),
    ("multi-head, 4 heads", "/multi_head?present=1&heads=4", (1920, 1080), ["mh_small"], None),
    ("learned", "/learned?task=induction", (1440, 900), ["lr_heads_all"], ".st-key-lr_step"),
    ("learned", "/learned?task=induction", (1920, 1080), ["lr_heads_all"], ".st-key-lr_step"),
]  # fmt: skip

SCROLL_JS = """(sel) => { const e = document.querySelector(sel);
  const main = document.querySelector('[data-testid="stMain"]');
  main.scrollTop += e.getBoundingClientRect().top - 64; }"""
CHART_JS = """(key) => {
  const gd = document.querySelector(`[data-key="${key}"] .js-plotly-plot`);
  const fl = gd._fullLayout, box = gd.getBoundingClientRect(), out = [];
  const xs = Object.keys(fl).filter(k => /^xaxis\\d*$/.test(k));
  xs.forEach((k, i) => {
    const x = fl[k], y = fl['y' + k.slice(1)], z = gd._fullData[i].z;
    out.push({plot: y._length, cw: x._length / z[0].length, ch: y._length / z.length,
              top: box.top + y._offset, bottom: box.top + y._offset + y._length});
  });
  const s = document.querySelector('.st-key-lr_step');
  return {plots: out, screen: innerHeight,
          slider: s ? s.getBoundingClientRect().top : null}; }"""


def measure(browser, server, view) -> dict:
    name, link, window, keys, scroll = view
    s = BrowserSession(browser, server, window)
    try:
        s.open(link)
        if scroll:
            s.page.evaluate(SCROLL_JS, scroll)
            s.page.wait_for_timeout(500)
        row = {"view": name, "link": link, "window": f"{window[0]}x{window[1]}", "charts": {}}
        for key in keys:
            m = s.page.evaluate(CHART_JS, key)
            plots = m["plots"]
            row["charts"][key] = {
                "plot_px": round(max(p["plot"] for p in plots)),
                "share": round(max(p["plot"] for p in plots) / m["screen"], 3),
                "cell": [round(plots[0]["cw"], 1), round(plots[0]["ch"], 1)],
                "on_screen": all(p["top"] >= 0 and p["bottom"] <= m["screen"] for p in plots),
                "heads": len(plots),
            }
            if m["slider"] is not None:
                row["slider_top"] = round(m["slider"])
        return row
    finally:
        s.close()


def main() -> None:
    args = kit.parser(__doc__, "also write the rows to this file").parse_args()
    server = start_app_server()  # the browser tests' server, for their BrowserSession
    try:
        with kit.browser() as browser:
            rows = [measure(browser, server, view) for view in VIEWS]
    finally:
        stop_app_server(server)
    for r in rows:
        for key, c in r["charts"].items():
            print(
                f"{r['view']:<22} {r['window']:>9} {key:<13} plot {c['plot_px']:>4} px "
                f"({c['share']:.0%} of the screen), cells {c['cell'][0]}x{c['cell'][1]} px, "
                f"{c['heads']} plot(s), {'on the screen' if c['on_screen'] else 'NOT whole'}"
                + (f", slider top {r['slider_top']} px" if "slider_top" in r else "")
            )
    kit.write_json(args.json, rows, say=False)


if __name__ == "__main__":
    main()
