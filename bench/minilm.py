"""MiniLM-L6 in NumPy: load time, first run and warm runs (issue 6's timing targets).

Each repetition is a fresh Python process (so "load" and "first run" are really cold for
the process; the OS file cache is warm after the first repetition). In each process:

* ``import``: ``import attnviz.models.minilm`` (NumPy, the engine, the erf fit);
* ``load``: ``minilm.load()`` (safetensors + tokenizer + 6 layers of AttentionParams);
* ``first``: the first ``run()`` on the default 16-token sentence right after ``load``;
* ``warm``: median of further runs on the same sentence, and on 128 and 512 tokens;
* ``gelu``: the exact GELU of a (16, 1536) array (what one layer's feed-forward needs),
  and ``erf`` of it, vectorised (:func:`attnviz.models.minilm.erf`) and, for comparison,
  :func:`math.erf` per element through ``np.frompyfunc``.

    python bench/minilm.py                 # 5 processes
    python bench/minilm.py --repeat 10 --json minilm.json
    python bench/minilm.py --blas-threads 1     # single-threaded BLAS (busy machines)

Targets (issue 6): load under 2 s, first run on 16 tokens under 150 ms after load.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from kit import print_table, run_fresh

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
from attnviz.models import minilm
t1 = time.perf_counter()
model = minilm.load()
t2 = time.perf_counter()
run = model.run(minilm.DEFAULT_TEXT)
t3 = time.perf_counter()
out = {"import": t1 - t0, "load": t2 - t1, "first": t3 - t2, "n_first": run.n_tokens}

def med(text, k):
    ts = []
    for _ in range(k):
        s = time.perf_counter()
        r = model.run(text)
        ts.append(time.perf_counter() - s)
    return statistics.median(ts), r.n_tokens

out["warm_16"], _ = med(minilm.DEFAULT_TEXT, 20)
out["warm_128"], out["n_128"] = med(" ".join(["attention"] * 126), 5)
out["warm_512"], out["n_512"] = med(" ".join(["attention"] * 510), 3)
import numpy as np
x = np.random.default_rng(0).standard_normal((16, 1536)).astype(np.float32)
ts = []
for _ in range(50):
    s = time.perf_counter()
    minilm.gelu(x)
    ts.append(time.perf_counter() - s)
out["gelu_16x1536"] = statistics.median(ts)
import math
erf_py = np.frompyfunc(math.erf, 1, 1)  # the per-element alternative, for comparison
x64 = x.astype(np.float64) / math.sqrt(2)
ts, ts_py = [], []
for _ in range(20):
    s = time.perf_counter()
    minilm.erf(x64)
    ts.append(time.perf_counter() - s)
    s = time.perf_counter()
    erf_py(x64).astype(np.float64)
    ts_py.append(time.perf_counter() - s)
out["erf_16x1536"] = statistics.median(ts)
out["erf_frompyfunc_16x1536"] = statistics.median(ts_py)
print(json.dumps(out))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="fresh processes (default 5)")
    ap.add_argument("--json", type=Path, help="also write all measurements here")
    ap.add_argument(
        "--blas-threads",
        type=int,
        help="set OPENBLAS_NUM_THREADS/OMP_NUM_THREADS in the child processes (default: unset)",
    )
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")

    env = dict(os.environ)
    if args.blas_threads:
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = str(args.blas_threads)
    runs = run_fresh(CHILD, [str(REPO)], args.repeat, env, timeout=300)
    if runs is None:
        return 1

    first = runs[0]
    rows = [
        ("import attnviz.models.minilm", "import", None),
        ("load() (weights + tokenizer)", "load", 2.0),
        (f"first run, {first['n_first']} tokens", "first", 0.150),
        (f"warm run, {first['n_first']} tokens", "warm_16", None),
        (f"warm run, {first['n_128']} tokens", "warm_128", None),
        (f"warm run, {first['n_512']} tokens", "warm_512", None),
        ("exact GELU of (16, 1536)", "gelu_16x1536", None),
        ("erf of (16, 1536), vectorised", "erf_16x1536", None),
        ("erf of (16, 1536), math.erf per element", "erf_frompyfunc_16x1536", None),
    ]
    ok = print_table(rows, runs, 40, inclusive=False)
    if args.json:
        args.json.write_text(json.dumps({"runs": runs}, indent=2))
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
