"""MiniLM-L6 in NumPy, fresh processes: import, load, first and warm runs, GELU and erf
(issue 6; docs/models.md).

    python bench/minilm.py                 # 5 processes
    python bench/minilm.py --repeat 10 --json minilm.json
    python bench/minilm.py --blas-threads 1     # single-threaded BLAS (busy machines)
"""

from __future__ import annotations

import sys

import kit
from kit import REPO, print_table, run_fresh

CHILD = (
    kit.CHILD_HEAD
    + r"""
t0 = time.perf_counter()
from attnviz.models import minilm
t1 = time.perf_counter()
model = minilm.load()
t2 = time.perf_counter()
run = model.run(minilm.DEFAULT_TEXT)
t3 = time.perf_counter()
out = {"import": t1 - t0, "load": t2 - t1, "first": t3 - t2, "n_first": run.n_tokens}

for key, text, k in (("16", minilm.DEFAULT_TEXT, 20), ("128", " ".join(["attention"] * 126), 5),
                     ("512", " ".join(["attention"] * 510), 3)):
    out[f"warm_{key}"], r = med(lambda: model.run(text), k)
    if key != "16":
        out[f"n_{key}"] = r.n_tokens
import numpy as np
x = np.random.default_rng(0).standard_normal((16, 1536)).astype(np.float32)
out["gelu_16x1536"], _ = med(lambda: minilm.gelu(x), 50)
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
)


def main() -> int:
    ap = kit.fresh_parser(__doc__, None)
    args = ap.parse_args()
    runs = run_fresh(CHILD, [str(REPO)], args.repeat, kit.fresh_env(ap, args), timeout=300)

    first = runs[0]
    rows = [
        ("import attnviz.models.minilm", "import", None),
        ("load() (weights + tokenizer)", "load", 2.0),
        (f"first run, {first['n_first']} tokens", "first", 0.150),
        *(
            (f"warm run, {first[n]} tokens", f"warm_{w}", None)
            for n, w in (("n_first", 16), ("n_128", 128), ("n_512", 512))
        ),  # fmt: skip
        ("exact GELU of (16, 1536)", "gelu_16x1536", None),
        ("erf of (16, 1536), vectorised", "erf_16x1536", None),
        ("erf of (16, 1536), math.erf per element", "erf_frompyfunc_16x1536", None),
    ]
    ok = print_table(rows, runs, 40, inclusive=False)
    kit.write_json(args.json, {"runs": runs}, say=False)
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
