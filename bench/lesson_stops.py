"""A lesson's stop change against a page switch (issue 48: "Stop change <= 1.0x a page
switch"), attnviz alone, interleaved in one run.

Two tabs of one server (headless Chromium, 1280x900): in the first, "Self-attention in 20
minutes" from stop ``--from`` on, **Next** clicked to stop ``--to`` and **Back** clicked back,
``--rounds`` times (each click a stop change: the next stop's page with its settings, followed
within the session by ``board/js/navlinks.js``); in the second, a sidebar click between the
same pages, one after each stop change. Each is timed in the page's clock from the click to
the last chart drawn (``bench/page_switch.py``'s ``wait_done``: the script not running, every
board drawn, nothing redrawn for ``--quiet`` ms).

    python bench/lesson_stops.py                  # stops 6..11, 3 rounds: 30 of each
    python bench/lesson_stops.py --rounds 1 --json stops.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_latency import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from page_switch import DONE_JS, open_tab, switch  # noqa: E402
from stclient import Server  # noqa: E402

from attnviz.classroom import lessons  # noqa: E402
from attnviz.ui import pages as ui_pages  # noqa: E402


def stop_path(lesson: lessons.Lesson, i: int) -> str:
    stop = lesson.stops[i]
    query = "&".join(f"{k}={v}" for k, v in stop.settings.items())
    path = "" if stop.page == ui_pages.PAGES[0].slug else stop.page
    return f"/{path}?{query}&lesson={lesson.slug}&stop={i + 1}"


def click_stop(page, testid: str, quiet: float, timeout: float) -> dict:
    """Click the bar's ``tour-<testid>`` link; wait for every chart of the stop's page."""
    link = page.locator(f'[data-tour="{testid}"]')
    link.wait_for()
    t_click = page.evaluate(
        """(id) => { const a = document.querySelector(`[data-tour="${id}"]`);
          const t = performance.now(); a.click(); return t; }""",
        testid,
    )
    s = wait_run(page, t_click, quiet, timeout)
    end = max(s["last"], s["script"])  # a stop on the same page and charts may redraw none
    return {"ms": end - t_click, "script_ms": s["script"] - t_click, "url": page.url}


def wait_run(page, since: float, quiet: float, timeout: float) -> dict:
    """Like ``page_switch.wait_done``, but done also when the run drew no chart (a stop that
    changes the link and not the charts): a run ended after ``since``, then ``quiet`` ms."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = page.evaluate(DONE_JS, [since, quiet])
        ended = s["script"] > since
        still = s["now"] - max(s["last"], s["script"]) > quiet
        if s["done"] or (ended and still and s["state"] == "notRunning" and s["boards"]):
            return s
        time.sleep(0.05)
    raise TimeoutError(f"the stop did not finish within {timeout} s: {s}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--app", default="app.py")
    ap.add_argument("--lesson", default="intro")
    ap.add_argument("--from", dest="first", type=int, default=6, help="first stop (from 1)")
    ap.add_argument("--to", dest="last", type=int, default=11, help="last stop (from 1)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quiet", type=float, default=400.0, help="ms without a redraw")
    ap.add_argument("--timeout", type=float, default=90.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    lesson = next(x for x in lessons.shipped() if x.slug == args.lesson)
    span = range(args.first - 1, args.last)
    # the sidebar's switches: between the stops' pages, each page once a cycle
    titles = list(dict.fromkeys(ui_pages.page(lesson.stops[i].page).title for i in span))
    from playwright.sync_api import sync_playwright

    out: dict = {"load_before": os.getloadavg(), "stops": [], "switches": []}
    with Server(args.app) as app, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            s_ctx, s_page, *_ = open_tab(
                browser, app.url + stop_path(lesson, span[0]), args.quiet, args.timeout
            )
            p_ctx, p_page, p_fetch, *_ = open_tab(
                browser, f"{app.url}/{lesson.stops[span[-1]].page}", args.quiet, args.timeout
            )
            k = 0
            for _round in range(args.rounds):
                for testid in ["next"] * (len(span) - 1) + ["back"] * (len(span) - 1):
                    out["stops"].append(click_stop(s_page, testid, args.quiet, args.timeout))
                    title = titles[k % len(titles)]  # never the page on screen
                    k += 1
                    out["switches"].append(switch(p_page, p_fetch, title, args.quiet, args.timeout))
            s_ctx.close()
            p_ctx.close()
        finally:
            browser.close()
    stops = [r["ms"] for r in out["stops"]]
    switches = [r["ms"] for r in out["switches"]]
    out["load_after"] = os.getloadavg()
    out["stop_ms"], out["switch_ms"] = statistics.median(stops), statistics.median(switches)
    out["ratio"] = out["stop_ms"] / out["switch_ms"]
    pages = sorted({urlparse(r["url"]).path for r in out["stops"]})
    where = ", ".join(pages)
    print(f"stops {args.first}..{args.last} of {lesson.slug} ({where}), {args.rounds} rounds")
    print(f"stop change: median {out['stop_ms']:.0f} ms over {len(stops)}")
    print(f"page switch: median {out['switch_ms']:.0f} ms over {len(switches)}")
    load = f"{out['load_before'][0]:.1f} -> {out['load_after'][0]:.1f}"
    print(f"ratio {out['ratio']:.2f}x (target <= 1.0x); load {load}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
