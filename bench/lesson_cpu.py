"""Where a lesson's stop change spends the server's CPU against a page switch (issue 48),
per rerun in AppTest: ``switch``, ``settings`` and ``stop`` (Next) for each pair of stops;
docs/lessons.md, "What a stop change costs".

    python bench/lesson_cpu.py                    # intro, stops 6..11, 3 rounds
    python bench/lesson_cpu.py --lesson scaling_masks --from 1 --to 7 --json cpu.json
"""

from __future__ import annotations

import statistics
import sys
import time

import kit
from streamlit.testing.v1 import AppTest

from attnviz.classroom import lessons
from attnviz.ui import pages as ui_pages
from attnviz.ui.controls import DEFAULTS

APP = str(kit.REPO / "app.py")
KINDS = ("switch", "settings", "stop")
kit.server_like_pages()


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


def main(argv: list[str] | None = None) -> int:
    ap = kit.parser(__doc__)
    ap.add_argument("--lesson", default="intro")
    ap.add_argument("--from", dest="first", type=int, default=6, help="first stop (from 1)")
    ap.add_argument("--to", dest="last", type=int, default=11, help="last stop (from 1)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=15, help="reruns of the bar's A/B")
    args = ap.parse_args(argv)
    lesson = next(x for x in lessons.shipped() if x.slug == args.lesson)
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
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


if __name__ == "__main__":
    sys.exit(main())
