"""The command ``python -m attnviz.toys --task induction --seed 0``: train, write the run
file, print what it reached (:func:`main`).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from attnviz.toys.runs import RUNS_DIR, history_bytes, load, read_history, run_path
from attnviz.toys.scores import alignment, evaluate, job_scores
from attnviz.toys.tasks import TASKS, AlignTask, Task
from attnviz.toys.training import History, train

Array = NDArray[np.float64]


#: The first line of the package's docstring, the command's --help.
DESCRIPTION = "Tiny attention-only transformers trained in NumPy: watch an attention head form."


def _report(task: Task, history: History, seconds: float | None, size: int) -> str:
    """What a run reached, as text: accuracy, job scores, losses at the checkpoints."""
    loaded = read_history(history_bytes(history))  # the stored (rounded) weights
    loss, acc = evaluate(task, loaded.checkpoints[-1])
    jobs = job_scores(task, loaded)
    took = "" if seconds is None else f" in {seconds:.1f} s"
    lines = [
        f"{task.name}: {history.total} steps{took}, seed {history.seed}, "
        f"{len(history.steps)} checkpoints, {size} bytes",
        f"fresh samples: loss {loss:.4f}, accuracy {acc:.4f}",
    ]
    if isinstance(task, AlignTask):  # the best cross-attention head of the last layer
        first, last = (alignment(task, loaded.checkpoints[c])[-1].max() for c in (0, -1))
        lines.append(f"fresh samples: alignment accuracy step 0 {first:.4f}, end {last:.4f}")
    for layer, label in enumerate(jobs.labels):
        first = jobs.scores[0, layer].round(3).tolist()
        last = jobs.scores[-1, layer].round(3).tolist()
        formed = jobs.first_step_above(0.8)[layer].tolist()
        lines.append(
            f"layer {layer} {label}: step 0 {first}, end {last}, first step >= 0.8 {formed}"
        )
    smooth = [float(history.losses[max(0, s - 10) : s].mean()) for s in history.steps[1:]]
    pairs = ", ".join(f"{s}:{v:.3f}" for s, v in zip(history.steps[1:], smooth, strict=True))
    lines.append(f"training loss (mean of the 10 steps before each checkpoint): {pairs}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m attnviz.toys --task induction --seed 0``: train, write the run file
    (default: the package's shipped one), print what it reached. ``--report``: train
    nothing, print what the shipped run reached."""
    parser = argparse.ArgumentParser(prog="python -m attnviz.toys", description=DESCRIPTION)
    parser.add_argument("--task", required=True, choices=list(TASKS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=None, help="default: the task's")
    parser.add_argument("--out", type=Path, default=None, help="default: the shipped file")
    parser.add_argument("--report", action="store_true", help="only report the shipped run")
    args = parser.parse_args(argv)
    task = TASKS[args.task]
    if args.report:
        print(_report(task, load(task), None, run_path(task).stat().st_size))
        return 0
    start = time.perf_counter()
    try:
        history = train(task, args.seed, task.steps if args.steps is None else args.steps)
    except ValueError as e:
        parser.error(str(e))
    seconds = time.perf_counter() - start
    data = history_bytes(history)
    out = args.out or Path(__file__).parents[1] / RUNS_DIR / f"{task.name}.npz"  # attnviz/
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    print(f"wrote {out}")
    print(_report(task, history, seconds, len(data)))
    return 0
