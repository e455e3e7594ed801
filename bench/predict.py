"""Predict, then reveal: what a view question costs (students answering at once, the
tally, the projector's pure parts); ``--pages``: the other pages' questions at N = 12 and
512 (docs/classroom.md).

    python bench/predict.py [--students 300] [--threads 16] [--json out.json]
    python bench/predict.py --pages [--json out.json]
"""

from __future__ import annotations

import json
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import kit
import numpy as np
from kit import timed_ms

from attnviz import engine, viz
from attnviz.classroom import predict
from attnviz.classroom.store import ClassStore


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
            "answer_ms_p50": round(kit.percentile(times, 50) * 1000, 2),
            "answer_ms_p95": round(kit.percentile(times, 95) * 1000, 2),
            "question_tally_ms": timed_ms(lambda: store.question_tally(code, key, qid), 50),
            "question_ms": timed_ms(lambda: store.question(code), 50),
        }
        store.dispose()
    fig = viz.heatmaps.attention_figure(weights[0], what="weights")
    out["top_key_ms"] = timed_ms(lambda: predict.top_key(weights, 0, 3), 200)
    out["outline_cells_ms"] = timed_ms(lambda: viz.classroom.outline_cells(fig, [(3, 4)]), 200)
    return out


def pages(n: int, repeat: int) -> dict[str, float]:
    """The pure parts of a projector rerun at N = ``n`` tokens."""
    rng = np.random.default_rng(0)
    scores = rng.standard_normal((9, n, n))  # (H, N, N)
    mask = engine.causal_mask(n)
    causal = engine.softmax(np.where(mask, scores, -np.inf))  # (H, N, N)
    un, sc = engine.softmax(scores * 8), engine.softmax(scores)
    out = rng.standard_normal((n, n))  # (N, D)
    moved = out[rng.permutation(n)]
    fig = viz.heatmaps.attention_figure(causal[0], what="weights", mask=mask)
    b = viz.style.pool_factor(n)
    span = (-b / 2, (n - 1) // b * b + b / 2)
    diagonal = predict.answer_cells("previous_head", {"head": 0}, n)
    return {
        "top_key_masked_ms": timed_ms(lambda: predict.top_key(causal, 0, n - 1, mask=mask), repeat),
        "sharper_row_ms": timed_ms(lambda: predict.sharper_row(un, sc, 0, n // 2), repeat),
        "moved_row_ms": timed_ms(lambda: predict.moved_row(out, moved, n // 2), repeat),
        "previous_head_9_heads_ms": timed_ms(lambda: predict.previous_head(causal), repeat),
        "outline_row_ms": timed_ms(
            lambda: viz.classroom.outline_row(fig, n // 2, span, "rows", n), repeat
        ),
        "outline_diagonal_ms": timed_ms(
            lambda: viz.classroom.outline_cells(fig, diagonal, "rows", n), repeat
        ),
    }


def main(argv: list[str] | None = None) -> dict:
    ap = kit.parser(__doc__)
    ap.add_argument("--students", type=int, default=300)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--pages", action="store_true", help="the other pages' questions instead")
    args = ap.parse_args(argv)
    if args.pages:
        result = {f"N={n}": pages(n, repeat) for n, repeat in ((12, 200), (512, 20))}
    else:
        result = run(args.students, args.threads)
    print(json.dumps(result, indent=2))
    kit.write_json(args.json, result, say=False)
    return result


if __name__ == "__main__":
    main()
