"""The guard (issue 46): every gesture's figure of the targets table in one run, each step
a bench in a subprocess; compared with (``--record``: rewrites) the recorded run in
docs/benchmarks.md, "The guard".

    python bench/gestures.py                 # ~4-5 min on the 2-core machine
    python bench/gestures.py --quick         # a smoke run: fewer moves and rounds
    python bench/gestures.py --skip engine,first_visit --json guard.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections import namedtuple
from pathlib import Path

import kit
from kit import REPO

DOCS = REPO / "docs" / "benchmarks.md"
SECTION = "## The guard (bench/gestures.py)"
#: A ratio that moved more than this from the recorded one is flagged.
MOVED = 0.15
#: The whole run's budget on the 2-core machine (issue 46).
BUDGET_S = 300
ENGINE_SIZES = ((64, 64, 8), (512, 256, 8), (1024, 512, 8))
ENGINE_THREADS = 2
ENGINE_UNSET = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
Gesture = namedtuple("Gesture", "id title target")
GESTURES = (
    Gesture("slider_playground",
            "N slider to the last redraw, Playground (attnviz / bare app, same run)", 0.6),
    Gesture("slider_multi_head", "the same, Multi-head", 0.6),
    Gesture("slider_step_by_step", "the same, Step by step", 0.8),
    Gesture("head_change", "head change (the playground's head picker to the redraw) / the "
            "bare app's N slider", 0.5),
    Gesture("page_switch", "page switch (attnviz / plain app)", 1.0),
    Gesture("first_visit", "first visit, empty cache (attnviz / plain app)", 0.8),
    *(Gesture(f"engine_{n}", f"multi_head_attention / torch.nn.MultiheadAttention, float64, "
              f"weights returned, N = {n}, D = {d}, {h} heads, {ENGINE_THREADS} threads", 0.8)
      for n, d, h in ENGINE_SIZES),
)  # fmt: skip
STEPS = ("slider", "head", "page_switch", "first_visit", "engine")
SLIDER_PAGES = {
    "home": "slider_playground",
    "multi_head": "slider_multi_head",
    "step_by_step": "slider_step_by_step",
}


def commands(quick: bool, out: Path) -> dict[str, list[str]]:
    """Each step's command (the bench's arguments), writing its JSON into ``out``."""
    moves = ["--moves", "2" if quick else "5", "--warmup", "1", "--rounds", "1" if quick else "2"]
    rounds = ["--rounds", "1" if quick else "3"]
    sizes = ",".join(f"{n}x{d}x{h}" for n, d, h in ENGINE_SIZES)
    engine = ["--rounds", "1", "--repeats", "3"] if quick else [*rounds, "--repeats", "9"]
    cmds = {
        "slider": ["browser_latency.py", "--pages", ",multi_head,step_by_step", "--configs",
                   "defaults", *moves],
        "head": ["browser_latency.py", "--pages", "", "--configs", "defaults", "--select", "head",
                 "--bare-slider", *moves[:1], "2" if quick else "6", *moves[2:]],
        "page_switch": ["page_switch.py", *rounds],
        "first_visit": ["page_switch.py", "--first-visit", *rounds, *(["--warm", "0"] * quick)],
        "engine": ["engine.py", "--pair", "--sizes", sizes, "--threads", str(ENGINE_THREADS),
                   *engine, "--warmup", "1"],
    }  # fmt: skip
    return {
        k: [sys.executable, f"bench/{c[0]}", *c[1:], "--json", str(out / f"{k}.json")]
        for k, c in cmds.items()
    }


def run_step(name: str, cmd: list[str], timeout: float) -> float:
    """Run one bench, its output on stderr, in a process group of its own (ended, with the
    servers and browser it started, on a timeout or Ctrl-C). Seconds."""
    env = dict(os.environ)
    if name == "engine":  # the machine's OpenBLAS variables, unset for this subprocess alone
        for var in ENGINE_UNSET:
            env.pop(var, None)
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(ENGINE_THREADS)
    print(f"== {name}: {shlex.join(cmd[1:])}", file=sys.stderr, flush=True)
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=sys.stderr, stderr=sys.stderr, start_new_session=True
    )
    try:
        proc.wait(timeout)
    except (subprocess.TimeoutExpired, KeyboardInterrupt) as exc:
        kit.stop(proc, 10, group=True)
        if isinstance(exc, KeyboardInterrupt):
            raise
        print(f"== {name}: stopped after {timeout:.0f} s", file=sys.stderr)
    took = time.monotonic() - t0
    print(f"== {name}: exit {proc.returncode}, {took:.0f} s", file=sys.stderr)
    return took


def figure(a: list[float], b: list[float], rounds: list[tuple[float, float]]) -> dict:
    """attnviz's and the other's median over every sample; each round's ratio and their
    median, the gesture's ratio (within the rounds' range, unlike a ratio of two medians)."""
    ratios = [x / y for x, y in rounds]
    return {
        "attnviz_ms": round(statistics.median(a), 3),
        "plain_ms": round(statistics.median(b), 3),
        "ratio": round(statistics.median(ratios), 3),
        "ratios": [round(r, 3) for r in ratios],
    }


def latency_figures(rows: list[dict], key: str = "view_ms", pages: dict | None = None) -> dict:
    """Each attnviz page's moves (``key``; the bare app's: its N slider's ``view_ms``, key to
    the last chart in view) against the bare app's, round by round (browser_latency's labels
    ``attnviz:home:defaults:r2``; no ``:rN``: round 1)."""
    runs: dict[tuple, dict] = {}
    for r in rows:
        name, page, *rest = r["label"].split(":")
        k = "view_ms" if name == "bare" else key
        rnd = int(rest[1][1:]) if len(rest) > 1 else 1
        runs.setdefault((name, page), {})[rnd] = ([m[k] for m in r["rows"]], r[f"median_{k}"])
    bare, out = runs.get(("bare", "home"), {}), {}
    for page, gid in (pages or SLIDER_PAGES).items():
        ours = runs.get(("attnviz", page), {})
        rnds = sorted(set(ours) & set(bare))
        if rnds:
            out[gid] = figure(
                [m for r in rnds for m in ours[r][0]],
                [m for r in rnds for m in bare[r][0]],
                [(ours[r][1], bare[r][1]) for r in rnds],
            )
    return out


def page_switch_figures(data: dict) -> dict[str, dict]:
    """attnviz's switches / the plain app's; a round: one switch to each page, as many plain."""
    pages = list(data["switch_rows"].values())
    plain = data["plain_rows"]
    k = len(pages)
    rounds = [
        (statistics.median(p[i]["ms"] for p in pages),
         statistics.median(q["ms"] for q in plain[i * k : (i + 1) * k]))
        for i in range(min(len(p) for p in pages))
    ]  # fmt: skip
    ours = [r["ms"] for p in pages for r in p]
    return {"page_switch": figure(ours, [q["ms"] for q in plain], rounds)}


def first_visit_figures(data: dict) -> dict[str, dict]:
    """A first visit to every chart drawn, attnviz / the plain app, visit by visit."""
    a = [v["drawn"] for v in data["attnviz"]["visits"]]
    b = [v["drawn"] for v in data["plain"]["visits"]]
    return {"first_visit": figure(a, b, list(zip(a, b, strict=False)))}


def engine_figures(data: dict) -> dict[str, dict]:
    """attnviz / torch per size: the medians of each round."""
    out = {}
    for i, (n, _, _) in enumerate(data["sizes"]):
        rows = [rnd[i] for rnd in data["rounds"]]
        a = [r["fused_ms"] for r in rows]
        b = [r["torch_ms"] for r in rows]
        out[f"engine_{n}"] = figure(a, b, list(zip(a, b, strict=True)))
    return out


#: What a bench's JSON that is not as expected raises when its figures are read.
UNREADABLE = (KeyError, ValueError, IndexError, ZeroDivisionError, statistics.StatisticsError)
READERS = {  # step -> (its JSON file, its figures)
    "slider": ("slider.json", latency_figures),
    "head": ("head.json", lambda rows: latency_figures(rows, "charts_ms", {"home": "head_change"})),
    "page_switch": ("page_switch.json", page_switch_figures),
    "first_visit": ("first_visit.json", first_visit_figures),
    "engine": ("engine.json", engine_figures),
}


def read_figures(folder: Path, steps: list[str]) -> dict[str, dict]:
    """The figures of each step whose JSON is in ``folder`` (a step that failed has none)."""
    out: dict[str, dict] = {}
    for step in steps:
        name, read = READERS[step]
        path = folder / name
        if not path.exists():
            print(f"== {step}: no {name}, no figures", file=sys.stderr)
            continue
        try:
            out.update(read(json.loads(path.read_text())))
        except UNREADABLE as e:
            print(f"== {step}: could not read {name}: {e!r}", file=sys.stderr)
    return out


def _block(text: str) -> re.Match | None:
    """The fenced JSON block of the guard's section of docs/benchmarks.md."""
    start = text.find(f"\n{SECTION}\n")
    if start < 0:
        return None
    end = text.find("\n## ", start + len(SECTION) + 2)
    end = len(text) if end < 0 else end
    return re.compile(r"```json\n(.*?)\n```", re.S).search(text, start, end)


def read_record(path: Path) -> dict | None:
    """The last recorded run, or None (no such section or block)."""
    m = _block(path.read_text()) if path.exists() else None
    return json.loads(m.group(1)) if m else None


def write_record(path: Path, record: dict) -> None:
    """Rewrite the block with ``record`` (the rest of the file as it was)."""
    text = path.read_text()
    m = _block(text)
    if m is None:
        raise ValueError(f"{path}: no ```json block in the section {SECTION!r}")
    path.write_text(text[: m.start(1)] + dumps(record) + text[m.end(1) :])


def dumps(record: dict) -> str:
    """JSON with one line per key and per gesture (a diff of two records reads line by line)."""
    lines = []
    for k, v in record.items():
        if isinstance(v, dict) and v:
            inner = ",\n".join(f"  {json.dumps(g)}: {json.dumps(f)}" for g, f in v.items())
            lines.append(f" {json.dumps(k)}: {{\n{inner}\n }}")
        else:
            lines.append(f" {json.dumps(k)}: {json.dumps(v)}")
    return "{\n" + ",\n".join(lines) + "\n}"


def new_record(figures: dict, old: dict | None, meta: dict) -> dict:
    """This run's figures; a gesture not measured keeps its recorded ones, saying whose."""
    gestures = {}
    for g in GESTURES:
        if g.id in figures:
            gestures[g.id] = figures[g.id]
        elif old and g.id in old.get("gestures", {}):
            kept = dict(old["gestures"][g.id])
            kept.setdefault("from", f"{old.get('date', '?')} at {old.get('commit', '?')}")
            gestures[g.id] = kept
    return {**meta, "gestures": gestures}


def _ms(v: float) -> str:
    return f"{v:,.0f}" if v >= 10 else f"{v:.3g}"


def change(now: float, then: float | None) -> tuple[str, bool]:
    """The ratio's change from the recorded one, and whether it moved more than 15 %."""
    if then is None or then <= 0:
        return "", False
    rel = now / then - 1
    moved = abs(rel) > MOVED
    return (f"moved {rel:+.0%}" if moved else f"{rel:+.0%}"), moved


def table(figures: dict, record: dict | None) -> tuple[str, list[str]]:
    """The Markdown table, and the ids of the gestures that moved."""
    lines = [
        "| gesture | target | this run (attnviz ms / plain ms: the run's medians; ratio: the "
        "median of its rounds', their range) | last recorded | change | met? |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    moved = []
    recorded = (record or {}).get("gestures", {})
    for g in GESTURES:
        f = figures.get(g.id)
        then = recorded.get(g.id, {}).get("ratio")
        last = f"{then:.2f}x" if then is not None else "none"
        if f is None:
            lines.append(f"| {g.title} | <= {g.target}x | not measured | {last} | | |")
            continue
        this = f"{_ms(f['attnviz_ms'])} / {_ms(f['plain_ms'])} ms: **{f['ratio']:.2f}x**"
        if len(f["ratios"]) > 1:
            this += f" ({min(f['ratios']):.2f}-{max(f['ratios']):.2f}x)"
        delta, flag = change(f["ratio"], then)
        if flag:
            moved.append(g.id)
        met = "met" if f["ratio"] <= g.target else "**not met**"
        lines.append(f"| {g.title} | <= {g.target}x | {this} | {last} | {delta} | {met} |")
    return "\n".join(lines), moved


def summary(meta: dict, record: dict | None, moved: list[str]) -> str:
    wall = meta["wall_s"]
    budget = "" if meta.get("quick") else (
        f" (target < {BUDGET_S} s: {'met' if wall < BUDGET_S else 'not met'})"
    )  # fmt: skip
    if meta.get("from"):  # nothing measured now: the figures are an earlier run's
        wall, budget = 0, f", the figures read from {meta['from']}"
    load = "/".join(f"{x:.1f}" for x in meta["load_start"])
    out = [
        f"This run: {meta['date']}, commit {meta['commit']}, {meta['cpus']} CPUs, load {load} "
        f"at the start, {'/'.join(f'{x:.1f}' for x in meta['load_end'])} at the end; "
        f"wall time {wall:.0f} s{budget}" + (", --quick" if meta.get("quick") else "") + ".",
    ]
    if record:
        out.append(
            f"Last recorded: {record.get('date', '?')}, commit {record.get('commit', '?')}, load "
            + "/".join(f"{x:.1f}" for x in record.get("load_start", []))
            + "."
        )
    if moved:
        out.append(f"Moved more than {MOVED:.0%} from the recorded ratio: {', '.join(moved)}.")
    return "\n".join(out)


def _commit() -> str:
    def git(*a: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *a], cwd=REPO, capture_output=True, text=True)

    head = git("rev-parse", "--short", "HEAD").stdout.strip() or "?"
    return head + ("+changes" if git("diff", "--quiet", "HEAD").returncode else "")


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = kit.parser(__doc__, "write this run's figures and table to this file")
    ap.add_argument("--skip", default="", help=f"steps not run, comma-separated: {STEPS}")
    ap.add_argument("--quick", action="store_true", help="fewer moves and rounds (a smoke run)")
    ap.add_argument("--record", action="store_true", help="rewrite the docs' recorded run")
    ap.add_argument("--docs", type=Path, default=DOCS, help="where the recorded run is")
    ap.add_argument("--keep", type=Path, help="keep the benches' JSON in this folder")
    ap.add_argument(
        "--from", dest="from_dir", type=Path,
        help="read the benches' JSON from this folder (a --keep folder) instead of measuring",
    )  # fmt: skip
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds per step")
    args = ap.parse_args(argv)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if skip - set(STEPS):
        ap.error(f"--skip: unknown {sorted(skip - set(STEPS))}; the steps are {STEPS}")
    if args.record and args.quick:
        ap.error("--record records a full run, not a --quick one")
    args.steps = [s for s in STEPS if s not in skip]
    return args


def measure(args: argparse.Namespace, folder: Path) -> dict[str, float]:
    """Run every step not skipped; seconds per step."""
    cmds = commands(args.quick, folder)
    took = {}
    for step in args.steps:
        (folder / READERS[step][0]).unlink(missing_ok=True)  # no figures from an earlier run
        took[step] = round(run_step(step, cmds[step], args.timeout), 1)
    return took


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    t0 = time.monotonic()
    meta = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _commit(),
        "cpus": os.cpu_count(),
        "load_start": [round(x, 2) for x in os.getloadavg()],
        "quick": args.quick,
        **({"from": str(args.from_dir)} if args.from_dir else {}),
    }
    with tempfile.TemporaryDirectory(prefix="gestures-") as tmp:
        folder = args.from_dir or args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        steps_s = {} if args.from_dir else measure(args, folder)
        figures = read_figures(folder, args.steps)
    meta |= {
        "load_end": [round(x, 2) for x in os.getloadavg()],
        "wall_s": round(time.monotonic() - t0, 1),
        "steps_s": steps_s,
        "commands": {s: shlex.join(c[1:]) for s, c in commands(args.quick, Path("OUT")).items()},
    }
    record = read_record(args.docs)
    text, moved = table(figures, record)
    print(text)
    print()
    print(summary(meta, record, moved))
    if args.record:
        try:
            write_record(args.docs, new_record(figures, record, meta))
            print(f"\nRecorded in {args.docs}.")
        except ValueError as e:
            print(f"\nNot recorded: {e}")
    out = {"meta": meta, "figures": figures, "recorded": record, "moved": moved, "table": text}
    kit.write_json(args.json, out, say=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
