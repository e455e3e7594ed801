"""A live class under load (issue 19): the class store and the teacher's live tally.

Four parts, each a bounded run that stops by itself:

1. ``sqlite``: ``--students`` (300) in one class answer ``--questions`` (8) within
   ``--duration`` s (120) on one server with SQLite. The server's one :class:`ClassStore`
   is shared by one thread per student (as Streamlit runs each session's script in its own
   thread); every student answers each question once at a random moment of the run, and
   one answer in ten is corrected later (a replacement). Meanwhile the teacher's tally
   runs every 2 s and every student's page polls the class every 3 s, as the views do.
   Reported: submits, errors, submit p50/p95/max, rows stored vs. (student, question)
   pairs acknowledged, answers lost (an acknowledged last answer not in the database).
2. ``replicas``: ``--replica-students`` (60) over 3 replica processes sharing a throwaway
   PostgreSQL (bench/pgcluster.py; fsync on), each replica its own store and a pool of 8
   threads; the replica holding a third of the students is killed (SIGKILL) halfway. Its
   students reconnect after 1 s (HAProxy's redispatch and Streamlit's reconnect) to a live
   replica and resend what had no answer yet. Reported: lost answers, and whether the
   teacher's tally is complete (every student's every question counted once).
3. ``tally``: the real app (``streamlit run app.py``, SQLite) and the teacher's view in
   headless Chromium; an answer is stored, and the time until the teacher's page shows it
   (the tally fragment reruns every 2 s) is measured, ``--tally-samples`` times.
4. ``app``: ``--app-students`` (60) phones answer on the class's light page (``/join``,
   served beside the app by ``serve.py``) within ``--app-duration`` s: bench/class_hall.py's
   one-server class, reported as checks, errors, rows stored vs. acknowledged, lost, check
   p50/p95/max. Not in ``all`` (bench/class_hall.py is that scenario's own script).

Parts 1 and 2 drive the store directly (not through websockets): they measure the store
and its database under a class's write pattern, not Streamlit's rendering (bench/classroom.py
measures that). Part 3 goes through the app and the browser, part 4 through the
student's page.

    python bench/live_class.py                                  # all three parts
    python bench/live_class.py --part sqlite --students 300 --duration 120
    python bench/live_class.py --part replicas --json live.json
    python bench/live_class.py --part app --app-students 60 --app-duration 120

Targets (issue 19): (1) 0 errors, 0 lost, p95 < 100 ms; (2) 0 lost, the tally complete
after the reconnect; (3) the tally shows a new answer within 3 s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import queue
import random
import shutil
import signal
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import kit
from kit import Server, percentile, percentiles

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
    lost = 0
    by_student: dict[str, dict[int, str]] = {}
    for (student, item), answer in last.items():
        by_student.setdefault(student, {})[item] = answer
    for student, want in by_student.items():
        got = {i: a for i, (a, _) in store.answers(code, student).items()}
        lost += sum(got.get(i) != a for i, a in want.items())
    return lost


# --------------------------------------------------------------------------- 1. SQLite


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
        **percentiles("submit_ms", seconds, 1000, 1),
        "tally_reads": reads["tally"],
        "poll_reads": reads["poll"],
    }


# --------------------------------------------------------------------------- 2. replicas


def replica_main(url: str, code: str, index: int, jobs, results) -> None:
    """One replica: its own store, 8 threads answering the jobs sent to it. A student is
    always served by the same thread, in order (a session's reruns never overlap)."""
    store = ClassStore(url, grade=exercises.grade)
    lanes: list[queue.Queue] = [queue.Queue() for _ in range(8)]

    def lane(q: queue.Queue) -> None:
        while (job := q.get()) is not None:
            job_id, sid, item, answer = job
            s = time.perf_counter()
            try:
                right = store.submit(code, sid, item, answer)
                results.put((job_id, index, right, time.perf_counter() - s, None))
            except Exception as exc:  # noqa: BLE001 - reported to the driver
                results.put((job_id, index, None, 0.0, f"{type(exc).__name__}: {exc}"[:200]))

    threads = [threading.Thread(target=lane, args=(q,)) for q in lanes]
    for th in threads:
        th.start()
    while (job := jobs.get()) is not None:
        lanes[hash(job[1]) % len(lanes)].put(job)
    for q in lanes:
        q.put(None)
    for th in threads:
        th.join()
    store.dispose()


def part_replicas(args: argparse.Namespace) -> dict[str, Any]:
    from pgcluster import PgCluster

    replicas_n = 3
    ctx = multiprocessing.get_context("spawn")
    with PgCluster(durable=True) as pg:
        store = ClassStore(pg.url, grade=exercises.grade)
        code, key = store.create(SEED, args.questions)
        # one answer queue per replica: a process killed while writing to a shared queue
        # would leave its lock held (and the others' answers stuck behind it)
        answer_queues = [ctx.Queue() for _ in range(replicas_n)]
        queues = [ctx.Queue() for _ in range(replicas_n)]
        procs = [
            ctx.Process(target=replica_main, args=(pg.url, code, i, queues[i], answer_queues[i]))
            for i in range(replicas_n)
        ]
        for p in procs:
            p.start()
        jobs = plan(args.replica_students, args.questions, args.replica_duration, random.Random(2))
        students = sorted({j[1] for j in jobs})
        home = {s: i % replicas_n for i, s in enumerate(students)}
        victim = 0
        kill_at = args.replica_duration / 2
        alive = set(range(replicas_n))
        pending: dict[int, tuple] = {}  # job id -> job, sent and not answered
        sent_to: dict[int, int] = {}
        acked: dict[int, float] = {}
        errors: list[str] = []
        last: dict[tuple[str, int], tuple[int, str]] = {}  # (student, item) -> (job id, answer)
        resent = 0
        lock = threading.Lock()
        done = threading.Event()

        def collect(results) -> None:
            while not done.is_set() or pending:
                try:
                    job_id, index, right, secs, err = results.get(timeout=0.5)
                except queue.Empty:
                    continue
                except Exception:  # noqa: BLE001 - a message cut by the kill: the replica is gone
                    return
                with lock:
                    if job_id not in pending or index not in alive:
                        continue
                    if err:
                        errors.append(err)
                        continue
                    job = pending.pop(job_id)
                    acked[job_id] = secs
                    key_ = (job[1], job[2])
                    if key_ not in last or last[key_][0] < job_id:
                        last[key_] = (job_id, job[3])

        collectors = [
            threading.Thread(target=collect, args=(q,), daemon=True) for q in answer_queues
        ]
        for c in collectors:
            c.start()
        t0 = time.monotonic() + 1.0
        killed_at = None
        for job_id, (t, sid, item, answer) in enumerate(jobs):
            time.sleep(max(0.0, t0 + t - time.monotonic()))
            if killed_at is None and time.monotonic() - t0 >= kill_at:
                os.kill(procs[victim].pid, signal.SIGKILL)
                procs[victim].join(10)
                killed_at = time.monotonic() - t0
                queues[victim].cancel_join_thread()  # its reader is gone: do not wait at exit
                with lock:
                    alive.discard(victim)
                    lost_in_flight = [j for j, r in sent_to.items() if r == victim and j in pending]
                time.sleep(1.0)  # the students' pages reconnect through HAProxy
                for s in students:
                    if home[s] == victim:
                        home[s] = 1 + students.index(s) % (replicas_n - 1)
                for j in lost_in_flight:  # resend what got no answer
                    with lock:
                        job = pending[j]
                        sent_to[j] = home[job[1]]
                    queues[home[job[1]]].put((j, *job[1:]))
                    resent += 1
            with lock:
                pending[job_id] = (t, sid, item, answer)
                sent_to[job_id] = home[sid]
            queues[home[sid]].put((job_id, sid, item, answer))
        deadline = time.monotonic() + 60
        while pending and time.monotonic() < deadline:
            time.sleep(0.1)
        done.set()
        for c in collectors:
            c.join(5)
        for i in alive:
            queues[i].put(None)
        for i, p in enumerate(procs):
            if i in alive:
                p.join(30)
        expected = len({(j[1], j[2]) for j in jobs})
        tally = store.tally(code, key)
        out = {
            "part": "replicas",
            "students": args.replica_students,
            "questions": args.questions,
            "replicas": replicas_n,
            "killed_replica_at_s": round(killed_at or float("nan"), 1),
            "students_moved": sum(1 for i, s in enumerate(students) if i % replicas_n == victim),
            "submits": len(jobs),
            "acknowledged": len(acked),
            "unanswered": len(pending),
            "resent_after_kill": resent,
            "errors": len(errors),
            "rows": store.count_rows(code),
            "pairs_expected": expected,
            "lost": lost_answers(store, code, {k: a for k, (_, a) in last.items()}),
            "tally_answered": sum(t["answered"] for t in tally.values()),
            "tally_students": store.students(code, key),
            "submit_ms_p95": round(percentile(list(acked.values()), 95) * 1000, 1),
        }
        out["tally_complete"] = out["tally_answered"] == expected and out["tally_students"] == len(
            students
        )
        store.dispose()
    return out


# --------------------------------------------------------------------------- 3. tally


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
        **percentiles("tally_s", seconds, 1, 2),
        "tally_s_mean": round(statistics.fmean(seconds), 2) if seconds else None,
    }


# --------------------------------------------------------------------------- 4. app


def part_app(args: argparse.Namespace) -> dict[str, Any]:
    """``--app-students`` phones answer the class's questions on its light page (``/join``,
    the page a student answers on since the Streamlit student view went): bench/class_hall.py's
    one-server class (``streamlit run serve.py``, SQLite) with a short baseline and idle
    phase, its figures reported under this part's names."""
    import class_hall

    os.environ.pop("ATTNVIZ_DATABASE_URL", None)
    hall = class_hall.main(
        [
            *("--phones", str(args.app_students), "--questions", str(args.questions)),
            *("--window", str(args.app_duration), "--ramp", "5", "--idle", "5"),
            *("--baseline", "2"),
        ]
    )
    store, check = hall["store"], hall["check_s"]
    return {
        "part": "app",
        "students": args.app_students,
        "questions": args.questions,
        "duration_s": args.app_duration,
        "finished_in_s": hall["answers_done_s"],
        "checks": hall["checks"],
        "errors": hall["errors"],
        "error_kinds": sorted(hall["error_kinds"])[:5],
        "rows": store["rows"],
        "acknowledged": store["acknowledged"],
        "lost": store["lost"],
        "load_s_p95": hall["join_s"]["p95"],
        **{f"check_s_{k}": check[k] for k in ("p50", "p95", "max")},
        "tally_answered": store["tally_answered"],
    }


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--part", choices=["sqlite", "replicas", "tally", "app", "all"], default="all")
    p.add_argument("--students", type=int, default=300)
    p.add_argument("--questions", type=int, default=8)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--replica-students", type=int, default=60)
    p.add_argument("--replica-duration", type=float, default=60.0)
    p.add_argument("--tally-samples", type=int, default=10)
    p.add_argument("--app-students", type=int, default=60)
    p.add_argument("--app-duration", type=float, default=120.0)
    p.add_argument("--json", type=Path, default=None)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    parts = ["sqlite", "replicas", "tally"] if args.part == "all" else [args.part]
    run = {
        "sqlite": part_sqlite,
        "replicas": part_replicas,
        "tally": part_tally,
        "app": part_app,
    }
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
