"""What a rerun costs in AppTest. By default the speed budget of issue 3: the playground's
rerun against bench/plain_charts.py (<= 1.5x) and its plotly payload at N=256 (< 1.5 MB);
docs/benchmarks.md. ``--lesson`` (issue 48; bench/lesson_cpu.py until issue 49): where a
lesson's stop change spends the server's CPU against a page switch, per rerun: ``switch``,
``settings`` and ``stop`` (Next) for each pair of stops; docs/lessons.md, "What a stop
change costs".

    python bench/rerun.py [--repeats 15]
    python bench/rerun.py --lesson intro            # stops 6..11, 3 rounds
    python bench/rerun.py --lesson scaling_masks --from 1 --to 7 --json cpu.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import kit
from streamlit.testing.v1 import AppTest

from attnviz.classroom import lessons
from attnviz.ui import pages as ui_pages
from attnviz.ui.controls import DEFAULTS

APP = str(kit.REPO / "app.py")
BARE = str(kit.REPO / kit.BARE_APP)
BUDGET_RATIO = 1.5
BUDGET_BYTES = 1.5e6
KINDS = ("switch", "settings", "stop")
kit.server_like_pages()


def start(path: str, query: dict) -> AppTest:
    at = AppTest.from_file(path, default_timeout=300)
    at.query_params.update(query)
    kit.run_app(at, path)
    return at


def timed(at: AppTest, seed: int | None) -> float:
    if seed is not None:
        at.session_state["seed"] = seed
    return kit.run_app(at, "rerun")


def payload(at: AppTest) -> tuple[int, int]:
    """Bytes of chart data and the number of charts: ``st.plotly_chart``'s JSON (the bare
    page) and the boards' data (each holds a page section's figures)."""
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    size, count = sum(len(s.encode()) for s in specs), len(specs)
    for el in at.get("bidi_component"):  # components v2 (the board): its data, JSON bytes
        args = el.proto.bytes or el.proto.json.encode() or b"{}"
        size += len(args)
        count += len(json.loads(args).get("figures", []))
    return size, count


def budget(args: argparse.Namespace) -> int:
    """The default run: the playground's reruns against the bare page's, and the payloads."""
    query = {"N": "64", "D": "64", "heads": "8"}
    play, bare = start(APP, query), start(BARE, query)
    n_play, n_bare = payload(play)[1], payload(bare)[1]
    ok = True
    print(
        f"rerun at N=64, D=64, heads=8 ({args.repeats} reruns each, median; "
        f"playground {n_play} plots, bare {n_bare} plots)"
    )
    for kind in ("same inputs", "new seed"):
        tp, tb = [], []
        for i in range(args.repeats):
            seed = None if kind == "same inputs" else 1000 + i
            tp.append(timed(play, seed))
            tb.append(timed(bare, seed))
        mp, mb = statistics.median(tp), statistics.median(tb)
        ratio = mp / mb
        ok &= ratio <= BUDGET_RATIO
        print(
            f"  {kind:12s}: playground {mp * 1000:7.1f} ms | bare {mb * 1000:7.1f} ms | "
            f"ratio {ratio:.2f} (budget <= {BUDGET_RATIO}) "
            + ("OK" if ratio <= BUDGET_RATIO else "OVER")
        )
    for q in (
        {"N": "256", "D": "64", "heads": "8"},
        {"N": "256", "D": "64", "heads": "8", "mask": "causal"},
    ):
        at = start(APP, q)
        size, count = payload(at)
        ok &= size < BUDGET_BYTES
        print(
            f"payload of the playground at {json.dumps(q)}: {size / 1e6:.3f} MB in {count} "
            f"plots (budget < {BUDGET_BYTES / 1e6} MB) {'OK' if size < BUDGET_BYTES else 'OVER'}"
        )
    bare256 = start(BARE, {"N": "256", "D": "64", "heads": "8"})
    size, count = payload(bare256)
    print(
        f"(for comparison, the bare page at N=256, heads=8: {size / 1e6:.3f} MB in {count} plots)"
    )
    return 0 if ok else 1


def _typed(value: str, like: object) -> object:
    if isinstance(like, bool):
        return value.lower() in ("1", "true", "yes")
    return type(like)(value) if isinstance(like, (int, float, str)) else value


def go(at: AppTest, page: str, params: dict[str, str]) -> float:
    """One rerun on ``page`` with the link ``params`` (the bound widgets take its values, as a
    followed link's do in a browser): its process CPU time, s."""
    at.query_params.clear()
    at.query_params.update(params)
    for key, value in params.items():
        if key in at.session_state:
            at.session_state[key] = _typed(value, at.session_state[key])
    for key in set(DEFAULTS) - set(params):  # a bound control left out of the link: its default
        if key in at.session_state and at.session_state[key] != DEFAULTS[key]:
            at.session_state[key] = DEFAULTS[key]
    at.switch_page(ui_pages.page(page).file)
    return kit.run_app(at, f"{page}?{params}", time.process_time)


def n_shown(at: AppTest) -> int | None:
    """The sidebar's N (a check that the rerun took the link's settings)."""
    found = [s.value for s in at.slider if s.key == "N"]
    return int(found[0]) if found else None


def pair(at: AppTest, lesson: lessons.Lesson, a: int) -> dict[str, float]:
    """The three kinds of rerun from stop ``a`` to stop ``a + 1`` (each from stop a's view)."""
    sa, sb = lesson.stops[a], lesson.stops[a + 1]
    tour_b = {"lesson": lesson.slug, "stop": str(a + 2)}
    out = {}
    for kind in KINDS:
        go(at, sa.page, dict(sa.settings))  # start: stop a's page and settings, untimed
        params = {"switch": dict(sa.settings), "settings": dict(sb.settings)}.get(
            kind, {**sb.settings, **tour_b}
        )
        out[kind] = go(at, sb.page, params)
        if kind != "switch" and "N" in sb.settings and n_shown(at) != int(sb.settings["N"]):
            raise SystemExit(f"stop {a + 2}: N={n_shown(at)} on screen, the link says {sb.link}")
    return out


def bar_cost(at: AppTest, lesson: lessons.Lesson, i: int, repeats: int) -> dict[str, float]:
    """The bar's own cost: median CPU ms of stop ``i``'s rerun without and with the tour."""
    stop = lesson.stops[i]
    tour = {**stop.settings, "lesson": lesson.slug, "stop": str(i + 1)}
    times: dict[str, list[float]] = {"plain": [], "tour": []}
    go(at, stop.page, dict(stop.settings))
    for _ in range(repeats):
        times["plain"].append(go(at, stop.page, dict(stop.settings)))
        times["tour"].append(go(at, stop.page, tour))
    return {k: statistics.median(v) * 1000 for k, v in times.items()}


def lesson_cpu(args: argparse.Namespace) -> int:
    """``--lesson``: every pair of stops from ``--from`` to ``--to``, ``--rounds`` times (the
    warm rounds' medians), then the tour's bar alone."""
    lesson = next(x for x in lessons.shipped() if x.slug == args.lesson)
    at = start(APP, {})
    rows = []  # (round, stop a, kind, cpu s)
    for r in range(args.rounds):
        for a in range(args.first - 1, args.last - 1):
            for kind, dt in pair(at, lesson, a).items():
                rows.append((r, a + 1, kind, dt))
    warm = [x for x in rows if x[0] > 0] or rows
    med = {k: statistics.median(x[3] for x in warm if x[2] == k) * 1000 for k in KINDS}
    print(f"{lesson.slug}, stops {args.first}..{args.last}, {args.rounds} rounds; CPU ms/rerun")
    print("stop a->b   " + "  ".join(f"{k:>9}" for k in KINDS) + "   tour  settings")
    for a in range(args.first, args.last):
        cpu = {
            k: statistics.median(x[3] for x in warm if x[1] == a and x[2] == k) * 1000
            for k in KINDS
        }
        cells = "  ".join(f"{cpu[k]:9.0f}" for k in KINDS)
        tour, settings = cpu["stop"] - cpu["settings"], cpu["settings"] - cpu["switch"]
        pages = f"{lesson.stops[a - 1].page}->{lesson.stops[a].page}"
        print(f"{a:>2}->{a + 1:<2}      {cells}  {tour:+6.0f}  {settings:+6.0f}   {pages}")
    ratio = med["stop"] / med["switch"]
    print(
        f"median: switch {med['switch']:.0f}, settings {med['settings']:.0f}, stop "
        f"{med['stop']:.0f} ms; stop/switch {ratio:.2f}x; tour {med['stop'] - med['settings']:+.0f}"
        f" ms, settings {med['settings'] - med['switch']:+.0f} ms"
    )
    bar = bar_cost(at, lesson, args.first - 1, args.repeats)
    print(
        f"the tour's bar alone (stop {args.first}, same page and settings, {args.repeats} reruns "
        f"each, alternated): {bar['plain']:.0f} ms without, {bar['tour']:.0f} ms with "
        f"({bar['tour'] - bar['plain']:+.0f} ms)"
    )
    kit.write_json(args.json, {"rows": rows, "median_ms": med, "bar_ms": bar}, say=False)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = kit.parser(__doc__, "--lesson: write the rows and the medians to this file")
    ap.add_argument("--repeats", type=int, default=15, help="reruns (--lesson: of the bar's A/B)")
    ap.add_argument("--lesson", help="a shipped lesson: its stop changes against a switch")
    ap.add_argument("--from", dest="first", type=int, default=6, help="first stop (from 1)")
    ap.add_argument("--to", dest="last", type=int, default=11, help="last stop (from 1)")
    ap.add_argument("--rounds", type=int, default=3, help="--lesson: rounds over the stops")
    args = ap.parse_args(argv)
    return lesson_cpu(args) if args.lesson else budget(args)


if __name__ == "__main__":
    raise SystemExit(main())
