"""Page switches and first visits in a real browser (issue 17), attnviz against a plain
two-page Streamlit app (``bench/plain_pages.py``: the same controls, three ``st.plotly_chart``
heatmaps per head, ``st.navigation``), interleaved in one run.

Starts both apps on free loopback ports and opens them in headless Chromium (Debian's
/usr/bin/chromium, playwright). Measures, in the page's clock (``performance.now()``):

* ``switch``: one tab per app stays open; a click on a sidebar page link -> the last chart
  of the new page drawn (``plotly_afterplot`` or a DOM change inside a chart, then nothing
  redrawn for ``--quiet`` ms, the script not running and every board ``drawn``). attnviz
  cycles through ``--pages`` (each switch comes from the previous page of the list); the
  plain app alternates between its two pages, one plain switch after each attnviz switch.
* ``bytes``: the HTTP response bodies the switch fetched (encoded, as on the wire: page,
  scripts, styles, plotly.js), and apart the websocket bytes it received.
* ``first visit``: a new browser profile (empty HTTP cache and storage) opens a page ->
  every chart drawn, from the navigation's start; with the bytes fetched.
* ``class of 60``: bytes the server sends when 60 students switch page at once, computed
  as 60 x the median bytes (HTTP bodies + websocket) one switch received: every student's
  browser fetches what this one did (each has its own cache; the server sends the same
  bytes to each).

    python bench/page_switch.py                            # 5 rounds
    python bench/page_switch.py --rounds 10 --json switch.json
    python bench/page_switch.py --rounds 1 --pages ",multi_head" --first ""  # quick

Targets (issue 27, after issue 17's): median page switch over playground, multi-head, step by
step and masking <= 1.0x the plain app; <= 0.2 MB fetched per switch; the first visit of a
tab fetches plotly.js once; a first visit <= 0.8x the plain app, and no more bytes than it.
Where a switch's time goes: bench/switch_profile.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_latency import CHROMIUM, CHROMIUM_ARGS, INIT_JS, INSTRUMENT_JS  # noqa: E402
from stclient import Server  # noqa: E402

from attnviz.ui import pages as ui_pages  # noqa: E402

#: url path -> the sidebar link's title (the pages table's), for the pages switched between;
#: the first page of the table is at "".
PAGES = {
    ("" if slug == ui_pages.PAGES[0].slug else slug): ui_pages.page(slug).title
    for slug in ("playground", "multi_head", "step_by_step", "masking")
}
PLAIN = {"one": "Page one", "two": "Page two"}
CLASS = 60

# Every chart of the page drawn: the script is not running, every board has drawn its last
# data, nothing was redrawn for `quiet` ms since `since`.
DONE_JS = """([since, quiet]) => {
  const b = window.__bench;
  const app = document.querySelector('[data-testid="stApp"]');
  const state = app ? app.getAttribute('data-test-script-state') : null;
  const boards = Array.from(document.querySelectorAll('.stBidiComponent')).every(c => {
    const bd = c.querySelector('.attnviz-board');
    return bd !== null && bd.dataset.state === 'drawn'; });
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
}"""


class Fetched:
    """HTTP responses of a page: (time, url, encoded body bytes)."""

    def __init__(self, page) -> None:
        self.rows: list[tuple[float, str, int]] = []
        page.on("requestfinished", self._on)

    def _on(self, request) -> None:
        try:
            size = max(0, request.sizes()["responseBodySize"])  # -1: nothing received
        except Exception:  # the page went away
            size = 0
        self.rows.append((time.monotonic(), request.url, size))

    def since(self, t: float) -> list[tuple[float, str, int]]:
        return [r for r in self.rows if r[0] >= t]


def open_tab(browser, url: str, quiet: float, timeout: float):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.add_init_script(INIT_JS)
    page = ctx.new_page()
    fetched = Fetched(page)
    t0 = time.monotonic()
    page.goto(url)
    page.wait_for_selector('[data-testid="stApp"]')
    page.evaluate(INSTRUMENT_JS)
    done = wait_done(page, 0, quiet, timeout)
    return ctx, page, fetched, t0, done


def wait_done(page, since: float, quiet: float, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = page.evaluate(DONE_JS, [since, quiet])
        if s["done"]:
            return s
        time.sleep(0.05)
    raise TimeoutError(f"the page did not finish drawing within {timeout} s: {s}")


def switch(page, fetched: Fetched, title: str, quiet: float, timeout: float) -> dict:
    """Click the sidebar link ``title``; wait for every chart of the new page."""
    links = page.locator('[data-testid="stSidebarNavLink"]').filter(has_text=title)
    links.first.wait_for()
    t_wall = time.monotonic()
    t_click = page.evaluate(
        """(title) => {
          const a = Array.from(document.querySelectorAll('[data-testid="stSidebarNavLink"]'))
            .find(l => l.innerText.trim().split('\\n').pop().trim() === title);
          const t = performance.now(); a.click(); return t; }""",
        title,
    )
    s = wait_done(page, t_click, quiet, timeout)
    rows = fetched.since(t_wall)
    http = sum(r[2] for r in rows)
    plotly = sum(r[2] for r in rows if "vendor/plotly" in r[1])
    return {
        "ms": s["last"] - t_click,
        "script_ms": s["script"] - t_click,
        "http_bytes": http,
        "big": [(r[1].split("?")[0][-60:], r[2]) for r in rows if r[2] > 10_000],
        "plotly_bytes": plotly,
        "ws_bytes": s["ws"],
        "plots": s["plots"],
        "requests": len(rows),
    }


def first_visit(browser, url: str, quiet: float, timeout: float) -> dict:
    """A new profile (empty cache) opens ``url``: navigation start -> every chart drawn."""
    ctx, page, fetched, _, s = open_tab(browser, url, quiet, timeout)
    try:
        rows = fetched.rows
        return {
            "ms": s["last"],  # performance.now() counts from the navigation's start
            "http_bytes": sum(r[2] for r in rows),
            "plotly_bytes": sum(r[2] for r in rows if "vendor/plotly" in r[1]),
            "ws_bytes": s["ws"],
            "plots": s["plots"],
        }
    finally:
        ctx.close()


def med(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows) if rows else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--app", default="app.py")
    ap.add_argument("--plain", default="bench/plain_pages.py")
    ap.add_argument("--pages", default=",".join(PAGES), help="attnviz url paths ('' = home)")
    ap.add_argument("--rounds", type=int, default=5, help="switches per page")
    ap.add_argument(
        "--first", default=",step_by_step", help="pages for first visits ('none': no first visit)"
    )
    ap.add_argument("--first-rounds", type=int, default=3)
    ap.add_argument("--quiet", type=float, default=400.0, help="ms without a redraw")
    ap.add_argument("--timeout", type=float, default=90.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    pages = args.pages.split(",")
    firsts = [] if args.first == "none" else args.first.split(",")
    from playwright.sync_api import sync_playwright

    load = os.getloadavg()
    out: dict[str, Any] = {"load_before": load, "rounds": args.rounds}
    with (
        Server(args.app) as app,
        Server(args.plain) as plain,
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            # ---- page switches, one tab per app, interleaved
            a_ctx, a_page, a_fetch, _, a0 = open_tab(
                browser, f"{app.url}/{pages[-1]}", args.quiet, args.timeout
            )
            p_ctx, p_page, p_fetch, _, _ = open_tab(
                browser, f"{plain.url}/two", args.quiet, args.timeout
            )
            first_tab_plotly = sum(r[2] for r in a_fetch.rows if "vendor/plotly" in r[1])
            switches: dict[str, list[dict]] = {p: [] for p in pages}
            plain_rows: list[dict] = []
            flip = 0
            for _ in range(args.rounds):
                for p in pages:
                    r = switch(a_page, a_fetch, PAGES[p], args.quiet, args.timeout)
                    switches[p].append(r)
                    target = ("one", "two")[flip % 2]
                    flip += 1
                    q = switch(p_page, p_fetch, PLAIN[target], args.quiet, args.timeout)
                    plain_rows.append(q)
                    print(
                        f"switch to {PAGES[p]:13s} {r['ms']:7.0f} ms (script {r['script_ms']:5.0f})"
                        f"{r['http_bytes'] / 1e3:8.1f} kB http  {r['ws_bytes'] / 1e3:7.1f} kB ws"
                        f"  | plain {q['ms']:6.0f} ms (script {q['script_ms']:5.0f}) "
                        f"{q['http_bytes'] / 1e3:7.1f} kB http "
                        f"{q['ws_bytes'] / 1e3:6.1f} kB ws",
                        flush=True,
                    )
            a_ctx.close()
            p_ctx.close()
            all_a = [r for rows in switches.values() for r in rows]
            per_page = {PAGES[p]: round(med(rows, "ms")) for p, rows in switches.items()}
            a_ms, p_ms = med(all_a, "ms"), med(plain_rows, "ms")
            a_bytes = med(all_a, "http_bytes") + med(all_a, "ws_bytes")
            p_bytes = med(plain_rows, "http_bytes") + med(plain_rows, "ws_bytes")
            out["switch"] = {
                "attnviz_ms": round(a_ms),
                "plain_ms": round(p_ms),
                "ratio": round(a_ms / p_ms, 2),
                "per_page_ms": per_page,
                "attnviz_script_ms": round(med(all_a, "script_ms")),
                "plain_script_ms": round(med(plain_rows, "script_ms")),
                "attnviz_http_bytes": med(all_a, "http_bytes"),
                "attnviz_ws_bytes": med(all_a, "ws_bytes"),
                "attnviz_plotly_bytes_all_switches": sum(r["plotly_bytes"] for r in all_a),
                "plain_http_bytes": med(plain_rows, "http_bytes"),
                "plain_ws_bytes": med(plain_rows, "ws_bytes"),
                "first_page_of_tab_plotly_bytes": first_tab_plotly,
                "class_of_60_bytes_per_switch": {
                    "attnviz": CLASS * a_bytes,
                    "plain": CLASS * p_bytes,
                },
            }
            # ---- first visits, new profile each, interleaved
            fv: dict[str, list[dict]] = {p: [] for p in firsts}
            fv_plain: list[dict] = []
            for _ in range(args.first_rounds if firsts else 0):
                for p in firsts:
                    fv[p].append(first_visit(browser, f"{app.url}/{p}", args.quiet, args.timeout))
                    fv_plain.append(
                        first_visit(browser, f"{plain.url}/one", args.quiet, args.timeout)
                    )
                    print(
                        f"first visit /{p:13s} {fv[p][-1]['ms']:7.0f} ms "
                        f"{fv[p][-1]['http_bytes'] / 1e6:5.2f} MB  | plain "
                        f"{fv_plain[-1]['ms']:6.0f} ms {fv_plain[-1]['http_bytes'] / 1e6:5.2f} MB",
                        flush=True,
                    )
            if firsts:
                pm = med(fv_plain, "ms")
                out["first_visit"] = {
                    "plain_ms": round(pm),
                    "plain_http_bytes": med(fv_plain, "http_bytes"),
                    **{
                        f"/{p}": {
                            "ms": round(med(rows, "ms")),
                            "ratio": round(med(rows, "ms") / pm, 2),
                            "http_bytes": med(rows, "http_bytes"),
                            "plotly_bytes": med(rows, "plotly_bytes"),
                        }
                        for p, rows in fv.items()
                    },
                }
        finally:
            browser.close()
    out["load_after"] = os.getloadavg()
    out["switch_rows"] = {PAGES[p]: rows for p, rows in switches.items()}
    out["plain_rows"] = plain_rows
    s = out["switch"]
    print(
        f"\npage switch median: attnviz {s['attnviz_ms']} ms vs plain {s['plain_ms']} ms "
        f"({s['ratio']}x); per page {s['per_page_ms']}\n"
        f"fetched per switch: attnviz {s['attnviz_http_bytes'] / 1e6:.3f} MB http + "
        f"{s['attnviz_ws_bytes'] / 1e6:.3f} MB ws; plain {s['plain_http_bytes'] / 1e6:.3f} MB"
        f" http + {s['plain_ws_bytes'] / 1e6:.3f} MB ws; plotly.js in switches: "
        f"{s['attnviz_plotly_bytes_all_switches']} bytes; first page of the tab: "
        f"{s['first_page_of_tab_plotly_bytes'] / 1e6:.2f} MB of plotly.js\n"
        f"class of {CLASS}, one switch: attnviz "
        f"{s['class_of_60_bytes_per_switch']['attnviz'] / 1e6:.1f} MB, plain "
        f"{s['class_of_60_bytes_per_switch']['plain'] / 1e6:.1f} MB served"
    )
    if "first_visit" in out:
        print(f"first visit: {json.dumps(out['first_visit'])}")
    print(f"load {load} -> {out['load_after']}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
