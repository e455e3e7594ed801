"""Predict, then reveal: what a view question costs (attnviz.classroom, attnviz.classroom.predict,
attnviz.viz.classroom), on SQLite in a temp dir.

    python bench/predict.py [--students 300] [--threads 16] [--json out.json]

Reports: ``students`` answering one view question at once from ``threads`` threads
(p50/p95 of ``answer_question``, errors, rows = acknowledged), ``question_tally`` and
``question`` (what the projector and each student's poll read) in ms, and the pure parts
of a projector rerun (``top_key`` + ``outline_cells`` on an N=12 heatmap) in ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from attnviz import engine, viz
from attnviz.classroom import predict
from attnviz.classroom.store import ClassStore


def _ms(samples: list[float], q: float) -> float:
    return round(float(np.quantile(np.asarray(samples) * 1000, q)), 2)


def timed_ms(fn, repeat: int) -> float:
    """Median ms of ``repeat`` calls of ``fn()`` (also bench/predict_pages.py's)."""
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return round(statistics.median(out) * 1000, 3)


def run(students: int, threads: int) -> dict:
    weights = engine.softmax(np.random.default_rng(0).standard_normal((2, 12, 12)) * 2)
    q = predict.top_key(weights, 0, 3, [f"t{i}" for i in range(12)])
    with tempfile.TemporaryDirectory() as tmp:
        store = ClassStore(f"sqlite:///{Path(tmp) / 'classes.db'}")
        code, key = store.create(1, 8)
        qid = store.ask(
            code, key, page="playground", link="N=12", view="bench", kind=q.kind,
            prompt=q.prompt, choices=list(q.choices), answer=q.answer, detail=q.detail,
        )  # fmt: skip
        times: list[float] = []
        errors = 0

        def one(s: int) -> None:
            nonlocal errors
            t0 = time.perf_counter()
            try:
                store.answer_question(code, f"student{s:05d}", qid, s % len(q.choices))
            except Exception:  # counted, not raised: the report says how many
                errors += 1
                return
            times.append(time.perf_counter() - t0)

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(one, range(students)))
        tally = store.question_tally(code, key, qid)
        out = {
            "students": students,
            "threads": threads,
            "errors": errors,
            "acknowledged": len(times),
            "rows": sum(tally),
            "answer_ms_p50": _ms(times, 0.5),
            "answer_ms_p95": _ms(times, 0.95),
            "question_tally_ms": timed_ms(lambda: store.question_tally(code, key, qid), 50),
            "question_ms": timed_ms(lambda: store.question(code), 50),
        }
        store.dispose()
    fig = viz.heatmaps.attention_figure(weights[0], what="weights")
    out["top_key_ms"] = timed_ms(lambda: predict.top_key(weights, 0, 3), 200)
    out["outline_cells_ms"] = timed_ms(lambda: viz.classroom.outline_cells(fig, [(3, 4)]), 200)
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=300)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    result = run(args.students, args.threads)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
