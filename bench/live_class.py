"""A live class under load (issue 19; docs/benchmarks.md, "Live class"): ``sqlite``, the
class store under ``--students`` threads; ``tally``, the time until the teacher's page shows
a new answer.

    python bench/live_class.py                                  # both parts
    python bench/live_class.py --part sqlite --students 300 --duration 120
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import kit
from kit import Server, spread

from attnviz.classroom import ClassStore, exercises

SEED = 7
TALLY_EVERY = 2.0
POLL_EVERY = 3.0


@contextlib.contextmanager
def sqlite_class(questions: int):
    """A class of ``questions`` in a new SQLite store: (folder, store, code, teacher key)."""
    tmp = Path(tempfile.mkdtemp(prefix="attnviz-live-"))
    store = ClassStore(f"sqlite:///{tmp / 'classes.db'}", grade=exercises.grade)
    try:
        yield (tmp, store, *store.create(SEED, questions))
    finally:
        store.dispose()
        shutil.rmtree(tmp, ignore_errors=True)


def plan(students: int, questions: int, duration: float, rng: random.Random) -> list[tuple]:
    """(time, student, item, answer) for a class: each student answers each question once
    at a random moment; one answer in ten is corrected later."""
    items = exercises.generate(seed=SEED, count=questions)
    out = []
    for s in range(students):
        for i, e in enumerate(items):
            t = rng.uniform(0, duration * 0.9)
            first = e.answer_text if rng.random() < 0.6 else f"{rng.randint(0, 99)}"
            out.append((t, f"st{s:04d}", i, first))
            if rng.random() < 0.1:
                out.append((rng.uniform(t, duration), f"st{s:04d}", i, e.answer_text))
    return sorted(out)


def lost_answers(store: ClassStore, code: str, last: dict[tuple[str, int], str]) -> int:
    """Acknowledged last answers that are not what the database holds."""
    stored = {s: store.answers(code, s) for s in {s for s, _ in last}}
    return sum(stored[s].get(i, (None,))[0] != a for (s, i), a in last.items())


def part_sqlite(args: argparse.Namespace) -> dict[str, Any]:
    with sqlite_class(args.questions) as (_, store, code, key):
        return _sqlite(args, store, code, key)


def _sqlite(args: argparse.Namespace, store: ClassStore, code: str, key: str) -> dict[str, Any]:
    jobs = plan(args.students, args.questions, args.duration, random.Random(1))
    per_student: dict[str, list[tuple]] = {}
    for job in jobs:
        per_student.setdefault(job[1], []).append(job)
    lock = threading.Lock()
    seconds: list[float] = []
    errors: list[str] = []
    last: dict[tuple[str, int], str] = {}
    stop = threading.Event()
    reads = {"tally": 0, "poll": 0}
    t0 = time.monotonic() + 1.0

    def student(mine: list[tuple]) -> None:
        for t, sid, item, answer in mine:
            time.sleep(max(0.0, t0 + t - time.monotonic()))
            s = time.perf_counter()
            try:
                store.submit(code, sid, item, answer)
            except Exception as exc:  # noqa: BLE001 - counted and reported
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}"[:200])
                continue
            with lock:
                seconds.append(time.perf_counter() - s)
                last[(sid, item)] = answer

    def teacher() -> None:
        while not stop.wait(TALLY_EVERY):
            store.tally(code, key)
            reads["tally"] += 1

    def pollers() -> None:  # every student's page asks for the reveals every 3 s
        interval = POLL_EVERY / max(args.students, 1)
        while not stop.is_set():
            store.info(code)
            reads["poll"] += 1
            time.sleep(interval)

    background = [threading.Thread(target=f, daemon=True) for f in (teacher, pollers)]
    for th in background:
        th.start()
    threads = [threading.Thread(target=student, args=(m,)) for m in per_student.values()]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    finished = time.monotonic() - t0
    stop.set()
    rows = store.count_rows(code)
    tally = store.tally(code, key)
    return {
        "part": "sqlite",
        "students": args.students,
        "questions": args.questions,
        "duration_s": args.duration,
        "finished_in_s": round(finished, 1),
        "submits": len(jobs),
        "acknowledged": len(seconds),
        "errors": len(errors),
        "error_kinds": sorted(set(errors))[:5],
        "pairs_acknowledged": len(last),
        "rows": rows,
        "lost": lost_answers(store, code, last),
        "tally_answered": sum(t["answered"] for t in tally.values()),
        "submit_ms": spread(seconds, 1000, 1),
        "tally_reads": reads["tally"],
        "poll_reads": reads["poll"],
    }


def part_tally(args: argparse.Namespace) -> dict[str, Any]:
    os.environ.pop("ATTNVIZ_DATABASE_URL", None)
    seconds: list[float] = []
    rng = random.Random(3)
    with (
        sqlite_class(8) as (tmp, store, code, key),
        Server("app.py", env={"ATTNVIZ_DATA_DIR": str(tmp)}) as srv,
        kit.browser() as browser,
    ):
        _, page = kit.tab(browser, (1280, 800))
        page.goto(f"{srv.url}/exercises?class={code}&teacher={key}")
        page.get_by_text("0 students · 0 answers").wait_for(timeout=90_000)
        for k in range(args.tally_samples):
            time.sleep(rng.uniform(0.0, TALLY_EVERY))  # any moment of the refresh cycle
            s = time.perf_counter()
            store.submit(code, f"tally{k}", 0, "1")
            n = k + 1
            page.get_by_text(f"{n} student{'s' if n != 1 else ''} · ").wait_for(timeout=30_000)
            seconds.append(time.perf_counter() - s)
    return {
        "part": "tally",
        "samples": len(seconds),
        "tally_s": spread(seconds, 1, 2),
        "tally_s_mean": round(statistics.fmean(seconds), 2) if seconds else None,
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = kit.parser(__doc__)
    p.add_argument("--part", choices=["sqlite", "tally", "all"], default="all")
    p.add_argument("--students", type=int, default=300)
    p.add_argument("--questions", type=int, default=8)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--tally-samples", type=int, default=10)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    parts = ["sqlite", "tally"] if args.part == "all" else [args.part]
    run = {"sqlite": part_sqlite, "tally": part_tally}
    out = []
    for name in parts:
        load = os.getloadavg()
        r = run[name](args)
        r["load_before"] = [round(x, 2) for x in load]
        r["load_after"] = [round(x, 2) for x in os.getloadavg()]
        print(json.dumps(r), flush=True)
        out.append(r)
    kit.write_json(args.json, out, say=False)
    return out


if __name__ == "__main__":
    main()
