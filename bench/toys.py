"""attnviz.toys, timed: how long until an induction head forms, training live (issue 28;
docs/benchmarks.md, "Learned attention").

    OPENBLAS_NUM_THREADS=1 taskset -c 0 python bench/toys.py --seeds 0 1 2
"""

from __future__ import annotations

import os
import time

import kit

from attnviz import toys


def time_to_head(seed: int, threshold: float, steps: int) -> dict:
    """Train until a layer-1 head scores >= ``threshold``: step, seconds, ms per step."""
    task = toys.TASKS["induction"]
    trained = scored = 0.0
    start = time.perf_counter()
    for history in toys.train_iter(task, seed, steps):
        trained += time.perf_counter() - start
        mark = time.perf_counter()
        jobs = toys.job_scores(task, history.checkpoints[-1:], None)
        scored += time.perf_counter() - mark
        step = int(history.steps[-1])
        if jobs.scores[0, 1].max() >= threshold:
            break
        start = time.perf_counter()
    return {
        "seed": seed, "step": step, "formed": bool(jobs.scores[0, 1].max() >= threshold),
        "train_s": round(trained, 2), "train_and_score_s": round(trained + scored, 2),
        "ms_per_step": round(1000 * trained / max(step, 1), 2),
    }  # fmt: skip


def main() -> None:
    parser = kit.parser(__doc__, "also write the results here")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--threshold", type=float, default=0.8)
    parser.add_argument("--steps", type=int, default=toys.MAX_STEPS)
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
          f"CPUs allowed: {sorted(os.sched_getaffinity(0))}")  # fmt: skip
    rows = [time_to_head(seed, args.threshold, args.steps) for seed in args.seeds]
    for r in rows:
        print(f"seed {r['seed']}: layer-1 head >= {args.threshold} at step {r['step']} "
              f"(formed: {r['formed']}), {r['train_s']} s training, "
              f"{r['train_and_score_s']} s with scoring, {r['ms_per_step']} ms/step")  # fmt: skip
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    kit.write_json(args.json, rows, say=False)


if __name__ == "__main__":
    main()
