"""Page switches in a real browser, attnviz against the plain two-page app, one tab each,
interleaved; ``--langs`` per language, ``--profile`` split by whose code ran, ``--lesson``
the lesson bar's Next against a switch (docs/benchmarks.md, "Page switch").

    python bench/page_switch.py --rounds 3 --json switch.json
    python bench/page_switch.py --langs en,es,zh_CN,ar --rounds 3
    python bench/page_switch.py --profile --rounds 4 --pages ",multi_head"
    python bench/page_switch.py --lesson intro --rounds 3
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import time
from typing import Any
from urllib.parse import urlencode

import kit
from browser_latency import DONE_JS, INIT_JS, load
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
# The click's time in performance.now(), and a 4 ms marker function the profiler sees.
CLICKS_JS = """() => { window.__bench.clicks = window.__bench.clicks || [];
  function __benchClickMarker() { const t = performance.now(); while (performance.now() - t < 4); }
  document.addEventListener('click', e => {
    window.__bench.clicks.push(performance.now()); __benchClickMarker(); }, true); }"""
MARKER = "__benchClickMarker"


class Tab:
    """A tab of its own context, on ``url`` once drawn (:func:`browser_latency.load`), with
    the HTTP responses it had (time, url, encoded body bytes); ``profile``: a CDP session
    with the sampling profiler on."""

    def __init__(self, browser, url: str | None, quiet: float, profile: bool = False) -> None:
        self.ctx, self.page = kit.tab(browser, (1280, 900), INIT_JS)
        self.quiet, self.rows, self.cdp = quiet, [], None
        self.page.on("requestfinished", self._on)
        if url:
            load(self.page, url, quiet, TIMEOUT)
        if profile:
            self.page.evaluate(CLICKS_JS)
            self.cdp = self.ctx.new_cdp_session(self.page)
            self.cdp.send("Profiler.enable")
            self.cdp.send("Profiler.setSamplingInterval", {"interval": 200})

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

    def profiled_switch(self, title: str) -> dict:
        """:meth:`switch`, the main thread's time split by whose code ran (:func:`split`)."""
        n_recv = self.page.evaluate("() => window.__ws.recvs.length")
        self.cdp.send("Profiler.start")
        r = self.switch(title)
        prof = self.cdp.send("Profiler.stop")["profile"]
        stopped = self.page.evaluate("() => performance.now()")
        recvs, t_click = self.page.evaluate(
            """(n) => [window.__ws.recvs.slice(n), window.__bench.clicks.slice(-1)[0]]""", n_recv
        )
        after = [m[0] - t_click for m in recvs if m[0] >= t_click]
        # the profile's clock (µs) is not performance.now(): the click is found by its marker
        t0, aligned = marker_time(prof), "click"
        if t0 is None:  # no sample in the marker: the profile's end is about `stopped`
            t0, aligned = prof["endTime"] - (stopped - t_click) * 1000, "end"
        return {
            **r,
            "wall": round(r["ms"]),
            "first_msg": round(after[0]) if after else None,
            "last_msg": round(after[-1]) if after else None,
            **split(prof, t0, t0 + r["ms"] * 1000),
            "aligned": aligned,
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


BUCKETS = ("plotly", "board", "streamlit", "gc", "other", "idle")


def bucket(url: str, name: str) -> str:
    """Whose code a profile node is."""
    if name == "(idle)":
        return "idle"
    if name == "(garbage collector)":
        return "gc"
    if "vendor/plotly" in url or "PlotlyChart" in url or url.startswith("blob:"):
        return "plotly"  # the board runs plotly.js from a blob: URL (its IndexedDB copy)
    if "/bidi-components/attnviz.board/" in url:
        return "board"
    if "/static/js/" in url:
        return "streamlit"
    return "other"  # (program): style, layout, paint, parsing outside JavaScript


def split(profile: dict, t0_us: float, t1_us: float) -> dict[str, float]:
    """Main-thread ms by bucket between t0 and t1 (the profile's clock, µs)."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", [])}

    def url_of(i: int) -> str:
        """A node's script, or its nearest caller's (a native function's layout: its caller)."""
        while i is not None and not nodes[i]["callFrame"].get("url"):
            i = parent.get(i)
        return "" if i is None else nodes[i]["callFrame"]["url"]

    kind = {i: bucket(url_of(i), n["callFrame"].get("functionName", "")) for i, n in nodes.items()}
    out: collections.Counter = collections.Counter()
    for node, a, t in intervals(profile):
        out[kind[node]] += max(0.0, min(t, t1_us) - max(a, t0_us)) / 1000
    return {b: round(out.get(b, 0.0), 1) for b in BUCKETS}


def intervals(profile: dict) -> list[tuple[int, float, float]]:
    """(node, start, end] per sample, sorted by time: V8's time deltas can be negative, and
    unsorted intervals would overlap (a split holding more time than its window)."""
    t, stamped = profile["startTime"], []
    for node, dt in zip(profile["samples"], profile["timeDeltas"], strict=True):
        t += dt
        stamped.append((t, node))
    stamped.sort(key=lambda s: s[0])  # stable: equal times keep their order
    out, a = [], profile["startTime"]
    for t, node in stamped:
        out.append((node, a, t))
        a = t
    return out


def marker_time(profile: dict) -> float | None:
    """The profile's time (µs) of the click: the start of the first sample interval that
    ends in the click's marker function or what it calls (200 µs late at most)."""
    marked = {n["id"] for n in profile["nodes"] if n["callFrame"]["functionName"] == MARKER}
    children = {n["id"]: n.get("children", []) for n in profile["nodes"]}
    todo = list(marked)
    while todo:
        new = set(children[todo.pop()]) - marked
        marked |= new
        todo += new
    return next((a for node, a, _ in intervals(profile) if node in marked), None)


def interleaved(args, browser, urls: dict[str, str], title, pages: list[str]) -> tuple:
    """One tab per ``urls`` entry; per round and page a switch in every tab, to ``title(tab,
    page, index)``: the rows per tab, and the plotly.js bytes of each tab's first page."""
    tabs = {name: Tab(browser, url, args.quiet, args.profile) for name, url in urls.items()}
    plotly = {n: sum(r[2] for r in t.rows if "vendor/plotly" in r[1]) for n, t in tabs.items()}
    rows: dict[str, list[dict]] = {name: [] for name in urls}
    for rnd in range(args.rounds):
        for i, p in enumerate(pages):
            for name in list(urls) if rnd % 2 == 0 or not args.langs else list(urls)[::-1]:
                t = title(name, p, rnd * len(pages) + i)
                r = tabs[name].profiled_switch(t) if args.profile else tabs[name].switch(t)
                rows[name].append({"page": p, "title": t, "round": rnd, **r})
                kit.line(f"{name} {t}", r)
    for tab in tabs.values():
        tab.ctx.close()
    return rows, plotly


def profile(rows: dict[str, list[dict]]) -> dict:
    """``--profile``'s medians per app (the split from the profiles aligned on the click)."""
    out: dict = {}
    for name, rs in rows.items():
        good = [r for r in rs if r["aligned"] == "click"] or rs
        out[name] = {
            k: statistics.median(r[k] for r in (rs if k == "wall" else good) if r[k] is not None)
            for k in ("wall", "first_msg", "last_msg", *BUCKETS)
        }
        out[name]["profiles_aligned_on_the_click"] = len(good)
        kit.line(f"{name} median", out[name])
    print(f"page switch attnviz / plain: {out['attnviz']['wall'] / out['plain']['wall']:.2f}x")
    return out


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
    stops on two charted pages (each from stop a's view, reloaded)."""
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
            row = {"from": i + 1, "to": stops[i + 1].page}
            for mode, click in (("next", NEXT_JS), ("switch", SIDEBAR_JS)):
                tour = {"lesson": found.slug, "stop": str(i + 1)} if mode == "next" else {}
                path = "" if stops[i].page == FIRST else stops[i].page
                url = f"{app.url}/{path}?{urlencode(dict(stops[i].settings) | tour)}"
                load(tab.page, url, args.quiet, TIMEOUT)
                title = ui_pages.page(stops[i + 1].page).title
                row[mode] = round(tab.switch(title, click)["ms"])
            out["rows"].append(row)
            kit.line(f"stop {row['from']} -> {row['to']}", row)
    tab.ctx.close()
    n, w = kit.median(out["rows"], "next"), kit.median(out["rows"], "switch")
    out |= {"next_ms": round(n), "switch_ms": round(w), "ratio": round(n / w, 2)}
    print(f"lesson stop change / page switch: {n:.0f} / {w:.0f} ms = {n / w:.2f}x")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = kit.parser(__doc__)
    ap.add_argument("--app", default="serve.py", help="attnviz as scripts/run.sh serves it")
    ap.add_argument("--pages", default=",".join(PAGES), help="attnviz url paths ('' = home)")
    ap.add_argument("--rounds", type=int, help="switches per page (5; 3 with --profile)")
    ap.add_argument("--profile", action="store_true", help="also: each switch by whose code ran")
    ap.add_argument("--lesson", default=None, help="a shipped lesson: Next against a switch")
    ap.add_argument("--quiet", type=float, default=400.0, help="ms without a redraw")
    ap.add_argument("--langs", help="e.g. en,es,zh_CN,ar: the switches per language, no plain app")
    args = ap.parse_args(argv)
    args.rounds = args.rounds or (3 if args.profile else 5)
    pages = args.pages.split(",")
    out: dict[str, Any] = {"load_before": os.getloadavg(), "rounds": args.rounds}
    apps = [args.app] if args.langs or args.lesson else [args.app, kit.PLAIN_APP]
    with kit.servers(*apps) as (app, *plain), kit.browser() as browser:
        if args.lesson:
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
            if args.profile:  # the switches above were profiled: their times include it
                out["profile"] = profile(rows)
    out["load_after"] = os.getloadavg()
    print(f"load {out['load_before']} -> {out['load_after']}")
    kit.write_json(args.json, out, say=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
