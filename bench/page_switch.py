"""Page switches in a real browser, attnviz against the plain two-page app, one tab each,
interleaved; ``--langs`` per language, ``--lesson`` the lesson bar's Next against a switch
(docs/benchmarks.md, "Page switch"). ``--first-visit``: a first visit (empty cache) to each
app instead, interleaved: marks from the navigation's start and the bytes ("First visit";
bench/first_visit.py until issue 49).

    python bench/page_switch.py --rounds 3 --json switch.json
    python bench/page_switch.py --langs en,es,zh_CN,ar --rounds 3
    python bench/page_switch.py --lesson intro --rounds 3
    python bench/page_switch.py --first-visit --rounds 3 --proxy --json first.json
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
from typing import Any
from urllib.parse import urlencode

import kit
from browser_latency import DONE_JS, INIT_JS, load
from hall import HAProxy
from kit import CHROMIUM  # noqa: F401  (the tests skip without it)

from attnviz.ui import pages as ui_pages

#: url path -> the sidebar link's title (the pages table's), for the pages switched between;
#: the first page of the table is at "".
FIRST = ui_pages.PAGES[0].slug
PAGES = {
    ("" if slug == FIRST else slug): ui_pages.page(slug).title
    for slug in ("playground", "multi_head", "step_by_step", "masking")
}
PLAIN = {"one": "Page one", "two": "Page two"}
CLASS = 60
TIMEOUT = 90.0

SIDEBAR_JS = """(title) => {
  const a = Array.from(document.querySelectorAll('[data-testid="stSidebarNavLink"]'))
    .find(l => l.innerText.trim().split('\\n').pop().trim() === title);
  const t = performance.now(); a.click(); return t; }"""
# the lesson bar's Next (attnviz.ui.tour: an in-app link followed by board/js/navlinks.js)
NEXT_JS = """(_title) => { const a = document.querySelector('[data-tour="next"]');
  const t = performance.now(); a.click(); return t; }"""


class Tab:
    """A tab of its own context, on ``url`` once drawn (:func:`browser_latency.load`), with
    the HTTP responses it had (time, url, encoded body bytes)."""

    def __init__(self, browser, url: str | None, quiet: float) -> None:
        self.ctx, self.page = kit.tab(browser, (1280, 900), INIT_JS)
        self.quiet, self.rows = quiet, []
        self.page.on("requestfinished", self._on)
        if url:
            load(self.page, url, quiet, TIMEOUT)

    def _on(self, request) -> None:
        try:
            size = max(0, request.sizes()["responseBodySize"])  # -1: nothing received
        except Exception:  # the page went away
            size = 0
        self.rows.append((time.monotonic(), request.url, size))

    def switch(self, title: str, click: str = SIDEBAR_JS) -> dict:
        """Click the sidebar link ``title`` (or what ``click`` clicks); wait for every chart
        of the new page."""
        page = self.page
        links = page.locator('[data-testid="stSidebarNavLink"]').filter(has_text=title)
        (links if click == SIDEBAR_JS else page.locator('[data-tour="next"]')).first.wait_for()
        t_wall = time.monotonic()
        t_click = page.evaluate(click, title)
        while not (s := page.evaluate(DONE_JS, [t_click, self.quiet]))["done"]:
            if time.monotonic() > t_wall + TIMEOUT:
                raise TimeoutError(f"the page did not finish drawing within {TIMEOUT} s: {s}")
            time.sleep(0.05)
        rows = [r for r in self.rows if r[0] >= t_wall]
        return {
            "ms": s["last"] - t_click,
            "script_ms": s["script"] - t_click,
            "http_bytes": sum(r[2] for r in rows),
            "big": [(r[1].split("?")[0][-60:], r[2]) for r in rows if r[2] > 10_000],
            "plotly_bytes": sum(r[2] for r in rows if "vendor/plotly" in r[1]),
            "ws_bytes": s["ws"],
            "plots": s["plots"],
            "requests": len(rows),
        }


def languages(args, pages: list[str], app, browser) -> dict:
    """``--langs``: the switches in one tab per language (issue 45): the medians, and the
    median of the ratios to the first language's switch of the same round and page."""
    from attnviz import i18n

    codes, titles = args.langs.split(","), {}
    for code in codes:
        with i18n.use(code):
            titles[code] = {p: ui_pages.page(p or FIRST).shown_title for p in pages}
    urls = {c: f"{app.url}/{pages[-1]}" + ("" if c == i18n.SOURCE else f"?lang={c}") for c in codes}
    rows, _ = interleaved(args, browser, urls, lambda c, p, _: titles[c][p], pages)
    out: dict[str, Any] = {}
    for code in codes:
        ratios = [r["ms"] / r0["ms"] for r, r0 in zip(rows[code], rows[codes[0]], strict=True)]
        out[code] = {
            "ms": round(kit.median(rows[code], "ms")),
            "script_ms": round(kit.median(rows[code], "script_ms")),
            "ws_bytes": kit.median(rows[code], "ws_bytes"),
            "http_bytes": kit.median(rows[code], "http_bytes"),
            "ratio_ms": round(statistics.median(ratios), 3),
            "ratio_range": [round(min(ratios), 2), round(max(ratios), 2)],
            "per_page_ms": per_page(rows[code], pages),
            "rows": rows[code],
        }
        kit.line(f"{code} x{out[code]['ratio_ms']} {out[code]['ratio_range']}", out[code])
    return out


def per_page(rows: list[dict], pages: list[str]) -> dict[str, int]:
    return {PAGES[p]: round(kit.median([r for r in rows if r["page"] == p], "ms")) for p in pages}


def interleaved(args, browser, urls: dict[str, str], title, pages: list[str]) -> tuple:
    """One tab per ``urls`` entry; per round and page a switch in every tab, to ``title(tab,
    page, index)``: the rows per tab, and the plotly.js bytes of each tab's first page."""
    tabs = {name: Tab(browser, url, args.quiet) for name, url in urls.items()}
    plotly = {n: sum(r[2] for r in t.rows if "vendor/plotly" in r[1]) for n, t in tabs.items()}
    rows: dict[str, list[dict]] = {name: [] for name in urls}
    for rnd in range(args.rounds):
        for i, p in enumerate(pages):
            for name in list(urls) if rnd % 2 == 0 or not args.langs else list(urls)[::-1]:
                t = title(name, p, rnd * len(pages) + i)
                r = tabs[name].switch(t)
                rows[name].append({"page": p, "title": t, "round": rnd, **r})
                kit.line(f"{name} {t}", r)
    for tab in tabs.values():
        tab.ctx.close()
    return rows, plotly


def compared(rows: dict[str, list[dict]], pages: list[str], plotly: int) -> dict:
    """Every switch's medians, attnviz against the plain app; the bytes of a class of 60."""
    a, q, med = rows["attnviz"], rows["plain"], kit.median
    a_bytes, p_bytes = (med(x, "http_bytes") + med(x, "ws_bytes") for x in (a, q))
    return {
        "attnviz_ms": round(med(a, "ms")),
        "plain_ms": round(med(q, "ms")),
        "ratio": round(med(a, "ms") / med(q, "ms"), 2),
        "per_page_ms": per_page(a, pages),
        "attnviz_script_ms": round(med(a, "script_ms")),
        "plain_script_ms": round(med(q, "script_ms")),
        "attnviz_http_bytes": med(a, "http_bytes"),
        "attnviz_ws_bytes": med(a, "ws_bytes"),
        "attnviz_plotly_bytes_all_switches": sum(r["plotly_bytes"] for r in a),
        "plain_http_bytes": med(q, "http_bytes"),
        "plain_ws_bytes": med(q, "ws_bytes"),
        "first_page_of_tab_plotly_bytes": plotly,
        "class_of_60_bytes_per_switch": {"attnviz": CLASS * a_bytes, "plain": CLASS * p_bytes},
    }


def lesson(args: argparse.Namespace, app, browser) -> dict:
    """``--lesson``: Next on the lesson bar against a sidebar page switch, for each pair of
    stops on two charted pages, each from stop a's page reloaded: ``switch`` from stop a's
    view (the sidebar keeps a's settings: another view of page b), ``same`` from stop a's
    page with stop b's settings (the switch lands on the view Next shows, without the bar)."""
    from attnviz.classroom import lessons

    (found,) = [x for x in lessons.shipped() if x.slug == args.lesson]
    stops = found.stops
    charted = set(PAGES.values()) | {ui_pages.page("permutation").title}
    pairs = [
        i for i in range(len(stops) - 1)
        if stops[i].page != stops[i + 1].page
        and {ui_pages.page(stops[j].page).title for j in (i, i + 1)} <= charted
    ]  # fmt: skip
    tab, out = Tab(browser, None, args.quiet), {"lesson": found.slug, "rows": []}
    for _ in range(args.rounds):
        for i in pairs:
            a, b = stops[i], stops[i + 1]
            row, path = {"from": i + 1, "to": b.page}, "" if a.page == FIRST else a.page
            views = {
                "next": dict(a.settings) | {"lesson": found.slug, "stop": str(i + 1)},
                "switch": dict(a.settings),
                "same": {k: v for k, v in b.settings.items() if k != "step"}
                | {k: v for k, v in a.settings.items() if k == "step"},
            }
            for mode, settings in views.items():
                load(tab.page, f"{app.url}/{path}?{urlencode(settings)}", args.quiet, TIMEOUT)
                click = NEXT_JS if mode == "next" else SIDEBAR_JS
                row[mode] = round(tab.switch(ui_pages.page(b.page).title, click)["ms"])
            out["rows"].append(row)
            kit.line(f"stop {row['from']} -> {row['to']}", row)
    tab.ctx.close()
    n, w, v = (kit.median(out["rows"], k) for k in ("next", "switch", "same"))
    out |= {"next_ms": round(n), "switch_ms": round(w), "ratio": round(n / w, 2)}
    out |= {"same_ms": round(v), "same_ratio": round(n / v, 2)}
    print(f"lesson stop change / page switch: {n:.0f} / {w:.0f} ms = {n / w:.2f}x")
    print(f"lesson stop change / switch to the same view: {n:.0f} / {v:.0f} ms = {n / v:.2f}x")
    return out


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
FIRST_KEYS = ("content", "plotly_asked", "plotly_got", "plotly_ready", "drawn")


def visit(browser, url: str, pattern: str, charts: int) -> dict:
    ctx, page = kit.tab(browser, (1280, 800), INIT_JS, MARKS_JS)  # INIT_JS: the websocket
    with ctx:
        page.goto(url)
        page.wait_for_function(DRAWN_JS, arg=charts, timeout=90_000, polling=20)
        return page.evaluate(TIMES_JS, pattern)


def first_report(rows: dict[str, list[dict]]) -> dict:
    """Medians per app (times, bytes, the class of 60), printed."""
    out = {}
    for name, rs in rows.items():
        med = {k: statistics.median(r.get(k) or float("nan") for r in rs) for k in FIRST_KEYS}
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


def first_visits(args: argparse.Namespace, app, plain, browser) -> dict:
    """``--first-visit``: ``--warm`` visits per app (the servers' first runs, caches), then
    ``--rounds`` measured, the apps in turn; ``--proxy``: also attnviz behind haproxy."""
    apps = {k: v for k, v in APPS.items() if args.proxy or "haproxy" not in k}
    rows: dict[str, list[dict]] = {name: [] for name in apps}
    with HAProxy([app.port]) if args.proxy else contextlib.nullcontext() as proxy:
        urls = {"attnviz": app.url, "plain": plain.url, "attnviz+haproxy": proxy and proxy.url}
        for i in range(args.warm + args.rounds):
            for name, (path, pattern, charts) in apps.items():
                r = visit(browser, urls[name] + path, pattern, charts)
                if i >= args.warm:
                    rows[name].append(r)
    out = first_report(rows)
    ratio = out["attnviz"]["median_ms"]["drawn"] / out["plain"]["median_ms"]["drawn"]
    print(f"first visit, attnviz / plain: {ratio:.2f}x")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = kit.parser(__doc__)
    ap.add_argument("--app", default="serve.py", help="attnviz as scripts/run.sh serves it")
    ap.add_argument("--pages", default=",".join(PAGES), help="attnviz url paths ('' = home)")
    ap.add_argument("--rounds", type=int, default=5, help="switches per page")
    ap.add_argument("--quiet", type=float, default=400.0, help="ms without a redraw")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--lesson", default=None, help="a shipped lesson: Next against a switch")
    mode.add_argument(
        "--langs", help="e.g. en,es,zh_CN,ar: the switches per language, no plain app"
    )
    mode.add_argument("--first-visit", action="store_true", help="first visits instead (--rounds)")
    ap.add_argument("--warm", type=int, default=1, help="--first-visit: visits before measuring")
    ap.add_argument("--proxy", action="store_true", help="--first-visit: also behind haproxy")
    args = ap.parse_args(argv)
    pages = args.pages.split(",")
    out: dict[str, Any] = {"load_before": os.getloadavg(), "rounds": args.rounds}
    apps = [args.app] if args.langs or args.lesson else [args.app, kit.PLAIN_APP]
    with kit.servers(*apps) as (app, *plain), kit.browser() as browser:
        if args.first_visit:
            out |= first_visits(args, app, plain[0], browser)
        elif args.lesson:
            out |= lesson(args, app, browser)
        elif args.langs:
            out["langs"] = languages(args, pages, app, browser)
        else:
            urls = {"attnviz": f"{app.url}/{pages[-1]}", "plain": f"{plain[0].url}/two"}

            def title(name: str, p: str, k: int) -> str:
                return PAGES[p] if name == "attnviz" else PLAIN[("one", "two")[k % 2]]

            rows, plotly = interleaved(args, browser, urls, title, pages)
            out["switch"] = compared(rows, pages, plotly["attnviz"])
            kit.show(out["switch"])
            out["switch_rows"] = {
                PAGES[p]: [r for r in rows["attnviz"] if r["page"] == p] for p in pages
            }
            out["plain_rows"] = rows["plain"]
    out["load_after"] = os.getloadavg()
    print(f"load {out['load_before']} -> {out['load_after']}")
    kit.write_json(args.json, out, say=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
